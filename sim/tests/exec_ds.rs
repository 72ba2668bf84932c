//! DS (LDS) instructions on one wave (`Harness`, 64 KiB of LDS).
//!
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`;
//! expected values follow the MI200 ISA pseudo-code, computed here.

use sim::gpu::exec::LANES;
use sim::testing::Harness;

/// ds_write_b32 v1, v2 offset:4
const WRITE_B32: [u32; 2] = [0xd81a0004, 0x00000201];
/// ds_read_b32 v3, v1 offset:4
const READ_B32: [u32; 2] = [0xd86c0004, 0x03000001];
/// ds_write_b64 v1, v[4:5] offset:8
const WRITE_B64: [u32; 2] = [0xd89a0008, 0x00000401];
/// ds_read_b64 v[6:7], v1 offset:8
const READ_B64: [u32; 2] = [0xd8ec0008, 0x06000001];
/// ds_write_b128 v1, v[4:7]
const WRITE_B128: [u32; 2] = [0xd9be0000, 0x00000401];
/// ds_read_b128 v[8:11], v1
const READ_B128: [u32; 2] = [0xd9fe0000, 0x08000001];
/// ds_read_b96 v[8:10], v1
const READ_B96: [u32; 2] = [0xd9fc0000, 0x08000001];
/// ds_write2_b32 v1, v2, v3 offset0:1 offset1:5
const WRITE2_B32: [u32; 2] = [0xd81c0501, 0x00030201];
/// ds_read2_b32 v[6:7], v1 offset0:5 offset1:1
const READ2_B32: [u32; 2] = [0xd86e0105, 0x06000001];
/// ds_write2st64_b64 v1, v[2:3], v[4:5] offset0:1 offset1:2
const WRITE2ST64_B64: [u32; 2] = [0xd89e0201, 0x00040201];
/// ds_read2st64_b64 v[6:9], v1 offset0:2 offset1:1
const READ2ST64_B64: [u32; 2] = [0xd8f00102, 0x06000001];
/// ds_read_i8 v3, v1
const READ_I8: [u32; 2] = [0xd8720000, 0x03000001];
/// ds_read_u16 v3, v1
const READ_U16: [u32; 2] = [0xd8780000, 0x03000001];
/// ds_read_u16_d16_hi v3, v1
const READ_U16_D16_HI: [u32; 2] = [0xd8b60000, 0x03000001];
/// ds_read_i8_d16 v3, v1
const READ_I8_D16: [u32; 2] = [0xd8b00000, 0x03000001];
/// ds_write_b8 v1, v2
const WRITE_B8: [u32; 2] = [0xd83c0000, 0x00000201];
/// ds_write_b16_d16_hi v1, v2
const WRITE_B16_D16_HI: [u32; 2] = [0xd8aa0000, 0x00000201];
/// ds_add_u32 v1, v2
const ADD_U32: [u32; 2] = [0xd8000000, 0x00000201];
/// ds_add_rtn_u32 v3, v1, v2
const ADD_RTN_U32: [u32; 2] = [0xd8400000, 0x03000201];
/// ds_add_u64 v1, v[4:5]
const ADD_U64: [u32; 2] = [0xd8800000, 0x00000401];
/// ds_min_i32 v1, v2
const MIN_I32: [u32; 2] = [0xd80a0000, 0x00000201];
/// ds_min_u64 v1, v[4:5]
const MIN_U64: [u32; 2] = [0xd88e0000, 0x00000401];
/// ds_cmpst_rtn_b32 v3, v1, v2, v4
const CMPST_RTN_B32: [u32; 2] = [0xd8600000, 0x03040201];
/// ds_cmpst_rtn_b64 v[6:7], v1, v[2:3], v[4:5]
const CMPST_RTN_B64: [u32; 2] = [0xd8e00000, 0x06040201];
/// ds_add_f32 v1, v2
const ADD_F32: [u32; 2] = [0xd82a0000, 0x00000201];
/// ds_add_f64 v1, v[4:5]
const ADD_F64: [u32; 2] = [0xd8b80000, 0x00000401];
/// ds_mskor_rtn_b32 v3, v1, v2, v4
const MSKOR_RTN_B32: [u32; 2] = [0xd8580000, 0x03040201];
/// ds_wrap_rtn_b32 v3, v1, v2, v4
const WRAP_RTN_B32: [u32; 2] = [0xd8680000, 0x03040201];
/// ds_wrxchg2_rtn_b32 v[6:7], v1, v2, v3 offset0:1 offset1:2
const WRXCHG2_RTN_B32: [u32; 2] = [0xd85c0201, 0x06030201];
/// ds_max_rtn_f32 v3, v1, v2
const MAX_RTN_F32: [u32; 2] = [0xd8660000, 0x03000201];
/// ds_bpermute_b32 v3, v1, v2
const BPERMUTE: [u32; 2] = [0xd87e0000, 0x03000201];
/// ds_permute_b32 v3, v1, v2
const PERMUTE: [u32; 2] = [0xd87c0000, 0x03000201];
/// ds_swizzle_b32 v3, v2 offset:swizzle(BITMASK_PERM,"01pip")
const SWIZZLE_BITMASK: [u32; 2] = [0xd87a0907, 0x03000002];
/// ds_swizzle_b32 v3, v2 offset:swizzle(QUAD_PERM,3,2,1,0)
const SWIZZLE_QUAD: [u32; 2] = [0xd87a801b, 0x03000002];
/// ds_read_addtid_b32 v3 offset:8
const READ_ADDTID: [u32; 2] = [0xd96c0008, 0x03000000];
/// ds_write_addtid_b32 v2 offset:8
const WRITE_ADDTID: [u32; 2] = [0xd83a0008, 0x00000200];
/// ds_append v3 offset:4
const APPEND: [u32; 2] = [0xd97c0004, 0x03000000];
/// ds_consume v3 offset:4
const CONSUME: [u32; 2] = [0xd97a0004, 0x03000000];
/// ds_write_b32 v1, v2 gds
const WRITE_B32_GDS: [u32; 2] = [0xd81b0000, 0x00000201];
/// ds_read_b32 v3, v1 gds
const READ_B32_GDS: [u32; 2] = [0xd86d0000, 0x03000001];

fn lds32(h: &Harness, a: usize) -> u32 {
    u32::from_le_bytes(h.lds[a..a + 4].try_into().unwrap())
}

fn set_lds32(h: &mut Harness, a: usize, v: u32) {
    h.lds[a..a + 4].copy_from_slice(&v.to_le_bytes());
}

const HOLES: u64 = 0x8000_ffff_0f0f_00f1;

#[test]
fn writes_and_reads_of_every_width() {
    let mut h = Harness::new();
    h.wave.vgpr[1] = std::array::from_fn(|l| 32 * (63 - l) as u32);
    h.wave.vgpr[2] = std::array::from_fn(|l| 0x1000 + l as u32);
    for r in 4..8 {
        h.wave.vgpr[r] = std::array::from_fn(|l| (r as u32) << 16 | l as u32);
    }
    h.wave.exec = HOLES;
    h.run(&WRITE_B32).unwrap();
    h.run(&WRITE_B64).unwrap();
    for l in 0..LANES {
        let a = 32 * (63 - l);
        let on = HOLES >> l & 1 != 0;
        assert_eq!(lds32(&h, a + 4), if on { 0x1000 + l as u32 } else { 0 });
        assert_eq!(lds32(&h, a + 12), if on { 5 << 16 | l as u32 } else { 0 });
    }
    h.wave.vgpr[3] = [7; LANES];
    h.run(&READ_B32).unwrap();
    h.run(&READ_B64).unwrap();
    for l in 0..LANES {
        let on = HOLES >> l & 1 != 0;
        assert_eq!(h.wave.vgpr[3][l], if on { 0x1000 + l as u32 } else { 7 });
        assert_eq!(h.wave.vgpr[7][l], if on { 5 << 16 | l as u32 } else { 7 << 16 | l as u32 });
    }
    h.wave.exec = u64::MAX;
    h.run(&WRITE_B128).unwrap();
    h.run(&READ_B128).unwrap();
    for r in 0..4 {
        assert_eq!(h.wave.vgpr[8 + r], h.wave.vgpr[4 + r]);
    }
    h.wave.vgpr[11] = [0; LANES];
    h.run(&READ_B96).unwrap();
    assert_eq!(h.wave.vgpr[11], [0; LANES], "b96 reads three registers");
    assert_eq!(h.wave.vgpr[10], h.wave.vgpr[6]);
}

#[test]
fn out_of_range_reads_zero_and_writes_vanish() {
    let mut h = Harness::new();
    h.lds.truncate(1024);
    h.wave.vgpr[1] = std::array::from_fn(|l| if l < 2 { 1016 + 2 * l as u32 } else { 5000 });
    h.wave.vgpr[2] = [0xabcd_ef01; LANES];
    h.wave.exec = 0b111;
    h.run(&WRITE_B32).unwrap(); // offset 4: lane 0 at 1020, lane 1 at 1022 (straddles: dropped), lane 2 beyond
    assert_eq!(lds32(&h, 1020), 0xabcd_ef01);
    h.wave.vgpr[1][1] = 1020 - 4;
    h.run(&READ_B32).unwrap();
    assert_eq!(&h.wave.vgpr[3][..3], &[0xabcd_ef01, 0xabcd_ef01, 0]);
    // The GDS has no memory: writes vanish, reads are 0.
    h.run(&WRITE_B32_GDS).unwrap();
    h.wave.vgpr[1] = [0; LANES];
    h.run(&READ_B32_GDS).unwrap();
    assert_eq!(&h.wave.vgpr[3][..3], &[0, 0, 0]);
}

#[test]
fn two_address_forms_scale_their_offsets() {
    let mut h = Harness::new();
    h.wave.vgpr[1] = std::array::from_fn(|l| 64 * l as u32);
    h.wave.vgpr[2] = std::array::from_fn(|l| l as u32);
    h.wave.vgpr[3] = std::array::from_fn(|l| 100 + l as u32);
    h.run(&WRITE2_B32).unwrap();
    assert_eq!(lds32(&h, 64 * 3 + 4), 3);
    assert_eq!(lds32(&h, 64 * 3 + 20), 103);
    h.run(&READ2_B32).unwrap();
    assert_eq!((h.wave.vgpr[6][9], h.wave.vgpr[7][9]), (109, 9));

    // st64 b64: offsets in units of 64 * 8 bytes.
    let mut h = Harness::new();
    h.wave.exec = 0b11;
    h.wave.vgpr[1] = [0, 8, 0, 0].into_iter().chain([0; 60]).collect::<Vec<_>>().try_into().unwrap();
    h.wave.vgpr[2][..2].copy_from_slice(&[1, 2]);
    h.wave.vgpr[3][..2].copy_from_slice(&[3, 4]);
    h.wave.vgpr[4][..2].copy_from_slice(&[5, 6]);
    h.wave.vgpr[5][..2].copy_from_slice(&[7, 8]);
    h.run(&WRITE2ST64_B64).unwrap();
    assert_eq!([lds32(&h, 512), lds32(&h, 516), lds32(&h, 1024), lds32(&h, 1028)], [1, 3, 5, 7]);
    assert_eq!([lds32(&h, 520), lds32(&h, 524), lds32(&h, 1032), lds32(&h, 1036)], [2, 4, 6, 8]);
    h.run(&READ2ST64_B64).unwrap();
    assert_eq!([h.wave.vgpr[6][1], h.wave.vgpr[7][1], h.wave.vgpr[8][1], h.wave.vgpr[9][1]], [6, 8, 2, 4]);
}

#[test]
fn sub_dword_reads_and_writes() {
    let mut h = Harness::new();
    h.lds[..4].copy_from_slice(&[0x81, 0x7f, 0xfe, 0xff]);
    h.wave.vgpr[1] = std::array::from_fn(|l| (l % 4) as u32);
    h.run(&READ_I8).unwrap();
    assert_eq!(&h.wave.vgpr[3][..4], &[0xffff_ff81, 0x7f, 0xffff_fffe, 0xffff_ffff]);
    h.wave.vgpr[1] = std::array::from_fn(|l| (l % 3) as u32);
    h.run(&READ_U16).unwrap();
    assert_eq!(&h.wave.vgpr[3][..3], &[0x7f81, 0xfe7f, 0xfffe]);
    // d16 reads on the MI210 (SRAM ECC on) zero the other half; without SRAM ECC they keep it.
    h.wave.vgpr[3] = [0x1234_5678; LANES];
    h.run(&READ_U16_D16_HI).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 0x7f81_0000);
    h.wave.vgpr[3] = [0x1234_5678; LANES];
    h.run(&READ_I8_D16).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 0x0000_ff81, "sign-extended to 16 bits only");
    h.set_d16_preserves_unused(true);
    h.wave.vgpr[3] = [0x1234_5678; LANES];
    h.run(&READ_U16_D16_HI).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 0x7f81_5678);
    h.wave.vgpr[3] = [0x1234_5678; LANES];
    h.run(&READ_I8_D16).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 0x1234_ff81);
    h.set_d16_preserves_unused(false);
    h.wave.exec = 1;
    h.wave.vgpr[1][0] = 100;
    h.wave.vgpr[2][0] = 0xaabb_ccdd;
    h.run(&WRITE_B8).unwrap();
    h.wave.vgpr[1][0] = 101;
    h.run(&WRITE_B16_D16_HI).unwrap();
    assert_eq!(lds32(&h, 100), 0x00aa_bbdd);
}

#[test]
fn integer_atomics() {
    let mut h = Harness::new();
    // Every lane adds to one word: lanes go in order.
    h.wave.vgpr[1] = [16; LANES];
    h.wave.vgpr[2] = std::array::from_fn(|l| l as u32 + 1);
    set_lds32(&mut h, 16, 1000);
    h.run(&ADD_RTN_U32).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[3][l], 1000 + (1..=l as u32).sum::<u32>());
    }
    h.wave.exec = 0b1;
    h.run(&ADD_U32).unwrap();
    assert_eq!(lds32(&h, 16), 1000 + 2080 + 1);

    // 64-bit add carries across the halves; min_u64 is unsigned; min_i32 signed.
    h.wave.vgpr[1][0] = 32;
    set_lds32(&mut h, 32, u32::MAX);
    h.wave.vgpr[4][0] = 1;
    h.wave.vgpr[5][0] = 0;
    h.run(&ADD_U64).unwrap();
    assert_eq!((lds32(&h, 32), lds32(&h, 36)), (0, 1));
    h.wave.vgpr[4][0] = 5;
    h.wave.vgpr[5][0] = 0xffff_ffff;
    h.run(&MIN_U64).unwrap();
    assert_eq!((lds32(&h, 32), lds32(&h, 36)), (0, 1));
    h.wave.vgpr[2][0] = (-3i32) as u32;
    h.run(&MIN_I32).unwrap();
    assert_eq!(lds32(&h, 32), (-3i32) as u32);

    // cmpst: data0 (v2) is the compare value, data1 (v4) the new value.
    h.wave.exec = 0b11;
    h.wave.vgpr[1][..2].copy_from_slice(&[64, 68]);
    set_lds32(&mut h, 64, 9);
    set_lds32(&mut h, 68, 9);
    h.wave.vgpr[2][..2].copy_from_slice(&[9, 8]);
    h.wave.vgpr[4][..2].copy_from_slice(&[50, 60]);
    h.run(&CMPST_RTN_B32).unwrap();
    assert_eq!(&h.wave.vgpr[3][..2], &[9, 9]);
    assert_eq!((lds32(&h, 64), lds32(&h, 68)), (50, 9));
    h.wave.exec = 1;
    h.wave.vgpr[2][0] = 50;
    h.wave.vgpr[3][0] = 9;
    h.wave.vgpr[4][0] = 0xdead;
    h.wave.vgpr[5][0] = 0xbeef;
    h.run(&CMPST_RTN_B64).unwrap();
    assert_eq!((h.wave.vgpr[6][0], h.wave.vgpr[7][0]), (50, 9));
    assert_eq!((lds32(&h, 64), lds32(&h, 68)), (0xdead, 0xbeef));

    // mskor: (old & ~mask) | data; wrap: old >= d ? old - d : old + d2.
    set_lds32(&mut h, 64, 0xff00_ff00);
    h.wave.vgpr[2][0] = 0x0000_ffff;
    h.wave.vgpr[4][0] = 0x0000_0012;
    h.run(&MSKOR_RTN_B32).unwrap();
    assert_eq!(lds32(&h, 64), 0xff00_0012);
    set_lds32(&mut h, 64, 5);
    h.wave.vgpr[2][0] = 7;
    h.wave.vgpr[4][0] = 100;
    h.run(&WRAP_RTN_B32).unwrap();
    assert_eq!(lds32(&h, 64), 105);
    h.run(&WRAP_RTN_B32).unwrap();
    assert_eq!((h.wave.vgpr[3][0], lds32(&h, 64)), (105, 98));

    // wrxchg2: two exchanges, old values back in v[6:7].
    h.wave.vgpr[1][0] = 0x200;
    set_lds32(&mut h, 0x204, 11);
    set_lds32(&mut h, 0x208, 22);
    h.wave.vgpr[2][0] = 33;
    h.wave.vgpr[3][0] = 44;
    h.run(&WRXCHG2_RTN_B32).unwrap();
    assert_eq!((h.wave.vgpr[6][0], h.wave.vgpr[7][0]), (11, 22));
    assert_eq!((lds32(&h, 0x204), lds32(&h, 0x208)), (33, 44));
}

#[test]
fn float_atomics_follow_mode() {
    let mut h = Harness::new();
    h.wave.exec = 1;
    h.wave.vgpr[1][0] = 0;
    let den = 0x0000_0010u32;
    set_lds32(&mut h, 0, den);
    h.wave.vgpr[2][0] = den;
    h.wave.mode = 0xf0; // f32 and f64 denormals allowed
    h.run(&ADD_F32).unwrap();
    assert_eq!(lds32(&h, 0), 2 * den);
    h.wave.mode = 0xc0; // f32 denormals flushed
    h.run(&ADD_F32).unwrap();
    assert_eq!(lds32(&h, 0), 0);
    // f64 add keeps denormals.
    h.lds[8..16].copy_from_slice(&1u64.to_le_bytes());
    h.wave.vgpr[1][0] = 8;
    h.wave.vgpr[4][0] = 1;
    h.wave.vgpr[5][0] = 0;
    h.run(&ADD_F64).unwrap();
    assert_eq!(u64::from_le_bytes(h.lds[8..16].try_into().unwrap()), 2);
    // max: a NaN operand loses; +0 is above -0.
    h.wave.vgpr[1][0] = 32;
    set_lds32(&mut h, 32, f32::NAN.to_bits());
    h.wave.vgpr[2][0] = (-1.0f32).to_bits();
    h.run(&MAX_RTN_F32).unwrap();
    assert!(f32::from_bits(h.wave.vgpr[3][0]).is_nan());
    assert_eq!(f32::from_bits(lds32(&h, 32)), -1.0);
    set_lds32(&mut h, 32, (-0.0f32).to_bits());
    h.wave.vgpr[2][0] = 0.0f32.to_bits();
    h.run(&MAX_RTN_F32).unwrap();
    assert_eq!(lds32(&h, 32), 0);
}

#[test]
fn lane_exchanges() {
    let mut h = Harness::new();
    h.wave.vgpr[2] = std::array::from_fn(|l| 100 + l as u32);
    // bpermute: lane l reads lane (63 - l); inactive sources give 0.
    h.wave.vgpr[1] = std::array::from_fn(|l| 4 * (63 - l) as u32 + 256); // wraps mod 64 lanes
    h.wave.exec = !(1u64 << 60);
    h.run(&BPERMUTE).unwrap();
    for l in 0..LANES {
        let want = if l == 60 {
            h.wave.vgpr[3][60]
        } else if 63 - l == 60 {
            0
        } else {
            100 + (63 - l) as u32
        };
        assert_eq!(h.wave.vgpr[3][l], want, "lane {l}");
    }
    // permute: lane l sends to lane (l + 1) % 64.
    h.wave.exec = u64::MAX;
    h.wave.vgpr[1] = std::array::from_fn(|l| 4 * ((l + 1) % 64) as u32);
    h.run(&PERMUTE).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[3][l], 100 + ((l + 63) % 64) as u32);
    }
    // swizzle "01pip": bit4 = 0, bit3 = 1, bit2 kept, bit1 inverted, bit0 kept (within 32 lanes).
    h.run(&SWIZZLE_BITMASK).unwrap();
    for l in 0..LANES {
        let j = (l & 0x20) | 8 | (l & 4) | (!l & 2) | (l & 1);
        assert_eq!(h.wave.vgpr[3][l], 100 + j as u32, "lane {l}");
    }
    h.run(&SWIZZLE_QUAD).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[3][l], 100 + ((l & !3) + 3 - (l & 3)) as u32);
    }
}

#[test]
fn addtid_and_append_use_m0() {
    let mut h = Harness::new();
    h.wave.m0 = 0x100;
    h.wave.vgpr[2] = std::array::from_fn(|l| l as u32 * 11);
    h.wave.exec = HOLES;
    h.run(&WRITE_ADDTID).unwrap();
    assert_eq!(lds32(&h, 0x108 + 4 * 63), 63 * 11);
    assert_eq!(lds32(&h, 0x108 + 4), 0, "lane 1 is off");
    h.run(&READ_ADDTID).unwrap();
    assert_eq!(h.wave.vgpr[3][4], 44);
    // append/consume: a counter at M0 + offset moves by the active lane count.
    set_lds32(&mut h, 0x104, 10);
    h.run(&APPEND).unwrap();
    assert_eq!(h.wave.vgpr[3][0], 10);
    assert_eq!(lds32(&h, 0x104), 10 + HOLES.count_ones());
    h.wave.exec = 0b11;
    h.run(&CONSUME).unwrap();
    assert_eq!(lds32(&h, 0x104), 8 + HOLES.count_ones());
}

/// `ds_condxchg32_rtn_b64 v[16:17], v32, v[48:49] offset:128` (CDNA3/CDNA4 guide pseudocode):
/// the pair at `(addr + offset) & 0xfff8` is returned, and each dword is replaced by the
/// low 31 bits of its data dword only when that dword's bit 31 is set.
#[test]
fn condxchg32_exchanges_flagged_dwords_of_an_aligned_pair() {
    let mut h = Harness::new();
    h.wave.exec = !0x10; // lane 4 inactive
    for l in 0..LANES {
        // Unaligned addresses: the low 3 bits of addr + offset are dropped.
        h.wave.vgpr[32][l] = (l as u32) * 8 + (l as u32 % 8);
        let base = 128 + l * 8;
        set_lds32(&mut h, base, 0x1000 + l as u32);
        set_lds32(&mut h, base + 4, 0x2000 + l as u32);
        let flag = |bit: usize| if (l >> bit) & 1 != 0 { 0x8000_0000 } else { 0 };
        h.wave.vgpr[48][l] = flag(0) | 0x7000_0000 | l as u32;
        h.wave.vgpr[49][l] = flag(1) | 0x0abc_0000 | l as u32;
        h.wave.vgpr[16][l] = 0xdead;
        h.wave.vgpr[17][l] = 0xbeef;
    }
    h.run(&[0xd8fc0080, 0x10003020]).unwrap();
    for l in 0..LANES {
        let base = 128 + l * 8;
        if l == 4 {
            assert_eq!((h.wave.vgpr[16][l], h.wave.vgpr[17][l]), (0xdead, 0xbeef), "inactive lane");
            assert_eq!((lds32(&h, base), lds32(&h, base + 4)), (0x1004, 0x2004));
            continue;
        }
        assert_eq!((h.wave.vgpr[16][l], h.wave.vgpr[17][l]), (0x1000 + l as u32, 0x2000 + l as u32), "lane {l}");
        let lo = if l & 1 != 0 { 0x7000_0000 | l as u32 } else { 0x1000 + l as u32 };
        let hi = if l & 2 != 0 { 0x0abc_0000 | l as u32 } else { 0x2000 + l as u32 };
        assert_eq!((lds32(&h, base), lds32(&h, base + 4)), (lo, hi), "lane {l}");
    }
}
