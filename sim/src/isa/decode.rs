//! Decoder entry point: classifies the first dword into an encoding, looks the opcode up in the
//! target's generated map, and decodes the scalar encodings (SOP*, SMEM). Vector ALU and memory
//! encodings are in `decode_vop` and `decode_mem`. Pure and panic-free on any input.

use super::gen::{gfx90a, gfx942, gfx950};
use super::info::{OpInfo, RegFile, Slot};
use super::inst::{Encoding, Ext, Inst, Smem};
use super::operand::Operand;
use super::{decode_mem, decode_vop, Op, Target};

/// Why words could not be decoded. Carries what the interpreter needs to report the PC.
#[derive(Copy, Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("truncated {encoding:?} instruction: needs {need} dwords, {have} available")]
    Truncated { encoding: Option<Encoding>, need: usize, have: usize },
    #[error("unknown {encoding:?} opcode {opcode:#x} (word {word:#010x})")]
    Unknown { encoding: Encoding, opcode: u32, word: u32 },
    #[error("invalid operand or field in {encoding:?} instruction {op} (word {word:#010x})")]
    Invalid { encoding: Encoding, op: Op, word: u32 },
    #[error("unsupported encoding (EXP/VINTRP or reserved prefix) in word {word:#010x}")]
    Unsupported { word: u32 },
}

/// The opcode maps of one target.
pub(crate) struct Tables {
    pub sop1: fn(u32) -> Option<Op>,
    pub sop2: fn(u32) -> Option<Op>,
    pub sopk: fn(u32) -> Option<Op>,
    pub sopc: fn(u32) -> Option<Op>,
    pub sopp: fn(u32) -> Option<Op>,
    pub smem: fn(u32) -> Option<Op>,
    pub vop1: fn(u32) -> Option<(Op, u8)>,
    pub vop2: fn(u32) -> Option<(Op, u8)>,
    pub vopc: fn(u32) -> Option<(Op, u8)>,
    pub vop3: fn(u32) -> Option<Op>,
    pub vop3p: fn(u32) -> Option<Op>,
    /// gfx950 block-scaled MFMAs, by the opcode of the MFMA after the `v_mfma_ld_scale_b32`.
    pub vop3px: fn(u32) -> Option<Op>,
    pub ds: fn(u32) -> Option<Op>,
    pub flat: fn(u32) -> Option<Op>,
    pub global: fn(u32) -> Option<Op>,
    pub scratch: fn(u32) -> Option<Op>,
    pub mubuf: fn(u32) -> Option<Op>,
    pub mtbuf: fn(u32) -> Option<Op>,
    pub mimg: fn(u32) -> Option<Op>,
}

macro_rules! tables {
    ($m:ident) => {
        Tables {
            sop1: $m::sop1,
            sop2: $m::sop2,
            sopk: $m::sopk,
            sopc: $m::sopc,
            sopp: $m::sopp,
            smem: $m::smem,
            vop1: $m::vop1,
            vop2: $m::vop2,
            vopc: $m::vopc,
            vop3: $m::vop3,
            vop3p: $m::vop3p,
            vop3px: $m::vop3px,
            ds: $m::ds,
            flat: $m::flat,
            global: $m::global,
            scratch: $m::scratch,
            mubuf: $m::mubuf,
            mtbuf: $m::mtbuf,
            mimg: $m::mimg,
        }
    };
}

static GFX90A: Tables = tables!(gfx90a);
static GFX942: Tables = tables!(gfx942);
static GFX950: Tables = tables!(gfx950);

pub(crate) fn tables(target: Target) -> &'static Tables {
    match target {
        Target::Gfx90a => &GFX90A,
        Target::Gfx942 => &GFX942,
        Target::Gfx950 => &GFX950,
    }
}

/// Decoding state shared by the per-encoding decoders.
pub(crate) struct Cx<'a> {
    pub words: &'a [u32],
    pub target: Target,
    pub enc: Encoding,
}

impl Cx<'_> {
    pub fn word(&self, i: usize) -> Result<u32, DecodeError> {
        self.words.get(i).copied().ok_or(DecodeError::Truncated {
            encoding: Some(self.enc),
            need: i + 1,
            have: self.words.len(),
        })
    }
    pub fn unknown(&self, opcode: u32) -> DecodeError {
        DecodeError::Unknown { encoding: self.enc, opcode, word: self.words.first().copied().unwrap_or(0) }
    }
    pub fn invalid(&self, op: Op) -> DecodeError {
        DecodeError::Invalid { encoding: self.enc, op, word: self.words.first().copied().unwrap_or(0) }
    }
    /// A new instruction of `len` bytes with no operands yet.
    pub fn inst(&self, op: Op, len: u8) -> Inst {
        Inst {
            op,
            enc: self.enc,
            len,
            target: self.target,
            dst: [Operand::None; 2],
            src: [Operand::None; 3],
            literal: 0,
            ext: Ext::None,
        }
    }
    /// Appends the literal dword if any source is `Literal`.
    pub fn literal(&self, inst: &mut Inst) -> Result<(), DecodeError> {
        if inst.src.contains(&Operand::Literal) {
            let idx = usize::from(inst.len / 4);
            inst.literal = self.word(idx)?;
            inst.len += 4;
        }
        Ok(())
    }
}

/// A scalar source (8-bit SSRC) for `slot`.
pub(crate) fn ssrc(code: u32, slot: &Slot) -> Option<Operand> {
    Operand::from_src(code & 0xff).map(|o| o.align_scalar(slot.regs))
}

/// A scalar destination (7-bit SDST) for `slot`.
pub(crate) fn sdst(code: u32, slot: &Slot) -> Option<Operand> {
    Operand::from_sdst(code & 0x7f).map(|o| o.align_scalar(slot.regs))
}

/// Decodes the instruction that starts at `words[0]`. Never panics; an unknown opcode or an
/// invalid field is an error the caller reports with its PC.
pub fn decode(words: &[u32], target: Target) -> Result<Inst, DecodeError> {
    let w0 = *words.first().ok_or(DecodeError::Truncated { encoding: None, need: 1, have: 0 })?;
    let t = tables(target);
    let enc = match w0 >> 23 {
        0b1_0111_1101 => Encoding::Sop1,
        0b1_0111_1110 => Encoding::Sopc,
        0b1_0111_1111 => Encoding::Sopp,
        0b1_1010_0111 => Encoding::Vop3p,
        _ if w0 >> 28 == 0b1011 => Encoding::Sopk,
        _ if w0 >> 30 == 0b10 => Encoding::Sop2,
        _ if w0 >> 25 == 0b011_1111 => Encoding::Vop1,
        _ if w0 >> 25 == 0b011_1110 => Encoding::Vopc,
        _ if w0 >> 31 == 0 => Encoding::Vop2,
        _ => match w0 >> 26 {
            0b110000 => Encoding::Smem,
            0b110100 => Encoding::Vop3,
            0b110110 => Encoding::Ds,
            0b110111 => match (w0 >> 14) & 3 {
                0 => Encoding::Flat,
                1 => Encoding::Scratch,
                2 => Encoding::Global,
                _ => return Err(DecodeError::Unsupported { word: w0 }),
            },
            0b111000 => Encoding::Mubuf,
            0b111010 => Encoding::Mtbuf,
            0b111100 => Encoding::Mimg,
            _ => return Err(DecodeError::Unsupported { word: w0 }),
        },
    };
    let cx = Cx { words, target, enc };
    match enc {
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopk | Encoding::Sopc | Encoding::Sopp => salu(&cx, t, w0),
        Encoding::Smem => smem(&cx, t, w0),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => decode_vop::vop12c(&cx, t, w0),
        Encoding::Vop3 => decode_vop::vop3(&cx, t, w0),
        Encoding::Vop3p => decode_vop::vop3p(&cx, t, w0),
        _ => decode_mem::mem(&cx, t, w0),
    }
}

fn salu(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    let (opcode, table) = match cx.enc {
        Encoding::Sop1 => ((w0 >> 8) & 0xff, t.sop1),
        Encoding::Sop2 => ((w0 >> 23) & 0x7f, t.sop2),
        Encoding::Sopk => ((w0 >> 23) & 0x1f, t.sopk),
        Encoding::Sopc => ((w0 >> 16) & 0x7f, t.sopc),
        _ => ((w0 >> 16) & 0x7f, t.sopp),
    };
    let op = table(opcode).ok_or_else(|| cx.unknown(opcode))?;
    let info = op.info();
    let mut inst = cx.inst(op, 4);
    let bad = || cx.invalid(op);
    let f_sdst = (w0 >> 16) & 0x7f;
    let (f0, f1) = (w0 & 0xff, (w0 >> 8) & 0xff);
    match cx.enc {
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc => {
            if info.dst[0].is_present() && cx.enc != Encoding::Sopc {
                inst.dst[0] = sdst(f_sdst, &info.dst[0]).ok_or_else(bad)?;
            }
            if info.src[0].is_present() {
                inst.src[0] = ssrc(f0, &info.src[0]).ok_or_else(bad)?;
            }
            if cx.enc != Encoding::Sop1 {
                if info.src[1].is_present() {
                    inst.src[1] = ssrc(f1, &info.src[1]).ok_or_else(bad)?;
                } else if op == Op::SSetGprIdxOn {
                    // The second "source" is the 4-bit index mode; 0xff still takes a literal.
                    inst.ext = Ext::Imm(f1 as u16);
                    if f1 == 0xff {
                        inst.literal = cx.word(1)?;
                        inst.len = 8;
                    }
                }
            }
            cx.literal(&mut inst)?;
        }
        Encoding::Sopk => {
            let field = sdst(f_sdst, &info.dst[0].max_regs(&info.src[0])).ok_or_else(bad)?;
            if info.dst[0].is_present() {
                inst.dst[0] = field;
            } else if info.src[0].is_present() {
                inst.src[0] = field;
            }
            inst.ext = Ext::Imm(w0 as u16);
            if op == Op::SSetregImm32B32 {
                inst.literal = cx.word(1)?;
                inst.len = 8;
            }
        }
        _ => inst.ext = Ext::Imm(w0 as u16),
    }
    Ok(inst)
}

impl Slot {
    /// The wider of two slots (for fields that are a destination for some ops and a source
    /// for others).
    fn max_regs(&self, other: &Slot) -> Slot {
        if self.regs >= other.regs {
            *self
        } else {
            *other
        }
    }
}

fn smem(cx: &Cx, t: &Tables, w0: u32) -> Result<Inst, DecodeError> {
    let opcode = (w0 >> 18) & 0xff;
    let op = (t.smem)(opcode).ok_or_else(|| cx.unknown(opcode))?;
    let w1 = cx.word(1)?;
    let info: &OpInfo = op.info();
    let mut inst = cx.inst(op, 8);
    let bad = || cx.invalid(op);
    let f_sdata = (w0 >> 6) & 0x7f;
    if info.dst[0].is_present() {
        inst.dst[0] = sdst(f_sdata, &info.dst[0]).ok_or_else(bad)?;
    }
    if info.src[1].is_present() {
        inst.src[1] = sdst(f_sdata, &info.src[1]).ok_or_else(bad)?;
    }
    if info.src[0].is_present() {
        inst.src[0] = sdst((w0 & 0x3f) << 1, &info.src[0]).ok_or_else(bad)?;
    }
    let imm = w0 & (1 << 17) != 0;
    let soe = w0 & (1 << 14) != 0;
    let mut m = Smem { glc: w0 & (1 << 16) != 0, nv: w0 & (1 << 15) != 0, ..Smem::default() };
    let one = Slot { regs: 1, file: RegFile::Sgpr, ty: super::info::Ty::B32 };
    if imm {
        m.has_imm = true;
        m.offset = ((w1 << 11) as i32) >> 11;
    }
    if soe {
        m.soffset = sdst(w1 >> 25, &one).ok_or_else(bad)?;
    } else if !imm {
        m.soffset = sdst(w1 & 0xff, &one).ok_or_else(bad)?;
    }
    if matches!(op, Op::SAtcProbe | Op::SAtcProbeBuffer) {
        // The sdata field is a 7-bit probe mode, not a register.
        inst.literal = f_sdata;
    }
    inst.ext = Ext::Smem(m);
    Ok(inst)
}
