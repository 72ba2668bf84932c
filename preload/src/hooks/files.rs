//! Path-taking hooks: open and friends, fopen, opendir, access, readlink,
//! realpath. Device paths become fake fds; sysfs/procfs paths are redirected
//! into our tree; everything else passes through untouched.

use super::{classify_c, fail_errno, fail_null, with_target};
use crate::paths::Redirect;
use crate::real;
use crate::state::State;
use libc::{c_char, c_int, c_uint, size_t, DIR, FILE};
use std::ffi::CStr;

/// Opens `target` with `open_real` for tree paths (given the redirected path).
fn open_target(st: &State, target: Redirect, flags: c_int, open_real: impl FnOnce(&CStr) -> c_int) -> c_int {
    match target {
        Redirect::Device(node) => match st.open_device(node, flags & libc::O_CLOEXEC != 0) {
            Ok(fd) => fd,
            Err(e) => fail_errno(e),
        },
        Redirect::Tree(rel) => open_real(&st.tree_path(&rel)),
    }
}

macro_rules! open_hook {
    ($name:ident, ($($arg:ident : $ty:ty),*), $path:ident, $flags:ident, |$p:ident| $call:expr) => {
        /// Interposed; see the module docs.
        ///
        /// # Safety
        /// Called by C code with the libc function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            // SAFETY: forwarding the caller's arguments unchanged.
            let pass = || unsafe { real::$name($($arg),*) };
            // SAFETY: `path` is the caller's C string (or null).
            let Some(target) = (unsafe { classify_c($path) }) else { return pass() };
            with_target(pass, -1, |st| {
                open_target(st, target, $flags, |$p: &CStr| {
                    // SAFETY: a valid C path; the other arguments are the caller's.
                    unsafe { $call }
                })
            })
        }
    };
}

open_hook!(open, (path: *const c_char, flags: c_int, mode: c_uint), path, flags, |p| real::open(p.as_ptr(), flags, mode));
open_hook!(open64, (path: *const c_char, flags: c_int, mode: c_uint), path, flags, |p| real::open64(p.as_ptr(), flags, mode));
open_hook!(__open_2, (path: *const c_char, flags: c_int), path, flags, |p| real::__open_2(p.as_ptr(), flags));
open_hook!(__open64_2, (path: *const c_char, flags: c_int), path, flags, |p| real::__open64_2(p.as_ptr(), flags));
open_hook!(openat, (dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint), path, flags, |p| real::openat(
    dirfd,
    p.as_ptr(),
    flags,
    mode
));
open_hook!(openat64, (dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint), path, flags, |p| real::openat64(
    dirfd,
    p.as_ptr(),
    flags,
    mode
));
open_hook!(__openat_2, (dirfd: c_int, path: *const c_char, flags: c_int), path, flags, |p| real::__openat_2(
    dirfd,
    p.as_ptr(),
    flags
));
open_hook!(__openat64_2, (dirfd: c_int, path: *const c_char, flags: c_int), path, flags, |p| real::__openat64_2(
    dirfd,
    p.as_ptr(),
    flags
));

macro_rules! fopen_hook {
    ($name:ident, ($($arg:ident : $ty:ty),*), $path:ident, |$p:ident| $call:expr) => {
        /// Interposed: sysfs paths are redirected; device nodes cannot be
        /// opened as streams (nothing in the ROCm stack does).
        ///
        /// # Safety
        /// Called by C code with the libc function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> *mut FILE {
            // SAFETY: forwarding the caller's arguments unchanged.
            let pass = || unsafe { real::$name($($arg),*) };
            // SAFETY: `path` is the caller's C string (or null).
            let Some(target) = (unsafe { classify_c($path) }) else { return pass() };
            with_target(pass, std::ptr::null_mut(), |st| match target {
                Redirect::Device(_) => fail_null(libc::ENODEV),
                Redirect::Tree(rel) => {
                    let $p = st.tree_path(&rel);
                    // SAFETY: a valid C path; the other arguments are the caller's.
                    unsafe { $call }
                }
            })
        }
    };
}

fopen_hook!(fopen, (path: *const c_char, mode: *const c_char), path, |p| real::fopen(p.as_ptr(), mode));
fopen_hook!(fopen64, (path: *const c_char, mode: *const c_char), path, |p| real::fopen64(p.as_ptr(), mode));
fopen_hook!(freopen, (path: *const c_char, mode: *const c_char, stream: *mut FILE), path, |p| real::freopen(
    p.as_ptr(),
    mode,
    stream
));
fopen_hook!(freopen64, (path: *const c_char, mode: *const c_char, stream: *mut FILE), path, |p| real::freopen64(
    p.as_ptr(),
    mode,
    stream
));

/// Interposed: our tree's directories are real, so `readdir` needs no hook.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut DIR {
    // SAFETY: forwarding the caller's argument unchanged.
    let pass = || unsafe { real::opendir(path) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    with_target(pass, std::ptr::null_mut(), |st| match target {
        Redirect::Device(_) => fail_null(libc::ENOTDIR),
        // SAFETY: a valid C path.
        Redirect::Tree(rel) => unsafe { real::opendir(st.tree_path(&rel).as_ptr()) },
    })
}

/// Interposed: device nodes are readable and writable by everyone.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::access(path, mode) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    with_target(pass, -1, |st| match target {
        Redirect::Device(node) => st.device_exists(node).map(|_| 0).unwrap_or_else(fail_errno),
        // SAFETY: a valid C path.
        Redirect::Tree(rel) => unsafe { real::access(st.tree_path(&rel).as_ptr(), mode) },
    })
}

/// Interposed like [`access`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::faccessat(dirfd, path, mode, flags) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    with_target(pass, -1, |st| match target {
        Redirect::Device(node) => st.device_exists(node).map(|_| 0).unwrap_or_else(fail_errno),
        // SAFETY: a valid C path.
        Redirect::Tree(rel) => unsafe { real::faccessat(dirfd, st.tree_path(&rel).as_ptr(), mode, flags) },
    })
}

/// Interposed: links inside our tree resolve inside it.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, size: size_t) -> isize {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::readlink(path, buf, size) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    with_target(pass, -1, |st| match target {
        Redirect::Device(_) => fail_errno(libc::EINVAL) as isize,
        // SAFETY: a valid C path; `buf`/`size` are the caller's.
        Redirect::Tree(rel) => unsafe { real::readlink(st.tree_path(&rel).as_ptr(), buf, size) },
    })
}

/// The resolved path of a taken-over path: a device node resolves to itself,
/// a tree path to its real location in our tree.
///
/// # Safety
/// `resolved` is null or has room for `PATH_MAX` bytes.
unsafe fn realpath_target(st: &State, target: Redirect, path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    match target {
        // SAFETY: the caller's buffer contract.
        Redirect::Tree(rel) => unsafe { real::realpath(st.tree_path(&rel).as_ptr(), resolved) },
        Redirect::Device(node) => {
            if let Err(e) = st.device_exists(node) {
                return fail_null(e);
            }
            // SAFETY: `path` is a valid C string (classified above).
            let bytes = unsafe { CStr::from_ptr(path) }.to_bytes_with_nul();
            if bytes.len() > libc::PATH_MAX as usize {
                return fail_null(libc::ENAMETOOLONG);
            }
            let out = if resolved.is_null() {
                // SAFETY: malloc for the caller to free, as realpath does.
                unsafe { libc::malloc(bytes.len()) as *mut c_char }
            } else {
                resolved
            };
            if out.is_null() {
                return fail_null(libc::ENOMEM);
            }
            // SAFETY: `out` has room for PATH_MAX ≥ bytes.len() bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), out, bytes.len()) };
            out
        }
    }
}

/// Interposed; see [`realpath_target`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::realpath(path, resolved) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    // SAFETY: the caller's buffer contract.
    with_target(pass, std::ptr::null_mut(), |st| unsafe { realpath_target(st, target, path, resolved) })
}

/// Interposed: the FORTIFY variant libdrm calls.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn __realpath_chk(
    path: *const c_char,
    resolved: *mut c_char,
    resolved_len: size_t,
) -> *mut c_char {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::__realpath_chk(path, resolved, resolved_len) };
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else {
        return pass();
    };
    if !resolved.is_null() && resolved_len < libc::PATH_MAX as size_t {
        // What glibc's check does: the buffer must hold PATH_MAX bytes.
        return pass();
    }
    // SAFETY: the caller's buffer holds PATH_MAX bytes (checked above).
    with_target(pass, std::ptr::null_mut(), |st| unsafe { realpath_target(st, target, path, resolved) })
}
