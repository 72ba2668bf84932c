//! Asking a running daemon for its status, and reading what the reply leaves out (the
//! clients' command lines, which this machine's `/proc` has: the daemon and its clients are
//! local processes).

use proto::framing::std_io::UnixTransport;
use proto::payload::StatusReply;
use proto::RpcClient;
use std::io::ErrorKind;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the tool waits for the daemon's answers: a daemon that accepts but never answers
/// (stopped, or wedged) must not hang the command.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the status could not be had.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Nothing listens on the socket (no file, or a stale one).
    #[error("no daemon is running on {}", socket.display())]
    NoDaemon { socket: PathBuf },
    #[error("cannot connect to the daemon on {}: {source}", socket.display())]
    Connect { socket: PathBuf, source: std::io::Error },
    #[error("the daemon on {} did not answer: {source}", socket.display())]
    Rpc { socket: PathBuf, source: proto::error::RpcError },
}

/// Connects to the daemon on `socket` as a tool and asks for its STATUS.
pub fn ask(socket: &Path) -> Result<StatusReply, QueryError> {
    let stream = UnixStream::connect(socket).map_err(|source| match source.kind() {
        ErrorKind::NotFound | ErrorKind::ConnectionRefused => QueryError::NoDaemon { socket: socket.to_path_buf() },
        _ => QueryError::Connect { socket: socket.to_path_buf(), source },
    })?;
    let timeouts = stream.set_read_timeout(Some(ANSWER_TIMEOUT)).and(stream.set_write_timeout(Some(ANSWER_TIMEOUT)));
    timeouts.map_err(|source| QueryError::Connect { socket: socket.to_path_buf(), source })?;
    let rpc = |source| QueryError::Rpc { socket: socket.to_path_buf(), source };
    let mut client = RpcClient::connect_tool(UnixTransport::from_stream(stream), std::process::id()).map_err(rpc)?;
    let reply = client.status().map_err(rpc)?;
    // The daemon learns of a tool's end from the closed socket as well; CLOSE is a courtesy.
    let _ = client.close();
    Ok(reply)
}

/// The command line of process `pid` (`/proc/<pid>/cmdline`), or `None` when it cannot be
/// read or is empty (the process is gone, a zombie, or another user's and hidden).
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    parse_cmdline(&bytes)
}

/// The NUL-separated arguments of a `cmdline` file.
fn parse_cmdline(bytes: &[u8]) -> Option<Vec<String>> {
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if bytes.is_empty() {
        return None;
    }
    Some(bytes.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_files_split_at_nuls() {
        assert_eq!(
            parse_cmdline(b"/bin/app\0-n\0\0x\0"),
            Some(vec!["/bin/app".into(), "-n".into(), "".into(), "x".into()])
        );
        assert_eq!(parse_cmdline(b"no-terminator"), Some(vec!["no-terminator".into()]));
        assert_eq!(parse_cmdline(b""), None);
        assert_eq!(parse_cmdline(b"\0"), None);
    }

    #[test]
    fn our_own_command_line_is_readable() {
        let ours = command_line(std::process::id()).expect("our own /proc entry");
        assert_eq!(ours.first().map(String::as_str), std::env::args().next().as_deref());
        assert_eq!(command_line(u32::MAX), None);
    }

    #[test]
    fn a_socket_without_a_daemon_is_reported_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("daemon.sock");
        match ask(&socket) {
            Err(e @ QueryError::NoDaemon { .. }) => {
                assert_eq!(e.to_string(), format!("no daemon is running on {}", socket.display()))
            }
            other => panic!("{other:?}"),
        }
        // A stale socket file that nobody listens on.
        drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
        assert!(matches!(ask(&socket), Err(QueryError::NoDaemon { .. })));
    }
}
