//! Run statistics (issue 16): `rocjitsu --stats --stats-json FILE` on a HIP program whose
//! kernel is straight-line code. Its dispatches, workgroups and wave-instructions by class
//! must be exactly what the kernel's disassembly (`llvm-objdump-15` of the same source's code
//! object) and its grid say; its memory traffic what it reads and writes. ROCm 5.2, local and
//! `--daemon`; two clients of one daemon each get their own numbers. And the instruction trace
//! (`ROCJITSU_ITRACE`) of one workgroup of the same kernel.

use integration::{hip_code_object, hip_program, run, Daemon, Mode, Outcome, Stack};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const BLOCKS: u64 = 40;
const THREADS: u64 = 256;
const WAVES_PER_LAUNCH: u64 = BLOCKS * THREADS / 64;
const ITEMS: u64 = BLOCKS * THREADS;

/// The mnemonics of `scale_add` up to its `s_endpgm`: the code object of the program's source
/// unbundled from hipcc's offload bundle and disassembled.
fn scale_add_mnemonics() -> Vec<String> {
    let bundle = hip_code_object("stats_kernels");
    let elf = bundle.with_extension("gfx90a.elf");
    let status = Command::new("/usr/lib/llvm-15/bin/clang-offload-bundler")
        .args(["--type=o", "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a", "--unbundle"])
        .arg(format!("--input={}", bundle.display()))
        .arg(format!("--output={}", elf.display()))
        .status()
        .expect("clang-offload-bundler (llvm-15) runs");
    assert!(status.success());
    let out =
        Command::new("llvm-objdump-15").args(["-d", "--mcpu=gfx90a"]).arg(&elf).output().expect("llvm-objdump-15");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut mnemonics = Vec::new();
    for line in text.lines().skip_while(|l| !l.contains("<_Z9scale_addPKfPff>:")).skip(1) {
        let m = line.split_whitespace().next().unwrap_or("").to_string();
        let end = m == "s_endpgm";
        mnemonics.push(m);
        if end {
            return mnemonics;
        }
    }
    panic!("no scale_add in the disassembly:\n{text}");
}

/// Instructions by class as this test reads mnemonics; the kernel has no branch.
fn classes(mnemonics: &[String]) -> BTreeMap<&'static str, u64> {
    let mut c = BTreeMap::new();
    for m in mnemonics {
        let class = match m.as_str() {
            m if m.starts_with("s_load") => "SMEM",
            "s_waitcnt" | "s_endpgm" | "s_nop" => "other",
            m if m.starts_with("s_cbranch") || m.starts_with("s_branch") => "branch",
            m if m.starts_with("s_") => "SALU",
            m if m.starts_with("v_") => "VALU",
            m if m.starts_with("global_") => "VMEM",
            m => panic!("unexpected {m}"),
        };
        *c.entry(class).or_default() += 1;
    }
    assert!(!c.contains_key("branch"), "scale_add must be straight-line code: {mnemonics:?}");
    c
}

fn scalar_load_bytes(mnemonics: &[String]) -> u64 {
    mnemonics
        .iter()
        .filter_map(|m| m.strip_prefix("s_load_dword"))
        .map(|rest| 4 * rest.strip_prefix('x').map_or(1, |n| n.parse::<u64>().unwrap()))
        .sum()
}

fn read_report(path: &Path, o: &Outcome) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no statistics file {} ({e}):\n{}\n{}", path.display(), o.stdout, o.stderr));
    serde_json::from_str(&text).expect("the statistics are JSON")
}

/// Checks the report's `scale_add` against the disassembly for `launches` launches.
fn check_scale_add(report: &Value, launches: u64, pid: u32) {
    assert_eq!(report["pid"], pid as u64);
    let kernels = report["kernels"].as_array().expect("a kernel list");
    let k = kernels
        .iter()
        .find(|k| k["name"] == "scale_add")
        .unwrap_or_else(|| panic!("no scale_add among {:?}", kernels.iter().map(|k| &k["name"]).collect::<Vec<_>>()));
    let mnemonics = scale_add_mnemonics();
    let per_wave = classes(&mnemonics);
    let waves = WAVES_PER_LAUNCH * launches;
    assert_eq!(k["dispatches"], launches);
    assert_eq!(k["workgroups"], BLOCKS * launches);
    for class in ["SALU", "VALU", "SMEM", "VMEM", "LDS", "MFMA", "branch", "other"] {
        let want = per_wave.get(class).copied().unwrap_or(0) * waves;
        assert_eq!(k["by_class"][class], want, "{class}: per wave {per_wave:?}, {waves} waves");
    }
    assert_eq!(k["wave_instructions"], mnemonics.len() as u64 * waves);
    // x[i] and y[i] read, y[i] written, by every work-item; the kernel arguments and the
    // dispatch packet's sizes by scalar loads, once per wave.
    assert_eq!(k["bytes_read"], 8 * ITEMS * launches + scalar_load_bytes(&mnemonics) * waves);
    assert_eq!(k["bytes_written"], 4 * ITEMS * launches);
    // hipMemcpy of both arrays in, one out: by SDMA (ROCR's default on ROCm 5.2).
    let copied: u64 =
        report["copy_engines"].as_array().unwrap().iter().map(|c| c["bytes_copied"].as_u64().unwrap()).sum();
    assert!(copied >= 3 * 4 * ITEMS, "copies: {}", report["copy_engines"]);
}

fn run_with_stats(mode: Mode, launches: u64) -> (Outcome, Value) {
    let exe = hip_program("stats_kernels");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    let mut cmd = Stack::Host.rocjitsu_in(mode);
    cmd.args(["--stats", "--stats-json"]).arg(&json).arg("--").arg(&exe).arg(launches.to_string());
    let o = run(cmd, Duration::from_secs(120));
    o.assert_passes("stats_kernels", &[&format!("scale_add x{launches}")]);
    let report = read_report(&json, &o);
    (o, report)
}

#[test]
fn counts_match_the_disassembly_in_local_and_daemon_mode() {
    for mode in Mode::OWN {
        let (o, report) = run_with_stats(mode, 3);
        // The exec'd application keeps the launcher's pid.
        let pid = report["pid"].as_u64().unwrap() as u32;
        check_scale_add(&report, 3, pid);
        assert!(
            o.stderr.contains("rocjitsu stats, process") && o.stderr.lines().any(|l| l.ends_with("  scale_add")),
            "--stats prints the table ({}):\n{}",
            mode.name(),
            o.stderr
        );
    }
}

#[test]
fn two_clients_of_one_daemon_each_get_their_own() {
    let daemon = Daemon::start("mi210");
    let exe = hip_program("stats_kernels");
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = [2u64, 5]
        .iter()
        .map(|&launches| {
            let json = dir.path().join(format!("stats-{launches}.json"));
            let mut cmd = daemon.attach();
            cmd.arg("--stats-json").arg(&json).arg("--").arg(&exe).arg(launches.to_string());
            let handle = std::thread::spawn(move || run(cmd, Duration::from_secs(120)));
            (launches, json, handle)
        })
        .collect();
    for (launches, json, handle) in children {
        let o = handle.join().unwrap();
        o.assert_passes("stats_kernels", &[&format!("scale_add x{launches}")]);
        let report = read_report(&json, &o);
        let pid = report["pid"].as_u64().unwrap() as u32;
        check_scale_add(&report, launches, pid);
        assert!(!o.stderr.contains("rocjitsu stats"), "only --stats prints a table");
    }
}

#[test]
fn without_stats_nothing_is_printed_or_written() {
    let exe = hip_program("stats_kernels");
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Local);
    cmd.arg("--").arg(&exe).arg("1");
    let o = run(cmd, Duration::from_secs(120));
    o.assert_passes("stats_kernels", &["scale_add x1"]);
    assert!(!o.stderr.contains("rocjitsu stats"));
}

#[test]
fn the_instruction_trace_prints_every_instruction_of_the_chosen_workgroup() {
    let exe = hip_program("stats_kernels");
    let mnemonics = scale_add_mnemonics();
    for (filter, waves) in [("scale_add@0", 4usize), ("scale_add@39", 4), ("no_such_kernel", 0)] {
        let mut cmd = Stack::Host.rocjitsu_in(Mode::Local);
        cmd.env("ROCJITSU_ITRACE", filter).arg("--").arg(&exe).arg("1");
        let o = run(cmd, Duration::from_secs(120));
        o.assert_passes("stats_kernels", &["scale_add x1"]);
        let lines: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with("itrace ")).collect();
        // 256 work-items per workgroup: 4 waves, each through the whole straight-line kernel.
        assert_eq!(lines.len(), waves * mnemonics.len(), "{filter}");
        let wg = filter.rsplit_once('@').map_or("", |(_, wg)| wg);
        for (i, l) in lines.iter().enumerate() {
            let mnemonic = &mnemonics[i % mnemonics.len()];
            assert!(l.starts_with(&format!("itrace d0 wg{wg} w")), "{l}");
            assert!(l.contains(&format!(" {mnemonic}")), "{l} is not {mnemonic}");
            assert!(l.contains("exec=ffffffffffffffff"), "{l}");
        }
        if waves > 0 {
            // The last instruction of the kernel's arithmetic wrote its result lanes.
            assert!(lines.iter().any(|l| l.contains("v_fmac_f32") && l.contains("v3=[0:")), "{lines:?}");
        }
    }
}

#[test]
fn a_percent_p_in_the_path_names_the_file_by_pid() {
    let exe = hip_program("stats_kernels");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Stack::Host.rocjitsu_in(Mode::Local);
    cmd.arg("--stats-json").arg(dir.path().join("stats-%p.json")).arg("--").arg(&exe).arg("2");
    let o = run(cmd, Duration::from_secs(120));
    o.assert_passes("stats_kernels", &["scale_add x2"]);
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let report = read_report(&files[0], &o);
    let pid = report["pid"].as_u64().unwrap();
    assert_eq!(files[0].file_name().unwrap().to_string_lossy(), format!("stats-{pid}.json"));
    check_scale_add(&report, 2, pid as u32);
}
