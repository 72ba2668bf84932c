//! FLAT, GLOBAL and SCRATCH instructions on one wave (`Harness`).
//!
//! Encodings come from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`
//! (gfx942 forms from `llvm-mc-19 -mcpu=gfx942`); expected values follow the
//! MI200/MI300 ISA pseudo-code, computed in the tests from plain Rust.

use sim::gpu::exec::memory::{PRIVATE_APERTURE_BASE, SHARED_APERTURE_BASE};
use sim::gpu::exec::{ExecError, LANES};
use sim::isa::Target;
use sim::testing::{Harness, MEM_BASE, MEM_BYTES};

/// global_load_dword v1, v[2:3], off
const GLOBAL_LOAD_DWORD: [u32; 2] = [0xdc508000, 0x017f0002];
/// global_load_dwordx2 v[4:5], v[2:3], off offset:8
const GLOBAL_LOAD_DWORDX2: [u32; 2] = [0xdc548008, 0x047f0002];
/// global_load_dwordx3 v[4:6], v[2:3], off offset:-4
const GLOBAL_LOAD_DWORDX3: [u32; 2] = [0xdc589ffc, 0x047f0002];
/// global_load_dwordx4 v[4:7], v2, s[10:11] offset:16
const GLOBAL_LOAD_DWORDX4_SADDR: [u32; 2] = [0xdc5c8010, 0x040a0002];
/// global_store_dword v[2:3], v1, off
const GLOBAL_STORE_DWORD: [u32; 2] = [0xdc708000, 0x007f0102];
/// global_store_dwordx4 v2, v[4:7], s[10:11]
const GLOBAL_STORE_DWORDX4_SADDR: [u32; 2] = [0xdc7c8000, 0x000a0402];
/// global_load_sbyte v1, v[2:3], off
const GLOBAL_LOAD_SBYTE: [u32; 2] = [0xdc448000, 0x017f0002];
/// global_load_ushort v1, v[2:3], off
const GLOBAL_LOAD_USHORT: [u32; 2] = [0xdc488000, 0x017f0002];
/// global_load_short_d16_hi v1, v[2:3], off
const GLOBAL_LOAD_SHORT_D16_HI: [u32; 2] = [0xdc948000, 0x017f0002];
/// global_load_sbyte_d16 v1, v[2:3], off
const GLOBAL_LOAD_SBYTE_D16: [u32; 2] = [0xdc888000, 0x017f0002];
/// global_store_byte_d16_hi v[2:3], v1, off
const GLOBAL_STORE_BYTE_D16_HI: [u32; 2] = [0xdc648000, 0x007f0102];
/// global_store_short v[2:3], v1, off
const GLOBAL_STORE_SHORT: [u32; 2] = [0xdc688000, 0x007f0102];
/// global_atomic_add v1, v[2:3], v4, off glc
const GLOBAL_ATOMIC_ADD_RTN: [u32; 2] = [0xdd098000, 0x017f0402];
/// global_atomic_add v[2:3], v4, off
const GLOBAL_ATOMIC_ADD: [u32; 2] = [0xdd088000, 0x007f0402];
/// global_atomic_cmpswap v1, v[2:3], v[4:5], off glc
const GLOBAL_ATOMIC_CMPSWAP: [u32; 2] = [0xdd058000, 0x017f0402];
/// global_atomic_cmpswap_x2 v[6:7], v[2:3], v[8:11], off glc
const GLOBAL_ATOMIC_CMPSWAP_X2: [u32; 2] = [0xdd858000, 0x067f0802];
/// global_atomic_add_f32 v[2:3], v4, off
const GLOBAL_ATOMIC_ADD_F32: [u32; 2] = [0xdd348000, 0x007f0402];
/// global_atomic_add_f64 v[6:7], v[2:3], v[8:9], off glc
const GLOBAL_ATOMIC_ADD_F64: [u32; 2] = [0xdd3d8000, 0x067f0802];
/// global_atomic_pk_add_f16 v1, v[2:3], v4, off glc
const GLOBAL_ATOMIC_PK_ADD_F16: [u32; 2] = [0xdd398000, 0x017f0402];
/// global_atomic_umax_x2 v[6:7], v[2:3], v[8:9], off glc
const GLOBAL_ATOMIC_UMAX_X2: [u32; 2] = [0xdd9d8000, 0x067f0802];
/// global_atomic_inc v1, v[2:3], v4, off glc
const GLOBAL_ATOMIC_INC: [u32; 2] = [0xdd2d8000, 0x017f0402];
/// global_atomic_dec v1, v[2:3], v4, off glc
const GLOBAL_ATOMIC_DEC: [u32; 2] = [0xdd318000, 0x017f0402];
/// global_atomic_smin v1, v[2:3], v4, off glc
const GLOBAL_ATOMIC_SMIN: [u32; 2] = [0xdd118000, 0x017f0402];
/// flat_load_dword v1, v[2:3]
const FLAT_LOAD_DWORD: [u32; 2] = [0xdc500000, 0x01000002];
/// flat_store_dword v[2:3], v1
const FLAT_STORE_DWORD: [u32; 2] = [0xdc700000, 0x00000102];
/// flat_atomic_add v1, v[2:3], v4 glc
const FLAT_ATOMIC_ADD_RTN: [u32; 2] = [0xdd090000, 0x01000402];
/// scratch_store_dword v2, v1, off offset:8
const SCRATCH_STORE_DWORD: [u32; 2] = [0xdc704008, 0x007f0102];
/// scratch_load_dword v5, v2, off offset:8
const SCRATCH_LOAD_DWORD: [u32; 2] = [0xdc504008, 0x057f0002];
/// scratch_store_dwordx2 off, v[4:5], s6 offset:16
const SCRATCH_STORE_DWORDX2_SADDR: [u32; 2] = [0xdc744010, 0x00060400];
/// scratch_load_dwordx2 v[8:9], off, s6 offset:16
const SCRATCH_LOAD_DWORDX2_SADDR: [u32; 2] = [0xdc544010, 0x08060000];
/// global_load_dword v1, v[2:3], off sc0 nt sc1 (llvm-mc-19 -mcpu=gfx942)
const GFX942_GLOBAL_LOAD_DWORD_SC: [u32; 2] = [0xde538000, 0x017f0002];
/// global_load_lds_dword v[2:3], off offset:4 (llvm-mc-19 -mcpu=gfx942)
const GFX942_GLOBAL_LOAD_LDS_DWORD: [u32; 2] = [0xdca88004, 0x007f0002];

/// A pattern byte for address `a`.
fn pat(a: u64) -> u8 {
    (a as u8).wrapping_mul(7).wrapping_add((a >> 8) as u8) ^ 0x5a
}

fn harness_with_pattern(target: Target) -> Harness {
    let h = Harness::for_target(target);
    let bytes: Vec<u8> = (0..4096).map(|i| pat(MEM_BASE + i)).collect();
    h.write_mem(MEM_BASE, &bytes);
    h
}

fn ref_u32(a: u64) -> u32 {
    u32::from_le_bytes([pat(a), pat(a + 1), pat(a + 2), pat(a + 3)])
}

/// Puts per-lane 64-bit addresses in v[2:3].
fn set_addr(h: &mut Harness, addr: impl Fn(usize) -> u64) {
    for l in 0..LANES {
        let a = addr(l);
        h.wave.vgpr[2][l] = a as u32;
        h.wave.vgpr[3][l] = (a >> 32) as u32;
    }
}

const HOLES: u64 = 0xf0f0_0000_ffff_0ff5;

#[test]
fn global_loads_of_every_width_respect_exec() {
    let mut h = harness_with_pattern(Target::Gfx90a);
    // Scattered, unaligned per-lane addresses.
    let addr = |l: usize| MEM_BASE + 64 + (l as u64 * 37) % 2000;
    set_addr(&mut h, addr);
    h.wave.exec = HOLES;
    for r in [1, 4, 5, 6, 7] {
        h.wave.vgpr[r] = [0xdead_0000 + r as u32; LANES];
    }
    h.run(&GLOBAL_LOAD_DWORD).unwrap();
    h.run(&GLOBAL_LOAD_DWORDX2).unwrap();
    for l in 0..LANES {
        let on = HOLES >> l & 1 != 0;
        let a = addr(l);
        assert_eq!(h.wave.vgpr[1][l], if on { ref_u32(a) } else { 0xdead_0001 }, "lane {l}");
        assert_eq!(h.wave.vgpr[4][l], if on { ref_u32(a + 8) } else { 0xdead_0004 });
        assert_eq!(h.wave.vgpr[5][l], if on { ref_u32(a + 12) } else { 0xdead_0005 });
    }
    h.wave.exec = u64::MAX;
    h.run(&GLOBAL_LOAD_DWORDX3).unwrap();
    for l in 0..LANES {
        let a = addr(l) - 4;
        assert_eq!(
            [h.wave.vgpr[4][l], h.wave.vgpr[5][l], h.wave.vgpr[6][l]],
            [ref_u32(a), ref_u32(a + 4), ref_u32(a + 8)]
        );
        assert_eq!(h.wave.vgpr[7][l], 0xdead_0007, "x3 leaves the fourth register");
    }
}

#[test]
fn global_saddr_form_adds_a_32_bit_vgpr_offset() {
    let mut h = harness_with_pattern(Target::Gfx90a);
    h.wave.sgpr[10] = (MEM_BASE + 0x100) as u32;
    h.wave.sgpr[11] = (MEM_BASE >> 32) as u32;
    for l in 0..LANES {
        h.wave.vgpr[2][l] = 16 * (LANES - 1 - l) as u32;
    }
    h.run(&GLOBAL_LOAD_DWORDX4_SADDR).unwrap();
    for l in 0..LANES {
        let a = MEM_BASE + 0x100 + 16 * (LANES - 1 - l) as u64 + 16;
        let got: Vec<u32> = (4..8).map(|r| h.wave.vgpr[r][l]).collect();
        let want: Vec<u32> = (0..4).map(|d| ref_u32(a + 4 * d)).collect();
        assert_eq!(got, want, "lane {l}");
    }
    // Store the same registers back at 0x2000 + vaddr.
    h.wave.sgpr[10] = (MEM_BASE + 0x2000) as u32;
    h.wave.exec = 0b1001;
    for l in 0..LANES {
        h.wave.vgpr[2][l] = 16 * l as u32;
        for r in 4..8 {
            h.wave.vgpr[r][l] = (l * 10 + r) as u32;
        }
    }
    h.run(&GLOBAL_STORE_DWORDX4_SADDR).unwrap();
    assert_eq!(h.read_u32(MEM_BASE + 0x2000 + 4), 5);
    assert_eq!(h.read_u32(MEM_BASE + 0x2000 + 48 + 12), 37);
    assert_eq!(h.read_u32(MEM_BASE + 0x2000 + 16), 0, "lane 1 is off");
}

#[test]
fn sub_dword_loads_extend_and_d16_keeps_the_other_half_without_sram_ecc() {
    let mut h = Harness::new();
    h.write_mem(MEM_BASE, &[0x80, 0xff, 0x7f, 0x01, 0x34, 0x12]);
    set_addr(&mut h, |l| MEM_BASE + (l % 5) as u64);
    h.run(&GLOBAL_LOAD_SBYTE).unwrap();
    assert_eq!(&h.wave.vgpr[1][..5], &[0xffff_ff80, 0xffff_ffff, 0x7f, 0x01, 0x34]);
    h.run(&GLOBAL_LOAD_USHORT).unwrap();
    assert_eq!(&h.wave.vgpr[1][..5], &[0xff80, 0x7fff, 0x017f, 0x3401, 0x1234]);
    // The MI210 runs with SRAM ECC on: a d16 load zeroes the other half (LLVM's
    // D16PreservesUnusedBits is off for `sramecc+`), which Tensile's byte-wise edge loads rely on.
    h.wave.vgpr[1] = [0xaaaa_bbbb; LANES];
    h.run(&GLOBAL_LOAD_SHORT_D16_HI).unwrap();
    assert_eq!(&h.wave.vgpr[1][..2], &[0xff80_0000, 0x7fff_0000]);
    h.wave.vgpr[1] = [0xaaaa_bbbb; LANES];
    h.run(&GLOBAL_LOAD_SBYTE_D16).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0x0000_ff80, 0x0000_ffff, 0x0000_007f]);
    // Without SRAM ECC the other half is kept.
    h.set_d16_preserves_unused(true);
    h.wave.vgpr[1] = [0xaaaa_bbbb; LANES];
    h.run(&GLOBAL_LOAD_SHORT_D16_HI).unwrap();
    assert_eq!(&h.wave.vgpr[1][..2], &[0xff80_bbbb, 0x7fff_bbbb]);
    h.wave.vgpr[1] = [0xaaaa_bbbb; LANES];
    h.run(&GLOBAL_LOAD_SBYTE_D16).unwrap();
    assert_eq!(&h.wave.vgpr[1][..3], &[0xaaaa_ff80, 0xaaaa_ffff, 0xaaaa_007f]);
}

#[test]
fn sub_dword_stores_write_only_their_bytes() {
    let mut h = Harness::new();
    h.write_mem(MEM_BASE, &[0xee; 256]);
    set_addr(&mut h, |l| MEM_BASE + 4 * l as u64);
    h.wave.vgpr[1] = std::array::from_fn(|l| 0x1122_3344 + l as u32);
    h.wave.exec = 0b11;
    h.run(&GLOBAL_STORE_BYTE_D16_HI).unwrap();
    assert_eq!(h.read_u32(MEM_BASE), 0xeeee_ee22);
    assert_eq!(h.read_u32(MEM_BASE + 4), 0xeeee_ee22);
    assert_eq!(h.read_u32(MEM_BASE + 8), 0xeeee_eeee);
    set_addr(&mut h, |l| MEM_BASE + 0x40 + 4 * l as u64 + 1);
    h.run(&GLOBAL_STORE_SHORT).unwrap();
    assert_eq!(h.read_u32(MEM_BASE + 0x40), 0xee33_44ee);
    assert_eq!(h.read_u32(MEM_BASE + 0x44), 0xee33_45ee);
}

#[test]
fn stores_then_loads_round_trip_through_flat_global_addresses() {
    let mut h = Harness::new();
    set_addr(&mut h, |l| MEM_BASE + 0x800 + 4 * (63 - l) as u64);
    h.wave.vgpr[1] = std::array::from_fn(|l| l as u32 * 3 + 1);
    h.run(&FLAT_STORE_DWORD).unwrap();
    h.run(&GLOBAL_STORE_DWORD).unwrap();
    for l in 0..LANES {
        assert_eq!(h.read_u32(MEM_BASE + 0x800 + 4 * (63 - l) as u64), l as u32 * 3 + 1);
    }
    h.wave.vgpr[1] = [0; LANES];
    h.run(&FLAT_LOAD_DWORD).unwrap();
    assert_eq!(h.wave.vgpr[1][63], 190);
}

#[test]
fn flat_addresses_reach_lds_and_private_memory() {
    let mut h = Harness::new();
    // Lanes 0..16 global, 16..32 LDS, 32..64 private.
    set_addr(&mut h, |l| match l {
        0..16 => MEM_BASE + 4 * l as u64,
        16..32 => SHARED_APERTURE_BASE + 0x100 + 4 * l as u64,
        _ => PRIVATE_APERTURE_BASE + 12,
    });
    h.wave.vgpr[1] = std::array::from_fn(|l| 1000 + l as u32);
    h.run(&FLAT_STORE_DWORD).unwrap();
    assert_eq!(h.read_u32(MEM_BASE + 4 * 3), 1003);
    assert_eq!(u32::from_le_bytes(h.lds[0x100 + 4 * 20..0x100 + 4 * 21].try_into().unwrap()), 1020);
    let mut b = [0u8; 4];
    h.private.read(40, 12, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 1040, "each lane has its own private memory");
    h.wave.vgpr[1] = [0; LANES];
    h.wave.vgpr[4] = [5; LANES];
    h.run(&FLAT_ATOMIC_ADD_RTN).unwrap();
    h.run(&FLAT_LOAD_DWORD).unwrap();
    for l in 0..LANES {
        assert_eq!(h.wave.vgpr[1][l], 1005 + l as u32, "lane {l}");
    }
}

#[test]
fn scratch_is_per_lane_with_vgpr_or_sgpr_offsets() {
    let mut h = Harness::new();
    h.wave.vgpr[2] = std::array::from_fn(|l| (l % 4) as u32 * 4);
    h.wave.vgpr[1] = std::array::from_fn(|l| 0x100 + l as u32);
    h.run(&SCRATCH_STORE_DWORD).unwrap();
    h.run(&SCRATCH_LOAD_DWORD).unwrap();
    assert_eq!(h.wave.vgpr[5], h.wave.vgpr[1]);
    h.wave.sgpr[6] = 32;
    h.wave.vgpr[4] = std::array::from_fn(|l| l as u32);
    h.wave.vgpr[5] = std::array::from_fn(|l| !(l as u32));
    h.run(&SCRATCH_STORE_DWORDX2_SADDR).unwrap();
    h.run(&SCRATCH_LOAD_DWORDX2_SADDR).unwrap();
    assert_eq!((h.wave.vgpr[8], h.wave.vgpr[9]), (h.wave.vgpr[4], h.wave.vgpr[5]));
    let mut b = [0u8; 4];
    h.private.read(9, 52, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), !9);
    // Past the 256-byte private segment.
    h.wave.sgpr[6] = 250;
    assert!(matches!(h.run(&SCRATCH_STORE_DWORDX2_SADDR), Err(ExecError::PrivateOutOfRange { .. })));
}

#[test]
fn integer_atomics_return_the_old_value() {
    let mut h = Harness::new();
    // All lanes on one word: lanes run in order, so lane l sees the sum of lanes < l.
    set_addr(&mut h, |_| MEM_BASE + 0x40);
    h.write_mem(MEM_BASE + 0x40, &100u32.to_le_bytes());
    h.wave.vgpr[4] = std::array::from_fn(|l| l as u32);
    h.wave.exec = u64::MAX;
    h.run(&GLOBAL_ATOMIC_ADD_RTN).unwrap();
    for l in 0..LANES {
        let earlier: u32 = (0..l as u32).sum();
        assert_eq!(h.wave.vgpr[1][l], 100 + earlier, "lane {l}");
    }
    assert_eq!(h.read_u32(MEM_BASE + 0x40), 100 + 2016);
    h.wave.exec = 0b111;
    h.run(&GLOBAL_ATOMIC_ADD).unwrap();
    assert_eq!(h.read_u32(MEM_BASE + 0x40), 2116 + 3);

    // inc / dec wrap at the data value; smin is signed.
    set_addr(&mut h, |l| MEM_BASE + 0x100 + 4 * l as u64);
    h.wave.exec = 0b1111;
    h.write_mem(MEM_BASE + 0x100, &bytemuck_u32(&[5, 9, 0, 7]));
    h.wave.vgpr[4][..4].copy_from_slice(&[9, 9, 3, 3]);
    h.run(&GLOBAL_ATOMIC_INC).unwrap();
    assert_eq!(&h.wave.vgpr[1][..4], &[5, 9, 0, 7]);
    assert_eq!(read4(&h, MEM_BASE + 0x100), [6, 0, 1, 0], "inc: old >= data wraps to 0");
    h.run(&GLOBAL_ATOMIC_DEC).unwrap();
    assert_eq!(read4(&h, MEM_BASE + 0x100), [5, 9, 0, 3], "dec: 0 or old > data gives data");
    h.wave.vgpr[4][..4].copy_from_slice(&[(-1i32) as u32, 10, 0x8000_0000, 3]);
    h.run(&GLOBAL_ATOMIC_SMIN).unwrap();
    assert_eq!(read4(&h, MEM_BASE + 0x100), [u32::MAX, 9, 0x8000_0000, 3]);

    // cmpswap: v4 = new value, v5 = compare value.
    h.wave.vgpr[4][..4].copy_from_slice(&[11, 22, 33, 44]);
    h.wave.vgpr[5][..4].copy_from_slice(&[u32::MAX, 8, 0x8000_0000, 0]);
    h.run(&GLOBAL_ATOMIC_CMPSWAP).unwrap();
    assert_eq!(&h.wave.vgpr[1][..4], &[u32::MAX, 9, 0x8000_0000, 3]);
    assert_eq!(read4(&h, MEM_BASE + 0x100), [11, 9, 33, 3]);
}

#[test]
fn wide_atomics_use_register_pairs() {
    let mut h = Harness::new();
    set_addr(&mut h, |l| MEM_BASE + 0x200 + 8 * l as u64);
    h.wave.exec = 0b11;
    let init = [0x1_0000_0005u64, 0xffff_ffff_0000_0000];
    for (i, v) in init.iter().enumerate() {
        h.write_mem(MEM_BASE + 0x200 + 8 * i as u64, &v.to_le_bytes());
    }
    // cmpswap_x2: v[8:9] new, v[10:11] compare.
    let (new, cmp) = ([7u64, 8], [0x1_0000_0005u64, 1]);
    for l in 0..2 {
        h.wave.vgpr[8][l] = new[l] as u32;
        h.wave.vgpr[9][l] = (new[l] >> 32) as u32;
        h.wave.vgpr[10][l] = cmp[l] as u32;
        h.wave.vgpr[11][l] = (cmp[l] >> 32) as u32;
    }
    h.run(&GLOBAL_ATOMIC_CMPSWAP_X2).unwrap();
    assert_eq!((h.wave.vgpr[6][0], h.wave.vgpr[7][0]), (5, 1));
    assert_eq!(read8(&h, MEM_BASE + 0x200), 7);
    assert_eq!(read8(&h, MEM_BASE + 0x208), 0xffff_ffff_0000_0000, "compare failed");
    // umax_x2 compares all 64 bits.
    h.wave.vgpr[8][..2].copy_from_slice(&[0xffff_ffff, 1]);
    h.wave.vgpr[9][..2].copy_from_slice(&[0, 0xffff_ffff]);
    h.run(&GLOBAL_ATOMIC_UMAX_X2).unwrap();
    assert_eq!(read8(&h, MEM_BASE + 0x200), 0xffff_ffff);
    assert_eq!(read8(&h, MEM_BASE + 0x208), 0xffff_ffff_0000_0001);
}

#[test]
fn float_atomics_flush_f32_denormals_but_keep_f64_and_f16() {
    let mut h = Harness::new();
    set_addr(&mut h, |l| MEM_BASE + 0x300 + 8 * l as u64);
    h.wave.exec = 0b111;
    let tiny = f32::from_bits(0x0000_0100); // denormal
    let mem = [1.5f32, tiny, f32::NAN];
    for (i, v) in mem.iter().enumerate() {
        h.write_mem(MEM_BASE + 0x300 + 8 * i as u64, &v.to_bits().to_le_bytes());
    }
    h.wave.vgpr[4][..3].copy_from_slice(&[2.25f32.to_bits(), tiny.to_bits(), 1.0f32.to_bits()]);
    h.run(&GLOBAL_ATOMIC_ADD_F32).unwrap();
    assert_eq!(f32::from_bits(h.read_u32(MEM_BASE + 0x300)), 3.75);
    assert_eq!(h.read_u32(MEM_BASE + 0x308), 0, "denormal + denormal flushes to +0");
    assert!(f32::from_bits(h.read_u32(MEM_BASE + 0x310)).is_nan());

    // f64: the smallest denormal plus itself is kept.
    let d = f64::from_bits(1);
    h.write_mem(MEM_BASE + 0x300, &d.to_bits().to_le_bytes());
    h.wave.exec = 1;
    h.wave.vgpr[8][0] = 1;
    h.wave.vgpr[9][0] = 0;
    h.run(&GLOBAL_ATOMIC_ADD_F64).unwrap();
    assert_eq!(read8(&h, MEM_BASE + 0x300), 2);
    assert_eq!((h.wave.vgpr[6][0], h.wave.vgpr[7][0]), (1, 0));

    // pk_add_f16: lo 1.0 + 0.5, hi 65504 + 65504 = inf; f16 denormals kept.
    h.write_mem(MEM_BASE + 0x300, &(0x3c00u32 | 0x7bff << 16).to_le_bytes());
    h.write_mem(MEM_BASE + 0x308, &0x0001_0001u32.to_le_bytes());
    h.wave.exec = 0b11;
    h.wave.vgpr[4][..2].copy_from_slice(&[0x3800 | 0x7bff << 16, 0x0001_0001]);
    h.run(&GLOBAL_ATOMIC_PK_ADD_F16).unwrap();
    assert_eq!(h.read_u32(MEM_BASE + 0x300), 0x3e00 | 0x7c00 << 16);
    assert_eq!(h.read_u32(MEM_BASE + 0x308), 0x0002_0002);
}

#[test]
fn accesses_outside_the_gpu_vm_fault() {
    let mut h = Harness::new();
    set_addr(&mut h, |l| if l == 17 { MEM_BASE + MEM_BYTES } else { MEM_BASE });
    let e = h.run(&GLOBAL_LOAD_DWORD).unwrap_err();
    assert!(matches!(e, ExecError::Fault(f) if f.va == MEM_BASE + MEM_BYTES && !f.write), "{e:?}");
    let e = h.run(&GLOBAL_STORE_DWORD).unwrap_err();
    assert!(matches!(e, ExecError::Fault(f) if f.write), "{e:?}");
    // Straddling the end of the mapping.
    set_addr(&mut h, |_| MEM_BASE + MEM_BYTES - 2);
    assert!(matches!(h.run(&GLOBAL_LOAD_DWORD), Err(ExecError::Fault(_))));
    h.wave.exec = 0;
    h.run(&GLOBAL_LOAD_DWORD).unwrap();
    // Atomics need natural alignment.
    h.wave.exec = 1;
    set_addr(&mut h, |_| MEM_BASE + 2);
    assert!(matches!(h.run(&GLOBAL_ATOMIC_ADD), Err(ExecError::Fault(_))));
}

#[test]
fn gfx942_cache_bits_and_lds_loads() {
    let mut h = harness_with_pattern(Target::Gfx942);
    set_addr(&mut h, |l| MEM_BASE + 4 * l as u64);
    h.run(&GFX942_GLOBAL_LOAD_DWORD_SC).unwrap();
    assert_eq!(h.wave.vgpr[1][5], ref_u32(MEM_BASE + 20));
    // LDS address: M0 + instruction offset + lane * 4.
    h.wave.m0 = 0x200;
    h.wave.exec = !1;
    h.run(&GFX942_GLOBAL_LOAD_LDS_DWORD).unwrap();
    let lds = |o: usize| u32::from_le_bytes(h.lds[o..o + 4].try_into().unwrap());
    assert_eq!(lds(0x204), 0, "lane 0 is off");
    assert_eq!(lds(0x204 + 4 * 9), ref_u32(MEM_BASE + 4 + 36));
}

fn bytemuck_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read4(h: &Harness, va: u64) -> [u32; 4] {
    std::array::from_fn(|i| h.read_u32(va + 4 * i as u64))
}

fn read8(h: &Harness, va: u64) -> u64 {
    h.read_u32(va) as u64 | (h.read_u32(va + 4) as u64) << 32
}
