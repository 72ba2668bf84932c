//! The Debian packages the tests need, installed only when missing.

use anyhow::{bail, Context, Result};
use std::process::Command;

/// What the tests run or compile against: the real ROCm 5.2.3 user space of
/// Debian bookworm, hipcc and its compiler, the ROCm libraries the library tests
/// link (rocRAND/hipRAND, rocSPARSE/hipSPARSE), LLVM 15 (llvm-mc for gfx90a test
/// vectors), LLVM/clang 19 (gfx942 kernels and test vectors), and kmod (rocminfo runs
/// `lsmod | grep amdgpu` before anything).
pub const PACKAGES: &[&str] = &[
    "rocminfo",
    "libhsa-runtime64-1",
    "libhsa-runtime-dev",
    "libhsakmt1",
    "libamdhip64-5",
    "libamdhip64-dev",
    "hipcc",
    "rocm-device-libs",
    "libamd-comgr2",
    "librocrand-dev",
    "libhiprand-dev",
    "librocsparse-dev",
    "libhipsparse-dev",
    "clang-15",
    "llvm-15",
    "clang-19",
    "llvm-19",
    "lld-19",
    "kmod",
    // systemd-socket-activate, for the socket-activation test.
    "systemd",
    "gcc",
    // The Debian roots of the newer ROCm stacks (`cargo xtask rootfs`).
    "debootstrap",
    "bubblewrap",
    // `ip`, for the two simulated hosts of the RCCL test (network namespaces, a veth pair).
    "iproute2",
];

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Installs the missing packages, then builds (or completes) the Debian roots of the newer
/// ROCm stacks (for `deps`, `test` and `bench`, which run programs in them; `demo` needs only
/// [`install_host_packages`]).
pub fn install() -> Result<()> {
    install_host_packages()?;
    let dir = integration::stack::roots_dir();
    for flavor in &crate::rootfs::FLAVORS {
        crate::rootfs::ensure(flavor, &dir)?;
    }
    Ok(())
}

/// Installs the missing host packages with apt-get (through sudo when not root).
pub fn install_host_packages() -> Result<()> {
    let missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        eprintln!("xtask deps: all {} packages present", PACKAGES.len());
        return Ok(());
    }
    eprintln!("xtask deps: installing {}", missing.join(" "));
    let root = is_root();
    let run = |args: &[&str]| -> Result<()> {
        let mut cmd = if root {
            Command::new(args[0])
        } else {
            let mut c = Command::new("sudo");
            c.arg(args[0]);
            c
        };
        cmd.args(&args[1..]).env("DEBIAN_FRONTEND", "noninteractive");
        let status = cmd.status().with_context(|| format!("cannot run {}", args[0]))?;
        if !status.success() {
            bail!("{} failed with {status}", args.join(" "));
        }
        Ok(())
    };
    run(&["apt-get", "update", "-qq"])?;
    let mut args = vec!["apt-get", "install", "-y", "-qq", "--no-install-recommends"];
    args.extend(missing.iter().copied());
    run(&args)?;
    let still: Vec<&str> = missing.iter().copied().filter(|p| !installed(p)).collect();
    if !still.is_empty() {
        bail!("packages still missing after apt-get: {}", still.join(" "));
    }
    Ok(())
}

/// Whether we run as root (else privileged steps go through sudo).
pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}
