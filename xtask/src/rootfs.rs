//! `cargo xtask rootfs [sid|trixie|all] [--dir DIR]`: Debian roots for the newer ROCm stacks.
//!
//! Debian 13 (trixie: ROCR 6.1, HIP 5.7) and sid (ROCm 6.4) need glibc ≥ 2.38, newer than the
//! Debian 12 the machines run, so their binaries run in a minimal Debian root of their own:
//! built with debootstrap from the Debian mirror the machine's apt already uses (no other host),
//! with the ROCm packages the tests use installed by apt inside it. `rocjitsu` built on the host
//! runs inside the root unchanged (bubblewrap binds the workspace at the same path).
//!
//! A root is complete when its marker file exists (written last, listing the installed
//! versions); a root without one is a half-built root from an interrupted run and is built
//! again. Roots live in `$ROCJITSU_ROOTS_DIR`, else `target/roots/<name>`. Commands enter them
//! with `bwrap`, whose mounts last only as long as the process: nothing stays mounted inside a
//! directory that `cargo clean` may delete. Where roots live, the marker's name and the `bwrap`
//! command line are the tests' own (`integration::stack`), so both always agree.

use anyhow::{bail, Context, Result};
use integration::stack::{self, MARKER};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One Debian release and what the tests need from it.
pub struct Flavor {
    pub name: &'static str,
    /// The Debian suite debootstrap installs.
    pub suite: &'static str,
    /// The ROCm packages every root has ([`ROCM_PACKAGES`]) and this one's own.
    pub extra: &'static [&'static str],
}

impl Flavor {
    /// Every package the tests need from this root.
    pub fn packages(&self) -> Vec<&'static str> {
        ROCM_PACKAGES.iter().chain(self.extra).copied().collect()
    }
}

/// The ROCm user space, hipcc, and the libraries the library tests link.
const ROCM_PACKAGES: &[&str] = &[
    "rocminfo",
    "hipcc",
    "libamdhip64-dev",
    "librocrand-dev",
    "libhiprand-dev",
    "librocsparse-dev",
    "libhipsparse-dev",
];

/// Sid's also: llama.cpp (libllama, ggml's HIP backend built for gfx90a, llama-quantize) and
/// python3-gguf, for the tiny-model test (`integration/tests/llama.rs`).
const SID_EXTRA: &[&str] = &["libllama-dev", "libggml0-backend-hip", "llama.cpp-tools", "python3-gguf"];

/// Trixie's also: RCCL 5.4.3 (built for gfx90a) and its own gtest program, `UnitTests`, for
/// the collectives tests (`integration/tests/rccl.rs`).
const TRIXIE_EXTRA: &[&str] = &["librccl-dev", "librccl1-tests"];

pub const FLAVORS: [Flavor; 2] = [
    Flavor { name: "trixie", suite: "trixie", extra: TRIXIE_EXTRA },
    Flavor { name: "sid", suite: "sid", extra: SID_EXTRA },
];

pub fn run(args: &[String]) -> Result<()> {
    let mut names = Vec::new();
    let mut dir = stack::roots_dir();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dir" => dir = PathBuf::from(it.next().context("--dir needs a directory")?),
            "all" => names.extend(FLAVORS.iter().map(|f| f.name)),
            name => match FLAVORS.iter().find(|f| f.name == name) {
                Some(f) => names.push(f.name),
                None => bail!("unknown root {name:?} (roots: {})", FLAVORS.map(|f| f.name).join(", ")),
            },
        }
    }
    if names.is_empty() {
        names.extend(FLAVORS.iter().map(|f| f.name));
    }
    for name in names {
        let flavor = FLAVORS.iter().find(|f| f.name == name).expect("checked");
        ensure(flavor, &dir)?;
    }
    Ok(())
}

/// Builds (or completes) the root of `flavor` under `dir`; returns its path.
pub fn ensure(flavor: &Flavor, dir: &Path) -> Result<PathBuf> {
    let root = dir.join(flavor.name);
    if let Some(text) = stack::marker_text(&root) {
        let missing: Vec<&str> = flavor
            .packages()
            .into_iter()
            .filter(|p| !text.lines().any(|l| l.split_whitespace().next() == Some(p)))
            .collect();
        if missing.is_empty() {
            eprintln!("xtask rootfs: {} is complete ({})", root.display(), first_line(&text));
            return Ok(root);
        }
        eprintln!("xtask rootfs: {} lacks {}; installing them", root.display(), missing.join(" "));
        apt_install(&root, &missing)?;
        write_marker(flavor, &root)?;
        return Ok(root);
    }
    if root.exists() {
        refuse_if_mounted(&root)?;
        eprintln!("xtask rootfs: {} is half built (no {MARKER}); building it again", root.display());
        privileged(&["rm", "-rf"], &[root.as_os_str()])?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mirror = host_mirror()?;
    eprintln!("xtask rootfs: debootstrap {} into {} from {mirror}", flavor.suite, root.display());
    privileged(
        &["debootstrap", "--variant=minbase", flavor.suite],
        &[root.as_os_str(), std::ffi::OsStr::new(&mirror)],
    )?;
    apt_install(&root, &flavor.packages())?;
    write_marker(flavor, &root)?;
    Ok(root)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The Debian mirror the host's apt uses: the URI of its first `deb` source for a Debian
/// release (not the security archive), from deb822 `.sources` files or `sources.list`.
pub fn host_mirror() -> Result<String> {
    let mut texts = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "sources" || e == "list")) {
            texts.push(std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    texts.push(std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default());
    texts
        .iter()
        .find_map(|t| mirror_in(t))
        .context("no Debian mirror found in /etc/apt/sources.list{,.d} (debootstrap needs one)")
}

/// The first Debian mirror URI in one sources file (either format).
fn mirror_in(text: &str) -> Option<String> {
    let is_debian = |uri: &str, suites: &str| {
        !uri.contains("security")
            && suites
                .split_whitespace()
                .any(|s| ["bookworm", "trixie", "forky", "sid", "stable", "testing", "unstable"].contains(&s))
    };
    // One-line format: `deb [options] URI suite components`.
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("deb ")) {
        let rest = line["deb ".len()..].trim_start();
        // Options in brackets may contain spaces.
        let rest = match rest.strip_prefix('[') {
            Some(opts) => opts.split_once(']').map_or("", |(_, after)| after),
            None => rest,
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if let [uri, suite, ..] = fields.as_slice() {
            if is_debian(uri, suite) {
                return Some(uri.to_string());
            }
        }
    }
    // deb822: stanzas of `Key: value` lines, separated by blank lines.
    for stanza in text.split("\n\n") {
        let field = |key: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(|v| v.trim().to_string()))
        };
        let (Some(types), Some(uris), Some(suites)) = (field("Types"), field("URIs"), field("Suites")) else {
            continue;
        };
        let enabled = field("Enabled").is_none_or(|e| e != "no");
        if enabled && types.split_whitespace().any(|t| t == "deb") {
            if let Some(uri) = uris.split_whitespace().find(|u| is_debian(u, &suites)) {
                return Some(uri.to_string());
            }
        }
    }
    None
}

/// A command in `root`, through bubblewrap (as root: apt inside needs it).
pub(crate) fn in_root(root: &Path, cmd: &[&str]) -> Result<()> {
    let mut c = stack::bwrap(root);
    c.arg("--").args(["env", "DEBIAN_FRONTEND=noninteractive", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"]);
    c.args(cmd);
    let args: Vec<&std::ffi::OsStr> = std::iter::once(c.get_program()).chain(c.get_args()).collect();
    privileged(&[], &args)
}

/// Installs into `root` those of `packages` it lacks (the test suites' packages, which the
/// root's marker does not list: a root serves the tests without them).
pub fn install_missing(root: &Path, packages: &[&str]) -> Result<()> {
    let installed = installed_versions(root)?;
    let missing: Vec<&str> = packages.iter().copied().filter(|p| !installed.iter().any(|(n, _)| n == p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    eprintln!("xtask rootfs: installing {} into {}", missing.join(" "), root.display());
    apt_install(root, &missing)
}

fn apt_install(root: &Path, packages: &[&str]) -> Result<()> {
    // The machine's mirror may serve a frozen snapshot of the archive (the host's own sources
    // name one) whose Release files are past their Valid-Until date: accept them, as apt
    // would for snapshot.debian.org. Signatures are still checked.
    in_root(root, &["apt-get", "-o", "Acquire::Check-Valid-Until=false", "update", "-qq"])?;
    let mut cmd = vec!["apt-get", "install", "-y", "-qq", "--no-install-recommends"];
    cmd.extend_from_slice(packages);
    in_root(root, &cmd)?;
    in_root(root, &["apt-get", "clean"])
}

/// Writes the marker: the flavor's packages (and what they pulled in from ROCm) with versions.
fn write_marker(flavor: &Flavor, root: &Path) -> Result<()> {
    let versions = installed_versions(root)?;
    let mut text = format!("{} root, ROCm packages:\n", flavor.name);
    for p in flavor.packages() {
        let v =
            versions.iter().find(|(n, _)| n == p).map(|(_, v)| v.as_str()).context(format!("{p} is not installed"))?;
        text.push_str(&format!("{p} {v}\n"));
    }
    for (n, v) in versions.iter().filter(|(n, _)| is_rocm_runtime(n)) {
        text.push_str(&format!("{n} {v}\n"));
    }
    std::fs::write(root.join(MARKER), &text).or_else(|_| {
        // A root built through sudo is root's: write the marker the same way.
        let tmp = std::env::temp_dir().join(format!("rocjitsu-marker-{}", std::process::id()));
        std::fs::write(&tmp, &text)?;
        privileged(&["cp"], &[tmp.as_os_str(), root.join(MARKER).as_os_str()]).map_err(std::io::Error::other)
    })?;
    eprintln!("xtask rootfs: {} ready:\n{text}", root.display());
    Ok(())
}

/// The runtime libraries whose versions matter when reading a test result.
fn is_rocm_runtime(name: &str) -> bool {
    ["libamdhip64-", "libhsa-runtime64-", "libhsakmt", "librocrand", "librocsparse", "libdrm-amdgpu"]
        .iter()
        .any(|p| name.starts_with(p) && !name.ends_with("-dev"))
}

/// (package, version) of everything installed in `root`, read with the host's dpkg-query.
pub fn installed_versions(root: &Path) -> Result<Vec<(String, String)>> {
    let out = Command::new("dpkg-query")
        .arg(format!("--admindir={}", root.join("var/lib/dpkg").display()))
        .args(["-W", "-f=${Package} ${Version} ${db:Status-Status}\n"])
        .output()
        .context("cannot run dpkg-query")?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (name, version, status) = (f.next()?, f.next()?, f.next()?);
            (status == "installed").then(|| (name.to_string(), version.to_string()))
        })
        .collect())
}

/// Refuses to touch a root that has something mounted inside (a mount left by hand would take
/// the host's files with it when the root is deleted).
fn refuse_if_mounted(root: &Path) -> Result<()> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(m) =
        mounts.lines().filter_map(|l| l.split_whitespace().nth(4)).find(|m| Path::new(m).starts_with(&root))
    {
        bail!("{m} is mounted inside {}: unmount it before the root can be rebuilt", root.display());
    }
    Ok(())
}

/// Runs `cmd` + `args` as root (through sudo when we are not).
fn privileged(cmd: &[&str], args: &[&std::ffi::OsStr]) -> Result<()> {
    let mut all: Vec<&std::ffi::OsStr> = cmd.iter().map(std::ffi::OsStr::new).collect();
    all.extend_from_slice(args);
    let (program, rest) = all.split_first().context("empty command")?;
    let mut c = if crate::deps::is_root() {
        let mut c = Command::new(program);
        c.args(rest);
        c
    } else {
        let mut c = Command::new("sudo");
        c.arg(program).args(rest);
        c
    };
    let status = c.status().with_context(|| format!("cannot run {c:?}"))?;
    if !status.success() {
        bail!("{c:?} failed with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_comes_from_either_sources_format() {
        let deb822 = "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n";
        assert_eq!(mirror_in(deb822).as_deref(), Some("http://deb.debian.org/debian"));
        let security_first = "Types: deb\nURIs: http://security.debian.org/debian-security\nSuites: bookworm-security\n\nTypes: deb\nURIs: http://ftp.fr.debian.org/debian\nSuites: bookworm\n";
        assert_eq!(mirror_in(security_first).as_deref(), Some("http://ftp.fr.debian.org/debian"));
        let one_line = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n";
        assert_eq!(mirror_in(one_line).as_deref(), Some("http://mirror.example/debian"));
        assert_eq!(mirror_in("deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n"), None);
        assert_eq!(mirror_in("Types: deb\nURIs: http://x/debian\nSuites: bookworm\nEnabled: no\n"), None);
    }
}
