//! Fast paths for the hottest f32 ops (`v_add_f32`, `v_mul_f32`,
//! `v_fma_f32` and its K forms): with MODE at the HIP default (round to
//! nearest even, f32 denormals kept) and no source or output modifiers,
//! DPP or SDWA, the lane loop is plain host arithmetic over the register
//! arrays. Anything else goes through the general driver.

use super::float::{add32, fma32, mul32};
use super::float_io::{op32, Out};
use super::fp::{self, Env};
use crate::exec::wave::{Lanes, Wave, LANES};
use crate::exec::{Ctx, ExecError, Flow};
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

macro_rules! fast2 {
    ($name:ident, $slow:ident, $op:tt) => {
        pub fn $name(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
            if !(Env::new(w.mode).host32() && plain(inst)) {
                return op32(w, inst, Out::F32, |[a, b], e| $slow(a, b, e));
            }
            let a = w.src32(inst, 0)?.to_lanes();
            let b = w.src32(inst, 1)?.to_lanes();
            let mut out = [0u32; LANES];
            for ((o, x), y) in out.iter_mut().zip(&a).zip(&b) {
                *o = (f32::from_bits(*x) $op f32::from_bits(*y)).to_bits();
            }
            store(w, inst, &out)
        }
    };
}

fast2!(add_f32, add32, +);
fast2!(mul_f32, mul32, *);

/// `v_fma_f32` (and `v_fmamk`/`v_fmaak`, whose K is one of the sources).
pub fn fma_f32(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    if !(Env::new(w.mode).host32() && plain(inst)) {
        return op32(w, inst, Out::F32, |[a, b, c], e| fma32(a, b, c, e));
    }
    let a = w.src32(inst, 0)?.to_lanes();
    let b = w.src32(inst, 1)?.to_lanes();
    let c = w.src32(inst, 2)?.to_lanes();
    let mut out = [0u32; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        let p = f32::from_bits(a[l]) as f64 * f32::from_bits(b[l]) as f64;
        *o = (fp::add_odd(p, f32::from_bits(c[l]) as f64) as f32).to_bits();
    }
    store(w, inst, &out)
}
