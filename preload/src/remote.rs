//! Daemon mode: the driver is rocjitsud, reached over `proto` on a Unix
//! socket. Synchronous and blocking, like the kernel calls it replaces.
//!
//! - One connection is one KFD process in the daemon. It is opened when
//!   `/dev/kfd` is first opened (or a render-node ioctl needs the daemon)
//!   and closed (CLOSE) when the last kfd fd closes.
//! - A thread that blocks in WAIT_EVENTS does so on its own wait connection
//!   attached to the session, so it never holds the connection other
//!   threads need — no polling.
//! - Memory: mmaps of device files map the memfd the daemon sends at the
//!   address the application asked for. A USERPTR registration lends the
//!   daemon the application's own pages: they move into memfds of ours
//!   without losing a write ([`crate::usershare`]), which the ALLOC request
//!   carries; they move back to private memory when freed. A range mapped
//!   shared from one file (HIP IPC events' `/dev/shm` file) lends that file
//!   as it is. Memory mapped from the daemon (device files) cannot be
//!   registered, as the kernel refuses USERPTR of a device mapping.
//! - HIP IPC on ROCm 6.x: EXPORT_DMABUF's reply carries the dmabuf, which
//!   becomes an ordinary fd of the application (ROCR passes it to the
//!   importer over a socket of its own); GET_DMABUF_INFO and IMPORT_DMABUF
//!   carry the fd the application names back to the daemon.
//! - A lost daemon or a broken stream fails every later call with an error
//!   (the RPC client is poisoned); nothing waits forever on a dead peer.

use crate::driver::{Driver, Errno, MapFd, MapSource, MmapArgs, OpenKfd};
use crate::usershare::{page_range, UserShare};
use proto::abi::kfd::{self, alloc_flags, cmd};
use proto::framing::std_io::UnixTransport;
use proto::ioctl::UserMemory;
use proto::payload::{
    FdDesc, FdKind, MachineInfo, MmapRequest, MunmapRequest, StatsRequest, FD_PAGE_SIZE, STATS_PIECE_BYTES,
};
use proto::RpcClient;
use sim::driver::kfd::DeviceFile;
use sim::gpu::stats::StatsReport;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

type Client = RpcClient<UnixTransport>;

/// Asks the daemon at `socket` what it simulates (a tool connection: no
/// KFD process is created).
pub fn query_machine(socket: &Path) -> Result<MachineInfo, String> {
    let t = UnixTransport::connect(socket).map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let c =
        Client::connect_tool(t, std::process::id()).map_err(|e| format!("handshake with {}: {e}", socket.display()))?;
    Ok(c.handshake().machine.clone())
}

/// Ranges of the application's address space shared with the daemon.
#[derive(Debug, Default)]
struct SharedRanges(BTreeMap<u64, u64>);

impl SharedRanges {
    fn add(&mut self, start: u64, len: u64) {
        self.remove(start, len);
        self.0.insert(start, len);
    }

    /// Forgets every range overlapping `[start, start + len)`.
    fn remove(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        let doomed: Vec<u64> =
            self.0.range(..end).filter(|(&s, &l)| s.saturating_add(l) > start).map(|(&s, _)| s).collect();
        for s in doomed {
            self.0.remove(&s);
        }
    }

    fn overlaps(&self, start: u64, len: u64) -> bool {
        let end = start.saturating_add(len);
        self.0.range(..end).next_back().is_some_and(|(&s, &l)| s.saturating_add(l) > start)
    }
}

struct Inner {
    socket: PathBuf,
    machine: MachineInfo,
    /// The connection of the current KFD process, if any.
    conn: Mutex<Option<Client>>,
    shared: Mutex<SharedRanges>,
    /// The application's pages lent to the daemon for USERPTR registrations.
    lent: UserShare,
}

impl Inner {
    fn lock_conn(&self) -> MutexGuard<'_, Option<Client>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The process connection, opened if needed.
    fn with_conn<R>(&self, f: impl FnOnce(&mut Client) -> Result<R, Errno>) -> Result<R, Errno> {
        let mut guard = self.lock_conn();
        if guard.is_none() {
            let t = UnixTransport::connect(&self.socket).map_err(|e| {
                eprintln!("rocjitsu: cannot connect to the daemon at {}: {e}", self.socket.display());
                libc::ENODEV
            })?;
            let c = Client::connect(t, std::process::id()).map_err(|e| {
                eprintln!("rocjitsu: handshake with the daemon at {} failed: {e}", self.socket.display());
                e.errno()
            })?;
            *guard = Some(c);
        }
        f(guard.as_mut().expect("just opened"))
    }
}

/// Maps a failed exchange to an errno. A lost daemon is a lost GPU: the
/// runtime would otherwise retry its waits forever against an error, so the
/// application ends with one clear line instead (as after a GPU reset).
fn rpc_errno(e: proto::error::RpcError) -> Errno {
    use proto::error::RpcError;
    match e {
        RpcError::Ioctl(_) | RpcError::Refused { .. } => e.errno(),
        RpcError::Transport(_) | RpcError::Poisoned => {
            eprintln!("rocjitsu: the connection to the daemon was lost ({e}); the simulated GPU is gone");
            // SAFETY: ends the process at once; nothing can use the GPU any more.
            unsafe { libc::_exit(1) }
        }
        other => {
            tracing::error!("rocjitsu: protocol failure with the daemon: {other}");
            other.errno()
        }
    }
}

/// The daemon as the driver.
pub struct RemoteDriver {
    inner: Arc<Inner>,
}

impl RemoteDriver {
    pub fn new(socket: PathBuf, machine: MachineInfo) -> Self {
        RemoteDriver {
            inner: Arc::new(Inner {
                socket,
                machine,
                conn: Mutex::new(None),
                shared: Mutex::new(SharedRanges::default()),
                lent: UserShare::default(),
            }),
        }
    }

    pub fn machine(&self) -> &MachineInfo {
        &self.inner.machine
    }
}

impl Driver for RemoteDriver {
    fn open_kfd(&self) -> Result<Arc<dyn OpenKfd>, Errno> {
        self.inner.with_conn(|_| Ok(()))?;
        Ok(Arc::new(RemoteKfd { inner: self.inner.clone() }))
    }

    fn drm_ioctl(
        &self,
        minor: u32,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
    ) -> Result<(), Errno> {
        self.inner.with_conn(|c| {
            let out = c.ioctl(DeviceFile::Render { minor }, cmd, args, args_addr, mem).map_err(rpc_errno)?;
            if out.result < 0 {
                Err(-out.result)
            } else {
                Ok(())
            }
        })
    }

    fn has_render_node(&self, minor: u32) -> bool {
        self.inner.machine.render_minors.contains(&minor)
    }
}

struct RemoteKfd {
    inner: Arc<Inner>,
}

thread_local! {
    /// This thread's wait connection: (session id, client).
    static WAIT: RefCell<Option<(u64, Client)>> = const { RefCell::new(None) };
}

impl RemoteKfd {
    /// A blocking WAIT_EVENTS, on this thread's own wait connection.
    fn wait_events(&self, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno> {
        let (session, token) = self.inner.with_conn(|c| Ok((c.handshake().session_id, c.handshake().attach_token)))?;
        let mut wait = |slot: &mut Option<(u64, Client)>| {
            if slot.as_ref().is_none_or(|(s, c)| *s != session || c.is_poisoned()) {
                let t = UnixTransport::connect(&self.inner.socket).map_err(|_| libc::ENODEV)?;
                let c = Client::connect_wait(t, std::process::id(), session, token).map_err(rpc_errno)?;
                *slot = Some((session, c));
            }
            let (_, c) = slot.as_mut().expect("just set");
            let out = c.ioctl(DeviceFile::Kfd, cmd::WAIT_EVENTS, args, args_addr, mem).map_err(rpc_errno)?;
            if out.result < 0 {
                Err(-out.result)
            } else {
                Ok(())
            }
        };
        // A thread that waits while it exits (ROCm 6.x's threads do, from their own
        // thread-local destructors) has lost its thread-locals: it waits on a
        // connection of its own for this one call.
        let mut one_off = None;
        match WAIT.try_with(|w| w.try_borrow_mut().ok().map(|mut w| wait(&mut w))) {
            Ok(Some(result)) => result,
            _ => wait(&mut one_off),
        }
    }
}

impl OpenKfd for RemoteKfd {
    fn ioctl(&self, request: u32, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno> {
        if proto::ioctl::blocks(request, args) {
            return self.wait_events(args, args_addr, mem);
        }
        if request == cmd::ALLOC_MEMORY_OF_GPU {
            let a: kfd::AllocMemoryOfGpuArgs = bytemuck::pod_read_unaligned(args);
            if a.flags & alloc_flags::USERPTR != 0 && a.mmap_offset.is_multiple_of(FD_PAGE_SIZE) && a.size != 0 {
                return self.register_user_memory(&a, args, args_addr, mem);
            }
        }
        if request == cmd::GET_DMABUF_INFO || request == cmd::IMPORT_DMABUF {
            return self.name_dmabuf(request, args, args_addr, mem);
        }
        if request == cmd::EXPORT_DMABUF {
            return self.export_dmabuf(args, args_addr, mem);
        }
        let out =
            self.inner.with_conn(|c| c.ioctl(DeviceFile::Kfd, request, args, args_addr, mem).map_err(rpc_errno))?;
        if out.result < 0 {
            return Err(-out.result);
        }
        if request == cmd::FREE_MEMORY_OF_GPU {
            let handle = bytemuck::pod_read_unaligned::<kfd::FreeMemoryOfGpuArgs>(args).handle;
            self.inner.lent.released(handle);
        }
        Ok(())
    }

    fn mmap_source(&self, file: DeviceFile, req: &MmapArgs) -> Result<MapSource, Errno> {
        let request = MmapRequest {
            addr: req.addr,
            length: req.len,
            prot: req.prot,
            flags: req.flags,
            offset: req.offset as i64,
            device: file,
        };
        let out = self.inner.with_conn(|c| c.mmap(request).map_err(rpc_errno))?;
        if out.result < 0 {
            return Err(-out.result);
        }
        let (desc, fd) = out.fds.into_iter().next().ok_or(libc::EIO)?;
        if req.flags & libc::MAP_SHARED != 0 {
            self.inner.shared.lock().unwrap_or_else(|e| e.into_inner()).add(req.addr, req.len);
        }
        Ok(MapSource { fd: MapFd::Owned(fd), offset: desc.offset })
    }

    fn munmapped(&self, addr: u64, len: u64) {
        // munmap unmaps whole pages: the last one counts whole.
        let (addr, len) = page_range(addr, len);
        self.inner.lent.munmapped(addr, len);
        let was_shared = {
            let mut shared = self.inner.shared.lock().unwrap_or_else(|e| e.into_inner());
            let overlaps = shared.overlaps(addr, len);
            shared.remove(addr, len);
            overlaps
        };
        if was_shared {
            // Tell the daemon (for its bookkeeping); a failure changes nothing here.
            let _ = self.inner.with_conn(|c| c.munmap(MunmapRequest { addr, length: len }).map_err(rpc_errno));
        }
    }

    fn is_shared_range(&self, addr: u64, len: u64) -> bool {
        self.inner.shared.lock().unwrap_or_else(|e| e.into_inner()).overlaps(addr, len)
            || self.inner.lent.overlaps(addr, len)
    }

    fn enable_stats(&self) -> Result<(), Errno> {
        self.inner.with_conn(|c| c.stats(StatsRequest::Enable).map(drop).map_err(rpc_errno))
    }

    /// Asked on the open connection only: after CLOSE the session and its numbers are gone.
    fn stats_report(&self) -> Option<StatsReport> {
        let mut guard = self.inner.lock_conn();
        let document = guard.as_mut()?.stats(StatsRequest::Report).map_err(rpc_errno).ok()?;
        StatsReport::from_json(&document)
            .map_err(|e| tracing::warn!("rocjitsu: the daemon's statistics cannot be read: {e}"))
            .ok()
    }

    fn enable_trace(&self) -> Result<(), Errno> {
        self.inner.with_conn(|c| c.stats(StatsRequest::EnableTrace).map(drop).map_err(rpc_errno))
    }

    /// In frame-sized pieces (the daemon names the process itself, from its command line).
    fn trace_document(&self, _process_name: &str) -> Option<Vec<u8>> {
        let mut guard = self.inner.lock_conn();
        let c = guard.as_mut()?;
        let mut document = Vec::new();
        loop {
            let offset = document.len() as u64;
            let piece = c.stats(StatsRequest::TracePiece { offset }).map_err(rpc_errno).ok()?;
            let last = piece.len() < STATS_PIECE_BYTES;
            document.extend_from_slice(&piece);
            if last {
                return Some(document);
            }
        }
    }

    fn close(&self) {
        if let Some(c) = self.inner.lock_conn().take() {
            let _ = c.close();
        }
        self.inner.lent.session_closed();
    }

    /// The connection, and the memory files lending the application's pages.
    fn owns_fd(&self, fd: std::os::fd::RawFd) -> bool {
        let connection = self.inner.lock_conn().as_ref().is_some_and(|c| c.transport().stream().as_raw_fd() == fd);
        connection || self.inner.lent.owns_fd(fd)
    }
}

impl RemoteKfd {
    /// EXPORT_DMABUF: the dmabuf the daemon sends becomes the application's
    /// `dmabuf_fd`, an ordinary fd (low number, close-on-exec as asked).
    fn export_dmabuf(&self, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno> {
        let flags = bytemuck::pod_read_unaligned::<kfd::ExportDmabufArgs>(args).flags as i32;
        let out = self
            .inner
            .with_conn(|c| c.ioctl(DeviceFile::Kfd, cmd::EXPORT_DMABUF, args, args_addr, mem).map_err(rpc_errno))?;
        if out.result < 0 {
            return Err(-out.result);
        }
        let (_, file) = out.fds.into_iter().find(|(d, _)| d.kind == FdKind::Dmabuf).ok_or(libc::EIO)?;
        let fd = application_fd(file, flags & libc::O_CLOEXEC != 0)?;
        let mut a: kfd::ExportDmabufArgs = bytemuck::pod_read_unaligned(args);
        a.dmabuf_fd = fd as u32;
        args.copy_from_slice(bytemuck::bytes_of(&a));
        Ok(())
    }

    /// GET_DMABUF_INFO / IMPORT_DMABUF: sends the dmabuf the application names
    /// with the request (the daemon knows a dmabuf by its file, not by a
    /// number in this process).
    fn name_dmabuf(&self, request: u32, args: &mut [u8], args_addr: u64, mem: &dyn UserMemory) -> Result<(), Errno> {
        let number = if request == cmd::GET_DMABUF_INFO {
            bytemuck::pod_read_unaligned::<kfd::GetDmabufInfoArgs>(args).dmabuf_fd
        } else {
            bytemuck::pod_read_unaligned::<kfd::ImportDmabufArgs>(args).dmabuf_fd
        };
        let number = i32::try_from(number).map_err(|_| libc::EBADF)?;
        // SAFETY: the fd is only borrowed for this call, during which the
        // application (which passed it to a blocking ioctl) keeps it open; fstat
        // below fails cleanly if it is not open at all.
        let fd = unsafe { BorrowedFd::borrow_raw(number) };
        let st = rustix::fs::fstat(fd).map_err(|e| e.raw_os_error())?;
        if st.st_size <= 0 {
            // No dmabuf of ours is empty: this is some other file.
            return Err(libc::EINVAL);
        }
        let desc = FdDesc { kind: FdKind::Dmabuf, access: 0, offset: 0, length: st.st_size as u64 };
        let out = self
            .inner
            .with_conn(|c| c.ioctl_with_memory(request, args, args_addr, mem, &[(desc, fd)]).map_err(rpc_errno))?;
        if out.result < 0 {
            return Err(-out.result);
        }
        Ok(())
    }

    /// ALLOC_MEMORY_OF_GPU of USERPTR memory: lends the daemon the pages of
    /// the registered range along with the request.
    fn register_user_memory(
        &self,
        a: &kfd::AllocMemoryOfGpuArgs,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
    ) -> Result<(), Errno> {
        let (start, len) = page_range(a.mmap_offset, a.size);
        if self.inner.shared.lock().unwrap_or_else(|e| e.into_inner()).overlaps(start, len) {
            // A mapping of the daemon's memory: the kernel cannot pin a
            // device mapping's pages either.
            tracing::error!(
                "cannot register {start:#x}..{:#x} with the simulated GPU: it is device memory mapped from the GPU",
                start + len
            );
            return Err(libc::EFAULT);
        }
        let loan = self.inner.lent.lend(start, len).map_err(|e| {
            tracing::error!("cannot register {start:#x}..{:#x} with the simulated GPU: {e}", start + len);
            e.errno()
        })?;
        let out = self.inner.with_conn(|c| {
            c.ioctl_with_memory(cmd::ALLOC_MEMORY_OF_GPU, args, args_addr, mem, &loan.descriptors()).map_err(rpc_errno)
        });
        match out {
            Ok(out) if out.result == 0 => {
                let reply: kfd::AllocMemoryOfGpuArgs = bytemuck::pod_read_unaligned(args);
                self.inner.lent.registered(loan, reply.handle);
                Ok(())
            }
            Ok(out) => {
                self.inner.lent.refused(loan);
                Err(-out.result)
            }
            Err(e) => {
                self.inner.lent.refused(loan);
                Err(e)
            }
        }
    }
}

/// Makes a file received from the daemon an ordinary fd of the application:
/// the lowest free number from 3 (as a kernel-made fd would be), with
/// close-on-exec as asked.
fn application_fd(file: OwnedFd, cloexec: bool) -> Result<i32, Errno> {
    let fd = rustix::io::fcntl_dupfd_cloexec(&file, 3).map_err(|e| e.raw_os_error())?;
    if !cloexec {
        rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty()).map_err(|e| e.raw_os_error())?;
    }
    Ok(fd.into_raw_fd())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usershare::test_support::{needs_uffd, private};

    /// A RemoteKfd with no connection (none of these tests reaches the daemon).
    fn unconnected() -> RemoteKfd {
        let driver = RemoteDriver::new(PathBuf::from("/nonexistent/rocjitsu.sock"), MachineInfo::default());
        RemoteKfd { inner: driver.inner }
    }

    /// The memory files lending pages are the driver's: the close and dup2
    /// hooks refuse the application's attempts on them.
    #[test]
    fn lent_memory_files_are_owned() {
        needs_uffd();
        let kfd = unconnected();
        let base = private(2 * FD_PAGE_SIZE);
        let loan = kfd.inner.lent.lend(base, 2 * FD_PAGE_SIZE).unwrap();
        let fd = loan.descriptors()[0].1.as_raw_fd();
        assert!(fd >= sim::gpu::memory::arena::INTERNAL_FD_BASE);
        kfd.inner.lent.registered(loan, 5);
        assert!(kfd.owns_fd(fd));
        let other = tempfile::tempfile().unwrap();
        let high = rustix::io::fcntl_dupfd_cloexec(&other, sim::gpu::memory::arena::INTERNAL_FD_BASE).unwrap();
        assert!(!kfd.owns_fd(high.as_raw_fd()), "an fd of the application's is not ours");
        assert!(!kfd.owns_fd(0));
        kfd.inner.lent.released(5);
        assert!(!kfd.owns_fd(fd), "the file is gone with its last registration");
    }

    /// munmap unmaps whole pages: an unmap ending inside a lent page forgets
    /// all of it, and only it.
    #[test]
    fn an_unmap_forgets_whole_pages() {
        needs_uffd();
        let kfd = unconnected();
        let page = FD_PAGE_SIZE;
        let base = private(3 * page);
        let loan = kfd.inner.lent.lend(base, 3 * page).unwrap();
        kfd.inner.lent.registered(loan, 6);
        // SAFETY: our own test mapping; munmap(base, page + 1) unmaps two pages.
        unsafe { rustix::mm::munmap(base as *mut _, (page + 1) as usize) }.unwrap();
        kfd.munmapped(base, page + 1);
        assert!(!kfd.is_shared_range(base + page, page), "the second page went whole");
        assert!(kfd.is_shared_range(base + 2 * page, page), "the third page is still lent");
        kfd.inner.lent.released(6);
        assert!(!kfd.is_shared_range(base, 3 * page));
    }

    /// Memory mapped from the daemon cannot be registered (EFAULT, as the
    /// kernel answers for a device mapping), before any page is looked at.
    #[test]
    fn device_memory_cannot_be_registered() {
        let kfd = unconnected();
        let base = private(2 * FD_PAGE_SIZE);
        kfd.inner.shared.lock().unwrap().add(base + FD_PAGE_SIZE, FD_PAGE_SIZE);
        let a = kfd::AllocMemoryOfGpuArgs {
            size: 2 * FD_PAGE_SIZE,
            mmap_offset: base,
            flags: alloc_flags::USERPTR,
            ..Default::default()
        };
        let mut args = bytemuck::bytes_of(&a).to_vec();
        let r = kfd.ioctl(cmd::ALLOC_MEMORY_OF_GPU, &mut args, 0, &crate::usermem::SelfMemory);
        assert_eq!(r, Err(libc::EFAULT));
        assert!(!kfd.inner.lent.overlaps(base, 2 * FD_PAGE_SIZE), "nothing was lent");
    }

    #[test]
    fn shared_ranges_track_overlaps() {
        let mut s = SharedRanges::default();
        s.add(0x1000, 0x2000);
        s.add(0x8000, 0x1000);
        assert!(s.overlaps(0x2fff, 1));
        assert!(!s.overlaps(0x3000, 0x1000));
        assert!(s.overlaps(0x7000, 0x1001));
        s.remove(0x2000, 0x10);
        assert!(!s.overlaps(0x1000, 0x2000), "a partial unmap forgets the whole range");
        assert!(s.overlaps(0x8000, 1));
    }
}
