//! GPU memory ioctls (ALLOC/FREE/MAP/UNMAP_MEMORY) and mmap resolution.
//!
//! VRAM, GTT, doorbell and MMIO buffers live in the process's memfd arena;
//! USERPTR buffers are the application's own pages: reached at their address
//! in local mode, lent by the client as memfds in daemon mode. The mmap offset
//! handed back for VRAM/GTT is [`BO_MMAP_BASE`] plus the arena offset, so a
//! later `mmap(render_fd, offset)` finds the pages again.

use super::ipc::{imported_backing, Exports, SharedBuffer};
use super::process::{read_elem, KfdProcess};
use super::usage::DeviceUsage;
use super::KfdError;
use crate::config::Device;
use crate::gpu::memory::{Arena, KeptMemory, LentMemory, VmRange, PAGE_SIZE};
use proto::abi::kfd::{self, alloc_flags, mmap_offset};
use proto::ioctl::{split_payload, IoctlView};
pub use proto::payload::DeviceFile;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// VRAM/GTT mmap offsets start here: far above any arena offset, and below
/// the KFD offsets of doorbells/MMIO (`gpu_id << 46`).
pub const BO_MMAP_BASE: u64 = 1 << 44;

/// mmap offsets of imported buffers (IPC) start here: above every arena
/// offset, below the KFD offsets. They are never reused within a process.
pub const IMPORT_MMAP_BASE: u64 = 1 << 45;

/// How the simulator reaches USERPTR memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserptrMode {
    /// The simulator runs inside the application: it uses the application's
    /// own pages at their CPU address.
    Direct,
    /// The simulator runs elsewhere (the daemon): the client lends the
    /// pages of each USERPTR range as memfds it backs them with
    /// ([`KfdProcess::alloc_lent_userptr`]).
    Lent,
}

/// Where an allocation's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// Arena pages; `owned` is false for the per-GPU doorbell and MMIO pages,
    /// which outlive any one allocation naming them.
    Arena { offset: u64, owned: bool },
    /// The application's own pages at this CPU address (local mode USERPTR).
    User { addr: u64 },
    /// Pages the client lent (daemon mode USERPTR), mapped here at `host`;
    /// the process's table holds the [`LentMemory`].
    Lent { host: usize },
    /// A buffer another process exported (IPC), reached at `host`; the
    /// process's table holds the [`SharedBuffer`].
    Shared { host: usize },
}

/// One ALLOC_MEMORY_OF_GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub handle: u64,
    pub gpu: usize,
    pub va: u64,
    pub size: u64,
    pub flags: u32,
    pub backing: Backing,
    pub mmap_offset: u64,
    /// Bit i set when mapped to GPU i.
    pub mapped_on: u64,
}

impl Allocation {
    fn host_addr(&self, arena: &Arena) -> usize {
        match self.backing {
            Backing::Arena { offset, .. } => arena.host_addr(offset),
            Backing::User { addr } => addr as usize,
            Backing::Lent { host } | Backing::Shared { host } => host,
        }
    }
}

/// What a mapping of the arena is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// A VRAM/GTT buffer object.
    Allocation,
    Doorbell,
    Events,
    Mmio,
}

/// What an mmap of a device file maps: a range of the arena memfd.
#[derive(Debug, Clone)]
pub struct ArenaRange {
    /// Another process's arena, for a buffer this process imported (IPC);
    /// `None`: the process's own.
    pub foreign: Option<Arc<Arena>>,
    /// Offset in the arena memfd.
    pub file_offset: u64,
    pub len: u64,
    /// The allocation is writable by the CPU (doorbells, MMIO and
    /// host-visible buffers).
    pub writable: bool,
    pub kind: MapKind,
}

/// The allocations of one process and their accounting.
#[derive(Debug)]
pub struct AllocTable {
    allocs: BTreeMap<u64, Allocation>,
    next_id: u32,
    /// The machine's per-GPU usage, which allocations are checked against.
    usage: Arc<DeviceUsage>,
    /// This process's share of it, given back when the process goes.
    vram_used: Vec<u64>,
    gtt_used: Vec<u64>,
    userptr: UserptrMode,
    doorbell_pages: Vec<Option<u64>>,
    mmio_pages: Vec<Option<u64>>,
    /// The GTT buffer libhsakmt registered as events page (handle).
    event_page: Option<u64>,
    /// An events page we allocated ourselves for an EVENTS mmap.
    own_event_page: Option<u64>,
    /// The memory behind [`Backing::Lent`] allocations, by handle.
    lent: BTreeMap<u64, Arc<LentMemory>>,
    /// Buffers this process exported or imported, by handle.
    shared: BTreeMap<u64, SharedRole>,
    /// The process's arena (freed allocations' pages are punched out of it).
    arena: Arc<Arena>,
    /// The machine's exported buffers (an exporter's free revokes its names).
    exports: Arc<Exports>,
    /// The mmap offset the next imported buffer gets.
    next_import_offset: u64,
}

/// A buffer that crossed processes, as one process holds it.
#[derive(Debug)]
struct SharedRole {
    buffer: Arc<SharedBuffer>,
    /// This process allocated it (its free or exit revokes the buffer's names).
    exporter: bool,
}

impl Drop for AllocTable {
    /// A process that goes away gives its memory back to the GPUs (the driver frees a
    /// process's buffers when its last fd closes).
    fn drop(&mut self) {
        for (gpu, (&vram, &gtt)) in self.vram_used.iter().zip(&self.gtt_used).enumerate() {
            self.usage.release_vram(gpu, vram);
            self.usage.release_gtt(gpu, gtt);
        }
        for role in self.shared.values().filter(|r| r.exporter) {
            self.exports.revoke(&role.buffer);
        }
        // The arena may outlive the process (a buffer another process imported
        // keeps it): the rest of its memory goes back to the host now.
        for a in self.allocs.values() {
            if let Backing::Arena { offset, owned: true } = a.backing {
                self.arena.free(offset, a.size);
            }
        }
    }
}

/// Bytes of the events page: one u64 slot per signal event.
const EVENT_PAGE_BYTES: u64 = kfd::KFD_SIGNAL_EVENT_LIMIT as u64 * 8;

impl AllocTable {
    pub fn new(
        gpus: &[Device],
        usage: Arc<DeviceUsage>,
        userptr: UserptrMode,
        arena: Arc<Arena>,
        exports: Arc<Exports>,
    ) -> Self {
        AllocTable {
            allocs: BTreeMap::new(),
            next_id: 1,
            usage,
            vram_used: vec![0; gpus.len()],
            gtt_used: vec![0; gpus.len()],
            userptr,
            doorbell_pages: vec![None; gpus.len()],
            mmio_pages: vec![None; gpus.len()],
            event_page: None,
            own_event_page: None,
            lent: BTreeMap::new(),
            shared: BTreeMap::new(),
            arena,
            exports,
            next_import_offset: IMPORT_MMAP_BASE,
        }
    }

    /// Allocation `handle` as a buffer other processes may import: its memory
    /// (and the VRAM/GTT it counts against) moves to a [`SharedBuffer`] that
    /// lives until the last process holding it frees it.
    pub(crate) fn share(&mut self, handle: u64, arena: &Arc<Arena>) -> Result<Arc<SharedBuffer>, KfdError> {
        if let Some(role) = self.shared.get(&handle) {
            return Ok(role.buffer.clone());
        }
        let a = self.allocs.get_mut(&handle).ok_or(KfdError::NoSuchHandle(handle))?;
        let kind = a.flags & alloc_flags::KIND_MASK;
        let offset = match a.backing {
            Backing::Arena { offset, owned: true } if kind == alloc_flags::VRAM || kind == alloc_flags::GTT => offset,
            _ => {
                return Err(KfdError::BadArgument(format!(
                    "buffer {handle:#x} (flags {:#x}) is not VRAM or GTT memory, which is all that can be shared",
                    a.flags
                )))
            }
        };
        // The allocation stays mapped and CPU-visible where it is; only the
        // duty to free its pages moves.
        a.backing = Backing::Arena { offset, owned: false };
        if kind == alloc_flags::VRAM {
            self.vram_used[a.gpu] -= a.size;
        } else {
            self.gtt_used[a.gpu] -= a.size;
        }
        let buffer = Arc::new(SharedBuffer::new(arena.clone(), offset, a, self.usage.clone()));
        self.shared.insert(handle, SharedRole { buffer: buffer.clone(), exporter: true });
        Ok(buffer)
    }

    /// A new allocation of this process over `buffer`, at `va` on GPU `gpu`; it
    /// can be CPU-mapped through the render fd at its `mmap_offset`, as an
    /// imported VRAM buffer on a large-BAR GPU can.
    pub(crate) fn import(&mut self, buffer: Arc<SharedBuffer>, gpu: usize, gpu_id: u32, va: u64) -> u64 {
        let handle = self.new_handle(gpu_id);
        let mmap_offset = self.next_import_offset;
        self.next_import_offset += buffer.size();
        let alloc = Allocation {
            handle,
            gpu,
            va,
            size: buffer.size(),
            flags: buffer.import_flags(),
            backing: imported_backing(&buffer),
            mmap_offset,
            mapped_on: 0,
        };
        tracing::debug!(handle, va, size = alloc.size, "IPC import");
        self.allocs.insert(handle, alloc);
        self.shared.insert(handle, SharedRole { buffer, exporter: false });
        handle
    }

    /// The memory a GPU mapping of `handle` must keep alive, if it is not the
    /// process's own arena.
    fn kept_memory(&self, handle: u64) -> Option<KeptMemory> {
        if let Some(memory) = self.lent.get(&handle) {
            return Some(KeptMemory::Lent(memory.clone()));
        }
        self.shared.get(&handle).map(|role| KeptMemory::Arena(role.buffer.arena().clone()))
    }

    /// VRAM still free on GPU `i` (for every process: the GPU's, not this process's).
    pub fn vram_available(&self, i: usize) -> u64 {
        self.usage.vram_available(i)
    }

    /// VRAM this process uses on GPU `i`.
    pub fn vram_used(&self, i: usize) -> u64 {
        self.vram_used[i]
    }

    /// Number of live allocations.
    pub fn len(&self) -> usize {
        self.allocs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.allocs.is_empty()
    }

    pub fn get(&self, handle: u64) -> Option<&Allocation> {
        self.allocs.get(&handle)
    }

    /// Every live allocation.
    pub fn iter(&self) -> impl Iterator<Item = &Allocation> {
        self.allocs.values()
    }

    pub(crate) fn set_event_page(&mut self, handle: u64) -> Result<(), KfdError> {
        let a = self.allocs.get(&handle).ok_or(KfdError::NoSuchHandle(handle))?;
        if a.size < PAGE_SIZE || !matches!(a.backing, Backing::Arena { .. }) {
            return Err(KfdError::BadArgument(format!("buffer {handle:#x} cannot hold the events page")));
        }
        self.event_page = Some(handle);
        Ok(())
    }

    /// Stores `value` in the events-page slot of signal event `slot`, if the
    /// process has an events page that large.
    pub(crate) fn write_event_slot(&self, arena: &Arena, slot: u32, value: u64) {
        let base = match (self.event_page.and_then(|h| self.allocs.get(&h)), self.own_event_page) {
            (Some(a), _) => match a.backing {
                Backing::Arena { offset, .. } if (slot as u64 + 1) * 8 <= a.size => offset,
                _ => return,
            },
            (None, Some(offset)) => offset,
            (None, None) => return,
        };
        let addr = arena.host_addr(base + slot as u64 * 8);
        // SAFETY: the slot lies inside a live arena allocation (checked
        // above), the arena mapping lives as long as `arena`, and the address
        // is 8-byte aligned (page-aligned base + slot * 8). Other threads and
        // the application access it only with atomic-width stores.
        unsafe { AtomicU64::from_ptr(addr as *mut u64).store(value, Ordering::Release) };
    }

    fn shared_page(pages: &mut [Option<u64>], gpu: usize, arena: &Arena, len: u64) -> Result<u64, KfdError> {
        if let Some(off) = pages[gpu] {
            return Ok(off);
        }
        let off = arena.alloc(len, PAGE_SIZE)?;
        pages[gpu] = Some(off);
        Ok(off)
    }

    fn new_handle(&mut self, gpu_id: u32) -> u64 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        ((gpu_id as u64) << 32) | id as u64
    }
}

impl KfdProcess {
    pub(crate) fn alloc_memory(&self, a: &mut kfd::AllocMemoryOfGpuArgs) -> Result<(), KfdError> {
        self.alloc_memory_with(a, None)
    }

    /// ALLOC_MEMORY_OF_GPU of USERPTR memory in daemon mode, whose pages the
    /// client lent: `payload` is the ioctl's (argument struct), `memory` the
    /// client's memfds mapped here, exactly the registered range in whole
    /// pages.
    pub fn alloc_lent_userptr(&self, payload: &mut [u8], memory: LentMemory) -> Result<(), KfdError> {
        let mut view = split_payload(kfd::cmd::ALLOC_MEMORY_OF_GPU, payload)?;
        let mut a: kfd::AllocMemoryOfGpuArgs = view.get();
        self.alloc_memory_with(&mut a, Some(memory))?;
        view.set(&a);
        Ok(())
    }

    fn alloc_memory_with(&self, a: &mut kfd::AllocMemoryOfGpuArgs, lent: Option<LentMemory>) -> Result<(), KfdError> {
        let gpu = self.gpu_index(a.gpu_id)?;
        let kind = a.flags & alloc_flags::KIND_MASK;
        if kind.count_ones() != 1 {
            return Err(KfdError::BadArgument(format!("allocation flags {:#x} name no single memory kind", a.flags)));
        }
        if a.size == 0 || !a.va_addr.is_multiple_of(PAGE_SIZE) {
            return Err(KfdError::BadArgument(format!("allocation at {:#x} of {:#x} bytes", a.va_addr, a.size)));
        }
        let size = a.size.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        if lent.is_some() && kind != alloc_flags::USERPTR {
            return Err(KfdError::BadArgument(format!("memory lent for a non-USERPTR allocation ({:#x})", a.flags)));
        }
        let mut table = self.allocs();
        let mut lent = lent.map(Arc::new);
        let align = if size >= 2 << 20 { 2 << 20 } else { PAGE_SIZE };
        let (backing, offset_out) = match kind {
            alloc_flags::VRAM => {
                table
                    .usage
                    .reserve_vram(gpu, size)
                    .map_err(|available| KfdError::OutOfMemory { requested: size, available })?;
                let off = self.arena.alloc(size, align).inspect_err(|_| table.usage.release_vram(gpu, size))?;
                table.vram_used[gpu] += size;
                (Backing::Arena { offset: off, owned: true }, BO_MMAP_BASE + off)
            }
            alloc_flags::GTT => {
                table
                    .usage
                    .reserve_gtt(gpu, size)
                    .map_err(|available| KfdError::OutOfMemory { requested: size, available })?;
                let off = self.arena.alloc(size, align).inspect_err(|_| table.usage.release_gtt(gpu, size))?;
                table.gtt_used[gpu] += size;
                (Backing::Arena { offset: off, owned: true }, BO_MMAP_BASE + off)
            }
            alloc_flags::USERPTR => {
                let user = a.mmap_offset;
                if user == 0 || !user.is_multiple_of(PAGE_SIZE) {
                    return Err(KfdError::BadArgument(format!("USERPTR address {user:#x} is not a page address")));
                }
                match (table.userptr, &lent) {
                    (UserptrMode::Direct, None) => (Backing::User { addr: user }, user),
                    (UserptrMode::Lent, Some(memory)) if memory.len() == size => {
                        (Backing::Lent { host: memory.host_addr() }, user)
                    }
                    (UserptrMode::Lent, Some(memory)) => {
                        return Err(KfdError::BadArgument(format!(
                            "{:#x} bytes of memory lent for a {size:#x}-byte USERPTR range",
                            memory.len()
                        )))
                    }
                    (UserptrMode::Lent, None) => {
                        return Err(KfdError::BadArgument(format!(
                            "USERPTR range {user:#x} registered without its memory (the daemon cannot reach \
                             the client's pages otherwise)"
                        )))
                    }
                    (UserptrMode::Direct, Some(_)) => {
                        return Err(KfdError::BadArgument("memory lent to an in-process simulator".into()))
                    }
                }
            }
            alloc_flags::DOORBELL => {
                if size > kfd::DOORBELL_PAGE_SIZE {
                    return Err(KfdError::BadArgument(format!("doorbell allocation of {size:#x} bytes")));
                }
                let off =
                    AllocTable::shared_page(&mut table.doorbell_pages, gpu, &self.arena, kfd::DOORBELL_PAGE_SIZE)?;
                (
                    Backing::Arena { offset: off, owned: false },
                    mmap_offset::encode(mmap_offset::TYPE_DOORBELL, a.gpu_id),
                )
            }
            alloc_flags::MMIO_REMAP => {
                if size > PAGE_SIZE {
                    return Err(KfdError::BadArgument(format!("MMIO allocation of {size:#x} bytes")));
                }
                let off = AllocTable::shared_page(&mut table.mmio_pages, gpu, &self.arena, PAGE_SIZE)?;
                (Backing::Arena { offset: off, owned: false }, mmap_offset::encode(mmap_offset::TYPE_MMIO, a.gpu_id))
            }
            _ => unreachable!("kind has exactly one of the KIND_MASK bits"),
        };
        let handle = table.new_handle(a.gpu_id);
        if let Some(memory) = lent.take() {
            table.lent.insert(handle, memory);
        }
        table.allocs.insert(
            handle,
            Allocation {
                handle,
                gpu,
                va: a.va_addr,
                size,
                flags: a.flags,
                backing,
                mmap_offset: offset_out,
                mapped_on: 0,
            },
        );
        a.handle = handle;
        a.mmap_offset = offset_out;
        tracing::trace!(handle, va = a.va_addr, size, flags = a.flags, mmap_offset = offset_out, "KFD alloc");
        Ok(())
    }

    pub(crate) fn free_memory(&self, handle: u64) -> Result<(), KfdError> {
        let mut table = self.allocs();
        let alloc = *table.allocs.get(&handle).ok_or(KfdError::NoSuchHandle(handle))?;
        if alloc.mapped_on != 0 {
            return Err(KfdError::Busy("the buffer is still mapped to a GPU"));
        }
        table.allocs.remove(&handle);
        table.lent.remove(&handle);
        if let Some(role) = table.shared.remove(&handle) {
            if role.exporter {
                table.exports.revoke(&role.buffer);
            }
        }
        tracing::trace!(handle, va = alloc.va, size = alloc.size, "KFD free");
        if let Backing::Arena { offset, owned: true } = alloc.backing {
            self.arena.free(offset, alloc.size);
            match alloc.flags & alloc_flags::KIND_MASK {
                alloc_flags::VRAM => {
                    table.vram_used[alloc.gpu] -= alloc.size;
                    table.usage.release_vram(alloc.gpu, alloc.size);
                }
                alloc_flags::GTT => {
                    table.gtt_used[alloc.gpu] -= alloc.size;
                    table.usage.release_gtt(alloc.gpu, alloc.size);
                }
                _ => {}
            }
        }
        if table.event_page == Some(handle) {
            table.event_page = None;
        }
        Ok(())
    }

    /// MAP_MEMORY_TO_GPU (`map`) and UNMAP_MEMORY_FROM_GPU (`!map`). Like the
    /// kernel, resumes at `n_success` and reports progress there.
    pub(crate) fn map_memory(&self, view: &mut IoctlView<'_>, map: bool) -> Result<(), KfdError> {
        let mut args: kfd::MapMemoryToGpuArgs = view.get();
        if args.n_success > args.n_devices {
            return Err(KfdError::BadArgument(format!("n_success {} > n_devices {}", args.n_success, args.n_devices)));
        }
        let mut table = self.allocs();
        let mut alloc = *table.allocs.get(&args.handle).ok_or(KfdError::NoSuchHandle(args.handle))?;
        let mut result = Ok(());
        for i in args.n_success as usize..args.n_devices as usize {
            let gpu_id: u32 = read_elem(view.arrays[0], i);
            let gpu = match self.gpu_index(gpu_id) {
                Ok(g) => g,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let bit = 1u64 << gpu;
            if map {
                if alloc.mapped_on == 0 {
                    let range = VmRange {
                        start: alloc.va,
                        len: alloc.size,
                        host: alloc.host_addr(&self.arena),
                        writable: alloc.flags & alloc_flags::WRITABLE != 0,
                        handle: alloc.handle,
                    };
                    let kept = table.kept_memory(alloc.handle);
                    let mapped = self.update_vm(|vm| match kept {
                        Some(memory) => vm.map_kept(range, memory),
                        None => vm.map(range),
                    });
                    if let Err(e) = mapped {
                        result = Err(e.into());
                        break;
                    }
                }
                alloc.mapped_on |= bit;
            } else {
                if alloc.mapped_on & bit == 0 {
                    result =
                        Err(KfdError::BadArgument(format!("buffer {:#x} is not mapped to GPU {gpu_id}", alloc.handle)));
                    break;
                }
                alloc.mapped_on &= !bit;
                if alloc.mapped_on == 0 {
                    self.update_vm(|vm| vm.unmap_handle(alloc.handle));
                }
            }
            args.n_success = i as u32 + 1;
        }
        tracing::trace!(
            handle = alloc.handle,
            va = alloc.va,
            size = alloc.size,
            map,
            mapped_on = alloc.mapped_on,
            "KFD map"
        );
        table.allocs.insert(alloc.handle, alloc);
        view.set(&args);
        result
    }

    /// Allocates `size` bytes of `flags` memory at GPU VA `va` on GPU `gpu`
    /// and maps it there (what ALLOC + MAP do, for in-process users such as
    /// the embedding API). Returns the handle.
    pub fn alloc_and_map(&self, gpu: usize, va: u64, size: u64, flags: u32) -> Result<u64, KfdError> {
        let gpu_id = self.gpus()[gpu].gpu_id;
        let mut a = kfd::AllocMemoryOfGpuArgs { va_addr: va, size, handle: 0, mmap_offset: 0, gpu_id, flags };
        self.alloc_memory(&mut a)?;
        let map = kfd::MapMemoryToGpuArgs { handle: a.handle, device_ids_array_ptr: 0, n_devices: 1, n_success: 0 };
        let mut payload = bytemuck::bytes_of(&map).to_vec();
        payload.extend_from_slice(&gpu_id.to_le_bytes());
        self.ioctl(kfd::cmd::MAP_MEMORY_TO_GPU, &mut payload)?;
        Ok(a.handle)
    }

    /// Resolves an mmap of `len` bytes at `offset` of a device file to the
    /// arena range it maps.
    pub fn mmap_target(&self, file: DeviceFile, offset: u64, len: u64) -> Result<ArenaRange, KfdError> {
        let len = len.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let mut table = self.allocs();
        match file {
            DeviceFile::Render { .. } => {
                let alloc = table
                    .allocs
                    .values()
                    .find(|a| {
                        a.mmap_offset >= BO_MMAP_BASE && offset >= a.mmap_offset && offset < a.mmap_offset + a.size
                    })
                    .ok_or(KfdError::BadMmap { offset, len })?;
                let (foreign, base) = match alloc.backing {
                    Backing::Arena { offset: base, .. } => (None, base),
                    Backing::Shared { .. } => match table.shared.get(&alloc.handle) {
                        Some(role) => (Some(role.buffer.arena().clone()), role.buffer.offset()),
                        None => return Err(KfdError::BadMmap { offset, len }),
                    },
                    Backing::User { .. } | Backing::Lent { .. } => return Err(KfdError::BadMmap { offset, len }),
                };
                let within = offset - alloc.mmap_offset;
                if within + len > alloc.size {
                    return Err(KfdError::BadMmap { offset, len });
                }
                Ok(ArenaRange { foreign, file_offset: base + within, len, writable: true, kind: MapKind::Allocation })
            }
            DeviceFile::Kfd => {
                let gpu = self.gpu_index(mmap_offset::gpu_id(offset)).ok();
                let (page, size, kind) = match (offset & mmap_offset::TYPE_MASK, gpu) {
                    (mmap_offset::TYPE_DOORBELL, Some(g)) => (
                        AllocTable::shared_page(&mut table.doorbell_pages, g, &self.arena, kfd::DOORBELL_PAGE_SIZE)?,
                        kfd::DOORBELL_PAGE_SIZE,
                        MapKind::Doorbell,
                    ),
                    (mmap_offset::TYPE_MMIO, Some(g)) => (
                        AllocTable::shared_page(&mut table.mmio_pages, g, &self.arena, PAGE_SIZE)?,
                        PAGE_SIZE,
                        MapKind::Mmio,
                    ),
                    (mmap_offset::TYPE_EVENTS, _) => {
                        if let Some(a) = table.event_page.and_then(|h| table.allocs.get(&h)) {
                            match a.backing {
                                Backing::Arena { offset, .. } => (offset, a.size, MapKind::Events),
                                Backing::User { .. } | Backing::Lent { .. } | Backing::Shared { .. } => {
                                    return Err(KfdError::BadMmap { offset, len })
                                }
                            }
                        } else {
                            let off = match table.own_event_page {
                                Some(off) => off,
                                None => {
                                    let off = self.arena.alloc(EVENT_PAGE_BYTES, PAGE_SIZE)?;
                                    table.own_event_page = Some(off);
                                    off
                                }
                            };
                            (off, EVENT_PAGE_BYTES, MapKind::Events)
                        }
                    }
                    _ => return Err(KfdError::BadMmap { offset, len }),
                };
                if len > size {
                    return Err(KfdError::BadMmap { offset, len });
                }
                Ok(ArenaRange { foreign: None, file_offset: page, len, writable: true, kind })
            }
        }
    }
}
