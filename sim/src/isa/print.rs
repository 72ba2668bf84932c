//! Disassembly text, identical to what `llvm-objdump-15`/`llvm-mc-15 --disassemble` print for
//! gfx90a (`llvm-mc-19` for gfx942). Used for log lines and checked against LLVM's text by the
//! vector test. Scalar and vector ALU here; memory encodings in `print_mem`.

use super::info::{flags, mods, Slot, Ty};
use super::inst::{Dpp, Encoding, Ext, Inst, Sdwa};
use super::operand::{InlineFloat, Operand};
use super::{Op, Target};
use std::fmt::{self, Write};

/// Prints register `base` of `file` covering `regs` registers: `v7`, `v[8:9]`.
fn reg_range(f: &mut impl Write, file: &str, base: u32, regs: u8) -> fmt::Result {
    if regs <= 1 {
        write!(f, "{file}{base}")
    } else {
        write!(f, "{file}[{base}:{}]", base + u32::from(regs) - 1)
    }
}

/// Prints an operand `regs` registers wide whose constants are read as `ty`.
pub(crate) fn operand(f: &mut impl Write, o: Operand, regs: u8, ty: Ty, literal: u32, target: Target) -> fmt::Result {
    let pair = |lo: &str, full: &str| {
        if regs >= 2 {
            full.to_string()
        } else {
            lo.to_string()
        }
    };
    match o {
        Operand::None => Ok(()),
        Operand::Sgpr(n) => reg_range(f, "s", n.into(), regs),
        Operand::Vgpr(n) => reg_range(f, "v", n.into(), regs),
        Operand::Agpr(n) => reg_range(f, "a", n.into(), regs),
        Operand::Ttmp(n) => reg_range(f, "ttmp", n.into(), regs),
        Operand::FlatScratchLo => f.write_str(&pair("flat_scratch_lo", "flat_scratch")),
        Operand::FlatScratchHi => f.write_str("flat_scratch_hi"),
        Operand::XnackMaskLo => f.write_str(&pair("xnack_mask_lo", "xnack_mask")),
        Operand::XnackMaskHi => f.write_str("xnack_mask_hi"),
        Operand::VccLo => f.write_str(&pair("vcc_lo", "vcc")),
        Operand::VccHi => f.write_str("vcc_hi"),
        Operand::ExecLo => f.write_str(&pair("exec_lo", "exec")),
        Operand::ExecHi => f.write_str("exec_hi"),
        Operand::M0 => f.write_str("m0"),
        Operand::Null => f.write_str("null"),
        Operand::Int(i) => write!(f, "{i}"),
        // An f16 constant read as a 16-bit integer prints in hex (LLVM 19: not when packed).
        Operand::Float(x) => match ty {
            Ty::I16 => write!(f, "0x{:x}", x.bits16()),
            Ty::PkI16 if target == Target::Gfx90a => write!(f, "0x{:x}", x.bits16()),
            _ => f.write_str(x.text(matches!(ty, Ty::I64 | Ty::F64))),
        },
        Operand::Literal => literal_text(f, literal, ty, target),
        Operand::FlatScratchBaseLo => f.write_str("src_flat_scratch_base_lo"),
        Operand::FlatScratchBaseHi => f.write_str("src_flat_scratch_base_hi"),
        Operand::SharedBase => f.write_str("src_shared_base"),
        Operand::SharedLimit => f.write_str("src_shared_limit"),
        Operand::PrivateBase => f.write_str("src_private_base"),
        Operand::PrivateLimit => f.write_str("src_private_limit"),
        Operand::PopsExitingWaveId => f.write_str("src_pops_exiting_wave_id"),
        Operand::Vccz => f.write_str("src_vccz"),
        Operand::Execz => f.write_str("src_execz"),
        Operand::Scc => f.write_str("src_scc"),
        Operand::LdsDirect => f.write_str("src_lds_direct"),
    }
}

/// LLVM prints a literal that equals an inline constant as that constant, else in hex; LLVM 22
/// (our gfx950 reference) marks such a literal instead: `lit(0x40)`.
fn literal_text(f: &mut impl Write, v: u32, ty: Ty, target: Target) -> fmt::Result {
    // (A double's literal is its high half, printed as a float: no marker.)
    if target == Target::Gfx950 && ty != Ty::F64 {
        let mut text = String::new();
        literal_value_text(&mut text, v, ty, target)?;
        return if text.starts_with("0x") { f.write_str(&text) } else { write!(f, "lit(0x{v:x})") };
    }
    literal_value_text(f, v, ty, target)
}

fn literal_value_text(f: &mut impl Write, v: u32, ty: Ty, target: Target) -> fmt::Result {
    match ty {
        // LLVM 19 reads a double's literal as its high half and prints it as a float when
        // that is an inline value.
        Ty::F64 if target.is_gfx94x_family() => {
            let d = u64::from(v) << 32;
            if d == 0 {
                write!(f, "0")
            } else {
                match InlineFloat::from_bits(d, Ty::F64) {
                    Some(x) => f.write_str(x.text(true)),
                    None => write!(f, "0x{v:x}"),
                }
            }
        }
        Ty::I64 | Ty::F64 => {
            if v <= 64 {
                write!(f, "{v}")
            } else {
                write!(f, "0x{v:x}")
            }
        }
        // LLVM 19: a packed-f16 literal is a whole dword.
        Ty::PkF16 if target.is_gfx94x_family() => {
            let s = v as i32;
            if (-16..=64).contains(&s) {
                write!(f, "{s}")
            } else if v >> 16 == 0 {
                match InlineFloat::from_bits(v.into(), Ty::F16) {
                    Some(x) => f.write_str(x.text(false)),
                    None => write!(f, "0x{v:x}"),
                }
            } else {
                write!(f, "0x{v:x}")
            }
        }
        // LLVM 19 checks a 16-bit integer literal's whole dword against the 32-bit inline
        // values, then prints its low half.
        Ty::I16 | Ty::PkI16 if target.is_gfx94x_family() => {
            let s = v as i32;
            if (-16..=64).contains(&s) {
                write!(f, "{s}")
            } else {
                match InlineFloat::from_bits(v.into(), Ty::B32) {
                    Some(x) => f.write_str(x.text(false)),
                    None => write!(f, "0x{:x}", v & 0xffff),
                }
            }
        }
        Ty::I16 | Ty::F16 | Ty::PkI16 | Ty::PkF16 => {
            let h = v & 0xffff;
            let s = h as u16 as i16;
            if (-16..=64).contains(&s) {
                write!(f, "{s}")
            } else if matches!(ty, Ty::F16 | Ty::PkF16) {
                match InlineFloat::from_bits(h.into(), Ty::F16) {
                    Some(x) => f.write_str(x.text(false)),
                    None => write!(f, "0x{h:x}"),
                }
            } else {
                write!(f, "0x{h:x}")
            }
        }
        Ty::B32 => {
            let s = v as i32;
            if (-16..=64).contains(&s) {
                write!(f, "{s}")
            } else {
                match InlineFloat::from_bits(v.into(), Ty::B32) {
                    Some(x) => f.write_str(x.text(false)),
                    None => write!(f, "0x{v:x}"),
                }
            }
        }
    }
}

/// Writes `, ` before every operand but the first.
pub(crate) struct List<'a, W: Write> {
    pub f: &'a mut W,
    pub first: bool,
    pub target: Target,
}

impl<W: Write> List<'_, W> {
    pub fn sep(&mut self) -> fmt::Result {
        let s = if self.first { " " } else { ", " };
        self.first = false;
        self.f.write_str(s)
    }
    pub fn text(&mut self, s: &str) -> fmt::Result {
        self.sep()?;
        self.f.write_str(s)
    }
    pub fn op(&mut self, o: Operand, slot: Slot, lit: u32) -> fmt::Result {
        self.sep()?;
        operand(self.f, o, slot.regs, slot.ty, lit, self.target)
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(64);
        match self.enc {
            Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc => salu(&mut s, self)?,
            Encoding::Sopk => sopk(&mut s, self)?,
            Encoding::Sopp => sopp(&mut s, self)?,
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc | Encoding::Vop3 | Encoding::Vop3p => valu(&mut s, self)?,
            _ => super::print_mem::mem(&mut s, self)?,
        }
        f.write_str(&s)
    }
}

fn salu(s: &mut String, i: &Inst) -> fmt::Result {
    let info = i.info();
    s.push_str(info.name);
    let mut l = List { f: s, first: true, target: i.target };
    if !i.dst[0].is_none() {
        l.op(i.dst[0], info.dst[0], i.literal)?;
    }
    for k in 0..2 {
        if i.src[k].is_none() {
            continue;
        }
        let constant = i.src[k].is_inline_const() || i.src[k] == Operand::Literal;
        if constant && i.op.mods(i.target) & (mods::SRC0_NOCONST << k) != 0 {
            l.sep()?;
            invalid_immediate(l.f, i, k)?;
        } else {
            l.op(i.src[k], info.src[k], i.literal)?;
        }
    }
    if let (Op::SSetGprIdxOn, Ext::Imm(m)) = (i.op, i.ext) {
        l.sep()?;
        gpr_idx(l.f, m)?;
    }
    Ok(())
}

/// A constant where only registers are allowed: LLVM 15 prints `/*invalid immediate*/`,
/// LLVM 19 the value followed by `/*Invalid immediate*/`.
fn invalid_immediate(s: &mut String, i: &Inst, k: usize) -> fmt::Result {
    if i.target == Target::Gfx90a {
        s.push_str("/*invalid immediate*/");
        return Ok(());
    }
    // LLVM 19 prints the rejected constant as a 32-bit value (LLVM 22 without `lit()`).
    let slot = i.info().src[k];
    if i.src[k] == Operand::Literal {
        literal_value_text(s, i.literal, Ty::B32, i.target)?;
    } else {
        operand(s, i.src[k], slot.regs, Ty::B32, i.literal, i.target)?;
    }
    s.push_str("/*Invalid immediate*/");
    Ok(())
}

fn gpr_idx(s: &mut String, m: u16) -> fmt::Result {
    if m > 15 {
        return write!(s, "0x{m:x}");
    }
    s.push_str("gpr_idx(");
    let names = ["SRC0", "SRC1", "SRC2", "DST"];
    let mut first = true;
    for (b, n) in names.iter().enumerate() {
        if m & (1 << b) != 0 {
            if !first {
                s.push(',');
            }
            first = false;
            s.push_str(n);
        }
    }
    s.push(')');
    Ok(())
}

fn hwreg_name(id: u16, target: Target) -> Option<&'static str> {
    Some(match id {
        20 if target.is_gfx94x_family() => "HW_REG_XCC_ID",
        21 if target.is_gfx94x_family() => "HW_REG_SQ_PERF_SNAPSHOT_DATA",
        22 if target.is_gfx94x_family() => "HW_REG_SQ_PERF_SNAPSHOT_DATA1",
        23 if target.is_gfx94x_family() => "HW_REG_SQ_PERF_SNAPSHOT_PC_LO",
        24 if target.is_gfx94x_family() => "HW_REG_SQ_PERF_SNAPSHOT_PC_HI",
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        4 => "HW_REG_HW_ID",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        16 => "HW_REG_TBA_LO",
        17 => "HW_REG_TBA_HI",
        18 => "HW_REG_TMA_LO",
        19 => "HW_REG_TMA_HI",
        _ => return None,
    })
}

fn hwreg(s: &mut String, v: u16, target: Target) -> fmt::Result {
    let (id, off, size) = (v & 0x3f, (v >> 6) & 0x1f, ((v >> 11) & 0x1f) + 1);
    s.push_str("hwreg(");
    match hwreg_name(id, target) {
        Some(n) => s.push_str(n),
        None => write!(s, "{id}")?,
    }
    if off != 0 || size != 32 {
        write!(s, ", {off}, {size}")?;
    }
    s.push(')');
    Ok(())
}

fn sopk(s: &mut String, i: &Inst) -> fmt::Result {
    let info = i.info();
    s.push_str(info.name);
    let imm = i.simm16() as u16;
    let mut l = List { f: s, first: true, target: i.target };
    match i.op {
        Op::SGetregB32 => {
            l.op(i.dst[0], info.dst[0], 0)?;
            l.sep()?;
            hwreg(l.f, imm, i.target)
        }
        Op::SSetregB32 => {
            l.sep()?;
            hwreg(l.f, imm, i.target)?;
            l.op(i.src[0], info.src[0], 0)
        }
        Op::SSetregImm32B32 => {
            l.sep()?;
            hwreg(l.f, imm, i.target)?;
            l.sep()?;
            write!(l.f, "0x{:x}", i.literal)
        }
        Op::SCbranchIFork | Op::SCallB64 => {
            let o = if i.dst[0].is_none() { i.src[0] } else { i.dst[0] };
            l.op(o, Slot { regs: 2, ..info.dst[0] }, 0)?;
            l.sep()?;
            write!(l.f, "{imm}")
        }
        _ => {
            let (o, slot) = if i.dst[0].is_none() { (i.src[0], info.src[0]) } else { (i.dst[0], info.dst[0]) };
            l.op(o, slot, 0)?;
            l.sep()?;
            write!(l.f, "0x{imm:x}")
        }
    }
}

fn u16_imm(s: &mut String, v: u16) -> fmt::Result {
    if v <= 64 {
        write!(s, " {v}")
    } else {
        write!(s, " 0x{v:x}")
    }
}

fn sopp(s: &mut String, i: &Inst) -> fmt::Result {
    let name = i.info().name;
    s.push_str(name);
    let imm = i.simm16() as u16;
    match i.op {
        Op::SWaitcnt => waitcnt(s, imm),
        Op::SSendmsg | Op::SSendmsghalt => {
            s.push(' ');
            super::print_mem::sendmsg(s, imm, i.target)
        }
        Op::SSetGprIdxMode => {
            s.push(' ');
            gpr_idx(s, imm)
        }
        Op::SEndpgm => {
            if imm != 0 {
                write!(s, " {imm}")?;
            }
            Ok(())
        }
        _ if i.op.has_flag(super::info::flags::BRANCH) => write!(s, " {imm}"),
        Op::SWakeup
        | Op::SBarrier
        | Op::SIcacheInv
        | Op::SEndpgmSaved
        | Op::SEndpgmOrderedPsDone
        | Op::SSetGprIdxOff
        | Op::STtracedata => Ok(()),
        _ => u16_imm(s, imm),
    }
}

fn waitcnt(s: &mut String, v: u16) -> fmt::Result {
    let vm = (v & 0xf) | ((v >> 14) << 4);
    let exp = (v >> 4) & 7;
    let lgkm = (v >> 8) & 0xf;
    let mut any = false;
    let mut part = |s: &mut String, name: &str, val: u16, max: u16| -> fmt::Result {
        if val != max {
            write!(s, " {name}({val})")?;
            any = true;
        }
        Ok(())
    };
    part(s, "vmcnt", vm, 63)?;
    part(s, "expcnt", exp, 7)?;
    part(s, "lgkmcnt", lgkm, 15)?;
    if !any {
        write!(s, " vmcnt({vm}) expcnt({exp}) lgkmcnt({lgkm})")?;
    }
    Ok(())
}

const SEL: [&str; 7] = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"];

/// Source `k` with its VOP3/SDWA/DPP modifiers.
fn modded(f: &mut String, i: &Inst, k: usize, slot: Slot, neg: bool, abs: bool, sext: bool) -> fmt::Result {
    // A negated constant prints as `neg(c)` (so that `-1` negated is not `--1`).
    let constant = i.src[k].is_inline_const() || i.src[k] == Operand::Literal;
    let neg_call = neg && !abs && constant;
    if neg_call {
        f.push_str("neg(");
    } else if neg {
        f.push('-');
    }
    if abs {
        f.push('|');
    }
    if sext {
        f.push_str("sext(");
    }
    operand(f, i.src[k], slot.regs, slot.ty, i.literal, i.target)?;
    if sext {
        f.push(')');
    }
    if abs {
        f.push('|');
    }
    if neg_call {
        f.push(')');
    }
    Ok(())
}

fn mask_list(s: &mut String, name: &str, v: u8, n: usize) -> fmt::Result {
    write!(s, " {name}:[")?;
    for k in 0..n {
        if k > 0 {
            s.push(',');
        }
        s.push(if v & (1 << k) != 0 { '1' } else { '0' });
    }
    s.push(']');
    Ok(())
}

fn omod(s: &mut String, o: u8) {
    match o {
        1 => s.push_str(" mul:2"),
        2 => s.push_str(" mul:4"),
        3 => s.push_str(" div:2"),
        _ => {}
    }
}

fn valu(s: &mut String, i: &Inst) -> fmt::Result {
    let info = i.info();
    let m = i.op.mods(i.target);
    s.push_str(info.name);
    match (i.enc, i.ext) {
        (Encoding::Vop3, _) if i.op.has_flag(flags::E64_SUFFIX) => s.push_str("_e64"),
        (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, Ext::Sdwa(_)) => s.push_str("_sdwa"),
        (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, Ext::Dpp(_)) if i.op != Op::VNop => s.push_str("_dpp"),
        (Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc, _) if i.op.has_flag(flags::E32_SUFFIX) => s.push_str("_e32"),
        _ => {}
    }
    let mut first = true;
    let mut sep = |s: &mut String| {
        s.push_str(if first { " " } else { ", " });
        first = false;
    };
    for k in 0..2 {
        if !i.dst[k].is_none() {
            sep(s);
            operand(s, i.dst[k], info.dst[k].regs, info.dst[k].ty, 0, i.target)?;
        }
    }
    let nsrc = (0..3).filter(|&k| info.src[k].is_present()).count();
    let mix = info.name.starts_with("v_fma_mix") || info.name.starts_with("v_mad_mix");
    for k in 0..3 {
        if i.src[k].is_none() {
            continue;
        }
        sep(s);
        let bit = |v: u8| v & (1 << k) != 0;
        match i.ext {
            _ if m & (mods::SRC0_NOCONST << k) != 0 && (i.src[k].is_inline_const() || i.src[k] == Operand::Literal) => {
                // LLVM 22 keeps the float modifiers around the rejected constant.
                let (neg, abs) = match i.ext {
                    Ext::Vop3(v) if i.target == Target::Gfx950 && i.enc == Encoding::Vop3 => {
                        (bit(v.neg) && m & [mods::NEG, mods::NEG_SRC1, mods::NEG_SRC2][k] != 0, bit(v.abs))
                    }
                    _ => (false, false),
                };
                s.push_str(if neg && !abs {
                    "neg("
                } else if neg {
                    "-"
                } else {
                    ""
                });
                s.push_str(if abs { "|" } else { "" });
                invalid_immediate(s, i, k)?;
                s.push_str(if abs { "|" } else { "" });
                s.push_str(if neg && !abs { ")" } else { "" });
            }
            // LLVM 22 reads a bf16 source's literal as 16 bits: `lit()` when they are an inline
            // integer or bf16 value, hex otherwise.
            _ if i.src[k] == Operand::Literal && bf16_source(i) => bf16_literal(s, i)?,
            // gfx950 `v_bitop3_*`: the abs/neg/omod bits are the truth table.
            _ if i.bitop3().is_some() => modded(s, i, k, info.src[k], false, false, false)?,
            // The madmk/madak constant K prints in hex.
            _ if i.src[k] == Operand::Literal && k > 0 && k_literal(i.op) => write!(s, "0x{:x}", i.literal)?,
            Ext::Vop3(v) if i.enc == Encoding::Vop3p => {
                if mix {
                    modded(s, i, k, info.src[k], bit(v.neg), bit(v.neg_hi), false)?
                } else {
                    modded(s, i, k, info.src[k], false, false, false)?
                }
            }
            // Integer operands with input modifiers: the neg bit reads as sign extension.
            Ext::Vop3(v) if m & (mods::SRC0_SEXT << k) != 0 => modded(s, i, k, info.src[k], false, false, bit(v.neg))?,
            Ext::Vop3(v) => {
                let (neg, abs) =
                    [(mods::NEG, mods::ABS), (mods::NEG_SRC1, mods::ABS_SRC1), (mods::NEG_SRC2, mods::ABS_SRC2)][k];
                modded(s, i, k, info.src[k], bit(v.neg) && m & neg != 0, bit(v.abs) && m & abs != 0, false)?
            }
            // gfx950 f8f6f4 MFMA sources: width from the format (cbsz/blgp).
            // LLVM takes only registers for a scaled MFMA's A and B.
            Ext::MfmaScale(_) if k < 2 && (i.src[k].is_inline_const() || i.src[k] == Operand::Literal) => {
                invalid_immediate(s, i, k)?
            }
            Ext::Mfma(_) | Ext::MfmaScale(_) if k < 2 => {
                modded(s, i, k, Slot { regs: i.src_regs(k), ..info.src[k] }, false, false, false)?
            }
            // An MFMA accumulator given as a scalar is one register.
            Ext::Mfma(_)
                if k == 2 && info.src[k].regs >= 32 && matches!(i.src[k], Operand::Sgpr(_) | Operand::Ttmp(_)) =>
            {
                let slot = Slot { regs: 1, ..info.src[k] };
                modded(s, i, k, slot, false, false, false)?
            }
            Ext::Sdwa(w) if k < 2 => {
                // v_cmp_class_*: src0 is the float, src1 the integer class mask.
                let class = info.name.contains("_class_") || info.name.contains("ldexp");
                let fl = m & mods::SDWA_ABS_NEG != 0 && !(class && k == 1);
                let int = m & mods::SDWA_SEXT != 0 || (class && k == 1);
                modded(s, i, k, info.src[k], bit(w.neg) && fl, bit(w.abs) && fl, bit(w.sext) && int)?
            }
            Ext::Dpp(d) if k < 2 && m & (mods::SRC0_SEXT << k) != 0 => {
                modded(s, i, k, info.src[k], false, false, bit(d.neg))?
            }
            Ext::Dpp(d) if k < 2 => {
                // LLVM 22 prints no float modifiers on an ldexp exponent.
                let exponent = k == 1 && i.target == Target::Gfx950 && info.name.contains("ldexp");
                let fl = m & mods::DPP_ABS_NEG != 0 && !exponent;
                modded(s, i, k, info.src[k], bit(d.neg) && fl, bit(d.abs) && fl, false)?
            }
            _ => modded(s, i, k, info.src[k], false, false, false)?,
        }
    }
    match i.ext {
        Ext::Vop3(v) if i.enc == Encoding::Vop3p => {
            let n = nsrc;
            let full = ((1u16 << n) - 1) as u8;
            if m & mods::OP_SEL != 0 && v.op_sel & full != 0 {
                mask_list(s, "op_sel", v.op_sel, n)?;
            }
            let default_hi = if mix { 0 } else { full };
            if m & mods::OP_SEL_HI != 0 && v.op_sel_hi & full != default_hi {
                mask_list(s, "op_sel_hi", v.op_sel_hi, n)?;
            }
            if !mix {
                if m & mods::NEG != 0 && v.neg & full != 0 {
                    mask_list(s, "neg_lo", v.neg, n)?;
                }
                if m & mods::NEG_HI != 0 && v.neg_hi & full != 0 {
                    mask_list(s, "neg_hi", v.neg_hi, n)?;
                }
            }
            if v.clamp && m & mods::CLAMP != 0 {
                s.push_str(" clamp");
            }
        }
        Ext::Vop3(v) if matches!(i.op, Op::VPermlane16SwapB32 | Op::VPermlane32SwapB32) => {
            // gfx950 permlane swaps: op_sel bit 1 is bound_ctrl, bit 0 fetch-inactive.
            if v.op_sel & 2 != 0 {
                s.push_str(" bound_ctrl:1");
            }
            if v.op_sel & 1 != 0 {
                s.push_str(" fi:1");
            }
        }
        Ext::Vop3(v) => {
            if let Some(table) = i.bitop3().filter(|&t| t != 0) {
                if table > 9 {
                    write!(s, " bitop3:0x{table:x}")?;
                } else {
                    write!(s, " bitop3:{table}")?;
                }
            }
            if m & mods::OP_SEL != 0 && v.op_sel != 0 {
                if info.name.starts_with("v_cvt_scalef32_pk_fp4_") {
                    // Two sources, and op_sel bits 2, 3 choose the destination byte.
                    mask_list(s, "op_sel", v.op_sel, 4)?;
                } else if info.name.starts_with("v_cvt_sr_") && !info.name.ends_with("16_f32") {
                    // The stochastic-rounding fp8 conversions print all four bits (bits 2, 3
                    // select the destination byte).
                    mask_list(s, "op_sel", v.op_sel, 4)?;
                } else {
                    // One entry per source, then the destination's (bit 3).
                    let bits = (v.op_sel & ((1 << nsrc) - 1)) | ((v.op_sel >> 3) & 1) << nsrc;
                    mask_list(s, "op_sel", bits, nsrc + 1)?;
                }
            }
            if v.clamp && m & mods::CLAMP != 0 {
                s.push_str(" clamp");
            }
            if m & mods::OMOD != 0 && i.bitop3().is_none() {
                omod(s, v.omod);
            }
        }
        Ext::MfmaScale(x) => {
            // The prefix's scale sources (LLVM accepts only VGPRs: a constant is an "invalid
            // immediate"), then op_sel/op_sel_hi with a third entry that is always 0 (the
            // fused MFMA's abid bits), then the formats.
            for o in x.scale {
                sep(s);
                if o.is_inline_const() || o == Operand::Literal {
                    operand(s, o, 1, Ty::B32, i.literal, i.target)?;
                    s.push_str("/*Invalid immediate*/");
                } else {
                    operand(s, o, 1, Ty::B32, i.literal, i.target)?;
                }
            }
            if x.op_sel & 3 != 0 {
                mask_list(s, "op_sel", x.op_sel & 3, 3)?;
            }
            mask_list(s, "op_sel_hi", x.op_sel_hi & 3, 3)?;
            if x.mfma.cbsz != 0 {
                write!(s, " cbsz:{}", x.mfma.cbsz)?;
            }
            if x.mfma.blgp != 0 {
                write!(s, " blgp:{}", x.mfma.blgp)?;
            }
        }
        Ext::Mfma(x) => {
            if x.cbsz != 0 {
                write!(s, " cbsz:{}", x.cbsz)?;
            }
            if x.abid != 0 {
                write!(s, " abid:{}", x.abid)?;
            }
            // gfx940+ f64 MFMA: the blgp field negates the sources.
            if i.target.is_gfx94x_family() && i.info().name.contains("_f64") {
                if x.blgp != 0 {
                    mask_list(s, "neg", x.blgp, 3)?;
                }
            } else if x.blgp != 0 {
                write!(s, " blgp:{}", x.blgp)?;
            }
        }
        Ext::Sdwa(w) => sdwa_suffix(s, i, &w)?,
        Ext::Dpp(d) => dpp_suffix(s, i, &d)?,
        _ => {}
    }
    Ok(())
}

fn sdwa_suffix(s: &mut String, i: &Inst, w: &Sdwa) -> fmt::Result {
    let m = i.op.mods(i.target);
    // The fp8/bf8 -> f32 conversions have no destination select.
    let no_dst = i.info().name.contains("_f32_fp8") || i.info().name.contains("_f32_bf8");
    if i.enc != Encoding::Vopc && !no_dst {
        if w.clamp && m & mods::SDWA_CLAMP != 0 {
            s.push_str(" clamp");
        }
        if m & mods::SDWA_OMOD != 0 {
            omod(s, w.omod);
        }
        write!(s, " dst_sel:{}", SEL[usize::from(w.dst_sel)])?;
        write!(s, " dst_unused:{}", ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"][usize::from(w.dst_unused)])?;
    }
    write!(s, " src0_sel:{}", SEL[usize::from(w.src_sel[0])])?;
    if i.enc != Encoding::Vop1 {
        write!(s, " src1_sel:{}", SEL[usize::from(w.src_sel[1])])?;
    }
    Ok(())
}

/// `v_madmk`/`v_madak`/`v_fmamk`/`v_fmaak`: a literal K besides the sources.
fn k_literal(op: Op) -> bool {
    let n = op.name();
    ["madmk", "madak", "fmamk", "fmaak"].iter().any(|k| n.contains(k))
}

fn dpp_suffix(s: &mut String, i: &Inst, d: &Dpp) -> fmt::Result {
    let c = d.ctrl;
    let info = i.info();
    // gfx90a: 64-bit source; gfx940+ ("DP ALU"): 64-bit source or result.
    let dpp64 = info.src[0].regs == 2 || (i.target.is_gfx94x_family() && info.dst[0].regs == 2);
    match c {
        _ if dpp64 && !(0x150..=0x15f).contains(&c) => s.push_str(match i.target {
            Target::Gfx90a => " /* 64 bit dpp only supports row_newbcast */",
            Target::Gfx942 | Target::Gfx950 => " /* DP ALU dpp only supports row_newbcast */",
        }),
        0x000..=0x0ff => write!(s, " quad_perm:[{},{},{},{}]", c & 3, (c >> 2) & 3, (c >> 4) & 3, (c >> 6) & 3)?,
        0x101..=0x10f => write!(s, " row_shl:{}", c & 0xf)?,
        0x111..=0x11f => write!(s, " row_shr:{}", c & 0xf)?,
        0x121..=0x12f => write!(s, " row_ror:{}", c & 0xf)?,
        0x130 => s.push_str(" wave_shl:1"),
        0x134 => s.push_str(" wave_rol:1"),
        0x138 => s.push_str(" wave_shr:1"),
        0x13c => s.push_str(" wave_ror:1"),
        0x140 => s.push_str(" row_mirror"),
        0x141 => s.push_str(" row_half_mirror"),
        0x142 => s.push_str(" row_bcast:15"),
        0x143 => s.push_str(" row_bcast:31"),
        0x150..=0x15f => write!(s, " row_newbcast:{}", c & 0xf)?,
        0x160..=0x16f => s.push_str(" /* row_xmask is not supported on ASICs earlier than GFX10 */"),
        _ => s.push_str(" /* Invalid dpp_ctrl value */"),
    }
    write!(s, " row_mask:0x{:x} bank_mask:0x{:x}", d.row_mask, d.bank_mask)?;
    if d.bound_ctrl {
        s.push_str(" bound_ctrl:1");
    }
    Ok(())
}

/// Ops whose sources are bf16 (gfx950): `v_cvt_f32_bf16`, `v_dot2*_bf16`.
fn bf16_source(i: &Inst) -> bool {
    i.target == Target::Gfx950 && {
        let n = i.info().name;
        n == "v_cvt_f32_bf16" || (n.starts_with("v_dot2") && n.ends_with("_bf16"))
    }
}

/// `v_cvt_f32_bf16` checks the low half (an inline integer or bf16 value); the packed
/// `v_dot2*_bf16` only the whole dword as an inline integer.
fn bf16_literal(s: &mut String, i: &Inst) -> fmt::Result {
    let v = i.literal;
    let h = v as u16;
    let marked = if i.op == Op::VCvtF32Bf16 {
        (-16..=64).contains(&(h as i16)) || InlineFloat::ALL.into_iter().any(|x| x.bits(Ty::B32) == u64::from(h) << 16)
    } else {
        (-16..=64).contains(&(v as i32))
    };
    if marked {
        write!(s, "lit(0x{v:x})")
    } else {
        write!(s, "0x{v:x}")
    }
}
