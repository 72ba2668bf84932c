//! `ds_gws_*`: global wave sync. The resource is `offset0 + M0[21:16]` (6 bits); the
//! value operand is taken from the first active lane. A wave that must wait (a semaphore
//! at zero, a barrier not yet complete) yields its turn and retries the same
//! instruction, so the other waves of its workgroup and of other workgroups run; as on
//! hardware, every wave a barrier waits for must be able to run at the same time (with
//! fewer workers than workgroups in the barrier it never completes).

use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Inst, Op};

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    Some(match op {
        Op::DsGwsInit => init,
        Op::DsGwsSemaV => sema_v,
        Op::DsGwsSemaBr => sema_br,
        Op::DsGwsSemaP => sema_p,
        Op::DsGwsBarrier => barrier,
        Op::DsGwsSemaReleaseAll => release_all,
        _ => return None,
    })
}

fn resource_id(w: &Wave, inst: &Inst) -> usize {
    let offset = match inst.ext {
        Ext::Ds(d) => usize::from(d.offset0),
        _ => 0,
    };
    (offset + (w.m0 as usize >> 16)) & 0x3f
}

/// The value operand from the first active lane.
fn first_lane_value(w: &Wave, inst: &Inst) -> Result<u32, ExecError> {
    let lane = w.exec.trailing_zeros() as usize;
    Ok(w.vreg(inst.src[0], 0)?.get(lane).copied().unwrap_or(0))
}

fn table<'a>(ctx: &'a Ctx<'_>) -> &'a crate::gpu::gws::GwsTable {
    ctx.dispatch.process.gws(ctx.dispatch.gpu)
}

fn init(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    if w.exec != 0 {
        let v = first_lane_value(w, inst)?;
        table(ctx).resource(resource_id(w, inst)).init(i64::from(v));
    }
    Ok(Flow::Next)
}

fn sema_v(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    table(ctx).resource(resource_id(w, inst)).value.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    Ok(Flow::Next)
}

fn sema_br(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let v = if w.exec != 0 { first_lane_value(w, inst)? } else { 0 };
    table(ctx).resource(resource_id(w, inst)).value.fetch_add(i64::from(v), std::sync::atomic::Ordering::AcqRel);
    Ok(Flow::Next)
}

fn sema_p(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    Ok(if table(ctx).resource(resource_id(w, inst)).try_acquire() { Flow::Next } else { Flow::Yield })
}

fn barrier(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let id = resource_id(w, inst);
    let r = table(ctx).resource(id);
    if let Some((waiting_id, generation)) = w.gws_wait {
        if waiting_id as usize == id {
            if r.generation.load(std::sync::atomic::Ordering::Acquire) != generation {
                w.gws_wait = None;
                return Ok(Flow::Next);
            }
            return Ok(Flow::Yield);
        }
    }
    match r.arrive() {
        Ok(()) => Ok(Flow::Next),
        Err(generation) => {
            w.gws_wait = Some((id as u8, generation));
            Ok(Flow::Yield)
        }
    }
}

fn release_all(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    table(ctx).resource(resource_id(w, inst)).release_all();
    Ok(Flow::Next)
}
