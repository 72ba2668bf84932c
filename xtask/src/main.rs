//! `cargo xtask <command>`: the project's workflows as one Rust program, so
//! they run the same on a laptop and in CI.
//!
//! - `deps`:  install (idempotently) the Debian packages the tests need.
//! - `build`: build the launcher and the preload library (release).
//! - `test`:  deps + build + every test of the workspace.
//! - `demo`:  deps + build + rocminfo and a HIP device query on the default config.
//! - `install`: binaries, library and systemd user units into a prefix (default ~/.local).
//! - `bench`: end-to-end measurements (median of N runs), printed as a table.
//! - `isa-vectors [--target gfx90a|gfx942|all]`: probe LLVM's AMDGPU disassembler, regenerate the
//!   decoder's opcode tables (`sim/src/isa/gen/`) and test vectors (`sim/tests/data/isa/<target>/`).
//!   Needs `llvm-mc-15` (gfx90a) and `llvm-mc-19` (gfx942).

mod bench;
mod coverage;
mod deps;
mod install;
mod isa_vectors;
mod tasks;

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
        "build" => tasks::build(),
        "test" => tasks::test(rest),
        "demo" => tasks::demo(),
        "bench" => bench::run(rest),
        "install" => install::run(rest),
        "isa-coverage" => coverage::run(rest),
        "isa-vectors" => isa_vectors::run(rest),
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
         deps    install the Debian packages the tests need (ROCm 5.2 stack, hipcc, llvm-15)\n  \
         build   build rocjitsu and librocjitsu.so (release)\n  \
         test    deps + build + all tests (extra arguments go to cargo test)\n  \
         demo    deps + build + run rocminfo and a HIP device query on the default config\n  \
         isa-coverage [--missing]  implemented / total instructions per ISA coverage list\n  \
         install [--prefix DIR]  install rocjitsu, librocjitsu.so and the systemd user units (default ~/.local)\n  \
         bench   end-to-end measurements, printed as a table (optional argument: runs, default 10)\n  \
         isa-vectors [--target gfx90a|gfx942|all]  regenerate decoder tables and test vectors with llvm-mc"
    );
}
