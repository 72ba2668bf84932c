//! Command-line handling of the `rocjitsu` binary: version, help and usage errors.

use std::process::{Command, Output};

fn rocjitsu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .env_remove("LD_PRELOAD")
        .env_remove("ROCJITSU_LOG")
        .output()
        .expect("run rocjitsu")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn version_long_and_short() {
    for flag in ["--version", "-v"] {
        let o = rocjitsu(&[flag]);
        assert_eq!(o.status.code(), Some(0), "{flag}");
        assert_eq!(stdout(&o), format!("rocjitsu {}\n", env!("CARGO_PKG_VERSION")));
        assert_eq!(stderr(&o), "");
    }
}

#[test]
fn help_long_and_short() {
    for flag in ["--help", "-h"] {
        let o = rocjitsu(&[flag]);
        assert_eq!(o.status.code(), Some(0), "{flag}");
        let text = stdout(&o);
        assert!(
            text.contains("Usage: rocjitsu [--config <CONFIG>] [--daemon | --attach] [--] <APP> [ARGS]..."),
            "{text}"
        );
        for option in ["--config", "--daemon", "--attach", "--socket", "--idle-exit"] {
            assert!(text.contains(option), "{option} in {text}");
        }
        assert!(text.contains("mi210"), "{text}");
        assert!(text.contains("ROCJITSU_PRELOAD_LIB"), "{text}");
    }
}

/// A usage error: exit 2 and a single line on stderr.
fn assert_usage_error(args: &[&str], needle: &str) {
    let o = rocjitsu(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rocjitsu: "), "{err}");
    assert!(err.contains(needle), "{err}");
    assert_eq!(stdout(&o), "");
}

#[test]
fn no_application_is_a_usage_error() {
    assert_usage_error(&[], "no application given");
    assert_usage_error(&["--"], "no application given");
    assert_usage_error(&["--config", "mi210"], "no application given");
}

#[test]
fn unknown_option_is_a_usage_error() {
    assert_usage_error(&["--bogus", "/bin/true"], "'--bogus'");
}

#[test]
fn config_without_value_is_a_usage_error() {
    assert_usage_error(&["--config"], "--config");
}

#[test]
fn status_has_its_own_help_and_usage_errors() {
    let o = rocjitsu(&["status", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.contains("Usage: rocjitsu status [OPTIONS]"), "{text}");
    for option in ["--socket", "--json", "ROCJITSU_SOCKET"] {
        assert!(text.contains(option), "{option} in {text}");
    }
    let o = rocjitsu(&["status", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rocjitsu status: ") && err.contains("'--bogus'"), "{err}");
    // The launcher's help tells of it.
    assert!(stdout(&rocjitsu(&["--help"])).contains("rocjitsu status [--socket <PATH>] [--json]"));
}

#[test]
fn status_without_a_daemon_is_one_line_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("daemon.sock");
    let o = rocjitsu(&["status", "--socket", socket.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), format!("rocjitsu status: no daemon is running on {}\n", socket.display()));
    assert_eq!(stdout(&o), "");
}
