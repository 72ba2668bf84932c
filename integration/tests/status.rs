//! `rocjitsu status` (issue 16): a test daemon with two attached clients
//! (`programs/status_client.hip`, which completes a number of kernels, then holds a kernel
//! running until the test lets it go) is asked for its status, as a table and as JSON; both
//! clients must be there with their command lines, memory, queues, completed dispatches and
//! running kernel. Without a daemon, `status` says so in one line and exits 1.

use integration::{eventually, hip_program, run, spawn_until_ready, Daemon, Outcome, Stack};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(120);

/// A client that completed `kernels` kernels and now runs `hold` until its stdin gets a line.
struct Client {
    child: Child,
    kernels: u64,
}

impl Client {
    fn start(d: &Daemon, exe: &Path, kernels: u64) -> Client {
        let mut c = d.attach();
        c.arg("--").arg(exe).arg(kernels.to_string()).stdin(Stdio::piped());
        let child = spawn_until_ready(c, format!("ready {kernels}\n").as_bytes());
        Client { child, kernels }
    }

    fn pid(&self) -> u64 {
        u64::from(self.child.id())
    }

    /// Lets `hold` end and checks that the client finishes cleanly.
    fn finish(mut self) {
        let mut stdin = self.child.stdin.take().expect("piped");
        stdin.write_all(b"go\n").expect("the client reads its stdin");
        drop(stdin);
        let out = self.child.wait_with_output().expect("the client's exit");
        assert!(out.status.success(), "client {} ended with {}", self.kernels, out.status);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    }
}

fn status(socket: &Path, json: bool) -> Outcome {
    let mut c = Stack::Host.rocjitsu();
    c.arg("status").arg("--socket").arg(socket);
    if json {
        c.arg("--json");
    }
    run(c, DEADLINE)
}

fn status_json(socket: &Path) -> Value {
    let o = status(socket, true);
    o.assert_success_of("rocjitsu status --json");
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", o.stdout))
}

/// Checks what the JSON report says about one client; returns its entry.
fn check_client<'a>(report: &'a Value, client: &Client, exe: &Path) -> &'a Value {
    let clients = report["clients"].as_array().expect("a client list");
    let c = clients
        .iter()
        .find(|c| c["pid"].as_u64() == Some(client.pid()))
        .unwrap_or_else(|| panic!("client {} is not in the report:\n{report:#}", client.pid()));
    let argv = [exe.to_str().unwrap().to_string(), client.kernels.to_string()];
    assert_eq!(c["command_line"], serde_json::json!(argv), "{c:#}");
    let uptime = c["uptime_ms"].as_u64().expect("an uptime");
    assert!(uptime > 0 && uptime <= report["daemon"]["uptime_ms"].as_u64().unwrap(), "{report:#}");
    // hipMalloc'd 256 KiB; hipHostRegister'ed 1 MiB.
    let memory = &c["memory"];
    assert!(memory["vram_bytes"].as_u64().unwrap() >= 256 << 10, "{memory:#}");
    assert!(memory["userptr_bytes"].as_u64().unwrap() >= 1 << 20, "{memory:#}");
    assert_eq!(memory["complete"], true);
    let queues = c["queues"].as_array().expect("a queue list");
    assert!(!queues.is_empty(), "{c:#}");
    // Its kernels completed (HIP's own, e.g. for the memset, may come on top).
    let done: u64 = queues.iter().map(|q| q["dispatches_done"].as_u64().unwrap()).sum();
    assert!(done >= client.kernels, "{} dispatches done, {} kernels completed:\n{c:#}", done, client.kernels);
    // `hold` runs on exactly one of its queues; the others run nothing.
    let running: Vec<&Value> = queues.iter().filter(|q| !q["running_kernel"].is_null()).collect();
    assert_eq!(running.len(), 1, "{c:#}");
    assert_eq!(running[0]["kernel_name"], "hold", "{c:#}");
    assert_eq!(running[0]["kind"], "aql", "{c:#}");
    c
}

#[test]
fn status_lists_two_attached_clients() {
    let exe = hip_program("status_client");
    let d = Daemon::start("mi210");
    let a = Client::start(&d, &exe, 3);
    let b = Client::start(&d, &exe, 5);

    let report = status_json(&d.socket);
    assert_eq!(report["daemon"]["pid"].as_u64(), Some(u64::from(d.pid())), "{report:#}");
    assert_eq!(report["socket"], d.socket.to_str().unwrap());
    assert_eq!(report["clients"].as_array().map(Vec::len), Some(2), "{report:#}");
    check_client(&report, &a, &exe);
    let b_json = check_client(&report, &b, &exe);

    let table = status(&d.socket, false);
    table.assert_success_of("rocjitsu status");
    let text = &table.stdout;
    assert!(text.starts_with(&format!("daemon pid {} on {}, up ", d.pid(), d.socket.display())), "{text}");
    assert!(text.lines().next().unwrap().ends_with(", 2 clients"), "{text}");
    for (client, argv) in [(&a, "3"), (&b, "5")] {
        let pid = client.pid().to_string();
        let row = text.lines().find(|l| l.split_whitespace().next() == Some(pid.as_str()));
        assert!(
            row.is_some_and(|l| l.ends_with(&format!("{} {argv}", exe.display()))),
            "no client row for {pid} with its command line:\n{text}"
        );
        let holding = text
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(pid.as_str()))
            .filter(|l| l.split_whitespace().last() == Some("hold"))
            .count();
        assert_eq!(holding, 1, "one queue of {pid} runs `hold`:\n{text}");
    }

    // Released, the clients finish and their sessions leave the report; the other's counters
    // only grow meanwhile.
    let done = |c: &Value| -> u64 {
        c["queues"].as_array().unwrap().iter().map(|q| q["dispatches_done"].as_u64().unwrap()).sum()
    };
    let b_before = done(b_json);
    a.finish();
    let mut last = Value::Null;
    let a_gone = eventually(Duration::from_secs(30), || {
        last = status_json(&d.socket);
        last["clients"].as_array().map(Vec::len) == Some(1)
    });
    assert!(a_gone, "the finished client is still listed:\n{last:#}");
    assert!(done(check_client(&last, &b, &exe)) >= b_before, "{last:#}");
    b.finish();
    let idle = eventually(Duration::from_secs(30), || {
        let o = status(&d.socket, false);
        o.status.success() && o.stdout.trim_end().ends_with(", no clients")
    });
    assert!(idle, "{}", status(&d.socket, false).stdout);
}

#[test]
fn status_without_a_daemon_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("daemon.sock");
    for json in [false, true] {
        let o = status(&socket, json);
        assert_eq!(o.code(), Some(1), "{o:?}");
        assert_eq!(o.stdout, "", "nothing on stdout");
        assert_eq!(o.stderr, format!("rocjitsu status: no daemon is running on {}\n", socket.display()));
    }
    // The socket also comes from $ROCJITSU_SOCKET.
    let mut c = Stack::Host.rocjitsu();
    c.arg("status").env("ROCJITSU_SOCKET", &socket);
    let o = run(c, DEADLINE);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(&socket.display().to_string()), "{}", o.stderr);
}

#[test]
fn status_is_a_command_only_as_the_first_word() {
    // After `--`, `status` is an application like any other (here one that does not exist).
    let dir = tempfile::tempdir().unwrap();
    let mut c = Stack::Host.rocjitsu();
    c.args(["--", "status"]).env("PATH", dir.path());
    let o = run(c, DEADLINE);
    assert_eq!(o.code(), Some(127), "{o:?}");
    assert!(!o.stderr.contains("no daemon"), "{}", o.stderr);
    // Its own usage errors are usage errors.
    let mut c = Stack::Host.rocjitsu();
    c.args(["status", "--bogus"]);
    let o = run(c, DEADLINE);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.starts_with("rocjitsu status: "), "{}", o.stderr);
}
