//! MI300 (gfx942) fp8/bf8 conversions. Formats: fp8 = E4M3 with bias 8,
//! bf8 = E5M2 with bias 16, 0x80 the only NaN (no infinities, no -0).
//! Expected bytes are worked out by hand from those definitions.
//! Encodings assembled with `llvm-mc-19 -arch=amdgcn -mcpu=gfx942 -show-encoding`.

use sim::isa::Target;
use sim::testing::Harness;

/// `v_cvt_f32_fp8 v1, v2`
const CVT_F32_FP8: &[u32] = &[0x7e02a902];
/// `v_cvt_f32_fp8_sdwa v1, v2 src0_sel:BYTE_2`
const CVT_F32_FP8_B2: &[u32] = &[0x7e02a8f9, 0x00020602];
/// `v_cvt_f32_bf8 v1, v2`
const CVT_F32_BF8: &[u32] = &[0x7e02ab02];
/// `v_cvt_pk_f32_fp8 v[4:5], v2`
const CVT_PK_F32_FP8: &[u32] = &[0x7e08ad02];
/// `v_cvt_pk_f32_bf8_sdwa v[4:5], v2 src0_sel:WORD_1`
const CVT_PK_F32_BF8_W1: &[u32] = &[0x7e08aef9, 0x00050602];
/// `v_cvt_pk_fp8_f32 v1, v2, v3`
const CVT_PK_FP8_F32: &[u32] = &[0xd2a20001, 0x00020702];
/// `v_cvt_pk_bf8_f32 v1, v2, v3 op_sel:[0,0,1]`
const CVT_PK_BF8_F32_HI: &[u32] = &[0xd2a34001, 0x00020702];
/// `v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,1]`
const CVT_SR_FP8_F32_B3: &[u32] = &[0xd2a46001, 0x00020702];
/// `v_cvt_sr_bf8_f32 v1, v2, v3`
const CVT_SR_BF8_F32: &[u32] = &[0xd2a50001, 0x00020702];

fn run(words: &[u32], v1: &[u32], v2: &[u32], v3: &[u32]) -> Harness {
    let mut h = Harness::for_target(Target::Gfx942);
    h.wave.mode = 0x2f0;
    for (l, v) in v1.iter().enumerate() {
        h.wave.vgpr[1][l] = *v;
    }
    for (l, v) in v2.iter().enumerate() {
        h.wave.vgpr[2][l] = *v;
    }
    for (l, v) in v3.iter().enumerate() {
        h.wave.vgpr[3][l] = *v;
    }
    h.run(words).unwrap();
    h
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn decode_fp8_and_bf8() {
    // fp8: 0x40 = 1.0, 0x48 = 2.0, 0xb8 = -0.5, 0x7f = 240 (largest), 0x01 = 2^-10, 0x80 = NaN.
    let h = run(CVT_F32_FP8, &[], &[0x40, 0x48, 0xb8, 0x7f, 0x01, 0x80, 0x1234_5600], &[]);
    assert_eq!(&h.wave.vgpr[1][..5], &[f(1.0), f(2.0), f(-0.5), f(240.0), f(2f32.powi(-10))]);
    assert!(f32::from_bits(h.wave.vgpr[1][5]).is_nan());
    assert_eq!(h.wave.vgpr[1][6], 0, "byte 0 only");
    let h = run(CVT_F32_FP8_B2, &[], &[0x0048_0000], &[]);
    assert_eq!(h.wave.vgpr[1][0], f(2.0), "SDWA selects byte 2");
    // bf8: 0x40 = 1.0, 0x44 = 2.0, 0xbc = -0.5, 0x7f = 57344, 0x01 = 2^-17.
    let h = run(CVT_F32_BF8, &[], &[0x40, 0x44, 0xbc, 0x7f, 0x01], &[]);
    assert_eq!(&h.wave.vgpr[1][..5], &[f(1.0), f(2.0), f(-0.5), f(57344.0), f(2f32.powi(-17))]);
    // Packed: the two bytes of the low word (or of the high word with WORD_1).
    let h = run(CVT_PK_F32_FP8, &[], &[0xaaaa_4840], &[]);
    assert_eq!([h.wave.vgpr[4][0], h.wave.vgpr[5][0]], [f(1.0), f(2.0)]);
    let h = run(CVT_PK_F32_BF8_W1, &[], &[0xbc44_0000], &[]);
    assert_eq!([h.wave.vgpr[4][0], h.wave.vgpr[5][0]], [f(2.0), f(-0.5)]);
}

#[test]
fn encode_fp8_and_bf8() {
    // v_cvt_pk_fp8_f32 v1, v2, v3: byte 0 from v2, byte 1 from v3, high word kept.
    let h = run(
        CVT_PK_FP8_F32,
        &[0xdead_beef, 0xdead_beef, 0xdead_beef, 0xdead_beef],
        &[f(1.0), f(1.0625), f(1e6), f(f32::NAN)],
        &[f(-0.5), f(1.1875), f(240.0), f(f32::INFINITY)],
    );
    // 1.0625 is halfway between 1.0 and 1.125: ties to even (0x40); 1.1875 -> 1.25 (0x42).
    assert_eq!(&h.wave.vgpr[1][..4], &[0xdead_b840, 0xdead_4240, 0xdead_7f80, 0xdead_8080]);
    // bf8 into the high word.
    let h = run(CVT_PK_BF8_F32_HI, &[0x1234_5678], &[f(2.0)], &[f(-0.5)]);
    assert_eq!(h.wave.vgpr[1][0], 0xbc44_5678);
    // Stochastic rounding: 1.0625 (fp8 step 0.125) with random bits below
    // the half-step rounds down, with all-ones bits up.
    let h = run(CVT_SR_FP8_F32_B3, &[0x0011_2233, 0x0011_2233], &[f(1.0625), f(1.0625)], &[0, 0xffff_ffff]);
    assert_eq!(&h.wave.vgpr[1][..2], &[0x4011_2233, 0x4111_2233], "byte 3 written, others kept");
    let h = run(CVT_SR_BF8_F32, &[0xffff_ff00], &[f(-2.0)], &[0x1234]);
    assert_eq!(h.wave.vgpr[1][0], 0xffff_ffc4, "exact values ignore the random bits");
}
