//! A producer maps memory, then publishes a packet that uses it, while the command processor
//! is between taking its view of the address space and reading the write index: the packet
//! must be read through a view that has the mapping (the hardware's page tables are live).
//! Found as a rare "GPU page fault … page not present" on a mapped System page in a CI run
//! of rocRAND's smoke subset (docs/SUITES.md).

use sim::config::Device;
use sim::gpu::context::Context;
use sim::gpu::cp::aql::{packet_type, Barrier};
use sim::gpu::cp::aql_queue::{self, InFlight};
use sim::gpu::cp::dispatch::{DispatchError, DispatchExecutor, DispatchJob, DispatchTicket, Wake};
use sim::gpu::gws::GwsTable;
use sim::gpu::memory::{GpuFault, GpuMem, GpuVm};
use sim::gpu::queue::Queue;
use sim::gpu::stats::ProcessStats;
use sim::gpu::trace::TraceLog;
use sim::testing::TestContext;
use std::sync::{Arc, Mutex};

const BASE: u64 = 0x1000_0000;
const RING: u64 = BASE;
const RING_BYTES: u64 = 0x1000;
const AMD_QUEUE: u64 = BASE + 0x1000;
/// The page the producer maps just before it publishes the packet that reads it.
const SIGNAL: u64 = 0x2000_0000;

/// What the producer does: map, write the packet, publish it.
type Producer = Box<dyn FnOnce(&TestContext) + Send>;

/// A context whose first view of the address space is taken just before the producer maps
/// [`SIGNAL`] and publishes a barrier packet depending on it (the hook runs inside that
/// first `vm` call, after the view was taken).
struct Racing {
    inner: Arc<TestContext>,
    producer: Mutex<Option<Producer>>,
}

impl std::fmt::Debug for Racing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Racing")
    }
}

impl Context for Racing {
    fn pid(&self) -> u32 {
        self.inner.pid()
    }
    fn vm(&self) -> Arc<GpuVm> {
        let view = self.inner.vm();
        if let Some(produce) = self.producer.lock().unwrap().take() {
            produce(&self.inner);
        }
        view
    }
    fn gpus(&self) -> &[Device] {
        self.inner.gpus()
    }
    fn queues_on(&self, gpu: usize) -> Vec<Arc<Queue>> {
        self.inner.queues_on(gpu)
    }
    fn closing(&self) -> bool {
        self.inner.closing()
    }
    fn gws(&self, gpu: usize) -> &GwsTable {
        self.inner.gws(gpu)
    }
    fn trap_handler(&self, gpu: usize) -> Option<(u64, u64)> {
        self.inner.trap_handler(gpu)
    }
    fn interrupt(&self, event_id: u32) {
        self.inner.interrupt(event_id)
    }
    fn report_fault(&self, gpu: usize, fault: GpuFault) {
        self.inner.report_fault(gpu, fault)
    }
    fn stats(&self) -> Option<&ProcessStats> {
        self.inner.stats()
    }
    fn trace(&self) -> Option<&TraceLog> {
        self.inner.trace()
    }
}

/// No dispatch is queued in this test.
struct NoDispatches;

impl DispatchExecutor for NoDispatches {
    fn start(&self, _job: &DispatchJob<'_>, _ticket: &Arc<DispatchTicket>) -> Result<(), DispatchError> {
        unreachable!("the test queues a barrier only")
    }

    fn help(&self, _gpu: usize) -> bool {
        false
    }
}

#[test]
fn a_packet_published_after_its_memory_was_mapped_is_read_through_a_view_with_it() {
    let config = sim::config::default_config();
    let inner = Arc::new(TestContext::new(&config, 1 << 20));
    inner.map(BASE, 0x2000);
    let queue = Arc::new(sim::testing::aql_queue(RING, RING_BYTES, AMD_QUEUE));
    let write_ptr = queue.write_ptr;
    let producer = move |ctx: &TestContext| {
        // Map the signal (its value 0: the barrier is satisfied), then publish the packet.
        ctx.map(SIGNAL, 0x1000);
        let vm = ctx.vm();
        let mem = GpuMem::new(&vm);
        let packet =
            Barrier { header: packet_type::BARRIER_AND as u16, dep_signal: [SIGNAL, 0, 0, 0, 0], ..Default::default() };
        mem.write_bytes(RING, bytemuck::bytes_of(&packet)).unwrap();
        mem.write(write_ptr, 1u64).unwrap();
    };
    let process: Arc<dyn Context> =
        Arc::new(Racing { inner: inner.clone(), producer: Mutex::new(Some(Box::new(producer))) });
    let wake: Wake = Arc::new(|| {});
    let mut in_flight: Option<InFlight> = None;
    aql_queue::service(&process, &queue, &NoDispatches, &mut in_flight, &wake);
    assert_eq!(inner.faults(), [], "the barrier's signal was read through a view without it");
    assert!(!queue.failed());
    assert_eq!(queue.activity.snapshot().packets_consumed, 1, "the barrier was consumed");
}
