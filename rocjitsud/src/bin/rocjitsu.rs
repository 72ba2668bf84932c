//! `rocjitsu`: run an unmodified ROCm application on the simulated GPU (local mode).
//!
//! Exit status: the application's own; 2 for a usage or config error; 1 when the interposer
//! cannot be found; 127/126 when the application is missing or cannot be executed.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{ArgAction, Parser};
use rocjitsud::launch::{self, LaunchError, ENV_PRELOAD_LIB};
use sim::config::{self, DEFAULT_BUILTIN};

const USAGE_EXIT: u8 = 2;
const CONFIG_EXIT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "rocjitsu",
    version,
    disable_version_flag = true,
    about = "Run an unmodified ROCm application on a simulated AMD GPU.",
    override_usage = "rocjitsu [--config <CONFIG>] [--] <APP> [ARGS]...",
    after_help = concat!(
        "CONFIG is a JSON file or a built-in: mi210 (default), mi300x, mi350x, mi350x-2gpu.\n",
        "Environment: ROCJITSU_PRELOAD_LIB overrides where librocjitsu.so is found."
    )
)]
struct Cli {
    /// Print the version and exit.
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    version: Option<bool>,

    /// Simulation config: a JSON file or a built-in name.
    #[arg(long, value_name = "CONFIG", default_value = DEFAULT_BUILTIN)]
    config: String,

    /// The application and its arguments.
    #[arg(value_name = "APP", trailing_var_arg = true)]
    app: Vec<OsString>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Help and version go to stdout and exit 0.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return usage_error(&first_line(&e.to_string())),
    };
    let Some((app, args)) = cli.app.split_first() else {
        return usage_error("no application given");
    };

    let config = match config::load(&cli.config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rocjitsu: {e}");
            return ExitCode::from(CONFIG_EXIT);
        }
    };
    if logging_requested() && !config.ignored_keys().is_empty() {
        eprintln!("rocjitsu: {}: not used by this simulator: {}", config.source(), config.ignored_keys().join(", "));
    }

    match launch_app(app, args, &config) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("rocjitsu: {e}");
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1))
        }
    }
}

/// Finds the interposer and execs the application; returns only on failure.
fn launch_app(
    app: &OsString,
    args: &[OsString],
    config: &config::Config,
) -> Result<std::convert::Infallible, LaunchError> {
    let exe = std::env::current_exe().map_err(LaunchError::NoExe)?;
    let lib = launch::find_preload_lib(&exe, std::env::var_os(ENV_PRELOAD_LIB).as_deref())?;
    Err(launch::exec_app(app, args, &lib, &config.source().spec()))
}

/// `ROCJITSU_LOG` asks for diagnostics; then the launcher reports the config keys it ignores.
fn logging_requested() -> bool {
    std::env::var("ROCJITSU_LOG").is_ok_and(|v| !v.is_empty() && v != "off" && v != "error")
}

fn usage_error(what: &str) -> ExitCode {
    eprintln!("rocjitsu: {what} (usage: rocjitsu [--config <CONFIG>] [--] <APP> [ARGS]...; see --help)");
    ExitCode::from(USAGE_EXIT)
}

/// clap's errors span several lines (message, usage, hint); the first carries the message.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("invalid arguments");
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}
