//! Scalar program control beyond SOPP: PC moves and calls, the branch-stack
//! fork/join, and the VGPR-indexing / VSKIP state in MODE and M0.
//!
//! Fork/join keep the control stack pointer (CSP) in MODE[31:29]; entry k
//! is the SGPR quad s[4k:4k+3] holding the pending lane mask (low 64 bits)
//! and the pending PC (high 64 bits).

use super::hwreg::{gpr_idx, mode};
use super::{dst64, src32, src64};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Op, Operand, Ty};

pub(super) fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SGetpcB64 => |w, i, _| {
            dst64(w, i, w.pc.wrapping_add(i.len as u64))?;
            Ok(Flow::Next)
        },
        Op::SSetpcB64 | Op::SRfeB64 | Op::SRfeRestoreB64 => |w, i, _| Ok(Flow::Jump(src64(w, i, 0)?)),
        Op::SSwappcB64 => |w, i, _| {
            let target = src64(w, i, 0)?;
            dst64(w, i, w.pc.wrapping_add(i.len as u64))?;
            Ok(Flow::Jump(target))
        },
        Op::SCallB64 => |w, i, _| {
            dst64(w, i, w.pc.wrapping_add(i.len as u64))?;
            Ok(Flow::Jump(i.branch_target(w.pc)))
        },
        Op::SCbranchGFork => |w, i, _| {
            let (mask, target) = (src64(w, i, 0)?, src64(w, i, 1)?);
            fork(w, mask, target, w.pc.wrapping_add(i.len as u64))
        },
        Op::SCbranchIFork => |w, i, _| {
            let mask = src64(w, i, 0)?;
            fork(w, mask, i.branch_target(w.pc), w.pc.wrapping_add(i.len as u64))
        },
        Op::SCbranchJoin => |w, i, _| join(w, src32(w, i, 0)?),

        Op::SSetGprIdxOn => |w, i, _| {
            let index = src32(w, i, 0)?;
            let modes = match i.ext {
                Ext::Imm(0xff) => i.literal,
                Ext::Imm(m) => m as u32,
                _ => 0,
            };
            w.m0 = (w.m0 & !(gpr_idx::INDEX | gpr_idx::MODES)) | (index & gpr_idx::INDEX) | set_modes(modes);
            w.mode |= mode::GPR_IDX_EN;
            Ok(Flow::Next)
        },
        Op::SSetGprIdxOff => |w, _, _| {
            w.mode &= !mode::GPR_IDX_EN;
            Ok(Flow::Next)
        },
        Op::SSetGprIdxIdx => |w, i, _| {
            let index = src32(w, i, 0)?;
            w.m0 = (w.m0 & !gpr_idx::INDEX) | (index & gpr_idx::INDEX);
            Ok(Flow::Next)
        },
        Op::SSetGprIdxMode => |w, i, _| {
            w.m0 = (w.m0 & !gpr_idx::MODES) | set_modes(i.simm16() as u32);
            Ok(Flow::Next)
        },
        Op::SSetvskip => |w, i, _| {
            let (v, bit) = (src32(w, i, 0)?, src32(w, i, 1)? & 31);
            w.mode = if v >> bit & 1 != 0 { w.mode | mode::VSKIP } else { w.mode & !mode::VSKIP };
            Ok(Flow::Next)
        },
        _ => return None,
    };
    Some(h)
}

/// The 4 operand-select bits of a gpr_idx mode in their M0 place.
fn set_modes(modes: u32) -> u32 {
    (modes & 0xf) << gpr_idx::MODES_SHIFT
}

fn csp(w: &Wave) -> u32 {
    (w.mode & mode::CSP) >> mode::CSP_SHIFT
}

fn set_csp(w: &mut Wave, v: u32) {
    w.mode = (w.mode & !mode::CSP) | (v << mode::CSP_SHIFT) & mode::CSP;
}

/// Runs the lanes of `mask` at `target` and the others at `next`: all
/// lanes one way is a plain branch; otherwise the larger half runs first
/// and the other (lanes, PC) is pushed on the stack.
fn fork(w: &mut Wave, mask: u64, target: u64, next: u64) -> Result<Flow, ExecError> {
    let pass = mask & w.exec;
    let fail = !mask & w.exec;
    if pass == w.exec {
        return Ok(Flow::Jump(target));
    }
    if fail == w.exec {
        return Ok(Flow::Next);
    }
    let sp = csp(w);
    let (exec, pending_mask, pending_pc, flow) = if fail.count_ones() < pass.count_ones() {
        (fail, pass, target, Flow::Next)
    } else {
        (pass, fail, next, Flow::Jump(target))
    };
    let entry = Operand::Sgpr((4 * sp) as u8);
    w.write_sgprs(
        entry,
        &[pending_mask as u32, (pending_mask >> 32) as u32, pending_pc as u32, (pending_pc >> 32) as u32],
    )?;
    w.exec = exec;
    set_csp(w, sp + 1);
    Ok(flow)
}

/// Ends a fork's branch: at the saved stack depth, falls through; else pops
/// the pending (lanes, PC).
fn join(w: &mut Wave, saved: u32) -> Result<Flow, ExecError> {
    let sp = csp(w);
    if sp == saved {
        return Ok(Flow::Next);
    }
    let sp = sp.wrapping_sub(1) & 7;
    let entry = Operand::Sgpr((4 * sp) as u8);
    let mask = w.read_scalar64(entry, Ty::I64, 0)?;
    let pc = w.read_scalar64(Operand::Sgpr((4 * sp + 2) as u8), Ty::I64, 0)?;
    w.exec = mask;
    set_csp(w, sp);
    Ok(Flow::Jump(pc))
}
