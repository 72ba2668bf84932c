//! The SDMA engine on a process context with no driver behind it (`sim::testing::TestContext`):
//! copies of every size ROCR sends, the trap that becomes an event interrupt, and a copy to an
//! unmapped address or a write index in unmapped memory, which stop the queue and report the
//! fault to the process.

use sim::gpu::context::Context;
use sim::gpu::memory::GpuMem;
use sim::gpu::queue::{Progress, Queue, QueueKind};
use sim::gpu::sdma;
use sim::testing::{splitmix, TestContext};
use std::sync::Arc;

const BASE: u64 = 0x1000_0000;
const RING: u64 = BASE;
const RING_BYTES: u64 = 0x1000;
const RPTR: u64 = BASE + 0x1000;
const WPTR: u64 = BASE + 0x1008;
const SRC: u64 = BASE + 0x10_0000;
const DST: u64 = BASE + 0x80_0000;
/// 6 MiB: more than the 22-bit count of older SDMA could say in one packet.
const COPY_BYTES: u64 = 6 << 20;

/// A context with the ring, its indices and both copy buffers mapped, and an SDMA queue on it.
fn setup() -> (Arc<TestContext>, Arc<dyn Context>, Queue) {
    let config = sim::config::default_config();
    let ctx = Arc::new(TestContext::new(&config, 16 << 20));
    ctx.map(BASE, 0xf0_0000);
    let dyn_ctx: Arc<dyn Context> = ctx.clone();
    let q = Queue::new(1, 0, QueueKind::Sdma, RING, RING_BYTES, WPTR, RPTR, 0, 100, 7);
    (ctx, dyn_ctx, q)
}

/// Writes `packets` at the ring's current write index and moves it past them.
fn submit(ctx: &dyn Context, packets: &[u32]) {
    let vm = ctx.vm();
    let mem = GpuMem::new(&vm);
    let wptr: u64 = mem.read(WPTR).unwrap();
    for (i, dw) in packets.iter().enumerate() {
        mem.write(RING + (wptr + 4 * i as u64) % RING_BYTES, *dw).unwrap();
    }
    mem.write(WPTR, wptr + 4 * packets.len() as u64).unwrap();
}

fn copy_linear(src: u64, dst: u64, bytes: u64) -> [u32; 7] {
    let lo_hi = |a: u64| [a as u32, (a >> 32) as u32];
    let [s0, s1] = lo_hi(src);
    let [d0, d1] = lo_hi(dst);
    [0x0000_0001, (bytes - 1) as u32, 0, s0, s1, d0, d1]
}

#[test]
fn one_packet_copies_six_mib_and_a_trap_interrupts() {
    let (ctx, process, q) = setup();
    let data: Vec<u8> = (0..COPY_BYTES / 4).flat_map(|i| splitmix(i).to_le_bytes()).collect();
    GpuMem::new(&process.vm()).write_bytes(SRC, &data).unwrap();
    submit(process.as_ref(), &copy_linear(SRC, DST, COPY_BYTES));
    // TRAP with event context 42.
    submit(process.as_ref(), &[0x0000_0006, 42]);
    assert_eq!(sdma::service(&process, &q), Progress::Advanced);
    let mut back = vec![0u8; COPY_BYTES as usize];
    GpuMem::new(&process.vm()).read_bytes(DST, &mut back).unwrap();
    assert!(back == data, "every byte of the 6 MiB copy arrives");
    assert_eq!(ctx.interrupts(), [42]);
    assert!(ctx.faults().is_empty());
    // Both packets consumed: read index caught up with the write index.
    let vm = process.vm();
    let mem = GpuMem::new(&vm);
    assert_eq!(mem.read::<u64>(RPTR).unwrap(), mem.read::<u64>(WPTR).unwrap());
    assert_eq!(sdma::service(&process, &q), Progress::Idle);
}

#[test]
fn a_copy_to_unmapped_memory_stops_the_queue_and_reports_the_fault() {
    let (ctx, process, q) = setup();
    let unmapped = 0x7000_0000_0000;
    submit(process.as_ref(), &copy_linear(SRC, unmapped, 0x1000));
    submit(process.as_ref(), &[0x0000_0006, 1]);
    assert_eq!(sdma::service(&process, &q), Progress::Advanced);
    let faults = ctx.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!((faults[0].0, faults[0].1.va & !0xfff), (0, unmapped));
    assert!(faults[0].1.write && faults[0].1.not_present);
    assert!(!q.runnable(), "a faulting queue consumes nothing more");
    assert!(ctx.interrupts().is_empty(), "the trap after the fault never ran");
}

#[test]
fn a_write_index_in_unmapped_memory_stops_the_queue_and_reports_the_fault() {
    let (ctx, process, _) = setup();
    let unmapped_wptr = 0x7000_0000_0008;
    let q = Queue::new(1, 0, QueueKind::Sdma, RING, RING_BYTES, unmapped_wptr, RPTR, 0, 100, 7);
    assert_eq!(sdma::service(&process, &q), Progress::Advanced);
    let faults = ctx.faults();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!((faults[0].0, faults[0].1.va), (0, unmapped_wptr));
    assert!(!faults[0].1.write && faults[0].1.not_present, "the index is read: {:?}", faults[0].1);
    assert!(!q.runnable(), "a queue whose write index cannot be read is stopped");
    assert_eq!(sdma::service(&process, &q), Progress::Idle, "and stays stopped");
}

#[test]
fn a_process_with_statistics_counts_each_queues_copies_and_fills() {
    let (ctx, process, q) = setup();
    submit(process.as_ref(), &copy_linear(SRC, DST, 4096));
    assert_eq!(sdma::service(&process, &q), Progress::Advanced);
    assert!(ctx.stats().is_none(), "no statistics unless asked for");
    ctx.enable_stats();
    submit(process.as_ref(), &copy_linear(SRC, DST, 3 << 20));
    submit(process.as_ref(), &copy_linear(DST, SRC, 100));
    // CONSTANT_FILL of 256 bytes (dwords) with 0x5a5a5a5a.
    submit(process.as_ref(), &[0x8000_000b, DST as u32, (DST >> 32) as u32, 0x5a5a_5a5a, 256 - 4]);
    assert_eq!(sdma::service(&process, &q), Progress::Advanced);
    let report = ctx.stats().unwrap().report(1);
    assert_eq!(report.copy_engines.len(), 1);
    let c = &report.copy_engines[0];
    assert_eq!((c.gpu, c.queue), (0, 1));
    assert_eq!((c.copies, c.bytes_copied), (2, (3 << 20) + 100));
    assert_eq!((c.fills, c.bytes_filled), (1, 256));
}
