//! f16 arithmetic (VOP1/VOP2/VOP3). Results are computed exactly (or
//! rounded to odd) in f64 and rounded once to f16 under MODE's f64/f16
//! controls.
//!
//! Destination halves: the VOP1/VOP2 ops and the `_legacy` VOP3 ops write
//! the f16 in the low half and zero the high half; `v_mad_f16`,
//! `v_fma_f16`, `v_div_fixup_f16` and f16 min3/max3/med3 write the half
//! chosen by `op_sel[3]` and keep the other.

use super::float_io::{op16_half, op32, op32_acc, Out};
use super::fp::{self, Env, Rm, F16};
use crate::gpu::exec::Handler;
use crate::isa::Op;

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VAddF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| add16(a, b, e)),
        Op::VSubF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| add16(a, b ^ 0x8000, e)),
        Op::VSubrevF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| add16(b, a ^ 0x8000, e)),
        Op::VMulF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| mul16(a, b, e)),
        Op::VFmaF16 => |w, i, _| op16_half(w, i, |[a, b, c], e| fma16(a, b, c, e)),
        Op::VFmaLegacyF16 => |w, i, _| op32(w, i, Out::F16, |[a, b, c], e| fma16(a, b, c, e)),
        Op::VMadF16 => |w, i, _| op16_half(w, i, |[a, b, c], e| mad16(a, b, c, e)),
        Op::VMadLegacyF16 | Op::VMadmkF16 | Op::VMadakF16 => {
            |w, i, _| op32(w, i, Out::F16, |[a, b, c], e| mad16(a, b, c, e))
        }
        Op::VMacF16 => |w, i, _| op32_acc(w, i, Out::F16, |[a, b, c], e| mad16(a, b, c, e)),
        Op::VMinF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| minmax16(a, b, false, e)),
        Op::VMaxF16 => |w, i, _| op32(w, i, Out::F16, |[a, b], e| minmax16(a, b, true, e)),
        Op::VMin3F16 => |w, i, _| op16_half(w, i, |[a, b, c], e| minmax16(minmax16(a, b, false, e), c, false, e)),
        Op::VMax3F16 => |w, i, _| op16_half(w, i, |[a, b, c], e| minmax16(minmax16(a, b, true, e), c, true, e)),
        Op::VMed3F16 => |w, i, _| op16_half(w, i, |[a, b, c], e| med3_16(a, b, c, e)),
        Op::VLdexpF16 => |w, i, _| op32(w, i, Out::F16, |[a, n], e| ldexp16(a, n as i16, e)),
        Op::VFrexpMantF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| frexp_mant16(a, e)),
        Op::VFrexpExpI16F16 => |w, i, _| op32(w, i, Out::Bits, |[a], e| frexp_exp16(a, e) as u32 & 0xffff),
        Op::VFractF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| fract16(a, e)),
        Op::VTruncF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| round_int16(a, e, f64::trunc)),
        Op::VCeilF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| round_int16(a, e, f64::ceil)),
        Op::VFloorF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| round_int16(a, e, f64::floor)),
        Op::VRndneF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| round_int16(a, e, f64::round_ties_even)),
        Op::VDivFixupF16 => |w, i, _| op16_half(w, i, |[q, d, n], e| fixup16(q, d, n, e)),
        Op::VDivFixupLegacyF16 => |w, i, _| op32(w, i, Out::F16, |[q, d, n], e| fixup16(q, d, n, e)),
        _ => return None,
    };
    Some(h)
}

/// A NaN operand's quieted bits (first NaN wins), if any.
#[inline]
fn nan_of(v: &[u32]) -> Option<u32> {
    v.iter().map(|&b| b & 0xffff).find(|&b| F16.is_nan(b as u64)).map(|b| F16.quiet(b as u64) as u32)
}

#[inline]
pub fn add16(a: u32, b: u32, e: Env) -> u32 {
    if let Some(n) = nan_of(&[a, b]) {
        return n;
    }
    // The sum of two f16 is exact in f64.
    fp::out16(fp::in16(a, e) + fp::in16(b, e), e)
}

#[inline]
pub fn mul16(a: u32, b: u32, e: Env) -> u32 {
    if let Some(n) = nan_of(&[a, b]) {
        return n;
    }
    fp::out16(fp::in16(a, e) * fp::in16(b, e), e)
}

#[inline]
pub fn fma16(a: u32, b: u32, c: u32, e: Env) -> u32 {
    if let Some(n) = nan_of(&[a, b, c]) {
        return n;
    }
    fp::out16(fp::fma_odd(fp::in16(a, e), fp::in16(b, e), fp::in16(c, e)), e)
}

/// Unfused multiply-add: the product is rounded to f16 first; denormals
/// are flushed on input and output.
fn mad16(a: u32, b: u32, c: u32, e: Env) -> u32 {
    if let Some(n) = nan_of(&[a, b, c]) {
        return n;
    }
    let flush = Env::new(e.mode & !0xc0);
    let p = fp::f16_to_f64(fp::out16(fp::in16(a, flush) * fp::in16(b, flush), flush) as u16);
    fp::out16(p + fp::in16(c, flush), flush)
}

pub fn minmax16(a: u32, b: u32, max: bool, e: Env) -> u32 {
    let a = F16.flush((a & 0xffff) as u64, e.in64());
    let b = F16.flush((b & 0xffff) as u64, e.in64());
    let r = fp::minmax(a, b, fp::f16_to_f64(a as u16), fp::f16_to_f64(b as u16), F16, max, e.ieee());
    F16.flush(r, e.out64()) as u32
}

fn med3_16(a: u32, b: u32, c: u32, e: Env) -> u32 {
    let v = [a, b, c].map(|x| F16.flush((x & 0xffff) as u64, e.in64()));
    let x = v.map(|b| fp::f16_to_f64(b as u16));
    F16.flush(fp::med3(v, x, F16, e.ieee()), e.out64()) as u32
}

fn ldexp16(a: u32, n: i16, e: Env) -> u32 {
    if let Some(q) = nan_of(&[a]) {
        return q;
    }
    fp::out16(fp::in16(a, e) * fp::pow2((n as i32).clamp(-100, 100)), e)
}

fn frexp_mant16(a: u32, e: Env) -> u32 {
    let x = fp::in16(a, e);
    if x.is_nan() {
        return F16.quiet((a & 0xffff) as u64) as u32;
    }
    if x.is_infinite() || x == 0.0 {
        return F16.flush((a & 0xffff) as u64, e.in64()) as u32;
    }
    let (_, m, ex) = fp::parts(x);
    let lead = 63 - m.leading_zeros() as i32 + ex;
    fp::round(x * fp::pow2(-lead - 1), F16, Rm::Ne, true) as u32
}

fn frexp_exp16(a: u32, e: Env) -> i32 {
    let x = fp::in16(a, e);
    if !x.is_finite() || x == 0.0 {
        return 0;
    }
    let (_, m, ex) = fp::parts(x);
    63 - m.leading_zeros() as i32 + ex + 1
}

fn fract16(a: u32, e: Env) -> u32 {
    let x = fp::in16(a, e);
    if x.is_nan() {
        return F16.quiet((a & 0xffff) as u64) as u32;
    }
    if x.is_infinite() {
        return F16.quiet(F16.inf()) as u32;
    }
    fp::out16(x - x.floor(), e).min(0x3bff)
}

fn round_int16(a: u32, e: Env, f: fn(f64) -> f64) -> u32 {
    let x = fp::in16(a, e);
    if x.is_nan() {
        return F16.quiet((a & 0xffff) as u64) as u32;
    }
    fp::round(f(x), F16, Rm::Ne, true) as u32
}

/// `v_div_fixup_f16`: `q` the quotient estimate, `d` the denominator, `n`
/// the numerator (see the f32 form).
fn fixup16(q: u32, d: u32, n: u32, e: Env) -> u32 {
    let (q, d, n) = (q & 0xffff, d & 0xffff, n & 0xffff);
    if F16.is_nan(n as u64) {
        return F16.quiet(n as u64) as u32;
    }
    if F16.is_nan(d as u64) {
        return F16.quiet(d as u64) as u32;
    }
    let (qv, dv, nv) = (fp::in16(q, e), fp::in16(d, e), fp::in16(n, e));
    let sign = (d ^ n) & 0x8000;
    if dv == 0.0 && nv == 0.0 || dv.is_infinite() && nv.is_infinite() {
        0xfe00
    } else if dv == 0.0 || nv.is_infinite() || qv.is_nan() {
        sign | 0x7c00
    } else if dv.is_infinite() || nv == 0.0 {
        sign
    } else {
        sign | (q & 0x7fff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_arithmetic_rounds_once() {
        let e = Env::new(0x2f0);
        assert_eq!(add16(0x3c00, 0x3c00, e), 0x4000);
        assert_eq!(add16(0x7bff, 0x7bff, e), 0x7c00, "overflow");
        assert_eq!(mul16(0x0001, 0x3800, e), 0x0000, "2^-25 ties to even 0");
        assert_eq!(mul16(0x0001, 0x3800, Env::new(0x2f4)), 0x0001, "toward +inf");
        assert_eq!(fma16(0x3c01, 0x1000, 0x3c00, e), 0x3c01, "just above the tie");
        assert_eq!(fma16(0x3c00, 0x1000, 0x3c00, e), 0x3c00, "tie to even");
        assert_eq!(minmax16(0x8000, 0x0000, true, e), 0);
        assert_eq!(mad16(0x0001, 0x3c00, 0x0000, e), 0, "mad flushes denormals");
        assert_eq!(fixup16(0x3c00, 0x0000, 0x3c00, e), 0x7c00);
        assert_eq!(fixup16(0x3c00, 0xc000, 0x3c00, e), 0xbc00);
        assert_eq!(ldexp16(0x3c00, -24, e), 0x0001);
        assert_eq!(frexp_exp16(0x4400, e), 3);
        assert_eq!(frexp_mant16(0xc400, e), 0xb800);
    }
}
