//! Kernels that wait for other kernels, for the host and for other processes (issue 13):
//! what real software does (RCCL-style hand-offs, persistent kernels, single-pass scans,
//! polling host memory, grid-wide barriers) and what a GPU that runs one dispatch at a time
//! to completion can never finish. Each program is `integration/programs/<name>.hip`, checks
//! every result against the CPU and prints `PASS <what>` or `FAIL <what>: …`:
//!
//! - `flag_handoff <n>`: kernel A (stream 1, n workgroups of 256) spins until kernel B
//!   (stream 2, launched after A, itself waiting until A runs) sets a flag in device memory;
//!   tight volatile-load spinning and atomic loads with `s_sleep`.
//! - `host_poll`: a kernel polls `hipHostMalloc` memory while the host waits for a kernel on
//!   another stream (which waits until the poller runs), then writes the value.
//! - `grid_sync`: a grid-wide reduction with `cg::this_grid().sync()` launched by
//!   `hipLaunchCooperativeKernel` at the largest co-resident grid the occupancy API reports;
//!   a cooperative launch one block larger must fail with `hipErrorCooperativeLaunchTooLarge`.
//! - `lookback_scan`: a single-pass prefix sum with decoupled look-back over 10,000
//!   workgroups taking their tiles from an atomic counter.
//! - `cross_client`: two clients of one daemon; A's kernel spins until a value appears that
//!   only B's kernel computes (relayed through a file both map).
//!
//! Every wait is bounded: the programs' spin loops give up when a watchdog thread says the
//! phase is out of time ([`TIMEOUT`]) and the program prints FAIL; a program stuck anyway is
//! killed (with everything it started) after [`DEADLINE`] and the test fails saying so.
//! Local mode and a private `--daemon`, under the host's ROCm 5.2 and sid's ROCm 6.4.

use integration::{Daemon, Mode, Outcome, Stack};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one phase of a program may wait before its watchdog tells its kernels to give up.
/// A simulator that runs kernels concurrently needs well under a second for each.
const TIMEOUT: &str = "30";
/// After this the test kills a program and everything it started. The programs end
/// themselves within two phases of TIMEOUT plus 20 s of grace each.
const DEADLINE: Duration = Duration::from_secs(150);

/// A started command: its process group, and its output as it comes.
struct Running {
    child: Child,
    what: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    lines: Receiver<String>,
    readers: Vec<JoinHandle<()>>,
    start: Instant,
}

impl Running {
    /// Starts `cmd` in a process group of its own (so that a stuck program can be killed with
    /// the private daemon or sandbox it started).
    fn spawn(mut cmd: Command, what: String) -> Running {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
        let (stdout, stderr) = (Arc::new(Mutex::new(String::new())), Arc::new(Mutex::new(String::new())));
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().expect("piped");
        let sink = stdout.clone();
        let out_reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        let mut err = child.stderr.take().expect("piped");
        let sink = stderr.clone();
        let err_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Running { child, what, stdout, stderr, lines, readers: vec![out_reader, err_reader], start: Instant::now() }
    }

    /// Waits (at most `limit`) until the program prints `line`; false if it ended or the time
    /// ran out first.
    fn wait_for_line(&self, line: &str, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        loop {
            match self.lines.recv_timeout(end.saturating_duration_since(Instant::now())) {
                Ok(l) if l == line => return true,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    fn output(&self) -> (String, String) {
        (self.stdout.lock().unwrap().clone(), self.stderr.lock().unwrap().clone())
    }

    fn kill_group(&self) {
        // SAFETY: signalling the process group this test started (the child leads it).
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
    }

    /// Waits for the program to end; past [`DEADLINE`] kills it and fails the test with what
    /// it printed so far.
    fn finish(mut self) -> Outcome {
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait for the program") {
                break s;
            }
            if self.start.elapsed() > DEADLINE {
                self.kill_group();
                let _ = self.child.wait();
                let (out, err) = self.output();
                panic!(
                    "{}: still running after {DEADLINE:?} although its watchdog should have ended it (a kernel \
                     that ignores the abort word, or a runtime call that never returns): killed it and everything \
                     it started.\nstdout so far:\n{out}\nstderr so far:\n{err}",
                    self.what
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // A private daemon holding the pipes ends with the program (SIGTERM on its parent's
        // death); give it a moment, then make sure nothing of this group is left.
        let end = Instant::now() + Duration::from_secs(10);
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        if self.readers.iter().any(|r| !r.is_finished()) {
            self.kill_group();
        }
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let (stdout, stderr) = self.output();
        Outcome { status, stdout, stderr, cpu: Duration::ZERO, wall: self.start.elapsed() }
    }
}

impl Drop for Running {
    /// A test that fails half-way leaves nothing of this program running.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill_group();
            let _ = self.child.wait();
        }
    }
}

/// Runs `cmd` in `stack` to its end (bounded by [`DEADLINE`]); a failure's stderr ends with
/// what the exit status means and the stack's package versions.
fn run(stack: Stack, cmd: Command, what: String) -> Outcome {
    explain(stack, Running::spawn(cmd, what).finish())
}

fn explain(stack: Stack, mut o: Outcome) -> Outcome {
    if o.code() == Some(3) {
        o.stderr.push_str("\n[exit 3: its watchdog ended it, a kernel was stuck even after being told to give up]\n");
    }
    stack.note_versions(o)
}

/// `integration/programs/<name>.hip` built by `stack`'s hipcc for the MI210.
fn program(stack: Stack, name: &str) -> std::path::PathBuf {
    stack.hip_program(name, "gfx90a", &[])
}

/// Runs `name args…` under `rocjitsu` in `mode` and checks its PASS lines.
fn run_program(stack: Stack, mode: Mode, name: &str, args: &[&str], passes: &[&str]) {
    let exe = program(stack, name);
    let mut cmd = stack.rocjitsu_in(mode);
    cmd.arg("--").arg(&exe).args(args);
    let what = format!("{name} {} ({}, {})", args.join(" "), mode.name(), stack.name());
    run(stack, cmd, what.clone()).assert_passes(&what, passes);
}

fn flag_handoff(stack: Stack, mode: Mode, groups: u32) {
    let n = groups.to_string();
    let passes = [format!("flag_handoff {n} spin"), format!("flag_handoff {n} sleep")];
    let passes: Vec<&str> = passes.iter().map(String::as_str).collect();
    run_program(stack, mode, "flag_handoff", &[&n, TIMEOUT], &passes);
}

fn host_poll(stack: Stack, mode: Mode) {
    run_program(stack, mode, "host_poll", &[TIMEOUT], &["host_poll spin", "host_poll sleep"]);
}

fn grid_sync_reduction(stack: Stack, mode: Mode) {
    run_program(stack, mode, "grid_sync", &["reduce", TIMEOUT], &["grid_sync_reduce"]);
}

fn cooperative_launch_too_large(stack: Stack, mode: Mode) {
    run_program(stack, mode, "grid_sync", &["too-large"], &["cooperative_launch_too_large"]);
}

fn lookback_scan(stack: Stack, mode: Mode) {
    run_program(stack, mode, "lookback_scan", &[TIMEOUT], &["lookback_scan"]);
}

/// Client A of a shared daemon spins until client B's kernel has computed a value; B starts
/// once A's kernel runs.
fn two_daemon_clients(stack: Stack) {
    let exe = program(stack, "cross_client");
    let daemon = Daemon::start("mi210");
    let shared = daemon.dir.path().join("shared");
    std::fs::write(&shared, [0u8; 4096]).expect("the shared file");
    let attach = |role: &str| {
        let mut c = stack.rocjitsu_in(Mode::Attach(&daemon));
        c.arg("--").arg(&exe).arg(role).arg(&shared).arg(TIMEOUT);
        c
    };
    let a_what = format!("cross_client waiter (--attach, {})", stack.name());
    let b_what = format!("cross_client producer (--attach, {})", stack.name());
    let a = Running::spawn(attach("waiter"), a_what.clone());
    let spinning = a.wait_for_line("spinning", Duration::from_secs(60));
    let b = spinning.then(|| run(stack, attach("producer"), b_what.clone()));
    let a = explain(stack, a.finish());
    assert!(
        spinning,
        "{a_what}: its kernel never got going (no `spinning`):\nstdout:\n{}\nstderr:\n{}\ndaemon log:\n{}",
        a.stdout,
        a.stderr,
        daemon.log()
    );
    b.expect("started").assert_passes(&b_what, &["cross_client_producer"]);
    a.assert_passes(&a_what, &["cross_client_waiter"]);
}

/// The tests above, once per stack and mode.
macro_rules! per_stack {
    ($($stack:ident: $module:ident),*) => {$(
        mod $module {
            use super::*;
            const S: Stack = Stack::$stack;
            #[test]
            fn flag_handoff_1_waiting_workgroup_local() {
                flag_handoff(S, Mode::Local, 1);
            }
            #[test]
            fn flag_handoff_8_waiting_workgroups_local() {
                flag_handoff(S, Mode::Local, 8);
            }
            #[test]
            fn flag_handoff_104_waiting_workgroups_local() {
                flag_handoff(S, Mode::Local, 104);
            }
            #[test]
            fn flag_handoff_416_waiting_workgroups_local() {
                flag_handoff(S, Mode::Local, 416);
            }
            #[test]
            fn flag_handoff_1_waiting_workgroup_daemon() {
                flag_handoff(S, Mode::Daemon, 1);
            }
            #[test]
            fn flag_handoff_8_waiting_workgroups_daemon() {
                flag_handoff(S, Mode::Daemon, 8);
            }
            #[test]
            fn flag_handoff_104_waiting_workgroups_daemon() {
                flag_handoff(S, Mode::Daemon, 104);
            }
            #[test]
            fn flag_handoff_416_waiting_workgroups_daemon() {
                flag_handoff(S, Mode::Daemon, 416);
            }
            #[test]
            fn kernel_polls_host_memory_while_host_waits_on_another_stream_local() {
                host_poll(S, Mode::Local);
            }
            #[test]
            fn kernel_polls_host_memory_while_host_waits_on_another_stream_daemon() {
                host_poll(S, Mode::Daemon);
            }
            #[test]
            fn grid_sync_reduction_at_largest_co_resident_grid_local() {
                grid_sync_reduction(S, Mode::Local);
            }
            #[test]
            fn grid_sync_reduction_at_largest_co_resident_grid_daemon() {
                grid_sync_reduction(S, Mode::Daemon);
            }
            #[test]
            fn cooperative_launch_too_large_fails_with_hips_error_local() {
                cooperative_launch_too_large(S, Mode::Local);
            }
            #[test]
            fn cooperative_launch_too_large_fails_with_hips_error_daemon() {
                cooperative_launch_too_large(S, Mode::Daemon);
            }
            #[test]
            fn lookback_scan_over_10000_workgroups_local() {
                lookback_scan(S, Mode::Local);
            }
            #[test]
            fn lookback_scan_over_10000_workgroups_daemon() {
                lookback_scan(S, Mode::Daemon);
            }
            #[test]
            fn daemon_client_waits_for_another_clients_kernel() {
                two_daemon_clients(S);
            }
        }
    )*};
}

per_stack!(Host: rocm52, Sid: sid);
