//! The two MODE bits that change how vector instructions run, applied before the
//! instruction's handler sees it (so no handler needs to know about them):
//!
//! - VGPR indexing (`s_set_gpr_idx_on`, MODE bit 27): VALU VGPR operands selected by
//!   M0[15:12] (SRC0, SRC1, SRC2, DST) are offset by M0[7:0]. gfx90a has no `v_movrel*`;
//!   this is how gfx9 indexes registers dynamically.
//! - VSKIP (`s_setvskip`, MODE bit 28): vector instructions (VALU, MFMA, vector memory,
//!   LDS) are skipped.
//!
//! Both are off in the common case, which costs one test of `w.mode` per instruction.

use super::ops::salu::hwreg::{gpr_idx, mode};
use super::Wave;
use crate::isa::{Inst, OpClass, Operand};

/// What to do with an instruction under the current MODE.
pub enum Adjusted {
    /// Run it as decoded.
    AsIs,
    /// Skip it (VSKIP).
    Skip,
    /// Run this copy, with indexed operands.
    Indexed(Inst),
}

/// The MODE bits that need a look at the instruction.
pub const MODE_BITS: u32 = mode::GPR_IDX_EN | mode::VSKIP;

/// How `inst` runs under `w.mode` (call only when `w.mode & MODE_BITS != 0`).
#[cold]
pub fn adjust(w: &Wave, inst: &Inst) -> Adjusted {
    let class = inst.info().class;
    let vector = !matches!(class, OpClass::Salu | OpClass::Sopp | OpClass::Smem);
    if w.mode & mode::VSKIP != 0 && vector {
        return Adjusted::Skip;
    }
    if w.mode & mode::GPR_IDX_EN == 0 || class != OpClass::Valu {
        return Adjusted::AsIs;
    }
    let index = (w.m0 & gpr_idx::INDEX) as u8;
    let shift = |op: Operand, enabled: bool| match op {
        Operand::Vgpr(n) if enabled => Operand::Vgpr(n.wrapping_add(index)),
        op => op,
    };
    let mut indexed = *inst;
    for (i, bit) in [gpr_idx::SRC0, gpr_idx::SRC1, gpr_idx::SRC2].into_iter().enumerate() {
        indexed.src[i] = shift(inst.src[i], w.m0 & bit != 0);
    }
    indexed.dst[0] = shift(inst.dst[0], w.m0 & gpr_idx::DST != 0);
    Adjusted::Indexed(indexed)
}
