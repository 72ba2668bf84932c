//! PROVISIONAL: a minimal KFD topology for one GPU, used only until
//! `sim::topology` (config-derived, multi-GPU, host-derived CPU node) lands.

use crate::tree::Entry;
use sim::kfd::GpuSpec;

pub fn entries(gpus: &[GpuSpec]) -> Vec<Entry> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut e = vec![
        Entry::File("kfd/topology/generation_id".into(), "1\n".into()),
        Entry::File("kfd/topology/system_properties".into(), "platform_oem 0\nplatform_id 0\nplatform_rev 0\n".into()),
    ];
    let cpu = format!(
        "cpu_cores_count {cores}\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count {}\np2p_links_count 0\n\
         cpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\n\
         wave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\nsimd_per_cu 0\n\
         max_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\n\
         drm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\n\
         num_cp_queues 0\nmax_engine_clk_ccompute 3000\n",
        gpus.len()
    );
    e.push(Entry::File("kfd/topology/nodes/0/gpu_id".into(), "0\n".into()));
    e.push(Entry::File("kfd/topology/nodes/0/name".into(), "\n".into()));
    e.push(Entry::File("kfd/topology/nodes/0/properties".into(), cpu));
    e.push(Entry::File(
        "kfd/topology/nodes/0/mem_banks/0/properties".into(),
        format!("heap_type 0\nsize_in_bytes {}\nflags 0\nwidth 64\nmem_clk_max 3200\n", 16u64 << 30),
    ));
    for (i, g) in gpus.iter().enumerate() {
        let n = i + 1;
        e.push(Entry::File(
            format!("kfd/topology/nodes/0/io_links/{i}/properties"),
            format!("type 2\nversion_major 0\nversion_minor 0\nnode_from 0\nnode_to {n}\nweight 20\nmin_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\nrecommended_transfer_size 0\nflags 1\n"),
        ));
        let gpu = format!(
            "cpu_cores_count 0\nsimd_count {}\nmem_banks_count 1\ncaches_count 2\nio_links_count 1\np2p_links_count 0\n\
             cpu_core_id_base 0\nsimd_id_base 2147487744\nmax_waves_per_simd {}\nlds_size_in_kb {}\ngds_size_in_kb 0\n\
             num_gws 64\nwave_front_size {}\narray_count {}\nsimd_arrays_per_engine {}\ncu_per_simd_array {}\n\
             simd_per_cu {}\nmax_slots_scratch_cu 32\ngfx_target_version {}\nvendor_id {}\ndevice_id {}\n\
             location_id {}\ndomain 0\ndrm_render_minor {}\nhive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 3\n\
             num_sdma_queues_per_engine 8\nnum_cp_queues 24\nmax_engine_clk_fcompute {}\nlocal_mem_size {}\n\
             fw_version 78\ncapability 201827968\ndebug_prop 0\nsdma_fw_version 0\nunique_id 0\nmax_engine_clk_ccompute 0\n",
            g.cu_count * g.simd_per_cu,
            g.max_waves_per_simd,
            g.lds_size / 1024,
            g.wave_front_size,
            g.num_shader_engines,
            g.num_shader_arrays_per_engine,
            g.cu_count.div_ceil(g.num_shader_engines * g.num_shader_arrays_per_engine),
            g.simd_per_cu,
            g.gfx_target_version,
            g.vendor_id,
            g.device_id,
            0x300 + (i << 8),
            g.render_minor,
            g.engine_clk_max_mhz,
            g.vram_size,
        );
        let base = format!("kfd/topology/nodes/{n}");
        e.push(Entry::File(format!("{base}/gpu_id"), format!("{}\n", g.gpu_id)));
        e.push(Entry::File(format!("{base}/name"), "aldebaran\n".into()));
        e.push(Entry::File(format!("{base}/properties"), gpu));
        e.push(Entry::File(
            format!("{base}/mem_banks/0/properties"),
            format!(
                "heap_type 1\nsize_in_bytes {}\nflags 0\nwidth {}\nmem_clk_max {}\n",
                g.vram_size, g.vram_bit_width, g.mem_clk_max_mhz
            ),
        ));
        e.push(Entry::File(
            format!("{base}/caches/0/properties"),
            "processor_id_low 2147487744\nlevel 1\nsize 16\ncache_line_size 64\ncache_lines_per_tag 1\nassociation 4\nlatency 1\ntype 9\nsibling_map 1\n".into(),
        ));
        e.push(Entry::File(
            format!("{base}/caches/1/properties"),
            "processor_id_low 2147487744\nlevel 2\nsize 8192\ncache_line_size 128\ncache_lines_per_tag 1\nassociation 16\nlatency 1\ntype 9\nsibling_map 1\n".into(),
        ));
        e.push(Entry::File(
            format!("{base}/io_links/0/properties"),
            format!("type 2\nversion_major 0\nversion_minor 0\nnode_from {n}\nnode_to 0\nweight 20\nmin_latency 0\nmax_latency 0\nmin_bandwidth 0\nmax_bandwidth 0\nrecommended_transfer_size 0\nflags 1\n"),
        ));
    }
    e
}
