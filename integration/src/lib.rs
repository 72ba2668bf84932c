//! Helpers for the end-to-end tests: find the built launcher, compile the
//! test programs (HIP with hipcc, C with gcc) once per run, and run commands
//! with a deadline so that a hang fails a test instead of stalling CI.

pub mod stack;

pub use stack::{Mode, Stack};

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("integration is inside the workspace").to_path_buf()
}

/// Where `rocjitsu` and `librocjitsu.so` were built: `$ROCJITSU_BIN_DIR`
/// (set by `cargo xtask test`), else the profile directory this test binary
/// was built into (`target/<profile>/deps/..`), so a plain `cargo test`
/// never picks up stale binaries of another profile.
pub fn bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ROCJITSU_BIN_DIR") {
        // Relative to the workspace root (tests run in their crate's directory).
        return root().join(d);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>").to_path_buf();
    if profile_dir.join("rocjitsu").exists() && profile_dir.join("librocjitsu.so").exists() {
        return profile_dir;
    }
    panic!(
        "rocjitsu and librocjitsu.so are not built in {}: run `cargo xtask test`, or `cargo build -p rocjitsud -p preload` first",
        profile_dir.display()
    );
}

/// The path of a file under `configs/`.
pub fn config(name: &str) -> PathBuf {
    root().join("configs").join(name)
}

static COMPILE: Mutex<()> = Mutex::new(());

fn out_dir() -> PathBuf {
    let d = bin_dir().join("test-programs");
    std::fs::create_dir_all(&d).expect("create the test program directory");
    d
}

/// Runs `cmd` to build `exe` from `source`, unless `exe` is newer than it, than the headers
/// next to it (`check.h`, …) and than `also` (a Debian root's marker: a rebuilt root has new
/// headers and libraries) (one compiler at a time).
pub(crate) fn compile(source: &Path, also: Option<&Path>, exe: &Path, mut cmd: Command) -> PathBuf {
    let _lock = COMPILE.lock().unwrap_or_else(|e| e.into_inner());
    let headers = source
        .parent()
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "h"));
    let inputs: Option<Vec<_>> = std::iter::once(source.to_path_buf())
        .chain(headers)
        .chain(also.map(Path::to_path_buf))
        .map(|p| p.metadata().and_then(|m| m.modified()).ok())
        .collect();
    let fresh = match (exe.metadata().and_then(|m| m.modified()), inputs) {
        (Ok(e), Some(inputs)) => inputs.iter().all(|i| e >= *i),
        _ => false,
    };
    if !fresh {
        let out = cmd.output().unwrap_or_else(|e| panic!("cannot run the compiler for {}: {e}", source.display()));
        assert!(
            out.status.success(),
            "compiling {} failed:\n{}{}",
            source.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    exe.to_path_buf()
}

/// Compiles `integration/programs/<name>.hip` for gfx90a with the host's ROCm 5.2 hipcc
/// (once per run).
pub fn hip_program(name: &str) -> PathBuf {
    Stack::Host.hip_program(name, "gfx90a", &[])
}

/// A gfx90a code object (`hipcc --genco`) of `integration/programs/<name>.hip`, for
/// programs that load kernels at run time with `hipModuleLoad`.
pub fn hip_code_object(name: &str) -> PathBuf {
    let source = root().join("integration/programs").join(format!("{name}.hip"));
    let out = out_dir().join(format!("{name}.co"));
    let mut cmd = Command::new("hipcc");
    cmd.args(["--offload-arch=gfx90a", "-O2", "--genco", "-o"]).arg(&out).arg(&source);
    compile(&source, None, &out, cmd)
}

/// A file of `integration/programs` (scripts run as they are).
pub fn program_file(name: &str) -> PathBuf {
    root().join("integration/programs").join(name)
}

/// Compiles `integration/programs/<name>.c` with gcc, linking `libs`.
pub fn c_program(name: &str, libs: &[&str]) -> PathBuf {
    let source = root().join("integration/programs").join(format!("{name}.c"));
    let exe = out_dir().join(name);
    let mut cmd = Command::new("gcc");
    cmd.args(["-O2", "-Wall", "-o"]).arg(&exe).arg(&source);
    for l in libs {
        cmd.arg(format!("-l{l}"));
    }
    compile(&source, None, &exe, cmd)
}

/// What a finished command did.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// User + system CPU time of the process and its waited-for children.
    pub cpu: Duration,
    pub wall: Duration,
}

impl Outcome {
    /// Panics with everything the command printed unless it exited 0.
    pub fn assert_success(&self) -> &Self {
        self.assert_success_of("command")
    }

    /// [`assert_success`](Self::assert_success), naming what ran in the message.
    pub fn assert_success_of(&self, what: &str) -> &Self {
        assert!(
            self.status.success(),
            "{what} failed with {}:\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Panics unless the program exited 0, printed no `FAIL` and printed a `PASS <p>` line for
    /// every `p` of `passes` (the test programs' convention, `programs/check.h`); `what` names
    /// the run in the message, which has everything the program printed.
    pub fn assert_passes(&self, what: &str, passes: &[&str]) -> &Self {
        let missing: Vec<String> = passes.iter().map(|p| format!("PASS {p}")).filter(|l| !self.has_line(l)).collect();
        let failed = self.stdout.contains("FAIL");
        assert!(
            self.status.success() && !failed && missing.is_empty(),
            "{what} failed ({}, after {:.1} s{}{}):\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.wall.as_secs_f64(),
            if failed { ", printed FAIL" } else { "" },
            if missing.is_empty() { String::new() } else { format!(", no `{}`", missing.join("`, `")) },
            self.stdout,
            self.stderr
        );
        self
    }

    /// Whether stdout has exactly this line.
    pub fn has_line(&self, line: &str) -> bool {
        self.stdout.lines().any(|l| l == line)
    }

    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Runs `cmd` to completion, killing it after `deadline`.
// The child is reaped with wait4 (for its resource usage), which clippy
// cannot see.
#[allow(clippy::zombie_processes)]
pub fn run(mut cmd: Command, deadline: Duration) -> Outcome {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    let (status, usage) = loop {
        let mut raw = 0;
        // SAFETY: rusage is plain data; wait4 fills it for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waiting for our own child without blocking.
        let r = unsafe { libc::wait4(pid, &mut raw, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (ExitStatus::from_raw(raw), usage);
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Outcome {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        wall: start.elapsed(),
    }
}

/// Polls `f` every 20 ms until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// Starts `cmd` with its stdout piped and returns once it has printed exactly `first`
/// (the program's "I am ready" line), so a test can act while it works.
pub fn spawn_until_ready(mut cmd: Command, first: &[u8]) -> std::process::Child {
    use std::io::Read;
    cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut buf = vec![0u8; first.len()];
    child
        .stdout
        .as_mut()
        .expect("piped")
        .read_exact(&mut buf)
        .unwrap_or_else(|e| panic!("{cmd:?} never got ready: {e}"));
    assert_eq!(buf, first, "{cmd:?} printed something else first");
    child
}

/// The values of every `Key:   value` line with this key, in order
/// (rocminfo's output format).
pub fn field_lines<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines().filter_map(|l| l.trim().strip_prefix(key).map(|v| v.trim_start_matches(':').trim())).collect()
}

/// A daemon-only instance (`rocjitsu --daemon`) on a socket in its own
/// runtime directory, stopped with SIGTERM when dropped.
#[derive(Debug)]
pub struct Daemon {
    child: std::process::Child,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    log: PathBuf,
}

impl Daemon {
    /// Starts a daemon with `config` and waits until it accepts connections.
    pub fn start(config: &str) -> Daemon {
        Daemon::start_wrapped(config, |c| c)
    }

    /// Like [`Self::start`], running the command `wrap` makes of the daemon's own (one that
    /// ends by exec'ing it, e.g. in another network namespace), so the child is the daemon.
    pub fn start_wrapped(config: &str, wrap: impl FnOnce(Command) -> Command) -> Daemon {
        let dir = tempfile::tempdir().expect("a temporary runtime directory");
        let socket = dir.path().join("daemon.sock");
        let log = dir.path().join("daemon.log");
        let mut daemon = Command::new(bin_dir().join("rocjitsu"));
        daemon.args(["--daemon", "--config", config, "--socket"]).arg(&socket);
        daemon.env("ROCJITSU_RUNTIME_DIR", dir.path()).env("ROCJITSU_LOG", "info");
        let child = wrap(daemon)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("the daemon log"))
            .spawn()
            .expect("start the daemon");
        let d = Daemon { child, dir, socket, log };
        let start = Instant::now();
        while std::os::unix::net::UnixStream::connect(&d.socket).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "the daemon did not start:\n{}", d.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the daemon logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A command running `rocjitsu --attach` against this daemon (on the host's stack).
    pub fn attach(&self) -> Command {
        Stack::Host.rocjitsu_in(Mode::Attach(self))
    }

    /// Open fds of the daemon.
    pub fn fd_count(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid())).map(|d| d.count()).unwrap_or(0)
    }

    /// Mappings of the daemon.
    pub fn map_count(&self) -> usize {
        std::fs::read_to_string(format!("/proc/{}/maps", self.pid())).map(|m| m.lines().count()).unwrap_or(0)
    }

    /// Resident memory of the daemon, in KiB.
    pub fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0)
    }

    /// Sends SIGTERM and waits; returns the exit status.
    pub fn stop(mut self) -> ExitStatus {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        self.child.wait().expect("the daemon's exit status")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
            let _ = self.child.wait();
        }
    }
}

/// The lines of the GPU agent's block in rocminfo's output.
pub fn gpu_agent_block(out: &str) -> &str {
    let start = out.find("Name:                    gfx").expect("a GPU agent is listed");
    &out[start..]
}

/// Checks rocminfo's output for the default config's MI210 (any ROCm version).
pub fn check_mi210_rocminfo(out: &str) {
    assert!(out.contains("ROCk module is loaded"), "rocminfo's lsmod check passes:\n{out}");
    let agents = field_lines(out, "Device Type");
    assert_eq!(agents, ["CPU", "GPU"], "one CPU and one GPU agent");
    let gpu = gpu_agent_block(out);
    assert_eq!(field_lines(gpu, "Name").first(), Some(&"gfx90a"));
    assert_eq!(field_lines(gpu, "Marketing Name").first(), Some(&"AMD Instinct MI210"));
    assert_eq!(field_lines(gpu, "Compute Unit").first(), Some(&"104"));
    assert_eq!(field_lines(gpu, "Wavefront Size").first(), Some(&"64(0x40)"));
    assert!(gpu.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"), "ISA name:\n{gpu}");
    // The global pool is local_mem_size (68702699520 bytes) in KiB.
    let sizes = field_lines(gpu, "Size");
    assert!(sizes.contains(&"67092480(0x3ffc000) KB"), "VRAM pool sized from the config: {sizes:?}");
}
