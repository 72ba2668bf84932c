//! gfx950 (CDNA4) conversions with a shared scale (OCP microscaling): the `v_cvt_scalef32_*`
//! family, between f32/f16/bf16 and the small formats of [`minifloat`] (fp8 E4M3, bf8 E5M2,
//! fp6 E2M3, bf6 E3M2, fp4 E2M1).
//!
//! Semantics follow the CDNA4 guide's pseudocode (VOP3A chapter) and section 7.3:
//! - The scale is the 8-bit exponent field of an f32 operand, read as an E8M0 value
//!   2^(e - 127) (so a constant like 1.0 gives 2^0); 0xff (an infinite or NaN f32) is the
//!   E8M0 NaN and makes every result NaN. Conversions to a small format divide by the scale
//!   (quantisation), conversions from one multiply by it, both exactly, then round once.
//! - To a small format: round to nearest even, or stochastically for the `sr_` forms (see
//!   [`Mini::encode`]; the random bits that count are the top ones of the seed, as many as the
//!   source has mantissa bits beyond the result's: the f32 `v_cvt_sr_fp8_f32` adds
//!   `S1[31:12]`). Multi-element `sr_` forms take a new random value for each element after the
//!   first from [`prng`] (`v_prng_b32`), as the pseudocode does; the seed register is not written.
//!   fp4/fp6 saturate, fp8/bf8 saturate only with MODE.FP16_OVFL (bit 23), else NaN/inf.
//! - From a small format to f32/f16/bf16: exact value times the scale, rounded to nearest even
//!   (denormals kept: "F4/F6/F8 allows denorms regardless of MODE"); overflow gives infinity.
//! - f32 inputs honour MODE's f32 input-denormal control; f16/bf16 inputs are never flushed.
//! - Input modifiers: abs/neg act on the sign of each f32/f16/bf16 element of a source (every
//!   element of a packed or multi-register source). Conversions from small formats take none
//!   (the guide: "Conversion from F4/F6/F8 do not support input modifiers"). OMOD and clamp
//!   are ignored ("Convert ops do not support OMOD").
//! - Byte/word selection: `op_sel[1:0]` picks the source byte (single fp8 and packed fp4
//!   inputs), `op_sel[0]` the source word (packed fp8 inputs) and, for the single-value f16/bf16
//!   `sr_` sources, the high half (our choice: the usual VOP3 16-bit rule; the guide only
//!   writes `S0.f16`). `op_sel[3]` picks the destination word of 16-bit results and
//!   `op_sel[3:2]` the destination byte of 8-bit ones; the rest of the register is kept. The
//!   `v_cvt_scalef32_f16_{fp8,bf8}` result goes to the half `op_sel[3]` names, the other half
//!   kept (the guide's comment "OPSEL[3] controls destination hi/lo").
//! - Packing: element j of a packed 6-bit vector is bits 6j..6j+5 of the 192-bit register
//!   group (little-endian across registers); 2xpk16 interleaves S0 and S1 (S0 elements even).

use super::cdna4::prng;
use super::common::write_lanes;
use super::fp::{self, Env, Rm};
use super::minifloat::{Mini, BF6, BF8, FP4, FP6, FP8};
use crate::gpu::exec::wave::{Lanes, LANES};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Inst, Op, Operand, Ty};

/// The wide side of a conversion.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wide {
    F32,
    F16,
    Bf16,
}

impl Wide {
    /// Stored mantissa bits (how many random bits stochastic rounding uses).
    const fn mbits(self) -> u32 {
        match self {
            Wide::F32 => 23,
            Wide::F16 => 10,
            Wide::Bf16 => 7,
        }
    }
}

pub fn handler(op: Op) -> Option<Handler> {
    use Wide::*;
    let h: Handler = match op {
        // Two values to a packed fp8/bf8 word.
        Op::VCvtScalef32PkFp8F32 => |w, i, _| pk8_down(w, i, FP8, F32),
        Op::VCvtScalef32PkBf8F32 => |w, i, _| pk8_down(w, i, BF8, F32),
        Op::VCvtScalef32PkFp8F16 => |w, i, _| pk8_down(w, i, FP8, F16),
        Op::VCvtScalef32PkBf8F16 => |w, i, _| pk8_down(w, i, BF8, F16),
        Op::VCvtScalef32PkFp8Bf16 => |w, i, _| pk8_down(w, i, FP8, Bf16),
        Op::VCvtScalef32PkBf8Bf16 => |w, i, _| pk8_down(w, i, BF8, Bf16),
        // One value, stochastically rounded, to a byte.
        Op::VCvtScalef32SrFp8F32 => |w, i, _| sr8_down(w, i, FP8, F32),
        Op::VCvtScalef32SrBf8F32 => |w, i, _| sr8_down(w, i, BF8, F32),
        Op::VCvtScalef32SrFp8F16 => |w, i, _| sr8_down(w, i, FP8, F16),
        Op::VCvtScalef32SrBf8F16 => |w, i, _| sr8_down(w, i, BF8, F16),
        Op::VCvtScalef32SrFp8Bf16 => |w, i, _| sr8_down(w, i, FP8, Bf16),
        Op::VCvtScalef32SrBf8Bf16 => |w, i, _| sr8_down(w, i, BF8, Bf16),
        // Two values to a packed fp4 byte.
        Op::VCvtScalef32PkFp4F32 => |w, i, _| pk4_down(w, i, F32, false),
        Op::VCvtScalef32PkFp4F16 => |w, i, _| pk4_down(w, i, F16, false),
        Op::VCvtScalef32PkFp4Bf16 => |w, i, _| pk4_down(w, i, Bf16, false),
        Op::VCvtScalef32SrPkFp4F32 => |w, i, _| pk4_down(w, i, F32, true),
        Op::VCvtScalef32SrPkFp4F16 => |w, i, _| pk4_down(w, i, F16, true),
        Op::VCvtScalef32SrPkFp4Bf16 => |w, i, _| pk4_down(w, i, Bf16, true),
        // 32 values to 32 packed fp6/bf6 (six registers).
        Op::VCvtScalef322xpk16Fp6F32 => |w, i, _| pk32_down(w, i, FP6, F32, Pk32::Interleaved),
        Op::VCvtScalef322xpk16Bf6F32 => |w, i, _| pk32_down(w, i, BF6, F32, Pk32::Interleaved),
        Op::VCvtScalef32SrPk32Fp6F32 => |w, i, _| pk32_down(w, i, FP6, F32, Pk32::Sr),
        Op::VCvtScalef32SrPk32Bf6F32 => |w, i, _| pk32_down(w, i, BF6, F32, Pk32::Sr),
        Op::VCvtScalef32Pk32Fp6F16 => |w, i, _| pk32_down(w, i, FP6, F16, Pk32::Ne),
        Op::VCvtScalef32Pk32Fp6Bf16 => |w, i, _| pk32_down(w, i, FP6, Bf16, Pk32::Ne),
        Op::VCvtScalef32Pk32Bf6F16 => |w, i, _| pk32_down(w, i, BF6, F16, Pk32::Ne),
        Op::VCvtScalef32Pk32Bf6Bf16 => |w, i, _| pk32_down(w, i, BF6, Bf16, Pk32::Ne),
        Op::VCvtScalef32SrPk32Fp6F16 => |w, i, _| pk32_down(w, i, FP6, F16, Pk32::Sr),
        Op::VCvtScalef32SrPk32Fp6Bf16 => |w, i, _| pk32_down(w, i, FP6, Bf16, Pk32::Sr),
        Op::VCvtScalef32SrPk32Bf6F16 => |w, i, _| pk32_down(w, i, BF6, F16, Pk32::Sr),
        Op::VCvtScalef32SrPk32Bf6Bf16 => |w, i, _| pk32_down(w, i, BF6, Bf16, Pk32::Sr),
        // From fp8/bf8.
        Op::VCvtScalef32F32Fp8 => |w, i, _| one_up(w, i, FP8, F32),
        Op::VCvtScalef32F32Bf8 => |w, i, _| one_up(w, i, BF8, F32),
        Op::VCvtScalef32F16Fp8 => |w, i, _| one_up(w, i, FP8, F16),
        Op::VCvtScalef32F16Bf8 => |w, i, _| one_up(w, i, BF8, F16),
        Op::VCvtScalef32PkF32Fp8 => |w, i, _| pk_up(w, i, FP8, F32),
        Op::VCvtScalef32PkF32Bf8 => |w, i, _| pk_up(w, i, BF8, F32),
        Op::VCvtScalef32PkF16Fp8 => |w, i, _| pk_up(w, i, FP8, F16),
        Op::VCvtScalef32PkF16Bf8 => |w, i, _| pk_up(w, i, BF8, F16),
        Op::VCvtScalef32PkBf16Fp8 => |w, i, _| pk_up(w, i, FP8, Bf16),
        Op::VCvtScalef32PkBf16Bf8 => |w, i, _| pk_up(w, i, BF8, Bf16),
        // From fp4.
        Op::VCvtScalef32PkF32Fp4 => |w, i, _| pk_up(w, i, FP4, F32),
        Op::VCvtScalef32PkF16Fp4 => |w, i, _| pk_up(w, i, FP4, F16),
        Op::VCvtScalef32PkBf16Fp4 => |w, i, _| pk_up(w, i, FP4, Bf16),
        // From 32 packed fp6/bf6.
        Op::VCvtScalef32Pk32F32Fp6 => |w, i, _| pk32_up(w, i, FP6, F32),
        Op::VCvtScalef32Pk32F32Bf6 => |w, i, _| pk32_up(w, i, BF6, F32),
        Op::VCvtScalef32Pk32F16Fp6 => |w, i, _| pk32_up(w, i, FP6, F16),
        Op::VCvtScalef32Pk32F16Bf6 => |w, i, _| pk32_up(w, i, BF6, F16),
        Op::VCvtScalef32Pk32Bf16Fp6 => |w, i, _| pk32_up(w, i, FP6, Bf16),
        Op::VCvtScalef32Pk32Bf16Bf6 => |w, i, _| pk32_up(w, i, BF6, Bf16),
        _ => return None,
    };
    Some(h)
}

/// The biased exponent of an f32 scale operand: the E8M0 scale.
#[inline]
fn scale_exp(bits: u32) -> u32 {
    (bits >> 23) & 0xff
}

/// The exact value `x / 2^(e - 127)` (`e` = 255: NaN).
#[inline]
fn unscale(x: f64, e: u32) -> f64 {
    if e == 0xff {
        f64::NAN
    } else {
        x * fp::pow2(127 - e as i32)
    }
}

/// A wide element (low bits of `bits`) as an exact f64; f32 inputs honour MODE's input
/// denormal control.
#[inline]
fn widen(bits: u32, from: Wide, env: Env) -> f64 {
    match from {
        Wide::F32 => fp::in32(bits, env),
        Wide::F16 => fp::f16_to_f64(bits as u16),
        Wide::Bf16 => f32::from_bits(bits << 16) as f64,
    }
}

/// The small-format code `c` times the scale `2^(e - 127)`, rounded to nearest even into
/// `to` (denormals kept).
#[inline]
fn up(c: u32, f: Mini, e: u32, to: Wide) -> u32 {
    let v = if e == 0xff { f64::NAN } else { f.decode(c) as f64 * fp::pow2(e as i32 - 127) };
    match to {
        Wide::F32 => (v as f32).to_bits(),
        Wide::F16 => fp::round(v, fp::F16, Rm::Ne, true) as u32,
        Wide::Bf16 => fp::round(v, fp::BF16, Rm::Ne, true) as u32,
    }
}

/// VOP3 fields this family uses: `op_sel` and the abs/neg bits.
#[inline]
fn vop3(inst: &Inst) -> (u32, u32, u32) {
    match inst.ext {
        Ext::Vop3(v) => (v.op_sel as u32, v.abs as u32, v.neg as u32),
        _ => (0, 0, 0),
    }
}

/// abs/neg of source `i` as masks over the sign bit of each element of format `from`
/// (applied to both halves of a dword for 16-bit elements).
#[inline]
fn sign_masks(inst: &Inst, i: usize, from: Wide) -> (u32, u32) {
    let (_, abs, neg) = vop3(inst);
    let sign = match from {
        Wide::F32 => 1 << 31,
        _ => 0x8000_8000,
    };
    let pick = |bits: u32| if bits >> i & 1 != 0 { sign } else { 0 };
    (pick(abs), pick(neg))
}

/// Register `k` of source `i`, unmodified: a VGPR/AGPR's lanes, or a scalar operand (an
/// SGPR, or for `k = 0` any constant, read as the 32-bit pattern of type `ty`) in every lane.
fn src_reg(w: &Wave, inst: &Inst, i: usize, k: usize, ty: Ty) -> Result<Lanes, ExecError> {
    let op = inst.src[i];
    Ok(match op {
        Operand::Vgpr(_) | Operand::Agpr(_) => *w.vreg(op, k)?,
        Operand::Sgpr(n) => [w.read_scalar32(Operand::Sgpr(n.wrapping_add(k as u8)), Ty::B32, inst.literal)?; LANES],
        _ if k == 0 => [w.read_scalar32(op, ty, inst.literal)?; LANES],
        _ => [0; LANES],
    })
}

/// Source `i` holding data of format `from` (constants typed as the op table says), with
/// abs/neg applied to every element.
fn data_reg(w: &Wave, inst: &Inst, i: usize, k: usize, from: Wide) -> Result<Lanes, ExecError> {
    let mut r = src_reg(w, inst, i, k, inst.info().src[i].ty)?;
    let (abs, neg) = sign_masks(inst, i, from);
    if abs | neg != 0 {
        for x in r.iter_mut() {
            *x = (*x & !abs) ^ neg;
        }
    }
    Ok(r)
}

/// A scale or seed operand: 32 bits (a constant's f32 pattern, whatever LLVM's operand type).
fn word(w: &Wave, inst: &Inst, i: usize) -> Result<Lanes, ExecError> {
    src_reg(w, inst, i, 0, Ty::B32)
}

/// Writes `vals` to register `k` of the destination in the lanes of `mask` (callers merge
/// partial-register results with the old value themselves).
#[inline]
fn put(w: &mut Wave, inst: &Inst, k: usize, vals: &Lanes, mask: u64) -> Result<(), ExecError> {
    write_lanes(w.vreg_mut(inst.dst[0], k)?, vals, mask);
    Ok(())
}

/// MODE.FP16_OVFL (bit 23): fp8/bf8 overflow saturates instead of giving NaN/inf.
#[inline]
fn saturate(w: &Wave) -> bool {
    w.mode >> 23 & 1 != 0
}

/// Replaces the `width` bits at `shift` of the destination's old value with `v`.
#[inline]
fn merge(old: u32, v: u32, shift: u32, width: u32) -> u32 {
    let m = ((1u64 << width) - 1) as u32;
    (old & !(m << shift)) | (v & m) << shift
}

/// `v_cvt_scalef32_pk_{fp8,bf8}_{f32,f16,bf16}`: two values (S0, S1 for f32 with the scale in
/// S2; the halves of S0 for 16-bit inputs with the scale in S1) to the word `op_sel[3]` names.
fn pk8_down(w: &mut Wave, inst: &Inst, f: Mini, from: Wide) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let sat = saturate(w);
    let mask = super::common::write_mask(w, inst);
    let (op_sel, _, _) = vop3(inst);
    let a = data_reg(w, inst, 0, 0, from)?;
    let (b, s) =
        if from == Wide::F32 { (data_reg(w, inst, 1, 0, from)?, word(w, inst, 2)?) } else { (a, word(w, inst, 1)?) };
    let d = *w.vreg(inst.dst[0], 0)?;
    let shift = 16 * (op_sel >> 3 & 1);
    let out: Lanes = std::array::from_fn(|l| {
        let e = scale_exp(s[l]);
        let (x0, x1) = if from == Wide::F32 { (a[l], b[l]) } else { (a[l] & 0xffff, a[l] >> 16) };
        let c = |x: u32| f.encode(unscale(widen(x, from, env), e), None, sat);
        merge(d[l], c(x0) | c(x1) << 8, shift, 16)
    });
    put(w, inst, 0, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_cvt_scalef32_sr_{fp8,bf8}_{f32,f16,bf16}`: S0 (the high half of a 16-bit source with
/// `op_sel[0]`), stochastically rounded with the seed S1, scale S2, to the byte `op_sel[3:2]`.
fn sr8_down(w: &mut Wave, inst: &Inst, f: Mini, from: Wide) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let sat = saturate(w);
    let mask = super::common::write_mask(w, inst);
    let (op_sel, _, _) = vop3(inst);
    let [a, r, s] = [data_reg(w, inst, 0, 0, from)?, word(w, inst, 1)?, word(w, inst, 2)?];
    let d = *w.vreg(inst.dst[0], 0)?;
    let half = if from != Wide::F32 && op_sel & 1 != 0 { 16 } else { 0 };
    let k = from.mbits() - f.mbits;
    let out: Lanes = std::array::from_fn(|l| {
        let x = widen(a[l] >> half, from, env);
        let c = f.encode(unscale(x, scale_exp(s[l])), Some((r[l], k)), sat);
        merge(d[l], c, 8 * (op_sel >> 2 & 3), 8)
    });
    put(w, inst, 0, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_cvt_scalef32_[sr_]pk_fp4_{f32,f16,bf16}`: two values to the nibbles of the byte
/// `op_sel[3:2]` names (first value in the low nibble). Plain f32: S0, S1, scale S2; 16-bit:
/// the halves of S0, scale S1; `sr_` f32: the two dwords of the 64-bit S0, seed S1, scale S2;
/// `sr_` 16-bit: the halves of S0, seed S1, scale S2. The second value's random bits are
/// `prng(seed)`.
fn pk4_down(w: &mut Wave, inst: &Inst, from: Wide, sr: bool) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = super::common::write_mask(w, inst);
    let (op_sel, _, _) = vop3(inst);
    let a = data_reg(w, inst, 0, 0, from)?;
    let (b, r, s) = match (from, sr) {
        (Wide::F32, false) => (data_reg(w, inst, 1, 0, from)?, [0; LANES], word(w, inst, 2)?),
        (Wide::F32, true) => (data_reg(w, inst, 0, 1, from)?, word(w, inst, 1)?, word(w, inst, 2)?),
        (_, false) => (a, [0; LANES], word(w, inst, 1)?),
        (_, true) => (a, word(w, inst, 1)?, word(w, inst, 2)?),
    };
    let d = *w.vreg(inst.dst[0], 0)?;
    let k = from.mbits() - FP4.mbits;
    let out: Lanes = std::array::from_fn(|l| {
        let e = scale_exp(s[l]);
        let (x0, x1) = if from == Wide::F32 { (a[l], b[l]) } else { (a[l] & 0xffff, a[l] >> 16) };
        let rnd = |r: u32| if sr { Some((r, k)) } else { None };
        let c0 = FP4.encode(unscale(widen(x0, from, env), e), rnd(r[l]), false);
        let c1 = FP4.encode(unscale(widen(x1, from, env), e), rnd(prng(r[l])), false);
        merge(d[l], c0 | c1 << 4, 8 * (op_sel >> 2 & 3), 8)
    });
    put(w, inst, 0, &out, mask)?;
    Ok(Flow::Next)
}

/// How a 32-element fp6/bf6 conversion takes its operands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pk32 {
    /// `2xpk16_*_f32`: S0 and S1 (16 registers each) interleaved, scale S2.
    Interleaved,
    /// `pk32_*_{f16,bf16}`: 16 registers of packed halves, scale S1.
    Ne,
    /// `sr_pk32_*`: S0 (32 f32 or 16 registers of halves), seed S1, scale S2.
    Sr,
}

/// 32 values to 32 fp6/bf6 packed into six registers (element j at bits 6j..6j+5).
fn pk32_down(w: &mut Wave, inst: &Inst, f: Mini, from: Wide, form: Pk32) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = super::common::write_mask(w, inst);
    // Element j's source register: 32 dwords (f32) or 16 (packed halves).
    let per_reg = if from == Wide::F32 { 1 } else { 2 };
    let mut src = [[0u32; LANES]; 32];
    for (j, reg) in src.iter_mut().enumerate().take(32 / per_reg) {
        *reg = match form {
            Pk32::Interleaved => data_reg(w, inst, j % 2, j / 2, from)?,
            _ => data_reg(w, inst, 0, j, from)?,
        };
    }
    let (r, s) = match form {
        Pk32::Ne => ([0; LANES], word(w, inst, 1)?),
        Pk32::Interleaved => ([0; LANES], word(w, inst, 2)?),
        Pk32::Sr => (word(w, inst, 1)?, word(w, inst, 2)?),
    };
    let k = from.mbits() - f.mbits;
    let mut out = [[0u32; LANES]; 6];
    for l in 0..LANES {
        if mask >> l & 1 == 0 {
            continue;
        }
        let e = scale_exp(s[l]);
        let mut rnd = r[l];
        let mut bits = [0u32; 6];
        for j in 0..32 {
            let x = if per_reg == 1 { src[j][l] } else { src[j / 2][l] >> (16 * (j % 2)) & 0xffff };
            let sr = if form == Pk32::Sr { Some((rnd, k)) } else { None };
            let c = f.encode(unscale(widen(x, from, env), e), sr, false);
            rnd = prng(rnd);
            let p = 6 * j;
            bits[p / 32] |= c << (p % 32);
            if p % 32 > 26 {
                bits[p / 32 + 1] |= c >> (32 - p % 32);
            }
        }
        for (o, b) in out.iter_mut().zip(bits) {
            o[l] = b;
        }
    }
    for (k, o) in out.iter().enumerate() {
        put(w, inst, k, o, mask)?;
    }
    Ok(Flow::Next)
}

/// `v_cvt_scalef32_{f32,f16}_{fp8,bf8}`: the byte `op_sel[1:0]` of S0 times the scale S1; an
/// f16 result goes to the half `op_sel[3]` names (the other half kept).
fn one_up(w: &mut Wave, inst: &Inst, f: Mini, to: Wide) -> Result<Flow, ExecError> {
    let mask = super::common::write_mask(w, inst);
    let (op_sel, _, _) = vop3(inst);
    let [a, s] = [word(w, inst, 0)?, word(w, inst, 1)?];
    let d = *w.vreg(inst.dst[0], 0)?;
    let out: Lanes = std::array::from_fn(|l| {
        let v = up(a[l] >> (8 * (op_sel & 3)) & 0xff, f, scale_exp(s[l]), to);
        if to == Wide::F32 {
            v
        } else {
            merge(d[l], v, 16 * (op_sel >> 3 & 1), 16)
        }
    });
    put(w, inst, 0, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_cvt_scalef32_pk_{f32,f16,bf16}_{fp8,bf8,fp4}`: two elements (the bytes of the word
/// `op_sel[0]` names for fp8/bf8, the nibbles of the byte `op_sel[1:0]` names for fp4) times the
/// scale S1, to two registers (f32) or the halves of one.
fn pk_up(w: &mut Wave, inst: &Inst, f: Mini, to: Wide) -> Result<Flow, ExecError> {
    let mask = super::common::write_mask(w, inst);
    let (op_sel, _, _) = vop3(inst);
    let [a, s] = [word(w, inst, 0)?, word(w, inst, 1)?];
    let (shift, width) = if f.bits() == 4 { (8 * (op_sel & 3), 4) } else { (16 * (op_sel & 1), 8) };
    let pair = |l: usize| {
        let v = a[l] >> shift;
        let e = scale_exp(s[l]);
        let m = (1 << width) - 1;
        (up(v & m, f, e, to), up(v >> width & m, f, e, to))
    };
    if to == Wide::F32 {
        let lo: Lanes = std::array::from_fn(|l| pair(l).0);
        let hi: Lanes = std::array::from_fn(|l| pair(l).1);
        put(w, inst, 0, &lo, mask)?;
        put(w, inst, 1, &hi, mask)?;
    } else {
        let out: Lanes = std::array::from_fn(|l| {
            let (x, y) = pair(l);
            x | y << 16
        });
        put(w, inst, 0, &out, mask)?;
    }
    Ok(Flow::Next)
}

/// `v_cvt_scalef32_pk32_{f32,f16,bf16}_{fp6,bf6}`: 32 elements of the six registers of S0
/// times the scale S1, to 32 registers (f32) or 16 registers of packed halves.
fn pk32_up(w: &mut Wave, inst: &Inst, f: Mini, to: Wide) -> Result<Flow, ExecError> {
    let mask = super::common::write_mask(w, inst);
    let mut src = [[0u32; LANES]; 6];
    for (k, reg) in src.iter_mut().enumerate() {
        *reg = word_k(w, inst, k)?;
    }
    let s = word(w, inst, 1)?;
    let elem = |l: usize, j: usize| {
        let p = 6 * j;
        let lo = src[p / 32][l] >> (p % 32);
        let hi = if p % 32 > 26 { src[p / 32 + 1][l] << (32 - p % 32) } else { 0 };
        up((lo | hi) & 0x3f, f, scale_exp(s[l]), to)
    };
    let regs = if to == Wide::F32 { 32 } else { 16 };
    for k in 0..regs {
        let out: Lanes =
            std::array::from_fn(
                |l| {
                    if to == Wide::F32 {
                        elem(l, k)
                    } else {
                        elem(l, 2 * k) | elem(l, 2 * k + 1) << 16
                    }
                },
            );
        put(w, inst, k, &out, mask)?;
    }
    Ok(Flow::Next)
}

/// Register `k` of source 0 as raw bits.
fn word_k(w: &Wave, inst: &Inst, k: usize) -> Result<Lanes, ExecError> {
    src_reg(w, inst, 0, k, Ty::B32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_is_exact() {
        // 448 * 2^3 with scale 2^3 (exponent 130) is fp8's max; the E8M0 NaN scale gives NaN.
        assert_eq!(FP8.encode(unscale(3584.0, 130), None, false), 0x7e);
        assert_eq!(FP8.encode(unscale(1.0, 0xff), None, false), 0x7f);
        assert_eq!(up(0x38, FP8, 127 + 10, Wide::F32), 1024f32.to_bits());
        // 2^-127 scale times fp8's smallest subnormal 2^-9 is 2^-136: an f32 denormal.
        assert_eq!(up(0x01, FP8, 0, Wide::F32), 1 << 13);
        assert_eq!(up(0x7e, FP8, 254, Wide::F16), 0x7c00, "overflow to f16 infinity");
        assert_eq!(up(0x7c, BF8, 127, Wide::Bf16), 0x7f80);
        assert_eq!(up(0x6, FP4, 128, Wide::Bf16), 0x4100, "4 * 2 = 8");
    }
}
