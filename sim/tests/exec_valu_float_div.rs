//! LLVM's f32 and f64 division sequences (`clang-15 -target amdgcn
//! -mcpu=gfx90a -O2` on `a / b`, registers renamed) must reproduce the
//! host's IEEE division bit for bit, over specials, denormals and random
//! operands; plus the transcendental ops' special values.
//! Encodings assembled with `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
#![allow(clippy::needless_range_loop)]

use sim::gpu::exec::jit::Engine;
use sim::testing::Harness;

mod rng_support;
use rng_support::Rng;

/// v0 = a, v1 = b; result in v2.
const FDIV: &[u32] = &[
    0xd1e00403, 0x04020301, // v_div_scale_f32 v3, s[4:5], v1, v1, v0
    0x7e0a4503, // v_rcp_f32 v5, v3
    0xd1e06a07, 0x04020300, // v_div_scale_f32 v7, vcc, v0, v1, v0
    0xd1cb0008, 0x23ca0b03, // v_fma_f32 v8, -v3, v5, 1.0
    0x760a0b08, // v_fmac_f32 v5, v8, v5
    0x0a100b07, // v_mul_f32 v8, v7, v5
    0xd1cb0009, 0x241e1103, // v_fma_f32 v9, -v3, v8, v7
    0x76100b09, // v_fmac_f32 v8, v9, v5
    0xd1cb0003, 0x241e1103, // v_fma_f32 v3, -v3, v8, v7
    0xd1e20003, 0x04220b03, // v_div_fmas_f32 v3, v3, v5, v8
    0xd1de0002, 0x04020303, // v_div_fixup_f32 v2, v3, v1, v0
];

/// v[0:1] = a, v[2:3] = b; result in v[4:5].
const DDIV: &[u32] = &[
    0xd1e10406, 0x04020502, // v_div_scale_f64 v[6:7], s[4:5], v[2:3], v[2:3], v[0:1]
    0x7e104b06, // v_rcp_f64 v[8:9], v[6:7]
    0xd1e16a0a, 0x04020500, // v_div_scale_f64 v[10:11], vcc, v[0:1], v[2:3], v[0:1]
    0xd1cc000c, 0x23ca1106, // v_fma_f64 v[12:13], -v[6:7], v[8:9], 1.0
    0x08101908, // v_fmac_f64 v[8:9], v[8:9], v[12:13]
    0xd1cc000c, 0x23ca1106, // v_fma_f64 v[12:13], -v[6:7], v[8:9], 1.0
    0x08101908, // v_fmac_f64 v[8:9], v[8:9], v[12:13]
    0xd281000c, 0x0002110a, // v_mul_f64 v[12:13], v[10:11], v[8:9]
    0xd1cc0006, 0x242a1906, // v_fma_f64 v[6:7], -v[6:7], v[12:13], v[10:11]
    0xd1e30006, 0x04321106, // v_div_fmas_f64 v[6:7], v[6:7], v[8:9], v[12:13]
    0xd1df0004, 0x04020506, // v_div_fixup_f64 v[4:5], v[6:7], v[2:3], v[0:1]
];

/// HIP's default MODE: round to nearest even, denormals kept, IEEE.
const HIP: u32 = 0x2f0;

fn f32_operand(rng: &mut Rng) -> u32 {
    const SPECIAL: [u32; 14] = [
        0,
        0x8000_0000,
        1,
        0x0000_0003,
        0x807f_ffff,
        0x0080_0000,
        0x3f80_0000,
        0x7f7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7e80_0000,
        0x0100_0000,
        0x4040_0000,
    ];
    let r = rng.next();
    match r % 8 {
        0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
        1 => (r >> 20) as u32 & 0x807f_ffff, // denormal
        2 => ((r >> 20) as u32 & 0x807f_ffff) | (((r >> 52) as u32 % 24 + 231) << 23), // huge
        3 => ((r >> 20) as u32 & 0x807f_ffff) | (((r >> 52) as u32 % 24 + 1) << 23), // tiny normal
        _ => (r >> 24) as u32,
    }
}

fn f64_operand(rng: &mut Rng) -> u64 {
    const SPECIAL: [u64; 10] = [
        0,
        1 << 63,
        1,
        0x000f_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0x7fef_ffff_ffff_ffff,
        0x7ff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x7fd0_0000_0000_0000,
    ];
    let r = rng.next();
    let m = rng.next();
    match r % 8 {
        0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
        1 => m & 0x800f_ffff_ffff_ffff,
        2 => (m & 0x800f_ffff_ffff_ffff) | ((r >> 40) % 60 + 1980) << 52,
        3 => (m & 0x800f_ffff_ffff_ffff) | ((r >> 40) % 60 + 1) << 52,
        _ => m,
    }
}

#[test]
fn llvm_f32_division_matches_host_division() {
    let mut rng = Rng(0xdead_beef_1234_5678);
    let mut h = Harness::new();
    for round in 0..2000 {
        let a: [u32; 64] = std::array::from_fn(|_| f32_operand(&mut rng));
        let b: [u32; 64] = std::array::from_fn(|_| f32_operand(&mut rng));
        h.wave.vgpr[0] = a;
        h.wave.vgpr[1] = b;
        h.wave.mode = HIP;
        h.run(FDIV).unwrap();
        for l in 0..64 {
            let want = f32::from_bits(a[l]) / f32::from_bits(b[l]);
            let got = f32::from_bits(h.wave.vgpr[2][l]);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "round {round} lane {l}: {:#x} / {:#x} = {:#x}, want {:#x}",
                a[l],
                b[l],
                got.to_bits(),
                want.to_bits()
            );
        }
    }
}

#[test]
fn llvm_f64_division_matches_host_division() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let mut h = Harness::new();
    for round in 0..2000 {
        let a: [u64; 64] = std::array::from_fn(|_| f64_operand(&mut rng));
        let b: [u64; 64] = std::array::from_fn(|_| f64_operand(&mut rng));
        for l in 0..64 {
            h.wave.vgpr[0][l] = a[l] as u32;
            h.wave.vgpr[1][l] = (a[l] >> 32) as u32;
            h.wave.vgpr[2][l] = b[l] as u32;
            h.wave.vgpr[3][l] = (b[l] >> 32) as u32;
        }
        h.wave.mode = HIP;
        h.run(DDIV).unwrap();
        for l in 0..64 {
            let want = f64::from_bits(a[l]) / f64::from_bits(b[l]);
            let got = f64::from_bits(h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "round {round} lane {l}: {:#x} / {:#x} = {:#x}, want {:#x}",
                a[l],
                b[l],
                got.to_bits(),
                want.to_bits()
            );
        }
    }
}

/// `v_fma_f32 v3, -v0, |v1|, v2` (the negated source of every f32 division's FMAs, an
/// absolute value) under HIP's MODE is IEEE's fused multiply-add of the modified sources,
/// rounded once; lanes outside EXEC keep their value. Its host-arithmetic path takes
/// instructions with these modifiers.
#[test]
fn fma_with_negated_and_absolute_sources_is_the_fused_product() {
    const FMA_NEG_ABS: &[u32] = &[0xd1cb0203, 0x240a0300];
    let mut rng = Rng(0x5eed_f00d_0000_0001);
    let mut h = Harness::new();
    for round in 0..500 {
        let [a, b, c]: [[u32; 64]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| f32_operand(&mut rng)));
        let exec = if round % 2 == 0 { u64::MAX } else { rng.next() };
        let old: [u32; 64] = std::array::from_fn(|l| 0x1234_0000 + l as u32);
        (h.wave.vgpr[0], h.wave.vgpr[1], h.wave.vgpr[2], h.wave.vgpr[3]) = (a, b, c, old);
        h.wave.mode = HIP;
        h.wave.exec = exec;
        h.run(FMA_NEG_ABS).unwrap();
        for l in 0..64 {
            let got = h.wave.vgpr[3][l];
            if exec >> l & 1 == 0 {
                assert_eq!(got, old[l], "round {round} lane {l}: outside EXEC");
                continue;
            }
            let (x, y, z) = (-f32::from_bits(a[l]), f32::from_bits(b[l]).abs(), f32::from_bits(c[l]));
            let want = x.mul_add(y, z);
            assert!(
                got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan()),
                "round {round} lane {l}: fma(-{:#x}, |{:#x}|, {:#x}) = {got:#x}, want {:#x}",
                a[l],
                b[l],
                c[l],
                want.to_bits()
            );
        }
    }
    // A NaN source keeps its payload, quieted, with the modifier's sign (-NaN from -v0).
    h.wave.vgpr[0] = [0x7f80_0001; 64];
    h.wave.vgpr[1] = [0x3f80_0000; 64];
    h.wave.vgpr[2] = [0x3f80_0000; 64];
    h.wave.exec = u64::MAX;
    h.run(FMA_NEG_ABS).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 0xffc0_0001);
}

/// `v_div_fmas_f32 v3, v0, v1, v2`: the fused multiply-add where a lane's VCC bit is clear;
/// where it is set, the sum scaled by 2^64 when v2's exponent is above 127's (|v2| ≥ 2),
/// else by 2^-64 (the ISA's scale that undoes `v_div_scale`'s), rounded once.
#[test]
fn div_fmas_is_fma_without_vcc_and_scales_with_it() {
    const DIV_FMAS: &[u32] = &[0xd1e20003, 0x040a0300];
    let mut rng = Rng(0x5eed_f00d_0000_0002);
    let mut h = Harness::new();
    for round in 0..500 {
        let [a, b, c]: [[u32; 64]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| f32_operand(&mut rng)));
        let vcc = if round % 3 == 0 { 0 } else { rng.next() };
        (h.wave.vgpr[0], h.wave.vgpr[1], h.wave.vgpr[2]) = (a, b, c);
        h.wave.mode = HIP;
        h.wave.exec = u64::MAX;
        h.wave.vcc = vcc;
        h.run(DIV_FMAS).unwrap();
        for l in 0..64 {
            let (x, y, z) = (f32::from_bits(a[l]), f32::from_bits(b[l]), f32::from_bits(c[l]));
            let got = h.wave.vgpr[3][l];
            if vcc >> l & 1 != 0 {
                continue; // (scaled lanes: exact values below)
            }
            let want = x.mul_add(y, z);
            assert!(
                got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan()),
                "round {round} lane {l}: fmas({:#x}, {:#x}, {:#x}) = {got:#x}, want {:#x}",
                a[l],
                b[l],
                c[l],
                want.to_bits()
            );
        }
    }
    // Scaled lanes, exact values: 3 * 5 + 4 = 19 times 2^64 (|v2| ≥ 2), 0.5 * 0.5 + 1 = 1.25
    // times 2^-64 (|v2| < 2); VCC only on lanes 1 and 2.
    h.wave.vgpr[0] = [3.0f32.to_bits(), 3.0f32.to_bits(), 0.5f32.to_bits(), 0.5f32.to_bits()]
        .into_iter()
        .cycle()
        .take(64)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    h.wave.vgpr[1] = std::array::from_fn(|l| if l % 4 < 2 { 5.0f32 } else { 0.5 }.to_bits());
    h.wave.vgpr[2] = std::array::from_fn(|l| if l % 4 < 2 { 4.0f32 } else { 1.0 }.to_bits());
    h.wave.vcc = 0b0110;
    h.run(DIV_FMAS).unwrap();
    let got: Vec<f32> = h.wave.vgpr[3][..4].iter().map(|b| f32::from_bits(*b)).collect();
    assert_eq!(got, [19.0, 19.0 * 2f32.powi(64), 1.25 * 2f32.powi(-64), 1.25]);
    // NaN inputs, with and without VCC: the first NaN source, quieted, as `v_fma_f32` gives
    // it, whichever sources are NaNs (lane k: source i a NaN where bit i of k is set,
    // signalling in source 0 and 2, quiet in 1, each with its own payload); the same whether
    // the lane is scaled.
    let nans = [0x7f80_0011u32, 0xffc0_0022, 0x7fa0_0033];
    let quiet = nans.map(|n| n | 0x0040_0000);
    for vcc in [0, u64::MAX] {
        for i in 0..3 {
            h.wave.vgpr[i] = std::array::from_fn(|l| if l >> i & 1 != 0 { nans[i] } else { 2.0f32.to_bits() });
        }
        h.wave.vcc = vcc;
        h.run(DIV_FMAS).unwrap();
        for l in 1..8 {
            let first = (0..3).find(|i| l >> i & 1 != 0).unwrap();
            assert_eq!(h.wave.vgpr[3][l], quiet[first], "lane {l}, VCC {vcc:#x}");
        }
    }
}

/// `v_mul_f64 v[4:5], |v[0:1]|, -v[2:3]` under HIP's MODE, interpreted and translated: the
/// interpreter's f64 host-arithmetic path reads its sources raw, so these modifiers must keep
/// it on the general driver (a wrong sign otherwise; found by the translator's differential
/// test when the f32 fast paths began to take abs and neg).
#[test]
fn f64_multiply_applies_abs_and_neg() {
    for engine in [Engine::Interp, Engine::Jit] {
        f64_multiply_applies_abs_and_neg_on(engine);
    }
}

fn f64_multiply_applies_abs_and_neg_on(engine: Engine) {
    const MUL_ABS_NEG: &[u32] = &[0xd2810104, 0x40020500];
    let mut h = Harness::new();
    h.set_engine(engine);
    let (a, b) = (1.5f64, 0.5f64);
    for l in 0..64 {
        h.wave.vgpr[0][l] = a.to_bits() as u32;
        h.wave.vgpr[1][l] = (a.to_bits() >> 32) as u32;
        h.wave.vgpr[2][l] = b.to_bits() as u32;
        h.wave.vgpr[3][l] = (b.to_bits() >> 32) as u32;
    }
    h.wave.mode = HIP;
    h.wave.exec = u64::MAX;
    h.run(MUL_ABS_NEG).unwrap();
    let got = f64::from_bits(h.wave.vgpr[4][7] as u64 | (h.wave.vgpr[5][7] as u64) << 32);
    assert_eq!(got, -0.75, "|1.5| * -0.5 ({engine:?})");
}

/// Zero numerators and denominators (whole waves of them in padded data: ggml's `127 / amax`
/// of an all-zero block) through LLVM's f32 sequence, with f32 denormals kept (HIP) and
/// flushed: IEEE's signed zeros, signed infinities and NaNs.
#[test]
fn f32_division_by_and_of_zero_gives_ieee_specials() {
    let f = |x: f32| x.to_bits();
    let cases: [(f32, f32); 12] = [
        (0.0, 127.0),
        (-0.0, 127.0),
        (0.0, -3.5),
        (127.0, 0.0),
        (127.0, -0.0),
        (-2.0, 0.0),
        (f32::INFINITY, 0.0),
        (f32::NEG_INFINITY, -0.0),
        (0.0, f32::INFINITY),
        (0.0, 0.0),
        (f32::NAN, 0.0),
        (0.0, f32::NAN),
    ];
    for mode in [HIP, HIP & !0x30] {
        let mut h = Harness::new();
        h.wave.mode = mode;
        h.wave.vgpr[0] = std::array::from_fn(|l| f(cases[l % cases.len()].0));
        h.wave.vgpr[1] = std::array::from_fn(|l| f(cases[l % cases.len()].1));
        h.run(FDIV).unwrap();
        for l in 0..64 {
            let (n, d) = cases[l % cases.len()];
            let (got, want) = (f32::from_bits(h.wave.vgpr[2][l]), n / d);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "mode {mode:#x}: {n} / {d} = {got}, want {want}"
            );
        }
    }
}
