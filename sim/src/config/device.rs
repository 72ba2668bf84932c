//! One simulated GPU as the KFD, libdrm and the simulator see it: the `vm.gpu.device` section
//! with every default applied and every range checked.
//!
//! Defaults follow the reference emulator (anchor §8) where it has one, so its configs mean the
//! same thing here; where it has none they follow the target (device id, family, names).

use super::error::{ConfigError, ConfigErrorKind};
use super::schema::{RawConfig, RawDevice};
use super::target::{Arch, GfxTarget};

/// KFD capability bits (libhsakmt's `HSA_CAPABILITY`) that we set or read.
pub mod capability {
    /// Bits 22–25: ASIC revision; the kernel ORs `rev_id << 22` in.
    pub const ASIC_REVISION_SHIFT: u32 = 22;
    /// Mask of the ASIC revision field.
    pub const ASIC_REVISION_MASK: u32 = 0xf << ASIC_REVISION_SHIFT;
    /// Bit 26: SRAM EDC active; ROCR turns it into the `sramecc+` target feature.
    pub const SRAM_EDC: u32 = 1 << 26;
    /// Bits 12–13: doorbell type; 2 = SOC15 64-bit doorbells, required by ROCR on gfx9.
    pub const DOORBELL_TYPE_SHIFT: u32 = 12;
    /// The value observed to work with ROCm 5.2 on an emulated MI210 (contract §4):
    /// watch points (2 bits), doorbell type 2, debug-trap/wave-launch/precise-memory support,
    /// SRAM EDC and the SVM API.
    pub const DEFAULT: u32 = 0x0C07_A280;
    /// Bit 27: the SVM API (`AMDKFD_IOC_SVM`). ROCm 6.x then registers host memory and every
    /// queue's save area through SVM ranges, and HIP offers managed memory on it.
    pub const SVM_API: u32 = 1 << 27;
    /// Bit 29: debugger-capable firmware. ROCm 6.x then requires RUNTIME_ENABLE at start-up
    /// and installs the exception-debugging trap handlers.
    pub const DEBUG_FIRMWARE: u32 = 1 << 29;
    /// Bits a config may set but the simulated driver does not report, because it does not
    /// implement what they promise (a runtime would take paths that then fail): the SVM ioctl
    /// and runtime debugging. Without them ROCm takes the USERPTR paths and the legacy trap
    /// handler, which the simulator implements. Remove a bit here when its feature exists.
    pub const NOT_IMPLEMENTED: u32 = SVM_API | DEBUG_FIRMWARE;
}

/// The highest `gpu_id` the KFD can use: mmap offsets carry it in 16 bits (61:46).
pub const MAX_GPU_ID: u32 = 0xffff;

/// Render minors libhsakmt accepts (`/dev/dri/renderD128` … `renderD255`).
pub use proto::abi::drm::RENDER_MINORS;

/// How many GPUs one config may describe.
pub const MAX_GPUS: u32 = 16;

/// A fully specified GPU. For a multi-GPU config, each GPU has its own copy with its own
/// `index`, `gpu_id`, `drm_render_minor`, `location_id` and `unique_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Position among the config's GPUs (0-based); the KFD topology node is `index + 1`.
    pub index: u32,
    /// The GFX target `gfx_target_version` names.
    pub target: GfxTarget,
    pub gpu_id: u32,
    pub gfx_target_version: u32,
    pub vendor_id: u32,
    pub device_id: u32,
    pub family_id: u32,
    /// 0 means "not reported"; otherwise GPU i gets `unique_id + i` so UUIDs stay distinct.
    pub unique_id: u64,
    pub marketing_name: String,
    pub drm_render_minor: u32,
    pub revision_id: u32,
    pub pci_revision_id: u32,
    /// SIMDs on the whole GPU (all XCCs).
    pub simd_count: u32,
    pub max_waves_per_simd: u32,
    /// Shader engines per XCC.
    pub num_shader_engines: u32,
    pub num_shader_arrays_per_engine: u32,
    pub num_cu_per_sh: u32,
    pub simd_per_cu: u32,
    pub wave_front_size: u32,
    pub max_slots_scratch_cu: u32,
    /// VRAM bytes.
    pub local_mem_size: u64,
    pub lds_size_kb: u32,
    pub mem_width: u32,
    pub mem_clk_max: u32,
    pub l1_size_kb: u32,
    pub l1_line_size: u32,
    pub l1_assoc: u32,
    pub l2_size_kb: u32,
    pub l2_line_size: u32,
    pub l2_assoc: u32,
    pub num_sdma_engines: u32,
    pub num_sdma_xgmi_engines: u32,
    pub num_sdma_queues_per_engine: u32,
    pub num_cp_queues: u32,
    pub max_engine_clk_fcompute: u32,
    /// Effective KFD capability word (the config's non-zero value, else the default).
    pub capability: u32,
    pub capability2: u32,
    pub debug_prop: u64,
    /// PCI bus/device/function packed as `bus << 8 | dev << 3 | fn`.
    pub location_id: u32,
    pub domain: u32,
    /// Non-zero when the GPUs form an XGMI hive.
    pub hive_id: u64,
    pub fw_version: u32,
    pub sdma_fw_version: u32,
    /// Accelerator complex dies (XCDs) in this GPU.
    pub num_xcc: u32,
    pub simd_id_base: u32,
    pub num_gws: u32,
}

impl Device {
    /// Compute units on the whole GPU; rocminfo's "Compute Unit".
    pub fn cu_count(&self) -> u32 {
        self.simd_count / self.simd_per_cu
    }

    /// Shader arrays on the whole GPU; the KFD's `array_count`, which ROCR reports as
    /// "Shader Engines" and divides scratch waves by.
    pub fn array_count(&self) -> u32 {
        self.num_shader_engines * self.num_shader_arrays_per_engine * self.num_xcc
    }

    /// The architecture family.
    pub fn arch(&self) -> Arch {
        self.target.arch()
    }

    /// LLVM processor name (`gfx90a`).
    pub fn isa_name(&self) -> &'static str {
        self.target.name()
    }

    /// Whether the capability word reports SRAM ECC, which makes the target `sramecc+`.
    pub fn sramecc(&self) -> bool {
        self.capability & capability::SRAM_EDC != 0
    }

    /// Target id with features as ROCR derives it: `gfx90a:sramecc+:xnack-`. XNACK is always
    /// off because our KFD answers SET_XNACK_MODE queries with 0.
    pub fn target_id(&self) -> String {
        let sramecc = if self.sramecc() { '+' } else { '-' };
        format!("{}:sramecc{sramecc}:xnack-", self.isa_name())
    }

    /// The ISA name ROCR reports (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`).
    pub fn isa_string(&self) -> String {
        format!("amdgcn-amd-amdhsa--{}", self.target_id())
    }

    /// LDS per workgroup in bytes.
    pub fn lds_bytes(&self) -> u32 {
        self.lds_size_kb * 1024
    }

    /// L1 (per CU) in bytes.
    pub fn l1_bytes(&self) -> u32 {
        self.l1_size_kb * 1024
    }

    /// L2 (per XCC) in bytes.
    pub fn l2_bytes(&self) -> u64 {
        u64::from(self.l2_size_kb) * 1024
    }

    /// Wave slots per CU; rocminfo's "Max Waves Per CU".
    pub fn max_waves_per_cu(&self) -> u32 {
        self.max_waves_per_simd * self.simd_per_cu
    }

    /// The KFD topology node this GPU appears as (node 0 is the CPU).
    pub fn sysfs_node(&self) -> u32 {
        self.index + 1
    }

    /// PCI (bus, device, function) from `location_id`.
    pub fn pci_bdf(&self) -> (u8, u8, u8) {
        let l = self.location_id;
        (((l >> 8) & 0xff) as u8, ((l >> 3) & 0x1f) as u8, (l & 7) as u8)
    }

    /// The copy of this device that GPU `index` of a multi-GPU config gets.
    /// GPU `index` of the machine; GPUs in hives of `hive_size` share a hive id (the first
    /// hive has the configured one, the next that plus one, and so on).
    pub(crate) fn instance(&self, index: u32, hive_size: u32) -> Device {
        Device {
            index,
            hive_id: if self.hive_id == 0 { 0 } else { self.hive_id + u64::from(index / hive_size) },
            gpu_id: self.gpu_id + index,
            drm_render_minor: self.drm_render_minor + index,
            location_id: self.location_id + (index << 8),
            unique_id: if self.unique_id == 0 { 0 } else { self.unique_id.wrapping_add(u64::from(index)) },
            ..self.clone()
        }
    }
}

/// Error builder bound to the file being loaded.
pub(crate) struct Checker<'a> {
    pub file: &'a str,
}

impl Checker<'_> {
    pub fn err(&self, key: &str, kind: ConfigErrorKind, reason: impl Into<String>) -> ConfigError {
        ConfigError::new(self.file, key, kind, reason)
    }

    /// `value` must lie in `min..=max`; these bounds also keep the derived products in `u32`.
    fn bounded(&self, key: &str, value: u32, min: u32, max: u32) -> Result<(), ConfigError> {
        self.range((min..=max).contains(&value), key, || format!("must be {min}..={max}, got {value}"))
    }

    fn range(&self, ok: bool, key: &str, reason: impl FnOnce() -> String) -> Result<(), ConfigError> {
        if ok {
            Ok(())
        } else {
            Err(self.err(key, ConfigErrorKind::Range, reason()))
        }
    }
}

const DEV: &str = "vm.gpu.device";

fn key(field: &str) -> String {
    format!("{DEV}.{field}")
}

/// Builds GPU 0's device from the raw file, applying defaults, then checks every range that
/// the simulated stack depends on. `num_gpus` is needed because per-GPU values must stay in
/// range for the last GPU too.
pub(crate) fn build_device(
    raw: &RawConfig,
    target: GfxTarget,
    num_gpus: u32,
    c: &Checker<'_>,
) -> Result<Device, ConfigError> {
    let d: &RawDevice = &raw.vm.gpu.device;
    let simd_count =
        d.simd_count.ok_or_else(|| c.err(&key("simd_count"), ConfigErrorKind::Missing, "missing (required)"))?;
    let simd_per_cu = d.simd_per_cu.unwrap_or(4);
    // num_xcc: the device key, else the reference's vm.gpu.num_xcds, else the XCDs that
    // topology.root instantiates; errors name whichever supplied the value.
    let (num_xcc, xcc_key) = match (d.num_xcc, raw.vm.gpu.num_xcds) {
        (Some(n), _) => (n, key("num_xcc")),
        (None, Some(n)) => (n, "vm.gpu.num_xcds".to_owned()),
        (None, None) => match raw.topology.root.as_ref().and_then(|r| r.xcd_count()) {
            Some(n) => (n, "topology.root".to_owned()),
            None => (1, key("num_xcc")),
        },
    };
    let num_shader_engines = d.num_shader_engines.unwrap_or(4);
    let num_shader_arrays_per_engine = d.num_shader_arrays_per_engine.unwrap_or(1);
    let revision_id = d.revision_id.unwrap_or(0);

    c.bounded(&key("simd_per_cu"), simd_per_cu, 1, 16)?;
    c.bounded(&xcc_key, num_xcc, 1, 16)?;
    c.bounded(&key("num_shader_engines"), num_shader_engines, 1, 32)?;
    c.bounded(&key("num_shader_arrays_per_engine"), num_shader_arrays_per_engine, 1, 8)?;
    c.range(simd_count >= 1, &key("simd_count"), || "must be at least 1, got 0".into())?;
    c.range(simd_count % simd_per_cu == 0, &key("simd_count"), || {
        format!("{simd_count} is not divisible by simd_per_cu {simd_per_cu}")
    })?;
    let cu_count = simd_count / simd_per_cu;
    let arrays = num_shader_engines * num_shader_arrays_per_engine * num_xcc;
    let num_cu_per_sh = d.num_cu_per_sh.unwrap_or(cu_count.div_ceil(arrays));

    let local_mem_size = match (d.local_mem_size, raw.vm.gpu.memory.size_mb) {
        (Some(bytes), _) => bytes,
        (None, Some(mb)) => mb.saturating_mul(1 << 20),
        (None, None) => 64 << 30,
    };

    let capability = match d.capability {
        Some(cap) if cap != 0 => cap,
        _ => capability::DEFAULT | ((revision_id << capability::ASIC_REVISION_SHIFT) & capability::ASIC_REVISION_MASK),
    };

    let dev = Device {
        index: 0,
        target,
        gpu_id: d.gpu_id.unwrap_or(0xc0de),
        gfx_target_version: target.version(),
        vendor_id: d.vendor_id.unwrap_or(0x1002),
        device_id: d.device_id.unwrap_or(target.default_device_id()),
        family_id: d.family_id.filter(|&f| f > 0).unwrap_or(target.default_family_id()),
        unique_id: d.unique_id.unwrap_or(0),
        marketing_name: d.marketing_name.clone().unwrap_or_else(|| target.default_marketing_name().to_owned()),
        drm_render_minor: d.drm_render_minor.unwrap_or(128),
        revision_id,
        pci_revision_id: d.pci_revision_id.unwrap_or(if target == GfxTarget::Gfx90a { 2 } else { 0 }),
        simd_count,
        max_waves_per_simd: d.max_waves_per_simd.unwrap_or(10),
        num_shader_engines,
        num_shader_arrays_per_engine,
        num_cu_per_sh,
        simd_per_cu,
        wave_front_size: d.wave_front_size.unwrap_or(64),
        max_slots_scratch_cu: d.max_slots_scratch_cu.unwrap_or(32),
        local_mem_size,
        lds_size_kb: d.lds_size_kb.unwrap_or(64),
        mem_width: d.mem_width.unwrap_or(4096),
        mem_clk_max: d.mem_clk_max.unwrap_or(1600),
        l1_size_kb: d.l1_size_kb.unwrap_or(32),
        l1_line_size: d.l1_line_size.unwrap_or(64),
        l1_assoc: d.l1_assoc.unwrap_or(4),
        l2_size_kb: d.l2_size_kb.unwrap_or(4096),
        l2_line_size: d.l2_line_size.unwrap_or(128),
        l2_assoc: d.l2_assoc.unwrap_or(16),
        num_sdma_engines: d.num_sdma_engines.unwrap_or(2),
        num_sdma_xgmi_engines: d.num_sdma_xgmi_engines.unwrap_or(0),
        num_sdma_queues_per_engine: d.num_sdma_queues_per_engine.unwrap_or(8),
        num_cp_queues: d.num_cp_queues.unwrap_or(128),
        max_engine_clk_fcompute: d.max_engine_clk_fcompute.unwrap_or(1700),
        capability,
        capability2: d.capability2.unwrap_or(0),
        debug_prop: d.debug_prop.unwrap_or(target.default_debug_prop()),
        location_id: d.location_id.unwrap_or(0x300),
        domain: d.domain.unwrap_or(0),
        hive_id: d.hive_id.unwrap_or(0),
        fw_version: d.fw_version.unwrap_or(78),
        sdma_fw_version: d.sdma_fw_version.unwrap_or(0),
        num_xcc,
        simd_id_base: d.simd_id_base.unwrap_or(0x8000_1000),
        num_gws: d.num_gws.unwrap_or(64),
    };
    check_ranges(&dev, num_gpus, c)?;
    Ok(dev)
}

/// Range checks on the assembled device. Each names the key the user has to change.
fn check_ranges(d: &Device, num_gpus: u32, c: &Checker<'_>) -> Result<(), ConfigError> {
    let last = num_gpus - 1;
    let cu_count = d.cu_count();

    c.range(d.gpu_id != 0, &key("gpu_id"), || "must not be 0 (0 marks the CPU node)".into())?;
    c.range(u64::from(d.gpu_id) + u64::from(last) <= u64::from(MAX_GPU_ID), &key("gpu_id"), || {
        format!(
            "{} + {last} (GPUs after the first) exceeds {MAX_GPU_ID}, the largest id KFD mmap offsets can carry",
            d.gpu_id
        )
    })?;
    c.range(RENDER_MINORS.contains(&d.drm_render_minor), &key("drm_render_minor"), || {
        format!("must be 128..=255, got {}", d.drm_render_minor)
    })?;
    c.range(d.drm_render_minor + last <= *RENDER_MINORS.end(), &key("drm_render_minor"), || {
        format!("{} + {last} for the last of {num_gpus} GPUs exceeds 255", d.drm_render_minor)
    })?;
    c.range(u64::from(d.location_id) + (u64::from(last) << 8) <= 0xffff, &key("location_id"), || {
        format!("{:#x} + ({last} << 8) for the last of {num_gpus} GPUs exceeds the 16-bit PCI bus/devfn", d.location_id)
    })?;
    c.range(matches!(d.wave_front_size, 32 | 64), &key("wave_front_size"), || {
        format!("must be 32 or 64, got {}", d.wave_front_size)
    })?;
    c.range(d.local_mem_size > 0, &key("local_mem_size"), || "must be greater than 0".into())?;
    for (field, value, min, max) in [
        ("max_waves_per_simd", d.max_waves_per_simd, 1, 64),
        ("num_cu_per_sh", d.num_cu_per_sh, 1, 1024),
        ("max_slots_scratch_cu", d.max_slots_scratch_cu, 1, 1024),
        ("lds_size_kb", d.lds_size_kb, 1, 1024),
        ("l1_size_kb", d.l1_size_kb, 1, 65536),
        ("l1_line_size", d.l1_line_size, 1, 4096),
        ("l2_size_kb", d.l2_size_kb, 1, 1 << 21),
        ("l2_line_size", d.l2_line_size, 1, 4096),
    ] {
        c.bounded(&key(field), value, min, max)?;
    }
    let slots = u64::from(d.array_count()) * u64::from(d.num_cu_per_sh);
    c.range(slots >= u64::from(cu_count), &key("num_cu_per_sh"), || {
        format!(
            "{} CUs (simd_count / simd_per_cu) do not fit in {} shader arrays x {} CUs",
            cu_count,
            d.array_count(),
            d.num_cu_per_sh
        )
    })?;
    c.range(
        (u64::from(cu_count) * u64::from(d.max_slots_scratch_cu)) % u64::from(d.array_count()) == 0,
        &key("max_slots_scratch_cu"),
        || {
            format!(
                "{cu_count} CUs x {} scratch slots is not divisible by the {} shader arrays (ROCR asserts this when kernels use scratch)",
                d.max_slots_scratch_cu,
                d.array_count()
            )
        },
    )?;
    c.range(d.marketing_name.len() <= 127, &key("marketing_name"), || {
        format!("is {} bytes; at most 127 fit", d.marketing_name.len())
    })?;
    Ok(())
}
