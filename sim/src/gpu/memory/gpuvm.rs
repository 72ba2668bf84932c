//! A process's GPU virtual address space: which GPU VA ranges are mapped, and
//! to which host memory the simulator reads and writes for them.
//!
//! Like the real GPU's per-VMID page tables, this is per KFD process: two
//! processes (daemon clients) may map the same VA to different buffers. Every
//! access the simulated GPU makes is translated here; a miss is a GPU page
//! fault, never a host crash.

use super::{Arena, LentMemory};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One mapped range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmRange {
    /// First GPU virtual address.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// The simulator's host address of `start`.
    pub host: usize,
    /// Whether the GPU may write.
    pub writable: bool,
    /// The KFD allocation handle this range belongs to.
    pub handle: u64,
}

impl VmRange {
    /// One past the last address.
    pub fn end(&self) -> u64 {
        self.start + self.len
    }

    /// Whether `[va, va + len)` lies inside this range.
    pub fn contains(&self, va: u64, len: u64) -> bool {
        va >= self.start && va.checked_add(len).is_some_and(|end| end <= self.end())
    }

    /// The host address of `va`, which must lie inside the range.
    pub fn host_addr(&self, va: u64) -> usize {
        self.host + (va - self.start) as usize
    }
}

/// Why a GPU access failed: the fields the KFD memory-exception event reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("GPU page fault at {va:#x} ({}, {})", if *.write { "write" } else { "read" }, if *.not_present { "page not present" } else { "write to read-only page" })]
pub struct GpuFault {
    pub va: u64,
    pub write: bool,
    /// No mapping (as opposed to a write to a read-only mapping).
    pub not_present: bool,
}

/// Mapping errors for the KFD (map/unmap ioctls).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VmError {
    #[error("range {start:#x}+{len:#x} overlaps an existing mapping at {existing:#x}")]
    Overlap { start: u64, len: u64, existing: u64 },
    #[error("range {start:#x}+{len:#x} is empty or wraps the address space")]
    BadRange { start: u64, len: u64 },
}

/// The mapped ranges of one process, keyed by start address.
///
/// A range over memory that is not this process's own arena — memory a client
/// lent ([`LentMemory`]) or another process's arena (an imported IPC buffer) —
/// holds that memory's mapping alive: the engines work on snapshots of this
/// map, so memory freed while a snapshot still names it is unmapped only when
/// the last snapshot goes.
#[derive(Debug, Default, Clone)]
pub struct GpuVm {
    ranges: BTreeMap<u64, VmRange>,
    /// The foreign memory behind ranges, by range start.
    kept: BTreeMap<u64, KeptMemory>,
}

/// Memory a mapped range keeps alive (see [`GpuVm`]).
#[derive(Debug, Clone)]
pub enum KeptMemory {
    /// A daemon client's lent pages.
    Lent(Arc<LentMemory>),
    /// Another process's arena, which holds a buffer this process imported.
    Arena(Arc<Arena>),
}

impl KeptMemory {
    fn contains(&self, host: usize, len: u64) -> bool {
        let (base, size) = match self {
            KeptMemory::Lent(m) => (m.host_addr(), m.len()),
            KeptMemory::Arena(a) => (a.host_addr(0), a.size()),
        };
        host >= base && host + len as usize <= base + size as usize
    }
}

impl GpuVm {
    pub fn new() -> Self {
        GpuVm::default()
    }

    /// Maps a range; it must not overlap another.
    pub fn map(&mut self, range: VmRange) -> Result<(), VmError> {
        if range.len == 0 || range.start.checked_add(range.len).is_none() {
            return Err(VmError::BadRange { start: range.start, len: range.len });
        }
        if let Some(prev) = self.ranges.range(..range.end()).next_back().map(|(_, r)| r) {
            if prev.end() > range.start {
                return Err(VmError::Overlap { start: range.start, len: range.len, existing: prev.start });
            }
        }
        self.ranges.insert(range.start, range);
        Ok(())
    }

    /// Maps a range over foreign memory, which it keeps alive while mapped (in
    /// this map and every snapshot of it). `range.host` must lie in `memory`.
    pub fn map_kept(&mut self, range: VmRange, memory: KeptMemory) -> Result<(), VmError> {
        debug_assert!(memory.contains(range.host, range.len));
        self.map(range)?;
        self.kept.insert(range.start, memory);
        Ok(())
    }

    /// Removes the range starting at `start`.
    pub fn unmap(&mut self, start: u64) -> Option<VmRange> {
        self.kept.remove(&start);
        self.ranges.remove(&start)
    }

    /// Removes every range of allocation `handle`.
    pub fn unmap_handle(&mut self, handle: u64) {
        let kept = &mut self.kept;
        self.ranges.retain(|start, r| {
            if r.handle == handle {
                kept.remove(start);
            }
            r.handle != handle
        });
    }

    /// The range containing `va`.
    pub fn lookup(&self, va: u64) -> Option<&VmRange> {
        self.ranges.range(..=va).next_back().map(|(_, r)| r).filter(|r| va < r.end())
    }

    /// Translates an access of `len` bytes at `va` to a host address. The
    /// whole access must fall inside one mapping (allocations are separate
    /// buffers; a kernel running off the end of one faults, as on hardware
    /// with guard pages between buffers).
    pub fn translate(&self, va: u64, len: u64, write: bool) -> Result<usize, GpuFault> {
        let range = self.lookup(va).filter(|r| r.contains(va, len)).ok_or(GpuFault { va, write, not_present: true })?;
        if write && !range.writable {
            return Err(GpuFault { va, write, not_present: false });
        }
        Ok(range.host_addr(va))
    }

    /// Every mapped range, in address order.
    pub fn ranges(&self) -> impl Iterator<Item = &VmRange> {
        self.ranges.values()
    }

    /// Number of mapped ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: u64, len: u64, writable: bool) -> VmRange {
        VmRange { start, len, host: 0x10_0000 + start as usize, writable, handle: start }
    }

    #[test]
    fn translates_inside_and_faults_outside() {
        let mut vm = GpuVm::new();
        vm.map(range(0x1000, 0x2000, true)).unwrap();
        assert_eq!(vm.translate(0x1000, 4, false), Ok(0x10_0000 + 0x1000));
        assert_eq!(vm.translate(0x2ffc, 4, true), Ok(0x10_0000 + 0x2ffc));
        // Straddling the end, before the start, and after the end all fault.
        assert!(vm.translate(0x2ffe, 4, false).unwrap_err().not_present);
        assert!(vm.translate(0xfff, 1, false).is_err());
        assert!(vm.translate(0x3000, 1, false).is_err());
        assert!(vm.translate(u64::MAX, 2, false).is_err());
    }

    #[test]
    fn read_only_ranges_fault_on_write() {
        let mut vm = GpuVm::new();
        vm.map(range(0x1000, 0x1000, false)).unwrap();
        assert!(vm.translate(0x1000, 4, false).is_ok());
        let fault = vm.translate(0x1004, 4, true).unwrap_err();
        assert_eq!(fault, GpuFault { va: 0x1004, write: true, not_present: false });
    }

    #[test]
    fn overlapping_maps_are_refused() {
        let mut vm = GpuVm::new();
        vm.map(range(0x2000, 0x2000, true)).unwrap();
        assert!(matches!(vm.map(range(0x3000, 0x1000, true)), Err(VmError::Overlap { .. })));
        assert!(matches!(vm.map(range(0x1000, 0x1001, true)), Err(VmError::Overlap { .. })));
        vm.map(range(0x1000, 0x1000, true)).unwrap();
        vm.map(range(0x4000, 0x1000, true)).unwrap();
        assert_eq!(vm.len(), 3);
        vm.unmap_handle(0x2000);
        assert_eq!(vm.len(), 2);
        assert!(vm.lookup(0x2800).is_none());
    }
}
