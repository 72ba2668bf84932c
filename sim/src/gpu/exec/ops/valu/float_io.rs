//! Lane loops for the float ops: read the sources (with the encoding's
//! modifiers, through [`common`]), run a per-lane function, apply the
//! output modifiers (omod, clamp) and write the destination under EXEC.
//!
//! Each driver is generic over the per-lane function, so an op's handler is
//! one closure and the loop is monomorphised and inlined for it.

use super::common::{src32, src64, write32, write64, write_mask};
use super::fp::{self, Env};
use crate::gpu::exec::wave::{Lanes, Wave, LANES};
use crate::gpu::exec::{ExecError, Flow};
use crate::isa::{Ext, Inst};

/// The output modifiers of an instruction: omod (0 none, 1 ×2, 2 ×4,
/// 3 ÷2) and clamp.
#[inline]
pub fn out_mods(inst: &Inst) -> (u8, bool) {
    match inst.ext {
        Ext::Vop3(m) => (m.omod, m.clamp),
        Ext::Sdwa(s) => (s.omod, s.clamp),
        _ => (0, false),
    }
}

/// The omod scale factor.
fn omod_scale(omod: u8) -> f64 {
    match omod {
        1 => 2.0,
        2 => 4.0,
        3 => 0.5,
        _ => 1.0,
    }
}

/// Clamp to [0, 1]; NaN becomes 0.
#[inline]
fn clamp01(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Applies omod and clamp to f32 results.
pub fn post32(inst: &Inst, env: Env, out: &mut Lanes) {
    let (omod, clamp) = out_mods(inst);
    if omod == 0 && !clamp {
        return;
    }
    let k = omod_scale(omod);
    for x in out.iter_mut() {
        let mut v = f32::from_bits(*x) as f64 * k;
        if clamp {
            v = clamp01(v);
        }
        *x = fp::out32(v, env);
    }
}

/// Applies omod and clamp to f16 results in the low half (the high half
/// is kept).
pub fn post16(inst: &Inst, env: Env, out: &mut Lanes) {
    let (omod, clamp) = out_mods(inst);
    if omod == 0 && !clamp {
        return;
    }
    let k = omod_scale(omod);
    for x in out.iter_mut() {
        let mut v = fp::f16_to_f64(*x as u16) * k;
        if clamp {
            v = clamp01(v);
        }
        *x = (*x & 0xffff_0000) | fp::out16(v, env);
    }
}

/// Applies omod and clamp to f64 results.
pub fn post64(inst: &Inst, env: Env, out: &mut [u64; LANES]) {
    let (omod, clamp) = out_mods(inst);
    if omod == 0 && !clamp {
        return;
    }
    let k = omod_scale(omod);
    for x in out.iter_mut() {
        let mut v = f64::from_bits(*x) * k;
        if clamp {
            v = clamp01(v);
        }
        *x = fp::F64.flush(v.to_bits(), env.out64());
    }
}

/// The `N` 32-bit (or 16-bit) sources, with modifiers applied.
#[inline]
fn srcs<const N: usize>(w: &Wave, inst: &Inst) -> Result<[Lanes; N], ExecError> {
    let mut s = [[0u32; LANES]; N];
    for (i, x) in s.iter_mut().enumerate() {
        *x = src32(w, inst, i)?;
    }
    Ok(s)
}

/// Result kinds for [`op32`]: which output modifiers apply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// An f32 result (omod/clamp as f32).
    F32,
    /// An f16 result in the low half, high half zero.
    F16,
    /// An integer or bit-pattern result: no output modifiers.
    Bits,
}

/// An op with `N` 32-bit sources and a 32-bit result.
#[inline]
pub fn op32<const N: usize>(
    w: &mut Wave,
    inst: &Inst,
    out_kind: Out,
    f: impl Fn([u32; N], Env) -> u32,
) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let s = srcs::<N>(w, inst)?;
    let mut out = [0u32; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(std::array::from_fn(|i| s[i][l]), env);
    }
    match out_kind {
        Out::F32 => post32(inst, env, &mut out),
        Out::F16 => post16(inst, env, &mut out),
        Out::Bits => {}
    }
    write32(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// `v_mac`/`v_fmac` style: the destination's old value is a third input.
#[inline]
pub fn op32_acc(w: &mut Wave, inst: &Inst, out_kind: Out, f: impl Fn([u32; 3], Env) -> u32) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let s = srcs::<2>(w, inst)?;
    let d = *w.vreg(inst.dst[0], 0)?;
    let mut out = [0u32; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f([s[0][l], s[1][l], d[l]], env);
    }
    match out_kind {
        Out::F32 => post32(inst, env, &mut out),
        Out::F16 => post16(inst, env, &mut out),
        Out::Bits => {}
    }
    write32(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// Writes 16-bit results to one half of `dst[0]`, keeping the other: the
/// high half when VOP3 `op_sel[3]` is set (ops whose 16-bit result has a
/// selectable half: `v_mad_f16`, `v_fma_f16`, `v_div_fixup_f16`, f16
/// min3/max3/med3).
pub fn write_16(w: &mut Wave, inst: &Inst, values: &Lanes, mask: u64) -> Result<(), ExecError> {
    let hi = matches!(inst.ext, Ext::Vop3(v) if v.op_sel & 8 != 0);
    let reg = w.vreg_mut(inst.dst[0], 0)?;
    for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
        if mask >> l & 1 != 0 {
            *d = if hi { (*d & 0xffff) | (v & 0xffff) << 16 } else { (*d & 0xffff_0000) | (v & 0xffff) };
        }
    }
    Ok(())
}

/// A 16-bit op whose result goes to a selectable half (see [`write_16`]).
#[inline]
pub fn op16_half<const N: usize>(
    w: &mut Wave,
    inst: &Inst,
    f: impl Fn([u32; N], Env) -> u32,
) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let s = srcs::<N>(w, inst)?;
    let mut out = [0u32; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(std::array::from_fn(|i| s[i][l]), env);
    }
    post16(inst, env, &mut out);
    write_16(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// An op with `N` 64-bit sources and a 64-bit result.
#[inline]
pub fn op64<const N: usize>(
    w: &mut Wave,
    inst: &Inst,
    float_out: bool,
    f: impl Fn([u64; N], Env) -> u64,
) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let mut s = [[0u64; LANES]; N];
    for (i, x) in s.iter_mut().enumerate() {
        *x = src64(w, inst, i)?;
    }
    let mut out = [0u64; LANES];
    for (l, o) in out.iter_mut().enumerate().filter(|(l, _)| mask >> l & 1 != 0) {
        *o = f(std::array::from_fn(|i| s[i][l]), env);
    }
    if float_out {
        post64(inst, env, &mut out);
    }
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// A one-source 64-bit float op computed for all lanes at once by `f(sources, env, mask,
/// out)` (for ops whose lanes the host can overlap or vectorise), as [`op64`] otherwise.
/// Only the lanes of `mask` are written: `f` may leave the others out.
#[inline]
pub fn op64_wave(
    w: &mut Wave,
    inst: &Inst,
    f: impl Fn(&[u64; LANES], Env, u64, &mut [u64; LANES]),
) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let a = src64(w, inst, 0)?;
    let mut out = [0u64; LANES];
    f(&a, env, mask, &mut out);
    post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// A 64-bit source 0 and a 32-bit source 1 (`v_ldexp_f64`,
/// `v_trig_preop_f64`), 64-bit result.
#[inline]
pub fn op64_32(w: &mut Wave, inst: &Inst, f: impl Fn(u64, u32, Env) -> u64) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let a = src64(w, inst, 0)?;
    let b = src32(w, inst, 1)?;
    let mut out = [0u64; LANES];
    for (l, o) in out.iter_mut().enumerate().filter(|(l, _)| mask >> l & 1 != 0) {
        *o = f(a[l], b[l], env);
    }
    post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// A 64-bit source and a 32-bit result (f64 → f32/int conversions,
/// `v_frexp_exp_i32_f64`).
#[inline]
pub fn op64_to32(w: &mut Wave, inst: &Inst, out_kind: Out, f: impl Fn(u64, Env) -> u32) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let a = src64(w, inst, 0)?;
    let mut out = [0u32; LANES];
    for (l, o) in out.iter_mut().enumerate().filter(|(l, _)| mask >> l & 1 != 0) {
        *o = f(a[l], env);
    }
    if out_kind == Out::F32 {
        post32(inst, env, &mut out);
    }
    write32(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

/// A 32-bit source and a 64-bit result (conversions to f64).
#[inline]
pub fn op32_to64(w: &mut Wave, inst: &Inst, f: impl Fn(u32, Env) -> u64) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let mask = write_mask(w, inst);
    let a = src32(w, inst, 0)?;
    let mut out = [0u64; LANES];
    for (l, o) in out.iter_mut().enumerate().filter(|(l, _)| mask >> l & 1 != 0) {
        *o = f(a[l], env);
    }
    post64(inst, env, &mut out);
    write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}
