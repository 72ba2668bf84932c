//! MIMG instructions on one wave (`Harness`): linear images of every
//! geometry the blit kernels use, formats, dmask, d16, DST_SEL, resinfo,
//! atomics and range checks.
//!
//! Encodings from `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.
//! Expected texel conversions follow the MI200 ISA's format rules (unorm:
//! v / (2^n - 1); sRGB: the sRGB transfer function), computed here.

use sim::gpu::exec::{ExecError, LANES};
use sim::testing::{Harness, MEM_BASE};

/// image_load v[0:3], v[4:5], s[8:15] dmask:0xf unorm (also v[4:6]: the T# type decides)
const LOAD_XYZW: [u32; 2] = [0xf0001f00, 0x00020004];
/// image_store v[0:3], v[4:5], s[8:15] dmask:0xf unorm
const STORE_XYZW: [u32; 2] = [0xf0201f00, 0x00020004];
/// image_load v[0:1], v[4:5], s[8:15] dmask:0x5 unorm
const LOAD_XZ: [u32; 2] = [0xf0001500, 0x00020004];
/// image_store v0, v[4:5], s[8:15] dmask:0x2 unorm
const STORE_Y: [u32; 2] = [0xf0201200, 0x00020004];
/// image_load v[0:3], v[4:6], s[8:15] dmask:0xf unorm da
const LOAD_XYZW_DA: [u32; 2] = [0xf0005f00, 0x00020004];
/// image_load v[0:1], v[4:5], s[8:15] dmask:0xf unorm d16
const LOAD_D16: [u32; 2] = [0xf0001f00, 0x80020004];
/// image_store v[0:1], v[4:5], s[8:15] dmask:0xf unorm d16
const STORE_D16: [u32; 2] = [0xf0201f00, 0x80020004];
/// image_load v0, v4, s[8:15] dmask:0x1 unorm
const LOAD_X: [u32; 2] = [0xf0001100, 0x00020004];
/// image_get_resinfo v[0:3], v4, s[8:15] dmask:0xf unorm
const RESINFO: [u32; 2] = [0xf0381f00, 0x00020004];
/// image_atomic_add v0, v[4:5], s[8:15] dmask:0x1 unorm glc
const ATOMIC_ADD: [u32; 2] = [0xf0483100, 0x00020004];
/// image_atomic_cmpswap v[0:1], v[4:5], s[8:15] dmask:0x3 unorm glc
const ATOMIC_CMPSWAP: [u32; 2] = [0xf0443300, 0x00020004];
/// image_load_mip v[0:3], v[4:6], s[8:15] dmask:0xf unorm
const LOAD_MIP: [u32; 2] = [0xf0041f00, 0x00020004];
/// image_load v[0:3], v4, s[8:15] dmask:0xf unorm a16
const LOAD_A16: [u32; 2] = [0xf0009f00, 0x00020004];

const XYZW: u32 = 4 | 5 << 3 | 6 << 6 | 7 << 9;
const TYPE_1D_ARRAY: u32 = 12;
const TYPE_2D: u32 = 9;
const TYPE_3D: u32 = 10;
const TYPE_2D_ARRAY: u32 = 13;
const TYPE_2D_MSAA: u32 = 14;
const FMT_32: u32 = 4;
const FMT_8_8_8_8: u32 = 10;
const FMT_16_16_16_16: u32 = 12;
const NUM_UNORM: u32 = 0;
const NUM_UINT: u32 = 4;
const NUM_FLOAT: u32 = 7;
const NUM_SRGB: u32 = 9;

struct Img {
    base: u64,
    dfmt: u32,
    nfmt: u32,
    width: u32,
    height: u32,
    depth: u32,
    pitch: u32,
    ty: u32,
    sel: u32,
}

impl Img {
    fn new(ty: u32, dfmt: u32, nfmt: u32, width: u32, height: u32, depth: u32, pitch: u32) -> Img {
        Img { base: MEM_BASE + 0x1000, dfmt, nfmt, width, height, depth, pitch, ty, sel: XYZW }
    }

    /// Writes the T# to s[8:15].
    fn bind(&self, h: &mut Harness) {
        let s = &mut h.wave.sgpr[8..16];
        s[0] = (self.base >> 8) as u32;
        s[1] = (self.base >> 40) as u32 & 0xff | self.dfmt << 20 | self.nfmt << 26;
        s[2] = (self.width - 1) | (self.height - 1) << 14;
        s[3] = self.sel | self.ty << 28;
        s[4] = (self.depth - 1) | (self.pitch - 1) << 13;
        s[5] = 0;
        s[6] = 0;
        s[7] = 0;
    }
}

fn coords(h: &mut Harness, c: impl Fn(usize) -> [u32; 3]) {
    for l in 0..LANES {
        let v = c(l);
        for (i, x) in v.iter().enumerate() {
            h.wave.vgpr[4 + i][l] = *x;
        }
    }
}

fn unorm8(b: u8) -> f32 {
    b as f32 / 255.0
}

fn f(h: &Harness, r: usize, l: usize) -> f32 {
    f32::from_bits(h.wave.vgpr[r][l])
}

#[test]
fn rgba8_2d_loads_with_pitch_padding_and_range_checks() {
    let mut h = Harness::new();
    let img = Img::new(TYPE_2D, FMT_8_8_8_8, NUM_UNORM, 5, 3, 1, 8);
    img.bind(&mut h);
    // Texel (x, y) = bytes [x, y, x + y, 255]; padding bytes 0xee.
    let mut bytes = vec![0xeeu8; 8 * 3 * 4];
    for y in 0..3 {
        for x in 0..5 {
            let o = (y * 8 + x) * 4;
            bytes[o..o + 4].copy_from_slice(&[x as u8 * 40, y as u8 * 80, (x + y) as u8, 255]);
        }
    }
    h.write_mem(img.base, &bytes);
    coords(&mut h, |l| [(l % 8) as u32, (l / 8) as u32, 0]);
    h.run(&LOAD_XYZW).unwrap();
    for l in 0..LANES {
        let (x, y) = (l % 8, l / 8);
        let got = [f(&h, 0, l), f(&h, 1, l), f(&h, 2, l), f(&h, 3, l)];
        if x < 5 && y < 3 {
            let want = [unorm8(x as u8 * 40), unorm8(y as u8 * 80), unorm8((x + y) as u8), 1.0];
            assert_eq!(got, want, "texel ({x}, {y})");
        } else {
            assert_eq!(got, [0.0; 4], "({x}, {y}) is outside the 5x3 image");
        }
    }
    // dmask 0x5: X and Z into v0, v1.
    h.run(&LOAD_XZ).unwrap();
    assert_eq!((f(&h, 0, 9), f(&h, 1, 9)), (unorm8(40), unorm8(2)));
}

#[test]
fn stores_convert_undo_dst_sel_and_zero_missing_components() {
    let mut h = Harness::new();
    let mut img = Img::new(TYPE_2D, FMT_8_8_8_8, NUM_UNORM, 4, 4, 1, 4);
    img.sel = 6 | 5 << 3 | 4 << 6 | 7 << 9; // BGRA view
    img.bind(&mut h);
    h.wave.exec = 0b11;
    coords(&mut h, |l| [l as u32, 1, 0]);
    let vals = [[1.0f32, 0.5, 0.0, 0.25], [2.0, -1.0, 0.2, f32::NAN]];
    for (l, v) in vals.iter().enumerate() {
        for (r, x) in v.iter().enumerate() {
            h.wave.vgpr[r][l] = x.to_bits();
        }
    }
    h.run(&STORE_XYZW).unwrap();
    let mut b = [0u8; 8];
    h.read_mem(img.base + 16, &mut b);
    // Register X goes to memory Z and register Z to memory X; unorm rounds to nearest, clamps, NaN → 0.
    assert_eq!(b, [0, 128, 255, 64, 51, 0, 255, 0]);
    // Only Y supplied: X, Z, W store 0.
    h.wave.exec = 0b1;
    h.wave.vgpr[0][0] = 1.0f32.to_bits();
    h.run(&STORE_Y).unwrap();
    h.read_mem(img.base + 16, &mut b[..4]);
    assert_eq!(&b[..4], &[0, 255, 0, 0]);
}

#[test]
fn arrays_and_3d_images_address_slices() {
    let mut h = Harness::new();
    // 2D array of 32-bit uint: 3 wide, 2 high, 4 slices, pitch 4.
    let img = Img::new(TYPE_2D_ARRAY, FMT_32, NUM_UINT, 3, 2, 4, 4);
    img.bind(&mut h);
    let words: Vec<u8> = (0..4 * 2 * 4u32).flat_map(|i| (1000 + i).to_le_bytes()).collect();
    h.write_mem(img.base, &words);
    coords(&mut h, |l| [(l % 4) as u32, (l / 4 % 2) as u32, (l / 8) as u32]);
    h.run(&LOAD_XYZW_DA).unwrap();
    for l in 0..LANES {
        let (x, y, z) = (l % 4, l / 4 % 2, l / 8);
        let want = if x < 3 && z < 4 { 1000 + (z * 8 + y * 4 + x) as u32 } else { 0 };
        assert_eq!(h.wave.vgpr[0][l], want, "({x}, {y}, {z})");
        // Components the format lacks read as (0, 0, 0, 1).
        let inside = x < 3 && z < 4;
        assert_eq!([h.wave.vgpr[1][l], h.wave.vgpr[3][l]], [0, inside as u32]);
    }
    // 3D, same layout, depth 4.
    let img = Img::new(TYPE_3D, FMT_32, NUM_UINT, 3, 2, 4, 4);
    img.bind(&mut h);
    h.run(&LOAD_X).unwrap();
    assert_eq!(h.wave.vgpr[0][8 * 3 + 4 + 2], 1000 + 24 + 4 + 2);
    // 1D array: x and slice; rows are one texel high.
    let img = Img::new(TYPE_1D_ARRAY, FMT_32, NUM_UINT, 4, 1, 3, 4);
    img.bind(&mut h);
    coords(&mut h, |l| [(l % 4) as u32, (l / 4) as u32, 0]);
    h.run(&LOAD_X).unwrap();
    assert_eq!(h.wave.vgpr[0][4 * 2 + 1], 1000 + 9);
    assert_eq!(h.wave.vgpr[0][4 * 3], 0, "slice 3 of 3");
}

#[test]
fn d16_srgb_and_a16() {
    let mut h = Harness::new();
    // 16_16_16_16 float, d16: the halves pass through unchanged.
    let img = Img::new(TYPE_2D, FMT_16_16_16_16, NUM_FLOAT, 2, 2, 1, 2);
    img.bind(&mut h);
    let halves: [u16; 4] = [0x3c00, 0xc000, 0x0001, 0x7c00];
    h.write_mem(img.base + 8, &halves.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
    h.wave.exec = 1;
    coords(&mut h, |_| [1, 0, 0]);
    h.run(&LOAD_D16).unwrap();
    assert_eq!((h.wave.vgpr[0][0], h.wave.vgpr[1][0]), (0xc000_3c00, 0x7c00_0001));
    coords(&mut h, |_| [0, 1, 0]);
    h.run(&STORE_D16).unwrap();
    let mut b = [0u8; 8];
    h.read_mem(img.base + 16, &mut b);
    assert_eq!(b, [0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c]);

    // sRGB: colour channels decode through the transfer function, alpha is linear.
    let img = Img::new(TYPE_2D, FMT_8_8_8_8, NUM_SRGB, 1, 1, 1, 1);
    img.bind(&mut h);
    h.write_mem(img.base, &[0, 10, 188, 188]);
    coords(&mut h, |_| [0, 0, 0]);
    h.run(&LOAD_XYZW).unwrap();
    let srgb = |c: f32| if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) };
    assert_eq!(f(&h, 0, 0), 0.0);
    assert!((f(&h, 1, 0) - srgb(10.0 / 255.0)).abs() < 1e-6);
    assert!((f(&h, 2, 0) - srgb(188.0 / 255.0)).abs() < 1e-6);
    assert_eq!(f(&h, 3, 0), 188.0 / 255.0);

    // a16: x and y as 16-bit halves of v4.
    let img = Img::new(TYPE_2D, FMT_32, NUM_UINT, 4, 4, 1, 4);
    img.bind(&mut h);
    h.write_mem(img.base + 4 * (2 * 4 + 3), &77u32.to_le_bytes());
    h.wave.vgpr[4][0] = 3 | 2 << 16;
    h.run(&LOAD_A16).unwrap();
    assert_eq!(h.wave.vgpr[0][0], 77);
}

#[test]
fn resinfo_atomics_mips_and_msaa() {
    let mut h = Harness::new();
    let mut img = Img::new(TYPE_2D_ARRAY, FMT_32, NUM_UINT, 100, 37, 6, 128);
    img.bind(&mut h);
    h.wave.exec = 0b11;
    h.wave.vgpr[4][..2].copy_from_slice(&[0, 3]);
    h.run(&RESINFO).unwrap();
    assert_eq!([h.wave.vgpr[0][0], h.wave.vgpr[1][0], h.wave.vgpr[2][0], h.wave.vgpr[3][0]], [100, 37, 6, 1]);
    assert_eq!([h.wave.vgpr[0][1], h.wave.vgpr[1][1]], [12, 4], "mip 3: sizes shift down");

    // 32-bit uint atomics on texels.
    img = Img::new(TYPE_2D, FMT_32, NUM_UINT, 4, 4, 1, 4);
    img.bind(&mut h);
    h.write_mem(img.base + 4 * 5, &10u32.to_le_bytes());
    h.wave.exec = 0b111;
    coords(&mut h, |l| if l < 2 { [1, 1, 0] } else { [9, 0, 0] });
    h.wave.vgpr[0][..3].copy_from_slice(&[5, 6, 7]);
    h.run(&ATOMIC_ADD).unwrap();
    assert_eq!(&h.wave.vgpr[0][..3], &[10, 15, 0], "lane 2 is out of range");
    assert_eq!(h.read_u32(img.base + 20), 21);
    h.wave.exec = 1;
    h.wave.vgpr[0][0] = 99;
    h.wave.vgpr[1][0] = 21;
    h.run(&ATOMIC_CMPSWAP).unwrap();
    assert_eq!((h.wave.vgpr[0][0], h.read_u32(img.base + 20)), (21, 99));

    // Only mip level 0 exists.
    coords(&mut h, |_| [1, 1, 1]);
    h.run(&LOAD_MIP).unwrap();
    assert_eq!(h.wave.vgpr[0][0], 0);
    coords(&mut h, |_| [1, 1, 0]);
    h.run(&LOAD_MIP).unwrap();
    assert_eq!(h.wave.vgpr[0][0], 99);

    img.ty = TYPE_2D_MSAA;
    img.bind(&mut h);
    assert!(matches!(h.run(&LOAD_X), Err(ExecError::Invalid(_))));
}
