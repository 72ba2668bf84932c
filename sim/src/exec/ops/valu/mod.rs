//! Vector ALU: VOP1, VOP2, VOPC, VOP3 and VOP3P (except MFMA), with their
//! DPP and SDWA forms.

use crate::exec::Handler;
use crate::isa::Op;

/// The handler of `op`, if a VALU module implements it.
pub fn handler(_op: Op) -> Option<Handler> {
    None
}
