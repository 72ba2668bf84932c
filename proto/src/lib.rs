//! `proto`: everything librocjitsu.so and rocjitsud must agree on, as pure
//! functions over byte slices.
//!
//! - [`abi`]: the KFD and DRM ioctl structs and numbers the ROCm 5.2 stack uses.
//! - [`ioctl`]: the ioctl codec (argument sizes, inlined arrays, pointer
//!   restoration), shared by local mode and daemon mode.

#![deny(unsafe_op_in_unsafe_fn)]
#![forbid(unsafe_code)]

pub mod abi;
pub mod ioctl;
