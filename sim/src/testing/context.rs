//! A process context for tests of the GPU layer, with no driver behind it: memory blocks
//! mapped straight into a GPU address space, and a record of what the GPU asked of the
//! driver (interrupts, faults) for tests to check.

use crate::config::{Config, Device};
use crate::gpu::context::Context;
use crate::gpu::gws::GwsTable;
use crate::gpu::memory::{Arena, GpuFault, GpuVm, VmRange};
use crate::gpu::queue::Queue;
use crate::gpu::stats::ProcessStats;
use crate::gpu::trace::TraceLog;
use std::sync::{Arc, Mutex};

/// A process of one test.
#[derive(Debug)]
pub struct TestContext {
    gpus: Arc<[Device]>,
    vm: Mutex<Arc<GpuVm>>,
    memory: Arena,
    gws: Box<[GwsTable]>,
    interrupts: Mutex<Vec<u32>>,
    faults: Mutex<Vec<(usize, GpuFault)>>,
    stats: std::sync::OnceLock<ProcessStats>,
    trace: std::sync::OnceLock<TraceLog>,
}

impl TestContext {
    /// A context on the GPUs of `config`, with room for `bytes` of mapped memory.
    pub fn new(config: &Config, bytes: u64) -> TestContext {
        let gpus: Arc<[Device]> = config.gpus().to_vec().into();
        TestContext {
            gws: gpus.iter().map(|_| GwsTable::default()).collect(),
            gpus,
            vm: Mutex::new(Arc::new(GpuVm::new())),
            memory: Arena::new("rocjitsu-test-memory", bytes).expect("test memory"),
            interrupts: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            stats: std::sync::OnceLock::new(),
            trace: std::sync::OnceLock::new(),
        }
    }

    /// Copies from now on go into [`Context::trace`].
    pub fn enable_trace(&self) {
        self.trace.get_or_init(TraceLog::default);
    }

    /// Dispatches from now on count their instructions into [`Context::stats`].
    pub fn enable_stats(&self) {
        self.stats.get_or_init(ProcessStats::default);
    }

    /// Maps `len` bytes of zeroed, writable memory at GPU VA `va`.
    pub fn map(&self, va: u64, len: u64) {
        self.map_with(va, len, true, &[]);
    }

    /// Maps `len` bytes at `va` holding `data` (then zeros), which the GPU may read but not
    /// write.
    pub fn map_read_only(&self, va: u64, len: u64, data: &[u8]) {
        self.map_with(va, len, false, data);
    }

    fn map_with(&self, va: u64, len: u64, writable: bool, data: &[u8]) {
        let offset = self.memory.alloc(len, 4096).expect("room in the test memory");
        assert!(data.len() as u64 <= len, "the data fits the mapping");
        // SAFETY: the fresh allocation's `len` bytes are ours and mapped by the arena; no GPU
        // mapping reaches them yet.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.memory.host_addr(offset) as *mut u8, data.len()) };
        let range = VmRange { start: va, len, host: self.memory.host_addr(offset), writable, handle: va };
        let mut vm = self.vm.lock().unwrap_or_else(|e| e.into_inner());
        let mut next = GpuVm::clone(&vm);
        next.map(range).expect("a free GPU VA range");
        *vm = Arc::new(next);
    }

    /// The event interrupts the GPU raised, in order.
    pub fn interrupts(&self) -> Vec<u32> {
        self.interrupts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The page faults the GPU reported, in order.
    pub fn faults(&self) -> Vec<(usize, GpuFault)> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Context for TestContext {
    fn pid(&self) -> u32 {
        std::process::id()
    }

    fn vm(&self) -> Arc<GpuVm> {
        self.vm.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn gpus(&self) -> &[Device] {
        &self.gpus
    }

    fn queues_on(&self, _gpu: usize) -> Vec<Arc<Queue>> {
        Vec::new()
    }

    fn closing(&self) -> bool {
        false
    }

    fn gws(&self, gpu: usize) -> &GwsTable {
        &self.gws[gpu]
    }

    fn trap_handler(&self, _gpu: usize) -> Option<(u64, u64)> {
        None
    }

    fn interrupt(&self, event_id: u32) {
        self.interrupts.lock().unwrap_or_else(|e| e.into_inner()).push(event_id);
    }

    fn report_fault(&self, gpu: usize, fault: GpuFault) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).push((gpu, fault));
    }

    fn stats(&self) -> Option<&ProcessStats> {
        self.stats.get()
    }

    fn trace(&self) -> Option<&TraceLog> {
        self.trace.get()
    }
}

/// Queue 0 of GPU 0, an AQL queue with its ring of `ring_bytes` at `ring` and its
/// `amd_queue_t` at `amd_queue`: what command-processor tests drive `cp::aql_queue::service`
/// on.
pub fn aql_queue(ring: u64, ring_bytes: u64, amd_queue: u64) -> Queue {
    use crate::gpu::queue::{amd_queue as fields, QueueKind};
    Queue::new(
        0,
        0,
        QueueKind::Aql,
        ring,
        ring_bytes,
        amd_queue + fields::WRITE_DISPATCH_ID,
        amd_queue + fields::READ_DISPATCH_ID,
        0,
        100,
        7,
    )
}
