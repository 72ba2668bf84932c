//! (Semantics of this family are being written.)

use crate::exec::Handler;
use crate::isa::Op;

/// The handler of `op`, if this module implements it.
pub fn handler(_op: Op) -> Option<Handler> {
    None
}
