//! librocjitsu.so: the LD_PRELOAD interposer.
//!
//! It makes the unmodified ROCm stack in this process see a simulated AMD GPU:
//! `/dev/kfd` and `/dev/dri/renderD<N>` become fake fds served by a
//! [`driver::Driver`], and the KFD sysfs tree (plus the few procfs/sysfs
//! files rocminfo and libdrm look at) is redirected into real files we write.
//!
//! Fully synchronous: no async runtime lives in the application's process.
//! Unsafe code is confined to the hooks (C ABI), the calls into libc, and
//! the copies of application memory; the rules (paths, ioctl codec, driver)
//! are safe and unit-tested.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod driver;
pub mod guard;
pub mod hooks;
pub mod init;
pub mod log;
pub mod observe;
pub mod paths;
pub mod real;
pub mod remote;
pub mod state;
pub mod usermem;
pub mod usershare;
