//! Cost of the common scalar ops, handler only (decode cached), in a
//! release build: `cargo test -p sim --release --test exec_salu_perf -- --ignored --nocapture`.

use sim::isa::{decode, Target};
use sim::testing::Harness;
use std::time::Instant;

#[test]
#[ignore = "timing; run in release"]
fn common_scalar_ops_cost_tens_of_ns() {
    let mut harness = Harness::new();
    // s_add_u32 s1, s0, 3; s_cmp_lg_u32 s1, s2; s_cbranch_scc1 -2;
    // s_and_saveexec_b64 s[4:5], s[0:1]; s_lshl_b64 s[6:7], s[0:1], 3
    for (name, words) in [
        ("s_add_u32", [0x8001_8300u32]),
        ("s_cmp_lg_u32", [0xbf07_0201]),
        ("s_cbranch_scc1", [0xbf85_fffe]),
        ("s_and_saveexec_b64", [0xbe84_2000]),
        ("s_lshl_b64", [0x8e86_8300]),
    ] {
        let inst = decode(&words, Target::Gfx90a).unwrap();
        let h = sim::gpu::exec::ops::handler(inst.op);
        let n = 10_000_000u32;
        let ns = harness.with_ctx(|w, ctx| {
            let t = Instant::now();
            for k in 0..n {
                w.sgpr[0] = k;
                std::hint::black_box(h(w, std::hint::black_box(&inst), ctx).unwrap());
            }
            t.elapsed().as_nanos() as f64 / n as f64
        });
        // A measurement to read, never a timed assertion.
        println!("{name}: {ns:.1} ns");
    }
}
