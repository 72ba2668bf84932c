//! The hand-off from the command processor to whatever runs kernels: a dispatch packet with
//! the process and queue it came from, and the ways a dispatch can fail. The ISA interpreter
//! (`gpu::exec`) implements [`DispatchExecutor`]; the command processor only knows the trait.

use super::aql::KernelDispatch;
use crate::gpu::context::Context;
use crate::gpu::memory::GpuFault;
use std::sync::Arc;

/// A kernel dispatch handed to the executor.
pub struct DispatchJob<'a> {
    pub process: &'a Arc<dyn Context>,
    pub gpu: usize,
    /// GPU VA of the queue's `amd_queue_t` (what the dispatch's queue pointer names).
    pub amd_queue: u64,
    pub packet: KernelDispatch,
    /// GPU VA of the packet (the dispatch pointer kernels may read).
    pub packet_va: u64,
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Fault(#[from] GpuFault),
    /// The packet is malformed (`code` is ROCR's queue error code).
    #[error("invalid dispatch: {reason}")]
    Invalid { code: i64, reason: String },
    /// An instruction the simulator cannot execute.
    #[error("{what} at PC {pc:#x}")]
    Illegal { pc: u64, what: String },
    /// The process is going away.
    #[error("aborted")]
    Aborted,
}

/// Runs kernels. The ISA interpreter implements it; tests may supply others.
pub trait DispatchExecutor: Send + Sync {
    fn dispatch(&self, job: &DispatchJob<'_>) -> Result<(), DispatchError>;
}

/// Refuses every dispatch (until an executor is installed).
pub struct NoExecutor;

impl DispatchExecutor for NoExecutor {
    fn dispatch(&self, job: &DispatchJob<'_>) -> Result<(), DispatchError> {
        Err(DispatchError::Illegal {
            pc: job.packet.kernel_object,
            what: "kernel execution is not available in this build".to_string(),
        })
    }
}
