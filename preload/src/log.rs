//! Log lines on stderr, written without thread-local storage.
//!
//! `tracing-subscriber`'s formatter keeps its buffer in a thread-local; ROCR frees GPU
//! memory from C++ static destructors, after the main thread's thread-locals are gone, so
//! an event logged from those ioctls made the formatter panic and the ioctl fail (ROCR
//! then asserts). This layer formats each event into a fresh string instead.

use std::fmt::Write as _;
use std::io::Write as _;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Formats events as `LEVEL message key=value …`, one line each, to stderr.
pub struct StderrLines;

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for StderrLines {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut line = Line(format!("{:>5}", event.metadata().level()));
        event.record(&mut line);
        line.0.push('\n');
        // One write per line, so lines from several threads do not interleave.
        let _ = std::io::stderr().lock().write_all(line.0.as_bytes());
    }
}
