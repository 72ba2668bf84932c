//! The seam between the hooks and whatever simulates the GPU. Local mode
//! runs `sim` in this process; daemon mode (later) forwards the same calls to
//! rocjitsud. The hooks only ever see these traits.

use sim::kfd::{DeviceFile, KfdProcess, UserptrMode};
use sim::Machine;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

/// An errno value to hand back to the application.
pub type Errno = i32;

/// Where an mmap of a device file lands: a range of a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapSource {
    pub fd: RawFd,
    pub offset: u64,
}

/// One KFD process (what an open of `/dev/kfd` creates).
pub trait KfdSession: Send + Sync {
    /// Runs a KFD ioctl on a `proto::ioctl` payload.
    fn ioctl(&self, cmd: u32, payload: &mut [u8]) -> Result<(), Errno>;
    /// Resolves an mmap of a device file.
    fn mmap_source(&self, file: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno>;
    /// The process's last fd closed: fail blocked waits, release everything.
    fn close(&self);
    /// Whether `fd` is one of the driver's own (never the application's to close).
    fn owns_fd(&self, fd: RawFd) -> bool;
}

/// The simulated machine, as the hooks need it.
pub trait Driver: Send + Sync {
    /// A new KFD process for this application process.
    fn open_kfd(&self) -> Result<Arc<dyn KfdSession>, Errno>;
    /// An ioctl on render node `minor`.
    fn drm_ioctl(&self, minor: u32, cmd: u32, payload: &mut [u8]) -> Result<(), Errno>;
    /// Whether render node `minor` exists.
    fn has_render_node(&self, minor: u32) -> bool;
}

/// Local mode: the simulator runs inside the application.
pub struct LocalDriver {
    machine: Machine,
}

impl LocalDriver {
    pub fn new(machine: Machine) -> Self {
        LocalDriver { machine }
    }
}

struct LocalSession {
    process: Arc<KfdProcess>,
}

impl KfdSession for LocalSession {
    fn ioctl(&self, cmd: u32, payload: &mut [u8]) -> Result<(), Errno> {
        self.process.ioctl(cmd, payload).map_err(|e| {
            if e.is_unsupported_request() {
                tracing::warn!("{}: {e} (returning errno {})", proto::ioctl::name_of(cmd), e.errno());
            } else {
                tracing::debug!("{}: {e}", proto::ioctl::name_of(cmd));
            }
            e.errno()
        })
    }

    fn mmap_source(&self, file: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno> {
        let t = self.process.mmap_target(file, offset, len).map_err(|e| {
            tracing::warn!("mmap of {file:?} at offset {offset:#x}: {e}");
            e.errno()
        })?;
        Ok(MapSource { fd: self.process.arena_fd().as_raw_fd(), offset: t.file_offset })
    }

    fn close(&self) {
        self.process.close();
    }

    fn owns_fd(&self, fd: RawFd) -> bool {
        self.process.arena_fd().as_raw_fd() == fd
    }
}

impl Driver for LocalDriver {
    fn open_kfd(&self) -> Result<Arc<dyn KfdSession>, Errno> {
        let process = self.machine.open_process(std::process::id(), UserptrMode::Direct).map_err(|e| {
            tracing::error!("cannot create the simulated KFD process: {e}");
            e.errno()
        })?;
        Ok(Arc::new(LocalSession { process }))
    }

    fn drm_ioctl(&self, minor: u32, cmd: u32, payload: &mut [u8]) -> Result<(), Errno> {
        self.machine.drm_ioctl(minor, cmd, payload).map_err(|e| {
            tracing::warn!("render node {minor}: {}: {e}", proto::ioctl::name_of(cmd));
            e.errno()
        })
    }

    fn has_render_node(&self, minor: u32) -> bool {
        self.machine.gpu_by_render_minor(minor).is_some()
    }
}
