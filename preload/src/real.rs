//! The libc functions we interpose, reached through `dlsym(RTLD_NEXT)`.
//!
//! Resolved lazily on first use and cached: our hooks can run before any
//! constructor (libnuma's constructor calls `fopen` before ours would run), so
//! nothing here may depend on initialisation order.

use libc::{c_char, c_int, c_long, c_uint, c_ulong, c_void, mode_t, off_t, size_t, DIR, FILE};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Resolves `name` (NUL-terminated) to the next definition after ours.
fn resolve(slot: &AtomicUsize, name: &'static [u8]) -> usize {
    let cached = slot.load(Ordering::Acquire);
    if cached != 0 {
        return cached;
    }
    // SAFETY: `name` is a NUL-terminated static string; dlsym only reads it.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    if p == 0 {
        // Without the real function we cannot even pass the call through;
        // this only happens if libc itself lacks the symbol.
        let msg = b"rocjitsu: cannot resolve a libc function\n";
        // SAFETY: writing a static buffer to stderr.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
        std::process::abort();
    }
    slot.store(p, Ordering::Release);
    p
}

macro_rules! real_fns {
    ($( $name:ident : fn($($arg:ident : $ty:ty),*) -> $ret:ty ;)*) => {
        $(
            /// Calls the real libc function.
            ///
            /// # Safety
            /// The caller upholds the libc function's own contract.
            #[allow(clippy::too_many_arguments)]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                static SLOT: AtomicUsize = AtomicUsize::new(0);
                let p = resolve(&SLOT, concat!(stringify!($name), "\0").as_bytes());
                // SAFETY: `p` is the address of the libc function of this name,
                // whose C signature is the one declared here.
                let f: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(p) };
                // SAFETY: forwarded contract.
                unsafe { f($($arg),*) }
            }
        )*
    };
}

real_fns! {
    open: fn(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    open64: fn(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    openat: fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    openat64: fn(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    __open_2: fn(path: *const c_char, flags: c_int) -> c_int;
    __open64_2: fn(path: *const c_char, flags: c_int) -> c_int;
    __openat_2: fn(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    __openat64_2: fn(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    fopen: fn(path: *const c_char, mode: *const c_char) -> *mut FILE;
    fopen64: fn(path: *const c_char, mode: *const c_char) -> *mut FILE;
    freopen: fn(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE;
    freopen64: fn(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE;
    opendir: fn(path: *const c_char) -> *mut DIR;
    stat: fn(path: *const c_char, buf: *mut libc::stat) -> c_int;
    stat64: fn(path: *const c_char, buf: *mut libc::stat64) -> c_int;
    lstat: fn(path: *const c_char, buf: *mut libc::stat) -> c_int;
    lstat64: fn(path: *const c_char, buf: *mut libc::stat64) -> c_int;
    fstat: fn(fd: c_int, buf: *mut libc::stat) -> c_int;
    fstat64: fn(fd: c_int, buf: *mut libc::stat64) -> c_int;
    fstatat: fn(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int;
    fstatat64: fn(dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int;
    __xstat: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int;
    __xstat64: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int;
    __lxstat: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int;
    __lxstat64: fn(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int;
    __fxstat: fn(ver: c_int, fd: c_int, buf: *mut libc::stat) -> c_int;
    __fxstat64: fn(ver: c_int, fd: c_int, buf: *mut libc::stat64) -> c_int;
    __fxstatat: fn(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int;
    __fxstatat64: fn(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int;
    statx: fn(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut libc::statx) -> c_int;
    access: fn(path: *const c_char, mode: c_int) -> c_int;
    faccessat: fn(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int;
    readlink: fn(path: *const c_char, buf: *mut c_char, size: size_t) -> isize;
    realpath: fn(path: *const c_char, resolved: *mut c_char) -> *mut c_char;
    __realpath_chk: fn(path: *const c_char, resolved: *mut c_char, resolved_len: size_t) -> *mut c_char;
    ioctl: fn(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int;
    mmap: fn(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void;
    mmap64: fn(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void;
    munmap: fn(addr: *mut c_void, len: size_t) -> c_int;
    mprotect: fn(addr: *mut c_void, len: size_t, prot: c_int) -> c_int;
    madvise: fn(addr: *mut c_void, len: size_t, advice: c_int) -> c_int;
    close: fn(fd: c_int) -> c_int;
    dup: fn(fd: c_int) -> c_int;
    dup2: fn(fd: c_int, newfd: c_int) -> c_int;
    dup3: fn(fd: c_int, newfd: c_int, flags: c_int) -> c_int;
    fcntl: fn(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int;
    fcntl64: fn(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int;
}

/// Unused-argument helper for `mode_t`/`c_long` imports on some targets.
#[allow(dead_code)]
fn _types(_: mode_t, _: c_long) {}

/// Sets the calling thread's `errno`.
pub fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

/// The calling thread's `errno`.
pub fn errno() -> c_int {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() }
}
