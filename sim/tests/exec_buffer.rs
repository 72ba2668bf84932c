//! MUBUF/MTBUF instructions on one wave (`Harness`): addressing, range
//! checks, typed formats, LDS forms and the private buffer window.
//!
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`
//! (gfx942 forms from `llvm-mc-19 -mcpu=gfx942`); expected values follow the
//! MI200 ISA's buffer addressing and range-checking rules, computed here.

use sim::gpu::exec::memory::PRIVATE_BUFFER_BASE;
use sim::gpu::exec::LANES;
use sim::isa::Target;
use sim::testing::{Harness, MEM_BASE};

/// buffer_load_dword v1, v2, s[8:11], 0 offen
const LOAD_DWORD_OFFEN: [u32; 2] = [0xe0501000, 0x80020102];
/// buffer_load_dword v1, v2, s[8:11], s4 offen offset:4
const LOAD_DWORD_SOFF: [u32; 2] = [0xe0501004, 0x04020102];
/// buffer_load_dwordx4 v[4:7], v2, s[8:11], 0 offen
const LOAD_DWORDX4_OFFEN: [u32; 2] = [0xe05c1000, 0x80020402];
/// buffer_store_dword v1, v2, s[8:11], 0 offen
const STORE_DWORD_OFFEN: [u32; 2] = [0xe0701000, 0x80020102];
/// buffer_store_dwordx2 v[4:5], v2, s[8:11], 0 offen offset:8
const STORE_DWORDX2_OFFEN: [u32; 2] = [0xe0741008, 0x80020402];
/// buffer_load_dword v1, v2, s[8:11], 0 idxen
const LOAD_DWORD_IDXEN: [u32; 2] = [0xe0502000, 0x80020102];
/// buffer_load_dword v1, v[2:3], s[8:11], 0 idxen offen
const LOAD_DWORD_IDXEN_OFFEN: [u32; 2] = [0xe0503000, 0x80020102];
/// buffer_load_dword v1, off, s[8:11], 0 offset:16
const LOAD_DWORD_OFF: [u32; 2] = [0xe0500010, 0x80020100];
/// buffer_load_dword v2, s[8:11], 0 offen lds
const LOAD_DWORD_LDS: [u32; 2] = [0xe0511000, 0x80020002];
/// buffer_load_sshort v1, v2, s[8:11], 0 offen
const LOAD_SSHORT: [u32; 2] = [0xe04c1000, 0x80020102];
/// buffer_load_short_d16_hi v1, v2, s[8:11], 0 offen
const LOAD_SHORT_D16_HI: [u32; 2] = [0xe0941000, 0x80020102];
/// buffer_store_byte v1, v2, s[8:11], 0 offen
const STORE_BYTE: [u32; 2] = [0xe0601000, 0x80020102];
/// buffer_atomic_add v1, v2, s[8:11], 0 offen glc
const ATOMIC_ADD_RTN: [u32; 2] = [0xe1085000, 0x80020102];
/// buffer_atomic_cmpswap v[4:5], v2, s[8:11], 0 offen glc
const ATOMIC_CMPSWAP_RTN: [u32; 2] = [0xe1045000, 0x80020402];
/// buffer_load_format_xyzw v[4:7], v2, s[8:11], 0 idxen
const LOAD_FORMAT_XYZW: [u32; 2] = [0xe00c2000, 0x80020402];
/// buffer_store_format_xyzw v[4:7], v2, s[8:11], 0 idxen
const STORE_FORMAT_XYZW: [u32; 2] = [0xe01c2000, 0x80020402];
/// buffer_load_format_xy v[4:5], v2, s[8:11], 0 idxen
const LOAD_FORMAT_XY: [u32; 2] = [0xe0042000, 0x80020402];
/// buffer_load_format_d16_xyzw v[4:5], v2, s[8:11], 0 idxen
const LOAD_FORMAT_D16_XYZW: [u32; 2] = [0xe02c2000, 0x80020402];
/// buffer_load_format_d16_hi_x v4, v2, s[8:11], 0 idxen
const LOAD_FORMAT_D16_HI_X: [u32; 2] = [0xe0982000, 0x80020402];
/// buffer_store_format_d16_xy v4, v2, s[8:11], 0 idxen
const STORE_FORMAT_D16_XY: [u32; 2] = [0xe0342000, 0x80020402];
/// tbuffer_load_format_xyzw v[4:7], v2, s[8:11], 0 format:[BUF_DATA_FORMAT_8_8_8_8,BUF_NUM_FORMAT_UNORM] idxen
const TBUFFER_LOAD_XYZW_8888_UNORM: [u32; 2] = [0xe851a000, 0x80020402];
/// tbuffer_store_format_xy v[4:5], v2, s[8:11], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SINT] idxen
const TBUFFER_STORE_XY_16_16_SINT: [u32; 2] = [0xeaaaa000, 0x80020402];
/// tbuffer_load_format_d16_x v4, v2, s[8:11], 0 format:[BUF_DATA_FORMAT_16,BUF_NUM_FORMAT_FLOAT] idxen
const TBUFFER_LOAD_D16_X_16_FLOAT: [u32; 2] = [0xeb942000, 0x80020402];
/// buffer_wbinvl1_vol
const WBINVL1_VOL: [u32; 2] = [0xe0fc0000, 0x00000000];
/// buffer_store_dword v1, v3, s[0:3], 0 offen
const PRIV_STORE: [u32; 2] = [0xe0701000, 0x80000103];
/// buffer_load_dword v2, v3, s[0:3], 0 offen
const PRIV_LOAD: [u32; 2] = [0xe0501000, 0x80000203];
/// buffer_load_dword v1, v2, s[8:11], 0 offen sc0 nt sc1 (llvm-mc-19 -mcpu=gfx942)
const GFX942_LOAD_SC: [u32; 2] = [0xe052d000, 0x80020102];
/// buffer_atomic_add v1, v2, s[8:11], 0 offen sc0 (llvm-mc-19 -mcpu=gfx942)
const GFX942_ATOMIC_ADD_SC0: [u32; 2] = [0xe1085000, 0x80020102];
/// buffer_inv sc1 (llvm-mc-19 -mcpu=gfx942)
const GFX942_BUFFER_INV: [u32; 2] = [0xe0a48000, 0x00000000];

/// DST_SEL X, Y, Z, W (4, 5, 6, 7).
const SEL_XYZW: u32 = 4 | 5 << 3 | 6 << 6 | 7 << 9;

/// Writes a V# to s[8:11].
fn vsharp(h: &mut Harness, base: u64, stride: u32, num_records: u32, word3: u32) {
    h.wave.sgpr[8] = base as u32;
    h.wave.sgpr[9] = (base >> 32) as u32 & 0xffff | stride << 16;
    h.wave.sgpr[10] = num_records;
    h.wave.sgpr[11] = word3;
}

fn fill_words(h: &Harness, va: u64, n: u32) {
    let bytes: Vec<u8> = (0..n).flat_map(|i| (0x1000 + i).to_le_bytes()).collect();
    h.write_mem(va, &bytes);
}

#[test]
fn raw_buffers_check_range_per_dword_with_soffset() {
    let mut h = Harness::new();
    fill_words(&h, MEM_BASE, 256);
    vsharp(&mut h, MEM_BASE, 0, 64, SEL_XYZW);
    h.wave.vgpr[2] = std::array::from_fn(|l| 4 * l as u32);
    h.wave.vgpr[1] = [0xffff; LANES];
    h.run(&LOAD_DWORD_OFFEN).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[1][l], if l < 16 { 0x1000 + l as u32 } else { 0 }, "lane {l}");
    }
    // soffset moves the address and counts in the range check: soffset + offset + 4 <= 64
    // (offset = 4 * lane + offset:4), so lanes 0..=10.
    h.wave.sgpr[4] = 16;
    h.run(&LOAD_DWORD_SOFF).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[1][l], if l <= 10 { 0x1000 + 5 + l as u32 } else { 0 }, "lane {l}");
    }
    // An soffset past num_records: nothing in range, whatever the lane offset.
    h.wave.sgpr[4] = 400;
    h.run(&LOAD_DWORD_SOFF).unwrap();
    assert_eq!(h.wave.vgpr[1], [0; LANES]);
    // x4 at offset 56: two dwords in range, two out.
    h.wave.vgpr[2][0] = 56;
    h.wave.exec = 1;
    h.run(&LOAD_DWORDX4_OFFEN).unwrap();
    assert_eq!([h.wave.vgpr[4][0], h.wave.vgpr[5][0], h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [0x100e, 0x100f, 0, 0]);
    // Stores out of range are dropped, per dword.
    h.wave.vgpr[4][0] = 7;
    h.wave.vgpr[5][0] = 8;
    h.wave.vgpr[2][0] = 52; // + offset:8 → 60: first dword in, second out
    h.run(&STORE_DWORDX2_OFFEN).unwrap();
    assert_eq!((h.read_u32(MEM_BASE + 60), h.read_u32(MEM_BASE + 64)), (7, 0x1010));
    // No vaddr: the instruction offset alone.
    h.wave.exec = u64::MAX;
    h.run(&LOAD_DWORD_OFF).unwrap();
    assert_eq!(h.wave.vgpr[1], [0x1004; LANES]);
    h.run(&WBINVL1_VOL).unwrap();
}

#[test]
fn structured_buffers_check_the_index() {
    let mut h = Harness::new();
    fill_words(&h, MEM_BASE, 1024);
    vsharp(&mut h, MEM_BASE, 12, 40, SEL_XYZW);
    h.wave.vgpr[2] = std::array::from_fn(|l| l as u32);
    h.run(&LOAD_DWORD_IDXEN).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[1][l], if l < 40 { 0x1000 + 3 * l as u32 } else { 0 });
    }
    // idxen + offen: v2 index, v3 offset.
    h.wave.vgpr[3] = [8; LANES];
    h.run(&LOAD_DWORD_IDXEN_OFFEN).unwrap();
    assert_eq!(h.wave.vgpr[1][5], 0x1000 + 15 + 2);
    // Swizzled with ADD_TID: index = lane, index stride 8, 4-byte elements.
    let word3 = SEL_XYZW | 1 << 23; // INDEX_STRIDE 8, ADD_TID_ENABLE
    vsharp(&mut h, MEM_BASE, 16, 64, word3);
    h.wave.sgpr[9] |= 1 << 31;
    h.wave.vgpr[2] = [4; LANES]; // offset 4: second element of each record
    h.run(&LOAD_DWORD_OFFEN).unwrap();
    for l in 0..LANES {
        let addr = ((l / 8) * 16 + 4) * 8 + (l % 8) * 4;
        assert_eq!(h.wave.vgpr[1][l], 0x1000 + addr as u32 / 4, "lane {l}");
    }
}

#[test]
fn sub_dword_forms_and_lds_loads() {
    let mut h = Harness::new();
    h.write_mem(MEM_BASE, &[0x00, 0x80, 0xff, 0x7f]);
    vsharp(&mut h, MEM_BASE, 0, 4, SEL_XYZW);
    h.wave.vgpr[2] = std::array::from_fn(|l| [0, 2, 3][l % 3]);
    h.wave.vgpr[1] = [0x1111_2222; LANES];
    h.run(&LOAD_SSHORT).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0xffff_8000, 0x7fff, 0], "offset 3 + 2 bytes > 4 records");
    // d16 on the MI210 (SRAM ECC on): the other half becomes zero, out-of-range lanes too.
    h.wave.vgpr[1] = [0x1111_2222; LANES];
    h.run(&LOAD_SHORT_D16_HI).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0x8000_0000, 0x7fff_0000, 0x0000_0000]);
    // Without SRAM ECC the other half is kept.
    h.set_d16_preserves_unused(true);
    h.wave.vgpr[1] = [0x1111_2222; LANES];
    h.run(&LOAD_SHORT_D16_HI).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0x8000_2222, 0x7fff_2222, 0x0000_2222]);
    h.set_d16_preserves_unused(false);
    h.wave.vgpr[1] = [0xabcd; LANES];
    h.wave.exec = 0b10;
    h.run(&STORE_BYTE).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 0x7fcd_8000);
    // LDS form: lane l's dword lands at M0 + offset + 4 * l.
    fill_words(&h, MEM_BASE + 0x100, 64);
    vsharp(&mut h, MEM_BASE + 0x100, 0, 256, SEL_XYZW);
    h.wave.exec = u64::MAX;
    h.wave.m0 = 0x1_0040; // only M0[15:0] counts
    h.wave.vgpr[2] = std::array::from_fn(|l| 4 * (63 - l) as u32);
    h.run(&LOAD_DWORD_LDS).unwrap();
    for l in 0..LANES {
        let got = u32::from_le_bytes(h.lds[0x40 + 4 * l..0x44 + 4 * l].try_into().unwrap());
        assert_eq!(got, if 63 - l < 64 { 0x1000 + (63 - l) as u32 } else { 0 });
    }
}

#[test]
fn atomics_are_all_or_nothing() {
    let mut h = Harness::new();
    fill_words(&h, MEM_BASE, 16);
    vsharp(&mut h, MEM_BASE, 0, 16, SEL_XYZW);
    h.wave.exec = 0b111;
    h.wave.vgpr[2][..3].copy_from_slice(&[0, 12, 14]);
    h.wave.vgpr[1][..3].copy_from_slice(&[5, 6, 7]);
    h.run(&ATOMIC_ADD_RTN).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0x1000, 0x1003, 0]);
    assert_eq!((h.read_u32(MEM_BASE), h.read_u32(MEM_BASE + 12)), (0x1005, 0x1009));
    assert_eq!(h.read_u32(MEM_BASE + 16), 0x1004, "lane 2 is out of range");
    // cmpswap: v4 new value, v5 compare.
    h.wave.vgpr[4][..3].copy_from_slice(&[1, 2, 3]);
    h.wave.vgpr[5][..3].copy_from_slice(&[0x1005, 0, 0]);
    h.run(&ATOMIC_CMPSWAP_RTN).unwrap();
    assert_eq!(&h.wave.vgpr[4][..3], &[0x1005, 0x1009, 0]);
    assert_eq!((h.read_u32(MEM_BASE), h.read_u32(MEM_BASE + 12)), (1, 0x1009));
}

#[test]
fn typed_loads_apply_dst_sel_and_stores_undo_it() {
    let mut h = Harness::new();
    // 8_8_8_8 unorm, DST_SEL = (Z, Y, X, 1): a BGRA view.
    let sel = 6 | 5 << 3 | 4 << 6 | 1 << 9;
    let word3 = sel | 10 << 15; // NUM_FORMAT unorm (0)
    vsharp(&mut h, MEM_BASE, 4, 2, word3);
    h.write_mem(MEM_BASE, &[0, 51, 255, 17, 255, 0, 0, 0]);
    h.wave.vgpr[2] = std::array::from_fn(|l| l as u32);
    h.run(&LOAD_FORMAT_XYZW).unwrap();
    let f = |h: &Harness, r: usize, l: usize| f32::from_bits(h.wave.vgpr[r][l]);
    assert_eq!([f(&h, 4, 0), f(&h, 5, 0), f(&h, 6, 0), f(&h, 7, 0)], [1.0, 0.2, 0.0, 1.0]);
    assert_eq!([f(&h, 4, 1), f(&h, 5, 1), f(&h, 6, 1), f(&h, 7, 1)], [0.0, 0.0, 1.0, 1.0]);
    assert_eq!([f(&h, 4, 2), f(&h, 5, 2), f(&h, 6, 2), f(&h, 7, 2)], [0.0; 4], "index 2 >= num_records");
    // Store back (0.5, 0.25, 1.5, x): memory X gets register Z (sel Z→X), the
    // W component is selected by nobody and stores 0.
    h.wave.exec = 1;
    h.wave.vgpr[4][0] = 0.5f32.to_bits();
    h.wave.vgpr[5][0] = 0.25f32.to_bits();
    h.wave.vgpr[6][0] = 1.5f32.to_bits();
    h.wave.vgpr[7][0] = 0.75f32.to_bits();
    h.run(&STORE_FORMAT_XYZW).unwrap();
    let mut b = [0u8; 4];
    h.read_mem(MEM_BASE, &mut b);
    assert_eq!(b, [255, 64, 128, 0]);
    // Two components only.
    h.run(&LOAD_FORMAT_XY).unwrap();
    assert_eq!((f(&h, 4, 0), f(&h, 5, 0)), (128.0 / 255.0, 64.0 / 255.0));
    // d16: packed f16 halves.
    h.run(&LOAD_FORMAT_D16_XYZW).unwrap();
    assert_eq!(h.wave.vgpr[5][0] >> 16, 0x3c00, "W = one = 1.0 in f16");
    h.wave.vgpr[4][0] = 0x1234_5678;
    h.run(&LOAD_FORMAT_D16_HI_X).unwrap();
    assert_eq!(h.wave.vgpr[4][0], 0x3804_0000, "X = memory Z = 128/255 as f16, low half zeroed (SRAM ECC)");
    h.set_d16_preserves_unused(true);
    h.wave.vgpr[4][0] = 0x1234_5678;
    h.run(&LOAD_FORMAT_D16_HI_X).unwrap();
    assert_eq!(h.wave.vgpr[4][0], 0x3804_5678, "low half kept without SRAM ECC");
    h.set_d16_preserves_unused(false);
    // d16 store: 0.0 and 1.0 as f16 → Z = 0 (from X), Y = 255.
    h.wave.vgpr[4][0] = 0x3c00_0000;
    h.run(&STORE_FORMAT_D16_XY).unwrap();
    h.read_mem(MEM_BASE, &mut b);
    assert_eq!(b, [0, 255, 0, 0]);
}

#[test]
fn typed_buffer_instructions_carry_their_format() {
    let mut h = Harness::new();
    vsharp(&mut h, MEM_BASE, 4, 100, SEL_XYZW | 4 << 15); // descriptor says 32; the instruction wins
    h.write_mem(MEM_BASE, &[255, 0, 128, 64]);
    h.wave.exec = 1;
    h.wave.vgpr[2][0] = 0;
    h.run(&TBUFFER_LOAD_XYZW_8888_UNORM).unwrap();
    let f = |r: usize| f32::from_bits(h.wave.vgpr[r][0]);
    assert_eq!([f(4), f(5), f(6), f(7)], [1.0, 0.0, 128.0 / 255.0, 64.0 / 255.0]);
    // 16_16 sint stores saturate.
    h.wave.vgpr[4][0] = 40000;
    h.wave.vgpr[5][0] = (-5i32) as u32;
    h.run(&TBUFFER_STORE_XY_16_16_SINT).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 0xfffb_7fff);
    // 16 float into a d16 register: the f16 bits themselves.
    h.write_mem(MEM_BASE, &0xc500u16.to_le_bytes());
    h.wave.vgpr[4][0] = 0xaaaa_0000;
    h.run(&TBUFFER_LOAD_D16_X_16_FLOAT).unwrap();
    assert_eq!(h.wave.vgpr[4][0], 0x0000_c500, "high half zeroed (SRAM ECC)");
    h.set_d16_preserves_unused(true);
    h.wave.vgpr[4][0] = 0xaaaa_0000;
    h.run(&TBUFFER_LOAD_D16_X_16_FLOAT).unwrap();
    assert_eq!(h.wave.vgpr[4][0], 0xaaaa_c500, "high half kept without SRAM ECC");
}

#[test]
fn the_private_buffer_window_reaches_lane_private_memory() {
    let mut h = Harness::new();
    // The private segment V# as dispatch writes it.
    h.wave.sgpr[0] = PRIVATE_BUFFER_BASE as u32;
    h.wave.sgpr[1] = (PRIVATE_BUFFER_BASE >> 32) as u32 | 1 << 31;
    h.wave.sgpr[2] = u32::MAX;
    h.wave.sgpr[3] = 0x0002_7fac | 3 << 21 | 1 << 23;
    h.wave.vgpr[3] = [20; LANES];
    h.wave.vgpr[1] = std::array::from_fn(|l| 7 * l as u32);
    h.run(&PRIV_STORE).unwrap();
    h.run(&PRIV_LOAD).unwrap();
    assert_eq!(h.wave.vgpr[2], h.wave.vgpr[1]);
    let mut b = [0u8; 4];
    h.private.read(33, 20, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 7 * 33);
}

#[test]
fn gfx942_cache_bits() {
    let mut h = Harness::for_target(Target::Gfx942);
    fill_words(&h, MEM_BASE, 64);
    vsharp(&mut h, MEM_BASE, 0, 256, SEL_XYZW);
    h.wave.vgpr[2] = std::array::from_fn(|l| 4 * l as u32);
    h.run(&GFX942_LOAD_SC).unwrap();
    assert_eq!(h.wave.vgpr[1][9], 0x1009);
    h.wave.vgpr[1] = [1; LANES];
    h.run(&GFX942_ATOMIC_ADD_SC0).unwrap();
    assert_eq!(h.wave.vgpr[1][9], 0x1009, "sc0 returns the old value");
    assert_eq!(h.read_u32(MEM_BASE + 36), 0x100a);
    h.run(&GFX942_BUFFER_INV).unwrap();
}

#[test]
fn store_then_load_round_trip() {
    let mut h = Harness::new();
    vsharp(&mut h, MEM_BASE + 0x400, 0, 1 << 20, SEL_XYZW);
    h.wave.vgpr[2] = std::array::from_fn(|l| 4 * ((l * 5) % 64) as u32);
    h.wave.vgpr[1] = std::array::from_fn(|l| !(l as u32));
    h.run(&STORE_DWORD_OFFEN).unwrap();
    h.wave.vgpr[1] = [0; LANES];
    h.run(&LOAD_DWORD_OFFEN).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[1][l], !(l as u32));
    }
}

// llvm-mc-15 -mcpu=gfx90a: a callee's stack frame, addressed through the wave-scaled
// stack pointer s32 and frame pointer s33.
const FRAME_STORE: [u32; 2] = [0xe070_0004, 0x2000_0100]; // buffer_store_dword v1, off, s[0:3], s32 offset:4
const FRAME_LOAD_ABS: [u32; 2] = [0xe050_0044, 0x8000_0200]; // buffer_load_dword v2, off, s[0:3], 0 offset:68
const FRAME_LOAD_FP: [u32; 2] = [0xe050_0008, 0x2100_0300]; // buffer_load_dword v3, off, s[0:3], s33 offset:8

/// SOFFSET in a private-segment access is a byte offset in the wave's interleaved scratch
/// (the stack pointer is a per-lane offset times 64): s32 = 0x1000 is 0x40 bytes into each
/// lane's memory, so the store at s32+4 is lane offset 0x44 — inside a 0xe0-byte segment,
/// where taking 0x1000 per lane would fault (device-side assert's call frame, issue 18).
#[test]
fn a_wave_scaled_stack_pointer_reaches_the_lanes_frame() {
    let mut h = Harness::new();
    h.private = sim::gpu::exec::memory::PrivateMem::new(0xe0);
    h.wave.sgpr[0] = PRIVATE_BUFFER_BASE as u32;
    h.wave.sgpr[1] = (PRIVATE_BUFFER_BASE >> 32) as u32 | 1 << 31;
    h.wave.sgpr[2] = u32::MAX;
    h.wave.sgpr[3] = 0x0002_7fac | 3 << 21 | 1 << 23;
    h.wave.sgpr[32] = 0x1000;
    h.wave.sgpr[33] = 0x1000 - 0x100; // a frame pointer 4 bytes per lane lower
    h.wave.vgpr[1] = std::array::from_fn(|l| 0x5000 + l as u32);
    h.run(&FRAME_STORE).unwrap();
    let mut b = [0u8; 4];
    h.private.read(17, 0x44, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0x5000 + 17);
    h.run(&FRAME_LOAD_ABS).unwrap();
    assert_eq!(h.wave.vgpr[2], h.wave.vgpr[1]);
    h.run(&FRAME_LOAD_FP).unwrap();
    assert_eq!(h.wave.vgpr[3], h.wave.vgpr[1], "s33 + 8 is the same lane offset 0x44");
}
