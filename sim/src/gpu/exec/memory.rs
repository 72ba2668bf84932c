//! How a wave reaches memory.
//!
//! - Global memory goes through the process's GPU VM, with a one-entry
//!   translation cache per wave (consecutive accesses almost always hit the
//!   same buffer).
//! - Private memory (scratch) is simulator-owned, per wave and per lane: the
//!   private segment buffer descriptor and FLAT addresses in the private
//!   aperture both resolve to (lane, offset) in [`PrivateMem`], so no ROCR
//!   scratch allocation is ever needed.
//! - FLAT addresses in the shared aperture reach the workgroup's LDS.

use super::{ExecError, LANES};
use crate::gpu::memory::{GpuFault, GpuVm};
use bytemuck::Pod;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

/// The gfx9 flat apertures (the driver reports them in GET_PROCESS_APERTURES): FLAT
/// addresses in these 4 GiB windows reach LDS and private memory instead of the GPU VM.
pub const SHARED_APERTURE_BASE: u64 = 1 << 48;
pub const PRIVATE_APERTURE_BASE: u64 = 2 << 48;
const APERTURE_SIZE: u64 = 1 << 32;

/// The base address written into the private segment buffer descriptor
/// (s[0:3]). A buffer descriptor's base field has only 48 bits, so the
/// private aperture (2 << 48) cannot be named there; this address lies above
/// the 47-bit GPU address space and is never mapped. A buffer access within
/// 4 GiB above it reaches the lane's private memory.
pub const PRIVATE_BUFFER_BASE: u64 = 1 << 47;

/// The lane offset in private memory of buffer address `addr`, if it falls in
/// the private buffer window.
pub fn private_buffer_offset(addr: u64) -> Option<u64> {
    addr.checked_sub(PRIVATE_BUFFER_BASE).filter(|&o| o < APERTURE_SIZE)
}

/// Which memory a FLAT address names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlatSegment {
    Global(u64),
    /// Byte offset in the workgroup's LDS.
    Lds(u32),
    /// Byte offset in the lane's private segment.
    Private(u64),
}

/// Classifies a FLAT address by aperture.
pub fn flat_target(addr: u64) -> FlatSegment {
    if (SHARED_APERTURE_BASE..SHARED_APERTURE_BASE + APERTURE_SIZE).contains(&addr) {
        FlatSegment::Lds((addr - SHARED_APERTURE_BASE) as u32)
    } else if (PRIVATE_APERTURE_BASE..PRIVATE_APERTURE_BASE + APERTURE_SIZE).contains(&addr) {
        FlatSegment::Private(addr - PRIVATE_APERTURE_BASE)
    } else {
        FlatSegment::Global(addr)
    }
}

/// Whether `[lo, hi)` misses both apertures (so every FLAT address in it is global).
pub fn all_global(lo: u64, hi: u64) -> bool {
    let miss = |base: u64| hi <= base || lo >= base + APERTURE_SIZE;
    miss(SHARED_APERTURE_BASE) && miss(PRIVATE_APERTURE_BASE)
}

/// Global memory as one wave sees it.
pub struct WaveMem<'a> {
    vm: &'a GpuVm,
    /// Recently used mappings, `(start, end, host address of start, writable)`: a kernel
    /// touches a few buffers (its arguments, inputs, outputs) in turn, and a miss costs a
    /// search of the address space's ordered map. Eight: a vector add alone touches five
    /// (the dispatch packet, the kernel arguments and its three arrays), and four entries
    /// taken in turn missed on every one.
    tlb: [Cell<Mapping>; TLB_ENTRIES],
    /// The entry the next miss replaces (round robin).
    next: Cell<usize>,
    /// One mapping per compiled memory instruction (by its site number in its translation,
    /// modulo [`SITES`]), which translated code checks inline before it calls
    /// `jit::span_host`: an instruction mostly reaches the buffer it reached last time.
    /// Filled by [`Self::translate_for_site`], from the entries above, and valid as long as
    /// they are.
    pub sites: [Cell<Mapping>; SITES],
    /// Where each site's last access started (0: none yet), for [`Self::ahead_for_site`].
    last_starts: [Cell<u64>; SITES],
}

const TLB_ENTRIES: usize = 8;
/// Site entries of a [`WaveMem`].
pub const SITES: usize = 16;

/// A cached mapping, as the translation cache and translated code (the sites) read it:
/// `start <= va && va + len <= end`, and for a store `writable != 0`, puts `va` at host
/// address `host + (va - start)`. An empty entry has `start > end`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub host: u64,
    pub writable: u64,
}

const EMPTY: Mapping = Mapping { start: 1, end: 0, host: 0, writable: 0 };

impl Mapping {
    /// Whether `[va, va + len)` lies inside, and the mapping is writable if `write`.
    fn holds(&self, va: u64, len: u64, write: bool) -> bool {
        self.start <= va && va.checked_add(len).is_some_and(|last| last <= self.end) && (self.writable != 0 || !write)
    }
}

/// A [`WaveMem`]'s translation cache, kept by a worker between its turns (see
/// [`TlbKeeper`]).
#[derive(Clone, Copy)]
pub struct TlbEntries([Mapping; TLB_ENTRIES], usize, [Mapping; SITES], [u64; SITES]);

impl TlbEntries {
    const EMPTY: TlbEntries = TlbEntries([EMPTY; TLB_ENTRIES], 0, [EMPTY; SITES], [0; SITES]);
}

/// A worker's snapshot of the address space of its last turn, with the translation cache
/// made for it: workgroups of a kernel touch the same buffers, and a small workgroup's turn (a
/// vector add's four waves) would otherwise start with misses, each a search of the address
/// space's map. The entries hold for that snapshot only.
///
/// The snapshot is kept (a strong reference) from turn to turn and compared with the
/// process's current one at the start of each (`Context::vm_since`): taking and dropping a
/// reference every turn writes the snapshot's reference count, a cache line that every
/// worker of the dispatch then takes in turn, once per workgroup. A worker lets go
/// ([`Self::release`]) when it finds nothing to run, so an idle worker keeps no process's
/// memory mapped.
#[derive(Default)]
pub struct TlbKeeper(Option<(Arc<GpuVm>, TlbEntries)>);

impl TlbKeeper {
    /// Runs `f` with the current snapshot and a translation cache for it: the kept entries
    /// if the kept snapshot is still current, empty ones otherwise. `current` answers as
    /// `Context::vm_since` does: the current snapshot, or `None` if it is the kept one.
    pub fn with_wave_mem<R>(
        &mut self,
        current: impl FnOnce(Option<&Arc<GpuVm>>) -> Option<Arc<GpuVm>>,
        f: impl FnOnce(&Arc<GpuVm>, &WaveMem<'_>) -> R,
    ) -> R {
        if let Some(vm) = current(self.0.as_ref().map(|(vm, _)| vm)) {
            self.0 = Some((vm, TlbEntries::EMPTY));
        }
        let (vm, entries) = self.0.as_mut().expect("a snapshot is kept");
        let mem = WaveMem::new(vm);
        mem.restore(entries);
        let r = f(vm, &mem);
        *entries = mem.entries();
        r
    }

    /// Whether a snapshot is kept.
    pub fn holds(&self) -> bool {
        self.0.is_some()
    }

    /// Lets go of the kept snapshot and its entries.
    pub fn release(&mut self) {
        self.0 = None;
    }
}

impl<'a> WaveMem<'a> {
    pub fn new(vm: &'a GpuVm) -> Self {
        WaveMem {
            vm,
            tlb: std::array::from_fn(|_| Cell::new(EMPTY)),
            next: Cell::new(0),
            sites: std::array::from_fn(|_| Cell::new(EMPTY)),
            last_starts: std::array::from_fn(|_| Cell::new(0)),
        }
    }

    pub fn vm(&self) -> &'a GpuVm {
        self.vm
    }

    /// Takes the translation cache `entries` (made for the same snapshot).
    fn restore(&self, entries: &TlbEntries) {
        for (cell, e) in self.tlb.iter().zip(entries.0) {
            cell.set(e);
        }
        self.next.set(entries.1);
        for (cell, e) in self.sites.iter().zip(entries.2) {
            cell.set(e);
        }
        for (cell, e) in self.last_starts.iter().zip(entries.3) {
            cell.set(e);
        }
    }

    /// The translation cache, to keep for the next turn on the same snapshot.
    fn entries(&self) -> TlbEntries {
        TlbEntries(
            std::array::from_fn(|i| self.tlb[i].get()),
            self.next.get(),
            std::array::from_fn(|i| self.sites[i].get()),
            std::array::from_fn(|i| self.last_starts[i].get()),
        )
    }

    /// Host address of `[va, va + len)`.
    #[inline]
    pub fn translate(&self, va: u64, len: u64, write: bool) -> Result<usize, GpuFault> {
        self.translate_mapping(va, len, write).map(|(host, _)| host)
    }

    /// [`Self::translate`], and site `site` (modulo [`SITES`]) keeps the mapping for
    /// translated code's own check next time.
    pub fn translate_for_site(&self, va: u64, len: u64, write: bool, site: usize) -> Result<usize, GpuFault> {
        let (host, mapping) = self.translate_mapping(va, len, write)?;
        if let Some(m) = mapping {
            self.sites[site % SITES].set(m);
        }
        Ok(host)
    }

    /// Where site `site` (modulo [`SITES`]) will most likely reach two accesses after this
    /// one at `[start, start + len)`: as far on again as twice the step from its last access,
    /// as a host address, when that lies in the site's mapping (`None` on a first access, a
    /// repeated address, or a step out of the mapping). Notes `start` as the site's last.
    ///
    /// Why: a grid-striding loop's wave reaches a new host page on every pass (a streaming
    /// kernel's next 256 bytes are the grid's size further on), so each access waited for the
    /// host's page walk and memory, and the host's own prefetchers, which follow addresses
    /// within a page, do not see the pattern. A site keeps the step, as a CPU's stride
    /// prefetcher keeps it per instruction; two steps ahead measured better than one
    /// (`throughput memory` from host DRAM: 137-147 M wave-instructions/s against 107-125).
    pub fn ahead_for_site(&self, site: usize, start: u64, len: u64) -> Option<usize> {
        let site = site % SITES;
        let last = self.last_starts[site].replace(start);
        let step = start.wrapping_sub(last);
        if last == 0 || step == 0 {
            return None;
        }
        let next = start.wrapping_add(step.wrapping_mul(2));
        let m = self.sites[site].get();
        m.holds(next, len, false).then(|| (m.host + (next - m.start)) as usize)
    }

    /// The host address of `[va, va + len)` and the cached mapping that holds it.
    #[inline]
    fn translate_mapping(&self, va: u64, len: u64, write: bool) -> Result<(usize, Option<Mapping>), GpuFault> {
        for e in &self.tlb {
            let m = e.get();
            if m.holds(va, len, write) {
                return Ok(((m.host + (va - m.start)) as usize, Some(m)));
            }
        }
        let host = self.vm.translate(va, len, write)?;
        let mapping = self.vm.lookup(va).map(|r| Mapping {
            start: r.start,
            end: r.end(),
            host: r.host as u64,
            writable: r.writable as u64,
        });
        if let Some(m) = mapping {
            let slot = self.next.get();
            self.tlb[slot].set(m);
            self.next.set((slot + 1) % TLB_ENTRIES);
        }
        Ok((host, mapping))
    }

    /// Reads a `T` at `va`.
    #[inline]
    pub fn read<T: Pod>(&self, va: u64) -> Result<T, GpuFault> {
        let host = self.translate(va, size_of::<T>() as u64, false)?;
        // SAFETY: `translate` checked the whole access lies inside a live
        // mapping; T is plain data.
        Ok(unsafe { std::ptr::read_unaligned(host as *const T) })
    }

    /// Writes a `T` at `va`.
    #[inline]
    pub fn write<T: Pod>(&self, va: u64, value: T) -> Result<(), GpuFault> {
        let host = self.translate(va, size_of::<T>() as u64, true)?;
        // SAFETY: as in `read`, for a writable mapping.
        unsafe { std::ptr::write_unaligned(host as *mut T, value) };
        Ok(())
    }

    /// Copies `out.len()` bytes from `va` (inside one mapping).
    pub fn read_bytes(&self, va: u64, out: &mut [u8]) -> Result<(), GpuFault> {
        let host = self.translate(va, out.len() as u64, false)?;
        // SAFETY: `translate` checked the whole range lies in a live mapping.
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Copies `data` to `va` (inside one writable mapping).
    pub fn write_bytes(&self, va: u64, data: &[u8]) -> Result<(), GpuFault> {
        let host = self.translate(va, data.len() as u64, true)?;
        // SAFETY: as in `read_bytes`, for a writable mapping.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host as *mut u8, data.len()) };
        Ok(())
    }

    /// The aligned 32-bit word at `va` as an atomic (for GPU atomics, which
    /// are real host atomics so concurrent workgroups and the host agree).
    pub fn atomic_u32(&self, va: u64) -> Result<&'a AtomicU32, GpuFault> {
        if !va.is_multiple_of(4) {
            return Err(GpuFault { va, write: true, not_present: false });
        }
        let host = self.translate(va, 4, true)?;
        // SAFETY: an aligned word inside a live mapping of the process, which
        // outlives the dispatch ('a); shared with other agents only through
        // atomic or word-sized accesses.
        Ok(unsafe { AtomicU32::from_ptr(host as *mut u32) })
    }

    /// The aligned 64-bit word at `va` as an atomic.
    pub fn atomic_u64(&self, va: u64) -> Result<&'a AtomicU64, GpuFault> {
        if !va.is_multiple_of(8) {
            return Err(GpuFault { va, write: true, not_present: false });
        }
        let host = self.translate(va, 8, true)?;
        // SAFETY: as in `atomic_u32`.
        Ok(unsafe { AtomicU64::from_ptr(host as *mut u64) })
    }
}

/// A translated range of global memory, `[start, end)`: accesses inside it
/// need no further page-table lookups (one translation per instruction when
/// all active lanes hit the same mapping).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    start: u64,
    end: u64,
    host: usize,
}

impl Span {
    /// The host address of `[va, va + len)`, if it lies in the span.
    #[inline]
    fn host(&self, va: u64, len: u64) -> Option<usize> {
        (va >= self.start && va.checked_add(len)? <= self.end).then(|| self.host + (va - self.start) as usize)
    }

    /// The common shape of a whole wave's access, `(host offset of lane 0, stride)`: every
    /// lane active and lane `l` at `addr[0] + delta + l * stride`, the stride 0 (one
    /// address) or at least `size` (no two lanes overlap), and all 64 accesses of `size`
    /// bytes inside the span. A load or store of this shape needs no per-lane checks: the
    /// compiler's unit-stride loads (`a[threadIdx.x]`) and uniform loads.
    #[inline]
    fn strided(&self, addr: &[u64; LANES], mask: u64, delta: u64, size: u64) -> Option<(usize, usize)> {
        if mask != u64::MAX {
            return None;
        }
        let stride = addr[1].wrapping_sub(addr[0]);
        if stride != 0 && !(size..=1 << 16).contains(&stride) {
            return None;
        }
        let mut expected = addr[0];
        let mut same = true;
        for &a in addr {
            same &= a == expected;
            expected = expected.wrapping_add(stride);
        }
        let first = addr[0].wrapping_add(delta);
        let last = first.checked_add(stride * (LANES as u64 - 1))?.checked_add(size)?;
        (same && first >= self.start && last <= self.end).then(|| ((first - self.start) as usize, stride as usize))
    }

    /// Reads a `T` at `va` (any alignment); `None` outside the span.
    #[inline]
    pub fn read<T: Pod>(&self, va: u64) -> Option<T> {
        let host = self.host(va, size_of::<T>() as u64)?;
        // SAFETY: `host` lies, with the whole T, inside a live mapping that
        // `WaveMem::span` translated; T is plain data.
        Some(unsafe { std::ptr::read_unaligned(host as *const T) })
    }

    /// Writes a `T` at `va` (any alignment); false outside the span. Only
    /// spans made for writing exist for writes (`WaveMem::span(.., true)`).
    #[inline]
    pub fn write<T: Pod>(&self, va: u64, value: T) -> bool {
        let Some(host) = self.host(va, size_of::<T>() as u64) else { return false };
        // SAFETY: as in `read`; the span was translated for writing.
        unsafe { std::ptr::write_unaligned(host as *mut T, value) };
        true
    }
}

impl Span {
    /// For each lane set in `mask`: `out[l]` = the u32 at `addr[l] + delta`
    /// (0 for an address outside the span). Other lanes keep their value.
    #[inline]
    pub fn gather_u32(&self, addr: &[u64; LANES], mask: u64, delta: u64, out: &mut [u32; LANES]) {
        if let Some((first, stride)) = self.strided(addr, mask, delta, 4) {
            let base = self.host + first;
            if stride == 4 {
                // SAFETY: `strided` checked that the 256 bytes lie inside the span, which
                // `WaveMem::span` translated as one live mapping; `out` is 256 bytes.
                unsafe { std::ptr::copy_nonoverlapping(base as *const u32, out.as_mut_ptr(), LANES) };
            } else if stride == 0 {
                // One address: one value for every lane (see below).
                // SAFETY: as above, for the 4 bytes at `base`.
                *out = [unsafe { std::ptr::read_unaligned(base as *const u32) }; LANES];
            } else {
                for (l, o) in out.iter_mut().enumerate() {
                    // SAFETY: as above: lane l's 4 bytes lie inside the span.
                    *o = unsafe { std::ptr::read_unaligned((base + l * stride) as *const u32) };
                }
            }
            return;
        }
        let len = self.end - self.start;
        // Lanes of one instruction that name the same address get one value, as from the
        // hardware's one memory transaction: the compiler treats a load from a uniform
        // address as uniform (a spin loop branches on it for the whole wave), so a host store
        // landing between two lanes' reads must not split them.
        let mut last = (u64::MAX, 0u32);
        for_each_lane(mask, |l| {
            let off = addr[l].wrapping_add(delta).wrapping_sub(self.start);
            if off == last.0 {
                out[l] = last.1;
                return;
            }
            out[l] = if len >= 4 && off <= len - 4 {
                // SAFETY: [off, off + 4) lies inside the span, which
                // `WaveMem::span` translated as one live mapping.
                unsafe { std::ptr::read_unaligned((self.host + off as usize) as *const u32) }
            } else {
                0
            };
            last = (off, out[l]);
        });
    }
}

impl Span {
    /// For each lane set in `mask`: the u64 at `addr[l] + delta` into `lo[l]` (low half) and
    /// `hi[l]`, 0 outside the span. An 8-byte-aligned access is one 64-bit load, as on the
    /// hardware: LLVM lowers 64-bit atomic loads to `global_load_dwordx2`, and a reader must
    /// never see half of another wave's 64-bit store (a look-back scan's flag and value).
    #[inline]
    pub fn gather_u64(&self, addr: &[u64; LANES], mask: u64, delta: u64, lo: &mut [u32; LANES], hi: &mut [u32; LANES]) {
        if let Some((first, stride)) = self.strided(addr, mask, delta, 8) {
            let base = self.host + first;
            if stride == 0 {
                let v = load_u64(base);
                *lo = [v as u32; LANES];
                *hi = [(v >> 32) as u32; LANES];
            } else {
                for l in 0..LANES {
                    let v = load_u64(base + l * stride);
                    lo[l] = v as u32;
                    hi[l] = (v >> 32) as u32;
                }
            }
            return;
        }
        let len = self.end - self.start;
        let mut last = (u64::MAX, 0u64);
        for_each_lane(mask, |l| {
            let off = addr[l].wrapping_add(delta).wrapping_sub(self.start);
            // One value per address per instruction (see `gather_u32`).
            let v = if off == last.0 {
                last.1
            } else if len >= 8 && off <= len - 8 {
                load_u64(self.host + off as usize)
            } else {
                0
            };
            last = (off, v);
            lo[l] = v as u32;
            hi[l] = (v >> 32) as u32;
        });
    }
}

/// Calls `f` for each lane set in `mask`, in increasing order (a full mask as a plain loop,
/// which the compiler can unroll and vectorize).
#[inline]
pub fn for_each_lane(mask: u64, mut f: impl FnMut(usize)) {
    if mask == u64::MAX {
        for l in 0..LANES {
            f(l);
        }
    } else {
        let mut m = mask;
        while m != 0 {
            f(m.trailing_zeros() as usize);
            m &= m - 1;
        }
    }
}

/// One 64-bit load from host address `at`: a single atomic access when aligned.
#[inline]
fn load_u64(at: usize) -> u64 {
    if at.is_multiple_of(8) {
        // SAFETY: the caller checked that [at, at + 8) lies inside a live mapping; it is
        // aligned, and other threads only access this memory atomically or with plain
        // accesses of at most this size (the simulated GPU's memory model).
        unsafe { std::sync::atomic::AtomicU64::from_ptr(at as *mut u64) }.load(std::sync::atomic::Ordering::Relaxed)
    } else {
        // SAFETY: as above; unaligned accesses are not single-copy atomic on the hardware
        // either.
        unsafe { std::ptr::read_unaligned(at as *const u64) }
    }
}

/// One 64-bit store to host address `at`: a single atomic access when aligned.
#[inline]
fn store_u64(at: usize, v: u64) {
    if at.is_multiple_of(8) {
        // SAFETY: as in `load_u64`, for a mapping translated for writing.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(at as *mut u64) }.store(v, std::sync::atomic::Ordering::Relaxed)
    } else {
        // SAFETY: as above.
        unsafe { std::ptr::write_unaligned(at as *mut u64, v) }
    }
}

/// A [`Span`] that may be written.
#[derive(Debug, Clone, Copy)]
pub struct WriteSpan(Span);

impl WriteSpan {
    /// For each lane set in `mask`: writes `data[l]` at `addr[l] + delta`
    /// (addresses outside the span are skipped).
    #[inline]
    pub fn scatter_u32(&self, addr: &[u64; LANES], mask: u64, delta: u64, data: &[u32; LANES]) {
        let s = self.0;
        if let Some((first, stride)) = s.strided(addr, mask, delta, 4) {
            let base = s.host + first;
            if stride == 4 {
                // SAFETY: `strided` checked that the 256 bytes lie inside the span, translated
                // for writing as one live mapping.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), base as *mut u32, LANES) };
            } else {
                // Stride 0: the lanes write in turn, the last one's value stays, as below.
                for (l, d) in data.iter().enumerate() {
                    // SAFETY: as above, lane l's 4 bytes.
                    unsafe { std::ptr::write_unaligned((base + l * stride) as *mut u32, *d) };
                }
            }
            return;
        }
        let len = s.end - s.start;
        for_each_lane(mask, |l| {
            let off = addr[l].wrapping_add(delta).wrapping_sub(s.start);
            if len >= 4 && off <= len - 4 {
                // SAFETY: [off, off + 4) lies inside the span, translated
                // for writing as one live mapping.
                unsafe { std::ptr::write_unaligned((s.host + off as usize) as *mut u32, data[l]) };
            }
        });
    }

    /// For each lane set in `mask`: writes `lo[l] | hi[l] << 32` at `addr[l] + delta`
    /// (outside the span: skipped); an 8-byte-aligned store is one 64-bit access (see
    /// [`Span::gather_u64`]).
    #[inline]
    pub fn scatter_u64(&self, addr: &[u64; LANES], mask: u64, delta: u64, lo: &[u32; LANES], hi: &[u32; LANES]) {
        let s = self.0;
        if let Some((first, stride)) = s.strided(addr, mask, delta, 8) {
            let base = s.host + first;
            for l in 0..LANES {
                store_u64(base + l * stride, lo[l] as u64 | (hi[l] as u64) << 32);
            }
            return;
        }
        let len = s.end - s.start;
        for_each_lane(mask, |l| {
            let off = addr[l].wrapping_add(delta).wrapping_sub(s.start);
            if len >= 8 && off <= len - 8 {
                store_u64(s.host + off as usize, lo[l] as u64 | (hi[l] as u64) << 32);
            }
        });
    }

    #[inline]
    pub fn write<T: Pod>(&self, va: u64, value: T) -> bool {
        self.0.write(va, value)
    }

    #[inline]
    pub fn read<T: Pod>(&self, va: u64) -> Option<T> {
        self.0.read(va)
    }
}

impl<'a> WaveMem<'a> {
    /// `[start, end)` translated once, if it lies inside one mapping.
    #[inline]
    pub fn span(&self, start: u64, end: u64) -> Option<Span> {
        let host = self.translate(start, end.checked_sub(start)?, false).ok()?;
        Some(Span { start, end, host })
    }

    /// `[start, end)` translated once for writing, if it lies inside one
    /// writable mapping.
    #[inline]
    pub fn span_mut(&self, start: u64, end: u64) -> Option<WriteSpan> {
        let host = self.translate(start, end.checked_sub(start)?, true).ok()?;
        Some(WriteSpan(Span { start, end, host }))
    }
}

/// The private (scratch) memory of one wave: `per_lane` bytes for each of
/// the 64 lanes.
#[derive(Debug, Default, Clone)]
pub struct PrivateMem {
    per_lane: usize,
    data: Vec<u8>,
}

/// Private segments up to this size (per wave) are zeroed in place between waves.
const REUSED_PRIVATE_BYTES: usize = 256 * 1024;

impl PrivateMem {
    /// Private memory of `per_lane` bytes per lane, zeroed.
    pub fn new(per_lane: usize) -> Self {
        PrivateMem { per_lane, data: vec![0; per_lane * super::LANES] }
    }

    /// Resizes and zeroes (reuse between waves). A large segment (a kernel with calls and
    /// a stack limit of many KiB per lane) is allocated afresh instead: the allocator hands
    /// out zero pages that become real only where the wave's stack reaches, where zeroing
    /// in place would touch every byte of every wave.
    pub fn reset(&mut self, per_lane: usize) {
        self.per_lane = per_lane;
        let bytes = per_lane * super::LANES;
        if bytes <= REUSED_PRIVATE_BYTES {
            self.data.clear();
            self.data.resize(bytes, 0);
        } else {
            self.data = vec![0; bytes];
        }
    }

    pub fn per_lane(&self) -> usize {
        self.per_lane
    }

    fn range(&self, lane: usize, offset: u64, len: usize) -> Result<std::ops::Range<usize>, ExecError> {
        let end = offset.checked_add(len as u64).filter(|&e| e <= self.per_lane as u64);
        match end {
            Some(_) => {
                let start = lane * self.per_lane + offset as usize;
                Ok(start..start + len)
            }
            None => Err(ExecError::PrivateOutOfRange { offset, size: self.per_lane as u64 }),
        }
    }

    /// Reads `out.len()` bytes of lane `lane` at `offset`.
    pub fn read(&self, lane: usize, offset: u64, out: &mut [u8]) -> Result<(), ExecError> {
        let r = self.range(lane, offset, out.len())?;
        out.copy_from_slice(&self.data[r]);
        Ok(())
    }

    /// Writes `data` to lane `lane` at `offset`.
    pub fn write(&mut self, lane: usize, offset: u64, data: &[u8]) -> Result<(), ExecError> {
        let r = self.range(lane, offset, data.len())?;
        self.data[r].copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::memory::VmRange;

    #[test]
    fn apertures_classify_flat_addresses() {
        assert_eq!(flat_target(0x7f00_0000_1000), FlatSegment::Global(0x7f00_0000_1000));
        assert_eq!(flat_target(SHARED_APERTURE_BASE + 0x40), FlatSegment::Lds(0x40));
        assert_eq!(flat_target(PRIVATE_APERTURE_BASE + 8), FlatSegment::Private(8));
        assert_eq!(
            flat_target(PRIVATE_APERTURE_BASE + (1 << 32)),
            FlatSegment::Global(PRIVATE_APERTURE_BASE + (1 << 32))
        );
    }

    #[test]
    fn private_memory_is_per_lane_and_bounded() {
        let mut p = PrivateMem::new(16);
        p.write(3, 4, &[1, 2, 3, 4]).unwrap();
        let mut out = [0u8; 4];
        p.read(3, 4, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        p.read(4, 4, &mut out).unwrap();
        assert_eq!(out, [0; 4], "lanes do not share private memory");
        assert!(matches!(p.write(0, 14, &[0; 4]), Err(ExecError::PrivateOutOfRange { .. })));
    }

    #[test]
    fn a_kept_translation_cache_serves_only_its_own_snapshot() {
        let buf = vec![0u8; 8192];
        let host = buf.as_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x10000, len: 4096, host, writable: true, handle: 1 }).unwrap();
        let first = Arc::new(vm.clone());
        // As `Context::vm_since` answers while `current` is the process's snapshot.
        let since = |current: &Arc<GpuVm>| {
            let current = current.clone();
            move |kept: Option<&Arc<GpuVm>>| crate::gpu::context::snapshot_since(kept, current)
        };
        let mut keeper = TlbKeeper::default();
        keeper.with_wave_mem(since(&first), |_, m| assert_eq!(m.translate(0x10008, 4, false).unwrap(), host + 8));
        keeper.with_wave_mem(since(&first), |vm, m| {
            assert!(Arc::ptr_eq(vm, &first), "the kept snapshot");
            assert_eq!(m.tlb[0].get().start, 0x10000, "the entry is back for its snapshot");
        });
        // A new snapshot where the range moved: the kept entry must not answer.
        vm.unmap(0x10000);
        vm.map(VmRange { start: 0x10000, len: 4096, host: host + 4096, writable: true, handle: 2 }).unwrap();
        let second = Arc::new(vm);
        keeper.with_wave_mem(since(&second), |vm, m| {
            assert!(Arc::ptr_eq(vm, &second), "the current snapshot replaces the kept one");
            assert_eq!(m.translate(0x10008, 4, false).unwrap(), host + 4096 + 8);
        });
        assert_eq!(Arc::strong_count(&first), 1, "the old snapshot is let go");
        keeper.release();
        assert_eq!(Arc::strong_count(&second), 1, "an idle worker keeps no snapshot");
        drop(buf);
    }

    #[test]
    fn a_site_predicts_its_access_two_steps_ahead_inside_its_mapping() {
        let buf = vec![0u8; 1 << 20];
        let host = buf.as_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x100000, len: 1 << 20, host, writable: true, handle: 1 }).unwrap();
        let m = WaveMem::new(&vm);
        // The site's mapping, as a site miss leaves it.
        m.translate_for_site(0x100000, 256, false, 3).unwrap();
        assert_eq!(m.ahead_for_site(3, 0x100000, 256), None, "a first access has no step");
        assert_eq!(m.ahead_for_site(3, 0x110000, 256), Some(host + 0x30000), "start + 2 * 0x10000");
        assert_eq!(m.ahead_for_site(3, 0x110000, 256), None, "a repeated address");
        assert_eq!(m.ahead_for_site(3, 0x118000, 256), Some(host + 0x28000));
        // Backwards works as forwards; out of the mapping (either side) predicts nothing.
        assert_eq!(m.ahead_for_site(3, 0x117000, 256), Some(host + 0x15000));
        assert_eq!(m.ahead_for_site(3, 0x100000, 256), None, "0x100000 - 2 * 0x17000 is below");
        assert_eq!(m.ahead_for_site(3, 0x1c0000, 256), None, "0x1c0000 + 2 * 0xc0000 is past the end");
        assert_eq!(m.ahead_for_site(3, 0x1d0000, 0x10001), None, "its last byte would be past the end");
        assert_eq!(m.ahead_for_site(3, 0x1d8000, 0x18000), Some(host + 0xe8000), "up to the last byte");
        // Sites are numbered modulo SITES and do not share their last address.
        assert_eq!(m.ahead_for_site(3 + SITES, 0x1e0000, 256), Some(host + 0xf0000), "0x1e0000 + 2 * 0x8000");
        assert_eq!(m.ahead_for_site(4, 0x100000, 256), None, "site 4 has no access yet");
        // A site's last address is kept with its translation cache from turn to turn.
        let kept = m.entries();
        let again = WaveMem::new(&vm);
        again.restore(&kept);
        assert_eq!(
            again.ahead_for_site(3, 0x1e4000, 256),
            Some(host + 0xec000),
            "0x1e4000 + 2 * 0x4000: the step from the last turn's access"
        );
        drop(buf);
    }

    #[test]
    fn translation_cache_hits_and_refills() {
        let mut buf = vec![0u32; 2048];
        let host = buf.as_mut_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x10000, len: 4096, host, writable: true, handle: 1 }).unwrap();
        vm.map(VmRange { start: 0x20000, len: 4096, host: host + 4096, writable: false, handle: 2 }).unwrap();
        {
            let m = WaveMem::new(&vm);
            m.write::<u32>(0x10004, 5).unwrap();
            assert_eq!(m.read::<u32>(0x10004).unwrap(), 5);
            assert_eq!(m.read::<u32>(0x20000).unwrap(), 0);
            assert!(m.write::<u32>(0x20000, 1).is_err(), "cached read-only range still refuses writes");
            assert!(m.read::<u32>(0x10ffe).is_err());
        }
        assert_eq!(buf[1], 5);
    }
}

#[cfg(test)]
mod tlb_tests {
    use super::*;
    use crate::gpu::memory::VmRange;

    #[test]
    fn the_translation_cache_keeps_several_buffers_and_their_permissions() {
        let backing = vec![0u8; 6 * 4096];
        let host = backing.as_ptr() as usize;
        let mut vm = GpuVm::new();
        for i in 0..6u64 {
            let writable = i != 3;
            vm.map(VmRange {
                start: 0x10000 * (i + 1),
                len: 4096,
                host: host + 4096 * i as usize,
                writable,
                handle: i,
            })
            .unwrap();
        }
        let mem = WaveMem::new(&vm);
        // More buffers than entries, visited in turn, twice: every answer is the mapping's.
        for _ in 0..2 {
            for i in 0..6u64 {
                let va = 0x10000 * (i + 1) + 8;
                assert_eq!(mem.translate(va, 4, false).unwrap(), host + 4096 * i as usize + 8);
            }
        }
        // A cached read-only mapping still refuses writes; an access across the end faults.
        assert!(mem.translate(0x40000 + 8, 4, false).is_ok());
        assert!(mem.translate(0x40000 + 8, 4, true).is_err());
        assert!(mem.translate(0x10000 + 4094, 4, false).is_err());
        assert!(mem.translate(0x70000, 4, false).is_err(), "unmapped");
    }

    /// Aligned 64-bit accesses are single-copy atomic: a reader on another thread sees
    /// either the old or the new value of a wave's store, never half of each.
    #[test]
    fn aligned_64_bit_lanes_are_never_torn() {
        let mut buf = vec![0u64; 512];
        let host = buf.as_mut_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x10000, len: 4096, host, writable: true, handle: 1 }).unwrap();
        // Lane l works on its own 8-byte word.
        let addr: [u64; LANES] = std::array::from_fn(|l| 0x10000 + 8 * l as u64);
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let m = WaveMem::new(&vm);
                let span = m.span_mut(0x10000, 0x10000 + 8 * LANES as u64).unwrap();
                for k in 1..=20_000u32 {
                    let v = [k; LANES];
                    span.scatter_u64(&addr, u64::MAX, 0, &v, &v);
                }
                stop.store(true, std::sync::atomic::Ordering::Release);
            });
            let m = WaveMem::new(&vm);
            let span = m.span(0x10000, 0x10000 + 8 * LANES as u64).unwrap();
            let (mut lo, mut hi) = ([0; LANES], [0; LANES]);
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                span.gather_u64(&addr, u64::MAX, 0, &mut lo, &mut hi);
                assert_eq!(lo, hi, "a 64-bit load saw halves of two stores");
            }
        });
        let m = WaveMem::new(&vm);
        let span = m.span(0x10000, 0x10000 + 8 * LANES as u64).unwrap();
        let (mut lo, mut hi) = ([0; LANES], [0; LANES]);
        span.gather_u64(&addr, 0b101, 0, &mut lo, &mut hi);
        assert_eq!((lo[0], hi[2], lo[1]), (20_000, 20_000, 0), "only lanes in the mask are read");
        drop(buf);
    }

    /// Lanes loading one address in one instruction see one value, even while another
    /// thread stores to it (the compiler branches on such a load for the whole wave).
    #[test]
    fn lanes_loading_one_address_see_one_value() {
        let mut buf = vec![0u32; 1024];
        let host = buf.as_mut_ptr() as usize;
        let mut vm = GpuVm::new();
        vm.map(VmRange { start: 0x10000, len: 4096, host, writable: true, handle: 1 }).unwrap();
        let addr = [0x10040u64; LANES];
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let m = WaveMem::new(&vm);
                let span = m.span_mut(0x10000, 0x11000).unwrap();
                for k in 1..=5_000_000u32 {
                    span.scatter_u32(&[0x10040; LANES], 1, 0, &[k; LANES]);
                }
                stop.store(true, std::sync::atomic::Ordering::Release);
            });
            let m = WaveMem::new(&vm);
            let span = m.span(0x10000, 0x11000).unwrap();
            let (mut out, mut lo, mut hi) = ([0; LANES], [0; LANES], [0; LANES]);
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                span.gather_u32(&addr, u64::MAX, 0, &mut out);
                assert!(out.iter().all(|&v| v == out[0]), "one address, two values: {out:?}");
                span.gather_u64(&addr, u64::MAX, 0, &mut lo, &mut hi);
                assert!(lo.iter().all(|&v| v == lo[0]), "one address, two values: {lo:?}");
            }
        });
        drop(buf);
    }
}
