//! Operand plumbing shared by every VALU op: sources with their encoding's
//! modifiers applied (DPP lane movement, SDWA selects, abs/neg/sext,
//! VOP3 op_sel), the lanes allowed to write, and destination writes
//! (SDWA dst_sel/dst_unused).
//!
//! Semantics follow AMD's "MI200 Instruction Set Architecture" (§6.2 SDWA,
//! §6.3 DPP, §6.4 VOP3 modifiers).

use crate::exec::wave::{Lanes, Wave, LANES};
use crate::exec::ExecError;
use crate::isa::info::mods;
use crate::isa::{Dpp, Ext, Inst, Operand, Sdwa, Ty};

/// Which lane of `src0` lane `l` reads under DPP control `ctrl`, or `None`
/// when the source lane is out of range ("invalid").
pub fn dpp_source_lane(ctrl: u16, l: usize) -> Option<usize> {
    let row = l & !15;
    let in_row = l & 15;
    let c = ctrl as usize;
    match ctrl {
        0x000..=0x0ff => Some((l & !3) | ((c >> (2 * (l & 3))) & 3)),
        0x101..=0x10f => {
            let n = c - 0x100;
            (in_row + n < 16).then(|| l + n)
        }
        0x111..=0x11f => {
            let n = c - 0x110;
            (in_row >= n).then(|| l - n)
        }
        0x121..=0x12f => {
            let n = c - 0x120;
            Some(row + ((in_row + 16 - n) & 15))
        }
        0x130 => (l < LANES - 1).then(|| l + 1),
        0x134 => Some((l + 1) % LANES),
        0x138 => (l > 0).then(|| l - 1),
        0x13c => Some((l + LANES - 1) % LANES),
        0x140 => Some(row + (15 - in_row)),
        0x141 => Some((l & !7) + (7 - (l & 7))),
        // row_bcast:15: rows 1..3 read the last lane of the previous row.
        0x142 => (row > 0).then(|| row - 1),
        // row_bcast:31: rows 2..3 read lane 31.
        0x143 => (l >= 32).then_some(31),
        // row_newbcast:n (gfx90a+): every lane of a row reads lane n of it.
        0x150..=0x15f => Some(row + (c - 0x150)),
        _ => None,
    }
}

/// The lanes a DPP instruction writes, and where each reads `src0` from.
/// Lanes of disabled rows/banks do not write; a lane whose source is
/// invalid or inactive reads 0 with `bound_ctrl`, and otherwise does not
/// write.
fn dpp_plan(d: &Dpp, exec: u64) -> ([Option<usize>; LANES], u64) {
    let mut from = [None; LANES];
    let mut mask = 0u64;
    for (l, f) in from.iter_mut().enumerate() {
        if exec >> l & 1 == 0 || d.row_mask >> (l / 16) & 1 == 0 || d.bank_mask >> ((l / 4) & 3) & 1 == 0 {
            continue;
        }
        match dpp_source_lane(d.ctrl, l).filter(|&s| exec >> s & 1 != 0) {
            Some(s) => {
                *f = Some(s);
                mask |= 1 << l;
            }
            None if d.bound_ctrl => mask |= 1 << l,
            None => {}
        }
    }
    (from, mask)
}

/// The lanes that write the destination: EXEC, narrowed by DPP.
pub fn write_mask(w: &Wave, inst: &Inst) -> u64 {
    match inst.ext {
        Ext::Dpp(d) => dpp_plan(&d, w.exec).1,
        _ => w.exec,
    }
}

/// The bit width of source slot `i`'s type, for sign-bit modifiers.
fn width(ty: Ty) -> u32 {
    match ty {
        Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => 16,
        Ty::B32 => 32,
        Ty::I64 | Ty::F64 => 64,
    }
}

/// Applies a float abs then neg to a value of `bits` width.
#[inline]
fn abs_neg(v: u64, bits: u32, abs: bool, neg: bool) -> u64 {
    let sign = 1u64 << (bits - 1);
    let v = if abs { v & !sign } else { v };
    if neg {
        v ^ sign
    } else {
        v
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

/// Source `i` of a 32-bit (or 16-bit) VALU op, per lane, with the
/// encoding's modifiers applied:
/// - DPP moves lanes of `src0`; SDWA selects (and sign-extends for integer
///   ops) a byte/word;
/// - abs/neg flip the sign bit at the slot's float width (16 or 32) for ops
///   that take float modifiers; for ops whose source takes integer
///   modifiers, VOP3/DPP `neg` means sign-extend and is left to the op;
/// - VOP3 `op_sel` on 16-bit sources picks the high half.
pub fn src32(w: &Wave, inst: &Inst, i: usize) -> Result<Lanes, ExecError> {
    let info = inst.info();
    let ty = info.src[i].ty;
    let m = inst.op.mods(inst.target);
    let float_mods = m & (mods::ABS | mods::NEG | mods::SDWA_ABS_NEG | mods::DPP_ABS_NEG) != 0;
    let sext_src = m & (mods::SRC0_SEXT << i) != 0;
    let src = w.vsrc32(inst.src[i], ty, inst.literal)?;
    let mut out = match (inst.ext, i) {
        (Ext::Dpp(d), 0) => {
            let (from, _) = dpp_plan(&d, w.exec);
            let regs = src.to_lanes();
            std::array::from_fn(|l| from[l].map_or(0, |s| regs[s]))
        }
        _ => src.to_lanes(),
    };
    let bits = width(ty).min(32);
    match inst.ext {
        Ext::Vop3(v) => {
            if bits == 16 && v.op_sel >> i & 1 != 0 {
                for x in out.iter_mut() {
                    *x >>= 16;
                }
            }
            let (abs, neg) = (v.abs >> i & 1 != 0, v.neg >> i & 1 != 0);
            if float_mods && !sext_src && (abs || neg) {
                for x in out.iter_mut() {
                    *x = abs_neg(*x as u64, bits, abs, neg) as u32;
                }
            }
        }
        Ext::Sdwa(s) if i < 2 => apply_sdwa(&mut out, &s, i, bits, float_mods),
        Ext::Dpp(d) if i < 2 && float_mods => {
            let (abs, neg) = (d.abs >> i & 1 != 0, d.neg >> i & 1 != 0);
            if abs || neg {
                for x in out.iter_mut() {
                    *x = abs_neg(*x as u64, bits, abs, neg) as u32;
                }
            }
        }
        _ => {}
    }
    Ok(out)
}

fn apply_sdwa(out: &mut Lanes, s: &Sdwa, i: usize, bits: u32, float_mods: bool) {
    let sext = s.sext >> i & 1 != 0;
    let sel = s.src_sel[i];
    let (abs, neg) = (s.abs >> i & 1 != 0, s.neg >> i & 1 != 0);
    for x in out.iter_mut() {
        let mut v = sdwa_select(*x, sel, sext);
        if float_mods && (abs || neg) {
            v = abs_neg(v as u64, bits, abs, neg) as u32;
        }
        *x = v;
    }
}

/// Source `i` of a 64-bit VALU op (VOP3 only: no DPP/SDWA forms), with
/// float abs/neg applied for ops that take them.
pub fn src64(w: &Wave, inst: &Inst, i: usize) -> Result<[u64; LANES], ExecError> {
    let ty = inst.info().src[i].ty;
    let src = w.vsrc64(inst.src[i], ty, inst.literal)?;
    let mut out: [u64; LANES] = std::array::from_fn(|l| src.get(l));
    let m = inst.op.mods(inst.target);
    if let Ext::Vop3(v) = inst.ext {
        let (abs, neg) = (v.abs >> i & 1 != 0, v.neg >> i & 1 != 0);
        if m & (mods::ABS | mods::NEG) != 0 && m & (mods::SRC0_SEXT << i) == 0 && (abs || neg) {
            for x in out.iter_mut() {
                *x = abs_neg(*x, 64, abs, neg);
            }
        }
    }
    Ok(out)
}

/// Writes a 32-bit result to `dst[0]` for the lanes in `mask`: SDWA places
/// it in the selected field; VOP3 `op_sel` bit 3 on a 16-bit result writes
/// the high half (keeping the low one).
pub fn write32(w: &mut Wave, inst: &Inst, values: &Lanes, mask: u64) -> Result<(), ExecError> {
    let dst = inst.dst[0];
    let sixteen = width(inst.info().dst[0].ty) == 16;
    let reg = w.vreg_mut(dst, 0)?;
    match inst.ext {
        Ext::Sdwa(s) if s.dst_sel != 6 || s.dst_unused != 0 => {
            for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
                if mask >> l & 1 != 0 {
                    *d = sdwa_place(*d, *v, s.dst_sel, s.dst_unused);
                }
            }
        }
        Ext::Vop3(v) if sixteen && v.op_sel & 8 != 0 => {
            for (l, (d, val)) in reg.iter_mut().zip(values).enumerate() {
                if mask >> l & 1 != 0 {
                    *d = (*d & 0xffff) | (val & 0xffff) << 16;
                }
            }
        }
        _ => {
            for (l, (d, v)) in reg.iter_mut().zip(values).enumerate() {
                if mask >> l & 1 != 0 {
                    *d = *v;
                }
            }
        }
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

/// Applies VOP3/SDWA output modifiers (`mul:2`, `mul:4`, `div:2`, then
/// clamp to [0, 1]) to an f32 result.
pub fn omod_clamp_f32(inst: &Inst, v: f32) -> f32 {
    let (omod, clamp) = match inst.ext {
        Ext::Vop3(m) => (m.omod, m.clamp),
        Ext::Sdwa(s) => (s.omod, s.clamp),
        _ => (0, false),
    };
    let v = match omod {
        1 => v * 2.0,
        2 => v * 4.0,
        3 => v * 0.5,
        _ => v,
    };
    if clamp {
        // NaN clamps to 0 (DX10 clamp behaviour).
        if v.is_nan() {
            0.0
        } else {
            v.clamp(0.0, 1.0)
        }
    } else {
        v
    }
}

/// [`omod_clamp_f32`] for f64 results.
pub fn omod_clamp_f64(inst: &Inst, v: f64) -> f64 {
    let (omod, clamp) = match inst.ext {
        Ext::Vop3(m) => (m.omod, m.clamp),
        _ => (0, false),
    };
    let v = match omod {
        1 => v * 2.0,
        2 => v * 4.0,
        3 => v * 0.5,
        _ => v,
    };
    if clamp {
        if v.is_nan() {
            0.0
        } else {
            v.clamp(0.0, 1.0)
        }
    } else {
        v
    }
}

/// Whether the instruction's clamp bit is set (integer ops saturate).
pub fn clamp(inst: &Inst) -> bool {
    match inst.ext {
        Ext::Vop3(m) => m.clamp,
        Ext::Sdwa(s) => s.clamp,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn dpp_masks_and_bound_ctrl() {
        let d = Dpp { ctrl: 0x138, row_mask: 0xf, bank_mask: 0xf, bound_ctrl: false, neg: 0, abs: 0 };
        let (from, mask) = dpp_plan(&d, u64::MAX);
        assert_eq!(mask & 1, 0, "lane 0 has no source and bound_ctrl is off: no write");
        assert_eq!(from[1], Some(0));
        let (_, mask) = dpp_plan(&Dpp { bound_ctrl: true, ..d }, u64::MAX);
        assert_eq!(mask & 1, 1, "bound_ctrl: lane 0 reads 0 and writes");
        // Row 1 and bank 0 disabled.
        let (_, mask) = dpp_plan(&Dpp { row_mask: 0b1101, bank_mask: 0b1110, ..d }, u64::MAX);
        assert_eq!(mask >> 16 & 0xffff, 0);
        assert_eq!(mask >> 32 & 0xf, 0, "bank 0 of row 2");
        assert_eq!(mask >> 36 & 0xf, 0xf);
        // An inactive source lane counts as invalid.
        let (from, mask) = dpp_plan(&d, !1);
        assert_eq!((from[1], mask >> 1 & 1), (None, 0));
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
    }
}
