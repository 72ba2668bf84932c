//! One-source transcendental ops: rcp, rsq, sqrt, exp, log, sin, cos in
//! f16/f32/f64.
//!
//! The hardware's f32/f16 forms are approximations (the ISA allows 1 ulp);
//! here they are computed in f64 and rounded once (within 0.5 ulp). The
//! f32 forms of rcp/rsq/sqrt/exp/log/sin/cos flush denormal inputs and
//! results. `v_sin`/`v_cos` take their argument in revolutions
//! (`sin(x * 2π)`), reduced exactly. f64 rcp and sqrt are correctly
//! rounded (host division and square root).

use super::float_fast::{try_fast, Flush};
use super::float_io::{op32, op64, op64_wave, Out};
use super::fp::{self, Env, Rm, F16, F32, F64};
use crate::gpu::exec::Handler;
use crate::gpu::exec::LANES;
use crate::isa::Op;

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        // Fast paths: the f64 result rounded by the host conversion.
        Op::VRcpF32 | Op::VRcpIflagF32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Always, |a, _, _| ((1.0 / f32::from_bits(a) as f64) as f32).to_bits())
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| t32(a, e, rcp)))
        },
        Op::VRsqF32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Always, |a, _, _| (rsq(f32::from_bits(a) as f64) as f32).to_bits())
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| t32(a, e, rsq)))
        },
        Op::VSqrtF32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Always, |a, _, _| ((f32::from_bits(a) as f64).sqrt() as f32).to_bits())
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| t32(a, e, f64::sqrt)))
        },
        Op::VExpF32 | Op::VExpLegacyF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| t32(a, e, f64::exp2)),
        Op::VLogF32 | Op::VLogLegacyF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| t32(a, e, log2)),
        Op::VSinF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| t32(a, e, sin_rev)),
        Op::VCosF32 => |w, i, _| op32(w, i, Out::F32, |[a], e| t32(a, e, cos_rev)),
        Op::VRcpF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, rcp)),
        Op::VRsqF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, rsq)),
        Op::VSqrtF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, f64::sqrt)),
        Op::VExpF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, f64::exp2)),
        Op::VLogF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, log2)),
        Op::VSinF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, sin_rev)),
        Op::VCosF16 => |w, i, _| op32(w, i, Out::F16, |[a], e| t16(a, e, cos_rev)),
        Op::VRcpF64 => |w, i, _| op64(w, i, true, |[a], e| t64(a, e, rcp)),
        Op::VRsqF64 => |w, i, _| op64_wave(w, i, rsq64_lanes),
        Op::VSqrtF64 => |w, i, _| op64(w, i, true, |[a], e| t64(a, e, f64::sqrt)),
        _ => return None,
    };
    Some(h)
}

/// An f32 transcendental: denormals flushed on both sides, one rounding.
#[inline]
fn t32(a: u32, _e: Env, f: fn(f64) -> f64) -> u32 {
    let x = f32::from_bits(F32.flush(a as u64, false) as u32) as f64;
    if x.is_nan() {
        return F32.quiet(a as u64) as u32;
    }
    fp::round(f(x), F32, Rm::Ne, false) as u32
}

/// An f16 transcendental (low half), denormals per MODE.
#[inline]
fn t16(a: u32, e: Env, f: fn(f64) -> f64) -> u32 {
    let x = fp::in16(a, e);
    if x.is_nan() {
        return F16.quiet((a & 0xffff) as u64) as u32;
    }
    fp::round(f(x), F16, Rm::Ne, e.out64()) as u32
}

/// An f64 transcendental, denormals per MODE.
#[inline]
fn t64(a: u64, e: Env, f: fn(f64) -> f64) -> u64 {
    let x = fp::in64(a, e);
    if x.is_nan() {
        return F64.quiet(a);
    }
    F64.flush(f(x).to_bits(), e.out64())
}

fn rcp(x: f64) -> f64 {
    1.0 / x
}

/// `1/sqrt(x)`: -0 gives -inf, negative values NaN.
fn rsq(x: f64) -> f64 {
    if x == 0.0 {
        return f64::INFINITY.copysign(x);
    }
    1.0 / x.sqrt()
}

/// f64 `1/sqrt(x)` with a final correction step: the candidate and its
/// neighbours are compared through the residual `1 - y²x` (computed with
/// fused operations) so the result is within 0.5 ulp but for rare ties.
fn rsq64(x: f64) -> f64 {
    let y = rsq(x);
    if !y.is_finite() || y == 0.0 || !x.is_finite() || x < 0.0 {
        return y;
    }
    if SAFE.contains(&x) {
        return closest(y, x);
    }
    // Scale by an even power of two to avoid overflow/underflow in the residual. For a
    // normal `x` that is its exponent field's (rounded down to even): `x` scales into
    // [1, 4) and every value below stays normal, where scaling by powers of two is exact,
    // so the choice is the same as at any other even scale (a logarithm cost ten times the
    // rest of the function: rocRAND's normal distributions spend their time here).
    let k = if x >= f64::MIN_POSITIVE {
        (((x.to_bits() >> 52) as i32) - 1023) & !1
    } else {
        (x.log2().floor() as i32) & !1
    };
    closest(y * pow2(k / 2), x * pow2(-k)) * pow2(-(k / 2))
}

/// Where `rsq64` needs no scaling: every value of its search is normal, so the search
/// chooses as it would at any even scale.
const SAFE: std::ops::RangeInclusive<f64> = f64::from_bits((1023 - 500) << 52)..=f64::from_bits((1023 + 500) << 52);

/// Of `y` and its two neighbours, the one whose residual `1 - c²x` is smallest (the first
/// of equals, `y` first).
#[inline]
fn closest(y: f64, x: f64) -> f64 {
    let mut best = y;
    let mut best_r = residual(y, x).abs();
    for c in [y.next_down(), y.next_up()] {
        let r = residual(c, x).abs();
        if r < best_r {
            best = c;
            best_r = r;
        }
    }
    best
}

/// `v_rsq_f64` on a wave's lanes: the candidates `1/sqrt(x)` of all lanes first
/// (independent square roots and divisions the host runs side by side, where one lane at a
/// time waited for each), then each lane's search, or [`rsq64`] through [`t64`] where `x`
/// is not [`SAFE`]: lane by lane what `t64(a, env, rsq64)` gives. A safe `x` is a positive
/// normal number, which no MODE flushes, and so is its result. Lanes outside `mask` (not
/// written) are left at 0: what inactive lanes hold is often far from safe.
fn rsq64_lanes(a: &[u64; LANES], env: Env, mask: u64, out: &mut [u64; LANES]) {
    let mut y = [0f64; LANES];
    for (y, a) in y.iter_mut().zip(a) {
        *y = 1.0 / f64::from_bits(*a).sqrt();
    }
    for (l, ((o, a), y)) in out.iter_mut().zip(a).zip(&y).enumerate() {
        if mask >> l & 1 == 0 {
            continue;
        }
        let x = f64::from_bits(*a);
        *o = if SAFE.contains(&x) { closest(*y, x).to_bits() } else { t64(*a, env, rsq64) };
    }
}

/// `1 - c²x`, with `c²` exact (its rounding error from a fused operation), to first order.
fn residual(c: f64, x: f64) -> f64 {
    let p = c * c; // rounded
    let pe = c.mul_add(c, -p); // exact error of c*c
    (-p).mul_add(x, 1.0) - pe * x
}

/// `2^n`, exactly: a normal power of two for `n` in -1022..=1023, else `2f64.powi(n)`.
fn pow2(n: i32) -> f64 {
    if (-1022..=1023).contains(&n) {
        f64::from_bits(((n + 1023) as u64) << 52)
    } else {
        2f64.powi(n)
    }
}

fn log2(x: f64) -> f64 {
    if x == 0.0 {
        f64::NEG_INFINITY
    } else {
        x.log2()
    }
}

/// The fractional revolution of `x` in [-0.5, 0.5] (exact).
fn revolutions(x: f64) -> f64 {
    x - x.round_ties_even()
}

fn sin_rev(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    let r = revolutions(x);
    // Exact quarter turns give exact results.
    match r {
        0.25 => 1.0,
        -0.25 => -1.0,
        0.5 | -0.5 => 0.0,
        0.0 => r,
        _ => (r * std::f64::consts::TAU).sin(),
    }
}

fn cos_rev(x: f64) -> f64 {
    if x.is_infinite() {
        return f64::NAN;
    }
    let r = revolutions(x);
    match r {
        0.25 | -0.25 => 0.0,
        0.5 | -0.5 => -1.0,
        _ => (r * std::f64::consts::TAU).cos(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values() {
        let e = Env::new(0x2f0);
        assert_eq!(t32((-0.0f32).to_bits(), e, rcp), 0xff80_0000);
        assert_eq!(t32(f32::INFINITY.to_bits(), e, rcp), 0);
        assert_eq!(t32(f32::NEG_INFINITY.to_bits(), e, f64::sqrt) & 0x7fc0_0000, 0x7fc0_0000);
        assert_eq!(t32(0.25f32.to_bits(), e, sin_rev), 1.0f32.to_bits());
        assert_eq!(t32(0.5f32.to_bits(), e, cos_rev), (-1.0f32).to_bits());
        assert_eq!(t32(1u32, e, log2), f32::NEG_INFINITY.to_bits(), "denormal input is flushed");
        assert_eq!(t32((-126.5f32).to_bits(), e, f64::exp2), 0, "denormal result is flushed");
        assert_eq!(t32(4.0f32.to_bits(), e, rsq), 0.5f32.to_bits());
        let r = f64::from_bits(t64(3f64.to_bits(), e, rsq64));
        assert!((r - 1.0 / 3f64.sqrt()).abs() <= f64::EPSILON);
    }

    /// The whole-wave form answers every lane of the write mask as the per-lane function
    /// does, in MODEs that keep and that flush f64 denormals: safe lanes, specials,
    /// denormals, extremes.
    #[test]
    fn rsq64_lanes_match_the_per_lane_function() {
        let mut state = 0x0bad_5eed_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state
        };
        let edges = [
            0u64,
            1 << 63,
            1,
            0x000f_ffff_ffff_ffff,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff4_0000_0000_1234,
            0x7fef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
        ];
        for mode in [0xf0u32, 0x30, 0xc0, 0xf3] {
            let env = Env::new(mode);
            for round in 0..2000 {
                let a: [u64; LANES] = std::array::from_fn(|l| match (round + l) % 4 {
                    0 => edges[(next() % edges.len() as u64) as usize],
                    1 => next(),
                    _ => (1000 + (next() >> 58)) << 52 | next() >> 12,
                });
                let mut out = [0u64; LANES];
                let mask = if round % 3 == 0 { u64::MAX } else { next() };
                rsq64_lanes(&a, env, mask, &mut out);
                for l in 0..LANES {
                    let want = if mask >> l & 1 != 0 { t64(a[l], env, rsq64) } else { 0 };
                    assert_eq!(out[l], want, "mode {mode:#x}, lane {l}: {:#x}", a[l]);
                }
            }
        }
    }

    /// `rsq64` as it was written before its scale came from the exponent field: a
    /// logarithm and `powi`.
    fn rsq64_by_logarithm(x: f64) -> f64 {
        let y = rsq(x);
        if !y.is_finite() || y == 0.0 || !x.is_finite() || x < 0.0 {
            return y;
        }
        let k = (x.log2().floor() as i32) & !1;
        let xs = x * 2f64.powi(-k);
        let ys = y * 2f64.powi(k / 2);
        let resid = |c: f64| {
            let p = c * c;
            let pe = c.mul_add(c, -p);
            (-p).mul_add(xs, 1.0) - pe * xs
        };
        let mut best = ys;
        let mut best_r = resid(ys).abs();
        for c in [ys.next_down(), ys.next_up()] {
            let r = resid(c).abs();
            if r < best_r {
                best = c;
                best_r = r;
            }
        }
        best * 2f64.powi(-(k / 2))
    }

    /// The unscaled search of safe values and the scale from the exponent field give the old answers bit for bit: at and
    /// around every power of two (where a rounded logarithm reaches the next integer), for
    /// denormals, the extremes, and random values. Except just below 2^1024, where the
    /// logarithm rounds to 1024 and `2f64.powi(-1024)` (computed as `1 / 2^1024`) was 0: the
    /// old function then ignored `x`; the new one gives the correctly rounded 2^-512.
    #[test]
    fn rsq64_fast_paths_match_the_search_scaled_by_logarithm() {
        assert_eq!(rsq64(f64::MAX), f64::from_bits((1023 - 512) << 52));
        let mut xs: Vec<f64> = Vec::new();
        for e in 0..2047u64 {
            let p = f64::from_bits(e << 52);
            xs.extend([
                p,
                p.next_down(),
                p.next_up(),
                p.next_down().next_down(),
                f64::from_bits(e << 52 | 0x000f_ffff_ffff_ffff),
            ]);
        }
        xs.extend([f64::MIN_POSITIVE, f64::MAX, 5e-324, 1e-310, 3.0, 0.1, 0.0, -0.0, -1.0, f64::INFINITY, f64::NAN]);
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            xs.push(f64::from_bits(state >> 1));
            // And values of ordinary size, where the check without scaling decides.
            xs.push(f64::from_bits((1020 + (state >> 60)) << 52 | (state >> 8) & 0x000f_ffff_ffff_ffff));
        }
        for x in xs.into_iter().filter(|x| x.log2().is_nan() || x.log2() < 1024.0) {
            let (new, old) = (rsq64(x), rsq64_by_logarithm(x));
            assert!(
                new.to_bits() == old.to_bits() || (new.is_nan() && old.is_nan()),
                "{x:e} ({:#x}): {new:e} vs {old:e}",
                x.to_bits()
            );
        }
    }
}
