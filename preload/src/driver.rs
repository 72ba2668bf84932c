//! The seam between the hooks and whatever simulates the GPU. Local mode
//! ([`LocalDriver`]) runs `sim` in this process; daemon mode
//! ([`crate::remote::RemoteDriver`]) forwards the same calls to rocjitsud.
//! The hooks only ever see these traits.

use proto::ioctl::{decode_reply, encode_request, UserMemory};
use sim::driver::kfd::{DeviceFile, KfdProcess, UserptrMode};
use sim::gpu::stats::StatsReport;
use sim::Machine;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// An errno value to hand back to the application.
pub type Errno = i32;

/// The memory file an mmap of a device file maps.
#[derive(Debug)]
pub enum MapFd {
    /// The driver's own fd (local mode): map it, do not close it.
    Borrowed(RawFd),
    /// A descriptor received for this mapping (daemon mode): closed after.
    Owned(OwnedFd),
}

/// Where an mmap of a device file lands: a range of a memory file.
#[derive(Debug)]
pub struct MapSource {
    pub fd: MapFd,
    pub offset: u64,
}

impl MapSource {
    pub fn raw_fd(&self) -> RawFd {
        match &self.fd {
            MapFd::Borrowed(fd) => *fd,
            MapFd::Owned(fd) => fd.as_raw_fd(),
        }
    }
}

/// An application's mmap of a device file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmapArgs {
    pub addr: u64,
    pub len: u64,
    pub prot: i32,
    pub flags: i32,
    pub offset: u64,
}

/// One KFD process (what an open of `/dev/kfd` creates).
pub trait OpenKfd: Send + Sync {
    /// Runs a KFD ioctl. `args` is the caller's argument struct as read from
    /// `args_addr`; the arrays it points at are read and written through
    /// `mem`. On return `args` holds what to copy back to the caller — even
    /// when the ioctl fails, as the kernel copies arguments back regardless.
    fn ioctl(&self, cmd: u32, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno>;
    /// Resolves an mmap of a device file.
    fn mmap_source(&self, file: DeviceFile, req: &MmapArgs) -> Result<MapSource, Errno>;
    /// The application unmapped `[addr, addr + len)` (daemon mode tracks
    /// shared ranges; local mode has nothing to do).
    fn munmapped(&self, _addr: u64, _len: u64) {}
    /// Whether `[addr, addr + len)` is memory shared with the simulator,
    /// on which `madvise` hints must not be applied.
    fn is_shared_range(&self, _addr: u64, _len: u64) -> bool {
        false
    }
    /// The process's last fd closed: fail blocked waits, release everything.
    fn close(&self);
    /// Whether `fd` is one of the driver's own (never the application's to close).
    fn owns_fd(&self, fd: RawFd) -> bool;
    /// Starts the process's run statistics (`ROCJITSU_STATS`).
    fn enable_stats(&self) -> Result<(), Errno>;
    /// The run statistics so far, if they were started.
    fn stats_report(&self) -> Option<StatsReport>;
    /// Starts the process's timeline (`ROCJITSU_TRACE`).
    fn enable_trace(&self) -> Result<(), Errno>;
    /// The timeline so far as a Chrome trace-event JSON document, if it was started;
    /// `process_name` names the process's track.
    fn trace_document(&self, process_name: &str) -> Option<Vec<u8>>;
}

/// The simulated machine, as the hooks need it.
pub trait Driver: Send + Sync {
    /// A new KFD process for this application process.
    fn open_kfd(&self) -> Result<Arc<dyn OpenKfd>, Errno>;
    /// An ioctl on render node `minor` (arguments as for [`OpenKfd::ioctl`]).
    fn drm_ioctl(
        &self,
        minor: u32,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
    ) -> Result<(), Errno>;
    /// Whether render node `minor` exists.
    fn has_render_node(&self, minor: u32) -> bool;
}

/// Local mode: the simulator runs inside the application.
pub struct LocalDriver {
    machine: Arc<Machine>,
}

impl LocalDriver {
    pub fn new(machine: Machine) -> Self {
        LocalDriver { machine: Arc::new(machine) }
    }
}

struct LocalKfd {
    machine: Arc<Machine>,
    process: Arc<KfdProcess>,
}

/// Runs an ioctl in process: inline the arrays, run `f` on the payload,
/// copy the results back (also on failure, like the kernel).
pub fn run_inline(
    cmd: u32,
    args: &mut [u8],
    args_addr: u64,
    mem: &dyn UserMemory,
    f: impl FnOnce(&mut [u8]) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let mut payload = encode_request(cmd, args, args_addr, mem).map_err(|e| {
        tracing::debug!("{}: {e}", proto::ioctl::name_of(cmd));
        e.errno()
    })?;
    let result = f(&mut payload);
    decode_reply(cmd, args, args_addr, &payload, mem).map_err(|e| e.errno())?;
    result
}

impl OpenKfd for LocalKfd {
    fn ioctl(&self, cmd: u32, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno> {
        run_inline(cmd, args, args_addr, mem, |payload| {
            self.machine.service().ioctl(Some(&self.process), DeviceFile::Kfd, cmd, payload, &[])
        })
    }

    fn mmap_source(&self, file: DeviceFile, req: &MmapArgs) -> Result<MapSource, Errno> {
        let t = self.machine.service().mmap(&self.process, file, req.offset, req.len)?;
        Ok(MapSource { fd: MapFd::Borrowed(self.process.arena_fd().as_raw_fd()), offset: t.file_offset })
    }

    fn close(&self) {
        self.process.close();
    }

    fn owns_fd(&self, fd: RawFd) -> bool {
        self.process.arena_fd().as_raw_fd() == fd
    }

    fn enable_stats(&self) -> Result<(), Errno> {
        self.process.enable_stats();
        Ok(())
    }

    fn stats_report(&self) -> Option<StatsReport> {
        self.process.stats_report()
    }

    fn enable_trace(&self) -> Result<(), Errno> {
        self.process.enable_trace();
        Ok(())
    }

    fn trace_document(&self, process_name: &str) -> Option<Vec<u8>> {
        self.process.trace_document(process_name)
    }
}

impl Driver for LocalDriver {
    fn open_kfd(&self) -> Result<Arc<dyn OpenKfd>, Errno> {
        let process = self.machine.service().open_process(std::process::id(), UserptrMode::Direct).map_err(|e| {
            tracing::error!("cannot create the simulated KFD process: {e}");
            e.errno()
        })?;
        Ok(Arc::new(LocalKfd { machine: self.machine.clone(), process }))
    }

    fn drm_ioctl(
        &self,
        minor: u32,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
    ) -> Result<(), Errno> {
        run_inline(cmd, args, args_addr, mem, |payload| {
            self.machine.service().ioctl(None, DeviceFile::Render { minor }, cmd, payload, &[])
        })
    }

    fn has_render_node(&self, minor: u32) -> bool {
        self.machine.service().gpu_by_render_minor(minor).is_some()
    }
}
