//! The status report as people read it: a line about the daemon, a table of its clients
//! (memory by kind, command line) and a table of their queues (what each has done and runs
//! now). Columns are padded to their widest cell; the last, free-length one (a command line,
//! a kernel name) is not.

use super::report::{Client, Memory, Report};
use std::fmt::Write;

/// The whole report, ending in a newline.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let clients = match report.clients.len() {
        0 => "no clients".to_string(),
        1 => "1 client".to_string(),
        n => format!("{n} clients"),
    };
    let _ = writeln!(
        out,
        "daemon pid {} on {}, up {}, {clients}",
        report.daemon.pid,
        report.socket,
        duration(report.daemon.uptime_ms)
    );
    if report.clients.is_empty() {
        return out;
    }
    out.push('\n');
    let mut rows = vec![cells(&["PID", "UPTIME", "VRAM", "GTT", "USERPTR", "QUEUES", "COMMAND"])];
    rows.extend(report.clients.iter().map(client_row));
    out.push_str(&columns(&rows));
    let mut rows = vec![cells(&["PID", "GPU", "QUEUE", "TYPE", "PACKETS", "DISPATCHES", "RUNNING"])];
    for c in &report.clients {
        for q in &c.queues {
            rows.push(vec![
                c.pid.to_string(),
                q.gpu_id.to_string(),
                q.queue_id.to_string(),
                q.kind.clone(),
                q.packets_consumed.map_or_else(|| "-".to_string(), |n| n.to_string()),
                q.dispatches_done.to_string(),
                q.kernel_name.clone().unwrap_or_else(|| "idle".to_string()),
            ]);
        }
    }
    if rows.len() > 1 {
        out.push('\n');
        out.push_str(&columns(&rows));
    }
    out
}

fn cells(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn client_row(c: &Client) -> Vec<String> {
    let m: &Memory = &c.memory;
    // Sums over a reply that left allocations out are lower bounds.
    let mem = |n: u64| if m.complete { bytes(n) } else { format!(">={}", bytes(n)) };
    vec![
        c.pid.to_string(),
        duration(c.uptime_ms),
        mem(m.vram_bytes),
        mem(m.gtt_bytes),
        mem(m.userptr_bytes),
        c.queues.len().to_string(),
        c.command_line.as_deref().map_or_else(|| "?".to_string(), command),
    ]
}

/// Rows of cells, each column padded to its widest cell plus two spaces, the last unpadded.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..n).map(|i| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A command line as a shell would take it back: arguments with blanks or quotes quoted.
pub fn command(args: &[String]) -> String {
    let quote = |a: &String| {
        let plain = !a.is_empty() && !a.chars().any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\' | '$'));
        if plain {
            a.clone()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    args.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// A duration of `ms` milliseconds, to the precision that matters at its size.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=9 => format!("{}.{}s", s, ms % 1000 / 100),
        10..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// A size in binary units (`512 B`, `1.5 KiB`, `64.0 MiB`, `120 GiB`).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 100.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::report::tests::sample_report;

    #[test]
    fn the_report_reads_as_two_tables() {
        let text = render(&sample_report());
        let expected = "\
daemon pid 100 on /run/rocjitsu/daemon.sock, up 1h02m, 2 clients

PID  UPTIME  VRAM     GTT      USERPTR   QUEUES  COMMAND
200  1m05s   4.0 MiB  2.0 MiB  64.0 KiB  2       /bin/app --n 3
300  1.5s    0 B      0 B      0 B       0       ?

PID  GPU    QUEUE  TYPE  PACKETS  DISPATCHES  RUNNING
200  52127  0      aql   12       9           spin(unsigned int*, unsigned int)
200  52127  1      sdma  -        0           idle
";
        assert_eq!(text, expected, "\n{text}");
    }

    #[test]
    fn a_daemon_without_clients_is_one_line() {
        let mut r = sample_report();
        r.clients.clear();
        assert_eq!(render(&r), "daemon pid 100 on /run/rocjitsu/daemon.sock, up 1h02m, no clients\n");
    }

    #[test]
    fn incomplete_sums_are_lower_bounds() {
        let mut r = sample_report();
        r.clients[0].memory.complete = false;
        let text = render(&r);
        assert!(text.contains(">=4.0 MiB  >=2.0 MiB  >=64.0 KiB"), "{text}");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(0), "0.0s");
        assert_eq!(duration(1_549), "1.5s");
        assert_eq!(duration(42_900), "42s");
        assert_eq!(duration(65_000), "1m05s");
        assert_eq!(duration(3_723_000), "1h02m");
        assert_eq!(duration(3 * 86_400_000 + 4 * 3_600_000 + 59_000), "3d04h");
    }

    #[test]
    fn sizes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(64 << 20), "64.0 MiB");
        assert_eq!(bytes(120 << 30), "120 GiB");
        assert_eq!(bytes(u64::MAX), "16384 PiB");
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(command(&args(&["/bin/app", "-n", "3"])), "/bin/app -n 3");
        assert_eq!(command(&args(&["echo", "a b", "", "it's"])), r"echo 'a b' '' 'it'\''s'");
    }
}
