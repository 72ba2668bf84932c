//! Simulation config: the reference emulator's JSON format, loaded unchanged.
//!
//! A config is either a JSON file or the name of a built-in (`mi210`, the default; `mi300x`,
//! `mi350x`, `mi350x-2gpu`, or their file stems). The launcher validates it before starting the
//! application, and the preload library loads the same spec again from `ROCJITSU_CONFIG`, so
//! both see identical values. Keys the simulator does not honour are accepted and listed in
//! [`Config::ignored_keys`]; they are never an error, because the reference's configs carry
//! many (`thread_allocations`, `max_ticks`, `topology.links`, …).

mod builtin;
mod device;
mod error;
mod schema;
mod target;

use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

pub use builtin::{Builtin, BUILTINS, DEFAULT_BUILTIN};
pub use device::{capability, Device, MAX_GPUS, MAX_GPU_ID, RENDER_MINORS};
pub use error::{ConfigError, ConfigErrorKind, WHOLE_FILE};
pub use target::{Arch, GfxTarget, IpVersions};

use device::Checker;
use schema::RawConfig;

/// Config files larger than this are refused rather than read (the reference's are ~5 KiB).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// Where a config came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// A built-in, by its short name.
    Builtin(&'static str),
    /// A file, by absolute path.
    File(PathBuf),
}

impl ConfigSource {
    /// What to put in `ROCJITSU_CONFIG` so that [`load`] in another process finds the same
    /// config: the built-in's name or the absolute path.
    pub fn spec(&self) -> OsString {
        match self {
            ConfigSource::Builtin(name) => OsString::from(name),
            ConfigSource::File(path) => path.clone().into_os_string(),
        }
    }
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::Builtin(name) => write!(f, "built-in {name}"),
            ConfigSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A validated config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    source: ConfigSource,
    arch: Arch,
    gpus: Vec<Device>,
    workers: Option<NonZeroUsize>,
    ignored_keys: Vec<String>,
}

impl Config {
    /// Where the config came from.
    pub fn source(&self) -> &ConfigSource {
        &self.source
    }

    /// The architecture family (runnable by construction).
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Number of GPUs (`vm.gpu.num_gpus`, default 1).
    pub fn num_gpus(&self) -> u32 {
        self.gpus.len() as u32
    }

    /// Every GPU, with its per-GPU `gpu_id`, render minor, `location_id` and `unique_id`.
    pub fn gpus(&self) -> &[Device] {
        &self.gpus
    }

    /// The first GPU; every GPU shares its shape.
    pub fn device(&self) -> &Device {
        &self.gpus[0]
    }

    /// Worker threads for workgroup execution: the `workers` key, else the host's cores.
    pub fn workers(&self) -> NonZeroUsize {
        self.workers.unwrap_or_else(|| std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN))
    }

    /// JSON paths of keys that were accepted but are not honoured, in file order, for the
    /// caller to log once.
    pub fn ignored_keys(&self) -> &[String] {
        &self.ignored_keys
    }
}

/// Loads a config from a path or a built-in name.
///
/// `spec` is a path when it contains `/` or ends in `.json`; otherwise a built-in name if one
/// matches, else a path (so a file called `mi210` in the current directory needs `./mi210`).
pub fn load(spec: &str) -> Result<Config, ConfigError> {
    if spec.is_empty() {
        return Err(ConfigError::new(
            "\"\"",
            WHOLE_FILE,
            ConfigErrorKind::Read,
            format!("empty config name (built-ins: {})", builtin::names()),
        ));
    }
    let looks_like_path = spec.contains('/') || spec.ends_with(".json");
    match builtin::find(spec) {
        Some(b) if !looks_like_path => load_builtin(b),
        _ => load_file(Path::new(spec)),
    }
}

/// Loads a config file. Errors name the path as given.
pub fn load_file(path: &Path) -> Result<Config, ConfigError> {
    let label = path.display().to_string();
    let text = read_limited(path).map_err(|e| {
        let mut reason = format!("cannot read: {e}");
        let bare = !path.as_os_str().to_string_lossy().contains('/');
        if bare && e.kind() == std::io::ErrorKind::NotFound {
            reason.push_str(&format!("; not a built-in name either (built-ins: {})", builtin::names()));
        }
        ConfigError::new(&label, WHOLE_FILE, ConfigErrorKind::Read, reason)
    })?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    parse(&text, &label, ConfigSource::File(absolute))
}

/// The default config: built-in `mi210`.
pub fn default_config() -> Config {
    let b = builtin::find(DEFAULT_BUILTIN).expect("the default built-in exists");
    // The built-ins are part of the program and covered by tests; failing here is a build bug.
    load_builtin(b).expect("built-in mi210 config is valid")
}

/// Parses config text; `source` is recorded in the result. Used for files and built-ins, and
/// by tests that build configs in memory.
pub fn from_json_str(text: &str, source: ConfigSource) -> Result<Config, ConfigError> {
    let label = source.to_string();
    parse(text, &label, source)
}

fn load_builtin(b: &'static Builtin) -> Result<Config, ConfigError> {
    from_json_str(b.text, ConfigSource::Builtin(b.name))
}

fn read_limited(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!("larger than {} MiB", MAX_FILE_BYTES >> 20)));
    }
    Ok(text)
}

fn parse(text: &str, label: &str, source: ConfigSource) -> Result<Config, ConfigError> {
    let c = Checker { file: label };
    let (raw, ignored_keys) = deserialize(text, &c)?;

    let version = raw
        .vm
        .gpu
        .device
        .gfx_target_version
        .ok_or_else(|| c.err("vm.gpu.device.gfx_target_version", ConfigErrorKind::Missing, "missing (required)"))?;
    let target = GfxTarget::from_version(version).ok_or_else(|| {
        let known: Vec<String> = GfxTarget::ALL.iter().map(|t| format!("{} {}", t.version(), t.name())).collect();
        c.err(
            "vm.gpu.device.gfx_target_version",
            ConfigErrorKind::Target,
            format!("unknown gfx_target_version {version} (known: {})", known.join(", ")),
        )
    })?;
    let arch = resolve_arch(raw.vm.arch.as_deref(), target, &c)?;

    let num_gpus = raw.vm.gpu.num_gpus.unwrap_or(1);
    if !(1..=MAX_GPUS).contains(&num_gpus) {
        return Err(c.err(
            "vm.gpu.num_gpus",
            ConfigErrorKind::Range,
            format!("must be 1..={MAX_GPUS}, got {num_gpus}"),
        ));
    }
    let workers = match raw.workers {
        None => None,
        Some(n @ 1..=1024) => NonZeroUsize::new(n as usize),
        Some(n) => return Err(c.err("workers", ConfigErrorKind::Range, format!("must be 1..=1024, got {n}"))),
    };

    let hive_size = raw.vm.gpu.xgmi_hive_size.unwrap_or(num_gpus);
    if hive_size == 0 || num_gpus % hive_size != 0 {
        return Err(c.err(
            "vm.gpu.xgmi_hive_size",
            ConfigErrorKind::Range,
            format!("must divide vm.gpu.num_gpus ({num_gpus}) into whole hives, got {hive_size}"),
        ));
    }
    let first = device::build_device(&raw, target, num_gpus, &c)?;
    let gpus = (0..num_gpus).map(|i| first.instance(i, hive_size)).collect();
    Ok(Config { source, arch, gpus, workers, ignored_keys })
}

/// `vm.arch` must name a family we can run and agree with the target; absent, it follows the
/// target.
fn resolve_arch(name: Option<&str>, target: GfxTarget, c: &Checker<'_>) -> Result<Arch, ConfigError> {
    let runnable = Arch::RUNNABLE.map(Arch::name).join(", ");
    let Some(name) = name else {
        if target.arch().is_runnable() {
            return Ok(target.arch());
        }
        return Err(c.err(
            "vm.gpu.device.gfx_target_version",
            ConfigErrorKind::UnsupportedArch,
            format!("{} is {}, which cannot be simulated (runnable: {runnable})", target.name(), target.arch()),
        ));
    };
    let Some(arch) = Arch::from_name(name) else {
        let known = Arch::ALL.map(Arch::name).join(", ");
        return Err(c.err(
            "vm.arch",
            ConfigErrorKind::UnknownArch,
            format!("unknown arch \"{name}\" (known: {known})"),
        ));
    };
    if !arch.is_runnable() {
        return Err(c.err(
            "vm.arch",
            ConfigErrorKind::UnsupportedArch,
            format!("arch \"{name}\" cannot be simulated (runnable: {runnable})"),
        ));
    }
    if target.arch() != arch {
        return Err(c.err(
            "vm.gpu.device.gfx_target_version",
            ConfigErrorKind::Target,
            format!("{} is {} ({}), but vm.arch is {arch}", target.version(), target.name(), target.arch()),
        ));
    }
    Ok(arch)
}

/// Deserializes the text, recording every key the schema does not model.
fn deserialize(text: &str, c: &Checker<'_>) -> Result<(RawConfig, Vec<String>), ConfigError> {
    let mut ignored = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| ignored.push(clean_path(&path.to_string()));
    let mut json = serde_json::Deserializer::from_str(text);
    let result: Result<RawConfig, _> =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(&mut json, &mut record));
    let raw = match result {
        Ok(raw) => raw,
        Err(e) => {
            let path = e.path().to_string();
            return Err(json_error(e.into_inner(), &path, c));
        }
    };
    json.end().map_err(|e| json_error(e, ".", c))?;
    Ok((raw, ignored))
}

/// Maps serde_json's error onto file/key/reason: syntax errors are located by line and column,
/// data errors by JSON path (with the line as a hint).
fn json_error(e: serde_json::Error, path: &str, c: &Checker<'_>) -> ConfigError {
    use serde_json::error::Category;
    let full = e.to_string();
    let message = full.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&full);
    let at = format!("line {}:{}", e.line(), e.column());
    match e.classify() {
        Category::Syntax | Category::Eof => c.err(&at, ConfigErrorKind::Syntax, format!("invalid JSON: {message}")),
        Category::Data => {
            let key = if path == "." { "(top level)" } else { path };
            c.err(key, ConfigErrorKind::Type, format!("{message} ({at})"))
        }
        Category::Io => c.err(WHOLE_FILE, ConfigErrorKind::Read, message),
    }
}

/// serde_ignored writes `?` for the `Some` of an `Option`; our paths name keys only.
fn clean_path(path: &str) -> String {
    path.split('.').filter(|segment| *segment != "?").collect::<Vec<_>>().join(".")
}

#[cfg(test)]
mod tests;
