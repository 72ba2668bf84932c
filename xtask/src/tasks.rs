//! build / test / demo.

use anyhow::{bail, Context, Result};
use integration::stack;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is inside the workspace").to_path_buf()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(mut cmd: Command) -> Result<()> {
    eprintln!("xtask: {cmd:?}");
    let status = cmd.status().with_context(|| format!("cannot run {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// Where release binaries land.
pub fn bin_dir() -> PathBuf {
    stack::target_dir().join("release")
}

pub fn build() -> Result<()> {
    let mut c = cargo();
    c.args(["build", "--release", "-p", "rocjitsud", "-p", "preload"]);
    run(c)
}

pub fn test(extra: &[String]) -> Result<()> {
    crate::lint::run()?;
    crate::deps::install()?;
    // What the tests run against (Debian sid moves: a failure starts with these lines).
    for flavor in &crate::rootfs::FLAVORS {
        let text = stack::marker_text(&stack::roots_dir().join(flavor.name)).unwrap_or_default();
        eprintln!("xtask test: {}", text.trim_end());
    }
    build()?;
    let mut c = cargo();
    c.args(["test", "--release", "--workspace"]).args(extra).env("ROCJITSU_BIN_DIR", bin_dir());
    run(c)?;
    if extra.is_empty() {
        // The interpreter alone (issue 15: the translator is the default engine and ran
        // above): every instruction and kernel test of the simulator again with the
        // reference engine, and real ROCm programs through it.
        let mut c = cargo();
        c.args(["test", "--release", "-p", "sim"]).env("ROCJITSU_ENGINE", "interp");
        run(c)?;
        let mut c = cargo();
        c.args(["test", "--release", "-p", "integration"])
            .args(["--test", "hip_kernels", "--test", "device_calls", "--test", "concurrency"])
            .env("ROCJITSU_ENGINE", "interp")
            .env("ROCJITSU_BIN_DIR", bin_dir());
        run(c)?;
        // Two minutes of the soak (issue "Nothing lost, nobody in"): random programs, kills
        // mid-kernel and malformed connections against one daemon. A failure prints its seed.
        crate::soak::run(&["--minutes".into(), "2".into(), "--clients".into(), "3".into()])?;
        // The libraries' own test suites, a fixed subset of each (issue "The libraries' own
        // test suites pass"): the full runs take hours and live in docs/SUITES.md.
        crate::suites::run(&["--smoke".into()])?;
    }
    Ok(())
}

pub fn demo() -> Result<()> {
    // The demo runs on the host's ROCm 5.2 only: no Debian roots.
    crate::deps::install_host_packages()?;
    build()?;
    let rocjitsu = bin_dir().join("rocjitsu");
    let mut c = Command::new(&rocjitsu);
    c.args(["--", "rocminfo"]);
    run(c)?;
    let out = bin_dir().join("hip");
    std::fs::create_dir_all(&out)?;
    // A device query, then HIP programs whose kernels run on the simulated MI210 and check
    // their results against the CPU.
    for program in ["device_query", "vector_add", "reduce_shuffle"] {
        let exe = out.join(program);
        let mut hipcc = Command::new("hipcc");
        hipcc
            .args(["--offload-arch=gfx90a", "-O2", "-o"])
            .arg(&exe)
            .arg(root().join(format!("integration/programs/{program}.hip")));
        run(hipcc)?;
        let mut c = Command::new(&rocjitsu);
        c.arg("--").arg(&exe);
        run(c)?;
    }
    Ok(())
}
