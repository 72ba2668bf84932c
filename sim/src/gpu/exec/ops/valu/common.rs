//! Operand plumbing shared by every VALU op: sources with their encoding's
//! modifiers applied (DPP lane movement, SDWA selects, abs/neg/sext,
//! VOP3 op_sel), the lanes allowed to write, and destination writes
//! (SDWA dst_sel/dst_unused, 16-bit halves).
//!
//! Semantics follow AMD's "MI200 Instruction Set Architecture" (§6.2 SDWA,
//! §6.3 DPP, §6.4 VOP3 modifiers).
//!
//! Layers, fastest first:
//! - [`direct_src`] says which sources can be read straight from the
//!   register file (no modifier, not DPP-moved); [`super::run`] borrows
//!   those and fills the others in place with [`src32_into`], so the common
//!   case copies no 256-byte lane array;
//! - [`plan`] + [`src32_with`]/[`src64_into`] + [`write32`]/[`write64`] do
//!   the work once per instruction (the DPP plan is computed once);
//! - [`src32`]/[`src64`]/[`write_mask`] compute what they need themselves,
//!   for callers that read one source at a time.
//!
//! DPP lane movement itself is in [`super::dpp`]. Lane masks become
//! per-lane words ([`expand_mask`]) so masked writes are vector blends.

use crate::gpu::exec::wave::{Lanes, Wave, LANES};
use crate::gpu::exec::ExecError;
use crate::isa::info::mods;
use crate::isa::{Encoding, Ext, Inst, Op, Operand, Ty};

pub use super::dpp::{dpp_plan, dpp_source_lane, DppPlan};

/// Each byte value's eight bits as eight all-ones/all-zeros lane masks.
static BYTE_MASKS: [[u32; 8]; 256] = {
    let mut t = [[0u32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] = if b >> i & 1 != 0 { u32::MAX } else { 0 };
            i += 1;
        }
        b += 1;
    }
    t
};

/// A 64-bit lane mask as one all-ones/all-zeros word per lane, so lane
/// selects become vectorisable `and`/`or` blends.
#[inline(always)]
pub fn expand_mask(mask: u64) -> Lanes {
    let mut out = [0u32; LANES];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        let bits = &BYTE_MASKS[(mask >> (8 * k)) as usize & 0xff];
        for (o, b) in chunk.iter_mut().zip(bits) {
            *o = *b;
        }
    }
    out
}

/// Per-instruction facts every source read and write needs: the lanes that
/// write and, for DPP, where `src0` comes from.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub mask: u64,
    pub dpp: Option<DppPlan>,
}

/// The plan of `inst` for the wave's current EXEC.
#[inline]
pub fn plan(w: &Wave, inst: &Inst) -> Plan {
    match inst.ext {
        Ext::Dpp(d) => {
            let p = dpp_plan(&d, w.exec);
            Plan { mask: p.mask, dpp: Some(p) }
        }
        _ => Plan { mask: w.exec, dpp: None },
    }
}

/// The lanes that write the destination: EXEC, narrowed by DPP.
pub fn write_mask(w: &Wave, inst: &Inst) -> u64 {
    plan(w, inst).mask
}

/// The bit width of a source slot's type, for sign-bit modifiers.
fn width(ty: Ty) -> u32 {
    match ty {
        Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => 16,
        Ty::B32 => 32,
        Ty::I64 | Ty::F64 => 64,
    }
}

/// Extracts an SDWA-selected field (0..=3 bytes, 4/5 words, 6 dword),
/// sign- or zero-extended to 32 bits.
pub fn sdwa_select(v: u32, sel: u8, sext: bool) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel as u32, 8),
        4 => (0, 16),
        5 => (16, 16),
        _ => return v,
    };
    let field = (v >> shift) & ((1 << bits) - 1);
    if sext {
        (((field << (32 - bits)) as i32) >> (32 - bits)) as u32
    } else {
        field
    }
}

/// Places an SDWA result into the destination's selected field. `unused`:
/// 0 pads the rest with zeros, 1 sign-extends the field, 2 preserves the
/// destination's other bits.
pub fn sdwa_place(old: u32, new: u32, sel: u8, unused: u8) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel as u32, 8),
        4 => (0, 16),
        5 => (16, 16),
        _ => return new,
    };
    let field_mask = ((1u64 << bits) - 1) as u32;
    let field = new & field_mask;
    match unused {
        2 => (old & !(field_mask << shift)) | field << shift,
        1 => {
            let ext = (((field << (32 - bits)) as i32) >> (32 - bits)) as u32;
            // Sign-extend from the top of the field into the higher bits.
            (ext << shift) | (field << shift)
        }
        _ => field << shift,
    }
}

/// The modifiers that apply to one 32-bit source, resolved once per
/// instruction into a branch-free form: `(v >> shift) & mask` (VOP3
/// `op_sel` high half, SDWA byte/word select), sign extension by shifting
/// left and arithmetically right by `sext`, then `& !abs`, `^ neg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrcMods {
    pub shift: u32,
    pub mask: u32,
    /// 32 minus the selected field's width when it is sign-extended, else 0.
    pub sext: u32,
    /// Sign bits cleared (abs) and flipped (neg).
    pub abs: u32,
    pub neg: u32,
}

impl SrcMods {
    pub const NONE: SrcMods = SrcMods { shift: 0, mask: u32::MAX, sext: 0, abs: 0, neg: 0 };

    /// The SDWA select `sel` (0..=3 bytes, 4/5 words, 6 dword).
    pub fn sdwa(sel: u8, sext: bool) -> SrcMods {
        let (shift, bits) = sdwa_field(sel);
        let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
        SrcMods { shift, mask, sext: if sext { 32 - bits } else { 0 }, ..SrcMods::NONE }
    }

    #[inline]
    pub fn is_none(&self) -> bool {
        *self == SrcMods::NONE
    }

    #[inline(always)]
    pub fn apply(&self, v: u32) -> u32 {
        let v = (v >> self.shift) & self.mask;
        let v = ((v << self.sext) as i32 >> self.sext) as u32;
        (v & !self.abs) ^ self.neg
    }
}

/// The (shift, width) of an SDWA select.
fn sdwa_field(sel: u8) -> (u32, u32) {
    match sel {
        0..=3 => (8 * sel as u32, 8),
        4 => (0, 16),
        5 => (16, 16),
        _ => (0, 32),
    }
}

/// Whether source `i` takes VOP3 abs / neg (per source: e.g. the exponent
/// of `v_ldexp` takes none).
#[inline]
fn vop3_abs_neg(m: u32, i: usize) -> (bool, bool) {
    let sext = m & (mods::SRC0_SEXT << i) != 0;
    let (abs, neg) = match i {
        0 => (mods::ABS, mods::NEG),
        1 => (mods::ABS_SRC1, mods::NEG_SRC1),
        _ => (mods::ABS_SRC2, mods::NEG_SRC2),
    };
    (m & abs != 0 && !sext, m & neg != 0 && !sext)
}

/// Whether a source of type `ty` is a float for SDWA/DPP abs/neg (integer
/// operands of float ops, like an exponent, take none).
#[inline]
fn float_slot(ty: Ty) -> bool {
    matches!(ty, Ty::F16 | Ty::B32 | Ty::F64 | Ty::PkF16)
}

/// The modifiers of 32-bit source `i` of `inst`. VOP3P sources get none:
/// packed modifiers belong to the packed ops.
#[inline]
pub fn src_mods(inst: &Inst, i: usize) -> SrcMods {
    // The common encodings carry no modifier: answer before the op-table
    // look-ups (this runs for every source of every VALU instruction).
    match inst.ext {
        Ext::Vop3(v) if inst.enc != Encoding::Vop3p && (v.abs | v.neg | v.op_sel) >> i & 1 == 0 => {
            return SrcMods::NONE
        }
        Ext::Vop3(_) | Ext::Sdwa(_) => {}
        Ext::Dpp(d) if i < 2 && (d.abs | d.neg) >> i & 1 != 0 => {}
        _ => return SrcMods::NONE,
    }
    let ty = inst.info().src[i].ty;
    let bits = width(ty).min(32);
    let sign = 1u32 << (bits - 1);
    let m = inst.op.mods(inst.target);
    let mut r = SrcMods::NONE;
    match inst.ext {
        Ext::Vop3(v) if inst.enc != Encoding::Vop3p => {
            if bits == 16 && m & mods::OP_SEL != 0 && v.op_sel >> i & 1 != 0 {
                r.shift = 16;
            }
            let (abs_ok, neg_ok) = vop3_abs_neg(m, i);
            if abs_ok && v.abs >> i & 1 != 0 {
                r.abs = sign;
            }
            if neg_ok && v.neg >> i & 1 != 0 {
                r.neg = sign;
            }
        }
        Ext::Sdwa(s) if i < 2 => {
            r = SrcMods::sdwa(s.src_sel[i], s.sext >> i & 1 != 0);
            if m & mods::SDWA_ABS_NEG != 0 && float_slot(ty) {
                r.abs = if s.abs >> i & 1 != 0 { sign } else { 0 };
                r.neg = if s.neg >> i & 1 != 0 { sign } else { 0 };
            }
        }
        Ext::Dpp(d) if i < 2 && m & mods::DPP_ABS_NEG != 0 && float_slot(ty) => {
            r.abs = if d.abs >> i & 1 != 0 { sign } else { 0 };
            r.neg = if d.neg >> i & 1 != 0 { sign } else { 0 };
        }
        _ => {}
    }
    r
}

/// Source `i` of a 32-bit (or 16-bit) VALU op, per lane, with the
/// encoding's modifiers applied (see [`src_mods`]) and DPP lane movement
/// of `src0` done by `plan`.
#[inline]
pub fn src32_with(w: &Wave, inst: &Inst, i: usize, plan: &Plan) -> Result<Lanes, ExecError> {
    let m = src_mods(inst, i);
    let op = inst.src[i];
    let mut out = match (plan.dpp, i, op) {
        (Some(p), 0, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let regs = w.vreg(op, 0)?;
            std::array::from_fn(|l| {
                let v = regs[p.from[l] as usize & (LANES - 1)];
                v & 0u32.wrapping_sub((p.reads >> l) as u32 & 1)
            })
        }
        (_, _, Operand::Vgpr(_) | Operand::Agpr(_)) => *w.vreg(op, 0)?,
        _ => return Ok([m.apply(w.read_scalar32(op, inst.info().src[i].ty, inst.literal)?); LANES]),
    };
    if !m.is_none() {
        for x in out.iter_mut() {
            *x = m.apply(*x);
        }
    }
    Ok(out)
}

/// Fills `out` with source `i` (modifiers and DPP movement applied), in
/// place: no 256-byte move of a returned array.
#[inline]
pub fn src32_into(w: &Wave, inst: &Inst, i: usize, plan: &Plan, out: &mut Lanes) -> Result<(), ExecError> {
    let m = src_mods(inst, i);
    let op = inst.src[i];
    match (plan.dpp, i, op) {
        (Some(p), 0, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let regs = w.vreg(op, 0)?;
            let keep = expand_mask(p.reads);
            for ((o, &f), k) in out.iter_mut().zip(p.from).zip(&keep) {
                *o = regs[f as usize & (LANES - 1)] & k;
            }
            if !m.is_none() {
                for o in out.iter_mut() {
                    *o = m.apply(*o);
                }
            }
        }
        (_, _, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let regs = w.vreg(op, 0)?;
            if m.is_none() {
                *out = *regs;
            } else {
                for (o, &r) in out.iter_mut().zip(regs) {
                    *o = m.apply(r);
                }
            }
        }
        _ => {
            let v = m.apply(w.read_scalar32(op, inst.info().src[i].ty, inst.literal)?);
            for o in out.iter_mut() {
                *o = v;
            }
        }
    }
    Ok(())
}

/// The register source `i` is read from unchanged (a VGPR/AGPR without
/// modifiers that DPP does not move), or `None` when its lanes must be
/// computed ([`src32_into`]).
#[inline]
pub fn direct_src(inst: &Inst, i: usize) -> Option<Operand> {
    let dpp_src0 = i == 0 && matches!(inst.ext, Ext::Dpp(_));
    match inst.src[i] {
        op @ (Operand::Vgpr(_) | Operand::Agpr(_)) if !dpp_src0 && src_mods(inst, i).is_none() => Some(op),
        _ => None,
    }
}

/// Source `i` of a 32-bit VALU op with modifiers (computes the DPP plan;
/// prefer [`src32_with`] when reading several sources).
pub fn src32(w: &Wave, inst: &Inst, i: usize) -> Result<Lanes, ExecError> {
    src32_with(w, inst, i, &plan(w, inst))
}

/// Source `i` borrowed straight from its register, when it is a VGPR/AGPR
/// no modifier or DPP movement applies to.
pub fn src32_ref<'w>(w: &'w Wave, inst: &Inst, i: usize) -> Option<&'w Lanes> {
    direct_src(inst, i).and_then(|op| w.vreg(op, 0).ok())
}

/// Source `i` as one value for every lane (an SGPR, constant or special
/// register, with its modifiers applied), or `None` for a vector register.
pub fn src32_val(w: &Wave, inst: &Inst, i: usize) -> Result<Option<u32>, ExecError> {
    match inst.src[i] {
        Operand::Vgpr(_) | Operand::Agpr(_) => Ok(None),
        op => {
            let v = w.read_scalar32(op, inst.info().src[i].ty, inst.literal)?;
            Ok(Some(src_mods(inst, i).apply(v)))
        }
    }
}

/// The sign-bit modifiers of 64-bit source `i` (VOP3 abs/neg, DPP abs/neg
/// at bit 63).
#[inline]
pub(crate) fn src64_mods(inst: &Inst, i: usize) -> (u64, u64) {
    let m = inst.op.mods(inst.target);
    let ty = inst.info().src[i].ty;
    const SIGN: u64 = 1 << 63;
    match inst.ext {
        Ext::Vop3(v) if inst.enc != Encoding::Vop3p => {
            let (abs_ok, neg_ok) = vop3_abs_neg(m, i);
            let abs = if abs_ok && v.abs >> i & 1 != 0 { SIGN } else { 0 };
            let neg = if neg_ok && v.neg >> i & 1 != 0 { SIGN } else { 0 };
            (abs, neg)
        }
        Ext::Dpp(d) if i < 2 && m & mods::DPP_ABS_NEG != 0 && float_slot(ty) => {
            (if d.abs >> i & 1 != 0 { SIGN } else { 0 }, if d.neg >> i & 1 != 0 { SIGN } else { 0 })
        }
        _ => (0, 0),
    }
}

/// Source `i` of a 64-bit op into `out`: a register pair (moved as a pair
/// by DPP for `src0`) or a 64-bit constant, with float abs/neg applied for
/// ops that take them.
#[inline]
pub fn src64_into(w: &Wave, inst: &Inst, i: usize, plan: &Plan, out: &mut [u64; LANES]) -> Result<(), ExecError> {
    let op = inst.src[i];
    let (abs, neg) = src64_mods(inst, i);
    match (plan.dpp, i, op) {
        (Some(p), 0, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let (lo, hi) = (w.vreg(op, 0)?, w.vreg(op, 1)?);
            for (l, o) in out.iter_mut().enumerate() {
                let s = p.from[l] as usize & (LANES - 1);
                *o = (lo[s] as u64 | (hi[s] as u64) << 32) & 0u64.wrapping_sub(p.reads >> l & 1);
            }
        }
        (_, _, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let (lo, hi) = (w.vreg(op, 0)?, w.vreg(op, 1)?);
            for ((o, &a), &b) in out.iter_mut().zip(lo).zip(hi) {
                *o = a as u64 | (b as u64) << 32;
            }
        }
        _ => {
            let v = w.read_scalar64(op, inst.info().src[i].ty, inst.literal)?;
            *out = [(v & !abs) ^ neg; LANES];
            return Ok(());
        }
    }
    if abs | neg != 0 {
        for x in out.iter_mut() {
            *x = (*x & !abs) ^ neg;
        }
    }
    Ok(())
}

/// Source `i` of a 64-bit op, with the plan already computed.
pub fn src64_with(w: &Wave, inst: &Inst, i: usize, plan: &Plan) -> Result<[u64; LANES], ExecError> {
    let mut out = [0; LANES];
    src64_into(w, inst, i, plan, &mut out)?;
    Ok(out)
}

/// Source `i` of a 64-bit VALU op (computes the DPP plan).
pub fn src64(w: &Wave, inst: &Inst, i: usize) -> Result<[u64; LANES], ExecError> {
    src64_with(w, inst, i, &plan(w, inst))
}

/// Whether `inst` writes only one 16-bit half of its destination (the gfx9
/// `op_sel` integer ops: the half `op_sel[3]` names; the other half is
/// kept), and which: `Some(16)` for the high half, `Some(0)` for the low.
/// Other 16-bit integer ops zero the high half (their result is already
/// zero-extended). The f16 ops write their halves themselves.
#[inline]
pub fn writes_dst_half(inst: &Inst) -> Option<u32> {
    match inst.op {
        Op::VAddI16
        | Op::VSubI16
        | Op::VMadU16
        | Op::VMadI16
        | Op::VMin3I16
        | Op::VMin3U16
        | Op::VMax3I16
        | Op::VMax3U16
        | Op::VMed3I16
        | Op::VMed3U16 => match inst.ext {
            Ext::Vop3(v) => Some(if v.op_sel & 8 != 0 { 16 } else { 0 }),
            _ => Some(0),
        },
        _ => None,
    }
}

/// Writes `values` into `reg` for the lanes in `mask`.
#[inline]
pub fn write_lanes(reg: &mut Lanes, values: &Lanes, mask: u64) {
    if mask == u64::MAX {
        *reg = *values;
    } else {
        let m = expand_mask(mask);
        for ((d, v), m) in reg.iter_mut().zip(values).zip(&m) {
            *d = (v & m) | (*d & !m);
        }
    }
}

/// Whether a 32-bit result goes into the destination as is (no SDWA field
/// placement, no 16-bit half).
#[inline]
pub fn plain_write(inst: &Inst) -> bool {
    match inst.ext {
        Ext::Sdwa(s) => s.dst_sel == 6 && s.dst_unused == 0 && writes_dst_half(inst).is_none(),
        _ => writes_dst_half(inst).is_none(),
    }
}

/// Writes a 32-bit result to `dst[0]` for the lanes in `mask`: SDWA places
/// it in the selected field; the `op_sel` integer ops write one half
/// ([`writes_dst_half`]).
pub fn write32(w: &mut Wave, inst: &Inst, values: &Lanes, mask: u64) -> Result<(), ExecError> {
    let half = writes_dst_half(inst);
    let reg = w.vreg_mut(inst.dst[0], 0)?;
    match (inst.ext, half) {
        (_, Some(shift)) => {
            let keep = !(0xffffu32 << shift);
            let m = expand_mask(mask);
            for ((d, v), m) in reg.iter_mut().zip(values).zip(&m) {
                let new = (*d & keep) | (v & 0xffff) << shift;
                *d = (new & m) | (*d & !m);
            }
        }
        (Ext::Sdwa(s), None) if s.dst_sel != 6 || s.dst_unused != 0 => {
            let (shift, bits) = sdwa_field(s.dst_sel);
            let field = if bits == 32 { u32::MAX } else { ((1 << bits) - 1) << shift };
            // What the field's value becomes (sign-extended upward for
            // UNUSED_SEXT), and which old bits survive (UNUSED_PRESERVE).
            let sx = 32 - bits - shift;
            let (ext_shift, keep) = match s.dst_unused {
                1 => (sx, 0),
                2 => (0, !field),
                _ => (0, 0),
            };
            let m = expand_mask(mask);
            for ((d, v), m) in reg.iter_mut().zip(values).zip(&m) {
                // ext_shift is 0 unless UNUSED_SEXT: then the field's top
                // bit is copied upward.
                let placed = (v << shift) & field;
                let placed = (((placed << ext_shift) as i32) >> ext_shift) as u32;
                let new = placed | (*d & keep);
                *d = (new & m) | (*d & !m);
            }
        }
        _ => write_lanes(reg, values, mask),
    }
    Ok(())
}

/// Writes a 64-bit result to the register pair `dst[0]` for the lanes in `mask`.
pub fn write64(w: &mut Wave, inst: &Inst, values: &[u64; LANES], mask: u64) -> Result<(), ExecError> {
    let dst = inst.dst[0];
    for half in 0..2 {
        let reg = w.vreg_mut(dst, half)?;
        if mask == u64::MAX {
            for (d, v) in reg.iter_mut().zip(values) {
                *d = (v >> (32 * half)) as u32;
            }
        } else {
            let m = expand_mask(mask);
            for ((d, v), m) in reg.iter_mut().zip(values).zip(&m) {
                let new = (v >> (32 * half)) as u32;
                *d = (new & m) | (*d & !m);
            }
        }
    }
    Ok(())
}

/// Writes a per-lane condition (VOPC result, carry-out) to a scalar
/// destination: bits of lanes outside `mask` are 0, as on hardware.
pub fn write_lane_mask(w: &mut Wave, dst: Operand, bits: u64, mask: u64) -> Result<(), ExecError> {
    w.write_scalar64(dst, bits & mask)
}

/// Reads a per-lane condition operand (carry-in, `v_cndmask` selector):
/// an SGPR pair or VCC, as a 64-bit lane mask.
pub fn read_lane_mask(w: &Wave, op: Operand) -> Result<u64, ExecError> {
    w.read_scalar64(op, Ty::I64, 0)
}

/// MODE bit: NaN clamps to 0 (DX10 clamp).
pub const MODE_DX10_CLAMP: u32 = 1 << 8;
/// MODE bit: IEEE mode (omod is ignored).
pub const MODE_IEEE: u32 = 1 << 9;

fn out_mods(inst: &Inst) -> (u8, bool) {
    match inst.ext {
        Ext::Vop3(m) => (m.omod, m.clamp),
        Ext::Sdwa(s) => (s.omod, s.clamp),
        _ => (0, false),
    }
}

fn omod_factor(omod: u8, mode: u32) -> f64 {
    match omod {
        _ if mode & MODE_IEEE != 0 => 1.0,
        1 => 2.0,
        2 => 4.0,
        3 => 0.5,
        _ => 1.0,
    }
}

/// Applies VOP3/SDWA output modifiers (`mul:2`, `mul:4`, `div:2`, then
/// clamp to [0, 1]) to an f32 result, as MODE says: omod is ignored in IEEE
/// mode; NaN clamps to 0 only with DX10_CLAMP (else it stays NaN).
pub fn omod_clamp_f32_mode(inst: &Inst, mode: u32, v: f32) -> f32 {
    let (omod, clamp) = out_mods(inst);
    let k = omod_factor(omod, mode);
    let v = if k != 1.0 { v * k as f32 } else { v };
    match clamp {
        true if v.is_nan() => {
            if mode & MODE_DX10_CLAMP != 0 {
                0.0
            } else {
                v
            }
        }
        true => v.clamp(0.0, 1.0),
        false => v,
    }
}

/// [`omod_clamp_f32_mode`] for f64 results.
pub fn omod_clamp_f64_mode(inst: &Inst, mode: u32, v: f64) -> f64 {
    let (omod, clamp) = out_mods(inst);
    let k = omod_factor(omod, mode);
    let v = if k != 1.0 { v * k } else { v };
    match clamp {
        true if v.is_nan() => {
            if mode & MODE_DX10_CLAMP != 0 {
                0.0
            } else {
                v
            }
        }
        true => v.clamp(0.0, 1.0),
        false => v,
    }
}

/// Applies VOP3/SDWA output modifiers to an f32 result, as with DX10 clamp
/// on and IEEE mode off (the kernel defaults before MODE was threaded in).
pub fn omod_clamp_f32(inst: &Inst, v: f32) -> f32 {
    omod_clamp_f32_mode(inst, MODE_DX10_CLAMP, v)
}

/// [`omod_clamp_f32`] for f64 results.
pub fn omod_clamp_f64(inst: &Inst, v: f64) -> f64 {
    omod_clamp_f64_mode(inst, MODE_DX10_CLAMP, v)
}

/// Whether the instruction's clamp bit is set (integer ops saturate).
pub fn clamp(inst: &Inst) -> bool {
    out_mods(inst).1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a float abs then neg to a value of `bits` width.
    fn abs_neg(v: u64, bits: u32, abs: bool, neg: bool) -> u64 {
        let sign = 1u64 << (bits - 1);
        let v = if abs { v & !sign } else { v };
        if neg {
            v ^ sign
        } else {
            v
        }
    }

    #[test]
    fn sdwa_selects_and_places() {
        assert_eq!(sdwa_select(0x1234_80ff, 1, false), 0x80);
        assert_eq!(sdwa_select(0x1234_80ff, 1, true), 0xffff_ff80);
        assert_eq!(sdwa_select(0x8234_80ff, 5, true), 0xffff_8234);
        assert_eq!(sdwa_select(0x8234_80ff, 6, true), 0x8234_80ff);
        assert_eq!(sdwa_place(0xaaaa_aaaa, 0x1234_5678, 4, 0), 0x0000_5678);
        assert_eq!(sdwa_place(0xaaaa_aaaa, 0x1234_5678, 5, 2), 0x5678_aaaa);
        assert_eq!(sdwa_place(0xaaaa_aaaa, 0x0000_0080, 0, 1), 0xffff_ff80);
        assert_eq!(sdwa_place(0xaaaa_aaaa, 0x0000_0080, 2, 2), 0xaa80_aaaa);
    }

    #[test]
    fn abs_and_neg_flip_the_sign_at_the_type_width() {
        assert_eq!(abs_neg(0xbf80_0000, 32, true, false), 0x3f80_0000);
        assert_eq!(abs_neg(0x3f80_0000, 32, false, true), 0xbf80_0000);
        assert_eq!(abs_neg(0x3f80_0000, 32, true, true), 0xbf80_0000, "-|x|");
        assert_eq!(abs_neg(0x3c00, 16, false, true), 0xbc00);
        assert_eq!(abs_neg(0x8000_0000_0000_0000, 64, true, false), 0);
        let m = SrcMods { abs: 0x8000_0000, neg: 0x8000_0000, ..SrcMods::NONE };
        assert_eq!(m.apply(0x3f80_0000), 0xbf80_0000);
    }

    #[test]
    fn output_modifiers_follow_mode() {
        let mut inst = crate::isa::decode(&[0xd1010000, 0x00000000], crate::isa::Target::Gfx90a).unwrap();
        inst.ext = Ext::Vop3(crate::isa::Vop3Mods { omod: 1, clamp: true, ..Default::default() });
        assert_eq!(omod_clamp_f32_mode(&inst, 0, 0.25), 0.5);
        assert_eq!(omod_clamp_f32_mode(&inst, MODE_IEEE, 0.25), 0.25, "IEEE mode ignores omod");
        assert_eq!(omod_clamp_f32_mode(&inst, MODE_DX10_CLAMP, f32::NAN), 0.0);
        assert!(omod_clamp_f32_mode(&inst, 0, f32::NAN).is_nan());
        assert_eq!(omod_clamp_f64_mode(&inst, 0, 3.0), 1.0);
        assert_eq!(omod_clamp_f64(&inst, f64::NAN), 0.0);
    }
}
