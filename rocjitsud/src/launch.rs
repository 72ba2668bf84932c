//! Local-mode launch: put the interposer in front of the application and become it.
//!
//! The launcher validates the config, finds `librocjitsu.so`, sets `LD_PRELOAD` and
//! `ROCJITSU_CONFIG`, then replaces itself with the application (`execvp`), so the
//! application's exit status is the launcher's. The preload library reads `ROCJITSU_CONFIG`
//! and loads the same config with `sim::config::load`.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// File name of the interposer.
pub const PRELOAD_LIB_NAME: &str = "librocjitsu.so";
/// Overrides where the interposer is (a path to the `.so`).
pub const ENV_PRELOAD_LIB: &str = "ROCJITSU_PRELOAD_LIB";
/// Tells the interposer which config to load: a built-in name or an absolute path.
pub const ENV_CONFIG: &str = "ROCJITSU_CONFIG";
/// The dynamic loader's preload list.
pub const ENV_LD_PRELOAD: &str = "LD_PRELOAD";
/// Daemon mode: the socket of the daemon the interposer talks to.
pub const ENV_SOCKET: &str = "ROCJITSU_SOCKET";

/// Why the application could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot find {PRELOAD_LIB_NAME} (looked for {}); set {ENV_PRELOAD_LIB} to its path", list(.searched))]
    PreloadNotFound { searched: Vec<PathBuf> },
    #[error("{ENV_PRELOAD_LIB}={}: no such file", .path.display())]
    PreloadOverrideMissing { path: PathBuf },
    #[error("preload library path {} contains a space or colon, which LD_PRELOAD cannot express", .path.display())]
    PreloadPathUnusable { path: PathBuf },
    #[error("cannot locate the rocjitsu executable: {0}")]
    NoExe(io::Error),
    #[error("{}: command not found", .app.to_string_lossy())]
    AppNotFound { app: OsString },
    #[error("cannot execute {}: {source}", .app.to_string_lossy())]
    Exec { app: OsString, source: io::Error },
}

impl LaunchError {
    /// The launcher's exit status for this error: 127/126 like a shell for an application that
    /// is missing or not executable, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            LaunchError::AppNotFound { .. } => 127,
            LaunchError::Exec { .. } => 126,
            _ => 1,
        }
    }
}

fn list(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
}

/// The interposer to preload: `override_path` (from [`ENV_PRELOAD_LIB`]) if given, which must
/// exist; else `<exe dir>/librocjitsu.so` (a cargo target dir), else
/// `<exe dir>/../lib/librocjitsu.so` (an installed prefix). The result is absolute, because
/// the application may change directory before a child process resolves `LD_PRELOAD`.
pub fn find_preload_lib(exe: &Path, override_path: Option<&OsStr>) -> Result<PathBuf, LaunchError> {
    let found = match override_path.filter(|p| !p.is_empty()) {
        Some(p) => {
            let path = absolute(Path::new(p));
            if !path.is_file() {
                return Err(LaunchError::PreloadOverrideMissing { path });
            }
            path
        }
        None => {
            let dir = exe.parent().unwrap_or(Path::new("/"));
            let searched = vec![dir.join(PRELOAD_LIB_NAME), dir.join("..").join("lib").join(PRELOAD_LIB_NAME)];
            match searched.iter().find(|p| p.is_file()) {
                Some(p) => absolute(p),
                None => return Err(LaunchError::PreloadNotFound { searched }),
            }
        }
    };
    if found.as_os_str().as_bytes().iter().any(|b| *b == b':' || b.is_ascii_whitespace()) {
        return Err(LaunchError::PreloadPathUnusable { path: found });
    }
    Ok(found)
}

/// Absolute and free of `..`, so the value still names the file from any directory.
fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).or_else(|_| std::path::absolute(p)).unwrap_or_else(|_| p.to_path_buf())
}

/// `LD_PRELOAD` for the application: our library first (so its hooks win), then whatever was
/// already preloaded, minus earlier copies of ours (a nested `rocjitsu` must not load it twice).
/// The loader separates entries with colons or spaces.
pub fn preload_value(lib: &Path, existing: Option<&OsStr>) -> OsString {
    let lib = lib.as_os_str().as_bytes();
    let mut out = lib.to_vec();
    let existing = existing.map(OsStr::as_bytes).unwrap_or_default();
    for entry in existing.split(|b| *b == b':' || b.is_ascii_whitespace()) {
        if entry.is_empty() || entry == lib {
            continue;
        }
        out.push(b':');
        out.extend_from_slice(entry);
    }
    OsString::from_vec(out)
}

/// Replaces this process with `app` (searched in `PATH` like `execvp`) with the launch
/// environment set: local mode without `socket`, daemon mode with it. Returns only if the
/// exec failed.
/// `env` adds variables the launcher's options set (`--stats` sets `ROCJITSU_STATS`).
pub fn exec_app(
    app: &OsStr,
    args: &[OsString],
    lib: &Path,
    config_spec: &OsStr,
    socket: Option<&Path>,
    env: &[(&str, OsString)],
) -> LaunchError {
    let preload = preload_value(lib, std::env::var_os(ENV_LD_PRELOAD).as_deref());
    let mut cmd = Command::new(app);
    cmd.args(args).env(ENV_LD_PRELOAD, preload).env(ENV_CONFIG, config_spec);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    match socket {
        Some(s) => cmd.env(ENV_SOCKET, s),
        None => cmd.env_remove(ENV_SOCKET),
    };
    let err = cmd.exec();
    match err.kind() {
        io::ErrorKind::NotFound => LaunchError::AppNotFound { app: app.to_owned() },
        _ => LaunchError::Exec { app: app.to_owned(), source: err },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preload_first_then_existing() {
        let lib = Path::new("/opt/r/librocjitsu.so");
        assert_eq!(preload_value(lib, None), OsString::from("/opt/r/librocjitsu.so"));
        assert_eq!(preload_value(lib, Some(OsStr::new(""))), OsString::from("/opt/r/librocjitsu.so"));
        assert_eq!(
            preload_value(lib, Some(OsStr::new("/a.so:/b.so"))),
            OsString::from("/opt/r/librocjitsu.so:/a.so:/b.so")
        );
        assert_eq!(
            preload_value(lib, Some(OsStr::new("/a.so /b.so"))),
            OsString::from("/opt/r/librocjitsu.so:/a.so:/b.so"),
            "spaces separate entries too"
        );
        assert_eq!(
            preload_value(lib, Some(OsStr::new("/opt/r/librocjitsu.so:/a.so"))),
            OsString::from("/opt/r/librocjitsu.so:/a.so"),
            "not loaded twice"
        );
    }

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    #[test]
    fn finds_the_library_next_to_the_exe_first() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("bin/rocjitsu");
        let beside = dir.path().join("bin/librocjitsu.so");
        let in_lib = dir.path().join("lib/librocjitsu.so");
        touch(&in_lib);
        touch(&exe);
        assert_eq!(find_preload_lib(&exe, None).unwrap(), absolute(&in_lib));
        touch(&beside);
        assert_eq!(find_preload_lib(&exe, None).unwrap(), absolute(&beside));
    }

    #[test]
    fn missing_library_lists_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let e = find_preload_lib(&dir.path().join("bin/rocjitsu"), None).unwrap_err();
        assert_eq!(e.exit_code(), 1);
        let msg = e.to_string();
        assert!(msg.contains("bin/librocjitsu.so and "), "{msg}");
        assert!(msg.contains("lib/librocjitsu.so"), "{msg}");
        assert!(msg.contains(ENV_PRELOAD_LIB), "{msg}");
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn override_wins_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("rocjitsu");
        touch(&dir.path().join("librocjitsu.so"));
        let other = dir.path().join("other.so");
        let e = find_preload_lib(&exe, Some(other.as_os_str())).unwrap_err();
        assert!(matches!(e, LaunchError::PreloadOverrideMissing { .. }), "{e}");
        touch(&other);
        assert_eq!(find_preload_lib(&exe, Some(other.as_os_str())).unwrap(), absolute(&other));
        // An empty override is treated as unset.
        assert_eq!(find_preload_lib(&exe, Some(OsStr::new(""))).unwrap(), absolute(&dir.path().join("librocjitsu.so")));
    }

    #[test]
    fn relative_override_becomes_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("x.so");
        touch(&lib);
        let cwd = std::env::current_dir().unwrap();
        let rel = pathdiff(&lib, &cwd);
        let found = find_preload_lib(Path::new("/nowhere/rocjitsu"), Some(rel.as_os_str())).unwrap();
        assert!(found.is_absolute(), "{}", found.display());
        assert!(found.is_file());
    }

    /// `target` relative to `base` via `..` segments (both absolute).
    fn pathdiff(target: &Path, base: &Path) -> PathBuf {
        let mut rel = PathBuf::new();
        for _ in base.components().skip(1) {
            rel.push("..");
        }
        rel.join(target.strip_prefix("/").unwrap())
    }

    #[test]
    fn unusable_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("a b.so");
        touch(&lib);
        let e = find_preload_lib(Path::new("/x/rocjitsu"), Some(lib.as_os_str())).unwrap_err();
        assert!(matches!(e, LaunchError::PreloadPathUnusable { .. }), "{e}");
    }

    #[test]
    fn exit_codes() {
        let app = OsString::from("x");
        assert_eq!(LaunchError::AppNotFound { app: app.clone() }.exit_code(), 127);
        let source = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(LaunchError::Exec { app, source }.exit_code(), 126);
    }
}
