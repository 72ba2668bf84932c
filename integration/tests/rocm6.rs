//! The newer ROCm stacks (issue "The ROCm that people run today"): rocminfo in the trixie and
//! sid roots, the MI300X and MI350X agents under sid's ROCm 6.4, and HIP programs compiled
//! for gfx942 by sid's clang running on the MI300X config, each checked against a CPU
//! reference. The every-program, every-mode runs are in `hip_kernels.rs` and `libraries.rs`.

use integration::{check_mi210_rocminfo, field_lines, gpu_agent_block, Mode, Outcome, Stack};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

fn rocminfo(stack: Stack, config: &str) -> Outcome {
    let mut cmd = stack.rocjitsu();
    cmd.args(["--config", config, "--", "rocminfo"]);
    let o = stack.run(cmd, DEADLINE);
    o.assert_success();
    o
}

/// Exit 0, the MI210, and nothing the simulator had to refuse.
fn rocminfo_runs_clean(stack: Stack) {
    let o = rocminfo(stack, "mi210");
    check_mi210_rocminfo(&o.stdout);
    assert!(!o.stderr.contains("WARN") && !o.stderr.contains("ERROR"), "{}:\n{}", stack.name(), o.stderr);
    if stack == Stack::Sid {
        // KFD 1.14: no virtual-memory API (1.15+, see proto::abi::kfd). rocminfo 7 says so.
        assert_eq!(field_lines(&o.stdout, "VMM Support"), ["NO"]);
    }
}

#[test]
fn rocminfo_in_the_trixie_root() {
    rocminfo_runs_clean(Stack::Trixie);
}

#[test]
fn rocminfo_in_the_sid_root() {
    rocminfo_runs_clean(Stack::Sid);
}

#[test]
fn sid_sees_the_mi300x_and_the_mi350x() {
    let o = rocminfo(Stack::Sid, "mi300x");
    let gpu = gpu_agent_block(&o.stdout);
    assert_eq!(field_lines(gpu, "Name").first(), Some(&"gfx942"));
    assert_eq!(field_lines(gpu, "Marketing Name").first(), Some(&"AMD Instinct MI300X"));
    // configs/gfx942_cdna3_kmd.json: 1216 SIMDs at 4 per CU, 4 shader engines on each of
    // 8 XCCs, 192 GiB of HBM.
    assert_eq!(field_lines(gpu, "Compute Unit").first(), Some(&"304"));
    assert_eq!(field_lines(gpu, "Shader Engines").first(), Some(&"32"));
    assert!(field_lines(gpu, "Size").contains(&"201326592(0xc000000) KB"), "{gpu}");
    assert!(gpu.contains("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"), "{gpu}");
    assert!(!o.stderr.contains("WARN"), "{}", o.stderr);

    let o = rocminfo(Stack::Sid, "mi350x");
    let gpu = gpu_agent_block(&o.stdout);
    assert_eq!(field_lines(gpu, "Name").first(), Some(&"gfx950"));
    assert_eq!(field_lines(gpu, "Marketing Name").first(), Some(&"AMD Instinct MI350X"));
    assert!(gpu.contains("amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-"), "{gpu}");
    assert!(!o.stderr.contains("WARN"), "{}", o.stderr);
}

/// gfx942 code from sid's clang 21 on the MI300X config: a vector add, LDS reductions and
/// wave shuffles, and fp8 / i8 MFMA GEMMs, in local and daemon mode.
#[test]
fn hip_for_gfx942_runs_on_the_mi300x() {
    let programs: [(&str, &[&str]); 3] = [
        ("vector_add", &["vector_add_float", "vector_add_int", "vector_add_double"]),
        ("reduce_shuffle", &["block_reduction", "warp_shuffle", "ballot_any_all", "matmul_int", "matmul_float"]),
        ("mfma_gemm_gfx942", &["mfma fp8 32x32x16 gemm 256", "mfma i8 32x32x16 gemm 256"]),
    ];
    for (name, passes) in programs {
        let exe = Stack::Sid.hip_program(name, "gfx942", &[]);
        for mode in Mode::OWN {
            let mut cmd = Stack::Sid.rocjitsu_in(mode);
            cmd.args(["--config", "mi300x", "--"]).arg(&exe);
            Stack::Sid.run(cmd, DEADLINE).assert_passes(&format!("{name} ({}, sid, mi300x)", mode.name()), passes);
        }
    }
}

/// The CPU share the waiting thread of `wait_sleeps` used, with `active` set as
/// `ROCJITSU_ACTIVE_WAIT`.
fn wait_cpu_fraction(stack: Stack, active: Option<&str>) -> f64 {
    let exe = stack.hip_program("wait_sleeps", "gfx90a", &[]);
    let mut cmd = stack.rocjitsu();
    cmd.env_remove("ROCJITSU_ACTIVE_WAIT");
    if let Some(a) = active {
        cmd.env("ROCJITSU_ACTIVE_WAIT", a);
    }
    cmd.arg("--").arg(&exe).arg("300000");
    let o = stack.run(cmd, DEADLINE);
    o.assert_passes("wait_sleeps", &["lcg"]);
    let value =
        |key: &str| -> f64 { field_value(&o.stdout, key).unwrap_or_else(|| panic!("no {key} line:\n{}", o.stdout)) };
    // The kernel must have kept the waiter waiting for a while for the share to mean much.
    assert!(value("wait_seconds") > 0.05, "{}", o.stdout);
    value("wait_cpu_fraction")
}

fn field_value(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// HIP waits actively by default (and ROCm 6.x gives such waits busy-wait signals, which
/// spin whatever the wait state): under the simulator the waiting thread sleeps instead,
/// with ROCm 5.2 and 6.4 alike, and `ROCJITSU_ACTIVE_WAIT=1` keeps HIP's spinning (which
/// shows the measure sees it).
#[test]
fn a_blocking_copy_sleeps_while_the_kernel_runs() {
    for stack in [Stack::Host, Stack::Sid] {
        let sleeping = wait_cpu_fraction(stack, None);
        assert!(sleeping < 0.2, "{}: the waiting thread used {sleeping} of a core", stack.name());
    }
    let spinning = wait_cpu_fraction(Stack::Sid, Some("1"));
    assert!(spinning > 0.3, "with ROCJITSU_ACTIVE_WAIT=1 the waiter used only {spinning} of a core");
}
