//! build / test / demo.

use crate::workspace_build;
use anyhow::{bail, Context, Result};
use integration::stack;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

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

/// Set once this process has built the launcher and interposer in its workspace test build
/// (`test`): building them again with only their two packages would compile sim and
/// Cranelift once more for another feature set (see `workspace_build`).
static BINARIES_BUILT: AtomicBool = AtomicBool::new(false);

/// The launcher and the interposer, in release mode, unless this process has built them.
pub fn build() -> Result<()> {
    if BINARIES_BUILT.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut c = cargo();
    c.args(["build", "--release", "-p", "rocjitsud", "-p", "preload"]);
    run(c)
}

/// Prints how long each step of a long task took (CI has an hour on two cores; these lines
/// show where it goes).
struct Steps {
    start: Instant,
    last: Instant,
}

impl Steps {
    fn new() -> Self {
        let now = Instant::now();
        Steps { start: now, last: now }
    }

    fn done(&mut self, what: &str) {
        let now = Instant::now();
        eprintln!(
            "xtask test: {what} took {:.0} s ({:.0} s so far)",
            (now - self.last).as_secs_f64(),
            (now - self.start).as_secs_f64()
        );
        self.last = now;
    }
}

pub fn test(extra: &[String]) -> Result<()> {
    let mut steps = Steps::new();
    crate::lint::run()?;
    crate::deps::install()?;
    // What the tests run against (Debian sid moves: a failure starts with these lines).
    for flavor in &crate::rootfs::FLAVORS {
        let text = stack::marker_text(&stack::roots_dir().join(flavor.name)).unwrap_or_default();
        eprintln!("xtask test: {}", text.trim_end());
    }
    steps.done("packages and Debian roots");
    if !extra.is_empty() {
        build()?;
        let mut c = cargo();
        c.args(["test", "--release", "--workspace"]).args(extra).env("ROCJITSU_BIN_DIR", bin_dir());
        return run(c);
    }
    let built = workspace_build::build_tests(cargo())?;
    workspace_build::place_binaries(&built, &bin_dir())?;
    BINARIES_BUILT.store(true, Ordering::Relaxed);
    steps.done("build");
    let mut c = cargo();
    // Code is translated after 16 visits, not the default 1024: the tests' kernels are small,
    // and their code should go through the translator too (the same runs are translated at
    // any threshold, only later; the suites' smoke subsets below run the default).
    c.args(["test", "--release", "--workspace"]).env("ROCJITSU_BIN_DIR", bin_dir()).env("ROCJITSU_JIT_HOT", "16");
    run(c)?;
    steps.done("workspace tests");
    // The interpreter alone (issue 15: the translator is the default engine and ran above):
    // every instruction and kernel test of the simulator again with the reference engine, and
    // real ROCm programs through it.
    let interpreted = |t: &&workspace_build::TestExe| {
        t.package() == "sim"
            || (t.package() == "integration"
                && ["hip_kernels", "device_calls", "concurrency"].contains(&t.target.as_str()))
    };
    let mut failed = Vec::new();
    for t in built.tests.iter().filter(interpreted) {
        let mut c = Command::new(&t.exe);
        c.current_dir(&t.package_dir)
            .env("CARGO_MANIFEST_DIR", &t.package_dir)
            .env("ROCJITSU_ENGINE", "interp")
            .env("ROCJITSU_BIN_DIR", bin_dir());
        if let Err(e) = run(c) {
            eprintln!("xtask test: {e:#}");
            failed.push(format!("{}::{}", t.package(), t.target));
        }
    }
    if !failed.is_empty() {
        bail!("with ROCJITSU_ENGINE=interp, these tests failed: {}", failed.join(", "));
    }
    steps.done("the interpreter's tests");
    // Two minutes of the soak (issue "Nothing lost, nobody in"): random programs, kills
    // mid-kernel and malformed connections against one daemon. A failure prints its seed.
    crate::soak::run(&["--minutes".into(), "2".into(), "--clients".into(), "3".into()])?;
    steps.done("soak");
    // The libraries' own test suites, a fixed subset of each (issue "The libraries' own
    // test suites pass"): the full runs take hours and live in docs/SUITES.md.
    crate::suites::run(&["--smoke".into()])?;
    steps.done("suites");
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
