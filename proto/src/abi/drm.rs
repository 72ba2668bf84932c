//! The DRM and amdgpu ioctls libdrm issues on the render node while libhsakmt
//! looks up the marketing name (`amdgpu_device_initialize`).

use super::{ioc, IOC_READ, IOC_WRITE};
use bytemuck::{Pod, Zeroable};
use core::mem::size_of;

/// The ioctl type byte of DRM devices.
pub const DRM_IOCTL_BASE: u8 = b'd';
/// Driver-specific DRM ioctls start here.
pub const DRM_COMMAND_BASE: u8 = 0x40;
/// The character-device major of DRM nodes.
pub const DRM_MAJOR: u32 = 226;
/// Render node minors (`/dev/dri/renderD128` … `renderD255`), as libdrm and the kernel use them.
pub const RENDER_MINORS: core::ops::RangeInclusive<u32> = 128..=255;

/// `struct drm_version`: three (length, pointer) pairs the kernel fills.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DrmVersion {
    pub version_major: i32,
    pub version_minor: i32,
    pub version_patchlevel: i32,
    pub pad: u32,
    pub name_len: u64,
    pub name: u64,
    pub date_len: u64,
    pub date: u64,
    pub desc_len: u64,
    pub desc: u64,
}
const _: () = assert!(size_of::<DrmVersion>() == 64);

/// `struct drm_amdgpu_info`: a query id, an output buffer, and a 16-byte union
/// of per-query inputs (we keep it as raw words).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuInfo {
    pub return_pointer: u64,
    pub return_size: u32,
    pub query: u32,
    pub input: [u32; 4],
}
const _: () = assert!(size_of::<AmdgpuInfo>() == 32);

impl AmdgpuInfo {
    /// READ_MMR_REG's inputs: (dword_offset, count, instance, flags).
    pub fn read_mmr_reg(&self) -> (u32, u32, u32, u32) {
        (self.input[0], self.input[1], self.input[2], self.input[3])
    }
}

/// AMDGPU_INFO query ids.
pub mod info_query {
    pub const ACCEL_WORKING: u32 = 0x00;
    pub const HW_IP_INFO: u32 = 0x02;
    pub const HW_IP_COUNT: u32 = 0x03;
    pub const TIMESTAMP: u32 = 0x05;
    pub const FW_VERSION: u32 = 0x0e;
    pub const VRAM_USAGE: u32 = 0x10;
    pub const GTT_USAGE: u32 = 0x11;
    pub const GDS_CONFIG: u32 = 0x13;
    pub const VRAM_GTT: u32 = 0x14;
    pub const READ_MMR_REG: u32 = 0x15;
    pub const DEV_INFO: u32 = 0x16;
    pub const VIS_VRAM_USAGE: u32 = 0x17;
    pub const MEMORY: u32 = 0x19;
}

/// The register libdrm reads through READ_MMR_REG: GB_ADDR_CONFIG (dword offset).
pub const MMR_GB_ADDR_CONFIG: u32 = 0x263e;

/// `struct drm_amdgpu_info_device` up to libdrm 2.4.134 (448 bytes). Older
/// libdrms ask for a prefix of it (368 bytes in 2.4.114, 440 in 2.4.124) and
/// get exactly that, as from the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuInfoDevice {
    pub device_id: u32,
    pub chip_rev: u32,
    pub external_rev: u32,
    pub pci_rev: u32,
    pub family: u32,
    pub num_shader_engines: u32,
    pub num_shader_arrays_per_engine: u32,
    /// In kHz.
    pub gpu_counter_freq: u32,
    /// In kHz.
    pub max_engine_clock: u64,
    /// In kHz.
    pub max_memory_clock: u64,
    pub cu_active_number: u32,
    pub cu_ao_mask: u32,
    pub cu_bitmap: [[u32; 4]; 4],
    pub enabled_rb_pipes_mask: u32,
    pub num_rb_pipes: u32,
    pub num_hw_gfx_contexts: u32,
    pub pad0: u32,
    pub ids_flags: u64,
    pub virtual_address_offset: u64,
    pub virtual_address_max: u64,
    pub virtual_address_alignment: u32,
    pub pte_fragment_size: u32,
    pub gart_page_size: u32,
    pub ce_ram_size: u32,
    pub vram_type: u32,
    pub vram_bit_width: u32,
    pub vce_harvest_config: u32,
    pub gc_double_offchip_lds_buf: u32,
    pub prim_buf_gpu_addr: u64,
    pub pos_buf_gpu_addr: u64,
    pub cntl_sb_buf_gpu_addr: u64,
    pub param_buf_gpu_addr: u64,
    pub prim_buf_size: u32,
    pub pos_buf_size: u32,
    pub cntl_sb_buf_size: u32,
    pub param_buf_size: u32,
    pub wave_front_size: u32,
    pub num_shader_visible_vgprs: u32,
    pub num_cu_per_sh: u32,
    pub num_tcc_blocks: u32,
    pub gs_vgt_table_depth: u32,
    pub gs_prim_buffer_depth: u32,
    pub max_gs_waves_per_vgt: u32,
    pub pad1: u32,
    pub cu_ao_bitmap: [[u32; 4]; 4],
    pub high_va_offset: u64,
    pub high_va_max: u64,
    pub pa_sc_tile_steering_override: u32,
    pub pad2: u32,
    pub tcc_disabled_mask: u64,
    // libdrm 2.4.124 (440 bytes).
    /// In kHz.
    pub min_engine_clock: u64,
    /// In kHz.
    pub min_memory_clock: u64,
    pub tcp_cache_size: u32,
    pub num_sqc_per_wgp: u32,
    pub sqc_data_cache_size: u32,
    pub sqc_inst_cache_size: u32,
    pub gl1c_cache_size: u32,
    pub gl2c_cache_size: u32,
    pub mall_size: u64,
    pub enabled_rb_pipes_mask_hi: u32,
    pub shadow_size: u32,
    pub shadow_alignment: u32,
    pub csa_size: u32,
    pub csa_alignment: u32,
    // libdrm 2.4.134 (448 bytes).
    pub userq_ip_mask: u32,
    pub pad3: u32,
    /// The struct's alignment padding (it holds u64s), explicit for Pod.
    pub pad4: u32,
}
const _: () = assert!(size_of::<AmdgpuInfoDevice>() == 448);

/// `struct drm_amdgpu_info_hw_ip` (AMDGPU_INFO_HW_IP_INFO), 32 bytes since
/// `ip_discovery_version` was added; newer kernels append fields a caller of
/// this size does not receive.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuInfoHwIp {
    pub hw_ip_version_major: u32,
    pub hw_ip_version_minor: u32,
    pub capabilities_flags: u64,
    pub ib_start_alignment: u32,
    pub ib_size_alignment: u32,
    /// Bit i: ring i of the block is ready.
    pub available_rings: u32,
    /// `major << 16 | minor << 8 | revision` of the discovered IP.
    pub ip_discovery_version: u32,
}
const _: () = assert!(size_of::<AmdgpuInfoHwIp>() == 32);

/// `AMDGPU_HW_IP_*`: the hardware block types HW_IP_COUNT/HW_IP_INFO name.
pub mod hw_ip {
    pub const GFX: u32 = 0;
    pub const COMPUTE: u32 = 1;
    pub const DMA: u32 = 2;
    pub const UVD: u32 = 3;
    pub const VCE: u32 = 4;
    pub const UVD_ENC: u32 = 5;
    pub const VCN_DEC: u32 = 6;
    pub const VCN_ENC: u32 = 7;
    pub const VCN_JPEG: u32 = 8;
    pub const VPE: u32 = 9;
    /// One past the last type the kernel knows.
    pub const NUM: u32 = 10;
}

/// `struct drm_amdgpu_heap_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuHeapInfo {
    pub total_heap_size: u64,
    pub usable_heap_size: u64,
    pub heap_usage: u64,
    pub max_allocation: u64,
}

/// `struct drm_amdgpu_memory_info` (AMDGPU_INFO_MEMORY).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuMemoryInfo {
    pub vram: AmdgpuHeapInfo,
    pub cpu_accessible_vram: AmdgpuHeapInfo,
    pub gtt: AmdgpuHeapInfo,
}
const _: () = assert!(size_of::<AmdgpuMemoryInfo>() == 96);

/// `struct drm_amdgpu_info_vram_gtt` (AMDGPU_INFO_VRAM_GTT).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AmdgpuInfoVramGtt {
    pub vram_size: u64,
    pub vram_cpu_accessible_size: u64,
    pub gtt_size: u64,
}

/// The ioctl numbers.
pub mod cmd {
    use super::*;

    /// `DRM_IOCTL_VERSION`.
    pub const VERSION: u32 = ioc(IOC_READ | IOC_WRITE, DRM_IOCTL_BASE, 0x00, size_of::<DrmVersion>());
    /// `DRM_IOCTL_GET_CLIENT` (libdrm's fallback for fds it does not recognise).
    pub const GET_CLIENT: u32 = ioc(IOC_READ | IOC_WRITE, DRM_IOCTL_BASE, 0x05, 40);
    /// `DRM_IOCTL_AMDGPU_INFO` (write-only: the kernel writes through `return_pointer`).
    pub const AMDGPU_INFO: u32 = ioc(IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x05, size_of::<AmdgpuInfo>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_libdrm() {
        assert_eq!(cmd::VERSION, 0xc0406400);
        assert_eq!(cmd::GET_CLIENT, 0xc0286405);
        assert_eq!(cmd::AMDGPU_INFO, 0x40206445);
    }
}
