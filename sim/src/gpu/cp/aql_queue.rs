//! Consuming one AQL queue: packets in order, barrier dependencies, vendor
//! packets, kernel dispatches, completion — and queue errors reported the
//! way ROCR expects them.

use super::aql::{self, packet_type, vendor_format, Barrier, BarrierValue, Header, KernelDispatch, Pm4Ib};
use super::dispatch::{DispatchError, DispatchExecutor, DispatchJob, DispatchTicket, Wake};
use super::pm4;
use super::signal;
use crate::clock;
use crate::gpu::context::Context;
use crate::gpu::memory::{GpuFault, GpuMem};
use crate::gpu::queue::{amd_queue, Progress, Queue};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Queue error codes as ROCR's queue error handler decodes the value of
/// `queue_inactive_signal` (amd_aql_queue.cpp).
pub mod queue_error {
    pub const INVALID_DIMENSION: i64 = 2;
    pub const INVALID_GROUP_MEMORY: i64 = 4;
    pub const INVALID_CODE: i64 = 8;
    pub const INVALID_PACKET: i64 = 32;
    pub const GROUP_TOO_LARGE: i64 = 64;
    pub const OUT_OF_REGISTERS: i64 = 128;
    pub const INVALID_VENDOR_PACKET: i64 = 256;
    pub const MEMORY_VIOLATION: i64 = 0x2000_0000;
    pub const ILLEGAL_INSTRUCTION: i64 = 0x4000_0000;
}

/// How many packets one visit may consume, so that one busy queue cannot
/// starve the others.
const PACKETS_PER_VISIT: usize = 16;

/// Why a packet could not be consumed.
enum PacketOutcome {
    Done {
        completion: u64,
    },
    /// A dependency is not satisfied yet: retry on a later visit.
    Blocked,
    Error {
        code: i64,
        reason: String,
    },
    Fault(GpuFault),
}

/// A dispatch a queue started and has not retired yet: the queue's next packets wait for
/// it (packets of one queue complete in order), other queues do not.
pub struct InFlight {
    ticket: Arc<DispatchTicket>,
    /// The read index of its packet.
    read: u64,
    /// GPU clock at its start (for profiling timestamps).
    started: u64,
}

/// Consumes what is ready in `q`. `in_flight` is the queue's running dispatch, kept by the
/// caller between visits; `wake` is what the dispatch calls when it ends.
pub fn service(
    process: &Arc<dyn Context>,
    q: &Arc<Queue>,
    exec: &dyn DispatchExecutor,
    in_flight: &mut Option<InFlight>,
    wake: &Wake,
) -> Progress {
    let _busy = q.busy.lock().unwrap_or_else(|e| e.into_inner());
    let mut progress = Progress::Idle;
    for _ in 0..PACKETS_PER_VISIT {
        if !q.runnable() {
            break;
        }
        // The write index first, then the snapshot the packets are read through: a producer
        // maps what its packets use (kernel code, kernel arguments, signals) before it
        // publishes them, so a snapshot taken after the index was read (with acquire
        // ordering) holds every mapping they need. Taken before, it could lack a mapping
        // made just before a packet that the index then shows: a page fault the hardware,
        // whose page tables are live, never gives.
        let write = match GpuMem::new(&process.vm()).atomic_u64(q.write_ptr, false) {
            Ok(index) => index.load(Ordering::Acquire),
            Err(fault) => {
                report_fault(process.as_ref(), q, fault);
                return Progress::Advanced;
            }
        };
        let vm = process.vm();
        let mem = GpuMem::new(&vm);
        match step(process, q, &mem, write, exec, in_flight, wake) {
            Ok(Some(true)) => progress = Progress::Advanced,
            Ok(Some(false)) => return progress.max(Progress::Blocked),
            Ok(None) => break,
            Err(fault) => {
                report_fault(process.as_ref(), q, fault);
                return Progress::Advanced;
            }
        }
    }
    progress
}

/// Consumes at most one packet of those below the write index `write`. `Some(true)`:
/// consumed; `Some(false)`: blocked on a dependency; `None`: nothing ready.
fn step(
    process: &Arc<dyn Context>,
    q: &Arc<Queue>,
    mem: &GpuMem<'_>,
    write: u64,
    exec: &dyn DispatchExecutor,
    in_flight: &mut Option<InFlight>,
    wake: &Wake,
) -> Result<Option<bool>, GpuFault> {
    // A dispatch still running holds the queue: nothing to read until it ends (this is the
    // scheduler thread's loop while a long kernel runs).
    if in_flight.as_ref().is_some_and(|f| f.ticket.outcome().is_none()) {
        return Ok(Some(false));
    }
    let read_index = mem.atomic_u64(q.read_ptr, true)?;
    let read = read_index.load(Ordering::Acquire);
    if read >= write {
        return Ok(None);
    }
    let (ring_base, ring_bytes) = q.ring();
    let slots = (ring_bytes / aql::PACKET_BYTES).max(1);
    let slot = ring_base + (read % slots) * aql::PACKET_BYTES;
    // The producer writes the header last, with release semantics.
    let header_word = mem.atomic_u32(slot, true)?;
    let header = Header(header_word.load(Ordering::Acquire) as u16);
    if header.packet_type() == packet_type::INVALID {
        return Ok(None);
    }
    let mut raw = [0u8; aql::PACKET_BYTES as usize];
    mem.read_bytes(slot, &mut raw)?;
    let profiling = mem.read::<u32>(q.amd_queue() + amd_queue::QUEUE_PROPERTIES)? & amd_queue::PROPERTY_PROFILING != 0;
    let mut start = clock::gpu_ticks();
    let outcome = match header.packet_type() {
        packet_type::KERNEL_DISPATCH => {
            let packet: KernelDispatch = bytemuck::pod_read_unaligned(&raw);
            let result = match in_flight.take() {
                Some(f) if f.read == read => match f.ticket.outcome() {
                    None => {
                        *in_flight = Some(f);
                        return Ok(Some(false));
                    }
                    Some(outcome) => {
                        // Counted before the completion signal, so whoever waits on it
                        // finds the dispatch counted.
                        q.activity.kernel_ended(outcome.is_ok());
                        start = f.started;
                        outcome.clone()
                    }
                },
                // None, or a dispatch of a packet the queue no longer holds.
                _ => {
                    let ticket = DispatchTicket::new(Some(wake.clone()));
                    let job = DispatchJob {
                        process,
                        gpu: q.gpu,
                        queue: Some(q),
                        amd_queue: q.amd_queue(),
                        packet,
                        packet_va: slot,
                    };
                    // Set before it starts: its waves may run, and tell the host so, before `start`
                    // returns.
                    q.activity.kernel_started(packet.kernel_object);
                    match exec.start(&job, &ticket) {
                        Ok(()) => {
                            *in_flight = Some(InFlight { ticket, read, started: start });
                            return Ok(Some(true));
                        }
                        Err(e) => {
                            q.activity.kernel_ended(false);
                            Err(e)
                        }
                    }
                }
            };
            match result {
                Ok(()) => PacketOutcome::Done { completion: packet.completion_signal },
                Err(DispatchError::Fault(f)) => PacketOutcome::Fault(f),
                Err(DispatchError::Invalid { code, reason }) => PacketOutcome::Error { code, reason },
                Err(DispatchError::Illegal { pc, what }) => PacketOutcome::Error {
                    code: queue_error::ILLEGAL_INSTRUCTION,
                    reason: format!("{what} at PC {pc:#x}"),
                },
                Err(DispatchError::Aborted) => return Ok(None),
            }
        }
        packet_type::BARRIER_AND | packet_type::BARRIER_OR => {
            barrier(mem, bytemuck::pod_read_unaligned(&raw), header.packet_type() == packet_type::BARRIER_AND)?
        }
        packet_type::VENDOR_SPECIFIC => vendor(mem, &raw)?,
        other => PacketOutcome::Error {
            code: queue_error::INVALID_PACKET,
            reason: format!("AQL packet type {other} is not supported"),
        },
    };
    match outcome {
        PacketOutcome::Blocked => Ok(Some(false)),
        PacketOutcome::Fault(f) => Err(f),
        PacketOutcome::Error { code, reason } => {
            report_error(process.as_ref(), q, mem, code, &reason);
            Ok(Some(true))
        }
        PacketOutcome::Done { completion } => {
            header_word.store(
                aql::INVALID_HEADER as u32 | (header_word.load(Ordering::Relaxed) & 0xffff_0000),
                Ordering::Release,
            );
            read_index.store(read + 1, Ordering::Release);
            q.activity.packet_consumed();
            if profiling {
                signal::write_timestamps(mem, completion, start, clock::gpu_ticks())?;
            }
            signal::complete(mem, completion, process.as_ref())?;
            Ok(Some(true))
        }
    }
}

/// BARRIER_AND waits until every dependency reaches 0; BARRIER_OR until one does.
fn barrier(mem: &GpuMem<'_>, p: Barrier, and: bool) -> Result<PacketOutcome, GpuFault> {
    let deps: Vec<u64> = p.dep_signal.iter().copied().filter(|&s| s != 0).collect();
    let mut done = Vec::with_capacity(deps.len());
    for &d in &deps {
        done.push(signal::value(mem, d)? <= 0);
    }
    let satisfied = if and { done.iter().all(|&x| x) } else { deps.is_empty() || done.iter().any(|&x| x) };
    Ok(if satisfied { PacketOutcome::Done { completion: p.completion_signal } } else { PacketOutcome::Blocked })
}

fn vendor(mem: &GpuMem<'_>, raw: &[u8]) -> Result<PacketOutcome, GpuFault> {
    let ven_hdr = u16::from_le_bytes([raw[2], raw[3]]);
    match ven_hdr {
        vendor_format::PM4_IB => {
            let p: Pm4Ib = bytemuck::pod_read_unaligned(raw);
            let result = pm4::indirect_buffer(p.ib_jump_cmd).and_then(|(addr, dwords)| {
                let mut bytes = vec![0u8; dwords as usize * 4];
                mem.read_bytes(addr, &mut bytes)?;
                let stream: Vec<u32> =
                    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                pm4::execute(mem, &stream)
            });
            Ok(match result {
                Ok(()) => PacketOutcome::Done { completion: p.completion_signal },
                Err(pm4::Pm4Error::Fault(f)) => PacketOutcome::Fault(f),
                Err(e) => PacketOutcome::Error { code: queue_error::INVALID_VENDOR_PACKET, reason: e.to_string() },
            })
        }
        vendor_format::BARRIER_VALUE => {
            let p: BarrierValue = bytemuck::pod_read_unaligned(raw);
            // A null signal waits for nothing, as a null dependency of a
            // barrier-AND does: HIP 6.x queues such packets as plain markers
            // (signal 0, mask 0) when a stream has nothing to wait for.
            if p.signal == 0 {
                return Ok(PacketOutcome::Done { completion: p.completion_signal });
            }
            let v = signal::value(mem, p.signal)?;
            Ok(match p.satisfied(v) {
                Some(true) => PacketOutcome::Done { completion: p.completion_signal },
                Some(false) => PacketOutcome::Blocked,
                None => PacketOutcome::Error {
                    code: queue_error::INVALID_VENDOR_PACKET,
                    reason: format!("barrier-value condition {} is not valid", p.cond),
                },
            })
        }
        other => Ok(PacketOutcome::Error {
            code: queue_error::INVALID_VENDOR_PACKET,
            reason: format!("vendor packet format {other} is not supported"),
        }),
    }
}

/// Stops the queue and tells ROCR through `queue_inactive_signal`, whose
/// handler turns the code into an HSA status and the application's queue
/// error callback.
fn report_error(process: &dyn Context, q: &Queue, mem: &GpuMem<'_>, code: i64, reason: &str) {
    tracing::error!("GPU queue {} of process {}: {reason}; the queue is stopped", q.id, process.pid());
    q.fail();
    let handle = mem.read::<u64>(q.amd_queue() + amd_queue::QUEUE_INACTIVE_SIGNAL).unwrap_or(0);
    if let Err(f) = signal::store_and_notify(mem, handle, code, process) {
        tracing::error!("cannot report the queue error: {f}");
    }
}

/// A GPU page fault: the queue stops and the process receives the memory
/// exception event (ROCR prints "Memory access fault by GPU …").
fn report_fault(process: &dyn Context, q: &Queue, fault: GpuFault) {
    tracing::error!("GPU queue {} of process {}: {fault}; the queue is stopped", q.id, process.pid());
    q.fail();
    process.report_fault(q.gpu, fault);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::memory::GpuVm;

    fn barrier_value(signal: u64, mask: i64, completion: u64) -> [u8; 64] {
        let p = BarrierValue {
            header: packet_type::VENDOR_SPECIFIC as u16,
            ven_hdr: vendor_format::BARRIER_VALUE,
            signal,
            mask,
            completion_signal: completion,
            // ROCclr leaves stale bytes in the reserved fields.
            reserved0: 0x5625,
            reserved3: 0x5625_b88e_6ce0,
            ..bytemuck::Zeroable::zeroed()
        };
        let mut raw = [0u8; 64];
        raw.copy_from_slice(bytemuck::bytes_of(&p));
        raw
    }

    #[test]
    fn a_barrier_value_packet_on_a_null_signal_is_a_marker() {
        // No memory at all: any signal read would fault.
        let vm = GpuVm::new();
        let mem = GpuMem::new(&vm);
        match vendor(&mem, &barrier_value(0, 0, 0x1234)).map_err(|f| f.va) {
            Ok(PacketOutcome::Done { completion }) => assert_eq!(completion, 0x1234),
            Ok(_) => panic!("a null-signal barrier must complete"),
            Err(va) => panic!("read {va:#x} for a null signal"),
        }
        // A real signal is read (and here faults, since nothing is mapped).
        assert!(vendor(&mem, &barrier_value(0x1000, -1, 0)).is_err());
    }
}
