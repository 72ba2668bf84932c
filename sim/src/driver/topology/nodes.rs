//! The per-node content of the tree: node properties, memory banks, caches and links.
//!
//! Key names, order and formats follow amdkfd's `kfd_topology.c`; the values the stack acts on
//! are those in the contract (§4), derived from the config and the host.

use super::props::Properties;
use crate::config::{Config, Device};
use crate::host::HostInfo;

/// `HSA_IOLINK_TYPE_PCIEXPRESS`.
pub const IOLINK_TYPE_PCIE: u32 = 2;
/// `HSA_IOLINK_TYPE_XGMI`.
pub const IOLINK_TYPE_XGMI: u32 = 11;
/// Weight amdkfd gives a direct GPU↔CPU PCIe link (libhsakmt treats ≤ 20 as "direct").
pub const PCIE_WEIGHT: u32 = 20;
/// Weight amdkfd gives one XGMI hop (`KFD_CRAT_XGMI_WEIGHT`).
pub const XGMI_WEIGHT: u32 = 15;
/// Link bandwidths in MB/s: PCIe 4.0 x16, and the reference's XGMI figure.
const PCIE_BANDWIDTH: u32 = 32_000;
const XGMI_BANDWIDTH: u32 = 50_000;
/// `CRAT_IOLINK_FLAGS_ENABLED`; no NoAtomics bits, so ROCR's SDMA path uses ATOMIC packets.
const LINK_FLAGS: u32 = 1;

/// `HSA_HEAPTYPE_SYSTEM` and `HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC` (host-visible VRAM, which
/// makes libhsakmt map every `hipMalloc` into the application).
const HEAP_SYSTEM: u32 = 0;
const HEAP_FB_PUBLIC: u32 = 1;

/// Cache type bits: DATA 1, INSTRUCTION 2, CPU 4, HSACU 8. ROCR keeps only HSACU data caches.
const CACHE_GPU_DATA: u32 = 1 | 8;
const CACHE_CPU_DATA: u32 = 1 | 4;

/// libhsakmt reads at most this many sibling-map entries (`HSA_CPU_SIBLINGS`).
const MAX_SIBLINGS: u32 = 256;

/// Whether GPUs have peers to link to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peers {
    /// One GPU: nothing to connect, and no `p2p_links_count` key (the tree ROCm 5.2 was
    /// verified with).
    None,
    /// Several GPUs: those of one hive (the same `hive_id` ≠ 0) have direct XGMI io_links, as
    /// amdkfd creates from the CRAT; any other pair has a PCIe peer link through the CPU in
    /// `p2p_links`, as amdkfd adds for GPUs not in the same hive.
    Some,
}

impl Peers {
    pub fn of(config: &Config) -> Peers {
        if config.num_gpus() == 1 {
            Peers::None
        } else {
            Peers::Some
        }
    }
}

/// One io_link or p2p_link.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    pub kind: u32,
    pub from: u32,
    pub to: u32,
    pub weight: u32,
    pub bandwidth: u32,
}

impl Link {
    pub fn pcie(from: u32, to: u32) -> Link {
        Link { kind: IOLINK_TYPE_PCIE, from, to, weight: PCIE_WEIGHT, bandwidth: PCIE_BANDWIDTH }
    }

    /// GPU→CPU→GPU, weighted as the sum of both hops like amdkfd's `kfd_add_peer_prop`.
    pub fn pcie_peer(from: u32, to: u32) -> Link {
        Link { weight: 2 * PCIE_WEIGHT, ..Link::pcie(from, to) }
    }

    pub fn xgmi(from: u32, to: u32) -> Link {
        Link { kind: IOLINK_TYPE_XGMI, from, to, weight: XGMI_WEIGHT, bandwidth: XGMI_BANDWIDTH }
    }

    pub fn properties(&self) -> String {
        Properties::new()
            .set("type", self.kind)
            .set("version_major", 0u32)
            .set("version_minor", 0u32)
            .set("node_from", self.from)
            .set("node_to", self.to)
            .set("weight", self.weight)
            .set("min_latency", 0u32)
            .set("max_latency", 0u32)
            .set("min_bandwidth", self.bandwidth)
            .set("max_bandwidth", self.bandwidth)
            .set("recommended_transfer_size", 0u32)
            .set("flags", LINK_FLAGS)
            .finish()
    }
}

/// Links of GPU node `node` (= GPU index + 1): `(io_links, p2p_links)`. io_link 0 is always the
/// CPU, which libhsakmt uses to find the GPU's "direct" CPU.
pub(crate) fn gpu_links(config: &Config, node: u32, peers: Peers) -> (Vec<Link>, Vec<Link>) {
    let mut io = vec![Link::pcie(node, 0)];
    let mut p2p = Vec::new();
    if peers == Peers::None {
        return (io, p2p);
    }
    let gpus = config.gpus();
    let me = &gpus[node as usize - 1];
    for other in gpus.iter().filter(|d| d.index != me.index) {
        let to = other.sysfs_node();
        if me.hive_id != 0 && other.hive_id == me.hive_id {
            io.push(Link::xgmi(node, to));
        } else {
            p2p.push(Link::pcie_peer(node, to));
        }
    }
    (io, p2p)
}

/// Links of the CPU node: one PCIe link to every GPU.
pub(crate) fn cpu_links(config: &Config) -> Vec<Link> {
    (1..=config.num_gpus()).map(|n| Link::pcie(0, n)).collect()
}

/// Whether the CPU node lists a cache itself (only when libhsakmt would find none on the host).
pub(crate) fn cpu_lists_caches(host: &HostInfo) -> bool {
    !host.cpu_caches_in_sysfs
}

/// Node 0's properties: the host CPU, with no SIMDs and (normally) no caches, so libhsakmt
/// reads the real CPU caches.
pub(crate) fn cpu_node_properties(host: &HostInfo, peers: Peers, io_links: u32) -> String {
    let mut p = Properties::new();
    p.set("cpu_cores_count", host.cpu_count)
        .set("simd_count", 0u32)
        .set("mem_banks_count", 1u32)
        .set("caches_count", u32::from(cpu_lists_caches(host)))
        .set("io_links_count", io_links);
    if peers != Peers::None {
        p.set("p2p_links_count", 0u32);
    }
    p.set("cpu_core_id_base", host.first_apicid)
        .set("simd_id_base", 0u32)
        .set("max_waves_per_simd", 0u32)
        .set("lds_size_in_kb", 0u32)
        .set("gds_size_in_kb", 0u32)
        .set("num_gws", 0u32)
        .set("wave_front_size", 0u32)
        .set("array_count", 0u32)
        .set("simd_arrays_per_engine", 0u32)
        .set("cu_per_simd_array", 0u32)
        .set("simd_per_cu", 0u32)
        .set("max_slots_scratch_cu", 0u32)
        .set("gfx_target_version", 0u32)
        .set("vendor_id", 0u32)
        .set("device_id", 0u32)
        .set("location_id", 0u32)
        .set("domain", 0u32)
        .set("drm_render_minor", 0u32)
        .set("hive_id", 0u64)
        .set("num_sdma_engines", 0u32)
        .set("num_sdma_xgmi_engines", 0u32)
        .set("num_sdma_queues_per_engine", 0u32)
        .set("num_cp_queues", 0u32)
        .set("max_engine_clk_ccompute", host.cpu_max_clock_mhz);
    p.finish()
}

/// A GPU node's properties: every key libhsakmt 5.2 parses, from the device.
pub(crate) fn gpu_node_properties(d: &Device, host: &HostInfo, io_links: u32, p2p: Option<u32>) -> String {
    let mut p = Properties::new();
    p.set("cpu_cores_count", 0u32)
        .set("simd_count", d.simd_count)
        .set("mem_banks_count", 1u32)
        .set("caches_count", 2u32)
        .set("io_links_count", io_links);
    if let Some(n) = p2p {
        p.set("p2p_links_count", n);
    }
    p.set("cpu_core_id_base", 0u32)
        .set("simd_id_base", d.simd_id_base)
        .set("max_waves_per_simd", d.max_waves_per_simd)
        .set("lds_size_in_kb", d.lds_size_kb)
        .set("gds_size_in_kb", 0u32)
        .set("num_gws", d.num_gws)
        .set("wave_front_size", d.wave_front_size)
        .set("array_count", d.array_count())
        .set("simd_arrays_per_engine", d.num_shader_arrays_per_engine)
        .set("cu_per_simd_array", d.num_cu_per_sh)
        .set("simd_per_cu", d.simd_per_cu)
        .set("max_slots_scratch_cu", d.max_slots_scratch_cu)
        .set("gfx_target_version", d.gfx_target_version)
        .set("vendor_id", d.vendor_id)
        .set("device_id", d.device_id)
        .set("location_id", d.location_id)
        .set("domain", d.domain)
        .set("drm_render_minor", d.drm_render_minor)
        .set("hive_id", d.hive_id)
        .set("num_sdma_engines", d.num_sdma_engines)
        .set("num_sdma_xgmi_engines", d.num_sdma_xgmi_engines)
        .set("num_sdma_queues_per_engine", d.num_sdma_queues_per_engine)
        .set("num_cp_queues", d.num_cp_queues)
        .set("max_engine_clk_fcompute", d.max_engine_clk_fcompute)
        .set("local_mem_size", d.local_mem_size)
        .set("fw_version", d.fw_version)
        .set("capability", d.capability & !crate::config::capability::NOT_IMPLEMENTED)
        .set("capability2", d.capability2)
        .set("debug_prop", d.debug_prop)
        .set("sdma_fw_version", d.sdma_fw_version)
        .set("unique_id", d.unique_id)
        .set("num_xcc", d.num_xcc)
        .set("max_engine_clk_ccompute", host.cpu_max_clock_mhz);
    p.finish()
}

/// A memory bank: the host's RAM for the CPU, public VRAM for a GPU.
pub(crate) fn cpu_mem_bank(host: &HostInfo) -> String {
    mem_bank(HEAP_SYSTEM, host.mem_total_bytes, 0, 0)
}

pub(crate) fn gpu_mem_bank(d: &Device) -> String {
    mem_bank(HEAP_FB_PUBLIC, d.local_mem_size, d.mem_width, d.mem_clk_max)
}

fn mem_bank(heap_type: u32, size: u64, width: u32, clock: u32) -> String {
    Properties::new()
        .set("heap_type", heap_type)
        .set("size_in_bytes", size)
        .set("flags", 0u32)
        .set("width", width)
        .set("mem_clk_max", clock)
        .finish()
}

/// The GPU's two caches: L1 (one per CU) and L2 (shared by the CUs of one XCC). ROCR asserts
/// that a GPU has at least one.
pub(crate) fn gpu_caches(d: &Device) -> [String; 2] {
    let cus = d.cu_count();
    let per_xcc = cus.div_ceil(d.num_xcc);
    let l1 =
        cache(d.simd_id_base, 1, d.l1_size_kb, d.l1_line_size, d.l1_assoc, CACHE_GPU_DATA, &sibling_map(cus, 0, 1));
    let l2 = cache(
        d.simd_id_base,
        2,
        d.l2_size_kb,
        d.l2_line_size,
        d.l2_assoc,
        CACHE_GPU_DATA,
        &sibling_map(cus, 0, per_xcc),
    );
    [l1, l2]
}

/// A stand-in L1 data cache for a host whose cache sysfs libhsakmt cannot read.
pub(crate) fn cpu_cache(host: &HostInfo) -> String {
    let apicid = host.first_apicid.min(MAX_SIBLINGS - 1);
    cache(host.first_apicid, 1, 32, 64, 8, CACHE_CPU_DATA, &sibling_map(apicid + 1, apicid, 1))
}

fn cache(
    processor_id_low: u32,
    level: u32,
    size_kb: u32,
    line: u32,
    assoc: u32,
    kind: u32,
    siblings: &[bool],
) -> String {
    Properties::new()
        .set("processor_id_low", processor_id_low)
        .set("level", level)
        .set("size", size_kb)
        .set("cache_line_size", line)
        .set("cache_lines_per_tag", 1u32)
        .set("association", assoc)
        .set("latency", 1u32)
        .set("type", kind)
        .sibling_map(siblings)
        .finish()
}

/// A sibling map over `units` processors (rounded up to 32, at most 256 as libhsakmt reads)
/// with `count` bits set from `first`.
fn sibling_map(units: u32, first: u32, count: u32) -> Vec<bool> {
    let len = units.max(1).div_ceil(32).saturating_mul(32).min(MAX_SIBLINGS);
    (0..len).map(|i| i >= first && i - first < count).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sibling_maps_are_bounded() {
        let m = sibling_map(104, 0, 1);
        assert_eq!(m.len(), 128);
        assert_eq!(m.iter().filter(|&&b| b).count(), 1);
        let m = sibling_map(1024, 0, 1024);
        assert_eq!(m.len(), 256);
        assert!(m.iter().all(|&b| b));
        let m = sibling_map(5, 4, 1);
        assert_eq!((m.len(), m[4], m[3]), (32, true, false));
    }

    #[test]
    fn link_format() {
        let text = Link::xgmi(1, 2).properties();
        assert!(text.starts_with("type 11\nversion_major 0\nversion_minor 0\nnode_from 1\nnode_to 2\nweight 15\n"));
        assert!(text.ends_with("flags 1\n"));
    }
}
