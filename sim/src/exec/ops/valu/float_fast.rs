//! Fast paths for the hottest f32 ops (`v_add_f32`, `v_mul_f32`,
//! `v_fma_f32` and its K forms): with f32 rounding to nearest even (MODE's
//! default) and no source or output modifiers, DPP or SDWA, the lane loop
//! is plain host arithmetic over the register arrays, with branch-free
//! denormal flushing when MODE asks for it. Anything else goes through the
//! general driver.

use super::float::{add32, fma32, mul32};
use super::float_io::{op32, Out};
use super::fp::{self, Env};
use crate::exec::wave::{Lanes, VSrc, Wave, LANES};
use crate::exec::{ExecError, Flow};
use crate::isa::{Ext, Inst};

/// Whether `inst` carries no modifiers that change its sources or result.
#[inline]
fn plain(inst: &Inst) -> bool {
    match inst.ext {
        Ext::None => true,
        Ext::Vop3(m) => m.abs == 0 && m.neg == 0 && m.op_sel == 0 && !m.clamp && m.omod == 0,
        _ => false,
    }
}

/// Writes `out` to `dst[0]` under EXEC.
#[inline]
fn store(w: &mut Wave, inst: &Inst, out: &Lanes) -> Result<Flow, ExecError> {
    let exec = w.exec;
    let d = w.vreg_mut(inst.dst[0], 0)?;
    if exec == u64::MAX {
        *d = *out;
    } else {
        for (l, (d, v)) in d.iter_mut().zip(out).enumerate() {
            if exec >> l & 1 != 0 {
                *d = *v;
            }
        }
    }
    Ok(Flow::Next)
}

/// A denormal becomes a signed zero (branch-free, vectorizable).
#[inline(always)]
fn flush(b: u32) -> u32 {
    if b & 0x7f80_0000 == 0 {
        b & 0x8000_0000
    } else {
        b
    }
}

/// The lane loop for a two- or three-source op under round-to-nearest,
/// monomorphised per flushing mode.
#[inline(always)]
fn lanes<const FIN: bool, const FOUT: bool>(s: [&Lanes; 3], out: &mut Lanes, f: impl Fn(u32, u32, u32) -> u32) {
    for l in 0..LANES {
        let (mut a, mut b, mut c) = (s[0][l], s[1][l], s[2][l]);
        if FIN {
            (a, b, c) = (flush(a), flush(b), flush(c));
        }
        let r = f(a, b, c);
        out[l] = if FOUT { flush(r) } else { r };
    }
}

/// Source `i` as a register array: the register itself (no copy), or
/// `buf` filled with a uniform value.
#[inline(always)]
fn source<'a>(w: &'a Wave, inst: &Inst, i: usize, buf: &'a mut Lanes) -> Result<&'a Lanes, ExecError> {
    Ok(match w.src32(inst, i)? {
        VSrc::Lanes(r) => r,
        VSrc::Uniform(v) => {
            *buf = [v; LANES];
            buf
        }
    })
}

/// Runs `f` over the lanes with MODE's f32 denormal controls.
#[inline(always)]
fn run(w: &mut Wave, inst: &Inst, n: usize, f: impl Fn(u32, u32, u32) -> u32 + Copy) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mut out = [0u32; LANES];
    {
        let (mut b0, mut b1, mut b2) = ([0u32; LANES], [0u32; LANES], [0u32; LANES]);
        let s0 = source(w, inst, 0, &mut b0)?;
        let s1 = source(w, inst, 1, &mut b1)?;
        let s2 = if n > 2 { source(w, inst, 2, &mut b2)? } else { &b2 };
        let s = [s0, s1, s2];
        match (!env.in32(), !env.out32()) {
            (false, false) => lanes::<false, false>(s, &mut out, f),
            (false, true) => lanes::<false, true>(s, &mut out, f),
            (true, false) => lanes::<true, false>(s, &mut out, f),
            (true, true) => lanes::<true, true>(s, &mut out, f),
        }
    }
    store(w, inst, &out)
}

/// Whether the fast path applies.
#[inline]
fn fast(w: &Wave, inst: &Inst) -> bool {
    Env::new(w.mode).rm32() == fp::Rm::Ne && plain(inst)
}

/// `v_add_f32` (the handler without its context, for benches).
pub fn add_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return op32(w, inst, Out::F32, |[a, b], e| add32(a, b, e));
    }
    run(w, inst, 2, |a, b, _| (f32::from_bits(a) + f32::from_bits(b)).to_bits())
}

/// `v_mul_f32`.
pub fn mul_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return op32(w, inst, Out::F32, |[a, b], e| mul32(a, b, e));
    }
    run(w, inst, 2, |a, b, _| (f32::from_bits(a) * f32::from_bits(b)).to_bits())
}

/// `v_fma_f32` (and `v_fmamk`/`v_fmaak`, whose K is one of the sources).
///
/// The product of two f32 is exact in f64, so `s = a*b + c` in f64 is
/// rounded once; rounding `s` to f32 again gives the correctly rounded
/// result unless `s` landed exactly on an f32 rounding boundary (a
/// midpoint, or anywhere in the f32 denormal range where the boundaries
/// lie elsewhere). Those rare lanes are redone with a round-to-odd sum.
pub fn fma_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return op32(w, inst, Out::F32, |[a, b, c], e| fma32(a, b, c, e));
    }
    let env = Env::new(w.mode);
    let (mut b0, mut b1, mut b2) = ([0u32; LANES], [0u32; LANES], [0u32; LANES]);
    let mut s = [source(w, inst, 0, &mut b0)?, source(w, inst, 1, &mut b1)?, source(w, inst, 2, &mut b2)?];
    let mut flushed = [[0u32; LANES]; 3];
    if !env.in32() {
        for (f, x) in flushed.iter_mut().zip(s.iter_mut()) {
            *f = x.map(flush);
            *x = f;
        }
    }
    // Simple separate loops, so that each vectorizes.
    let mut sum = [0f64; LANES];
    for (l, d) in sum.iter_mut().enumerate() {
        *d = f32::from_bits(s[0][l]) as f64 * f32::from_bits(s[1][l]) as f64 + f32::from_bits(s[2][l]) as f64;
    }
    let mut out = [0u32; LANES];
    for (o, d) in out.iter_mut().zip(&sum) {
        *o = (*d as f32).to_bits();
    }
    // Lanes to redo: the low 29 bits of the f64 mantissa are exactly an f32
    // midpoint, or the exponent is in the f32 denormal range. Both tests
    // use 32-bit halves (64-bit compares are slow without SSE4).
    let redo = |d: f64| {
        let b = d.to_bits();
        let (lo, hi) = (b as u32, (b >> 32) as u32);
        let midpoint = lo & 0x1fff_ffff == 0x1000_0000;
        let tiny = (hi >> 20 & 0x7ff).wrapping_sub(1) < 1023 - 127;
        midpoint | tiny
    };
    if sum.iter().fold(false, |any, &d| any | redo(d)) {
        for l in (0..LANES).filter(|&l| redo(sum[l])) {
            let p = f32::from_bits(s[0][l]) as f64 * f32::from_bits(s[1][l]) as f64;
            out[l] = (fp::add_odd(p, f32::from_bits(s[2][l]) as f64) as f32).to_bits();
        }
    }
    if !env.out32() {
        for x in out.iter_mut() {
            *x = flush(*x);
        }
    }
    store(w, inst, &out)
}
