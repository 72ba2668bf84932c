//! The PM4 subset the command processor executes from AQL vendor packets.
//!
//! ROCR 5.2 sends one kind: after loading a code object it queues an
//! INDIRECT_BUFFER pointing at an ACQUIRE_MEM (invalidate I$/K$/L2). The
//! simulator's caches are always coherent, so ACQUIRE_MEM completes at once;
//! WRITE_DATA to memory and NOP are also understood. Anything else is
//! refused (the queue reports an invalid vendor packet) rather than ignored.

use crate::gpu::memory::{GpuFault, GpuMem};

/// PM4 type-3 opcodes.
pub mod opcode {
    pub const NOP: u8 = 0x10;
    pub const WRITE_DATA: u8 = 0x37;
    pub const INDIRECT_BUFFER: u8 = 0x3f;
    pub const ACQUIRE_MEM: u8 = 0x58;
}

/// Longest indirect buffer we follow (dwords).
const MAX_IB_DWORDS: u32 = 1 << 16;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Pm4Error {
    #[error("PM4 packet header {0:#010x} is not a type-3 packet")]
    NotType3(u32),
    #[error("PM4 opcode {0:#04x} is not supported")]
    Unsupported(u8),
    #[error("PM4 packet runs past the end of its buffer")]
    Truncated,
    #[error("invalid INDIRECT_BUFFER command {0:08x?}")]
    BadIndirectBuffer([u32; 4]),
    #[error(transparent)]
    Fault(#[from] GpuFault),
}

/// Parses the `ib_jump_cmd` of an AQL PM4 vendor packet: returns the IB's
/// address and length in dwords.
pub fn indirect_buffer(cmd: [u32; 4]) -> Result<(u64, u32), Pm4Error> {
    let header = cmd[0];
    let valid = cmd[3] & (1 << 23) != 0;
    let dwords = cmd[3] & 0xfffff;
    if header >> 30 != 3 || ((header >> 8) & 0xff) as u8 != opcode::INDIRECT_BUFFER || !valid {
        return Err(Pm4Error::BadIndirectBuffer(cmd));
    }
    if dwords == 0 || dwords > MAX_IB_DWORDS {
        return Err(Pm4Error::BadIndirectBuffer(cmd));
    }
    let addr = (cmd[1] as u64 & !3) | ((cmd[2] as u64 & 0xffff) << 32);
    Ok((addr, dwords))
}

/// Executes a PM4 command stream.
pub fn execute(mem: &GpuMem<'_>, stream: &[u32]) -> Result<(), Pm4Error> {
    let mut i = 0;
    while i < stream.len() {
        let h = stream[i];
        if h >> 30 != 3 {
            return Err(Pm4Error::NotType3(h));
        }
        let op = ((h >> 8) & 0xff) as u8;
        let body_len = ((h >> 16) & 0x3fff) as usize + 1;
        let body = stream.get(i + 1..i + 1 + body_len).ok_or(Pm4Error::Truncated)?;
        match op {
            opcode::NOP | opcode::ACQUIRE_MEM => {}
            opcode::WRITE_DATA => write_data(mem, body)?,
            other => return Err(Pm4Error::Unsupported(other)),
        }
        i += 1 + body_len;
    }
    Ok(())
}

/// WRITE_DATA with destination "memory" (dst_sel 5) writes the data dwords.
fn write_data(mem: &GpuMem<'_>, body: &[u32]) -> Result<(), Pm4Error> {
    let [control, lo, hi, data @ ..] = body else { return Err(Pm4Error::Truncated) };
    let dst_sel = (control >> 8) & 0xf;
    if dst_sel != 5 {
        return Err(Pm4Error::Unsupported(opcode::WRITE_DATA));
    }
    let addr = (*lo as u64 & !3) | ((*hi as u64) << 32);
    for (k, d) in data.iter().enumerate() {
        mem.write::<u32>(addr + 4 * k as u64, *d)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::memory::{GpuVm, VmRange};

    #[test]
    fn rocr_code_load_invalidation_is_understood() {
        // The exact packet ROCR 5.2 sends after loading a code object.
        let (addr, n) = indirect_buffer([0xc002_3f00, 0x1000, 0, 7 | (1 << 23)]).unwrap();
        assert_eq!((addr, n), (0x1000, 7));
        let vm = GpuVm::new();
        execute(&GpuMem::new(&vm), &[0xc005_5800, 0x2884_0000, 0xffff_ffff, 0xff, 0, 0, 0]).unwrap();
    }

    #[test]
    fn invalid_buffers_and_opcodes_are_refused() {
        assert!(indirect_buffer([0xc002_3f00, 0x1000, 0, 7]).is_err(), "valid bit clear");
        assert!(indirect_buffer([0xc002_1000, 0x1000, 0, 7 | (1 << 23)]).is_err(), "not an IB");
        let vm = GpuVm::new();
        let mem = GpuMem::new(&vm);
        assert_eq!(execute(&mem, &[0xc000_4900, 0]), Err(Pm4Error::Unsupported(0x49)));
        assert_eq!(execute(&mem, &[0xc005_5800, 0]), Err(Pm4Error::Truncated));
        assert_eq!(execute(&mem, &[0x8000_0000]), Err(Pm4Error::NotType3(0x8000_0000)));
    }

    #[test]
    fn write_data_to_memory() {
        let mut buf = vec![0u32; 16];
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x4000, len: 64, host: buf.as_mut_ptr() as usize, writable: true, handle: 1 }).unwrap();
        let mem = GpuMem::new(&vm);
        execute(&mem, &[0xc004_3700, 5 << 8, 0x4008, 0, 0xaa, 0xbb]).unwrap();
        assert_eq!(&buf[2..4], &[0xaa, 0xbb]);
    }
}
