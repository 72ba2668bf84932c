//! HIP programs whose kernels run on the simulated GPU, each checking its results against
//! a CPU reference computed in the program (issue "The simulated GPU executes …"), in
//! local mode, with the blit-kernel copy path (`HSA_ENABLE_SDMA=0`), and in daemon mode
//! (a private `--daemon` and `--attach` to a shared one; issue "Daemon mode …") — under
//! each ROCm stack: the host's 5.2, Debian 13's ROCR 6.1 + HIP 5.7 and sid's ROCm 6.4, every
//! program compiled by that stack's own hipcc (issue "The ROCm that people run today").

use integration::{Daemon, Mode, Outcome, Stack};
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

/// Exit 0, no FAIL and every PASS line `name` must print.
fn check(stack: Stack, name: &str, how: &str, o: &Outcome) {
    o.assert_passes(&format!("{name} ({how}, {})", stack.name()), expected(name));
    if name == "userptr_neighbours" {
        the_neighbours_raced(stack, how, o);
    }
}

/// `userptr_neighbours` proves nothing unless its other thread wrote next to the buffers
/// while they were being registered: it prints how much that thread did and during how many
/// of the registrations (`ROUNDS`, 200) it made progress.
fn the_neighbours_raced(stack: Stack, how: &str, o: &Outcome) {
    for (part, unit, least) in
        [("neighbour_counters", "increments of each counter", 10_000), ("malloc_neighbours", "blocks checked", 1_000)]
    {
        let line = o.stdout.lines().find_map(|l| l.strip_prefix(&format!("{part}: "))).unwrap_or_else(|| {
            panic!("userptr_neighbours ({how}, {}): no `{part}:` line:\n{}", stack.name(), o.stdout)
        });
        // `200 registrations, 1234 <unit>, 180 overlapped by writes`
        let number = |after: &str| -> u64 {
            line.split(", ")
                .find_map(|f| f.strip_suffix(after))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no `<n> {after}` in {line:?}"))
        };
        let (rounds, work, overlapped) = (number("registrations"), number(unit), number("overlapped by writes"));
        assert!(
            work >= least && overlapped * 20 >= rounds && overlapped > 0,
            "userptr_neighbours ({how}, {}): {part}'s other thread did too little for the race to count \
             ({work} {unit}, want at least {least}; registrations it overlapped: {overlapped} of {rounds}, want a twentieth)",
            stack.name()
        );
    }
}

/// `name` compiled by `stack`'s hipcc for the MI210.
fn program(stack: Stack, name: &str) -> std::path::PathBuf {
    stack.hip_program(name, "gfx90a", &[])
}

/// Runs `name` in `mode` with extra environment.
fn run_in(stack: Stack, mode: Mode, name: &str, env: &[(&str, &str)]) -> Outcome {
    let mut cmd = stack.rocjitsu_in(mode);
    cmd.arg("--").arg(program(stack, name));
    cmd.envs(env.iter().copied());
    stack.run(cmd, DEADLINE)
}

fn each_program(f: impl Fn(&str)) {
    for (name, _) in PROGRAMS {
        f(name);
    }
}

fn all_pass_in(stack: Stack, mode: Mode) {
    each_program(|name| check(stack, name, mode.name(), &run_in(stack, mode, name, &[])));
}

fn copies_pass_through_blit_kernels(stack: Stack) {
    for name in ["vector_add", "copies", "streams_events", "saxpy"] {
        check(stack, name, "HSA_ENABLE_SDMA=0", &run_in(stack, Mode::Local, name, &[("HSA_ENABLE_SDMA", "0")]));
    }
}

fn all_pass_attached_to_a_shared_daemon(stack: Stack) {
    let daemon = Daemon::start("mi210");
    all_pass_in(stack, Mode::Attach(&daemon));
    // The daemon is still serving after all of them.
    let o = run_in(stack, Mode::Attach(&daemon), "vector_add", &[]);
    check(stack, "vector_add", "--attach after the others", &o);
}

/// `name` on the two-GPU config in `mode`.
fn on_two_gpus(stack: Stack, mode: Mode, name: &str) -> Outcome {
    let mut cmd = stack.rocjitsu_in(mode);
    cmd.args(["--config", "mi210-2gpu", "--"]).arg(program(stack, name));
    stack.run(cmd, DEADLINE)
}

fn two_gpus_run_kernels_and_copy_peer_to_peer(stack: Stack) {
    for mode in Mode::OWN {
        on_two_gpus(stack, mode, "multi_gpu").assert_passes(
            &format!("multi_gpu ({}, {})", mode.name(), stack.name()),
            &["kernels_on_two_devices", "peer_copy"],
        );
    }
}

fn device_printf_prints_every_line(stack: Stack) {
    for mode in Mode::OWN {
        let o = run_in(stack, mode, "printf", &[]);
        let mode = mode.name();
        o.assert_success_of(&format!("printf ({mode}, {})", stack.name()));
        for b in 0..2 {
            for t in 0..3 {
                let line = format!("hello from thread {t} of block {b}: {} {:.2}", 40 + t, 1.5 * t as f64);
                assert!(o.stdout.contains(&line), "{mode}: missing `{line}`:\n{}", o.stdout);
            }
        }
        assert_eq!(o.stdout.matches("hello from").count(), 6, "{mode}: {}", o.stdout);
        assert!(o.stdout.contains("sync=0"), "{mode}: {}", o.stdout);
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
    assert_memory_fault(&run_in(stack, Mode::Local, "bad_pointer", &[]));
    check(stack, "vector_add", "right after a fault", &run_in(stack, Mode::Local, "vector_add", &[]));
}

fn a_fault_in_one_daemon_client_leaves_the_others_running(stack: Stack) {
    let daemon = Daemon::start("mi210");
    assert_memory_fault(&run_in(stack, Mode::Attach(&daemon), "bad_pointer", &[]));
    let good = run_in(stack, Mode::Attach(&daemon), "saxpy", &[]);
    check(stack, "saxpy", "--attach after another client's fault", &good);
}

/// With two GPUs, each render node answers for its own GPU (VRAM in use, device-wide), in
/// local and daemon mode alike. The runtime's own allocations (queues, signals, kernel
/// arguments: KiB to a few MiB) come and go on either GPU between the steps, so each change
/// is checked against the test's buffers give or take [`RUNTIME_SLACK`]: each shows on its
/// own GPU's node and not on the other's, and is gone again after its hipFree.
fn each_render_node_describes_its_own_gpu(stack: Stack) {
    const GIB: i64 = 1 << 30;
    const HALF_GIB: i64 = 512 << 20;
    const RUNTIME_SLACK: i64 = 64 << 20;
    for mode in Mode::OWN {
        let o = on_two_gpus(stack, mode, "drm_nodes");
        let mode = mode.name();
        o.assert_passes(&format!("drm_nodes ({mode}, {})", stack.name()), &["drm_nodes"]);
        let usage = |step: &str| -> (i64, i64) {
            let line = o
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix(step).and_then(|rest| rest.strip_prefix(':')))
                .unwrap_or_else(|| panic!("{mode}: no `{step}:`:\n{}", o.stdout));
            let field = |key: &str| -> i64 {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{mode}: no {key} in `{step}:{line}`"))
            };
            (field("vram_usage_128="), field("vram_usage_129="))
        };
        // Whether usage changed by `want` bytes, give or take the runtime's own allocations.
        let changed_by = |from: i64, to: i64, want: i64| (to - from - want).abs() < RUNTIME_SLACK;
        let (a0, a1) = usage("1 GiB on device 1");
        let (b0, b1) = usage("512 MiB on device 0");
        let (f0, f1) = usage("freed");
        assert!(a1 >= GIB && a0 < GIB, "{mode}: 1 GiB on GPU 1 shows on renderD129 only: {a0} {a1}");
        assert!(
            changed_by(a0, b0, HALF_GIB) && changed_by(a1, b1, 0),
            "{mode}: 512 MiB on GPU 0 shows on renderD128 only: {a0} {a1} -> {b0} {b1}"
        );
        assert!(
            changed_by(b0, f0, -HALF_GIB) && changed_by(b1, f1, -GIB),
            "{mode}: each hipFree takes its buffer off its own node: {b0} {b1} -> {f0} {f1}"
        );
    }
}

/// The tests above, once per stack.
macro_rules! per_stack {
    ($($stack:ident: $module:ident),*) => {$(
        mod $module {
            use super::*;
            #[test]
            fn programs_pass_in_local_mode() {
                all_pass_in(Stack::$stack, Mode::Local);
            }
            #[test]
            fn copies_through_blit_kernels_pass() {
                copies_pass_through_blit_kernels(Stack::$stack);
            }
            #[test]
            fn programs_pass_with_a_private_daemon() {
                all_pass_in(Stack::$stack, Mode::Daemon);
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
