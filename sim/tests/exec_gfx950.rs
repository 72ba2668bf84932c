//! gfx950 (CDNA4) additions, run through the interpreter on the gfx950 target. Encodings are
//! taken from `tests/data/isa/gfx950` (LLVM 22's disassembler, `cargo xtask isa-vectors`);
//! expected values are worked out from the CDNA4 ISA guide's definitions in the test.

use sim::isa::{decode, Target};
use sim::testing::{splitmix, Harness};

fn harness() -> Harness {
    Harness::with_hip_mode(Target::Gfx950)
}

fn set(h: &mut Harness, reg: usize, f: impl Fn(usize) -> u32) {
    for l in 0..64 {
        h.wave.vgpr[reg][l] = f(l);
    }
}

/// The harness has 64 VGPRs, so the vectors' v16/v32/v48/v64 operands are moved to
/// D = v4, A = v8, B = v12, C = v16 (VOP3/VOP3P: vdst in word 0 bits 7:0, sources in word 1
/// bits 8:0, 17:9, 26:18).
const D: usize = 4;
const A: usize = 8;
const B: usize = 12;
const C: usize = 16;

fn vop3(w: [u32; 2]) -> [u32; 2] {
    let src = |r: usize| 256 + r as u32;
    [(w[0] & !0xff) | D as u32, (w[1] & !0x7ff_ffff) | src(A) | src(B) << 9 | src(C) << 18]
}

/// VOP1: vdst in bits 24:17, src0 in bits 8:0.
fn vop1(w: u32) -> u32 {
    (w & !(0xff << 17 | 0x1ff)) | (D as u32) << 17 | (256 + A as u32)
}

#[test]
fn bitop3_computes_any_three_input_function() {
    // v_bitop3_b32 v16, v32, v48, v64 with the majority table 0xe8: abs = 5, omod = 3.
    let words = vop3([0xd2340510, 0x1d026120]);
    let inst = decode(&words, Target::Gfx950).unwrap();
    assert_eq!(inst.bitop3(), Some(0xe8));
    assert_eq!(inst.to_string(), "v_bitop3_b32 v4, v8, v12, v16 bitop3:0xe8");
    let mut h = harness();
    set(&mut h, A, |l| splitmix(l as u64));
    set(&mut h, B, |l| splitmix(100 + l as u64));
    set(&mut h, C, |l| splitmix(200 + l as u64));
    h.wave.exec = 0xffff_0000_ffff_fff0;
    set(&mut h, D, |_| 0xdead_beef);
    h.run(&words).unwrap();
    for l in 0..64 {
        let (a, b, c) = (h.wave.vgpr[A][l], h.wave.vgpr[B][l], h.wave.vgpr[C][l]);
        let want = if h.wave.exec >> l & 1 != 0 { (a & b) | (a & c) | (b & c) } else { 0xdead_beef };
        assert_eq!(h.wave.vgpr[D][l], want, "lane {l}");
    }
    // v_bitop3_b16 ... bitop3:0x20 op_sel:[1,0,1,1]: high half of v32, low of v48, high of
    // v64, result to the high half; table 0x20 = a & !b & c.
    let mut h = harness();
    set(&mut h, A, |l| splitmix(l as u64));
    set(&mut h, B, |l| splitmix(100 + l as u64));
    set(&mut h, C, |l| splitmix(200 + l as u64));
    set(&mut h, D, |l| 0x1234_0000 | l as u32);
    h.run(&vop3([0xd2336c10, 0x05026120])).unwrap();
    for l in 0..64 {
        let (a, b, c) = (h.wave.vgpr[A][l] >> 16, h.wave.vgpr[B][l] & 0xffff, h.wave.vgpr[C][l] >> 16);
        let r = a & !b & c & 0xffff;
        assert_eq!(h.wave.vgpr[D][l], r << 16 | l as u32, "lane {l}");
    }
}

#[test]
fn permlane_swaps_exchange_rows_between_two_registers() {
    // v_permlane32_swap_b32_e32 v1, v2: v1's lanes 32..63 <-> v2's lanes 0..31.
    let mut h = harness();
    set(&mut h, 1, |l| 100 + l as u32);
    set(&mut h, 2, |l| 200 + l as u32);
    h.run(&[0x7e02b502]).unwrap();
    for l in 0..64 {
        let (v1, v2) = if l < 32 { (100 + l, 100 + l + 32) } else { (200 + l - 32, 200 + l) };
        assert_eq!((h.wave.vgpr[1][l], h.wave.vgpr[2][l]), (v1 as u32, v2 as u32), "lane {l}");
    }
    // v_permlane16_swap_b32_e32 v28, v29: odd rows of v28 <-> even rows of v29. The pattern
    // of the softmax reductions that use it: after v28 = v29, a swap and a max see the
    // partner row's value.
    let mut h = harness();
    set(&mut h, 28, |l| l as u32);
    set(&mut h, 29, |l| 1000 + l as u32);
    h.run(&[0x7e38b31d]).unwrap();
    for l in 0..64 {
        let row = l / 16;
        let (v28, v29) = if row % 2 == 1 { (1000 + l - 16, 1000 + l) } else { (l, l + 16) };
        assert_eq!((h.wave.vgpr[28][l], h.wave.vgpr[29][l]), (v28 as u32, v29 as u32), "lane {l}");
    }
}

#[test]
fn packing_conversions_round_to_nearest_even() {
    let inputs = [1.0f32, -2.5, 65504.0, 70000.0, 1.0 + 2f32.powi(-11), 3.0e-8, f32::INFINITY, 0.1];
    let mut h = harness();
    set(&mut h, A, |l| inputs[l % 8].to_bits());
    set(&mut h, B, |l| inputs[(l + 3) % 8].to_bits());
    // v_cvt_pk_f16_f32 v16, v32, v48
    h.run(&vop3([0xd2670010, 0x00166120])).unwrap();
    // v_cvt_pk_bf16_f32 v17 would need another encoding; bf16 goes to v16 in a second run.
    let f16 = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    let bf16 = |x: f32| half::bf16::from_f32(x).to_bits() as u32;
    for l in 0..64 {
        let want = f16(inputs[l % 8]) | f16(inputs[(l + 3) % 8]) << 16;
        assert_eq!(h.wave.vgpr[D][l], want, "f16 lane {l}");
    }
    h.run(&vop3([0xd2680010, 0x00166120])).unwrap();
    for l in 0..64 {
        let want = bf16(inputs[l % 8]) | bf16(inputs[(l + 3) % 8]) << 16;
        assert_eq!(h.wave.vgpr[D][l], want, "bf16 lane {l}");
    }
    // v_cvt_f32_bf16_e32 v16, v32: the low half widened.
    set(&mut h, A, |l| 0xabcd_0000 | bf16(inputs[l % 8]));
    h.run(&[vop1(0x7e20b720)]).unwrap();
    for l in 0..64 {
        assert_eq!(h.wave.vgpr[D][l], bf16(inputs[l % 8]) << 16, "lane {l}");
    }
}

#[test]
fn stochastic_rounding_uses_the_random_operand() {
    // v_cvt_sr_f16_f32 v16, v32, v48 op_sel:[0,0,1]: result in the high half, low half kept.
    let x = 1.0 + 2f32.powi(-11); // halfway between two f16 values; 13 bits discarded = 0x1000
    let mut h = harness();
    set(&mut h, A, |_| x.to_bits());
    // The seed's top 13 bits are the random fraction (the 13 bits f16 drops).
    set(&mut h, B, |l| if l % 2 == 0 { 0x0fff << 19 } else { 0x1000 << 19 | 0x7_ffff });
    set(&mut h, D, |l| l as u32);
    h.run(&vop3([0xd2a64010, 0x05026120])).unwrap();
    for l in 0..64 {
        let r = if l % 2 == 0 { 0x3c00 } else { 0x3c01 };
        assert_eq!(h.wave.vgpr[D][l], r << 16 | l as u32, "lane {l}");
    }
    // v_cvt_sr_bf16_f32 v16, v32, v48: 16 bits discarded.
    set(&mut h, A, |_| 0x3f80_8000);
    set(&mut h, B, |l| if l < 32 { 0x7fff_ffff } else { 0x8000_0000 });
    set(&mut h, D, |_| 0xffff_ffff);
    h.run(&vop3([0xd2a70010, 0x00166120])).unwrap();
    for l in 0..64 {
        let r = if l < 32 { 0x3f80 } else { 0x3f81 };
        assert_eq!(h.wave.vgpr[D][l], 0xffff_0000 | r, "lane {l}");
    }
}

/// IEEE 754-2019 minimum (`max`: maximum): a NaN operand wins, -0 < +0.
fn ieee_extreme(a: f32, b: f32, max: bool) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a == b {
        // ±0: the sign decides.
        if a.is_sign_negative() != max {
            a
        } else {
            b
        }
    } else if max {
        a.max(b)
    } else {
        a.min(b)
    }
}

#[test]
fn minimum3_and_maximum3_propagate_nan() {
    let vals = [1.0f32, -0.0, 0.0, f32::NAN, -3.0, f32::INFINITY, 2.5, -f32::INFINITY];
    let mut h = harness();
    set(&mut h, A, |l| vals[l % 8].to_bits());
    set(&mut h, B, |l| vals[(l / 8) % 8].to_bits());
    set(&mut h, C, |l| vals[(l + 5) % 8].to_bits());
    for (words, max) in [([0xd2a80010u32, 0x05026120], false), ([0xd2a90010, 0x05026120], true)] {
        h.run(&vop3(words)).unwrap();
        for l in 0..64 {
            let (a, b, c) = (vals[l % 8], vals[(l / 8) % 8], vals[(l + 5) % 8]);
            let want = ieee_extreme(ieee_extreme(a, b, max), c, max);
            let got = f32::from_bits(h.wave.vgpr[D][l]);
            if want.is_nan() {
                assert!(got.is_nan(), "lane {l}: {got}");
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "lane {l} max={max}");
            }
        }
    }
}

#[test]
fn ashr_pk_saturates_to_bytes() {
    let mut h = harness();
    let a = [0x7fff_ffffu32, 0x8000_0000, 1000, 0xffff_ff00, 255, 300, 0, 0xffff_ffff];
    set(&mut h, A, |l| a[l % 8]);
    set(&mut h, B, |l| a[(l + 1) % 8]);
    set(&mut h, C, |l| (l / 8) as u32 | 0x20); // shift 0..7 (bit 5 ignored)
    set(&mut h, D, |_| 0xaaaa_0000);
    for (words, signed) in [([0xd2650010u32, 0x05026120], true), ([0xd2660010, 0x05026120], false)] {
        h.run(&vop3(words)).unwrap();
        for l in 0..64 {
            let sh = (l / 8) as u32;
            let sat = |v: u32| {
                let v = (v as i32) >> sh;
                if signed {
                    v.clamp(-128, 127) as u8 as u32
                } else {
                    v.clamp(0, 255) as u32
                }
            };
            let want = 0xaaaa_0000 | sat(a[l % 8]) | sat(a[(l + 1) % 8]) << 8;
            assert_eq!(h.wave.vgpr[D][l], want, "lane {l} signed={signed}");
        }
    }
}

#[test]
fn packed_bf16_dot_and_f16_maximum3() {
    let bf = |x: f32| half::bf16::from_f32(x).to_bits() as u32;
    let hf = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    let mut h = harness();
    set(&mut h, A, |l| bf(l as f32) | bf(0.5) << 16);
    set(&mut h, B, |l| bf(2.0) | bf(-(l as f32)) << 16);
    set(&mut h, C, |_| 10f32.to_bits());
    // v_dot2_f32_bf16 v16, v32, v48, v64: l*2 + 0.5*(-l) + 10.
    h.run(&vop3([0xd39a4010, 0x1d026120])).unwrap();
    for l in 0..64 {
        let want = 2.0 * l as f32 - 0.5 * l as f32 + 10.0;
        assert_eq!(f32::from_bits(h.wave.vgpr[D][l]), want, "lane {l}");
    }
    // v_pk_maximum3_f16 v16, v32, v48, v64 per half.
    set(&mut h, A, |l| hf(l as f32) | hf(-1.0) << 16);
    set(&mut h, B, |_| hf(7.0) | 0x7e00 << 16); // high half: NaN wins
    set(&mut h, C, |_| hf(-0.0) | hf(3.0) << 16);
    h.run(&vop3([0xd39c4010, 0x1d026120])).unwrap();
    for l in 0..64 {
        let lo = hf((l as f32).max(7.0));
        assert_eq!(h.wave.vgpr[D][l] & 0xffff, lo, "lane {l}");
        assert_eq!(h.wave.vgpr[D][l] >> 16 & 0x7e00, 0x7e00, "lane {l}: NaN");
    }
}

/// `v_mfma_f32_16x16x32_f16` (K doubled over gfx942's 16x16x16): A, B take 8 halves per lane
/// in 4 VGPRs. CDNA4 guide layout: A[i][k] in lane i + 16*(k/8), element k%8; B[k][j] in lane
/// j + 16*(k/8), element k%8; C/D[i][j] in lane j + 16*(i/4), register i%4.
#[test]
fn mfma_16x16x32_f16_matches_a_cpu_product() {
    let mut h = harness();
    let a = |i: usize, k: usize| ((i * 7 + k * 3) % 11) as f32 - 5.0;
    let b = |k: usize, j: usize| ((k * 5 + j) % 9) as f32 * 0.5 - 2.0;
    let c = |i: usize, j: usize| (i * 16 + j) as f32;
    let hf = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    for lane in 0..64 {
        for e in 0..8 {
            let (row, k) = (lane % 16, (lane / 16) * 8 + e);
            let (reg, shift) = (e / 2, 16 * (e % 2));
            h.wave.vgpr[A + reg][lane] |= hf(a(row, k)) << shift;
            h.wave.vgpr[B + reg][lane] |= hf(b(k, row)) << shift;
        }
        for r in 0..4 {
            let (i, j) = ((lane / 16) * 4 + r, lane % 16);
            h.wave.vgpr[C + r][lane] = c(i, j).to_bits();
        }
    }
    h.run(&vop3([0xd3d40010, 0x05026120])).unwrap();
    for lane in 0..64 {
        for r in 0..4 {
            let (i, j) = ((lane / 16) * 4 + r, lane % 16);
            let want: f32 = c(i, j) + (0..32).map(|k| a(i, k) * b(k, j)).sum::<f32>();
            assert_eq!(f32::from_bits(h.wave.vgpr[D + r][lane]), want, "D[{i}][{j}]");
        }
    }
}
