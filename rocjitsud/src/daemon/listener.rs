//! The listening socket: bound by the daemon in a private directory, or
//! handed over by systemd (socket activation), with the peer's credentials
//! read on every accept.

use anyhow::{bail, Context, Result};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tokio::net::{UnixListener, UnixStream};

/// Who is on the other end of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Cred {
    pub uid: u32,
    pub pid: u32,
}

pub struct Listener {
    inner: UnixListener,
    /// The socket we bound (not set under socket activation) and its inode,
    /// so that we remove it at exit only if it is still ours.
    bound: Option<(PathBuf, u64, u64)>,
}

/// The listening fd systemd passed (`LISTEN_PID`/`LISTEN_FDS`, first fd 3).
fn activation_fd() -> Option<RawFd> {
    let pid: u32 = std::env::var("LISTEN_PID").ok()?.parse().ok()?;
    let fds: u32 = std::env::var("LISTEN_FDS").ok()?.parse().ok()?;
    if pid != std::process::id() || fds < 1 {
        return None;
    }
    // SAFETY: the daemon is still single-threaded here (no runtime threads
    // read the environment concurrently) — the variables must not leak to
    // anything we start.
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    Some(3)
}

/// Refuses a socket directory that someone else owns or others may write to.
fn check_private_dir(dir: &Path) -> Result<()> {
    let meta = std::fs::metadata(dir).with_context(|| format!("{}", dir.display()))?;
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        bail!("{} belongs to uid {}, not to us (uid {uid})", dir.display(), meta.uid());
    }
    if meta.permissions().mode() & 0o022 != 0 {
        bail!("{} is writable by other users (mode {:o})", dir.display(), meta.permissions().mode() & 0o777);
    }
    Ok(())
}

impl Listener {
    /// Listens on `path` (or on the socket systemd passed).
    pub fn open(path: &Path) -> Result<Listener> {
        if let Some(fd) = activation_fd() {
            // SAFETY: systemd passed us this listening socket as fd 3 and
            // nothing else owns it.
            let std_listener = unsafe { std::os::unix::net::UnixListener::from_raw_fd(fd) };
            std_listener.set_nonblocking(true)?;
            let inner = UnixListener::from_std(std_listener).context("the socket systemd passed")?;
            return Ok(Listener { inner, bound: None });
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        check_private_dir(dir)?;
        if path.exists() {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                bail!("a daemon is already listening on {}", path.display());
            }
            std::fs::remove_file(path).with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
        }
        let inner = UnixListener::bind(path).with_context(|| format!("cannot listen on {}", path.display()))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let meta = std::fs::metadata(path)?;
        Ok(Listener { inner, bound: Some((path.to_path_buf(), meta.dev(), meta.ino())) })
    }

    pub fn describe(&self) -> String {
        match &self.bound {
            Some((p, _, _)) => p.display().to_string(),
            None => "the socket passed by systemd".into(),
        }
    }

    /// The next connection and its peer's credentials.
    pub async fn accept(&self) -> std::io::Result<(UnixStream, Cred)> {
        let (stream, _) = self.inner.accept().await?;
        let cred = stream.peer_cred()?;
        Ok((stream, Cred { uid: cred.uid(), pid: cred.pid().unwrap_or(0) as u32 }))
    }

    /// Stops listening and removes the socket if it is still the one we bound.
    pub fn close(self) {
        if let Some((path, dev, ino)) = &self.bound {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.dev() == *dev && m.ino() == *ino) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}
