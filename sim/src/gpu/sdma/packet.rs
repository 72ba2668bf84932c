//! SDMA (gfx9 "SDMA 4") packets, decoded from the dwords of a ring. Pure:
//! the engine ([`super::service`]) executes what this returns.
//!
//! Layouts follow ROCR 5.2's `sdma_registers.h`; sizes in the packets are
//! "count minus one" (ROCR's `SizeToCountOffset = -1` on gfx9).

/// Width of the byte counts of COPY_LINEAR and CONST_FILL. Every GPU the simulator models
/// (gfx90a, gfx94x, gfx950) has SDMA 4.4, whose counts are 30 bits: ROCR 6.x puts up to
/// 0x3fffffff bytes in one copy packet on them (`copy_size_override`; the amdgpu kernel
/// driver's `copy_max_bytes`/`fill_max_bytes` are 1 << 30 too). The 22-bit field of older
/// SDMA 4 would cut a 256 MiB copy to its first 4 MiB. ROCR 5.2 splits copies at 4 MiB
/// and leaves the upper bits zero, so both read the same here.
const COUNT_MASK: u32 = 0x3fff_ffff;

/// SDMA opcodes.
pub mod op {
    pub const NOP: u8 = 0;
    pub const COPY: u8 = 1;
    pub const FENCE: u8 = 5;
    pub const TRAP: u8 = 6;
    pub const POLL_REGMEM: u8 = 8;
    pub const ATOMIC: u8 = 10;
    pub const CONST_FILL: u8 = 11;
    pub const TIMESTAMP: u8 = 13;
    pub const GCR: u8 = 17;
}

/// Sub-opcodes.
pub mod sub_op {
    pub const COPY_LINEAR: u8 = 0;
    pub const COPY_LINEAR_RECT: u8 = 4;
    pub const TIMESTAMP_GET_GLOBAL: u8 = 2;
}

/// ATOMIC operation codes we execute.
pub const ATOMIC_ADD64: u8 = 47;

/// One side of a rectangular copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RectSide {
    pub base: u64,
    /// Offsets in elements.
    pub offset: [u32; 3],
    /// Row pitch and slice pitch in elements.
    pub pitch: u64,
    pub slice_pitch: u64,
}

/// A decoded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet {
    Nop,
    CopyLinear {
        src: u64,
        dst: u64,
        bytes: u64,
    },
    CopyRect {
        element_bytes: u64,
        src: RectSide,
        dst: RectSide,
        extent: [u64; 3],
    },
    Fence {
        addr: u64,
        data: u32,
    },
    Trap {
        context: u32,
    },
    /// Wait until `(mem32 & mask) <func> value`; `memory: false` polls a
    /// register (ROCR's HDP flush), which completes at once.
    Poll {
        memory: bool,
        addr: u64,
        value: u32,
        mask: u32,
        func: u8,
    },
    Atomic {
        op: u8,
        addr: u64,
        src: u64,
        cmp: u64,
    },
    ConstFill {
        dst: u64,
        data: u32,
        bytes: u64,
    },
    Timestamp {
        addr: u64,
    },
    /// Cache control: a no-op for the simulator's coherent memory.
    Gcr,
}

/// Why a packet cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdmaError {
    #[error("SDMA packet needs {needed} dwords, {available} are available")]
    Truncated { needed: usize, available: usize },
    #[error("SDMA opcode {op} (sub-op {sub_op}) is not supported")]
    Unsupported { op: u8, sub_op: u8 },
    #[error("SDMA atomic operation {0} is not supported")]
    UnsupportedAtomic(u8),
}

fn addr(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

fn need(dw: &[u32], n: usize) -> Result<(), SdmaError> {
    if dw.len() < n {
        Err(SdmaError::Truncated { needed: n, available: dw.len() })
    } else {
        Ok(())
    }
}

/// Decodes the packet at the start of `dw`, returning it and its length in
/// dwords.
pub fn decode(dw: &[u32]) -> Result<(Packet, usize), SdmaError> {
    need(dw, 1)?;
    let h = dw[0];
    let opcode = (h & 0xff) as u8;
    let sub = ((h >> 8) & 0xff) as u8;
    match (opcode, sub) {
        (op::NOP, _) => Ok((Packet::Nop, 1 + ((h >> 16) & 0x3fff) as usize)),
        (op::COPY, sub_op::COPY_LINEAR) => {
            need(dw, 7)?;
            let bytes = (dw[1] & COUNT_MASK) as u64 + 1;
            Ok((Packet::CopyLinear { src: addr(dw[3], dw[4]), dst: addr(dw[5], dw[6]), bytes }, 7))
        }
        (op::COPY, sub_op::COPY_LINEAR_RECT) => {
            need(dw, 13)?;
            let element_bytes = 1u64 << ((h >> 29) & 7);
            let side = |base: u64, p1: u32, p2: u32, p3: u32| RectSide {
                base,
                offset: [p1 & 0x3fff, (p1 >> 16) & 0x3fff, p2 & 0x7ff],
                pitch: (p2 >> 13) as u64 + 1,
                slice_pitch: (p3 & 0x0fff_ffff) as u64 + 1,
            };
            let src = side(addr(dw[1], dw[2]), dw[3], dw[4], dw[5]);
            let dst = side(addr(dw[6], dw[7]), dw[8], dw[9], dw[10]);
            let extent =
                [(dw[11] & 0x3fff) as u64 + 1, ((dw[11] >> 16) & 0x3fff) as u64 + 1, (dw[12] & 0x7ff) as u64 + 1];
            Ok((Packet::CopyRect { element_bytes, src, dst, extent }, 13))
        }
        (op::FENCE, _) => {
            need(dw, 4)?;
            Ok((Packet::Fence { addr: addr(dw[1], dw[2]), data: dw[3] }, 4))
        }
        (op::TRAP, _) => {
            need(dw, 2)?;
            Ok((Packet::Trap { context: dw[1] & 0x0fff_ffff }, 2))
        }
        (op::POLL_REGMEM, _) => {
            need(dw, 6)?;
            Ok((
                Packet::Poll {
                    memory: h >> 31 != 0,
                    func: ((h >> 28) & 7) as u8,
                    addr: addr(dw[1], dw[2]),
                    value: dw[3],
                    mask: dw[4],
                },
                6,
            ))
        }
        (op::ATOMIC, _) => {
            need(dw, 8)?;
            let atomic_op = (h >> 25) as u8;
            if atomic_op != ATOMIC_ADD64 {
                return Err(SdmaError::UnsupportedAtomic(atomic_op));
            }
            Ok((
                Packet::Atomic {
                    op: atomic_op,
                    addr: addr(dw[1], dw[2]),
                    src: addr(dw[3], dw[4]),
                    cmp: addr(dw[5], dw[6]),
                },
                8,
            ))
        }
        (op::CONST_FILL, _) => {
            need(dw, 5)?;
            // The count is in bytes, less one fill unit (`fillsize`: 1 << n bytes).
            let unit = 1u64 << ((h >> 30) & 3);
            let bytes = (dw[4] & COUNT_MASK) as u64 + unit;
            Ok((Packet::ConstFill { dst: addr(dw[1], dw[2]), data: dw[3], bytes }, 5))
        }
        (op::TIMESTAMP, sub_op::TIMESTAMP_GET_GLOBAL) => {
            need(dw, 3)?;
            Ok((Packet::Timestamp { addr: addr(dw[1], dw[2]) }, 3))
        }
        (op::GCR, _) => {
            need(dw, 5)?;
            Ok((Packet::Gcr, 5))
        }
        (op, sub_op) => Err(SdmaError::Unsupported { op, sub_op }),
    }
}

/// Whether a polled value satisfies `func` (SDMA's compare functions).
pub fn poll_satisfied(func: u8, actual: u32, mask: u32, reference: u32) -> bool {
    let v = actual & mask;
    match func {
        0 => true,
        1 => v < reference,
        2 => v <= reference,
        3 => v == reference,
        4 => v != reference,
        5 => v >= reference,
        6 => v > reference,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocr_copy_and_atomic_decrement() {
        // COPY_LINEAR of 4194272 bytes, as ROCR splits a 4 MiB hipMemcpy.
        let copy = [0x0000_0001, 4_194_271, 0, 0x1000, 0x7f00, 0x2000, 0x7e00];
        assert_eq!(
            decode(&copy).unwrap(),
            (Packet::CopyLinear { src: 0x7f00_0000_1000, dst: 0x7e00_0000_2000, bytes: 4_194_272 }, 7)
        );
        // ATOMIC ADD64 of -1 on a signal value.
        let dec = [0x5e00_000a, 0x1008, 0x7f, 0xffff_ffff, 0xffff_ffff, 0, 0, 0];
        assert_eq!(decode(&dec).unwrap(), (Packet::Atomic { op: 47, addr: 0x7f_0000_1008, src: u64::MAX, cmp: 0 }, 8));
    }

    #[test]
    fn counts_are_thirty_bits_as_on_sdma_4_4() {
        // ROCR 6.x on gfx90a: a 256 MiB hipMemcpy is one COPY_LINEAR (count 0x0fffffff).
        let copy = [0x0000_0001, 0x0fff_ffff, 0, 0x1000, 0x7f00, 0x2000, 0x7e00];
        let (p, _) = decode(&copy).unwrap();
        assert_eq!(p, Packet::CopyLinear { src: 0x7f00_0000_1000, dst: 0x7e00_0000_2000, bytes: 256 << 20 });
        // The largest count; bits 30 and 31 are not part of it.
        let copy = [0x0000_0001, 0xffff_ffff, 0, 0, 0, 0, 0];
        assert!(matches!(decode(&copy).unwrap().0, Packet::CopyLinear { bytes: 0x4000_0000, .. }));
        // A 64 MiB fill of dwords (fillsize 2): count = bytes - 4.
        let (p, _) = decode(&[0x8000_000b, 0x100, 0, 0xabcd, (64 << 20) - 4]).unwrap();
        assert_eq!(p, Packet::ConstFill { dst: 0x100, data: 0xabcd, bytes: 64 << 20 });
    }

    #[test]
    fn hdp_flush_is_a_register_poll() {
        let (p, n) = decode(&[0x8, 0, 0x8000_0000, 0, 0, 0]).unwrap();
        assert_eq!(n, 6);
        assert!(matches!(p, Packet::Poll { memory: false, func: 0, .. }));
        // ROCR's dependency wait: memory poll, func 3 (==), value 0.
        let (p, _) = decode(&[0x8 | (1 << 31) | (3 << 28), 0x40, 0, 0, 0xffff_ffff, 0x0fff_0004]).unwrap();
        assert_eq!(p, Packet::Poll { memory: true, func: 3, addr: 0x40, value: 0, mask: 0xffff_ffff });
    }

    #[test]
    fn const_fill_counts_in_bytes_less_one_unit() {
        // ROCR fills n dwords with count (n - 1) * 4 and fillsize 2.
        let (p, _) = decode(&[0x8000_000b, 0x100, 0, 0xabcd, 3 * 4]).unwrap();
        assert_eq!(p, Packet::ConstFill { dst: 0x100, data: 0xabcd, bytes: 16 });
    }

    #[test]
    fn nop_length_and_rect_fields() {
        assert_eq!(decode(&[0]).unwrap(), (Packet::Nop, 1));
        assert_eq!(decode(&[2 << 16]).unwrap().1, 3);
        // Element 4 bytes (log2 2), src x offset 1, pitch 100 elements, 16x8x1.
        let rect = [0x4000_0401, 0x1000, 0, 1, (99 << 13), 0, 0x2000, 0, 0, (199 << 13), 0, 15 | (7 << 16), 0];
        let (p, n) = decode(&rect).unwrap();
        assert_eq!(n, 13);
        let Packet::CopyRect { element_bytes, src, dst, extent } = p else { panic!() };
        assert_eq!((element_bytes, src.offset, src.pitch, dst.pitch, extent), (4, [1, 0, 0], 100, 200, [16, 8, 1]));
    }

    #[test]
    fn truncated_and_unknown_packets_are_errors() {
        assert_eq!(decode(&[1, 0]), Err(SdmaError::Truncated { needed: 7, available: 2 }));
        assert_eq!(decode(&[0x22]), Err(SdmaError::Unsupported { op: 0x22, sub_op: 0 }));
        assert_eq!(decode(&[0x0200_000a, 0, 0, 0, 0, 0, 0, 0]), Err(SdmaError::UnsupportedAtomic(1)));
        assert!(decode(&[]).is_err());
    }

    #[test]
    fn poll_functions() {
        assert!(poll_satisfied(3, 0x100, 0xff, 0));
        assert!(!poll_satisfied(3, 1, 0xff, 0));
        assert!(poll_satisfied(4, 1, 0xff, 0));
        assert!(poll_satisfied(5, 7, u32::MAX, 7));
        assert!(!poll_satisfied(9, 0, 0, 0));
    }
}
