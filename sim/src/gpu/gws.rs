//! The global wave sync (GWS) resources of one process on one GPU: 64 counters that
//! waves of any workgroup use as semaphores or as a device-wide barrier
//! (`ds_gws_*`, semantics in `ops::gws`).
//!
//! On hardware a queue gets GWS entries through KFD's ALLOC_QUEUE_GWS, which ROCR issues
//! for the cooperative queue of `hipLaunchCooperativeKernel` (grid sync is a GWS barrier);
//! the simulator records which queue holds them (`driver::kfd::queues`) but lets every
//! wave of the process reach its table, so kernels that use GWS on other queues still run.
//! A barrier's waves need not all run at once: a wave waiting at it parks its workgroup
//! (`exec::units`), and the workgroups that have not arrived yet get the workers.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

/// Resources per process and GPU.
pub const GWS_RESOURCES: usize = 64;

/// One GWS resource.
#[derive(Debug, Default)]
pub struct GwsResource {
    /// Semaphore count; for a barrier, the number of participating waves minus one (what
    /// `ds_gws_init` is given, as ROCm's device library does for grid sync).
    pub value: AtomicI64,
    /// Waves that arrived at the barrier in its current generation.
    pub arrived: AtomicU32,
    /// Incremented each time the barrier releases its waves.
    pub generation: AtomicU64,
}

/// The GWS resources of one process on one GPU.
#[derive(Debug)]
pub struct GwsTable {
    resources: Box<[GwsResource]>,
}

impl Default for GwsTable {
    fn default() -> Self {
        GwsTable { resources: (0..GWS_RESOURCES).map(|_| GwsResource::default()).collect() }
    }
}

impl GwsTable {
    /// Resource `id` (taken modulo the table size, like the 6-bit hardware field).
    pub fn resource(&self, id: usize) -> &GwsResource {
        &self.resources[id % GWS_RESOURCES]
    }
}

impl GwsResource {
    /// `ds_gws_init`: a fresh semaphore count / barrier participant count.
    pub fn init(&self, value: i64) {
        self.arrived.store(0, Ordering::SeqCst);
        self.value.store(value, Ordering::SeqCst);
    }

    /// `ds_gws_sema_p`: takes one unit if the count is positive.
    pub fn try_acquire(&self) -> bool {
        self.value.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| (v > 0).then_some(v - 1)).is_ok()
    }

    /// A wave arrives at the barrier: `Ok(())` if it completed the barrier (every wave of
    /// this generation is released), else the generation to wait out.
    pub fn arrive(&self) -> Result<(), u64> {
        let generation = self.generation.load(Ordering::Acquire);
        let arrived = self.arrived.fetch_add(1, Ordering::AcqRel) + 1;
        if i64::from(arrived) > self.value.load(Ordering::Acquire) {
            self.arrived.store(0, Ordering::Release);
            self.generation.fetch_add(1, Ordering::AcqRel);
            Ok(())
        } else {
            Err(generation)
        }
    }

    /// `ds_gws_sema_release_all`: releases the waves waiting at the barrier.
    pub fn release_all(&self) {
        self.arrived.store(0, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}
