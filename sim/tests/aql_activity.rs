//! What an AQL queue's command processor tells `rocjitsu status` (`Queue::activity`): the
//! kernel object of the dispatch running now, the dispatches completed and the packets
//! consumed — driven through `cp::aql_queue::service` with an executor that holds each
//! dispatch until the test ends it, on a context with no driver behind it.

use sim::gpu::context::Context;
use sim::gpu::cp::aql::{packet_type, KernelDispatch};
use sim::gpu::cp::aql_queue::{self, InFlight};
use sim::gpu::cp::dispatch::{DispatchError, DispatchExecutor, DispatchJob, DispatchTicket, Wake};
use sim::gpu::memory::{GpuFault, GpuMem};
use sim::gpu::queue::{ActivitySnapshot, Queue};
use sim::testing::TestContext;
use std::sync::{Arc, Mutex};

const BASE: u64 = 0x1000_0000;
const RING: u64 = BASE;
const RING_BYTES: u64 = 0x1000;
const AMD_QUEUE: u64 = BASE + 0x1000;
/// A kernel object the executor refuses (a malformed packet).
const REFUSED: u64 = 0xbad0_0000;

/// Starts every dispatch and keeps its ticket for the test to end.
#[derive(Default)]
struct Held(Mutex<Vec<Arc<DispatchTicket>>>);

impl DispatchExecutor for Held {
    fn start(&self, job: &DispatchJob<'_>, ticket: &Arc<DispatchTicket>) -> Result<(), DispatchError> {
        if job.packet.kernel_object == REFUSED {
            return Err(DispatchError::Invalid { code: 32, reason: "refused by the test".into() });
        }
        self.0.lock().unwrap().push(ticket.clone());
        Ok(())
    }

    fn help(&self, _gpu: usize) -> bool {
        false
    }
}

impl Held {
    fn end(&self, outcome: Result<(), DispatchError>) {
        let ticket = self.0.lock().unwrap().pop().expect("a running dispatch");
        ticket.finish(outcome);
    }
}

struct Setup {
    process: Arc<dyn Context>,
    queue: Arc<Queue>,
    exec: Held,
    in_flight: Option<InFlight>,
    wake: Wake,
}

impl Setup {
    fn new() -> Setup {
        let config = sim::config::default_config();
        let ctx = Arc::new(TestContext::new(&config, 1 << 20));
        ctx.map(BASE, 0x2000);
        let queue = Arc::new(sim::testing::aql_queue(RING, RING_BYTES, AMD_QUEUE));
        Setup { process: ctx, queue, exec: Held::default(), in_flight: None, wake: Arc::new(|| {}) }
    }

    /// Queues a dispatch of `kernel_object`.
    fn submit(&self, kernel_object: u64) {
        let vm = self.process.vm();
        let mem = GpuMem::new(&vm);
        let write: u64 = mem.read(self.queue.write_ptr).unwrap();
        let packet = KernelDispatch {
            header: packet_type::KERNEL_DISPATCH as u16,
            setup: 1,
            workgroup_size: [64, 1, 1],
            grid_size: [64, 1, 1],
            kernel_object,
            ..Default::default()
        };
        let slot = RING + write % (RING_BYTES / 64) * 64;
        mem.write_bytes(slot, bytemuck::bytes_of(&packet)).unwrap();
        mem.write(self.queue.write_ptr, write + 1).unwrap();
    }

    fn service(&mut self) {
        aql_queue::service(&self.process, &self.queue, &self.exec, &mut self.in_flight, &self.wake);
    }

    fn activity(&self) -> ActivitySnapshot {
        self.queue.activity.snapshot()
    }
}

fn snapshot(packets_consumed: u64, dispatches_done: u64, running_kernel: u64) -> ActivitySnapshot {
    ActivitySnapshot { packets_consumed, dispatches_done, running_kernel }
}

#[test]
fn a_running_dispatch_is_named_and_counted_once_it_completes() {
    let mut s = Setup::new();
    assert_eq!(s.activity(), ActivitySnapshot::default());
    s.submit(0x7000_1000);
    s.submit(0x7000_2000);
    s.service();
    assert_eq!(s.activity(), snapshot(0, 0, 0x7000_1000), "the first kernel runs");
    s.service();
    assert_eq!(s.activity(), snapshot(0, 0, 0x7000_1000), "the queue waits for it");
    s.exec.end(Ok(()));
    s.service();
    assert_eq!(s.activity(), snapshot(1, 1, 0x7000_2000), "retired, and the next one runs");
    s.exec.end(Ok(()));
    s.service();
    assert_eq!(s.activity(), snapshot(2, 2, 0), "idle");
}

#[test]
fn failed_dispatches_are_not_counted_as_done() {
    let mut s = Setup::new();
    s.submit(REFUSED);
    s.service();
    assert_eq!(s.activity(), snapshot(0, 0, 0), "refused at the start: never ran");
    assert!(s.queue.failed());

    let mut s = Setup::new();
    s.submit(0x7000_1000);
    s.service();
    s.exec.end(Err(DispatchError::Fault(GpuFault { va: 0x1234, write: false, not_present: true })));
    s.service();
    assert_eq!(s.activity(), snapshot(0, 0, 0), "a fault ends the dispatch, not as done");
}
