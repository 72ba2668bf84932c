//! `cargo xtask <command>`: developer tasks that are not part of the build.
//!
//! Commands:
//! - `isa-vectors [--target gfx90a|gfx942|all]`: probe LLVM's AMDGPU disassembler, regenerate the
//!   decoder's opcode tables (`sim/src/isa/gen/`) and the decoder test vectors
//!   (`sim/tests/data/isa/<target>/`). Needs `llvm-mc-15` (gfx90a) and `llvm-mc-19` (gfx942).

mod isa_vectors;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("isa-vectors") => isa_vectors::run(&args[1..]),
        Some(other) => anyhow::bail!("unknown xtask command `{other}` (known: isa-vectors)"),
        None => anyhow::bail!("usage: cargo xtask <command> (known: isa-vectors)"),
    }
}
