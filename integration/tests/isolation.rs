//! Isolation between the clients of one daemon (issue: "A client cannot reach another
//! client's memory or objects: handles, mmap offsets, doorbell offsets, event ids and queue
//! ids belonging to another process are refused. Allocations beyond the config's VRAM fail
//! with ENOMEM for that client like the driver, and the daemon's own memory stays bounded with
//! 16 clients each allocating up to the limit").
//!
//! Every client is `programs/kfd_isolation.c` under `rocjitsu --attach`: real processes on one
//! real daemon, talking to `/dev/kfd` and the render node with raw ioctls as libhsakmt does.
//! The errnos asserted are the simulator's, which are the Linux driver's: a buffer handle,
//! event id or queue id the caller does not own is EINVAL (`kfd_ioctl_free_memory_of_gpu`,
//! `kfd_event_destroy`, `pqm_destroy_queue`, `pqm_set_gws`), UPDATE_QUEUE and SET_CU_MASK of a
//! queue it does not own EFAULT (`pqm_update_queue_properties`, `pqm_update_mqd`), an mmap
//! offset naming no buffer of the caller is EINVAL (`drm_gem_mmap`), and an allocation beyond
//! the device's VRAM is ENOMEM (`amdgpu_amdkfd_reserve_mem_limit`).

use integration::{c_program, run, Daemon, Outcome};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `local_mem_size` of `configs/gfx90a_mi210_kmd.json`, the `mi210` config's VRAM.
const MI210_VRAM: u64 = 68_702_699_520;
const GIB: u64 = 1 << 30;
const DEADLINE: Duration = Duration::from_secs(120);
/// What the daemon may hold resident, whatever its clients allocate.
const RSS_BOUND_KIB: u64 = 200 * 1024;

/// A client started with stdin and stdout piped, whose lines the test reads as they come and
/// which goes on when the test says so (or when its stdin closes).
struct Client {
    what: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Everything it printed so far.
    stdout: String,
    stderr: Option<JoinHandle<String>>,
    started: Instant,
}

impl Client {
    /// `kfd_isolation ARGS` as a client of `d`.
    fn start(d: &Daemon, exe: &Path, args: &[&str], what: impl Into<String>) -> Client {
        let what = what.into();
        let mut cmd = d.attach();
        cmd.arg("--").arg(exe).args(args);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let stdin = child.stdin.take();
        Client { what, child, stdin, lines, stdout: String::new(), stderr: Some(stderr), started: Instant::now() }
    }

    /// Waits for the first line starting with `prefix`; panics with everything the client
    /// printed if it ends or `within` passes first.
    fn line_starting(&mut self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stdout.push_str(&line);
                    self.stdout.push('\n');
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!("{}: no `{prefix}` line within {within:?}; stdout so far:\n{}", self.what, self.stdout)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                    let err = self.stderr.take().and_then(|t| t.join().ok()).unwrap_or_default();
                    panic!(
                        "{}: ended ({status}) without a `{prefix}` line:\nstdout:\n{}\nstderr:\n{err}",
                        self.what, self.stdout
                    )
                }
            }
        }
    }

    fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").unwrap_or_else(|e| panic!("{}: cannot write to its stdin: {e}", self.what));
        stdin.flush().unwrap();
    }

    /// Closes its stdin and collects the rest of its output and its exit status, killing it
    /// after `within`.
    fn finish(mut self, within: Duration) -> Outcome {
        drop(self.stdin.take());
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stdout.push_str(&line);
                    self.stdout.push('\n');
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!("{}: did not finish within {within:?}; stdout:\n{}", self.what, self.stdout)
                }
            }
        }
        let status = self.child.wait().expect("the client's exit status");
        let stderr = self.stderr.take().and_then(|t| t.join().ok()).unwrap_or_default();
        Outcome { status, stdout: self.stdout, stderr, cpu: Duration::ZERO, wall: self.started.elapsed() }
    }
}

/// The `key=value` fields of a line.
fn fields(line: &str) -> HashMap<&str, &str> {
    line.split_whitespace().filter_map(|f| f.split_once('=')).collect()
}

fn num(fields: &HashMap<&str, &str>, key: &str) -> u64 {
    fields.get(key).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no number {key} in {fields:?}"))
}

/// Samples the daemon's resident memory every 10 ms until `stop`; the largest value seen.
fn sample_rss(d: &Daemon, stop: &AtomicBool, peak: &AtomicU64) {
    while !stop.load(Ordering::Acquire) {
        peak.fetch_max(d.rss_kib(), Ordering::AcqRel);
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_client_cannot_reach_another_clients_objects() {
    let exe = c_program("kfd_isolation", &[]);
    let d = Daemon::start("mi210");

    // A: a VRAM and a GTT buffer with a pattern, a signal event, an AQL queue, its doorbell
    // and events pages; it publishes their numbers and waits.
    let mut owner = Client::start(&d, &exe, &["owner"], "owner");
    let published = owner.line_starting("OWNER ", DEADLINE);
    println!("{published}");
    let values: Vec<&str> = published.split_whitespace().skip(1).collect();

    // B, another client of the same daemon, uses each of A's numbers.
    let mut cmd = d.attach();
    cmd.arg("--").arg(&exe).arg("intruder").args(&values);
    let b = run(cmd, DEADLINE);
    let collisions = b.stdout.lines().find(|l| l.starts_with("collisions ")).map(fields).unwrap_or_default();
    println!("intruder's own objects numbered like the owner's: {collisions:?}");
    let collides = |k: &str| collisions.get(k) == Some(&"1");
    let mut passes = vec![
        // Phase 1: B owns nothing; each of A's numbers is refused with EINVAL.
        "intruder_free_vram",
        "intruder_free_gtt",
        "intruder_map_vram",
        "intruder_map_gtt",
        "intruder_unmap_vram",
        "intruder_mmap_vram_page",
        "intruder_mmap_vram_whole",
        "intruder_mmap_gtt",
        "intruder_set_event",
        "intruder_reset_event",
        "intruder_poll_event",
        "intruder_wait_event",
        "intruder_destroy_event",
        "intruder_event_page_handle",
        "intruder_destroy_queue",
        "intruder_update_queue",
        "intruder_set_cu_mask",
        "intruder_alloc_queue_gws",
        "intruder_queue_on_owner_ring",
        // A's doorbell / events offsets map B's own pages (B writes there).
        "intruder_doorbell_page_is_own",
        "intruder_events_page_is_own",
        // Phase 2: B's own objects with A's numbers; B's operations reach only them.
        "intruder_own_event_set",
        "intruder_mmap_vram_offset_after_alloc",
        "intruder_mmap_gtt_offset_after_alloc",
        "intruder_own_free",
        "intruder_own_free_again",
        "intruder_own_map",
        "intruder_own_update_queue",
        "intruder_own_destroy_queue",
        "intruder_own_destroy_queue_again",
        "intruder_own_destroy_event",
        "intruder_own_destroy_event_again",
    ];
    if collides("event") {
        passes.extend(["intruder_own_event_wait", "intruder_own_event_set_again"]);
    }
    if collides("vram_handle") {
        passes.push("intruder_own_unmap");
    }
    b.assert_passes("the intruder (client B)", &passes);

    // A: everything intact and still working.
    owner.say("check");
    let a = owner.finish(DEADLINE);
    a.assert_passes(
        "the owner (client A)",
        &[
            "owner_vram_intact",
            "owner_gtt_intact",
            "owner_doorbells_untouched",
            "owner_events_page_untouched",
            "owner_queue_untouched",
            "owner_event_not_signaled",
            "owner_event_set_and_wait",
            "owner_queue_runs",
            "owner_queue_destroyed",
            "owner_event_destroyed",
            "owner_vram_still_mapped",
            "owner_gtt_still_mapped",
            "owner_vram_freed",
            "owner_gtt_freed",
        ],
    );
    let log = d.log();
    assert!(!log.contains("panicked"), "the daemon panicked:\n{log}");
    assert_eq!(d.stop().code(), Some(0), "the daemon's exit");
}

#[test]
fn vram_beyond_the_config_fails_with_enomem() {
    let exe = c_program("kfd_isolation", &[]);
    let d = Daemon::start("mi210");
    let mut cmd = d.attach();
    cmd.arg("--").arg(&exe).args(["limit", &MI210_VRAM.to_string()]);
    let o = run(cmd, DEADLINE);
    o.assert_passes(
        "one client at the VRAM limit",
        &[
            "limit_available_is_vram",
            "limit_oversize_enomem",
            "limit_oversize_took_nothing",
            "limit_one_gib",
            "limit_available_after_one_gib",
            "limit_one_page_too_many",
            "limit_exactly_the_rest",
            "limit_available_zero",
            "limit_full_enomem",
            "limit_gtt_still_allocates",
            "limit_touch_last_page",
            "limit_free_one_gib",
            "limit_available_after_free",
            "limit_realloc_one_gib",
            "limit_free_one",
            "limit_free_rest",
            "limit_all_back",
        ],
    );
    // 64 GiB allocated and one page of it written: the daemon holds none of it.
    let rss = d.rss_kib();
    println!("daemon RSS after the limit client: {rss} KiB");
    assert!(rss < RSS_BOUND_KIB, "the daemon's RSS is {rss} KiB");
    assert_eq!(d.stop().code(), Some(0), "the daemon's exit");
}

#[test]
fn sixteen_clients_filling_the_vram_keep_the_daemon_small() {
    let exe = c_program("kfd_isolation", &[]);
    let d = Daemon::start("mi210");
    let baseline = d.rss_kib();
    let vram = MI210_VRAM.to_string();
    let stop = AtomicBool::new(false);
    let peak = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| sample_rss(&d, &stop, &peak));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // 16 clients at once, each allocating 1 GiB VRAM buffers (one page touched each)
            // until ENOMEM; each then holds its buffers until its stdin closes.
            let mut hogs: Vec<Client> =
                (0..16).map(|i| Client::start(&d, &exe, &["hog", "1024", &vram], format!("hog {i}"))).collect();
            let reports: Vec<HashMap<&str, u64>> = hogs
                .iter_mut()
                .map(|h| {
                    let line = h.line_starting("HOG ", DEADLINE);
                    let f = fields(&line);
                    ["count", "avail_before", "avail_at_enomem"].into_iter().map(|k| (k, num(&f, k))).collect()
                })
                .collect();
            let during = d.rss_kib();
            let counts: Vec<u64> = reports.iter().map(|r| r["count"]).collect();
            let total: u64 = counts.iter().sum();
            println!("1 GiB buffers per client: {counts:?} (total {total} GiB); daemon RSS while held: {during} KiB");
            // Together never more than the GPU has: exactly the whole GiBs of it.
            assert!(total * GIB <= MI210_VRAM, "{total} GiB granted on a GPU of {MI210_VRAM} bytes");
            assert_eq!(total, MI210_VRAM / GIB, "every whole GiB of VRAM is granted once: {counts:?}");
            for (i, r) in reports.iter().enumerate() {
                assert!(r["avail_before"] <= MI210_VRAM, "hog {i}: {r:?}");
                assert!(r["avail_at_enomem"] < GIB, "hog {i} got ENOMEM with a GiB still available: {r:?}");
            }
            assert!(during < RSS_BOUND_KIB, "the daemon's RSS with 16 clients holding the VRAM: {during} KiB");
            for h in hogs {
                let what = h.what.clone();
                h.finish(DEADLINE).assert_passes(&what, &["hog_enomem", "hog_still_works", "hog_pages_kept"]);
            }
            // They are gone: a new client gets the whole VRAM, in one buffer.
            let mut cmd = d.attach();
            cmd.arg("--").arg(&exe).args(["full", &vram]);
            let o = run(cmd, DEADLINE);
            o.assert_passes(
                "a client after the 16",
                &["full_available_is_vram", "full_alloc_all", "full_touch_last_page", "full_then_enomem", "full_free"],
            );
            println!("{}", o.stdout.lines().find(|l| l.starts_with("full_waited=")).unwrap_or(""));
        }));
        stop.store(true, Ordering::Release);
        if let Err(e) = result {
            std::panic::resume_unwind(e);
        }
    });
    let after = d.rss_kib();
    let peak = peak.load(Ordering::Acquire);
    println!("daemon RSS: {baseline} KiB at start, peak {peak} KiB, {after} KiB after the clients");
    assert!(peak < RSS_BOUND_KIB, "the daemon's RSS peaked at {peak} KiB");
    assert!(after < RSS_BOUND_KIB, "the daemon's RSS after the clients: {after} KiB");
    let log = d.log();
    assert!(!log.contains("panicked"), "the daemon panicked:\n{log}");
    assert_eq!(d.stop().code(), Some(0), "the daemon's exit");
}
