//! Sharing GPU memory between processes (HIP IPC).
//!
//! Two ways in, as the driver has them:
//! - ROCm 5.2 uses the ROCm-DKMS legacy ioctls: IPC_EXPORT_HANDLE turns a buffer
//!   into a 128-bit share handle, IPC_IMPORT_HANDLE in another process maps it
//!   at a VA of that process's choosing.
//! - ROCm 6.x exports a dmabuf fd (EXPORT_DMABUF), passes it to the importer over
//!   a UNIX socket of ROCR's own, and the importer asks GET_DMABUF_INFO and
//!   IMPORT_DMABUF with it.
//!
//! Both need the importer to live in the same simulated machine as the exporter,
//! i.e. the daemon: a process that runs the simulator inside itself (local mode)
//! has a GPU nobody else can reach, so its exports are refused with a message
//! that says so.
//!
//! The memory itself never moves: an exported buffer stays in its exporter's
//! arena, and the arena lives as long as any process still holds the buffer
//! ([`SharedBuffer`] keeps it). The handles are capabilities: a share key is 128
//! random bits, a dmabuf is identified by the inode of a file only the daemon
//! creates; the exporter's free (or exit) revokes both, so later opens fail,
//! while importers keep the memory until they free it — the driver's reference
//! counting.

use super::mem::{Allocation, Backing};
use super::process::KfdProcess;
use super::usage::DeviceUsage;
use super::KfdError;
use crate::gpu::memory::{Arena, PAGE_SIZE};
use proto::abi::kfd::{self, alloc_flags};
use proto::ioctl::split_payload;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{MemfdFlags, SealFlags};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The memory of a buffer that has been exported: it outlives the exporter's
/// allocation while importers hold it. Dropping the last reference gives the
/// pages back to the arena and the bytes back to the GPU's usage.
#[derive(Debug)]
pub struct SharedBuffer {
    arena: Arc<Arena>,
    offset: u64,
    size: u64,
    gpu: usize,
    /// The exporter's allocation flags.
    flags: u32,
    usage: Arc<DeviceUsage>,
}

impl SharedBuffer {
    pub(crate) fn new(arena: Arc<Arena>, offset: u64, a: &Allocation, usage: Arc<DeviceUsage>) -> Self {
        SharedBuffer { arena, offset, size: a.size, gpu: a.gpu, flags: a.flags, usage }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Where the buffer lies in its arena.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the simulator reaches the buffer.
    pub fn host_addr(&self) -> usize {
        self.arena.host_addr(self.offset)
    }

    /// The arena the buffer lives in (which a GPU mapping of it keeps alive).
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// VRAM or GTT.
    pub fn kind(&self) -> u32 {
        self.flags & alloc_flags::KIND_MASK
    }

    /// The flags an importer's allocation gets: the kind, writable and
    /// executable (as the driver gives every imported buffer).
    pub fn import_flags(&self) -> u32 {
        self.kind() | alloc_flags::WRITABLE | alloc_flags::EXECUTABLE
    }
}

impl Drop for SharedBuffer {
    fn drop(&mut self) {
        self.arena.free(self.offset, self.size);
        match self.kind() {
            alloc_flags::VRAM => self.usage.release_vram(self.gpu, self.size),
            alloc_flags::GTT => self.usage.release_gtt(self.gpu, self.size),
            _ => {}
        }
    }
}

/// The identity of a dmabuf: the inode of the file the daemon made for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(fd: BorrowedFd<'_>) -> Result<FileId, KfdError> {
        let st = rustix::fs::fstat(fd).map_err(|e| KfdError::BadArgument(format!("not a dmabuf fd: {e}")))?;
        Ok(FileId { dev: st.st_dev, ino: st.st_ino })
    }
}

/// One exported dmabuf: the buffer, and the file whose inode names it (kept
/// open here so that the inode cannot be reused while the export lives).
#[derive(Debug)]
struct Dmabuf {
    buffer: Arc<SharedBuffer>,
    file: OwnedFd,
}

/// A legacy share handle: the buffer, and the flags the exporter passed (what
/// importers get back, as the DKMS driver does).
#[derive(Debug)]
struct Shared {
    buffer: Arc<SharedBuffer>,
    flags: u32,
}

/// Every exported buffer of one machine, by the names importers use.
#[derive(Debug, Default)]
pub struct Exports {
    inner: Mutex<ExportsInner>,
}

#[derive(Debug, Default)]
struct ExportsInner {
    by_key: HashMap<u128, Shared>,
    by_file: HashMap<FileId, Dmabuf>,
}

impl Exports {
    fn inner(&self) -> MutexGuard<'_, ExportsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The share handle of `buffer` (the same one each time it is exported).
    fn share_key(&self, buffer: &Arc<SharedBuffer>, flags: u32) -> Result<[u32; 4], KfdError> {
        let mut inner = self.inner();
        if let Some((key, _)) = inner.by_key.iter().find(|(_, s)| Arc::ptr_eq(&s.buffer, buffer)) {
            return Ok(key_words(*key));
        }
        let key = loop {
            let key = random_key()?;
            if key != 0 && !inner.by_key.contains_key(&key) {
                break key;
            }
        };
        inner.by_key.insert(key, Shared { buffer: buffer.clone(), flags });
        Ok(key_words(key))
    }

    /// The buffer a share handle names, and the exporter's flags.
    fn by_key(&self, words: [u32; 4]) -> Result<(Arc<SharedBuffer>, u32), KfdError> {
        let key = words.iter().rev().fold(0u128, |k, w| (k << 32) | *w as u128);
        self.inner()
            .by_key
            .get(&key)
            .map(|s| (s.buffer.clone(), s.flags))
            .ok_or_else(|| KfdError::BadArgument("no exported buffer has this share handle (forged, or freed)".into()))
    }

    /// A new fd of `buffer`'s dmabuf (the same dmabuf each time it is exported).
    fn dmabuf_fd(&self, buffer: &Arc<SharedBuffer>) -> Result<OwnedFd, KfdError> {
        let mut inner = self.inner();
        let existing = inner.by_file.values().find(|d| Arc::ptr_eq(&d.buffer, buffer));
        let file = match existing {
            Some(d) => dup(d.file.as_fd())?,
            None => {
                let file = dmabuf_file(buffer.size)?;
                let copy = dup(file.as_fd())?;
                inner.by_file.insert(FileId::of(file.as_fd())?, Dmabuf { buffer: buffer.clone(), file });
                copy
            }
        };
        Ok(file)
    }

    /// The buffer behind dmabuf fd `fd`.
    fn by_dmabuf(&self, fd: BorrowedFd<'_>) -> Result<Arc<SharedBuffer>, KfdError> {
        let id = FileId::of(fd)?;
        self.inner().by_file.get(&id).map(|d| d.buffer.clone()).ok_or_else(|| {
            KfdError::BadArgument("the fd is not the dmabuf of an exported buffer (forged, or freed)".into())
        })
    }

    /// The exporter freed `buffer`: its names stop working (importers keep
    /// the memory they already have).
    pub(crate) fn revoke(&self, buffer: &Arc<SharedBuffer>) {
        let mut inner = self.inner();
        inner.by_key.retain(|_, s| !Arc::ptr_eq(&s.buffer, buffer));
        inner.by_file.retain(|_, d| !Arc::ptr_eq(&d.buffer, buffer));
    }

    /// Exported names alive (for tests and status).
    pub fn len(&self) -> usize {
        let inner = self.inner();
        inner.by_key.len() + inner.by_file.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn key_words(key: u128) -> [u32; 4] {
    std::array::from_fn(|i| (key >> (32 * i)) as u32)
}

fn random_key() -> Result<u128, KfdError> {
    let mut b = [0u8; 16];
    rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty())
        .ok()
        .filter(|&n| n == b.len())
        .ok_or(KfdError::Busy("no random bytes for a share handle"))?;
    Ok(u128::from_le_bytes(b))
}

fn dup(fd: BorrowedFd<'_>) -> Result<OwnedFd, KfdError> {
    rustix::io::fcntl_dupfd_cloexec(fd, 3).map_err(|e| KfdError::Memory(crate::gpu::memory::MemoryError::Memfd(e)))
}

/// The file that stands for a dmabuf: an empty memfd of the buffer's size, so
/// that `lseek(SEEK_END)` gives the size as on a real dmabuf, sealed so that
/// nobody can give it pages or change its size. It carries no memory: the
/// buffer stays where it is, and the file is only its name.
fn dmabuf_file(size: u64) -> Result<OwnedFd, KfdError> {
    use crate::gpu::memory::MemoryError;
    let fd = rustix::fs::memfd_create("rocjitsu-dmabuf", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)
        .map_err(MemoryError::Memfd)?;
    rustix::fs::ftruncate(&fd, size).map_err(MemoryError::Memfd)?;
    rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL)
        .map_err(MemoryError::Memfd)?;
    Ok(crate::gpu::memory::arena::move_fd_high(fd)?)
}

/// The refusal of an export by a process with a GPU of its own.
pub(crate) fn needs_daemon() -> KfdError {
    KfdError::NeedsDaemon("sharing GPU memory between processes (HIP IPC)")
}

impl KfdProcess {
    /// The buffer behind `handle`, shared from now on.
    fn share(&self, handle: u64) -> Result<Arc<SharedBuffer>, KfdError> {
        if !self.shares_machine() {
            return Err(needs_daemon());
        }
        self.allocs().share(handle, &self.arena)
    }

    /// Maps `buffer` into this process as a new allocation at `va` on GPU `gpu_id`.
    fn import(&self, buffer: Arc<SharedBuffer>, gpu_id: u32, va: u64) -> Result<u64, KfdError> {
        let gpu = self.gpu_index(gpu_id)?;
        if !va.is_multiple_of(PAGE_SIZE) {
            return Err(KfdError::BadArgument(format!("import at {va:#x}, not a page address")));
        }
        Ok(self.allocs().import(buffer, gpu, gpu_id, va))
    }

    /// IPC_EXPORT_HANDLE (legacy IPC).
    pub(crate) fn ipc_export(&self, a: &mut kfd::IpcExportHandleArgs) -> Result<(), KfdError> {
        let buffer = self.share(a.handle)?;
        a.share_handle = self.exports.share_key(&buffer, a.flags)?;
        tracing::debug!(handle = a.handle, size = buffer.size, "IPC export");
        Ok(())
    }

    /// IPC_IMPORT_HANDLE (legacy IPC). libhsakmt maps the buffer to the CPU
    /// at the returned `mmap_offset` of the render fd (and only then records
    /// which GPU the buffer is on).
    pub(crate) fn ipc_import(&self, a: &mut kfd::IpcImportHandleArgs) -> Result<(), KfdError> {
        let (buffer, flags) = self.exports.by_key(a.share_handle)?;
        a.handle = self.import(buffer, a.gpu_id, a.va_addr)?;
        a.mmap_offset = self.allocs().get(a.handle).map_or(0, |alloc| alloc.mmap_offset);
        a.flags = flags;
        Ok(())
    }

    /// EXPORT_DMABUF: a new fd of the buffer's dmabuf, for the caller to hand
    /// to the application (the payload's `dmabuf_fd` is the caller's to fill).
    pub fn export_dmabuf(&self, payload: &mut [u8]) -> Result<OwnedFd, KfdError> {
        let view = split_payload(kfd::cmd::EXPORT_DMABUF, payload)?;
        let a: kfd::ExportDmabufArgs = view.get();
        let buffer = self.share(a.handle)?;
        tracing::debug!(handle = a.handle, size = buffer.size, "dmabuf export");
        self.exports.dmabuf_fd(&buffer)
    }

    /// GET_DMABUF_INFO on `dmabuf` (the fd the application named).
    pub fn dmabuf_info(&self, payload: &mut [u8], dmabuf: BorrowedFd<'_>) -> Result<(), KfdError> {
        let mut view = split_payload(kfd::cmd::GET_DMABUF_INFO, payload)?;
        let mut a: kfd::GetDmabufInfoArgs = view.get();
        let buffer = self.exports.by_dmabuf(dmabuf)?;
        a.size = buffer.size;
        a.gpu_id = self.gpus()[buffer.gpu].gpu_id;
        a.flags = buffer.kind() | (buffer.flags & alloc_flags::PUBLIC);
        // KFD buffers carry no metadata (that is for graphics interop).
        a.metadata_size = 0;
        view.set(&a);
        Ok(())
    }

    /// IMPORT_DMABUF of `dmabuf` (the fd the application named).
    pub fn import_dmabuf(&self, payload: &mut [u8], dmabuf: BorrowedFd<'_>) -> Result<(), KfdError> {
        let mut view = split_payload(kfd::cmd::IMPORT_DMABUF, payload)?;
        let mut a: kfd::ImportDmabufArgs = view.get();
        let buffer = self.exports.by_dmabuf(dmabuf)?;
        a.handle = self.import(buffer, a.gpu_id, a.va_addr)?;
        view.set(&a);
        Ok(())
    }
}

/// The backing of an imported buffer.
pub(crate) fn imported_backing(buffer: &SharedBuffer) -> Backing {
    Backing::Shared { host: buffer.host_addr() }
}
