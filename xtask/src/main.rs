//! `cargo xtask <command>`: the project's workflows as one Rust program, so
//! they run the same on a laptop and in CI.
//!
//! - `deps`:  install (idempotently) the Debian packages the tests need, and build the Debian
//!   roots of the newer ROCm stacks (`rootfs`).
//! - `rootfs [sid|trixie|all] [--dir DIR]`: build or complete those roots (debootstrap + apt).
//! - `lint`:  no import cycle between `sim`'s modules (its layering).
//! - `build`: build the launcher and the preload library (release).
//! - `test`:  deps + build + every test of the workspace, two minutes of `soak`, then the
//!   smoke subset of the libraries' own test suites (`suites --smoke`).
//! - `demo`:  the host's packages (no Debian roots) + build + rocminfo and a HIP device query on
//!   the default config.
//! - `install`: binaries, library and systemd user units into a prefix (default ~/.local).
//! - `bench`: end-to-end measurements (median of N runs), printed as a table.
//! - `soak`: K clients at a time against one daemon for N minutes (programs, kills mid-kernel,
//!   malformed connections); the daemon's RSS and fds over time.
//! - `suites [NAME…] [--filter P] [--smoke] [--daemon] [--fresh] [--stall SECS]`: the libraries'
//!   own test suites (rocRAND, rocSPARSE, rocFFT, rocBLAS, MIOpen, llama.cpp's test-backend-ops…)
//!   from Debian sid under rocjitsu; a table of passed / failed / skipped and wall time; resumable.
//! - `isa-vectors [--target gfx90a|gfx942|all]`: probe LLVM's AMDGPU disassembler, regenerate the
//!   decoder's opcode tables (`sim/src/isa/gen/`) and test vectors (`sim/tests/data/isa/<target>/`).
//!   Needs `llvm-mc-15` (gfx90a), `llvm-mc-19` (gfx942) and Rust's llvm-tools component (gfx950).
//! - `gfx950-kernels`: recompile `sim/tests/kernels/gfx950.ll` into the checked-in code object
//!   `gfx950.co` with llvm-tools' `llc` (LLVM 22): tests load the object, so CI needs no LLVM 22.

mod bench;
mod coverage;
mod deps;
mod install;
mod isa_vectors;
mod lint;
mod rootfs;
mod soak;
mod suites;
mod tasks;
mod workspace_build;

use anyhow::{bail, Result};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        print_usage();
        bail!("no command given");
    };
    let rest = &args[1..];
    match cmd.as_str() {
        "deps" => deps::install(),
        "rootfs" => rootfs::run(rest),
        "lint" => lint::run(),
        "build" => tasks::build(),
        "test" => tasks::test(rest),
        "demo" => tasks::demo(),
        "bench" => bench::run(rest),
        "soak" => soak::run(rest),
        "suites" => suites::run(rest),
        "install" => install::run(rest),
        "isa-coverage" => coverage::run(rest),
        "isa-vectors" => isa_vectors::run(rest),
        "gfx950-kernels" => gfx950_kernels(),
        "-h" | "--help" | "help" => {
            print_usage();
            Ok(())
        }
        other => {
            print_usage();
            bail!("unknown command {other:?}")
        }
    }
}

fn print_usage() {
    eprintln!(
        "usage: cargo xtask <command>\n\n\
         commands:\n  \
         deps    install the Debian packages the tests need (ROCm 5.2 stack, hipcc, llvm-15) and build the roots\n  \
         rootfs [sid|trixie|all] [--dir DIR]  build the Debian roots of ROCm 6.x (default target/roots)\n  \
         lint    check that sim's modules import in layers, without cycles\n  \
         build   build rocjitsu and librocjitsu.so (release)\n  \
         test    deps + build + all tests (extra arguments go to cargo test)\n  \
         demo    host packages + build + run rocminfo and a HIP device query on the default config\n  \
         isa-coverage [--missing]  implemented / total instructions per ISA coverage list\n  \
         install [--prefix DIR]  install rocjitsu, librocjitsu.so and the systemd user units (default ~/.local)\n  \
         bench   end-to-end measurements, printed as a table (optional argument: runs, default 10)\n  \
         soak [--minutes N] [--clients K] [--seed S]  random program runs, kills and malformed connections against one daemon\n  \
         suites [NAME…] [--filter P] [--smoke] [--daemon] [--fresh] [--stall SECS]  the libraries' own test suites under rocjitsu\n  \
         isa-vectors [--target gfx90a|gfx942|gfx950|all]  regenerate decoder tables and test vectors with LLVM\n  \
         gfx950-kernels  recompile sim/tests/kernels/gfx950.ll into gfx950.co (needs rustup component llvm-tools)"
    );
}

/// Compiles the gfx950 test kernels with the LLVM 22 of Rust's llvm-tools component (Debian 12's
/// LLVM 19 cannot target gfx950) and writes the code object next to the source.
fn gfx950_kernels() -> Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/tests/kernels");
    let elf = sim::testing::compile_llvm_ir("gfx950", &dir.join("gfx950.ll"));
    std::fs::write(dir.join("gfx950.co"), &elf)?;
    eprintln!("xtask gfx950-kernels: wrote {} bytes to {}", elf.len(), dir.join("gfx950.co").display());
    Ok(())
}
