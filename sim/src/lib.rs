//! `sim`: the simulated AMD GPU machine.
//!
//! Synchronous Rust, no async runtime: it is embedded both in the preload
//! library (local mode, inside the application's process) and in the daemon's
//! engine thread.

#![deny(unsafe_op_in_unsafe_fn)]

// Layers, each using only those below it (`cargo xtask lint` checks):
//   machine, runner, loader    the embedding API
//   driver                     KFD, DRM, sysfs/topology, the request service
//   gpu                        memory, command processor, SDMA, execution
//   isa                        decoding and printing GFX9/CDNA instructions
//   config, clock, host,       shared by all
//   threads
pub mod clock;
pub mod config;
pub mod driver;
pub mod gpu;
pub mod host;
pub mod isa;
pub mod loader;
pub mod machine;
pub mod runner;
#[cfg(feature = "testing")]
pub mod testing;
pub mod threads;

pub use machine::Machine;
