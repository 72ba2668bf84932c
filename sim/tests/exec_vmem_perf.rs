//! Throughput of the common memory instructions (run with
//! `cargo test --release -p sim --test exec_vmem_perf -- --ignored --nocapture`).
//! Includes the harness's per-instruction decode, so the figures are upper
//! bounds for the dispatch path (which caches decoded instructions).

use sim::gpu::exec::LANES;
use sim::testing::{Harness, MEM_BASE};
use std::time::Instant;

fn per_lane_ns(h: &mut Harness, inst: [u32; 2]) -> f64 {
    let copies = 4096;
    let words: Vec<u32> = std::iter::repeat_n(inst, copies).flatten().collect();
    h.run(&words).unwrap();
    let rounds = 50;
    let t = Instant::now();
    for _ in 0..rounds {
        h.run(&words).unwrap();
    }
    t.elapsed().as_nanos() as f64 / (rounds * copies * LANES) as f64
}

#[test]
#[ignore]
fn memory_instruction_throughput() {
    let mut h = Harness::new();
    for l in 0..LANES {
        let a = MEM_BASE + 4 * l as u64;
        h.wave.vgpr[2][l] = a as u32;
        h.wave.vgpr[3][l] = (a >> 32) as u32;
        h.wave.vgpr[1][l] = 4 * l as u32;
    }
    // Warm up (CPU frequency, caches).
    per_lane_ns(&mut h, [0xdc508000, 0x017f0002]);
    // global_load_dword v1, v[2:3], off
    let load = per_lane_ns(&mut h, [0xdc508000, 0x017f0002]);
    // global_store_dword v[2:3], v1, off
    let store = per_lane_ns(&mut h, [0xdc708000, 0x007f0102]);
    // global_load_dwordx4 v[4:7], v[2:3], off offset:16 (as x2 slot: dwordx4 at v[4:7])
    let load4 = per_lane_ns(&mut h, [0xdc5c8010, 0x047f0002]);
    // ds_read_b32 v3, v1 offset:4
    let ds_read = per_lane_ns(&mut h, [0xd86c0004, 0x03000001]);
    // ds_write_b32 v1, v2 offset:4
    let ds_write = per_lane_ns(&mut h, [0xd81a0004, 0x00000201]);
    // s_nop 0: the harness's own cost per instruction, spread over 64 lanes
    let nop = per_lane_ns(&mut h, [0xbf800000, 0xbf800000]);
    println!(
        "ns per lane: global_load_dword {load:.2}, global_store_dword {store:.2}, global_load_dwordx4 {load4:.2}, \
         ds_read_b32 {ds_read:.2}, ds_write_b32 {ds_write:.2}; harness per instruction {:.1} ns",
        nop * LANES as f64
    );
}
