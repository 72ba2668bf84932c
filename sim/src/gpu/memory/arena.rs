//! A process's GPU memory: one sparse memfd that backs every VRAM, GTT,
//! doorbell and MMIO allocation of one KFD process.
//!
//! Why one memfd per process rather than one per allocation: the simulator
//! maps it once and can always reach any allocation (even VRAM the application
//! maps `PROT_NONE`), the application maps sub-ranges of it at the GPU VA
//! (`MAP_SHARED|MAP_FIXED`, so CPU VA == GPU VA), daemon mode passes one fd per
//! client instead of one per `hipMalloc`, and a process holds one fd however
//! many buffers it allocates. Memfd pages cost nothing until touched, and freed
//! ranges are punched out so their memory returns to the host.

use super::ranges::RangeAllocator;
use super::MemoryError;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FallocateFlags, MemfdFlags};
use rustix::mm::{MapFlags, ProtFlags};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Internal fds are moved at or above this number, away from the low numbers
/// applications and libraries expect to own (and never 0, which libhsakmt
/// reads as "not open").
pub const INTERNAL_FD_BASE: i32 = 900;

/// Page size of the host and of GPU mappings we hand out.
pub const PAGE_SIZE: u64 = 4096;

/// One memfd mapped into the simulator, with an allocator over its offsets.
#[derive(Debug)]
pub struct Arena {
    fd: OwnedFd,
    base: NonNull<u8>,
    size: u64,
    ranges: Mutex<RangeAllocator>,
}

// SAFETY: `base` points at a shared mapping owned by the arena for its whole
// life; the arena never hands out references into it, only addresses, and every
// access through those addresses is bounds-checked by `GpuVm` and uses
// volatile/atomic or byte-copy operations that tolerate concurrent access.
unsafe impl Send for Arena {}
// SAFETY: as above; the allocator state is behind a mutex.
unsafe impl Sync for Arena {}

impl Arena {
    /// Creates an arena of `size` bytes (rounded up to a page) named `name`
    /// (the name shows in `/proc/<pid>/maps`, which helps debugging).
    pub fn new(name: &str, size: u64) -> Result<Arena, MemoryError> {
        let size = size.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let fd = rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC).map_err(MemoryError::Memfd)?;
        let fd = move_fd_high(fd)?;
        rustix::fs::ftruncate(&fd, size).map_err(MemoryError::Memfd)?;
        // SAFETY: a fresh shared mapping of our own memfd at an address the
        // kernel chooses; it cannot alias any Rust object.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                size as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::NORESERVE,
                &fd,
                0,
            )
        }
        .map_err(MemoryError::Map)?;
        let base = NonNull::new(ptr.cast::<u8>()).ok_or(MemoryError::Map(rustix::io::Errno::NOMEM))?;
        Ok(Arena { fd, base, size, ranges: Mutex::new(RangeAllocator::new(0, size)) })
    }

    /// The memfd, for mapping allocations into the application.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Total size of the arena.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        self.ranges.lock().unwrap_or_else(|e| e.into_inner()).used()
    }

    /// Reserves `len` bytes (a multiple of the page size) aligned to `align`,
    /// returning the offset in the memfd. The pages read as zero.
    pub fn alloc(&self, len: u64, align: u64) -> Result<u64, MemoryError> {
        let len = len.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let align = align.max(PAGE_SIZE).next_power_of_two();
        self.ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(len, align)
            .ok_or(MemoryError::OutOfMemory { requested: len })
    }

    /// Releases a range from [`alloc`](Self::alloc) and gives its pages back
    /// to the host (a later allocation of the same range reads zeros).
    pub fn free(&self, offset: u64, len: u64) {
        let len = len.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        // Punching a hole can only fail on filesystems without support; memfds
        // (shmem) support it, and a failure would only cost memory.
        let _ = rustix::fs::fallocate(&self.fd, FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE, offset, len);
        self.ranges.lock().unwrap_or_else(|e| e.into_inner()).free(offset, len);
    }

    /// The simulator's address of `offset`. Callers keep `offset` within a
    /// range they allocated.
    pub fn host_addr(&self, offset: u64) -> usize {
        debug_assert!(offset <= self.size);
        self.base.as_ptr() as usize + offset as usize
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the mapping was created in `new` with this base and size and
        // nothing else unmaps it; no references into it outlive the arena.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.size as usize) };
    }
}

/// Moves an fd to [`INTERNAL_FD_BASE`] or above (close-on-exec), so that it
/// never takes a number the application is about to use, and is never 0.
pub fn move_fd_high(fd: OwnedFd) -> Result<OwnedFd, MemoryError> {
    rustix::io::fcntl_dupfd_cloexec(&fd, INTERNAL_FD_BASE).map_err(MemoryError::Memfd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn allocations_are_zeroed_and_reused_after_free() {
        let arena = Arena::new("test-arena", 1 << 30).unwrap();
        assert!(arena.fd().as_raw_fd() >= INTERNAL_FD_BASE);
        let off = arena.alloc(8192, 4096).unwrap();
        let p = arena.host_addr(off) as *mut u8;
        // SAFETY: `off` is a freshly allocated range of 8192 bytes in the mapping.
        unsafe {
            assert_eq!(*p, 0);
            *p = 42;
        }
        arena.free(off, 8192);
        let again = arena.alloc(8192, 4096).unwrap();
        assert_eq!(again, off);
        // SAFETY: as above; the punched hole reads back as zero.
        unsafe { assert_eq!(*(arena.host_addr(again) as *const u8), 0) };
    }

    #[test]
    fn oversize_request_is_out_of_memory() {
        let arena = Arena::new("test-arena", 1 << 20).unwrap();
        assert!(matches!(arena.alloc(2 << 20, 4096), Err(MemoryError::OutOfMemory { .. })));
    }
}
