//! gfx950 (CDNA4) vector ALU additions: `v_bitop3_b16/b32`, `v_ashr_pk_{i8,u8}_i32`,
//! `v_cvt_pk_{f16,bf16}_f32`, `v_cvt_sr_{f16,bf16}_f32`, `v_cvt_f32_bf16`,
//! `v_minimum3/maximum3_f32`, `v_permlane16/32_swap_b32`. The packed `v_pk_minimum3/maximum3_f16`
//! and `v_dot2*_f32_bf16` live with the other packed ops (`packed`).
//!
//! Semantics follow AMD's CDNA4 ISA guide; where it is silent the choice is written at the op.
//! `v_prng_b32` is here too; the `v_cvt_scalef32_*` family is in `scale`.

use super::common::{src32, write_mask};
use super::float_io::{op32, out_mods, write_16, Out};
use super::fp::{self, Env, Fmt, Rm};
use super::minifloat::{self, Mini};
use crate::gpu::exec::wave::{Lanes, LANES};
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Inst, Op};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VBitop3B32 => |w, i, _| bitop3(w, i, false),
        Op::VBitop3B16 => |w, i, _| bitop3(w, i, true),
        Op::VAshrPkI8I32 => |w, i, _| ashr_pk(w, i, true),
        Op::VAshrPkU8I32 => |w, i, _| ashr_pk(w, i, false),
        Op::VCvtPkF16F32 => |w, i, _| cvt_pk(w, i, fp::F16),
        Op::VCvtPkBf16F32 => |w, i, _| cvt_pk(w, i, fp::BF16),
        Op::VCvtSrF16F32 => |w, i, _| cvt_sr(w, i, minifloat::F16),
        Op::VCvtSrBf16F32 => |w, i, _| cvt_sr(w, i, minifloat::BF16),
        Op::VCvtF32Bf16 => cvt_f32_bf16,
        Op::VMinimum3F32 => |w, i, _| minimum3(w, i, false),
        Op::VMaximum3F32 => |w, i, _| minimum3(w, i, true),
        Op::VPermlane16SwapB32 => |w, i, c| permlane_swap(w, i, c, 16),
        Op::VPermlane32SwapB32 => |w, i, c| permlane_swap(w, i, c, 32),
        Op::VPrngB32 => |w, i, _| op32(w, i, Out::Bits, |[a], _| prng(a)),
        _ => return None,
    };
    Some(h)
}

/// One step of `v_prng_b32`'s LFSR, as the CDNA4 guide gives it:
/// `D = (S0 << 1) ^ (S0[31] ? 197 : 0)` (period 2^32 - 1 unless the seed is 0). The
/// multi-value stochastic-rounding conversions derive each further random value with it.
#[inline]
pub fn prng(x: u32) -> u32 {
    (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
}

/// The instruction with its VOP3 abs/neg/omod bits cleared: for ops that reuse those fields
/// (the bitop3 table) or whose sources are not f32 (bf16 halves).
fn without_float_mods(inst: &Inst) -> Inst {
    let mut plain = *inst;
    if let Ext::Vop3(ref mut v) = plain.ext {
        v.abs = 0;
        v.neg = 0;
        v.omod = 0;
    }
    plain
}

/// Bitwise three-input function given by an 8-bit truth table: bit `4*a + 2*b + c` of the
/// table is the result for source bits a, b, c (LLVM's encoding: s0 = 0xf0, s1 = 0xcc,
/// s2 = 0xaa). Pure bit logic, so it also serves the 16-bit form's halves.
pub fn bitop3_eval(table: u8, a: u32, b: u32, c: u32) -> u32 {
    (0..8).filter(|k| table >> k & 1 != 0).fold(0, |acc, k| {
        let pick = |v: u32, bit: u32| if k >> bit & 1 != 0 { v } else { !v };
        acc | (pick(a, 2) & pick(b, 1) & pick(c, 0))
    })
}

fn bitop3(w: &mut Wave, inst: &Inst, half: bool) -> Result<Flow, ExecError> {
    let table = inst.bitop3().unwrap_or(0);
    let plain = without_float_mods(inst);
    let mask = write_mask(w, inst);
    let [a, b, c] = [src32(w, &plain, 0)?, src32(w, &plain, 1)?, src32(w, &plain, 2)?];
    let out: Lanes = std::array::from_fn(|l| bitop3_eval(table, a[l], b[l], c[l]));
    if half {
        // op_sel picks the source halves (applied by the source read) and the destination
        // half (bit 3); the other half is kept.
        write_16(w, inst, &out, mask)?;
    } else {
        super::common::write32(w, inst, &out, mask)?;
    }
    Ok(Flow::Next)
}

/// `D.u16 = {sat8(s1 >> s2[4:0]), sat8(s0 >> s2[4:0])}`: two arithmetic shifts saturated to
/// signed (`i8`) or unsigned (`u8`) bytes. The 16 bits go to the half `op_sel[3]` names;
/// the other half is kept (as the gfx942 packed fp8 conversions do).
fn ashr_pk(w: &mut Wave, inst: &Inst, signed: bool) -> Result<Flow, ExecError> {
    let mask = write_mask(w, inst);
    let [a, b, s] = [src32(w, inst, 0)?, src32(w, inst, 1)?, src32(w, inst, 2)?];
    let sat = |v: i32| -> u32 {
        if signed {
            v.clamp(-128, 127) as u8 as u32
        } else {
            v.clamp(0, 255) as u32
        }
    };
    let out: Lanes = std::array::from_fn(|l| {
        let sh = s[l] & 31;
        sat((a[l] as i32) >> sh) | sat((b[l] as i32) >> sh) << 8
    });
    write_16(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// Output modifiers of the f32 inputs of the packing conversions (`mul:2`, `clamp`).
fn scaled_input(x: f64, inst: &Inst) -> f64 {
    let (omod, clamp) = out_mods(inst);
    let x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        if x.is_nan() {
            0.0
        } else {
            x.clamp(0.0, 1.0)
        }
    } else {
        x
    }
}

/// f32 to f16 (MODE's f16 rounding and denormal control) or bf16 (round to nearest even,
/// denormals kept: bf16 ignores MODE).
fn narrow(x: f64, f: Fmt, env: Env) -> u32 {
    if f == fp::F16 {
        fp::out16(x, env)
    } else {
        fp::round(x, f, Rm::Ne, true) as u32
    }
}

/// `v_cvt_pk_{f16,bf16}_f32`: `D = {cvt(s1), cvt(s0)}`.
fn cvt_pk(w: &mut Wave, inst: &Inst, f: Fmt) -> Result<Flow, ExecError> {
    op32(w, inst, Out::Bits, |[a, b], env| {
        let cvt = |v: u32| narrow(scaled_input(fp::in32(v, env), inst), f, env) & 0xffff;
        cvt(a) | cvt(b) << 16
    })
}

/// `v_cvt_sr_{f16,bf16}_f32`: s0 stochastically rounded with s1 as the seed, to the half
/// `op_sel[3]` names (the other half kept). The rounding is the small formats' (`Mini::encode`):
/// the top 13 (f16) or 16 (bf16) bits of s1 — as many as the conversion drops — are added
/// below the kept mantissa before truncating, as the guide's fp8 pseudocode does with
/// `S1[31:12]`; overflow gives infinity, or the largest value with MODE.FP16_OVFL.
fn cvt_sr(w: &mut Wave, inst: &Inst, f: Mini) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let saturate = w.mode >> 23 & 1 != 0;
    let mask = write_mask(w, inst);
    let [a, r] = [src32(w, inst, 0)?, src32(w, inst, 1)?];
    let out: Lanes = std::array::from_fn(|l| {
        let v = f.encode(fp::in32(a[l], env), Some((r[l], 23 - f.mbits)), saturate);
        if f == minifloat::F16 {
            fp::F16.flush(v as u64, env.out64()) as u32
        } else {
            v
        }
    });
    write_16(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_cvt_f32_bf16`: the bf16 in the low half (after SDWA/op_sel selection) widened exactly;
/// abs/neg act on the bf16 sign (bit 15).
fn cvt_f32_bf16(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let (abs, neg) = match inst.ext {
        Ext::Vop3(v) => (v.abs & 1 != 0, v.neg & 1 != 0),
        Ext::Sdwa(s) => (s.abs & 1 != 0, s.neg & 1 != 0),
        Ext::Dpp(d) => (d.abs & 1 != 0, d.neg & 1 != 0),
        _ => (false, false),
    };
    let plain = {
        let mut p = without_float_mods(inst);
        match p.ext {
            Ext::Sdwa(ref mut s) => {
                s.abs = 0;
                s.neg = 0;
            }
            Ext::Dpp(ref mut d) => {
                d.abs = 0;
                d.neg = 0;
            }
            _ => {}
        }
        p
    };
    let mask = write_mask(w, inst);
    let a = src32(w, &plain, 0)?;
    let out: Lanes = std::array::from_fn(|l| {
        let mut h = a[l] & 0xffff;
        if abs {
            h &= 0x7fff;
        }
        if neg {
            h ^= 0x8000;
        }
        h << 16
    });
    let mut out = out;
    super::float_io::post32(inst, Env::new(w.mode), &mut out);
    super::common::write32(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// IEEE 754-2019 minimum (`max`: maximum) of two values of format `f`: a NaN operand gives
/// that NaN quieted, and -0 is less than +0.
pub fn minimum_bits(a: u64, b: u64, f: Fmt, max: bool) -> u64 {
    if f.is_nan(a) {
        return f.quiet(a);
    }
    if f.is_nan(b) {
        return f.quiet(b);
    }
    let (x, y) = (fp::to_f64(a, f), fp::to_f64(b, f));
    let a_first = if x == y {
        // ±0: the sign decides (-0 < +0); equal values are identical otherwise.
        let a_neg = a & f.sign() != 0;
        a_neg != max
    } else {
        (x < y) != max
    };
    if a_first {
        a
    } else {
        b
    }
}

fn minimum3(w: &mut Wave, inst: &Inst, max: bool) -> Result<Flow, ExecError> {
    op32(w, inst, Out::F32, |[a, b, c], env| {
        let flush = |v: u32| fp::F32.flush(v as u64, env.in32());
        let m = |x: u64, y: u64| minimum_bits(x, y, fp::F32, max);
        m(m(flush(a), flush(b)), flush(c)) as u32
    })
}

/// `v_permlane16_swap_b32 vdst, vsrc`: the odd 16-lane rows of vdst trade places with the
/// even rows of vsrc (row 1 of vdst with row 0 of vsrc, row 3 with row 2);
/// `v_permlane32_swap_b32`: the upper 32 lanes of vdst with the lower 32 of vsrc. Both
/// registers are written. A lane only receives a value when it is active; it reads its
/// partner even when the partner is inactive only with `fi` (op_sel[0]), and otherwise
/// receives 0 with `bound_ctrl` (op_sel[1]) or keeps its value.
fn permlane_swap(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>, rows: usize) -> Result<Flow, ExecError> {
    let (fi, bound_ctrl) = match inst.ext {
        Ext::Vop3(v) => (v.op_sel & 1 != 0, v.op_sel & 2 != 0),
        _ => (false, false),
    };
    let exec = w.exec;
    let d0 = *w.vreg(inst.dst[0], 0)?;
    let s0 = *w.vreg(inst.src[0], 0)?;
    let (mut d, mut s) = (d0, s0);
    let active = |l: usize| exec >> l & 1 != 0;
    // What a lane receives from lane `l` of `from`; `None` keeps its own value.
    let fetch = |from: &Lanes, l: usize| {
        if active(l) || fi {
            Some(from[l])
        } else if bound_ctrl {
            Some(0)
        } else {
            None
        }
    };
    // Lane-pair exchange between two registers: indices, not an iterator, say it best.
    #[allow(clippy::needless_range_loop)]
    for l in 0..LANES {
        // The vdst lane of the pair is in the upper (odd) row, the vsrc lane in the lower.
        let upper = if rows == 32 { l >= 32 } else { (l / 16) % 2 == 1 };
        if !upper {
            continue;
        }
        let partner = l - rows;
        if active(l) {
            if let Some(v) = fetch(&s0, partner) {
                d[l] = v;
            }
        }
        if active(partner) {
            if let Some(v) = fetch(&d0, l) {
                s[partner] = v;
            }
        }
    }
    *w.vreg_mut(inst.dst[0], 0)? = d;
    *w.vreg_mut(inst.src[0], 0)? = s;
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prng_is_the_guides_lfsr() {
        assert_eq!(prng(1), 2);
        assert_eq!(prng(0x8000_0000), 197);
        assert_eq!(prng(0xc000_0001), 0x8000_0002 ^ 197);
        assert_eq!(prng(0), 0);
    }

    #[test]
    fn bitop3_tables_name_the_sources() {
        let (a, b, c) = (0xf0f0_f0f0, 0xcccc_cccc, 0xaaaa_aaaa);
        assert_eq!(bitop3_eval(0xf0, a, b, c), a);
        assert_eq!(bitop3_eval(0xcc, a, b, c), b);
        assert_eq!(bitop3_eval(0xaa, a, b, c), c);
        // a | b & c, a & b | c, a ^ b ^ c, and the constant tables.
        assert_eq!(bitop3_eval(0xf8, 0b1100, 0b1010, 0b0011), 0b1110);
        assert_eq!(bitop3_eval(0xea, 0b1100, 0b1010, 0b0001), 0b1001);
        assert_eq!(bitop3_eval(0x96, 0b1100, 0b1010, 0b0110), 0b0000);
        assert_eq!(bitop3_eval(0x00, 1, 2, 3), 0);
        assert_eq!(bitop3_eval(0xff, 1, 2, 3), u32::MAX);
    }

    #[test]
    fn minimum_propagates_nan_and_orders_zeros() {
        let f = fp::F32;
        let bits = |x: f32| x.to_bits() as u64;
        assert_eq!(minimum_bits(bits(1.0), bits(2.0), f, false), bits(1.0));
        assert_eq!(minimum_bits(bits(1.0), bits(2.0), f, true), bits(2.0));
        assert_eq!(minimum_bits(bits(0.0), bits(-0.0), f, false), bits(-0.0));
        assert_eq!(minimum_bits(bits(-0.0), bits(0.0), f, true), bits(0.0));
        // A NaN wins (quieted), unlike v_min_f32.
        assert_eq!(minimum_bits(bits(1.0), 0x7f80_0001, f, false), 0x7fc0_0001);
        assert_eq!(minimum_bits(0x7fc0_0000, bits(-5.0), f, true), 0x7fc0_0000);
    }

    #[test]
    fn stochastic_rounding_picks_a_neighbour_by_the_random_bits() {
        // The seed's top 13 (f16) / 16 (bf16) bits are the random fraction.
        let sr = |x: f32, r: u32, f: Mini| f.encode(x as f64, Some((r, 23 - f.mbits)), false);
        // 1 + 2^-11 lies halfway between f16 1.0 (0x3c00) and 1 + 2^-10 (0x3c01): 13 discarded
        // bits hold 0x1000, so random bits below 0x1000 round down and from 0x1000 up.
        let x = 1.0 + 2f32.powi(-11);
        assert_eq!(sr(x, 0x0fff << 19, minifloat::F16), 0x3c00);
        assert_eq!(sr(x, 0x1000 << 19, minifloat::F16), 0x3c01);
        assert_eq!(sr(-x, 0x1000 << 19, minifloat::F16), 0xbc01);
        // Exact values never move; bf16 drops 16 bits.
        assert_eq!(sr(1.5, 0xffff_ffff, minifloat::F16), 0x3e00);
        assert_eq!(sr(1.5, 0xffff_ffff, minifloat::BF16), 0x3fc0);
        let y = f32::from_bits(0x3f80_8000); // halfway between bf16 0x3f80 and 0x3f81
        assert_eq!(sr(y, 0x7fff << 16, minifloat::BF16), 0x3f80);
        assert_eq!(sr(y, 0x8000 << 16, minifloat::BF16), 0x3f81);
        // f16 overflow stays infinite, NaN stays NaN.
        assert_eq!(sr(1e6, 0, minifloat::F16), 0x7c00);
        assert_eq!(sr(f32::NAN, 0, minifloat::F16) & 0x7e00, 0x7e00);
    }
}
