//! `cargo xtask isa-coverage`: for each list of instructions real ROCm code
//! uses (`sim/tests/data/isa/coverage/*.txt`, copied from the reference
//! measurements), how many the interpreter executes, and which are missing; then the same for
//! every mnemonic each decoder target knows (LLVM's full gfx90a, gfx942 and gfx950 sets).

use crate::tasks::root;
use anyhow::Result;
use sim::gpu::exec::coverage::{check_list, parse_list};
use sim::isa::Target;

/// A printed mnemonic without its encoding suffix.
fn base(m: &str) -> &str {
    ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|s| m.strip_suffix(s)).unwrap_or(m)
}

pub fn run(args: &[String]) -> Result<()> {
    let verbose = args.iter().any(|a| a == "--missing" || a == "-v");
    let dir = root().join("sim/tests/data/isa/coverage");
    let mut files: Vec<_> = std::fs::read_dir(&dir)?.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    files.sort();
    println!("| list | implemented | total | missing |\n|---|---|---|---|");
    let mut missing_all = Vec::new();
    for f in files {
        let name = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let (done, total, missing) = check_list(parse_list(&std::fs::read_to_string(&f)?));
        let shown: Vec<_> = missing.iter().take(8).cloned().collect();
        let more = if missing.len() > 8 { format!(" … (+{})", missing.len() - 8) } else { String::new() };
        println!("| {name} | {done} | {total} | {}{more} |", shown.join(" "));
        if name.ends_with("union") {
            missing_all = missing;
        }
    }
    for target in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let (done, total, missing) = check_list(sim::isa::mnemonics(target).map(str::to_string));
        // Print base mnemonics once (`_e32`/`_e64`/`_sdwa`/`_dpp` forms share semantics).
        let mut bases: Vec<&str> = missing.iter().map(|m| base(m)).collect();
        bases.dedup();
        let shown = bases.iter().take(12).copied().collect::<Vec<_>>().join(" ");
        let more = if bases.len() > 12 { format!(" … (+{})", bases.len() - 12) } else { String::new() };
        println!("| every {} mnemonic | {done} | {total} | {shown}{more} |", target.name());
    }
    if verbose {
        println!("\nmissing from the union list:");
        for m in missing_all {
            println!("  {m}");
        }
    }
    Ok(())
}
