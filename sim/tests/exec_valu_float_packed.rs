//! f16 arithmetic, VOP3P packed math (halves/dwords chosen by op_sel and
//! op_sel_hi, neg_lo/neg_hi, inline constants), v_fma_mix* and dot
//! products. Expected values are worked out by hand from the MI200 ISA
//! pseudo-code, on operands whose results are exact or whose rounding is
//! spelled out.
//! Encodings assembled with `llvm-mc-15 -arch=amdgcn -mcpu=gfx90a -show-encoding`.

use sim::testing::Harness;

/// `v_add_f16 v2, v0, v1`
const ADD_F16: &[u32] = &[0x3e040300];
/// `v_mul_f16 v2, v0, v1`
const MUL_F16: &[u32] = &[0x44040300];
/// `v_fma_f16 v3, v0, v1, v2`
const FMA_F16: &[u32] = &[0xd2060003, 0x040a0300];
/// `v_fma_f16 v3, v0, v1, v2 op_sel:[1,0,0,1]`
const FMA_F16_HI: &[u32] = &[0xd2064803, 0x040a0300];
/// `v_mad_legacy_f16 v3, v0, v1, v2`
const MAD_LEGACY_F16: &[u32] = &[0xd1ea0003, 0x040a0300];
/// `v_max3_f16 v3, v0, v1, v2`
const MAX3_F16: &[u32] = &[0xd1f70003, 0x040a0300];
/// `v_pk_fma_f16 v3, v0, v1, v2`
const PK_FMA_F16: &[u32] = &[0xd38e4003, 0x1c0a0300];
/// `v_pk_fma_f16 v3, v0, v1, v2 op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[0,1,0]`
const PK_FMA_F16_SEL: &[u32] = &[0xd38e4803, 0x540a0300];
/// `v_pk_add_f16 v2, v0, 1.0`
const PK_ADD_F16_CONST: &[u32] = &[0xd38f4002, 0x1801e500];
/// `v_pk_mul_f16 v2, v0, v1`
const PK_MUL_F16: &[u32] = &[0xd3904002, 0x18020300];
/// `v_pk_add_u16 v2, v0, v1 clamp`
const PK_ADD_U16_CLAMP: &[u32] = &[0xd38ac002, 0x18020300];
/// `v_pk_sub_i16 v2, v0, v1`
const PK_SUB_I16: &[u32] = &[0xd3834002, 0x18020300];
/// `v_pk_lshlrev_b16 v2, v0, v1`
const PK_LSHLREV_B16: &[u32] = &[0xd3844002, 0x18020300];
/// `v_pk_mad_u16 v3, v0, v1, v2`
const PK_MAD_U16: &[u32] = &[0xd3894003, 0x1c0a0300];
/// `v_pk_max_i16 v2, v0, v1`
const PK_MAX_I16: &[u32] = &[0xd3874002, 0x18020300];
/// `v_pk_fma_f32 v[6:7], v[0:1], v[2:3], v[4:5]`
const PK_FMA_F32: &[u32] = &[0xd3b04006, 0x1c120500];
/// `v_pk_fma_f32 v[6:7], v[0:1], v[2:3], v[4:5] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_hi:[0,1,0]`
const PK_FMA_F32_SEL: &[u32] = &[0xd3b04a06, 0x14120500];
/// `v_pk_mul_f32 v[6:7], v[0:1], 2.0`
const PK_MUL_F32_CONST: &[u32] = &[0xd3b14006, 0x1801e900];
/// `v_pk_add_f32 v[6:7], v[0:1], v[2:3]`
const PK_ADD_F32: &[u32] = &[0xd3b24006, 0x18020500];
/// `v_pk_mov_b32 v[6:7], v[0:1], v[2:3] op_sel:[1,0]`
const PK_MOV_B32: &[u32] = &[0xd3b34806, 0x18020500];
/// `v_fma_mix_f32 v3, v0, v1, v2 op_sel_hi:[1,1,0]`
const FMA_MIX_F32: &[u32] = &[0xd3a00003, 0x1c0a0300];
/// `v_fma_mix_f32 v3, -v0, |v1|, v2 op_sel:[1,0,0] op_sel_hi:[1,0,0]`
const FMA_MIX_F32_SEL: &[u32] = &[0xd3a00a03, 0x2c0a0300];
/// `v_fma_mixlo_f16 v3, v0, v1, v2 op_sel_hi:[1,1,1]`
const FMA_MIXLO_F16: &[u32] = &[0xd3a14003, 0x1c0a0300];
/// `v_fma_mixhi_f16 v3, v0, v1, v2 op_sel_hi:[1,1,1]`
const FMA_MIXHI_F16: &[u32] = &[0xd3a24003, 0x1c0a0300];
/// `v_dot2_f32_f16 v3, v0, v1, v2`
const DOT2_F32_F16: &[u32] = &[0xd3a34003, 0x1c0a0300];
/// `v_dot2c_f32_f16 v2, v0, v1`
const DOT2C_F32_F16: &[u32] = &[0x6e040300];
/// `v_dot4_i32_i8 v3, v0, v1, v2`
const DOT4_I32_I8: &[u32] = &[0xd3a84003, 0x1c0a0300];
/// `v_dot4c_i32_i8 v2, v0, v1`
const DOT4C_I32_I8: &[u32] = &[0x72040300];
/// `v_dot2_u32_u16 v3, v0, v1, v2 clamp`
const DOT2_U32_U16_CLAMP: &[u32] = &[0xd3a7c003, 0x1c0a0300];
/// `v_dot8_i32_i4 v3, v0, v1, v2`
const DOT8_I32_I4: &[u32] = &[0xd3aa4003, 0x1c0a0300];
/// `v_pk_fmac_f16 v2, v0, v1`
const PK_FMAC_F16: &[u32] = &[0x78040300];

const HIP: u32 = 0x2f0;

/// Runs `words` with lane 0..n of v0..v3 set from `regs[r][lane]`;
/// returns the harness.
fn run(words: &[u32], regs: &[&[u32]]) -> Harness {
    let mut h = Harness::new();
    h.wave.mode = HIP;
    for (r, vals) in regs.iter().enumerate() {
        for (l, v) in vals.iter().enumerate() {
            h.wave.vgpr[r][l] = *v;
        }
    }
    h.run(words).unwrap();
    h
}

// f16 constants
const ONE: u32 = 0x3c00;
const TWO: u32 = 0x4000;
const THREE: u32 = 0x4200;
const HALF: u32 = 0x3800;
const MINUS_ONE: u32 = 0xbc00;

#[test]
fn f16_vop2_zeroes_the_high_half() {
    let h = run(ADD_F16, &[&[0xffff_3c00, 0x7bff, 0x0001, 0x7e00], &[0xffff_3c00, 0x7bff, 0x0001, 0x3c00]]);
    assert_eq!(&h.wave.vgpr[2][..4], &[TWO, 0x7c00, 0x0002, 0x7e00]);
    // 1.5 * 1.5 = 2.25; (1 + 2^-10)^2 rounds to 1 + 2^-9.
    let h = run(MUL_F16, &[&[0x3e00, 0x3c01], &[0x3e00, 0x3c01]]);
    assert_eq!(&h.wave.vgpr[2][..2], &[0x4080, 0x3c02]);
}

#[test]
fn f16_vop3_op_sel_halves() {
    // v_fma_f16 v3, v0, v1, v2: low half written, high half kept.
    let h = run(FMA_F16, &[&[TWO], &[THREE], &[ONE], &[0xabcd_0000]]);
    assert_eq!(h.wave.vgpr[3][0], 0xabcd_0000 | 0x4700, "2*3+1 = 7");
    // op_sel:[1,0,0,1]: src0 from the high half, result to the high half.
    let h = run(FMA_F16_HI, &[&[THREE << 16 | TWO], &[THREE], &[ONE], &[0x0000_1234]]);
    assert_eq!(h.wave.vgpr[3][0], 0x4900_1234, "3*3+1 = 10 in the high half");
    // _legacy: the high half is zeroed.
    let h = run(MAD_LEGACY_F16, &[&[TWO], &[THREE], &[ONE], &[0xffff_ffff]]);
    assert_eq!(h.wave.vgpr[3][0], 0x4700);
    let h = run(MAX3_F16, &[&[TWO], &[0x7e00], &[MINUS_ONE], &[0x5555_0000]]);
    assert_eq!(h.wave.vgpr[3][0], 0x5555_0000 | TWO, "a quiet NaN is ignored");
}

#[test]
fn packed_f16() {
    let h = run(PK_FMA_F16, &[&[TWO << 16 | THREE], &[THREE << 16 | TWO], &[HALF << 16 | ONE]]);
    assert_eq!(h.wave.vgpr[3][0], 0x4680 << 16 | 0x4700, "hi 2*3+0.5 = 6.5, lo 3*2+1 = 7");
    // op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[0,1,0]:
    // lo = a.hi * -b.lo + c.lo, hi = a.lo * b.hi + c.hi
    let h = run(PK_FMA_F16_SEL, &[&[TWO << 16 | THREE], &[THREE << 16 | TWO], &[HALF << 16 | ONE]]);
    assert_eq!(h.wave.vgpr[3][0], 0x48c0 << 16 | 0xc200, "hi 3*3+0.5 = 9.5, lo 2*-2+1 = -3");
    // Inline constant: 1.0 in the low half, 0 in the high half.
    let h = run(PK_ADD_F16_CONST, &[&[TWO << 16 | TWO]]);
    assert_eq!(h.wave.vgpr[2][0], TWO << 16 | THREE);
    let h = run(PK_MUL_F16, &[&[MINUS_ONE << 16 | HALF], &[HALF << 16 | HALF]]);
    assert_eq!(h.wave.vgpr[2][0], 0xb800 << 16 | 0x3400);
    let h = run(PK_FMAC_F16, &[&[TWO << 16 | TWO], &[THREE << 16 | ONE], &[ONE << 16 | ONE]]);
    assert_eq!(h.wave.vgpr[2][0], 0x4700 << 16 | THREE);
}

#[test]
fn packed_int16() {
    let h = run(PK_ADD_U16_CLAMP, &[&[0xfff0_0001], &[0x0020_0002]]);
    assert_eq!(h.wave.vgpr[2][0], 0xffff_0003, "the high half saturates");
    let h = run(PK_SUB_I16, &[&[0x8000_0005], &[0x0001_0007]]);
    assert_eq!(h.wave.vgpr[2][0], 0x7fff_fffe, "wraps without clamp");
    let h = run(PK_LSHLREV_B16, &[&[0x0011_0004], &[0x0003_0003]]);
    assert_eq!(h.wave.vgpr[2][0], 0x0006_0030, "shift counts use 4 bits");
    let h = run(PK_MAD_U16, &[&[0x0100_0003], &[0x0100_0004], &[0x0001_0005]]);
    assert_eq!(h.wave.vgpr[3][0], 0x0001_0011, "hi 0x10000 + 1 keeps the low 16 bits");
    let h = run(PK_MAX_I16, &[&[0x8000_0001], &[0x0001_ffff]]);
    assert_eq!(h.wave.vgpr[2][0], 0x0001_0001);
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn packed_f32_and_mov() {
    let h = run(PK_FMA_F32, &[&[f(2.0)], &[f(3.0)], &[f(4.0)], &[f(5.0)], &[f(1.0)], &[f(0.5)]]);
    assert_eq!([h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [f(9.0), f(15.5)]);
    // op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_hi:[0,1,0]: lo = a.hi*b.lo + c.lo, hi = a.lo * -b.hi + c.hi
    let h = run(PK_FMA_F32_SEL, &[&[f(2.0)], &[f(3.0)], &[f(4.0)], &[f(5.0)], &[f(1.0)], &[f(0.5)]]);
    assert_eq!([h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [f(13.0), f(-9.5)]);
    // An inline constant feeds both dwords.
    let h = run(PK_MUL_F32_CONST, &[&[f(1.5)], &[f(-3.0)]]);
    assert_eq!([h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [f(3.0), f(-6.0)]);
    let h = run(PK_ADD_F32, &[&[f(1.0)], &[f(2.0)], &[f(0.25)], &[f(0.5)]]);
    assert_eq!([h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [f(1.25), f(2.5)]);
    // v_pk_mov_b32 op_sel:[1,0]: lo = src0.hi, hi = src1.lo
    let h = run(PK_MOV_B32, &[&[11], &[22], &[33], &[44]]);
    assert_eq!([h.wave.vgpr[6][0], h.wave.vgpr[7][0]], [22, 33]);
}

/// A packed-f32 NaN result carries its first NaN input, quieted, whichever order the two
/// NaNs come in (the host instruction alone returns the one its operand order favours), as
/// the unpacked ops' results do.
#[test]
fn packed_f32_nan_results_carry_the_first_nan_input_quieted() {
    let (snan, qnan, neg_snan) = (0x7fa0_1234, 0xffc1_2345, 0xff80_0001);
    // Even lanes: (sNaN, qNaN) in the low dwords, (1.0, -sNaN) in the high ones; odd lanes
    // swapped.
    let regs: [&[u32]; 4] = [&[snan, qnan], &[f(1.0), neg_snan], &[qnan, snan], &[neg_snan, f(1.0)]];
    // `v_pk_add_f32` and `v_pk_mul_f32 v[6:7], v[0:1], v[2:3]`; f32 denormals kept, flushed
    // on input and output, flushed on input only (the host code differs between them).
    for words in [PK_ADD_F32, &[0xd3b14006, 0x18020500][..]] {
        for mode in [HIP, 0xf0, 0xc0, 0xd0] {
            let mut h = Harness::new();
            h.wave.mode = mode;
            for (r, vals) in regs.iter().enumerate() {
                for l in 0..64 {
                    h.wave.vgpr[r][l] = vals[l % 2];
                }
            }
            h.run(words).unwrap();
            for l in 0..64 {
                let want = if l % 2 == 0 { [0x7fe0_1234, 0xffc0_0001] } else { [qnan, 0xffc0_0001] };
                assert_eq!([h.wave.vgpr[6][l], h.wave.vgpr[7][l]], want, "{words:x?}, MODE {mode:#x}, lane {l}");
            }
        }
    }
}

#[test]
fn fma_mix() {
    // f16 * f16 + f32
    let h = run(FMA_MIX_F32, &[&[THREE], &[TWO], &[f(0.25)]]);
    assert_eq!(h.wave.vgpr[3][0], f(6.25));
    // -(a.hi as f16) * |b as f32| + c
    let h = run(FMA_MIX_F32_SEL, &[&[HALF << 16 | THREE], &[f(-8.0)], &[f(1.0)]]);
    assert_eq!(h.wave.vgpr[3][0], f(-3.0));
    // mixlo/mixhi: f16 result into one half, the other kept.
    let h = run(FMA_MIXLO_F16, &[&[THREE], &[TWO], &[ONE], &[0xdead_beef]]);
    assert_eq!(h.wave.vgpr[3][0], 0xdead_0000 | 0x4700);
    let h = run(FMA_MIXHI_F16, &[&[THREE], &[TWO], &[ONE], &[0xdead_beef]]);
    assert_eq!(h.wave.vgpr[3][0], 0x4700_beef);
}

#[test]
fn dot_products() {
    let h = run(DOT2_F32_F16, &[&[TWO << 16 | THREE], &[HALF << 16 | TWO], &[f(0.5)]]);
    assert_eq!(h.wave.vgpr[3][0], f(7.5), "2*0.5 + 3*2 + 0.5");
    let h = run(DOT2C_F32_F16, &[&[TWO << 16 | THREE], &[HALF << 16 | TWO], &[f(0.5)]]);
    assert_eq!(h.wave.vgpr[2][0], f(7.5));
    let h = run(DOT4_I32_I8, &[&[0xff02_0304], &[0x0505_0505], &[10]]);
    assert_eq!(h.wave.vgpr[3][0], (10 + 5 * (-1 + 2 + 3 + 4)) as u32);
    let h = run(DOT4C_I32_I8, &[&[0x8080_8080], &[0x7f7f_7f7f], &[1]]);
    assert_eq!(h.wave.vgpr[2][0], (1 - 4 * 128 * 127) as u32);
    let h = run(DOT2_U32_U16_CLAMP, &[&[0xffff_ffff], &[0xffff_ffff], &[0xffff_0000]]);
    assert_eq!(h.wave.vgpr[3][0], 0xffff_ffff, "saturates");
    let h = run(DOT8_I32_I4, &[&[0x8765_4321], &[0x1111_1111], &[0]]);
    assert_eq!(h.wave.vgpr[3][0], (1 + 2 + 3 + 4 + 5 + 6 + 7 - 8) as u32);
}

#[test]
fn packed_f32_fma_matches_host_fma() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly ordinary magnitudes, some arbitrary patterns.
        if x.is_multiple_of(4) {
            (x >> 32) as u32
        } else {
            ((x >> 32) as u32 & 0x807f_ffff) | ((120 + (x % 16) as u32) << 23)
        }
    };
    for _ in 0..50 {
        let regs: Vec<Vec<u32>> = (0..6).map(|_| (0..64).map(|_| next()).collect()).collect();
        let refs: Vec<&[u32]> = regs.iter().map(|r| r.as_slice()).collect();
        let h = run(PK_FMA_F32_SEL, &refs);
        let g = |r: usize, l: usize| f32::from_bits(regs[r][l]);
        for l in 0..64 {
            let lo = g(1, l).mul_add(g(2, l), g(4, l));
            let hi = g(0, l).mul_add(-g(3, l), g(5, l));
            for (got, want) in [(h.wave.vgpr[6][l], lo), (h.wave.vgpr[7][l], hi)] {
                assert!(got == want.to_bits() || f32::from_bits(got).is_nan() && want.is_nan(), "lane {l}");
            }
        }
    }
}
