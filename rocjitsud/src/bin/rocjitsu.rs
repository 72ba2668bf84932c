//! `rocjitsu`: run an unmodified ROCm application on the simulated GPU.
//!
//! - `rocjitsu [--config C] -- app …`: local mode (the simulator runs in the application).
//! - `rocjitsu --daemon [--config C] -- app …`: a private daemon for this application.
//! - `rocjitsu --daemon [--config C]`: run the daemon in the foreground.
//! - `rocjitsu --attach -- app …`: use a running daemon.
//! - `rocjitsu status [--socket PATH] [--json]`: what a running daemon serves. `status` is a
//!   command only as the first word; `rocjitsu -- status` runs an application of that name.
//!
//! Exit status: the application's own; 2 for a usage or config error; 1 when the interposer
//! or the daemon cannot be found or started (for `status`: when no daemon answers); 127/126
//! when the application is missing or cannot be executed.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{ArgAction, Parser};
use rocjitsud::launch::{self, LaunchError, ENV_PRELOAD_LIB};
use rocjitsud::modes;
use sim::config::{self, DEFAULT_BUILTIN};

const USAGE_EXIT: u8 = 2;
const CONFIG_EXIT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "rocjitsu",
    version,
    disable_version_flag = true,
    about = "Run an unmodified ROCm application on a simulated AMD GPU.",
    override_usage = "rocjitsu [--config <CONFIG>] [--daemon | --attach] [--] <APP> [ARGS]...\n       rocjitsu --daemon [--config <CONFIG>] [--socket <PATH>] [--idle-exit <SECONDS>]\n       rocjitsu status [--socket <PATH>] [--json]",
    after_help = concat!(
        "CONFIG is a JSON file or a built-in: mi210 (default), mi210-2gpu, mi300x, mi350x, mi350x-2gpu.\n",
        "The daemon socket is $ROCJITSU_RUNTIME_DIR/daemon.sock, else $XDG_RUNTIME_DIR/rocjitsu/daemon.sock,\n",
        "else /tmp/rocjitsu-<uid>/daemon.sock (or --socket / $ROCJITSU_SOCKET).\n",
        "`rocjitsu status` shows a running daemon's clients, memory and queues (`rocjitsu -- status` runs an\n",
        "application named status).\n",
        "Environment: ROCJITSU_PRELOAD_LIB overrides where librocjitsu.so is found; ROCJITSU_LOG sets logging;\n",
        "ROCJITSU_STATS=1, ROCJITSU_STATS_JSON=FILE and ROCJITSU_TRACE=FILE do what --stats, --stats-json and --trace do."
    )
)]
struct Cli {
    /// Print the version and exit.
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    version: Option<bool>,

    /// Simulation config: a JSON file or a built-in name (default: mi210).
    #[arg(long, value_name = "CONFIG")]
    config: Option<String>,

    /// Simulate in a daemon: for the application given, or alone in the foreground.
    #[arg(long, conflicts_with = "attach")]
    daemon: bool,

    /// Use the daemon already running on the socket.
    #[arg(long)]
    attach: bool,

    /// The daemon's socket (default: the well-known path, see below).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// Print the application's run statistics when it exits (per kernel: dispatches,
    /// workgroups, wave-instructions by class, memory traffic, host time; per copy engine).
    #[arg(long)]
    stats: bool,

    /// Write the run statistics as JSON to FILE when the application exits (`%p` in FILE
    /// becomes each process's pid, for applications of several processes).
    #[arg(long, value_name = "FILE")]
    stats_json: Option<std::path::PathBuf>,

    /// Write a timeline of the application on the simulated GPU to FILE when it exits
    /// (Chrome trace-event JSON; open it in ui.perfetto.dev; `%p` in FILE becomes the pid).
    #[arg(long, value_name = "FILE")]
    trace: Option<std::path::PathBuf>,

    /// With --daemon alone: exit after SECONDS without any client.
    #[arg(long, value_name = "SECONDS", requires = "daemon")]
    idle_exit: Option<u64>,

    /// The application and its arguments.
    #[arg(value_name = "APP", trailing_var_arg = true)]
    app: Vec<OsString>,
}

/// `rocjitsu status`.
#[derive(Debug, Parser)]
#[command(
    name = "rocjitsu status",
    bin_name = "rocjitsu status",
    about = "Show what a running rocjitsu daemon serves: its clients (pid, command line, uptime), their memory\n\
             (VRAM, GTT, USERPTR) and queues (dispatches done, the kernel running now).",
    after_help = concat!(
        "The socket is --socket, else $ROCJITSU_SOCKET, else the well-known socket (see rocjitsu --help).\n",
        "Exit status: 0; 1 when no daemon runs on the socket or it does not answer; 2 for a usage error."
    )
)]
struct StatusCli {
    /// The daemon's socket.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,

    /// Print the status as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    // A command only as the first word, so that `rocjitsu -- status` still runs an
    // application named `status`.
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "status") {
        return status(&args[1..]);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Help and version go to stdout and exit 0.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&first_line(&e.to_string())),
    };
    let config_spec = cli.config.clone().unwrap_or_else(|| DEFAULT_BUILTIN.to_string());
    let config = match config::load(&config_spec) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rocjitsu: {e}");
            return ExitCode::from(CONFIG_EXIT);
        }
    };
    if logging_requested() && !config.ignored_keys().is_empty() {
        eprintln!("rocjitsu: {}: not used by this simulator: {}", config.source(), config.ignored_keys().join(", "));
    }

    let Some((app, args)) = cli.app.split_first() else {
        if cli.daemon {
            return run_foreground_daemon(&cli, config);
        }
        return usage_error("no application given");
    };
    let socket = if cli.daemon {
        let socket = match cli.socket.clone().map(Ok).unwrap_or_else(modes::invocation_socket) {
            Ok(s) => s,
            Err(e) => return runtime_error(&format!("{e:#}")),
        };
        if let Err(e) = modes::spawn_daemon(&config, &socket) {
            return runtime_error(&format!("{e:#}"));
        }
        Some(socket)
    } else if cli.attach {
        let socket = match attach_socket(&cli) {
            Ok(s) => s,
            Err(e) => return runtime_error(&format!("{e:#}")),
        };
        match modes::check_daemon(&socket) {
            Ok(tree) => {
                if cli.config.is_some() && !modes::same_machine(&config, &tree) {
                    eprintln!(
                        "rocjitsu: the daemon on {} simulates another machine than {}; the daemon's is used",
                        socket.display(),
                        config.source()
                    );
                }
            }
            Err(e) => return runtime_error(&format!("{e:#}")),
        }
        Some(socket)
    } else {
        None
    };

    let mut env = Vec::new();
    if cli.stats {
        env.push(("ROCJITSU_STATS", OsString::from("1")));
    }
    if let Some(path) = &cli.stats_json {
        env.push(("ROCJITSU_STATS_JSON", std::path::absolute(path).unwrap_or_else(|_| path.clone()).into_os_string()));
    }
    if let Some(path) = &cli.trace {
        env.push(("ROCJITSU_TRACE", std::path::absolute(path).unwrap_or_else(|_| path.clone()).into_os_string()));
    }
    match launch_app(app, args, &config, socket.as_deref(), &env) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("rocjitsu: {e}");
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

/// `--socket`, else `$ROCJITSU_SOCKET`, else the well-known socket.
fn attach_socket(cli: &Cli) -> anyhow::Result<PathBuf> {
    modes::attach_socket(cli.socket.as_deref())
}

/// `rocjitsu status …` (`args` starts with `status`).
fn status(args: &[OsString]) -> ExitCode {
    let cli = match StatusCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!(
                "rocjitsu status: {} (usage: rocjitsu status [--socket <PATH>] [--json])",
                first_line(&e.to_string())
            );
            return ExitCode::from(USAGE_EXIT);
        }
    };
    let shown =
        modes::attach_socket(cli.socket.as_deref()).and_then(|socket| Ok(rocjitsud::status::run(&socket, cli.json)?));
    match shown {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocjitsu status: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run_foreground_daemon(cli: &Cli, config: config::Config) -> ExitCode {
    modes::init_daemon_logging("info");
    let socket = match cli.socket.clone().map(Ok).unwrap_or_else(modes::default_socket) {
        Ok(s) => s,
        Err(e) => return runtime_error(&format!("{e:#}")),
    };
    let options = rocjitsud::daemon::Options {
        config,
        socket,
        ready: None,
        idle_exit: cli.idle_exit.map(std::time::Duration::from_secs),
        outlive_parent: false,
    };
    match rocjitsud::daemon::run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => runtime_error(&format!("{e:#}")),
    }
}

fn runtime_error(what: &str) -> ExitCode {
    eprintln!("rocjitsu: {what}");
    ExitCode::from(1)
}

/// Finds the interposer and execs the application; returns only on failure.
fn launch_app(
    app: &OsString,
    args: &[OsString],
    config: &config::Config,
    socket: Option<&std::path::Path>,
    env: &[(&str, OsString)],
) -> Result<std::convert::Infallible, LaunchError> {
    let exe = std::env::current_exe().map_err(LaunchError::NoExe)?;
    let lib = launch::find_preload_lib(&exe, std::env::var_os(ENV_PRELOAD_LIB).as_deref())?;
    Err(launch::exec_app(app, args, &lib, &config.source().spec(), socket, env))
}

/// `ROCJITSU_LOG` asks for diagnostics; then the launcher reports the config keys it ignores.
fn logging_requested() -> bool {
    std::env::var("ROCJITSU_LOG").is_ok_and(|v| !v.is_empty() && v != "off" && v != "error")
}

fn usage_error(what: &str) -> ExitCode {
    eprintln!(
        "rocjitsu: {what} (usage: rocjitsu [--config <CONFIG>] [--daemon | --attach] [--] <APP> [ARGS]...; see --help)"
    );
    ExitCode::from(USAGE_EXIT)
}

/// clap's errors span several lines (message, usage, hint); the first carries the message.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("invalid arguments");
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}
