//! The simulated GPU: its memory as each process's GPU address space sees it, the command
//! processor that consumes AQL queues, the SDMA copy engines, and the execution of
//! wavefronts. It knows processes only as [`context::Context`]s: the driver model above it
//! implements that, so nothing here depends on the driver.

pub mod cp;
pub mod exec;
pub mod memory;
pub mod sdma;
