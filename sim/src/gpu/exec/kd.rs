//! The kernel descriptor (AMDHSA code object v3+, 64 bytes) and the parts of
//! ROCR's legacy 256-byte `amd_kernel_code_t` that share its layout (ROCR's
//! own blit kernels use the latter; bytes 0..63 of both carry the fields the
//! command processor reads). Pure decoding of bytes from GPU memory.

/// The fields of a kernel descriptor the command processor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Byte offset of the first instruction from the descriptor.
    pub entry_offset: i64,
    pub rsrc1: u32,
    pub rsrc2: u32,
    pub rsrc3: u32,
    pub properties: u16,
}

/// Bits of `kernel_code_properties`: which user SGPRs are set up, in order.
pub mod properties {
    pub const PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const DISPATCH_PTR: u16 = 1 << 1;
    pub const QUEUE_PTR: u16 = 1 << 2;
    pub const KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const DISPATCH_ID: u16 = 1 << 4;
    pub const FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const WAVEFRONT_SIZE32: u16 = 1 << 10;
}

impl KernelDescriptor {
    pub const BYTES: usize = 64;

    /// Decodes the first 64 bytes at the kernel object.
    pub fn parse(b: &[u8; 64]) -> KernelDescriptor {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            entry_offset: i64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            rsrc3: u32_at(44),
            rsrc1: u32_at(48),
            rsrc2: u32_at(52),
            properties: u16::from_le_bytes([b[56], b[57]]),
        }
    }

    /// `COMPUTE_PGM_RSRC1.GRANULATED_WORKITEM_VGPR_COUNT`: VGPRs per lane
    /// (on gfx90a the unified VGPR+AGPR file, in granules of 8).
    pub fn vgprs(&self, granule: u32) -> u32 {
        ((self.rsrc1 & 0x3f) + 1) * granule
    }

    /// FP rounding (bits 12..15) and denormal (16..19) modes, placed as the
    /// MODE register holds them (bits 0..7).
    pub fn float_mode(&self) -> u32 {
        (self.rsrc1 >> 12) & 0xff
    }

    /// `ENABLE_DX10_CLAMP`.
    pub fn dx10_clamp(&self) -> bool {
        self.rsrc1 & (1 << 21) != 0
    }

    /// `FP16_OVFL` (COMPUTE_PGM_RSRC1 bit 26, GFX9+): float results that overflow a 16-bit or
    /// smaller format saturate instead of becoming infinity/NaN (MODE bit 23).
    pub fn fp16_ovfl(&self) -> bool {
        self.rsrc1 & (1 << 26) != 0
    }

    /// `ENABLE_IEEE_MODE`.
    pub fn ieee_mode(&self) -> bool {
        self.rsrc1 & (1 << 23) != 0
    }

    /// `COMPUTE_PGM_RSRC2.ENABLE_PRIVATE_SEGMENT` (scratch): the private
    /// segment wave offset SGPR follows the workgroup SGPRs.
    pub fn private_segment(&self) -> bool {
        self.rsrc2 & 1 != 0
    }

    /// `USER_SGPR_COUNT`: where the system SGPRs start.
    pub fn user_sgpr_count(&self) -> u32 {
        (self.rsrc2 >> 1) & 0x1f
    }

    /// `ENABLE_SGPR_WORKGROUP_ID_{X,Y,Z}`.
    pub fn workgroup_id_enabled(&self) -> [bool; 3] {
        [self.rsrc2 & (1 << 7) != 0, self.rsrc2 & (1 << 8) != 0, self.rsrc2 & (1 << 9) != 0]
    }

    /// `ENABLE_SGPR_WORKGROUP_INFO`.
    pub fn workgroup_info(&self) -> bool {
        self.rsrc2 & (1 << 10) != 0
    }

    /// `ENABLE_VGPR_WORKITEM_ID`: 0 = X, 1 = X and Y, 2 = X, Y and Z.
    pub fn workitem_id_dims(&self) -> u32 {
        (self.rsrc2 >> 11) & 3
    }

    /// `COMPUTE_PGM_RSRC3.ACCUM_OFFSET` (gfx90a+): the first AGPR's index in
    /// the unified VGPR file, `(value + 1) * 4`.
    pub fn accum_offset(&self) -> u32 {
        ((self.rsrc3 & 0x3f) + 1) * 4
    }

    pub fn has(&self, bit: u16) -> bool {
        self.properties & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kd(rsrc1: u32, rsrc2: u32, rsrc3: u32, props: u16, entry: i64) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[8..12].copy_from_slice(&28u32.to_le_bytes());
        b[16..24].copy_from_slice(&entry.to_le_bytes());
        b[44..48].copy_from_slice(&rsrc3.to_le_bytes());
        b[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        b[52..56].copy_from_slice(&rsrc2.to_le_bytes());
        b[56..58].copy_from_slice(&props.to_le_bytes());
        b
    }

    #[test]
    fn hip_vector_add_descriptor() {
        // The values measured on the real vector-add code object (contract §9).
        let d = KernelDescriptor::parse(&kd(0x00af_0040, 0x90, 1, 0x000b, 0x1080));
        assert_eq!(d.kernarg_size, 28);
        assert_eq!(d.entry_offset, 0x1080);
        assert_eq!(d.user_sgpr_count(), 8);
        assert_eq!(d.workgroup_id_enabled(), [true, false, false]);
        assert!(!d.private_segment());
        assert!(d.has(properties::PRIVATE_SEGMENT_BUFFER) && d.has(properties::DISPATCH_PTR));
        assert!(d.has(properties::KERNARG_SEGMENT_PTR) && !d.has(properties::QUEUE_PTR));
        assert_eq!(d.vgprs(8), 8);
        assert_eq!(d.accum_offset(), 8);
        assert!(d.ieee_mode() && d.dx10_clamp());
        assert_eq!(d.float_mode(), 0xf0, "denormals on for all types, round to nearest");
        assert!(!d.fp16_ovfl());
        let d = KernelDescriptor::parse(&kd(0x04af_0040, 0x90, 1, 0x000b, 0x1080));
        assert!(d.fp16_ovfl(), "COMPUTE_PGM_RSRC1 bit 26");
    }

    #[test]
    fn rocr_blit_descriptor() {
        // ROCR's CopyAligned in amd_kernel_code_t: 2 user SGPRs (kernarg, TGID_X).
        let d = KernelDescriptor::parse(&kd(0x008c_00c2, 0x84, 5, 8, 0x100));
        assert_eq!(d.user_sgpr_count(), 2);
        assert_eq!(d.workgroup_id_enabled(), [true, false, false]);
        assert_eq!(d.properties, properties::KERNARG_SEGMENT_PTR);
        assert_eq!(d.accum_offset(), 24);
        assert_eq!(d.entry_offset, 0x100);
    }
}
