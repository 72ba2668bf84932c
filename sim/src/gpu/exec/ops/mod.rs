//! Instruction semantics, one module per family. Each module maps the ops
//! it implements to a [`Handler`]; [`handler`] asks them in turn once per
//! decoded instruction (the decode cache keeps the answer), so adding an op
//! touches only its family's module.

pub mod ds;
pub mod gws;
pub mod image;
pub mod mfma;
pub mod salu;
pub mod sample;
pub mod smem;
pub mod sopp;
pub mod valu;
pub mod vmem;

use super::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

/// The semantics of `op`, or a handler that reports it as unimplemented.
pub fn handler(op: Op) -> Handler {
    find(op).unwrap_or(unimplemented)
}

fn find(op: Op) -> Option<Handler> {
    sopp::handler(op)
        .or_else(|| salu::handler(op))
        .or_else(|| smem::handler(op))
        .or_else(|| valu::handler(op))
        .or_else(|| mfma::handler(op))
        .or_else(|| ds::handler(op))
        .or_else(|| gws::handler(op))
        .or_else(|| vmem::handler(op))
        .or_else(|| image::handler(op))
        .or_else(|| sample::handler(op))
}

/// Whether the simulator implements `op` (for coverage reports).
pub fn implemented(op: Op) -> bool {
    find(op).is_some()
}

fn unimplemented(_: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    Err(ExecError::Unimplemented(inst.op))
}
