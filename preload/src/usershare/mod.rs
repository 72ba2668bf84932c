//! Daemon mode: lending the application's own pages (USERPTR registrations:
//! `hipHostRegister`, the runtime pinning pageable buffers for copies) to the
//! simulated GPU in another process, without losing a write.
//!
//! The daemon can only reach memory it can map, so the pages of a registered
//! range must be backed by a memory file both processes map. Registering
//! therefore moves the range's private pages into a memfd of ours (see
//! [`mover`] for why no write by any thread can be lost while they move),
//! and the ALLOC request hands the memfd to the daemon. The pages stay in the
//! file while any registration covers them; when the last one is freed they
//! move back to private memory, so the application's memory behaves as
//! before (copy-on-write across `fork`, zero after `MADV_DONTNEED`).
//!
//! Ranges are whole pages, and a page at either end of a buffer is often
//! shared with its neighbours (malloc's chunk headers, another registered
//! buffer): that is why the pages are moved rather than copied, and why a
//! registration may be made of pieces of several files — a page already
//! lent for a neighbour's registration is lent again from the same file, so
//! both registrations and the application see one page.
//!
//! Only private anonymous memory can be lent this way (heap, stacks,
//! anonymous mmaps: what applications register); a file mapping is refused.

pub mod maps;
pub mod mover;
pub mod registry;
pub mod uffd;

use mover::{MoveError, Mover, Part};
use proto::payload::{fd_access, FdDesc, FdKind, MAX_FDS};
use registry::{Registry, Run};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::ProtFlags;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};

const PAGE: u64 = 4096;

/// A memfd of ours that backs lent pages.
#[derive(Debug)]
pub struct MemFile {
    fd: Arc<OwnedFd>,
    inode: u64,
}

impl MemFile {
    /// A sparse file of `len` bytes, sealed so that its size is fixed (the
    /// daemon maps it and refuses files that could shrink under it).
    fn new(len: u64) -> std::io::Result<MemFile> {
        let fd = rustix::fs::memfd_create("rocjitsu-userptr", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
        rustix::fs::ftruncate(&fd, len)?;
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)?;
        let fd = sim::gpu::memory::arena::move_fd_high(fd).map_err(|e| std::io::Error::other(e.to_string()))?;
        let inode = rustix::fs::fstat(&fd)?.st_ino;
        Ok(MemFile { fd: Arc::new(fd), inode })
    }
}

/// A shared handle on a [`MemFile`], equal only to itself.
#[derive(Debug, Clone)]
struct FileRef(Arc<MemFile>);

impl PartialEq for FileRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Why a range could not be lent.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error("{start:#x}..{end:#x} is not all mapped")]
    NotMapped { start: u64, end: u64 },
    #[error("{start:#x}..{end:#x} is file-backed, shared or unreadable memory; only private anonymous memory (heap, stacks, anonymous mmaps) can be registered in daemon mode")]
    NotAnonymous { start: u64, end: u64 },
    #[error("the range would need {pieces} memory files (overlapping registrations), more than the {MAX_FDS} a request carries")]
    TooFragmented { pieces: usize },
    #[error("cannot read /proc/self/maps: {0}")]
    Maps(std::io::Error),
    #[error("cannot create a memory file: {0}")]
    MemFile(std::io::Error),
    #[error(transparent)]
    Move(#[from] MoveError),
}

impl ShareError {
    /// What the KFD would answer: EFAULT for memory that is not there,
    /// EINVAL for memory it cannot pin, ENOMEM otherwise.
    pub fn errno(&self) -> i32 {
        match self {
            ShareError::NotMapped { .. } => libc::EFAULT,
            ShareError::NotAnonymous { .. } => libc::EINVAL,
            _ => libc::ENOMEM,
        }
    }
}

/// The memory a USERPTR registration hands the daemon: pieces of our files,
/// in address order, covering the range.
#[derive(Debug)]
pub struct Loan {
    pieces: Vec<LoanPiece>,
}

/// `len` bytes at address `start`, lent from `file` at `offset`.
#[derive(Debug, Clone)]
struct LoanPiece {
    start: u64,
    len: u64,
    file: FileRef,
    offset: u64,
}

impl Loan {
    /// Each piece's description and descriptor, as the request carries them.
    pub fn descriptors(&self) -> Vec<(FdDesc, BorrowedFd<'_>)> {
        self.pieces
            .iter()
            .map(|p| {
                let desc = FdDesc {
                    kind: FdKind::Userptr,
                    access: fd_access::READ | fd_access::WRITE,
                    offset: p.offset,
                    length: p.len,
                };
                (desc, p.file.0.fd.as_fd())
            })
            .collect()
    }
}

#[derive(Default)]
struct State {
    registry: Registry<FileRef>,
    /// What each live registration was lent, by KFD handle.
    handles: HashMap<u64, Vec<LoanPiece>>,
}

/// The pages this process lends to the daemon.
pub struct UserShare {
    state: Arc<Mutex<State>>,
    mover: Mover,
}

/// The state of every [`UserShare`] of this process, for the fork handler.
static SHARES: Mutex<Vec<Weak<Mutex<State>>>> = Mutex::new(Vec::new());

impl Default for UserShare {
    fn default() -> Self {
        static AT_FORK: Once = Once::new();
        AT_FORK.call_once(|| {
            // SAFETY: registers a handler with the C ABI that libc calls in
            // the child after fork; it never unwinds (see `reclaim_in_child`).
            unsafe { libc::pthread_atfork(None, None, Some(reclaim_in_child)) };
        });
        let state = Arc::new(Mutex::new(State::default()));
        let mut shares = SHARES.lock().unwrap_or_else(|e| e.into_inner());
        shares.retain(|w| w.strong_count() > 0);
        shares.push(Arc::downgrade(&state));
        UserShare { state, mover: Mover::default() }
    }
}

/// In a child right after `fork`: pages lent by the parent are mapped
/// shared with it (and the daemon), but a child's memory must be its own
/// copy, as the kernel gives it for private memory (and for pinned pages:
/// they are copied for the child at fork). The child has one thread now, so
/// the pages move back to private memory without write protection. A parent
/// thread writing to them during the copy can leak into the child's copy:
/// the one imprecision left, for the microseconds after `fork`.
extern "C" fn reclaim_in_child() {
    let _ = std::panic::catch_unwind(|| {
        // try_lock: a parent thread that held these locks does not exist here.
        let Ok(shares) = SHARES.try_lock() else { return };
        for state in shares.iter().filter_map(Weak::upgrade) {
            let Ok(mut st) = state.try_lock() else { continue };
            let runs: Vec<(u64, u64)> = st.registry.pieces().map(|(s, p)| (s, s + p.len)).collect();
            for (start, end) in runs {
                if let Ok(vmas) = maps::read(start, end) {
                    let _ = mover::reclaim_single_threaded(&vmas_parts(&vmas, start, end));
                }
            }
            *st = State::default();
        }
    });
}

impl UserShare {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Prepares `[start, start + len)` (page-aligned) for a USERPTR
    /// registration: its pages end up in our memory files, and the loan says
    /// which. Pair with [`Self::registered`] or [`Self::refused`].
    pub fn lend(&self, start: u64, len: u64) -> Result<Loan, ShareError> {
        let end = start + len;
        let mut st = self.state();
        forget_stale(&mut st.registry, start, end)?;
        let private: Vec<(u64, u64)> = st
            .registry
            .plan(start, end)
            .into_iter()
            .filter_map(|r| match r {
                Run::Private { start, len } => Some((start, start + len)),
                Run::Lent { .. } => None,
            })
            .collect();
        if !private.is_empty() {
            let vmas = maps::read(start, end).map_err(ShareError::Maps)?;
            let runs: Vec<(u64, Vec<Part>)> = private
                .iter()
                .map(|&(s, e)| Ok((s, lendable_parts(&vmas, s, e)?)))
                .collect::<Result<_, ShareError>>()?;
            let file = FileRef(Arc::new(MemFile::new(len).map_err(ShareError::MemFile)?));
            for (run_start, parts) in runs {
                let run_len: u64 = parts.iter().map(|p| p.len).sum();
                let offset = run_start - start;
                match self.mover.lend(parts.clone(), file.0.fd.clone(), offset) {
                    Ok(()) => st.registry.insert(run_start, run_len, file.clone(), offset),
                    Err(e) => {
                        // Parts already moved are lent with no user: give them back.
                        if let MoveError::Failed { moved, .. } = e {
                            for p in &parts[..moved] {
                                st.registry.insert(p.start, p.len, file.clone(), p.start - start);
                            }
                            let idle = st.registry.idle(start, end);
                            self.reclaim(&mut st.registry, idle);
                        }
                        return Err(e.into());
                    }
                }
            }
        }
        st.registry.add_users(start, end, 1);
        let pieces: Vec<LoanPiece> = st
            .registry
            .plan(start, end)
            .into_iter()
            .filter_map(|r| match r {
                Run::Lent { start, len, file, offset } => Some(LoanPiece { start, len, file, offset }),
                Run::Private { .. } => None,
            })
            .collect();
        let loan = Loan { pieces };
        if loan.pieces.len() > MAX_FDS {
            let n = loan.pieces.len();
            self.give_back(&mut st, loan.pieces);
            return Err(ShareError::TooFragmented { pieces: n });
        }
        Ok(loan)
    }

    /// The daemon accepted the loan as allocation `handle`.
    pub fn registered(&self, loan: Loan, handle: u64) {
        self.state().handles.insert(handle, loan.pieces);
    }

    /// The daemon refused the loan: its pages no longer need lending.
    pub fn refused(&self, loan: Loan) {
        let mut st = self.state();
        self.give_back(&mut st, loan.pieces);
    }

    /// Allocation `handle` was freed: pages no registration covers any more
    /// go back to private memory.
    pub fn released(&self, handle: u64) {
        let mut st = self.state();
        if let Some(pieces) = st.handles.remove(&handle) {
            self.give_back(&mut st, pieces);
        }
    }

    /// Drops one user from each piece (of its own file only) and reclaims
    /// the pages left with none.
    fn give_back(&self, st: &mut State, pieces: Vec<LoanPiece>) {
        for p in pieces {
            let idle = st.registry.add_users_of(p.start, p.start + p.len, -1, Some(&p.file));
            self.reclaim(&mut st.registry, idle);
        }
    }

    /// The application unmapped `[start, start + len)`.
    pub fn munmapped(&self, start: u64, len: u64) {
        self.state().registry.forget(start, start.saturating_add(len));
    }

    /// Whether any page of `[start, start + len)` is lent.
    pub fn overlaps(&self, start: u64, len: u64) -> bool {
        self.state().registry.overlaps(start, start.saturating_add(len))
    }

    /// The session ended: registrations are gone with it (the pages stay
    /// lent until freed or unmapped; nothing more to tell the daemon).
    pub fn session_closed(&self) {
        self.state().handles.clear();
    }

    /// Moves idle runs back to private memory; what cannot move stays lent
    /// (correct, only not private) and is reused by later registrations.
    fn reclaim(&self, registry: &mut Registry<FileRef>, idle: Vec<Run<FileRef>>) {
        for run in idle {
            let (start, end) = (run.start(), run.end());
            let parts = match maps::read(start, end) {
                Ok(vmas) if still_lent(&vmas, &run) => vmas_parts(&vmas, start, end),
                // The application unmapped or replaced it: nothing to move.
                _ => {
                    registry.forget(start, end);
                    continue;
                }
            };
            match self.mover.reclaim(parts.clone()) {
                Ok(()) => registry.forget(start, end),
                Err(MoveError::Failed { moved, step, errno }) => {
                    for p in &parts[..moved] {
                        registry.forget(p.start, p.start + p.len);
                    }
                    tracing::warn!("cannot give {start:#x}..{end:#x} back private memory ({step}: {errno}); it stays shared with the daemon");
                }
                Err(e) => tracing::debug!("{start:#x}..{end:#x} stays shared with the daemon: {e}"),
            }
        }
    }
}

/// The parts of `[start, end)` with the protections `vmas` give them.
fn vmas_parts(vmas: &[maps::Vma], start: u64, end: u64) -> Vec<Part> {
    maps::cover(vmas, start, end)
        .into_iter()
        .filter_map(|(s, e, v)| v.map(|v| Part { start: s, len: e - s, prot: v.prot }))
        .collect()
}

/// `[start, end)` as parts that can be lent: all mapped, private anonymous
/// and readable.
fn lendable_parts(vmas: &[maps::Vma], start: u64, end: u64) -> Result<Vec<Part>, ShareError> {
    let mut parts = Vec::new();
    for (s, e, v) in maps::cover(vmas, start, end) {
        let v = v.ok_or(ShareError::NotMapped { start: s, end: e })?;
        if !v.is_private_anonymous() || !v.prot.contains(ProtFlags::READ) {
            return Err(ShareError::NotAnonymous { start: s, end: e });
        }
        parts.push(Part { start: s, len: e - s, prot: v.prot });
    }
    Ok(parts)
}

/// Whether `run` is still mapped from its file at its offsets.
fn still_lent(vmas: &[maps::Vma], run: &Run<FileRef>) -> bool {
    let Run::Lent { start, len, file, offset } = run else { return false };
    maps::cover(vmas, *start, start + len).into_iter().all(|(s, _, v)| {
        v.is_some_and(|v| v.shared && v.inode == file.0.inode && v.file_offset(s) == offset + (s - start))
    })
}

/// Drops pieces overlapping `[start, end)` that the application unmapped or
/// replaced behind our back (not every way of doing so is hooked).
fn forget_stale(registry: &mut Registry<FileRef>, start: u64, end: u64) -> Result<(), ShareError> {
    let pieces = registry.overlapping(start, end);
    let (Some(first), Some(last)) = (pieces.first(), pieces.last()) else { return Ok(()) };
    let (from, to) = (first.0, last.0 + last.1.len);
    let vmas = maps::read(from, to).map_err(ShareError::Maps)?;
    for (s, p) in pieces {
        let run = Run::Lent { start: s, len: p.len, file: p.file.clone(), offset: p.offset };
        if !still_lent(&vmas, &run) {
            if p.users > 0 {
                tracing::warn!(
                    "registered memory {s:#x}..{:#x} was unmapped or replaced by the application while registered",
                    s + p.len
                );
            }
            registry.forget(s, s + p.len);
        }
    }
    Ok(())
}

/// Page-aligned bounds of `[addr, addr + len)`.
pub fn page_range(addr: u64, len: u64) -> (u64, u64) {
    let start = addr & !(PAGE - 1);
    let end = addr.saturating_add(len).div_ceil(PAGE) * PAGE;
    (start, end - start)
}

/// What the tests of this module and its parts share.
#[cfg(test)]
pub(crate) mod test_support {
    use rustix::mm::{MapFlags, ProtFlags};

    /// A fresh private read-write mapping of `len` bytes (never freed: tests are short).
    pub fn private(len: u64) -> u64 {
        // SAFETY: a fresh private mapping at an address the kernel picks.
        (unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        })
        .unwrap() as u64
    }

    /// Whether the page at `addr` is mapped shared (lent) rather than private.
    pub fn shared(addr: u64) -> bool {
        super::maps::read(addr, addr + 1).unwrap()[0].shared
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{private, shared};
    use super::*;
    use rustix::mm::MapFlags;

    #[test]
    fn neighbouring_registrations_share_their_boundary_page() {
        if uffd::support().is_none() {
            return;
        }
        let base = private(6 * PAGE);
        // SAFETY: inside the mapping.
        unsafe { *((base + 2 * PAGE + 8) as *mut u64) = 42 };
        let share = UserShare::default();
        let a = share.lend(base, 3 * PAGE).unwrap();
        assert_eq!(a.descriptors().len(), 1);
        share.registered(a, 1);
        let b = share.lend(base + 2 * PAGE, 4 * PAGE).unwrap();
        let d = b.descriptors();
        assert_eq!(d.len(), 2, "the boundary page comes from A's file");
        assert_eq!((d[0].0.offset, d[0].0.length), (2 * PAGE, PAGE));
        assert_eq!((d[1].0.offset, d[1].0.length), (PAGE, 3 * PAGE));
        let mut word = [0u8; 8];
        rustix::io::pread(d[0].1, &mut word, 2 * PAGE + 8).unwrap();
        assert_eq!(u64::from_le_bytes(word), 42);
        drop(d);
        share.registered(b, 2);
        share.released(1);
        assert!(!shared(base), "A's own pages are private again");
        assert!(shared(base + 2 * PAGE), "the boundary page is still B's");
        share.released(2);
        assert!(!shared(base + 2 * PAGE) && !shared(base + 5 * PAGE));
        assert!(!share.overlaps(base, 6 * PAGE));
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { *((base + 2 * PAGE + 8) as *const u64) }, 42);
    }

    #[test]
    fn holes_and_file_mappings_are_refused() {
        let base = private(3 * PAGE);
        // SAFETY: unmapping the middle page of our own mapping.
        unsafe { rustix::mm::munmap((base + PAGE) as *mut _, PAGE as usize) }.unwrap();
        let share = UserShare::default();
        assert!(matches!(share.lend(base, 3 * PAGE), Err(ShareError::NotMapped { .. })));
        let f = tempfile::tempfile().unwrap();
        f.set_len(PAGE).unwrap();
        // SAFETY: a fresh private mapping of a file.
        let m = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                PAGE as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
                &f,
                0,
            )
        }
        .unwrap() as u64;
        let e = share.lend(m, PAGE).unwrap_err();
        assert!(matches!(e, ShareError::NotAnonymous { .. }));
        assert_eq!(e.errno(), libc::EINVAL);
    }

    #[test]
    fn pages_unmapped_behind_our_back_are_forgotten() {
        if uffd::support().is_none() {
            return;
        }
        let base = private(2 * PAGE);
        let share = UserShare::default();
        let loan = share.lend(base, 2 * PAGE).unwrap();
        share.registered(loan, 9);
        // Replaced without the munmap hook (as brk or mremap would).
        // SAFETY: a fresh private mapping over our own test mapping.
        unsafe {
            rustix::mm::mmap_anonymous(
                base as *mut _,
                2 * PAGE as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::FIXED,
            )
        }
        .unwrap();
        let again = share.lend(base, 2 * PAGE).unwrap();
        assert_eq!(again.descriptors().len(), 1);
        assert!(shared(base));
        share.refused(again);
        assert!(!shared(base));
    }

    /// A forked child gets its own copy of lent pages, as of private memory.
    #[test]
    fn a_forked_child_gets_private_copies() {
        if uffd::support().is_none() {
            return;
        }
        let base = private(2 * PAGE);
        let share = UserShare::default();
        let loan = share.lend(base, 2 * PAGE).unwrap();
        share.registered(loan, 3);
        let word = (base + PAGE + 16) as *mut u64;
        // SAFETY: inside the (lent) mapping.
        unsafe { word.write_volatile(1) };
        // SAFETY: the child only checks memory and writes one word, then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let private_now = maps::read(base, base + 2 * PAGE).is_ok_and(|v| v.iter().all(|v| !v.shared));
            // SAFETY: inside the child's own copy of the mapping.
            let kept = unsafe { word.read_volatile() } == 1;
            // SAFETY: as above.
            unsafe { word.write_volatile(2) };
            // SAFETY: ends the child without running the test harness's exit.
            unsafe { libc::_exit(if private_now && kept { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child saw status {status:#x}");
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { word.read_volatile() }, 1, "the child's write stays in the child");
        assert!(shared(base), "the parent's pages are still lent");
        share.released(3);
    }

    #[test]
    fn page_ranges_round_outwards() {
        assert_eq!(page_range(0x1234, 0x10), (0x1000, 0x1000));
        assert_eq!(page_range(0x1ff8, 0x10), (0x1000, 0x2000));
        assert_eq!(page_range(0x2000, 0x1000), (0x2000, 0x1000));
    }
}
