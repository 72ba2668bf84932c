//! LLVM's f32 and f64 division sequences (`clang-15 -target amdgcn
//! -mcpu=gfx90a -O2` on `a / b`, registers renamed) must reproduce the
//! host's IEEE division bit for bit, over specials, denormals and random
//! operands; plus the transcendental ops' special values.
//! Encodings assembled with `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
#![allow(clippy::needless_range_loop)]

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
