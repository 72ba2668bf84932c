//! The SDMA engines: ROCR's default path for host↔device copies.
//!
//! An SDMA queue is a byte ring with 64-bit byte read/write pointers. The
//! engine decodes packets between the two ([`packet::decode`]) and executes
//! them on the process's GPU address space; a POLL_REGMEM whose condition
//! does not hold yet leaves the queue waiting without blocking the engine.

pub mod packet;

use crate::clock;
use crate::gpu::context::Context;
use crate::gpu::memory::{GpuFault, GpuMem};
use crate::gpu::queue::{Progress, Queue};
use crate::gpu::stats::CopyKind;
use crate::gpu::trace::{Detail, Track};
use packet::{Packet, RectSide, SdmaError};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Packets per visit, so that one queue cannot starve the others.
const PACKETS_PER_VISIT: usize = 64;
/// The longest packet (COPY_LINEAR_RECT) in dwords.
const MAX_PACKET_DWORDS: usize = 13;

enum Outcome {
    Done,
    Blocked,
}

#[derive(Debug, thiserror::Error)]
enum StepError {
    #[error(transparent)]
    Fault(#[from] GpuFault),
    #[error(transparent)]
    Packet(#[from] SdmaError),
}

/// Consumes what is ready in SDMA queue `q`.
pub fn service(process: &Arc<dyn Context>, q: &Queue) -> Progress {
    let _busy = q.busy.lock().unwrap_or_else(|e| e.into_inner());
    let mut progress = Progress::Idle;
    for _ in 0..PACKETS_PER_VISIT {
        if !q.runnable() {
            break;
        }
        // The write index first, then the address space as of this packet: the application
        // may unmap and remap a range between two packets (ROCR pins each pageable copy's
        // host buffer at the GPU VA the previous pin freed), and it maps what a packet uses
        // before it publishes the packet, so a view taken after the index was read (with
        // acquire ordering) has every mapping the packets below it need; a copy must never
        // go through a stale translation.
        let wptr = match GpuMem::new(&process.vm()).atomic_u64(q.write_ptr, false) {
            Ok(index) => index.load(Ordering::Acquire),
            Err(f) => return stop_on_fault(process.as_ref(), q, f),
        };
        let vm = process.vm();
        let mem = GpuMem::new(&vm);
        match step(process.as_ref(), q, &mem, wptr) {
            Ok(Some(Outcome::Done)) => progress = Progress::Advanced,
            Ok(Some(Outcome::Blocked)) => return progress.max(Progress::Blocked),
            Ok(None) => break,
            Err(StepError::Fault(f)) => return stop_on_fault(process.as_ref(), q, f),
            Err(StepError::Packet(e)) => {
                tracing::error!("SDMA queue {} of process {}: {e}; the queue is stopped", q.id, process.pid());
                q.fail();
                return Progress::Advanced;
            }
        }
    }
    progress
}

/// Stops the queue on a GPU page fault, whether its write index or a packet's memory faulted,
/// and tells the process, as the real driver's memory-fault event would.
fn stop_on_fault(process: &dyn Context, q: &Queue, fault: GpuFault) -> Progress {
    tracing::error!("SDMA queue {} of process {}: {fault}; the queue is stopped", q.id, process.pid());
    q.fail();
    process.report_fault(q.gpu, fault);
    Progress::Advanced
}

/// Consumes at most one packet of those below the write index `wptr`.
fn step(process: &dyn Context, q: &Queue, mem: &GpuMem<'_>, wptr: u64) -> Result<Option<Outcome>, StepError> {
    let rptr_word = mem.atomic_u64(q.read_ptr, true)?;
    let rptr = rptr_word.load(Ordering::Acquire);
    if rptr >= wptr {
        return Ok(None);
    }
    let (base, size) = q.ring();
    let available = ((wptr - rptr) / 4).min(MAX_PACKET_DWORDS as u64) as usize;
    let mut dw = [0u32; MAX_PACKET_DWORDS];
    for (i, d) in dw.iter_mut().enumerate().take(available) {
        *d = mem.read::<u32>(base + (rptr + 4 * i as u64) % size.max(4))?;
    }
    let (packet, len) = match packet::decode(&dw[..available]) {
        // The producer has not finished writing this packet.
        Err(SdmaError::Truncated { .. }) => return Ok(None),
        other => other?,
    };
    match execute(process, q, mem, packet)? {
        Outcome::Blocked => return Ok(Some(Outcome::Blocked)),
        Outcome::Done => {}
    }
    rptr_word.store(rptr + 4 * len as u64, Ordering::Release);
    Ok(Some(Outcome::Done))
}

fn execute(process: &dyn Context, q: &Queue, mem: &GpuMem<'_>, p: Packet) -> Result<Outcome, StepError> {
    tracing::trace!(pid = process.pid(), "SDMA {p:x?}");
    // The clock is read only for a timeline: every packet of every queue passes here.
    let started = process.trace().map(|_| std::time::Instant::now());
    let count = |kind, bytes| {
        if let Some(stats) = process.stats() {
            stats.record_copy(q.gpu, q.id, kind, bytes);
        }
        if let (Some(trace), Some(started)) = (process.trace(), started) {
            let name = match kind {
                CopyKind::Copy => "copy",
                CopyKind::Fill => "fill",
            };
            let track = Track::Sdma { gpu: q.gpu, queue: q.id };
            trace.record(track, name.into(), started, std::time::Instant::now(), Detail::Copy { bytes });
        }
    };
    match p {
        Packet::Nop | Packet::Gcr => {}
        Packet::CopyLinear { src, dst, bytes } => {
            mem.copy(dst, src, bytes)?;
            count(CopyKind::Copy, bytes);
        }
        Packet::CopyRect { element_bytes, src, dst, extent } => {
            copy_rect(mem, element_bytes, &src, &dst, extent)?;
            count(CopyKind::Copy, element_bytes * extent.iter().product::<u64>());
        }
        Packet::Fence { addr, data } => mem.write::<u32>(addr, data)?,
        Packet::Trap { context } => process.interrupt(context),
        Packet::Poll { memory: false, .. } => {}
        Packet::Poll { memory: true, addr, value, mask, func } => {
            let actual = mem.atomic_u32(addr, false)?.load(Ordering::Acquire);
            if !packet::poll_satisfied(func, actual, mask, value) {
                return Ok(Outcome::Blocked);
            }
        }
        Packet::Atomic { addr, src, .. } => {
            // ADD64 (the only operation `decode` accepts).
            mem.atomic_u64(addr, true)?.fetch_add(src, Ordering::AcqRel);
        }
        Packet::ConstFill { dst, data, bytes } => {
            mem.fill_u32(dst, data, bytes)?;
            count(CopyKind::Fill, bytes);
        }
        Packet::Timestamp { addr } => mem.write::<u64>(addr, clock::gpu_ticks())?,
    }
    Ok(Outcome::Done)
}

fn copy_rect(mem: &GpuMem<'_>, elem: u64, src: &RectSide, dst: &RectSide, extent: [u64; 3]) -> Result<(), GpuFault> {
    let row_bytes = extent[0] * elem;
    let at = |s: &RectSide, y: u64, z: u64| {
        s.base
            + ((s.offset[2] as u64 + z) * s.slice_pitch + (s.offset[1] as u64 + y) * s.pitch + s.offset[0] as u64)
                * elem
    };
    for z in 0..extent[2] {
        for y in 0..extent[1] {
            mem.copy(at(dst, y, z), at(src, y, z), row_bytes)?;
        }
    }
    Ok(())
}
