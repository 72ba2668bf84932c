//! First-use initialisation: logging, the config, the fake tree, the driver.

use crate::driver::{Errno, LocalDriver};
use crate::state::State;
use sim::Machine;
use std::collections::HashSet;
use std::os::fd::RawFd;
use std::path::PathBuf;

/// Builds the process state. Runs inside a hook, with the re-entrancy guard
/// held, so its own file operations go straight to libc.
pub fn build_state(inherited: HashSet<RawFd>) -> Result<State, Errno> {
    init_logging();
    if let Some(socket) = std::env::var_os("ROCJITSU_SOCKET").filter(|s| !s.is_empty()) {
        return remote_state(PathBuf::from(socket), inherited);
    }
    let config = load_config().map_err(|msg| {
        eprintln!("rocjitsu: {msg}");
        libc::ENODEV
    })?;
    let root = sim::driver::sysfs::write_machine_tree(&config).map_err(|e| {
        eprintln!("rocjitsu: cannot write the simulated sysfs tree: {e}");
        libc::ENODEV
    })?;
    tracing::debug!("simulated sysfs tree at {}", root.display());
    // Simulator threads (GPU scheduler, workers) bypass our hooks for good.
    let hook: sim::threads::ThreadHook = std::sync::Arc::new(crate::guard::enter_forever);
    let machine = Machine::with_thread_hook(config, Some(hook));
    Ok(State::new(root, Box::new(LocalDriver::new(machine)), inherited))
}

/// Daemon mode: the daemon simulates the machine and wrote its sysfs tree.
fn remote_state(socket: PathBuf, inherited: HashSet<RawFd>) -> Result<State, Errno> {
    let machine = crate::remote::query_machine(&socket).map_err(|msg| {
        eprintln!("rocjitsu: {msg}");
        libc::ENODEV
    })?;
    tracing::debug!("daemon at {} simulates the tree at {}", socket.display(), machine.topology_dir);
    let root = std::path::PathBuf::from(&machine.topology_dir);
    Ok(State::new(root, Box::new(crate::remote::RemoteDriver::new(socket, machine)), inherited))
}

/// Log lines go to stderr; `ROCJITSU_LOG` (or `RUST_LOG`) sets the filter,
/// warnings by default so that refused requests are always visible.
fn init_logging() {
    let filter =
        std::env::var("ROCJITSU_LOG").or_else(|_| std::env::var("RUST_LOG")).unwrap_or_else(|_| "warn".to_string());
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new(filter))
        .with(crate::log::StderrLines)
        .try_init();
}

/// The config named by `ROCJITSU_CONFIG` (a path or a built-in name), the
/// built-in default without it.
fn load_config() -> Result<sim::config::Config, String> {
    let config = match std::env::var("ROCJITSU_CONFIG") {
        Ok(spec) if !spec.is_empty() => sim::config::load(&spec).map_err(|e| e.to_string())?,
        _ => sim::config::default_config(),
    };
    if !config.ignored_keys().is_empty() {
        tracing::info!("config keys not used by this simulator: {}", config.ignored_keys().join(", "));
    }
    Ok(config)
}
