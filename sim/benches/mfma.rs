//! MFMA throughput: multiply-accumulates per second of one host core, per op kind.
//! `cargo bench -p sim --bench mfma` (criterion prints time per instruction; the MAC
//! rate is `macs / time`, shown as "elements" throughput).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sim::testing::Harness;

/// (name, encoding with A in v0.., B in v2.., C = D at v32, assembled by llvm-mc-15, MACs)
const CASES: &[(&str, [u32; 2], u64)] = &[
    ("v_mfma_f32_32x32x8f16", [0xd3cc_0020, 0x0482_0500], 32 * 32 * 8),
    ("v_mfma_f32_32x32x2f32", [0xd3c4_0020, 0x0482_0500], 32 * 32 * 2),
    ("v_mfma_i32_32x32x8i8", [0xd3d4_0020, 0x0482_0500], 32 * 32 * 8),
    ("v_mfma_f64_16x16x4f64", [0xd3ee_0020, 0x0482_0500], 16 * 16 * 4),
    ("v_mfma_f32_4x4x4f16", [0xd3ca_0020, 0x0482_0500], 16 * 4 * 4 * 4),
];

fn mfma(c: &mut Criterion) {
    let mut group = c.benchmark_group("mfma");
    for &(name, words, macs) in CASES {
        let mut h = Harness::new();
        for (r, reg) in h.wave.vgpr.iter_mut().enumerate() {
            for (l, v) in reg.iter_mut().enumerate() {
                *v = 0x3c00_3c00 ^ ((r * 64 + l) as u32 & 0x0101);
            }
        }
        assert_eq!(h.decode(&words).unwrap().op.name(), name);
        group.throughput(Throughput::Elements(macs));
        group.bench_function(name, |b| b.iter(|| h.run(&words).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, mfma);
criterion_main!(benches);
