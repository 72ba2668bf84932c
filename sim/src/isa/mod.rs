//! The GFX9/CDNA instruction set: decoder, disassembly printer and op tables.
//!
//! `decode(words, target)` turns the dwords at a code address into an [`Inst`]: a small `Copy`
//! value the interpreter caches per address and executes with `match inst.op`. The opcode maps
//! and the op table are generated from LLVM's AMDGPU disassembler (`cargo xtask isa-vectors`),
//! and `tests/isa_decode_vectors.rs` checks the decoder and printer against LLVM's text for
//! tens of thousands of instructions per target.
//!
//! # Reading an `Inst` (for the interpreter)
//! - `inst.op` is the base mnemonic (`Op::VAddF32` for `_e32`, `_e64`, `_sdwa`, `_dpp`);
//!   `inst.enc` and `inst.ext` say which form. `inst.len` is the byte length (next PC).
//! - Operands: `inst.dst[0..2]`, `inst.src[0..3]` in LLVM's printing order; implicit VCC
//!   operands of the 32-bit forms are filled in (`VccLo`). Memory roles: see [`inst`].
//! - Widths: `inst.src_regs(i)` / `inst.dst_regs(i)` registers (a 64-bit source is a pair
//!   starting at the operand); `op.info().src[i].ty` says how constants read (`Ty`), and
//!   `inst.src_const(i)` gives a constant's value at that type (`Operand::Literal` reads
//!   `inst.literal`).
//! - Modifiers: `Ext::Vop3` (abs/neg/clamp/omod/op_sel; VOP3P neg_hi/op_sel_hi), `Ext::Sdwa`,
//!   `Ext::Dpp`, `Ext::Mfma` (gfx950 block-scaled MFMAs: `Ext::MfmaScale`, with the scale
//!   operands of their `v_mfma_ld_scale_b32` prefix). `inst.mods()` says which of them the
//!   op honours.
//! - Program control: `inst.simm16()`, `inst.branch_target(pc)`, `inst.waitcnt()`,
//!   `inst.hwreg()`, `inst.sendmsg()`. Behaviour hints: `op.info().flags` (`info::flags`).

#![forbid(unsafe_code)]

mod decode;
mod decode_mem;
mod decode_vop;
mod gen;
pub mod info;
pub mod inst;
pub mod operand;
mod print;
mod print_mem;

pub use decode::{decode, DecodeError};
pub use info::{Op, OpClass, OpInfo, RegFile, Slot, Ty};
pub use inst::{
    Buf, Cache, Dpp, Ds, Encoding, Ext, Flat, HwReg, Inst, Mfma, MfmaScale, Mimg, Sdwa, Smem, Vop3Mods, Waitcnt,
};
pub use operand::{InlineFloat, Operand};

/// The GPU whose instruction set is decoded.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Target {
    /// MI200 (CDNA2).
    Gfx90a,
    /// MI300X (CDNA3).
    Gfx942,
    /// MI350X/MI355X (CDNA4): gfx942 plus the additions in `sim/docs/gfx950.md`.
    Gfx950,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// Whether the target belongs to the gfx940 family (CDNA3 and later): sc0/sc1/nt cache
    /// bits, fp8 conversions, and LLVM's later spelling of some operands.
    pub fn is_gfx94x_family(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }
}

/// Every mnemonic (as printed, with its `_e32`/`_e64`/`_sdwa`/`_dpp` suffix) the decoder
/// accepts for `target`; the same set LLVM prints for the test vectors.
pub fn mnemonics(target: Target) -> impl Iterator<Item = &'static str> {
    let list: &'static [&'static str] = match target {
        Target::Gfx90a => &gen::gfx90a::MNEMONICS,
        Target::Gfx942 => &gen::gfx942::MNEMONICS,
        Target::Gfx950 => &gen::gfx950::MNEMONICS,
    };
    list.iter().copied()
}

/// Disassembles one instruction the way `llvm-objdump`/`llvm-mc` print it. `pc` is accepted
/// for symmetry with branch-target printing in logs; LLVM's text does not depend on it.
pub fn disasm(inst: &Inst, _pc: u64) -> String {
    inst.to_string()
}
