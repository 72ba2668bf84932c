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
        // The 1-D and 2-D cases: their kernels are precompiled. Others need MIOpen's run-time
        // compile, which Debian's build breaks (docs/SUITES.md).
        smoke: "Smoke/GPU_TernaryTensorOps_FP32.TestFloat/?:Smoke/GPU_TernaryTensorOps_FP32.TestFloat/??:Smoke/GPU_TernaryTensorOps_FP32.TestFloat/???",
        smoke_sample: Some(20),
        setup: Some(miopen_compiler),
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

/// MIOpen compiles some kernels at run time with the clang its build used, at the path of
/// Debian's build tree (`/build/reproducible-path/miopen-…/build/clang-21`, written into
/// libMIOpen), which no installed system has: the compile fails and the test waits forever.
/// A link at that path to the root's own clang (the same version, from hipcc's dependencies)
/// gives MIOpen the compiler it was built to use.
fn miopen_compiler(root: &Path) -> Result<()> {
    let lib = root.join("usr/lib/x86_64-linux-gnu/libMIOpen.so.1");
    let bytes = std::fs::read(&lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let needle = b"/build/reproducible-path/";
    let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) else { return Ok(()) };
    let end = bytes[at..].iter().position(|&b| b == 0).map_or(bytes.len(), |n| at + n);
    let path = String::from_utf8_lossy(&bytes[at..end]).to_string();
    let Some(name) = path.rsplit('/').next().filter(|n| n.starts_with("clang")) else { return Ok(()) };
    let link = root.join(path.trim_start_matches('/'));
    if link.symlink_metadata().is_ok() {
        return Ok(());
    }
    std::fs::create_dir_all(link.parent().expect("a path in a directory"))?;
    std::os::unix::fs::symlink(format!("/usr/bin/{name}"), &link)
        .with_context(|| format!("cannot link {} to the root's {name}", link.display()))
}
