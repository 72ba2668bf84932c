//! The KFD topology tree, read the way libhsakmt 5.2 reads it.

use std::collections::BTreeMap;

use sim::config::{self, Config, ConfigSource};
use sim::driver::topology::{self, TopologyTree, MAX_PROPERTIES_BYTES};
use sim::host::HostInfo;

/// A fixed host, so the golden values do not depend on the machine running the tests.
fn host() -> HostInfo {
    HostInfo {
        cpu_count: 6,
        first_apicid: 0,
        cpu_model_name: "Test CPU".into(),
        cpu_max_clock_mhz: 3000,
        mem_total_bytes: 32 << 30,
        cpu_caches_in_sysfs: true,
    }
}

fn tree(name: &str) -> TopologyTree {
    topology::build(&config::load(name).unwrap(), &host())
}

/// libhsakmt's reader: one `fread` of at most a page minus the terminator, then repeated
/// `sscanf("%s %llu\n%n")` until a line does not match. Returns the pairs and the unparsed rest.
fn thunk_parse(text: &str) -> (Vec<(String, u64)>, &str) {
    let mut rest = &text[..text.len().min(MAX_PROPERTIES_BYTES)];
    let mut pairs = Vec::new();
    loop {
        let s = rest.trim_start();
        let key_end = s.find(char::is_whitespace).unwrap_or(s.len());
        if key_end == 0 {
            break;
        }
        let key = &s[..key_end];
        let after_key = s[key_end..].trim_start();
        let digits = after_key.len() - after_key.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            break;
        }
        let Ok(value) = after_key[..digits].parse::<u64>() else {
            break;
        };
        pairs.push((key.to_owned(), value));
        // The `\n` directive consumes any whitespace, so blank lines are skipped too.
        rest = after_key[digits..].trim_start();
    }
    (pairs, rest)
}

/// Parses a properties file completely (every line must be read by the thunk).
fn props(t: &TopologyTree, path: &str) -> BTreeMap<String, u64> {
    let text = t.get(path).unwrap_or_else(|| panic!("{path} missing"));
    let (pairs, rest) = thunk_parse(text);
    assert_eq!(rest, "", "{path}: the thunk would stop before {rest:?}");
    let map: BTreeMap<_, _> = pairs.iter().cloned().collect();
    assert_eq!(map.len(), pairs.len(), "{path}: duplicate keys");
    map
}

/// A cache file: everything before `sibling_map` (where libhsakmt breaks out), then the list.
fn cache_props(t: &TopologyTree, path: &str) -> (BTreeMap<String, u64>, Vec<u32>) {
    let text = t.get(path).unwrap();
    let (head, siblings) = text.split_once("sibling_map ").expect("sibling_map");
    let (pairs, rest) = thunk_parse(head);
    assert_eq!(rest, "");
    assert!(siblings.ends_with('\n') && !siblings.trim_end().contains('\n'), "sibling_map is the last line");
    let bits = siblings.trim_end().split(',').map(|b| b.parse().unwrap()).collect();
    (pairs.into_iter().collect(), bits)
}

fn node_count(t: &TopologyTree) -> usize {
    t.dirs().iter().filter(|d| d.strip_prefix("nodes/").is_some_and(|n| !n.contains('/'))).count()
}

/// Files directly under `nodes/N/<sub>/`.
fn entries(t: &TopologyTree, node: usize, sub: &str) -> usize {
    let prefix = format!("nodes/{node}/{sub}/");
    t.files().iter().filter(|f| f.path.strip_prefix(&prefix).is_some_and(|r| r.ends_with("/properties"))).count()
}

/// What every tree must satisfy for libhsakmt's snapshot to succeed.
fn check_invariants(t: &TopologyTree) {
    for f in t.files() {
        assert!(f.contents.len() <= MAX_PROPERTIES_BYTES, "{} is {} bytes", f.path, f.contents.len());
        assert!(f.contents.ends_with('\n'), "{}", f.path);
    }
    let nodes = node_count(t);
    assert!(nodes >= 2);
    for n in 0..nodes {
        let gpu_id: u64 = t.get(&format!("nodes/{n}/gpu_id")).unwrap().trim().parse().unwrap();
        assert_eq!(gpu_id == 0, n == 0, "only node 0 is the CPU");
        let p = props(t, &format!("nodes/{n}/properties"));
        assert_eq!(p["mem_banks_count"] as usize, entries(t, n, "mem_banks"));
        assert_eq!(p["caches_count"] as usize, entries(t, n, "caches"));
        assert_eq!(p["io_links_count"] as usize, entries(t, n, "io_links"));
        let p2p = p.get("p2p_links_count").copied().unwrap_or(0) as usize;
        assert_eq!(p2p, entries(t, n, "p2p_links"));
        // libhsakmt keeps at most NumNodes - 1 links per node.
        assert!(p["io_links_count"] as usize + p2p < nodes);
        for kind in ["io_links", "p2p_links"] {
            for l in 0..entries(t, n, kind) {
                let link = props(t, &format!("nodes/{n}/{kind}/{l}/properties"));
                assert_eq!(link["node_from"], n as u64, "node_from must be the node itself");
                assert!((link["node_to"] as usize) < nodes && link["node_to"] != n as u64);
            }
        }
        for m in 0..entries(t, n, "mem_banks") {
            props(t, &format!("nodes/{n}/mem_banks/{m}/properties"));
        }
        for c in 0..entries(t, n, "caches") {
            cache_props(t, &format!("nodes/{n}/caches/{c}/properties"));
        }
        if n > 0 {
            assert!(p["caches_count"] >= 1, "ROCR asserts that a GPU has caches");
            assert!((128..=255).contains(&p["drm_render_minor"]));
            assert!(p["cpu_cores_count"] == 0 && p["simd_count"] > 0, "a dGPU node");
            assert!(p["gfx_target_version"] > 0);
        }
    }
    // Every node carries p2p_links_count, or none does (libhsakmt keeps the last value seen).
    let with_key =
        (0..nodes).filter(|n| props(t, &format!("nodes/{n}/properties")).contains_key("p2p_links_count")).count();
    assert!(with_key == 0 || with_key == nodes);
}

#[test]
fn all_builtins_satisfy_the_thunk() {
    for b in config::BUILTINS {
        check_invariants(&tree(b.name));
    }
}

#[test]
fn top_level_files() {
    let t = tree("mi210");
    assert_eq!(t.get("generation_id"), Some("1\n"));
    let sys = props(&t, "system_properties");
    assert_eq!(sys.keys().collect::<Vec<_>>(), ["platform_id", "platform_oem", "platform_rev"]);
    assert!(t.dirs().contains(&"nodes".to_string()));
}

#[test]
fn mi210_golden() {
    let t = tree("mi210");
    assert_eq!(node_count(&t), 2);
    assert_eq!(t.get("nodes/1/gpu_id"), Some("50149\n"));
    assert_eq!(t.get("nodes/1/name"), Some("aldebaran\n"));
    let p = props(&t, "nodes/1/properties");
    let expect: &[(&str, u64)] = &[
        ("cpu_cores_count", 0),
        ("simd_count", 416),
        ("mem_banks_count", 1),
        ("caches_count", 2),
        ("io_links_count", 1),
        ("array_count", 8),
        ("simd_arrays_per_engine", 1),
        ("cu_per_simd_array", 14),
        ("simd_per_cu", 4),
        ("max_waves_per_simd", 8),
        ("lds_size_in_kb", 64),
        ("wave_front_size", 64),
        ("max_slots_scratch_cu", 32),
        ("gfx_target_version", 90010),
        ("vendor_id", 4098),
        ("device_id", 29711),
        ("location_id", 768),
        ("drm_render_minor", 128),
        ("num_sdma_engines", 2),
        ("num_sdma_xgmi_engines", 3),
        ("num_sdma_queues_per_engine", 8),
        ("num_cp_queues", 24),
        ("simd_id_base", 2_147_487_744),
        ("num_gws", 64),
        ("fw_version", 78),
        ("local_mem_size", 68_702_699_520),
        ("max_engine_clk_fcompute", 1700),
        ("max_engine_clk_ccompute", 3000),
        ("hive_id", 0),
    ];
    for (k, v) in expect {
        assert_eq!(p.get(*k), Some(v), "{k}");
    }
    assert!(!p.contains_key("p2p_links_count"), "single GPU: the tree ROCm 5.2 was verified with");
    let cap = p["capability"];
    assert_eq!((cap >> 12) & 3, 2, "DoorbellType 2");
    assert_ne!(cap & (1 << 26), 0, "SRAM_EDCSupport => sramecc+");
    assert_eq!((cap >> 22) & 0xf, 1, "ASICRevision = revision_id");

    let bank = props(&t, "nodes/1/mem_banks/0/properties");
    assert_eq!(bank["heap_type"], 1, "FB_PUBLIC");
    assert_eq!(bank["size_in_bytes"], 68_702_699_520);
    assert_eq!(bank["width"], 4096);
    assert_eq!(bank["mem_clk_max"], 1600);

    let (l1, l1_siblings) = cache_props(&t, "nodes/1/caches/0/properties");
    assert_eq!((l1["level"], l1["size"], l1["cache_line_size"], l1["association"]), (1, 16, 64, 4));
    assert_eq!(l1["type"], 9, "DATA | HSACU");
    assert_eq!(l1["processor_id_low"], 2_147_487_744);
    assert_eq!(l1_siblings.iter().sum::<u32>(), 1);
    let (l2, l2_siblings) = cache_props(&t, "nodes/1/caches/1/properties");
    assert_eq!((l2["level"], l2["size"], l2["cache_line_size"], l2["association"]), (2, 8192, 128, 16));
    assert_eq!(l2_siblings.iter().sum::<u32>(), 104);

    let link = props(&t, "nodes/1/io_links/0/properties");
    assert_eq!((link["type"], link["node_from"], link["node_to"], link["weight"]), (2, 1, 0, 20));
    assert_eq!(link["flags"] & 0b1100, 0, "PCIe atomics available");
}

#[test]
fn cpu_node() {
    let t = tree("mi210");
    assert_eq!(t.get("nodes/0/gpu_id"), Some("0\n"));
    let p = props(&t, "nodes/0/properties");
    assert_eq!(p["cpu_cores_count"], 6);
    assert_eq!(p["simd_count"], 0);
    assert_eq!(p["caches_count"], 0, "libhsakmt reads the real CPU caches");
    assert_eq!(p["mem_banks_count"], 1);
    assert_eq!(p["io_links_count"], 1);
    assert_eq!(p["cpu_core_id_base"], 0);
    assert_eq!(p["max_engine_clk_ccompute"], 3000);
    assert!(t.dirs().contains(&"nodes/0/caches".to_string()), "empty caches dir exists");
    let bank = props(&t, "nodes/0/mem_banks/0/properties");
    assert_eq!((bank["heap_type"], bank["size_in_bytes"]), (0, 32 << 30));
    let link = props(&t, "nodes/0/io_links/0/properties");
    assert_eq!((link["type"], link["node_from"], link["node_to"]), (2, 0, 1));
}

#[test]
fn cpu_cache_is_listed_when_the_host_has_no_cache_sysfs() {
    let mut h = host();
    h.cpu_caches_in_sysfs = false;
    h.first_apicid = 2;
    let t = topology::build(&config::default_config(), &h);
    check_invariants(&t);
    let p = props(&t, "nodes/0/properties");
    assert_eq!(p["caches_count"], 1);
    assert_eq!(p["cpu_core_id_base"], 2);
    let (c, siblings) = cache_props(&t, "nodes/0/caches/0/properties");
    assert_eq!((c["type"], c["level"], c["processor_id_low"]), (5, 1, 2), "DATA | CPU");
    assert_eq!(siblings[2], 1);
}

#[test]
fn mi300x_golden() {
    let t = tree("mi300x");
    assert_eq!(t.get("nodes/1/name"), Some("ip discovery\n"));
    let p = props(&t, "nodes/1/properties");
    assert_eq!(p["simd_count"], 1216);
    assert_eq!(p["gfx_target_version"], 90402);
    assert_eq!(p["device_id"], 29857);
    assert_eq!(p["array_count"], 32);
    assert_eq!(p["cu_per_simd_array"], 10);
    assert_eq!(p["num_xcc"], 8);
    assert_eq!(p["local_mem_size"], 206_158_430_208);
}

#[test]
fn mi350x_golden() {
    let t = tree("mi350x");
    let p = props(&t, "nodes/1/properties");
    assert_eq!(t.get("nodes/1/gpu_id"), Some("38144\n"));
    assert_eq!(p["gfx_target_version"], 90500);
    assert_eq!(p["simd_count"], 1024);
    // The config's 0xac37a280 without the SVM-API and debugger-firmware bits the simulated
    // driver does not implement (config::capability::NOT_IMPLEMENTED).
    assert_eq!(p["capability"], 2_889_327_232 & !((1 << 27) | (1 << 29)));
    assert_eq!(p["debug_prop"], 1494);
    assert_eq!(p["lds_size_in_kb"], 160);
    assert_eq!(p["unique_id"], 5_929_628_898_254_127_105);
    assert_eq!(p["num_sdma_queues_per_engine"], 8);
}

#[test]
fn two_gpus_in_a_hive() {
    let t = tree("mi350x-2gpu");
    assert_eq!(node_count(&t), 3);
    assert_eq!(t.get("nodes/1/gpu_id"), Some("38144\n"));
    assert_eq!(t.get("nodes/2/gpu_id"), Some("38145\n"));
    let (p1, p2) = (props(&t, "nodes/1/properties"), props(&t, "nodes/2/properties"));
    assert_eq!((p1["drm_render_minor"], p2["drm_render_minor"]), (128, 129));
    assert_eq!((p1["location_id"], p2["location_id"]), (0x300, 0x400));
    assert_eq!((p1["hive_id"], p2["hive_id"]), (1, 1));
    for (n, p) in [(1, &p1), (2, &p2)] {
        assert_eq!(p["io_links_count"], 2, "CPU + XGMI peer");
        assert_eq!(p["p2p_links_count"], 0);
        let cpu = props(&t, &format!("nodes/{n}/io_links/0/properties"));
        assert_eq!((cpu["type"], cpu["node_to"]), (2, 0));
        let peer = props(&t, &format!("nodes/{n}/io_links/1/properties"));
        assert_eq!((peer["type"], peer["weight"]), (11, 15), "XGMI");
        assert_eq!(peer["node_to"], 3 - n);
    }
    let cpu = props(&t, "nodes/0/properties");
    assert_eq!((cpu["io_links_count"], cpu["p2p_links_count"]), (2, 0));
}

#[test]
fn two_gpus_without_a_hive_use_p2p_links() {
    let text = config::BUILTINS
        .iter()
        .find(|b| b.name == "mi350x-2gpu")
        .unwrap()
        .text
        .replace("\"hive_id\": 1", "\"hive_id\": 0");
    let c: Config = config::from_json_str(&text, ConfigSource::Builtin("no-hive")).unwrap();
    assert_eq!(c.device().hive_id, 0);
    let t = topology::build(&c, &host());
    check_invariants(&t);
    for n in [1u64, 2] {
        let p = props(&t, &format!("nodes/{n}/properties"));
        assert_eq!((p["io_links_count"], p["p2p_links_count"]), (1, 1));
        let link = props(&t, &format!("nodes/{n}/p2p_links/0/properties"));
        assert_eq!((link["type"], link["node_from"], link["node_to"]), (2, n, 3 - n));
        assert_eq!(link["weight"], 40, "GPU-CPU-GPU");
    }
}

/// GPU node `n`'s links of `kind` as (type, node_to, weight).
fn links(t: &TopologyTree, n: u64, kind: &str) -> Vec<(u64, u64, u64)> {
    (0..entries(t, n as usize, kind))
        .map(|i| {
            let l = props(t, &format!("nodes/{n}/{kind}/{i}/properties"));
            assert_eq!(l["node_from"], n);
            (l["type"], l["node_to"], l["weight"])
        })
        .collect()
}

#[test]
fn four_and_eight_mi300x_are_one_fully_connected_hive() {
    for gpus in [4u64, 8] {
        let t = tree(&format!("mi300x-{gpus}gpu"));
        check_invariants(&t);
        assert_eq!(node_count(&t), gpus as usize + 1);
        for n in 1..=gpus {
            let p = props(&t, &format!("nodes/{n}/properties"));
            assert_eq!((p["hive_id"], p["io_links_count"], p["p2p_links_count"]), (1, gpus, 0), "node {n}");
            let want: Vec<_> =
                std::iter::once((2, 0, 20)).chain((1..=gpus).filter(|&m| m != n).map(|m| (11, m, 15))).collect();
            assert_eq!(links(&t, n, "io_links"), want, "node {n}: the CPU, then an XGMI link to each peer");
        }
    }
}

#[test]
fn eight_mi210_are_two_hives_of_four_joined_through_the_cpu() {
    let t = tree("mi210-8gpu");
    check_invariants(&t);
    for n in 1..=8u64 {
        let hive = (n - 1) / 4;
        let p = props(&t, &format!("nodes/{n}/properties"));
        assert_eq!(p["hive_id"], 1 + hive, "node {n}");
        let mates = (1..=8).filter(|&m| m != n && (m - 1) / 4 == hive);
        let others = (1..=8).filter(|&m| (m - 1) / 4 != hive);
        let io: Vec<_> = std::iter::once((2, 0, 20)).chain(mates.map(|m| (11, m, 15))).collect();
        assert_eq!(links(&t, n, "io_links"), io, "node {n}: XGMI within its bridge");
        let p2p: Vec<_> = others.map(|m| (2, m, 40)).collect();
        assert_eq!(links(&t, n, "p2p_links"), p2p, "node {n}: PCIe through the CPU to the other hive");
    }
}

#[test]
fn a_hive_size_must_divide_the_gpus() {
    let text = config::BUILTINS
        .iter()
        .find(|b| b.name == "mi210-8gpu")
        .unwrap()
        .text
        .replace("\"xgmi_hive_size\": 4", "\"xgmi_hive_size\": 3");
    let e = config::from_json_str(&text, ConfigSource::Builtin("bad-hive")).unwrap_err().to_string();
    assert!(e.contains("vm.gpu.xgmi_hive_size") && e.contains("got 3"), "{e}");
}

#[test]
fn write_to_creates_the_tree() {
    let t = tree("mi350x-2gpu");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("topology");
    t.write_to(&root).unwrap();
    for d in t.dirs() {
        assert!(root.join(d).is_dir(), "{d}");
    }
    for f in t.files() {
        assert_eq!(std::fs::read_to_string(root.join(&f.path)).unwrap(), f.contents);
    }
    // libhsakmt counts nodes as the subdirectories of nodes/.
    assert_eq!(std::fs::read_dir(root.join("nodes")).unwrap().count(), 3);
    // Writing again over an existing tree works.
    t.write_to(&root).unwrap();
}

#[test]
fn the_thunk_parser_stops_where_libhsakmt_does() {
    assert_eq!(thunk_parse("a 1\nb x\nc 3\n").0, vec![("a".to_string(), 1)]);
    assert_eq!(thunk_parse("a 1\n\nb 2\n").1, "");
    let big = "k 1\n".repeat(2000);
    assert_eq!(thunk_parse(&big).0.len(), MAX_PROPERTIES_BYTES / 4 + 1);
}

#[test]
fn detected_host_builds_a_valid_tree() {
    let t = topology::build(&config::default_config(), &HostInfo::detect());
    check_invariants(&t);
}

/// Every node key libhsakmt 5.2 parses (contract §4), so no property silently reads as 0.
const THUNK_NODE_KEYS: &[&str] = &[
    "cpu_cores_count",
    "simd_count",
    "mem_banks_count",
    "caches_count",
    "io_links_count",
    "cpu_core_id_base",
    "simd_id_base",
    "capability",
    "debug_prop",
    "max_waves_per_simd",
    "lds_size_in_kb",
    "gds_size_in_kb",
    "wave_front_size",
    "array_count",
    "simd_arrays_per_engine",
    "cu_per_simd_array",
    "simd_per_cu",
    "max_slots_scratch_cu",
    "fw_version",
    "vendor_id",
    "device_id",
    "location_id",
    "domain",
    "max_engine_clk_fcompute",
    "max_engine_clk_ccompute",
    "local_mem_size",
    "drm_render_minor",
    "sdma_fw_version",
    "hive_id",
    "unique_id",
    "num_sdma_engines",
    "num_sdma_xgmi_engines",
    "num_gws",
    "num_sdma_queues_per_engine",
    "num_cp_queues",
    "gfx_target_version",
];

#[test]
fn gpu_nodes_carry_every_key_the_thunk_parses() {
    for b in config::BUILTINS {
        let t = tree(b.name);
        for n in 1..node_count(&t) {
            let p = props(&t, &format!("nodes/{n}/properties"));
            for key in THUNK_NODE_KEYS {
                assert!(p.contains_key(*key), "{}: nodes/{n} lacks {key}", b.name);
            }
        }
    }
}
