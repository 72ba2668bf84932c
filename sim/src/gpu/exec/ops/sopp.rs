//! SOPP: program control — branches, barriers, waits, messages, traps.
//!
//! Memory operations complete before the next instruction in this
//! simulator, so `s_waitcnt` has nothing to wait for; scheduling hints
//! (`s_setprio`, perf levels) have no architectural effect. `s_sleep` gives the
//! host worker to other waves: it sits in spin loops that wait for them.

use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

/// `s_sendmsg` message ids (gfx9).
mod msg {
    /// Raise an interrupt; M0[23:0] carries the context (the KFD event id
    /// when a kernel signals an interrupt signal, e.g. hostcall/printf).
    pub const INTERRUPT: u8 = 1;
    /// Halt the wave (trap handler).
    pub const HALT_WAVES: u8 = 6;
}

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SNop
        | Op::SWaitcnt
        | Op::SSetprio
        | Op::SIcacheInv
        | Op::SIncperflevel
        | Op::SDecperflevel
        | Op::STtracedata
        | Op::SWakeup
        | Op::SSetkill => next,
        Op::SSleep => |_, _, _| Ok(Flow::Sleep),
        Op::SEndpgm | Op::SEndpgmSaved | Op::SEndpgmOrderedPsDone => |_, _, _| Ok(Flow::End),
        Op::SBarrier => |_, _, _| Ok(Flow::Barrier),
        Op::SBranch => |w, i, _| Ok(Flow::Jump(i.branch_target(w.pc))),
        Op::SCbranchScc0 => |w, i, _| Ok(branch_if(w, i, !w.scc)),
        Op::SCbranchScc1 => |w, i, _| Ok(branch_if(w, i, w.scc)),
        Op::SCbranchVccz => |w, i, _| Ok(branch_if(w, i, w.vcc == 0)),
        Op::SCbranchVccnz => |w, i, _| Ok(branch_if(w, i, w.vcc != 0)),
        Op::SCbranchExecz => |w, i, _| Ok(branch_if(w, i, w.exec == 0)),
        Op::SCbranchExecnz => |w, i, _| Ok(branch_if(w, i, w.exec != 0)),
        // No debugger is ever attached, so the debug-status branches fall through.
        Op::SCbranchCdbgsys | Op::SCbranchCdbguser | Op::SCbranchCdbgsysOrUser | Op::SCbranchCdbgsysAndUser => next,
        Op::SSendmsg | Op::SSendmsghalt => sendmsg,
        Op::SSethalt => |_, i, _| Ok(if i.simm16() & 1 != 0 { Flow::End } else { Flow::Next }),
        Op::STrap => |_, i, _| Err(ExecError::Trap(i.simm16() as u16 & 0xff)),
        _ => return None,
    };
    Some(h)
}

fn next(_: &mut Wave, _: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    Ok(Flow::Next)
}

fn branch_if(w: &Wave, i: &Inst, taken: bool) -> Flow {
    if taken {
        Flow::Jump(i.branch_target(w.pc))
    } else {
        Flow::Next
    }
}

fn sendmsg(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let (id, _op, _stream) = i.sendmsg().unwrap_or((0, 0, 0));
    match id {
        msg::INTERRUPT => ctx.dispatch.raise_interrupt(w.m0 & 0x00ff_ffff),
        msg::HALT_WAVES => return Ok(Flow::End),
        other => tracing::trace!("s_sendmsg {other} has no effect in the simulator"),
    }
    Ok(if i.op == Op::SSendmsghalt { Flow::End } else { Flow::Next })
}
