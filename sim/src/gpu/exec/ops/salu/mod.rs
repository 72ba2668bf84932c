//! SOP1/SOP2/SOPK/SOPC: the scalar ALU, plus the SOPP-encoded
//! `s_set_gpr_idx_off`/`s_set_gpr_idx_mode` (VGPR indexing state lives with
//! the other `s_set_gpr_idx_*` ops here).
//!
//! Semantics follow the pseudo-code of AMD's "AMD Instinct MI200 / MI300
//! Instruction Set Architecture" references, chapter "Scalar ALU
//! Operations". Every op is one small handler over the shared operand
//! helpers below: no allocation, no per-op table lookups at run time.
//!
//! - [`alu`]: integer arithmetic and comparisons (incl. SOPK immediates);
//! - [`bits`]: logic, shifts, bit fields and bit counting;
//! - [`mov`]: moves, selects, EXEC save/write, relative SGPR moves;
//! - [`ctl`]: program-counter ops, fork/join, VGPR-indexing mode;
//! - [`hwreg`]: `s_getreg`/`s_setreg` and the hardware registers' layout.

mod alu;
mod bits;
mod ctl;
pub mod hwreg;
mod mov;

use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Operand, Ty};

/// The handler of `op`, if this module implements it.
pub fn handler(op: crate::isa::Op) -> Option<Handler> {
    alu::handler(op)
        .or_else(|| bits::handler(op))
        .or_else(|| mov::handler(op))
        .or_else(|| ctl::handler(op))
        .or_else(|| hwreg::handler(op))
}

/// Source `k` as 32 bits.
#[inline(always)]
fn src32(w: &Wave, i: &Inst, k: usize) -> Result<u32, ExecError> {
    w.read_scalar32(i.src[k], Ty::B32, i.literal)
}

/// Source `k` as 64 bits; a literal is zero-extended (b64/u64 operands).
#[inline(always)]
fn src64(w: &Wave, i: &Inst, k: usize) -> Result<u64, ExecError> {
    w.read_scalar64(i.src[k], Ty::I64, i.literal)
}

/// Source `k` as a signed 64-bit value: a 32-bit literal is sign-extended
/// (the i64 sources of `s_ashr_i64` and `s_bfe_i64`).
#[inline(always)]
fn src64_signed(w: &Wave, i: &Inst, k: usize) -> Result<i64, ExecError> {
    match i.src[k] {
        Operand::Literal => Ok(i.literal as i32 as i64),
        op => Ok(w.read_scalar64(op, Ty::I64, i.literal)? as i64),
    }
}

#[inline(always)]
fn dst32(w: &mut Wave, i: &Inst, v: u32) -> Result<(), ExecError> {
    w.write_scalar32(i.dst[0], v)
}

#[inline(always)]
fn dst64(w: &mut Wave, i: &Inst, v: u64) -> Result<(), ExecError> {
    w.write_scalar64(i.dst[0], v)
}

/// The SOPK immediate, sign-extended.
#[inline(always)]
fn simm32(i: &Inst) -> u32 {
    i.simm16() as i32 as u32
}

/// `D = f(S0, S1, SCC)`, with `f` also giving the new SCC (ops that leave SCC
/// alone return the SCC they were given).
#[inline(always)]
fn sop2(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32, bool) -> (u32, bool)) -> Result<Flow, ExecError> {
    let (a, b) = (src32(w, i, 0)?, src32(w, i, 1)?);
    let (d, scc) = f(a, b, w.scc);
    dst32(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// `D = f(S0, S1, SCC)` on 64-bit sources and destination.
#[inline(always)]
fn sop2_64(w: &mut Wave, i: &Inst, f: impl Fn(u64, u64, bool) -> (u64, bool)) -> Result<Flow, ExecError> {
    let (a, b) = (src64(w, i, 0)?, src64(w, i, 1)?);
    let (d, scc) = f(a, b, w.scc);
    dst64(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// `D = f(S0, SCC)` on 32 bits.
#[inline(always)]
fn sop1(w: &mut Wave, i: &Inst, f: impl Fn(u32, bool) -> (u32, bool)) -> Result<Flow, ExecError> {
    let (d, scc) = f(src32(w, i, 0)?, w.scc);
    dst32(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// `D = f(S0, SCC)` on 64 bits.
#[inline(always)]
fn sop1_64(w: &mut Wave, i: &Inst, f: impl Fn(u64, bool) -> (u64, bool)) -> Result<Flow, ExecError> {
    let (d, scc) = f(src64(w, i, 0)?, w.scc);
    dst64(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// A 32-bit result from a 64-bit source (bit counts and searches).
#[inline(always)]
fn sop1_64_32(w: &mut Wave, i: &Inst, f: impl Fn(u64, bool) -> (u32, bool)) -> Result<Flow, ExecError> {
    let (d, scc) = f(src64(w, i, 0)?, w.scc);
    dst32(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// `SCC = f(S0, S1)` on 32 bits.
#[inline(always)]
fn sopc(w: &mut Wave, i: &Inst, f: impl Fn(u32, u32) -> bool) -> Result<Flow, ExecError> {
    w.scc = f(src32(w, i, 0)?, src32(w, i, 1)?);
    Ok(Flow::Next)
}
