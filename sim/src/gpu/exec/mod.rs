//! Kernel execution: the interpreter of GFX9/CDNA machine code.
//!
//! - [`kd`]: kernel descriptors; [`dispatch`]: turning a dispatch packet
//!   into workgroups and waves with their initial registers;
//! - [`units`]: the compute units: which workgroups are resident, and which runs next;
//! - [`workgroup`]: stepping the waves of one workgroup (barriers, LDS);
//! - [`wave`]: a wave's registers and operand plumbing;
//! - [`code`]: instruction fetch with a decode cache;
//! - [`memory`]: how waves reach global, private (scratch) and LDS memory;
//! - [`ops`]: the semantics of each instruction, one module per family.

pub mod code;
pub mod coverage;
pub mod dispatch;
pub mod itrace;
pub mod jit;
pub mod kd;
pub mod memory;
pub mod ops;
pub mod units;
pub mod vector_modes;
pub mod wave;
pub mod workgroup;

pub use dispatch::{DispatchInfo, Executor};
pub use wave::{Lanes, Wave, WaveStatus, LANES};

use crate::gpu::memory::GpuFault;
use crate::isa::{DecodeError, Inst, Op, Operand};

/// Why an instruction could not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Fault(#[from] GpuFault),
    #[error("instruction {0} is not implemented")]
    Unimplemented(Op),
    #[error("cannot decode instruction: {0}")]
    Decode(#[from] DecodeError),
    #[error("operand {0:?} is not valid here")]
    Register(Operand),
    #[error("{0}")]
    Invalid(String),
    /// `s_trap`: the kernel asked for the trap handler (asserts, `abort()`).
    #[error("s_trap {0:#x}")]
    Trap(u16),
    /// A private (scratch) access outside the wave's private segment.
    #[error("private memory access at lane offset {offset:#x} beyond the {size:#x}-byte segment")]
    PrivateOutOfRange { offset: u64, size: u64 },
}

/// What happens after an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Continue with the next instruction.
    Next,
    /// Continue at this address.
    Jump(u64),
    /// `s_endpgm`.
    End,
    /// `s_barrier`: wait for the rest of the workgroup, then continue.
    Barrier,
    /// Not done yet (a GWS semaphore or barrier): give the other waves a turn and run
    /// this instruction again.
    Yield,
    /// `s_sleep`: continue with the next instruction, but let other waves (and other
    /// workgroups) run first — a wave sleeping in a spin loop waits for someone else.
    Sleep,
}

/// Everything an instruction may touch besides its wave's registers.
pub struct Ctx<'a> {
    /// Global memory of the process (with the wave's translation cache).
    pub mem: &'a memory::WaveMem<'a>,
    /// The workgroup's LDS.
    pub lds: &'a mut [u8],
    /// The wave's private (scratch) memory.
    pub private: &'a mut memory::PrivateMem,
    /// The dispatch this wave belongs to.
    pub dispatch: &'a DispatchInfo,
}

/// The semantics of one op: reads and writes the wave, says where to go next.
pub type Handler = fn(&mut Wave, &Inst, &mut Ctx<'_>) -> Result<Flow, ExecError>;
