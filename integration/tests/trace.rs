//! The timeline (issue 16): `rocjitsu --trace FILE` on a program with two streams and an
//! event between them. The Chrome trace-event JSON must put each dispatch, by kernel name, on
//! its stream's queue track, in the order the streams require (in order within a stream; the
//! kernel after `hipStreamWaitEvent` after the kernel it waits for), with workgroup turns on
//! worker tracks, copies on an SDMA track and the ioctls as instants. ROCm 5.2 and sid, local
//! and `--daemon`.

use integration::{Mode, Outcome, Stack};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

struct Slice {
    track: String,
    start: f64,
    end: f64,
}

fn trace_of(stack: Stack, mode: Mode) -> (Outcome, Value) {
    let exe = stack.hip_program("two_streams", "gfx90a", &[]);
    let dir = tempfile::Builder::new().prefix("rocjitsu-trace").tempdir_in("/tmp").unwrap();
    let path = dir.path().join("trace.json");
    let mut cmd = stack.rocjitsu_in(mode);
    cmd.arg("--trace").arg(&path).arg("--").arg(&exe);
    let o = stack.run(cmd, Duration::from_secs(180));
    o.assert_passes(&format!("two_streams ({}, {})", stack.name(), mode.name()), &["two streams"]);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no trace at {} ({e}):\n{}", path.display(), o.stderr));
    (o, serde_json::from_str(&text).expect("the trace is JSON"))
}

fn check(stack: Stack, mode: Mode) {
    let (_, doc) = trace_of(stack, mode);
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let tracks: HashMap<(u64, u64), String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| ((e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()), e["args"]["name"].as_str().unwrap().into()))
        .collect();
    let track_of = |e: &Value| tracks[&(e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap())].clone();
    let dispatch = |name: &str| -> Slice {
        let found: Vec<&Value> =
            events.iter().filter(|e| e["ph"] == "X" && e["name"] == name && e["args"]["grid"].is_array()).collect();
        assert_eq!(found.len(), 1, "one dispatch of {name} ({} {})", stack.name(), mode.name());
        let e = found[0];
        assert_eq!(e["args"]["grid"], serde_json::json!([64 * 256, 1, 1]), "{name}");
        assert_eq!(e["args"]["workgroup"], serde_json::json!([256, 1, 1]), "{name}");
        let start = e["ts"].as_f64().unwrap();
        Slice { track: track_of(e), start, end: start + e["dur"].as_f64().unwrap() }
    };
    let (a1, a2, b1, b2) =
        (dispatch("first_on_a"), dispatch("second_on_a"), dispatch("first_on_b"), dispatch("after_event_on_b"));
    for s in [&a1, &a2, &b1, &b2] {
        assert!(s.track.starts_with("GPU 0 queue "), "a dispatch on a queue track: {}", s.track);
    }
    assert_eq!(a1.track, a2.track, "stream a's kernels share its queue");
    assert_eq!(b1.track, b2.track, "stream b's kernels share its queue");
    assert_ne!(a1.track, b1.track, "two streams, two queues");
    assert!(a2.start >= a1.end, "in order on stream a: {} < {}", a2.start, a1.end);
    assert!(b2.start >= b1.end, "in order on stream b: {} < {}", b2.start, b1.end);
    assert!(b2.start >= a2.end, "after the event: {} < {}", b2.start, a2.end);
    // Every workgroup of first_on_a ran on a worker track, inside its dispatch.
    let turns: Vec<&Value> = events
        .iter()
        .filter(|e| e["name"] == "first_on_a" && e["args"]["workgroup"].is_u64() && track_of(e).starts_with("worker "))
        .collect();
    // A turn's event covers the batch it carried: `workgroups` from `workgroup` on.
    let mut groups: Vec<u64> = turns
        .iter()
        .flat_map(|e| {
            let first = e["args"]["workgroup"].as_u64().unwrap();
            first..first + e["args"]["workgroups"].as_u64().unwrap()
        })
        .collect();
    groups.sort();
    groups.dedup();
    assert_eq!(groups, (0..64).collect::<Vec<_>>(), "workgroup turns of first_on_a");
    for t in &turns {
        let ts = t["ts"].as_f64().unwrap();
        assert!(ts >= a1.start && ts <= a1.end, "a turn within its dispatch");
    }
    assert!(
        events.iter().any(|e| e["ph"] == "i" && e["name"] == "CREATE_QUEUE" && track_of(e) == "ioctls"),
        "ioctls as instants"
    );
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "copy" && track_of(e).contains("SDMA") && e["args"]["bytes"].as_u64() > Some(0)),
        "the hipMemcpy on an SDMA track"
    );
    assert_eq!(doc["metadata"]["rocjitsu"]["events_dropped"], 0);
}

#[test]
fn two_streams_on_rocm52() {
    for mode in Mode::OWN {
        check(Stack::Host, mode);
    }
}

#[test]
fn two_streams_on_sid() {
    for mode in Mode::OWN {
        check(Stack::Sid, mode);
    }
}
