//! Memory another process lends the simulator: in daemon mode, the pages of a
//! USERPTR registration are the client application's own, backed by memfds
//! the client created; the daemon maps those memfds side by side so that the
//! registered range is one contiguous host range here too.
//!
//! The client is not trusted: a file that shrinks under our mapping would
//! turn a GPU access into SIGBUS in the daemon. A memfd sealed against
//! shrinking cannot; any other regular file (a `MAP_SHARED` mapping of a
//! `/dev/shm` file the client registered, which other processes share and
//! so cannot be moved into a memfd of ours) is mapped under a
//! [`truncation`](super::truncation) guard. Each piece must lie within its
//! file, or it is refused.

use super::truncation::{self, Guard};
use super::{MemoryError, PAGE_SIZE};
use rustix::fd::BorrowedFd;
use rustix::fs::SealFlags;
use rustix::mm::{MapFlags, ProtFlags};
use std::ptr::NonNull;

/// One piece of a lent range: `len` bytes at `offset` of `fd`.
#[derive(Debug, Clone, Copy)]
pub struct LentPiece<'a> {
    pub fd: BorrowedFd<'a>,
    pub offset: u64,
    pub len: u64,
}

/// Why lent memory was refused.
#[derive(Debug, thiserror::Error)]
pub enum LentError {
    #[error("piece {index} is not a regular file")]
    NotAFile { index: usize },
    #[error("piece {index}: {offset:#x}+{len:#x} is not page-aligned or lies beyond the {size:#x}-byte file")]
    BadRange { index: usize, offset: u64, len: u64, size: u64 },
    #[error("no pieces")]
    Empty,
}

/// The pieces mapped contiguously in this process; unmapped when dropped.
#[derive(Debug)]
pub struct LentMemory {
    base: NonNull<u8>,
    len: u64,
    /// Set when a piece's file could shrink; released after the unmapping.
    _guard: Option<Guard>,
}

// SAFETY: `base` is a mapping owned by this value for its whole life; like
// the arena, it hands out addresses only, and every access through them is
// bounds-checked by `GpuVm` and tolerates concurrent access.
unsafe impl Send for LentMemory {}
// SAFETY: as above; there is no interior state.
unsafe impl Sync for LentMemory {}

impl LentMemory {
    /// Checks every piece and maps them one after the other.
    pub fn map(pieces: &[LentPiece<'_>]) -> Result<LentMemory, MemoryError> {
        if pieces.is_empty() {
            return Err(LentError::Empty.into());
        }
        let mut total = 0u64;
        let mut may_shrink = false;
        for (index, p) in pieces.iter().enumerate() {
            let stat = rustix::fs::fstat(p.fd).map_err(|_| LentError::NotAFile { index })?;
            if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
                return Err(LentError::NotAFile { index }.into());
            }
            let sealed = rustix::fs::fcntl_get_seals(p.fd).is_ok_and(|s| s.contains(SealFlags::SHRINK));
            may_shrink |= !sealed;
            // The page that holds the end of the file maps whole (the bytes past the end
            // read zero): a 0x94-byte /dev/shm file lends its one page.
            let size = (stat.st_size as u64).div_ceil(PAGE_SIZE) * PAGE_SIZE;
            let aligned = p.offset.is_multiple_of(PAGE_SIZE) && p.len.is_multiple_of(PAGE_SIZE) && p.len > 0;
            if !aligned || p.offset.checked_add(p.len).is_none_or(|end| end > size) {
                return Err(LentError::BadRange { index, offset: p.offset, len: p.len, size }.into());
            }
            total = total.checked_add(p.len).ok_or(MemoryError::OutOfMemory { requested: u64::MAX })?;
        }
        // Reserve the whole range, then put each piece in its place.
        // SAFETY: a fresh inaccessible mapping at an address the kernel picks.
        let base = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                total as usize,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }
        .map_err(MemoryError::Map)?;
        let base = NonNull::new(base.cast::<u8>()).ok_or(MemoryError::Map(rustix::io::Errno::NOMEM))?;
        // From here on, dropping `lent` unmaps the reservation and whatever was placed in it.
        let guard = if may_shrink { Some(truncation::guard(base.as_ptr() as usize, total as usize)?) } else { None };
        let lent = LentMemory { base, len: total, _guard: guard };
        let mut at = 0u64;
        for p in pieces {
            // SAFETY: replaces part of our own reservation (inside [base, base + total)) with a
            // shared mapping of a file range checked above (sealed, or guarded if it shrinks).
            unsafe {
                rustix::mm::mmap(
                    base.as_ptr().add(at as usize).cast(),
                    p.len as usize,
                    ProtFlags::READ | ProtFlags::WRITE,
                    MapFlags::SHARED | MapFlags::FIXED,
                    p.fd,
                    p.offset,
                )
            }
            .map_err(MemoryError::Map)?;
            at += p.len;
        }
        Ok(lent)
    }

    /// The simulator's address of the first byte.
    pub fn host_addr(&self) -> usize {
        self.base.as_ptr() as usize
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for LentMemory {
    fn drop(&mut self) {
        // SAFETY: the reservation created in `map`; every reference to it
        // (GPU VM snapshots) holds this value alive, so none outlives it.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len as usize) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::fs::MemfdFlags;

    fn memfd(size: u64, seals: SealFlags) -> OwnedFd {
        let fd = rustix::fs::memfd_create("lent-test", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).unwrap();
        rustix::fs::ftruncate(&fd, size).unwrap();
        if !seals.is_empty() {
            rustix::fs::fcntl_add_seals(&fd, seals).unwrap();
        }
        fd
    }

    #[test]
    fn pieces_become_one_range_sharing_the_lenders_pages() {
        let a = memfd(0x3000, SealFlags::SHRINK | SealFlags::GROW);
        let b = memfd(0x1000, SealFlags::SHRINK);
        rustix::io::pwrite(&a, b"alpha", 0x2000).unwrap();
        rustix::io::pwrite(&b, b"beta", 0).unwrap();
        let lent = LentMemory::map(&[
            LentPiece { fd: a.as_fd(), offset: 0x1000, len: 0x2000 },
            LentPiece { fd: b.as_fd(), offset: 0, len: 0x1000 },
        ])
        .unwrap();
        assert_eq!(lent.len(), 0x3000);
        let p = lent.host_addr() as *mut u8;
        // SAFETY: reading and writing inside the 0x3000-byte mapping.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p.add(0x1000), 5), b"alpha");
            assert_eq!(std::slice::from_raw_parts(p.add(0x2000), 4), b"beta");
            *p.add(0x2004) = b'!';
        }
        let mut back = [0u8; 5];
        rustix::io::pread(&b, &mut back, 0).unwrap();
        assert_eq!(&back, b"beta!", "writes reach the lender's file");
    }

    #[test]
    fn short_misaligned_or_unmappable_pieces_are_refused() {
        let sealed = memfd(0x2000, SealFlags::SHRINK);
        fn piece(fd: &OwnedFd, offset: u64, len: u64) -> LentPiece<'_> {
            LentPiece { fd: fd.as_fd(), offset, len }
        }
        let refused = |pieces: &[LentPiece<'_>]| match LentMemory::map(pieces) {
            Err(MemoryError::Lent(e)) => e,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(matches!(
            refused(&[piece(&sealed, 0, 0x1000), piece(&sealed, 0x1000, 0x2000)]),
            LentError::BadRange { index: 1, .. }
        ));
        assert!(matches!(refused(&[piece(&sealed, 0x800, 0x1000)]), LentError::BadRange { .. }));
        assert!(matches!(refused(&[piece(&sealed, u64::MAX - 0xfff, 0x1000)]), LentError::BadRange { .. }));
        assert!(matches!(refused(&[]), LentError::Empty));
        // A pipe is no file to map.
        let (r, _w) = rustix::pipe::pipe().unwrap();
        assert!(matches!(refused(&[piece(&r, 0, 0x1000)]), LentError::NotAFile { .. }));
    }

    #[test]
    fn a_file_that_may_shrink_is_mapped_under_guard() {
        // A /dev/shm file that the lender (and others) share: it cannot be sealed.
        let unsealed = memfd(0x2000, SealFlags::empty());
        rustix::io::pwrite(&unsealed, b"shm", 0x1000).unwrap();
        let lent = LentMemory::map(&[LentPiece { fd: unsealed.as_fd(), offset: 0, len: 0x2000 }]).unwrap();
        let p = lent.host_addr() as *mut u8;
        // SAFETY: inside the 0x2000-byte mapping; after the truncation the guard
        // turns the vanished page's SIGBUS into a zero page.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p.add(0x1000), 3), b"shm");
            rustix::fs::ftruncate(&unsealed, 0x1000).unwrap();
            assert_eq!(p.add(0x1000).read_volatile(), 0, "the lender took the page away: zeros, no SIGBUS");
            assert_eq!(p.read_volatile(), 0);
        }
    }
}
