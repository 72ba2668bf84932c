//! Moving live application pages between private memory and a memory file
//! without losing a single write.
//!
//! A range of the application's address space is switched from one backing
//! to the other (private anonymous memory → a memfd to lend it, and back) in
//! five steps:
//! 1. write-protect the range with userfaultfd: from now on every thread that
//!    writes to it sleeps in the kernel (reads go on);
//! 2. copy the contents (nothing can change them any more) — from the
//!    application's pages when lending, from the memory file when giving
//!    back (the application may have made its pages unreadable since);
//! 3. atomically replace the mapping (`mmap(MAP_FIXED)` of the memfd, or
//!    `mremap` of the private copy) — one system call, under the kernel's
//!    mmap lock, so no access ever sees a hole;
//! 4. close the userfaultfd: the sleeping writers wake and retry their write,
//!    which now lands in the new mapping, which holds the copied contents.
//!
//! So a write either happened before step 1 (and is copied) or waits and
//! happens after step 3 (in the new mapping): none is lost, by construction.
//!
//! The steps run on a thread of ours, never on an application thread: the
//! range may contain the calling thread's own stack (a registered stack
//! buffer), and its page-rounded edges may contain malloc's bookkeeping or
//! any of our own heap data. Between steps 1 and 4 the mover thread therefore
//! writes nothing but its own stack and the fresh mappings it created: it
//! allocates nothing, logs nothing and takes no lock, so no write of its own
//! can wait on the protection it holds.

use super::uffd::{self, WriteProtect};
use super::PAGE;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::SeekFrom;
use rustix::io::Errno;
use rustix::mm::{MapFlags, MprotectFlags, MremapFlags, ProtFlags};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};

/// A page range of the application with one protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub start: u64,
    pub len: u64,
    pub prot: ProtFlags,
}

/// Why a move did not happen (or happened only in part).
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    #[error("this kernel or sandbox offers no userfaultfd, which moving live pages needs")]
    NoUserfaultfd,
    #[error("this kernel cannot write-protect shared memory (Linux 5.19 or newer can)")]
    NoSharedWriteProtect,
    #[error("{step}: {errno}")]
    Failed {
        step: &'static str,
        errno: Errno,
        /// How many of the parts were moved before the failure.
        moved: usize,
    },
    #[error("the mover thread is gone")]
    Gone,
}

enum Task {
    /// Private memory → `fd` at `offset` (the offset of the first part's start).
    Lend { parts: Vec<Part>, fd: Arc<OwnedFd>, offset: u64 },
    /// `fd`'s mapping (at `offset` for the first part's start) → private memory.
    Reclaim { parts: Vec<Part>, fd: Arc<OwnedFd>, offset: u64 },
}

struct Job {
    task: Task,
    done: SyncSender<Result<(), MoveError>>,
}

/// The mover thread, started on first use.
pub struct Mover {
    jobs: Mutex<Option<Sender<Job>>>,
}

impl Default for Mover {
    fn default() -> Self {
        Mover { jobs: Mutex::new(None) }
    }
}

impl Mover {
    /// Moves `parts` (contiguous, private anonymous memory) into `fd`,
    /// `parts[0].start` going to `offset`.
    pub fn lend(&self, parts: Vec<Part>, fd: Arc<OwnedFd>, offset: u64) -> Result<(), MoveError> {
        self.run(Task::Lend { parts, fd, offset })
    }

    /// Gives `parts` (contiguous, mapped shared from `fd`, `parts[0].start`
    /// at `offset`) back private memory with the same contents, read from
    /// the file.
    pub fn reclaim(&self, parts: Vec<Part>, fd: Arc<OwnedFd>, offset: u64) -> Result<(), MoveError> {
        self.run(Task::Reclaim { parts, fd, offset })
    }

    fn run(&self, task: Task) -> Result<(), MoveError> {
        let (done, result) = mpsc::sync_channel(1);
        let job = Job { task, done };
        {
            let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if jobs.is_none() {
                *jobs = Some(start_thread().map_err(|_| MoveError::Gone)?);
            }
            jobs.as_ref().expect("just started").send(job).map_err(|_| MoveError::Gone)?;
        }
        result.recv().map_err(|_| MoveError::Gone)?
    }
}

fn start_thread() -> std::io::Result<Sender<Job>> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new().name("rocjitsu-pages".into()).stack_size(256 << 10).spawn(move || serve(rx))?;
    Ok(tx)
}

fn serve(rx: Receiver<Job>) {
    // Everything this thread calls goes straight to libc, never to our hooks.
    crate::guard::enter_forever();
    while let Ok(job) = rx.recv() {
        let result = match &job.task {
            Task::Lend { parts, fd, offset } => lend(parts, fd.as_fd(), *offset),
            Task::Reclaim { parts, fd, offset } => reclaim(parts, fd.as_fd(), *offset),
        };
        let _ = job.done.send(result);
    }
}

fn span(parts: &[Part]) -> (u64, u64) {
    let start = parts.first().map_or(0, |p| p.start);
    let end = parts.last().map_or(0, |p| p.start + p.len);
    (start, end - start)
}

fn failed(step: &'static str, moved: usize) -> impl FnOnce(Errno) -> MoveError {
    move |errno| MoveError::Failed { step, errno, moved }
}

/// Copies the pages of `[src, src + len)` that are not all zero to `dst`
/// (which reads as zero), so untouched memory stays unallocated.
///
/// # Safety
/// Both ranges must be mapped, `src` readable and `dst` writable, and
/// distinct.
unsafe fn copy_nonzero_pages(src: u64, dst: u64, len: u64) {
    for page in (0..len).step_by(PAGE as usize) {
        let from = (src + page) as *const u64;
        // SAFETY: the page lies inside the readable source range (caller).
        let words = unsafe { std::slice::from_raw_parts(from, PAGE as usize / 8) };
        if words.iter().all(|w| *w == 0) {
            continue;
        }
        // SAFETY: both pages lie inside their ranges, which do not overlap (caller).
        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, (dst + page) as *mut u8, PAGE as usize) };
    }
}

/// Makes sure every page of a writable part is in the page tables when the
/// kernel cannot write-protect pages that are not: reading a page maps it
/// (the zero page for untouched memory), and a present page is protected.
fn populate(parts: &[Part], support: uffd::Support) {
    if support.features & uffd::FEATURE_WP_UNPOPULATED != 0 {
        return;
    }
    for p in parts.iter().filter(|p| p.prot.contains(ProtFlags::WRITE)) {
        for page in (p.start..p.start + p.len).step_by(PAGE as usize) {
            // SAFETY: the part is mapped readable (callers move only readable memory).
            unsafe { std::ptr::read_volatile(page as *const u8) };
        }
    }
}

fn lend(parts: &[Part], fd: BorrowedFd<'_>, offset: u64) -> Result<(), MoveError> {
    let support = uffd::support().ok_or(MoveError::NoUserfaultfd)?;
    let (start, len) = span(parts);
    // SAFETY: a fresh shared mapping of the file at an address the kernel picks.
    let staging = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            len as usize,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            offset,
        )
    }
    .map_err(failed("map the memory file", 0))?;
    populate(parts, support);
    let features = support.features & uffd::FEATURE_WP_UNPOPULATED;
    let result = WriteProtect::new(support, features).map_err(failed("open a userfaultfd", 0)).and_then(|wp| {
        wp.protect(start, len).map_err(failed("write-protect the pages", 0))?;
        // From here until `wp` drops: no allocation, no lock, no logging.
        // SAFETY: the source range is mapped readable (it is what the caller
        // lends) and `staging` is our own fresh writable mapping.
        unsafe { copy_nonzero_pages(start, staging as u64, len) };
        for (i, p) in parts.iter().enumerate() {
            // SAFETY: replaces the application's private pages of this part,
            // whose contents are in the file now and cannot change while
            // protected, with the file's pages: the same bytes.
            unsafe {
                rustix::mm::mmap(
                    p.start as *mut _,
                    p.len as usize,
                    p.prot,
                    MapFlags::SHARED | MapFlags::FIXED,
                    fd,
                    offset + (p.start - start),
                )
            }
            .map_err(failed("map the memory file over the pages", i))?;
        }
        Ok(())
        // `wp` closes here: writers wake and retry on the new mapping.
    });
    // SAFETY: `staging` is our own mapping of `len` bytes.
    let _ = unsafe { rustix::mm::munmap(staging, len as usize) };
    result
}

/// Whether this kernel lets pages be given back private memory while other
/// threads run (write protection of shared memory).
pub fn can_reclaim() -> bool {
    uffd::support().is_some_and(|s| s.features & uffd::FEATURE_WP_SHMEM != 0)
}

fn reclaim(parts: &[Part], fd: BorrowedFd<'_>, offset: u64) -> Result<(), MoveError> {
    let support = uffd::support().ok_or(MoveError::NoUserfaultfd)?;
    if support.features & uffd::FEATURE_WP_SHMEM == 0 {
        return Err(MoveError::NoSharedWriteProtect);
    }
    move_to_private(parts, fd, offset, || {
        let wp = WriteProtect::new(support, uffd::FEATURE_WP_SHMEM).map_err(failed("open a userfaultfd", 0))?;
        let (start, len) = span(parts);
        wp.protect(start, len).map_err(failed("write-protect the pages", 0))?;
        Ok(Some(wp))
    })
}

/// Gives `parts` (mapped from `fd` as for [`Mover::reclaim`]) private
/// memory with the same contents in a process with a single thread (a child
/// right after `fork`), where no other thread can write while they move: no
/// write protection needed.
pub fn reclaim_single_threaded(parts: &[Part], fd: BorrowedFd<'_>, offset: u64) -> Result<(), MoveError> {
    move_to_private(parts, fd, offset, || Ok(None))
}

/// Copies the data of `fd` in `[offset, offset + len)` to `dst` (which
/// reads as zero): holes are skipped, so untouched memory stays unallocated
/// (and reading a hole allocates nothing in the file either).
///
/// Makes no allocation (it runs with the application's memory protected).
///
/// # Safety
/// `[dst, dst + len)` must be our own writable mapping.
unsafe fn copy_file_data(fd: BorrowedFd<'_>, offset: u64, dst: u64, len: u64) -> Result<(), Errno> {
    let end = offset + len;
    let mut at = offset;
    while at < end {
        let data = match rustix::fs::seek(fd, SeekFrom::Data(at)) {
            Ok(data) => data,
            // No data at or after `at`.
            Err(Errno::NXIO) => break,
            Err(e) => return Err(e),
        };
        if data >= end {
            break;
        }
        let hole = rustix::fs::seek(fd, SeekFrom::Hole(data))?.min(end);
        let mut pos = data;
        while pos < hole {
            // SAFETY: `[pos, hole)` lies inside `[offset, end)`, so the slice
            // lies inside the caller's writable mapping.
            let buf =
                unsafe { std::slice::from_raw_parts_mut((dst + (pos - offset)) as *mut u8, (hole - pos) as usize) };
            match rustix::io::pread(fd, buf, pos)? {
                // The file is sealed at its size, so never: stop rather than spin.
                0 => return Err(Errno::IO),
                n => pos += n as u64,
            }
        }
        at = hole;
    }
    Ok(())
}

/// The steps of [`reclaim`] around `protect`, which returns the protection
/// to hold while the pages move (if any).
fn move_to_private(
    parts: &[Part],
    fd: BorrowedFd<'_>,
    offset: u64,
    protect: impl FnOnce() -> Result<Option<WriteProtect>, MoveError>,
) -> Result<(), MoveError> {
    let (start, len) = span(parts);
    // SAFETY: a fresh private mapping at an address the kernel picks.
    let staging = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            len as usize,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )
    }
    .map_err(failed("map private memory", 0))? as u64;
    let mut moved = 0;
    let result = protect().and_then(|wp| {
        // From here until `wp` drops: no allocation, no lock, no logging.
        // The file, not the application's mapping, which may be unreadable.
        // SAFETY: `staging` is our own writable mapping of `len` bytes.
        unsafe { copy_file_data(fd, offset, staging, len) }.map_err(failed("read the memory file", 0))?;
        for p in parts {
            let from = staging + (p.start - start);
            if p.prot != ProtFlags::READ | ProtFlags::WRITE {
                // SAFETY: part of our own staging mapping.
                unsafe {
                    rustix::mm::mprotect(from as *mut _, p.len as usize, MprotectFlags::from_bits_retain(p.prot.bits()))
                }
                .map_err(failed("protect the private copy", moved))?;
            }
            // SAFETY: moves our private copy of this part over the shared
            // mapping, atomically; the copy holds the same bytes, which
            // cannot change while protected.
            unsafe {
                rustix::mm::mremap_fixed(
                    from as *mut _,
                    p.len as usize,
                    p.len as usize,
                    MremapFlags::MAYMOVE,
                    p.start as *mut _,
                )
            }
            .map_err(failed("move the private copy over the pages", moved))?;
            moved += 1;
        }
        drop(wp);
        Ok(())
    });
    // Whatever of the staging mapping was not moved into place.
    for p in &parts[moved..] {
        // SAFETY: the unmoved rest of our own staging mapping.
        let _ = unsafe { rustix::mm::munmap((staging + (p.start - start)) as *mut _, p.len as usize) };
    }
    result
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{needs_uffd, private, shared};
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    fn rw(start: u64, len: u64) -> Part {
        Part { start, len, prot: ProtFlags::READ | ProtFlags::WRITE }
    }

    fn memfd(len: u64) -> Arc<OwnedFd> {
        let fd = rustix::fs::memfd_create("mover-test", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, len).unwrap();
        Arc::new(fd)
    }

    /// Threads increment counters on every page of a range while it is lent
    /// and reclaimed, over and over: every increment must be there at the end.
    #[test]
    fn no_write_is_lost_while_pages_move_back_and_forth() {
        needs_uffd();
        let pages = 4u64;
        let len = pages * PAGE;
        let base = private(len);
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2u64)
            .map(|t| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for page in 0..pages {
                            // A plain read-modify-write of this thread's own word.
                            let w = (base + page * PAGE + t * 64) as *mut u64;
                            // SAFETY: inside the test's mapping, which stays mapped.
                            unsafe { w.write_volatile(w.read_volatile() + 1) };
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let mover = Mover::default();
        let fd = memfd(len);
        for _ in 0..200 {
            mover.lend(vec![rw(base, len)], fd.clone(), 0).unwrap();
            assert!(shared(base));
            mover.reclaim(vec![rw(base, len)], fd.clone(), 0).unwrap();
            assert!(!shared(base));
        }
        stop.store(true, Ordering::Relaxed);
        let counts: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        for page in 0..pages {
            for (t, n) in counts.iter().enumerate() {
                // SAFETY: inside the test's mapping.
                let got = unsafe { ((base + page * PAGE + t as u64 * 64) as *const u64).read_volatile() };
                assert_eq!(got, *n, "page {page}, thread {t}: increments lost");
            }
        }
        assert!(counts.iter().all(|n| *n > 0));
    }

    /// The mover writes nothing in the range it protects: a range holding the
    /// caller's own stack moves without deadlock.
    #[test]
    fn the_callers_own_stack_can_move() {
        needs_uffd();
        let local = [7u8; 3 * 4096];
        let start = (local.as_ptr() as u64) & !(PAGE - 1);
        let end = (local.as_ptr() as u64 + local.len() as u64).div_ceil(PAGE) * PAGE;
        let mover = Mover::default();
        let counter = AtomicU64::new(0);
        let fd = memfd(end - start);
        mover.lend(vec![rw(start, end - start)], fd.clone(), 0).unwrap();
        counter.fetch_add(1, Ordering::SeqCst);
        mover.reclaim(vec![rw(start, end - start)], fd, 0).unwrap();
        assert_eq!(std::hint::black_box(local)[4096], 7);
        assert_eq!(counter.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn contents_and_protections_survive_and_untouched_pages_stay_empty() {
        needs_uffd();
        let base = private(3 * PAGE);
        // SAFETY: inside the mapping; page 1 stays untouched.
        unsafe {
            *(base as *mut u8) = 5;
            *((base + 2 * PAGE + 9) as *mut u8) = 6;
            rustix::mm::mprotect((base + 2 * PAGE) as *mut _, PAGE as usize, rustix::mm::MprotectFlags::READ).unwrap();
        }
        let fd = memfd(16 * PAGE);
        let parts = vec![rw(base, 2 * PAGE), Part { start: base + 2 * PAGE, len: PAGE, prot: ProtFlags::READ }];
        Mover::default().lend(parts.clone(), fd.clone(), 4 * PAGE).unwrap();
        let mut b = [0u8; 1];
        rustix::io::pread(&fd, &mut b, 4 * PAGE).unwrap();
        assert_eq!(b[0], 5);
        rustix::io::pread(&fd, &mut b, 6 * PAGE + 9).unwrap();
        assert_eq!(b[0], 6);
        let vmas = super::super::maps::read(base, base + 3 * PAGE).unwrap();
        assert_eq!(vmas.last().unwrap().prot, ProtFlags::READ, "the read-only part stays read-only");
        // Only the two pages with data were allocated in the file.
        let st = rustix::fs::fstat(&fd).unwrap();
        assert_eq!(st.st_blocks as u64 * 512, 2 * PAGE);
        Mover::default().reclaim(parts, fd, 4 * PAGE).unwrap();
        // SAFETY: inside the mapping.
        unsafe { assert_eq!((*(base as *const u8), *((base + 2 * PAGE + 9) as *const u8)), (5, 6)) };
        assert!(!shared(base));
    }

    /// Pages the application made inaccessible after they were lent move
    /// back (read from the file, not through the application's mapping) and
    /// stay inaccessible.
    #[test]
    fn inaccessible_pages_move_back_with_their_contents() {
        needs_uffd();
        let base = private(2 * PAGE);
        // SAFETY: inside the mapping.
        unsafe { *((base + PAGE + 3) as *mut u8) = 9 };
        let fd = memfd(2 * PAGE);
        let mover = Mover::default();
        mover.lend(vec![rw(base, 2 * PAGE)], fd.clone(), 0).unwrap();
        // SAFETY: our own test mapping.
        unsafe { rustix::mm::mprotect(base as *mut _, 2 * PAGE as usize, MprotectFlags::empty()) }.unwrap();
        let none = Part { start: base, len: 2 * PAGE, prot: ProtFlags::empty() };
        mover.reclaim(vec![none], fd, 0).unwrap();
        let vmas = super::super::maps::read(base, base + 2 * PAGE).unwrap();
        assert_eq!(vmas.len(), 1);
        assert!(vmas[0].is_private_anonymous() && vmas[0].prot.is_empty(), "{vmas:?}");
        // SAFETY: our own test mapping.
        unsafe { rustix::mm::mprotect(base as *mut _, 2 * PAGE as usize, MprotectFlags::READ) }.unwrap();
        // SAFETY: inside the mapping, readable again.
        assert_eq!(unsafe { *((base + PAGE + 3) as *const u8) }, 9);
    }
}
