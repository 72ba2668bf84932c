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
//! before (copy-on-write across `fork`, zero after `MADV_DONTNEED`), and
//! the file lets go of them (no memory counted twice).
//!
//! Ranges are whole pages, and a page at either end of a buffer is often
//! shared with its neighbours (malloc's chunk headers, another registered
//! buffer): that is why the pages are moved rather than copied, and why a
//! registration may be made of pieces of several files — a page already
//! lent for a neighbour's registration is lent again from the same file, so
//! both registrations and the application see one page.
//!
//! Private anonymous memory (heap, stacks, anonymous mmaps: what
//! applications register) is lent this way. A range the application maps
//! shared from one file (HIP's IPC events: a `/dev/shm` file) needs no
//! moving: the file itself is lent, as it is ([`mapped`]), and never enters
//! the registry (nothing to give back, nothing for a forked child to copy).
//! Private file mappings, and ranges mixing kinds of memory, are refused.

pub mod mapped;
pub mod maps;
pub mod mover;
pub mod registry;
pub mod uffd;

use mover::{MoveError, Mover, Part};
use proto::payload::{fd_access, FdDesc, FdKind, FD_PAGE_SIZE, MAX_FDS};
use registry::{Registry, Run};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use rustix::fs::{FallocateFlags, MemfdFlags, SealFlags};
use rustix::mm::ProtFlags;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};

/// The granularity of everything lent: the protocol's, the pages of x86-64.
pub(crate) const PAGE: u64 = FD_PAGE_SIZE;

/// A file whose pages are lent: a memfd of ours that backs moved pages, or
/// (in a [`LoanKind::SharedFile`] loan) the application's own file, reopened.
#[derive(Debug)]
pub struct MemFile {
    fd: Arc<OwnedFd>,
    inode: u64,
    /// (major, minor) of its device, as the maps show it.
    dev: (u32, u32),
}

impl MemFile {
    /// A sparse file of `len` bytes, sealed so that its size is fixed (the
    /// daemon maps it and refuses files that could shrink under it).
    fn new(len: u64) -> std::io::Result<MemFile> {
        let fd = rustix::fs::memfd_create("rocjitsu-userptr", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
        rustix::fs::ftruncate(&fd, len)?;
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)?;
        let fd = sim::gpu::memory::arena::move_fd_high(fd).map_err(|e| std::io::Error::other(e.to_string()))?;
        let st = rustix::fs::fstat(&fd)?;
        let dev = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        Ok(MemFile { fd: Arc::new(fd), inode: st.st_ino, dev })
    }

    /// The application's file mapped shared at `m`, reopened (checked to
    /// be that file).
    fn shared(m: &mapped::SharedMapping) -> Result<MemFile, ShareError> {
        let fd = mapped::open(m)?;
        Ok(MemFile { fd: Arc::new(fd), inode: m.vma.inode, dev: m.vma.dev })
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
    #[error("{start:#x}..{end:#x} is a private file mapping or unreadable memory; only private anonymous memory (heap, stacks, anonymous mmaps) or a MAP_SHARED mapping of one file can be registered in daemon mode")]
    NotAnonymous { start: u64, end: u64 },
    #[error("{start:#x}..{end:#x} mixes a MAP_SHARED file mapping with other memory; a registration in daemon mode must be all private anonymous memory or all one shared file")]
    MixedMemory { start: u64, end: u64 },
    #[error("{start:#x}..{end:#x} spans shared mappings of several files (or of one file at discontiguous offsets); a registration in daemon mode can lend one file mapped at contiguous offsets only")]
    SeveralFiles { start: u64, end: u64 },
    #[error("{start:#x}..{end:#x} is a MAP_SHARED mapping that is not readable and writable; the GPU needs to write registered memory")]
    SharedNotWritable { start: u64, end: u64 },
    #[error("{start:#x}..{end:#x} reaches past the end of the file mapped there ({size} bytes)")]
    PastEndOfFile { start: u64, end: u64, size: u64 },
    #[error("cannot open the file mapped shared at {start:#x}..{end:#x} to lend it ({tried}); run as root (or with CAP_CHECKPOINT_RESTORE), or map a file with a name (e.g. in /dev/shm)")]
    SharedFileUnavailable { start: u64, end: u64, tried: String },
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
    /// What the KFD would answer: EFAULT for memory that is not there or
    /// cannot be faulted in for writing, EINVAL for memory it cannot pin (or
    /// we cannot lend), ENOMEM otherwise.
    pub fn errno(&self) -> i32 {
        match self {
            ShareError::NotMapped { .. } | ShareError::SharedNotWritable { .. } | ShareError::PastEndOfFile { .. } => {
                libc::EFAULT
            }
            ShareError::NotAnonymous { .. }
            | ShareError::MixedMemory { .. }
            | ShareError::SeveralFiles { .. }
            | ShareError::SharedFileUnavailable { .. } => libc::EINVAL,
            _ => libc::ENOMEM,
        }
    }
}

/// The memory a USERPTR registration hands the daemon: pieces of files, in
/// address order, covering the range.
#[derive(Debug)]
pub struct Loan {
    pieces: Vec<LoanPiece>,
    kind: LoanKind,
}

/// What a [`Loan`] lends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoanKind {
    /// Private pages moved into memfds of ours (one or more pieces): the
    /// registry counts their registrations, and they move back to private
    /// memory when the last is freed (or in a forked child).
    Moved,
    /// The application's own file, mapped shared over the whole range, as
    /// one piece: nothing moved, nothing is given back, and the registry
    /// never hears of it. The fd (reopened by us) lives as long as the loan:
    /// until the daemon has answered.
    SharedFile,
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
    pub fn kind(&self) -> LoanKind {
        self.kind
    }

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
    /// Every memory file made (the live ones' fds are ours, not the
    /// application's to close).
    files: Vec<Weak<MemFile>>,
}

/// This process's mappings as one operation sees them: read from
/// `/proc/self/maps` once, when first needed, then kept up to date with the
/// operation's own moves.
enum Maps {
    Unread,
    Read(maps::Snapshot),
    Unreadable(std::io::Error),
}

impl Maps {
    fn get(&mut self) -> Result<&mut maps::Snapshot, &std::io::Error> {
        if let Maps::Unread = self {
            *self = match maps::Snapshot::read() {
                Ok(s) => Maps::Read(s),
                Err(e) => Maps::Unreadable(e),
            };
        }
        match self {
            Maps::Read(s) => Ok(s),
            Maps::Unreadable(e) => Err(e),
            Maps::Unread => unreachable!("just read"),
        }
    }

    /// The snapshot, or the error that prevents a registration.
    fn for_lending(&mut self) -> Result<&mut maps::Snapshot, ShareError> {
        self.get().map_err(|e| ShareError::Maps(std::io::Error::new(e.kind(), e.to_string())))
    }
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
///
/// Only pieces still mapped from their file move (as in the parent): what
/// the application unmapped or replaced is its own business. The files
/// keep their pages, which the parent still uses.
extern "C" fn reclaim_in_child() {
    let _ = std::panic::catch_unwind(|| {
        // try_lock: a parent thread that held these locks does not exist here.
        let Ok(shares) = SHARES.try_lock() else { return };
        let mut maps = Maps::Unread;
        for state in shares.iter().filter_map(Weak::upgrade) {
            let Ok(mut st) = state.try_lock() else { continue };
            // The maps are read once for every share, and only if one lends.
            if st.registry.pieces().next().is_some() {
                if let Ok(snapshot) = maps.get() {
                    for (start, p) in st.registry.pieces() {
                        let (lent, _) = check_lent(snapshot, start, p.len, &p.file, p.offset);
                        for (s, e) in lent {
                            let parts = vmas_parts(snapshot, s, e);
                            let at = p.offset + (s - start);
                            if mover::reclaim_single_threaded(&parts, p.file.0.fd.as_fd(), at).is_ok() {
                                for part in parts {
                                    snapshot.replace(private_vma(&part));
                                }
                            }
                        }
                    }
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
    /// which — or, when the application maps the range shared from one file,
    /// that file is lent as it is ([`LoanKind::SharedFile`]). Pair with
    /// [`Self::registered`] or [`Self::refused`].
    pub fn lend(&self, start: u64, len: u64) -> Result<Loan, ShareError> {
        self.lend_with(start, len, &mut Maps::Unread)
    }

    fn lend_with(&self, start: u64, len: u64, maps: &mut Maps) -> Result<Loan, ShareError> {
        let end = start + len;
        let mut st = self.state();
        forget_stale(&mut st.registry, start, end, maps)?;
        // A range none of our files backs may be the application's own
        // shared file: lent as it is. (The maps are read anyway: the whole
        // range is private to the registry.)
        if !st.registry.overlaps(start, end) {
            if let Some(m) = mapped::classify(maps.for_lending()?, start, end)? {
                let file = Arc::new(MemFile::shared(&m)?);
                st.files.retain(|f| f.strong_count() > 0);
                st.files.push(Arc::downgrade(&file));
                let piece = LoanPiece { start, len, file: FileRef(file), offset: m.offset };
                return Ok(Loan { pieces: vec![piece], kind: LoanKind::SharedFile });
            }
        }
        let plan = st.registry.plan(start, end);
        // Each run becomes one piece of the loan (a private run is lent from
        // a new file, whose runs never touch): refuse before moving anything.
        if plan.len() > MAX_FDS {
            return Err(ShareError::TooFragmented { pieces: plan.len() });
        }
        let private: Vec<(u64, u64)> = plan
            .into_iter()
            .filter_map(|r| match r {
                Run::Private { start, len } => Some((start, start + len)),
                Run::Lent { .. } => None,
            })
            .collect();
        if !private.is_empty() {
            let snapshot = maps.for_lending()?;
            let runs: Vec<(u64, Vec<Part>)> = private
                .iter()
                .map(|&(s, e)| Ok((s, lendable_parts(snapshot, s, e)?)))
                .collect::<Result<_, ShareError>>()?;
            let file = FileRef(Arc::new(MemFile::new(len).map_err(ShareError::MemFile)?));
            st.files.retain(|f| f.strong_count() > 0);
            st.files.push(Arc::downgrade(&file.0));
            for (run_start, parts) in runs {
                let result = self.mover.lend(parts.clone(), file.0.fd.clone(), run_start - start);
                let moved = match &result {
                    Ok(()) => parts.len(),
                    Err(MoveError::Failed { moved, .. }) => *moved,
                    Err(_) => 0,
                };
                for p in &parts[..moved] {
                    let offset = p.start - start;
                    st.registry.insert(p.start, p.len, file.clone(), offset);
                    snapshot.replace(maps::Vma {
                        start: p.start,
                        end: p.start + p.len,
                        prot: p.prot,
                        shared: true,
                        offset,
                        inode: file.0.inode,
                        dev: file.0.dev,
                    });
                }
                if let Err(e) = result {
                    // What moved is lent with no user: give it back.
                    self.reclaim_idle(&mut st, maps);
                    return Err(e.into());
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
        debug_assert!(pieces.len() <= MAX_FDS, "the plan counted the pieces");
        Ok(Loan { pieces, kind: LoanKind::Moved })
    }

    /// The daemon accepted the loan as allocation `handle`.
    pub fn registered(&self, loan: Loan, handle: u64) {
        match loan.kind {
            LoanKind::Moved => {
                self.state().handles.insert(handle, loan.pieces);
            }
            // The daemon mapped the file when the request arrived: our fd
            // closes here, and freeing the allocation has nothing to undo.
            LoanKind::SharedFile => {}
        }
    }

    /// The daemon refused the loan: its pages no longer need lending.
    pub fn refused(&self, loan: Loan) {
        match loan.kind {
            LoanKind::Moved => {
                let mut st = self.state();
                self.give_back(&mut st, loan.pieces, &mut Maps::Unread);
            }
            LoanKind::SharedFile => {}
        }
    }

    /// Allocation `handle` was freed: pages no registration covers any more
    /// go back to private memory.
    pub fn released(&self, handle: u64) {
        self.released_with(handle, &mut Maps::Unread);
    }

    fn released_with(&self, handle: u64, maps: &mut Maps) {
        let mut st = self.state();
        if let Some(pieces) = st.handles.remove(&handle) {
            self.give_back(&mut st, pieces, maps);
        }
    }

    /// Drops one user from each piece (of its own file only) and reclaims
    /// the pages left with none.
    fn give_back(&self, st: &mut State, pieces: Vec<LoanPiece>, maps: &mut Maps) {
        for p in pieces {
            st.registry.add_users_of(p.start, p.start + p.len, -1, Some(&p.file));
        }
        self.reclaim_idle(st, maps);
    }

    /// The application unmapped `[start, start + len)` (as `munmap` takes
    /// it: the last page counts whole).
    pub fn munmapped(&self, start: u64, len: u64) {
        let (start, len) = page_range(start, len);
        self.state().registry.forget(start, start.saturating_add(len));
    }

    /// Whether any page of `[start, start + len)` is lent from our memfds
    /// (a shared file lent as it is stays the application's memory, as it was).
    pub fn overlaps(&self, start: u64, len: u64) -> bool {
        self.state().registry.overlaps(start, start.saturating_add(len))
    }

    /// Whether `fd` is one of our memory files, which the application must
    /// not close (nor `dup2` over): they back its own lent pages (or, for a
    /// shared file's loan, are about to be sent).
    pub fn owns_fd(&self, fd: RawFd) -> bool {
        // They all live there (and most fds the application closes do not).
        if fd < sim::gpu::memory::arena::INTERNAL_FD_BASE {
            return false;
        }
        self.state().files.iter().filter_map(Weak::upgrade).any(|f| f.fd.as_raw_fd() == fd)
    }

    /// The session ended, and its registrations with it: their pages go
    /// back to private memory (nothing more to tell the daemon).
    pub fn session_closed(&self) {
        let mut st = self.state();
        let pieces: Vec<LoanPiece> = st.handles.drain().flat_map(|(_, pieces)| pieces).collect();
        self.give_back(&mut st, pieces, &mut Maps::Unread);
    }

    /// Moves every idle piece (lent, no registration left) back to private
    /// memory and frees its pages in the file. What cannot move now stays
    /// lent (correct, only not private): later registrations reuse it, and
    /// the next operation that gives pages back tries again.
    fn reclaim_idle(&self, st: &mut State, maps: &mut Maps) {
        let idle = st.registry.idle(0, u64::MAX);
        if idle.is_empty() || !mover::can_reclaim() {
            return;
        }
        let snapshot = match maps.get() {
            Ok(snapshot) => snapshot,
            Err(e) => {
                tracing::debug!(
                    "cannot read /proc/self/maps ({e}): {} idle lent ranges wait for another try",
                    idle.len()
                );
                return;
            }
        };
        for run in idle {
            let Run::Lent { start, len, file, offset } = run else { continue };
            let (lent, stale) = check_lent(snapshot, start, len, &file, offset);
            for (s, e) in stale {
                // The application unmapped or replaced it: nothing to move.
                st.registry.forget(s, e);
            }
            for (s, e) in lent {
                let parts = vmas_parts(snapshot, s, e);
                let at = offset + (s - start);
                let result = self.mover.reclaim(parts.clone(), file.0.fd.clone(), at);
                let moved = match &result {
                    Ok(()) => parts.len(),
                    Err(MoveError::Failed { moved, .. }) => *moved,
                    Err(_) => 0,
                };
                for p in &parts[..moved] {
                    st.registry.forget(p.start, p.start + p.len);
                    snapshot.replace(private_vma(p));
                    release_pages(&file, at + (p.start - s), p.len);
                }
                match result {
                    Ok(()) => {}
                    Err(MoveError::Failed { step, errno, .. }) => tracing::warn!(
                        "cannot give {s:#x}..{e:#x} back private memory ({step}: {errno}); it stays shared with the daemon"
                    ),
                    Err(err) => tracing::debug!("{s:#x}..{e:#x} stays shared with the daemon: {err}"),
                }
            }
        }
    }
}

/// Frees `len` bytes of `file` at `offset`, whose pages are private memory
/// again: the file's copy would only count them twice.
fn release_pages(file: &FileRef, offset: u64, len: u64) {
    let punch = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
    if let Err(e) = rustix::fs::fallocate(&*file.0.fd, punch, offset, len) {
        tracing::debug!("cannot free {len:#x} bytes of a memory file at {offset:#x}: {e}");
    }
}

/// How `part` is mapped once given back private memory.
fn private_vma(part: &Part) -> maps::Vma {
    maps::Vma {
        start: part.start,
        end: part.start + part.len,
        prot: part.prot,
        shared: false,
        offset: 0,
        inode: 0,
        dev: (0, 0),
    }
}

/// The parts of `[start, end)` with the protections `maps` give them.
fn vmas_parts(maps: &maps::Snapshot, start: u64, end: u64) -> Vec<Part> {
    maps.cover(start, end)
        .into_iter()
        .filter_map(|(s, e, v)| v.map(|v| Part { start: s, len: e - s, prot: v.prot }))
        .collect()
}

/// `[start, end)` as parts that can be lent: all mapped, private anonymous
/// and readable.
fn lendable_parts(maps: &maps::Snapshot, start: u64, end: u64) -> Result<Vec<Part>, ShareError> {
    let mut parts = Vec::new();
    for (s, e, v) in maps.cover(start, end) {
        let v = v.ok_or(ShareError::NotMapped { start: s, end: e })?;
        if v.shared && v.inode != 0 {
            // With pages of ours around it (a whole shared file is lent
            // before the registry is asked).
            return Err(ShareError::MixedMemory { start: s, end: e });
        }
        if !v.is_private_anonymous() || !v.prot.contains(ProtFlags::READ) {
            return Err(ShareError::NotAnonymous { start: s, end: e });
        }
        parts.push(Part { start: s, len: e - s, prot: v.prot });
    }
    Ok(parts)
}

/// Address ranges `[start, end)`, in order.
type Stretches = Vec<(u64, u64)>;

/// `[start, start + len)`, lent from `file` at `offset`, split into the
/// stretches still mapped from the file at those offsets and the stretches
/// the application unmapped or replaced since: (lent, stale).
fn check_lent(maps: &maps::Snapshot, start: u64, len: u64, file: &FileRef, offset: u64) -> (Stretches, Stretches) {
    let (mut lent, mut stale) = (Stretches::new(), Stretches::new());
    for (s, e, v) in maps.cover(start, start + len) {
        let ours = v.is_some_and(|v| {
            v.shared && (v.dev, v.inode) == (file.0.dev, file.0.inode) && v.file_offset(s) == offset + (s - start)
        });
        let list = if ours { &mut lent } else { &mut stale };
        match list.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => list.push((s, e)),
        }
    }
    (lent, stale)
}

/// Drops the parts of pieces overlapping `[start, end)` that the application
/// unmapped or replaced behind our back (not every way of doing so is hooked).
fn forget_stale(registry: &mut Registry<FileRef>, start: u64, end: u64, maps: &mut Maps) -> Result<(), ShareError> {
    let pieces = registry.overlapping(start, end);
    if pieces.is_empty() {
        return Ok(());
    }
    let snapshot = maps.for_lending()?;
    for (s, p) in pieces {
        for (from, to) in check_lent(snapshot, s, p.len, &p.file, p.offset).1 {
            if p.users > 0 {
                tracing::warn!(
                    "registered memory {from:#x}..{to:#x} was unmapped or replaced by the application while registered"
                );
            }
            registry.forget(from, to);
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

    /// Fails the test unless this process can have a userfaultfd: moving
    /// pages needs one, and a test that cannot run must not pass.
    pub fn needs_uffd() {
        assert!(
            super::uffd::support().is_some(),
            "no userfaultfd here (kernel, seccomp or vm.unprivileged_userfaultfd): this test cannot run"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{needs_uffd, private, shared};
    use super::*;
    use rustix::mm::{MapFlags, MprotectFlags};

    /// Bytes of memory `fd`'s file holds.
    fn allocated(fd: BorrowedFd<'_>) -> u64 {
        rustix::fs::fstat(fd).unwrap().st_blocks as u64 * 512
    }

    /// An fd of our own on the file of a loan's first piece.
    fn file_of(loan: &Loan) -> OwnedFd {
        rustix::io::dup(loan.descriptors()[0].1).unwrap()
    }

    #[test]
    fn neighbouring_registrations_share_their_boundary_page() {
        needs_uffd();
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
        needs_uffd();
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
        needs_uffd();
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

    /// A forked child moves back only the pieces still mapped from their
    /// file: it neither reads a hole the application unmapped nor touches a
    /// mapping the application put in a piece's place.
    #[test]
    fn a_forked_child_reclaims_only_what_is_still_lent() {
        needs_uffd();
        let base = private(3 * PAGE);
        let share = UserShare::default();
        let loan = share.lend(base, 3 * PAGE).unwrap();
        share.registered(loan, 11);
        let (first, third) = ((base + 8) as *mut u64, (base + 2 * PAGE + 8) as *mut u64);
        // SAFETY: inside the (lent) mapping.
        unsafe { first.write_volatile(1) };
        // Behind the hooks' back: a hole, then a shared mapping of another
        // memory over the third page (which a child shares with its parent).
        // SAFETY: our own test mapping.
        unsafe { rustix::mm::munmap((base + PAGE) as *mut _, PAGE as usize) }.unwrap();
        // SAFETY: a fresh shared mapping over our own test mapping.
        unsafe {
            rustix::mm::mmap_anonymous(
                (base + 2 * PAGE) as *mut _,
                PAGE as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::FIXED,
            )
        }
        .unwrap();
        // SAFETY: the child only checks memory and writes two words, then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let first_private = maps::read(base, base + 1).is_ok_and(|v| v[0].is_private_anonymous());
            // SAFETY: inside the child's own mappings.
            let kept = unsafe { first.read_volatile() } == 1;
            // SAFETY: as above.
            unsafe {
                first.write_volatile(2);
                third.write_volatile(7);
            }
            // SAFETY: ends the child without running the test harness's exit.
            unsafe { libc::_exit(if first_private && kept { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child ended with status {status:#x}");
        // SAFETY: inside the mappings.
        unsafe {
            assert_eq!(first.read_volatile(), 1, "the child's write to its copy stays in the child");
            assert_eq!(third.read_volatile(), 7, "the shared mapping the application made stayed shared");
        }
        share.released(11);
        assert!(!shared(base));
    }

    /// Pages the application made inaccessible while lent go back private
    /// (read from the file: reading them through the application's mapping
    /// would kill the mover thread) and stay inaccessible.
    #[test]
    fn inaccessible_lent_pages_go_back_private() {
        needs_uffd();
        let base = private(2 * PAGE);
        // SAFETY: inside the mapping.
        unsafe { *((base + PAGE + 8) as *mut u64) = 33 };
        let share = UserShare::default();
        let loan = share.lend(base, 2 * PAGE).unwrap();
        share.registered(loan, 12);
        // SAFETY: our own test mapping.
        unsafe { rustix::mm::mprotect(base as *mut _, 2 * PAGE as usize, MprotectFlags::empty()) }.unwrap();
        share.released(12);
        let v = maps::read(base, base + 2 * PAGE).unwrap();
        assert!(v.len() == 1 && v[0].is_private_anonymous() && v[0].prot.is_empty(), "{v:?}");
        assert!(!share.overlaps(base, 2 * PAGE));
        // SAFETY: our own test mapping.
        unsafe { rustix::mm::mprotect(base as *mut _, 2 * PAGE as usize, MprotectFlags::READ) }.unwrap();
        // SAFETY: inside the mapping, readable again.
        assert_eq!(unsafe { *((base + PAGE + 8) as *const u64) }, 33);
    }

    /// Once reclaimed, pages are freed in the memory file: the memory is not
    /// counted twice.
    #[test]
    fn reclaimed_pages_leave_the_file() {
        needs_uffd();
        let base = private(4 * PAGE);
        for page in 0..4 {
            // SAFETY: inside the mapping.
            unsafe { *((base + page * PAGE) as *mut u64) = page + 1 };
        }
        let share = UserShare::default();
        let loan = share.lend(base, 4 * PAGE).unwrap();
        let file = file_of(&loan);
        assert_eq!(allocated(file.as_fd()), 4 * PAGE);
        share.registered(loan, 13);
        share.released(13);
        assert!(!shared(base));
        assert_eq!(allocated(file.as_fd()), 0, "the file let go of the pages");
        for page in 0..4 {
            // SAFETY: inside the mapping.
            assert_eq!(unsafe { *((base + page * PAGE) as *const u64) }, page + 1);
        }
    }

    /// When a session ends, its registrations' pages go back to private
    /// memory with their contents.
    #[test]
    fn a_closed_session_gives_its_pages_back() {
        needs_uffd();
        let base = private(3 * PAGE);
        // SAFETY: inside the mapping.
        unsafe { *((base + 2 * PAGE) as *mut u64) = 44 };
        let share = UserShare::default();
        let a = share.lend(base, 2 * PAGE).unwrap();
        share.registered(a, 14);
        let b = share.lend(base + PAGE, 2 * PAGE).unwrap();
        share.registered(b, 15);
        assert!(shared(base) && shared(base + 2 * PAGE));
        share.session_closed();
        assert!(!shared(base) && !shared(base + PAGE) && !shared(base + 2 * PAGE));
        assert!(!share.overlaps(base, 3 * PAGE));
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { *((base + 2 * PAGE) as *const u64) }, 44);
        // The handles went with the session: releasing one later is a no-op.
        share.released(14);
    }

    /// Pages that cannot be given back because the maps cannot be read stay
    /// lent, and the next operation that gives pages back moves them.
    #[test]
    fn pages_stay_lent_until_the_maps_can_be_read() {
        needs_uffd();
        let base = private(4 * PAGE);
        // SAFETY: inside the mapping.
        unsafe { *((base + 8) as *mut u64) = 55 };
        let share = UserShare::default();
        let a = share.lend(base, 2 * PAGE).unwrap();
        share.registered(a, 16);
        let b = share.lend(base + 2 * PAGE, 2 * PAGE).unwrap();
        share.registered(b, 17);
        share.released_with(16, &mut Maps::Unreadable(std::io::Error::other("injected")));
        assert!(shared(base), "nothing moved");
        assert!(share.overlaps(base, 2 * PAGE), "and nothing was forgotten");
        // A registration of the same range reuses the lent pages.
        let again = share.lend(base, 2 * PAGE).unwrap();
        assert_eq!(again.descriptors().len(), 1);
        share.refused(again);
        assert!(!shared(base), "the retry moved them");
        assert!(!share.overlaps(base, 2 * PAGE));
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { *((base + 8) as *const u64) }, 55);
        assert!(shared(base + 2 * PAGE), "B's pages are untouched");
        share.released(17);
        assert!(!shared(base + 2 * PAGE));
    }

    /// An unmap forgets the pages `munmap` unmaps: whole pages, the last one
    /// included when the length ends inside it.
    #[test]
    fn an_unmap_forgets_whole_pages() {
        needs_uffd();
        let base = private(3 * PAGE);
        let share = UserShare::default();
        let loan = share.lend(base, 3 * PAGE).unwrap();
        share.registered(loan, 18);
        // SAFETY: our own test mapping; a length of one page and a byte unmaps two pages.
        unsafe { rustix::mm::munmap(base as *mut _, (PAGE + 1) as usize) }.unwrap();
        share.munmapped(base, PAGE + 1);
        assert!(!share.overlaps(base, 2 * PAGE));
        assert!(share.overlaps(base + 2 * PAGE, PAGE));
        share.released(18);
        assert!(!share.overlaps(base, 3 * PAGE));
        assert!(!shared(base + 2 * PAGE), "the page left went back private");
    }

    /// A registration that would need more memory files than a request
    /// carries is refused before any page moves.
    #[test]
    fn too_fragmented_is_refused_before_moving() {
        needs_uffd();
        let base = private(5 * PAGE);
        let share = UserShare::default();
        // Pages 0, 2 and 4 lent from three files: pages 1 and 3 would need a fourth, five pieces in all.
        for (page, handle) in [(0, 20), (2, 21), (4, 22)] {
            let loan = share.lend(base + page * PAGE, PAGE).unwrap();
            share.registered(loan, handle);
        }
        let files_before = share.state().files.len();
        let e = share.lend(base, 5 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::TooFragmented { pieces: 5 }), "{e}");
        assert_eq!(e.errno(), libc::ENOMEM);
        assert_eq!(share.state().files.len(), files_before, "no memory file was made");
        assert!(!shared(base + PAGE) && !shared(base + 3 * PAGE), "the gaps never moved");
        assert!(!share.overlaps(base + PAGE, PAGE) && !share.overlaps(base + 3 * PAGE, PAGE));
        for handle in [20, 21, 22] {
            share.released(handle);
        }
        assert!(!share.overlaps(base, 5 * PAGE));
    }

    /// One operation reads the maps once and then trusts what it read (and
    /// its own moves): a registration checks the snapshot it was given.
    #[test]
    fn a_registration_uses_the_maps_it_read() {
        let base = private(PAGE);
        // The snapshot says a file is mapped there (the kernel says otherwise).
        let text = format!("{base:x}-{:x} rw-p 00000000 fd:01 77 /some/file\n", base + PAGE);
        let share = UserShare::default();
        let e = share.lend_with(base, PAGE, &mut Maps::Read(maps::Snapshot::parse(&text))).unwrap_err();
        assert!(matches!(e, ShareError::NotAnonymous { .. }), "{e}");
        let e = share.lend_with(base, PAGE, &mut Maps::Unreadable(std::io::Error::other("injected"))).unwrap_err();
        assert!(matches!(e, ShareError::Maps(_)), "{e}");
    }

    /// A memfd of `len` bytes (the fd closes with the value; its mappings stay).
    fn memfd(len: u64) -> OwnedFd {
        let fd = rustix::fs::memfd_create("rocjitsu-test-shared", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, len).unwrap();
        fd
    }

    /// Maps `len` bytes of `fd` at `offset` shared, at `at` (replacing what
    /// is there) or where the kernel likes.
    fn map_shared(fd: BorrowedFd<'_>, len: u64, offset: u64, at: Option<u64>, prot: ProtFlags) -> u64 {
        let (addr, flags) = match at {
            Some(at) => (at as *mut _, MapFlags::SHARED | MapFlags::FIXED),
            None => (std::ptr::null_mut(), MapFlags::SHARED),
        };
        // SAFETY: a fresh mapping at an address the kernel picks, or over a
        // test's own mapping.
        (unsafe { rustix::mm::mmap(addr, len as usize, prot, flags, fd, offset) }).unwrap() as u64
    }

    const RW: ProtFlags = ProtFlags::READ.union(ProtFlags::WRITE);

    /// A file's identity: (device, inode).
    fn ident(fd: BorrowedFd<'_>) -> (u64, u64) {
        let st = rustix::fs::fstat(fd).unwrap();
        (st.st_dev, st.st_ino)
    }

    /// Whether the page at `addr` is still mapped shared from the file `fd`.
    fn mapped_from(addr: u64, fd: BorrowedFd<'_>) -> bool {
        let v = maps::read(addr, addr + 1).unwrap()[0];
        v.shared && v.inode == ident(fd).1
    }

    /// A range the application maps shared from a file lends the file
    /// itself, at the range's offset: nothing moves, and freeing it gives
    /// nothing back.
    #[test]
    fn a_shared_file_mapping_lends_its_file() {
        let file = memfd(4 * PAGE);
        rustix::io::pwrite(&file, &99u64.to_le_bytes(), 2 * PAGE + 8).unwrap();
        let blocks = allocated(file.as_fd());
        let base = map_shared(file.as_fd(), 2 * PAGE, PAGE, None, RW);
        let share = UserShare::default();
        let loan = share.lend(base, 2 * PAGE).unwrap();
        assert_eq!(loan.kind(), LoanKind::SharedFile);
        let d = loan.descriptors();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0.kind, d[0].0.offset, d[0].0.length), (FdKind::Userptr, PAGE, 2 * PAGE));
        assert_eq!(d[0].0.access, fd_access::READ | fd_access::WRITE);
        assert_eq!(ident(d[0].1), ident(file.as_fd()), "the application's own file");
        let fd = d[0].1.as_raw_fd();
        assert!(fd >= sim::gpu::memory::arena::INTERNAL_FD_BASE && fd != file.as_raw_fd(), "reopened, at our numbers");
        let mut word = [0u8; 8];
        rustix::io::pread(d[0].1, &mut word, 2 * PAGE + 8).unwrap();
        assert_eq!(u64::from_le_bytes(word), 99);
        drop(d);
        assert!(share.owns_fd(fd), "the fd is protected until the request is answered");
        assert!(mapped_from(base, file.as_fd()) && mapped_from(base + PAGE, file.as_fd()), "nothing moved");
        assert!(!share.overlaps(base, 2 * PAGE), "the registry never hears of it");
        share.registered(loan, 30);
        assert!(!share.owns_fd(fd), "the daemon mapped the file: our fd is closed");
        // SAFETY: inside the mapping.
        unsafe { ((base + PAGE + 16) as *mut u64).write_volatile(5) };
        share.released(30);
        assert!(mapped_from(base, file.as_fd()) && mapped_from(base + PAGE, file.as_fd()), "nothing moved back");
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { ((base + PAGE + 8) as *const u64).read_volatile() }, 99);
        rustix::io::pread(&file, &mut word, 2 * PAGE + 16).unwrap();
        assert_eq!(u64::from_le_bytes(word), 5, "the application's writes still reach its file");
        assert!(allocated(file.as_fd()) >= blocks, "no page was punched out of the file");
        // A refused loan gives nothing back either.
        let again = share.lend(base, 2 * PAGE).unwrap();
        share.refused(again);
        assert!(mapped_from(base, file.as_fd()));
        share.session_closed();
        assert!(mapped_from(base, file.as_fd()));
    }

    /// Two mappings of one file at contiguous offsets are one piece; of two
    /// files, or of one file at distant offsets, the range is refused, as
    /// is a shared mapping mixed with private memory.
    #[test]
    fn a_shared_range_must_be_one_file_at_contiguous_offsets() {
        let (a, b) = (memfd(4 * PAGE), memfd(4 * PAGE));
        let share = UserShare::default();
        let base = private(2 * PAGE);
        map_shared(a.as_fd(), PAGE, 2 * PAGE, Some(base), RW);
        map_shared(a.as_fd(), PAGE, 3 * PAGE, Some(base + PAGE), RW);
        let loan = share.lend(base, 2 * PAGE).unwrap();
        let d = loan.descriptors();
        assert_eq!((d.len(), d[0].0.offset, d[0].0.length), (1, 2 * PAGE, 2 * PAGE));
        drop(d);
        share.refused(loan);
        // Another file on the second page.
        map_shared(b.as_fd(), PAGE, 3 * PAGE, Some(base + PAGE), RW);
        let e = share.lend(base, 2 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::SeveralFiles { .. }), "{e}");
        assert_eq!(e.errno(), libc::EINVAL);
        // The same file, at a distant offset.
        map_shared(a.as_fd(), PAGE, 0, Some(base + PAGE), RW);
        let e = share.lend(base, 2 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::SeveralFiles { .. }), "{e}");
        // Private memory next to the shared page.
        let other = private(2 * PAGE);
        map_shared(a.as_fd(), PAGE, 0, Some(other + PAGE), RW);
        let e = share.lend(other, 2 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::MixedMemory { .. }), "{e}");
        assert_eq!(e.errno(), libc::EINVAL);
        assert!(!shared(other), "the private page did not move");
        assert_eq!(share.state().files.iter().filter(|f| f.strong_count() > 0).count(), 0, "no file is kept");
    }

    /// A shared mapping the GPU could not write, or reaching past the end of
    /// its file, is refused (the kernel could not pin it).
    #[test]
    fn read_only_or_truncated_shared_mappings_are_refused() {
        let file = memfd(PAGE);
        let share = UserShare::default();
        let ro = map_shared(file.as_fd(), PAGE, 0, None, ProtFlags::READ);
        let e = share.lend(ro, PAGE).unwrap_err();
        assert!(matches!(e, ShareError::SharedNotWritable { .. }), "{e}");
        assert_eq!(e.errno(), libc::EFAULT);
        // A file of one page and a few bytes: two pages can be lent, not three.
        rustix::fs::ftruncate(&file, PAGE + 100).unwrap();
        let base = map_shared(file.as_fd(), 3 * PAGE, 0, None, RW);
        let e = share.lend(base, 3 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::PastEndOfFile { size, .. } if size == PAGE + 100), "{e}");
        assert_eq!(e.errno(), libc::EFAULT);
        let loan = share.lend(base, 2 * PAGE).unwrap();
        assert_eq!(loan.descriptors()[0].0.length, 2 * PAGE);
    }

    /// Private anonymous memory is still moved into a memfd of ours, and a
    /// range mixing our lent pages with a shared file is refused.
    #[test]
    fn private_memory_still_moves_next_to_a_shared_file() {
        needs_uffd();
        let file = memfd(PAGE);
        let base = private(2 * PAGE);
        let share = UserShare::default();
        let loan = share.lend(base, PAGE).unwrap();
        assert_eq!(loan.kind(), LoanKind::Moved);
        assert_ne!(ident(loan.descriptors()[0].1), ident(file.as_fd()));
        assert!(shared(base) && share.overlaps(base, PAGE), "moved into our file, in the registry");
        share.registered(loan, 33);
        map_shared(file.as_fd(), PAGE, 0, Some(base + PAGE), RW);
        let e = share.lend(base, 2 * PAGE).unwrap_err();
        assert!(matches!(e, ShareError::MixedMemory { .. }), "{e}");
        share.released(33);
        assert!(!shared(base), "the moved page went back private");
        assert!(mapped_from(base + PAGE, file.as_fd()), "the file's page was not touched");
    }

    /// A forked child copies back the pages we moved, never a shared file
    /// lent as it is: it stays shared with the parent, as `MAP_SHARED`
    /// memory always is across `fork`.
    #[test]
    fn a_forked_child_leaves_a_lent_file_alone() {
        needs_uffd();
        let file = memfd(PAGE);
        let at = map_shared(file.as_fd(), PAGE, 0, None, RW);
        let base = private(PAGE);
        let share = UserShare::default();
        let lent_file = share.lend(at, PAGE).unwrap();
        share.registered(lent_file, 34);
        let moved = share.lend(base, PAGE).unwrap();
        share.registered(moved, 35);
        let inode = ident(file.as_fd()).1;
        // SAFETY: the child only checks its maps and writes one word, then _exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let moved_back = maps::read(base, base + 1).is_ok_and(|v| v[0].is_private_anonymous());
            let still_file = maps::read(at, at + 1).is_ok_and(|v| v[0].shared && v[0].inode == inode);
            // SAFETY: inside the (shared) mapping.
            unsafe { ((at + 8) as *mut u64).write_volatile(77) };
            // SAFETY: ends the child without running the test harness's exit.
            unsafe { libc::_exit(if moved_back && still_file { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "child ended with status {status:#x}");
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { ((at + 8) as *const u64).read_volatile() }, 77, "the child wrote the shared file");
        assert!(mapped_from(at, file.as_fd()));
        share.released(34);
        share.released(35);
        assert!(!shared(base) && mapped_from(at, file.as_fd()));
    }

    #[test]
    fn page_ranges_round_outwards() {
        assert_eq!(page_range(0x1234, 0x10), (0x1000, 0x1000));
        assert_eq!(page_range(0x1ff8, 0x10), (0x1000, 0x2000));
        assert_eq!(page_range(0x2000, 0x1000), (0x2000, 0x1000));
    }
}
