//! f32/f64 arithmetic VALU ops against host IEEE arithmetic (the CPU is the
//! independent reference) and the MI200 ISA's special-value rules.
//! Encodings assembled with `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
#![allow(clippy::needless_range_loop)]

use sim::gpu::exec::Lanes;
use sim::testing::Harness;

mod rng_support;
use rng_support::Rng;

/// `v_add_f32 v2, v0, v1`
const ADD_F32: &[u32] = &[0x02040300];
/// `v_add_f32_e64 v2, -v0, |v1| clamp`
const ADD_F32_E64_MODS: &[u32] = &[0xd1018202, 0x20020300];
/// `v_add_f32_e64 v2, v0, v1 mul:2`
const ADD_F32_MUL2: &[u32] = &[0xd1010002, 0x08020300];
/// `v_add_f32_dpp v2, v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf`
const ADD_F32_DPP: &[u32] = &[0x020402fa, 0xff00b100];
/// `v_sub_f32 v2, v0, v1`
const SUB_F32: &[u32] = &[0x04040300];
/// `v_subrev_f32 v2, v0, v1`
const SUBREV_F32: &[u32] = &[0x06040300];
/// `v_mul_f32 v2, v0, v1`
const MUL_F32: &[u32] = &[0x0a040300];
/// `v_mul_legacy_f32 v2, v0, v1`
const MUL_LEGACY_F32: &[u32] = &[0xd2a10002, 0x00020300];
/// `v_fma_f32 v3, v0, v1, v2`
const FMA_F32: &[u32] = &[0xd1cb0003, 0x040a0300];
/// `v_fma_f32 v3, v0, -v1, |v2|`
const FMA_F32_MODS: &[u32] = &[0xd1cb0403, 0x440a0300];
/// `v_fmac_f32 v2, v0, v1`
const FMAC_F32: &[u32] = &[0x76040300];
/// `v_mac_f32 v2, v0, v1`
const MAC_F32: &[u32] = &[0x2c040300];
/// `v_mad_f32 v3, v0, v1, v2`
const MAD_F32: &[u32] = &[0xd1c10003, 0x040a0300];
/// `v_madmk_f32 v3, v0, 0x40400000, v1`
const MADMK_F32: &[u32] = &[0x2e060300, 0x40400000];
/// `v_madak_f32 v3, v0, v1, 0x40400000`
const MADAK_F32: &[u32] = &[0x30060300, 0x40400000];
/// `v_min_f32 v2, v0, v1`
const MIN_F32: &[u32] = &[0x14040300];
/// `v_max_f32 v2, v0, v1`
const MAX_F32: &[u32] = &[0x16040300];
/// `v_max3_f32 v3, v0, v1, v2`
const MAX3_F32: &[u32] = &[0xd1d30003, 0x040a0300];
/// `v_med3_f32 v3, v0, v1, v2`
const MED3_F32: &[u32] = &[0xd1d60003, 0x040a0300];
/// `v_ldexp_f32 v2, v0, v1`
const LDEXP_F32: &[u32] = &[0xd2880002, 0x00020300];
/// `v_frexp_mant_f32_e64 v2, v0`
const FREXP_MANT_F32: &[u32] = &[0xd1740002, 0x00000100];
/// `v_frexp_exp_i32_f32_e64 v2, v0`
const FREXP_EXP_F32: &[u32] = &[0xd1730002, 0x00000100];
/// `v_fract_f32 v2, v0`
const FRACT_F32: &[u32] = &[0x7e043700];
/// `v_trunc_f32 v2, v0`
const TRUNC_F32: &[u32] = &[0x7e043900];
/// `v_rndne_f32 v2, v0`
const RNDNE_F32: &[u32] = &[0x7e043d00];
/// `v_floor_f32 v2, v0`
const FLOOR_F32: &[u32] = &[0x7e043f00];
/// `v_ceil_f32 v2, v0`
const CEIL_F32: &[u32] = &[0x7e043b00];
/// `v_add_f64 v[4:5], v[0:1], v[2:3]`
const ADD_F64: &[u32] = &[0xd2800004, 0x00020500];
/// `v_mul_f64 v[4:5], v[0:1], v[2:3]`
const MUL_F64: &[u32] = &[0xd2810004, 0x00020500];
/// `v_fma_f64 v[6:7], v[0:1], v[2:3], v[4:5]`
const FMA_F64: &[u32] = &[0xd1cc0006, 0x04120500];
/// `v_fmac_f64 v[4:5], v[0:1], v[2:3]`
const FMAC_F64: &[u32] = &[0x08080500];
/// `v_max_f64 v[4:5], v[0:1], v[2:3]`
const MAX_F64: &[u32] = &[0xd2830004, 0x00020500];
/// `v_min_f64 v[4:5], v[0:1], v[2:3]`
const MIN_F64: &[u32] = &[0xd2820004, 0x00020500];
/// `v_ldexp_f64 v[4:5], v[0:1], v2`
const LDEXP_F64: &[u32] = &[0xd2840004, 0x00020500];
/// `v_frexp_mant_f64 v[4:5], v[0:1]`
const FREXP_MANT_F64: &[u32] = &[0x7e086300];
/// `v_frexp_exp_i32_f64 v2, v[0:1]`
const FREXP_EXP_F64: &[u32] = &[0x7e046100];
/// `v_fract_f64 v[4:5], v[0:1]`
const FRACT_F64: &[u32] = &[0x7e086500];
/// `v_floor_f64 v[4:5], v[0:1]`
const FLOOR_F64: &[u32] = &[0x7e083500];
/// `v_rndne_f64 v[4:5], v[0:1]`
const RNDNE_F64: &[u32] = &[0x7e083300];

/// MODE: round to nearest even, all denormals kept, IEEE on (HIP's default).
const HIP: u32 = 0x2f0;
/// MODE: all denormals flushed, IEEE on.
const FLUSH: u32 = 0x200;

/// A deterministic source of test operands: specials first, then random
/// bit patterns and random "ordinary" values.
impl Rng {
    fn f32_bits(&mut self) -> u32 {
        const SPECIAL: [u32; 16] = [
            0,
            0x8000_0000,
            1,
            0x807f_ffff,
            0x0080_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0001,
            0x3eaa_aaab,
            0x4b00_0001,
            0x3f00_0000,
        ];
        let r = self.next();
        match r % 4 {
            0 => SPECIAL[(r >> 8) as usize % 16],
            1 => (r >> 16) as u32,
            _ => {
                // Exponents near 1.0 so that sums and products interact.
                let e = 100 + (r >> 40) % 56;
                ((r >> 8) as u32 & 0x807f_ffff) | (e as u32) << 23
            }
        }
    }
    fn f64_bits(&mut self) -> u64 {
        let r = self.next();
        match r % 4 {
            0 => [
                0,
                1 << 63,
                1,
                0x000f_ffff_ffff_ffff,
                0x3ff0_0000_0000_0000,
                0x7ff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x7ff0_0000_0000_0001,
                0x7fef_ffff_ffff_ffff,
            ][(r >> 8) as usize % 9],
            1 => self.next(),
            _ => (self.next() & 0x800f_ffff_ffff_ffff) | (1000 + (r >> 20) % 48) << 52,
        }
    }
}

fn lanes(f: impl FnMut(usize) -> u32) -> Lanes {
    std::array::from_fn(f)
}

fn set64(h: &mut Harness, reg: usize, v: &[u64; 64]) {
    for l in 0..64 {
        h.wave.vgpr[reg][l] = v[l] as u32;
        h.wave.vgpr[reg + 1][l] = (v[l] >> 32) as u32;
    }
}

fn get64(h: &Harness, reg: usize) -> [u64; 64] {
    std::array::from_fn(|l| h.wave.vgpr[reg][l] as u64 | (h.wave.vgpr[reg + 1][l] as u64) << 32)
}

fn flush32(b: u32) -> u32 {
    if b & 0x7f80_0000 == 0 {
        b & 0x8000_0000
    } else {
        b
    }
}

/// Bit equality, except that any two NaNs are equal.
fn same32(got: u32, want: u32) -> bool {
    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan())
}

fn same64(got: u64, want: u64) -> bool {
    got == want || (f64::from_bits(got).is_nan() && f64::from_bits(want).is_nan())
}

/// Runs `words` on `iters` waves of random f32 operands in v0..v2 and
/// compares `out_reg` with `want(a, b, c)` for every lane.
fn check32(words: &[u32], mode: u32, out_reg: usize, iters: usize, want: impl Fn(u32, u32, u32) -> u32) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ words[0] as u64);
    let mut h = Harness::new();
    for _ in 0..iters {
        let (a, b, c) = (lanes(|_| rng.f32_bits()), lanes(|_| rng.f32_bits()), lanes(|_| rng.f32_bits()));
        h.wave.vgpr[0] = a;
        h.wave.vgpr[1] = b;
        h.wave.vgpr[2] = c;
        h.wave.mode = mode;
        h.run(words).unwrap();
        for l in 0..64 {
            let (got, w) = (h.wave.vgpr[out_reg][l], want(a[l], b[l], c[l]));
            assert!(
                same32(got, w),
                "{words:x?} lane {l}: {:#x} {:#x} {:#x} -> {got:#x}, want {w:#x}",
                a[l],
                b[l],
                c[l]
            );
        }
    }
}

fn f(b: u32) -> f32 {
    f32::from_bits(b)
}

#[test]
fn add_sub_mul_match_host_arithmetic() {
    check32(ADD_F32, HIP, 2, 200, |a, b, _| (f(a) + f(b)).to_bits());
    check32(SUB_F32, HIP, 2, 50, |a, b, _| (f(a) - f(b)).to_bits());
    check32(SUBREV_F32, HIP, 2, 50, |a, b, _| (f(b) - f(a)).to_bits());
    check32(MUL_F32, HIP, 2, 200, |a, b, _| (f(a) * f(b)).to_bits());
    // Flushing mode: denormal inputs read as zero, denormal results become zero.
    check32(ADD_F32, FLUSH, 2, 100, |a, b, _| flush32((f(flush32(a)) + f(flush32(b))).to_bits()));
    check32(MUL_F32, FLUSH, 2, 100, |a, b, _| flush32((f(flush32(a)) * f(flush32(b))).to_bits()));
}

#[test]
fn fma_is_fused_and_rounded_once() {
    check32(FMA_F32, HIP, 3, 300, |a, b, c| f(a).mul_add(f(b), f(c)).to_bits());
    check32(FMA_F32_MODS, HIP, 3, 50, |a, b, c| f(a).mul_add(-f(b), f(c).abs()).to_bits());
    check32(FMA_F32, FLUSH, 3, 100, |a, b, c| flush32(f(flush32(a)).mul_add(f(flush32(b)), f(flush32(c))).to_bits()));
    // The classic double-rounding trap: a*b+c lands just off an f32 tie.
    let mut h = Harness::new();
    h.wave.mode = HIP;
    h.wave.vgpr[0] = [(1.0f32 + 2f32.powi(-23)).to_bits(); 64];
    h.wave.vgpr[1] = [2f32.powi(-24).to_bits(); 64];
    h.wave.vgpr[2] = [1.0f32.to_bits(); 64];
    h.run(FMA_F32).unwrap();
    assert_eq!(h.wave.vgpr[3][0], (1.0f32 + 2f32.powi(-23)).to_bits());
    check32(FMAC_F32, HIP, 2, 50, |a, b, c| f(a).mul_add(f(b), f(c)).to_bits());
}

#[test]
fn mad_rounds_the_product_and_flushes() {
    let mad = |a: u32, b: u32, c: u32| {
        flush32((f(flush32((f(flush32(a)) * f(flush32(b))).to_bits())) + f(flush32(c))).to_bits())
    };
    check32(MAD_F32, HIP, 3, 200, mad);
    check32(MAC_F32, HIP, 2, 50, mad);
    check32(MADMK_F32, HIP, 3, 20, |a, b, _| mad(a, 3f32.to_bits(), b));
    check32(MADAK_F32, HIP, 3, 20, |a, b, _| mad(a, b, 3f32.to_bits()));
}

#[test]
fn mul_legacy_zero_wins() {
    check32(
        MUL_LEGACY_F32,
        HIP,
        2,
        100,
        |a, b, _| {
            if f(a) == 0.0 || f(b) == 0.0 {
                0
            } else {
                (f(a) * f(b)).to_bits()
            }
        },
    );
}

/// The ISA's IEEE-mode min/max: sNaN operands quieted and returned, a qNaN
/// operand ignored, -0 < +0.
fn ieee_max(a: u32, b: u32, max: bool) -> u32 {
    let snan = |x: u32| f(x).is_nan() && x & 0x0040_0000 == 0;
    if snan(a) {
        return a | 0x0040_0000;
    }
    if snan(b) {
        return b | 0x0040_0000;
    }
    if f(a).is_nan() {
        return b;
    }
    if f(b).is_nan() {
        return a;
    }
    let key = |x: u32| if x >> 31 != 0 { -((x & 0x7fff_ffff) as i64) - 1 } else { x as i64 };
    if (key(a) < key(b)) == max {
        b
    } else {
        a
    }
}

#[test]
fn min_max_med3() {
    check32(MAX_F32, HIP, 2, 200, |a, b, _| ieee_max(a, b, true));
    check32(MIN_F32, HIP, 2, 200, |a, b, _| ieee_max(a, b, false));
    check32(MAX3_F32, HIP, 3, 100, |a, b, c| ieee_max(ieee_max(a, b, true), c, true));
    check32(MAX_F32, FLUSH, 2, 50, |a, b, _| flush32(ieee_max(flush32(a), flush32(b), true)));
    check32(MED3_F32, HIP, 3, 100, |a, b, c| {
        if [a, b, c].iter().any(|&x| f(x).is_nan()) {
            return ieee_max(ieee_max(a, b, false), c, false);
        }
        // Order with -0 < +0 (the ISA compares signed zeros that way).
        let key = |x: u32| if x >> 31 != 0 { -((x & 0x7fff_ffff) as i64) - 1 } else { x as i64 };
        let mut v = [a, b, c];
        v.sort_by_key(|&x| key(x));
        v[1]
    });
    // Canonicalize: v_max_f32 v, v quiets an sNaN, flushes a denormal.
    let mut h = Harness::new();
    h.wave.mode = FLUSH;
    h.wave.vgpr[0][0] = 0x7f80_0001;
    h.wave.vgpr[0][1] = 0x8000_0001;
    h.wave.vgpr[1] = h.wave.vgpr[0];
    h.run(MAX_F32).unwrap();
    assert_eq!(&h.wave.vgpr[2][..2], &[0x7fc0_0001, 0x8000_0000]);
}

#[test]
fn modifiers_dpp_and_exec_holes() {
    check32(ADD_F32_E64_MODS, HIP, 2, 50, |a, b, _| {
        let r = -f(a) + f(b).abs();
        (if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }).to_bits()
    });
    check32(ADD_F32_MUL2, HIP, 2, 50, |a, b, _| ((f(a) + f(b)) * 2.0).to_bits());
    let mut h = Harness::new();
    h.wave.mode = HIP;
    h.wave.vgpr[0] = lanes(|l| (l as f32).to_bits());
    h.wave.vgpr[1] = [0.5f32.to_bits(); 64];
    h.wave.vgpr[2] = [0xdead; 64];
    h.wave.exec = 0xffff_0000_ffff_fff5;
    h.run(ADD_F32_DPP).unwrap();
    for l in 0..64 {
        let want = if h.wave.exec >> l & 1 != 0 { (((l ^ 1) as f32) + 0.5).to_bits() } else { 0xdead };
        // quad_perm:[1,0,3,2] reads the neighbour; lanes whose source is inactive keep their value.
        let src_active = h.wave.exec >> (l ^ 1) & 1 != 0;
        if src_active {
            assert_eq!(h.wave.vgpr[2][l], want, "lane {l}");
        } else {
            assert_eq!(h.wave.vgpr[2][l], 0xdead, "lane {l}");
        }
    }
    h.wave.exec = 0x0000_ffff_0000_000f;
    h.wave.vgpr[2] = [0xdead; 64];
    h.run(ADD_F32).unwrap();
    assert_eq!(h.wave.vgpr[2][3], (3.5f32).to_bits());
    assert_eq!(h.wave.vgpr[2][4], 0xdead);
    assert_eq!(h.wave.vgpr[2][63], 0xdead);
}

#[test]
fn directed_rounding_modes_bracket_the_exact_value() {
    // Products of f32 are exact in f64: the rounded result must bracket it.
    for (mode, name) in [(0x2f1u32, "up"), (0x2f2, "down"), (0x2f3, "zero")] {
        let mut rng = Rng(77);
        let mut h = Harness::new();
        for _ in 0..50 {
            let a = lanes(|_| rng.f32_bits());
            let b = lanes(|_| rng.f32_bits());
            h.wave.vgpr[0] = a;
            h.wave.vgpr[1] = b;
            h.wave.mode = mode;
            h.run(MUL_F32).unwrap();
            for l in 0..64 {
                let exact = f(a[l]) as f64 * f(b[l]) as f64;
                let r = f(h.wave.vgpr[2][l]) as f64;
                if exact.is_nan() || exact.is_infinite() {
                    continue;
                }
                let ok = match name {
                    "up" => r >= exact && (f(h.wave.vgpr[2][l]).next_down() as f64) < exact,
                    "down" => r <= exact && (f(h.wave.vgpr[2][l]).next_up() as f64) > exact,
                    _ => {
                        r.abs() <= exact.abs() && {
                            let away = if exact >= 0.0 {
                                f(h.wave.vgpr[2][l]).next_up()
                            } else {
                                f(h.wave.vgpr[2][l]).next_down()
                            };
                            (away as f64).abs() > exact.abs()
                        }
                    }
                };
                assert!(ok, "{name}: {:e} * {:e} = {exact:e} -> {r:e}", f(a[l]), f(b[l]));
            }
        }
    }
}

#[test]
fn ldexp_frexp_fract_and_roundings() {
    let mut h = Harness::new();
    h.wave.mode = HIP;
    let cases: [(f32, i32, f32); 6] = [
        (1.5, 3, 12.0),
        (1.0, -149, 1e-45),
        (1.0, -150, 0.0),
        (1.5, -149, 2.0 * 1e-45), // 1.5 * 2^-149 ties to even (2^-148)
        (1.0, 128, f32::INFINITY),
        (-3.0, i32::MIN, -0.0),
    ];
    for (l, (x, n, _)) in cases.iter().enumerate() {
        h.wave.vgpr[0][l] = x.to_bits();
        h.wave.vgpr[1][l] = *n as u32;
    }
    h.run(LDEXP_F32).unwrap();
    for (l, (_, _, want)) in cases.iter().enumerate() {
        assert_eq!(h.wave.vgpr[2][l], want.to_bits(), "case {l}");
    }
    let xs = [6.0f32, -0.75, 0.0, f32::INFINITY, f32::NAN, f32::from_bits(1), -1.0e-3, 2.5];
    for (l, x) in xs.iter().enumerate() {
        h.wave.vgpr[0][l] = x.to_bits();
    }
    h.run(FREXP_MANT_F32).unwrap();
    let mant: Vec<f32> = (0..8).map(|l| f(h.wave.vgpr[2][l])).collect();
    assert_eq!(&mant[..4], &[0.75, -0.75, 0.0, f32::INFINITY]);
    assert!(mant[4].is_nan());
    assert_eq!(mant[5], 0.5);
    h.run(FREXP_EXP_F32).unwrap();
    assert_eq!(&h.wave.vgpr[2][..6], &[3, 0, 0, 0, 0, (-148i32) as u32]);
    h.run(FRACT_F32).unwrap();
    assert_eq!(f(h.wave.vgpr[2][0]), 0.0);
    assert_eq!(f(h.wave.vgpr[2][1]), 0.25);
    assert_eq!(h.wave.vgpr[2][6], (1.0f32 + -1.0e-3f32).to_bits(), "x + 1, rounded once");
    assert!(f(h.wave.vgpr[2][3]).is_nan(), "fract(inf) is NaN");
    h.wave.vgpr[0][0] = (-1.0e-10f32).to_bits();
    h.run(FRACT_F32).unwrap();
    assert_eq!(h.wave.vgpr[2][0], 0x3f7f_ffff, "fract stays below 1.0");
    check32(TRUNC_F32, HIP, 2, 30, |a, _, _| f(a).trunc().to_bits());
    check32(FLOOR_F32, HIP, 2, 30, |a, _, _| f(a).floor().to_bits());
    check32(CEIL_F32, HIP, 2, 30, |a, _, _| f(a).ceil().to_bits());
    check32(RNDNE_F32, HIP, 2, 30, |a, _, _| f(a).round_ties_even().to_bits());
}

fn check64(words: &[u32], mode: u32, out_reg: usize, iters: usize, want: impl Fn(u64, u64, u64) -> u64) {
    let mut rng = Rng(0x1234_5678 ^ words[0] as u64);
    let mut h = Harness::new();
    for _ in 0..iters {
        let a: [u64; 64] = std::array::from_fn(|_| rng.f64_bits());
        let b: [u64; 64] = std::array::from_fn(|_| rng.f64_bits());
        let c: [u64; 64] = std::array::from_fn(|_| rng.f64_bits());
        set64(&mut h, 0, &a);
        set64(&mut h, 2, &b);
        set64(&mut h, 4, &c);
        h.wave.mode = mode;
        h.run(words).unwrap();
        let got = get64(&h, out_reg);
        for l in 0..64 {
            let w = want(a[l], b[l], c[l]);
            assert!(
                same64(got[l], w),
                "{words:x?} lane {l}: {:#x} {:#x} {:#x} -> {:#x}, want {w:#x}",
                a[l],
                b[l],
                c[l],
                got[l]
            );
        }
    }
}

fn d(b: u64) -> f64 {
    f64::from_bits(b)
}

#[test]
fn f64_arithmetic() {
    check64(ADD_F64, HIP, 4, 100, |a, b, _| (d(a) + d(b)).to_bits());
    check64(MUL_F64, HIP, 4, 100, |a, b, _| (d(a) * d(b)).to_bits());
    check64(FMA_F64, HIP, 6, 100, |a, b, c| d(a).mul_add(d(b), d(c)).to_bits());
    check64(FMAC_F64, HIP, 4, 50, |a, b, c| d(a).mul_add(d(b), d(c)).to_bits());
    let fl = |x: u64| if x & 0x7ff0_0000_0000_0000 == 0 { x & 1 << 63 } else { x };
    check64(ADD_F64, FLUSH, 4, 50, |a, b, _| fl((d(fl(a)) + d(fl(b))).to_bits()));
    // Directed: toward zero never rounds up in magnitude.
    check64(ADD_F64, 0x2fc, 4, 50, |a, b, _| {
        let s = d(a) + d(b);
        let (x, y) = (d(a), d(b));
        let bb = s - x;
        let err = (x - (s - bb)) + (y - bb);
        if !s.is_finite() {
            return if s.is_infinite() && x.is_finite() && y.is_finite() {
                f64::MAX.copysign(s).to_bits()
            } else {
                s.to_bits()
            };
        }
        if err != 0.0 && (err > 0.0) != (s > 0.0) {
            (if s > 0.0 { s.next_down() } else { s.next_up() }).to_bits()
        } else {
            s.to_bits()
        }
    });
    let max64 = |a: u64, b: u64, max: bool| {
        let snan = |x: u64| d(x).is_nan() && x & (1 << 51) == 0;
        if snan(a) {
            return a | 1 << 51;
        }
        if snan(b) {
            return b | 1 << 51;
        }
        if d(a).is_nan() {
            return b;
        }
        if d(b).is_nan() {
            return a;
        }
        let key = |x: u64| if x >> 63 != 0 { -((x & !(1 << 63)) as i128) - 1 } else { x as i128 };
        if (key(a) < key(b)) == max {
            b
        } else {
            a
        }
    };
    check64(MAX_F64, HIP, 4, 100, |a, b, _| max64(a, b, true));
    check64(MIN_F64, HIP, 4, 100, |a, b, _| max64(a, b, false));
    check64(FLOOR_F64, HIP, 4, 30, |a, _, _| if d(a).is_nan() { a | 1 << 51 } else { d(a).floor().to_bits() });
    check64(
        RNDNE_F64,
        HIP,
        4,
        30,
        |a, _, _| if d(a).is_nan() { a | 1 << 51 } else { d(a).round_ties_even().to_bits() },
    );
}

#[test]
fn f64_ldexp_frexp_fract() {
    let mut h = Harness::new();
    h.wave.mode = HIP;
    let cases: [(f64, i32, f64); 5] = [
        (1.5, 3, 12.0),
        (1.0, -1074, f64::from_bits(1)),
        (3.0, -1075, f64::from_bits(2)), // 1.5 * 2^-1074 ties to even
        (1.0, 1024, f64::INFINITY),
        (f64::MIN_POSITIVE, 1000, f64::MIN_POSITIVE * 2f64.powi(1000)),
    ];
    let mut a = [0u64; 64];
    for (l, (x, n, _)) in cases.iter().enumerate() {
        a[l] = x.to_bits();
        h.wave.vgpr[2][l] = *n as u32;
    }
    set64(&mut h, 0, &a);
    h.run(LDEXP_F64).unwrap();
    let got = get64(&h, 4);
    for (l, (_, _, want)) in cases.iter().enumerate() {
        assert_eq!(got[l], want.to_bits(), "case {l}");
    }
    let xs = [6.0f64, -0.75, 0.0, f64::INFINITY, f64::from_bits(3), -2.5];
    let mut a = [0u64; 64];
    for (l, x) in xs.iter().enumerate() {
        a[l] = x.to_bits();
    }
    set64(&mut h, 0, &a);
    h.run(FREXP_MANT_F64).unwrap();
    let m = get64(&h, 4);
    assert_eq!([d(m[0]), d(m[1]), d(m[2]), d(m[3]), d(m[4]), d(m[5])], [0.75, -0.75, 0.0, f64::INFINITY, 0.75, -0.625]);
    h.run(FREXP_EXP_F64).unwrap();
    assert_eq!(&h.wave.vgpr[2][..6], &[3, 0, 0, 0, (-1072i32) as u32, 2]);
    h.run(FRACT_F64).unwrap();
    let fr = get64(&h, 4);
    assert_eq!([d(fr[0]), d(fr[1]), d(fr[5])], [0.0, 0.25, 0.5]);
    assert!(d(fr[3]).is_nan());
}

/// `v_trig_preop_f64 v[4:5], v[0:1], v2`
const TRIG_PREOP: &[u32] = &[0xd2920004, 0x00020500];

#[test]
fn trig_preop_slices_two_over_pi() {
    // The first 128 fractional bits of 2/π (the published constant).
    const TWO_OVER_PI: u128 = 0xa2f9_836e_4e44_1529_fc27_57d1_f534_ddc0;
    // Bits [start, start + 53) as an integer.
    let slice = |start: u32| ((TWO_OVER_PI << start) >> (128 - 53)) as u64;
    let mut h = Harness::new();
    h.wave.mode = HIP;
    // Lane 0: S0 = 1.0, segment 0; lane 1: segment 1; lane 2: S0 = 2^60
    // (exponent 1083, 6 beyond 1077), segment 1.
    let s0 = [1.0f64, 1.0, 2f64.powi(60)];
    let seg = [0u32, 1, 1];
    let mut a = [0u64; 64];
    for l in 0..3 {
        a[l] = s0[l].to_bits();
        h.wave.vgpr[2][l] = seg[l];
    }
    set64(&mut h, 0, &a);
    h.run(TRIG_PREOP).unwrap();
    let got = get64(&h, 4);
    let want = |start: u32| slice(start) as f64 * 2f64.powi(-53 - start as i32);
    assert_eq!(d(got[0]), want(0));
    assert_eq!(d(got[1]), want(53));
    assert_eq!(d(got[2]), want(59));
}

/// `v_cubeid_f32 v3, v0, v1, v2`
const CUBEID: &[u32] = &[0xd1c40003, 0x040a0300];
/// `v_cubesc_f32 v3, v0, v1, v2`
const CUBESC: &[u32] = &[0xd1c50003, 0x040a0300];
/// `v_cubetc_f32 v3, v0, v1, v2`
const CUBETC: &[u32] = &[0xd1c60003, 0x040a0300];
/// `v_cubema_f32 v3, v0, v1, v2`
const CUBEMA: &[u32] = &[0xd1c70003, 0x040a0300];

#[test]
fn cube_map_coordinates() {
    // (x, y, z) -> (face, sc, tc, ma) per the ISA's major-axis tables.
    let cases: [([f32; 3], [f32; 4]); 6] = [
        ([0.5, 0.25, -2.0], [5.0, -0.5, -0.25, -4.0]),
        ([0.5, 0.25, 2.0], [4.0, 0.5, -0.25, 4.0]),
        ([0.5, -3.0, 1.0], [3.0, 0.5, -1.0, -6.0]),
        ([0.5, 3.0, 1.0], [2.0, 0.5, 1.0, 6.0]),
        ([-4.0, 0.25, 1.0], [1.0, 1.0, -0.25, -8.0]),
        ([4.0, 0.25, 1.0], [0.0, -1.0, -0.25, 8.0]),
    ];
    let mut h = Harness::new();
    h.wave.mode = HIP;
    for (l, (v, _)) in cases.iter().enumerate() {
        for r in 0..3 {
            h.wave.vgpr[r][l] = v[r].to_bits();
        }
    }
    for (k, words) in [CUBEID, CUBESC, CUBETC, CUBEMA].iter().enumerate() {
        h.run(words).unwrap();
        for (l, (_, want)) in cases.iter().enumerate() {
            assert_eq!(f(h.wave.vgpr[3][l]), want[k], "op {k} case {l}");
        }
    }
}

/// An f64 NaN result carries its first NaN input (in the order the op reads them), quieted,
/// whichever order the NaNs come in, on the host-arithmetic path (denormals kept: HIP's
/// MODE) and the exact one (f64 denormals flushed): host instructions alone return the NaN
/// their operand order favours, and the translator must give the same bits.
#[test]
fn f64_nan_results_carry_the_first_nan_input_quieted() {
    const ADD: [u32; 2] = [0xd280_0004, 0x0002_0500]; // v_add_f64 v[4:5], v[0:1], v[2:3]
    const MUL: [u32; 2] = [0xd281_0004, 0x0002_0500]; // v_mul_f64 v[4:5], v[0:1], v[2:3]
    const FMA: [u32; 2] = [0xd1cc_0006, 0x0412_0500]; // v_fma_f64 v[6:7], v[0:1], v[2:3], v[4:5]
    const FMAC: [u32; 1] = [0x0808_0500]; // v_fmac_f64_e32 v[4:5], v[0:1], v[2:3]
    let (snan, qnan, one): (u64, u64, u64) = (0x7ff0_0000_0000_1234, 0xfff8_0000_0000_5678, 1f64.to_bits());
    let quiet = |x: u64| x | 1 << 51;
    // (a, b, c, the result's first NaN) per lane.
    let cases = [
        (snan, qnan, one, quiet(snan)),
        (qnan, snan, one, qnan),
        (one, snan, qnan, quiet(snan)),
        (one, one, snan, quiet(snan)),
        (one, qnan, snan, qnan),
    ];
    for mode in [HIP, 0x2f0 & !0xc0] {
        for (words, inputs, dst) in [(&ADD[..], 2, 4), (&MUL[..], 2, 4), (&FMA[..], 3, 6), (&FMAC[..], 3, 4)] {
            let mut h = Harness::new();
            h.wave.mode = mode;
            for (l, &(a, b, c, _)) in cases.iter().enumerate() {
                for (r, v) in [(0, a), (2, b), (4, c)] {
                    h.wave.vgpr[r][l] = v as u32;
                    h.wave.vgpr[r + 1][l] = (v >> 32) as u32;
                }
            }
            h.run(words).unwrap();
            for (l, &(a, b, _, first)) in cases.iter().enumerate() {
                let nan = |x: u64| f64::from_bits(x).is_nan();
                // Two-input ops: c is no input; a lane without a NaN input is not checked.
                let want = match (inputs, nan(a), nan(b)) {
                    (3, ..) => first,
                    (_, true, _) => quiet(a),
                    (_, false, true) => quiet(b),
                    _ => continue,
                };
                let got = h.wave.vgpr[dst][l] as u64 | (h.wave.vgpr[dst + 1][l] as u64) << 32;
                assert_eq!(got, want, "{words:x?}, MODE {mode:#x}, lane {l}: {got:#018x}");
            }
        }
    }
}
