//! Scalar 64-bit logic, shifts, bit fields, bit counts and searches,
//! against an independent CPU reference of the MI200/MI300 pseudo-code;
//! 64-bit constants (zero-extended for b64, sign-extended for i64 sources)
//! and the aperture registers as 64-bit operands.
//!
//! Encodings: `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.

mod salu_support;

use salu_support::{get64, run, set64, EDGE32, EDGE64};
use sim::testing::Harness;

type Ref64 = fn(u64, u64, bool) -> (u64, bool);
type RefShift = fn(u64, u32, bool) -> (u64, bool);
type RefCount = fn(u64, bool) -> (u32, bool);
type Ref1 = fn(u64, bool) -> (u64, bool);

fn nz(v: u64) -> (u64, bool) {
    (v, v != 0)
}

fn nz32(v: u32) -> (u32, bool) {
    (v, v != 0)
}

/// `<op> s[4:5], s[0:1], s[2:3]`.
const SOP2_64: &[(u32, &str, Ref64)] = &[
    (0x8684_0200, "s_and_b64", |a, b, _| nz(a & b)),
    (0x8784_0200, "s_or_b64", |a, b, _| nz(a | b)),
    (0x8884_0200, "s_xor_b64", |a, b, _| nz(a ^ b)),
    (0x8984_0200, "s_andn2_b64", |a, b, _| nz(a & !b)),
    (0x8a84_0200, "s_orn2_b64", |a, b, _| nz(a | !b)),
    (0x8b84_0200, "s_nand_b64", |a, b, _| nz(!(a & b))),
    (0x8c84_0200, "s_nor_b64", |a, b, _| nz(!(a | b))),
    (0x8d84_0200, "s_xnor_b64", |a, b, _| nz(!(a ^ b))),
    (0x8584_0200, "s_cselect_b64", |a, b, c| (if c { a } else { b }, c)),
];

/// `<op> s[4:5], s[0:1], s2`.
const SHIFTS: &[(u32, &str, RefShift)] = &[
    (0x8e84_0200, "s_lshl_b64", |a, b, _| nz(((a as u128) << (b % 64)) as u64)),
    (0x8f84_0200, "s_lshr_b64", |a, b, _| nz(a >> (b % 64))),
    (0x9084_0200, "s_ashr_i64", |a, b, _| nz(((a as i64 as i128) >> (b % 64)) as u64)),
    (0x9384_0200, "s_bfe_u64", |a, b, _| {
        let (off, width) = (b % 64, (b >> 16) % 128);
        nz(((a >> off) as u128 & ((1u128 << width) - 1)) as u64)
    }),
    (0x9404_0200, "s_bfe_i64", |a, b, _| {
        let (off, width) = (b % 64, (b >> 16) % 128);
        let x = (a as i64 >> off) as i128;
        let v = match width {
            0 => 0,
            1..=127 => (x << (128 - width)) >> (128 - width),
            _ => unreachable!(),
        };
        nz(v as u64)
    }),
];

/// `<op> s4, s[0:1]`.
const COUNTS: &[(u32, &str, RefCount)] = &[
    (0xbe84_0b00, "s_bcnt0_i32_b64", |a, _| nz32((0..64).filter(|k| a >> k & 1 == 0).count() as u32)),
    (0xbe84_0d00, "s_bcnt1_i32_b64", |a, _| nz32((0..64).filter(|k| a >> k & 1 == 1).count() as u32)),
    (0xbe84_0f00, "s_ff0_i32_b64", |a, c| ((0..64).find(|k| a >> k & 1 == 0).unwrap_or(u32::MAX), c)),
    (0xbe84_1100, "s_ff1_i32_b64", |a, c| ((0..64).find(|k| a >> k & 1 == 1).unwrap_or(u32::MAX), c)),
    (0xbe84_1300, "s_flbit_i32_b64", |a, c| ((0..64).find(|k| a >> (63 - k) & 1 == 1).unwrap_or(u32::MAX), c)),
    (0xbe84_1500, "s_flbit_i32_i64", |a, c| {
        let sign = a >> 63;
        ((1..64).find(|k| a >> (63 - k) & 1 != sign).unwrap_or(u32::MAX), c)
    }),
];

/// `<op> s[4:5], s[0:1]`.
const SOP1_64: &[(u32, &str, Ref1)] = &[
    (0xbe84_0500, "s_not_b64", |a, _| nz(!a)),
    (0xbe84_0900, "s_brev_b64", |a, c| ((0..64).map(|k| (a >> k & 1) << (63 - k)).sum(), c)),
    (0xbe84_0700, "s_wqm_b64", |a, _| nz((0..16).filter(|q| a >> (4 * q) & 0xf != 0).map(|q| 0xf << (4 * q)).sum())),
    (0xbe84_2900, "s_quadmask_b64", |a, _| nz((0..16).filter(|q| a >> (4 * q) & 0xf != 0).map(|q| 1 << q).sum())),
    (0xbe84_0100, "s_mov_b64", |a, c| (a, c)),
];

#[test]
fn sop2_b64_matches_reference() {
    let mut h = Harness::new();
    for &(word, name, f) in SOP2_64 {
        for a in EDGE64 {
            for b in EDGE64 {
                for scc in [false, true] {
                    set64(&mut h, 0, a);
                    set64(&mut h, 2, b);
                    h.wave.scc = scc;
                    run(&mut h, &[word], name);
                    assert_eq!((get64(&h, 4), h.wave.scc), f(a, b, scc), "{name} {a:#x}, {b:#x}, scc {scc}");
                }
            }
        }
    }
}

#[test]
fn shifts_and_fields_b64_match_reference() {
    let mut h = Harness::new();
    for &(word, name, f) in SHIFTS {
        for a in EDGE64 {
            for b in EDGE32 {
                set64(&mut h, 0, a);
                h.wave.sgpr[2] = b;
                h.wave.scc = true;
                run(&mut h, &[word], name);
                assert_eq!((get64(&h, 4), h.wave.scc), f(a, b, true), "{name} {a:#x}, {b:#x}");
            }
        }
    }
}

#[test]
fn counts_and_searches_b64_match_reference() {
    let mut h = Harness::new();
    for &(word, name, f) in COUNTS {
        for a in EDGE64 {
            for scc in [false, true] {
                set64(&mut h, 0, a);
                h.wave.scc = scc;
                run(&mut h, &[word], name);
                assert_eq!((h.wave.sgpr[4], h.wave.scc), f(a, scc), "{name} {a:#x}");
            }
        }
    }
    for &(word, name, f) in SOP1_64 {
        for a in EDGE64 {
            for scc in [false, true] {
                set64(&mut h, 0, a);
                h.wave.scc = scc;
                run(&mut h, &[word], name);
                assert_eq!((get64(&h, 4), h.wave.scc), f(a, scc), "{name} {a:#x}");
            }
        }
    }
}

#[test]
fn bitfield_masks_compares_and_sets() {
    let mut h = Harness::new();
    for a in EDGE32 {
        for b in EDGE32 {
            h.wave.sgpr[0] = a;
            h.wave.sgpr[1] = b;
            h.wave.scc = true;
            run(&mut h, &[0x9184_0100], "s_bfm_b64 s[4:5], s0, s1");
            let want = (((1u128 << (a % 64)) - 1) << (b % 64)) as u64;
            assert_eq!((get64(&h, 4), h.wave.scc), (want, true), "s_bfm_b64 {a}, {b}");
        }
    }
    for a in EDGE64 {
        for b in EDGE32 {
            set64(&mut h, 0, a);
            h.wave.sgpr[2] = b;
            run(&mut h, &[0xbf0e_0200], "s_bitcmp0_b64 s[0:1], s2");
            assert_eq!(h.wave.scc, a & (1 << (b % 64)) == 0);
            run(&mut h, &[0xbf0f_0200], "s_bitcmp1_b64 s[0:1], s2");
            assert_eq!(h.wave.scc, a & (1 << (b % 64)) != 0);
        }
    }
    // s_bitset*: D[S0[4:0]] (b32) / D[S0[5:0]] (b64), the rest of D kept.
    h.wave.sgpr[0] = 33;
    h.wave.sgpr[4] = 0xf0;
    run(&mut h, &[0xbe84_1a00], "s_bitset1_b32 s4, s0");
    assert_eq!(h.wave.sgpr[4], 0xf2);
    h.wave.sgpr[0] = 4;
    run(&mut h, &[0xbe84_1800], "s_bitset0_b32 s4, s0");
    assert_eq!(h.wave.sgpr[4], 0xe2);
    h.wave.sgpr[0] = 33;
    set64(&mut h, 4, 0);
    run(&mut h, &[0xbe84_1b00], "s_bitset1_b64 s[4:5], s0");
    assert_eq!(get64(&h, 4), 1 << 33);
    set64(&mut h, 4, u64::MAX);
    h.wave.sgpr[0] = 63 + 64;
    run(&mut h, &[0xbe84_1900], "s_bitset0_b64 s[4:5], s0");
    assert_eq!(get64(&h, 4), u64::MAX >> 1);
    // s_bitreplicate_b64_b32: every bit twice.
    for a in EDGE32 {
        h.wave.sgpr[0] = a;
        run(&mut h, &[0xbe84_3700], "s_bitreplicate_b64_b32 s[4:5], s0");
        let want: u64 = (0..32).map(|k| ((a as u64 >> k) & 1) * (3 << (2 * k))).sum();
        assert_eq!(get64(&h, 4), want, "{a:#x}");
    }
}

#[test]
fn sixty_four_bit_constants() {
    let mut h = Harness::new();
    h.wave.sgpr[2] = 4;
    run(&mut h, &[0x9084_02ff, 0x8000_0000], "s_ashr_i64 s[4:5], 0x80000000, s2");
    assert_eq!(get64(&h, 4), 0xffff_ffff_f800_0000, "an i64 literal is sign-extended");
    h.wave.sgpr[2] = 0x0008_001c; // offset 28, width 8
    run(&mut h, &[0x9404_02ff, 0x8000_0000], "s_bfe_i64 s[4:5], 0x80000000, s2");
    assert_eq!(get64(&h, 4), 0xffff_ffff_ffff_fff8);
    run(&mut h, &[0x9384_02ff, 0x8000_0000], "s_bfe_u64 s[4:5], 0x80000000, s2");
    assert_eq!(get64(&h, 4), 0x08, "a u64 literal is zero-extended");
    set64(&mut h, 0, u64::MAX);
    run(&mut h, &[0x8684_00ff, 0x8000_0000], "s_and_b64 s[4:5], 0x80000000, s[0:1]");
    assert_eq!(get64(&h, 4), 0x8000_0000);
    run(&mut h, &[0xbe84_01c1], "s_mov_b64 s[4:5], -1");
    assert_eq!(get64(&h, 4), u64::MAX);
    run(&mut h, &[0xbe84_01f2], "s_mov_b64 s[4:5], 1.0");
    assert_eq!(get64(&h, 4), 0x3ff0_0000_0000_0000, "inline floats are f64 for 64-bit operands");
    run(&mut h, &[0xbe84_01ff, 0xffff_ffff], "s_mov_b64 s[4:5], 0xffffffff");
    assert_eq!(get64(&h, 4), 0xffff_ffff);
}

#[test]
fn apertures_as_64_bit_operands() {
    let mut h = Harness::new();
    // The KFD's apertures: shared at 1 << 48, private at 2 << 48.
    run(&mut h, &[0xbe84_01eb], "s_mov_b64 s[4:5], src_shared_base");
    assert_eq!(get64(&h, 4), 1 << 48);
    run(&mut h, &[0xbe84_01ec], "s_mov_b64 s[4:5], src_shared_limit");
    assert_eq!(get64(&h, 4), 1 << 48 | 0xffff_ffff);
    run(&mut h, &[0xbe84_01ed], "s_mov_b64 s[4:5], src_private_base");
    assert_eq!(get64(&h, 4), 2 << 48);
    run(&mut h, &[0xbe84_01ee], "s_mov_b64 s[4:5], src_private_limit");
    assert_eq!(get64(&h, 4), 2 << 48 | 0xffff_ffff);
    // As 32-bit operands: the high half.
    run(&mut h, &[0xbe84_00eb], "s_mov_b32 s4, src_shared_base");
    assert_eq!(h.wave.sgpr[4], 1 << 16);
    run(&mut h, &[0xbe84_00ed], "s_mov_b32 s4, src_private_base");
    assert_eq!(h.wave.sgpr[4], 2 << 16);
}
