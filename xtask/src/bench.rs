//! `cargo xtask bench`: end-to-end figures measured on the real ROCm stack,
//! printed as a table (benchmarks, never timed assertions in tests).

use crate::tasks::{bin_dir, build};
use anyhow::{bail, Context, Result};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Median of a set of durations.
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_runs(runs: usize, mut make: impl FnMut() -> Command) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut cmd = make();
        let start = Instant::now();
        let status = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().context("cannot run benchmark")?;
        let t = start.elapsed();
        if !status.success() {
            bail!("{cmd:?} failed with {status}");
        }
        times.push(t);
    }
    Ok(times)
}

pub fn run(args: &[String]) -> Result<()> {
    crate::deps::install()?;
    build()?;
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10);
    let rocjitsu = bin_dir().join("rocjitsu");
    let rows = vec![(
        "rocjitsu -- rocminfo (wall, median)",
        median(time_runs(runs, || {
            let mut c = Command::new(&rocjitsu);
            c.args(["--", "rocminfo"]);
            c
        })?),
    )];
    println!("| benchmark | runs | result |\n|---|---|---|");
    for (name, t) in rows {
        println!("| {name} | {runs} | {:.1} ms |", t.as_secs_f64() * 1e3);
    }
    Ok(())
}
