//! Vector ALU: VOP1, VOP2, VOPC, VOP3 and VOP3P (except MFMA), with their
//! DPP and SDWA forms. [`common`] holds the operand plumbing every op uses;
//! the other modules hold the semantics, by kind of op.

pub mod cdna4;
pub mod cmp;
pub mod common;
pub mod conv;
pub mod dpp;
pub mod float;
pub mod float16;
pub mod float_div;
pub mod float_fast;
pub mod float_io;
pub mod float_trig;
pub mod fma_hw;
pub mod fp;
pub mod fp8;
pub mod int;
pub mod int3;
pub mod lane;
pub mod minifloat;
pub mod packed;
pub mod run;
pub mod sad;
pub mod scale;
pub mod trans;

use crate::gpu::exec::Handler;
use crate::isa::Op;

/// The handler of `op`, if a VALU module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    int::handler(op)
        .or_else(|| cmp::handler(op))
        .or_else(|| lane::handler(op))
        .or_else(|| float::handler(op))
        .or_else(|| conv::handler(op))
        .or_else(|| packed::handler(op))
        .or_else(|| cdna4::handler(op))
        .or_else(|| scale::handler(op))
}
