//! Memory in use on each GPU by every process of the machine: what allocations are checked
//! against (the driver's limits are the device's, not a process's: two processes cannot
//! together allocate more VRAM than the GPU has) and what the render node reports as usage.
//!
//! Counters are atomic because local mode serves ioctls from many application threads at
//! once; a reservation either fits entirely or changes nothing.

use std::sync::atomic::{AtomicU64, Ordering};

/// Per-GPU VRAM and GTT in use, with the limits they are checked against.
#[derive(Debug)]
pub struct DeviceUsage {
    vram_size: Box<[u64]>,
    vram: Box<[AtomicU64]>,
    /// GTT (host memory the GPUs map) per GPU, for reporting.
    gtt: Box<[AtomicU64]>,
    /// GTT of every GPU together: host memory is one budget.
    gtt_total: AtomicU64,
    gtt_budget: u64,
}

/// Adds `size` to `counter` if the result stays within `limit`; else returns what is left.
fn reserve(counter: &AtomicU64, size: u64, limit: u64) -> Result<(), u64> {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| used.checked_add(size).filter(|&n| n <= limit))
        .map(|_| ())
        .map_err(|used| limit.saturating_sub(used))
}

impl DeviceUsage {
    /// Usage of GPUs with these VRAM sizes, sharing `gtt_budget` bytes of host memory.
    pub fn new(vram_sizes: impl IntoIterator<Item = u64>, gtt_budget: u64) -> Self {
        let vram_size: Box<[u64]> = vram_sizes.into_iter().collect();
        let counters = || vram_size.iter().map(|_| AtomicU64::new(0)).collect();
        DeviceUsage { vram: counters(), gtt: counters(), vram_size, gtt_total: AtomicU64::new(0), gtt_budget }
    }

    /// Takes `size` bytes of GPU `gpu`'s VRAM, or says how much is left.
    pub fn reserve_vram(&self, gpu: usize, size: u64) -> Result<(), u64> {
        reserve(&self.vram[gpu], size, self.vram_size[gpu])
    }

    pub fn release_vram(&self, gpu: usize, size: u64) {
        self.vram[gpu].fetch_sub(size, Ordering::AcqRel);
    }

    /// Takes `size` bytes of host memory for GPU `gpu`, or says how much is left.
    pub fn reserve_gtt(&self, gpu: usize, size: u64) -> Result<(), u64> {
        reserve(&self.gtt_total, size, self.gtt_budget)?;
        self.gtt[gpu].fetch_add(size, Ordering::AcqRel);
        Ok(())
    }

    pub fn release_gtt(&self, gpu: usize, size: u64) {
        self.gtt[gpu].fetch_sub(size, Ordering::AcqRel);
        self.gtt_total.fetch_sub(size, Ordering::AcqRel);
    }

    /// VRAM of GPU `gpu` in use by every process.
    pub fn vram_used(&self, gpu: usize) -> u64 {
        self.vram[gpu].load(Ordering::Acquire)
    }

    /// VRAM of GPU `gpu` still free.
    pub fn vram_available(&self, gpu: usize) -> u64 {
        self.vram_size[gpu].saturating_sub(self.vram_used(gpu))
    }

    /// Host memory mapped for GPU `gpu` by every process.
    pub fn gtt_used(&self, gpu: usize) -> u64 {
        self.gtt[gpu].load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn reservations_fit_or_change_nothing() {
        let u = DeviceUsage::new([1000, 500], 300);
        u.reserve_vram(0, 600).unwrap();
        assert_eq!(u.reserve_vram(0, 500), Err(400));
        assert_eq!(u.vram_used(0), 600);
        u.reserve_vram(1, 500).unwrap();
        u.release_vram(0, 600);
        assert_eq!((u.vram_available(0), u.vram_available(1)), (1000, 0));
        // Host memory is one budget for both GPUs.
        u.reserve_gtt(0, 200).unwrap();
        assert_eq!(u.reserve_gtt(1, 200), Err(100));
        u.reserve_gtt(1, 100).unwrap();
        assert_eq!((u.gtt_used(0), u.gtt_used(1)), (200, 100));
    }

    #[test]
    fn concurrent_reservations_never_overcommit() {
        let u = Arc::new(DeviceUsage::new([1 << 20], 0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let u = u.clone();
                std::thread::spawn(move || (0..1000).filter(|_| u.reserve_vram(0, 4096).is_ok()).count())
            })
            .collect();
        let granted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(granted, 256, "exactly the VRAM's worth of pages");
        assert_eq!(u.vram_available(0), 0);
    }
}
