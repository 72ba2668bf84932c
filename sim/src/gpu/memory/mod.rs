//! GPU memory: the per-process memfd arena that backs allocations, memory a
//! daemon client lends (its USERPTR pages), the GPU virtual address space
//! that maps them, and the range allocator beneath.

pub mod access;
pub mod arena;
pub mod gpuvm;
pub mod lent;
pub mod ranges;
pub mod truncation;

pub use access::GpuMem;
pub use arena::{Arena, PAGE_SIZE};
pub use gpuvm::{GpuFault, GpuVm, KeptMemory, VmError, VmRange};
pub use lent::{LentError, LentMemory, LentPiece};

/// Errors of the memory layer.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("cannot create the memory file: {0}")]
    Memfd(rustix::io::Errno),
    #[error("cannot map the memory file: {0}")]
    Map(rustix::io::Errno),
    #[error("out of simulated memory ({requested} bytes requested)")]
    OutOfMemory { requested: u64 },
    #[error("memory lent by the client refused: {0}")]
    Lent(#[from] LentError),
}
