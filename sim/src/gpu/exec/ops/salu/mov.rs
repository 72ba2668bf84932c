//! Scalar moves: plain, conditional (SCC), EXEC save-and-modify, and the
//! M0-relative moves.
//!
//! `s_<op>_saveexec_b64` writes the old EXEC to D, then EXEC = op(S0, EXEC);
//! `s_<op>_wrexec_b64` writes the new EXEC to D. Both set SCC = (EXEC != 0).
//! S0 is read before anything is written (D may name S0).

use super::{dst32, dst64, src32, src64};
use crate::gpu::exec::wave::SGPRS;
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op, Operand, Ty};

pub(super) fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SMovB32 => |w, i, _| {
            let v = src32(w, i, 0)?;
            dst32(w, i, v)?;
            Ok(Flow::Next)
        },
        Op::SMovB64 => |w, i, _| {
            let v = src64(w, i, 0)?;
            dst64(w, i, v)?;
            Ok(Flow::Next)
        },
        Op::SCmovB32 => |w, i, _| {
            let v = src32(w, i, 0)?;
            if w.scc {
                dst32(w, i, v)?;
            }
            Ok(Flow::Next)
        },
        Op::SCmovB64 => |w, i, _| {
            let v = src64(w, i, 0)?;
            if w.scc {
                dst64(w, i, v)?;
            }
            Ok(Flow::Next)
        },
        Op::SCselectB32 => |w, i, _| {
            let v = if w.scc { src32(w, i, 0)? } else { src32(w, i, 1)? };
            dst32(w, i, v)?;
            Ok(Flow::Next)
        },
        Op::SCselectB64 => |w, i, _| {
            let v = if w.scc { src64(w, i, 0)? } else { src64(w, i, 1)? };
            dst64(w, i, v)?;
            Ok(Flow::Next)
        },

        Op::SAndSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| s & e),
        Op::SOrSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| s | e),
        Op::SXorSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| s ^ e),
        Op::SAndn2SaveexecB64 => |w, i, _| saveexec(w, i, |s, e| s & !e),
        Op::SOrn2SaveexecB64 => |w, i, _| saveexec(w, i, |s, e| s | !e),
        Op::SNandSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| !(s & e)),
        Op::SNorSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| !(s | e)),
        Op::SXnorSaveexecB64 => |w, i, _| saveexec(w, i, |s, e| !(s ^ e)),
        Op::SAndn1SaveexecB64 => |w, i, _| saveexec(w, i, |s, e| !s & e),
        Op::SOrn1SaveexecB64 => |w, i, _| saveexec(w, i, |s, e| !s | e),
        Op::SAndn1WrexecB64 => |w, i, _| wrexec(w, i, |s, e| !s & e),
        Op::SAndn2WrexecB64 => |w, i, _| wrexec(w, i, |s, e| s & !e),

        Op::SMovrelsB32 => |w, i, _| {
            let from = relative(i.src[0], w.m0, 1)?;
            let v = w.read_scalar32(from, Ty::B32, i.literal)?;
            dst32(w, i, v)?;
            Ok(Flow::Next)
        },
        Op::SMovrelsB64 => |w, i, _| {
            let from = relative(i.src[0], w.m0, 2)?;
            let v = w.read_scalar64(from, Ty::I64, i.literal)?;
            dst64(w, i, v)?;
            Ok(Flow::Next)
        },
        Op::SMovreldB32 => |w, i, _| {
            let v = src32(w, i, 0)?;
            let to = relative(i.dst[0], w.m0, 1)?;
            w.write_scalar32(to, v)?;
            Ok(Flow::Next)
        },
        Op::SMovreldB64 => |w, i, _| {
            let v = src64(w, i, 0)?;
            let to = relative(i.dst[0], w.m0, 2)?;
            w.write_scalar64(to, v)?;
            Ok(Flow::Next)
        },
        _ => return None,
    };
    Some(h)
}

#[inline(always)]
fn saveexec(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> u64) -> Result<Flow, ExecError> {
    let s = src64(w, i, 0)?;
    let old = w.exec;
    dst64(w, i, old)?;
    w.exec = f(s, old);
    w.scc = w.exec != 0;
    Ok(Flow::Next)
}

#[inline(always)]
fn wrexec(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64) -> u64) -> Result<Flow, ExecError> {
    let s = src64(w, i, 0)?;
    w.exec = f(s, w.exec);
    w.scc = w.exec != 0;
    let e = w.exec;
    dst64(w, i, e)?;
    Ok(Flow::Next)
}

/// The register `regs` registers wide at `op` + M0 (`s_movrel*`): SGPRs
/// stay within s0..s101 and TTMPs within ttmp0..ttmp15; anything else is
/// only reachable with M0 = 0.
pub(super) fn relative(op: Operand, m0: u32, regs: u64) -> Result<Operand, ExecError> {
    let within = |n: u8, limit: usize| {
        let k = n as u64 + m0 as u64;
        (k + regs <= limit as u64).then_some(k as u8).ok_or(ExecError::Register(op))
    };
    match op {
        Operand::Sgpr(n) => within(n, SGPRS).map(Operand::Sgpr),
        Operand::Ttmp(n) => within(n, 16).map(Operand::Ttmp),
        _ if m0 == 0 => Ok(op),
        _ => Err(ExecError::Register(op)),
    }
}
