//! HSA signals as the GPU sees them: ROCR's `amd_signal_t` in GPU-visible
//! memory. Completing a packet decrements the value atomically and, if the
//! signal has an event mailbox, writes the event id there and raises the KFD
//! event — which wakes ROCR threads blocked in WAIT_EVENTS.

use crate::gpu::context::Context;
use crate::gpu::memory::{GpuFault, GpuMem};
use std::sync::atomic::Ordering;

/// Offsets into `amd_signal_t` (hsa/amd_hsa_signal.h).
pub mod amd_signal {
    pub const VALUE: u64 = 8;
    pub const EVENT_MAILBOX_PTR: u64 = 16;
    pub const EVENT_ID: u64 = 24;
    pub const START_TS: u64 = 32;
    pub const END_TS: u64 = 40;
}

/// The current value of the signal whose handle is `handle`.
pub fn value(mem: &GpuMem<'_>, handle: u64) -> Result<i64, GpuFault> {
    Ok(mem.atomic_u64(handle + amd_signal::VALUE, false)?.load(Ordering::Acquire) as i64)
}

/// Raises the signal's interrupt, if it has one: event id into the mailbox,
/// then the KFD event.
fn notify(mem: &GpuMem<'_>, handle: u64, process: &dyn Context) -> Result<(), GpuFault> {
    let mailbox: u64 = mem.read(handle + amd_signal::EVENT_MAILBOX_PTR)?;
    if mailbox != 0 {
        let event_id: u32 = mem.read(handle + amd_signal::EVENT_ID)?;
        mem.atomic_u64(mailbox, true)?.store(event_id as u64, Ordering::Release);
        process.interrupt(event_id);
    }
    Ok(())
}

/// What the packet processor does when a packet with completion signal
/// `handle` finishes (a zero handle means "no signal").
pub fn complete(mem: &GpuMem<'_>, handle: u64, process: &dyn Context) -> Result<(), GpuFault> {
    if handle == 0 {
        return Ok(());
    }
    mem.atomic_u64(handle + amd_signal::VALUE, true)?.fetch_sub(1, Ordering::AcqRel);
    notify(mem, handle, process)
}

/// Stores `value` into the signal and raises its interrupt (how the command
/// processor reports a queue error through `queue_inactive_signal`).
pub fn store_and_notify(mem: &GpuMem<'_>, handle: u64, value: i64, process: &dyn Context) -> Result<(), GpuFault> {
    if handle == 0 {
        return Ok(());
    }
    mem.atomic_u64(handle + amd_signal::VALUE, true)?.store(value as u64, Ordering::Release);
    notify(mem, handle, process)
}

/// Writes the start/end timestamps of a profiled packet.
pub fn write_timestamps(mem: &GpuMem<'_>, handle: u64, start: u64, end: u64) -> Result<(), GpuFault> {
    if handle == 0 {
        return Ok(());
    }
    mem.write(handle + amd_signal::START_TS, start)?;
    mem.write(handle + amd_signal::END_TS, end)
}
