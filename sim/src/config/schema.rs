//! The JSON shape of a config file, as written by the reference emulator, before defaults and
//! validation.
//!
//! Only what the simulator honours is modelled. Every other key (`thread_allocations`,
//! `max_ticks`, `topology.links`, …) is left out on purpose: the loader deserializes through
//! `serde_ignored`, which reports each one by path so the caller can log it once. Absent keys
//! are `None` so that defaults can depend on other values (e.g. the target).

use serde::de::{Deserializer, Visitor};
use serde::{forward_to_deserialize_any, Deserialize};

/// serde's derived struct impls also accept a JSON array (fields by position), which would
/// turn `"vm": []` into an all-defaults section. Each section here is deserialized through
/// this wrapper instead, which only lets a JSON object through.
struct ObjectOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// Implements `Deserialize` for a section through [`ObjectOnly`]; the section derives its
/// field handling with `#[serde(remote = "Self")]`.
macro_rules! object_only {
    ($($t:ty),*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize(ObjectOnly(d))
            }
        }
    )*};
}

object_only!(RawConfig, RawVm, RawGpu, RawMemory, RawDevice, RawTopology, RawComponent);

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawConfig {
    pub vm: RawVm,
    pub topology: RawTopology,
    /// Our own key: worker threads for workgroup execution (default: the host's cores).
    pub workers: Option<u32>,
}

/// `vm`.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawVm {
    pub arch: Option<String>,
    pub gpu: RawGpu,
}

/// `vm.gpu`.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawGpu {
    pub num_gpus: Option<u32>,
    /// Our own key: GPUs per XGMI hive (default: all of them). A board of 8 MI210s is two
    /// hives of 4 (an Infinity Fabric bridge joins four cards); the hives reach each other
    /// over PCIe through the CPU.
    pub xgmi_hive_size: Option<u32>,
    pub num_xcds: Option<u32>,
    pub memory: RawMemory,
    pub device: RawDevice,
}

/// `vm.gpu.memory`.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawMemory {
    pub size_mb: Option<u64>,
}

/// `vm.gpu.device`: the KFD-visible description of one GPU.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawDevice {
    pub gpu_id: Option<u32>,
    pub gfx_target_version: Option<u32>,
    pub vendor_id: Option<u32>,
    pub device_id: Option<u32>,
    pub family_id: Option<u32>,
    pub unique_id: Option<u64>,
    pub marketing_name: Option<String>,
    pub drm_render_minor: Option<u32>,
    pub revision_id: Option<u32>,
    pub pci_revision_id: Option<u32>,
    pub simd_count: Option<u32>,
    pub max_waves_per_simd: Option<u32>,
    pub num_shader_engines: Option<u32>,
    pub num_shader_arrays_per_engine: Option<u32>,
    pub num_cu_per_sh: Option<u32>,
    pub simd_per_cu: Option<u32>,
    pub wave_front_size: Option<u32>,
    pub max_slots_scratch_cu: Option<u32>,
    pub local_mem_size: Option<u64>,
    pub lds_size_kb: Option<u32>,
    pub mem_width: Option<u32>,
    pub mem_clk_max: Option<u32>,
    pub l1_size_kb: Option<u32>,
    pub l1_line_size: Option<u32>,
    pub l1_assoc: Option<u32>,
    pub l2_size_kb: Option<u32>,
    pub l2_line_size: Option<u32>,
    pub l2_assoc: Option<u32>,
    pub num_sdma_engines: Option<u32>,
    pub num_sdma_xgmi_engines: Option<u32>,
    pub num_sdma_queues_per_engine: Option<u32>,
    pub num_cp_queues: Option<u32>,
    pub max_engine_clk_fcompute: Option<u32>,
    pub capability: Option<u32>,
    pub capability2: Option<u32>,
    pub debug_prop: Option<u64>,
    pub location_id: Option<u32>,
    pub domain: Option<u32>,
    pub hive_id: Option<u64>,
    pub fw_version: Option<u32>,
    pub sdma_fw_version: Option<u32>,
    pub num_xcc: Option<u32>,
    /// Our own key; the reference hard-codes 0x80001000.
    pub simd_id_base: Option<u32>,
    /// Our own key; the reference hard-codes 64.
    pub num_gws: Option<u32>,
}

/// `topology`: the reference's component graph. Only its XCD count is used, as the default for
/// `num_xcc` (the MI300X/MI350X configs state it nowhere else).
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawTopology {
    pub root: Option<RawComponent>,
}

/// One node of `topology.root`.
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self", default, expecting = "a JSON object")]
pub(crate) struct RawComponent {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub children: Vec<RawComponent>,
}

impl RawComponent {
    /// How many XCDs the graph instantiates: `xcd[0:8]` counts 8, a plain `xcd` counts 1.
    /// `None` when the graph has no component of type `xcd`.
    pub fn xcd_count(&self) -> Option<u32> {
        if self.kind == "xcd" {
            return Some(instance_count(&self.name));
        }
        self.children
            .iter()
            .filter_map(RawComponent::xcd_count)
            .fold(None, |acc, n| Some(acc.unwrap_or(0).saturating_add(n)))
    }
}

/// Instances named by the reference's range syntax `name[lo:hi]` (hi exclusive); 1 otherwise.
fn instance_count(name: &str) -> u32 {
    let range = name.split_once('[').and_then(|(_, rest)| rest.strip_suffix(']')).and_then(|r| r.split_once(':'));
    match range {
        Some((lo, hi)) => match (lo.trim().parse::<u32>(), hi.trim().parse::<u32>()) {
            (Ok(lo), Ok(hi)) if hi > lo => hi - lo,
            _ => 1,
        },
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(name: &str, kind: &str, children: Vec<RawComponent>) -> RawComponent {
        RawComponent { name: name.into(), kind: kind.into(), children }
    }

    #[test]
    fn instance_ranges() {
        assert_eq!(instance_count("xcd[0:8]"), 8);
        assert_eq!(instance_count("xcd[2:4]"), 2);
        assert_eq!(instance_count("xcd"), 1);
        assert_eq!(instance_count("xcd[4:4]"), 1);
        assert_eq!(instance_count("xcd[a:b]"), 1);
    }

    #[test]
    fn xcd_count_searches_the_tree() {
        let soc = component(
            "soc",
            "soc",
            vec![
                component("vram", "gpu_memory", vec![]),
                component("xcd[0:8]", "xcd", vec![component("se[0:4]", "shader_engine", vec![])]),
            ],
        );
        assert_eq!(soc.xcd_count(), Some(8));
        assert_eq!(component("soc", "soc", vec![]).xcd_count(), None);
    }
}
