//! Simulation config. PROVISIONAL minimal loader used by the KFD work until the
//! full loader (validation, built-in configs, error paths) lands.

use serde::Deserialize;

/// One GPU's device description (the `vm.gpu.device` object).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct GpuDevice {
    pub gpu_id: u32,
    pub gfx_target_version: u32,
    pub vendor_id: u32,
    pub device_id: u32,
    pub family_id: u32,
    pub revision_id: u32,
    pub pci_revision_id: u32,
    pub marketing_name: String,
    pub drm_render_minor: u32,
    pub simd_count: u32,
    pub max_waves_per_simd: u32,
    pub num_shader_engines: u32,
    pub num_shader_arrays_per_engine: u32,
    pub num_cu_per_sh: u32,
    pub simd_per_cu: u32,
    pub wave_front_size: u32,
    pub local_mem_size: u64,
    pub lds_size_kb: u32,
    pub mem_width: u32,
    pub mem_clk_max: u32,
    pub max_engine_clk_fcompute: u32,
    pub location_id: u32,
}

impl Default for GpuDevice {
    fn default() -> Self {
        GpuDevice {
            gpu_id: 0xc0de,
            gfx_target_version: 90010,
            vendor_id: 0x1002,
            device_id: 0x740f,
            family_id: 141,
            revision_id: 1,
            pci_revision_id: 2,
            marketing_name: "AMD Instinct MI210".into(),
            drm_render_minor: 128,
            simd_count: 416,
            max_waves_per_simd: 8,
            num_shader_engines: 8,
            num_shader_arrays_per_engine: 1,
            num_cu_per_sh: 14,
            simd_per_cu: 4,
            wave_front_size: 64,
            local_mem_size: 64 << 30,
            lds_size_kb: 64,
            mem_width: 4096,
            mem_clk_max: 1600,
            max_engine_clk_fcompute: 1700,
            location_id: 0x300,
        }
    }
}

impl GpuDevice {
    pub fn cu_count(&self) -> u32 {
        self.simd_count / self.simd_per_cu.max(1)
    }
}

/// A loaded config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    gpus: Vec<GpuDevice>,
}

impl Config {
    /// The expanded per-GPU list.
    pub fn gpus(&self) -> &[GpuDevice] {
        &self.gpus
    }
}

/// The built-in default (MI210).
pub fn default_config() -> Config {
    Config { gpus: vec![GpuDevice::default()] }
}
