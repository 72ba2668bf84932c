//! The ROCm user spaces the end-to-end tests run against: Debian 12's ROCm 5.2 on the host,
//! and the newer stacks in the Debian roots `cargo xtask rootfs` builds (trixie: ROCR 6.1 +
//! HIP 5.7; sid: ROCm 6.4). A program is compiled by its stack's own hipcc and runs with its
//! stack's libraries; `rocjitsu` is the one built on the host in every case.
//!
//! This module is also where xtask learns where the roots live ([`roots_dir`]), what marks a
//! complete one ([`MARKER`]) and how to enter one ([`bwrap`]): one definition for both.
//!
//! Commands enter a root with bubblewrap, binding the workspace and the target directory at
//! the same paths, `/tmp` and the process's temporary directory (daemon sockets, temporary
//! files) and a read-only `/sys`; nothing stays mounted when the command ends.

use crate::{bin_dir, compile, root, run, Daemon, Outcome};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One ROCm user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stack {
    /// The host's Debian 12 ROCm 5.2.3.
    Host,
    /// Debian 13: ROCR 6.1.2, libhsakmt 6.2.4, HIP 5.7.1.
    Trixie,
    /// Debian sid: ROCm 6.4.3 (HIP, ROCR with its thunk built in), rocminfo 7.x.
    Sid,
}

/// How `rocjitsu` serves a program's GPU: in the program's own process, through a private
/// daemon it starts (`--daemon`), or through a shared daemon already running (`--attach`).
#[derive(Clone, Copy, Debug)]
pub enum Mode<'a> {
    Local,
    Daemon,
    Attach(&'a Daemon),
}

impl Mode<'_> {
    /// The two modes that need no daemon started by the test.
    pub const OWN: [Mode<'static>; 2] = [Mode::Local, Mode::Daemon];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Local => "local",
            Mode::Daemon => "--daemon",
            Mode::Attach(_) => "--attach",
        }
    }

    /// Adds this mode's arguments (and environment) to `cmd`, a command running `rocjitsu`
    /// whose own arguments come next.
    pub fn apply(self, cmd: &mut Command) {
        match self {
            Mode::Local => {}
            Mode::Daemon => {
                cmd.arg("--daemon");
            }
            Mode::Attach(d) => {
                cmd.arg("--attach").arg("--socket").arg(&d.socket).env("ROCJITSU_RUNTIME_DIR", d.dir.path());
            }
        }
    }
}

/// The file a complete root carries, written last by `cargo xtask rootfs`: the ROCm packages
/// and versions the root was built with. A root without it is half built.
pub const MARKER: &str = ".rocjitsu-root";

/// Cargo's target directory: the one this executable (test binary or xtask) was built into —
/// the nearest ancestor carrying cargo's `CACHEDIR.TAG` — else `$CARGO_TARGET_DIR`, else
/// `target/` in the workspace.
pub fn target_dir() -> PathBuf {
    let built_in = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().skip(1).find(|d| d.join("CACHEDIR.TAG").is_file()).map(Path::to_path_buf));
    built_in
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(|d| root().join(d)))
        .unwrap_or_else(|| root().join("target"))
}

/// Where the Debian roots live: `$ROCJITSU_ROOTS_DIR`, else `<target>/roots`; each root is
/// the subdirectory named after its stack.
pub fn roots_dir() -> PathBuf {
    std::env::var_os("ROCJITSU_ROOTS_DIR").map(PathBuf::from).unwrap_or_else(|| target_dir().join("roots"))
}

/// The marker's text (the root's ROCm packages and versions), if `root` is complete.
pub fn marker_text(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join(MARKER)).ok()
}

/// A `bwrap` command entering `root`: the root as `/`, fresh `/dev` and `/proc`, the host's
/// `/sys` (read-only) and `/etc/resolv.conf`, `/tmp` and the process's temporary directory
/// (`std::env::temp_dir()`, where `TMPDIR` may point), the workspace and the target
/// directory at their own paths, and the current directory when one of those holds it (else
/// `/`). The caller adds `--` and the command.
pub fn bwrap(root: &Path) -> Command {
    let mut c = Command::new("bwrap");
    c.arg("--bind").arg(root).arg("/");
    c.args(["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/sys", "/sys"]);
    c.args(["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf", "--die-with-parent"]);
    // Parents first: a directory inside one already bound comes along with it.
    let mut dirs = [crate::root(), target_dir(), PathBuf::from("/tmp"), std::env::temp_dir()];
    dirs.sort_by_key(|d| d.components().count());
    let mut bound: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if dir.is_dir() && !bound.iter().any(|b| dir.starts_with(b)) {
            c.arg("--bind").arg(&dir).arg(&dir);
            bound.push(dir);
        }
    }
    match std::env::current_dir().ok().filter(|d| bound.iter().any(|b| d.starts_with(b))) {
        Some(d) => c.arg("--chdir").arg(d),
        None => c.args(["--chdir", "/"]),
    };
    c
}

impl Stack {
    pub fn name(self) -> &'static str {
        match self {
            Stack::Host => "host",
            Stack::Trixie => "trixie",
            Stack::Sid => "sid",
        }
    }

    /// The directory of this stack's Debian root (none for the host). Panics, saying how to
    /// build it, when the root is missing or half built.
    pub fn root_dir(self) -> Option<PathBuf> {
        if self == Stack::Host {
            return None;
        }
        let dir = roots_dir().join(self.name());
        assert!(
            dir.join(MARKER).exists(),
            "the {} root is not built at {}: run `cargo xtask rootfs {}` (or `cargo xtask test`, which builds it)",
            self.name(),
            dir.display(),
            self.name()
        );
        Some(dir)
    }

    /// The ROCm package versions of this stack, one line each (for failure messages).
    pub fn versions(self) -> String {
        match self.root_dir() {
            Some(dir) => marker_text(&dir).unwrap_or_default(),
            None => {
                let out = Command::new("dpkg-query")
                    .args(["-W", "-f=${Package} ${Version}\n", "libamdhip64-5", "libhsa-runtime64-1", "rocminfo"])
                    .output();
                format!(
                    "host ROCm packages:\n{}",
                    out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
                )
            }
        }
    }

    /// A command running `program` in this stack.
    pub fn command(self, program: impl AsRef<OsStr>) -> Command {
        let Some(root) = self.root_dir() else {
            return Command::new(program);
        };
        let mut c = bwrap(&root);
        // `rocjitsu` and the test programs, wherever `$ROCJITSU_BIN_DIR` put them.
        let bins = bin_dir();
        if !bins.starts_with(crate::root()) && !bins.starts_with(target_dir()) {
            c.arg("--bind").arg(&bins).arg(&bins);
        }
        c.arg("--").arg("env").arg("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin").arg(program);
        c
    }

    /// `rocjitsu` (the host's build) running in this stack, in local mode until a [`Mode`]
    /// is applied (see [`Self::rocjitsu_in`]).
    pub fn rocjitsu(self) -> Command {
        let mut c = self.command(bin_dir().join("rocjitsu"));
        // Each test gets the default log level and config unless the caller overrides them.
        c.env_remove("ROCJITSU_LOG").env_remove("ROCJITSU_CONFIG");
        c
    }

    /// `rocjitsu` in this stack, serving the program in `mode`.
    pub fn rocjitsu_in(self, mode: Mode) -> Command {
        let mut c = self.rocjitsu();
        mode.apply(&mut c);
        c
    }

    /// `integration/programs/<name>.hip` compiled by this stack's hipcc for `arch`, linked with
    /// `libs` (once per run; the executable is rebuilt when the source or a header next to it
    /// is newer, or when the stack's root was rebuilt since).
    pub fn hip_program(self, name: &str, arch: &str, libs: &[&str]) -> PathBuf {
        let source = root().join("integration/programs").join(format!("{name}.hip"));
        let dir = bin_dir().join("test-programs").join(self.name()).join(arch);
        std::fs::create_dir_all(&dir).expect("create the test program directory");
        let exe = dir.join(name);
        let mut cmd = self.command("hipcc");
        cmd.arg(format!("--offload-arch={arch}")).args(["-O2", "-o"]).arg(&exe).arg(&source);
        cmd.args(libs.iter().map(|l| format!("-l{l}")));
        let marker = self.root_dir().map(|r| r.join(MARKER));
        compile(&source, marker.as_deref(), &exe, cmd)
    }

    /// Runs `exe` with `args` under `rocjitsu` in `mode` (within `deadline`), this stack's
    /// package versions added to a failure's output.
    pub fn run_program(self, mode: Mode, exe: &Path, args: &[&str], deadline: Duration) -> Outcome {
        let mut cmd = self.rocjitsu_in(mode);
        cmd.arg("--").arg(exe).args(args);
        self.run(cmd, deadline)
    }

    /// Compiles `integration/programs/<name>.hip` for gfx90a and runs it in local and
    /// `--daemon` mode; each run must print every `PASS <p>` of `passes` and nothing failing.
    pub fn assert_program_passes(self, name: &str, passes: &[&str]) {
        let exe = self.hip_program(name, "gfx90a", &[]);
        for mode in Mode::OWN {
            let o = self.run_program(mode, &exe, &[], Duration::from_secs(300));
            o.assert_passes(&format!("{name} ({}, {})", self.name(), mode.name()), passes);
        }
    }

    /// Runs `cmd` (built with [`Self::rocjitsu`] or [`Self::command`]) and adds this stack's
    /// package versions to the output, so that a failure says what it ran against.
    pub fn run(self, cmd: Command, deadline: Duration) -> Outcome {
        self.note_versions(run(cmd, deadline))
    }

    /// `o` with this stack's package versions added to its stderr if it failed.
    pub fn note_versions(self, mut o: Outcome) -> Outcome {
        if !o.status.success() {
            o.stderr.push_str(&format!("\n[{}]\n", self.versions().trim_end()));
        }
        o
    }
}
