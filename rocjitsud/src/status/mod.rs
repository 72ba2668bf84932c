//! `rocjitsu status`: what a running daemon serves — its clients (pid, command line, uptime),
//! their memory by kind, their queues with the dispatches done and the kernel each runs now.
//!
//! Split by concern: [`query`] asks the daemon (a tool connection, one STATUS) and reads the
//! clients' command lines from `/proc`; [`report`] turns the reply into the report, pure and
//! serialisable (`--json`); [`table`] prints it for people.

pub mod query;
pub mod report;
pub mod table;

use std::path::Path;

/// Asks the daemon on `socket` and returns what `rocjitsu status` prints: the table, or the
/// report as JSON.
pub fn run(socket: &Path, json: bool) -> Result<String, query::QueryError> {
    let reply = query::ask(socket)?;
    let report = report::build(&reply, socket, query::command_line);
    Ok(if json {
        // A report is strings and numbers: serialising it cannot fail.
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        table::render(&report)
    })
}
