//! The clocks the simulated GPU and driver report.

use rustix::time::{clock_gettime, ClockId};

/// The GPU's timestamp counter frequency: MI200/MI300 count at a 100 MHz
/// reference clock, which is what DEV_INFO's `gpu_counter_freq` says too.
pub const GPU_COUNTER_HZ: u64 = 100_000_000;

fn ns(id: ClockId) -> u64 {
    let t = clock_gettime(id);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// CLOCK_MONOTONIC_RAW in nanoseconds (GET_CLOCK_COUNTERS' `cpu_clock_counter`).
pub fn monotonic_raw_ns() -> u64 {
    ns(ClockId::MonotonicRaw)
}

/// CLOCK_BOOTTIME in nanoseconds (GET_CLOCK_COUNTERS' `system_clock_counter`,
/// what ROCR uses for `HSA_SYSTEM_INFO_TIMESTAMP`).
pub fn boottime_ns() -> u64 {
    ns(ClockId::Boottime)
}

/// The GPU timestamp counter: the raw monotonic clock at [`GPU_COUNTER_HZ`].
/// Signal timestamps written by the command processor use the same counter.
pub fn gpu_ticks() -> u64 {
    monotonic_raw_ns() / (1_000_000_000 / GPU_COUNTER_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_advance() {
        let (a, b) = (gpu_ticks(), boottime_ns());
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(gpu_ticks() > a);
        assert!(boottime_ns() >= b + 2_000_000);
    }
}
