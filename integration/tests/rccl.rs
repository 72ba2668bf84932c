//! RCCL collectives across simulated GPUs (Debian 13's RCCL 5.4.3, in the trixie root): RCCL's
//! own `UnitTests` for every collective in one process and one process per GPU, all-reduces
//! checked against a CPU sum (`programs/rccl_allreduce.hip`) in one process over 2 and 8 GPUs
//! (two XGMI hives joined through the CPU), the torchrun pattern (4 ranks on one daemon,
//! 64 MiB), the same across two simulated hosts (a daemon each, in network namespaces joined by
//! a veth pair) over RCCL's socket transport, and a rank killed in the middle of an all-reduce.

use integration::{eventually, program_file, run, Daemon, Mode, Outcome, Stack};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(600);
const UNIT_TESTS: &str = "/usr/libexec/rocm/librccl1-tests/UnitTests";

/// One test of every collective RCCL has (the full list runs for the STATUS figures).
const COLLECTIVES: &str = "AllReduce.OutOfPlace:AllReduce.GroupCall:AllGather.OutOfPlace:AllToAll.OutOfPlace:\
AllToAllv.OutOfPlace:Broadcast.OutOfPlace:Reduce.OutOfPlace:ReduceScatter.OutOfPlace:Scatter.OutOfPlace:\
Gather.OutOfPlace:SendRecv.SinglePairs";

fn rccl_allreduce() -> PathBuf {
    Stack::Trixie.hip_program("rccl_allreduce", "gfx90a", &["rccl"])
}

/// RCCL's `UnitTests` on the 2-GPU config: `process_mask` 1 runs every rank in one process,
/// 2 one process per GPU (which needs the daemon: the processes share the GPUs).
fn unit_tests(mode: Mode, process_mask: u32) -> Outcome {
    let mut cmd = Stack::Trixie.rocjitsu_in(mode);
    cmd.args(["--config", "mi210-2gpu", "--", UNIT_TESTS, &format!("--gtest_filter={COLLECTIVES}")]);
    cmd.env("UT_MAX_GPUS", "2").env("UT_PROCESS_MASK", process_mask.to_string());
    cmd.env("UT_DATATYPES", "ncclFloat32,ncclBfloat16").env("UT_REDOPS", "sum");
    Stack::Trixie.run(cmd, DEADLINE)
}

/// Checks that every selected test passed and returns how many cases ran.
fn assert_unit_tests_pass(o: &Outcome, what: &str) -> u64 {
    let tests = COLLECTIVES.split(':').count();
    assert!(
        o.status.success()
            && o.stdout.contains(&format!("[  PASSED  ] {tests} tests."))
            && !o.stdout.contains("FAILED"),
        "{what}: status {:?}\n{}\n{}",
        o.status,
        o.stdout,
        o.stderr
    );
    assert!(!o.stderr.contains("rocjitsu:"), "{what}: the simulator complained:\n{}", o.stderr);
    let cases =
        o.stdout.lines().find_map(|l| l.split("Total executed cases: ").nth(1)).and_then(|n| n.trim().parse().ok());
    cases.unwrap_or_else(|| panic!("{what}: no case count\n{}", o.stdout))
}

#[test]
fn unit_tests_of_every_collective_in_one_process() {
    let o = unit_tests(Mode::Local, 1);
    let cases = assert_unit_tests_pass(&o, "UnitTests, single process");
    assert!(cases >= 50, "{cases} cases");
}

#[test]
fn unit_tests_of_every_collective_one_process_per_gpu() {
    let o = unit_tests(Mode::Daemon, 2);
    let cases = assert_unit_tests_pass(&o, "UnitTests, one process per GPU (--daemon)");
    assert!(cases >= 50, "{cases} cases");
    assert!(o.stdout.contains("MP 2    ranks"), "the multi-process cases ran:\n{}", o.stdout);
}

#[test]
fn grouped_all_reduces_in_one_process_on_two_and_eight_gpus() {
    let exe = rccl_allreduce();
    // Three all-reduces in one group call: one kernel works through several work items.
    let mut cmd = Stack::Trixie.rocjitsu_in(Mode::Local);
    cmd.args(["--config", "mi210-2gpu", "--"]).arg(&exe).args(["single", "2", "1048576", "3"]);
    let o = Stack::Trixie.run(cmd, DEADLINE);
    o.assert_passes(
        "rccl_allreduce single 2 GPUs, group of 3",
        &["allreduce single-process rank 1: 116509 elements, f32 and bf16"],
    );
    // Eight GPUs in two hives of four: rings cross from XGMI to PCIe.
    let mut cmd = Stack::Trixie.rocjitsu_in(Mode::Local);
    cmd.args(["--config", "mi210-8gpu", "--"]).arg(&exe).args(["single", "8", "262144"]);
    let o = Stack::Trixie.run(cmd, DEADLINE);
    o.assert_passes(
        "rccl_allreduce single 8 GPUs",
        &["allreduce single-process rank 7: 262144 elements, f32 and bf16"],
    );
}

/// ROCm SMI (what RCCL asks for the links between GPUs) finds the simulated GPUs through the
/// DRM and hwmon classes and reads the KFD topology's links: on the 8-GPU MI210 config, XGMI
/// (type 2, one hop, weight 15) within each hive of four, PCIe through the CPU (type 1, two
/// hops, weight 40) between the hives.
#[test]
fn rocm_smi_sees_the_xgmi_hives_rccl_builds_rings_on() {
    let exe = Stack::Trixie.hip_program("rsmi_links", "gfx90a", &["dl"]);
    let mut cmd = Stack::Trixie.rocjitsu_in(Mode::Local);
    cmd.args(["--config", "mi210-8gpu", "--"]).arg(&exe);
    let o = Stack::Trixie.run(cmd, DEADLINE);
    o.assert_passes("rsmi_links on 8 MI210", &["rsmi_links: 8 devices"]);
    for d in 0..8u32 {
        let want = format!("device {d} pci {:#x}", 0x300 + (d << 8));
        assert!(o.stdout.lines().any(|l| l == want), "{want}\n{}", o.stdout);
        for e in (0..8u32).filter(|&e| e != d) {
            let link = if d / 4 == e / 4 { "type 2 hops 1 weight 15" } else { "type 1 hops 2 weight 40" };
            let want = format!("link {d} {e} {link}");
            assert!(o.stdout.lines().any(|l| l == want), "{want}\n{}", o.stdout);
        }
    }
    // RCCL itself no longer finds ROCm SMI failing, and sees XGMI.
    let mut cmd = Stack::Trixie.rocjitsu_in(Mode::Local);
    cmd.args(["--config", "mi210-2gpu", "--"]).arg(rccl_allreduce()).args(["single", "2", "4096"]);
    cmd.env("NCCL_DEBUG", "INFO").env("NCCL_DEBUG_SUBSYS", "INIT,GRAPH");
    let o = Stack::Trixie.run(cmd, DEADLINE);
    let text = format!("{}{}", o.stdout, o.stderr);
    assert!(o.status.success() && !text.contains("ROCm SMI init failure") && text.contains("XGMI"), "{text}");
}

/// A path for the ranks' ncclUniqueId, unused so far.
fn id_file(tag: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rocjitsu-rccl-{tag}-{}.id", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn torchrun_pattern_four_ranks_all_reduce_64_mib_on_one_daemon() {
    let exe = rccl_allreduce();
    let id = id_file("torchrun");
    let mut cmd = Stack::Trixie.rocjitsu_in(Mode::Daemon);
    cmd.args(["--config", "mi210-4gpu", "--", "python3"]).arg(program_file("torchrun_launcher.py")).arg("4");
    cmd.arg(&exe).arg("rank").arg(&id).arg((16u64 << 20).to_string());
    let o = Stack::Trixie.run(cmd, DEADLINE);
    let _ = std::fs::remove_file(&id);
    let ranks: Vec<String> = (0..4).map(|r| format!("allreduce rank {r}: 16777216 elements, f32 and bf16")).collect();
    o.assert_passes(
        "torchrun_launcher.py 4 rccl_allreduce (--daemon)",
        &ranks.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(o.stdout.contains("ranks exited with [0, 0, 0, 0]"), "{}", o.stdout);
}

/// Rank `rank` of `world` attached to `d`, running `rounds` all-reduces before the checked one.
fn rank_command(d: &Daemon, exe: &Path, id: &Path, rank: u32, world: u32, rounds: u32) -> Command {
    let mut c = Stack::Trixie.rocjitsu_in(Mode::Attach(d));
    c.args(["--config", "mi210-4gpu", "--"]).arg(exe).arg("rank").arg(id).arg("262144");
    c.env("RANK", rank.to_string()).env("LOCAL_RANK", rank.to_string()).env("WORLD_SIZE", world.to_string());
    c.env("ROUNDS", rounds.to_string());
    c
}

/// Running ranks, killed when dropped: a failing test leaves none spinning.
struct Ranks(Vec<Child>);

impl Drop for Ranks {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_rank_killed_in_an_all_reduce_leaves_the_daemon_and_its_gpus_usable() {
    let exe = rccl_allreduce();
    let d = Daemon::start("mi210-4gpu");
    let id = id_file("kill");
    let spawn = |r| rank_command(&d, &exe, &id, r, 4, 1_000_000).stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
    let mut ranks = Ranks((0..4).map(|r| spawn(r).expect("start a rank")).collect());
    // Once rank 0 has finished a few all-reduces, they are running back to back.
    let out = ranks.0[0].stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let seen = BufReader::new(out).lines().map_while(Result::ok).any(|l| l == "rank 0 round 3");
        let _ = tx.send(seen);
    });
    let started = rx.recv_timeout(DEADLINE).unwrap_or(false);
    assert!(started, "rank 0 never finished its third all-reduce\n{}", d.log());
    // Rank 2 dies in the middle of the job; the others wait for it forever, as on hardware,
    // until they are killed too.
    ranks.0[2].kill().unwrap();
    ranks.0[2].wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    for (r, c) in ranks.0.iter_mut().enumerate() {
        assert!(r == 2 || c.try_wait().unwrap().is_none(), "rank {r} ended on its own");
    }
    drop(ranks);
    let _ = std::fs::remove_file(&id);
    assert!(eventually(Duration::from_secs(20), || d.log().matches("gone").count() >= 4), "{}", d.log());
    // Every session is closed: no client holds memory or queues any more.
    let status = || {
        let mut c = Stack::Host.rocjitsu();
        c.args(["status", "--socket"]).arg(&d.socket);
        run(c, Duration::from_secs(30)).stdout
    };
    assert!(eventually(Duration::from_secs(20), || status().contains("no clients")), "{}", status());
    // The four GPUs run a new job of four ranks to the end.
    let id = id_file("after");
    let again: Vec<_> = (0..4)
        .map(|r| {
            let cmd = rank_command(&d, &exe, &id, r, 4, 0);
            std::thread::spawn(move || Stack::Trixie.run(cmd, DEADLINE))
        })
        .collect();
    for (r, t) in again.into_iter().enumerate() {
        let o = t.join().unwrap();
        o.assert_passes(
            &format!("rank {r} after the kill"),
            &[&format!("allreduce rank {r}: 262144 elements, f32 and bf16")],
        );
    }
    let _ = std::fs::remove_file(&id);
}

/// Runs `ip` with `args`; panics with its message when it fails.
fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("run ip (iproute2)");
    assert!(o.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr));
}

/// Two network namespaces joined by a veth pair, `10.77.<n>.1` and `.2`: two hosts on one
/// wire. Deleted (with their interfaces) when dropped.
struct TwoHosts {
    ns: [String; 2],
    /// The interfaces' common name prefix, for NCCL_SOCKET_IFNAME.
    prefix: String,
}

impl TwoHosts {
    fn new() -> TwoHosts {
        let tag = std::process::id() % 100_000;
        let ns = [format!("rjA{tag}"), format!("rjB{tag}")];
        let prefix = format!("rv{tag}");
        let veth = [format!("{prefix}a"), format!("{prefix}b")];
        let hosts = TwoHosts { ns: ns.clone(), prefix };
        let net = tag % 250;
        for n in &ns {
            ip(&["netns", "add", n]);
        }
        ip(&["link", "add", &veth[0], "type", "veth", "peer", "name", &veth[1]]);
        for k in 0..2 {
            ip(&["link", "set", &veth[k], "netns", &ns[k]]);
            ip(&["-n", &ns[k], "addr", "add", &format!("10.77.{net}.{}/24", k + 1), "dev", &veth[k]]);
            ip(&["-n", &ns[k], "link", "set", &veth[k], "up"]);
            ip(&["-n", &ns[k], "link", "set", "lo", "up"]);
        }
        hosts
    }

    /// `program args…` in host `k`'s network namespace and a UTS namespace of its own named
    /// `node<k>`, so that RCCL, which tells hosts apart by host name, sees two hosts.
    fn command(&self, k: usize, inner: &Command) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[k], "unshare", "--uts", "sh", "-c", "hostname \"$0\" && exec \"$@\""]);
        c.arg(format!("node{k}")).arg(inner.get_program()).args(inner.get_args());
        for (key, value) in inner.get_envs() {
            match value {
                Some(v) => c.env(key, v),
                None => c.env_remove(key),
            };
        }
        c
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

#[test]
fn two_simulated_hosts_all_reduce_64_mib_over_rccl_sockets() {
    let exe = rccl_allreduce();
    let hosts = TwoHosts::new();
    let daemons: Vec<Daemon> = (0..2).map(|k| Daemon::start_wrapped("mi210-2gpu", |c| hosts.command(k, &c))).collect();
    let id = id_file("hosts");
    // Each host runs torchrun's launcher for its two ranks, attached to its own daemon.
    let nodes: Vec<_> = (0..2)
        .map(|k| {
            let mut inner = Stack::Trixie.rocjitsu();
            inner
                .args(["--attach", "--socket"])
                .arg(&daemons[k].socket)
                .env("ROCJITSU_RUNTIME_DIR", daemons[k].dir.path());
            inner.args(["--config", "mi210-2gpu", "--", "python3"]).arg(program_file("torchrun_launcher.py")).arg("2");
            inner.arg(&exe).arg("rank").arg(&id).arg((16u64 << 20).to_string());
            inner.env("NNODES", "2").env("NODE_RANK", k.to_string());
            inner.env("NCCL_SOCKET_IFNAME", &hosts.prefix).env("NCCL_DEBUG", "INFO");
            let cmd = hosts.command(k, &inner);
            std::thread::spawn(move || Stack::Trixie.run(cmd, DEADLINE))
        })
        .collect();
    let outs: Vec<Outcome> = nodes.into_iter().map(|t| t.join().unwrap()).collect();
    let _ = std::fs::remove_file(&id);
    for (k, o) in outs.iter().enumerate() {
        let ranks: Vec<String> =
            (2 * k..2 * k + 2).map(|r| format!("allreduce rank {r}: 16777216 elements, f32 and bf16")).collect();
        o.assert_passes(&format!("host {k}"), &ranks.iter().map(String::as_str).collect::<Vec<_>>());
        // Between the hosts the data went through sockets; within a host, GPU to GPU.
        let text = format!("{}{}", o.stdout, o.stderr);
        assert!(text.contains("via NET/Socket"), "host {k}: no socket transport\n{text}");
        assert!(text.contains("via P2P/IPC"), "host {k}: no GPU-to-GPU transport within the host\n{text}");
    }
}
