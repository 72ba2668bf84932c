//! HIP IPC between processes (`programs/ipc.hip`): one process exports GPU memory and events
//! (`hipIpcGetMemHandle`, `hipIpcGetEventHandle`), a second one (the program started again by
//! itself) opens them, and both work on the same memory. Under ROCm 5.2 through the KFD's legacy
//! IPC_EXPORT_HANDLE / IPC_IMPORT_HANDLE ioctls, under sid's ROCm 6.4 through EXPORT_DMABUF /
//! IMPORT_DMABUF with the dmabuf fd passed over ROCR's own UNIX socket. The two processes must
//! share one simulated GPU, so they are clients of one daemon: a private `--daemon`, and a daemon
//! the test starts (`--attach`). The program's scenarios, one `PASS` line each:
//!
//! - a 4 MiB buffer, a 64 KiB sub-allocation (not at the start of ROCR's 2 MiB block) and a
//!   handle taken at an interior pointer (it shares the whole buffer): the consumer reads the
//!   producer's values and rewrites them with a kernel; the producer checks every element;
//! - IPC events: the consumer opens the producer's event, sees it pending while the producer's
//!   kernel is held, then waits for it (`hipEventSynchronize`, `hipStreamWaitEvent`) and reads the
//!   final values. Sid's HIP 6.4 records an interprocess event locally only (its shared memory
//!   never hears of the record, on any GPU): there the program detects that and prints
//!   `SKIP <name>` for the two waits, which the sid tests accept in place of their `PASS`;
//! - forged handles (a real handle with its identifying bytes random or flipped; under ROCm 6
//!   also 64 random bytes, which ROCm 5.2's thunk itself crashes on) and a handle of a freed
//!   buffer do not open; the real handle still does. (ROCm 6's importer loops forever when the
//!   exporter declines a handle; the program counts an open still blocked after 25 s as refused
//!   there);
//! - the importer keeps the memory after the exporter frees it.
//!
//! In local mode each process has a GPU of its own: exporting fails cleanly, and the simulator
//! says that IPC needs `--daemon`.

use integration::{Daemon, Mode, Outcome, Stack};
use std::time::Duration;

/// The program's `PASS` lines on every stack.
const PASSES: [&str; 7] = [
    "memory handle",
    "small sub-allocation handle",
    "interior pointer handle",
    "event handle opened",
    "forged handles refused",
    "stale handle refused",
    "importer keeps freed memory",
];

/// The waits on an IPC event: `PASS` under ROCm 5.2; under sid's HIP 6.4, which never records an
/// interprocess event where another process can see it, `PASS` or the program's `SKIP`.
const EVENT_WAITS: [&str; 2] = ["event handle with hipEventSynchronize", "event handle with hipStreamWaitEvent"];

/// How long the program waits for the other process at each step (its argument).
const TIMEOUT: &str = "60";
/// After this the test kills the program. Five consumers each start HIP; under ROCm 6 each of the
/// four refusals takes 10 s to 25 s (the importer retries a missing exporter for 10 s).
const DEADLINE: Duration = Duration::from_secs(600);

fn program(stack: Stack) -> std::path::PathBuf {
    stack.hip_program("ipc", "gfx90a", &[])
}

fn run(stack: Stack, mode: Mode, args: &[&str]) -> Outcome {
    stack.run_program(mode, &program(stack), args, DEADLINE)
}

/// Checks a run of every scenario: exit 0, no `FAIL`, every `PASS` line (the event waits as
/// [`EVENT_WAITS`] says for `stack`).
fn assert_all_pass(stack: Stack, what: &str, o: &Outcome) {
    let mut required: Vec<&str> = PASSES.to_vec();
    if stack == Stack::Sid {
        let skipped = |w: &str| o.stdout.lines().any(|l| l.starts_with(&format!("SKIP {w}:")));
        required.extend(EVENT_WAITS.iter().copied().filter(|w| !skipped(w)));
    } else {
        required.extend(EVENT_WAITS);
    }
    o.assert_passes(what, &required);
}

fn between_processes(stack: Stack, mode: Mode) {
    let what = format!("ipc ({}, {})", stack.name(), mode.name());
    assert_all_pass(stack, &what, &run(stack, mode, &[TIMEOUT]));
}

/// The same through a daemon the test started; a failure shows the daemon's log too.
fn between_processes_attached(stack: Stack) {
    let daemon = Daemon::start("mi210");
    let what = format!("ipc ({}, --attach)", stack.name());
    let o = run(stack, Mode::Attach(&daemon), &[TIMEOUT]);
    if !o.status.success() {
        eprintln!("daemon log:\n{}", daemon.log());
    }
    assert_all_pass(stack, &what, &o);
}

fn refused_in_local_mode(stack: Stack) {
    let what = format!("ipc local ({}, local)", stack.name());
    let o = run(stack, Mode::Local, &["local"]);
    o.assert_passes(&what, &["local mode refuses IPC"]);
    assert!(
        o.stderr.contains("--daemon"),
        "{what}: the simulator does not say that IPC needs `--daemon`:\nstdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
}

/// The tests above, once per stack.
macro_rules! per_stack {
    ($($stack:ident: $module:ident),*) => {$(
        mod $module {
            use super::*;
            const S: Stack = Stack::$stack;
            #[test]
            fn memory_and_events_shared_between_processes_daemon() {
                between_processes(S, Mode::Daemon);
            }
            #[test]
            fn memory_and_events_shared_between_processes_attach() {
                between_processes_attached(S);
            }
            #[test]
            fn ipc_refused_in_local_mode() {
                refused_in_local_mode(S);
            }
        }
    )*};
}

per_stack!(Host: rocm52, Sid: sid);

/// Sid's ROCR shares memory through the legacy ioctls unless told otherwise
/// (`HSA_ENABLE_IPC_MODE_LEGACY` defaults to 1 in ROCR 6.x); with 0 it uses dmabufs: EXPORT_DMABUF
/// in the producer, the fd over ROCR's UNIX socket, GET_DMABUF_INFO and IMPORT_DMABUF in the
/// consumer — fds crossing from the daemon to one client, between clients, and back. The memory
/// scenarios and the importer keeping freed memory (the refusals take ROCR 10 s to 25 s each in
/// this mode, see the module docs, and are checked through the legacy path above).
#[test]
fn sid_memory_shared_through_dmabufs() {
    let stack = Stack::Sid;
    let mut cmd = stack.rocjitsu_in(Mode::Daemon);
    cmd.env("HSA_ENABLE_IPC_MODE_LEGACY", "0");
    cmd.arg("--").arg(program(stack)).args([TIMEOUT, "memory", "keeps"]);
    let o = stack.run(cmd, DEADLINE);
    o.assert_passes(
        "ipc memory keeps (sid, --daemon, dmabuf mode)",
        &["memory handle", "small sub-allocation handle", "interior pointer handle", "importer keeps freed memory"],
    );
}
