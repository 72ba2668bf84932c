//! rocjitsud: one simulated machine shared by many client processes.
//!
//! A tokio listener accepts connections (same user only), one task per
//! connection speaks `proto`, and a dedicated engine thread owns the
//! machine ([`engine`]). SIGINT/SIGTERM stop it cleanly: no new clients,
//! every session closed, the socket removed if it is still ours, exit 0.

pub mod conn;
pub mod engine;
pub mod listener;

use anyhow::{Context, Result};
use listener::Listener;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How the daemon is started.
pub struct Options {
    pub config: sim::config::Config,
    /// Where to listen (ignored under socket activation).
    pub socket: PathBuf,
    /// Written with one byte once the daemon accepts connections.
    pub ready: Option<OwnedFd>,
    /// Exit after this long without any connection.
    pub idle_exit: Option<Duration>,
    /// A private daemon (`--daemon -- app`): SIGUSR1, its parent-death signal, says the
    /// application it was started for has exited. Processes the application forked may still
    /// be using the GPU (a test harness's ranks tearing down after their parent returned), so
    /// the daemon serves them, as the kernel driver would, and exits once no client has been
    /// connected for [`ORPHAN_GRACE`].
    pub outlive_parent: bool,
}

/// How long a private daemon whose application exited waits, without clients, for one of the
/// application's children to connect before it exits.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(2);

/// Runs the daemon until it is told to stop.
pub fn run(options: Options) -> Result<()> {
    // A bounded number of malloc arenas and short-lived idle blocking
    // threads (they serve WAIT_EVENTS): the daemon's footprint returns to
    // its baseline soon after clients leave.
    // SAFETY: mallopt only tunes the allocator; called before any thread starts.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 4) };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_keep_alive(Duration::from_millis(500))
        .enable_all()
        .thread_name("rocjitsud-io")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(options))
}

async fn serve(options: Options) -> Result<()> {
    // Before anything else: until it is handled, SIGUSR1 would kill the daemon.
    let mut parent_exit = match options.outlive_parent {
        true => Some(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1())?),
        false => None,
    };
    let topology_dir =
        sim::driver::sysfs::write_machine_tree(&options.config).context("cannot write the sysfs tree")?;
    let machine = sim::Machine::new(options.config);
    let (engine, engine_thread) = engine::start(machine, topology_dir).context("cannot start the engine thread")?;
    let listener = Listener::open(&options.socket)?;
    tracing::info!("listening on {}", listener.describe());
    if let Some(fd) = options.ready {
        let _ = rustix::io::write(&fd, b"1");
    }

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut idle_limit = options.idle_exit;
    let my_uid = rustix::process::getuid().as_raw();
    loop {
        let idle_for = idle_limit.filter(|_| tasks.is_empty());
        let idle = async move {
            match idle_for {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, cred)) => {
                    if cred.uid != my_uid {
                        tracing::warn!("refused a connection from uid {} (pid {}): only uid {my_uid} may use this daemon", cred.uid, cred.pid);
                        continue;
                    }
                    tasks.spawn(conn::serve(stream, cred.pid, engine.clone(), shutdown_rx.clone()));
                }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            _ = sigterm.recv() => { tracing::info!("SIGTERM: shutting down"); break; }
            _ = sigint.recv() => { tracing::info!("SIGINT: shutting down"); break; }
            Some(_) = async { parent_exit.as_mut()?.recv().await }, if parent_exit.is_some() => {
                tracing::info!("the application exited: serving its remaining processes");
                parent_exit = None;
                idle_limit = Some(ORPHAN_GRACE);
            }
            _ = idle => { tracing::info!("idle for {:?}: exiting", idle_limit.unwrap_or_default()); break; }
        }
    }
    let _ = shutdown_tx.send(true);
    // Connections close their sessions as they end; give them a moment.
    let _ = tokio::time::timeout(Duration::from_secs(5), async { while tasks.join_next().await.is_some() {} }).await;
    tasks.abort_all();
    drop(engine);
    listener.close();
    let _ = tokio::task::spawn_blocking(move || engine_thread.join()).await;
    tracing::info!("stopped");
    Ok(())
}
