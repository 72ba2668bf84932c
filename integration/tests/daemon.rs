//! Daemon mode: one rocjitsud serves many real ROCm processes; clients that
//! crash or misbehave affect nobody else.

use integration::{c_program, eventually, run, spawn_until_ready, Daemon, Mode, Outcome, Stack};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(120);

fn expect_lines(o: &Outcome, lines: &[&str]) {
    for line in lines {
        assert!(o.has_line(line), "missing {line:?} in:\n{}", o.stdout);
    }
}

const ENGINE_LINES: &[&str] =
    &["barrier_done=0", "blocked_while_dep_pending=1", "released_after_dep=0", "copy_done=0", "copy_mismatches=0"];

#[test]
fn rocminfo_output_is_identical_in_local_daemon_and_attach_modes() {
    let d = Daemon::start("mi210");
    let rocminfo = |mode: Mode| {
        let mut c = Stack::Host.rocjitsu_in(mode);
        c.args(["--", "rocminfo"]);
        let o = run(c, DEADLINE);
        o.assert_success_of(&format!("rocminfo ({})", mode.name()));
        o.stdout
    };
    let local = rocminfo(Mode::Local);
    for mode in [Mode::Daemon, Mode::Attach(&d)] {
        assert_eq!(rocminfo(mode), local, "{} and local mode differ", mode.name());
    }
}

#[test]
fn queues_signals_and_sdma_through_a_private_daemon() {
    let exe = c_program("aql_sdma", &["hsa-runtime64"]);
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Daemon);
    cmd.arg("--").arg(&exe);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    expect_lines(&o, ENGINE_LINES);
}

// Device fds, unknown ioctls and fork in daemon mode: `local_boot.rs`
// (`device_fds_unknown_ioctls_and_fork` runs the probe in both modes).

#[test]
fn init_and_shutdown_200_times_against_a_daemon() {
    let exe = c_program("init_loop", &["hsa-runtime64"]);
    let d = Daemon::start("mi210");
    let mut cmd = d.attach();
    cmd.arg("--").arg(&exe).arg("200");
    let o = run(cmd, DEADLINE);
    o.assert_success();
    let get = |k: &str| -> i64 {
        o.stdout.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|v| v.parse().ok()).unwrap()
    };
    assert_eq!(get("fds_end"), get("fds_after_2"), "{}", o.stdout);
    assert_eq!(get("maps_end"), get("maps_after_2"), "{}", o.stdout);
}

#[test]
fn eight_clients_at_once_on_one_daemon() {
    let exe = c_program("aql_sdma", &["hsa-runtime64"]);
    let d = Daemon::start("mi210");
    let children: Vec<_> = (0..8)
        .map(|_| {
            let mut c = d.attach();
            c.arg("--").arg(&exe);
            std::thread::spawn(move || run(c, DEADLINE))
        })
        .collect();
    for c in children {
        let o = c.join().unwrap();
        o.assert_success();
        expect_lines(&o, ENGINE_LINES);
    }
    let log = d.log();
    assert_eq!(log.matches("connected").count(), 8, "{log}");
}

/// Starts a client that copies in a loop and returns once it is working.
fn start_looper(d: &Daemon, looper: &std::path::Path) -> std::process::Child {
    let mut c = d.attach();
    c.arg("--").arg(looper);
    spawn_until_ready(c, b"ready\n")
}

#[test]
fn killing_clients_mid_work_leaves_the_daemon_serving_and_clean() {
    let looper = c_program("sdma_loop", &["hsa-runtime64"]);
    let d = Daemon::start("mi210");
    // A second client works throughout.
    let mut steady = start_looper(&d, &looper);
    // Two warm-up kills bring the daemon to its steady state (threads,
    // allocator arenas); that is the baseline.
    for _ in 0..2 {
        let mut v = start_looper(&d, &looper);
        v.kill().unwrap();
        v.wait().unwrap();
    }
    std::thread::sleep(Duration::from_secs(2));
    let (fds, maps) = (d.fd_count(), d.map_count());
    for round in 0..20 {
        let mut victim = start_looper(&d, &looper);
        victim.kill().unwrap();
        victim.wait().unwrap();
        assert!(
            eventually(Duration::from_secs(5), || d.fd_count() == fds && d.map_count() <= maps),
            "after kill {round}: fds {} (baseline {fds}), mappings {} (baseline {maps})\n{}",
            d.fd_count(),
            d.map_count(),
            d.log()
        );
        assert!(steady.try_wait().unwrap().is_none(), "the other client kept running");
    }
    // The other client still works, and a new one runs to completion.
    let mut short = d.attach();
    short.arg("--").arg(&looper).arg("20");
    let o = run(short, DEADLINE);
    o.assert_success();
    assert!(o.stdout.contains("rounds=20"), "{}", o.stdout);
    assert!(steady.try_wait().unwrap().is_none());
    steady.kill().unwrap();
    steady.wait().unwrap();
    assert!(eventually(Duration::from_secs(5), || d.log().matches("gone").count() == 24), "{}", d.log());
    assert_eq!(d.stop().code(), Some(0));
}

/// Sends raw bytes to the daemon and reads until it closes the connection.
fn raw_exchange(socket: &std::path::Path, bytes: &[u8], close_early: bool) -> Vec<u8> {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    if close_early {
        return Vec::new();
    }
    let mut out = Vec::new();
    // The daemon closes the connection (possibly with unread bytes left,
    // which resets it) instead of hanging.
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the daemon did not close the connection: {e}"),
    }
    out
}

#[test]
fn malformed_frames_close_only_their_connection() {
    let d = Daemon::start("mi210");
    // Garbage (one header's worth, so the reply is not lost to a reset).
    let reply = raw_exchange(&d.socket, &[0xa5; 16], false);
    assert!(reply.len() >= 16, "a PROTOCOL_ERROR reply comes first");
    assert_eq!(u16::from_le_bytes([reply[0], reply[1]]), 18);
    // A header with reserved != 0.
    let mut h = [0u8; 16];
    h[2] = 1;
    raw_exchange(&d.socket, &h, false);
    // A HANDSHAKE with a payload of the wrong size.
    let mut h = [0u8; 16];
    h[8] = 3;
    raw_exchange(&d.socket, &[&h[..], &[1, 2, 3]].concat(), false);
    // A frame announcing 16 MiB + 1 bytes.
    let mut h = [0u8; 16];
    h[8..12].copy_from_slice(&((16 << 20) + 1u32).to_le_bytes());
    raw_exchange(&d.socket, &h, false);
    // Half a header, then gone.
    raw_exchange(&d.socket, &[0u8; 7], true);
    // The daemon still serves a real client.
    let exe = c_program("aql_sdma", &["hsa-runtime64"]);
    let mut c = d.attach();
    c.arg("--").arg(&exe);
    let o = run(c, DEADLINE);
    o.assert_success();
    expect_lines(&o, ENGINE_LINES);
    let log = d.log();
    assert!(log.matches("refused frame").count() >= 4, "each bad frame is logged:\n{log}");
}

#[test]
fn attach_without_a_daemon_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Stack::Host.rocjitsu();
    c.args(["--attach", "--socket"]).arg(dir.path().join("none.sock")).args(["--", "true"]);
    let o = run(c, DEADLINE);
    assert_eq!(o.code(), Some(1));
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("no daemon is listening"), "{}", o.stderr);
}

#[test]
fn socket_activation_and_other_users_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Another user must be able to reach the socket in this directory.
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let socket = dir.path().join("activated.sock");
    let log = dir.path().join("daemon.log");
    let mut activator = Command::new("systemd-socket-activate");
    activator
        .arg("-l")
        .arg(&socket)
        .arg(integration::bin_dir().join("rocjitsu"))
        .args(["--daemon", "--idle-exit", "30"])
        .env("ROCJITSU_RUNTIME_DIR", dir.path())
        .env("ROCJITSU_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut activator = activator.spawn().expect("systemd-socket-activate (Debian's systemd package)");
    assert!(eventually(Duration::from_secs(5), || socket.exists()));
    let mut c = Stack::Host.rocjitsu();
    c.args(["--attach", "--socket"]).arg(&socket).args(["--", "rocminfo"]);
    let o = run(c, DEADLINE);
    o.assert_success();
    assert!(o.stdout.contains("AMD Instinct MI210"));

    if rustix::process::getuid().is_root() {
        // Let anyone reach the socket, so that the daemon's own uid check is
        // what stands between another user and the simulated GPU.
        std::fs::set_permissions(&socket, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
        // Another user connects: the daemon checks the peer's uid and refuses.
        let path = socket.clone();
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child only drops privileges, connects and exits.
            unsafe { libc::setgid(65534) };
            unsafe { libc::setuid(65534) };
            let code = match UnixStream::connect(&path) {
                Ok(mut s) => {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                    let _ = s.write_all(&[0u8; 16]);
                    let mut b = Vec::new();
                    match s.read_to_end(&mut b) {
                        Ok(0) => 0,
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => 0,
                        _ => 3,
                    }
                }
                Err(_) => 2,
            };
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(libc::WEXITSTATUS(status), 0, "the daemon closed the other user's connection without a word");
        assert!(eventually(Duration::from_secs(5), || std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("refused a connection from uid 65534")));
    } else {
        eprintln!("not root: the other-uid check is exercised only when the tests run as root");
    }
    // SAFETY: stopping our child.
    unsafe { libc::kill(activator.id() as libc::pid_t, libc::SIGTERM) };
    let _ = activator.wait();
}

#[test]
fn a_lost_daemon_ends_its_clients_instead_of_leaving_them_spinning() {
    let looper = c_program("sdma_loop", &["hsa-runtime64"]);
    let d = Daemon::start("mi210");
    let mut c = d.attach();
    c.arg("--").arg(&looper).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut buf = [0u8; 6];
    child.stdout.as_mut().unwrap().read_exact(&mut buf).unwrap();
    // SAFETY: killing our own child (the daemon) without letting it clean up.
    unsafe { libc::kill(d.pid() as libc::pid_t, libc::SIGKILL) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "the client outlived its daemon");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("connection to the daemon was lost"), "{err}");
}
