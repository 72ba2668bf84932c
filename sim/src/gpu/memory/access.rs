//! How the simulated GPU (command processor, SDMA engines, waves) reads and
//! writes a process's memory: every access goes through the process's
//! [`GpuVm`] and either completes or reports a [`GpuFault`].
//!
//! This is the one place where the simulator dereferences host addresses
//! behind GPU VAs. Translation checks that the whole access lies inside one
//! live mapping, so the unsafe copies below stay inside memory the process
//! mapped for the GPU (its memfd arena, or in local mode its own USERPTR
//! pages).

use super::{GpuFault, GpuVm};
use bytemuck::Pod;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// A view of one process's GPU address space for the duration of an
/// operation (a packet, a copy, a wave's step).
#[derive(Clone, Copy, Debug)]
pub struct GpuMem<'a> {
    vm: &'a GpuVm,
}

impl<'a> GpuMem<'a> {
    pub fn new(vm: &'a GpuVm) -> Self {
        GpuMem { vm }
    }

    pub fn vm(&self) -> &'a GpuVm {
        self.vm
    }

    /// Reads a `T` at `va` (any alignment).
    pub fn read<T: Pod>(&self, va: u64) -> Result<T, GpuFault> {
        let host = self.vm.translate(va, size_of::<T>() as u64, false)?;
        // SAFETY: `translate` checked that [va, va + size_of::<T>()) lies in a
        // live mapping; T is Pod so any bytes are a valid T.
        Ok(unsafe { std::ptr::read_unaligned(host as *const T) })
    }

    /// Writes a `T` at `va` (any alignment).
    pub fn write<T: Pod>(&self, va: u64, value: T) -> Result<(), GpuFault> {
        let host = self.vm.translate(va, size_of::<T>() as u64, true)?;
        // SAFETY: as in `read`, for a writable mapping.
        unsafe { std::ptr::write_unaligned(host as *mut T, value) };
        Ok(())
    }

    /// Calls `f` with each (host address, length) piece of `[va, va + len)`,
    /// which may span several adjacent mappings.
    fn for_each_piece(
        &self,
        va: u64,
        len: u64,
        write: bool,
        mut f: impl FnMut(usize, usize, usize),
    ) -> Result<(), GpuFault> {
        let mut done = 0u64;
        while done < len {
            let at = va.checked_add(done).ok_or(GpuFault { va, write, not_present: true })?;
            let range = self.vm.lookup(at).ok_or(GpuFault { va: at, write, not_present: true })?;
            if write && !range.writable {
                return Err(GpuFault { va: at, write, not_present: false });
            }
            let piece = (range.end() - at).min(len - done);
            f(range.host_addr(at), done as usize, piece as usize);
            done += piece;
        }
        Ok(())
    }

    /// Copies `out.len()` bytes from `va`.
    pub fn read_bytes(&self, va: u64, out: &mut [u8]) -> Result<(), GpuFault> {
        let dst = out.as_mut_ptr();
        self.for_each_piece(va, out.len() as u64, false, |host, at, n| {
            // SAFETY: `host..host+n` is inside a live mapping (checked by
            // for_each_piece) and `dst+at..dst+at+n` inside `out`.
            unsafe { std::ptr::copy(host as *const u8, dst.add(at), n) }
        })
    }

    /// Copies `data` to `va`.
    pub fn write_bytes(&self, va: u64, data: &[u8]) -> Result<(), GpuFault> {
        let src = data.as_ptr();
        self.for_each_piece(va, data.len() as u64, true, |host, at, n| {
            // SAFETY: as in `read_bytes`, for a writable mapping.
            unsafe { std::ptr::copy(src.add(at), host as *mut u8, n) }
        })
    }

    /// Copies `len` bytes from `src` to `dst` within this address space.
    /// Large copies go through a bounce buffer piece by piece, so the two
    /// ranges may span different numbers of mappings.
    pub fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), GpuFault> {
        // Fast path: both ranges inside single mappings.
        if let (Ok(s), Ok(d)) = (self.vm.translate(src, len, false), self.vm.translate(dst, len, true)) {
            // SAFETY: both ranges lie inside live mappings (checked); `copy`
            // tolerates overlap.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, len as usize) };
            return Ok(());
        }
        let mut buf = vec![0u8; len.min(1 << 20) as usize];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(buf.len() as u64) as usize;
            self.read_bytes(src + done, &mut buf[..n])?;
            self.write_bytes(dst + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// Fills `len` bytes at `va` with the little-endian repetition of `value`.
    pub fn fill_u32(&self, va: u64, value: u32, len: u64) -> Result<(), GpuFault> {
        let pattern = value.to_le_bytes();
        self.for_each_piece(va, len, true, |host, at, n| {
            for i in 0..n {
                // SAFETY: inside a live writable mapping (checked).
                unsafe { *(host as *mut u8).add(i) = pattern[(at + i) % 4] };
            }
        })
    }

    /// The 32-bit word at `va` as an atomic (it must be 4-byte aligned).
    pub fn atomic_u32(&self, va: u64, write: bool) -> Result<&'a AtomicU32, GpuFault> {
        if !va.is_multiple_of(4) {
            return Err(GpuFault { va, write, not_present: false });
        }
        let host = self.vm.translate(va, 4, write)?;
        // SAFETY: an aligned word inside a live mapping that outlives 'a (the
        // mapping belongs to the process whose VM snapshot we borrow); other
        // parties touch it only with word-sized or atomic accesses.
        Ok(unsafe { AtomicU32::from_ptr(host as *mut u32) })
    }

    /// The 64-bit word at `va` as an atomic (it must be 8-byte aligned).
    pub fn atomic_u64(&self, va: u64, write: bool) -> Result<&'a AtomicU64, GpuFault> {
        if !va.is_multiple_of(8) {
            return Err(GpuFault { va, write, not_present: false });
        }
        let host = self.vm.translate(va, 8, write)?;
        // SAFETY: as in `atomic_u32`.
        Ok(unsafe { AtomicU64::from_ptr(host as *mut u64) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::memory::VmRange;
    use std::sync::atomic::Ordering;

    /// Two adjacent 4 KiB mappings over one host buffer, then a hole.
    fn setup(buf: &mut [u8]) -> GpuVm {
        let host = buf.as_mut_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x10000, len: 0x1000, host, writable: true, handle: 1 }).unwrap();
        vm.map(VmRange { start: 0x11000, len: 0x1000, host: host + 0x1000, writable: true, handle: 2 }).unwrap();
        vm.map(VmRange { start: 0x20000, len: 0x1000, host: host + 0x2000, writable: false, handle: 3 }).unwrap();
        vm
    }

    #[test]
    fn reads_writes_and_spans_adjacent_mappings() {
        let mut buf = vec![0u8; 0x3000];
        let vm = setup(&mut buf);
        let mem = GpuMem::new(&vm);
        mem.write::<u64>(0x10ffc, 0x1122_3344_5566_7788).unwrap_err();
        mem.write_bytes(0x10ffc, &0x1122_3344_5566_7788u64.to_le_bytes()).unwrap();
        let mut out = [0u8; 8];
        mem.read_bytes(0x10ffc, &mut out).unwrap();
        assert_eq!(u64::from_le_bytes(out), 0x1122_3344_5566_7788);
        assert_eq!(mem.read::<u32>(0x11000).unwrap(), 0x1122_3344);
        assert_eq!(buf[0x1000], 0x44);
    }

    #[test]
    fn faults_carry_the_failing_address() {
        let mut buf = vec![0u8; 0x3000];
        let vm = setup(&mut buf);
        let mem = GpuMem::new(&vm);
        let f = mem.read_bytes(0x11ff0, &mut [0u8; 32]).unwrap_err();
        assert_eq!((f.va, f.not_present), (0x12000, true));
        let f = mem.write::<u32>(0x20000, 1).unwrap_err();
        assert!(!f.not_present && f.write);
        assert!(mem.atomic_u32(0x10002, false).is_err());
    }

    #[test]
    fn copy_fill_and_atomics() {
        let mut buf = vec![0u8; 0x3000];
        let vm = setup(&mut buf);
        let mem = GpuMem::new(&vm);
        mem.fill_u32(0x10000, 0xdead_beef, 0x2000).unwrap();
        assert_eq!(mem.read::<u32>(0x11ffc).unwrap(), 0xdead_beef);
        mem.write::<u32>(0x10010, 7).unwrap();
        mem.copy(0x11800, 0x10010, 4).unwrap();
        assert_eq!(mem.read::<u32>(0x11800).unwrap(), 7);
        let a = mem.atomic_u64(0x10008, true).unwrap();
        a.store(5, Ordering::SeqCst);
        assert_eq!(a.fetch_sub(1, Ordering::SeqCst), 5);
        assert_eq!(mem.read::<u64>(0x10008).unwrap(), 4);
        assert!(mem.copy(0x20000, 0x10000, 4).is_err(), "read-only destination");
    }
}
