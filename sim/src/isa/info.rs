//! Static description of every op, for the decoder, the printer and the interpreter.
//!
//! The table itself (`OP_INFO`, indexed by `Op`) is generated from LLVM's disassembler by
//! `cargo xtask isa-vectors`: register counts and register files are exactly what LLVM prints;
//! operand types and flags come from probes and naming rules (see each field).

use super::gen::op::OP_INFO;
pub use super::gen::op::{Op, ALL_OPS, OP_COUNT};

/// Family of an op: which execution unit and which operand conventions apply.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum OpClass {
    /// SOP1/SOP2/SOPK/SOPC scalar ALU.
    Salu,
    /// SOPP program control (branches, waits, messages).
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU (VOP1/VOP2/VOPC/VOP3/VOP3P except MFMA).
    Valu,
    /// Matrix fused multiply-add (VOP3P-MAI `v_mfma_*`; `v_accvgpr_*` moves are `Valu`).
    Mfma,
    /// Local/global data share.
    Ds,
    /// FLAT segment (address space chosen by the address).
    Flat,
    /// FLAT encoding, global segment.
    Global,
    /// FLAT encoding, scratch (private) segment.
    Scratch,
    /// Untyped buffer.
    Mubuf,
    /// Typed buffer.
    Mtbuf,
    /// Image.
    Mimg,
}

/// Register file an operand slot names.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RegFile {
    /// SGPRs (or other scalar registers: VCC, EXEC, TTMP, M0 ...).
    Sgpr,
    /// VGPRs; AGPRs instead where the instruction's acc bit says so (memory ops, MFMA).
    Vgpr,
    /// AGPRs (`v_accvgpr_*`).
    Agpr,
    /// A general source operand: SGPR, VGPR, inline constant, literal or special register.
    Any,
}

/// How a slot's value is read; decides the bit pattern of inline constants and literals.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ty {
    /// 16-bit integer (or packed 2 x 16-bit integer): inline float constants are f16 patterns,
    /// a literal's low 16 bits are used.
    I16,
    /// 16-bit float: as `I16`.
    F16,
    /// Two 16-bit integers in a dword (`v_pk_*_i16`, `v_dot2_*_i16`): constants as `I16`.
    PkI16,
    /// Two f16 in a dword (`v_pk_*_f16`, `v_dot2*_f16`): constants as `F16`.
    PkF16,
    /// 32 bits (integer or float: the constant's 32-bit pattern).
    B32,
    /// 64-bit integer: inline float constants are f64 patterns; a literal is zero-extended.
    I64,
    /// 64-bit float: a 32-bit literal is the high half of the double.
    F64,
}

/// One operand slot of an op: how many consecutive registers, which file, what type.
/// `regs == 0` means the op has no such operand. For memory ops `regs` is the data size in
/// dwords (MIMG: the size for dmask 0xf; see `Inst::data_regs`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Slot {
    pub regs: u8,
    pub file: RegFile,
    pub ty: Ty,
}

impl Slot {
    pub const fn is_present(&self) -> bool {
        self.regs != 0
    }
}

/// No operand.
pub const NO: Slot = Slot { regs: 0, file: RegFile::Any, ty: Ty::B32 };
pub(crate) const fn sg(regs: u8, ty: Ty) -> Slot {
    Slot { regs, file: RegFile::Sgpr, ty }
}
pub(crate) const fn vg(regs: u8, ty: Ty) -> Slot {
    Slot { regs, file: RegFile::Vgpr, ty }
}
pub(crate) const fn ag(regs: u8, ty: Ty) -> Slot {
    Slot { regs, file: RegFile::Agpr, ty }
}
pub(crate) const fn any(regs: u8, ty: Ty) -> Slot {
    Slot { regs, file: RegFile::Any, ty }
}

/// Behaviour flags (`OpInfo::flags`), from naming rules: advisory for the interpreter.
pub mod flags {
    /// Changes the program counter (branches, calls, `s_setpc`, `s_rfe`, forks/joins).
    pub const BRANCH: u16 = 1 << 0;
    /// A conditional `s_cbranch_*` on SCC/VCC/EXEC/debug state.
    pub const CONDITIONAL: u16 = 1 << 1;
    /// Accesses memory (SMEM, DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG).
    pub const MEMORY: u16 = 1 << 2;
    pub const LOAD: u16 = 1 << 3;
    pub const STORE: u16 = 1 << 4;
    /// Read-modify-write memory op; returns the old value when the instruction says so (glc).
    pub const ATOMIC: u16 = 1 << 5;
    /// SALU op that writes SCC.
    pub const WRITES_SCC: u16 = 1 << 6;
    /// SALU op that reads SCC.
    pub const READS_SCC: u16 = 1 << 7;
    /// Writes EXEC besides its destination (`v_cmpx_*`, `s_*_saveexec_*`, `s_*_wrexec_*`).
    pub const WRITES_EXEC: u16 = 1 << 8;
    /// Reads VCC implicitly in every encoding (`v_div_fmas_*`).
    pub const READS_VCC: u16 = 1 << 9;
    /// LLVM prints the VOP1/VOP2/VOPC form with an `_e32` suffix.
    pub const E32_SUFFIX: u16 = 1 << 10;
    /// LLVM prints the VOP3 form with an `_e64` suffix (the op also has a 32-bit form).
    pub const E64_SUFFIX: u16 = 1 << 11;
}

/// Modifiers an op has (`Op::mods(target)`): exactly those LLVM prints for it.
pub mod mods {
    /// VOP3 `|x|` on source 0.
    pub const ABS: u32 = 1 << 0;
    /// VOP3 `-x` on source 0 / VOP3P `neg_lo`.
    pub const NEG: u32 = 1 << 1;
    pub const CLAMP: u32 = 1 << 2;
    /// Output modifier `mul:2`, `mul:4`, `div:2`.
    pub const OMOD: u32 = 1 << 3;
    /// VOP3 16-bit halves select / VOP3P `op_sel`.
    pub const OP_SEL: u32 = 1 << 4;
    /// VOP3P `neg_hi`.
    pub const NEG_HI: u32 = 1 << 5;
    /// SDWA source `-x`, `|x|` (float ops).
    pub const SDWA_ABS_NEG: u32 = 1 << 6;
    /// SDWA source `sext(x)` (integer ops).
    pub const SDWA_SEXT: u32 = 1 << 7;
    pub const SDWA_CLAMP: u32 = 1 << 8;
    pub const SDWA_OMOD: u32 = 1 << 9;
    /// DPP source `-x`, `|x|`.
    pub const DPP_ABS_NEG: u32 = 1 << 10;
    /// Source i takes registers only (LLVM prints a constant there as `/*invalid immediate*/`).
    pub const SRC0_NOCONST: u32 = 1 << 11;
    pub const SRC1_NOCONST: u32 = 1 << 12;
    pub const SRC2_NOCONST: u32 = 1 << 13;
    /// Source i takes integer modifiers: the neg bit (VOP3, DPP) reads as `sext(x)`.
    pub const SRC0_SEXT: u32 = 1 << 14;
    pub const SRC1_SEXT: u32 = 1 << 15;
    pub const SRC2_SEXT: u32 = 1 << 16;
    /// VOP3P `op_sel_hi` is printed (not for the matrix ops and ACC moves).
    pub const OP_SEL_HI: u32 = 1 << 17;
    /// VOP3 `-x` / `|x|` on sources 1 and 2 (`NEG`/`ABS` are for source 0).
    pub const NEG_SRC1: u32 = 1 << 18;
    pub const NEG_SRC2: u32 = 1 << 19;
    pub const ABS_SRC1: u32 = 1 << 20;
    pub const ABS_SRC2: u32 = 1 << 21;
}

/// Which forms of a VOP1/VOP2/VOPC op exist (generated opcode maps).
pub(crate) mod forms {
    pub const E32: u8 = 0;
    pub const SDWA: u8 = 1 << 0;
    pub const DPP: u8 = 1 << 1;
}

/// Everything static about an op.
#[derive(Copy, Clone, Debug)]
pub struct OpInfo {
    /// Base mnemonic as LLVM prints it, without `_e32`/`_e64`/`_sdwa`/`_dpp`.
    pub name: &'static str,
    pub class: OpClass,
    /// `dst[0]`: the main result (VDST, SDST, memory return data). `dst[1]`: the VOP3b/VOP2
    /// carry-out or `v_div_scale` VCC (an SGPR pair).
    pub dst: [Slot; 2],
    /// Sources in LLVM's printing order. For memory ops see `Inst`'s per-encoding roles.
    pub src: [Slot; 3],
    /// `flags::*` bits.
    pub flags: u16,
}

impl Op {
    /// The op's static description.
    pub fn info(self) -> &'static OpInfo {
        &OP_INFO[self as usize]
    }
    /// Base mnemonic (`v_add_f32`).
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// The op with discriminant `i`.
    pub fn from_index(i: usize) -> Option<Op> {
        ALL_OPS.get(i).copied()
    }
    pub fn has_flag(self, f: u16) -> bool {
        self.info().flags & f != 0
    }
    /// The modifiers (`mods::*`) the op has on `target`.
    pub fn mods(self, target: super::Target) -> u32 {
        match target {
            super::Target::Gfx90a => super::gen::gfx90a::MODS[self as usize],
            super::Target::Gfx942 => super::gen::gfx942::MODS[self as usize],
            super::Target::Gfx950 => super::gen::gfx950::MODS[self as usize],
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
