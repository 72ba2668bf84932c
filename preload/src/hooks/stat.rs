//! The stat family. Device nodes (by path or by fake fd) report a character
//! device — `226:<minor>` for render nodes, which is how libdrm recognises a
//! DRM fd; tree paths are stat'ed at their real location.
//!
//! Both the glibc ≥ 2.33 names (`stat`, `fstat64`, …) and the older
//! versioned `__xstat` family are hooked: binaries built against older glibc
//! call the latter.

use super::{classify_c, with_fake_fd, with_target};
use crate::paths::{DeviceNode, Redirect};
use crate::real;
use crate::state::{DRM_MAJOR, KFD_MAJOR};
use libc::{c_char, c_int};

/// What stat reports for one of our device nodes.
fn device_stat(node: DeviceNode) -> libc::stat {
    // SAFETY: libc::stat is plain old data; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let (major, minor, ino) = match node {
        DeviceNode::Kfd => (KFD_MAJOR, 0, 1000),
        DeviceNode::Render(m) => (DRM_MAJOR, m, 2000 + m as u64),
    };
    st.st_mode = libc::S_IFCHR | 0o666;
    st.st_rdev = libc::makedev(major, minor);
    st.st_nlink = 1;
    st.st_ino = ino;
    st.st_dev = libc::makedev(0, 5);
    st.st_blksize = 4096;
    st
}

// On x86-64 glibc `struct stat` and `struct stat64` are the same layout.
const _: () = assert!(std::mem::size_of::<libc::stat>() == std::mem::size_of::<libc::stat64>());

/// Writes a device's stat into the caller's buffer.
///
/// # Safety
/// `buf` points at a writable `struct stat` (or the identical `stat64`).
unsafe fn put(buf: *mut libc::stat, node: DeviceNode) -> c_int {
    if buf.is_null() {
        crate::real::set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: the caller's buffer is a writable struct stat.
    unsafe { buf.write(device_stat(node)) };
    0
}

macro_rules! path_stat_hook {
    ($name:ident, $ty:ty, ($($pre:ident : $pty:ty),*)) => {
        /// Interposed; see the module docs.
        ///
        /// # Safety
        /// Called by C code with the libc function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($pre: $pty,)* path: *const c_char, buf: *mut $ty) -> c_int {
            // SAFETY: forwarding the caller's arguments unchanged.
            let pass = || unsafe { real::$name($($pre,)* path, buf) };
            // SAFETY: `path` is the caller's C string (or null).
            let Some(target) = (unsafe { classify_c(path) }) else { return pass() };
            with_target(pass, -1, |st| match target {
                Redirect::Device(node) => match st.device_exists(node) {
                    // SAFETY: the caller's stat buffer.
                    Ok(()) => unsafe { put(buf.cast(), node) },
                    Err(e) => super::fail_errno(e),
                },
                // SAFETY: a valid C path and the caller's buffer.
                Redirect::Tree(rel) => unsafe { real::$name($($pre,)* st.tree_path(&rel).as_ptr(), buf) },
            })
        }
    };
}

path_stat_hook!(stat, libc::stat, ());
path_stat_hook!(stat64, libc::stat64, ());
path_stat_hook!(lstat, libc::stat, ());
path_stat_hook!(lstat64, libc::stat64, ());
path_stat_hook!(__xstat, libc::stat, (ver: c_int));
path_stat_hook!(__xstat64, libc::stat64, (ver: c_int));
path_stat_hook!(__lxstat, libc::stat, (ver: c_int));
path_stat_hook!(__lxstat64, libc::stat64, (ver: c_int));

macro_rules! fd_stat_hook {
    ($name:ident, $ty:ty, ($($pre:ident : $pty:ty),*)) => {
        /// Interposed: a fake fd reports its device.
        ///
        /// # Safety
        /// Called by C code with the libc function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($pre: $pty,)* fd: c_int, buf: *mut $ty) -> c_int {
            // SAFETY: forwarding the caller's arguments unchanged.
            let pass = || unsafe { real::$name($($pre,)* fd, buf) };
            // SAFETY: the caller's stat buffer.
            with_fake_fd(fd, pass, -1, |_, fake| unsafe { put(buf.cast(), fake.device()) })
        }
    };
}

fd_stat_hook!(fstat, libc::stat, ());
fd_stat_hook!(fstat64, libc::stat64, ());
fd_stat_hook!(__fxstat, libc::stat, (ver: c_int));
fd_stat_hook!(__fxstat64, libc::stat64, (ver: c_int));

macro_rules! at_stat_hook {
    ($name:ident, $ty:ty, ($($pre:ident : $pty:ty),*)) => {
        /// Interposed: an absolute path is classified like `stat`'s; an empty
        /// path with `AT_EMPTY_PATH` is an fstat of `dirfd`.
        ///
        /// # Safety
        /// Called by C code with the libc function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($pre: $pty,)* dirfd: c_int, path: *const c_char, buf: *mut $ty, flags: c_int) -> c_int {
            // SAFETY: forwarding the caller's arguments unchanged.
            let pass = || unsafe { real::$name($($pre,)* dirfd, path, buf, flags) };
            // SAFETY: `path` is the caller's C string (or null).
            let empty = !path.is_null() && unsafe { *path } == 0;
            if empty && flags & libc::AT_EMPTY_PATH != 0 {
                // SAFETY: the caller's stat buffer.
                return with_fake_fd(dirfd, pass, -1, |_, fake| unsafe { put(buf.cast(), fake.device()) });
            }
            // SAFETY: `path` is the caller's C string (or null).
            let Some(target) = (unsafe { classify_c(path) }) else { return pass() };
            with_target(pass, -1, |st| match target {
                Redirect::Device(node) => match st.device_exists(node) {
                    // SAFETY: the caller's stat buffer.
                    Ok(()) => unsafe { put(buf.cast(), node) },
                    Err(e) => super::fail_errno(e),
                },
                // SAFETY: a valid C path and the caller's buffer.
                Redirect::Tree(rel) => unsafe { real::$name($($pre,)* dirfd, st.tree_path(&rel).as_ptr(), buf, flags) },
            })
        }
    };
}

at_stat_hook!(fstatat, libc::stat, ());
at_stat_hook!(fstatat64, libc::stat64, ());
at_stat_hook!(__fxstatat, libc::stat, (ver: c_int));
at_stat_hook!(__fxstatat64, libc::stat64, (ver: c_int));

/// What statx reports for one of our device nodes.
fn device_statx(node: DeviceNode) -> libc::statx {
    let st = device_stat(node);
    // SAFETY: libc::statx is plain old data; all-zero is a valid value.
    let mut x: libc::statx = unsafe { std::mem::zeroed() };
    x.stx_mask = libc::STATX_BASIC_STATS;
    x.stx_mode = st.st_mode as u16;
    x.stx_nlink = 1;
    x.stx_ino = st.st_ino;
    x.stx_blksize = 4096;
    x.stx_rdev_major = libc::major(st.st_rdev);
    x.stx_rdev_minor = libc::minor(st.st_rdev);
    x.stx_dev_minor = 5;
    x
}

/// Interposed: coreutils and newer programs call statx directly.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: libc::c_uint,
    buf: *mut libc::statx,
) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::statx(dirfd, path, flags, mask, buf) };
    let put_x = |node| {
        if buf.is_null() {
            return super::fail_errno(libc::EFAULT);
        }
        // SAFETY: the caller's statx buffer.
        unsafe { buf.write(device_statx(node)) };
        0
    };
    // SAFETY: `path` is the caller's C string (or null).
    let empty = !path.is_null() && unsafe { *path } == 0;
    if empty && flags & libc::AT_EMPTY_PATH != 0 {
        return with_fake_fd(dirfd, pass, -1, |_, fake| put_x(fake.device()));
    }
    // SAFETY: `path` is the caller's C string (or null).
    let Some(target) = (unsafe { classify_c(path) }) else { return pass() };
    with_target(pass, -1, |st| match target {
        Redirect::Device(node) => match st.device_exists(node) {
            Ok(()) => put_x(node),
            Err(e) => super::fail_errno(e),
        },
        // SAFETY: a valid C path and the caller's buffer.
        Redirect::Tree(rel) => unsafe { real::statx(dirfd, st.tree_path(&rel).as_ptr(), flags, mask, buf) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_node_is_char_device_226() {
        let st = device_stat(DeviceNode::Render(129));
        assert_eq!(st.st_mode & libc::S_IFMT, libc::S_IFCHR);
        assert_eq!((libc::major(st.st_rdev), libc::minor(st.st_rdev)), (226, 129));
        let st = device_stat(DeviceNode::Kfd);
        assert_eq!(libc::major(st.st_rdev), KFD_MAJOR);
    }
}
