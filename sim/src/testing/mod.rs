//! Test support, for this crate's tests, benchmarks and examples and for `xtask` (the
//! `testing` feature; never part of what the preload library and the daemon ship): an
//! instruction harness on a driver-free process context, and real compiled kernels.

pub mod compile;
pub mod context;
pub mod harness;

pub use compile::{compile_llvm_ir, compile_opencl, opencl_kernels, rust_llvm_bin};
pub use context::{aql_queue, TestContext};
pub use harness::{Harness, MEM_BASE, MEM_BYTES};

use crate::machine::Machine;
use crate::runner::KernelRunner;

/// A kernel argument segment made of 64-bit words (pointers, or scalars packed in pairs).
pub fn kernargs(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A machine with the built-in config `config` (`mi210`, `mi300x`, …) and a kernel runner on it,
/// with `workers` host threads running workgroups (the config's default when `None`).
pub fn runner(config: &str, workers: Option<usize>) -> (Machine, KernelRunner) {
    let machine = Machine::new(crate::config::load(config).expect("a built-in config"));
    let runner = match workers {
        Some(n) => machine.kernel_runner_with_workers(n),
        None => machine.kernel_runner(),
    }
    .expect("a kernel runner");
    (machine, runner)
}

/// SplitMix64's output function: a well-mixed 32-bit value from any 64-bit input (test
/// data that is deterministic but looks random).
pub fn splitmix(mut x: u64) -> u32 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as u32
}
