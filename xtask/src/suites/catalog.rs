//! The libraries' own test suites, as Debian sid packages them (built for gfx90a), and how
//! each runs.

use anyhow::{Context, Result};
use std::path::Path;

/// One library's test suite.
pub struct Suite {
    /// The name on the command line and in the table.
    pub name: &'static str,
    /// The Debian packages that install it (apt pulls in the library itself).
    pub packages: &'static [&'static str],
    pub kind: Kind,
    /// The gtest filter of the CI's smoke subset: a few tests of every area of the library,
    /// chosen to finish within a couple of minutes on two cores.
    pub smoke: &'static str,
    /// At most this many of the smoke filter's tests, spread over them (per program).
    pub smoke_sample: Option<usize>,
    /// Prepares the root for the suite (a fix for how Debian packages it), given the root.
    pub setup: Option<fn(&Path) -> Result<()>>,
}

pub enum Kind {
    /// googletest programs: `programs` in `dir`, or every file there starting with `test`
    /// when `programs` is empty; `args` go to each.
    Gtest { dir: &'static str, programs: &'static [&'static str], args: &'static [&'static str] },
    /// llama.cpp's `test-backend-ops`: every ggml operation on the HIP backend against the CPU.
    BackendOps,
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "rocrand",
        packages: &["librocrand1-tests"],
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/librocrand1-tests", programs: &[], args: &[] },
        // The device API's kernels (quick), not the host API's statistical tests (seconds
        // each) nor MT19937 (minutes: its set-up kernel, see docs/SUITES.md).
        smoke: "rocrand_basic_tests.*:rocrand_kernel_*",
        smoke_sample: Some(8),
        setup: None,
    },
    Suite {
        name: "hiprand",
        packages: &["libhiprand1-tests"],
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/libhiprand1-tests", programs: &[], args: &[] },
        smoke: "hiprand_kernel_h_*:hiprand_linkage_tests.*",
        smoke_sample: None,
        setup: None,
    },
    Suite {
        name: "rocsparse",
        packages: &["librocsparse1-tests", "librocsparse1-tests-data"],
        kind: Kind::Gtest {
            dir: "/usr/libexec/rocm/librocsparse1-tests",
            programs: &["rocsparse-test"],
            // It finds its test data (`/usr/share/librocsparse1-tests/data`) by itself.
            args: &[],
        },
        smoke: "quick/axpyi.*:quick/gthr.*:quick/csrmv.level2/f32_r_100_*",
        smoke_sample: Some(60),
        setup: None,
    },
    Suite {
        name: "hipsparse",
        packages: &["libhipsparse1-tests"],
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/libhipsparse1-tests", programs: &["hipsparse-test"], args: &[] },
        smoke: "*axpyi*:*gthr*",
        smoke_sample: Some(60),
        setup: None,
    },
    Suite {
        name: "rocfft",
        packages: &["librocfft0-tests"],
        // The seed fixes the tests' random parameters, which are part of their names.
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/librocfft0-tests", programs: &["rocfft-test"], args: &["--seed", "1"] },
        smoke: "pow2_1D/accuracy_test.vs_fftw/complex_forward_len_8_*:pow2_1D/accuracy_test.vs_fftw/complex_forward_len_64_*",
        smoke_sample: Some(20),
        setup: None,
    },
    Suite {
        name: "hipfft",
        packages: &["libhipfft0-tests"],
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/libhipfft0-tests", programs: &["hipfft-test"], args: &["--seed", "1"] },
        smoke: "pow2_1D/accuracy_test.vs_fftw/complex_forward_len_8_single_ip_batch_1_*",
        smoke_sample: None,
        setup: None,
    },
    Suite {
        name: "rocblas",
        packages: &["librocblas4-tests"],
        kind: Kind::Gtest {
            dir: "/usr/libexec/rocm/librocblas4-tests",
            programs: &["rocblas-test"],
            // The test data as Debian ships it, already generated from the YAML.
            args: &["--data", "/usr/share/librocblas4-tests/data/rocblas_gtest.data"],
        },
        smoke: "*/quick*f32_r*-_/gemm_ex*:_/gemm_batched_ex*:_/gemm_strided_batched_ex*",
        smoke_sample: Some(40),
        setup: None,
    },
    Suite {
        name: "miopen",
        packages: &["libmiopen1-tests"],
        kind: Kind::Gtest { dir: "/usr/libexec/rocm/libmiopen1-tests", programs: &["miopen_gtest"], args: &[] },
        // Tensor operations of one to five dimensions (their kernels precompiled for the 1-D
        // and 2-D cases, compiled at run time for the others), a loss function and
        // batch-norm inference fused with an activation (compiled at run time): 63 tests.
        smoke: "Smoke/GPU_TernaryTensorOps_FP32.TestFloat/?:Smoke/GPU_TernaryTensorOps_FP32.TestFloat/?00:\
                Smoke/GPU_TernaryTensorOps_FP32.TestFloat/1?00:Smoke/GPU_TernaryTensorOps_FP32.TestFloat/2?00:\
                Smoke/GPU_MultiMarginLoss_FP32.Test/?:Smoke/GPU_Op4dTensorGenericTest_FP32.PortTest/?:\
                Smoke/GPU_bn_infer_fused_spatial_FP32.PortTest/?",
        smoke_sample: None,
        setup: Some(miopen_toolchain),
    },
    Suite {
        name: "llama-backend-ops",
        packages: &["llama.cpp-tests", "libggml0-backend-hip"],
        kind: Kind::BackendOps,
        smoke: "ADD:SOFT_MAX:RMS_NORM:GET_ROWS",
        smoke_sample: None,
        setup: None,
    },
];

pub fn find(name: &str) -> Option<&'static Suite> {
    SUITES.iter().find(|s| s.name == name)
}

/// MIOpen compiles kernels at run time, and two things in how Debian built it break those
/// compiles before any GPU work (docs/SUITES.md); this repairs both in the root:
/// - [`build_tree_clang`]: the clang of Debian's build tree, named in libMIOpen;
/// - [`drop_isystem_usr_include`]: the `-isystem /usr/include` of its HIP compiles.
fn miopen_toolchain(root: &Path) -> Result<()> {
    let lib = root.join("usr/lib/x86_64-linux-gnu/libMIOpen.so.1");
    let bytes = std::fs::read(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    build_tree_clang(root, &bytes)?;
    drop_isystem_usr_include(root, &bytes)
}

/// The NUL-terminated string of `bytes` that starts with `prefix`, if any.
fn string_starting(bytes: &[u8], prefix: &[u8]) -> Option<String> {
    let at = bytes.windows(prefix.len()).position(|w| w == prefix)?;
    let end = bytes[at..].iter().position(|&b| b == 0).map_or(bytes.len(), |n| at + n);
    Some(String::from_utf8_lossy(&bytes[at..end]).into_owned())
}

/// libMIOpen names the clang of Debian's build tree
/// (`/build/reproducible-path/miopen-…/build/clang-21`), which no installed system has: the
/// compile fails and the test waits forever. A link at that path to the root's own clang (the
/// same version, from hipcc's dependencies) gives MIOpen the compiler it was built to use.
fn build_tree_clang(root: &Path, lib: &[u8]) -> Result<()> {
    let Some(path) = string_starting(lib, b"/build/reproducible-path/") else { return Ok(()) };
    let Some(name) = path.rsplit('/').next().filter(|n| n.starts_with("clang")) else { return Ok(()) };
    let link = root.join(path.trim_start_matches('/'));
    if link.symlink_metadata().is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(link.parent().expect("a path in a directory"))?;
    std::os::unix::fs::symlink(format!("/usr/bin/{name}"), &link)
        .with_context(|| format!("cannot link {} to the root's {name}", link.display()))
}

/// The first line after `#!` of the wrapper [`drop_isystem_usr_include`] writes: how a later
/// run knows the compiler is already wrapped.
const WRAPPER_MARK: &str = "# rocjitsu: MIOpen's HIP compiles without `-isystem /usr/include`";

/// MIOpen's HIP compiles run `/usr/bin/clang++-NN` (a literal in libMIOpen) with
/// `-isystem /usr/include`. That moves `/usr/include` ahead of libstdc++'s headers, whose
/// `<cmath>` then finds no `math.h` with `#include_next` ("fatal error: 'math.h' file not
/// found", on a real MI210 as here), and every test of a kernel MIOpen compiles fails. The flag
/// adds nothing (`/usr/include` is searched anyway), so the compiler MIOpen runs becomes a
/// wrapper that drops it and runs clang with the rest: the packaged compiler is moved aside
/// with `dpkg-divert` (so apt keeps it there) and the wrapper takes its path.
fn drop_isystem_usr_include(root: &Path, lib: &[u8]) -> Result<()> {
    if !lib.windows(b"-isystem /usr/include".len()).any(|w| w == b"-isystem /usr/include") {
        return Ok(());
    }
    let Some(compiler) = string_starting(lib, b"/usr/bin/clang++-") else { return Ok(()) };
    let at = root.join(compiler.trim_start_matches('/'));
    if std::fs::read_to_string(&at).is_ok_and(|s| s.lines().nth(1) == Some(WRAPPER_MARK)) {
        return Ok(());
    }
    // Where the packaged name leads (`../lib/llvm-21/bin/clang++`), as a path in the root;
    // read from where `dpkg-divert` moved it if an earlier run stopped after moving it.
    let diverted = format!("{compiler}.distrib");
    let packaged = if at.symlink_metadata().is_ok() { at.clone() } else { root.join(diverted.trim_start_matches('/')) };
    let target =
        std::fs::read_link(&packaged).with_context(|| format!("{} is not the packaged link", packaged.display()))?;
    let real = Path::new(&compiler).parent().expect("/usr/bin").join(target);
    crate::rootfs::in_root(root, &["dpkg-divert", "--local", "--rename", "--divert", &diverted, "--add", &compiler])?;
    let script = compiler_wrapper(&real, &diverted);
    std::fs::write(&at, script).with_context(|| format!("cannot write {}", at.display()))?;
    std::fs::set_permissions(&at, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", at.display()))
}

/// The shell script that runs `real` with its arguments less every `-isystem /usr/include`
/// ([`drop_isystem_usr_include`]; `diverted` is where the packaged name went).
fn compiler_wrapper(real: &Path, diverted: &str) -> String {
    format!(
        "#!/bin/sh\n{WRAPPER_MARK}\n# (written by `cargo xtask suites miopen`: xtask/src/suites/catalog.rs; the packaged\n\
         # compiler is {diverted}).\nn=$#\ndrop=0\nfor a do\n  if [ $drop = 1 ]; then\n    drop=0\n    \
         [ \"$a\" = /usr/include ] || set -- \"$@\" -isystem \"$a\"\n    continue\n  fi\n  \
         if [ \"$a\" = -isystem ]; then drop=1; continue; fi\n  set -- \"$@\" \"$a\"\ndone\n\
         [ $drop = 1 ] && set -- \"$@\" -isystem\nshift $n\nexec {} \"$@\"\n",
        real.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapper, run by `sh` in front of a "compiler" that prints its arguments one per
    /// line: every `-isystem /usr/include` pair goes, everything else (other `-isystem`
    /// directories, a trailing `-isystem`, arguments with spaces) stays, in order.
    #[test]
    fn the_compiler_wrapper_drops_only_isystem_usr_include() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-wrapper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let echo = dir.join("print-args");
        std::fs::write(&echo, "#!/bin/sh\nfor a do printf '%s\\n' \"$a\"; done\n").unwrap();
        std::fs::set_permissions(&echo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let wrapper = dir.join("clang++-21");
        std::fs::write(&wrapper, compiler_wrapper(&echo, "/usr/bin/clang++-21.distrib")).unwrap();
        let args = "-O3|-isystem|/usr/include|-x|hip|-isystem|/opt/inc|-DA=a b|-isystem|/usr/include|k.cpp|-isystem";
        let args = args.split('|');
        let out = std::process::Command::new("sh").arg(&wrapper).args(args).output().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(out.status.success(), "{out:?}");
        let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert_eq!(got, ["-O3", "-x", "hip", "-isystem", "/opt/inc", "-DA=a b", "k.cpp", "-isystem"]);
        assert_eq!(compiler_wrapper(&echo, "x").lines().nth(1), Some(WRAPPER_MARK), "how a second run recognises it");
    }
}
