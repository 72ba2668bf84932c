//! HIP programs whose kernels run on the simulated GPU, each checking its results against
//! a CPU reference computed in the program (issue "The simulated GPU executes …"), in
//! local mode, with the blit-kernel copy path (`HSA_ENABLE_SDMA=0`), and in daemon mode
//! (a private `--daemon` and `--attach` to a shared one; issue "Daemon mode …") — under
//! each ROCm stack: the host's 5.2, Debian 13's ROCR 6.1 + HIP 5.7 and sid's ROCm 6.4, every
//! program compiled by that stack's own hipcc (issue "The ROCm that people run today").

use integration::{run, Daemon, Outcome, Stack};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

/// The programs and the PASS lines each must print.
const PROGRAMS: &[(&str, &[&str])] = &[
    ("vector_add", &["vector_add_float", "vector_add_int", "vector_add_double"]),
    ("copies", &["pageable_round_trips", "memcpy_2d", "pinned_large_copies"]),
    ("saxpy", &["saxpy", "grid_2d", "grid_1m_threads", "dynamic_shared"]),
    ("reduce_shuffle", &["block_reduction", "warp_shuffle", "ballot_any_all", "matmul_int", "matmul_float"]),
    ("atomics", &["atomic_add_histogram", "atomic_cas", "atomic_max"]),
    ("math", &["math_float", "math_double", "math_half", "math_int64"]),
    ("streams_events", &["streams_and_events"]),
    // Threads writing next to buffers registered with hipHostRegister, over and over:
    // daemon mode must not lose a write while it lends those pages (issue "Nothing lost").
    ("userptr_neighbours", &["neighbour_counters", "malloc_neighbours"]),
    (
        "mfma_gemm",
        &[
            "mfma f32 32x32x2 gemm 256",
            "mfma f16 32x32x8 gemm 256",
            "mfma bf16 32x32x8 gemm 256",
            "mfma i8 32x32x8 gemm 256",
            "mfma f64 16x16x4 gemm 256",
            "mfma f32 gemm 256 fractional",
        ],
    ),
];

fn expected(name: &str) -> &'static [&'static str] {
    PROGRAMS.iter().find(|p| p.0 == name).map(|p| p.1).expect("a listed program")
}

fn check(stack: Stack, name: &str, how: &str, o: &Outcome) {
    let how = format!("{how}, {}", stack.name());
    o.assert_success_of(&format!("{name} ({how})"));
    assert!(!o.stdout.contains("FAIL"), "{name} ({how}) reported a failure:\n{}\n{}", o.stdout, o.stderr);
    for pass in expected(name) {
        assert!(
            o.stdout.lines().any(|l| l == format!("PASS {pass}")),
            "{name} ({how}): no `PASS {pass}`:\nstdout:\n{}\nstderr:\n{}",
            o.stdout,
            o.stderr
        );
    }
}

/// `name` compiled by `stack`'s hipcc for the MI210.
fn program(stack: Stack, name: &str) -> std::path::PathBuf {
    stack.hip_program(name, "gfx90a", &[])
}

fn local(stack: Stack, name: &str, env: &[(&str, &str)]) -> Outcome {
    let mut cmd = stack.rocjitsu();
    cmd.arg("--").arg(program(stack, name));
    cmd.envs(env.iter().copied());
    stack.run(cmd, DEADLINE)
}

fn each_program(f: impl Fn(&str)) {
    for (name, _) in PROGRAMS {
        f(name);
    }
}

fn all_pass_in_local_mode(stack: Stack) {
    each_program(|name| check(stack, name, "local", &local(stack, name, &[])));
}

fn copies_pass_through_blit_kernels(stack: Stack) {
    for name in ["vector_add", "copies", "streams_events", "saxpy"] {
        check(stack, name, "HSA_ENABLE_SDMA=0", &local(stack, name, &[("HSA_ENABLE_SDMA", "0")]));
    }
}

fn all_pass_with_a_private_daemon(stack: Stack) {
    each_program(|name| {
        let mut cmd = stack.rocjitsu();
        cmd.arg("--daemon").arg("--").arg(program(stack, name));
        check(stack, name, "--daemon", &stack.run(cmd, DEADLINE));
    });
}

/// `rocjitsu --attach` to `daemon` (which runs on the host) from `stack`.
fn attach(stack: Stack, daemon: &Daemon) -> Command {
    let mut c = stack.rocjitsu();
    c.arg("--attach").arg("--socket").arg(&daemon.socket).env("ROCJITSU_RUNTIME_DIR", daemon.dir.path());
    c
}

fn all_pass_attached_to_a_shared_daemon(stack: Stack) {
    let daemon = Daemon::start("mi210");
    each_program(|name| {
        let mut cmd = attach(stack, &daemon);
        cmd.arg("--").arg(program(stack, name));
        check(stack, name, "--attach", &stack.run(cmd, DEADLINE));
    });
    // The daemon is still serving after all of them.
    let mut cmd = attach(stack, &daemon);
    cmd.arg("--").arg(program(stack, "vector_add"));
    check(stack, "vector_add", "--attach after the others", &stack.run(cmd, DEADLINE));
}

fn two_gpus_run_kernels_and_copy_peer_to_peer(stack: Stack) {
    for mode in [&[][..], &["--daemon"][..]] {
        let mut cmd = stack.rocjitsu();
        cmd.args(mode).args(["--config", "mi210-2gpu", "--"]).arg(program(stack, "multi_gpu"));
        let o = stack.run(cmd, DEADLINE);
        o.assert_success();
        for line in ["PASS kernels_on_two_devices", "PASS peer_copy"] {
            assert!(o.stdout.lines().any(|l| l == line), "{mode:?}: no `{line}`:\n{}\n{}", o.stdout, o.stderr);
        }
    }
}

fn device_printf_prints_every_line(stack: Stack) {
    for mode in [&[][..], &["--daemon"][..]] {
        let mut cmd = stack.rocjitsu();
        cmd.args(mode).arg("--").arg(program(stack, "printf"));
        let o = stack.run(cmd, DEADLINE);
        o.assert_success();
        for b in 0..2 {
            for t in 0..3 {
                let line = format!("hello from thread {t} of block {b}: {} {:.2}", 40 + t, 1.5 * t as f64);
                assert!(o.stdout.contains(&line), "{mode:?}: missing `{line}`:\n{}", o.stdout);
            }
        }
        assert_eq!(o.stdout.matches("hello from").count(), 6, "{mode:?}: {}", o.stdout);
        assert!(o.stdout.contains("sync=0"), "{mode:?}: {}", o.stdout);
    }
}

fn assert_memory_fault(o: &Outcome) {
    assert!(!o.status.success(), "the faulting program must not succeed:\n{}", o.stdout);
    assert!(
        o.stderr.contains("Memory access fault by GPU") || o.stdout.contains("Memory access fault by GPU"),
        "ROCR's memory-fault message:\nstdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
}

fn a_bad_pointer_faults_like_the_real_driver_and_the_next_run_works(stack: Stack) {
    assert_memory_fault(&local(stack, "bad_pointer", &[]));
    check(stack, "vector_add", "right after a fault", &local(stack, "vector_add", &[]));
}

fn a_fault_in_one_daemon_client_leaves_the_others_running(stack: Stack) {
    let daemon = Daemon::start("mi210");
    let mut bad = attach(stack, &daemon);
    bad.arg("--").arg(program(stack, "bad_pointer"));
    assert_memory_fault(&run(bad, DEADLINE));
    let mut good = attach(stack, &daemon);
    good.arg("--").arg(program(stack, "saxpy"));
    check(stack, "saxpy", "--attach after another client's fault", &stack.run(good, DEADLINE));
}

/// With two GPUs, each render node answers for its own GPU (VRAM in use, device-wide), in
/// local and daemon mode alike.
fn each_render_node_describes_its_own_gpu(stack: Stack) {
    for mode in [&[][..], &["--daemon"][..]] {
        let mut cmd = stack.rocjitsu();
        cmd.args(mode).args(["--config", "mi210-2gpu", "--"]).arg(program(stack, "drm_nodes"));
        let o = stack.run(cmd, DEADLINE);
        o.assert_success();
        let usage = |step: &str| -> (u64, u64) {
            let line = o
                .stdout
                .lines()
                .find(|l| l.starts_with(step))
                .unwrap_or_else(|| panic!("{mode:?}: no `{step}`:\n{}", o.stdout));
            let field = |key: &str| -> u64 {
                line.split_whitespace().find_map(|w| w.strip_prefix(key)).and_then(|v| v.parse().ok()).expect("a usage")
            };
            (field("vram_usage_128="), field("vram_usage_129="))
        };
        let (a0, a1) = usage("1 GiB on device 1:");
        let (b0, b1) = usage("512 MiB on device 0:");
        assert!(a1 >= 1 << 30 && a0 < 1 << 30, "{mode:?}: 1 GiB on GPU 1 shows on renderD129 only: {a0} {a1}");
        assert!(b0 >= a0 + (512 << 20) && b1 == a1, "{mode:?}: 512 MiB on GPU 0 shows on renderD128 only: {b0} {b1}");
    }
}

/// The tests above, once per stack.
macro_rules! per_stack {
    ($($stack:ident: $module:ident),*) => {$(
        mod $module {
            use super::*;
            #[test]
            fn programs_pass_in_local_mode() {
                all_pass_in_local_mode(Stack::$stack);
            }
            #[test]
            fn copies_through_blit_kernels_pass() {
                copies_pass_through_blit_kernels(Stack::$stack);
            }
            #[test]
            fn programs_pass_with_a_private_daemon() {
                all_pass_with_a_private_daemon(Stack::$stack);
            }
            #[test]
            fn programs_pass_attached_to_a_shared_daemon() {
                all_pass_attached_to_a_shared_daemon(Stack::$stack);
            }
            #[test]
            fn two_gpus_run_kernels_and_copy_peer_to_peer() {
                super::two_gpus_run_kernels_and_copy_peer_to_peer(Stack::$stack);
            }
            #[test]
            fn device_printf_prints_every_line() {
                super::device_printf_prints_every_line(Stack::$stack);
            }
            #[test]
            fn each_render_node_describes_its_own_gpu() {
                super::each_render_node_describes_its_own_gpu(Stack::$stack);
            }
            #[test]
            fn a_bad_pointer_faults_like_the_real_driver_and_the_next_run_works() {
                super::a_bad_pointer_faults_like_the_real_driver_and_the_next_run_works(Stack::$stack);
            }
            #[test]
            fn a_fault_in_one_daemon_client_leaves_the_others_running() {
                super::a_fault_in_one_daemon_client_leaves_the_others_running(Stack::$stack);
            }
        }
    )*};
}

per_stack!(Host: rocm52, Trixie: trixie, Sid: sid);
