//! Cost of the common scalar ops, handler only (decode done once, as the code cache does):
//! `cargo bench -p sim --bench salu`.

use criterion::{criterion_group, criterion_main, Criterion};
use sim::isa::{decode, Target};
use sim::testing::Harness;
use std::hint::black_box;

/// (mnemonic, encoding by llvm-mc-15 -mcpu=gfx90a)
const CASES: &[(&str, u32)] = &[
    ("s_add_u32", 0x8001_8300),          // s_add_u32 s1, s0, 3
    ("s_cmp_lg_u32", 0xbf07_0201),       // s_cmp_lg_u32 s1, s2
    ("s_cbranch_scc1", 0xbf85_fffe),     // s_cbranch_scc1 -2
    ("s_and_saveexec_b64", 0xbe84_2000), // s_and_saveexec_b64 s[4:5], s[0:1]
    ("s_lshl_b64", 0x8e86_8300),         // s_lshl_b64 s[6:7], s[0:1], 3
];

fn salu(c: &mut Criterion) {
    let mut group = c.benchmark_group("salu");
    let mut harness = Harness::new();
    for &(name, word) in CASES {
        let inst = decode(&[word], Target::Gfx90a).unwrap();
        assert_eq!(inst.op.name(), name);
        let handler = sim::gpu::exec::ops::handler(inst.op);
        harness.with_ctx(|wave, ctx| {
            let mut k = 0u32;
            group.bench_function(name, |b| {
                b.iter(|| {
                    k = k.wrapping_add(1);
                    wave.sgpr[0] = k;
                    black_box(handler(wave, black_box(&inst), ctx).unwrap())
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, salu);
criterion_main!(benches);
