//! The part of userfaultfd we use: write-protecting a range so that every
//! thread that writes to it waits in the kernel until we close the fd.
//!
//! Written here rather than taken from the `userfaultfd` crate: that crate
//! generates its kernel bindings with bindgen (libclang at build time) and
//! wraps the whole fault-handling API, while we need three ioctls of a
//! stable kernel ABI and none of the event handling.
//!
//! Kernel facts this relies on (linux/userfaultfd.h, fs/userfaultfd.c):
//! - A write to a write-protected page of a range registered in WP mode
//!   puts the writer to sleep in the kernel (user-mode writes always;
//!   kernel-mode writes, e.g. `read(2)` into the page, too unless the fd is
//!   `UFFD_USER_MODE_ONLY`, where they fail with EFAULT instead).
//! - Closing the fd unregisters its ranges and wakes every sleeping writer;
//!   each then retries its fault against whatever is mapped at the address
//!   by then.
//! - WP mode works on anonymous memory since Linux 5.7, on shmem (memfds)
//!   with `UFFD_FEATURE_WP_HUGETLBFS_SHMEM` since 5.19; pages never touched
//!   are protected too with `UFFD_FEATURE_WP_UNPOPULATED` (6.4), otherwise
//!   only pages present in the page tables are.

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use std::sync::OnceLock;

const UFFD_API: u64 = 0xaa;
const UFFDIO: u8 = 0xaa;
const UFFDIO_REGISTER_MODE_WP: u64 = 1 << 1;
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
/// The userfaultfd flag that limits it to user-mode faults (Linux 5.11).
const UFFD_USER_MODE_ONLY: u32 = 1;
/// `USERFAULTFD_IOC_NEW` of `/dev/userfaultfd` (Linux 6.1).
const USERFAULTFD_IOC_NEW: u32 = 0xaa00;

/// Write protection of shmem (memfd) mappings.
pub const FEATURE_WP_SHMEM: u64 = 1 << 12;
/// Write protection of pages not yet populated.
pub const FEATURE_WP_UNPOPULATED: u64 = 1 << 13;

#[repr(C)]
#[derive(Default)]
struct UffdioApi {
    api: u64,
    features: u64,
    ioctls: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct UffdioRange {
    start: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct UffdioRegister {
    range: UffdioRange,
    mode: u64,
    ioctls: u64,
}

#[repr(C)]
#[derive(Default)]
struct UffdioWriteprotect {
    range: UffdioRange,
    mode: u64,
}

const API: rustix::ioctl::Opcode = rustix::ioctl::opcode::read_write::<UffdioApi>(UFFDIO, 0x3f);
const REGISTER: rustix::ioctl::Opcode = rustix::ioctl::opcode::read_write::<UffdioRegister>(UFFDIO, 0x00);
const WRITEPROTECT: rustix::ioctl::Opcode = rustix::ioctl::opcode::read_write::<UffdioWriteprotect>(UFFDIO, 0x06);

/// How this process can get a userfaultfd that also catches kernel-mode
/// writes, or failing that one that catches user-mode writes only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The syscall (CAP_SYS_PTRACE, or `vm.unprivileged_userfaultfd = 1`).
    Syscall,
    /// `/dev/userfaultfd` (Linux 6.1; its permissions decide).
    DevNode,
    /// The syscall with `UFFD_USER_MODE_ONLY` (any user, Linux 5.11).
    UserModeOnly,
}

/// What this kernel and these privileges offer, probed once.
#[derive(Debug, Clone, Copy)]
pub struct Support {
    source: Source,
    /// The `UFFD_FEATURE_*` bits the kernel supports.
    pub features: u64,
}

impl Support {
    /// Whether writes by the kernel on behalf of a thread (a `read(2)` into
    /// the page) wait like user-mode writes instead of failing with EFAULT.
    pub fn catches_kernel_writes(&self) -> bool {
        self.source != Source::UserModeOnly
    }
}

fn open_from(source: Source) -> Result<OwnedFd, Errno> {
    use rustix::mm::UserfaultfdFlags;
    let flags = UserfaultfdFlags::CLOEXEC | UserfaultfdFlags::NONBLOCK;
    match source {
        // SAFETY: creates a new fd; no memory is involved.
        Source::Syscall => unsafe { rustix::mm::userfaultfd(flags) },
        // SAFETY: as above.
        Source::UserModeOnly => unsafe {
            rustix::mm::userfaultfd(flags | UserfaultfdFlags::from_bits_retain(UFFD_USER_MODE_ONLY))
        },
        Source::DevNode => {
            use rustix::fs::{Mode, OFlags};
            let dev = rustix::fs::open("/dev/userfaultfd", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())?;
            // SAFETY: USERFAULTFD_IOC_NEW takes its flags by value and returns a new fd.
            unsafe { rustix::ioctl::ioctl(&dev, NewUffd { flags: flags.bits() as usize }) }
        }
    }
}

/// `USERFAULTFD_IOC_NEW`: flags by value in, a new userfaultfd as the result.
struct NewUffd {
    flags: usize,
}

// SAFETY: the ioctl takes an integer argument (never dereferenced) and
// returns a new fd, which `output_from_ptr` takes ownership of.
unsafe impl rustix::ioctl::Ioctl for NewUffd {
    type Output = OwnedFd;
    const IS_MUTATING: bool = false;

    fn opcode(&self) -> rustix::ioctl::Opcode {
        USERFAULTFD_IOC_NEW as rustix::ioctl::Opcode
    }

    fn as_ptr(&mut self) -> *mut std::ffi::c_void {
        self.flags as *mut std::ffi::c_void
    }

    unsafe fn output_from_ptr(
        out: rustix::ioctl::IoctlOutput,
        _: *mut std::ffi::c_void,
    ) -> rustix::io::Result<OwnedFd> {
        // SAFETY: a successful USERFAULTFD_IOC_NEW returns a fresh fd that nothing else owns.
        Ok(unsafe { <OwnedFd as rustix::fd::FromRawFd>::from_raw_fd(out) })
    }
}

/// Performs the API handshake, asking for `features`; returns the features
/// the kernel supports (all of them when `features` is 0).
fn handshake(fd: &OwnedFd, features: u64) -> Result<u64, Errno> {
    let mut api = UffdioApi { api: UFFD_API, features, ioctls: 0 };
    // SAFETY: UFFDIO_API reads and writes a `struct uffdio_api`, which `api` is.
    unsafe { rustix::ioctl::ioctl(fd, rustix::ioctl::Updater::<API, UffdioApi>::new(&mut api)) }?;
    Ok(api.features)
}

/// Probes (once) how to get a userfaultfd here; `None` when none can be
/// had (an old kernel, a seccomp filter such as a container's default).
pub fn support() -> Option<Support> {
    static SUPPORT: OnceLock<Option<Support>> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        for source in [Source::Syscall, Source::DevNode, Source::UserModeOnly] {
            if let Ok(fd) = open_from(source) {
                if let Ok(features) = handshake(&fd, 0) {
                    return Some(Support { source, features });
                }
            }
        }
        None
    })
}

/// A userfaultfd with some ranges write-protected. Dropping it (closing the
/// fd) releases every writer waiting on those ranges.
#[derive(Debug)]
pub struct WriteProtect {
    fd: OwnedFd,
}

impl WriteProtect {
    /// A new userfaultfd with `features` (which must be supported).
    pub fn new(support: Support, features: u64) -> Result<WriteProtect, Errno> {
        let fd = open_from(support.source)?;
        handshake(&fd, features)?;
        Ok(WriteProtect { fd })
    }

    /// Registers `[start, start + len)` in WP mode and write-protects it.
    /// From now until `self` is dropped, a write to the range waits.
    ///
    /// Makes no allocation: callers run it with the application's memory
    /// protected.
    pub fn protect(&self, start: u64, len: u64) -> Result<(), Errno> {
        let range = UffdioRange { start, len };
        let mut register = UffdioRegister { range, mode: UFFDIO_REGISTER_MODE_WP, ioctls: 0 };
        // SAFETY: UFFDIO_REGISTER reads and writes a `struct uffdio_register`.
        unsafe {
            rustix::ioctl::ioctl(
                self.fd.as_fd(),
                rustix::ioctl::Updater::<REGISTER, UffdioRegister>::new(&mut register),
            )
        }?;
        let mut wp = UffdioWriteprotect { range, mode: UFFDIO_WRITEPROTECT_MODE_WP };
        // SAFETY: UFFDIO_WRITEPROTECT reads a `struct uffdio_writeprotect`.
        unsafe {
            rustix::ioctl::ioctl(
                self.fd.as_fd(),
                rustix::ioctl::Updater::<WRITEPROTECT, UffdioWriteprotect>::new(&mut wp),
            )
        }?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_numbers_match_the_kernel_headers() {
        // _IOWR(0xAA, 0x3F, 24 bytes), _IOWR(0xAA, 0x00, 32), _IOWR(0xAA, 0x06, 24).
        assert_eq!(API, 0xc018_aa3f);
        assert_eq!(REGISTER, 0xc020_aa00);
        assert_eq!(WRITEPROTECT, 0xc018_aa06);
    }
}
