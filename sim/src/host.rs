//! Facts about the real host that the KFD topology's CPU node must repeat.
//!
//! libhsakmt cross-checks the CPU node against the host: it matches `cpu_core_id_base` with an
//! `apicid` from `/proc/cpuinfo` to name the CPU agent, sizes its CPU list with `get_nprocs()`,
//! and, when the node lists no caches, reads the host's own cache sysfs — and fails the
//! snapshot if that finds nothing. So the CPU node is built from what is really there.

use std::path::Path;

/// The host as the topology's CPU node describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostInfo {
    /// Online CPUs (what `get_nprocs()` reports); the node's `cpu_cores_count`.
    pub cpu_count: u32,
    /// `apicid` of the first processor in `/proc/cpuinfo`; the node's `cpu_core_id_base`.
    pub first_apicid: u32,
    /// `model name` of the first processor (informational; libhsakmt reads it itself).
    pub cpu_model_name: String,
    /// Highest CPU clock in MHz (0 if unknown); the node's `max_engine_clk_ccompute`.
    pub cpu_max_clock_mhz: u32,
    /// Total RAM in bytes; the size of the CPU node's memory bank (ROCR's system pool).
    pub mem_total_bytes: u64,
    /// Whether libhsakmt will find CPU caches under `/sys/devices/system/{node/node0,cpu}`.
    /// When false the topology lists a CPU cache itself so the snapshot does not fail.
    pub cpu_caches_in_sysfs: bool,
}

impl HostInfo {
    /// Reads the running host. Never fails: each fact falls back to a safe value.
    pub fn detect() -> HostInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").ok();
        let cpufreq_khz = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let mut host = HostInfo::from_sources(&cpuinfo, &meminfo, online.as_deref());
        if let Some(khz) = cpufreq_khz.filter(|&k| k > 0) {
            host.cpu_max_clock_mhz = u32::try_from(khz / 1000).unwrap_or(u32::MAX);
        }
        if host.mem_total_bytes == 0 {
            let info = rustix::system::sysinfo();
            host.mem_total_bytes = u64::from(info.mem_unit).saturating_mul(info.totalram as u64);
        }
        if host.cpu_count == 0 {
            host.cpu_count =
                std::thread::available_parallelism().map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX)).unwrap_or(1);
        }
        host.cpu_caches_in_sysfs = cpu_caches_in_sysfs(Path::new("/sys/devices/system"));
        host
    }

    /// Builds host facts from the text of `/proc/cpuinfo`, `/proc/meminfo` and
    /// `/sys/devices/system/cpu/online`. `cpu_caches_in_sysfs` is left true (the normal case);
    /// `cpu_count` is 0 if no source says how many CPUs there are.
    pub fn from_sources(cpuinfo: &str, meminfo: &str, online_cpus: Option<&str>) -> HostInfo {
        let cpu = parse_cpuinfo(cpuinfo);
        let cpu_count = online_cpus.and_then(parse_cpu_list).unwrap_or(cpu.processors);
        HostInfo {
            cpu_count,
            first_apicid: cpu.first_apicid,
            cpu_model_name: cpu.model_name,
            cpu_max_clock_mhz: cpu.mhz,
            mem_total_bytes: parse_mem_total(meminfo).unwrap_or(0),
            cpu_caches_in_sysfs: true,
        }
    }
}

/// What the topology needs from `/proc/cpuinfo`.
#[derive(Debug, Default, PartialEq, Eq)]
struct CpuInfo {
    processors: u32,
    first_apicid: u32,
    model_name: String,
    mhz: u32,
}

/// Reads the first processor's `apicid`, `model name` and `cpu MHz`, and counts `processor`
/// entries.
fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => info.processors += 1,
            _ if info.processors > 1 => {}
            "apicid" => info.first_apicid = value.parse().unwrap_or(0),
            "model name" => info.model_name = value.to_owned(),
            "cpu MHz" => info.mhz = value.parse::<f64>().map(|m| m.round() as u32).unwrap_or(0),
            _ => {}
        }
    }
    info
}

/// `MemTotal` from `/proc/meminfo`, in bytes.
fn parse_mem_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}

/// Counts the CPUs in a kernel CPU list such as `0-3,8,10-11`; `None` if malformed or empty.
pub fn parse_cpu_list(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut count: u32 = 0;
    for part in text.split(',') {
        let n = match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi): (u32, u32) = (lo.parse().ok()?, hi.parse().ok()?);
                hi.checked_sub(lo)?.checked_add(1)?
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        };
        count = count.checked_add(n)?;
    }
    Some(count)
}

/// Mirrors libhsakmt's search: the `cpuN` directories of `node/node0`, or of `cpu` when NUMA
/// is off, and whether any of them has a `cache/index*` entry.
pub fn cpu_caches_in_sysfs(system: &Path) -> bool {
    let node0 = system.join("node/node0");
    let base = if cpu_dirs(&node0).is_empty() { system.join("cpu") } else { node0 };
    cpu_dirs(&base).iter().any(|cpu| {
        std::fs::read_dir(cpu.join("cache"))
            .map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("index")))
            .unwrap_or(false)
    })
}

/// `cpu<digits>` subdirectories of `dir`.
fn cpu_dirs(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\
cpu MHz\t\t: 2596.138\napicid\t\t: 4\n\nprocessor\t: 1\nmodel name\t: Other\napicid\t\t: 5\n";

    #[test]
    fn cpuinfo_first_processor() {
        let info = parse_cpuinfo(CPUINFO);
        assert_eq!(info, CpuInfo { processors: 2, first_apicid: 4, model_name: "AMD EPYC".into(), mhz: 2596 });
    }

    #[test]
    fn meminfo_total() {
        assert_eq!(parse_mem_total("MemTotal:       24683568 kB\nMemFree: 1 kB\n"), Some(24683568 * 1024));
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(parse_mem_total("MemTotal: x kB\n"), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn from_sources_prefers_the_online_list() {
        let h = HostInfo::from_sources(CPUINFO, "MemTotal: 2048 kB\n", Some("0-7"));
        assert_eq!(h.cpu_count, 8);
        assert_eq!(h.first_apicid, 4);
        assert_eq!(h.mem_total_bytes, 2048 * 1024);
        let h = HostInfo::from_sources(CPUINFO, "", None);
        assert_eq!(h.cpu_count, 2);
        assert_eq!(h.mem_total_bytes, 0);
    }

    #[test]
    fn cache_search_follows_libhsakmt() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        assert!(!cpu_caches_in_sysfs(sys));
        // No NUMA: caches under cpu/cpu0.
        std::fs::create_dir_all(sys.join("cpu/cpu0/cache/index0")).unwrap();
        assert!(cpu_caches_in_sysfs(sys));
        // node0 has cpu dirs without caches: libhsakmt looks only there.
        std::fs::create_dir_all(sys.join("node/node0/cpu0")).unwrap();
        assert!(!cpu_caches_in_sysfs(sys));
        std::fs::create_dir_all(sys.join("node/node0/cpu0/cache/index2")).unwrap();
        assert!(cpu_caches_in_sysfs(sys));
    }

    #[test]
    fn detect_reads_this_host() {
        let h = HostInfo::detect();
        assert!(h.cpu_count >= 1);
        assert!(h.mem_total_bytes > 0);
    }
}
