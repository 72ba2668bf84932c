//! The simulated DRM render node (`/dev/dri/renderD<minor>`).
//!
//! ROCm uses it through libdrm's `amdgpu_device_initialize` (marketing name,
//! 5.2 contract §6) and, from 6.x on, `amdgpu_query_gpu_info` (timestamp
//! frequency, family) and rocminfo's IP counts: DRM_IOCTL_VERSION and
//! AMDGPU_INFO queries. Memory goes through the KFD, so no GEM ioctls exist.

use crate::config::Device;
use crate::driver::kfd::device::gb_addr_config;
use crate::driver::kfd::usage::DeviceUsage;
use proto::abi::drm::{
    self, info_query, AmdgpuInfo, AmdgpuInfoDevice, AmdgpuInfoHwIp, AmdgpuInfoVramGtt, AmdgpuMemoryInfo, DrmVersion,
};
use proto::ioctl::{split_payload, IoctlError, IoctlView, EINVAL};

/// The DRM interface version we report; libdrm_amdgpu requires major 3.
pub const DRM_VERSION: (i32, i32, i32) = (3, 49, 0);
const DRIVER_NAME: &[u8] = b"amdgpu";
const DRIVER_DATE: &[u8] = b"20150101";
const DRIVER_DESC: &[u8] = b"AMD GPU";

/// `AMDGPU_FAMILY_*`-style constants the DEV_INFO reply needs.
const VRAM_TYPE_HBM: u32 = 6;
const NUM_HW_GFX_CONTEXTS: u32 = 8;

/// Why a DRM request failed.
#[derive(Debug, thiserror::Error)]
pub enum DrmError {
    #[error(transparent)]
    Codec(#[from] IoctlError),
    #[error("{0} is not supported by the simulated render node")]
    NotSupported(String),
    #[error("AMDGPU_INFO query {0:#x} is not supported")]
    UnsupportedQuery(u32),
    #[error("HW_IP query of block type {0}, which this GPU does not have")]
    UnknownBlock(u32),
    #[error("READ_MMR_REG of register {offset:#x} (count {count}) is not allowed")]
    Register { offset: u32, count: u32 },
}

impl DrmError {
    pub fn errno(&self) -> i32 {
        match self {
            DrmError::Codec(e) => e.errno(),
            _ => EINVAL,
        }
    }
}

/// What a render node knows: its GPU, and the memory in use on it by every process.
#[derive(Clone, Copy, Debug)]
pub struct Node<'a> {
    pub gpu: &'a Device,
    pub usage: &'a DeviceUsage,
    /// The host memory the GPU can reach.
    pub gtt_size: u64,
}

/// Executes one DRM ioctl on `node`, on a payload built by `proto::ioctl`.
pub fn ioctl(node: Node<'_>, cmd: u32, payload: &mut [u8]) -> Result<(), DrmError> {
    let mut view = split_payload(cmd, payload)?;
    match cmd {
        drm::cmd::VERSION => {
            version(&mut view);
            Ok(())
        }
        drm::cmd::AMDGPU_INFO => info(node, &mut view),
        _ => Err(DrmError::NotSupported(view.spec.name.to_string())),
    }
}

fn version(view: &mut IoctlView<'_>) {
    let mut v: DrmVersion = view.get();
    v.version_major = DRM_VERSION.0;
    v.version_minor = DRM_VERSION.1;
    v.version_patchlevel = DRM_VERSION.2;
    // Like the kernel's drm_copy_field: copy what fits, report the full length.
    for (i, (text, len)) in
        [(DRIVER_NAME, &mut v.name_len), (DRIVER_DATE, &mut v.date_len), (DRIVER_DESC, &mut v.desc_len)]
            .into_iter()
            .enumerate()
    {
        let n = view.arrays[i].len().min(text.len());
        view.arrays[i][..n].copy_from_slice(&text[..n]);
        *len = text.len() as u64;
    }
    view.set(&v);
}

fn info(node: Node<'_>, view: &mut IoctlView<'_>) -> Result<(), DrmError> {
    let Node { gpu, usage, gtt_size } = node;
    let (vram_used, gtt_used) = (usage.vram_used(gpu.index as usize), usage.gtt_used(gpu.index as usize));
    let q: AmdgpuInfo = view.get();
    let out = &mut view.arrays[0];
    let mut reply = |bytes: &[u8]| {
        let n = out.len().min(bytes.len());
        out[..n].copy_from_slice(&bytes[..n]);
    };
    match q.query {
        info_query::ACCEL_WORKING => reply(&1u32.to_le_bytes()),
        info_query::HW_IP_INFO => {
            let (ty, instance) = (q.input[0], q.input[1]);
            let info = hw_ip_info(gpu, ty).filter(|_| instance == 0).ok_or(DrmError::UnknownBlock(ty))?;
            reply(bytemuck::bytes_of(&info))
        }
        info_query::HW_IP_COUNT => {
            let ty = q.input[0];
            let count = hw_ip_count(ty).ok_or(DrmError::UnknownBlock(ty))?;
            reply(&count.to_le_bytes())
        }
        info_query::DEV_INFO => reply(bytemuck::bytes_of(&device_info(gpu))),
        info_query::READ_MMR_REG => {
            let (offset, count, _instance, _flags) = q.read_mmr_reg();
            if offset != drm::MMR_GB_ADDR_CONFIG || count != 1 {
                return Err(DrmError::Register { offset, count });
            }
            reply(&gb_addr_config(gpu).to_le_bytes());
        }
        // Device-wide, like amdgpu: every process's buffers on this GPU (all VRAM is
        // CPU-visible here).
        info_query::VRAM_USAGE | info_query::VIS_VRAM_USAGE => reply(&vram_used.to_le_bytes()),
        info_query::GTT_USAGE => reply(&gtt_used.to_le_bytes()),
        info_query::VRAM_GTT => reply(bytemuck::bytes_of(&AmdgpuInfoVramGtt {
            vram_size: gpu.local_mem_size,
            vram_cpu_accessible_size: gpu.local_mem_size,
            gtt_size,
        })),
        info_query::MEMORY => {
            let heap = |size: u64, used: u64| drm::AmdgpuHeapInfo {
                total_heap_size: size,
                usable_heap_size: size,
                heap_usage: used,
                max_allocation: size,
            };
            reply(bytemuck::bytes_of(&AmdgpuMemoryInfo {
                vram: heap(gpu.local_mem_size, vram_used),
                cpu_accessible_vram: heap(gpu.local_mem_size, vram_used),
                gtt: heap(gtt_size, gtt_used),
            }));
        }
        other => return Err(DrmError::UnsupportedQuery(other)),
    }
    Ok(())
}

/// DEV_INFO from the config. The CU bitmap spreads the active CUs over the
/// shader arrays the way amdgpu's gfx9 code lays them out (`[se % 4][sh + se / 4]`).
pub fn device_info(gpu: &Device) -> AmdgpuInfoDevice {
    let arrays = (gpu.num_shader_engines * gpu.num_shader_arrays_per_engine).max(1);
    let mut cu_bitmap = [[0u32; 4]; 4];
    let mut remaining = gpu.cu_count();
    for se in 0..gpu.num_shader_engines {
        for sh in 0..gpu.num_shader_arrays_per_engine {
            let array_index = se * gpu.num_shader_arrays_per_engine + sh;
            // Spread evenly; earlier arrays take the remainder.
            let here =
                (gpu.cu_count() / arrays + u32::from(array_index < gpu.cu_count() % arrays)).min(remaining).min(32);
            remaining -= here;
            let (row, col) = ((se % 4) as usize, (sh + se / 4) as usize);
            if row < 4 && col < 4 {
                cu_bitmap[row][col] = if here == 32 { u32::MAX } else { (1u32 << here) - 1 };
            }
        }
    }
    AmdgpuInfoDevice {
        device_id: gpu.device_id,
        chip_rev: gpu.revision_id,
        external_rev: gpu.revision_id,
        pci_rev: gpu.pci_revision_id,
        family: gpu.target.amdgpu_family(),
        num_shader_engines: gpu.num_shader_engines,
        num_shader_arrays_per_engine: gpu.num_shader_arrays_per_engine,
        gpu_counter_freq: (crate::clock::GPU_COUNTER_HZ / 1000) as u32,
        max_engine_clock: gpu.max_engine_clk_fcompute as u64 * 1000,
        max_memory_clock: gpu.mem_clk_max as u64 * 1000,
        cu_active_number: gpu.cu_count(),
        cu_ao_mask: 0,
        cu_bitmap,
        enabled_rb_pipes_mask: 0,
        num_rb_pipes: 0,
        num_hw_gfx_contexts: NUM_HW_GFX_CONTEXTS,
        pad0: 0,
        ids_flags: 0,
        virtual_address_offset: 0x20_0000,
        virtual_address_max: 0x8000_0000_0000,
        virtual_address_alignment: 0x1000,
        pte_fragment_size: 0x20_0000,
        gart_page_size: 0x1000,
        ce_ram_size: 0,
        vram_type: VRAM_TYPE_HBM,
        vram_bit_width: gpu.mem_width,
        vce_harvest_config: 0,
        gc_double_offchip_lds_buf: 1,
        prim_buf_gpu_addr: 0,
        pos_buf_gpu_addr: 0,
        cntl_sb_buf_gpu_addr: 0,
        param_buf_gpu_addr: 0,
        prim_buf_size: 0,
        pos_buf_size: 0,
        cntl_sb_buf_size: 0,
        param_buf_size: 0,
        wave_front_size: gpu.wave_front_size,
        num_shader_visible_vgprs: 512,
        num_cu_per_sh: gpu.num_cu_per_sh,
        num_tcc_blocks: 16,
        gs_vgt_table_depth: 32,
        gs_prim_buffer_depth: 1792,
        max_gs_waves_per_vgt: 32,
        pad1: 0,
        cu_ao_bitmap: [[0; 4]; 4],
        high_va_offset: 0xffff_8000_0000_0000,
        high_va_max: 0xffff_ffff_ffe0_0000,
        pa_sc_tile_steering_override: 0,
        pad2: 0,
        tcc_disabled_mask: 0,
        min_engine_clock: 500 * 1000,
        min_memory_clock: gpu.mem_clk_max as u64 * 1000,
        tcp_cache_size: gpu.l1_size_kb,
        num_sqc_per_wgp: 0,
        sqc_data_cache_size: 16,
        sqc_inst_cache_size: 64,
        gl1c_cache_size: 0,
        gl2c_cache_size: gpu.l2_size_kb,
        mall_size: 0,
        enabled_rb_pipes_mask_hi: 0,
        shadow_size: 0,
        shadow_alignment: 0,
        csa_size: 0,
        csa_alignment: 0,
        userq_ip_mask: 0,
        pad3: 0,
        pad4: 0,
    }
}

/// AMDGPU_INFO_HW_IP_INFO of instance 0 of a block type: its version (the
/// IP block amdgpu drives it with: gfx v9.0 for every GFX9 part, otherwise
/// the discovered version), alignments and ready rings. CDNA parts have no
/// graphics rings; compute has 8; each SDMA engine one ring.
fn hw_ip_info(gpu: &Device, ty: u32) -> Option<AmdgpuInfoHwIp> {
    use drm::hw_ip;
    let ips = gpu.target.ip_versions();
    let discovery = |(major, minor, rev): (u32, u32, u32)| major << 16 | minor << 8 | rev;
    let (version, rings, ib_align, discovered) = match ty {
        hw_ip::GFX => ((9, 0), 0, 32, ips.gc),
        hw_ip::COMPUTE => ((9, 0), 0xff, 32, ips.gc),
        hw_ip::DMA => {
            let engines = (gpu.num_sdma_engines + gpu.num_sdma_xgmi_engines).min(31);
            ((ips.sdma.0, ips.sdma.1), (1u32 << engines) - 1, 256, ips.sdma)
        }
        hw_ip::VCN_DEC | hw_ip::VCN_ENC | hw_ip::VCN_JPEG => ((ips.vcn.0, ips.vcn.1), 1, 64, ips.vcn),
        _ => return None,
    };
    Some(AmdgpuInfoHwIp {
        hw_ip_version_major: version.0,
        hw_ip_version_minor: version.1,
        capabilities_flags: 0,
        ib_start_alignment: ib_align,
        ib_size_alignment: if ty == hw_ip::DMA { 4 } else { ib_align },
        available_rings: rings,
        ip_discovery_version: discovery(discovered),
    })
}

/// AMDGPU_INFO_HW_IP_COUNT: how many instances of a block type the GPU has.
/// CDNA parts have the GFX block (which also runs compute), SDMA, and the
/// VCN video and JPEG blocks; no UVD, VCE or VPE.
fn hw_ip_count(ty: u32) -> Option<u32> {
    use drm::hw_ip;
    match ty {
        hw_ip::GFX | hw_ip::COMPUTE | hw_ip::DMA | hw_ip::VCN_DEC | hw_ip::VCN_ENC | hw_ip::VCN_JPEG => Some(1),
        hw_ip::UVD | hw_ip::VCE | hw_ip::UVD_ENC | hw_ip::VPE => Some(0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_config;

    fn mi210() -> Device {
        default_config().gpus()[0].clone()
    }

    /// `gpu`'s render node with nothing allocated.
    fn ioctl(gpu: &Device, cmd: u32, payload: &mut [u8]) -> Result<(), DrmError> {
        let usage = DeviceUsage::new([gpu.local_mem_size], 1 << 30);
        super::ioctl(Node { gpu, usage: &usage, gtt_size: 1 << 30 }, cmd, payload)
    }

    fn info_payload(query: u32, size: u32, input: [u32; 4]) -> Vec<u8> {
        let q = AmdgpuInfo { return_pointer: 0x1000, return_size: size, query, input };
        let mut p = bytemuck::bytes_of(&q).to_vec();
        p.resize(32 + size as usize, 0);
        p
    }

    #[test]
    fn version_reports_amdgpu_3_and_truncates_like_the_kernel() {
        let v = DrmVersion { name_len: 3, name: 1, date_len: 0, desc_len: 32, desc: 2, ..Default::default() };
        let mut p = bytemuck::bytes_of(&v).to_vec();
        p.resize(64 + 3 + 32, 0);
        ioctl(&mi210(), drm::cmd::VERSION, &mut p).unwrap();
        let out: DrmVersion = bytemuck::pod_read_unaligned(&p[..64]);
        assert_eq!(out.version_major, 3);
        assert_eq!((out.name_len, out.date_len, out.desc_len), (6, 8, 7));
        assert_eq!(&p[64..67], b"amd");
        assert_eq!(&p[67..74], b"AMD GPU");
    }

    #[test]
    fn dev_info_describes_the_configured_gpu() {
        let mut p = info_payload(info_query::DEV_INFO, 448, [0; 4]);
        ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap();
        let d: AmdgpuInfoDevice = bytemuck::pod_read_unaligned(&p[32..]);
        assert_eq!((d.device_id, d.pci_rev, d.family), (0x740f, 2, 141));
        assert_eq!(d.cu_active_number, 104);
        let bits: u32 = d.cu_bitmap.iter().flatten().map(|w| w.count_ones()).sum();
        assert_eq!(bits, 104, "every active CU appears once in the bitmap");
        assert_eq!(d.max_engine_clock, 1_700_000);
        assert_eq!(d.gpu_counter_freq, 100_000, "100 MHz, in kHz");
    }

    #[test]
    fn dev_info_is_as_long_as_each_libdrm_asks() {
        // libdrm 2.4.114 (bookworm), 2.4.124 (trixie), 2.4.134 (sid).
        let full = bytemuck::bytes_of(&device_info(&mi210())).to_vec();
        for size in [368u32, 440, 448] {
            let mut p = info_payload(info_query::DEV_INFO, size, [0; 4]);
            ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap();
            assert_eq!(&p[32..], &full[..size as usize]);
        }
    }

    #[test]
    fn gfx942_and_gfx950_report_the_family_amdgpu_gives_gc_9_4_and_9_5() {
        for name in ["mi300x", "mi350x"] {
            let gpu = crate::config::load(name).unwrap().gpus()[0].clone();
            assert_eq!(device_info(&gpu).family, 141, "{name}");
        }
    }

    #[test]
    fn usage_queries_report_the_whole_gpu() {
        let gpu = mi210();
        let usage = DeviceUsage::new([gpu.local_mem_size], 1 << 30);
        usage.reserve_vram(0, 3 << 20).unwrap();
        usage.reserve_gtt(0, 1 << 20).unwrap();
        let node = Node { gpu: &gpu, usage: &usage, gtt_size: 1 << 30 };
        let query = |q: u32, size: u32| {
            let mut p = info_payload(q, size, [0; 4]);
            super::ioctl(node, drm::cmd::AMDGPU_INFO, &mut p).unwrap();
            p[32..].to_vec()
        };
        assert_eq!(query(info_query::VRAM_USAGE, 8), (3u64 << 20).to_le_bytes());
        assert_eq!(query(info_query::GTT_USAGE, 8), (1u64 << 20).to_le_bytes());
        let m: AmdgpuMemoryInfo = bytemuck::pod_read_unaligned(&query(info_query::MEMORY, 96));
        assert_eq!(
            (m.vram.heap_usage, m.gtt.heap_usage, m.vram.total_heap_size),
            (3 << 20, 1 << 20, gpu.local_mem_size)
        );
    }

    #[test]
    fn hw_ip_counts_name_the_cdna_blocks() {
        let count = |ty: u32| {
            let mut p = info_payload(info_query::HW_IP_COUNT, 4, [ty, 0, 0, 0]);
            ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).map(|()| u32::from_le_bytes(p[32..36].try_into().unwrap()))
        };
        assert_eq!(count(drm::hw_ip::COMPUTE).unwrap(), 1);
        assert_eq!(count(drm::hw_ip::DMA).unwrap(), 1);
        assert_eq!(count(drm::hw_ip::VCE).unwrap(), 0);
        assert_eq!(count(drm::hw_ip::NUM).unwrap_err().errno(), EINVAL);
        let mut p = info_payload(info_query::HW_IP_INFO, 32, [drm::hw_ip::COMPUTE, 0, 0, 0]);
        ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap();
        let info: AmdgpuInfoHwIp = bytemuck::pod_read_unaligned(&p[32..]);
        assert_eq!((info.hw_ip_version_major, info.available_rings, info.ip_discovery_version), (9, 0xff, 0x090402));
        let mut p = info_payload(info_query::HW_IP_INFO, 32, [drm::hw_ip::UVD, 0, 0, 0]);
        assert_eq!(ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap_err().errno(), EINVAL);
    }

    #[test]
    fn accel_working_and_gb_addr_config() {
        let mut p = info_payload(info_query::ACCEL_WORKING, 4, [0; 4]);
        ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap();
        assert_eq!(&p[32..], &1u32.to_le_bytes());
        let mut p = info_payload(info_query::READ_MMR_REG, 4, [drm::MMR_GB_ADDR_CONFIG, 1, 0xffff_ffff, 0]);
        ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap();
        assert_eq!(&p[32..], &GB_ADDR_CONFIG.to_le_bytes());
    }

    const GB_ADDR_CONFIG: u32 = crate::driver::kfd::device::GB_ADDR_CONFIG_GFX9;

    #[test]
    fn unknown_queries_and_registers_are_einval() {
        let mut p = info_payload(0x7f, 4, [0; 4]);
        let e = ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p).unwrap_err();
        assert_eq!(e.errno(), EINVAL);
        let mut p = info_payload(info_query::READ_MMR_REG, 4, [0x1234, 1, 0, 0]);
        assert!(matches!(ioctl(&mi210(), drm::cmd::AMDGPU_INFO, &mut p), Err(DrmError::Register { .. })));
        let mut p = vec![0u8; 40];
        assert!(matches!(ioctl(&mi210(), drm::cmd::GET_CLIENT, &mut p), Err(DrmError::NotSupported(_))));
    }
}
