//! Throughput of the hottest float ops, in ns per wave-instruction (run
//! with `cargo test --release -p sim --test exec_valu_float_perf -- --ignored --nocapture`).
//! The handlers are called directly on a decoded instruction, as the
//! interpreter does after its decode cache.

use sim::exec::ops::valu::{float_fast, float_io, fp};
use sim::exec::{Lanes, Wave};
use sim::isa::{decode, Target};
use std::time::Instant;

/// `v_add_f32 v2, v0, v1`
const ADD_F32: &[u32] = &[0x02040300];
/// `v_mul_f32 v2, v0, v1`
const MUL_F32: &[u32] = &[0x0a040300];
/// `v_fma_f32 v3, v0, v1, v2`
const FMA_F32: &[u32] = &[0xd1cb0003, 0x040a0300];

fn bench(name: &str, words: &[u32], mode: u32, f: fn(&mut Wave, &sim::isa::Inst)) {
    let inst = decode(words, Target::Gfx90a).unwrap();
    let mut w = Wave::new(8, 0);
    w.mode = mode;
    let vals: Lanes = std::array::from_fn(|l| (1.0f32 + l as f32 / 64.0).to_bits());
    w.vgpr[0] = vals;
    w.vgpr[1] = vals;
    w.vgpr[2] = vals;
    // The best of several runs: the machine is shared.
    let n = 200_000;
    let ns = (0..10)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f(&mut w, &inst);
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name}: {ns:.1} ns per wave-instruction ({:.1} M/s)", 1e3 / ns);
    std::hint::black_box(&w);
}

#[test]
#[ignore]
fn float_op_throughput() {
    bench("v_add_f32 (HIP mode)", ADD_F32, 0x2f0, |w, i| {
        float_fast::add_f32(w, i).unwrap();
    });
    bench("v_mul_f32 (HIP mode)", MUL_F32, 0x2f0, |w, i| {
        float_fast::mul_f32(w, i).unwrap();
    });
    bench("v_fma_f32 (HIP mode)", FMA_F32, 0x2f0, |w, i| {
        float_fast::fma_f32(w, i).unwrap();
    });
    bench("v_add_f32 (f32 denormals flushed)", ADD_F32, 0x200, |w, i| {
        float_fast::add_f32(w, i).unwrap();
    });
    bench("v_fma_f32 (round up, general path)", FMA_F32, 0x2f1, |w, i| {
        float_io::op32(w, i, float_io::Out::F32, |[a, b, c], e| {
            fp::out32(fp::fma_odd(fp::in32(a, e), fp::in32(b, e), fp::in32(c, e)), e)
        })
        .unwrap();
    });
}
