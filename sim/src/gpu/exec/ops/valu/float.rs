//! f32 and f64 arithmetic: add/sub/mul, fused and unfused multiply-add,
//! min/max/med3, ldexp, frexp, fract and the integer roundings, cube map
//! helpers. Semantics per the MI200/MI300 ISA pseudo-code; rounding and
//! denormal handling follow MODE through [`fp`].

use super::float_fast::{first_nan2, first_nan64, host_mad, host_minmax, try_fast, try_fast64, Flush};
use super::float_io::{op32, op32_acc, op64, op64_32, op64_to32, Out};
use super::fp::{self, Env, F32, F64};
use crate::gpu::exec::Handler;
use crate::isa::Op;

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VAddF32 => |w, i, _| super::float_fast::add_f32(w, i),
        Op::VSubF32 => |w, i, _| {
            try_fast(w, i, 2, false, Flush::Mode, |a, b, _| {
                first_nan2(a, b, (f32::from_bits(a) - f32::from_bits(b)).to_bits())
            })
            .unwrap_or_else(|| op32(w, i, Out::F32, |[a, b], e| add32(a, b ^ 0x8000_0000, e)))
        },
        Op::VSubrevF32 => |w, i, _| {
            try_fast(w, i, 2, false, Flush::Mode, |a, b, _| {
                first_nan2(b, a, (f32::from_bits(b) - f32::from_bits(a)).to_bits())
            })
            .unwrap_or_else(|| op32(w, i, Out::F32, |[a, b], e| add32(b, a ^ 0x8000_0000, e)))
        },
        Op::VMulF32 => |w, i, _| super::float_fast::mul_f32(w, i),
        Op::VMulLegacyF32 => |w, i, _| op32(w, i, Out::F32, |[a, b], e| mul_legacy32(a, b, e)),
        Op::VFmaF32 | Op::VFmamkF32 | Op::VFmaakF32 => |w, i, _| super::float_fast::fma_f32(w, i),
        Op::VFmacF32 => |w, i, _| super::float_fast::fmac_f32(w, i),
        Op::VMadF32 | Op::VMadmkF32 | Op::VMadakF32 => |w, i, _| {
            try_fast(w, i, 3, false, Flush::Always, host_mad)
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a, b, c], e| mad32(a, b, c, false, e)))
        },
        Op::VMadLegacyF32 => |w, i, _| op32(w, i, Out::F32, |[a, b, c], e| mad32(a, b, c, true, e)),
        Op::VMacF32 => |w, i, _| {
            try_fast(w, i, 2, true, Flush::Always, host_mad)
                .unwrap_or_else(|| op32_acc(w, i, Out::F32, |[a, b, c], e| mad32(a, b, c, false, e)))
        },
        Op::VMinF32 => |w, i, _| {
            let e = Env::new(w.mode);
            try_fast(w, i, 2, false, Flush::Mode, |a, b, _| host_minmax(a, b, false, e))
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a, b], e| minmax32(a, b, false, e)))
        },
        Op::VMaxF32 => |w, i, _| {
            let e = Env::new(w.mode);
            try_fast(w, i, 2, false, Flush::Mode, |a, b, _| host_minmax(a, b, true, e))
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a, b], e| minmax32(a, b, true, e)))
        },
        Op::VMin3F32 => |w, i, _| op32(w, i, Out::F32, |[a, b, c], e| minmax32(minmax32(a, b, false, e), c, false, e)),
        Op::VMax3F32 => |w, i, _| op32(w, i, Out::F32, |[a, b, c], e| minmax32(minmax32(a, b, true, e), c, true, e)),
        Op::VMed3F32 => |w, i, _| op32(w, i, Out::F32, |[a, b, c], e| med3_32(a, b, c, e)),
        Op::VLdexpF32 => |w, i, _| op32(w, i, Out::F32, |[a, n], e| ldexp32(a, n as i32, e)),
        Op::VFrexpMantF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| frexp_mant32(a, e)),
        Op::VFrexpExpI32F32 => |w, i, _| op32(w, i, Out::Bits, |[a], e| frexp_exp32(a, e) as u32),
        Op::VFractF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| fract32(a, e)),
        Op::VTruncF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| round_int32(a, e, f64::trunc)),
        Op::VCeilF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| round_int32(a, e, f64::ceil)),
        Op::VFloorF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| round_int32(a, e, f64::floor)),
        Op::VRndneF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| round_int32(a, e, f64::round_ties_even)),
        Op::VCubeidF32 => |w, i, _| op32(w, i, Out::F32, |s, e| cube(s, e).0),
        Op::VCubescF32 => |w, i, _| op32(w, i, Out::F32, |s, e| cube(s, e).1),
        Op::VCubetcF32 => |w, i, _| op32(w, i, Out::F32, |s, e| cube(s, e).2),
        Op::VCubemaF32 => |w, i, _| op32(w, i, Out::F32, |s, e| cube(s, e).3),

        Op::VAddF64 => |w, i, _| {
            try_fast64(w, i, 2, |a, b, _| a + b).unwrap_or_else(|| op64(w, i, true, |[a, b], e| add64(a, b, e)))
        },
        Op::VMulF64 => |w, i, _| {
            try_fast64(w, i, 2, |a, b, _| a * b).unwrap_or_else(|| op64(w, i, true, |[a, b], e| mul64(a, b, e)))
        },
        Op::VFmaF64 => |w, i, _| {
            try_fast64(w, i, 3, f64::mul_add).unwrap_or_else(|| op64(w, i, true, |[a, b, c], e| fma64(a, b, c, e)))
        },
        Op::VFmacF64 => fmac_f64,
        Op::VMinF64 => |w, i, _| op64(w, i, true, |[a, b], e| minmax64(a, b, false, e)),
        Op::VMaxF64 => |w, i, _| op64(w, i, true, |[a, b], e| minmax64(a, b, true, e)),
        Op::VLdexpF64 => |w, i, _| op64_32(w, i, |a, n, e| ldexp64(a, n as i32, e)),
        Op::VFrexpMantF64 => |w, i, _| op64(w, i, true, |[a], e| frexp_mant64(a, e)),
        Op::VFrexpExpI32F64 => |w, i, _| op64_to32(w, i, Out::Bits, |a, e| frexp_exp64(a, e) as u32),
        Op::VFractF64 => |w, i, _| op64(w, i, true, |[a], e| fract64(a, e)),
        Op::VTruncF64 => |w, i, _| op64(w, i, true, |[a], e| round_int64(a, e, f64::trunc)),
        Op::VCeilF64 => |w, i, _| op64(w, i, true, |[a], e| round_int64(a, e, f64::ceil)),
        Op::VFloorF64 => |w, i, _| op64(w, i, true, |[a], e| round_int64(a, e, f64::floor)),
        Op::VRndneF64 => |w, i, _| op64(w, i, true, |[a], e| round_int64(a, e, f64::round_ties_even)),
        Op::VTrigPreopF64 => |w, i, _| op64_32(w, i, |a, n, _| super::float_trig::trig_preop(a, n)),
        // The other float modules are reached through this one.
        _ => {
            return super::float_div::handler(op)
                .or_else(|| super::trans::handler(op))
                .or_else(|| super::float16::handler(op))
        }
    };
    Some(h)
}

// ----- f32 ----------------------------------------------------------------

/// `a + b` in f32.
#[inline]
pub fn add32(a: u32, b: u32, e: Env) -> u32 {
    if e.host32() {
        (f32::from_bits(a) + f32::from_bits(b)).to_bits()
    } else {
        fp::out32(fp::add_odd(fp::in32(a, e), fp::in32(b, e)), e)
    }
}

/// `a * b` in f32 (the product of two f32 is exact in f64).
#[inline]
pub fn mul32(a: u32, b: u32, e: Env) -> u32 {
    if e.host32() {
        (f32::from_bits(a) * f32::from_bits(b)).to_bits()
    } else {
        fp::out32(fp::in32(a, e) * fp::in32(b, e), e)
    }
}

/// `v_mul_legacy_f32`: as `v_mul_f32`, except that 0 times anything
/// (even inf or NaN) is +0.
fn mul_legacy32(a: u32, b: u32, e: Env) -> u32 {
    let (x, y) = (fp::in32(a, e), fp::in32(b, e));
    if x == 0.0 || y == 0.0 {
        0
    } else {
        fp::out32(x * y, e)
    }
}

/// Fused `a * b + c` in f32, rounded once.
#[inline]
pub fn fma32(a: u32, b: u32, c: u32, e: Env) -> u32 {
    fp::out32(fp::fma_odd(fp::in32(a, e), fp::in32(b, e), fp::in32(c, e)), e)
}

/// Unfused `a * b + c` (`v_mad_f32`, `v_mac_f32`, madmk/madak): the
/// product is rounded to f32 before the add, and denormals are flushed on
/// input and output whatever MODE says. `legacy`: 0 times anything is 0.
fn mad32(a: u32, b: u32, c: u32, legacy: bool, e: Env) -> u32 {
    let flush = Env::new(e.mode & !0x30);
    let (x, y, z) = (fp::in32(a, flush), fp::in32(b, flush), fp::in32(c, flush));
    let p = if legacy && (x == 0.0 || y == 0.0) { 0.0 } else { f32::from_bits(fp::out32(x * y, flush)) as f64 };
    fp::out32(fp::add_odd(p, z), flush)
}

/// `v_min_f32`/`v_max_f32` (see [`fp::minmax`]); a result is flushed per
/// MODE, so `v_max_f32 v, v` canonicalizes.
pub fn minmax32(a: u32, b: u32, max: bool, e: Env) -> u32 {
    let a = F32.flush(a as u64, e.in32());
    let b = F32.flush(b as u64, e.in32());
    let (x, y) = (f32::from_bits(a as u32) as f64, f32::from_bits(b as u32) as f64);
    F32.flush(fp::minmax(a, b, x, y, F32, max, e.ieee()), e.out32()) as u32
}

fn med3_32(a: u32, b: u32, c: u32, e: Env) -> u32 {
    let v = [a, b, c].map(|b| F32.flush(b as u64, e.in32()));
    let x = v.map(|b| f32::from_bits(b as u32) as f64);
    F32.flush(fp::med3(v, x, F32, e.ieee()), e.out32()) as u32
}

/// `a * 2^n`, rounded once.
fn ldexp32(a: u32, n: i32, e: Env) -> u32 {
    let x = fp::in32(a, e);
    // f32 values times 2^±300 stay exact in f64 and saturate the f32 range.
    fp::out32(x * fp::pow2(n.clamp(-300, 300)), e)
}

/// The mantissa in [0.5, 1) with the sign of `a`; inf and NaN pass
/// through (NaN quieted), zero stays zero.
fn frexp_mant32(a: u32, e: Env) -> u32 {
    let x = fp::in32(a, e);
    if x.is_nan() {
        return F32.quiet(a as u64) as u32;
    }
    if x.is_infinite() || x == 0.0 {
        return F32.flush(a as u64, e.in32()) as u32;
    }
    let (s, m, ex) = fp::parts(x);
    let lead = 63 - m.leading_zeros() as i32 + ex;
    let mant = x.abs() * fp::pow2(-lead - 1);
    let v = if s { -mant } else { mant };
    (v as f32).to_bits()
}

/// The exponent `e` with `a = m * 2^e`, `m` in [0.5, 1); 0 for zero, inf
/// and NaN.
fn frexp_exp32(a: u32, e: Env) -> i32 {
    let x = fp::in32(a, e);
    if !x.is_finite() || x == 0.0 {
        return 0;
    }
    let (_, m, ex) = fp::parts(x);
    63 - m.leading_zeros() as i32 + ex + 1
}

/// `x - floor(x)`, kept below 1.0; inf gives NaN, NaN passes through.
fn fract32(a: u32, e: Env) -> u32 {
    let x = fp::in32(a, e);
    if x.is_nan() {
        return F32.quiet(a as u64) as u32;
    }
    if x.is_infinite() {
        return fp::F32.quiet(F32.inf()) as u32;
    }
    let r = fp::out32(x - x.floor(), e);
    r.min(0x3f7f_ffff)
}

/// trunc/ceil/floor/rndne: exact in f64, then back.
fn round_int32(a: u32, e: Env, f: fn(f64) -> f64) -> u32 {
    let x = fp::in32(a, e);
    if x.is_nan() {
        return F32.quiet(a as u64) as u32;
    }
    (f(x) as f32).to_bits()
}

/// `v_cube*_f32`: face id, s and t coordinates (not yet divided by the
/// major axis) and twice the major axis coordinate (signed), per the ISA's
/// tables.
fn cube([x, y, z]: [u32; 3], e: Env) -> (u32, u32, u32, u32) {
    let (x, y, z) = (fp::in32(x, e), fp::in32(y, e), fp::in32(z, e));
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (id, sc, tc, ma) = if az >= ax && az >= ay {
        (if z < 0.0 { 5.0 } else { 4.0 }, if z < 0.0 { -x } else { x }, -y, 2.0 * z)
    } else if ay >= ax {
        (if y < 0.0 { 3.0 } else { 2.0 }, x, if y < 0.0 { -z } else { z }, 2.0 * y)
    } else {
        (if x < 0.0 { 1.0 } else { 0.0 }, if x < 0.0 { z } else { -z }, -y, 2.0 * x)
    };
    let f = |v: f64| fp::out32(v, e);
    (f(id), f(sc), f(tc), f(ma))
}

// ----- f64 ----------------------------------------------------------------

#[inline]
fn add64(a: u64, b: u64, e: Env) -> u64 {
    let (x, y) = (fp::in64(a, e), fp::in64(b, e));
    if e.host64() {
        return first_nan64(&[a, b], (x + y).to_bits());
    }
    let (s, err) = fp::two_sum(x, y);
    first_nan64(&[a, b], fp::fin64(s, err, x.is_finite() && y.is_finite(), e))
}

#[inline]
fn mul64(a: u64, b: u64, e: Env) -> u64 {
    let (x, y) = (fp::in64(a, e), fp::in64(b, e));
    if e.host64() {
        return first_nan64(&[a, b], (x * y).to_bits());
    }
    let p = x * y;
    let err = if p.is_finite() { x.mul_add(y, -p) } else { 0.0 };
    first_nan64(&[a, b], fp::fin64(p, err, x.is_finite() && y.is_finite(), e))
}

/// Fused multiply-add: the host's (correctly rounded) fma with the default
/// MODE, exact integer arithmetic otherwise.
#[inline]
fn fma64(a: u64, b: u64, c: u64, e: Env) -> u64 {
    let (x, y, z) = (fp::in64(a, e), fp::in64(b, e), fp::in64(c, e));
    let r = if e.host64() { x.mul_add(y, z).to_bits() } else { fp::fma64_scaled(x, y, z, 0, e.rm64(), e.out64()) };
    first_nan64(&[a, b, c], r)
}

fn fmac_f64(
    w: &mut crate::gpu::exec::Wave,
    inst: &crate::isa::Inst,
    _: &mut crate::gpu::exec::Ctx<'_>,
) -> Result<crate::gpu::exec::Flow, crate::gpu::exec::ExecError> {
    use super::common::{src64, write64, write_mask};
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let a = src64(w, inst, 0)?;
    let b = src64(w, inst, 1)?;
    let (lo, hi) = (w.vreg(inst.dst[0], 0)?, w.vreg(inst.dst[0], 1)?);
    let mut out: [u64; 64] = std::array::from_fn(|l| fma64(a[l], b[l], lo[l] as u64 | (hi[l] as u64) << 32, env));
    super::float_io::post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    Ok(crate::gpu::exec::Flow::Next)
}

fn minmax64(a: u64, b: u64, max: bool, e: Env) -> u64 {
    let a = F64.flush(a, e.in64());
    let b = F64.flush(b, e.in64());
    F64.flush(fp::minmax(a, b, f64::from_bits(a), f64::from_bits(b), F64, max, e.ieee()), e.out64())
}

/// `a * 2^n` for f64, rounded once (exactly, through the integer mantissa).
pub fn ldexp64(a: u64, n: i32, e: Env) -> u64 {
    let x = fp::in64(a, e);
    if !x.is_finite() || x == 0.0 {
        return if x.is_nan() { F64.quiet(a) } else { x.to_bits() };
    }
    let (s, m, ex) = fp::parts(x);
    fp::round_parts(s, m as u128, ex.saturating_add(n.clamp(-4000, 4000)), F64, e.rm64(), e.out64())
}

fn frexp_mant64(a: u64, e: Env) -> u64 {
    let x = fp::in64(a, e);
    if x.is_nan() {
        return F64.quiet(a);
    }
    if x.is_infinite() || x == 0.0 {
        return x.to_bits();
    }
    let (s, m, _) = fp::parts(x);
    let lead = 63 - m.leading_zeros() as i32;
    // m * 2^(-lead-1) is in [0.5, 1).
    fp::round_parts(s, m as u128, -lead - 1, F64, fp::Rm::Ne, true)
}

fn frexp_exp64(a: u64, e: Env) -> i32 {
    let x = fp::in64(a, e);
    if !x.is_finite() || x == 0.0 {
        return 0;
    }
    let (_, m, ex) = fp::parts(x);
    63 - m.leading_zeros() as i32 + ex + 1
}

fn fract64(a: u64, e: Env) -> u64 {
    let x = fp::in64(a, e);
    if x.is_nan() {
        return F64.quiet(a);
    }
    if x.is_infinite() {
        return F64.quiet(F64.inf());
    }
    // x - floor(x) is exact for f64 except when it rounds up to 1.0.
    let r = (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff));
    F64.flush(r.to_bits(), e.out64())
}

fn round_int64(a: u64, e: Env, f: fn(f64) -> f64) -> u64 {
    let x = fp::in64(a, e);
    if x.is_nan() {
        return F64.quiet(a);
    }
    f(x).to_bits()
}
