//! The reference emulator's four published configs load unchanged, and our built-ins (copies
//! of them) agree.

use std::path::PathBuf;

use sim::config::{self, Arch, Config, ConfigSource};

fn anchor(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/anchor-configs").join(name)
}

fn load_anchor(name: &str) -> Config {
    let path = anchor(name);
    config::load(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

fn ignored(c: &Config, key: &str) -> bool {
    c.ignored_keys().iter().any(|k| k == key)
}

#[test]
fn mi210() {
    let c = load_anchor("gfx90a_mi210_kmd.json");
    assert_eq!(c.source(), &ConfigSource::File(anchor("gfx90a_mi210_kmd.json")));
    assert_eq!(c.arch(), Arch::Cdna2);
    assert_eq!(c.num_gpus(), 1);
    let d = c.device();
    assert_eq!(d.gpu_id, 50149);
    assert_eq!(d.gfx_target_version, 90010);
    assert_eq!(d.isa_name(), "gfx90a");
    assert_eq!(d.isa_string(), "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    assert_eq!(d.device_id, 0x740f);
    assert_eq!(d.pci_revision_id, 2);
    assert_eq!(d.revision_id, 1);
    assert_eq!(d.marketing_name, "AMD Instinct MI210");
    assert_eq!(d.simd_count, 416);
    assert_eq!(d.cu_count(), 104);
    assert_eq!(d.array_count(), 8);
    assert_eq!(d.num_cu_per_sh, 14);
    assert_eq!(d.max_waves_per_simd, 8);
    assert_eq!(d.local_mem_size, 68_702_699_520);
    assert_eq!(d.l1_size_kb, 16);
    assert_eq!(d.l2_size_kb, 8192);
    assert_eq!(d.num_sdma_xgmi_engines, 3);
    assert_eq!(d.num_sdma_queues_per_engine, 8);
    assert_eq!(d.num_cp_queues, 24);
    assert_eq!(d.num_xcc, 1, "from topology.root xcd[0:1]");
    assert_eq!(d.drm_render_minor, 128);
    assert_eq!(d.location_id, 0x300);
    for key in ["thread_allocations", "max_ticks", "exec_mode", "topology.links"] {
        assert!(ignored(&c, key), "{key} not in {:?}", c.ignored_keys());
    }
}

#[test]
fn mi300x() {
    let c = load_anchor("gfx942_cdna3_kmd.json");
    assert_eq!(c.arch(), Arch::Cdna3);
    let d = c.device();
    assert_eq!(d.gpu_id, 50148);
    assert_eq!(d.gfx_target_version, 90402);
    assert_eq!(d.isa_name(), "gfx942");
    assert_eq!(d.device_id, 29857);
    assert_eq!(d.marketing_name, "AMD Instinct MI300X");
    assert_eq!(d.cu_count(), 304);
    assert_eq!(d.num_xcc, 8, "from topology.root xcd[0:8]");
    assert_eq!(d.array_count(), 32);
    assert_eq!(d.local_mem_size, 192 << 30);
    assert_eq!(d.num_cp_queues, 128);
    assert!(ignored(&c, "max_ticks"));
}

#[test]
fn mi350x() {
    let c = load_anchor("gfx950_cdna4_kmd.json");
    assert_eq!(c.arch(), Arch::Cdna4);
    let d = c.device();
    assert_eq!(d.gpu_id, 38144);
    assert_eq!(d.isa_name(), "gfx950");
    assert_eq!(d.unique_id, 5_929_628_898_254_127_105);
    assert_eq!(d.lds_size_kb, 160);
    assert_eq!(d.lds_bytes(), 160 * 1024);
    assert_eq!(d.capability, 2_889_327_232, "the config's capability is used as is");
    assert_eq!(d.capability2, 1);
    assert_eq!(d.debug_prop, 1494);
    assert_eq!(d.cu_count(), 256);
    assert_eq!(d.num_sdma_queues_per_engine, 8, "absent: our default, not the reference's 2");
    assert_eq!(d.isa_string(), "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-");
    assert!(ignored(&c, "num_threads"));
}

#[test]
fn mi350x_two_gpus() {
    let c = load_anchor("gfx950_cdna4_kmd_2gpu.json");
    assert_eq!(c.num_gpus(), 2);
    let g = c.gpus();
    assert_eq!((g[0].gpu_id, g[1].gpu_id), (38144, 38145));
    assert_eq!((g[0].drm_render_minor, g[1].drm_render_minor), (128, 129));
    assert_eq!((g[0].location_id, g[1].location_id), (0x300, 0x400));
    assert_eq!((g[0].hive_id, g[1].hive_id), (1, 1));
    assert_ne!(g[0].unique_id, g[1].unique_id);
    assert_eq!((g[0].sysfs_node(), g[1].sysfs_node()), (1, 2));
}

#[test]
fn builtins_name_the_right_files() {
    let shape = |name: &str| {
        let c = config::load(name).unwrap();
        (c.device().isa_name(), c.num_gpus(), c.device().marketing_name.clone())
    };
    assert_eq!(shape("mi210"), ("gfx90a", 1, "AMD Instinct MI210".into()));
    assert_eq!(shape("mi300x"), ("gfx942", 1, "AMD Instinct MI300X".into()));
    assert_eq!(shape("mi350x"), ("gfx950", 1, "AMD Instinct MI350X".into()));
    assert_eq!(shape("mi350x-2gpu"), ("gfx950", 2, "AMD Instinct MI350X".into()));
}

#[test]
fn project_configs_load_from_disk() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs");
    for b in config::BUILTINS {
        let path = dir.join(b.file);
        let c = config::load(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.gpus(), config::load(b.name).unwrap().gpus());
    }
}
