//! Transcendental ops and conversions against host references and the
//! MI200 ISA's special-value rules.
//! Encodings assembled with `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
#![allow(clippy::needless_range_loop)]

use sim::testing::Harness;

mod rng_support;
use rng_support::Rng;

/// `v_rcp_f32 v2, v0`
const RCP_F32: &[u32] = &[0x7e044500];
/// `v_rcp_iflag_f32 v2, v0`
const RCP_IFLAG_F32: &[u32] = &[0x7e044700];
/// `v_rsq_f32 v2, v0`
const RSQ_F32: &[u32] = &[0x7e044900];
/// `v_sqrt_f32 v2, v0`
const SQRT_F32: &[u32] = &[0x7e044f00];
/// `v_exp_f32 v2, v0`
const EXP_F32: &[u32] = &[0x7e044100];
/// `v_log_f32 v2, v0`
const LOG_F32: &[u32] = &[0x7e044300];
/// `v_sin_f32 v2, v0`
const SIN_F32: &[u32] = &[0x7e045300];
/// `v_cos_f32 v2, v0`
const COS_F32: &[u32] = &[0x7e045500];
/// `v_rcp_f64 v[4:5], v[0:1]`
const RCP_F64: &[u32] = &[0x7e084b00];
/// `v_rsq_f64 v[4:5], v[0:1]`
const RSQ_F64: &[u32] = &[0x7e084d00];
/// `v_sqrt_f64 v[4:5], v[0:1]`
const SQRT_F64: &[u32] = &[0x7e085100];
/// `v_sqrt_f16 v2, v0`
const SQRT_F16: &[u32] = &[0x7e047d00];
/// `v_cvt_f32_f16 v2, v0`
const CVT_F32_F16: &[u32] = &[0x7e041700];
/// `v_cvt_f32_f16_sdwa v2, v0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1`
const CVT_F32_F16_SDWA: &[u32] = &[0x7e0416f9, 0x00050600];
/// `v_cvt_f16_f32 v2, v0`
const CVT_F16_F32: &[u32] = &[0x7e041500];
/// `v_cvt_f32_f64 v2, v[0:1]`
const CVT_F32_F64: &[u32] = &[0x7e041f00];
/// `v_cvt_f64_f32 v[4:5], v0`
const CVT_F64_F32: &[u32] = &[0x7e082100];
/// `v_cvt_f32_i32 v2, v0`
const CVT_F32_I32: &[u32] = &[0x7e040b00];
/// `v_cvt_f32_u32 v2, v0`
const CVT_F32_U32: &[u32] = &[0x7e040d00];
/// `v_cvt_f32_u32_sdwa v2, v0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1`
const CVT_F32_U32_SDWA: &[u32] = &[0x7e040cf9, 0x00010600];
/// `v_cvt_f64_i32 v[4:5], v0`
const CVT_F64_I32: &[u32] = &[0x7e080900];
/// `v_cvt_f64_u32 v[4:5], v0`
const CVT_F64_U32: &[u32] = &[0x7e082d00];
/// `v_cvt_i32_f32 v2, v0`
const CVT_I32_F32: &[u32] = &[0x7e041100];
/// `v_cvt_u32_f32 v2, v0`
const CVT_U32_F32: &[u32] = &[0x7e040f00];
/// `v_cvt_i32_f64 v2, v[0:1]`
const CVT_I32_F64: &[u32] = &[0x7e040700];
/// `v_cvt_u32_f64 v2, v[0:1]`
const CVT_U32_F64: &[u32] = &[0x7e042b00];
/// `v_cvt_f32_ubyte0 v2, v0`
const CVT_F32_UBYTE0: &[u32] = &[0x7e042300];
/// `v_cvt_flr_i32_f32 v2, v0`
const CVT_FLR: &[u32] = &[0x7e041b00];
/// `v_cvt_rpi_i32_f32 v2, v0`
const CVT_RPI: &[u32] = &[0x7e041900];
/// `v_cvt_pkrtz_f16_f32 v2, v0, v1`
const CVT_PKRTZ: &[u32] = &[0xd2960002, 0x00020300];
/// `v_cvt_pk_u8_f32 v2, v0, 1, v1`
const CVT_PK_U8: &[u32] = &[0xd1dd0002, 0x04050300];
/// `v_pack_b32_f16 v2, v0, -v1 op_sel:[1,0]`
const PACK_B32_F16: &[u32] = &[0xd2a00802, 0x40020300];
/// `v_cvt_pknorm_i16_f32 v2, v0, v1`
const CVT_PKNORM_I16_F32: &[u32] = &[0xd2940002, 0x00020300];
/// `v_sat_pk_u8_i16 v2, v0`
const SAT_PK_U8_I16: &[u32] = &[0x7e049f00];
/// `v_cvt_pk_i16_i32 v2, v0, v1`
const CVT_PK_I16_I32: &[u32] = &[0xd2980002, 0x00020300];
/// `v_cvt_pk_u16_u32 v2, v0, v1`
const CVT_PK_U16_U32: &[u32] = &[0xd2970002, 0x00020300];
/// `v_cvt_off_f32_i4 v2, v0`
const CVT_OFF_F32_I4: &[u32] = &[0x7e041d00];

const HIP: u32 = 0x2f0;

fn f(b: u32) -> f32 {
    f32::from_bits(b)
}

/// Runs a one-source 32-bit op on `xs` (lane i gets xs[i % len]) and
/// returns v2.
fn run1(words: &[u32], xs: &[u32], b: &[u32]) -> [u32; 64] {
    let mut h = Harness::new();
    h.wave.mode = HIP;
    for l in 0..64 {
        h.wave.vgpr[0][l] = xs[l % xs.len()];
        h.wave.vgpr[1][l] = b[l % b.len()];
    }
    h.run(words).unwrap();
    h.wave.vgpr[2]
}

fn run64(words: &[u32], xs: &[u64]) -> Harness {
    let mut h = Harness::new();
    h.wave.mode = HIP;
    for l in 0..64 {
        let x = xs[l % xs.len()];
        h.wave.vgpr[0][l] = x as u32;
        h.wave.vgpr[1][l] = (x >> 32) as u32;
    }
    h.run(words).unwrap();
    h
}

fn random_f32(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u32).collect()
}

fn same(got: u32, want: u32) -> bool {
    got == want || (f(got).is_nan() && f(want).is_nan())
}

/// f32 results of a correctly rounded operation, with denormals flushed.
fn flushed(b: u32) -> u32 {
    if b & 0x7f80_0000 == 0 {
        b & 0x8000_0000
    } else {
        b
    }
}

#[test]
fn rcp_rsq_sqrt_f32_are_correctly_rounded_and_flush() {
    for seed in 1..40 {
        let xs = random_f32(64, seed);
        for (words, op) in [
            (RCP_F32, (|x: f32| 1.0 / x) as fn(f32) -> f32),
            (RCP_IFLAG_F32, |x| 1.0 / x),
            (SQRT_F32, f32::sqrt),
            (RSQ_F32, |x| (1.0 / (x as f64).sqrt()) as f32),
        ] {
            let got = run1(words, &xs, &[0]);
            for l in 0..64 {
                let want = flushed(op(f(flushed(xs[l]))).to_bits());
                assert!(same(got[l], want), "{words:x?} {:#x} -> {:#x}, want {want:#x}", xs[l], got[l]);
            }
        }
    }
    // ISA special values.
    let got = run1(SQRT_F32, &[0xff80_0000, 0x8000_0000, 0x7f80_0000, 0xbf80_0000], &[0]);
    assert_eq!(&got[..4], &[0xffc0_0000, 0x8000_0000, 0x7f80_0000, 0xffc0_0000]);
    let got = run1(RCP_F32, &[0, 0x8000_0000, 0x7f80_0000, 0x0000_0001], &[0]);
    assert_eq!(&got[..4], &[0x7f80_0000, 0xff80_0000, 0, 0x7f80_0000]);
    let got = run1(RSQ_F32, &[0, 0x8000_0000, 0x7f80_0000, 0x4080_0000], &[0]);
    assert_eq!(&got[..4], &[0x7f80_0000, 0xff80_0000, 0, 0x3f00_0000]);
}

#[test]
fn exp_log_sin_cos_f32() {
    let xs: Vec<u32> = [-150.0f32, -126.5, -1.0, 0.0, 0.5, 3.25, 127.9, 128.0].iter().map(|x| x.to_bits()).collect();
    let got = run1(EXP_F32, &xs, &[0]);
    for (l, &x) in xs.iter().enumerate() {
        let want = flushed(((f(x) as f64).exp2() as f32).to_bits());
        assert!(got[l].abs_diff(want) <= 1, "exp2({}) = {:#x}, want {want:#x}", f(x), got[l]);
    }
    let xs: Vec<u32> = [0.0f32, -1.0, 1.0, 2.0, 10.0, f32::INFINITY, 1e-40, 3e38].iter().map(|x| x.to_bits()).collect();
    let got = run1(LOG_F32, &xs, &[0]);
    assert_eq!(&got[..4], &[0xff80_0000, 0xffc0_0000, 0, 0x3f80_0000]);
    assert!(
        got[4].abs_diff(10f64.log2().to_bits() as u32) <= 1 || got[4].abs_diff((10f64.log2() as f32).to_bits()) <= 1
    );
    assert_eq!(got[5], 0x7f80_0000);
    assert_eq!(got[6], 0xff80_0000, "a denormal input is flushed");
    // sin/cos take revolutions: sin(0.25) = 1 exactly, cos(0.5) = -1.
    let xs: Vec<u32> =
        [0.25f32, -0.25, 0.5, 1.0, 0.125, 10.75, f32::INFINITY, 0.0].iter().map(|x| x.to_bits()).collect();
    let got = run1(SIN_F32, &xs, &[0]);
    assert_eq!(f(got[0]), 1.0);
    assert_eq!(f(got[1]), -1.0);
    assert_eq!(f(got[2]).abs(), 0.0);
    assert_eq!(f(got[3]).abs(), 0.0);
    assert!(got[4].abs_diff(std::f32::consts::FRAC_1_SQRT_2.to_bits()) <= 1);
    assert_eq!(f(got[5]), -1.0);
    assert!(f(got[6]).is_nan());
    let got = run1(COS_F32, &xs, &[0]);
    assert_eq!(f(got[0]), 0.0);
    assert_eq!(f(got[2]), -1.0);
    assert_eq!(f(got[7]), 1.0);
}

#[test]
fn f64_rcp_rsq_sqrt() {
    let mut r = Rng(99);
    let xs: Vec<u64> = (0..64).map(|_| r.next() >> 1).collect();
    let h = run64(RCP_F64, &xs);
    for l in 0..64 {
        let got = h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32;
        let want = (1.0 / f64::from_bits(xs[l])).to_bits();
        assert!(got == want || f64::from_bits(got).is_nan() && f64::from_bits(want).is_nan());
    }
    let h = run64(SQRT_F64, &xs);
    for l in 0..64 {
        let got = h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32;
        let want = f64::from_bits(xs[l]).sqrt().to_bits();
        assert!(got == want || f64::from_bits(got).is_nan() && f64::from_bits(want).is_nan());
    }
    let xs = [4.0f64, 0.0, -0.0, f64::INFINITY, 2.0, -1.0];
    let h = run64(RSQ_F64, &xs.map(f64::to_bits));
    let got: Vec<f64> =
        (0..6).map(|l| f64::from_bits(h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32)).collect();
    assert_eq!(&got[..4], &[0.5, f64::INFINITY, f64::NEG_INFINITY, 0.0]);
    assert!((got[4] - std::f64::consts::FRAC_1_SQRT_2).abs() <= f64::EPSILON / 2.0);
    assert!(got[5].is_nan());
}

#[test]
fn f16_f32_f64_conversions() {
    // Every f16 converts exactly to f32 (here through the low half, and the high half by SDWA).
    let halves: Vec<u32> = (0..0x1_0000u32).collect();
    for chunk in halves.chunks(64) {
        let got = run1(CVT_F32_F16, chunk, &[0]);
        let got_hi = run1(CVT_F32_F16_SDWA, &chunk.iter().map(|h| h << 16 | 0x1234).collect::<Vec<_>>(), &[0]);
        for l in 0..64 {
            let h = chunk[l] as u16;
            let e = (h >> 10) & 0x1f;
            let m = (h & 0x3ff) as f32;
            let s = if h >> 15 != 0 { -1.0 } else { 1.0 };
            let want = match e {
                0 => s * m * 2f32.powi(-24),
                31 if m == 0.0 => s * f32::INFINITY,
                31 => f32::NAN,
                _ => s * (1.0 + m / 1024.0) * 2f32.powi(e as i32 - 15),
            };
            assert!(same(got[l], want.to_bits()), "{h:#x}");
            assert!(same(got_hi[l], want.to_bits()), "{h:#x} (sdwa)");
        }
    }
    // f32 -> f16, round to nearest even: checked by converting back.
    for seed in 1..20 {
        let xs = random_f32(64, seed);
        let got = run1(CVT_F16_F32, &xs, &[0]);
        for l in 0..64 {
            assert_eq!(got[l] >> 16, 0, "the high half is zeroed");
            let x = f(xs[l]);
            let back = run1(CVT_F32_F16, &[got[l]], &[0])[0];
            if x.is_nan() {
                assert!(f(back).is_nan());
                continue;
            }
            let y = f(back) as f64;
            // No f16 is strictly closer to x than the result.
            let h = got[l] as u16;
            for n in [h.wrapping_add(1), h.wrapping_sub(1)] {
                if n & 0x7c00 == 0x7c00 && n & 0x3ff != 0 || (n ^ h) & 0x8000 != 0 {
                    continue;
                }
                let other = f(run1(CVT_F32_F16, &[n as u32], &[0])[0]) as f64;
                let (dx, dn) = ((y - x as f64).abs(), (other - x as f64).abs());
                assert!(
                    dx < dn || (dx == dn && h & 1 == 0) || y.is_infinite() && (x.abs() as f64) >= 65520.0,
                    "{x:e} -> {h:#x}"
                );
            }
        }
    }
    let got = run1(CVT_F16_F32, &[0x477f_f000, 0x4780_0000, 0x3380_0000, 0x3300_0000], &[0]);
    assert_eq!(&got[..4], &[0x7c00, 0x7c00, 0x0001, 0x0000], "65520 -> inf, 2^-24, 2^-25 ties to 0");
    let got = run1(CVT_F16_F32, &[0, 0x8000_0000, 0x0000_0001, 0x8000_0001], &[0]);
    assert_eq!(&got[..4], &[0, 0x8000, 0, 0x8000], "signed zeros, and f32 denormals (far below f16's)");
    // f64 <-> f32
    let xs = [1.0f64 / 3.0, 1e300, -1e-300, 2f64.powi(-149), 3.0 * 2f64.powi(-151)];
    let h = run64(CVT_F32_F64, &xs.map(f64::to_bits));
    for (l, x) in xs.iter().enumerate() {
        assert_eq!(h.wave.vgpr[2][l], (*x as f32).to_bits(), "{x:e}");
    }
    let xs: Vec<u32> = random_f32(64, 5);
    let mut h = Harness::new();
    h.wave.mode = HIP;
    h.wave.vgpr[0].copy_from_slice(&xs);
    h.run(CVT_F64_F32).unwrap();
    for l in 0..64 {
        let got = f64::from_bits(h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32);
        let want = f(xs[l]) as f64;
        assert!(got == want || got.is_nan() && want.is_nan());
    }
}

#[test]
fn int_float_conversions() {
    let ints: Vec<u32> = [0u32, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 16_777_217, 0x0100_0003, 12345].to_vec();
    let got = run1(CVT_F32_I32, &ints, &[0]);
    for l in 0..8 {
        assert_eq!(got[l], (ints[l] as i32 as f32).to_bits());
    }
    let got = run1(CVT_F32_U32, &ints, &[0]);
    for l in 0..8 {
        assert_eq!(got[l], (ints[l] as f32).to_bits());
    }
    let got = run1(CVT_F32_U32_SDWA, &[0x1234_5678], &[0]);
    assert_eq!(f(got[0]), 0x56 as f32);
    let got = run1(CVT_F32_UBYTE0, &[0x1234_56ff], &[0]);
    assert_eq!(f(got[0]), 255.0);
    let mut h = Harness::new();
    h.wave.vgpr[0][..8].copy_from_slice(&ints[..8]);
    h.run(CVT_F64_I32).unwrap();
    assert_eq!(h.wave.vgpr[5][3] as u64, (-2147483648f64).to_bits() >> 32);
    h.run(CVT_F64_U32).unwrap();
    assert_eq!((h.wave.vgpr[4][4] as u64 | (h.wave.vgpr[5][4] as u64) << 32), 4294967295f64.to_bits());
    // float -> int: truncation, saturation, NaN -> 0.
    let fs: Vec<u32> =
        [1.9f32, -1.9, 3e9, -3e9, f32::NAN, f32::INFINITY, -0.5, 2.5].iter().map(|x| x.to_bits()).collect();
    assert_eq!(
        &run1(CVT_I32_F32, &fs, &[0])[..8],
        &[1, (-1i32) as u32, 0x7fff_ffff, 0x8000_0000, 0, 0x7fff_ffff, 0, 2]
    );
    assert_eq!(&run1(CVT_U32_F32, &fs, &[0])[..8], &[1, 0, 3_000_000_000, 0, 0, 0xffff_ffff, 0, 2]);
    assert_eq!(
        &run1(CVT_FLR, &fs, &[0])[..8],
        &[1, (-2i32) as u32, 0x7fff_ffff, 0x8000_0000, 0, 0x7fff_ffff, (-1i32) as u32, 2]
    );
    assert_eq!(&run1(CVT_RPI, &fs, &[0])[..8], &[2, (-2i32) as u32, 0x7fff_ffff, 0x8000_0000, 0, 0x7fff_ffff, 0, 3]);
    let ds = [1.9f64, -1.9, 3e9, -3e9, f64::NAN, 4294967295.5, -0.5, 1e300];
    let h = run64(CVT_I32_F64, &ds.map(f64::to_bits));
    assert_eq!(&h.wave.vgpr[2][..8], &[1, (-1i32) as u32, 0x7fff_ffff, 0x8000_0000, 0, 0x7fff_ffff, 0, 0x7fff_ffff]);
    let h = run64(CVT_U32_F64, &ds.map(f64::to_bits));
    assert_eq!(&h.wave.vgpr[2][..8], &[1, 0, 3_000_000_000, 0, 0, 0xffff_ffff, 0, 0xffff_ffff]);
    let got = run1(CVT_OFF_F32_I4, &[0, 7, 8, 0xf, 0x13], &[0]);
    assert_eq!([f(got[0]), f(got[1]), f(got[2]), f(got[3]), f(got[4])], [0.0, 0.4375, -0.5, -0.0625, 0.1875]);
}

#[test]
fn packing_conversions() {
    // v_cvt_pkrtz: both halves rounded toward zero.
    let got = run1(CVT_PKRTZ, &[0x3f80_1fff, 0x477f_f000], &[0xbf80_1fff, 0x7f80_0000]);
    assert_eq!(got[0], 0xbc00_3c00);
    assert_eq!(got[1], 0x7c00_7bff, "65520 truncates to 65504; inf stays inf");
    // v_cvt_pk_u8_f32 v2, v0, 1, v1: byte 1 of v1 replaced.
    let got = run1(CVT_PK_U8, &[300.0f32.to_bits(), 2.5f32.to_bits(), f32::NAN.to_bits()], &[0x1122_3344]);
    assert_eq!(&got[..3], &[0x1122_ff44, 0x1122_0244, 0x1122_0044]);
    // v_pack_b32_f16 v2, v0, -v1 op_sel:[1,0]: {-v1.lo, v0.hi}
    let got = run1(PACK_B32_F16, &[0xaaaa_bbbb], &[0x1111_3c00]);
    assert_eq!(got[0], 0xbc00_aaaa);
    let got = run1(CVT_PKNORM_I16_F32, &[1.0f32.to_bits(), 0.5f32.to_bits()], &[(-1.0f32).to_bits(), 2.0f32.to_bits()]);
    assert_eq!(got[0], 0x8001_7fff);
    assert_eq!(got[1], 0x7fff_4000);
    let got = run1(SAT_PK_U8_I16, &[0x8000_0105, 0x0042_00ff], &[0]);
    assert_eq!(&got[..2], &[0x0000_00ff, 0x0000_42ff]);
    let got = run1(CVT_PK_I16_I32, &[70000, (-5i32) as u32], &[(-70000i32) as u32, 3]);
    assert_eq!(&got[..2], &[0x8000_7fff, 0x0003_fffb]);
    let got = run1(CVT_PK_U16_U32, &[70000, 5], &[0xffff_ffff, 3]);
    assert_eq!(&got[..2], &[0xffff_ffff, 0x0003_0005]);
}

#[test]
fn sqrt_f16() {
    let got = run1(SQRT_F16, &[0xffff_4400, 0x3c00, 0xfc00, 0x0001], &[0]);
    assert_eq!(&got[..3], &[0x4000, 0x3c00, 0xfe00], "sqrt(4) = 2, high half zeroed; sqrt(-inf) = NaN");
    let _ = got;
}

/// MODE's f64/f16 controls (round bits 2..3, denormal bits 6..7) govern
/// f16 results.
#[test]
fn f16_results_follow_the_f16_mode_bits() {
    let x = [1.0f32 + 2f32.powi(-11) + 2f32.powi(-20), -(1.0f32 + 2f32.powi(-11) + 2f32.powi(-20)), 2f32.powi(-20)];
    let xs: Vec<u32> = x.iter().map(|v| v.to_bits()).collect();
    let run_mode = |mode: u32| {
        let mut h = Harness::new();
        h.wave.mode = mode;
        for (l, v) in xs.iter().enumerate() {
            h.wave.vgpr[0][l] = *v;
        }
        h.run(CVT_F16_F32).unwrap();
        [h.wave.vgpr[2][0], h.wave.vgpr[2][1], h.wave.vgpr[2][2]]
    };
    // Nearest: just above the tie, rounds up; 2^-20 is the f16 denormal 16 * 2^-24.
    assert_eq!(run_mode(0x2f0), [0x3c01, 0xbc01, 0x0010]);
    // Toward zero (f16 round bits = 3); the f32 round bits do not matter.
    assert_eq!(run_mode(0x2fc), [0x3c00, 0xbc00, 0x0010]);
    assert_eq!(run_mode(0x2f3), [0x3c01, 0xbc01, 0x0010]);
    // Toward -inf.
    assert_eq!(run_mode(0x2f8), [0x3c00, 0xbc01, 0x0010]);
    // f16 output denormals flushed (bit 7 clear), f32 kept.
    assert_eq!(run_mode(0x270), [0x3c01, 0xbc01, 0x0000]);
}
