//! `sim`: the simulated AMD GPU machine.
//!
//! Synchronous Rust, no async runtime: it is embedded both in the preload
//! library (local mode, inside the application's process) and in the daemon's
//! engine thread.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod config;
pub mod host;
pub mod isa;
pub mod topology;
