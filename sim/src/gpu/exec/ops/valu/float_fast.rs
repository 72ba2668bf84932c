//! Fast paths for the hottest f32 ops (`v_add_f32`, `v_mul_f32`,
//! `v_fma_f32` and its K forms): with f32 rounding to nearest even (MODE's
//! default) and no output modifiers, DPP or SDWA (abs and neg on sources are fine), the lane loop
//! is plain host arithmetic over the register arrays, with branch-free
//! denormal flushing when MODE asks for it. Anything else goes through the
//! general driver.

use super::common::{expand_mask, write_lanes, Plan};
use super::float::{add32, fma32, mul32};
use super::float_io::{op32, Out};
use super::fp::{self, Env};
use super::run::with_dst;
use crate::gpu::exec::wave::{Lanes, VSrc64, Wave, LANES};
use crate::gpu::exec::{ExecError, Flow};
use crate::isa::{Ext, Inst};

/// Whether `inst` carries no modifiers that change its result, and none on its sources but
/// VOP3's abs and neg. Those only clear or flip sign bits, and the fast paths read their
/// sources as the general driver does ([`with_dst`] through `src32_into`, modifiers
/// applied), so a fast path gives the general driver's answer for the modified bits as it
/// does for any others; `v_fma_f32 v, -v, v, v` (every f32 division) and `|x|` are common.
#[inline]
fn plain(inst: &Inst) -> bool {
    match inst.ext {
        Ext::None => true,
        Ext::Vop3(m) => m.op_sel == 0 && !m.clamp && m.omod == 0,
        _ => false,
    }
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

/// The lane loop writing straight into the destination `d` for the lanes
/// in `mask`. The third input is `s[2]`, or with `ACC` the destination's
/// old value (each lane is read before it is written). With EXEC all ones
/// the loop has no per-lane branch; otherwise the write is a blend.
#[inline(always)]
pub(super) fn lanes_into<const FIN: bool, const FOUT: bool, const ACC: bool>(
    d: &mut Lanes,
    s: [&Lanes; 3],
    mask: u64,
    f: impl Fn(u32, u32, u32) -> u32,
) {
    let one = |old: u32, l: usize| {
        let (mut a, mut b, mut c) = (s[0][l], s[1][l], if ACC { old } else { s[2][l] });
        if FIN {
            (a, b, c) = (flush(a), flush(b), flush(c));
        }
        let r = f(a, b, c);
        if FOUT {
            flush(r)
        } else {
            r
        }
    };
    if mask == u64::MAX {
        for (l, x) in d.iter_mut().enumerate() {
            *x = one(*x, l);
        }
    } else {
        let m = expand_mask(mask);
        for (l, (x, m)) in d.iter_mut().zip(&m).enumerate() {
            *x = (one(*x, l) & m) | (*x & !m);
        }
    }
}

/// [`lanes_into`] with the flushing and accumulator choices made at run
/// time (each combination is its own monomorphised loop).
#[inline(always)]
fn lanes_into_dyn(
    (fin, fout, acc): (bool, bool, bool),
    d: &mut Lanes,
    s: [&Lanes; 3],
    mask: u64,
    f: impl Fn(u32, u32, u32) -> u32,
) {
    match (fin, fout, acc) {
        (false, false, false) => lanes_into::<false, false, false>(d, s, mask, f),
        (false, true, false) => lanes_into::<false, true, false>(d, s, mask, f),
        (true, false, false) => lanes_into::<true, false, false>(d, s, mask, f),
        (true, true, false) => lanes_into::<true, true, false>(d, s, mask, f),
        (false, false, true) => lanes_into::<false, false, true>(d, s, mask, f),
        (false, true, true) => lanes_into::<false, true, true>(d, s, mask, f),
        (true, false, true) => lanes_into::<true, false, true>(d, s, mask, f),
        (true, true, true) => lanes_into::<true, true, true>(d, s, mask, f),
    }
}

/// Lanes read for a source an op does not have.
static ZERO: Lanes = [0; LANES];

/// Runs `f` on the destination `dst[0]` and the first `n` sources (the
/// others read as zeros). Register sources are borrowed from the register
/// file; only uniform values and a source that is the destination are
/// materialised (see [`with_dst`]). Only for instructions without DPP,
/// so the write mask is EXEC.
#[inline(always)]
fn with_dst3<R>(
    w: &mut Wave,
    inst: &Inst,
    n: usize,
    f: impl FnOnce(&mut Lanes, [&Lanes; 3]) -> R,
) -> Result<R, ExecError> {
    let p = Plan { mask: w.exec, dpp: None };
    match n {
        1 => with_dst::<1, _>(w, inst, &p, |d, [a]| f(d, [a, &ZERO, &ZERO])),
        2 => with_dst::<2, _>(w, inst, &p, |d, [a, b]| f(d, [a, b, &ZERO])),
        _ => with_dst::<3, _>(w, inst, &p, f),
    }
}

/// Which f32 denormals a fast-path op flushes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// As MODE says.
    Mode,
    /// Inputs and results, whatever MODE says (`v_mad`, transcendentals).
    Always,
    /// None (integer inputs).
    Never,
}

/// Runs `f` over the lanes with the given flushing. The third input is
/// source 2, or with `acc` the destination's old value (`v_fmac`,
/// `v_mac`).
#[inline(always)]
fn run_with(
    w: &mut Wave,
    inst: &Inst,
    n: usize,
    acc: bool,
    flush: Flush,
    f: impl Fn(u32, u32, u32) -> u32 + Copy,
) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let (fin, fout) = match flush {
        Flush::Mode => (!env.in32(), !env.out32()),
        Flush::Always => (true, true),
        Flush::Never => (false, false),
    };
    let mask = w.exec;
    let n = if acc { n.min(2) } else { n };
    with_dst3(w, inst, n, |d, s| lanes_into_dyn((fin, fout, acc), d, s, mask, f))?;
    Ok(Flow::Next)
}

#[inline(always)]
fn run(w: &mut Wave, inst: &Inst, n: usize, f: impl Fn(u32, u32, u32) -> u32 + Copy) -> Result<Flow, ExecError> {
    run_with(w, inst, n, false, Flush::Mode, f)
}

/// The fast path for an f32 op computed by host arithmetic `f` on its
/// (flushed) inputs, when f32 rounding is to nearest even and the
/// instruction has no modifiers; `None` otherwise (use the general
/// driver). `f` must round to nearest even itself, as host f32 arithmetic
/// and `f64 as f32` do.
#[inline(always)]
pub fn try_fast(
    w: &mut Wave,
    inst: &Inst,
    n: usize,
    acc: bool,
    flush: Flush,
    f: impl Fn(u32, u32, u32) -> u32 + Copy,
) -> Option<Result<Flow, ExecError>> {
    fast(w, inst).then(|| run_with(w, inst, n, acc, flush, f))
}

/// Whether f32 bits are a NaN.
#[inline(always)]
fn is_nan(x: u32) -> bool {
    x & 0x7fff_ffff > 0x7f80_0000
}

/// The f32 NaN-propagation rule of the host-arithmetic paths: a NaN result carries its
/// first NaN input (in the order the operation reads them), quieted; a NaN made from no NaN
/// (inf - inf, 0 * inf) is the host's default NaN. Host instructions alone leave the choice
/// among several NaN inputs to the operand order the compiler picked (which is not stable
/// across builds), and the translator ([`crate::gpu::exec::jit`]) must give the same bits.
#[inline(always)]
pub fn first_nan2(a: u32, b: u32, r: u32) -> u32 {
    if !is_nan(r) {
        r
    } else if is_nan(a) {
        a | 0x0040_0000
    } else if is_nan(b) {
        b | 0x0040_0000
    } else {
        r
    }
}

/// [`first_nan2`] for three inputs (FMA).
#[inline(always)]
pub fn first_nan3(a: u32, b: u32, c: u32, r: u32) -> u32 {
    if is_nan(r) && !is_nan(a) && !is_nan(b) && is_nan(c) {
        c | 0x0040_0000
    } else {
        first_nan2(a, b, r)
    }
}

/// [`first_nan2`]'s rule for f64: a NaN result carries the first NaN of `inputs` (in the
/// order the operation reads them), quieted.
#[inline(always)]
pub fn first_nan64(inputs: &[u64], r: u64) -> u64 {
    let nan = |x: u64| x & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000;
    if !nan(r) {
        return r;
    }
    inputs.iter().find(|x| nan(**x)).map_or(r, |x| x | 0x0008_0000_0000_0000)
}

/// Host `a * b + c` for f32 bits, fused: exact product, round-to-odd sum,
/// one rounding to f32.
#[inline(always)]
pub fn host_fma(a: u32, b: u32, c: u32) -> u32 {
    let p = f32::from_bits(a) as f64 * f32::from_bits(b) as f64;
    (fp::add_odd(p, f32::from_bits(c) as f64) as f32).to_bits()
}

/// Host unfused `a * b + c`: the product rounded (and flushed) first.
#[inline(always)]
pub fn host_mad(a: u32, b: u32, c: u32) -> u32 {
    let p = flush((f32::from_bits(a) * f32::from_bits(b)).to_bits());
    (f32::from_bits(p) + f32::from_bits(c)).to_bits()
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
    run(w, inst, 2, |a, b, _| first_nan2(a, b, (f32::from_bits(a) + f32::from_bits(b)).to_bits()))
}

/// `v_mul_f32`.
pub fn mul_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return op32(w, inst, Out::F32, |[a, b], e| mul32(a, b, e));
    }
    run(w, inst, 2, |a, b, _| first_nan2(a, b, (f32::from_bits(a) * f32::from_bits(b)).to_bits()))
}

/// `v_fma_f32` (and `v_fmamk`/`v_fmaak`, whose K is one of the sources).
pub fn fma_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return op32(w, inst, Out::F32, |[a, b, c], e| fma32(a, b, c, e));
    }
    fma_lanes(w, inst, false)
}

/// `v_fmac_f32`: `d = a * b + d`.
pub fn fmac_f32(w: &mut Wave, inst: &Inst) -> Result<Flow, ExecError> {
    if !fast(w, inst) {
        return super::float_io::op32_acc(w, inst, Out::F32, |[a, b, c], e| fma32(a, b, c, e));
    }
    fma_lanes(w, inst, true)
}

/// `v_fma_f32`/`v_fmac_f32` under round-to-nearest: the host's fused
/// multiply-add when the CPU has one ([`super::fma_hw`]), else the exact
/// portable lanes ([`fma_core`]).
fn fma_lanes(w: &mut Wave, inst: &Inst, acc: bool) -> Result<Flow, ExecError> {
    let env = Env::new(w.mode);
    let flags = (!env.in32(), !env.out32(), acc);
    let mask = w.exec;
    with_dst3(w, inst, if acc { 2 } else { 3 }, |d, s| {
        if !super::fma_hw::fma_into(flags, d, s, mask) {
            let out = rne_lanes(Kind::Fma, [s[0], s[1], if acc { &*d } else { s[2] }], env);
            write_lanes(d, &out, mask);
        }
    })?;
    Ok(Flow::Next)
}

/// The ops with round-to-nearest lane loops usable by other drivers
/// (the packed-f32 ops).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Add,
    Mul,
    Fma,
}

/// `kind` over 64 lanes with f32 round-to-nearest-even, flushing per MODE.
pub fn rne_lanes(kind: Kind, s: [&Lanes; 3], env: Env) -> Lanes {
    let flushed: [Lanes; 3];
    let s = if env.in32() {
        s
    } else {
        flushed = s.map(|x| x.map(flush));
        [&flushed[0], &flushed[1], &flushed[2]]
    };
    let mut out = [0u32; LANES];
    match kind {
        Kind::Add => lanes::<false, false>(s, &mut out, |a, b, _| {
            first_nan2(a, b, (f32::from_bits(a) + f32::from_bits(b)).to_bits())
        }),
        Kind::Mul => lanes::<false, false>(s, &mut out, |a, b, _| {
            first_nan2(a, b, (f32::from_bits(a) * f32::from_bits(b)).to_bits())
        }),
        Kind::Fma => {
            if !super::fma_hw::fma_into((false, false, false), &mut out, s, u64::MAX) {
                fma_core(s, &mut out)
            }
        }
    }
    if !env.out32() {
        for x in out.iter_mut() {
            *x = flush(*x);
        }
    }
    out
}

/// The fused multiply-add lanes under round-to-nearest, in portable code.
///
/// The product of two f32 is exact in f64, so `s = a*b + c` in f64 is
/// rounded once; rounding `s` to f32 again gives the correctly rounded
/// result unless `s` landed exactly on an f32 rounding boundary (a
/// midpoint, or anywhere in the f32 denormal range where the boundaries
/// lie elsewhere). Those rare lanes are redone with a round-to-odd sum.
pub fn fma_core(s: [&Lanes; 3], out: &mut Lanes) {
    // Simple separate loops, so that each vectorizes.
    let mut sum = [0f64; LANES];
    for (l, d) in sum.iter_mut().enumerate() {
        *d = f32::from_bits(s[0][l]) as f64 * f32::from_bits(s[1][l]) as f64 + f32::from_bits(s[2][l]) as f64;
    }
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
            out[l] = host_fma(s[0][l], s[1][l], s[2][l]);
        }
    }
    if out.iter().fold(false, |any, &x| any | is_nan(x)) {
        for (l, o) in out.iter_mut().enumerate() {
            *o = first_nan3(s[0][l], s[1][l], s[2][l], *o);
        }
    }
}

/// IEEE-mode `v_max_f32`/`v_min_f32` without NaNs: order the bit patterns
/// as signed integers (which puts -0 below +0); lanes with a NaN take the
/// general rule.
#[inline(always)]
pub fn host_minmax(a: u32, b: u32, max: bool, e: Env) -> u32 {
    let nan = |x: u32| x & 0x7fff_ffff > 0x7f80_0000;
    if nan(a) | nan(b) {
        return super::float::minmax32(a, b, max, e);
    }
    let key = |x: u32| (x ^ ((x as i32 >> 31) as u32 & 0x7fff_ffff)) as i32;
    if (key(a) < key(b)) == max {
        b
    } else {
        a
    }
}

/// Whether an f64 fast path applies: f64 rounding to nearest even, f64
/// denormals kept, no modifiers.
#[inline]
fn fast64(w: &Wave, inst: &Inst) -> bool {
    // (Its sources are read raw, so no source modifier either.)
    Env::new(w.mode).host64() && plain(inst) && !matches!(inst.ext, Ext::Vop3(m) if m.abs != 0 || m.neg != 0)
}

/// An f64 op computed by host arithmetic on register pairs, when
/// [`fast64`] holds; `None` otherwise.
pub fn try_fast64(
    w: &mut Wave,
    inst: &Inst,
    n: usize,
    f: impl Fn(f64, f64, f64) -> f64,
) -> Option<Result<Flow, ExecError>> {
    fast64(w, inst).then(|| {
        let mut s = [[0f64; LANES]; 3];
        for (i, x) in s.iter_mut().enumerate().take(n) {
            match w.src64(inst, i)? {
                VSrc64::Lanes(lo, hi) => {
                    for l in 0..LANES {
                        x[l] = f64::from_bits(lo[l] as u64 | (hi[l] as u64) << 32);
                    }
                }
                VSrc64::Uniform(v) => *x = [f64::from_bits(v); LANES],
            }
        }
        let mut out = [0u64; LANES];
        for (l, o) in out.iter_mut().enumerate() {
            let inputs = [s[0][l].to_bits(), s[1][l].to_bits(), s[2][l].to_bits()];
            *o = first_nan64(&inputs[..n], f(s[0][l], s[1][l], s[2][l]).to_bits());
        }
        let exec = w.exec;
        for half in 0..2 {
            let d = w.vreg_mut(inst.dst[0], half)?;
            for (l, (d, v)) in d.iter_mut().zip(&out).enumerate() {
                if exec >> l & 1 != 0 {
                    *d = (v >> (32 * half)) as u32;
                }
            }
        }
        Ok(Flow::Next)
    })
}
