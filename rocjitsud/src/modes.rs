//! Daemon-mode launching: start a private daemon for one application
//! (`--daemon -- app`), or find a running one (`--attach`).

use crate::daemon;
use anyhow::{anyhow, bail, Context, Result};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the launcher waits for its daemon to listen.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The well-known socket: `$ROCJITSU_RUNTIME_DIR/daemon.sock`, else
/// `$XDG_RUNTIME_DIR/rocjitsu/daemon.sock`, else `/tmp/rocjitsu-<uid>/daemon.sock`.
pub fn default_socket() -> Result<PathBuf> {
    Ok(sim::driver::sysfs::runtime_dir().context("the runtime directory")?.join("daemon.sock"))
}

/// The socket of a running daemon, for `--attach` and `rocjitsu status`: `explicit`
/// (`--socket`), else `$ROCJITSU_SOCKET`, else the well-known socket.
pub fn attach_socket(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(s) = explicit {
        return Ok(s.to_path_buf());
    }
    if let Some(s) = std::env::var_os(crate::launch::ENV_SOCKET).filter(|s| !s.is_empty()) {
        return Ok(s.into());
    }
    default_socket()
}

/// A private socket for the daemon of one invocation.
pub fn invocation_socket() -> Result<PathBuf> {
    Ok(sim::driver::sysfs::runtime_dir()?.join(std::process::id().to_string()).join("daemon.sock"))
}

/// Sets up logging for the daemon (`ROCJITSU_LOG`, else `default`).
pub fn init_daemon_logging(default: &str) {
    let filter = std::env::var("ROCJITSU_LOG").unwrap_or_else(|_| default.to_string());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Starts a daemon in a child process listening on `socket`, waits (at
/// most [`READY_TIMEOUT`]) until it listens, and returns. When this process,
/// i.e. the application it becomes, exits, the child is told (PDEATHSIG SIGUSR1)
/// and ends once the application's remaining processes are done with it
/// ([`daemon::Options::outlive_parent`]).
///
/// Must be called while this process is single-threaded.
pub fn spawn_daemon(config: &sim::config::Config, socket: &Path) -> Result<()> {
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let parent = std::process::id();
    // SAFETY: the launcher is single-threaded here, so the child may run
    // arbitrary code (it builds its own runtime) after fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        bail!("cannot fork the daemon: {}", std::io::Error::last_os_error());
    }
    if pid == 0 {
        drop(read_end);
        // SAFETY: prctl with PR_SET_PDEATHSIG only changes this process's
        // death signal.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR1) };
        if rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32) != Some(parent) {
            std::process::exit(1);
        }
        init_daemon_logging("warn");
        let code = match run_child(config.clone(), socket, write_end) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("rocjitsu: daemon: {e:#}");
                1
            }
        };
        if let Some(dir) = socket.parent() {
            let _ = std::fs::remove_dir(dir);
        }
        std::process::exit(code);
    }
    drop(write_end);
    wait_ready(&read_end).inspect_err(|_| {
        // SAFETY: killing our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    })
}

fn run_child(config: sim::config::Config, socket: &Path, ready: OwnedFd) -> Result<()> {
    daemon::run(daemon::Options {
        config,
        socket: socket.to_path_buf(),
        ready: Some(ready),
        idle_exit: None,
        outlive_parent: true,
    })
}

fn wait_ready(fd: &OwnedFd) -> Result<()> {
    use rustix::event::{poll, PollFd, PollFlags};
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    let timeout = rustix::event::Timespec { tv_sec: READY_TIMEOUT.as_secs() as i64, tv_nsec: 0 };
    let n = poll(&mut fds, Some(&timeout)).context("waiting for the daemon")?;
    if n == 0 {
        bail!("the daemon did not become ready within {READY_TIMEOUT:?}");
    }
    let mut b = [0u8; 1];
    match rustix::io::read(fd, &mut b) {
        Ok(1) => Ok(()),
        _ => Err(anyhow!("the daemon exited before it was ready (see its message above)")),
    }
}

/// Checks that a daemon answers on `socket`; returns its topology directory.
pub fn check_daemon(socket: &Path) -> Result<PathBuf> {
    let t = proto::framing::std_io::UnixTransport::connect(socket).map_err(|e| {
        anyhow!("no daemon is listening on {} ({e}); start one with `rocjitsu --daemon`", socket.display())
    })?;
    let c = proto::RpcClient::connect_tool(t, std::process::id())
        .map_err(|e| anyhow!("the daemon on {} did not answer the handshake: {e}", socket.display()))?;
    Ok(PathBuf::from(&c.handshake().machine.topology_dir))
}

/// Whether the daemon's GPUs (its topology tree) are those `config`
/// describes; the daemon's config is the one in use either way.
pub fn same_machine(config: &sim::config::Config, daemon_tree: &Path) -> bool {
    let ours = sim::driver::topology::build(config, &sim::host::HostInfo::detect());
    config.gpus().iter().all(|g| {
        let rel = format!("nodes/{}/properties", g.index + 1);
        let theirs = std::fs::read_to_string(daemon_tree.join("kfd/topology").join(&rel)).ok();
        theirs.as_deref() == ours.get(&rel)
    }) && !daemon_tree.join(format!("kfd/topology/nodes/{}", config.gpus().len() + 1)).exists()
}
