//! The one request service: every request a client makes of the simulated driver — an ioctl
//! on `/dev/kfd` or a render node, an mmap of either — is answered here, the same way whether
//! the client is the application's own process (local mode, the preload library calls in) or
//! a daemon client (the daemon's engine thread calls in). The two modes differ only in how
//! the request travels.
//!
//! Failures come back as the errno the application sees, and each is logged once here:
//! a warning for what the simulated driver does not implement, a debug line for ordinary
//! argument errors (the runtime probes some ioctls and expects refusals).

use crate::config::Device;
use crate::driver::drm::DrmError;
use crate::driver::kfd::ipc::Exports;
use crate::driver::kfd::usage::DeviceUsage;
use crate::driver::kfd::{ArenaRange, DeviceFile, KfdError, KfdProcess, UserptrMode};
use crate::gpu::context::Context as _;
use crate::gpu::memory::{LentMemory, LentPiece};
use crate::gpu::scheduler::Scheduler;
use crate::gpu::trace::{Detail, Track};
use proto::abi::kfd::cmd;
use proto::ioctl::{EINVAL, ENODEV};
use rustix::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;

/// The simulated driver of one machine: its GPUs, the memory every process has in use on
/// them, and the scheduler that runs their queues.
#[derive(Debug)]
pub struct Service {
    gpus: Arc<[Device]>,
    /// Host memory the GPUs can reach (the GTT heap).
    gtt_budget: u64,
    /// Memory in use on each GPU by all processes.
    usage: Arc<DeviceUsage>,
    scheduler: Arc<Scheduler>,
    /// Buffers its processes exported to one another (HIP IPC).
    exports: Arc<Exports>,
}

/// The files that travel with an ioctl (in daemon mode, in the request's fd trailer).
#[derive(Debug, Clone, Copy, Default)]
pub enum IoctlFiles<'a> {
    #[default]
    None,
    /// The memory a USERPTR allocation hands over in daemon mode (the client's memfds).
    Lent(&'a [LentPiece<'a>]),
    /// The dmabuf the application named in GET_DMABUF_INFO or IMPORT_DMABUF.
    Dmabuf(BorrowedFd<'a>),
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Kfd(#[from] KfdError),
    #[error(transparent)]
    Drm(#[from] DrmError),
    #[error("render node {0} does not exist")]
    NoRenderNode(u32),
    #[error("memory lent with an ioctl that takes none")]
    UnexpectedMemory,
    #[error("{0} passes a file the request did not carry")]
    MissingFile(String),
}

impl ServiceError {
    /// The errno the application sees.
    pub fn errno(&self) -> i32 {
        match self {
            ServiceError::Kfd(e) => e.errno(),
            ServiceError::Drm(e) => e.errno(),
            ServiceError::NoRenderNode(_) => ENODEV,
            ServiceError::UnexpectedMemory | ServiceError::MissingFile(_) => EINVAL,
        }
    }

    /// Whether this is something the simulator does not implement (worth a warning).
    fn is_unsupported(&self) -> bool {
        match self {
            ServiceError::Kfd(e) => e.is_unsupported_request() || matches!(e, KfdError::Memory(_)),
            ServiceError::Drm(DrmError::NotSupported(_) | DrmError::UnsupportedQuery(_)) => true,
            _ => false,
        }
    }
}

/// Logs a failed request (a refusal the simulator makes, once per process and message), and
/// turns it into its errno.
fn report(process: Option<&KfdProcess>, what: &str, e: ServiceError) -> i32 {
    let who = process.map(|p| format!("process {}: ", p.pid())).unwrap_or_default();
    if e.is_unsupported() {
        let message = format!("{what}: {e} (returning errno {})", e.errno());
        if process.is_none_or(|p| p.first_warning(&message)) {
            tracing::warn!("{who}{message}");
        } else {
            tracing::debug!("{who}{message} (again)");
        }
    } else {
        tracing::debug!("{who}{what}: {e}");
    }
    e.errno()
}

impl Service {
    /// The driver of `gpus`, whose queues `scheduler` runs; `gtt_budget` is the host memory
    /// the GPUs can reach.
    pub fn new(gpus: Arc<[Device]>, gtt_budget: u64, scheduler: Arc<Scheduler>) -> Service {
        let usage = Arc::new(DeviceUsage::new(gpus.iter().map(|g| g.local_mem_size), gtt_budget));
        Service { gpus, gtt_budget, usage, scheduler, exports: Arc::default() }
    }

    pub fn gpus(&self) -> &Arc<[Device]> {
        &self.gpus
    }

    /// The GPU behind render node `minor`.
    pub fn gpu_by_render_minor(&self, minor: u32) -> Option<&Device> {
        self.gpus.iter().find(|g| g.drm_render_minor == minor)
    }

    /// Memory in use on each GPU by every process.
    pub fn usage(&self) -> &DeviceUsage {
        &self.usage
    }

    /// Host memory the GPUs can reach (the GTT heap).
    pub fn gtt_size(&self) -> u64 {
        self.gtt_budget
    }

    /// The threads that run every queue of every process.
    pub fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// A new KFD process (an open of `/dev/kfd` by a new application process).
    pub fn open_process(&self, pid: u32, userptr: UserptrMode) -> Result<Arc<KfdProcess>, KfdError> {
        KfdProcess::open(
            pid,
            self.gpus.clone(),
            self.usage.clone(),
            self.gtt_budget,
            userptr,
            self.scheduler.clone(),
            self.exports.clone(),
        )
    }

    /// One ioctl, made on `device`, on a payload built by `proto::ioctl`. KFD ioctls act on
    /// `process`; a render node's answer describes the GPU behind it and needs no process.
    /// `lent` is the memory a USERPTR allocation hands over in daemon mode (the client's
    /// memfds), and nothing otherwise. Returns the errno on failure.
    pub fn ioctl(
        &self,
        process: Option<&KfdProcess>,
        device: DeviceFile,
        cmd: u32,
        payload: &mut [u8],
        lent: &[LentPiece<'_>],
    ) -> Result<(), i32> {
        let files = if lent.is_empty() { IoctlFiles::None } else { IoctlFiles::Lent(lent) };
        self.ioctl_with_files(process, device, cmd, payload, files).map(drop)
    }

    /// [`Self::ioctl`] with the files that travel with it in daemon mode (the dmabuf of an
    /// import, the memory of a USERPTR allocation); returns the file the ioctl gives back
    /// (the dmabuf of an EXPORT_DMABUF), for the caller to hand to the application.
    pub fn ioctl_with_files(
        &self,
        process: Option<&KfdProcess>,
        device: DeviceFile,
        cmd: u32,
        payload: &mut [u8],
        files: IoctlFiles<'_>,
    ) -> Result<Option<OwnedFd>, i32> {
        let trace = process.and_then(|p| p.trace());
        let started = trace.map(|_| std::time::Instant::now());
        let done = self.run_ioctl(process, device, cmd, payload, files);
        if let (Some(trace), Some(started)) = (trace, started) {
            let result = done.as_ref().err().map_or(0, |errno| -errno);
            let detail = Detail::Ioctl { result, micros: started.elapsed().as_micros() as u64 };
            trace.record(Track::Ioctls, proto::ioctl::name_of(cmd).into(), started, started, detail);
        }
        done
    }

    fn run_ioctl(
        &self,
        process: Option<&KfdProcess>,
        device: DeviceFile,
        cmd: u32,
        payload: &mut [u8],
        files: IoctlFiles<'_>,
    ) -> Result<Option<OwnedFd>, i32> {
        let what = || format!("{} on {}", proto::ioctl::name_of(cmd), device_name(device));
        let p = match (device, process) {
            (DeviceFile::Render { minor }, _) => {
                let done = match files {
                    IoctlFiles::None => self.drm_ioctl(minor, cmd, payload),
                    _ => Err(ServiceError::UnexpectedMemory),
                };
                return done.map(|()| None).map_err(|e| report(process, &what(), e));
            }
            (DeviceFile::Kfd, Some(p)) => p,
            (DeviceFile::Kfd, None) => {
                let e = KfdError::BadArgument("a KFD ioctl with no KFD process".into());
                return Err(report(process, &what(), e.into()));
            }
        };
        let shared = p.shares_machine();
        let done = match (cmd, files) {
            (cmd::EXPORT_DMABUF, IoctlFiles::None) if shared => p.export_dmabuf(payload).map(Some).map_err(Into::into),
            (cmd::GET_DMABUF_INFO, IoctlFiles::Dmabuf(fd)) => {
                p.dmabuf_info(payload, fd).map(|()| None).map_err(Into::into)
            }
            (cmd::IMPORT_DMABUF, IoctlFiles::Dmabuf(fd)) => {
                p.import_dmabuf(payload, fd).map(|()| None).map_err(Into::into)
            }
            (cmd::GET_DMABUF_INFO | cmd::IMPORT_DMABUF, IoctlFiles::None) if shared => {
                Err(ServiceError::MissingFile(proto::ioctl::name_of(cmd)))
            }
            (_, IoctlFiles::None) => p.ioctl(cmd, payload).map(|()| None).map_err(Into::into),
            (cmd::ALLOC_MEMORY_OF_GPU, IoctlFiles::Lent(lent)) => LentMemory::map(lent)
                .map_err(KfdError::from)
                .and_then(|memory| p.alloc_lent_userptr(payload, memory))
                .map(|()| None)
                .map_err(Into::into),
            _ => Err(ServiceError::UnexpectedMemory),
        };
        done.map_err(|e| report(process, &what(), e))
    }

    /// Where an mmap of `len` bytes at `offset` of `device` lands in `process`'s memory
    /// file. Returns the errno on failure.
    pub fn mmap(&self, process: &KfdProcess, device: DeviceFile, offset: u64, len: u64) -> Result<ArenaRange, i32> {
        if let DeviceFile::Render { minor } = device {
            if self.gpu_by_render_minor(minor).is_none() {
                return Err(report(Some(process), "mmap", ServiceError::NoRenderNode(minor)));
            }
        }
        process.mmap_target(device, offset, len).map_err(|e| {
            let what = format!("mmap of {} at offset {offset:#x} (+{len:#x})", device_name(device));
            // A refused mapping is always worth a line: the application is about to fail.
            tracing::warn!("process {}: {what}: {e}", process.pid());
            e.errno()
        })
    }

    fn drm_ioctl(&self, minor: u32, cmd: u32, payload: &mut [u8]) -> Result<(), ServiceError> {
        let gpu = self.gpu_by_render_minor(minor).ok_or(ServiceError::NoRenderNode(minor))?;
        let node = crate::driver::drm::Node { gpu, usage: self.usage(), gtt_size: self.gtt_size() };
        crate::driver::drm::ioctl(node, cmd, payload).map_err(ServiceError::from)
    }
}

fn device_name(device: DeviceFile) -> String {
    match device {
        DeviceFile::Kfd => "/dev/kfd".into(),
        DeviceFile::Render { minor } => format!("/dev/dri/renderD{minor}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load;

    fn service(config: &str) -> Service {
        let gpus: Arc<[Device]> = load(config).unwrap().gpus().to_vec().into();
        let scheduler = Scheduler::new(gpus.len(), None);
        Service::new(gpus, 1 << 30, scheduler)
    }
    use proto::abi::drm::{self, info_query, AmdgpuInfo, AmdgpuInfoDevice};

    fn dev_info(m: &Service, minor: u32) -> Result<AmdgpuInfoDevice, i32> {
        let q = AmdgpuInfo { return_pointer: 0x1000, return_size: 448, query: info_query::DEV_INFO, input: [0; 4] };
        let mut p = bytemuck::bytes_of(&q).to_vec();
        p.resize(32 + 448, 0);
        m.ioctl(None, DeviceFile::Render { minor }, drm::cmd::AMDGPU_INFO, &mut p, &[])?;
        Ok(bytemuck::pod_read_unaligned(&p[32..]))
    }

    #[test]
    fn each_render_node_describes_its_own_gpu() {
        let m = service("mi210-2gpu");
        let minors: Vec<u32> = m.gpus().iter().map(|g| g.drm_render_minor).collect();
        assert_eq!(minors.len(), 2);
        // The two GPUs differ in their PCI location, which DEV_INFO does not carry, but
        // each node must answer and the third must not exist.
        for &minor in &minors {
            assert_eq!(dev_info(&m, minor).unwrap().device_id, 0x740f);
        }
        assert_eq!(dev_info(&m, minors[1] + 1).unwrap_err(), ENODEV);
    }

    #[test]
    fn kfd_ioctls_need_a_process_and_mmaps_name_real_nodes() {
        let m = service("mi210");
        let mut v = vec![0u8; 8];
        assert_eq!(m.ioctl(None, DeviceFile::Kfd, proto::abi::kfd::cmd::GET_VERSION, &mut v, &[]), Err(EINVAL));
        let p = m.open_process(1, UserptrMode::Direct).unwrap();
        m.ioctl(Some(&p), DeviceFile::Kfd, proto::abi::kfd::cmd::GET_VERSION, &mut v, &[]).unwrap();
        assert_eq!(u32::from_le_bytes(v[0..4].try_into().unwrap()), 1);
        assert_eq!(m.mmap(&p, DeviceFile::Render { minor: 200 }, 0, 4096).unwrap_err(), ENODEV);
    }

    #[test]
    fn memory_is_lent_only_with_an_allocation() {
        use rustix::fd::AsFd;
        let m = service("mi210");
        let p = m.open_process(1, UserptrMode::Lent).unwrap();
        let fd = rustix::fs::memfd_create("lent", rustix::fs::MemfdFlags::ALLOW_SEALING).unwrap();
        rustix::fs::ftruncate(&fd, 4096).unwrap();
        let piece = [LentPiece { fd: fd.as_fd(), offset: 0, len: 4096 }];
        let mut v = vec![0u8; 8];
        let get_version = proto::abi::kfd::cmd::GET_VERSION;
        assert_eq!(m.ioctl(Some(&p), DeviceFile::Kfd, get_version, &mut v, &piece), Err(EINVAL));
    }
}
