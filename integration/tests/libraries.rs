//! Real ROCm libraries from Debian (rocRAND/hipRAND, rocSPARSE/hipSPARSE) run their own
//! kernels on the simulated GPU, in local and daemon mode; each program compares every
//! result with a host reference (issue "Real ROCm libraries run …").

use integration::{hip_program_with, rocjitsu, run, Outcome};
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
];

fn check(name: &str, how: &str, passes: &[&str], o: &Outcome) {
    o.assert_success();
    assert!(!o.stdout.contains("FAIL"), "{name} ({how}):\n{}\n{}", o.stdout, o.stderr);
    for p in passes {
        assert!(
            o.stdout.lines().any(|l| l == format!("PASS {p}")),
            "{name} ({how}): no `PASS {p}`:\n{}\n{}",
            o.stdout,
            o.stderr
        );
    }
}

fn run_all(mode: &[&str]) {
    for (name, libs, passes) in PROGRAMS {
        let mut cmd = rocjitsu();
        cmd.args(mode).arg("--").arg(hip_program_with(name, libs));
        check(name, &mode.join(" "), passes, &run(cmd, DEADLINE));
    }
}

#[test]
fn libraries_in_local_mode() {
    run_all(&[]);
}

#[test]
fn libraries_in_daemon_mode() {
    run_all(&["--daemon"]);
}
