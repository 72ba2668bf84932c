//! Integer VALU ops against reference formulas written from the MI200 ISA
//! pseudo-code, over edge-value operands, with EXEC full and with holes.
//! Encodings come from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`
//! (the assembly is in the comment above each).

use sim::gpu::exec::LANES;
use sim::isa::Target;
use sim::testing::Harness;

/// What v2 holds before an op runs: inactive lanes must keep it, and the
/// 16-bit `op_sel` ops keep its other half.
const SENT: u32 = 0xdead_beef;

/// EXEC masks every op runs under.
const EXECS: [u64; 3] = [u64::MAX, 0x5a5a_0ff0_8001_7ffe, 1 << 63];

/// Edge values: zero, ones, sign boundaries, 16- and 24-bit boundaries,
/// shift amounts around the width.
const EDGES: [u32; 16] = [
    0,
    1,
    2,
    15,
    16,
    31,
    32,
    0x7fff,
    0x8000,
    0xffff,
    0x00ff_ffff,
    0x0080_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
];

/// Operand `k` (0, 1, 2) of lane `l`: pairs of edge values, the third
/// operand a mixed pattern.
fn operand(k: usize, l: usize) -> u32 {
    match k {
        0 => EDGES[l % 16] ^ if l >= 32 { 0x1234_0000 } else { 0 },
        1 => EDGES[(l / 16 + 3 * l) % 16],
        _ => EDGES[(l * 7 + 5) % 16].rotate_left(l as u32),
    }
}

/// Sign-extends 24 bits.
fn s24(v: u32) -> i64 {
    ((v << 8) as i32 >> 8) as i64
}

/// A 16-bit result written into one half of v2, the other half kept.
fn hold(shift: u32, v: u16) -> u32 {
    (SENT & !(0xffff << shift)) | (v as u32) << shift
}

/// `v_perm_b32` from the ISA's byte-select table.
fn ref_perm(a: u32, b: u32, c: u32) -> u32 {
    let data = ((a as u64) << 32) | b as u64;
    let mut r = 0;
    for i in 0..4 {
        let sel = (c >> (8 * i)) & 0xff;
        let byte = match sel {
            0..=7 => (data >> (8 * sel)) & 0xff,
            8 => 0xff * (data >> 15 & 1),
            9 => 0xff * (data >> 31 & 1),
            10 => 0xff * (data >> 47 & 1),
            11 => 0xff * (data >> 63 & 1),
            12 => 0,
            _ => 0xff,
        } as u32;
        r |= byte << (8 * i);
    }
    r
}

fn setup(h: &mut Harness, exec: u64) {
    h.wave.sgpr[10] = 0x8765_4321;
    for k in 0..3 {
        let reg = [0, 1, 3][k];
        h.wave.vgpr[reg] = std::array::from_fn(|l| operand(k, l));
    }
    h.wave.vgpr[2] = [SENT; LANES];
    h.wave.agpr[2] = [SENT; LANES];
    h.wave.exec = exec;
}

type Ref = fn(u32, u32, u32) -> u32;

/// `v2 = op(v0, v1, v3)` for every op of the table.
#[test]
fn integer_ops_match_reference_formulas() {
    let table: &[(&[u32], Ref)] = &[
        // v_add_u32_e32 v2, v0, v1
        (&[0x68040300], |a, b, _| a.wrapping_add(b)),
        // v_add_u32_e64 v2, v0, v1
        (&[0xd1340002, 0x00020300], |a, b, _| a.wrapping_add(b)),
        // v_add_u32_e64 v2, v0, v1 clamp
        (&[0xd1348002, 0x00020300], |a, b, _| (a as u64 + b as u64).min(0xffff_ffff) as u32),
        // v_sub_u32_e32 v2, v0, v1
        (&[0x6a040300], |a, b, _| a.wrapping_sub(b)),
        // v_sub_u32_e64 v2, v0, v1 clamp
        (&[0xd1358002, 0x00020300], |a, b, _| (a as i64 - b as i64).max(0) as u32),
        // v_subrev_u32_e32 v2, v0, v1
        (&[0x6c040300], |a, b, _| b.wrapping_sub(a)),
        // v_subrev_u32_e64 v2, v0, v1 clamp
        (&[0xd1368002, 0x00020300], |a, b, _| (b as i64 - a as i64).max(0) as u32),
        // v_add_i32 v2, v0, v1
        (&[0xd29c0002, 0x00020300], |a, b, _| (a as i32).wrapping_add(b as i32) as u32),
        // v_add_i32 v2, v0, v1 clamp
        (&[0xd29c8002, 0x00020300], |a, b, _| (a as i32).saturating_add(b as i32) as u32),
        // v_sub_i32 v2, v0, v1
        (&[0xd29d0002, 0x00020300], |a, b, _| (a as i32).wrapping_sub(b as i32) as u32),
        // v_sub_i32 v2, v0, v1 clamp
        (&[0xd29d8002, 0x00020300], |a, b, _| (a as i32).saturating_sub(b as i32) as u32),
        // v_add_u16_e32 v2, v0, v1
        (&[0x4c040300], |a, b, _| (a as u16).wrapping_add(b as u16) as u32),
        // v_add_u16_e64 v2, v0, v1 clamp
        (&[0xd1268002, 0x00020300], |a, b, _| (a as u16).saturating_add(b as u16) as u32),
        // v_sub_u16_e32 v2, v0, v1
        (&[0x4e040300], |a, b, _| (a as u16).wrapping_sub(b as u16) as u32),
        // v_sub_u16_e64 v2, v0, v1 clamp
        (&[0xd1278002, 0x00020300], |a, b, _| (a as u16).saturating_sub(b as u16) as u32),
        // v_subrev_u16_e32 v2, v0, v1
        (&[0x50040300], |a, b, _| (b as u16).wrapping_sub(a as u16) as u32),
        // v_mul_lo_u16_e32 v2, v0, v1
        (&[0x52040300], |a, b, _| (a as u16).wrapping_mul(b as u16) as u32),
        // v_max_u16_e32 v2, v0, v1
        (&[0x5e040300], |a, b, _| (a as u16).max(b as u16) as u32),
        // v_min_u16_e32 v2, v0, v1
        (&[0x62040300], |a, b, _| (a as u16).min(b as u16) as u32),
        // v_max_i16_e32 v2, v0, v1
        (&[0x60040300], |a, b, _| (a as i16).max(b as i16) as u16 as u32),
        // v_min_i16_e32 v2, v0, v1
        (&[0x64040300], |a, b, _| (a as i16).min(b as i16) as u16 as u32),
        // v_lshlrev_b16_e32 v2, v0, v1
        (&[0x54040300], |a, b, _| ((b as u16) << (a % 16)) as u32),
        // v_lshrrev_b16_e32 v2, v0, v1
        (&[0x56040300], |a, b, _| ((b as u16) >> (a % 16)) as u32),
        // v_ashrrev_i16_e32 v2, v0, v1
        (&[0x58040300], |a, b, _| ((b as i16) >> (a % 16)) as u16 as u32),
        // v_lshlrev_b32_e32 v2, v0, v1
        (&[0x24040300], |a, b, _| b << (a % 32)),
        // v_lshrrev_b32_e32 v2, v0, v1
        (&[0x20040300], |a, b, _| b >> (a % 32)),
        // v_ashrrev_i32_e32 v2, v0, v1
        (&[0x22040300], |a, b, _| ((b as i32) >> (a % 32)) as u32),
        // v_and_b32_e32 v2, v0, v1
        (&[0x26040300], |a, b, _| a & b),
        // v_or_b32_e32 v2, v0, v1
        (&[0x28040300], |a, b, _| a | b),
        // v_xor_b32_e32 v2, v0, v1
        (&[0x2a040300], |a, b, _| a ^ b),
        // v_xnor_b32_e32 v2, v0, v1
        (&[0x7a040300], |a, b, _| !(a ^ b)),
        // v_max_u32_e32 v2, v0, v1
        (&[0x1e040300], |a, b, _| a.max(b)),
        // v_min_u32_e32 v2, v0, v1
        (&[0x1c040300], |a, b, _| a.min(b)),
        // v_max_i32_e32 v2, v0, v1
        (&[0x1a040300], |a, b, _| (a as i32).max(b as i32) as u32),
        // v_min_i32_e32 v2, v0, v1
        (&[0x18040300], |a, b, _| (a as i32).min(b as i32) as u32),
        // v_mul_lo_u32 v2, v0, v1
        (&[0xd2850002, 0x00020300], |a, b, _| (a as u64 * b as u64) as u32),
        // v_mul_hi_u32 v2, v0, v1
        (&[0xd2860002, 0x00020300], |a, b, _| ((a as u64 * b as u64) >> 32) as u32),
        // v_mul_hi_i32 v2, v0, v1
        (&[0xd2870002, 0x00020300], |a, b, _| ((a as i32 as i64 * b as i32 as i64) >> 32) as u32),
        // v_mul_u32_u24_e32 v2, v0, v1
        (&[0x10040300], |a, b, _| ((a as u64 % (1 << 24)) * (b as u64 % (1 << 24))) as u32),
        // v_mul_u32_u24_e64 v2, v0, v1 clamp
        (&[0xd1088002, 0x00020300], |a, b, _| {
            ((a as u64 % (1 << 24)) * (b as u64 % (1 << 24))).min(0xffff_ffff) as u32
        }),
        // v_mul_hi_u32_u24_e32 v2, v0, v1
        (&[0x12040300], |a, b, _| (((a as u64 % (1 << 24)) * (b as u64 % (1 << 24))) >> 32) as u32),
        // v_mul_i32_i24_e32 v2, v0, v1
        (&[0x0c040300], |a, b, _| (s24(a) * s24(b)) as u32),
        // v_mul_i32_i24_e64 v2, v0, v1 clamp
        (&[0xd1068002, 0x00020300], |a, b, _| (s24(a) * s24(b)).clamp(i32::MIN as i64, i32::MAX as i64) as u32),
        // v_mul_hi_i32_i24_e32 v2, v0, v1
        (&[0x0e040300], |a, b, _| ((s24(a) * s24(b)) >> 32) as u32),
        // v_bcnt_u32_b32 v2, v0, v1
        (&[0xd28b0002, 0x00020300], |a, b, _| a.count_ones().wrapping_add(b)),
        // v_bfm_b32 v2, v0, v1
        (&[0xd2930002, 0x00020300], |a, b, _| (((1u64 << (a % 32)) - 1) as u32) << (b % 32)),
        // v_not_b32_e32 v2, v0
        (&[0x7e045700], |a, _, _| !a),
        // v_mov_b32_e32 v2, v0
        (&[0x7e040300], |a, _, _| a),
        // v_bfrev_b32_e32 v2, v0
        (&[0x7e045900], |a, _, _| (0..32).fold(0, |r, i| r | ((a >> i) & 1) << (31 - i))),
        // v_ffbh_u32_e32 v2, v0
        (&[0x7e045b00], |a, _, _| (0..32).find(|i| a >> (31 - i) & 1 != 0).unwrap_or(u32::MAX)),
        // v_ffbl_b32_e32 v2, v0
        (&[0x7e045d00], |a, _, _| (0..32).find(|i| a >> i & 1 != 0).unwrap_or(u32::MAX)),
        // v_ffbh_i32_e32 v2, v0
        (&[0x7e045f00], |a, _, _| (1..32).find(|i| (a >> (31 - i) & 1) != a >> 31).unwrap_or(u32::MAX)),
        // v_mad_u32_u16 v2, v0, v1, v3 clamp
        (&[0xd1f18002, 0x040e0300], |a, b, c| {
            ((a as u16 as u64) * (b as u16 as u64) + c as u64).min(0xffff_ffff) as u32
        }),
        // v_mad_i32_i16 v2, v0, v1, v3 clamp
        (&[0xd1f28002, 0x040e0300], |a, b, c| {
            ((a as i16 as i64) * (b as i16 as i64) + c as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as u32
        }),
        // v_mad_i32_i16 v2, v0, v1, v3 op_sel:[1,0,0,0]
        (&[0xd1f20802, 0x040e0300], |a, b, c| {
            ((a >> 16) as i16 as i32).wrapping_mul(b as i16 as i32).wrapping_add(c as i32) as u32
        }),
        // v_msad_u8 v2, v0, v1, v3 clamp
        (&[0xd1e48002, 0x040e0300], |a, b, c| {
            ((0..4)
                .filter(|i| (b >> (8 * i)) & 255 != 0)
                .map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u64)
                .sum::<u64>()
                + c as u64)
                .min(0xffff_ffff) as u32
        }),
        // v_sad_u32 v2, v0, v1, v3 clamp
        (&[0xd1dc8002, 0x040e0300], |a, b, c| (a.abs_diff(b) as u64 + c as u64).min(0xffff_ffff) as u32),
        // v_sad_hi_u8 v2, v0, v1, v3 clamp
        (&[0xd1da8002, 0x040e0300], |a, b, c| {
            (((0..4).map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u64).sum::<u64>() << 16)
                + c as u64)
                .min(0xffff_ffff) as u32
        }),
        // v_sad_u16 v2, v0, v1, v3 clamp
        (&[0xd1db8002, 0x040e0300], |a, b, c| {
            ((a as u16).abs_diff(b as u16) as u64 + ((a >> 16) as u16).abs_diff((b >> 16) as u16) as u64 + c as u64)
                .min(0xffff_ffff) as u32
        }),
        // v_add_u32_e32 v2, s10, v1
        (&[0x6804020a], |_, b, _| 0x8765_4321u32.wrapping_add(b)),
        // v_lshlrev_b32_e64 v2, 35, v1
        (&[0xd1120002, 0x000202a3], |_, b, _| b << 3),
        // v_bfe_u32 v2, v0, 4, 12
        (&[0xd1c80002, 0x02310900], |a, _, _| (a >> 4) & 0xfff),
        // v_bfe_i32 v2, v0, 28, 8
        (&[0xd1c90002, 0x02213900], |a, _, _| ((a as i32) >> 28) as u32),
        // v_max_i16_sdwa v2, sext(v0), v1 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1
        (&[0x600402f9, 0x05090400], |a, b, _| ((a >> 8) as u8 as i8 as i16).max((b >> 16) as i16) as u16 as u32),
        // v_mul_hi_u32_u24_sdwa v2, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
        (&[0x120402f9, 0x06050600], |a, b, _| (((a >> 16) as u64 * (b as u64 % (1 << 24))) >> 32) as u32),
        // v_not_b32_sdwa v2, v0 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2
        (&[0x7e0456f9, 0x00021100], |a, _, _| (SENT & !0xff00) | ((!(a >> 16 & 0xff)) & 0xff) << 8),
        // v_bfrev_b32_dpp v2, v0 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf
        (&[0x7e0458fa, 0xff00e400], |a, _, _| (0..32).fold(0, |r, i| r | ((a >> i) & 1) << (31 - i))),
        // v_add3_u32 v2, v0, v1, v3
        (&[0xd1ff0002, 0x040e0300], |a, b, c| (a as u64 + b as u64 + c as u64) as u32),
        // v_add_lshl_u32 v2, v0, v1, v3
        (&[0xd1fe0002, 0x040e0300], |a, b, c| a.wrapping_add(b) << (c % 32)),
        // v_lshl_add_u32 v2, v0, v1, v3
        (&[0xd1fd0002, 0x040e0300], |a, b, c| (a << (b % 32)).wrapping_add(c)),
        // v_lshl_or_b32 v2, v0, v1, v3
        (&[0xd2000002, 0x040e0300], |a, b, c| (a << (b % 32)) | c),
        // v_and_or_b32 v2, v0, v1, v3
        (&[0xd2010002, 0x040e0300], |a, b, c| (a & b) | c),
        // v_or3_b32 v2, v0, v1, v3
        (&[0xd2020002, 0x040e0300], |a, b, c| a | b | c),
        // v_xad_u32 v2, v0, v1, v3
        (&[0xd1f30002, 0x040e0300], |a, b, c| (a ^ b).wrapping_add(c)),
        // v_alignbit_b32 v2, v0, v1, v3
        (&[0xd1ce0002, 0x040e0300], |a, b, c| ((((a as u64) << 32) | b as u64) >> (c % 32)) as u32),
        // v_alignbyte_b32 v2, v0, v1, v3
        (&[0xd1cf0002, 0x040e0300], |a, b, c| ((((a as u64) << 32) | b as u64) >> (8 * (c % 4))) as u32),
        // v_bfe_u32 v2, v0, v1, v3
        (&[0xd1c80002, 0x040e0300], |a, b, c| ((a >> (b % 32)) as u64 & ((1u64 << (c % 32)) - 1)) as u32),
        // v_bfe_i32 v2, v0, v1, v3
        (&[0xd1c90002, 0x040e0300], |a, b, c| {
            if c % 32 == 0 {
                0
            } else {
                let f = ((a as i32) >> (b % 32)) as i64;
                let w = c % 32;
                (((f << (64 - w)) >> (64 - w)) as i32) as u32
            }
        }),
        // v_bfi_b32 v2, v0, v1, v3
        (&[0xd1ca0002, 0x040e0300], |a, b, c| (a & b) | (!a & c)),
        // v_perm_b32 v2, v0, v1, v3
        (&[0xd1ed0002, 0x040e0300], |a, b, c| ref_perm(a, b, c)),
        // v_lerp_u8 v2, v0, v1, v3
        (&[0xd1cd0002, 0x040e0300], |a, b, c| {
            (0..4)
                .map(|i| ((((a >> (8 * i)) & 255) + ((b >> (8 * i)) & 255) + ((c >> (8 * i)) & 1)) / 2) << (8 * i))
                .sum()
        }),
        // v_min3_u32 v2, v0, v1, v3
        (&[0xd1d20002, 0x040e0300], |a, b, c| *[a, b, c].iter().min().unwrap()),
        // v_max3_u32 v2, v0, v1, v3
        (&[0xd1d50002, 0x040e0300], |a, b, c| *[a, b, c].iter().max().unwrap()),
        // v_med3_u32 v2, v0, v1, v3
        (&[0xd1d80002, 0x040e0300], |a, b, c| {
            let mut v = [a, b, c];
            v.sort();
            v[1]
        }),
        // v_min3_i32 v2, v0, v1, v3
        (&[0xd1d10002, 0x040e0300], |a, b, c| *[a as i32, b as i32, c as i32].iter().min().unwrap() as u32),
        // v_max3_i32 v2, v0, v1, v3
        (&[0xd1d40002, 0x040e0300], |a, b, c| *[a as i32, b as i32, c as i32].iter().max().unwrap() as u32),
        // v_med3_i32 v2, v0, v1, v3
        (&[0xd1d70002, 0x040e0300], |a, b, c| {
            let mut v = [a as i32, b as i32, c as i32];
            v.sort();
            v[1] as u32
        }),
        // v_mad_u32_u24 v2, v0, v1, v3
        (&[0xd1c30002, 0x040e0300], |a, b, c| ((a as u64 % (1 << 24)) * (b as u64 % (1 << 24)) + c as u64) as u32),
        // v_mad_u32_u24 v2, v0, v1, v3 clamp
        (&[0xd1c38002, 0x040e0300], |a, b, c| {
            ((a as u64 % (1 << 24)) * (b as u64 % (1 << 24)) + c as u64).min(0xffff_ffff) as u32
        }),
        // v_mad_i32_i24 v2, v0, v1, v3
        (&[0xd1c20002, 0x040e0300], |a, b, c| (s24(a) * s24(b) + c as i32 as i64) as u32),
        // v_mad_i32_i24 v2, v0, v1, v3 clamp
        (&[0xd1c28002, 0x040e0300], |a, b, c| {
            (s24(a) * s24(b) + c as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as u32
        }),
        // v_mad_u32_u16 v2, v0, v1, v3
        (&[0xd1f10002, 0x040e0300], |a, b, c| ((a as u16 as u32) * (b as u16 as u32)).wrapping_add(c)),
        // v_mad_i32_i16 v2, v0, v1, v3
        (&[0xd1f20002, 0x040e0300], |a, b, c| ((a as i16 as i32) * (b as i16 as i32)).wrapping_add(c as i32) as u32),
        // v_mad_u32_u16 v2, v0, v1, v3 op_sel:[1,1,0,0]
        (&[0xd1f11802, 0x040e0300], |a, b, c| ((a >> 16) * (b >> 16)).wrapping_add(c)),
        // v_sad_u8 v2, v0, v1, v3
        (&[0xd1d90002, 0x040e0300], |a, b, c| {
            (0..4).map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u32).sum::<u32>().wrapping_add(c)
        }),
        // v_sad_u8 v2, v0, v1, v3 clamp
        (&[0xd1d98002, 0x040e0300], |a, b, c| {
            ((0..4).map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u64).sum::<u64>() + c as u64)
                .min(0xffff_ffff) as u32
        }),
        // v_sad_hi_u8 v2, v0, v1, v3
        (&[0xd1da0002, 0x040e0300], |a, b, c| {
            ((0..4).map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u32).sum::<u32>() << 16)
                .wrapping_add(c)
        }),
        // v_sad_u16 v2, v0, v1, v3
        (&[0xd1db0002, 0x040e0300], |a, b, c| {
            ((a as u16).abs_diff(b as u16) as u32 + ((a >> 16) as u16).abs_diff((b >> 16) as u16) as u32)
                .wrapping_add(c)
        }),
        // v_sad_u32 v2, v0, v1, v3
        (&[0xd1dc0002, 0x040e0300], |a, b, c| a.abs_diff(b).wrapping_add(c)),
        // v_msad_u8 v2, v0, v1, v3
        (&[0xd1e40002, 0x040e0300], |a, b, c| {
            (0..4)
                .filter(|i| (b >> (8 * i)) & 255 != 0)
                .map(|i| ((a >> (8 * i)) as u8).abs_diff((b >> (8 * i)) as u8) as u32)
                .sum::<u32>()
                .wrapping_add(c)
        }),
        // v_sat_pk_u8_i16 v2, v0
        (&[0x7e049f00], |a, _, _| {
            ((a as u16 as i16).clamp(0, 255) as u32) | ((((a >> 16) as u16 as i16).clamp(0, 255) as u32) << 8)
        }),
        // v_add_i16 v2, v0, v1
        (&[0xd29e0002, 0x00020300], |a, b, _| hold(0, (a as i16).wrapping_add(b as i16) as u16)),
        // v_add_i16 v2, v0, v1 op_sel:[1,0,1]
        (&[0xd29e4802, 0x00020300], |a, b, _| hold(16, ((a >> 16) as i16).wrapping_add(b as i16) as u16)),
        // v_add_i16 v2, v0, v1 clamp
        (&[0xd29e8002, 0x00020300], |a, b, _| hold(0, (a as i16).saturating_add(b as i16) as u16)),
        // v_sub_i16 v2, v0, v1 op_sel:[0,1,0]
        (&[0xd29f1002, 0x00020300], |a, b, _| hold(0, (a as i16).wrapping_sub((b >> 16) as i16) as u16)),
        // v_sub_i16 v2, v0, v1 clamp
        (&[0xd29f8002, 0x00020300], |a, b, _| hold(0, (a as i16).saturating_sub(b as i16) as u16)),
        // v_mad_u16 v2, v0, v1, v3
        (&[0xd2040002, 0x040e0300], |a, b, c| hold(0, (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16))),
        // v_mad_u16 v2, v0, v1, v3 op_sel:[0,0,1,1]
        (&[0xd2046002, 0x040e0300], |a, b, c| {
            hold(16, (a as u16).wrapping_mul(b as u16).wrapping_add((c >> 16) as u16))
        }),
        // v_mad_u16 v2, v0, v1, v3 clamp
        (&[0xd2048002, 0x040e0300], |a, b, c| {
            hold(0, ((a as u16 as u64) * (b as u16 as u64) + c as u16 as u64).min(0xffff) as u16)
        }),
        // v_mad_i16 v2, v0, v1, v3
        (&[0xd2050002, 0x040e0300], |a, b, c| hold(0, (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16)),
        // v_mad_i16 v2, v0, v1, v3 clamp
        (&[0xd2058002, 0x040e0300], |a, b, c| {
            hold(0, ((a as i16 as i64) * (b as i16 as i64) + c as i16 as i64).clamp(-32768, 32767) as i16 as u16)
        }),
        // v_min3_u16 v2, v0, v1, v3
        (&[0xd1f60002, 0x040e0300], |a, b, c| hold(0, *[a as u16, b as u16, c as u16].iter().min().unwrap())),
        // v_max3_i16 v2, v0, v1, v3 op_sel:[1,1,1,1]
        (&[0xd1f87802, 0x040e0300], |a, b, c| {
            hold(16, *[(a >> 16) as i16, (b >> 16) as i16, (c >> 16) as i16].iter().max().unwrap() as u16)
        }),
        // v_med3_i16 v2, v0, v1, v3
        (&[0xd1fb0002, 0x040e0300], |a, b, c| {
            hold(0, {
                let mut v = [a as i16, b as i16, c as i16];
                v.sort();
                v[1] as u16
            })
        }),
        // v_med3_u16 v2, v0, v1, v3
        (&[0xd1fc0002, 0x040e0300], |a, b, c| {
            hold(0, {
                let mut v = [a as u16, b as u16, c as u16];
                v.sort();
                v[1]
            })
        }),
        // v_min3_i16 v2, v0, v1, v3
        (&[0xd1f50002, 0x040e0300], |a, b, c| hold(0, *[a as i16, b as i16, c as i16].iter().min().unwrap() as u16)),
        // v_max3_u16 v2, v0, v1, v3
        (&[0xd1f90002, 0x040e0300], |a, b, c| hold(0, *[a as u16, b as u16, c as u16].iter().max().unwrap())),
        // v_mad_legacy_u16 v2, v0, v1, v3
        (&[0xd1eb0002, 0x040e0300], |a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u32),
        // v_mad_legacy_i16 v2, v0, v1, v3
        (&[0xd1ec0002, 0x040e0300], |a, b, c| (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16 as u32),
    ];
    // The encodings are the same on gfx942 (llvm-mc-19 -mcpu=gfx942 agrees).
    for target in [Target::Gfx90a, Target::Gfx942] {
        let mut h = Harness::for_target(target);
        for (words, f) in table {
            for exec in EXECS {
                setup(&mut h, exec);
                h.run(words).unwrap_or_else(|e| panic!("{target:?} {words:x?}: {e}"));
                for l in 0..LANES {
                    let (a, b, c) = (operand(0, l), operand(1, l), operand(2, l));
                    let want = if exec >> l & 1 != 0 { f(a, b, c) } else { SENT };
                    assert_eq!(
                        h.wave.vgpr[2][l], want,
                        "{target:?} {words:x?} lane {l} exec {exec:#x}: a={a:#x} b={b:#x} c={c:#x}"
                    );
                }
            }
        }
    }
}

type CarryRef = fn(u32, u32, bool) -> (u32, bool);

/// Carry ops: `v2, carry-out = op(v0, v1, carry-in)`; the carry-in is VCC
/// in the 32-bit forms and s[6:7] in the 64-bit ones, the carry-out VCC or
/// s[4:5]. Bits of inactive lanes are 0.
#[test]
fn carry_ops_match_reference_formulas() {
    let table: &[(&[u32], bool, CarryRef)] = &[
        // v_add_co_u32_e32 v2, vcc, v0, v1
        (&[0x32040300], true, |a, b, _| {
            let r = a as u64 + b as u64;
            (r as u32, r >> 32 != 0)
        }),
        // v_add_co_u32_e64 v2, s[4:5], v0, v1
        (&[0xd1190402, 0x00020300], false, |a, b, _| {
            let r = a as u64 + b as u64;
            (r as u32, r >> 32 != 0)
        }),
        // v_add_co_u32_e64 v2, s[4:5], v0, v1 clamp
        (&[0xd1198402, 0x00020300], false, |a, b, _| {
            let r = a as u64 + b as u64;
            (r.min(0xffff_ffff) as u32, r >> 32 != 0)
        }),
        // v_sub_co_u32_e32 v2, vcc, v0, v1
        (&[0x34040300], true, |a, b, _| (a.wrapping_sub(b), b > a)),
        // v_sub_co_u32_e64 v2, s[4:5], v0, v1
        (&[0xd11a0402, 0x00020300], false, |a, b, _| (a.wrapping_sub(b), b > a)),
        // v_sub_co_u32_e64 v2, s[4:5], v0, v1 clamp
        (&[0xd11a8402, 0x00020300], false, |a, b, _| (a.saturating_sub(b), b > a)),
        // v_subrev_co_u32_e32 v2, vcc, v0, v1
        (&[0x36040300], true, |a, b, _| (b.wrapping_sub(a), a > b)),
        // v_subrev_co_u32_e64 v2, s[4:5], v0, v1
        (&[0xd11b0402, 0x00020300], false, |a, b, _| (b.wrapping_sub(a), a > b)),
        // v_addc_co_u32_e32 v2, vcc, v0, v1, vcc
        (&[0x38040300], true, |a, b, c| {
            let r = a as u64 + b as u64 + c as u64;
            (r as u32, r >> 32 != 0)
        }),
        // v_addc_co_u32_e64 v2, s[4:5], v0, v1, s[6:7]
        (&[0xd11c0402, 0x001a0300], false, |a, b, c| {
            let r = a as u64 + b as u64 + c as u64;
            (r as u32, r >> 32 != 0)
        }),
        // v_subb_co_u32_e32 v2, vcc, v0, v1, vcc
        (&[0x3a040300], true, |a, b, c| {
            let r = a as i64 - b as i64 - c as i64;
            (r as u32, r < 0)
        }),
        // v_subb_co_u32_e64 v2, s[4:5], v0, v1, s[6:7]
        (&[0xd11d0402, 0x001a0300], false, |a, b, c| {
            let r = a as i64 - b as i64 - c as i64;
            (r as u32, r < 0)
        }),
        // v_subbrev_co_u32_e32 v2, vcc, v0, v1, vcc
        (&[0x3c040300], true, |a, b, c| {
            let r = b as i64 - a as i64 - c as i64;
            (r as u32, r < 0)
        }),
        // v_subbrev_co_u32_e64 v2, s[4:5], v0, v1, s[6:7]
        (&[0xd11e0402, 0x001a0300], false, |a, b, c| {
            let r = b as i64 - a as i64 - c as i64;
            (r as u32, r < 0)
        }),
        // v_add_co_u32_sdwa v2, vcc, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:BYTE_0
        (&[0x320402f9, 0x00050600], true, |a, b, _| {
            let r = (a >> 16) as u64 + (b & 255) as u64;
            (r as u32, r >> 32 != 0)
        }),
        // v_addc_co_u32_dpp v2, vcc, v0, v1, vcc quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf
        (&[0x380402fa, 0xff00e400], true, |a, b, c| {
            let r = a as u64 + b as u64 + c as u64;
            (r as u32, r >> 32 != 0)
        }),
    ];
    let cin: u64 = 0x0123_4567_89ab_cdef;
    let mut h = Harness::new();
    for (words, vcc, f) in table {
        for exec in EXECS {
            setup(&mut h, exec);
            h.wave.vcc = cin;
            h.wave.sgpr[4] = 0x5555_5555;
            h.wave.sgpr[5] = 0x5555_5555;
            h.wave.sgpr[6] = cin as u32;
            h.wave.sgpr[7] = (cin >> 32) as u32;
            h.run(words).unwrap_or_else(|e| panic!("{words:x?}: {e}"));
            let cout = if *vcc { h.wave.vcc } else { h.wave.sgpr[4] as u64 | (h.wave.sgpr[5] as u64) << 32 };
            for l in 0..LANES {
                let (a, b) = (operand(0, l), operand(1, l));
                let (r, c) = f(a, b, cin >> l & 1 != 0);
                let active = exec >> l & 1 != 0;
                let want = if active { r } else { SENT };
                assert_eq!(h.wave.vgpr[2][l], want, "{words:x?} lane {l} exec {exec:#x}: a={a:#x} b={b:#x}");
                assert_eq!(
                    cout >> l & 1 != 0,
                    c && active,
                    "{words:x?} carry of lane {l} exec {exec:#x}: a={a:#x} b={b:#x}"
                );
            }
        }
    }
}

/// A 64-bit operand: pairs of 32-bit edge values.
fn op64(k: usize, l: usize) -> u64 {
    (operand(k, l) as u64) | (operand((k + 1) % 3, l ^ 5) as u64) << 32
}

/// The quad SAD: window k of `x` (bytes k..k+4) against the reference `r`,
/// plus 16-bit accumulator k of `acc`; masked skips reference bytes of 0.
fn qsad_sums(x: u64, r: u32, masked: bool) -> [u64; 4] {
    std::array::from_fn(|k| {
        (0..4)
            .filter(|i| !masked || (r >> (8 * i)) & 255 != 0)
            .map(|i| ((x >> (8 * (k + i))) as u8).abs_diff((r >> (8 * i)) as u8) as u64)
            .sum()
    })
}

fn ref_qsad(x: u64, r: u32, acc: u64, masked: bool) -> u64 {
    let s = qsad_sums(x, r, masked);
    (0..4).map(|k| ((((acc >> (16 * k)) & 0xffff) + s[k]) & 0xffff) << (16 * k)).sum()
}

fn ref_qsad_clamp(x: u64, r: u32, acc: u64) -> u64 {
    let s = qsad_sums(x, r, true);
    (0..4).map(|k| ((((acc >> (16 * k)) & 0xffff) + s[k]).min(0xffff)) << (16 * k)).sum()
}

type Ref64 = fn(u32, u32, u64, u64) -> (u64, bool);

/// 64-bit results: `v[4:5] (, s[10:11]) = op(v0, v1, v[6:7], v[8:9])`.
#[test]
fn wide_ops_match_reference_formulas() {
    let table: &[(Target, &[u32], Ref64)] = &[
        // v_lshlrev_b64 v[4:5], v0, v[6:7]  (gfx90a)
        (Target::Gfx90a, &[0xd28f0004, 0x00020d00], |a, _, x, _| (x << (a % 64), false)),
        // v_lshrrev_b64 v[4:5], v0, v[6:7]  (gfx90a)
        (Target::Gfx90a, &[0xd2900004, 0x00020d00], |a, _, x, _| (x >> (a % 64), false)),
        // v_ashrrev_i64 v[4:5], v0, v[6:7]  (gfx90a)
        (Target::Gfx90a, &[0xd2910004, 0x00020d00], |a, _, x, _| (((x as i64) >> (a % 64)) as u64, false)),
        // v_mad_u64_u32 v[4:5], s[10:11], v0, v1, v[8:9]  (gfx90a)
        (Target::Gfx90a, &[0xd1e80a04, 0x04220300], |a, b, _, y| {
            let r = a as u128 * b as u128 + y as u128;
            (r as u64, r >> 64 != 0)
        }),
        // v_mad_u64_u32 v[4:5], s[10:11], v0, v1, v[8:9] clamp  (gfx90a)
        (Target::Gfx90a, &[0xd1e88a04, 0x04220300], |a, b, _, y| {
            let r = a as u128 * b as u128 + y as u128;
            (r.min(u64::MAX as u128) as u64, r >> 64 != 0)
        }),
        // v_mad_i64_i32 v[4:5], s[10:11], v0, v1, v[8:9]  (gfx90a)
        (Target::Gfx90a, &[0xd1e90a04, 0x04220300], |a, b, _, y| {
            let r = a as i32 as i128 * b as i32 as i128 + y as i64 as i128;
            (r as u64, (r >> 64) & 1 != 0)
        }),
        // v_mad_i64_i32 v[4:5], s[10:11], v0, v1, v[8:9] clamp  (gfx90a)
        (Target::Gfx90a, &[0xd1e98a04, 0x04220300], |a, b, _, y| {
            let r = a as i32 as i128 * b as i32 as i128 + y as i64 as i128;
            (r.clamp(i64::MIN as i128, i64::MAX as i128) as u64, (r >> 64) & 1 != 0)
        }),
        // v_mad_u64_u32 v[4:5], s[10:11], v0, 7, -2  (gfx90a)
        (Target::Gfx90a, &[0xd1e80a04, 0x03090f00], |a, _, _, _| {
            let r = a as u128 * 7 + u64::MAX as u128 - 1;
            (r as u64, r >> 64 != 0)
        }),
        // v_qsad_pk_u16_u8 v[4:5], v[6:7], v0, v[8:9]  (gfx90a)
        (Target::Gfx90a, &[0xd1e50004, 0x04220106], |a, _, x, y| (ref_qsad(x, a, y, false), false)),
        // v_mqsad_pk_u16_u8 v[4:5], v[6:7], v0, v[8:9]  (gfx90a)
        (Target::Gfx90a, &[0xd1e60004, 0x04220106], |a, _, x, y| (ref_qsad(x, a, y, true), false)),
        // v_mqsad_pk_u16_u8 v[4:5], v[6:7], v0, v[8:9] clamp  (gfx90a)
        (Target::Gfx90a, &[0xd1e68004, 0x04220106], |a, _, x, y| (ref_qsad_clamp(x, a, y), false)),
        // v_lshl_add_u64 v[4:5], v[6:7], v0, v[8:9]  (gfx942)
        (Target::Gfx942, &[0xd2080004, 0x04220106], |a, _, x, y| ((x << (a % 8)).wrapping_add(y), false)),
        // v_mov_b64_e32 v[4:5], v[6:7]  (gfx942)
        (Target::Gfx942, &[0x7e087106], |_, _, x, _| (x, false)),
        // v_mov_b64_e64 v[4:5], v[6:7]  (gfx942)
        (Target::Gfx942, &[0xd1780004, 0x00000106], |_, _, x, _| (x, false)),
        // v_mov_b64_e32 v[4:5], -1  (gfx942)
        (Target::Gfx942, &[0x7e0870c1], |_, _, _, _| (u64::MAX, false)),
    ];
    for (target, words, f) in table {
        let mut h = Harness::for_target(*target);
        for exec in EXECS {
            setup(&mut h, exec);
            for (reg, k) in [(6, 0), (8, 1)] {
                h.wave.vgpr[reg] = std::array::from_fn(|l| op64(k, l) as u32);
                h.wave.vgpr[reg + 1] = std::array::from_fn(|l| (op64(k, l) >> 32) as u32);
            }
            h.wave.vgpr[4] = [SENT; LANES];
            h.wave.vgpr[5] = [SENT; LANES];
            h.wave.sgpr[10] = 0x5555_5555;
            h.wave.sgpr[11] = 0x5555_5555;
            h.run(words).unwrap_or_else(|e| panic!("{words:x?}: {e}"));
            let carry = h.wave.sgpr[10] as u64 | (h.wave.sgpr[11] as u64) << 32;
            for l in 0..LANES {
                let (a, b, x, y) = (operand(0, l), operand(1, l), op64(0, l), op64(1, l));
                let (r, c) = f(a, b, x, y);
                let active = exec >> l & 1 != 0;
                let want = if active { r } else { (SENT as u64) << 32 | SENT as u64 };
                let got = h.wave.vgpr[4][l] as u64 | (h.wave.vgpr[5][l] as u64) << 32;
                assert_eq!(got, want, "{words:x?} lane {l} exec {exec:#x}: a={a:#x} b={b:#x} x={x:#x} y={y:#x}");
                if words[0] >> 16 & 0x3ff == 0x1e8 || words[0] >> 16 & 0x3ff == 0x1e9 {
                    assert_eq!(carry >> l & 1 != 0, c && active, "{words:x?} carry lane {l}");
                }
            }
        }
    }
}

/// `v_mqsad_u32_u8 v[12:15], v[6:7], v0, v[16:19]`: four masked SADs
/// accumulated into four dwords (saturated with clamp).
#[test]
fn mqsad_u32_u8_accumulates_four_dwords() {
    // v_mqsad_u32_u8 v[12:15], v[6:7], v0, v[16:19] ; and with clamp
    for (words, clamp) in [([0xd1e7000c, 0x04420106], false), ([0xd1e7800c, 0x04420106], true)] {
        let mut h = Harness::new();
        setup(&mut h, EXECS[1]);
        for k in 0..2 {
            h.wave.vgpr[6 + k] = std::array::from_fn(|l| (op64(0, l) >> (32 * k)) as u32);
        }
        for k in 0..4 {
            h.wave.vgpr[16 + k] = std::array::from_fn(|l| operand(k % 3, l ^ k).wrapping_mul(0x10001 * (k as u32 + 1)));
            h.wave.vgpr[12 + k] = [SENT; LANES];
        }
        h.run(&words).unwrap();
        for l in 0..LANES {
            let s = qsad_sums(op64(0, l), operand(0, l), true);
            for (k, sad) in s.iter().enumerate() {
                let acc = operand(k % 3, l ^ k).wrapping_mul(0x10001 * (k as u32 + 1)) as u64 + sad;
                let want = if EXECS[1] >> l & 1 == 0 {
                    SENT
                } else if clamp {
                    acc.min(u32::MAX as u64) as u32
                } else {
                    acc as u32
                };
                assert_eq!(h.wave.vgpr[12 + k][l], want, "lane {l} dword {k}");
            }
        }
    }
}
