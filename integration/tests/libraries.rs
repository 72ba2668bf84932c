//! Real ROCm libraries from Debian (rocRAND/hipRAND, rocSPARSE/hipSPARSE) run their own
//! kernels on the simulated GPU, in local mode, with a private daemon and attached to a
//! shared one, under each ROCm stack (the host's 5.2, trixie's, sid's 6.4); each program
//! compares every result with a host reference (issue "Real ROCm libraries run …").

use integration::{Daemon, Mode, Stack};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(900);

const PROGRAMS: &[(&str, &[&str], &[&str])] = &[
    (
        "rocrand_generators",
        &["hiprand", "rocrand"],
        &[
            "rocrand device api xorwow",
            "rocrand device api mrg32k3a",
            "rocrand device api philox4x32_10",
            "rocrand device api sobol32",
            "hiprand philox4x32_10 uint/uniform/normal",
            "hiprand sobol32 uint/uniform",
            "hiprand xorwow uint",
            "hiprand xorwow uniform",
            "hiprand xorwow normal",
            "hiprand mrg32k3a uniform",
            "hiprand mrg32k3a normal",
            "hiprand mtgp32/xorwow/mrg32k3a/philox reproducible with the right moments",
        ],
    ),
    (
        "sparse_ops",
        &["hipsparse", "rocsparse"],
        &[
            "rocsparse csrmv",
            "rocsparse csrmv (analysed)",
            "rocsparse csr2coo",
            "rocsparse coomv",
            "rocsparse csr2csc",
            "rocsparse csrmm",
            "rocsparse csrsv",
            "hipsparse csrmv",
            "hipsparse csr2coo",
        ],
    ),
    (
        // rocSPARSE's test suite crashes in csrgemm (docs/SUITES.md); the product itself,
        // on every path its row binning takes, is checked here.
        "sparse_gemm",
        &["rocsparse"],
        &[
            "rocsparse csrgemm 50x50 * 50x13 (3, 2 per row)",
            "rocsparse csrgemm 50x50 * 50x13 (0, 2 per row)",
            "rocsparse csrgemm 50x50 * 50x13 (3, 0 per row)",
            "rocsparse csrgemm 50x50 * 50x13 (12, 6 per row)",
            "rocsparse csrgemm 200x300 * 300x150 (20, 30 per row)",
            "rocsparse csrgemm 64x512 * 512x4096 (64, 64 per row)",
        ],
    ),
];

/// Every library program under `stack`, in local mode, with a private daemon and attached
/// to a shared one.
fn run_all(stack: Stack) {
    let daemon = Daemon::start("mi210");
    for (name, libs, passes) in PROGRAMS {
        let exe = stack.hip_program(name, "gfx90a", libs);
        for mode in [Mode::Local, Mode::Daemon, Mode::Attach(&daemon)] {
            let mut cmd = stack.rocjitsu_in(mode);
            cmd.arg("--").arg(&exe);
            let what = format!("{name} ({}, {})", mode.name(), stack.name());
            stack.run(cmd, DEADLINE).assert_passes(&what, passes);
        }
    }
}

#[test]
fn libraries_on_rocm52() {
    run_all(Stack::Host);
}

#[test]
fn libraries_on_trixie() {
    run_all(Stack::Trixie);
}

#[test]
fn libraries_on_sid() {
    run_all(Stack::Sid);
}
