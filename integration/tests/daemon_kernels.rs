//! Daemon mode with real kernels (issue "Daemon mode …"): many processes on one
//! simulated GPU, the vLLM spawn pattern, the torchrun pattern, and clients killed in the
//! middle of a long kernel.

use integration::{
    bin_dir, eventually, hip_code_object, hip_program, program_file, run, spawn_until_ready, Daemon, Mode, Stack,
};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

/// `rocjitsu --attach` to `d` without address-space randomisation, so that every client
/// gets the same virtual addresses (and so the same GPU VAs for different buffers).
fn attach_without_aslr(d: &Daemon) -> Command {
    let mut c = Command::new("setarch");
    c.args(["x86_64", "-R"]).arg(bin_dir().join("rocjitsu"));
    Mode::Attach(d).apply(&mut c);
    c
}

#[test]
fn eight_processes_run_verified_kernels_at_overlapping_gpu_addresses() {
    let exe = hip_program("rank_vadd");
    let d = Daemon::start("mi210");
    let clients: Vec<_> = (0..8)
        .map(|rank| {
            let mut c = attach_without_aslr(&d);
            c.arg("--").arg(&exe).env("RANK", rank.to_string());
            std::thread::spawn(move || (rank, run(c, DEADLINE)))
        })
        .collect();
    let mut buffers = Vec::new();
    for c in clients {
        let (rank, o) = c.join().unwrap();
        o.assert_passes(&format!("rank_vadd, rank {rank}"), &[&format!("rank {rank}")]);
        let line = o.stdout.lines().find(|l| l.starts_with(&format!("rank {rank} buffers "))).unwrap().to_string();
        buffers.push(line.split_once(" buffers ").unwrap().1.to_string());
    }
    // Each client is its own GPU address space: the same VAs hold different data.
    buffers.sort();
    buffers.dedup();
    assert!(buffers.len() < 8, "expected clients to share GPU VAs, got {buffers:?}");
    assert_eq!(d.log().matches("connected").count(), 8, "{}", d.log());
}

#[test]
fn spawn_pattern_four_workers_load_modules_through_ctypes() {
    let co = hip_code_object("module_kernels");
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Daemon);
    cmd.arg("--").arg("python3").arg(program_file("spawn_workers.py")).arg(&co);
    let o = run(cmd, DEADLINE);
    o.assert_passes("spawn_workers.py (--daemon)", &["spawn workers"]);
    assert_eq!(o.stdout.matches(": 0 wrong").count(), 4, "{}", o.stdout);
}

#[test]
fn spawn_pattern_attached_to_a_shared_daemon() {
    let co = hip_code_object("module_kernels");
    let d = Daemon::start("mi210");
    let mut cmd = d.attach();
    cmd.arg("--").arg("python3").arg(program_file("spawn_workers.py")).arg(&co);
    let o = run(cmd, DEADLINE);
    o.assert_passes("spawn_workers.py (--attach)", &["spawn workers"]);
    // The four spawned workers are clients of the one daemon (the parent never opens
    // the GPU).
    assert_eq!(d.log().matches("connected").count(), 4, "{}", d.log());
}

#[test]
fn torchrun_pattern_four_ranks() {
    let exe = hip_program("rank_vadd");
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Daemon);
    cmd.arg("--").arg("python3").arg(program_file("torchrun_launcher.py")).arg("4").arg(&exe);
    let o = run(cmd, DEADLINE);
    o.assert_passes("torchrun_launcher.py 4 (--daemon)", &["rank 0", "rank 1", "rank 2", "rank 3"]);
    assert!(o.stdout.contains("ranks exited with [0, 0, 0, 0]"), "{}", o.stdout);
}

/// Starts a client whose kernel runs for minutes, and returns once it is queued.
fn start_long_kernel(d: &Daemon, exe: &std::path::Path) -> std::process::Child {
    let mut c = d.attach();
    c.arg("--").arg(exe);
    spawn_until_ready(c, b"launched\n")
}

#[test]
fn killing_clients_in_the_middle_of_a_long_kernel() {
    let long = hip_program("long_kernel");
    let worker = hip_program("rank_vadd");
    let d = Daemon::start("mi210");
    let kill_mid_kernel = |d: &Daemon| {
        let mut victim = start_long_kernel(d, &long);
        // Let the kernel get going on the simulated GPU.
        std::thread::sleep(Duration::from_millis(200));
        victim.kill().unwrap();
        victim.wait().unwrap();
    };
    // A second client runs verified kernels in a loop throughout.
    let mut steady = d.attach();
    steady.arg("--").arg(&worker).env("RANK", "7").env("ROUNDS", "1000000").stdout(Stdio::piped());
    let mut steady = steady.stderr(Stdio::null()).spawn().unwrap();
    // Let it settle (its runtime opens its wait connections lazily) before the baseline.
    let mut seen = Vec::new();
    while seen.windows(3).filter(|w| w == b"ok\n").count() < 3 {
        let mut byte = [0u8; 1];
        steady.stdout.as_mut().unwrap().read_exact(&mut byte).expect("the steady client runs");
        seen.push(byte[0]);
    }
    // Warm-up kills bring the daemon to its steady state; that is the baseline.
    for _ in 0..2 {
        kill_mid_kernel(&d);
    }
    assert!(eventually(Duration::from_secs(10), || d.log().matches("gone").count() == 2), "{}", d.log());
    // The steady client's own pinned copies (ROCclr keeps a cache of pinned host
    // buffers, each a shared mapping in the daemon) come and go, so the baseline is the
    // lowest count seen over a second, and after each kill the fds must get back down to
    // it and the mappings to within a few of it: a leak of the victim's memory would add
    // at least one mapping per kill, 20 over the test.
    let (mut fds, mut maps) = (usize::MAX, usize::MAX);
    for _ in 0..50 {
        fds = fds.min(d.fd_count());
        maps = maps.min(d.map_count());
        std::thread::sleep(Duration::from_millis(20));
    }
    for round in 0..20 {
        kill_mid_kernel(&d);
        assert!(
            eventually(Duration::from_secs(10), || d.fd_count() <= fds && d.map_count() <= maps + 8),
            "after kill {round}: fds {} (baseline {fds}), mappings {} (baseline {maps})\n{}",
            d.fd_count(),
            d.map_count(),
            d.log()
        );
        assert!(steady.try_wait().unwrap().is_none(), "the steady client failed after kill {round}");
    }
    steady.kill().unwrap();
    steady.wait().unwrap();
    let mut out = String::from_utf8(seen).unwrap();
    steady.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let rounds = out.matches(" ok\n").count();
    assert!(rounds >= 2 && !out.contains("FAIL"), "the steady client's verified rounds:\n{out}");
    // A new client still runs to completion.
    let mut c = d.attach();
    c.arg("--").arg(&worker);
    run(c, DEADLINE).assert_passes("rank_vadd after the kills", &["rank 0"]);
    assert_eq!(d.stop().code(), Some(0));
}

/// A process the application forked and left running still has its GPU after the application
/// exits: the private daemon serves it to the end (RCCL's test ranks tear down after their
/// parent has returned), then exits on its own.
#[test]
fn a_private_daemon_serves_the_processes_its_application_left_behind() {
    let exe = hip_program("rank_vadd");
    let out = std::env::temp_dir().join(format!("rocjitsu-orphan-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&out);
    // The shell starts a rank in the background and exits at once; the rank runs its kernels
    // after its parent (the daemon's application) is gone.
    let script =
        format!("(sleep 0.5; ROUNDS=3 '{}' > '{}' 2>&1; echo exit=$? >> '{1}') & exit 0", exe.display(), out.display());
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Daemon);
    cmd.arg("--").args(["sh", "-c", &script]);
    run(cmd, DEADLINE).assert_success_of("sh with a background rank (--daemon)");
    let done = || std::fs::read_to_string(&out).is_ok_and(|s| s.contains("exit="));
    assert!(eventually(DEADLINE, done), "the background rank did not finish");
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(text.contains("PASS rank 0") && text.contains("round 2 ok") && text.contains("exit=0"), "{text}");
}
