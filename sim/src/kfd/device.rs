//! The facts about one simulated GPU that the KFD and DRM ioctls report,
//! derived once from the config.

use crate::config::{Config, GpuDevice};

/// One simulated GPU as the driver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSpec {
    /// Index among the GPUs (0-based).
    pub index: u32,
    /// KFD topology node id (the CPU is node 0, so GPU i is node i + 1).
    pub node_id: u32,
    pub gpu_id: u32,
    pub render_minor: u32,
    pub gfx_target_version: u32,
    pub vendor_id: u32,
    pub device_id: u32,
    pub family_id: u32,
    pub revision_id: u32,
    pub pci_revision_id: u32,
    pub marketing_name: String,
    pub vram_size: u64,
    pub vram_bit_width: u32,
    pub mem_clk_max_mhz: u32,
    pub engine_clk_max_mhz: u32,
    pub num_shader_engines: u32,
    pub num_shader_arrays_per_engine: u32,
    pub cu_per_sh: u32,
    pub cu_count: u32,
    pub simd_per_cu: u32,
    pub wave_front_size: u32,
    pub lds_size: u32,
    pub max_waves_per_simd: u32,
}

/// GB_ADDR_CONFIG of gfx90a (amdgpu's `ALDEBARAN_GB_ADDR_CONFIG_GOLDEN`); the
/// same golden value serves gfx94x/gfx950 here, as nothing in ROCm 5.2
/// decodes it beyond addrlib's sanity checks.
pub const GB_ADDR_CONFIG_GFX9: u32 = 0x2a11_4042;

impl GpuSpec {
    /// The GPUs of a loaded config, in order.
    pub fn all_from_config(config: &Config) -> Vec<GpuSpec> {
        config.gpus().iter().enumerate().map(|(i, g)| GpuSpec::from_device(i as u32, g)).collect()
    }

    fn from_device(index: u32, d: &GpuDevice) -> GpuSpec {
        GpuSpec {
            index,
            node_id: index + 1,
            gpu_id: d.gpu_id,
            render_minor: d.drm_render_minor,
            gfx_target_version: d.gfx_target_version,
            vendor_id: d.vendor_id,
            device_id: d.device_id,
            family_id: d.family_id,
            revision_id: d.revision_id,
            pci_revision_id: d.pci_revision_id,
            marketing_name: d.marketing_name.clone(),
            vram_size: d.local_mem_size,
            vram_bit_width: d.mem_width,
            mem_clk_max_mhz: d.mem_clk_max,
            engine_clk_max_mhz: d.max_engine_clk_fcompute,
            num_shader_engines: d.num_shader_engines,
            num_shader_arrays_per_engine: d.num_shader_arrays_per_engine,
            cu_per_sh: d.num_cu_per_sh,
            cu_count: d.cu_count(),
            simd_per_cu: d.simd_per_cu,
            wave_front_size: d.wave_front_size,
            lds_size: d.lds_size_kb * 1024,
            max_waves_per_simd: d.max_waves_per_simd,
        }
    }

    /// GB_ADDR_CONFIG as GET_TILE_CONFIG and READ_MMR_REG report it.
    pub fn gb_addr_config(&self) -> u32 {
        GB_ADDR_CONFIG_GFX9
    }
}
