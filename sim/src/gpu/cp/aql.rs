//! AQL packets (HSA 1.2 §2.9 and AMD's vendor formats): 64-byte records in a
//! queue's ring. Pure decoding of bytes the application wrote; nothing here
//! trusts them.

use bytemuck::{Pod, Zeroable};

/// Every AQL packet is 64 bytes.
pub const PACKET_BYTES: u64 = 64;

/// `hsa_packet_type_t`.
pub mod packet_type {
    pub const VENDOR_SPECIFIC: u8 = 0;
    pub const INVALID: u8 = 1;
    pub const KERNEL_DISPATCH: u8 = 2;
    pub const BARRIER_AND: u8 = 3;
    pub const AGENT_DISPATCH: u8 = 4;
    pub const BARRIER_OR: u8 = 5;
}

/// The header value a consumed slot is left with.
pub const INVALID_HEADER: u16 = packet_type::INVALID as u16;

/// AMD vendor packet formats (`amd_aql_format_t` in `ven_hdr`).
pub mod vendor_format {
    /// A PM4 indirect buffer (ROCR's cache invalidation after code loads).
    pub const PM4_IB: u16 = 1;
    /// Wait until `(signal & mask) <cond> value` (hsa_amd barrier-value).
    pub const BARRIER_VALUE: u16 = 2;
}

/// The 16-bit AQL packet header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header(pub u16);

impl Header {
    pub fn packet_type(self) -> u8 {
        (self.0 & 0xff) as u8
    }
    /// The barrier bit: the packet waits for all earlier packets of the queue.
    pub fn barrier(self) -> bool {
        self.0 & (1 << 8) != 0
    }
    /// Acquire fence scope (0 none, 1 agent, 2 system).
    pub fn acquire_scope(self) -> u8 {
        ((self.0 >> 9) & 3) as u8
    }
    /// Release fence scope.
    pub fn release_scope(self) -> u8 {
        ((self.0 >> 11) & 3) as u8
    }
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct KernelDispatch {
    pub header: u16,
    /// Bits 0-1: number of grid dimensions.
    pub setup: u16,
    pub workgroup_size: [u16; 3],
    pub reserved0: u16,
    pub grid_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: u64,
}
const _: () = assert!(size_of::<KernelDispatch>() == 64);

impl KernelDispatch {
    /// Number of dimensions (1..=3 when valid).
    pub fn dimensions(&self) -> u16 {
        self.setup & 3
    }
}

/// `hsa_barrier_and_packet_t` / `hsa_barrier_or_packet_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Barrier {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}
const _: () = assert!(size_of::<Barrier>() == 64);

/// `amd_aql_pm4_ib_t`: a vendor packet carrying a PM4 indirect-buffer command.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Pm4Ib {
    pub header: u16,
    pub ven_hdr: u16,
    /// The PM4 INDIRECT_BUFFER packet: header, address lo/hi, size/flags.
    pub ib_jump_cmd: [u32; 4],
    pub dw_cnt_remain: u32,
    pub reserved: [u32; 8],
    pub completion_signal: u64,
}
const _: () = assert!(size_of::<Pm4Ib>() == 64);

/// `amd_barrier_value_packet_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BarrierValue {
    pub header: u16,
    pub ven_hdr: u16,
    pub reserved0: u32,
    pub signal: u64,
    pub value: i64,
    pub mask: i64,
    /// `hsa_signal_condition_t`: 0 EQ, 1 NE, 2 LT, 3 GTE.
    pub cond: u32,
    pub reserved1: u32,
    pub reserved2: u64,
    pub reserved3: u64,
    pub completion_signal: u64,
}
const _: () = assert!(size_of::<BarrierValue>() == 64);

impl BarrierValue {
    /// Whether a signal value satisfies the packet's condition.
    pub fn satisfied(&self, signal_value: i64) -> Option<bool> {
        let v = signal_value & self.mask;
        Some(match self.cond {
            0 => v == self.value,
            1 => v != self.value,
            2 => v < self.value,
            3 => v >= self.value,
            _ => return None,
        })
    }
}

/// The offset of `completion_signal` in every packet type.
pub const COMPLETION_SIGNAL_OFFSET: u64 = 56;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        // What HIP uses for a kernel launch: barrier, acquire system, release agent.
        let h = Header(0x0d02);
        assert_eq!(h.packet_type(), packet_type::KERNEL_DISPATCH);
        assert!(h.barrier());
        assert_eq!((h.acquire_scope(), h.release_scope()), (2, 1));
        assert_eq!(Header(0x1503).packet_type(), packet_type::BARRIER_AND);
    }

    #[test]
    fn barrier_value_conditions() {
        let p = BarrierValue { value: 0, mask: -1, cond: 0, ..Default::default() };
        assert_eq!(p.satisfied(0), Some(true));
        assert_eq!(p.satisfied(1), Some(false));
        let p = BarrierValue { value: 4, mask: 0xff, cond: 3, ..Default::default() };
        assert_eq!(p.satisfied(0x104), Some(true));
        assert_eq!(p.satisfied(0x103), Some(false));
        assert_eq!(BarrierValue { cond: 9, ..p }.satisfied(0), None);
    }
}
