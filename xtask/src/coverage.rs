//! `cargo xtask isa-coverage`: for each list of instructions real ROCm code
//! uses (`sim/tests/data/isa/coverage/*.txt`, copied from the reference
//! measurements), how many the interpreter executes, and which are missing.

use crate::tasks::root;
use anyhow::Result;
use sim::exec::coverage::{check_list, parse_list};

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
    if verbose {
        println!("\nmissing from the union list:");
        for m in missing_all {
            println!("  {m}");
        }
    }
    Ok(())
}
