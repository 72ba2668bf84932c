//! The decoded instruction: small (36 bytes), `Copy`, meant to be cached per code address.
//!
//! # Operand roles
//! `dst`/`src` hold the register and constant operands in LLVM's printing order, with implicit
//! operands made explicit (VOP2 `v_cndmask_b32_e32` has `src[2] = VccLo`, `v_add_co_u32_e32`
//! has `dst[1] = VccLo`, VOPC e32 has `dst[0] = VccLo`). Memory instructions use fixed roles:
//!
//! | encoding | dst[0] | src[0] | src[1] | src[2] | in `ext` |
//! |---|---|---|---|---|---|
//! | SMEM | sdata (loads, returning atomics) | sbase | sdata (stores, atomics) | - | offset, soffset, glc |
//! | DS | vdst | addr | data0 | data1 | offsets, gds |
//! | FLAT/GLOBAL/SCRATCH | vdst | vaddr (`None` = off) | vdata | saddr (`None` = off) | offset, cache bits |
//! | MUBUF/MTBUF | vdata (loads, returning atomics) | vaddr (`None` = off) | vdata (stores, atomics) | srsrc | soffset, offset, offen, idxen |
//! | MIMG | vdata (loads, returning atomics) | vaddr | vdata (stores, atomics) | srsrc | ssamp, dmask ... |
//!
//! Register counts: `Inst::dst_regs`/`src_regs` (from the op's slots, adjusted for MIMG dmask,
//! global `saddr` and buffer `idxen`+`offen`).

use super::info::{OpClass, OpInfo, Ty};
use super::operand::Operand;
use super::{Op, Target};

/// Instruction encoding (format).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Encoding {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    /// VOP1/VOP2/VOPC in their 32-bit form, or with an SDWA/DPP second dword (`Ext::Sdwa`,
    /// `Ext::Dpp`).
    Vop1,
    Vop2,
    Vopc,
    /// VOP3a/VOP3b, incl. VOP1/VOP2/VOPC ops promoted to VOP3 (`_e64`).
    Vop3,
    /// VOP3P, incl. MFMA and `v_accvgpr_read/write`.
    Vop3p,
    Ds,
    Flat,
    Global,
    Scratch,
    Mubuf,
    Mtbuf,
    Mimg,
}

/// VOP3/VOP3P modifiers. Bit i of a mask applies to source i (bit 3 of `op_sel` is the
/// destination's half in VOP3).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Vop3Mods {
    pub abs: u8,
    pub neg: u8,
    /// VOP3P `neg_hi` (also the `abs` of `v_fma_mix*` sources).
    pub neg_hi: u8,
    pub op_sel: u8,
    /// VOP3P `op_sel_hi` (for `v_fma_mix*`: "source i is f16").
    pub op_sel_hi: u8,
    pub clamp: bool,
    /// 0 none, 1 `mul:2`, 2 `mul:4`, 3 `div:2`.
    pub omod: u8,
}

/// MFMA (VOP3P-MAI) fields. Which operands are AGPRs is already in the operands.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Mfma {
    pub cbsz: u8,
    pub abid: u8,
    pub blgp: u8,
}

/// gfx950 block-scaled MFMA (`v_mfma_scale_*`): one 16-byte instruction, a
/// `v_mfma_ld_scale_b32` word pair followed by an `*_f8f6f4` MFMA with abid 1. Holds the MFMA's
/// fields and the prefix's E8M0 scale sources (`scale[0]` for A, `scale[1]` for B) with its
/// `op_sel`/`op_sel_hi` bits: `{op_sel_hi[i], op_sel[i]}` picks the byte of scale source i.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct MfmaScale {
    pub mfma: Mfma,
    pub scale: [Operand; 2],
    pub op_sel: u8,
    pub op_sel_hi: u8,
}

/// SDWA (sub-dword addressing) fields of VOP1/VOP2/VOPC.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Sdwa {
    /// 0..=3 BYTE_0..BYTE_3, 4 WORD_0, 5 WORD_1, 6 DWORD (also for `src_sel`).
    pub dst_sel: u8,
    /// 0 UNUSED_PAD, 1 UNUSED_SEXT, 2 UNUSED_PRESERVE.
    pub dst_unused: u8,
    pub src_sel: [u8; 2],
    /// Bit i: sign-extend source i.
    pub sext: u8,
    pub neg: u8,
    pub abs: u8,
    pub clamp: bool,
    pub omod: u8,
}

/// DPP (data-parallel primitives) fields of VOP1/VOP2/VOPC; applies to `src[0]`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Dpp {
    /// DPP_CTRL: 0x000..=0x0ff quad_perm, 0x101.. row_shl, 0x111.. row_shr, 0x121.. row_ror,
    /// 0x130 wave_shl, 0x134 wave_rol, 0x138 wave_shr, 0x13c wave_ror, 0x140 row_mirror,
    /// 0x141 row_half_mirror, 0x142 row_bcast:15, 0x143 row_bcast:31, 0x150.. row_newbcast
    /// (gfx90a+).
    pub ctrl: u16,
    pub row_mask: u8,
    pub bank_mask: u8,
    pub bound_ctrl: bool,
    pub neg: u8,
    pub abs: u8,
}

/// Cache-policy bits of vector memory instructions, named as on gfx90a (gfx940+: glc = sc0,
/// slc = nt, scc = sc1).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Cache {
    pub glc: bool,
    pub slc: bool,
    pub scc: bool,
}

/// SMEM fields.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Smem {
    /// Immediate byte offset (21-bit signed), 0 when none.
    pub offset: i32,
    /// Whether an immediate offset is present (`imm` bit).
    pub has_imm: bool,
    /// SGPR offset (`None` when absent).
    pub soffset: Operand,
    pub glc: bool,
    pub nv: bool,
}

/// DS fields: `offset0`/`offset1` for the two-address ops, else one 16-bit offset
/// `offset1 << 8 | offset0` (`Ds::offset`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Ds {
    pub offset0: u8,
    pub offset1: u8,
    pub gds: bool,
}

impl Ds {
    pub fn offset(&self) -> u16 {
        u16::from(self.offset1) << 8 | u16::from(self.offset0)
    }
}

/// FLAT/GLOBAL/SCRATCH fields.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Flat {
    /// Byte offset: 13-bit signed for global/scratch, 13-bit unsigned for flat.
    pub offset: i16,
    pub cache: Cache,
    /// Load to LDS.
    pub lds: bool,
}

/// MUBUF/MTBUF fields.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Buf {
    pub soffset: Operand,
    pub offset: u16,
    pub offen: bool,
    pub idxen: bool,
    pub lds: bool,
    pub cache: Cache,
    /// MTBUF data format (`dfmt`) and number format (`nfmt`).
    pub dfmt: u8,
    pub nfmt: u8,
}

/// MIMG fields.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Mimg {
    pub ssamp: Operand,
    pub dmask: u8,
    pub unorm: bool,
    pub da: bool,
    /// `r128` (gfx9; `a16` on gfx90a+: 16-bit addresses).
    pub r128: bool,
    pub tfe: bool,
    pub lwe: bool,
    pub d16: bool,
    pub cache: Cache,
}

/// Encoding-specific fields.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Ext {
    #[default]
    None,
    /// SOPP/SOPK 16-bit immediate (branch offsets in dwords, signed: `Inst::branch_target`).
    Imm(u16),
    Vop3(Vop3Mods),
    Mfma(Mfma),
    MfmaScale(MfmaScale),
    Sdwa(Sdwa),
    Dpp(Dpp),
    Smem(Smem),
    Ds(Ds),
    Flat(Flat),
    Buf(Buf),
    Mimg(Mimg),
}

/// `s_waitcnt` counters: a wait lasts until each count of outstanding operations is at or
/// below its value (the maxima 63, 7, 15 mean "do not wait").
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Waitcnt {
    pub vm: u8,
    pub exp: u8,
    pub lgkm: u8,
}

/// `hwreg(id, offset, size)`: bits `offset..offset+size` of hardware register `id`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct HwReg {
    pub id: u8,
    pub offset: u8,
    pub size: u8,
}

/// A decoded instruction.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Inst {
    pub op: Op,
    pub enc: Encoding,
    /// Length in bytes: 4 or 8, plus 4 with a literal; 16 for gfx950's block-scaled MFMA
    /// (`Ext::MfmaScale`).
    pub len: u8,
    pub target: Target,
    /// VOP registers that are AGPRs because of an acc bit are already `Operand::Agpr`.
    pub dst: [Operand; 2],
    pub src: [Operand; 3],
    /// The literal constant (`Operand::Literal`, `s_setreg_imm32_b32`, madmk/madak K), else 0.
    pub literal: u32,
    pub ext: Ext,
}

impl Inst {
    pub fn info(&self) -> &'static OpInfo {
        self.op.info()
    }

    /// The signed 16-bit immediate of SOPP/SOPK.
    pub fn simm16(&self) -> i16 {
        match self.ext {
            Ext::Imm(v) => v as i16,
            _ => 0,
        }
    }

    /// Branch target of an SOPP branch or `s_call_b64`/`s_cbranch_i_fork` at `pc`:
    /// `pc + 4 + simm16 * 4`.
    pub fn branch_target(&self, pc: u64) -> u64 {
        pc.wrapping_add(4).wrapping_add((i64::from(self.simm16()) * 4) as u64)
    }

    /// The truth table of a gfx950 `v_bitop3_b16/b32` (bit `4*s0 + 2*s1 + s2` is the result
    /// for those source bits), kept in the VOP3 neg (bits 2:0), abs (5:3) and omod (7:6)
    /// fields.
    pub fn bitop3(&self) -> Option<u8> {
        match (self.op, self.ext) {
            (Op::VBitop3B16 | Op::VBitop3B32, Ext::Vop3(v)) => Some((v.neg & 7) | (v.abs & 7) << 3 | (v.omod & 3) << 6),
            _ => None,
        }
    }

    /// Number of consecutive registers `src[i]` covers (see also `f8f6f4_regs`).
    pub fn src_regs(&self, i: usize) -> u8 {
        let info = self.info();
        let n = info.src[i].regs;
        match (self.enc, i, self.ext) {
            // Global with an SGPR base: the VGPR is a 32-bit offset.
            (Encoding::Global, 0, _) if !self.src[2].is_none() => 1,
            (Encoding::Mubuf | Encoding::Mtbuf, 0, Ext::Buf(b)) => {
                if b.offen && b.idxen {
                    2
                } else {
                    1
                }
            }
            (Encoding::Mimg, 1, _) => self.data_regs(),
            // gfx950 `*_f8f6f4` MFMAs: cbsz (A) and blgp (B) choose the format, and so how many
            // registers hold a lane's 32 elements: fp8/bf8 8, fp6/bf6 6, fp4 4.
            (Encoding::Vop3p, 0 | 1, Ext::Mfma(m) | Ext::MfmaScale(MfmaScale { mfma: m, .. }))
                if info.name.ends_with("_f8f6f4") =>
            {
                f8f6f4_regs(if i == 0 { m.cbsz } else { m.blgp })
            }
            _ => n,
        }
    }

    /// Number of consecutive registers `dst[i]` covers.
    pub fn dst_regs(&self, i: usize) -> u8 {
        match (self.enc, i) {
            (Encoding::Mimg, 0) => self.data_regs(),
            _ => self.info().dst[i].regs,
        }
    }

    /// MIMG data size in dwords: one per dmask bit (gather4: 4), halved with packed d16.
    /// (gfx90a has no tfe; LLVM does not count lwe.)
    pub fn data_regs(&self) -> u8 {
        let info = self.info();
        let slot = info.dst[0].regs.max(info.src[1].regs);
        let Ext::Mimg(m) = self.ext else {
            return slot;
        };
        if info.flags & super::info::flags::ATOMIC != 0 {
            // Atomics: dmask selects the 32- or 64-bit (cmpswap: 64/128) form.
            let small = if info.name.contains("cmpswap") { 2 } else { 1 };
            let n = m.dmask.count_ones() as u8;
            return if n == small || n == 2 * small { n } else { small };
        }
        let mut n = if self.op.name().contains("gather4") { 4 } else { (m.dmask.count_ones() as u8).max(1) };
        if m.d16 {
            n = n.div_ceil(2);
        }
        n
    }

    /// The value of constant source `i` as its slot's type (see `Operand::const_value`).
    pub fn src_const(&self, i: usize) -> Option<u64> {
        let ty = self.info().src.get(i).map_or(Ty::B32, |s| s.ty);
        self.src[i].const_value(ty, self.literal)
    }

    /// The modifiers (`info::mods`) this instruction's op has on its target: which of the
    /// modifier bits in `ext` mean something (LLVM prints exactly these).
    pub fn mods(&self) -> u32 {
        self.op.mods(self.target)
    }

    /// `s_waitcnt` counters; `None` for other ops.
    pub fn waitcnt(&self) -> Option<Waitcnt> {
        let v = self.simm16() as u16;
        (self.op == Op::SWaitcnt).then_some(Waitcnt {
            vm: ((v & 0xf) | ((v >> 14) << 4)) as u8,
            exp: ((v >> 4) & 7) as u8,
            lgkm: ((v >> 8) & 0xf) as u8,
        })
    }

    /// The hardware-register field of `s_getreg_b32`/`s_setreg_b32`/`s_setreg_imm32_b32`.
    pub fn hwreg(&self) -> Option<HwReg> {
        let v = self.simm16() as u16;
        matches!(self.op, Op::SGetregB32 | Op::SSetregB32 | Op::SSetregImm32B32).then_some(HwReg {
            id: (v & 0x3f) as u8,
            offset: ((v >> 6) & 0x1f) as u8,
            size: (((v >> 11) & 0x1f) + 1) as u8,
        })
    }

    /// `s_sendmsg`/`s_sendmsghalt` message: (id, operation, stream).
    pub fn sendmsg(&self) -> Option<(u8, u8, u8)> {
        let v = self.simm16() as u16;
        matches!(self.op, Op::SSendmsg | Op::SSendmsghalt).then_some((
            (v & 0xf) as u8,
            ((v >> 4) & 7) as u8,
            ((v >> 8) & 3) as u8,
        ))
    }

    /// Whether the instruction is a memory access (see `flags::MEMORY`).
    pub fn is_memory(&self) -> bool {
        !matches!(self.info().class, OpClass::Salu | OpClass::Sopp | OpClass::Valu | OpClass::Mfma)
    }
}

/// Registers per lane of a gfx950 `*_f8f6f4` MFMA operand in format `fmt` (0 fp8, 1 bf8,
/// 2 fp6, 3 bf6, 4 fp4): 32 elements of 8, 6 or 4 bits.
pub fn f8f6f4_regs(fmt: u8) -> u8 {
    match fmt {
        2 | 3 => 6,
        4 => 4,
        _ => 8,
    }
}
