//! Results of a suite as they come: one JSON line per finished test and per program run,
//! appended and flushed at once, so an interrupted run resumes where it stopped.

use super::gtest::Status;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Record {
    Case {
        program: String,
        test: String,
        status: Status,
        seconds: f64,
    },
    /// `lanes`: how many program runs went on at once (`--jobs`); each counts that share of
    /// its time toward the suite's wall time.
    Run {
        program: String,
        tests: usize,
        seconds: f64,
        stop: String,
        #[serde(default = "one_lane", skip_serializing_if = "is_one_lane")]
        lanes: usize,
    },
}

fn one_lane() -> usize {
    1
}

fn is_one_lane(lanes: &usize) -> bool {
    *lanes == 1
}

pub struct Store {
    file: std::fs::File,
    /// (program, test) → (status, seconds).
    pub cases: HashMap<(String, String), (Status, f64)>,
    /// Wall time of the program runs so far (of runs side by side, each one's share).
    pub run_seconds: f64,
    pub runs: usize,
    /// Programs (or operations) with at least one run recorded.
    pub ran: std::collections::HashSet<String>,
    /// How each program's latest run ended (`exit 0`, `signal 9`, …).
    pub last_stop: HashMap<String, String>,
}

impl Store {
    /// Opens (or, with `fresh`, starts again) the results at `path`. A line cut short by an
    /// interruption is ignored: that test runs again.
    pub fn open(path: &Path, fresh: bool) -> Result<Store> {
        if fresh {
            let _ = std::fs::remove_file(path);
        }
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut store = Store {
            file: std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))?,
            cases: HashMap::new(),
            run_seconds: 0.0,
            runs: 0,
            ran: Default::default(),
            last_stop: HashMap::new(),
        };
        for record in text.lines().filter_map(|l| serde_json::from_str::<Record>(l).ok()) {
            store.apply(record);
        }
        // End a line cut short, so the next record starts a line of its own.
        if !text.is_empty() && !text.ends_with('\n') {
            store.file.write_all(b"\n")?;
        }
        Ok(store)
    }

    fn apply(&mut self, record: Record) {
        match record {
            Record::Case { program, test, status, seconds } => {
                self.cases.insert((program, test), (status, seconds));
            }
            Record::Run { program, seconds, lanes, stop, .. } => {
                self.run_seconds += seconds / lanes.max(1) as f64;
                self.runs += 1;
                self.last_stop.insert(program.clone(), stop);
                self.ran.insert(program);
            }
        }
    }

    pub fn has(&self, program: &str, test: &str) -> bool {
        self.cases.contains_key(&(program.to_string(), test.to_string()))
    }

    pub fn ran(&self, program: &str) -> bool {
        self.ran.contains(program)
    }

    pub fn record(&mut self, record: Record) -> Result<()> {
        let mut line = serde_json::to_string(&record)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.apply(record);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_survive_an_interrupted_line() {
        let dir = std::env::temp_dir().join(format!("xtask-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        let mut s = Store::open(&path, true).unwrap();
        s.record(Record::Case { program: "p".into(), test: "a.b".into(), status: Status::Passed, seconds: 1.5 })
            .unwrap();
        s.record(Record::Run { program: "p".into(), tests: 1, seconds: 2.0, stop: "exit 0".into(), lanes: 1 }).unwrap();
        // Two runs side by side count half their time each; a line without `lanes` is one.
        s.record(Record::Run { program: "p".into(), tests: 1, seconds: 3.0, stop: "exit 0".into(), lanes: 2 }).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"kind\":\"run\",\"program\":\"p\",\"tests\":1,\"seconds\":1.0,\"stop\":\"exit 0\"}\n").unwrap();
        drop(f);
        drop(s);
        // An interruption in the middle of a line.
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"kind\":\"case\",\"program\":\"p\",\"te").unwrap();
        let mut s = Store::open(&path, false).unwrap();
        s.record(Record::Case { program: "p".into(), test: "a.c".into(), status: Status::Failed, seconds: 0.5 })
            .unwrap();
        let s = Store::open(&path, false).unwrap();
        assert_eq!(s.cases[&("p".to_string(), "a.c".to_string())].0, Status::Failed, "the next line is whole");
        assert_eq!(s.cases[&("p".to_string(), "a.b".to_string())], (Status::Passed, 1.5));
        assert!(s.has("p", "a.b") && !s.has("p", "a.d"));
        assert_eq!((s.runs, s.run_seconds), (3, 2.0 + 1.5 + 1.0));
        assert!(Store::open(&path, true).unwrap().cases.is_empty(), "fresh starts again");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
