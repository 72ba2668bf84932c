//! Operand plumbing shared by every VALU op: sources with their encoding's
//! modifiers applied (DPP lane movement, SDWA selects, abs/neg/sext,
//! VOP3 op_sel), the lanes allowed to write, and destination writes
//! (SDWA dst_sel/dst_unused, 16-bit halves).
//!
//! Semantics follow AMD's "MI200 Instruction Set Architecture" (§6.2 SDWA,
//! §6.3 DPP, §6.4 VOP3 modifiers).
//!
//! Two layers: [`plan`] + [`src32_with`]/[`src64_with`] + [`write32`] do the
//! work once per instruction (the DPP plan is computed once); the older
//! [`src32`]/[`src64`]/[`write_mask`] entry points compute what they need
//! themselves and stay for callers that read one source at a time.

use crate::exec::wave::{Lanes, Wave, LANES};
use crate::exec::ExecError;
use crate::isa::info::mods;
use crate::isa::{Dpp, Encoding, Ext, Inst, Op, Operand, Ty};

/// Marks an invalid (out-of-range) DPP source lane in [`DPP_SOURCES`].
const NO_LANE: u8 = 0xff;

/// Number of DPP_CTRL values the table covers (0x000..=0x15f).
const DPP_CTRLS: usize = 0x160;

/// The source lane of lane `l` under DPP control `ctrl`, or [`NO_LANE`].
const fn source_lane(ctrl: usize, l: usize) -> u8 {
    let row = l & !15;
    let in_row = l & 15;
    let s = match ctrl {
        0x000..=0x0ff => (l & !3) | ((ctrl >> (2 * (l & 3))) & 3),
        0x101..=0x10f if in_row + (ctrl - 0x100) < 16 => l + (ctrl - 0x100),
        0x111..=0x11f if in_row >= ctrl - 0x110 => l - (ctrl - 0x110),
        0x121..=0x12f => row + ((in_row + 16 - (ctrl - 0x120)) & 15),
        0x130 if l < LANES - 1 => l + 1,
        0x134 => (l + 1) % LANES,
        0x138 if l > 0 => l - 1,
        0x13c => (l + LANES - 1) % LANES,
        0x140 => row + (15 - in_row),
        0x141 => (l & !7) + (7 - (l & 7)),
        // row_bcast:15: rows 1..3 read the last lane of the previous row.
        0x142 if row > 0 => row - 1,
        // row_bcast:31: rows 2..3 read lane 31.
        0x143 if l >= 32 => 31,
        // row_newbcast:n (gfx90a+): every lane of a row reads lane n of it.
        0x150..=0x15f => row + (ctrl - 0x150),
        _ => return NO_LANE,
    };
    s as u8
}

const fn build_dpp_sources() -> [[u8; LANES]; DPP_CTRLS] {
    let mut t = [[NO_LANE; LANES]; DPP_CTRLS];
    let mut c = 0;
    while c < DPP_CTRLS {
        let mut l = 0;
        while l < LANES {
            t[c][l] = source_lane(c, l);
            l += 1;
        }
        c += 1;
    }
    t
}

/// Source lane of every lane for every DPP control, computed at compile
/// time so a DPP instruction only looks its row up.
static DPP_SOURCES: [[u8; LANES]; DPP_CTRLS] = build_dpp_sources();
static NO_SOURCES: [u8; LANES] = [NO_LANE; LANES];

/// Which lane of `src0` lane `l` reads under DPP control `ctrl`, or `None`
/// when the source lane is out of range ("invalid").
pub fn dpp_source_lane(ctrl: u16, l: usize) -> Option<usize> {
    let s = DPP_SOURCES.get(ctrl as usize).map_or(NO_LANE, |t| t[l]);
    (s != NO_LANE).then_some(s as usize)
}

/// What a DPP instruction does with its lanes, computed once per
/// instruction.
#[derive(Debug, Clone, Copy)]
pub struct DppPlan {
    /// Source lane of each lane (`0xff`: out of range).
    pub from: &'static [u8; LANES],
    /// Lanes that read a valid, active source lane; the others read 0.
    pub reads: u64,
    /// Lanes that write: active, in an enabled row and bank, and with a
    /// readable source or `bound_ctrl` set.
    pub mask: u64,
}

/// Lanes of the rows and banks a DPP instruction enables.
fn row_bank_mask(d: &Dpp) -> u64 {
    let mut m = 0u64;
    for quad in 0..16 {
        let row = quad / 4;
        let bank = quad & 3;
        if d.row_mask >> row & 1 != 0 && d.bank_mask >> bank & 1 != 0 {
            m |= 0xf << (4 * quad);
        }
    }
    m
}

/// The DPP plan of control `d` under `exec`: a lane whose source is
/// invalid or inactive reads 0 with `bound_ctrl`, and otherwise does not
/// write; lanes of disabled rows/banks do not write.
pub fn dpp_plan(d: &Dpp, exec: u64) -> DppPlan {
    let from = DPP_SOURCES.get(d.ctrl as usize).unwrap_or(&NO_SOURCES);
    let mut reads = 0u64;
    for (l, &s) in from.iter().enumerate() {
        if s != NO_LANE && exec >> s & 1 != 0 {
            reads |= 1 << l;
        }
    }
    let mask = exec & row_bank_mask(d) & if d.bound_ctrl { u64::MAX } else { reads };
    DppPlan { from, reads, mask }
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
/// instruction: `v >> shift`, then the SDWA select, then `& !abs`, `^ neg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrcMods {
    /// 16 when VOP3 `op_sel` picks the high half of a 16-bit source.
    pub shift: u32,
    /// SDWA select and sign extension (select 6 without sext = none).
    pub sel: u8,
    pub sext: bool,
    /// Sign bits cleared (abs) and flipped (neg).
    pub abs: u32,
    pub neg: u32,
}

impl SrcMods {
    pub const NONE: SrcMods = SrcMods { shift: 0, sel: 6, sext: false, abs: 0, neg: 0 };

    #[inline]
    pub fn is_none(&self) -> bool {
        *self == SrcMods::NONE
    }

    #[inline]
    pub fn apply(&self, v: u32) -> u32 {
        let v = sdwa_select(v >> self.shift, self.sel, self.sext);
        (v & !self.abs) ^ self.neg
    }
}

/// Whether source `i` takes VOP3 abs / neg (per source: e.g. the exponent
/// of `v_ldexp` takes none).
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
fn float_slot(ty: Ty) -> bool {
    matches!(ty, Ty::F16 | Ty::B32 | Ty::F64 | Ty::PkF16)
}

/// The modifiers of 32-bit source `i` of `inst`. VOP3P sources get none:
/// packed modifiers belong to the packed ops.
pub fn src_mods(inst: &Inst, i: usize) -> SrcMods {
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
            r.sel = s.src_sel[i];
            r.sext = s.sext >> i & 1 != 0;
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
pub fn src32_with(w: &Wave, inst: &Inst, i: usize, plan: &Plan) -> Result<Lanes, ExecError> {
    let m = src_mods(inst, i);
    let op = inst.src[i];
    let mut out = match (plan.dpp, i, op) {
        (Some(p), 0, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let regs = w.vreg(op, 0)?;
            std::array::from_fn(|l| if p.reads >> l & 1 != 0 { regs[p.from[l] as usize] } else { 0 })
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

/// Source `i` of a 32-bit VALU op with modifiers (computes the DPP plan;
/// prefer [`src32_with`] when reading several sources).
pub fn src32(w: &Wave, inst: &Inst, i: usize) -> Result<Lanes, ExecError> {
    src32_with(w, inst, i, &plan(w, inst))
}

/// Source `i` borrowed straight from its register, when it is a VGPR/AGPR
/// no modifier or DPP movement applies to.
pub fn src32_ref<'w>(w: &'w Wave, inst: &Inst, i: usize) -> Option<&'w Lanes> {
    let dpp_src0 = i == 0 && matches!(inst.ext, Ext::Dpp(_));
    match inst.src[i] {
        op @ (Operand::Vgpr(_) | Operand::Agpr(_)) if !dpp_src0 && src_mods(inst, i).is_none() => w.vreg(op, 0).ok(),
        _ => None,
    }
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
fn src64_mods(inst: &Inst, i: usize) -> (u64, u64) {
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
pub fn src64_into(w: &Wave, inst: &Inst, i: usize, plan: &Plan, out: &mut [u64; LANES]) -> Result<(), ExecError> {
    let op = inst.src[i];
    let (abs, neg) = src64_mods(inst, i);
    match (plan.dpp, i, op) {
        (Some(p), 0, Operand::Vgpr(_) | Operand::Agpr(_)) => {
            let (lo, hi) = (w.vreg(op, 0)?, w.vreg(op, 1)?);
            for (l, o) in out.iter_mut().enumerate() {
                let s = p.from[l] as usize;
                *o = if p.reads >> l & 1 != 0 { lo[s] as u64 | (hi[s] as u64) << 32 } else { 0 };
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
        for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
            if mask >> l & 1 != 0 {
                *d = *v;
            }
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
            for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
                if mask >> l & 1 != 0 {
                    *d = (*d & keep) | (v & 0xffff) << shift;
                }
            }
        }
        (Ext::Sdwa(s), None) if s.dst_sel != 6 || s.dst_unused != 0 => {
            for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
                if mask >> l & 1 != 0 {
                    *d = sdwa_place(*d, *v, s.dst_sel, s.dst_unused);
                }
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
        for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
            if mask >> l & 1 != 0 {
                *d = (v >> (32 * half)) as u32;
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
    fn dpp_lane_maps() {
        // quad_perm:[3,2,1,0] reverses each quad.
        let ctrl = 0b00_01_10_11;
        assert_eq!((0..8).map(|l| dpp_source_lane(ctrl, l).unwrap()).collect::<Vec<_>>(), [3, 2, 1, 0, 7, 6, 5, 4]);
        // row_shl:1 — lane 15 of a row has no source.
        assert_eq!(dpp_source_lane(0x101, 14), Some(15));
        assert_eq!(dpp_source_lane(0x101, 15), None);
        // row_shr:3 — the first three lanes of a row have none.
        assert_eq!(dpp_source_lane(0x113, 18), None);
        assert_eq!(dpp_source_lane(0x113, 19), Some(16));
        // row_ror:1 wraps within the row.
        assert_eq!(dpp_source_lane(0x121, 16), Some(31));
        assert_eq!(dpp_source_lane(0x121, 17), Some(16));
        assert_eq!(dpp_source_lane(0x130, 63), None);
        assert_eq!(dpp_source_lane(0x134, 63), Some(0));
        assert_eq!(dpp_source_lane(0x138, 0), None);
        assert_eq!(dpp_source_lane(0x13c, 0), Some(63));
        assert_eq!(dpp_source_lane(0x140, 17), Some(30));
        assert_eq!(dpp_source_lane(0x141, 9), Some(14));
        assert_eq!(dpp_source_lane(0x142, 20), Some(15));
        assert_eq!(dpp_source_lane(0x142, 3), None);
        assert_eq!(dpp_source_lane(0x143, 40), Some(31));
        assert_eq!(dpp_source_lane(0x143, 31), None);
        assert_eq!(dpp_source_lane(0x153, 37), Some(35));
        assert_eq!(dpp_source_lane(0x1ff, 0), None);
        assert_eq!(dpp_source_lane(0x100, 0), None, "row_shl:0 is not a control");
    }

    #[test]
    fn dpp_masks_and_bound_ctrl() {
        let d = Dpp { ctrl: 0x138, row_mask: 0xf, bank_mask: 0xf, bound_ctrl: false, neg: 0, abs: 0 };
        let p = dpp_plan(&d, u64::MAX);
        assert_eq!(p.mask & 1, 0, "lane 0 has no source and bound_ctrl is off: no write");
        assert_eq!((p.from[1], p.reads >> 1 & 1), (0, 1));
        let p = dpp_plan(&Dpp { bound_ctrl: true, ..d }, u64::MAX);
        assert_eq!((p.mask & 1, p.reads & 1), (1, 0), "bound_ctrl: lane 0 reads 0 and writes");
        // Row 1 and bank 0 disabled.
        let p = dpp_plan(&Dpp { row_mask: 0b1101, bank_mask: 0b1110, ..d }, u64::MAX);
        assert_eq!(p.mask >> 16 & 0xffff, 0);
        assert_eq!(p.mask >> 32 & 0xf, 0, "bank 0 of row 2");
        assert_eq!(p.mask >> 36 & 0xf, 0xf);
        // An inactive source lane counts as invalid.
        let p = dpp_plan(&d, !1);
        assert_eq!((p.reads >> 1 & 1, p.mask >> 1 & 1), (0, 0));
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
