//! The part of userfaultfd we use: write-protecting a range so that every
//! thread that writes to it waits in the kernel until we close the fd.
//!
//! Written here rather than taken from the `userfaultfd` crate: that crate
//! generates its kernel bindings with bindgen (libclang at build time) and
//! wraps the whole fault-handling API, while we need three ioctls of a
//! stable kernel ABI and none of the event handling. The ABI's structs and
//! numbers come from `linux-raw-sys` (already under rustix).
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

use linux_raw_sys::general::{
    uffdio_api, uffdio_range, uffdio_register, uffdio_writeprotect, UFFDIO_REGISTER_MODE_WP, UFFD_API,
    UFFD_FEATURE_WP_HUGETLBFS_SHMEM, UFFD_FEATURE_WP_UNPOPULATED, UFFD_USER_MODE_ONLY, USERFAULTFD_IOC,
};
use linux_raw_sys::ioctl::{UFFDIO_API, UFFDIO_REGISTER, UFFDIO_WRITEPROTECT};
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use std::sync::OnceLock;

// Declared here because linux-raw-sys (0.12) lacks them: bindgen drops
// `UFFDIO_WRITEPROTECT_MODE_WP` (`((__u64)1<<0)`, a cast it does not
// evaluate) and the `_IO()` macro behind `USERFAULTFD_IOC_NEW`
// (linux/userfaultfd.h).
/// `UFFDIO_WRITEPROTECT_MODE_WP`: set (rather than clear) the protection.
const UFFDIO_WRITEPROTECT_MODE_WP: u64 = 1 << 0;
/// `USERFAULTFD_IOC_NEW` of `/dev/userfaultfd` (Linux 6.1): `_IO(USERFAULTFD_IOC, 0x00)`.
const USERFAULTFD_IOC_NEW: rustix::ioctl::Opcode = rustix::ioctl::opcode::none(USERFAULTFD_IOC as u8, 0x00);

/// Write protection of shmem (memfd) mappings.
pub const FEATURE_WP_SHMEM: u64 = UFFD_FEATURE_WP_HUGETLBFS_SHMEM as u64;
/// Write protection of pages not yet populated.
pub const FEATURE_WP_UNPOPULATED: u64 = UFFD_FEATURE_WP_UNPOPULATED as u64;

const API: rustix::ioctl::Opcode = UFFDIO_API as rustix::ioctl::Opcode;
const REGISTER: rustix::ioctl::Opcode = UFFDIO_REGISTER as rustix::ioctl::Opcode;
const WRITEPROTECT: rustix::ioctl::Opcode = UFFDIO_WRITEPROTECT as rustix::ioctl::Opcode;

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
        USERFAULTFD_IOC_NEW
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
    let mut api = uffdio_api { api: UFFD_API.into(), features, ioctls: 0 };
    // SAFETY: UFFDIO_API reads and writes a `struct uffdio_api`, which `api` is.
    unsafe { rustix::ioctl::ioctl(fd, rustix::ioctl::Updater::<API, uffdio_api>::new(&mut api)) }?;
    Ok(api.features)
}

/// Probes (once) how to get a userfaultfd here; `None` when none can be
/// had (an old kernel, a seccomp filter such as a container's default).
pub fn support() -> Option<Support> {
    static SUPPORT: OnceLock<Option<Support>> = OnceLock::new();
    *SUPPORT.get_or_init(|| probe(open_from))
}

/// The first source that `open` gets a working userfaultfd from, best
/// first; a fallback that changes behaviour is logged (once: [`support`]
/// probes once).
fn probe(open: impl Fn(Source) -> Result<OwnedFd, Errno>) -> Option<Support> {
    for source in [Source::Syscall, Source::DevNode, Source::UserModeOnly] {
        if let Ok(fd) = open(source) {
            if let Ok(features) = handshake(&fd, 0) {
                let support = Support { source, features };
                for what in limitations(&support) {
                    tracing::warn!("{what}");
                }
                return Some(support);
            }
        }
    }
    None
}

/// What lending pages does differently with `support` than with a full
/// userfaultfd on a recent kernel.
fn limitations(support: &Support) -> Vec<&'static str> {
    let mut what = Vec::new();
    if !support.catches_kernel_writes() {
        what.push(
            "userfaultfd is limited to user-mode faults here (vm.unprivileged_userfaultfd = 0 and no access to \
             /dev/userfaultfd): while registered memory moves, a system call writing into it from another thread \
             (read(2) into the buffer) fails with EFAULT instead of waiting",
        );
    }
    if support.features & FEATURE_WP_SHMEM == 0 {
        what.push(
            "this kernel cannot write-protect shared memory (Linux 5.19 can): registered memory stays shared with \
             the daemon after it is freed instead of going back to private memory",
        );
    }
    what
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
        let range = uffdio_range { start, len };
        let mut register = uffdio_register { range, mode: UFFDIO_REGISTER_MODE_WP.into(), ioctls: 0 };
        // SAFETY: UFFDIO_REGISTER reads and writes a `struct uffdio_register`.
        unsafe {
            rustix::ioctl::ioctl(
                self.fd.as_fd(),
                rustix::ioctl::Updater::<REGISTER, uffdio_register>::new(&mut register),
            )
        }?;
        let mut wp = uffdio_writeprotect { range, mode: UFFDIO_WRITEPROTECT_MODE_WP };
        // SAFETY: UFFDIO_WRITEPROTECT reads a `struct uffdio_writeprotect`.
        unsafe {
            rustix::ioctl::ioctl(
                self.fd.as_fd(),
                rustix::ioctl::Updater::<WRITEPROTECT, uffdio_writeprotect>::new(&mut wp),
            )
        }?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn the_hand_declared_numbers_match_the_kernel_headers() {
        // _IO(0xAA, 0x00); and the kernel's own encoding of the three
        // ioctls matches the sizes of the structs we pass them.
        assert_eq!(USERFAULTFD_IOC_NEW as u64, 0xaa00);
        assert_eq!(API, rustix::ioctl::opcode::read_write::<uffdio_api>(0xaa, 0x3f));
        assert_eq!(REGISTER, rustix::ioctl::opcode::read_write::<uffdio_register>(0xaa, 0x00));
        assert_eq!(WRITEPROTECT, rustix::ioctl::opcode::read_write::<uffdio_writeprotect>(0xaa, 0x06));
    }

    /// Collects the level and text of every event.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<(tracing::Level, String)>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
            struct Message(String);
            impl tracing::field::Visit for Message {
                fn record_debug(&mut self, _: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                    self.0 += &format!("{value:?}");
                }
            }
            let mut m = Message(String::new());
            event.record(&mut m);
            self.0.lock().unwrap().push((*event.metadata().level(), m.0));
        }
    }

    /// What probing logs when only `working` gives a userfaultfd (always a
    /// user-mode-only one, which any user can have).
    fn probe_with_only(working: Source) -> (Option<Support>, Vec<(tracing::Level, String)>) {
        let capture = Capture::default();
        let subscriber = tracing_subscriber::registry().with(capture.clone());
        let support = tracing::subscriber::with_default(subscriber, || {
            probe(|s| if s == working { open_from(Source::UserModeOnly) } else { Err(Errno::PERM) })
        });
        let events = capture.0.lock().unwrap().clone();
        (support, events)
    }

    /// The fallback to a user-mode-only userfaultfd is said, as one warning
    /// naming what changes; a full userfaultfd says nothing (on a kernel
    /// that write-protects shared memory, as the tests need).
    #[test]
    fn the_user_mode_only_fallback_is_announced() {
        let (support, events) = probe_with_only(Source::UserModeOnly);
        let support = support.expect("a user-mode-only userfaultfd (Linux 5.11) is needed for this test");
        assert!(support.features & FEATURE_WP_SHMEM != 0, "this test needs Linux 5.19 or newer");
        assert!(!support.catches_kernel_writes());
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].0, tracing::Level::WARN);
        assert!(events[0].1.contains("EFAULT"), "{events:?}");
        for full in [Source::Syscall, Source::DevNode] {
            let (support, events) = probe_with_only(full);
            assert!(support.is_some_and(|s| s.catches_kernel_writes()));
            assert!(events.is_empty(), "{events:?}");
        }
    }

    /// A kernel that cannot write-protect shared memory keeps freed pages
    /// lent: said too.
    #[test]
    fn a_kernel_without_shared_write_protection_is_announced() {
        let old = Support { source: Source::Syscall, features: FEATURE_WP_UNPOPULATED };
        let what = limitations(&old);
        assert_eq!(what.len(), 1);
        assert!(what[0].contains("stays shared"), "{what:?}");
        let new = Support { source: Source::Syscall, features: FEATURE_WP_SHMEM };
        assert!(limitations(&new).is_empty());
    }
}
