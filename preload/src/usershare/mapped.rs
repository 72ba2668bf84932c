//! Lending a range the application maps shared from a file (a `/dev/shm`
//! file, a memfd, a regular file): its pages already live in a file that
//! anyone holding an fd of it can map, so nothing moves — the registration
//! lends the file itself. HIP's IPC events are such ranges: a small
//! `/dev/shm` file that two processes map and register, which the GPU
//! writes and the other process reads.
//!
//! The range must lie in `MAP_SHARED` mappings of one file at contiguous
//! offsets, readable and writable (the GPU writes it; the kernel would not
//! pin a read-only mapping for writing either), and within the file's size
//! (the kernel cannot pin pages past its end). Mixed with other memory, or
//! spanning several files, it is refused.
//!
//! The file is opened anew (the application's own fds are its own, and
//! may be read-only), read-write, by the first of these that works:
//! 1. `/proc/self/map_files/<start>-<end>`, the mapping's own file (needs
//!    CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE: root);
//! 2. the path `/proc/self/maps` shows for the mapping (the target of its
//!    `map_files` link, which anyone may read: the same text, unescaped):
//!    a file with a name, e.g. in `/dev/shm`;
//! 3. `/proc/self/fd/<n>` for an fd of the application on the same file: a
//!    memfd or a deleted file it still holds open.
//!
//! What is opened must be a regular file with the mapping's device and
//! inode, checked before opening (a device node is never opened by mistake)
//! and after (nothing was swapped in between). Filesystems whose `stat`
//! reports another device than the maps do (btrfs subvolumes, some
//! overlayfs set-ups) cannot be checked, so their files are refused.
//!
//! Nothing is write-protected, moved or given back: the application's
//! mapping stays as it was, and the daemon maps the same file. Our fd lives
//! only as long as the request that carries it (the daemon maps the file
//! on arrival).

use super::maps::{Snapshot, Vma};
use super::{ShareError, PAGE};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::mm::ProtFlags;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `[start, end)`, mapped shared from one file at contiguous offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedMapping {
    pub start: u64,
    pub end: u64,
    /// The mapping (whole VMA) that holds `start`: its bounds name it in
    /// `/proc/self/map_files`, its device and inode are the file's.
    pub vma: Vma,
    /// The file offset of `start`.
    pub offset: u64,
}

/// A shared mapping of a file (`MAP_SHARED|MAP_ANONYMOUS` memory is one
/// too: of a hidden shmem file).
fn is_shared_file(v: &Vma) -> bool {
    v.shared && v.inode != 0
}

/// What `[start, end)` is when any of it is mapped shared from a file: one
/// file at contiguous offsets, to lend as it is, or an error (holes, other
/// memory mixed in, several files, not readable and writable). `None` when
/// no part of it is: private memory, lent by moving its pages.
pub fn classify(maps: &Snapshot, start: u64, end: u64) -> Result<Option<SharedMapping>, ShareError> {
    let cover = maps.cover(start, end);
    if !cover.iter().any(|(_, _, v)| v.as_ref().is_some_and(is_shared_file)) {
        return Ok(None);
    }
    let mut first: Option<SharedMapping> = None;
    for (s, e, v) in cover {
        let v = v.ok_or(ShareError::NotMapped { start: s, end: e })?;
        if !is_shared_file(&v) {
            return Err(ShareError::MixedMemory { start, end });
        }
        let m = *first.get_or_insert(SharedMapping { start, end, vma: v, offset: v.file_offset(s) });
        if (v.dev, v.inode) != (m.vma.dev, m.vma.inode) || v.file_offset(s) != m.offset + (s - start) {
            return Err(ShareError::SeveralFiles { start, end });
        }
        if !v.prot.contains(ProtFlags::READ | ProtFlags::WRITE) {
            return Err(ShareError::SharedNotWritable { start: s, end: e });
        }
    }
    Ok(first)
}

/// A way to open the mapped file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    MapFiles,
    Path,
    Fds,
}

impl Route {
    const ALL: [Route; 3] = [Route::MapFiles, Route::Path, Route::Fds];

    fn name(self) -> &'static str {
        match self {
            Route::MapFiles => "/proc/self/map_files",
            Route::Path => "its path",
            Route::Fds => "the application's open fds",
        }
    }

    /// The file mapped at `m`, opened read-write (and moved to our fd
    /// numbers) this way, checked to be the mapping's file; or why not.
    pub(crate) fn open(self, m: &SharedMapping) -> Result<OwnedFd, String> {
        let link = map_files_link(&m.vma);
        match self {
            Route::MapFiles => open_checked(&link, m),
            Route::Path => {
                let target = rustix::fs::readlink(&link, Vec::new()).map_err(|e| format!("reading {link:?}: {e}"))?;
                let path = Path::new(OsStr::from_bytes(target.as_bytes()));
                open_checked(path, m).map_err(|e| format!("{path:?}: {e}"))
            }
            Route::Fds => {
                let dir = rustix::fs::open(
                    "/proc/self/fd",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| format!("/proc/self/fd: {e}"))?;
                let entries = rustix::fs::Dir::read_from(&dir).map_err(|e| format!("/proc/self/fd: {e}"))?;
                for entry in entries {
                    let entry = entry.map_err(|e| format!("/proc/self/fd: {e}"))?;
                    let name = entry.file_name().to_bytes();
                    if name.starts_with(b".") {
                        continue;
                    }
                    // stat follows the fd's link without opening anything.
                    let same = rustix::fs::statat(dir.as_fd(), entry.file_name(), AtFlags::empty())
                        .is_ok_and(|st| is_the_file(&st, m).is_ok());
                    if same {
                        let path = Path::new("/proc/self/fd").join(OsStr::from_bytes(name));
                        if let Ok(fd) = open_checked(&path, m) {
                            return Ok(fd);
                        }
                    }
                }
                Err("no fd of the application is open on the file".into())
            }
        }
    }
}

/// The `/proc/self/map_files` entry of mapping `v`.
fn map_files_link(v: &Vma) -> PathBuf {
    PathBuf::from(format!("/proc/self/map_files/{:x}-{:x}", v.start, v.end))
}

/// Whether `st` describes the regular file mapped at `m`.
fn is_the_file(st: &Stat, m: &SharedMapping) -> Result<(), String> {
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err("not a regular file".into());
    }
    let dev = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    if (dev, st.st_ino) != (m.vma.dev, m.vma.inode) {
        return Err(format!(
            "another file (device {:x}:{:x} inode {}; the mapping's is {:x}:{:x} inode {})",
            dev.0, dev.1, st.st_ino, m.vma.dev.0, m.vma.dev.1, m.vma.inode
        ));
    }
    Ok(())
}

/// Opens `path` read-write if it is the file mapped at `m` (checked before
/// opening and after), at one of our fd numbers.
fn open_checked(path: &Path, m: &SharedMapping) -> Result<OwnedFd, String> {
    let before = rustix::fs::stat(path).map_err(|e| e.to_string())?;
    is_the_file(&before, m)?;
    // NONBLOCK, NOCTTY: should the path have become a FIFO or a terminal
    // since, the open neither hangs nor adopts it (the check below refuses it).
    let flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| format!("opening read-write: {e}"))?;
    let after = rustix::fs::fstat(&fd).map_err(|e| e.to_string())?;
    is_the_file(&after, m)?;
    sim::gpu::memory::arena::move_fd_high(fd).map_err(|e| e.to_string())
}

/// An fd of the file mapped at `m`, opened read-write by the first route
/// that works and checked to be that file, holding the whole range.
pub fn open(m: &SharedMapping) -> Result<OwnedFd, ShareError> {
    let mut failures = Vec::new();
    for route in Route::ALL {
        match route.open(m) {
            Ok(fd) => {
                check_size(&fd, m)?;
                return Ok(fd);
            }
            Err(why) => failures.push(format!("{}: {why}", route.name())),
        }
    }
    Err(ShareError::SharedFileUnavailable { start: m.start, end: m.end, tried: failures.join("; ") })
}

/// Refuses a range that reaches past the last page of the file (where the
/// application itself would get SIGBUS).
fn check_size(fd: &OwnedFd, m: &SharedMapping) -> Result<(), ShareError> {
    let st = rustix::fs::fstat(fd).map_err(|e| ShareError::SharedFileUnavailable {
        start: m.start,
        end: m.end,
        tried: format!("fstat of the opened file: {e}"),
    })?;
    let size = u64::try_from(st.st_size).unwrap_or(0);
    let pages = size.div_ceil(PAGE) * PAGE;
    if m.offset + (m.end - m.start) > pages {
        return Err(ShareError::PastEndOfFile { start: m.start, end: m.end, size });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::{AsRawFd, BorrowedFd};
    use rustix::mm::MapFlags;

    const P: u64 = PAGE;

    fn classify_text(text: &str, start: u64, end: u64) -> Result<Option<SharedMapping>, ShareError> {
        classify(&Snapshot::parse(text), start, end)
    }

    #[test]
    fn a_range_is_one_shared_file_or_refused() {
        let maps = "\
10000-12000 rw-s 00003000 00:05 42 /dev/shm/a
12000-13000 rw-s 00005000 00:05 42 /dev/shm/a
13000-14000 rw-s 00000000 00:05 43 /dev/shm/b
14000-15000 rw-s 00006000 00:06 42 /other/a
15000-16000 rw-p 00000000 00:00 0
16000-17000 r--s 00006000 00:05 42 /dev/shm/a
18000-19000 rw-p 00000000 fd:01 77 /some/file
1a000-1b000 rw-s 00000000 00:05 44 /dev/shm/c
";
        let m = classify_text(maps, 0x11000, 0x13000).unwrap().unwrap();
        assert_eq!(
            (m.start, m.end, m.offset, m.vma.start, m.vma.inode, m.vma.dev),
            (0x11000, 0x13000, 0x4000, 0x10000, 42, (0, 5))
        );
        let e = |s, e| classify_text(maps, s, e).unwrap_err();
        assert!(matches!(e(0x12000, 0x14000), ShareError::SeveralFiles { .. }), "another inode");
        assert!(matches!(e(0x12000, 0x15000), ShareError::SeveralFiles { .. }));
        assert!(matches!(e(0x13000, 0x15000), ShareError::SeveralFiles { .. }), "the same inode on another device");
        assert!(matches!(e(0x14000, 0x16000), ShareError::MixedMemory { .. }), "private memory after it");
        assert!(matches!(e(0x15000, 0x17000), ShareError::MixedMemory { .. }), "private memory before it");
        assert!(matches!(e(0x16000, 0x17000), ShareError::SharedNotWritable { .. }));
        assert!(matches!(e(0x16000, 0x18000), ShareError::SharedNotWritable { .. }), "the first problem is named");
        assert!(matches!(e(0x19000, 0x1b000), ShareError::NotMapped { start: 0x19000, end: 0x1a000 }));
        assert!(matches!(e(0x1a000, 0x1c000), ShareError::NotMapped { start: 0x1b000, .. }));
        assert_eq!(classify_text(maps, 0x15000, 0x16000).unwrap(), None, "private anonymous memory");
        assert_eq!(classify_text(maps, 0x18000, 0x19000).unwrap(), None, "a private file mapping: not ours to judge");
        assert_eq!(classify_text(maps, 0x17000, 0x18000).unwrap(), None, "a hole");
    }

    fn ident(fd: BorrowedFd<'_>) -> (u64, u64) {
        let st = rustix::fs::fstat(fd).unwrap();
        (st.st_dev, st.st_ino)
    }

    /// Maps `len` bytes of `fd` shared, read-write (never unmapped: tests are short).
    fn map_shared(fd: BorrowedFd<'_>, len: u64) -> u64 {
        // SAFETY: a fresh shared mapping at an address the kernel picks.
        (unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len as usize,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd,
                0,
            )
        })
        .unwrap() as u64
    }

    fn mapping_at(addr: u64, len: u64) -> SharedMapping {
        classify(&Snapshot::read().unwrap(), addr, addr + len).unwrap().expect("a shared file mapping")
    }

    fn can_open_map_files() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// A named file (a `/dev/shm` file, as HIP's IPC events make) is reopened
    /// by its path or through an fd of the application, and only if it is
    /// the mapping's file; once deleted, only the application's fd names it.
    #[test]
    fn a_named_file_is_reopened_and_checked() {
        let dir = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let file = tempfile::NamedTempFile::new_in(&dir).unwrap();
        file.as_file().set_len(100).unwrap();
        let addr = map_shared(file.as_file().as_fd(), P);
        let m = mapping_at(addr, P);
        assert_eq!(m.offset, 0);
        for route in [Route::Path, Route::Fds] {
            let fd = route.open(&m).unwrap_or_else(|e| panic!("{route:?}: {e}"));
            assert_eq!(ident(fd.as_fd()), ident(file.as_file().as_fd()), "{route:?}");
            assert!(fd.as_raw_fd() >= sim::gpu::memory::arena::INTERNAL_FD_BASE);
        }
        if can_open_map_files() {
            let fd = Route::MapFiles.open(&m).unwrap();
            assert_eq!(ident(fd.as_fd()), ident(file.as_file().as_fd()));
        }
        // What is found must be the mapping's file: device and inode.
        for wrong in [
            SharedMapping { vma: Vma { inode: m.vma.inode + 1, ..m.vma }, ..m },
            SharedMapping { vma: Vma { dev: (m.vma.dev.0 + 1, m.vma.dev.1), ..m.vma }, ..m },
        ] {
            let e = Route::Path.open(&wrong).unwrap_err();
            assert!(e.contains("another file"), "{e}");
            assert!(Route::Fds.open(&wrong).is_err());
            assert!(Route::MapFiles.open(&wrong).is_err());
        }
        // Another file takes the name: the mapping's file is deleted.
        let impostor = tempfile::NamedTempFile::new_in(&dir).unwrap();
        impostor.as_file().set_len(100).unwrap();
        let path = file.path().to_path_buf();
        let _keep = impostor.persist(&path).unwrap();
        let e = Route::Path.open(&m).unwrap_err();
        assert!(e.contains("(deleted)"), "{e}");
        let fd = Route::Fds.open(&m).unwrap();
        assert_eq!(ident(fd.as_fd()), ident(file.as_file().as_fd()), "the application's fd still names it");
        let _ = std::fs::remove_file(&path);
    }

    /// A memfd the application closed after mapping it has no name and no
    /// fd: only `/proc/self/map_files` reaches it (with the capability).
    #[test]
    fn an_unnamed_file_needs_map_files() {
        let fd = rustix::fs::memfd_create("rocjitsu-test-unnamed", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, 2 * P).unwrap();
        let addr = map_shared(fd.as_fd(), 2 * P);
        let id = ident(fd.as_fd());
        drop(fd);
        let m = mapping_at(addr, 2 * P);
        assert!(Route::Path.open(&m).is_err(), "a memfd's path cannot be opened");
        assert!(Route::Fds.open(&m).is_err(), "no fd names it any more");
        match open(&m) {
            Ok(fd) => {
                assert!(can_open_map_files(), "only map_files could have opened it");
                assert_eq!(ident(fd.as_fd()), id);
            }
            Err(e) => {
                assert!(!can_open_map_files(), "{e}");
                assert!(matches!(e, ShareError::SharedFileUnavailable { .. }), "{e}");
                assert_eq!(e.errno(), libc::EINVAL);
            }
        }
    }

    #[test]
    fn only_regular_files_are_taken() {
        let vma = Vma { start: 0, end: P, prot: ProtFlags::READ, shared: true, offset: 0, inode: 1, dev: (0, 0) };
        let m = SharedMapping { start: 0, end: P, vma, offset: 0 };
        let e = is_the_file(&rustix::fs::stat("/").unwrap(), &m).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
