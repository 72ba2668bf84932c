//! fd lifetime hooks: close and the dup family. A dup of a fake fd is a fake
//! fd of the same device (libdrm_amdgpu dups the render fd with
//! `F_DUPFD_CLOEXEC`); closing the last fd of `/dev/kfd` ends the KFD
//! process; the driver's own memory files cannot be closed by the
//! application.

use super::{fail_errno, with_fake_fd};
use crate::guard;
use crate::real;
use crate::state;
use libc::{c_int, c_ulong};

/// Interposed; see the module docs.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    // SAFETY: forwarding the caller's argument unchanged.
    let pass = || unsafe { real::close(fd) };
    if guard::inside() {
        return pass();
    }
    let Some(st) = state::get() else {
        return pass();
    };
    if st.fake(fd).is_none() {
        st.forget_inherited(fd);
        if st.owns_internal_fd(fd) {
            tracing::debug!("refusing the application's close of internal fd {fd}");
            return fail_errno(libc::EBADF);
        }
        return pass();
    }
    guard::hook(
        pass,
        || {
            // Drop the entry (possibly ending the KFD process) before the fd
            // number can be reused by another thread's open.
            let removed = st.remove(fd);
            drop(removed);
            pass()
        },
        || fail_errno(libc::EIO),
    )
}

/// After a successful dup-like call that made `new` from `old`, records it.
fn after_dup(old: c_int, new: c_int) -> c_int {
    if new >= 0 && new != old {
        if let Some(st) = state::get() {
            let replaced = st.remove(new);
            if let Some(fake) = st.fake(old) {
                st.duplicated(&fake, new);
            }
            drop(replaced);
        }
    }
    new
}

/// Refuses to let `dup2`/`dup3` overwrite one of the driver's memory files.
fn protects(newfd: c_int) -> bool {
    state::get().is_some_and(|st| st.owns_internal_fd(newfd))
}

/// Interposed; see the module docs.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    // SAFETY: forwarding the caller's argument unchanged.
    let pass = || unsafe { real::dup(fd) };
    with_fake_fd(fd, pass, -1, |_, _| after_dup(fd, pass()))
}

/// Interposed; see the module docs.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn dup2(fd: c_int, newfd: c_int) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::dup2(fd, newfd) };
    if guard::inside() {
        return pass();
    }
    if protects(newfd) {
        return fail_errno(libc::EBADF);
    }
    guard::hook(pass, || after_dup(fd, pass()), || fail_errno(libc::EIO))
}

/// Interposed; see the module docs.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn dup3(fd: c_int, newfd: c_int, flags: c_int) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::dup3(fd, newfd, flags) };
    if guard::inside() {
        return pass();
    }
    if protects(newfd) {
        return fail_errno(libc::EBADF);
    }
    guard::hook(pass, || after_dup(fd, pass()), || fail_errno(libc::EIO))
}

/// The variadic third argument is declared as a fixed `unsigned long`: on
/// x86-64 a variadic integer or pointer travels in the same register, and we
/// only read it for commands that take one.
fn fcntl_common(fd: c_int, cmd: c_int, real_call: impl Fn() -> c_int) -> c_int {
    if cmd != libc::F_DUPFD && cmd != libc::F_DUPFD_CLOEXEC {
        return real_call();
    }
    with_fake_fd(fd, &real_call, -1, |_, _| after_dup(fd, real_call()))
}

/// Interposed; see [`fcntl_common`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    fcntl_common(fd, cmd, || unsafe { real::fcntl(fd, cmd, arg) })
}

/// Interposed; see [`fcntl_common`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    fcntl_common(fd, cmd, || unsafe { real::fcntl64(fd, cmd, arg) })
}
