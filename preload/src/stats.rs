//! Run statistics at the application's exit: `ROCJITSU_STATS=1` (`rocjitsu --stats`) prints
//! a table to stderr, `ROCJITSU_STATS_JSON=FILE` (`--stats-json FILE`) writes the same as
//! JSON. The simulator keeps the numbers per KFD process (in this process in local mode, in
//! the daemon otherwise, so each client gets its own); this module asks for them when the
//! process opens `/dev/kfd`, collects them when it closes it or exits, and writes them once.
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
}

impl Wanted {
    /// From `ROCJITSU_STATS` (any value but empty or `0`) and `ROCJITSU_STATS_JSON`.
    pub fn from_env(stats: Option<&str>, json: Option<&str>) -> Option<Wanted> {
        let print = stats.is_some_and(|v| !v.is_empty() && v != "0");
        let json = json.filter(|p| !p.is_empty()).map(PathBuf::from);
        (print || json.is_some()).then_some(Wanted { print, json })
    }
}

fn wanted() -> Option<&'static Wanted> {
    static WANTED: OnceLock<Option<Wanted>> = OnceLock::new();
    WANTED
        .get_or_init(|| {
            let var = |name| std::env::var(name).ok();
            Wanted::from_env(var("ROCJITSU_STATS").as_deref(), var("ROCJITSU_STATS_JSON").as_deref())
        })
        .as_ref()
}

/// The reports collected so far, for the process whose id is kept with them (a forked
/// child inherits the parent's and must not print them).
struct Collected {
    pid: u32,
    reports: Vec<StatsReport>,
    /// The KFD process still open, asked at exit.
    live: Option<Weak<dyn OpenKfd>>,
}

static COLLECTED: Mutex<Option<Collected>> = Mutex::new(None);

fn with_collected<R>(f: impl FnOnce(&mut Collected) -> R) -> R {
    let mut guard = COLLECTED.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    let c = guard.get_or_insert_with(|| Collected { pid, reports: Vec::new(), live: None });
    if c.pid != pid {
        *c = Collected { pid, reports: Vec::new(), live: None };
    }
    f(c)
}

/// A KFD process was opened: start its statistics and make sure they are written at exit.
pub fn opened(kfd: &Arc<dyn OpenKfd>) {
    if wanted().is_none() {
        return;
    }
    if let Err(errno) = kfd.enable_stats() {
        tracing::warn!("rocjitsu: cannot start the run statistics (errno {errno})");
        return;
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
    if wanted().is_none() {
        return;
    }
    if let Some(report) = kfd.stats_report() {
        with_collected(|c| {
            c.reports.push(report);
            c.live = None;
        });
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(write_at_exit);
}

fn write_at_exit() {
    let Some(wanted) = wanted() else { return };
    let live = with_collected(|c| c.live.take().and_then(|w| w.upgrade()));
    if let Some(kfd) = live {
        if let Some(report) = kfd.stats_report() {
            with_collected(|c| c.reports.push(report));
        }
    }
    let reports = with_collected(|c| std::mem::take(&mut c.reports));
    let Some(report) = merge(reports) else { return };
    if wanted.print {
        let _ = std::io::stderr().write_all(report.table().as_bytes());
    }
    if let Some(path) = &wanted.json {
        if let Err(e) = std::fs::write(path, report.to_json()) {
            let _ = writeln!(std::io::stderr(), "rocjitsu: cannot write the statistics to {}: {e}", path.display());
        }
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
    fn the_environment_asks_for_a_table_a_file_or_nothing() {
        assert_eq!(Wanted::from_env(None, None), None);
        assert_eq!(Wanted::from_env(Some("0"), Some("")), None);
        assert_eq!(Wanted::from_env(Some("1"), None), Some(Wanted { print: true, json: None }));
        assert_eq!(
            Wanted::from_env(Some(""), Some("/tmp/s.json")),
            Some(Wanted { print: false, json: Some("/tmp/s.json".into()) })
        );
    }
}
