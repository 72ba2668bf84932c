//! Architecture families (`vm.arch`) and the GFX targets behind `gfx_target_version`.
//!
//! The reference emulator's configs name an architecture family and, separately, the exact
//! GFX IP version the KFD reports. Both must agree, and only the CDNA2/3/4 targets can be
//! simulated here, so this table is where a config is told which of its choices we cannot run.

use std::fmt;

/// An architecture family as spelled in `vm.arch` by the reference emulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    Cdna1,
    Cdna2,
    Cdna3,
    Cdna4,
    Cdna5,
    Rdna1,
    Rdna2,
    Rdna3,
    Rdna3_5,
    Rdna4,
    Rv64i,
}

impl Arch {
    /// Every family the reference knows, in its own order.
    pub const ALL: [Arch; 11] = [
        Arch::Cdna1,
        Arch::Cdna2,
        Arch::Cdna3,
        Arch::Cdna4,
        Arch::Cdna5,
        Arch::Rdna1,
        Arch::Rdna2,
        Arch::Rdna3,
        Arch::Rdna3_5,
        Arch::Rdna4,
        Arch::Rv64i,
    ];

    /// The families this simulator can execute.
    pub const RUNNABLE: [Arch; 3] = [Arch::Cdna2, Arch::Cdna3, Arch::Cdna4];

    /// The `vm.arch` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Cdna1 => "cdna1",
            Arch::Cdna2 => "cdna2",
            Arch::Cdna3 => "cdna3",
            Arch::Cdna4 => "cdna4",
            Arch::Cdna5 => "cdna5",
            Arch::Rdna1 => "rdna1",
            Arch::Rdna2 => "rdna2",
            Arch::Rdna3 => "rdna3",
            Arch::Rdna3_5 => "rdna3_5",
            Arch::Rdna4 => "rdna4",
            Arch::Rv64i => "rv64i",
        }
    }

    /// Parses a `vm.arch` value (exact, lower case, as the reference writes it).
    pub fn from_name(name: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the simulator has an ISA implementation for this family.
    pub fn is_runnable(self) -> bool {
        Arch::RUNNABLE.contains(&self)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// IP block versions (major, minor, revision) of one part, as amdgpu's IP discovery
/// reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpVersions {
    pub gc: (u32, u32, u32),
    pub sdma: (u32, u32, u32),
    pub vcn: (u32, u32, u32),
}

/// A GFX target the KFD can report through `gfx_target_version`.
///
/// gfx908 is listed so that a config naming it gets "that is cdna1" rather than "unknown".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GfxTarget {
    Gfx908,
    Gfx90a,
    Gfx940,
    Gfx941,
    Gfx942,
    Gfx950,
}

impl GfxTarget {
    /// Every known target.
    pub const ALL: [GfxTarget; 6] = [
        GfxTarget::Gfx908,
        GfxTarget::Gfx90a,
        GfxTarget::Gfx940,
        GfxTarget::Gfx941,
        GfxTarget::Gfx942,
        GfxTarget::Gfx950,
    ];

    /// KFD's decimal encoding: major*10000 + minor*100 + stepping (gfx90a = 9.0.10 = 90010).
    pub fn version(self) -> u32 {
        match self {
            GfxTarget::Gfx908 => 90008,
            GfxTarget::Gfx90a => 90010,
            GfxTarget::Gfx940 => 90400,
            GfxTarget::Gfx941 => 90401,
            GfxTarget::Gfx942 => 90402,
            GfxTarget::Gfx950 => 90500,
        }
    }

    /// Looks a `gfx_target_version` up; `None` for a version this table does not know.
    pub fn from_version(version: u32) -> Option<GfxTarget> {
        GfxTarget::ALL.into_iter().find(|t| t.version() == version)
    }

    /// The LLVM processor name, as in code-object target ids (`gfx90a`).
    pub fn name(self) -> &'static str {
        match self {
            GfxTarget::Gfx908 => "gfx908",
            GfxTarget::Gfx90a => "gfx90a",
            GfxTarget::Gfx940 => "gfx940",
            GfxTarget::Gfx941 => "gfx941",
            GfxTarget::Gfx942 => "gfx942",
            GfxTarget::Gfx950 => "gfx950",
        }
    }

    /// The family this target belongs to.
    pub fn arch(self) -> Arch {
        match self {
            GfxTarget::Gfx908 => Arch::Cdna1,
            GfxTarget::Gfx90a => Arch::Cdna2,
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 => Arch::Cdna3,
            GfxTarget::Gfx950 => Arch::Cdna4,
        }
    }

    /// What amdgpu writes to the topology node's `name` file: the lower-cased
    /// `amdgpu_asic_name[asic_type]`. GC 9.4.x parts are enumerated through IP discovery, so
    /// their asic type, and hence the name, is "ip discovery".
    pub fn kernel_node_name(self) -> &'static str {
        match self {
            GfxTarget::Gfx908 => "arcturus",
            GfxTarget::Gfx90a => "aldebaran",
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 | GfxTarget::Gfx950 => "ip discovery",
        }
    }

    /// PCI device id of the product the reference's config for this target describes; the
    /// default when a config leaves `device_id` out, so libdrm's `amdgpu.ids` still finds a name.
    pub fn default_device_id(self) -> u32 {
        match self {
            GfxTarget::Gfx908 => 0x738c,
            GfxTarget::Gfx90a => 0x740f,
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 => 0x74a1,
            GfxTarget::Gfx950 => 0x75a0,
        }
    }

    /// amdgpu's family id (AMDGPU_FAMILY_AI = 141 for GC 9.0–9.4.2; the reference's configs
    /// use 146 for GC 9.4.3 and 160 for GC 9.5.0).
    pub fn default_family_id(self) -> u32 {
        match self {
            GfxTarget::Gfx908 | GfxTarget::Gfx90a => 141,
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 => 146,
            GfxTarget::Gfx950 => 160,
        }
    }

    /// The IP block versions amdgpu discovers on this part (major, minor, revision):
    /// graphics/compute (GC), SDMA, and the VCN video block (JPEG shares its version).
    pub fn ip_versions(self) -> IpVersions {
        match self {
            GfxTarget::Gfx908 => IpVersions { gc: (9, 4, 1), sdma: (4, 2, 2), vcn: (2, 5, 0) },
            GfxTarget::Gfx90a => IpVersions { gc: (9, 4, 2), sdma: (4, 4, 0), vcn: (2, 6, 0) },
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 => {
                IpVersions { gc: (9, 4, 3), sdma: (4, 4, 2), vcn: (4, 0, 3) }
            }
            GfxTarget::Gfx950 => IpVersions { gc: (9, 5, 0), sdma: (4, 4, 5), vcn: (5, 0, 1) },
        }
    }

    /// The family amdgpu reports for this GC version in DRM DEV_INFO:
    /// `AMDGPU_FAMILY_AI` (141) for every GFX9 part, GC 9.4.3 and 9.5.0
    /// included (amdgpu_discovery.c). The 146/160 of the reference configs'
    /// `family_id` are not what the kernel says; ROCR 6.x turns this value
    /// into the agent's ASIC family and image addressing mode.
    pub fn amdgpu_family(self) -> u32 {
        141
    }

    /// Marketing name matching [`default_device_id`](Self::default_device_id).
    pub fn default_marketing_name(self) -> &'static str {
        match self {
            GfxTarget::Gfx908 => "AMD Instinct MI100",
            GfxTarget::Gfx90a => "AMD Instinct MI210",
            GfxTarget::Gfx940 | GfxTarget::Gfx941 | GfxTarget::Gfx942 => "AMD Instinct MI300X",
            GfxTarget::Gfx950 => "AMD Instinct MI350X",
        }
    }

    /// Default `debug_prop`: gfx9 watch-address mask bits (low 6, high 29), plus
    /// DISPATCH_INFO_ALWAYS_VALID (bit 10) except on GC 9.4.2 (gfx90a), as the reference does.
    pub fn default_debug_prop(self) -> u64 {
        const WATCH_MASK: u64 = 6 | (29 << 4);
        match self {
            GfxTarget::Gfx908 | GfxTarget::Gfx90a => WATCH_MASK,
            _ => WATCH_MASK | (1 << 10),
        }
    }
}

impl fmt::Display for GfxTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_round_trip() {
        for arch in Arch::ALL {
            assert_eq!(Arch::from_name(arch.name()), Some(arch));
        }
        assert_eq!(Arch::from_name("CDNA2"), None);
        assert_eq!(Arch::from_name("cdna6"), None);
    }

    #[test]
    fn only_cdna2_to_4_run() {
        let runnable: Vec<_> = Arch::ALL.into_iter().filter(|a| a.is_runnable()).collect();
        assert_eq!(runnable, vec![Arch::Cdna2, Arch::Cdna3, Arch::Cdna4]);
    }

    #[test]
    fn versions_map_to_names_and_families() {
        let t = GfxTarget::from_version(90010).unwrap();
        assert_eq!((t.name(), t.arch()), ("gfx90a", Arch::Cdna2));
        let t = GfxTarget::from_version(90402).unwrap();
        assert_eq!((t.name(), t.arch()), ("gfx942", Arch::Cdna3));
        let t = GfxTarget::from_version(90500).unwrap();
        assert_eq!((t.name(), t.arch()), ("gfx950", Arch::Cdna4));
        assert_eq!(GfxTarget::from_version(90008).unwrap().arch(), Arch::Cdna1);
        assert_eq!(GfxTarget::from_version(90011), None);
        assert_eq!(GfxTarget::from_version(0), None);
    }

    #[test]
    fn default_debug_prop_matches_the_reference_cdna4_config() {
        // gfx950_cdna4_kmd.json carries debug_prop 1494.
        assert_eq!(GfxTarget::Gfx950.default_debug_prop(), 1494);
        assert_eq!(GfxTarget::Gfx90a.default_debug_prop(), 1494 - 1024);
    }
}
