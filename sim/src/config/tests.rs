use super::*;
use serde_json::{json, Value};

const FILE: &str = "t.json";

/// A small valid config (MI210-like) with `patches` applied: each is a dotted path and the value
/// to put there (`Value::Null` removes the key).
fn config_with(patches: &[(&str, Value)]) -> String {
    let mut v = json!({
        "max_ticks": 0,
        "vm": {
            "arch": "cdna2",
            "gpu": {
                "device": {
                    "gpu_id": 50149,
                    "gfx_target_version": 90010,
                    "simd_count": 416,
                    "num_shader_engines": 8,
                    "num_cu_per_sh": 14,
                    "drm_render_minor": 128
                }
            }
        }
    });
    for (path, value) in patches {
        let mut node = &mut v;
        let keys: Vec<&str> = path.split('.').collect();
        for k in &keys[..keys.len() - 1] {
            node = node.as_object_mut().unwrap().entry(k.to_string()).or_insert_with(|| json!({}));
        }
        let obj = node.as_object_mut().unwrap();
        let last = keys[keys.len() - 1].to_string();
        if value.is_null() {
            obj.remove(&last);
        } else {
            obj.insert(last, value.clone());
        }
    }
    v.to_string()
}

fn parse_text(text: &str) -> Result<Config, ConfigError> {
    from_json_str(text, ConfigSource::File(PathBuf::from(FILE)))
}

fn parse_with(patches: &[(&str, Value)]) -> Result<Config, ConfigError> {
    parse_text(&config_with(patches))
}

/// Asserts the error's kind and key and that its one-line message carries file, key and a
/// reason containing `needle`.
fn assert_error(result: Result<Config, ConfigError>, kind: ConfigErrorKind, key: &str, needle: &str) {
    let e = result.expect_err("config should be rejected");
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.key, key, "{e}");
    assert_eq!(e.file, FILE, "{e}");
    assert!(e.reason.contains(needle), "reason {:?} lacks {needle:?}", e.reason);
    let line = e.to_string();
    assert!(!line.contains('\n'));
    assert_eq!(line, format!("{FILE}: {key}: {}", e.reason));
}

const DEV: &str = "vm.gpu.device";

fn dev(field: &str) -> String {
    format!("{DEV}.{field}")
}

#[test]
fn minimal_config_gets_defaults() {
    let text = r#"{"vm":{"gpu":{"device":{"gfx_target_version":90010,"simd_count":416}}}}"#;
    let c = parse_text(text).unwrap();
    assert_eq!(c.arch(), Arch::Cdna2, "arch follows the target when absent");
    assert_eq!(c.num_gpus(), 1);
    let d = c.device();
    assert_eq!(d.vendor_id, 0x1002);
    assert_eq!(d.device_id, 0x740f);
    assert_eq!(d.pci_revision_id, 2);
    assert_eq!(d.marketing_name, "AMD Instinct MI210");
    assert_eq!(d.drm_render_minor, 128);
    assert_eq!(d.location_id, 0x300);
    assert_eq!(d.max_waves_per_simd, 10);
    assert_eq!(d.simd_per_cu, 4);
    assert_eq!(d.wave_front_size, 64);
    assert_eq!(d.lds_size_kb, 64);
    assert_eq!(d.l1_size_kb, 32);
    assert_eq!(d.l2_size_kb, 4096);
    assert_eq!(d.num_sdma_engines, 2);
    assert_eq!(d.num_sdma_queues_per_engine, 8);
    assert_eq!(d.num_cp_queues, 128);
    assert_eq!(d.local_mem_size, 64 << 30);
    assert_eq!(d.num_xcc, 1);
    assert_eq!(d.simd_id_base, 0x8000_1000);
    assert_eq!(d.num_gws, 64);
    assert_eq!(d.capability, capability::DEFAULT);
    // 104 CUs over 4 SEs x 1 array: 26 CUs per array.
    assert_eq!(d.num_cu_per_sh, 26);
    assert!(c.ignored_keys().is_empty());
}

#[test]
fn device_helpers() {
    let c = parse_with(&[]).unwrap();
    let d = c.device();
    assert_eq!(d.cu_count(), 104);
    assert_eq!(d.array_count(), 8);
    assert_eq!(d.isa_name(), "gfx90a");
    assert_eq!(d.isa_string(), "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    assert_eq!(d.target_id(), "gfx90a:sramecc+:xnack-");
    assert_eq!(d.lds_bytes(), 65536);
    assert_eq!(d.max_waves_per_cu(), 40);
    assert_eq!(d.sysfs_node(), 1);
    assert_eq!(d.pci_bdf(), (3, 0, 0));
}

#[test]
fn sramecc_follows_the_capability_bit() {
    let c = parse_with(&[(&dev("capability"), json!(capability::DEFAULT & !capability::SRAM_EDC))]).unwrap();
    assert_eq!(c.device().target_id(), "gfx90a:sramecc-:xnack-");
}

#[test]
fn capability_from_config_overrides_and_zero_means_default() {
    let c = parse_with(&[(&dev("capability"), json!(0x2000))]).unwrap();
    assert_eq!(c.device().capability, 0x2000);
    let c = parse_with(&[(&dev("capability"), json!(0)), (&dev("revision_id"), json!(1))]).unwrap();
    assert_eq!(c.device().capability, capability::DEFAULT | (1 << 22));
}

#[test]
fn multi_gpu_expansion() {
    let c = parse_with(&[
        ("vm.gpu.num_gpus", json!(3)),
        (&dev("unique_id"), json!(100)),
        (&dev("location_id"), json!(0x300)),
    ])
    .unwrap();
    let ids: Vec<_> = c.gpus().iter().map(|d| (d.index, d.gpu_id)).collect();
    assert_eq!(ids, vec![(0, 50149), (1, 50150), (2, 50151)]);
    let minors: Vec<_> = c.gpus().iter().map(|d| d.drm_render_minor).collect();
    assert_eq!(minors, vec![128, 129, 130]);
    let locs: Vec<_> = c.gpus().iter().map(|d| d.location_id).collect();
    assert_eq!(locs, vec![0x300, 0x400, 0x500]);
    let uids: Vec<_> = c.gpus().iter().map(|d| d.unique_id).collect();
    assert_eq!(uids, vec![100, 101, 102]);
    assert_eq!(c.gpus()[2].sysfs_node(), 3);
    assert_eq!(c.gpus()[1].simd_count, 416);
}

#[test]
fn unknown_keys_are_collected_not_rejected() {
    let c = parse_with(&[
        ("thread_allocations", json!([{"num_threads": 1}])),
        ("topology.links", json!([])),
        (&dev("frobnicate"), json!(true)),
    ])
    .unwrap();
    let keys = c.ignored_keys();
    for k in ["max_ticks", "thread_allocations", "topology.links", "vm.gpu.device.frobnicate"] {
        assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
    }
    assert_eq!(keys.len(), 4, "{keys:?}");
}

#[test]
fn num_xcc_comes_from_the_topology_graph() {
    let root = json!({"name": "soc", "type": "soc", "children": [
        {"name": "xcd[0:8]", "type": "xcd", "children": []}]});
    let c = parse_with(&[
        ("topology.root", root),
        (&dev("gfx_target_version"), json!(90402)),
        ("vm.arch", json!("cdna3")),
        (&dev("simd_count"), json!(1216)),
        (&dev("num_shader_engines"), json!(4)),
        (&dev("num_cu_per_sh"), json!(10)),
    ])
    .unwrap();
    assert_eq!(c.device().num_xcc, 8);
    assert_eq!(c.device().array_count(), 32);
    let c = parse_with(&[(&dev("num_xcc"), json!(2)), ("vm.gpu.num_xcds", json!(4))]).unwrap();
    assert_eq!(c.device().num_xcc, 2, "the device key wins");
    assert_eq!(parse_with(&[("vm.gpu.num_xcds", json!(4))]).unwrap().device().num_xcc, 4);
    let e = parse_with(&[("vm.gpu.num_xcds", json!(17))]).unwrap_err();
    assert_eq!((e.kind, e.key.as_str()), (ConfigErrorKind::Range, "vm.gpu.num_xcds"));
    let huge = json!({"name": "soc", "type": "soc", "children": [
        {"name": "xcd[0:64]", "type": "xcd"}]});
    let e = parse_with(&[("topology.root", huge)]).unwrap_err();
    assert_eq!((e.kind, e.key.as_str()), (ConfigErrorKind::Range, "topology.root"), "{e}");
}

#[test]
fn local_mem_size_falls_back_to_memory_size_mb() {
    let c = parse_with(&[("vm.gpu.memory.size_mb", json!(1024))]).unwrap();
    assert_eq!(c.device().local_mem_size, 1 << 30);
}

#[test]
fn workers_key() {
    assert_eq!(parse_with(&[("workers", json!(3))]).unwrap().workers().get(), 3);
    assert!(parse_with(&[]).unwrap().workers().get() >= 1);
    assert_error(parse_with(&[("workers", json!(0))]), ConfigErrorKind::Range, "workers", "1..=1024");
}

// ---- errors ------------------------------------------------------------------------------

#[test]
fn syntax_error_is_located_by_line_and_column() {
    let text = "{\n  \"vm\": {\n    \"arch\": \"cdna2\",,\n  }\n}\n";
    assert_error(parse_text(text), ConfigErrorKind::Syntax, "line 3:21", "invalid JSON");
}

#[test]
fn truncated_json_is_a_syntax_error() {
    assert_error(parse_text("{\"vm\": {"), ConfigErrorKind::Syntax, "line 1:8", "EOF");
}

#[test]
fn trailing_text_is_a_syntax_error() {
    let text = config_with(&[]) + " x";
    let e = parse_text(&text).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Syntax);
    assert!(e.reason.contains("trailing"), "{e}");
}

#[test]
fn wrong_type_names_the_key_path() {
    assert_error(
        parse_with(&[(&dev("simd_count"), json!("416"))]),
        ConfigErrorKind::Type,
        "vm.gpu.device.simd_count",
        "invalid type: string \"416\", expected u32",
    );
    assert_error(
        parse_with(&[(&dev("local_mem_size"), json!(-1))]),
        ConfigErrorKind::Type,
        "vm.gpu.device.local_mem_size",
        "-1",
    );
    assert_error(parse_with(&[("vm.gpu", json!([]))]), ConfigErrorKind::Type, "vm.gpu", "expected a JSON object");
    assert_error(parse_text("[]"), ConfigErrorKind::Type, "(top level)", "a JSON object");
}

#[test]
fn value_too_large_for_the_field() {
    assert_error(
        parse_with(&[(&dev("simd_count"), json!(5_000_000_000u64))]),
        ConfigErrorKind::Type,
        "vm.gpu.device.simd_count",
        "5000000000",
    );
}

#[test]
fn missing_required_keys() {
    assert_error(
        parse_with(&[(&dev("simd_count"), Value::Null)]),
        ConfigErrorKind::Missing,
        "vm.gpu.device.simd_count",
        "missing",
    );
    assert_error(
        parse_with(&[(&dev("gfx_target_version"), Value::Null)]),
        ConfigErrorKind::Missing,
        "vm.gpu.device.gfx_target_version",
        "missing",
    );
}

#[test]
fn simd_count_zero() {
    assert_error(
        parse_with(&[(&dev("simd_count"), json!(0))]),
        ConfigErrorKind::Range,
        &dev("simd_count"),
        "at least 1",
    );
}

#[test]
fn simd_count_not_divisible_by_simd_per_cu() {
    assert_error(
        parse_with(&[(&dev("simd_count"), json!(418))]),
        ConfigErrorKind::Range,
        &dev("simd_count"),
        "418 is not divisible by simd_per_cu 4",
    );
}

#[test]
fn wave_front_size_must_be_32_or_64() {
    assert_error(
        parse_with(&[(&dev("wave_front_size"), json!(48))]),
        ConfigErrorKind::Range,
        &dev("wave_front_size"),
        "32 or 64, got 48",
    );
    assert_eq!(parse_with(&[(&dev("wave_front_size"), json!(32))]).unwrap().device().wave_front_size, 32);
}

#[test]
fn render_minor_range_including_the_last_gpu() {
    assert_error(
        parse_with(&[(&dev("drm_render_minor"), json!(127))]),
        ConfigErrorKind::Range,
        &dev("drm_render_minor"),
        "128..=255, got 127",
    );
    assert_error(
        parse_with(&[(&dev("drm_render_minor"), json!(256))]),
        ConfigErrorKind::Range,
        &dev("drm_render_minor"),
        "got 256",
    );
    assert!(parse_with(&[(&dev("drm_render_minor"), json!(255))]).is_ok());
    assert_error(
        parse_with(&[(&dev("drm_render_minor"), json!(255)), ("vm.gpu.num_gpus", json!(2))]),
        ConfigErrorKind::Range,
        &dev("drm_render_minor"),
        "exceeds 255",
    );
}

#[test]
fn num_gpus_range() {
    assert_error(parse_with(&[("vm.gpu.num_gpus", json!(0))]), ConfigErrorKind::Range, "vm.gpu.num_gpus", "got 0");
    assert_error(
        parse_with(&[("vm.gpu.num_gpus", json!(17))]),
        ConfigErrorKind::Range,
        "vm.gpu.num_gpus",
        "1..=16, got 17",
    );
    assert_eq!(parse_with(&[("vm.gpu.num_gpus", json!(16))]).unwrap().num_gpus(), 16);
}

#[test]
fn local_mem_size_zero() {
    assert_error(
        parse_with(&[(&dev("local_mem_size"), json!(0))]),
        ConfigErrorKind::Range,
        &dev("local_mem_size"),
        "greater than 0",
    );
}

#[test]
fn gpu_id_must_fit_kfd_mmap_offsets() {
    assert_error(parse_with(&[(&dev("gpu_id"), json!(0))]), ConfigErrorKind::Range, &dev("gpu_id"), "must not be 0");
    assert!(parse_with(&[(&dev("gpu_id"), json!(0xffff))]).is_ok());
    assert_error(
        parse_with(&[(&dev("gpu_id"), json!(0xffff)), ("vm.gpu.num_gpus", json!(2))]),
        ConfigErrorKind::Range,
        &dev("gpu_id"),
        "65535",
    );
}

#[test]
fn location_id_must_stay_16_bit() {
    assert_error(
        parse_with(&[(&dev("location_id"), json!(0xff00)), ("vm.gpu.num_gpus", json!(2))]),
        ConfigErrorKind::Range,
        &dev("location_id"),
        "16-bit",
    );
}

#[test]
fn cus_must_fit_the_shader_arrays() {
    assert_error(
        parse_with(&[(&dev("num_cu_per_sh"), json!(12))]),
        ConfigErrorKind::Range,
        &dev("num_cu_per_sh"),
        "104 CUs",
    );
}

#[test]
fn scratch_slots_must_divide_by_shader_arrays() {
    // 104 CUs x 1 slot = 104 is not divisible by 16 arrays (8 SEs x 2).
    assert_error(
        parse_with(&[(&dev("max_slots_scratch_cu"), json!(1)), (&dev("num_shader_arrays_per_engine"), json!(2))]),
        ConfigErrorKind::Range,
        &dev("max_slots_scratch_cu"),
        "ROCR",
    );
}

#[test]
fn huge_shapes_are_range_errors_not_overflows() {
    assert_error(
        parse_with(&[(&dev("num_shader_engines"), json!(u32::MAX))]),
        ConfigErrorKind::Range,
        &dev("num_shader_engines"),
        "1..=32",
    );
    assert_error(
        parse_with(&[(&dev("lds_size_kb"), json!(u32::MAX))]),
        ConfigErrorKind::Range,
        &dev("lds_size_kb"),
        "1..=1024",
    );
    assert_error(
        parse_with(&[(&dev("max_waves_per_simd"), json!(0))]),
        ConfigErrorKind::Range,
        &dev("max_waves_per_simd"),
        "got 0",
    );
}

#[test]
fn marketing_name_length() {
    let long = "x".repeat(128);
    assert_error(
        parse_with(&[(&dev("marketing_name"), json!(long))]),
        ConfigErrorKind::Range,
        &dev("marketing_name"),
        "128 bytes",
    );
}

#[test]
fn unknown_arch() {
    assert_error(
        parse_with(&[("vm.arch", json!("cdna9"))]),
        ConfigErrorKind::UnknownArch,
        "vm.arch",
        "unknown arch \"cdna9\"",
    );
}

#[test]
fn known_but_unsupported_arch() {
    assert_error(
        parse_with(&[("vm.arch", json!("rdna3"))]),
        ConfigErrorKind::UnsupportedArch,
        "vm.arch",
        "\"rdna3\" cannot be simulated (runnable: cdna2, cdna3, cdna4)",
    );
    assert_error(
        parse_with(&[("vm.arch", Value::Null), (&dev("gfx_target_version"), json!(90008))]),
        ConfigErrorKind::UnsupportedArch,
        &dev("gfx_target_version"),
        "gfx908 is cdna1",
    );
}

#[test]
fn target_must_match_arch() {
    assert_error(
        parse_with(&[("vm.arch", json!("cdna3"))]),
        ConfigErrorKind::Target,
        &dev("gfx_target_version"),
        "90010 is gfx90a (cdna2), but vm.arch is cdna3",
    );
    assert_error(
        parse_with(&[(&dev("gfx_target_version"), json!(90008))]),
        ConfigErrorKind::Target,
        &dev("gfx_target_version"),
        "gfx908 (cdna1), but vm.arch is cdna2",
    );
}

#[test]
fn unknown_gfx_version() {
    assert_error(
        parse_with(&[(&dev("gfx_target_version"), json!(90011))]),
        ConfigErrorKind::Target,
        &dev("gfx_target_version"),
        "unknown gfx_target_version 90011",
    );
}

#[test]
fn cdna3_and_cdna4_targets() {
    for (arch, version, name) in [("cdna3", 90400, "gfx940"), ("cdna3", 90402, "gfx942"), ("cdna4", 90500, "gfx950")] {
        let c = parse_with(&[("vm.arch", json!(arch)), (&dev("gfx_target_version"), json!(version))]).unwrap();
        assert_eq!(c.device().isa_name(), name);
        assert_eq!(c.arch().name(), arch);
    }
}

// ---- loading ----------------------------------------------------------------------------

#[test]
fn builtins_load_by_name_and_stem() {
    for b in BUILTINS {
        let by_name = load(b.name).unwrap();
        assert_eq!(by_name.source(), &ConfigSource::Builtin(b.name));
        assert_eq!(by_name.source().spec(), OsString::from(b.name));
        let by_stem = load(b.stem()).unwrap();
        assert_eq!(by_stem.source(), &ConfigSource::Builtin(b.name));
    }
}

#[test]
fn default_is_mi210() {
    let c = default_config();
    assert_eq!(c.source(), &ConfigSource::Builtin("mi210"));
    let d = c.device();
    assert_eq!(d.cu_count(), 104);
    assert_eq!(d.marketing_name, "AMD Instinct MI210");
    assert_eq!(d.device_id, 0x740f);
    assert_eq!(d.pci_revision_id, 2);
}

#[test]
fn unknown_bare_name_mentions_builtins() {
    let e = load("mi9000").unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Read);
    assert_eq!(e.file, "mi9000");
    assert_eq!(e.key, WHOLE_FILE);
    assert!(
        e.reason
            .contains("built-ins: mi210, mi210-2gpu, mi210-4gpu, mi210-8gpu, mi300x, mi300x-4gpu, mi300x-8gpu, mi350x, mi350x-2gpu"),
        "{e}"
    );
}

#[test]
fn missing_file() {
    let e = load("/nonexistent/dir/x.json").unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Read);
    assert_eq!(e.to_string(), "/nonexistent/dir/x.json: (file): cannot read: No such file or directory (os error 2)");
}

#[test]
fn empty_spec() {
    let e = load("").unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Read);
    assert!(e.reason.contains("empty"));
}

#[test]
fn file_source_is_absolute_and_errors_use_the_given_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, config_with(&[])).unwrap();
    let c = load(path.to_str().unwrap()).unwrap();
    assert_eq!(c.source(), &ConfigSource::File(path.clone()));

    std::fs::write(&path, config_with(&[(&dev("simd_count"), json!(0))])).unwrap();
    let e = load(path.to_str().unwrap()).unwrap_err();
    assert_eq!(e.file, path.display().to_string());
}

#[test]
fn a_directory_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = load(dir.path().to_str().unwrap()).unwrap_err();
    assert_eq!(e.kind, ConfigErrorKind::Read);
}

#[test]
fn clean_path_drops_option_markers() {
    assert_eq!(clean_path("topology.root.?.children.0.config"), "topology.root.children.0.config");
    assert_eq!(clean_path("max_ticks"), "max_ticks");
}
