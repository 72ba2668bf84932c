//! Moves and cross-lane ops: `v_mov_b32/b64`, `v_cndmask_b32`, the
//! scalar↔lane moves (`v_readlane`, `v_writelane`, `v_readfirstlane`),
//! the AGPR moves, `v_swap_b32`, `v_nop` and `v_clrexcp`.
//!
//! `v_readlane`/`v_writelane` ignore EXEC (they name their lane);
//! `v_readfirstlane` reads the lowest active lane, lane 0 when EXEC is 0.

use super::common::{expand_mask, plan, read_lane_mask, src64_into, write64};
use super::run::{map1, map2_lane};
use crate::gpu::exec::wave::LANES;
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op, Operand, Ty};

type R = Result<Flow, ExecError>;

/// TRAPSTS.EXCP: the wave's arithmetic exception bits.
const TRAPSTS_EXCP: u32 = 0x1ff;

fn cndmask(w: &mut Wave, inst: &Inst) -> R {
    let sel = expand_mask(read_lane_mask(w, inst.src[2])?);
    map2_lane(w, inst, |l, a, b| (b & sel[l]) | (a & !sel[l]))
}

fn mov_b64(w: &mut Wave, inst: &Inst) -> R {
    let p = plan(w, inst);
    let mut v = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut v)?;
    write64(w, inst, &v, p.mask)?;
    Ok(Flow::Next)
}

/// The lane a `v_readlane`/`v_writelane` names (its low 6 bits).
fn lane_select(w: &Wave, op: Operand, literal: u32) -> Result<usize, ExecError> {
    Ok(w.read_scalar32(op, Ty::B32, literal)? as usize % LANES)
}

/// A lane of a vector source (a scalar source reads the same everywhere).
fn lane_value(w: &Wave, inst: &Inst, lane: usize) -> Result<u32, ExecError> {
    match inst.src[0] {
        op @ (Operand::Vgpr(_) | Operand::Agpr(_)) => Ok(w.vreg(op, 0)?[lane]),
        op => w.read_scalar32(op, Ty::B32, inst.literal),
    }
}

fn readlane(w: &mut Wave, inst: &Inst) -> R {
    let lane = lane_select(w, inst.src[1], inst.literal)?;
    let v = lane_value(w, inst, lane)?;
    w.write_scalar32(inst.dst[0], v)?;
    Ok(Flow::Next)
}

fn readfirstlane(w: &mut Wave, inst: &Inst) -> R {
    let lane = if w.exec == 0 { 0 } else { w.exec.trailing_zeros() as usize };
    let v = lane_value(w, inst, lane)?;
    w.write_scalar32(inst.dst[0], v)?;
    Ok(Flow::Next)
}

fn writelane(w: &mut Wave, inst: &Inst) -> R {
    let v = w.read_scalar32(inst.src[0], Ty::B32, inst.literal)?;
    let lane = lane_select(w, inst.src[1], inst.literal)?;
    w.vreg_mut(inst.dst[0], 0)?[lane] = v;
    Ok(Flow::Next)
}

fn swap(w: &mut Wave, inst: &Inst) -> R {
    let exec = w.exec;
    let a = *w.vreg(inst.dst[0], 0)?;
    let b = *w.vreg(inst.src[0], 0)?;
    let keep = |l: usize, new: u32, old: u32| if exec >> l & 1 != 0 { new } else { old };
    let d = w.vreg_mut(inst.dst[0], 0)?;
    for (l, x) in d.iter_mut().enumerate() {
        *x = keep(l, b[l], a[l]);
    }
    let s = w.vreg_mut(inst.src[0], 0)?;
    for (l, x) in s.iter_mut().enumerate() {
        *x = keep(l, a[l], b[l]);
    }
    Ok(Flow::Next)
}

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VMovB32 | Op::VAccvgprReadB32 | Op::VAccvgprWriteB32 | Op::VAccvgprMovB32 => |w, i, _| map1(w, i, |a| a),
        Op::VMovB64 => |w, i, _| mov_b64(w, i),
        Op::VCndmaskB32 => |w, i, _| cndmask(w, i),
        Op::VReadlaneB32 => |w, i, _| readlane(w, i),
        Op::VReadfirstlaneB32 => |w, i, _| readfirstlane(w, i),
        Op::VWritelaneB32 => |w, i, _| writelane(w, i),
        Op::VSwapB32 => |w, i, _| swap(w, i),
        Op::VNop => |_, _, _| Ok(Flow::Next),
        Op::VClrexcp => |w, _, _| {
            w.trapsts &= !TRAPSTS_EXCP;
            Ok(Flow::Next)
        },
        _ => return None,
    };
    Some(h)
}
