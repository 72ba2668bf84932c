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

/// Cost of the common scalar ops, handler only (decode cached), in a
/// release build: `cargo test -p sim --release --lib salu::perf -- --ignored --nocapture`.
#[cfg(test)]
mod perf {
    use crate::driver::kfd::UserptrMode;
    use crate::gpu::cp::aql::KernelDispatch;
    use crate::gpu::exec::dispatch::DispatchInfo;
    use crate::gpu::exec::kd::KernelDescriptor;
    use crate::gpu::exec::memory::{PrivateMem, WaveMem};
    use crate::gpu::exec::{Ctx, Wave};
    use crate::isa::{decode, Target};
    use crate::machine::Machine;
    use std::time::Instant;

    #[test]
    #[ignore = "timing; run in release"]
    fn common_scalar_ops_cost_tens_of_ns() {
        let machine = Machine::new(crate::config::default_config());
        let process = machine.open_process(0, UserptrMode::Direct).unwrap();
        let info = DispatchInfo {
            target: Target::Gfx90a,
            process: process.clone(),
            gpu: 0,
            packet: KernelDispatch::default(),
            packet_va: 0,
            queue_va: 0,
            dispatch_id: 0,
            kd: KernelDescriptor::parse(&[0; 64]),
            entry_pc: 0,
            grid: [64, 1, 1],
            wg_size: [64, 1, 1],
            groups: [1, 1, 1],
            lds_bytes: 0,
            private_per_lane: 0,
            vgprs: 1,
            agprs: 0,
        };
        let vm = process.vm();
        let mem = WaveMem::new(&vm);
        let mut lds = [];
        let mut private = PrivateMem::new(0);
        let mut ctx = Ctx { mem: &mem, lds: &mut lds, private: &mut private, dispatch: &info };
        let mut w = Wave::new(1, 0);
        // s_add_u32 s1, s0, 3; s_cmp_lg_u32 s1, s2; s_cbranch_scc1 -2;
        // s_and_saveexec_b64 s[4:5], s[0:1]; s_lshl_b64 s[6:7], s[0:1], 3
        for (name, words) in [
            ("s_add_u32", [0x8001_8300u32]),
            ("s_cmp_lg_u32", [0xbf07_0201]),
            ("s_cbranch_scc1", [0xbf85_fffe]),
            ("s_and_saveexec_b64", [0xbe84_2000]),
            ("s_lshl_b64", [0x8e86_8300]),
        ] {
            let inst = decode(&words, Target::Gfx90a).unwrap();
            let h = crate::gpu::exec::ops::handler(inst.op);
            let n = 10_000_000u32;
            let t = Instant::now();
            for k in 0..n {
                w.sgpr[0] = k;
                std::hint::black_box(h(&mut w, std::hint::black_box(&inst), &mut ctx).unwrap());
            }
            let ns = t.elapsed().as_nanos() as f64 / n as f64;
            // A measurement to read, never a timed assertion.
            println!("{name}: {ns:.1} ns");
        }
    }
}
