//! The simulated KFD driver (`/dev/kfd`): per-process state, memory, events
//! and the ioctls the ROCm 5.2 thunk issues.

pub mod device;
pub mod events;
pub mod ipc;
pub mod mem;
pub mod process;
pub mod queues;
pub mod usage;

pub use events::{EventError, EventTable, WaitResult};
pub use mem::{Allocation, ArenaRange, Backing, DeviceFile, MapKind, UserptrMode};
pub use process::KfdProcess;

use crate::gpu::memory::{MemoryError, VmError};
use proto::ioctl::{IoctlError, EBUSY, EFAULT, EINVAL, ENODEV, ENOMEM, ENOSPC};

/// Why a KFD request failed. Each maps to the errno the Linux driver returns
/// in the same situation.
#[derive(Debug, thiserror::Error)]
pub enum KfdError {
    #[error(transparent)]
    Codec(#[from] IoctlError),
    #[error("{name} is not supported by the simulated KFD")]
    NotSupported {
        name: &'static str,
        /// An expected refusal (e.g. the debugger probe): not worth a warning.
        quiet: bool,
    },
    /// A request only a machine shared by several processes can serve.
    #[error(
        "{0} needs the daemon: in local mode each process has a simulated GPU of its own; run the programs \
         as clients of one daemon (`rocjitsu --daemon` or `rocjitsu --attach`)"
    )]
    NeedsDaemon(&'static str),
    #[error("no GPU with gpu_id {0}")]
    NoSuchGpu(u32),
    #[error("no buffer with handle {0:#x}")]
    NoSuchHandle(u64),
    /// What the driver answers EFAULT for: a queue it cannot find when
    /// updating one (`pqm_update_queue_properties`, `pqm_update_mqd`).
    #[error("no queue {0}")]
    NoSuchQueueToUpdate(u32),
    #[error("invalid argument: {0}")]
    BadArgument(String),
    #[error("busy: {0}")]
    Busy(&'static str),
    /// The device lacks the hardware for the request (ENODEV, as the driver answers).
    #[error("the GPU has no {0}")]
    NoHardware(&'static str),
    #[error("out of GPU memory: {requested} bytes requested, {available} available")]
    OutOfMemory { requested: u64, available: u64 },
    #[error("nothing to map at offset {offset:#x} (+{len:#x})")]
    BadMmap { offset: u64, len: u64 },
    #[error(transparent)]
    Event(#[from] EventError),
    #[error(transparent)]
    Vm(#[from] VmError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

impl KfdError {
    /// The errno the application sees.
    pub fn errno(&self) -> i32 {
        match self {
            KfdError::Codec(e) => e.errno(),
            KfdError::OutOfMemory { .. } | KfdError::Memory(_) => ENOMEM,
            KfdError::Busy(_) => EBUSY,
            KfdError::NoHardware(_) => ENODEV,
            KfdError::NoSuchQueueToUpdate(_) => EFAULT,
            KfdError::Event(EventError::NoSlots(_)) => ENOSPC,
            _ => EINVAL,
        }
    }

    /// Whether this failure deserves a warning line: requests we do not
    /// implement do; ordinary argument errors and expected probes do not.
    pub fn is_unsupported_request(&self) -> bool {
        matches!(
            self,
            KfdError::NotSupported { quiet: false, .. }
                | KfdError::NeedsDaemon(_)
                | KfdError::Codec(IoctlError::Unknown(_))
        )
    }
}

#[cfg(test)]
mod tests;
