//! Runs one test program and follows its progress lines as they come, with a stall limit: a
//! simulator bug may hang a test, and one hung test must not hold the whole suite.

use super::gtest::{Progress, Status};
use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How the program stopped.
#[derive(Debug)]
pub enum Stop {
    Exited(ExitStatus),
    /// Killed after printing nothing for the stall limit.
    Stalled,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::os::unix::process::ExitStatusExt;
        match self {
            Stop::Exited(s) => match (s.code(), s.signal()) {
                (Some(code), _) => write!(f, "exit {code}"),
                (None, Some(sig)) => write!(f, "signal {sig}"),
                _ => write!(f, "{s}"),
            },
            Stop::Stalled => write!(f, "stalled (killed)"),
        }
    }
}

/// A test that ended, with the time between its start and end lines (for a test without a
/// start line, since the previous test's end or the program's [`Progress::Ready`] line) and
/// its own output.
pub struct Ended {
    pub name: String,
    pub status: Status,
    pub seconds: f64,
    pub output: String,
}

/// What one run of a test program did.
pub struct Run {
    pub ended: Vec<Ended>,
    /// The test that had started and not ended when the program stopped, with its output.
    pub running: Option<Ended>,
    pub stop: Stop,
    pub seconds: f64,
    /// The last lines of the output (for a program that died before any test).
    pub tail: String,
}

/// Lines of output kept for the tail.
const TAIL_LINES: usize = 60;

/// Reads one output line: a test starting or ending, or neither.
pub type Parser = for<'a> fn(&'a str) -> Option<Progress<'a>>;

/// Runs `cmd` (its stdout and stderr together into `log`), following its progress with
/// `parse` and calling `on_end` as each test ends.
pub fn run(
    mut cmd: Command,
    log: &std::path::Path,
    stall: Duration,
    parse: Parser,
    mut on_end: impl FnMut(&Ended),
) -> Result<Run> {
    let mut log = std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    // One pipe for both streams keeps their lines in the order the program wrote them.
    let (reader, writer) = std::io::pipe().context("cannot create a pipe")?;
    cmd.stdout(writer.try_clone()?).stderr(writer).stdin(std::process::Stdio::null());
    // A group of its own, so a stalled program is killed with everything it started.
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn().with_context(|| format!("cannot run {cmd:?}"))?;
    // The parent's copies of the write end go with `cmd`; end of output is then the program's.
    drop(cmd);
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let pump = std::thread::spawn(move || {
        let mut r = BufReader::new(reader);
        loop {
            let mut line = Vec::new();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut ended = Vec::new();
    let mut running: Option<(String, Instant, String)> = None;
    let mut tail = std::collections::VecDeque::new();
    let mut last_progress = Instant::now();
    // Where the time of a test that prints only its end begins.
    let mut since = Instant::now();
    let mut stalled = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(bytes) => {
                log.write_all(&bytes)?;
                let line = String::from_utf8_lossy(&bytes);
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line.to_string());
                if let Some((_, _, out)) = running.as_mut() {
                    out.push_str(&line);
                }
                match parse(&line) {
                    Some(Progress::Started(name)) => {
                        running = Some((name.to_string(), Instant::now(), line.to_string()));
                        last_progress = Instant::now();
                    }
                    Some(Progress::Ended(name, status)) => {
                        let (seconds, output) = match running.take() {
                            Some((n, at, out)) if n == name => (at.elapsed().as_secs_f64(), out),
                            other => {
                                running = other;
                                (since.elapsed().as_secs_f64(), line.to_string())
                            }
                        };
                        let e = Ended { name: name.to_string(), status, seconds, output };
                        on_end(&e);
                        ended.push(e);
                        last_progress = Instant::now();
                        since = last_progress;
                    }
                    Some(Progress::Ready) => since = Instant::now(),
                    None => {}
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if last_progress.elapsed() > stall {
                    stalled = true;
                    kill_group(child.id());
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait().context("cannot wait for the test program")?;
    // After a kill the pipe may stay open in a grandchild that escaped the group; the pump
    // thread then ends with it, so it is not joined.
    if !stalled {
        let _ = pump.join();
    }
    let running = running.map(|(name, at, output)| Ended {
        name,
        status: if stalled { Status::Hung } else { Status::Crashed },
        seconds: at.elapsed().as_secs_f64(),
        output,
    });
    Ok(Run {
        ended,
        running,
        stop: if stalled { Stop::Stalled } else { Stop::Exited(status) },
        seconds: start.elapsed().as_secs_f64(),
        tail: tail.into_iter().collect(),
    })
}

fn kill_group(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        // The group may be gone already: nothing left to kill.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
