//! `rocjitsu` finds the interposer, sets the environment and becomes the application.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty shared library built with gcc: a harmless stand-in for `librocjitsu.so` that the
/// dynamic loader really preloads into the application.
fn dummy_so(dir: &Path, name: &str) -> PathBuf {
    let src = dir.join("empty.c");
    std::fs::write(&src, "int rocjitsu_test_dummy;\n").unwrap();
    let out = dir.join(name);
    let status = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("gcc is needed to build the dummy preload library");
    assert!(status.success(), "gcc failed");
    out.canonicalize().unwrap()
}

/// `sh -c` script printing what the application sees, then exiting 7.
const PRINT_ENV: &str = "echo \"$LD_PRELOAD\"; echo \"$ROCJITSU_CONFIG\"; exit 7";

fn rocjitsu(dir: &Path, lib: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocjitsu"));
    cmd.args(args)
        .current_dir(dir)
        .env("ROCJITSU_PRELOAD_LIB", lib)
        .env_remove("LD_PRELOAD")
        .env_remove("ROCJITSU_CONFIG")
        .env_remove("ROCJITSU_LOG");
    cmd
}

fn lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout).lines().map(str::to_owned).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn exec_passes_the_exit_status_and_sets_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let o = rocjitsu(dir.path(), &lib, &["--", "/bin/sh", "-c", PRINT_ENV]).output().unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert_eq!(lines(&o), vec![lib.display().to_string(), "mi210".to_string()]);
    assert_eq!(stderr(&o), "", "the preload really loaded, silently");
}

#[test]
fn existing_ld_preload_comes_after_ours() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let other = dummy_so(dir.path(), "libother.so");
    let o = rocjitsu(dir.path(), &lib, &["/bin/sh", "-c", PRINT_ENV]).env("LD_PRELOAD", &other).output().unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert_eq!(lines(&o)[0], format!("{}:{}", lib.display(), other.display()));
}

#[test]
fn config_file_is_passed_as_an_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let config = sim::config::BUILTINS[0].text;
    std::fs::write(dir.path().join("my.json"), config).unwrap();
    let o = rocjitsu(dir.path(), &lib, &["--config", "my.json", "/bin/sh", "-c", PRINT_ENV]).output().unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let spec = PathBuf::from(&lines(&o)[1]);
    assert!(spec.is_absolute(), "{}", spec.display());
    assert_eq!(spec.canonicalize().unwrap(), dir.path().join("my.json").canonicalize().unwrap());
    // The interposer will load it again from there.
    assert!(sim::config::load(spec.to_str().unwrap()).is_ok());
}

#[test]
fn builtin_config_is_passed_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let o =
        rocjitsu(dir.path(), &lib, &["--config", "mi350x-2gpu", "--", "/bin/sh", "-c", PRINT_ENV]).output().unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    assert_eq!(lines(&o)[1], "mi350x-2gpu");
}

#[test]
fn application_arguments_are_passed_through_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let o =
        rocjitsu(dir.path(), &lib, &["/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "--config", "x", "-v", "--", "a b"])
            .output()
            .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "--config|x|-v|--|a b|");
}

#[test]
fn missing_library_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope/librocjitsu.so");
    let o = rocjitsu(dir.path(), &missing, &["/bin/sh", "-c", "exit 0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err, format!("rocjitsu: ROCJITSU_PRELOAD_LIB={}: no such file\n", missing.display()));
}

#[test]
fn missing_application_exits_127() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let o = rocjitsu(dir.path(), &lib, &["rocjitsu-no-such-app"]).output().unwrap();
    assert_eq!(o.status.code(), Some(127));
    assert_eq!(stderr(&o), "rocjitsu: rocjitsu-no-such-app: command not found\n");
}

#[test]
fn non_executable_application_exits_126() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let data = dir.path().join("data.txt");
    std::fs::write(&data, "x").unwrap();
    let o = rocjitsu(dir.path(), &lib, &[data.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert!(stderr(&o).starts_with("rocjitsu: cannot execute "), "{}", stderr(&o));
}

#[test]
fn ignored_keys_are_reported_only_when_logging() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dummy_so(dir.path(), "librocjitsu.so");
    let quiet = rocjitsu(dir.path(), &lib, &["/bin/sh", "-c", "exit 0"]).output().unwrap();
    assert_eq!(stderr(&quiet), "");
    let loud = rocjitsu(dir.path(), &lib, &["/bin/sh", "-c", "exit 0"]).env("ROCJITSU_LOG", "info").output().unwrap();
    let err = stderr(&loud);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("built-in mi210: not used by this simulator: thread_allocations, max_ticks"), "{err}");
}
