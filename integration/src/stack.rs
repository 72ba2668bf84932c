//! The ROCm user spaces the end-to-end tests run against: Debian 12's ROCm 5.2 on the host,
//! and the newer stacks in the Debian roots `cargo xtask rootfs` builds (trixie: ROCR 6.1 +
//! HIP 5.7; sid: ROCm 6.4). A program is compiled by its stack's own hipcc and runs with its
//! stack's libraries; `rocjitsu` is the one built on the host in every case.
//!
//! Commands enter a root with bubblewrap, binding the workspace (and the target directory) at
//! the same paths, `/tmp` (daemon sockets, temporary files) and a read-only `/sys`; nothing
//! stays mounted when the command ends.

use crate::{bin_dir, compile, root, run, Outcome};
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

/// The marker a complete root carries (`xtask/src/rootfs.rs`).
const MARKER: &str = ".rocjitsu-root";

impl Stack {
    pub const ALL: [Stack; 3] = [Stack::Host, Stack::Trixie, Stack::Sid];

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
        let dir = std::env::var_os("ROCJITSU_ROOTS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| target_dir().join("roots"))
            .join(self.name());
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
            Some(dir) => std::fs::read_to_string(dir.join(MARKER)).unwrap_or_default(),
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
        let mut c = Command::new("bwrap");
        c.arg("--bind").arg(&root).arg("/");
        c.args(["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/sys", "/sys", "--bind", "/tmp", "/tmp"]);
        c.args(["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf", "--die-with-parent"]);
        let workspace = crate::root();
        c.arg("--bind").arg(&workspace).arg(&workspace);
        let target = target_dir();
        if !target.starts_with(&workspace) {
            c.arg("--bind").arg(&target).arg(&target);
        }
        if let Ok(cwd) = std::env::current_dir() {
            c.arg("--chdir").arg(cwd);
        }
        c.arg("--").arg("env").arg("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin").arg(program);
        c
    }

    /// `rocjitsu` (the host's build) running in this stack.
    pub fn rocjitsu(self) -> Command {
        let mut c = self.command(bin_dir().join("rocjitsu"));
        c.env_remove("ROCJITSU_LOG").env_remove("ROCJITSU_CONFIG");
        c
    }

    /// `integration/programs/<name>.hip` compiled by this stack's hipcc for `arch`, linked with
    /// `libs` (once per run; the executable is rebuilt when the source is newer).
    pub fn hip_program(self, name: &str, arch: &str, libs: &[&str]) -> PathBuf {
        let source = root().join("integration/programs").join(format!("{name}.hip"));
        let dir = bin_dir().join("test-programs").join(self.name()).join(arch);
        std::fs::create_dir_all(&dir).expect("create the test program directory");
        let exe = dir.join(name);
        let mut cmd = self.command("hipcc");
        cmd.arg(format!("--offload-arch={arch}")).args(["-O2", "-o"]).arg(&exe).arg(&source);
        cmd.args(libs.iter().map(|l| format!("-l{l}")));
        compile(&source, &exe, cmd)
    }

    /// Runs `cmd` (built with [`Self::rocjitsu`] or [`Self::command`]) and adds this stack's
    /// package versions to the output, so that a failure says what it ran against.
    pub fn run(self, cmd: Command, deadline: Duration) -> Outcome {
        let mut o = run(cmd, deadline);
        if !o.status.success() {
            o.stderr.push_str(&format!("\n[{}]\n", self.versions().trim_end()));
        }
        o
    }
}

/// Cargo's target directory (where `bin_dir` lives).
fn target_dir() -> PathBuf {
    bin_dir().parent().map(Path::to_path_buf).unwrap_or_else(|| root().join("target"))
}
