//! Run statistics and the timeline, written at the application's exit: `ROCJITSU_STATS=1`
//! (`rocjitsu --stats`) prints a table to stderr, `ROCJITSU_STATS_JSON=FILE` (`--stats-json
//! FILE`) writes the same as JSON, `ROCJITSU_TRACE=FILE` (`--trace FILE`) writes a Chrome
//! trace-event JSON timeline for ui.perfetto.dev. The simulator keeps both per KFD process
//! (in this process in local mode, in the daemon otherwise, so each client gets its own);
//! this module asks for them when the process opens `/dev/kfd`, collects them when it closes
//! it or exits, and writes them once.
//!
//! The exit handler is registered with `atexit` when `/dev/kfd` is first opened — after the
//! HIP runtime's own static destructors were registered, so it runs before them, while the
//! KFD process is still open.

use crate::driver::OpenKfd;
use sim::gpu::stats::StatsReport;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Once, OnceLock, Weak};

/// What the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Print the table to stderr.
    pub print: bool,
    /// Write the JSON document here.
    pub json: Option<PathBuf>,
    /// Write the timeline here.
    pub trace: Option<PathBuf>,
}

impl Wanted {
    /// From `ROCJITSU_STATS` (any value but empty or `0`), `ROCJITSU_STATS_JSON` and
    /// `ROCJITSU_TRACE`.
    pub fn from_env(stats: Option<&str>, json: Option<&str>, trace: Option<&str>) -> Option<Wanted> {
        let print = stats.is_some_and(|v| !v.is_empty() && v != "0");
        let path = |p: Option<&str>| p.filter(|p| !p.is_empty()).map(PathBuf::from);
        let (json, trace) = (path(json), path(trace));
        (print || json.is_some() || trace.is_some()).then_some(Wanted { print, json, trace })
    }

    fn stats(&self) -> bool {
        self.print || self.json.is_some()
    }
}

fn wanted() -> Option<&'static Wanted> {
    static WANTED: OnceLock<Option<Wanted>> = OnceLock::new();
    WANTED
        .get_or_init(|| {
            let var = |name| std::env::var(name).ok();
            Wanted::from_env(
                var("ROCJITSU_STATS").as_deref(),
                var("ROCJITSU_STATS_JSON").as_deref(),
                var("ROCJITSU_TRACE").as_deref(),
            )
        })
        .as_ref()
}

/// The reports collected so far, for the process whose id is kept with them (a forked
/// child inherits the parent's and must not print them).
struct Collected {
    pid: u32,
    reports: Vec<StatsReport>,
    /// The timeline of the last KFD process that closed.
    trace: Option<Vec<u8>>,
    /// The KFD process still open, asked at exit.
    live: Option<Weak<dyn OpenKfd>>,
}

static COLLECTED: Mutex<Option<Collected>> = Mutex::new(None);

fn with_collected<R>(f: impl FnOnce(&mut Collected) -> R) -> R {
    let mut guard = COLLECTED.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    let c = guard.get_or_insert_with(|| Collected { pid, reports: Vec::new(), trace: None, live: None });
    if c.pid != pid {
        *c = Collected { pid, reports: Vec::new(), trace: None, live: None };
    }
    f(c)
}

/// A KFD process was opened: start its statistics and make sure they are written at exit.
pub fn opened(kfd: &Arc<dyn OpenKfd>) {
    let Some(wanted) = wanted() else { return };
    if wanted.stats() {
        if let Err(errno) = kfd.enable_stats() {
            tracing::warn!("rocjitsu: cannot start the run statistics (errno {errno})");
        }
    }
    if wanted.trace.is_some() {
        if let Err(errno) = kfd.enable_trace() {
            tracing::warn!("rocjitsu: cannot start the timeline (errno {errno})");
        }
    }
    with_collected(|c| c.live = Some(Arc::downgrade(kfd)));
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds (it catches panics).
        if unsafe { libc::atexit(at_exit) } != 0 {
            tracing::warn!("rocjitsu: cannot register the statistics' exit handler");
        }
    });
}

/// A KFD process is closing: keep its statistics before they go with it.
pub fn closing(kfd: &dyn OpenKfd) {
    let Some(wanted) = wanted() else { return };
    collect(wanted, kfd);
    with_collected(|c| c.live = None);
}

/// Takes what `kfd` kept into the collection.
fn collect(wanted: &Wanted, kfd: &dyn OpenKfd) {
    let report = wanted.stats().then(|| kfd.stats_report()).flatten();
    let trace = wanted.trace.as_ref().and_then(|_| kfd.trace_document(&process_name()));
    with_collected(|c| {
        c.reports.extend(report);
        if trace.is_some() {
            c.trace = trace;
        }
    });
}

/// The process track's name in local mode: the program and pid.
fn process_name() -> String {
    let program = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    format!("{} (pid {})", program.trim(), std::process::id())
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(write_at_exit);
}

fn write_at_exit() {
    let Some(wanted) = wanted() else { return };
    let live = with_collected(|c| c.live.take().and_then(|w| w.upgrade()));
    if let Some(kfd) = live {
        collect(wanted, &*kfd);
    }
    let (reports, trace) = with_collected(|c| (std::mem::take(&mut c.reports), c.trace.take()));
    let write = |path: &PathBuf, what: &str, bytes: &[u8]| {
        let path = for_process(path, std::process::id());
        if let Err(e) = std::fs::write(&path, bytes) {
            let _ = writeln!(std::io::stderr(), "rocjitsu: cannot write the {what} to {}: {e}", path.display());
        }
    };
    if let (Some(path), Some(trace)) = (&wanted.trace, trace) {
        write(path, "timeline", &trace);
    }
    let Some(report) = merge(reports) else { return };
    if wanted.print {
        let _ = std::io::stderr().write_all(report.table().as_bytes());
    }
    if let Some(path) = &wanted.json {
        write(path, "statistics", &report.to_json());
    }
}

/// `path` with each `%p` replaced by `pid`: the processes of one application (workers,
/// ranks) each write their own file when the path asks for it, as core patterns do.
fn for_process(path: &std::path::Path, pid: u32) -> PathBuf {
    let text = path.to_string_lossy();
    if text.contains("%p") {
        PathBuf::from(text.replace("%p", &pid.to_string()))
    } else {
        path.to_path_buf()
    }
}

/// One report for the process: a process that closed and reopened `/dev/kfd` had several
/// KFD processes, and their numbers add up.
fn merge(reports: Vec<StatsReport>) -> Option<StatsReport> {
    let mut it = reports.into_iter();
    let mut all = it.next()?;
    for r in it {
        all.merge(r);
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percent_p_in_a_path_becomes_the_pid() {
        assert_eq!(for_process(std::path::Path::new("/tmp/stats-%p.json"), 42), PathBuf::from("/tmp/stats-42.json"));
        assert_eq!(for_process(std::path::Path::new("/tmp/trace.json"), 42), PathBuf::from("/tmp/trace.json"));
    }

    #[test]
    fn the_environment_asks_for_a_table_a_file_or_nothing() {
        assert_eq!(Wanted::from_env(None, None, None), None);
        assert_eq!(Wanted::from_env(Some("0"), Some(""), Some("")), None);
        let table = Wanted::from_env(Some("1"), None, None).unwrap();
        assert_eq!(table, Wanted { print: true, json: None, trace: None });
        assert!(table.stats());
        assert_eq!(
            Wanted::from_env(Some(""), Some("/tmp/s.json"), None),
            Some(Wanted { print: false, json: Some("/tmp/s.json".into()), trace: None })
        );
        let trace = Wanted::from_env(None, None, Some("/tmp/t.json")).unwrap();
        assert_eq!(trace.trace.as_deref(), Some(std::path::Path::new("/tmp/t.json")));
        assert!(!trace.stats(), "a trace alone keeps no statistics");
    }
}
