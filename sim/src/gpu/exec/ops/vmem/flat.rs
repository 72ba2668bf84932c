//! FLAT, GLOBAL and SCRATCH instructions.
//!
//! - FLAT: a 64-bit address per lane; the shared and private apertures
//!   reach LDS and the lane's private memory, everything else is global.
//! - GLOBAL: a 64-bit VGPR address, or an SGPR-pair base plus a 32-bit
//!   VGPR offset; plus the signed instruction offset.
//! - SCRATCH: an offset into each lane's private memory from an SGPR and/or
//!   a VGPR plus the instruction offset. Private memory is per lane in this
//!   simulator, so the hardware's per-lane swizzle (and FLAT_SCRATCH, the
//!   wave's base) have no counterpart.
//!
//! Cache-policy bits (glc/slc/scc, gfx942 sc0/sc1/nt) change nothing but
//! whether an atomic returns data: all memory is coherent here.

use super::access::{self, Access, Data, Space};
use super::Kind;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::{Encoding, Ext, Inst, Op, OpClass, Target, Ty};

pub fn handler(op: Op) -> Option<Handler> {
    matches!(op.info().class, OpClass::Flat | OpClass::Global | OpClass::Scratch).then_some(exec as Handler)
}

/// The lane addresses of a FLAT/GLOBAL/SCRATCH instruction.
pub fn addresses(w: &Wave, inst: &Inst) -> Result<Access, ExecError> {
    let mut acc = Access::new(Space::Global);
    addresses_into(w, inst, &mut acc)?;
    Ok(acc)
}

/// [`addresses`] written into `acc` (its space and addresses), so the
/// 512-byte address array is not moved on every instruction.
#[inline]
fn addresses_into(w: &Wave, inst: &Inst, acc: &mut Access) -> Result<(), ExecError> {
    let Ext::Flat(f) = inst.ext else { return Err(ExecError::Invalid(format!("{} without FLAT fields", inst.op))) };
    let offset = f.offset as i64 as u64;
    let vaddr = inst.src[0];
    let saddr = inst.src[2];
    acc.avail = None;
    match inst.enc {
        Encoding::Scratch => {
            acc.space = Space::Private;
            let s = if saddr.is_none() { 0 } else { w.read_scalar32(saddr, Ty::B32, 0)? };
            let base = s.wrapping_add(offset as u32);
            if vaddr.is_none() {
                acc.addr = [base as u64; LANES];
            } else {
                let v = w.vreg(vaddr, 0)?;
                for (a, v) in acc.addr.iter_mut().zip(v) {
                    *a = base.wrapping_add(*v) as u64;
                }
            }
        }
        Encoding::Global if !saddr.is_none() => {
            acc.space = Space::Global;
            let base = w.read_scalar64(saddr, Ty::I64, 0)?.wrapping_add(offset);
            let v = w.vreg(vaddr, 0)?;
            for (a, v) in acc.addr.iter_mut().zip(v) {
                *a = base.wrapping_add(*v as u64);
            }
        }
        _ => {
            acc.space = if inst.enc == Encoding::Flat { Space::Flat } else { Space::Global };
            let (lo, hi) = (w.vreg(vaddr, 0)?, w.vreg(vaddr, 1)?);
            for (a, (lo, hi)) in acc.addr.iter_mut().zip(lo.iter().zip(hi)) {
                *a = (*lo as u64 | (*hi as u64) << 32).wrapping_add(offset);
            }
        }
    }
    Ok(())
}

fn exec(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let Some(kind) = super::kind(inst.op) else { return Err(ExecError::Unimplemented(inst.op)) };
    let mut acc = Access::new(Space::Global);
    addresses_into(w, inst, &mut acc)?;
    run(w, inst, ctx, kind, &acc)?;
    Ok(Flow::Next)
}

/// Runs a load, store or atomic of `kind` over the addresses in `acc`
/// (shared with MUBUF, whose addressing differs).
pub fn run(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>, kind: Kind, acc: &Access) -> Result<(), ExecError> {
    let exec = w.exec;
    match kind {
        Kind::Load(ld) if ld.bytes >= 4 => {
            // Fast path: straight from memory into the destination registers.
            if let Some(span) = acc.span(ctx, exec, ld.bytes as u64) {
                let regs = ld.regs();
                let mut d = 0;
                // Whole 64-bit halves in one access each (single-copy atomic when aligned).
                while d + 1 < regs {
                    let (mut lo, mut hi) = ([0; LANES], [0; LANES]);
                    span.gather_u64(&acc.addr, exec, 4 * d as u64, &mut lo, &mut hi);
                    access::merge_lanes(w.vreg_mut(inst.dst[0], d)?, &lo, exec);
                    access::merge_lanes(w.vreg_mut(inst.dst[0], d + 1)?, &hi, exec);
                    d += 2;
                }
                if d < regs {
                    span.gather_u32(&acc.addr, exec, 4 * d as u64, w.vreg_mut(inst.dst[0], d)?);
                }
                return Ok(());
            }
            let mut data: Data = [[0; LANES]; 4];
            access::load(ctx, acc, exec, ld.bytes as u64, &mut data)?;
            access::scatter(w, inst.dst[0], ld.regs(), exec, &data)?;
        }
        Kind::Load(ld) => {
            let mut data: Data = [[0; LANES]; 4];
            access::load(ctx, acc, exec, ld.bytes as u64, &mut data)?;
            if ld.bytes < 4 && ld.half != access::Half::Full && ctx.dispatch.d16_preserves_unused {
                let old = *w.vreg(inst.dst[0], 0)?;
                ld.merge(&mut data, &old, exec);
            } else {
                ld.merge(&mut data, &[0; LANES], exec);
            }
            access::scatter(w, inst.dst[0], ld.regs(), exec, &data)?;
        }
        Kind::LoadLds(ld) => {
            let mut data: Data = [[0; LANES]; 4];
            access::load(ctx, acc, exec, ld.bytes as u64, &mut data)?;
            ld.merge(&mut data, &[0; LANES], exec);
            let base = lds_base(w.m0, inst, ctx.dispatch.target).wrapping_add(inst_offset(inst));
            // One dword per lane; gfx950's `_dwordx3/x4` forms take 16 bytes per lane
            // (CDNA4 guide 9.1.9 and 10.3: "TIDinWave * 16"), and x3 "writes 3 dwords and
            // skips the 4th", which keeps its old value.
            let dwords = (ld.bytes as u32).div_ceil(4);
            let stride = if dwords > 1 { 16 } else { 4 };
            access::for_lanes(exec, |l| {
                for (d, reg) in data.iter().enumerate().take(dwords as usize) {
                    let at = base.wrapping_add(stride * l as u32 + 4 * d as u32);
                    access::lds_write(ctx.lds, at, &reg[l].to_le_bytes())
                }
            });
        }
        Kind::Store(st) if st.bytes >= 4 => {
            if let Some(span) = acc.span_mut(ctx, exec, st.bytes as u64) {
                let regs = st.regs();
                let mut d = 0;
                while d + 1 < regs {
                    span.scatter_u64(
                        &acc.addr,
                        exec,
                        4 * d as u64,
                        w.vreg(inst.src[1], d)?,
                        w.vreg(inst.src[1], d + 1)?,
                    );
                    d += 2;
                }
                if d < regs {
                    span.scatter_u32(&acc.addr, exec, 4 * d as u64, w.vreg(inst.src[1], d)?);
                }
                return Ok(());
            }
            let data = access::gather(w, inst.src[1], st.regs())?;
            access::store(ctx, acc, exec, st.bytes as u64, &data)?;
        }
        Kind::Store(st) => {
            let mut data = access::gather(w, inst.src[1], st.regs())?;
            st.prepare(&mut data);
            access::store(ctx, acc, exec, st.bytes as u64, &data)?;
        }
        Kind::Atomic { rmw, wide } => {
            let regs = if wide { 2 } else { 1 } * if rmw == super::atomic::Rmw::CmpSwap { 2 } else { 1 };
            let src = access::gather(w, inst.src[1], regs)?;
            let mut data: Data = [[0; LANES]; 4];
            if wide {
                data = src;
            } else {
                data[0] = src[0];
                data[1] = src[1];
            }
            let mut old: Data = [[0; LANES]; 4];
            access::atomic(ctx, acc, exec, rmw, wide, &data, &mut old)?;
            if !inst.dst[0].is_none() {
                access::scatter(w, inst.dst[0], if wide { 2 } else { 1 }, exec, &old)?;
            }
        }
        Kind::Cache => {}
        Kind::LoadFormat { .. } | Kind::StoreFormat { .. } => return Err(ExecError::Unimplemented(inst.op)),
    }
    Ok(())
}

/// The LDS byte address M0 gives a load to LDS. gfx950's LDS is 160 KiB, so M0 gives 18 bits
/// there: MUBUF "LDS_offset = 18-bit unsigned byte offset from M0[17:0]" (CDNA4 guide 9.1.9),
/// FLAT-encoded (global, scratch) "LDSoffset(M0[17:2] * 4)" (10.3). The older targets, with
/// 64 KiB of LDS, take M0[15:0].
fn lds_base(m0: u32, inst: &Inst, target: Target) -> u32 {
    match (target, inst.ext) {
        (Target::Gfx950, Ext::Buf(_)) => m0 & 0x3_ffff,
        (Target::Gfx950, _) => m0 & 0x3_fffc,
        _ => m0 & 0xffff,
    }
}

/// The instruction offset of a FLAT or MUBUF instruction (for LDS addresses).
fn inst_offset(inst: &Inst) -> u32 {
    match inst.ext {
        Ext::Flat(f) => f.offset as i32 as u32,
        Ext::Buf(b) => b.offset as u32,
        _ => 0,
    }
}
