//! VOP3P packed math: `v_pk_*` on two f16, two 16-bit integers or two f32
//! per lane, `v_pk_mov_b32`, the mixed-precision `v_fma_mix*`, and the dot
//! products `v_dot*` (with their VOP2 accumulate forms `v_dot*c`,
//! `v_pk_fmac_f16`).
//!
//! Sources are read raw and the VOP3P modifiers applied here: for source
//! `i`, `op_sel[i]` picks the half (or dword) feeding the low result,
//! `op_sel_hi[i]` the one feeding the high result; `neg_lo`/`neg_hi` negate
//! the float halves. An inline constant of a 16-bit packed op sits in the
//! low half (high half 0); a packed-f32 op uses the 32-bit constant for
//! both dwords.

use super::common::{write64, write_mask};
use super::float::{add32, fma32, mul32};
use super::float16::{add16, fma16, minmax16, mul16};
use super::float_fast::{rne_lanes, Kind};
use super::fp::{self, Env};
use crate::gpu::exec::wave::{Lanes, Wave, LANES};
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler};
use crate::isa::{Encoding, Ext, Inst, Op, Operand, Ty};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VPkAddF16 => |w, i, _| pk16(w, i, true, |a, b, _, e| add16(a, b, e)),
        Op::VPkMulF16 => |w, i, _| pk16(w, i, true, |a, b, _, e| mul16(a, b, e)),
        Op::VPkFmaF16 => |w, i, _| pk16(w, i, true, fma16),
        Op::VPkMinF16 => |w, i, _| pk16(w, i, true, |a, b, _, e| minmax16(a, b, false, e)),
        Op::VPkMaxF16 => |w, i, _| pk16(w, i, true, |a, b, _, e| minmax16(a, b, true, e)),
        Op::VPkFmacF16 => pk_fmac_f16,
        Op::VPkAddU16 => |w, i, _| pk16(w, i, false, |a, b, _, _| (a + b).min(sat_u(i)) & 0xffff),
        Op::VPkAddI16 => |w, i, _| pk16(w, i, false, |a, b, _, _| sat_i(i, sx(a) + sx(b))),
        Op::VPkSubU16 => |w, i, _| pk16(w, i, false, |a, b, _, _| sub_u(i, a, b)),
        Op::VPkSubI16 => |w, i, _| pk16(w, i, false, |a, b, _, _| sat_i(i, sx(a) - sx(b))),
        Op::VPkMulLoU16 => |w, i, _| pk16(w, i, false, |a, b, _, _| a.wrapping_mul(b) & 0xffff),
        Op::VPkMadU16 => |w, i, _| pk16(w, i, false, |a, b, c, _| (a * b + c).min(sat_u(i)) & 0xffff),
        Op::VPkMadI16 => |w, i, _| pk16(w, i, false, |a, b, c, _| sat_i(i, sx(a) * sx(b) + sx(c))),
        Op::VPkMaxU16 => |w, i, _| pk16(w, i, false, |a, b, _, _| a.max(b)),
        Op::VPkMinU16 => |w, i, _| pk16(w, i, false, |a, b, _, _| a.min(b)),
        Op::VPkMaxI16 => |w, i, _| pk16(w, i, false, |a, b, _, _| sx(a).max(sx(b)) as u32 & 0xffff),
        Op::VPkMinI16 => |w, i, _| pk16(w, i, false, |a, b, _, _| sx(a).min(sx(b)) as u32 & 0xffff),
        Op::VPkLshlrevB16 => |w, i, _| pk16(w, i, false, |a, b, _, _| (b << (a & 15)) & 0xffff),
        Op::VPkLshrrevB16 => |w, i, _| pk16(w, i, false, |a, b, _, _| b >> (a & 15)),
        Op::VPkAshrrevI16 => |w, i, _| pk16(w, i, false, |a, b, _, _| (sx(b) >> (a & 15)) as u32 & 0xffff),
        Op::VPkAddF32 => |w, i, _| pk32(w, i, Kind::Add),
        Op::VPkMulF32 => |w, i, _| pk32(w, i, Kind::Mul),
        Op::VPkFmaF32 => |w, i, _| pk32(w, i, Kind::Fma),
        Op::VPkMovB32 => pk_mov_b32,
        Op::VFmaMixF32 => |w, i, _| mix(w, i, Mix::F32),
        Op::VFmaMixloF16 => |w, i, _| mix(w, i, Mix::Lo),
        Op::VFmaMixhiF16 => |w, i, _| mix(w, i, Mix::Hi),
        Op::VDot2F32F16 | Op::VDot2cF32F16 => |w, i, _| dot(w, i, dot2_f16),
        Op::VDot2F32Bf16 | Op::VDot2cF32Bf16 => |w, i, _| dot(w, i, dot2_bf16),
        Op::VPkMinimum3F16 => |w, i, _| pk16(w, i, true, |a, b, c, _| minimum3_16(a, b, c, false)),
        Op::VPkMaximum3F16 => |w, i, _| pk16(w, i, true, |a, b, c, _| minimum3_16(a, b, c, true)),
        Op::VDot2I32I16 | Op::VDot2cI32I16 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 16, true, cl)),
        Op::VDot2U32U16 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 16, false, cl)),
        Op::VDot4I32I8 | Op::VDot4cI32I8 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 8, true, cl)),
        Op::VDot4U32U8 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 8, false, cl)),
        Op::VDot8I32I4 | Op::VDot8cI32I4 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 4, true, cl)),
        Op::VDot8U32U4 => |w, i, _| dot(w, i, |a, b, c, cl, _| dot_int(a, b, c, 4, false, cl)),
        _ => return None,
    };
    Some(h)
}

/// Sign-extends a 16-bit value.
#[inline]
fn sx(v: u32) -> i32 {
    v as u16 as i16 as i32
}

/// The unsigned saturation bound (clamp) or wrap-around mask.
fn sat_u(inst: &Inst) -> u32 {
    if clamp(inst) {
        0xffff
    } else {
        u32::MAX
    }
}

fn sub_u(inst: &Inst, a: u32, b: u32) -> u32 {
    if clamp(inst) {
        a.saturating_sub(b)
    } else {
        a.wrapping_sub(b) & 0xffff
    }
}

fn sat_i(inst: &Inst, v: i32) -> u32 {
    let v = if clamp(inst) { v.clamp(-32768, 32767) } else { v };
    v as u32 & 0xffff
}

#[inline]
fn clamp(inst: &Inst) -> bool {
    matches!(inst.ext, Ext::Vop3(m) if m.clamp)
}

/// The VOP3P modifiers (identity for the VOP2 forms).
#[derive(Clone, Copy)]
struct Pk {
    op_sel: u8,
    op_sel_hi: u8,
    neg_lo: u8,
    neg_hi: u8,
    clamp: bool,
}

fn pk_mods(inst: &Inst) -> Pk {
    match (inst.enc, inst.ext) {
        (Encoding::Vop3p, Ext::Vop3(m)) => {
            Pk { op_sel: m.op_sel, op_sel_hi: m.op_sel_hi, neg_lo: m.neg, neg_hi: m.neg_hi, clamp: m.clamp }
        }
        _ => Pk { op_sel: 0, op_sel_hi: 0b111, neg_lo: 0, neg_hi: 0, clamp: false },
    }
}

/// Source `i` as raw dwords (no modifiers); for DPP VOP2 forms, through
/// the common plumbing.
fn raw32(w: &Wave, inst: &Inst, i: usize) -> Result<Lanes, ExecError> {
    if inst.enc != Encoding::Vop3p {
        return super::common::src32(w, inst, i);
    }
    Ok(w.vsrc32(inst.src[i], inst.info().src[i].ty, inst.literal)?.to_lanes())
}

/// Source `i` of a packed-f32 op: a register pair, an SGPR pair, or a
/// 32-bit constant for both dwords.
fn raw64(w: &Wave, inst: &Inst, i: usize) -> Result<[u64; LANES], ExecError> {
    let op = inst.src[i];
    Ok(match op {
        Operand::Vgpr(_) | Operand::Agpr(_) => {
            let (lo, hi) = (w.vreg(op, 0)?, w.vreg(op, 1)?);
            std::array::from_fn(|l| lo[l] as u64 | (hi[l] as u64) << 32)
        }
        Operand::Int(_) | Operand::Float(_) | Operand::Literal => {
            let v = w.read_scalar32(op, Ty::B32, inst.literal)? as u64;
            [v | v << 32; LANES]
        }
        _ => [w.read_scalar64(op, Ty::I64, inst.literal)?; LANES],
    })
}

/// Selects the 16-bit halves feeding the low and high results of source
/// `i` and applies `neg_lo`/`neg_hi` (for float ops).
#[inline]
fn halves(v: u32, i: usize, m: Pk, float: bool) -> (u32, u32) {
    let pick = |hi: bool| if hi { v >> 16 } else { v & 0xffff };
    let (mut lo, mut hi) = (pick(m.op_sel >> i & 1 != 0), pick(m.op_sel_hi >> i & 1 != 0));
    if float {
        if m.neg_lo >> i & 1 != 0 {
            lo ^= 0x8000;
        }
        if m.neg_hi >> i & 1 != 0 {
            hi ^= 0x8000;
        }
    }
    (lo, hi)
}

/// A packed 16-bit op: `f(a, b, c, env)` per half.
fn pk16(w: &mut Wave, inst: &Inst, float: bool, f: impl Fn(u32, u32, u32, Env) -> u32) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let m = pk_mods(inst);
    let n = inst.info().src.iter().filter(|s| s.is_present()).count();
    let mask = write_mask(w, inst);
    let mut s = [[0u32; LANES]; 3];
    for (i, x) in s.iter_mut().enumerate().take(n) {
        *x = raw32(w, inst, i)?;
    }
    let out: Lanes = std::array::from_fn(|l| {
        let (a, b, c) = (halves(s[0][l], 0, m, float), halves(s[1][l], 1, m, float), halves(s[2][l], 2, m, float));
        let lo = f(a.0, b.0, c.0, env) & 0xffff;
        let hi = f(a.1, b.1, c.1, env) & 0xffff;
        if float && m.clamp {
            clamp16(lo) | clamp16(hi) << 16
        } else {
            lo | hi << 16
        }
    });
    write_lanes(w, inst, &out, mask)
}

/// f16 clamp to [0, 1] (NaN to 0).
fn clamp16(h: u32) -> u32 {
    let x = fp::f16_to_f64(h as u16);
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        0x3c00
    } else {
        h
    }
}

fn clamp32(b: u32) -> u32 {
    let x = f32::from_bits(b);
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        0x3f80_0000
    } else {
        b
    }
}

fn write_lanes(w: &mut Wave, inst: &Inst, out: &Lanes, mask: u64) -> Result<Flow, ExecError> {
    let d = w.vreg_mut(inst.dst[0], 0)?;
    for (l, (d, v)) in d.iter_mut().zip(out).enumerate() {
        if mask >> l & 1 != 0 {
            *d = *v;
        }
    }
    Ok(Flow::Next)
}

/// `v_pk_fmac_f16` (VOP2): both halves `d = a * b + d`.
fn pk_fmac_f16(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let (a, b) = (raw32(w, inst, 0)?, raw32(w, inst, 1)?);
    let d = *w.vreg(inst.dst[0], 0)?;
    let out: Lanes = std::array::from_fn(|l| {
        let lo = fma16(a[l] & 0xffff, b[l] & 0xffff, d[l] & 0xffff, env);
        let hi = fma16(a[l] >> 16, b[l] >> 16, d[l] >> 16, env);
        lo | hi << 16
    });
    write_lanes(w, inst, &out, mask)
}

/// A packed-f32 op: `op_sel[i]`/`op_sel_hi[i]` pick the dword of source `i`
/// for the low/high result, `neg_lo`/`neg_hi` negate it. The selections
/// are made once per source, outside the lane loop.
fn pk32(w: &mut Wave, inst: &Inst, kind: Kind) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let m = pk_mods(inst);
    let n = inst.info().src.iter().filter(|s| s.is_present()).count();
    let mask = write_mask(w, inst);
    // ins[half][source][lane]
    let mut ins = [[[0u32; LANES]; 3]; 2];
    #[allow(clippy::needless_range_loop)]
    for i in 0..n {
        let v = raw64(w, inst, i)?;
        for (half, sel, neg) in [(0usize, m.op_sel, m.neg_lo), (1, m.op_sel_hi, m.neg_hi)] {
            let shift = if sel >> i & 1 != 0 { 32 } else { 0 };
            let flip = if neg >> i & 1 != 0 { 0x8000_0000 } else { 0 };
            for (d, x) in ins[half][i].iter_mut().zip(&v) {
                *d = (x >> shift) as u32 ^ flip;
            }
        }
    }
    let mut out = [0u64; LANES];
    for (half, x) in ins.iter().enumerate() {
        let r = if env.rm32() == fp::Rm::Ne {
            rne_lanes(kind, [&x[0], &x[1], &x[2]], env)
        } else {
            std::array::from_fn(|l| {
                let (a, b, c) = (x[0][l], x[1][l], x[2][l]);
                match kind {
                    Kind::Add => add32(a, b, env),
                    Kind::Mul => mul32(a, b, env),
                    Kind::Fma => fma32(a, b, c, env),
                }
            })
        };
        for (o, v) in out.iter_mut().zip(r) {
            let v = if m.clamp { clamp32(v) } else { v };
            *o |= (v as u64) << (32 * half);
        }
    }
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_pk_mov_b32`: the low dword from source 0, the high one from source
/// 1, each picked by its `op_sel` bit.
fn pk_mov_b32(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let m = pk_mods(inst);
    let mask = write_mask(w, inst);
    let (a, b) = (raw64(w, inst, 0)?, raw64(w, inst, 1)?);
    let pick = |v: u64, hi: bool| if hi { v >> 32 } else { v & 0xffff_ffff };
    let out: [u64; LANES] =
        std::array::from_fn(|l| pick(a[l], m.op_sel & 1 != 0) | pick(b[l], m.op_sel & 2 != 0) << 32);
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mix {
    F32,
    Lo,
    Hi,
}

/// `v_fma_mix*`: each source is an f32, or (with `op_sel_hi[i]`) the f16
/// in the half chosen by `op_sel[i]`; `neg_lo` negates and `neg_hi` takes
/// the absolute value. The f32 result is exact-rounded once; the f16 forms
/// round it to f32 and then to f16 into the low or high half, keeping the
/// other.
fn mix(w: &mut Wave, inst: &Inst, kind: Mix) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let m = pk_mods(inst);
    let mask = write_mask(w, inst);
    let s = [raw32(w, inst, 0)?, raw32(w, inst, 1)?, raw32(w, inst, 2)?];
    let d = *w.vreg(inst.dst[0], 0)?;
    let val = |v: u32, i: usize| {
        let x = if m.op_sel_hi >> i & 1 != 0 {
            let h = if m.op_sel >> i & 1 != 0 { v >> 16 } else { v & 0xffff };
            fp::in16(h, env)
        } else {
            fp::in32(v, env)
        };
        let x = if m.neg_hi >> i & 1 != 0 { x.abs() } else { x };
        if m.neg_lo >> i & 1 != 0 {
            -x
        } else {
            x
        }
    };
    let out: Lanes = std::array::from_fn(|l| {
        let z = fp::fma_odd(val(s[0][l], 0), val(s[1][l], 1), val(s[2][l], 2));
        let r32 = fp::out32(z, env);
        let r32 = if m.clamp { clamp32(r32) } else { r32 };
        match kind {
            Mix::F32 => r32,
            Mix::Lo | Mix::Hi => {
                let h = fp::out16(f32::from_bits(r32) as f64, env);
                let h = if m.clamp { clamp16(h) } else { h };
                if kind == Mix::Lo {
                    (d[l] & 0xffff_0000) | h
                } else {
                    (d[l] & 0xffff) | h << 16
                }
            }
        }
    });
    write_lanes(w, inst, &out, mask)
}

/// A dot product: `f(a, b, c, clamp, env)`, where `c` is source 2 (VOP3P)
/// or the destination's old value (the VOP2 `c` forms).
fn dot(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, u32, bool, Env) -> u32) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let m = pk_mods(inst);
    let mask = write_mask(w, inst);
    let (a, b) = (raw32(w, inst, 0)?, raw32(w, inst, 1)?);
    let c = if inst.info().src[2].is_present() { raw32(w, inst, 2)? } else { *w.vreg(inst.dst[0], 0)? };
    // Float dots take neg_lo/neg_hi on the f16 halves of sources 0 and 1.
    let neg = |v: u32, i: usize| {
        let mut v = v;
        if m.neg_lo >> i & 1 != 0 {
            v ^= 0x8000;
        }
        if m.neg_hi >> i & 1 != 0 {
            v ^= 0x8000_0000;
        }
        v
    };
    let float = matches!(inst.op, Op::VDot2F32F16 | Op::VDot2cF32F16 | Op::VDot2F32Bf16 | Op::VDot2cF32Bf16);
    let out: Lanes = std::array::from_fn(|l| {
        let (x, y) = if float { (neg(a[l], 0), neg(b[l], 1)) } else { (a[l], b[l]) };
        let z = if float && m.neg_lo >> 2 & 1 != 0 { c[l] ^ 0x8000_0000 } else { c[l] };
        f(x, y, z, m.clamp, env)
    });
    write_lanes(w, inst, &out, mask)
}

/// `v_dot2_f32_f16`: `a.lo*b.lo + a.hi*b.hi + c` (products exact), rounded
/// to f32.
fn dot2_f16(a: u32, b: u32, c: u32, clamp: bool, e: Env) -> u32 {
    dot2_halves(a, b, c, clamp, e, |v| fp::in16(v, e))
}

/// gfx950 `v_dot2_f32_bf16`: the same with bf16 halves (never flushed: bf16 inputs ignore
/// the denormal mode).
fn dot2_bf16(a: u32, b: u32, c: u32, clamp: bool, e: Env) -> u32 {
    dot2_halves(a, b, c, clamp, e, |v| f32::from_bits(v << 16) as f64)
}

/// The two-element float dot product over the 16-bit halves of `a` and `b`, each read by
/// `half` (its low 16 bits), plus f32 `c`: products and their sum exact, one rounding.
#[inline]
fn dot2_halves(a: u32, b: u32, c: u32, clamp: bool, e: Env, half: impl Fn(u32) -> f64) -> u32 {
    let p0 = half(a & 0xffff) * half(b & 0xffff);
    let p1 = half(a >> 16) * half(b >> 16);
    let (s, err) = fp::two_sum(p0, p1);
    let z = fp::add_odd(s, fp::in32(c, e) + err);
    let r = fp::out32(z, e);
    if clamp {
        clamp32(r)
    } else {
        r
    }
}

/// gfx950 `v_pk_minimum3_f16`/`v_pk_maximum3_f16` on one half: IEEE 754-2019
/// minimum/maximum (a NaN operand gives a quiet NaN; -0 < +0).
fn minimum3_16(a: u32, b: u32, c: u32, max: bool) -> u32 {
    let pick = |x: u32, y: u32| super::cdna4::minimum_bits(x as u64, y as u64, fp::F16, max) as u32;
    pick(pick(a, b), c)
}

/// Integer dot products of `32 / bits` elements plus `c`; `clamp`
/// saturates the sum.
fn dot_int(a: u32, b: u32, c: u32, bits: u32, signed: bool, clamp: bool) -> u32 {
    let n = 32 / bits;
    let el = |v: u32, i: u32| -> i64 {
        let x = (v >> (i * bits)) & ((1u64 << bits) - 1) as u32;
        if signed {
            ((x << (32 - bits)) as i32 >> (32 - bits)) as i64
        } else {
            x as i64
        }
    };
    let acc = if signed { c as i32 as i64 } else { c as i64 };
    let sum = (0..n).fold(acc, |s, i| s + el(a, i) * el(b, i));
    if !clamp {
        sum as u32
    } else if signed {
        sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
    } else {
        sum.clamp(0, u32::MAX as i64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_products() {
        assert_eq!(dot_int(0x0002_0003, 0x0004_0005, 1, 16, true, false), 2 * 4 + 3 * 5 + 1);
        assert_eq!(dot_int(0xffff_0001, 0x0002_0002, 0, 16, true, false), (-2i32 + 2) as u32);
        assert_eq!(dot_int(0x7fff_7fff, 0x7fff_7fff, 0x7fff_ffff, 16, true, true), 0x7fff_ffff);
        assert_eq!(dot_int(0xff01_0203, 0x0101_0101, 0, 8, true, false), 5, "-1 + 1 + 2 + 3");
        assert_eq!(dot_int(0xff01_0203, 0x0101_0101, 0, 8, false, false), 255 + 6);
        assert_eq!(dot_int(0x8000_0001, 0x1000_0001, 0, 4, true, false), (-8i32 + 1) as u32);
        let e = Env::new(0x2f0);
        assert_eq!(dot2_f16(0x4000_3c00, 0x4200_4400, 0x3f80_0000, false, e), 11.0f32.to_bits());
    }
}
