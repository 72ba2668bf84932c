//! The simulated GPU: its memory as each process's GPU address space sees it, the command
//! processor that consumes AQL queues, the SDMA copy scheduler, the execution of wavefronts,
//! and the scheduler threads that drive them. It knows processes only as
//! [`context::Context`]s: the driver model above it implements that, so nothing here depends
//! on the driver.
//!
//! Within the layer, from the bottom: `memory`, `queue`, `gws`; `context`; `cp`, `sdma`;
//! `exec`; `scheduler` (`cargo xtask lint` checks that no import goes back up).

pub mod context;
pub mod cp;
pub mod exec;
pub mod gws;
pub mod kernel_names;
pub mod memory;
pub mod queue;
pub mod scheduler;
pub mod sdma;
pub mod stats;
pub mod trace;
