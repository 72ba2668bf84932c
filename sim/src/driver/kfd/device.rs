//! Driver-level facts about a simulated GPU that the config does not state.

use crate::config::Device;

/// GB_ADDR_CONFIG of gfx90a (amdgpu's `ALDEBARAN_GB_ADDR_CONFIG_GOLDEN`); the
/// same golden value serves gfx94x/gfx950 here, as nothing in ROCm 5.2
/// decodes it beyond addrlib's sanity checks.
pub const GB_ADDR_CONFIG_GFX9: u32 = 0x2a11_4042;

/// GB_ADDR_CONFIG as GET_TILE_CONFIG and READ_MMR_REG report it.
pub fn gb_addr_config(_gpu: &Device) -> u32 {
    GB_ADDR_CONFIG_GFX9
}
