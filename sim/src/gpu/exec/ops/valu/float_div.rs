//! The division helpers `v_div_scale`, `v_div_fmas` and `v_div_fixup`
//! (f32, f64; `v_div_fixup_f16` is with the f16 ops).
//!
//! They follow the MI200 ISA pseudo-code, with three deviations found
//! necessary for LLVM's division sequences to reproduce IEEE `a / b` bit
//! for bit: in `v_div_scale`, "1/S1 is denormal" and "S2/S1 is denormal"
//! are judged on exact values; a quotient that underflows to zero counts as
//! denormal; and when both hold, the denominator is scaled down by 2^64
//! (f64: 2^128) instead of up. `v_div_fixup` with a NaN estimate (an
//! overflow inside the sequence) returns a signed infinity.

use super::common::{src32, src64, write32, write64, write_lane_mask, write_mask};
use super::float_fast::{rne_lanes, Kind as FastKind};
use super::float_io::{op32, op64, post32, post64, Out};
use super::fp::{self, Env, F32, F64};
use crate::gpu::exec::wave::LANES;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VDivScaleF32 => div_scale_f32,
        Op::VDivScaleF64 => div_scale_f64,
        Op::VDivFmasF32 => div_fmas_f32,
        Op::VDivFmasF64 => div_fmas_f64,
        Op::VDivFixupF32 => |w, i, _| op32(w, i, Out::F32, |[q, d, n], e| fixup32(q, d, n, e)),
        Op::VDivFixupF64 => |w, i, _| op64(w, i, true, |[q, d, n], e| fixup64(q, d, n, e)),
        _ => return None,
    };
    Some(h)
}

/// Parameters of one precision for the shared scale logic.
struct P {
    /// Exponent-difference threshold for "quotient near the top of the range".
    near_max: i32,
    /// The numerator's biased exponent at or below which it is tiny.
    tiny_num: i32,
    /// log2 of the scale factor.
    scale: i32,
    /// The smallest normal magnitude.
    min_normal: f64,
}

const P32: P = P { near_max: 96, tiny_num: 23, scale: 64, min_normal: f32::MIN_POSITIVE as f64 };
const P64: P = P { near_max: 768, tiny_num: 53, scale: 128, min_normal: f64::MIN_POSITIVE };

/// Whether |n / d| is below the smallest normal (or zero), exactly.
fn quotient_tiny(n: f64, d: f64, min_normal: f64) -> bool {
    let (n, d) = (n.abs(), d.abs());
    if d >= 1.0 {
        n < d * min_normal
    } else {
        n / min_normal < d
    }
}

/// The `v_div_scale` decision: the factor (as a power of two) applied to
/// source 0, and the VCC bit.
fn scale_decision(d: f64, n: f64, exp_d: i32, exp_n: i32, s0_is_d: bool, s0_is_n: bool, p: &P) -> (i32, bool) {
    let rcp_tiny = d.abs() > 1.0 / p.min_normal;
    if exp_n - exp_d >= p.near_max {
        (if s0_is_d { p.scale } else { 0 }, true)
    } else if d != 0.0 && d.abs() < p.min_normal {
        (p.scale, false)
    } else if rcp_tiny && quotient_tiny(n, d, p.min_normal) {
        (if s0_is_d { -p.scale } else { 0 }, true)
    } else if rcp_tiny {
        (-p.scale, false)
    } else if quotient_tiny(n, d, p.min_normal) {
        (if s0_is_n { p.scale } else { 0 }, true)
    } else if exp_n <= p.tiny_num {
        (p.scale, false)
    } else {
        (0, false)
    }
}

/// `v_div_scale_f32` on one lane: source 0, the denominator, the numerator; the result and
/// the lane's VCC bit.
pub(crate) fn scale32(s0: u32, d: u32, n: u32) -> (u32, bool) {
    // The common case, decided on the exponent fields alone: a normal
    // denominator whose reciprocal is normal, a numerator that is not tiny,
    // and a quotient well inside the normal range. Nothing is scaled.
    if inside32(&SCALE32_FAST, s0, d, n) {
        return (s0, false);
    }
    // A zero numerator or denominator (padded or empty inputs, `127 / amax` of an all-zero
    // block: whole waves of them) without a NaN operand: the NaN below, decided on bits.
    let nan = |b: u32| b & 0x7fff_ffff > 0x7f80_0000;
    if (n & 0x7fff_ffff == 0 || d & 0x7fff_ffff == 0) && !nan(s0) && !nan(d) && !nan(n) {
        return (0x7fc0_0000, false);
    }
    let (x, dv, nv) = (f32::from_bits(s0) as f64, f32::from_bits(d) as f64, f32::from_bits(n) as f64);
    if x.is_nan() || dv.is_nan() || nv.is_nan() {
        return (
            fp::F32.quiet(if x.is_nan() {
                s0
            } else if dv.is_nan() {
                d
            } else {
                n
            } as u64) as u32,
            false,
        );
    }
    if nv == 0.0 || dv == 0.0 {
        return (0x7fc0_0000, false);
    }
    let exp = |b: u32| (b >> 23 & 0xff) as i32;
    let (k, vcc) = scale_decision(dv, nv, exp(d), exp(n), s0 == d, s0 == n, &P32);
    (fp::round(x * fp::pow2(k), F32, fp::Rm::Ne, true) as u32, vcc)
}

/// The exponent-field bounds of the fast paths, inclusive, in the order source 0 (or
/// the estimate), denominator, numerator, numerator minus denominator: operands inside all
/// four take the common case. The translator tests the same bounds in SIMD, so they are
/// stated once, here.
pub type FastBounds = [(i32, i32); 4];

/// `v_div_scale_f32`'s: see [`scale32`].
pub const SCALE32_FAST: FastBounds = [(0, 254), (1, 252), (24, 254), (-124, 95)];
/// `v_div_fixup_f32`'s: see [`fixup32`].
pub const FIXUP32_FAST: FastBounds = [(0, 254), (1, 254), (1, 254), (-150, 255)];
/// `v_div_scale_f64`'s: see [`scale64`].
pub const SCALE64_FAST: FastBounds = [(0, 0x7fe), (1, 2044), (54, 2046), (-1021, 767)];
/// `v_div_fixup_f64`'s: see [`fixup64`].
pub const FIXUP64_FAST: FastBounds = [(0, 0x7fe), (1, 2046), (1, 2046), (-1075, 4095)];

/// Whether the exponent fields `[e0, ed, en]` (source 0's, the denominator's, the
/// numerator's) and their difference `en - ed` lie inside `bounds`.
#[inline]
fn fields_within(bounds: &FastBounds, [e0, ed, en]: [i32; 3]) -> bool {
    [e0, ed, en, en - ed].iter().zip(bounds).all(|(v, (lo, hi))| (lo..=hi).contains(&v))
}

/// Whether the exponent fields of the f64 values `s0`, `d` and `n` lie inside `bounds`.
#[inline]
fn inside(bounds: &FastBounds, s0: u64, d: u64, n: u64) -> bool {
    fields_within(bounds, [s0, d, n].map(|x| (x >> 52 & 0x7ff) as i32))
}

/// Whether the exponent fields of the f32 values `s0`, `d` and `n` lie inside `bounds`.
#[inline]
fn inside32(bounds: &FastBounds, s0: u32, d: u32, n: u32) -> bool {
    fields_within(bounds, [s0, d, n].map(|x| (x >> 23 & 0xff) as i32))
}

/// `v_div_scale_f64` on one lane: source 0, the denominator, the numerator; the result and
/// the lane's VCC bit.
pub(crate) fn scale64(s0: u64, d: u64, n: u64) -> (u64, bool) {
    // The common case, decided on the exponent fields alone (as `scale32`'s): a normal
    // denominator at most 2^1022 (its reciprocal is normal), a numerator above 2^-969 (not
    // tiny) and finite, and a quotient well inside the normal range (|n/d| > 2^(diff-1) ≥
    // 2^-1022, and the exponent difference below the 768 of "near the top"). Nothing is
    // scaled: `scale_decision` answers (0, false) for all of them.
    if inside(&SCALE64_FAST, s0, d, n) {
        return (s0, false);
    }
    scale64_exact(s0, d, n)
}

fn scale64_exact(s0: u64, d: u64, n: u64) -> (u64, bool) {
    let (x, dv, nv) = (f64::from_bits(s0), f64::from_bits(d), f64::from_bits(n));
    if x.is_nan() || dv.is_nan() || nv.is_nan() {
        return (
            F64.quiet(if x.is_nan() {
                s0
            } else if dv.is_nan() {
                d
            } else {
                n
            }),
            false,
        );
    }
    if nv == 0.0 || dv == 0.0 {
        return (0x7ff8_0000_0000_0000, false);
    }
    let exp = |b: u64| (b >> 52 & 0x7ff) as i32;
    let (k, vcc) = scale_decision(dv, nv, exp(d), exp(n), s0 == d, s0 == n, &P64);
    let r = if k == 0 { x } else { f64::from_bits(super::float::ldexp64(s0, k, Env::new(0x3f0))) };
    (r.to_bits(), vcc)
}

fn div_scale_f32(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let (a, b, c) = (src32(w, inst, 0)?, src32(w, inst, 1)?, src32(w, inst, 2)?);
    let mut out = [0u32; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (v, f) = scale32(a[l], b[l], c[l]);
        out[l] = v;
        vcc |= (f as u64) << l;
    }
    post32(inst, env, &mut out);
    write32(w, inst, &out, mask)?;
    write_lane_mask(w, inst.dst[1], vcc, mask)?;
    Ok(Flow::Next)
}

fn div_scale_f64(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let (a, b, c) = (src64(w, inst, 0)?, src64(w, inst, 1)?, src64(w, inst, 2)?);
    let mut out = [0u64; LANES];
    let mut vcc = 0u64;
    for l in 0..LANES {
        let (v, f) = scale64(a[l], b[l], c[l]);
        out[l] = v;
        vcc |= (f as u64) << l;
    }
    post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    write_lane_mask(w, inst.dst[1], vcc, mask)?;
    Ok(Flow::Next)
}

/// `fma(a, b, c)`, scaled by 2^64 (if |c| ≥ 2) or 2^-64 when the lane's VCC
/// bit is set, rounded once. A NaN result is the first NaN input, quieted, or else the
/// host's default NaN, as `v_fma_f32`'s host-arithmetic lanes give it (the host's own pick
/// among NaN inputs would depend on its operand order).
pub(crate) fn fmas32(a: u32, b: u32, c: u32, vcc: bool, e: Env) -> u32 {
    let z = fp::fma_odd(fp::in32(a, e), fp::in32(b, e), fp::in32(c, e));
    if z.is_nan() {
        return super::float_fast::first_nan3(a, b, c, fp::out32(z, e));
    }
    if !vcc {
        return fp::out32(z, e);
    }
    let k = if c >> 23 & 0xff > 127 { 64 } else { -64 };
    fp::out32(z * fp::pow2(k), e)
}

/// `v_div_fmas_f64` on one lane (`vcc`: the lane's VCC bit).
pub(crate) fn fmas64(a: u64, b: u64, c: u64, vcc: bool, e: Env) -> u64 {
    if !vcc && e.host64() {
        // Unscaled under host arithmetic: `v_fma_f64`'s own fast path (a NaN result carries
        // the first NaN input, quieted, as there).
        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        return super::float_fast::first_nan64(&[a, b, c], x.mul_add(y, z).to_bits());
    }
    let k = match vcc {
        false => 0,
        true if c >> 52 & 0x7ff > 1023 => 128,
        true => -128,
    };
    fp::fma64_scaled(fp::in64(a, e), fp::in64(b, e), fp::in64(c, e), k, e.rm64(), e.out64())
}

fn div_fmas_f32(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let vcc = w.vcc;
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let (a, b, c) = (src32(w, inst, 0)?, src32(w, inst, 1)?, src32(w, inst, 2)?);
    let mut out: [u32; LANES] = if env.rm32() == fp::Rm::Ne {
        // A lane without its VCC bit is `v_fma_f32` (nothing scaled): its host-arithmetic
        // lanes, which give `fmas32`'s bits; the scaled lanes (rare: a quotient near the
        // ends of the range) are redone.
        let mut out = rne_lanes(FastKind::Fma, [&a, &b, &c], env);
        for l in (0..LANES).filter(|l| vcc >> l & 1 != 0) {
            out[l] = fmas32(a[l], b[l], c[l], true, env);
        }
        out
    } else {
        std::array::from_fn(|l| fmas32(a[l], b[l], c[l], vcc >> l & 1 != 0, env))
    };
    post32(inst, env, &mut out);
    write32(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

fn div_fmas_f64(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let vcc = w.vcc;
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let (a, b, c) = (src64(w, inst, 0)?, src64(w, inst, 1)?, src64(w, inst, 2)?);
    let mut out: [u64; LANES] = std::array::from_fn(|l| fmas64(a[l], b[l], c[l], vcc >> l & 1 != 0, env));
    post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// The shared special-case logic of `v_div_fixup`: `q` the quotient
/// estimate, `d` the denominator, `n` the numerator (as f64 values of the
/// type), `ebits` the biased exponents. Returns `None` when the estimate is
/// used as is (with the quotient's sign), else the result value.
fn fixup(q: f64, d: f64, n: f64, exp_d: i32, exp_n: i32, underflow_gap: i32) -> Option<f64> {
    let neg = d.is_sign_negative() != n.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    if d == 0.0 && n == 0.0 || d.is_infinite() && n.is_infinite() {
        Some(f64::from_bits(0xfff8_0000_0000_0000))
    } else if d == 0.0 || n.is_infinite() {
        Some(signed(f64::INFINITY))
    } else if d.is_infinite() || n == 0.0 || exp_n - exp_d < -underflow_gap {
        Some(signed(0.0))
    } else if q.is_nan() {
        Some(signed(f64::INFINITY))
    } else {
        None
    }
}

/// `v_div_fixup_f32` on one lane: the quotient estimate, the denominator, the numerator.
pub(crate) fn fixup32(q: u32, d: u32, n: u32, e: Env) -> u32 {
    // The common case: finite nonzero normal operands, a non-NaN estimate,
    // no underflow; the estimate with the quotient's sign.
    let (ed, en) = (d >> 23 & 0xff, n >> 23 & 0xff);
    if inside32(&FIXUP32_FAST, q, d, n) {
        let sign = (d ^ n) & 0x8000_0000;
        return (F32.flush(q as u64, e.out32()) as u32 & 0x7fff_ffff) | sign;
    }
    // A zero numerator over a normal denominator: the quotient's signed zero; a normal or
    // infinite numerator over a zero: the signed infinity; whatever the estimate
    // (`v_div_scale` made it a NaN). Decided on bits, as `fixup` would.
    let sign = (d ^ n) & 0x8000_0000;
    if n & 0x7fff_ffff == 0 && (1..=254).contains(&ed) {
        return sign;
    }
    if d & 0x7fff_ffff == 0 && (1..=255).contains(&en) && !F32.is_nan(n as u64) {
        return 0x7f80_0000 | sign;
    }
    if F32.is_nan(n as u64) {
        return F32.quiet(n as u64) as u32;
    }
    if F32.is_nan(d as u64) {
        return F32.quiet(d as u64) as u32;
    }
    let (qv, dv, nv) = (fp::in32(q, e), fp::in32(d, e), fp::in32(n, e));
    let exp = |b: u32| (b >> 23 & 0xff) as i32;
    match fixup(qv, dv, nv, exp(d), exp(n), 150) {
        Some(v) => fp::out32(v, e),
        None => {
            let sign = (d ^ n) & 0x8000_0000;
            (F32.flush(q as u64, e.out32()) as u32 & 0x7fff_ffff) | sign
        }
    }
}

/// `v_div_fixup_f64` on one lane: the quotient estimate, the denominator, the numerator.
pub(crate) fn fixup64(q: u64, d: u64, n: u64, e: Env) -> u64 {
    // The common case (as `fixup32`'s): finite nonzero normal operands, a finite estimate,
    // no underflow; the estimate with the quotient's sign.
    if inside(&FIXUP64_FAST, q, d, n) {
        let sign = (d ^ n) & 1 << 63;
        return (F64.flush(q, e.out64()) & !(1 << 63)) | sign;
    }
    fixup64_exact(q, d, n, e)
}

fn fixup64_exact(q: u64, d: u64, n: u64, e: Env) -> u64 {
    if F64.is_nan(n) {
        return F64.quiet(n);
    }
    if F64.is_nan(d) {
        return F64.quiet(d);
    }
    let (qv, dv, nv) = (fp::in64(q, e), fp::in64(d, e), fp::in64(n, e));
    let exp = |b: u64| (b >> 52 & 0x7ff) as i32;
    match fixup(qv, dv, nv, exp(d), exp(n), 1075) {
        Some(v) => v.to_bits(),
        None => {
            let sign = (d ^ n) & 1 << 63;
            (F64.flush(q, e.out64()) & !(1 << 63)) | sign
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Operands whose exponent fields sit at and around every bound of the fast paths, with
    /// random mantissas and signs, plus zeros, infinities and NaNs.
    fn operands() -> Vec<u64> {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let exps = [
            0u64, 1, 2, 52, 53, 54, 55, 500, 1000, 1023, 1074, 1075, 1076, 1077, 1078, 1500, 1790, 1791, 1792, 2043,
            2044, 2045, 2046, 2047,
        ];
        let mut v = Vec::new();
        for &e in &exps {
            for _ in 0..6 {
                let r = next();
                v.push((r & (1 << 63)) | e << 52 | (r >> 12 & 0xf_ffff_ffff_ffff));
            }
            v.push(e << 52);
        }
        v
    }

    #[test]
    fn scale64_fast_path_answers_as_the_exact_decision() {
        let ops = operands();
        for &d in &ops {
            for &n in &ops {
                for s0 in [d, n] {
                    assert_eq!(scale64(s0, d, n), scale64_exact(s0, d, n), "s0 {s0:#x} d {d:#x} n {n:#x}");
                }
            }
        }
    }

    #[test]
    fn fixup64_fast_path_answers_as_the_exact_logic() {
        let ops = operands();
        for mode in [0x3f0, 0x0f0, 0x030] {
            let e = Env::new(mode);
            for &q in ops.iter().step_by(3) {
                for &d in &ops {
                    for &n in &ops {
                        assert_eq!(fixup64(q, d, n, e), fixup64_exact(q, d, n, e), "q {q:#x} d {d:#x} n {n:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn unscaled_fmas64_is_the_fused_multiply_add() {
        let e = Env::new(0x3f0);
        let ops = operands();
        for &a in ops.iter().step_by(5) {
            for &b in ops.iter().step_by(3) {
                for &c in ops.iter().step_by(2) {
                    let exact =
                        fp::fma64_scaled(f64::from_bits(a), f64::from_bits(b), f64::from_bits(c), 0, e.rm64(), true);
                    let fast = fmas64(a, b, c, false, e);
                    if f64::from_bits(exact).is_nan() {
                        assert!(f64::from_bits(fast).is_nan(), "a {a:#x} b {b:#x} c {c:#x}");
                    } else {
                        assert_eq!(fast, exact, "a {a:#x} b {b:#x} c {c:#x}");
                    }
                }
            }
        }
    }
}
