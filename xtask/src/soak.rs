//! `cargo xtask soak --minutes N [--clients K] [--seed S]`: one daemon, K clients at a time
//! for N minutes, each doing a random mix of
//! - a HIP test program (`integration/programs`) that must pass (exit 0, a PASS line, no FAIL);
//! - a client SIGKILLed in the middle of a long kernel;
//! - a malformed connection (random bytes, or a valid header with a garbage body).
//!
//! It reports runs, failures, kills and malformed connections, and the daemon's RSS and open
//! fds over time. It fails on any failed program, on a daemon that died, and on fds or RSS
//! that do not come back near their starting values once every client has gone.

use anyhow::{bail, Context, Result};
use integration::{hip_program, Daemon};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The programs a client runs (each checks its results against a CPU reference).
/// `ipc` starts a second client of the daemon and shares memory and events with it.
const PROGRAMS: [&str; 8] =
    ["vector_add", "saxpy", "reduce_shuffle", "atomics", "streams_events", "userptr_neighbours", "math", "ipc"];

/// Open fds the daemon may keep beyond its start once every client has gone (its logging and
/// runtime bookkeeping may open a few lazily).
const FD_SLACK: usize = 8;
/// Resident memory the daemon may keep beyond its start once every client has gone.
const RSS_SLACK_KIB: u64 = 64 * 1024;

#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    failures: Vec<String>,
    kills: u64,
    malformed: u64,
    /// (seconds since start, RSS KiB, open fds)
    samples: Vec<(u64, u64, usize)>,
}

struct Options {
    minutes: f64,
    clients: usize,
    seed: u64,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options { minutes: 2.0, clients: 4, seed: fastrand::u64(..) };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().with_context(|| format!("{a} needs {what}"));
        match a.as_str() {
            "--minutes" => o.minutes = value("a number of minutes")?.parse().context("--minutes")?,
            "--clients" => o.clients = value("a number of clients")?.parse().context("--clients")?,
            "--seed" => o.seed = value("a seed")?.parse().context("--seed")?,
            other => bail!("unknown soak option {other:?} (--minutes N, --clients K, --seed S)"),
        }
    }
    if o.clients == 0 || o.minutes <= 0.0 {
        bail!("--clients and --minutes must be positive");
    }
    Ok(o)
}

pub fn run(args: &[String]) -> Result<()> {
    let o = parse(args)?;
    crate::tasks::build()?;
    std::env::set_var("ROCJITSU_BIN_DIR", crate::tasks::bin_dir());
    let programs: Vec<(&str, PathBuf)> = PROGRAMS.iter().map(|&p| (p, hip_program(p))).collect();
    let long_kernel = hip_program("long_kernel");
    let daemon = Daemon::start("mi210");
    let (rss0, fds0) = (daemon.rss_kib(), daemon.fd_count());
    eprintln!(
        "soak: {} min, {} clients, seed {}; daemon pid {}, RSS {} KiB, {} fds",
        o.minutes,
        o.clients,
        o.seed,
        daemon.pid(),
        rss0,
        fds0
    );
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(o.minutes * 60.0);
    let tally = Arc::new(Mutex::new(Tally::default()));
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        for k in 0..o.clients {
            let (tally, programs, long_kernel, daemon) = (&tally, &programs, &long_kernel, &daemon);
            let mut rng = fastrand::Rng::with_seed(o.seed.wrapping_add(k as u64));
            s.spawn(move || {
                while Instant::now() < deadline {
                    let roll = rng.u32(..100);
                    if roll < 70 {
                        let (name, exe) = &programs[rng.usize(..programs.len())];
                        let outcome = run_program(daemon, exe);
                        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                        t.runs += 1;
                        if let Err(why) = outcome {
                            t.failures.push(format!("{name}: {why}"));
                        }
                    } else if roll < 85 {
                        match kill_mid_kernel(daemon, long_kernel, rng.u64(0..300)) {
                            Ok(()) => tally.lock().unwrap_or_else(|e| e.into_inner()).kills += 1,
                            Err(why) => {
                                tally.lock().unwrap_or_else(|e| e.into_inner()).failures.push(format!("kill: {why}"))
                            }
                        }
                    } else {
                        malformed_connection(daemon, &mut rng);
                        tally.lock().unwrap_or_else(|e| e.into_inner()).malformed += 1;
                    }
                }
            });
        }
        s.spawn(|| {
            while !done.load(Ordering::Acquire) && Instant::now() < deadline {
                let sample = (start.elapsed().as_secs(), daemon.rss_kib(), daemon.fd_count());
                tally.lock().unwrap_or_else(|e| e.into_inner()).samples.push(sample);
                std::thread::sleep(Duration::from_secs(5).min(deadline.saturating_duration_since(Instant::now())));
            }
        });
        // The clients end by themselves at the deadline.
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        done.store(true, Ordering::Release);
    });
    // Every client has gone: give the daemon a moment to close their sessions.
    let settled = integration::eventually(Duration::from_secs(20), || daemon.fd_count() <= fds0 + FD_SLACK);
    let alive = Path::new(&format!("/proc/{}", daemon.pid())).exists();
    let (rss1, fds1) = (daemon.rss_kib(), daemon.fd_count());
    let t = tally.lock().unwrap_or_else(|e| e.into_inner());
    println!("| seconds | daemon RSS (KiB) | daemon fds |\n|---|---|---|");
    for (sec, rss, fds) in &t.samples {
        println!("| {sec} | {rss} | {fds} |");
    }
    println!("| end, clients gone | {rss1} | {fds1} |");
    println!(
        "soak: {:.1} min, {} program runs, {} failures, {} clients killed mid-kernel, {} malformed connections; \
         daemon RSS {rss0} -> {rss1} KiB, fds {fds0} -> {fds1}",
        start.elapsed().as_secs_f64() / 60.0,
        t.runs,
        t.failures.len(),
        t.kills,
        t.malformed
    );
    for f in &t.failures {
        println!("FAIL {f}");
    }
    if !alive {
        bail!("the daemon died during the soak:\n{}", daemon.log());
    }
    if !t.failures.is_empty() {
        bail!("{} of {} runs failed (seed {})", t.failures.len(), t.runs + t.kills, o.seed);
    }
    if !settled {
        bail!("the daemon kept {fds1} fds after every client had gone (started with {fds0})");
    }
    if rss1 > rss0 + RSS_SLACK_KIB {
        bail!("the daemon's RSS grew from {rss0} to {rss1} KiB and stayed after every client had gone");
    }
    daemon.stop();
    Ok(())
}

/// Runs `exe` attached to the daemon; Ok if it passed.
fn run_program(daemon: &Daemon, exe: &Path) -> Result<(), String> {
    let mut cmd = daemon.attach();
    cmd.arg("--").arg(exe);
    let o = integration::run(cmd, Duration::from_secs(300));
    if o.status.success() && o.stdout.contains("PASS") && !o.stdout.contains("FAIL") {
        Ok(())
    } else {
        Err(format!("{} after {:.1} s\nstdout:\n{}\nstderr:\n{}", o.status, o.wall.as_secs_f64(), o.stdout, o.stderr))
    }
}

/// Starts a client with a long kernel and SIGKILLs it `delay_ms` after the kernel started.
fn kill_mid_kernel(daemon: &Daemon, long_kernel: &Path, delay_ms: u64) -> Result<(), String> {
    let mut cmd = daemon.attach();
    cmd.arg("--").arg(long_kernel).stdout(Stdio::piped()).stderr(Stdio::null()).stdin(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("cannot start the long kernel: {e}"))?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let read = BufReader::new(stdout).read_line(&mut line);
    std::thread::sleep(Duration::from_millis(delay_ms));
    let _ = child.kill();
    let status = child.wait().map_err(|e| e.to_string())?;
    match read {
        Ok(_) if line.trim() == "launched" => Ok(()),
        _ => Err(format!("the long kernel did not launch ({status}): {line:?}")),
    }
}

/// Connects to the daemon and sends garbage: random bytes, or a 16-byte header announcing a
/// body that is then not what it claims. The daemon must drop the connection, nothing else.
fn malformed_connection(daemon: &Daemon, rng: &mut fastrand::Rng) {
    let Ok(mut s) = std::os::unix::net::UnixStream::connect(&daemon.socket) else { return };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let len = rng.usize(1..96);
    let mut bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
    if rng.bool() && bytes.len() >= 16 {
        // A plausible header: a small length in the first word.
        bytes[..4].copy_from_slice(&(rng.u32(0..64)).to_le_bytes());
    }
    let _ = s.write_all(&bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
}
