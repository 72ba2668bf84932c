//! Vector ALU encodings: VOP1/VOP2/VOPC (32-bit, SDWA, DPP), VOP3a/b, VOP3P (incl. MFMA).

use super::decode::{sdst, Cx, DecodeError, Tables};
use super::info::Ty;
use super::info::{forms, OpClass, RegFile, Slot};
use super::inst::{Dpp, Ext, Inst, Mfma, MfmaScale, Sdwa, Vop3Mods};
use super::operand::Operand;
use super::{Op, Target};

/// A 9-bit source for `slot`: AGPR slots take VGPR codes as AGPRs; scalar registers are
/// aligned to the slot's tuple size.
fn src9(code: u32, slot: &Slot, target: Target) -> Option<Operand> {
    if slot.file == RegFile::Agpr {
        // gfx90a (LLVM 15) reads an AGPR source field's low 8 bits as the register; gfx940+
        // (LLVM 19) decodes the field like any source, AGPRs in the VGPR range.
        let gfx90a = target == Target::Gfx90a;
        return match Operand::from_src(code & 0x1ff)? {
            Operand::Vgpr(n) => Some(Operand::Agpr(n)),
            _ if gfx90a => Some(Operand::Agpr(code as u8)),
            o => Some(o),
        };
    }
    let o = Operand::from_src(code & 0x1ff)?;
    Some(o.align_scalar(slot.regs))
}

/// An 8-bit vector destination for `slot` (SGPR for `v_readlane`/`v_cmp_*_e64`/...).
fn vdst8(code: u32, slot: &Slot) -> Option<Operand> {
    let n = (code & 0xff) as u8;
    match slot.file {
        RegFile::Sgpr => sdst(u32::from(n), slot).filter(|_| n < 128),
        RegFile::Agpr => Some(Operand::Agpr(n)),
        _ => Some(Operand::Vgpr(n)),
    }
}

/// Position of the literal K of `v_madmk`/`v_fmamk` (1) and `v_madak`/`v_fmaak` (2).
fn k_position(op: Op) -> Option<usize> {
    let n = op.name();
    if n.contains("madmk") || n.contains("fmamk") {
        Some(1)
    } else if n.contains("madak") || n.contains("fmaak") {
        Some(2)
    } else {
        None
    }
}

pub(crate) fn vop12c(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    use super::inst::Encoding::*;
    let (opcode, found) = match cx.enc {
        Vop1 => ((w0 >> 9) & 0xff, (t.vop1)((w0 >> 9) & 0xff)),
        Vop2 => ((w0 >> 25) & 0x3f, (t.vop2)((w0 >> 25) & 0x3f)),
        _ => ((w0 >> 17) & 0xff, (t.vopc)((w0 >> 17) & 0xff)),
    };
    let (op, form) = found.ok_or_else(|| cx.unknown(opcode))?;
    let info = op.info();
    let bad = || cx.invalid(op);
    let mut inst = cx.inst(op, 4);
    let f_src0 = w0 & 0x1ff;
    let f_vsrc1 = (w0 >> 9) & 0xff;
    let f_vdst = (w0 >> 17) & 0xff;
    // Destinations.
    match cx.enc {
        Vopc => inst.dst[0] = Operand::VccLo,
        _ => {
            if info.dst[0].is_present() {
                inst.dst[0] = vdst8(f_vdst, &info.dst[0]).ok_or_else(bad)?;
            }
            if info.dst[1].is_present() {
                inst.dst[1] = Operand::VccLo;
            }
        }
    }
    // Sources other than src0.
    let k = k_position(op);
    if cx.enc != Vop1 && info.src[1].is_present() {
        let v1 = Operand::Vgpr(f_vsrc1 as u8);
        match k {
            Some(1) => {
                inst.src[1] = Operand::Literal;
                inst.src[2] = v1;
            }
            _ => inst.src[1] = v1,
        }
    }
    if k == Some(2) {
        inst.src[2] = Operand::Literal;
    } else if k.is_none() && info.src[2].is_present() && info.src[2].regs == 2 {
        // v_cndmask_b32 / v_addc_co_u32 / v_subb*: the mask or carry-in is VCC.
        inst.src[2] = Operand::VccLo;
    }
    match f_src0 {
        // Ops without src0 (v_nop) ignore an SDWA/DPP marker but still take its dword (LLVM 22,
        // our gfx950 reference, decodes v_nop's DPP controls).
        0xf9 | 0xfa if !(info.src[0].is_present() || (f_src0 == 0xfa && cx.target == Target::Gfx950)) => {
            cx.word(1)?;
            inst.len = 8;
        }
        // LLVM 15 reads v_swap_b32's source as a VGPR whatever the field says.
        _ if op == Op::VSwapB32 && cx.target == Target::Gfx90a => inst.src[0] = Operand::Vgpr(f_src0 as u8),
        0xf9 => {
            if form & forms::SDWA == 0 {
                return Err(bad());
            }
            let w1 = cx.word(1)?;
            inst.len = 8;
            sdwa(cx, &mut inst, w1, f_vsrc1).ok_or_else(bad)?;
        }
        0xfa => {
            if form & forms::DPP == 0 && op != Op::VNop {
                return Err(bad());
            }
            let w1 = cx.word(1)?;
            inst.len = 8;
            if info.src[0].is_present() {
                inst.src[0] = src9((w1 & 0xff) + 256, &info.src[0], cx.target).ok_or_else(bad)?;
            }
            inst.ext = Ext::Dpp(Dpp {
                ctrl: ((w1 >> 8) & 0x1ff) as u16,
                bound_ctrl: w1 & (1 << 19) != 0,
                neg: (((w1 >> 20) & 1) | (((w1 >> 22) & 1) << 1)) as u8,
                abs: (((w1 >> 21) & 1) | (((w1 >> 23) & 1) << 1)) as u8,
                bank_mask: ((w1 >> 24) & 0xf) as u8,
                row_mask: (w1 >> 28) as u8,
            });
        }
        _ => {
            if info.src[0].is_present() {
                inst.src[0] = src9(f_src0, &info.src[0], cx.target).ok_or_else(bad)?;
            }
            if k.is_some() {
                // K and a literal src0 share the one literal dword.
                inst.literal = cx.word(1)?;
                inst.len = 8;
            } else {
                cx.literal(&mut inst)?;
            }
        }
    }
    Ok(inst)
}

fn sdwa(cx: &Cx, inst: &mut Inst, w1: u32, f_vsrc1: u32) -> Option<()> {
    use super::inst::Encoding::Vopc;
    let info = inst.op.info();
    let sel = |v: u32| (v <= 6).then_some(v as u8);
    let src0_code = if w1 & (1 << 23) != 0 { w1 & 0xff } else { 256 + (w1 & 0xff) };
    if info.src[0].is_present() {
        inst.src[0] = src9(src0_code, &info.src[0], cx.target)?;
        if inst.src[0] == Operand::Literal {
            return None;
        }
    }
    if cx.enc != super::inst::Encoding::Vop1 && info.src[1].is_present() {
        let code = if w1 & (1 << 31) != 0 { f_vsrc1 } else { 256 + f_vsrc1 };
        inst.src[1] = src9(code, &info.src[1], cx.target)?;
    }
    let mut s = Sdwa {
        src_sel: [sel((w1 >> 16) & 7)?, sel((w1 >> 24) & 7)?],
        sext: (((w1 >> 19) & 1) | (((w1 >> 27) & 1) << 1)) as u8,
        neg: (((w1 >> 20) & 1) | (((w1 >> 28) & 1) << 1)) as u8,
        abs: (((w1 >> 21) & 1) | (((w1 >> 29) & 1) << 1)) as u8,
        ..Sdwa::default()
    };
    if cx.enc == Vopc {
        // SDWAB: bit 15 selects an explicit SGPR-pair destination in bits [14:8].
        if w1 & (1 << 15) != 0 {
            inst.dst[0] = sdst((w1 >> 8) & 0x7f, &info.dst[0])?;
        }
        s.dst_sel = 6;
    } else {
        s.dst_sel = sel((w1 >> 8) & 7)?;
        s.dst_unused = ((w1 >> 11) & 3) as u8;
        if s.dst_unused == 3 {
            return None;
        }
        s.clamp = w1 & (1 << 13) != 0;
        s.omod = ((w1 >> 14) & 3) as u8;
    }
    inst.ext = Ext::Sdwa(s);
    Some(())
}

pub(crate) fn vop3(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    let opcode = (w0 >> 16) & 0x3ff;
    let op = (t.vop3)(opcode).ok_or_else(|| cx.unknown(opcode))?;
    let w1 = cx.word(1)?;
    let info = op.info();
    let bad = || cx.invalid(op);
    let mut inst = cx.inst(op, 8);
    if info.dst[0].is_present() {
        inst.dst[0] = vdst8(w0, &info.dst[0]).ok_or_else(bad)?;
    }
    let vop3b = info.dst[1].is_present();
    if vop3b {
        inst.dst[1] = sdst((w0 >> 8) & 0x7f, &info.dst[1]).ok_or_else(bad)?;
    }
    for i in 0..3 {
        if info.src[i].is_present() {
            let o = src9(w1 >> (9 * i), &info.src[i], cx.target).ok_or_else(bad)?;
            if o == Operand::Literal {
                // GFX9 VOP3 has no literal constants.
                return Err(bad());
            }
            inst.src[i] = o;
        }
    }
    inst.ext = Ext::Vop3(Vop3Mods {
        abs: if vop3b { 0 } else { ((w0 >> 8) & 7) as u8 },
        op_sel: if vop3b { 0 } else { ((w0 >> 11) & 0xf) as u8 },
        clamp: w0 & (1 << 15) != 0,
        omod: ((w1 >> 27) & 3) as u8,
        neg: (w1 >> 29) as u8,
        ..Vop3Mods::default()
    });
    Ok(inst)
}

/// The operands and fields of a VOP3P-MAI word pair (`w0`, `w1`) into `inst`.
fn mai(cx: &Cx, inst: &mut Inst, w0: u32, w1: u32) -> Result<(), DecodeError> {
    let info = inst.op.info();
    let bad = || cx.invalid(inst.op);
    // acc_cd (bit 15): vdst and srcC are AGPRs; acc (w1 bits 27, 28): srcA, srcB are.
    let acc_cd = w0 & (1 << 15) != 0;
    let to_acc = |o: Operand, acc: bool| match o {
        Operand::Vgpr(n) if acc => Operand::Agpr(n),
        o => o,
    };
    inst.dst[0] = to_acc(Operand::Vgpr(w0 as u8), acc_cd);
    for i in 0..3 {
        if info.src[i].is_present() {
            // A 32-register scalar accumulator is not realigned (LLVM reads it as one
            // register); smaller tuples are.
            let slot = if info.src[i].regs >= 32 { Slot { regs: 1, ..info.src[i] } } else { info.src[i] };
            let o = src9(w1 >> (9 * i), &slot, cx.target).ok_or_else(bad)?;
            if o == Operand::Literal {
                return Err(bad());
            }
            // The sparse MFMA's third source is a VGPR of indices, not an accumulator.
            let acc = if i == 2 { acc_cd && !info.name.starts_with("v_smfmac") } else { w1 & (1 << (27 + i)) != 0 };
            inst.src[i] = to_acc(o, acc);
        }
    }
    inst.ext = Ext::Mfma(Mfma { cbsz: ((w0 >> 8) & 7) as u8, abid: ((w0 >> 11) & 0xf) as u8, blgp: (w1 >> 29) as u8 });
    Ok(())
}

/// gfx950 block-scaled MFMA: a `v_mfma_ld_scale_b32` word pair followed by an `*_f8f6f4` MFMA
/// with abid 1 is one 16-byte `v_mfma_scale_*` instruction (CDNA4 guide 7.2.1; LLVM 22
/// decodes it so). `None` when the words after the prefix are not such an MFMA: the prefix
/// then stands alone.
fn scaled_mfma(cx: &Cx, t: &Tables, w0: u32, w1: u32) -> Result<Option<Inst>, DecodeError> {
    let (Some(&w2), Some(&w3)) = (cx.words.get(2), cx.words.get(3)) else { return Ok(None) };
    if w2 >> 23 != 0b1_1010_0111 || (w2 >> 11) & 0xf != 1 {
        return Ok(None);
    }
    let Some(op) = (t.vop3px)((w2 >> 16) & 0x7f) else { return Ok(None) };
    let mut inst = cx.inst(op, 16);
    mai(cx, &mut inst, w2, w3)?;
    let Ext::Mfma(mfma) = inst.ext else { return Err(cx.invalid(op)) };
    let slot = Slot { regs: 1, file: RegFile::Any, ty: Ty::B32 };
    let scale = |code: u32| match src9(code & 0x1ff, &slot, cx.target) {
        Some(Operand::Literal) | None => Err(cx.invalid(op)),
        Some(o) => Ok(o),
    };
    inst.ext = Ext::MfmaScale(MfmaScale {
        mfma,
        scale: [scale(w1)?, scale(w1 >> 9)?],
        op_sel: ((w0 >> 11) & 3) as u8,
        op_sel_hi: ((w1 >> 27) & 3) as u8,
    });
    Ok(Some(inst))
}

pub(crate) fn vop3p(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    let opcode = (w0 >> 16) & 0x7f;
    let op = (t.vop3p)(opcode).ok_or_else(|| cx.unknown(opcode))?;
    let w1 = cx.word(1)?;
    let info = op.info();
    let bad = || cx.invalid(op);
    let mut inst = cx.inst(op, 8);
    if op == Op::VMfmaLdScaleB32 {
        if let Some(fused) = scaled_mfma(cx, t, w0, w1)? {
            return Ok(fused);
        }
    }
    // `v_mfma_ld_scale_b32` is named like an MFMA but is an ordinary two-source VOP3P op.
    if info.class == OpClass::Mfma && op != Op::VMfmaLdScaleB32 {
        mai(cx, &mut inst, w0, w1)?;
        return Ok(inst);
    }
    if info.dst[0].is_present() {
        inst.dst[0] = vdst8(w0, &info.dst[0]).ok_or_else(bad)?;
    }
    for i in 0..3 {
        if info.src[i].is_present() {
            let o = src9(w1 >> (9 * i), &info.src[i], cx.target).ok_or_else(bad)?;
            if o == Operand::Literal {
                return Err(bad());
            }
            inst.src[i] = o;
        }
    }
    inst.ext = Ext::Vop3(Vop3Mods {
        neg_hi: ((w0 >> 8) & 7) as u8,
        op_sel: ((w0 >> 11) & 7) as u8,
        op_sel_hi: (((w1 >> 27) & 3) | (((w0 >> 14) & 1) << 2)) as u8,
        clamp: w0 & (1 << 15) != 0,
        neg: (w1 >> 29) as u8,
        ..Vop3Mods::default()
    });
    Ok(inst)
}
