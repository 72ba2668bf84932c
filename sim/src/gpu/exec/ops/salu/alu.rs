//! Scalar integer arithmetic and comparisons, including the SOPK forms
//! with a 16-bit immediate.
//!
//! SCC: carry/borrow for the unsigned add/sub, signed overflow for the
//! signed ones, "result is nonzero" for `s_abs`/`s_absdiff`. `s_min_*` sets
//! SCC when S0 < S1 and `s_max_*` when S0 >= S1 (a tie sets it, as the MI300
//! pseudo-code says), SCC choosing S0.

use super::{dst32, simm32, sop1, sop2, sopc, src32};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

pub(super) fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SAddU32 => |w, i, _| sop2(w, i, |a, b, _| a.overflowing_add(b)),
        Op::SSubU32 => |w, i, _| sop2(w, i, |a, b, _| a.overflowing_sub(b)),
        Op::SAddI32 => |w, i, _| sop2(w, i, |a, b, _| add_i32(a, b)),
        Op::SSubI32 => |w, i, _| {
            sop2(w, i, |a, b, _| {
                let (r, o) = (a as i32).overflowing_sub(b as i32);
                (r as u32, o)
            })
        },
        Op::SAddcU32 => |w, i, _| {
            sop2(w, i, |a, b, c| {
                let s = a as u64 + b as u64 + c as u64;
                (s as u32, s > u32::MAX as u64)
            })
        },
        Op::SSubbU32 => |w, i, _| {
            sop2(w, i, |a, b, c| {
                let (r, borrow) = (a as u64).overflowing_sub(b as u64 + c as u64);
                (r as u32, borrow)
            })
        },
        Op::SMinI32 => |w, i, _| sop2(w, i, |a, b, _| pick(a, b, (a as i32) < (b as i32))),
        Op::SMinU32 => |w, i, _| sop2(w, i, |a, b, _| pick(a, b, a < b)),
        Op::SMaxI32 => |w, i, _| sop2(w, i, |a, b, _| pick(a, b, (a as i32) >= (b as i32))),
        Op::SMaxU32 => |w, i, _| sop2(w, i, |a, b, _| pick(a, b, a >= b)),
        Op::SAbsdiffI32 => |w, i, _| {
            sop2(w, i, |a, b, _| {
                let r = (a as i32).wrapping_sub(b as i32).unsigned_abs();
                (r, r != 0)
            })
        },
        Op::SAbsI32 => |w, i, _| {
            sop1(w, i, |a, _| {
                let r = (a as i32).unsigned_abs();
                (r, r != 0)
            })
        },
        Op::SMulI32 => |w, i, _| sop2(w, i, |a, b, c| (a.wrapping_mul(b), c)),
        Op::SMulHiU32 => |w, i, _| sop2(w, i, |a, b, c| (((a as u64 * b as u64) >> 32) as u32, c)),
        Op::SMulHiI32 => |w, i, _| sop2(w, i, |a, b, c| (((a as i32 as i64 * b as i32 as i64) >> 32) as u32, c)),
        Op::SLshl1AddU32 => |w, i, _| sop2(w, i, |a, b, _| shl_add(a, b, 1)),
        Op::SLshl2AddU32 => |w, i, _| sop2(w, i, |a, b, _| shl_add(a, b, 2)),
        Op::SLshl3AddU32 => |w, i, _| sop2(w, i, |a, b, _| shl_add(a, b, 3)),
        Op::SLshl4AddU32 => |w, i, _| sop2(w, i, |a, b, _| shl_add(a, b, 4)),
        Op::SSextI32I8 => |w, i, _| sop1(w, i, |a, c| (a as i8 as i32 as u32, c)),
        Op::SSextI32I16 => |w, i, _| sop1(w, i, |a, c| (a as i16 as i32 as u32, c)),

        Op::SMovkI32 => |w, i, _| {
            dst32(w, i, simm32(i))?;
            Ok(Flow::Next)
        },
        Op::SCmovkI32 => |w, i, _| {
            if w.scc {
                dst32(w, i, simm32(i))?;
            }
            Ok(Flow::Next)
        },
        Op::SAddkI32 => |w, i, _| {
            sopk_rmw(w, i, |d, k| {
                let (r, o) = add_i32(d, k);
                (r, Some(o))
            })
        },
        Op::SMulkI32 => |w, i, _| sopk_rmw(w, i, |d, k| (d.wrapping_mul(k), None)),

        Op::SCmpEqI32 | Op::SCmpEqU32 => |w, i, _| sopc(w, i, |a, b| a == b),
        Op::SCmpLgI32 | Op::SCmpLgU32 => |w, i, _| sopc(w, i, |a, b| a != b),
        Op::SCmpGtI32 => |w, i, _| sopc(w, i, |a, b| (a as i32) > (b as i32)),
        Op::SCmpGeI32 => |w, i, _| sopc(w, i, |a, b| (a as i32) >= (b as i32)),
        Op::SCmpLtI32 => |w, i, _| sopc(w, i, |a, b| (a as i32) < (b as i32)),
        Op::SCmpLeI32 => |w, i, _| sopc(w, i, |a, b| (a as i32) <= (b as i32)),
        Op::SCmpGtU32 => |w, i, _| sopc(w, i, |a, b| a > b),
        Op::SCmpGeU32 => |w, i, _| sopc(w, i, |a, b| a >= b),
        Op::SCmpLtU32 => |w, i, _| sopc(w, i, |a, b| a < b),
        Op::SCmpLeU32 => |w, i, _| sopc(w, i, |a, b| a <= b),
        Op::SCmpEqU64 => |w, i, _| cmp64(w, i, |a, b| a == b),
        Op::SCmpLgU64 => |w, i, _| cmp64(w, i, |a, b| a != b),

        // SOPK compares: the immediate is sign-extended for the i32 forms and
        // zero-extended for the u32 forms.
        Op::SCmpkEqI32 => |w, i, _| cmpk_i(w, i, |a, k| a == k),
        Op::SCmpkLgI32 => |w, i, _| cmpk_i(w, i, |a, k| a != k),
        Op::SCmpkGtI32 => |w, i, _| cmpk_i(w, i, |a, k| a > k),
        Op::SCmpkGeI32 => |w, i, _| cmpk_i(w, i, |a, k| a >= k),
        Op::SCmpkLtI32 => |w, i, _| cmpk_i(w, i, |a, k| a < k),
        Op::SCmpkLeI32 => |w, i, _| cmpk_i(w, i, |a, k| a <= k),
        Op::SCmpkEqU32 => |w, i, _| cmpk_u(w, i, |a, k| a == k),
        Op::SCmpkLgU32 => |w, i, _| cmpk_u(w, i, |a, k| a != k),
        Op::SCmpkGtU32 => |w, i, _| cmpk_u(w, i, |a, k| a > k),
        Op::SCmpkGeU32 => |w, i, _| cmpk_u(w, i, |a, k| a >= k),
        Op::SCmpkLtU32 => |w, i, _| cmpk_u(w, i, |a, k| a < k),
        Op::SCmpkLeU32 => |w, i, _| cmpk_u(w, i, |a, k| a <= k),
        _ => return None,
    };
    Some(h)
}

#[inline(always)]
fn add_i32(a: u32, b: u32) -> (u32, bool) {
    let (r, o) = (a as i32).overflowing_add(b as i32);
    (r as u32, o)
}

#[inline(always)]
fn pick(a: u32, b: u32, first: bool) -> (u32, bool) {
    (if first { a } else { b }, first)
}

/// `(S0 << n) + S1`; SCC is the carry out of bit 31.
#[inline(always)]
fn shl_add(a: u32, b: u32, n: u32) -> (u32, bool) {
    let t = ((a as u64) << n) + b as u64;
    (t as u32, t > u32::MAX as u64)
}

/// `D = f(D, simm16)` (`s_addk_i32`, `s_mulk_i32`); SCC changes only when
/// `f` gives one.
#[inline(always)]
fn sopk_rmw(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> (u32, Option<bool>)) -> Result<Flow, ExecError> {
    let d = w.read_scalar32(i.dst[0], crate::isa::Ty::B32, 0)?;
    let (r, scc) = f(d, simm32(i));
    dst32(w, i, r)?;
    if let Some(scc) = scc {
        w.scc = scc;
    }
    Ok(Flow::Next)
}

#[inline(always)]
fn cmp64(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> bool) -> Result<Flow, ExecError> {
    w.scc = f(super::src64(w, i, 0)?, super::src64(w, i, 1)?);
    Ok(Flow::Next)
}

#[inline(always)]
fn cmpk_i(w: &mut Wave, i: &Inst, f: impl Fn(i32, i32) -> bool) -> Result<Flow, ExecError> {
    w.scc = f(src32(w, i, 0)? as i32, i32::from(i.simm16()));
    Ok(Flow::Next)
}

#[inline(always)]
fn cmpk_u(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool) -> Result<Flow, ExecError> {
    w.scc = f(src32(w, i, 0)?, u32::from(i.simm16() as u16));
    Ok(Flow::Next)
}
