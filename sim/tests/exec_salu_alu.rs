//! Scalar arithmetic, logic and compares on 32-bit operands, checked
//! against an independent CPU reference of the MI200/MI300 pseudo-code
//! over edge-case inputs (both SCC inputs), plus the SOPK immediates.
//!
//! Encodings: `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.

mod salu_support;

use salu_support::{run, EDGE32};
use sim::isa::Target;
use sim::testing::Harness;

/// Reference: (S0, S1, SCC in) -> (D, SCC out).
type Ref2 = fn(u32, u32, bool) -> (u32, bool);
type Ref1 = fn(u32, bool) -> (u32, bool);
type RefC = fn(u32, u32) -> bool;
type RefK = fn(u32) -> bool;

fn nz(v: u32) -> (u32, bool) {
    (v, v != 0)
}

fn mask(width: u32) -> u128 {
    (1u128 << width.min(127)) - 1
}

/// `<op> s2, s0, s1` and its reference.
const SOP2: &[(u32, &str, Ref2)] = &[
    (0x8002_0100, "s_add_u32", |a, b, _| {
        let s = a as u64 + b as u64;
        (s as u32, s >= 1 << 32)
    }),
    (0x8082_0100, "s_sub_u32", |a, b, _| (a.wrapping_sub(b), b > a)),
    (0x8102_0100, "s_add_i32", |a, b, _| {
        let s = a as i32 as i64 + b as i32 as i64;
        (s as u32, s != s as i32 as i64)
    }),
    (0x8182_0100, "s_sub_i32", |a, b, _| {
        let s = a as i32 as i64 - b as i32 as i64;
        (s as u32, s != s as i32 as i64)
    }),
    (0x8202_0100, "s_addc_u32", |a, b, c| {
        let s = a as u64 + b as u64 + c as u64;
        (s as u32, s >= 1 << 32)
    }),
    (0x8282_0100, "s_subb_u32", |a, b, c| {
        let need = b as u64 + c as u64;
        ((a as u64).wrapping_sub(need) as u32, need > a as u64)
    }),
    (0x8302_0100, "s_min_i32", |a, b, _| {
        let lt = (a as i32) < (b as i32);
        ((a as i32).min(b as i32) as u32, lt)
    }),
    (0x8382_0100, "s_min_u32", |a, b, _| (a.min(b), a < b)),
    // MI300: SCC = S0 >= S1, so a tie sets SCC.
    (0x8402_0100, "s_max_i32", |a, b, _| ((a as i32).max(b as i32) as u32, a as i32 >= b as i32)),
    (0x8482_0100, "s_max_u32", |a, b, _| (a.max(b), a >= b)),
    // The pseudo-code subtracts in 32 bits, then negates a negative difference.
    (0x9502_0100, "s_absdiff_i32", |a, b, _| nz(((a as i32).wrapping_sub(b as i32) as i64).unsigned_abs() as u32)),
    (0x9202_0100, "s_mul_i32", |a, b, c| ((a as u64 * b as u64) as u32, c)),
    (0x9602_0100, "s_mul_hi_u32", |a, b, c| (((a as u64 * b as u64) >> 32) as u32, c)),
    (0x9682_0100, "s_mul_hi_i32", |a, b, c| (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, c)),
    (0x9702_0100, "s_lshl1_add_u32", |a, b, _| {
        let t = (a as u64) * 2 + b as u64;
        (t as u32, t >> 32 != 0)
    }),
    (0x9782_0100, "s_lshl2_add_u32", |a, b, _| {
        let t = (a as u64) * 4 + b as u64;
        (t as u32, t >> 32 != 0)
    }),
    (0x9802_0100, "s_lshl3_add_u32", |a, b, _| {
        let t = (a as u64) * 8 + b as u64;
        (t as u32, t >> 32 != 0)
    }),
    (0x9882_0100, "s_lshl4_add_u32", |a, b, _| {
        let t = (a as u64) * 16 + b as u64;
        (t as u32, t >> 32 != 0)
    }),
    (0x8602_0100, "s_and_b32", |a, b, _| nz(a & b)),
    (0x8702_0100, "s_or_b32", |a, b, _| nz(a | b)),
    (0x8802_0100, "s_xor_b32", |a, b, _| nz(a ^ b)),
    (0x8902_0100, "s_andn2_b32", |a, b, _| nz(a & !b)),
    (0x8a02_0100, "s_orn2_b32", |a, b, _| nz(a | !b)),
    (0x8b02_0100, "s_nand_b32", |a, b, _| nz(!(a & b))),
    (0x8c02_0100, "s_nor_b32", |a, b, _| nz(!(a | b))),
    (0x8d02_0100, "s_xnor_b32", |a, b, _| nz(!(a ^ b))),
    (0x8e02_0100, "s_lshl_b32", |a, b, _| nz(((a as u64) << (b % 32)) as u32)),
    (0x8f02_0100, "s_lshr_b32", |a, b, _| nz(a >> (b % 32))),
    (0x9002_0100, "s_ashr_i32", |a, b, _| nz(((a as i32 as i64) >> (b % 32)) as u32)),
    (0x9102_0100, "s_bfm_b32", |a, b, c| (((((1u64 << (a % 32)) - 1) << (b % 32)) as u32), c)),
    (0x9282_0100, "s_bfe_u32", |a, b, _| {
        let (off, width) = (b % 32, (b >> 16) % 128);
        nz(((a >> off) as u128 & mask(width)) as u32)
    }),
    (0x9302_0100, "s_bfe_i32", |a, b, _| {
        let (off, width) = (b % 32, (b >> 16) % 128);
        let x = (a as i32 >> off) as i64;
        let v = match width {
            0 => 0,
            1..=63 => (x << (64 - width)) >> (64 - width),
            _ => x,
        };
        nz(v as u32)
    }),
    (0x8502_0100, "s_cselect_b32", |a, b, c| (if c { a } else { b }, c)),
    (0x9902_0100, "s_pack_ll_b32_b16", |a, b, c| ((b & 0xffff) << 16 | (a & 0xffff), c)),
    (0x9982_0100, "s_pack_lh_b32_b16", |a, b, c| ((b >> 16) << 16 | (a & 0xffff), c)),
    (0x9a02_0100, "s_pack_hh_b32_b16", |a, b, c| ((b >> 16) << 16 | (a >> 16), c)),
];

/// `<op> s2, s0` and its reference.
const SOP1: &[(u32, &str, Ref1)] = &[
    (0xbe82_3000, "s_abs_i32", |a, _| nz((a as i32 as i64).unsigned_abs() as u32)),
    (0xbe82_1600, "s_sext_i32_i8", |a, c| (((a << 24) as i32 >> 24) as u32, c)),
    (0xbe82_1700, "s_sext_i32_i16", |a, c| (((a << 16) as i32 >> 16) as u32, c)),
    (0xbe82_0400, "s_not_b32", |a, _| nz(!a)),
    (0xbe82_0800, "s_brev_b32", |a, c| ((0..32).map(|k| (a >> k & 1) << (31 - k)).sum(), c)),
    (0xbe82_0a00, "s_bcnt0_i32_b32", |a, _| nz((0..32).filter(|k| a >> k & 1 == 0).count() as u32)),
    (0xbe82_0c00, "s_bcnt1_i32_b32", |a, _| nz((0..32).filter(|k| a >> k & 1 == 1).count() as u32)),
    (0xbe82_0e00, "s_ff0_i32_b32", |a, c| ((0..32).find(|k| a >> k & 1 == 0).unwrap_or(u32::MAX), c)),
    (0xbe82_1000, "s_ff1_i32_b32", |a, c| ((0..32).find(|k| a >> k & 1 == 1).unwrap_or(u32::MAX), c)),
    (0xbe82_1200, "s_flbit_i32_b32", |a, c| ((0..32).find(|k| a >> (31 - k) & 1 == 1).unwrap_or(u32::MAX), c)),
    (0xbe82_1400, "s_flbit_i32", |a, c| {
        let sign = a >> 31;
        ((1..32).find(|k| a >> (31 - k) & 1 != sign).map_or(u32::MAX, |k| k), c)
    }),
    (0xbe82_0600, "s_wqm_b32", |a, _| nz((0..8).filter(|q| a >> (4 * q) & 0xf != 0).map(|q| 0xf << (4 * q)).sum())),
    (0xbe82_2800, "s_quadmask_b32", |a, _| nz((0..8).filter(|q| a >> (4 * q) & 0xf != 0).map(|q| 1 << q).sum())),
    (0xbe82_0000, "s_mov_b32", |a, c| (a, c)),
];

/// `<op> s0, s1` and its reference.
const SOPC: &[(u32, &str, RefC)] = &[
    (0xbf00_0100, "s_cmp_eq_i32", |a, b| a as i32 == b as i32),
    (0xbf01_0100, "s_cmp_lg_i32", |a, b| a as i32 != b as i32),
    (0xbf02_0100, "s_cmp_gt_i32", |a, b| a as i32 > b as i32),
    (0xbf03_0100, "s_cmp_ge_i32", |a, b| a as i32 >= b as i32),
    (0xbf04_0100, "s_cmp_lt_i32", |a, b| (a as i32) < b as i32),
    (0xbf05_0100, "s_cmp_le_i32", |a, b| a as i32 <= b as i32),
    (0xbf06_0100, "s_cmp_eq_u32", |a, b| a == b),
    (0xbf07_0100, "s_cmp_lg_u32", |a, b| a != b),
    (0xbf08_0100, "s_cmp_gt_u32", |a, b| a > b),
    (0xbf09_0100, "s_cmp_ge_u32", |a, b| a >= b),
    (0xbf0a_0100, "s_cmp_lt_u32", |a, b| a < b),
    (0xbf0b_0100, "s_cmp_le_u32", |a, b| a <= b),
    (0xbf0c_0100, "s_bitcmp0_b32", |a, b| a & (1 << (b % 32)) == 0),
    (0xbf0d_0100, "s_bitcmp1_b32", |a, b| a & (1 << (b % 32)) != 0),
];

#[test]
fn sop2_matches_reference() {
    for target in [Target::Gfx90a, Target::Gfx942] {
        let mut h = Harness::for_target(target);
        for &(word, name, f) in SOP2 {
            for a in EDGE32 {
                for b in EDGE32 {
                    for scc in [false, true] {
                        h.wave.sgpr[..3].copy_from_slice(&[a, b, 0x5555_5555]);
                        h.wave.scc = scc;
                        run(&mut h, &[word], name);
                        let got = (h.wave.sgpr[2], h.wave.scc);
                        assert_eq!(got, f(a, b, scc), "{target:?} {name} {a:#x}, {b:#x}, scc {scc}");
                    }
                }
            }
        }
    }
}

#[test]
fn sop1_matches_reference() {
    let mut h = Harness::new();
    for &(word, name, f) in SOP1 {
        for a in EDGE32 {
            for scc in [false, true] {
                h.wave.sgpr[..3].copy_from_slice(&[a, 0, 0x5555_5555]);
                h.wave.scc = scc;
                run(&mut h, &[word], name);
                assert_eq!((h.wave.sgpr[2], h.wave.scc), f(a, scc), "{name} {a:#x}, scc {scc}");
            }
        }
    }
}

#[test]
fn sopc_matches_reference() {
    let mut h = Harness::new();
    for &(word, name, f) in SOPC {
        for a in EDGE32 {
            for b in EDGE32 {
                h.wave.sgpr[..2].copy_from_slice(&[a, b]);
                h.wave.scc = !f(a, b);
                run(&mut h, &[word], name);
                assert_eq!(h.wave.scc, f(a, b), "{name} {a:#x}, {b:#x}");
            }
        }
    }
}

#[test]
fn cmov_moves_only_with_scc() {
    let mut h = Harness::new();
    for scc in [false, true] {
        h.wave.sgpr[..3].copy_from_slice(&[7, 0, 9]);
        h.wave.scc = scc;
        run(&mut h, &[0xbe82_0200], "s_cmov_b32 s2, s0");
        assert_eq!(h.wave.sgpr[2], if scc { 7 } else { 9 });
        assert_eq!(h.wave.scc, scc);
    }
}

#[test]
fn constants_and_literals() {
    let mut h = Harness::new();
    h.wave.sgpr[0] = 5;
    run(&mut h, &[0x8001_8300], "s_add_u32 s1, s0, 3");
    assert_eq!(h.wave.sgpr[1], 8);
    run(&mut h, &[0x8101_c100], "s_add_i32 s1, s0, -1");
    assert_eq!((h.wave.sgpr[1], h.wave.scc), (4, false));
    run(&mut h, &[0xbe81_00f2], "s_mov_b32 s1, 1.0");
    assert_eq!(h.wave.sgpr[1], 0x3f80_0000);
    run(&mut h, &[0xbe81_00ff, 0xdead_beef], "s_mov_b32 s1, 0xdeadbeef");
    assert_eq!(h.wave.sgpr[1], 0xdead_beef);
    run(&mut h, &[0x8e01_ff00, 0x0000_0041], "s_lshl_b32 s1, s0, 0x41");
    assert_eq!(h.wave.sgpr[1], 10, "the shift amount is the literal's low 5 bits");
}

#[test]
fn sopk_immediates() {
    let mut h = Harness::new();
    run(&mut h, &[0xb002_8000], "s_movk_i32 s2, 0x8000");
    assert_eq!(h.wave.sgpr[2], 0xffff_8000, "sign-extended");
    h.wave.scc = false;
    run(&mut h, &[0xb082_0005], "s_cmovk_i32 s2, 5");
    assert_eq!(h.wave.sgpr[2], 0xffff_8000);
    h.wave.scc = true;
    run(&mut h, &[0xb082_0005], "s_cmovk_i32 s2, 5");
    assert_eq!(h.wave.sgpr[2], 5);
    h.wave.sgpr[2] = 0x7fff_ffff;
    run(&mut h, &[0xb702_0001], "s_addk_i32 s2, 0x1");
    assert_eq!((h.wave.sgpr[2], h.wave.scc), (0x8000_0000, true), "signed overflow sets SCC");
    run(&mut h, &[0xb702_ffff], "s_addk_i32 s2, 0xffff");
    assert_eq!((h.wave.sgpr[2], h.wave.scc), (0x7fff_ffff, true), "-1 underflows");
    run(&mut h, &[0xb702_ffff], "s_addk_i32 s2, 0xffff");
    assert_eq!((h.wave.sgpr[2], h.wave.scc), (0x7fff_fffe, false));
    h.wave.sgpr[2] = 3;
    h.wave.scc = true;
    run(&mut h, &[0xb782_fffe], "s_mulk_i32 s2, 0xfffe");
    assert_eq!((h.wave.sgpr[2], h.wave.scc), ((-6i32) as u32, true), "SCC unchanged");
}

#[test]
fn sopk_compares_extend_by_signedness() {
    let mut h = Harness::new();
    let cases: &[(u32, &str, RefK)] = &[
        (0xb100_ffff, "s_cmpk_eq_i32 s0, 0xffff", |a| a as i32 == -1),
        (0xb180_ffff, "s_cmpk_lg_i32 s0, 0xffff", |a| a as i32 != -1),
        (0xb200_ffff, "s_cmpk_gt_i32 s0, 0xffff", |a| a as i32 > -1),
        (0xb280_ffff, "s_cmpk_ge_i32 s0, 0xffff", |a| a as i32 >= -1),
        (0xb300_ffff, "s_cmpk_lt_i32 s0, 0xffff", |a| (a as i32) < -1),
        (0xb380_ffff, "s_cmpk_le_i32 s0, 0xffff", |a| a as i32 <= -1),
        (0xb400_ffff, "s_cmpk_eq_u32 s0, 0xffff", |a| a == 0xffff),
        (0xb480_ffff, "s_cmpk_lg_u32 s0, 0xffff", |a| a != 0xffff),
        (0xb500_ffff, "s_cmpk_gt_u32 s0, 0xffff", |a| a > 0xffff),
        (0xb580_ffff, "s_cmpk_ge_u32 s0, 0xffff", |a| a >= 0xffff),
        (0xb600_ffff, "s_cmpk_lt_u32 s0, 0xffff", |a| a < 0xffff),
        (0xb680_ffff, "s_cmpk_le_u32 s0, 0xffff", |a| a <= 0xffff),
    ];
    for &(word, name, f) in cases {
        for a in EDGE32 {
            h.wave.sgpr[0] = a;
            h.wave.scc = !f(a);
            run(&mut h, &[word], name);
            assert_eq!(h.wave.scc, f(a), "{name} with s0 = {a:#x}");
        }
    }
}
