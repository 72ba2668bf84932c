//! One build of everything `cargo xtask test` runs.
//!
//! Cargo resolves the features of shared dependencies per command: `cargo build -p rocjitsud
//! -p preload`, `cargo test --workspace` and `cargo test -p sim` each see a different set
//! (xtask turns on `sim/testing`, the dev-dependencies turn on more of `log`, `serde`, …), so
//! each compiled sim and Cranelift again: three times in one CI run, about ten minutes of
//! its hour on two cores. Here the workspace's tests are built once, cargo's own report of
//! what it built (`--message-format=json`) gives the test executables to run again with the
//! interpreter, and the launcher and interposer of that same build are put where
//! `$ROCJITSU_BIN_DIR` points, so the integration tests, the soak and the suites run exactly
//! what the unit tests ran against.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One test executable of the build (a unit-test harness or an integration test).
#[derive(Debug, Clone)]
pub struct TestExe {
    /// The package's directory (cargo runs a package's tests there).
    pub package_dir: PathBuf,
    /// The target's name: `sim` for its unit tests, `hip_kernels` for `tests/hip_kernels.rs`.
    pub target: String,
    pub exe: PathBuf,
}

impl TestExe {
    /// The package's name. Every package of this workspace lives in a directory of its own
    /// name (`sim/`, `integration/`, …).
    pub fn package(&self) -> &str {
        self.package_dir.file_name().and_then(|n| n.to_str()).unwrap_or("")
    }
}

/// What the build produced.
#[derive(Debug, Default)]
pub struct Built {
    pub tests: Vec<TestExe>,
    /// The `rocjitsu` launcher (not its unit-test harness).
    pub launcher: Option<PathBuf>,
    /// `librocjitsu.so`.
    pub interposer: Option<PathBuf>,
}

/// The fields of cargo's `compiler-artifact` message that are read here.
#[derive(Deserialize)]
struct Artifact {
    reason: String,
    #[serde(default)]
    manifest_path: PathBuf,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    filenames: Vec<PathBuf>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
}

#[derive(Deserialize)]
struct Profile {
    test: bool,
}

/// Reads cargo's JSON messages (one per line; other reasons are skipped).
pub fn parse_messages(lines: impl Iterator<Item = String>) -> Result<Built> {
    let mut built = Built::default();
    for line in lines {
        if !line.starts_with('{') {
            continue;
        }
        let a: Artifact = serde_json::from_str(&line).with_context(|| format!("a cargo message: {line}"))?;
        let (Some(target), Some(profile)) = (a.target, a.profile) else { continue };
        if a.reason != "compiler-artifact" {
            continue;
        }
        let package_dir = a.manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
        match (profile.test, a.executable) {
            (true, Some(exe)) => built.tests.push(TestExe { package_dir, target: target.name, exe }),
            (false, Some(exe)) if target.name == "rocjitsu" && target.kind.iter().any(|k| k == "bin") => {
                built.launcher = Some(exe)
            }
            _ if target.kind.iter().any(|k| k == "cdylib") => {
                built.interposer =
                    a.filenames.into_iter().find(|f| f.file_name().is_some_and(|n| n == "librocjitsu.so"))
            }
            _ => {}
        }
    }
    Ok(built)
}

/// `cargo test --release --workspace --no-run`, reporting what it built. Compiler messages
/// still reach the terminal (`json-render-diagnostics`).
pub fn build_tests(mut cargo: Command) -> Result<Built> {
    cargo
        .args(["test", "--release", "--workspace", "--no-run", "--message-format=json-render-diagnostics"])
        .stdout(Stdio::piped());
    eprintln!("xtask: {cargo:?}");
    let mut child = cargo.spawn().with_context(|| format!("cannot run {cargo:?}"))?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let built = parse_messages(std::io::BufReader::new(stdout).lines().map_while(|l| l.ok()));
    let status = child.wait()?;
    if !status.success() {
        bail!("{cargo:?} failed with {status}");
    }
    built
}

/// Puts the build's launcher and interposer into `bin_dir` under their own names (where the
/// launcher finds the interposer, and where `$ROCJITSU_BIN_DIR` points). A name already there
/// may be a hard link into cargo's `deps/` (cargo's own copy): it is unlinked first, never
/// written through.
pub fn place_binaries(built: &Built, bin_dir: &Path) -> Result<()> {
    let launcher = built.launcher.as_ref().context("the build made no `rocjitsu` launcher")?;
    let interposer = built.interposer.as_ref().context("the build made no librocjitsu.so")?;
    for (from, name) in [(launcher, "rocjitsu"), (interposer, "librocjitsu.so")] {
        let to = bin_dir.join(name);
        if to == *from {
            continue;
        }
        match std::fs::remove_file(&to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", to.display())),
        }
        std::fs::hard_link(from, &to)
            .or_else(|_| std::fs::copy(from, &to).map(drop))
            .with_context(|| format!("{} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(manifest: &str, name: &str, kind: &str, test: bool, files: &[&str], exe: Option<&str>) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "package_id": "path+file:///w/x#0.1.0",
            "manifest_path": manifest,
            "target": {"name": name, "kind": [kind], "src_path": "/w/x/src/lib.rs"},
            "profile": {"opt_level": "3", "test": test},
            "filenames": files,
            "executable": exe,
            "fresh": true,
        })
        .to_string()
    }

    #[test]
    fn tests_launcher_and_interposer_are_told_apart() {
        let lines = vec![
            r#"{"reason":"build-script-executed","package_id":"x"}"#.to_string(),
            "Compiling is not JSON".to_string(),
            message("/w/sim/Cargo.toml", "sim", "lib", true, &["/t/deps/sim-1"], Some("/t/deps/sim-1")),
            message("/w/sim/Cargo.toml", "sim", "lib", false, &["/t/deps/libsim-2.rlib"], None),
            message("/w/integration/Cargo.toml", "hip_kernels", "test", true, &[], Some("/t/deps/hip_kernels-3")),
            message("/w/rocjitsud/Cargo.toml", "rocjitsu", "bin", true, &[], Some("/t/deps/rocjitsu-4")),
            message("/w/rocjitsud/Cargo.toml", "rocjitsu", "bin", false, &[], Some("/t/rocjitsu")),
            message(
                "/w/preload/Cargo.toml",
                "rocjitsu",
                "cdylib",
                false,
                &["/t/deps/librocjitsu.so", "/t/deps/librocjitsu.rlib"],
                None,
            ),
            message("/w/preload/Cargo.toml", "rocjitsu", "cdylib", true, &[], Some("/t/deps/rocjitsu-5")),
        ];
        let built = parse_messages(lines.into_iter()).unwrap();
        let tests: Vec<(&str, &str, &str)> =
            built.tests.iter().map(|t| (t.package(), t.target.as_str(), t.exe.to_str().unwrap())).collect();
        assert_eq!(
            tests,
            [
                ("sim", "sim", "/t/deps/sim-1"),
                ("integration", "hip_kernels", "/t/deps/hip_kernels-3"),
                ("rocjitsud", "rocjitsu", "/t/deps/rocjitsu-4"),
                ("preload", "rocjitsu", "/t/deps/rocjitsu-5"),
            ]
        );
        assert_eq!(built.launcher.as_deref(), Some(Path::new("/t/rocjitsu")));
        assert_eq!(built.interposer.as_deref(), Some(Path::new("/t/deps/librocjitsu.so")));
    }

    #[test]
    fn placing_replaces_a_hard_link_without_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps");
        std::fs::create_dir(&deps).unwrap();
        let (old, new_launcher, new_lib) = (deps.join("rocjitsu-old"), deps.join("rocjitsu-new"), deps.join("lib.so"));
        std::fs::write(&old, "old launcher").unwrap();
        std::fs::write(&new_launcher, "new launcher").unwrap();
        std::fs::write(&new_lib, "new interposer").unwrap();
        // What an earlier `cargo build` left: the bin dir's name linked to its deps/ file.
        std::fs::hard_link(&old, dir.path().join("rocjitsu")).unwrap();
        let built = Built { tests: vec![], launcher: Some(new_launcher), interposer: Some(new_lib) };
        place_binaries(&built, dir.path()).unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&dir.path().join("rocjitsu")), "new launcher");
        assert_eq!(read(&dir.path().join("librocjitsu.so")), "new interposer");
        assert_eq!(read(&old), "old launcher", "cargo's earlier artifact must stay intact");
    }

    #[test]
    fn a_build_without_the_binaries_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = place_binaries(&Built::default(), dir.path()).unwrap_err();
        assert!(err.to_string().contains("rocjitsu"), "{err}");
    }
}
