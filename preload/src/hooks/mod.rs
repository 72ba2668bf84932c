//! The exported libc interposers, grouped by what they take: paths
//! ([`files`], [`stat`]), fds ([`fd`], [`ioctl`]) and memory ([`memory`]).
//!
//! Every hook first decides, cheaply and without touching our state, whether
//! the call concerns us (a path we take over, a fake fd); if not, it calls
//! libc directly. Calls that concern us run under the re-entrancy guard.

pub mod fd;
pub mod files;
pub mod hsa_wait;
pub mod ioctl;
pub mod memory;
pub mod stat;

use crate::guard;
use crate::paths::{self, Redirect};
use crate::real::set_errno;
use crate::state::{self, State};
use libc::c_char;
use std::ffi::CStr;

/// Classifies a C path argument.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
pub(crate) unsafe fn classify_c(path: *const c_char) -> Option<Redirect> {
    if path.is_null() || guard::inside() {
        return None;
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    paths::classify(unsafe { CStr::from_ptr(path) }.to_bytes())
}

/// Sets errno and returns -1.
pub(crate) fn fail_errno(e: i32) -> i32 {
    set_errno(e);
    -1
}

/// Sets errno and returns a null pointer.
pub(crate) fn fail_null<T>(e: i32) -> *mut T {
    set_errno(e);
    std::ptr::null_mut()
}

/// Runs `ours` with the state (initialising it) under the guard. If the
/// state cannot be built, or `ours` panics, the call fails with `failed`
/// and an errno rather than reaching libc with a path that cannot work.
pub(crate) fn with_target<R: Copy>(pass: impl FnOnce() -> R, failed: R, ours: impl FnOnce(&State) -> R) -> R {
    guard::hook(
        pass,
        || match state::get_or_init() {
            Ok(st) => ours(st),
            Err(e) => {
                set_errno(e);
                failed
            }
        },
        || {
            set_errno(libc::EIO);
            failed
        },
    )
}

/// Runs `ours` for a fake fd under the guard, if `fd` is one; otherwise
/// `pass`. Never initialises the state: without state there are no fake fds.
pub(crate) fn with_fake_fd<R: Copy>(
    fd: i32,
    pass: impl FnOnce() -> R,
    failed: R,
    ours: impl FnOnce(&State, state::FakeFd) -> R,
) -> R {
    if guard::inside() {
        return pass();
    }
    let fake = state::get().and_then(|st| st.fake(fd).map(|f| (st, f)));
    let Some((st, fake)) = fake else {
        if state::inherited_device(fd).is_some() {
            // The fd belongs to the parent's KFD process.
            set_errno(libc::EBADF);
            return failed;
        }
        return pass();
    };
    guard::hook(
        pass,
        || ours(st, fake),
        || {
            set_errno(libc::EIO);
            failed
        },
    )
}
