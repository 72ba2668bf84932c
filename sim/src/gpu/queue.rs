//! User-mode queues: what CREATE_QUEUE registers and the engines service.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Offsets into ROCR's `amd_queue_t` (hsa/amd_hsa_queue.h).
pub mod amd_queue {
    pub const WRITE_DISPATCH_ID: u64 = 0x38;
    pub const READ_DISPATCH_ID: u64 = 0x80;
    pub const QUEUE_PROPERTIES: u64 = 180;
    pub const QUEUE_INACTIVE_SIGNAL: u64 = 192;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`.
    pub const PROPERTY_PROFILING: u32 = 1 << 3;
    pub const SIZE: u64 = 256;
}

/// What kind of engine consumes the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// AQL packets, consumed by the command processor.
    Aql,
    /// SDMA packets, consumed by a DMA engine.
    Sdma,
}

/// One user-mode queue.
#[derive(Debug)]
pub struct Queue {
    pub id: u32,
    pub gpu: usize,
    pub kind: QueueKind,
    /// Ring buffer GPU VA and size in bytes (may change with UPDATE_QUEUE).
    ring_base: AtomicU64,
    ring_bytes: AtomicU64,
    /// GPU VAs of the 64-bit write and read indices (AQL: inside amd_queue_t,
    /// in packets; SDMA: byte offsets).
    pub write_ptr: u64,
    pub read_ptr: u64,
    pub doorbell_slot: u32,
    percentage: AtomicU32,
    pub priority: AtomicU32,
    /// Set once the queue hit an error: nothing more is consumed from it.
    failed: AtomicBool,
    /// Set by DESTROY_QUEUE (and process teardown).
    destroyed: AtomicBool,
    /// Held while an engine consumes packets, so that destruction can wait
    /// for the packet in flight.
    pub busy: Mutex<()>,
    /// SET_CU_MASK's mask (recorded; the simulator schedules on its workers).
    pub cu_mask: Mutex<Vec<u32>>,
    /// Dispatches of this queue whose workgroups may still run: destruction waits for
    /// them to stop, so no wave touches memory the application frees afterwards.
    running_dispatches: AtomicU32,
    /// The queue holds its process's GWS on its GPU (ALLOC_QUEUE_GWS).
    pub holds_gws: AtomicBool,
    /// What the command processor did and does with the queue (`rocjitsu status`).
    pub activity: QueueActivity,
}

impl Queue {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        gpu: usize,
        kind: QueueKind,
        ring_base: u64,
        ring_bytes: u64,
        write_ptr: u64,
        read_ptr: u64,
        doorbell_slot: u32,
        percentage: u32,
        priority: u32,
    ) -> Self {
        Queue {
            id,
            gpu,
            kind,
            ring_base: AtomicU64::new(ring_base),
            ring_bytes: AtomicU64::new(ring_bytes),
            write_ptr,
            read_ptr,
            doorbell_slot,
            percentage: AtomicU32::new(percentage),
            priority: AtomicU32::new(priority),
            failed: AtomicBool::new(false),
            destroyed: AtomicBool::new(false),
            busy: Mutex::new(()),
            cu_mask: Mutex::new(Vec::new()),
            running_dispatches: AtomicU32::new(0),
            holds_gws: AtomicBool::new(false),
            activity: QueueActivity::default(),
        }
    }

    pub fn ring(&self) -> (u64, u64) {
        (self.ring_base.load(Ordering::Acquire), self.ring_bytes.load(Ordering::Acquire))
    }

    /// UPDATE_QUEUE.
    pub fn update(&self, ring_base: u64, ring_bytes: u64, percentage: u32, priority: u32) {
        let _g = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        self.ring_base.store(ring_base, Ordering::Release);
        self.ring_bytes.store(ring_bytes, Ordering::Release);
        self.percentage.store(percentage, Ordering::Release);
        self.priority.store(priority, Ordering::Release);
    }

    /// The `amd_queue_t` of an AQL queue.
    pub fn amd_queue(&self) -> u64 {
        self.write_ptr - amd_queue::WRITE_DISPATCH_ID
    }

    /// Whether an engine should look at this queue.
    pub fn runnable(&self) -> bool {
        !self.failed.load(Ordering::Acquire)
            && !self.destroyed.load(Ordering::Acquire)
            && self.percentage.load(Ordering::Acquire) > 0
    }

    pub fn fail(&self) {
        self.failed.store(true, Ordering::Release);
    }

    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Stops the queue and waits for the packet an engine may be consuming and for the
    /// waves of its running dispatch, which stop at their next time slice.
    pub fn destroy(&self) {
        self.destroyed.store(true, Ordering::Release);
        drop(self.busy.lock().unwrap_or_else(|e| e.into_inner()));
        while self.running_dispatches.load(Ordering::Acquire) > 0 {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    /// The executor started one of this queue's dispatches.
    pub fn dispatch_started(&self) {
        self.running_dispatches.fetch_add(1, Ordering::AcqRel);
    }

    /// The executor stopped running one of this queue's dispatches (done or aborted).
    pub fn dispatch_stopped(&self) {
        self.running_dispatches.fetch_sub(1, Ordering::AcqRel);
    }

    pub fn destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }
}

/// What a queue's command processor has done and is doing, for status reports (`rocjitsu
/// status`). Plain counters with relaxed atomics: one add or store per packet, no lock, and a
/// reader sees each value on its own (a snapshot may be a packet apart between fields, which a
/// report does not mind).
#[derive(Debug, Default)]
pub struct QueueActivity {
    packets_consumed: AtomicU64,
    dispatches_done: AtomicU64,
    /// The kernel object of the dispatch running now, 0 when none runs.
    running_kernel: AtomicU64,
}

/// One reading of a [`QueueActivity`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ActivitySnapshot {
    /// Packets consumed (retired in order).
    pub packets_consumed: u64,
    /// Kernel dispatches that completed without a fault or error.
    pub dispatches_done: u64,
    /// The kernel object of the dispatch running now, 0 when none runs.
    pub running_kernel: u64,
}

impl QueueActivity {
    /// A packet was retired.
    pub fn packet_consumed(&self) {
        self.packets_consumed.fetch_add(1, Ordering::Relaxed);
    }

    /// A dispatch of `kernel_object` is about to start.
    pub fn kernel_started(&self, kernel_object: u64) {
        self.running_kernel.store(kernel_object, Ordering::Relaxed);
    }

    /// The running dispatch ended (`completed`: without a fault or error) or never started.
    pub fn kernel_ended(&self, completed: bool) {
        self.running_kernel.store(0, Ordering::Relaxed);
        if completed {
            self.dispatches_done.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> ActivitySnapshot {
        ActivitySnapshot {
            packets_consumed: self.packets_consumed.load(Ordering::Relaxed),
            dispatches_done: self.dispatches_done.load(Ordering::Relaxed),
            running_kernel: self.running_kernel.load(Ordering::Relaxed),
        }
    }
}

/// Doorbells per process and GPU (one 8 KiB page of 8-byte doorbells).
pub const DOORBELLS_PER_PAGE: u32 = 1024;

/// The queues of one process.
#[derive(Debug, Default)]
pub struct QueueTable {
    queues: BTreeMap<u32, Arc<Queue>>,
    /// Used doorbell slots, per GPU.
    doorbells: BTreeMap<usize, Vec<bool>>,
}

impl QueueTable {
    /// The lowest free queue id (the kernel's queue ids are per process and
    /// reused).
    pub fn free_id(&self) -> u32 {
        (0..).find(|id| !self.queues.contains_key(id)).expect("fewer than 2^32 queues")
    }

    /// Reserves a doorbell slot on `gpu`.
    pub fn alloc_doorbell(&mut self, gpu: usize) -> Option<u32> {
        let slots = self.doorbells.entry(gpu).or_insert_with(|| vec![false; DOORBELLS_PER_PAGE as usize]);
        let i = slots.iter().position(|used| !used)?;
        slots[i] = true;
        Some(i as u32)
    }

    pub fn insert(&mut self, q: Arc<Queue>) {
        self.queues.insert(q.id, q);
    }

    /// Removes a queue and frees its doorbell.
    pub fn remove(&mut self, id: u32) -> Option<Arc<Queue>> {
        let q = self.queues.remove(&id)?;
        if let Some(slots) = self.doorbells.get_mut(&q.gpu) {
            slots[q.doorbell_slot as usize] = false;
        }
        Some(q)
    }

    pub fn get(&self, id: u32) -> Option<&Arc<Queue>> {
        self.queues.get(&id)
    }

    pub fn len(&self) -> usize {
        self.queues.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// Every queue.
    pub fn all(&self) -> Vec<Arc<Queue>> {
        self.queues.values().cloned().collect()
    }

    /// The queues on GPU `gpu` (what its scheduler thread visits, on every poll: one
    /// allocation, no intermediate list).
    pub fn on_gpu(&self, gpu: usize) -> Vec<Arc<Queue>> {
        self.queues.values().filter(|q| q.gpu == gpu).cloned().collect()
    }
}

/// What one visit of a queue achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Progress {
    /// Nothing to do.
    Idle,
    /// Work is pending but waits on a dependency.
    Blocked,
    /// Something was consumed.
    Advanced,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_doorbells_are_reused_lowest_first() {
        let mut t = QueueTable::default();
        for expected in 0..3 {
            let id = t.free_id();
            let slot = t.alloc_doorbell(0).unwrap();
            assert_eq!((id, slot), (expected, expected));
            t.insert(Arc::new(Queue::new(id, 0, QueueKind::Aql, 0, 4096, 0x38, 0x80, slot, 100, 7)));
        }
        t.remove(1).unwrap();
        assert_eq!(t.free_id(), 1);
        assert_eq!(t.alloc_doorbell(0), Some(1));
        assert_eq!(t.alloc_doorbell(1), Some(0), "doorbells are per GPU");
    }

    #[test]
    fn activity_counts_completed_dispatches_and_names_the_running_one() {
        let a = QueueActivity::default();
        assert_eq!(a.snapshot(), ActivitySnapshot::default());
        a.kernel_started(0x1000);
        assert_eq!(a.snapshot().running_kernel, 0x1000);
        a.kernel_ended(true);
        a.packet_consumed();
        a.kernel_started(0x2000);
        a.kernel_ended(false);
        assert_eq!(a.snapshot(), ActivitySnapshot { packets_consumed: 1, dispatches_done: 1, running_kernel: 0 });
    }

    #[test]
    fn failed_destroyed_or_inactive_queues_are_not_runnable() {
        let q = Queue::new(0, 0, QueueKind::Sdma, 0, 4096, 8, 16, 0, 100, 7);
        assert!(q.runnable());
        q.update(0, 4096, 0, 7);
        assert!(!q.runnable());
        q.update(0, 4096, 50, 7);
        q.fail();
        assert!(!q.runnable());
    }
}
