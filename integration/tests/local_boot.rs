//! Local mode: the unmodified Debian ROCm 5.2 stack boots on the simulated
//! GPU (issue "Local mode: … boots on a simulated MI210").

use integration::{c_program, check_mi210_rocminfo, config, hip_program, run, Mode, Stack};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(120);

#[test]
fn rocminfo_on_the_default_config() {
    let mut cmd = Stack::Host.rocjitsu();
    cmd.args(["--", "rocminfo"]);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    check_mi210_rocminfo(&o.stdout);
}

#[test]
fn rocminfo_with_an_explicit_config_file() {
    let mut cmd = Stack::Host.rocjitsu();
    cmd.arg("--config").arg(config("gfx90a_mi210_kmd.json")).args(["--", "rocminfo"]);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    check_mi210_rocminfo(&o.stdout);
    // Sleeping event thread: the whole run costs little CPU.
    assert!(o.cpu < Duration::from_millis(300), "rocminfo used {:?} of CPU", o.cpu);
}

#[test]
fn hip_device_query_matches_the_config() {
    let exe = hip_program("device_query");
    let mut cmd = Stack::Host.rocjitsu();
    cmd.arg("--").arg(&exe);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    let expect = [
        "hipGetDeviceCount=1",
        "device=0 name=AMD Instinct MI210",
        "device=0 gcnArchName=gfx90a:sramecc+:xnack-",
        "device=0 multiProcessorCount=104",
        "device=0 totalGlobalMem=68702699520",
        "device=0 warpSize=64",
        "device=0 maxThreadsPerBlock=1024",
        "device=0 sharedMemPerBlock=65536",
    ];
    for line in expect {
        assert!(o.has_line(line), "missing {line:?} in:\n{}", o.stdout);
    }
}

#[test]
fn hip_sees_both_gpus_of_a_two_gpu_config() {
    let exe = hip_program("device_query");
    let mut cmd = Stack::Host.rocjitsu();
    cmd.args(["--config", "mi210-2gpu", "--"]).arg(&exe);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    for line in ["hipGetDeviceCount=2", "device=0 multiProcessorCount=104", "device=1 name=AMD Instinct MI210"] {
        assert!(o.has_line(line), "missing {line:?} in:\n{}", o.stdout);
    }
    // Distinct PCI locations: 0x300 and 0x400 (bus 3 and 4).
    let buses: Vec<&str> = o.stdout.lines().filter_map(|l| l.split_once("pciBusID=").map(|(_, v)| v)).collect();
    assert_eq!(buses, ["3", "4"]);
}

#[test]
fn init_and_shutdown_200_times_leak_nothing() {
    let exe = c_program("init_loop", &["hsa-runtime64"]);
    let mut cmd = Stack::Host.rocjitsu();
    cmd.arg("--").arg(&exe).arg("200");
    let o = run(cmd, DEADLINE);
    o.assert_success();
    let get = |k: &str| -> i64 {
        o.stdout.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).and_then(|v| v.parse().ok()).unwrap()
    };
    assert_eq!(get("iterations"), 200);
    assert_eq!(get("fds_end"), get("fds_after_2"), "open fds grew:\n{}", o.stdout);
    assert_eq!(get("maps_end"), get("maps_after_2"), "mappings grew:\n{}", o.stdout);
}

#[test]
fn the_runtime_event_thread_sleeps_while_idle() {
    let exe = c_program("idle_runtime", &["hsa-runtime64"]);
    let mut cmd = Stack::Host.rocjitsu();
    cmd.arg("--").arg(&exe);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    let idle: f64 = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("idle_cpu_seconds="))
        .and_then(|v| v.parse().ok())
        .expect("idle_cpu_seconds line");
    // One second idle with ROCR's async thread in WAIT_EVENTS: a spinning
    // wait would burn close to a full second here.
    assert!(idle < 0.05, "the process used {idle} s of CPU while idle");
}

#[test]
fn device_fds_unknown_ioctls_and_fork() {
    let exe = c_program("kfd_probe", &[]);
    for mode in Mode::OWN {
        let (mut cmd, m) = (Stack::Host.rocjitsu_in(mode), mode.name());
        cmd.arg("--").arg(&exe);
        let o = run(cmd, DEADLINE);
        o.assert_success();
        for line in [
            "kfd_fd_nonzero=1",
            // KFD 1.14: what the simulated driver implements (proto::abi::kfd).
            "get_version=0 major=1 minor=14",
            "unknown_kfd=-1 errno=EINVAL",
            "odd_create_queue=-1 errno=EINVAL",
            "terminal_ioctl=-1 errno=ENOTTY",
            "bad_pointer=-1 errno=EFAULT",
            "close_internal=-1 errno=EBADF found=1",
            "kfd_is_chr=1",
            "render_rdev=226:128",
            "dup_render_rdev=226:128",
            "child_inherited=-1 errno=EBADF",
            "child_fresh=0 major=1",
            "child_exit=0",
            "parent_after_fork=0 major=1",
        ] {
            assert!(o.has_line(line), "{m}: missing {line:?} in:\n{}", o.stdout);
        }
        // Each refused request is named in exactly one warning line.
        let warnings: Vec<&str> = o.stderr.lines().filter(|l| l.contains("unsupported")).collect();
        assert_eq!(warnings.len(), 3, "{m}: {}", o.stderr);
        assert!(warnings[0].contains("0xc0084b7f") && warnings[0].contains("/dev/kfd"), "{}", warnings[0]);
        assert!(warnings[1].contains("0xc0404b02") && warnings[1].contains("size 64"), "{}", warnings[1]);
        assert!(warnings[2].contains("0x00005401") && warnings[2].contains("/dev/kfd"), "{}", warnings[2]);
    }
}

fn topology_file(config_name: &str, path: &str) -> String {
    let mut cmd = Stack::Host.rocjitsu();
    cmd.args(["--config", config_name, "--", "cat", path]);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    o.stdout
}

fn prop(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
}

#[test]
fn gfx942_and_gfx950_topologies_through_the_redirection() {
    let props = topology_file("mi300x", "/sys/class/kfd/kfd/topology/nodes/1/properties");
    assert_eq!(prop(&props, "gfx_target_version"), 90402);
    assert_eq!(prop(&props, "simd_count"), 1216);
    assert_eq!(prop(&props, "device_id"), 29857);
    let props = topology_file("mi350x", "/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties");
    assert_eq!(prop(&props, "gfx_target_version"), 90500);
    assert_eq!(prop(&props, "lds_size_in_kb"), 160);
}

#[test]
fn two_gpu_topology() {
    let mut cmd = Stack::Host.rocjitsu();
    cmd.args(["--config", "mi350x-2gpu", "--", "ls", "/sys/class/kfd/kfd/topology/nodes"]);
    let o = run(cmd, DEADLINE);
    o.assert_success();
    assert_eq!(o.stdout.split_whitespace().collect::<Vec<_>>(), ["0", "1", "2"]);
    let g1 = topology_file("mi350x-2gpu", "/sys/class/kfd/kfd/topology/nodes/1/gpu_id");
    let g2 = topology_file("mi350x-2gpu", "/sys/class/kfd/kfd/topology/nodes/2/gpu_id");
    let (g1, g2): (u64, u64) = (g1.trim().parse().unwrap(), g2.trim().parse().unwrap());
    assert_eq!(g2, g1 + 1);
    let p2 = topology_file("mi350x-2gpu", "/sys/class/kfd/kfd/topology/nodes/2/properties");
    assert_eq!(prop(&p2, "drm_render_minor"), 129);
    assert_eq!(prop(&p2, "location_id"), 0x400);
}
