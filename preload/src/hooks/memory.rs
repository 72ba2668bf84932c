//! Memory hooks. An mmap of a device file maps the driver's memory file at
//! the offset the driver resolves, so the application's CPU mapping and the
//! simulator's view share pages.

use super::with_fake_fd;
use crate::real;
use crate::state::FakeFd;
use libc::{c_int, c_void, off_t, size_t};
use sim::driver::kfd::DeviceFile;

fn map_fake(
    st: &crate::state::State,
    fake: FakeFd,
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    off: off_t,
) -> *mut c_void {
    let (kfd, file) = match fake {
        FakeFd::Kfd(h) => (h.kfd.clone(), DeviceFile::Kfd),
        // Buffer objects of the render node belong to this process's KFD
        // process (all memory is allocated through the KFD).
        FakeFd::Render(minor) => match st.current_kfd() {
            Some(h) => (h.kfd.clone(), DeviceFile::Render { minor }),
            None => {
                crate::real::set_errno(libc::ENODEV);
                return libc::MAP_FAILED;
            }
        },
    };
    let req = crate::driver::MmapArgs { addr: addr as u64, len: len as u64, prot, flags, offset: off as u64 };
    match kfd.mmap_source(file, &req) {
        // SAFETY: mapping the driver's memory file as the application asked
        // (same address, length, protection and flags); MAP_FIXED replaces
        // the reservation libhsakmt made for this buffer.
        Ok(src) => unsafe { real::mmap(addr, len, prot, flags, src.raw_fd(), src.offset as off_t) },
        Err(e) => {
            crate::real::set_errno(e);
            libc::MAP_FAILED
        }
    }
}

/// Interposed; see the module docs.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::mmap(addr, len, prot, flags, fd, off) };
    if fd < 0 {
        return pass();
    }
    with_fake_fd(fd, pass, libc::MAP_FAILED, |st, fake| map_fake(st, fake, addr, len, prot, flags, off))
}

/// Interposed; see [`mmap`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::mmap64(addr, len, prot, flags, fd, off) };
    if fd < 0 {
        return pass();
    }
    with_fake_fd(fd, pass, libc::MAP_FAILED, |st, fake| map_fake(st, fake, addr, len, prot, flags, off))
}

/// The open /dev/kfd whose shared ranges a memory call may concern, if any
/// (only daemon mode shares ranges; the lookup never initialises state).
fn current_open_kfd() -> Option<std::sync::Arc<crate::state::KfdHandle>> {
    if crate::guard::inside() {
        return None;
    }
    crate::state::get()?.current_kfd()
}

/// Interposed so daemon mode can forget ranges shared with the daemon.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let r = unsafe { real::munmap(addr, len) };
    if r == 0 {
        if let Some(h) = current_open_kfd() {
            crate::guard::hook(|| (), || h.kfd.munmapped(addr as u64, len as u64), || ());
        }
    }
    r
}

/// Interposed like [`munmap`].
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn mprotect(addr: *mut c_void, len: size_t, prot: c_int) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    unsafe { real::mprotect(addr, len, prot) }
}

/// Interposed: on memory shared with the daemon, `MADV_HUGEPAGE` and
/// `MADV_DONTFORK` are not applied (shared-memory folios misbehave with
/// them on some kernels; see the design notes). Everything else passes.
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn madvise(addr: *mut c_void, len: size_t, advice: c_int) -> c_int {
    if advice == libc::MADV_HUGEPAGE || advice == libc::MADV_DONTFORK {
        if let Some(h) = current_open_kfd() {
            if crate::guard::hook(|| false, || h.kfd.is_shared_range(addr as u64, len as u64), || false) {
                return 0;
            }
        }
    }
    // SAFETY: forwarding the caller's arguments unchanged.
    unsafe { real::madvise(addr, len, advice) }
}
