//! The ioctl hook: KFD ioctls on `/dev/kfd`, DRM ioctls on render nodes.
//!
//! The argument struct is copied in, the arrays it points at are inlined by
//! `proto::ioctl::encode_request` (so the driver never touches application
//! pointers), and the reply is copied back like the kernel does: the struct
//! (for ioctls that return it) even when the call fails, because e.g.
//! MAP_MEMORY_TO_GPU reports partial progress in `n_success`.

use super::{fail_errno, with_fake_fd};
use crate::real;
use crate::state::{FakeFd, State};
use crate::usermem::SelfMemory;
use libc::{c_int, c_ulong, c_void};
use proto::abi::{ioc_dir, IOC_READ};
use proto::ioctl::{spec, UserMemory};
use proto::payload::DeviceFile;

/// Interposed; the third argument is declared fixed (see `fcntl`).
///
/// # Safety
/// Called by C code with the libc function's contract.
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    // SAFETY: forwarding the caller's arguments unchanged.
    let pass = || unsafe { real::ioctl(fd, request, arg) };
    with_fake_fd(fd, pass, -1, |st, fake| device_ioctl(st, fake, request as u32, arg as u64))
}

fn device_ioctl(st: &State, fake: FakeFd, cmd: u32, arg: u64) -> c_int {
    let device = match &fake {
        FakeFd::Kfd(_) => DeviceFile::Kfd,
        FakeFd::Render(minor) => DeviceFile::Render { minor: *minor },
    };
    let Some(spec) = spec(cmd).filter(|_| device.accepts(cmd)) else {
        let name = if device == DeviceFile::Kfd { "/dev/kfd" } else { "the render node" };
        // The kernel answers an unknown request of its own type with EINVAL
        // and a foreign one (a terminal ioctl, say) with ENOTTY.
        let errno = if device.accepts(cmd) { libc::EINVAL } else { libc::ENOTTY };
        tracing::warn!("unsupported {} on {name}: returning errno {errno}", proto::ioctl::name_of(cmd));
        return fail_errno(errno);
    };
    let mem = SelfMemory;
    let mut args = vec![0u8; spec.arg_size];
    if mem.read(arg, &mut args).is_err() {
        return fail_errno(libc::EFAULT);
    }
    let original = args.clone();
    let result = match &fake {
        FakeFd::Kfd(h) => h.kfd.ioctl(cmd, &mut args, arg, &mem),
        FakeFd::Render(minor) => st.driver.drm_ioctl(*minor, cmd, &mut args, arg, &mem),
    };
    if ioc_dir(cmd) & IOC_READ != 0 && args != original && mem.write(arg, &args).is_err() {
        return fail_errno(libc::EFAULT);
    }
    match result {
        Ok(()) => 0,
        Err(e) => fail_errno(e),
    }
}
