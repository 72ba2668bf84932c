//! A timeline of one process on the simulated GPU (`ROCJITSU_TRACE=FILE`, `rocjitsu --trace`),
//! written in the Chrome trace-event JSON format that ui.perfetto.dev and chrome://tracing open:
//! a track per queue with its dispatches (kernel name, grid, workgroup size), per SDMA queue
//! with its copies, per host worker with the workgroup turns it ran, and the process's ioctls.
//!
//! Bounded: the log is a ring of the newest [`DEFAULT_CAPACITY`] events; older ones are
//! dropped and their number is written into the trace's metadata. Recording an event takes a
//! short lock; nothing is recorded for a process that did not ask for a trace.

use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Events kept (the newest; about 150 bytes each in the written file).
pub const DEFAULT_CAPACITY: usize = 500_000;

/// Where an event is drawn.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    /// A compute (AQL) queue: its dispatches.
    Queue { gpu: usize, queue: u32 },
    /// An SDMA queue: its copies and fills.
    Sdma { gpu: usize, queue: u32 },
    /// A host thread that runs workgroups (a compute-unit worker, or a command processor
    /// helping), by thread name.
    Worker(Arc<str>),
    /// The process's ioctls.
    Ioctls,
}

impl Track {
    fn label(&self) -> String {
        match self {
            Track::Queue { gpu, queue } => format!("GPU {gpu} queue {queue}"),
            Track::Sdma { gpu, queue } => format!("GPU {gpu} SDMA queue {queue}"),
            Track::Worker(name) => format!("worker {name}"),
            Track::Ioctls => "ioctls".to_string(),
        }
    }

    /// Queues first, then copy engines, workers, ioctls.
    fn sort_index(&self) -> u32 {
        match self {
            Track::Queue { .. } => 0,
            Track::Sdma { .. } => 1,
            Track::Worker(_) => 2,
            Track::Ioctls => 3,
        }
    }
}

/// What an event says besides its name.
#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    Dispatch {
        dispatch_id: u64,
        grid: [u32; 3],
        workgroup: [u32; 3],
        /// Microseconds of the dispatch the translator spent compiling its kernel's code:
        /// how much of a first dispatch is the price of translation.
        translation_us: u64,
    },
    /// A worker's turn: workgroup `index` and, when it carried a batch, the next ones
    /// (`count` in all, one after another).
    Workgroup {
        dispatch_id: u64,
        index: u64,
        count: u64,
    },
    Copy {
        bytes: u64,
    },
    /// An ioctl, drawn as an instant at its start: blocking waits of several threads would
    /// overlap as slices on one track.
    Ioctl {
        result: i32,
        micros: u64,
    },
}

#[derive(Clone, Debug)]
struct Event {
    track: Track,
    name: Arc<str>,
    start: Instant,
    end: Instant,
    detail: Detail,
}

/// One process's trace while it runs.
#[derive(Debug)]
pub struct TraceLog {
    epoch: Instant,
    capacity: usize,
    inner: Mutex<Ring>,
}

#[derive(Debug, Default)]
struct Ring {
    events: VecDeque<Event>,
    dropped: u64,
    /// Kernel names by kernel object (read from GPU memory once).
    names: HashMap<u64, Arc<str>>,
}

impl Default for TraceLog {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl TraceLog {
    pub fn with_capacity(capacity: usize) -> TraceLog {
        TraceLog { epoch: Instant::now(), capacity: capacity.max(1), inner: Mutex::new(Ring::default()) }
    }

    /// The name of the kernel at `kernel_object`, asking `resolve` the first time only.
    pub fn kernel_name(&self, kernel_object: u64, resolve: impl FnOnce() -> String) -> Arc<str> {
        if let Some(n) = self.lock().names.get(&kernel_object) {
            return n.clone();
        }
        let name: Arc<str> = resolve().into();
        self.lock().names.entry(kernel_object).or_insert(name).clone()
    }

    /// Records an event from `start` to `end` (equal for an instant).
    pub fn record(&self, track: Track, name: Arc<str>, start: Instant, end: Instant, detail: Detail) {
        let mut ring = self.lock();
        if ring.events.len() == self.capacity {
            ring.events.pop_front();
            ring.dropped += 1;
        }
        ring.events.push_back(Event { track, name, start, end, detail });
    }

    /// The trace as a Chrome trace-event JSON document, the events of process `pid` named
    /// `process_name`.
    pub fn to_chrome_json(&self, pid: u32, process_name: &str) -> Vec<u8> {
        let ring = self.lock();
        let micros = |t: Instant| t.saturating_duration_since(self.epoch).as_nanos() as f64 / 1e3;
        let mut tracks: Vec<&Track> = ring.events.iter().map(|e| &e.track).collect();
        tracks.sort();
        tracks.dedup();
        let tid_of: HashMap<&Track, usize> = tracks.iter().enumerate().map(|(i, t)| (*t, i + 1)).collect();
        let mut events: Vec<Value> = Vec::with_capacity(ring.events.len() + 2 * tracks.len() + 1);
        events.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": process_name}}));
        for (t, tid) in tracks.iter().map(|t| (t, tid_of[t])) {
            events.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": t.label()}}));
            let order = t.sort_index() as usize * 100_000 + tid;
            events.push(
                json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": order}}),
            );
        }
        for e in &ring.events {
            let args = match &e.detail {
                Detail::Dispatch { dispatch_id, grid, workgroup, translation_us } => {
                    json!({"dispatch": dispatch_id, "grid": grid, "workgroup": workgroup, "translation_us": translation_us})
                }
                Detail::Workgroup { dispatch_id, index, count } => {
                    json!({"dispatch": dispatch_id, "workgroup": index, "workgroups": count})
                }
                Detail::Copy { bytes } => json!({"bytes": bytes}),
                Detail::Ioctl { result, micros } => json!({"result": result, "took_us": micros}),
            };
            let ts = micros(e.start);
            let mut v = json!({"name": &*e.name, "pid": pid, "tid": tid_of[&e.track], "ts": ts, "args": args});
            if e.end > e.start {
                v["ph"] = "X".into();
                v["dur"] = (micros(e.end) - ts).into();
            } else {
                v["ph"] = "i".into();
                v["s"] = "t".into();
            }
            events.push(v);
        }
        let doc = json!({
            "traceEvents": events,
            "displayTimeUnit": "ns",
            "metadata": {"rocjitsu": {"events_kept": ring.events.len(), "events_dropped": ring.dropped, "ring_capacity": self.capacity}},
        });
        serde_json::to_vec(&doc).expect("a trace of numbers and strings serialises")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn parse(log: &TraceLog) -> Value {
        serde_json::from_slice(&log.to_chrome_json(7, "app")).unwrap()
    }

    #[test]
    fn events_land_on_named_tracks_with_times_in_microseconds() {
        let log = TraceLog::default();
        let t0 = log.epoch + Duration::from_micros(10);
        let t1 = t0 + Duration::from_micros(25);
        let name = log.kernel_name(0x1000, || "vadd".into());
        let detail = Detail::Dispatch { dispatch_id: 3, grid: [256, 1, 1], workgroup: [64, 1, 1], translation_us: 7 };
        log.record(Track::Queue { gpu: 0, queue: 2 }, name, t0, t1, detail);
        log.record(Track::Ioctls, "CREATE_QUEUE".into(), t0, t0, Detail::Ioctl { result: 0, micros: 1 });
        log.record(Track::Sdma { gpu: 0, queue: 5 }, "copy".into(), t0, t1, Detail::Copy { bytes: 4096 });
        let batch = Detail::Workgroup { dispatch_id: 3, index: 8, count: 4 };
        log.record(Track::Worker("rocjitsu-cu0.1".into()), "vadd".into(), t0, t1, batch);
        let doc = parse(&log);
        let events = doc["traceEvents"].as_array().unwrap();
        let thread_name = |tid: &Value| {
            events.iter().find(|e| e["name"] == "thread_name" && &e["tid"] == tid).unwrap()["args"]["name"].clone()
        };
        let vadd = events.iter().find(|e| e["name"] == "vadd").unwrap();
        assert_eq!(
            (vadd["ph"].as_str(), vadd["ts"].as_f64(), vadd["dur"].as_f64()),
            (Some("X"), Some(10.0), Some(25.0))
        );
        assert_eq!(vadd["args"]["grid"], json!([256, 1, 1]));
        assert_eq!(vadd["args"]["translation_us"], json!(7));
        let turn = events.iter().find(|e| e["name"] == "vadd" && e["args"]["workgroups"].is_u64()).unwrap();
        assert_eq!((turn["args"]["workgroup"].as_u64(), turn["args"]["workgroups"].as_u64()), (Some(8), Some(4)));
        assert_eq!(thread_name(&vadd["tid"]), "GPU 0 queue 2");
        let ioctl = events.iter().find(|e| e["name"] == "CREATE_QUEUE").unwrap();
        assert_eq!((ioctl["ph"].as_str(), thread_name(&ioctl["tid"])), (Some("i"), json!("ioctls")));
        let copy = events.iter().find(|e| e["name"] == "copy").unwrap();
        assert_eq!(
            (copy["args"]["bytes"].as_u64(), thread_name(&copy["tid"])),
            (Some(4096), json!("GPU 0 SDMA queue 5"))
        );
        assert!(events.iter().any(|e| e["name"] == "process_name" && e["args"]["name"] == "app" && e["pid"] == 7));
        assert_eq!(doc["metadata"]["rocjitsu"]["events_dropped"], 0);
    }

    #[test]
    fn the_ring_keeps_the_newest_and_counts_the_dropped() {
        let log = TraceLog::with_capacity(3);
        for i in 0..5 {
            let t = log.epoch + Duration::from_micros(i);
            log.record(Track::Ioctls, format!("e{i}").into(), t, t, Detail::Ioctl { result: 0, micros: 1 });
        }
        let doc = parse(&log);
        let names: Vec<_> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "i")
            .map(|e| e["name"].clone())
            .collect();
        assert_eq!(names, ["e2", "e3", "e4"]);
        assert_eq!(doc["metadata"]["rocjitsu"]["events_dropped"], 2);
    }

    #[test]
    fn a_kernel_name_is_resolved_once() {
        let log = TraceLog::default();
        let mut asked = 0;
        for _ in 0..3 {
            log.kernel_name(0x40, || {
                asked += 1;
                "k".into()
            });
        }
        assert_eq!(asked, 1);
    }
}
