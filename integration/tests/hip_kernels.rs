//! HIP programs whose kernels run on the simulated GPU, each checking its results against
//! a CPU reference computed in the program (issue "The simulated GPU executes …"), in
//! local mode, with the blit-kernel copy path (`HSA_ENABLE_SDMA=0`), and in daemon mode
//! (a private `--daemon` and `--attach` to a shared one; issue "Daemon mode …").

use integration::{hip_program, rocjitsu, run, Daemon, Outcome};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

/// The programs and the PASS lines each must print.
const PROGRAMS: &[(&str, &[&str])] = &[
    ("vector_add", &["vector_add_float", "vector_add_int", "vector_add_double"]),
    ("copies", &["pageable_round_trips", "memcpy_2d"]),
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

fn check(name: &str, how: &str, o: &Outcome) {
    o.assert_success();
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

fn local(name: &str, env: &[(&str, &str)]) -> Outcome {
    let mut cmd = rocjitsu();
    cmd.arg("--").arg(hip_program(name));
    cmd.envs(env.iter().copied());
    run(cmd, DEADLINE)
}

fn each_program(f: impl Fn(&str)) {
    for (name, _) in PROGRAMS {
        f(name);
    }
}

#[test]
fn programs_pass_in_local_mode() {
    each_program(|name| check(name, "local", &local(name, &[])));
}

#[test]
fn copies_through_blit_kernels_pass() {
    for name in ["vector_add", "copies", "streams_events", "saxpy"] {
        check(name, "HSA_ENABLE_SDMA=0", &local(name, &[("HSA_ENABLE_SDMA", "0")]));
    }
}

#[test]
fn programs_pass_with_a_private_daemon() {
    each_program(|name| {
        let mut cmd = rocjitsu();
        cmd.arg("--daemon").arg("--").arg(hip_program(name));
        check(name, "--daemon", &run(cmd, DEADLINE));
    });
}

#[test]
fn programs_pass_attached_to_a_shared_daemon() {
    let daemon = Daemon::start("mi210");
    each_program(|name| {
        let mut cmd: Command = daemon.attach();
        cmd.arg("--").arg(hip_program(name));
        check(name, "--attach", &run(cmd, DEADLINE));
    });
    // The daemon is still serving after all of them.
    let mut cmd = daemon.attach();
    cmd.arg("--").arg(hip_program("vector_add"));
    check("vector_add", "--attach after the others", &run(cmd, DEADLINE));
}

#[test]
fn two_gpus_run_kernels_and_copy_peer_to_peer() {
    for mode in [&[][..], &["--daemon"][..]] {
        let mut cmd = rocjitsu();
        cmd.args(mode).args(["--config", "mi210-2gpu", "--"]).arg(hip_program("multi_gpu"));
        let o = run(cmd, DEADLINE);
        o.assert_success();
        for line in ["PASS kernels_on_two_devices", "PASS peer_copy"] {
            assert!(o.stdout.lines().any(|l| l == line), "{mode:?}: no `{line}`:\n{}\n{}", o.stdout, o.stderr);
        }
    }
}

#[test]
fn device_printf_prints_every_line() {
    let o = local("printf", &[]);
    o.assert_success();
    for b in 0..2 {
        for t in 0..3 {
            let line = format!("hello from thread {t} of block {b}: {} {:.2}", 40 + t, 1.5 * t as f64);
            assert!(o.stdout.contains(&line), "missing `{line}`:\n{}", o.stdout);
        }
    }
    assert_eq!(o.stdout.matches("hello from").count(), 6, "{}", o.stdout);
    assert!(o.stdout.contains("sync=0"));
}

#[test]
fn device_printf_in_daemon_mode() {
    let mut cmd = rocjitsu();
    cmd.arg("--daemon").arg("--").arg(hip_program("printf"));
    let o = run(cmd, DEADLINE);
    o.assert_success();
    assert_eq!(o.stdout.matches("hello from").count(), 6, "{}", o.stdout);
    assert!(o.stdout.contains("hello from thread 2 of block 1: 42 3.00"), "{}", o.stdout);
}

#[test]
fn a_bad_pointer_faults_like_the_real_driver_and_the_next_run_works() {
    let o = local("bad_pointer", &[]);
    assert!(!o.status.success(), "the faulting program must not succeed:\n{}", o.stdout);
    assert!(
        o.stderr.contains("Memory access fault by GPU") || o.stdout.contains("Memory access fault by GPU"),
        "ROCR's memory-fault message:\nstdout:\n{}\nstderr:\n{}",
        o.stdout,
        o.stderr
    );
    check("vector_add", "right after a fault", &local("vector_add", &[]));
}

#[test]
fn a_fault_in_one_daemon_client_leaves_the_others_running() {
    let daemon = Daemon::start("mi210");
    let mut bad = daemon.attach();
    bad.arg("--").arg(hip_program("bad_pointer"));
    let o = run(bad, DEADLINE);
    assert!(!o.status.success());
    assert!(o.stderr.contains("Memory access fault by GPU") || o.stdout.contains("Memory access fault by GPU"));
    let mut good = daemon.attach();
    good.arg("--").arg(hip_program("saxpy"));
    check("saxpy", "--attach after another client's fault", &run(good, DEADLINE));
}
