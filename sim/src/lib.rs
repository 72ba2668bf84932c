//! `sim`: the simulated AMD GPU machine.
//!
//! Synchronous Rust, no async runtime: it is embedded both in the preload
//! library (local mode, inside the application's process) and in the daemon's
//! engine thread.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod clock;
pub mod config;
pub mod cp;
pub mod drm;
pub mod exec;
pub mod host;
pub mod isa;
pub mod kfd;
pub mod loader;
pub mod machine;
pub mod memory;
pub mod sdma;
pub mod service;
pub mod session;
pub mod sysfs;
pub mod topology;

pub use machine::Machine;
