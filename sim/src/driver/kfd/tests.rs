//! The KFD as libhsakmt drives it during `hsa_init` (contract §3), ioctl by
//! ioctl, on payloads built the way the preload library builds them.

use super::usage::DeviceUsage;
use super::*;
use crate::config::{default_config, Device};
use crate::gpu::scheduler::Scheduler;
use bytemuck::Pod;
use proto::abi::kfd::{self, alloc_flags, cmd};
use proto::ioctl::{EBUSY, EINVAL, ENOMEM, ENOTTY};
use std::sync::Arc;

/// A process on the default config's GPUs, alone on its scheduler (which stops with it).
fn open(userptr: UserptrMode) -> Arc<KfdProcess> {
    let gpus: Arc<[Device]> = default_config().gpus().to_vec().into();
    let scheduler = Scheduler::new(gpus.len(), None);
    let usage = Arc::new(DeviceUsage::new(gpus.iter().map(|g| g.local_mem_size), 1 << 30));
    KfdProcess::open(1234, gpus, usage, 1 << 30, userptr, scheduler, Default::default()).unwrap()
}

fn process() -> Arc<KfdProcess> {
    open(UserptrMode::Direct)
}

/// Runs an ioctl whose payload is `args` followed by `tail`; returns the
/// updated struct and tail.
fn call<T: Pod>(p: &KfdProcess, request: u32, args: T, tail: &[u8]) -> Result<(T, Vec<u8>), KfdError> {
    let mut payload = bytemuck::bytes_of(&args).to_vec();
    payload.extend_from_slice(tail);
    p.ioctl(request, &mut payload)?;
    let n = std::mem::size_of::<T>();
    Ok((bytemuck::pod_read_unaligned(&payload[..n]), payload[n..].to_vec()))
}

fn gpu_id(p: &KfdProcess) -> u32 {
    p.gpus()[0].gpu_id
}

fn alloc(p: &KfdProcess, va: u64, size: u64, flags: u32, userptr: u64) -> Result<kfd::AllocMemoryOfGpuArgs, KfdError> {
    let a = kfd::AllocMemoryOfGpuArgs { va_addr: va, size, handle: 0, mmap_offset: userptr, gpu_id: gpu_id(p), flags };
    Ok(call(p, cmd::ALLOC_MEMORY_OF_GPU, a, &[])?.0)
}

fn map(p: &KfdProcess, handle: u64, request: u32) -> Result<kfd::MapMemoryToGpuArgs, KfdError> {
    let a = kfd::MapMemoryToGpuArgs { handle, device_ids_array_ptr: 8, n_devices: 1, n_success: 0 };
    Ok(call(p, request, a, &gpu_id(p).to_le_bytes())?.0)
}

#[test]
fn version_is_1_14() {
    let p = process();
    let (v, _) = call(&p, cmd::GET_VERSION, kfd::GetVersionArgs::default(), &[]).unwrap();
    assert_eq!((v.major_version, v.minor_version), (1, 14));
}

#[test]
fn apertures_count_then_fill() {
    let p = process();
    let (a, _) = call(&p, cmd::GET_PROCESS_APERTURES_NEW, kfd::GetProcessAperturesNewArgs::default(), &[]).unwrap();
    assert_eq!(a.num_of_nodes, 1);
    // libhsakmt passes the number of sysfs nodes (CPU + GPU = 2).
    let args = kfd::GetProcessAperturesNewArgs { kfd_process_device_apertures_ptr: 64, num_of_nodes: 2, pad: 0 };
    let (a, tail) = call(&p, cmd::GET_PROCESS_APERTURES_NEW, args, &[0u8; 112]).unwrap();
    assert_eq!(a.num_of_nodes, 1);
    let ap: kfd::ProcessDeviceApertures = bytemuck::pod_read_unaligned(&tail[..56]);
    assert_eq!(ap.gpu_id, gpu_id(&p));
    assert_eq!(ap.lds_base, 1 << 48);
    assert_eq!(ap.scratch_limit, (2 << 48) | 0xffff_ffff);
    assert_eq!(ap.gpuvm_limit, (1 << 47) - 1);
    assert!(tail[56..].iter().all(|&b| b == 0));
}

#[test]
fn unknown_gpu_is_einval() {
    let p = process();
    let e = call(&p, cmd::ACQUIRE_VM, kfd::AcquireVmArgs { drm_fd: 5, gpu_id: 1 }, &[]).unwrap_err();
    assert_eq!(e.errno(), EINVAL);
    call(&p, cmd::ACQUIRE_VM, kfd::AcquireVmArgs { drm_fd: 5, gpu_id: gpu_id(&p) }, &[]).unwrap();
    let e = call(&p, cmd::ACQUIRE_VM, kfd::AcquireVmArgs { drm_fd: 6, gpu_id: gpu_id(&p) }, &[]).unwrap_err();
    assert_eq!(e.errno(), EBUSY);
}

#[test]
fn vram_alloc_map_mmap_write_read_free() {
    let p = process();
    let va = 0x7f00_0000_0000;
    let flags = alloc_flags::VRAM | alloc_flags::WRITABLE | alloc_flags::PUBLIC | alloc_flags::EXECUTABLE;
    let a = alloc(&p, va, 4 << 20, flags, 0).unwrap();
    assert_ne!(a.handle, 0);
    assert!(a.mmap_offset >= mem::BO_MMAP_BASE);
    // Not mapped to the GPU yet: a GPU access faults.
    assert!(p.vm().translate(va, 4, false).is_err());
    let m = map(&p, a.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
    assert_eq!(m.n_success, 1);
    let host = p.vm().translate(va + 16, 4, true).unwrap();
    // The render-node mmap of the returned offset reaches the same pages.
    let t = p.mmap_target(DeviceFile::Render { minor: 128 }, a.mmap_offset, 4 << 20).unwrap();
    assert_eq!(p.arena.host_addr(t.file_offset) + 16, host);
    // Freeing a mapped buffer is refused, like the kernel does.
    let e = call(&p, cmd::FREE_MEMORY_OF_GPU, kfd::FreeMemoryOfGpuArgs { handle: a.handle }, &[]).unwrap_err();
    assert_eq!(e.errno(), EBUSY);
    map(&p, a.handle, cmd::UNMAP_MEMORY_FROM_GPU).unwrap();
    assert!(p.vm().translate(va, 4, false).is_err());
    call(&p, cmd::FREE_MEMORY_OF_GPU, kfd::FreeMemoryOfGpuArgs { handle: a.handle }, &[]).unwrap();
    assert!(p.allocs().is_empty());
    assert_eq!(p.allocs().vram_used(0), 0);
    let e = call(&p, cmd::FREE_MEMORY_OF_GPU, kfd::FreeMemoryOfGpuArgs { handle: a.handle }, &[]).unwrap_err();
    assert_eq!(e.errno(), EINVAL);
}

#[test]
fn vram_is_bounded_by_the_config() {
    let p = process();
    let too_big = p.gpus()[0].local_mem_size + 4096;
    let e = alloc(&p, 0x1000_0000, too_big, alloc_flags::VRAM, 0).unwrap_err();
    assert_eq!(e.errno(), ENOMEM);
    let (avail, _) =
        call(&p, cmd::AVAILABLE_MEMORY, kfd::AvailableMemoryArgs { available: 0, gpu_id: gpu_id(&p), pad: 0 }, &[])
            .unwrap();
    assert_eq!(avail.available, p.gpus()[0].local_mem_size);
}

#[test]
fn userptr_maps_gpu_va_to_the_cpu_address() {
    let p = process();
    let buf = vec![0u64; 1024];
    let cpu = buf.as_ptr() as u64 & !0xfff;
    let gpu_va = 0x5555_0000_0000;
    let a = alloc(&p, gpu_va, 4096, alloc_flags::USERPTR | alloc_flags::WRITABLE, cpu).unwrap();
    map(&p, a.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
    assert_eq!(p.vm().translate(gpu_va + 8, 8, false).unwrap(), cpu as usize + 8);
    assert_eq!(alloc(&p, gpu_va, 4096, alloc_flags::USERPTR, 0).unwrap_err().errno(), EINVAL);
}

/// Daemon mode: the client lends the pages of a USERPTR range as a memfd.
#[test]
fn lent_userptr_reaches_the_lenders_pages_and_outlives_vm_snapshots() {
    use crate::gpu::memory::{GpuMem, LentMemory, LentPiece};
    use rustix::fd::AsFd;
    use rustix::fs::{MemfdFlags, SealFlags};
    let p = open(UserptrMode::Lent);
    let fd = rustix::fs::memfd_create("lender", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).unwrap();
    rustix::fs::ftruncate(&fd, 0x2000).unwrap();
    rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK).unwrap();
    let user = 0x7f12_3456_7000u64;
    let args = kfd::AllocMemoryOfGpuArgs {
        va_addr: 0x5555_0000_0000,
        size: 0x1800,
        mmap_offset: user,
        gpu_id: gpu_id(&p),
        flags: alloc_flags::USERPTR | alloc_flags::WRITABLE,
        ..Default::default()
    };
    // Without its memory, or with too little, the registration is refused.
    assert_eq!(alloc(&p, args.va_addr, args.size, args.flags, user).unwrap_err().errno(), EINVAL);
    let piece = |len| [LentPiece { fd: fd.as_fd(), offset: 0, len }];
    let mut payload = bytemuck::bytes_of(&args).to_vec();
    let short = LentMemory::map(&piece(0x1000)).unwrap();
    assert_eq!(p.alloc_lent_userptr(&mut payload, short).unwrap_err().errno(), EINVAL);
    p.alloc_lent_userptr(&mut payload, LentMemory::map(&piece(0x2000)).unwrap()).unwrap();
    let a: kfd::AllocMemoryOfGpuArgs = bytemuck::pod_read_unaligned(&payload);
    assert_eq!(a.mmap_offset, user, "USERPTR memory has no mmap offset of its own");
    map(&p, a.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
    let snapshot = p.vm();
    GpuMem::new(&snapshot).write::<u32>(args.va_addr + 0x1004, 0xfeed_f00d).unwrap();
    let mut word = [0u8; 4];
    rustix::io::pread(&fd, &mut word, 0x1004).unwrap();
    assert_eq!(u32::from_le_bytes(word), 0xfeed_f00d, "the GPU wrote the lender's page");
    // Unmapped and freed while a GPU thread still holds a snapshot: the mapping
    // stays valid for that snapshot.
    map(&p, a.handle, cmd::UNMAP_MEMORY_FROM_GPU).unwrap();
    call(&p, cmd::FREE_MEMORY_OF_GPU, kfd::FreeMemoryOfGpuArgs { handle: a.handle }, &[]).unwrap();
    assert!(p.vm().translate(args.va_addr, 4, false).is_err());
    assert_eq!(GpuMem::new(&snapshot).read::<u32>(args.va_addr + 0x1004).unwrap(), 0xfeed_f00d);
}

#[test]
fn doorbell_and_mmio_pages_map_through_the_kfd_fd() {
    let p = process();
    let id = gpu_id(&p);
    let db = alloc(&p, 0x6000_0000, 0x2000, alloc_flags::DOORBELL | alloc_flags::WRITABLE, 0).unwrap();
    assert_eq!(db.mmap_offset, (3 << 62) | ((id as u64) << 46));
    let t = p.mmap_target(DeviceFile::Kfd, db.mmap_offset, 0x2000).unwrap();
    let mmio = alloc(&p, 0x6001_0000, 0x1000, alloc_flags::MMIO_REMAP | alloc_flags::WRITABLE, 0).unwrap();
    assert_eq!(mmio.mmap_offset, (id as u64) << 46);
    let t2 = p.mmap_target(DeviceFile::Kfd, mmio.mmap_offset, 0x1000).unwrap();
    assert_ne!(t.file_offset, t2.file_offset);
    // Too long, or an offset naming no GPU: refused.
    assert!(p.mmap_target(DeviceFile::Kfd, db.mmap_offset, 0x3000).is_err());
    assert!(p.mmap_target(DeviceFile::Kfd, 3 << 62, 0x1000).is_err());
    assert!(p.mmap_target(DeviceFile::Render { minor: 128 }, 0x1234_0000, 0x1000).is_err());
}

#[test]
fn events_page_then_signal_event_then_wait() {
    let p = process();
    let page = alloc(&p, 0x7000_0000, 0x8000, alloc_flags::GTT | alloc_flags::WRITABLE, 0).unwrap();
    let args = kfd::CreateEventArgs {
        event_page_offset: page.handle,
        event_type: kfd::KFD_IOC_EVENT_MEMORY,
        ..Default::default()
    };
    let (mem_ev, _) = call(&p, cmd::CREATE_EVENT, args, &[]).unwrap();
    assert!(mem_ev.event_id >= events::FIRST_NONSIGNAL_EVENT_ID);
    let args = kfd::CreateEventArgs { event_type: kfd::KFD_IOC_EVENT_SIGNAL, auto_reset: 1, ..Default::default() };
    let (sig, _) = call(&p, cmd::CREATE_EVENT, args, &[]).unwrap();
    assert_ne!(sig.event_page_offset, 0, "libhsakmt needs a non-zero offset to set the mailbox");
    // The slot of the new signal event holds the unsignaled marker.
    let t = p.mmap_target(DeviceFile::Render { minor: 128 }, page.mmap_offset, 0x8000).unwrap();
    let slot = p.arena.host_addr(t.file_offset) + sig.event_slot_index as usize * 8;
    // SAFETY: `slot` is inside the 32 KiB events page allocated above.
    assert_eq!(unsafe { *(slot as *const u64) }, u64::MAX);

    let ev = kfd::EventData { event_id: sig.event_id, ..Default::default() };
    let wait = kfd::WaitEventsArgs { events_ptr: 1, num_events: 1, wait_for_all: 0, timeout: 0, wait_result: 9 };
    let (w, _) = call(&p, cmd::WAIT_EVENTS, wait, bytemuck::bytes_of(&ev)).unwrap();
    assert_eq!(w.wait_result, kfd::KFD_IOC_WAIT_RESULT_TIMEOUT);
    call(&p, cmd::SET_EVENT, kfd::EventIdArgs { event_id: sig.event_id, pad: 0 }, &[]).unwrap();
    let wait = kfd::WaitEventsArgs { timeout: 1000, ..wait };
    let (w, _) = call(&p, cmd::WAIT_EVENTS, wait, bytemuck::bytes_of(&ev)).unwrap();
    assert_eq!(w.wait_result, kfd::KFD_IOC_WAIT_RESULT_COMPLETE);
    call(&p, cmd::DESTROY_EVENT, kfd::EventIdArgs { event_id: sig.event_id, pad: 0 }, &[]).unwrap();
    let e = call(&p, cmd::WAIT_EVENTS, wait, bytemuck::bytes_of(&ev)).unwrap_err();
    assert_eq!(e.errno(), EINVAL);
}

#[test]
fn clock_counters_with_and_without_a_gpu() {
    let p = process();
    let args = kfd::GetClockCountersArgs { gpu_id: gpu_id(&p), ..Default::default() };
    let (c, _) = call(&p, cmd::GET_CLOCK_COUNTERS, args, &[]).unwrap();
    assert!(c.gpu_clock_counter > 0 && c.cpu_clock_counter > 0 && c.system_clock_counter > 0);
    assert_eq!(c.system_clock_freq, 1_000_000_000);
    let (c, _) = call(&p, cmd::GET_CLOCK_COUNTERS, kfd::GetClockCountersArgs::default(), &[]).unwrap();
    assert_eq!(c.gpu_clock_counter, 0);
}

#[test]
fn xnack_query_and_set() {
    let p = process();
    let (x, _) = call(&p, cmd::SET_XNACK_MODE, kfd::SetXnackModeArgs { xnack_enabled: -1 }, &[]).unwrap();
    assert_eq!(x.xnack_enabled, 0);
    call(&p, cmd::SET_XNACK_MODE, kfd::SetXnackModeArgs { xnack_enabled: 1 }, &[]).unwrap();
    assert!(p.xnack_enabled());
}

#[test]
fn tile_config_reports_gb_addr_config_and_caps_counts() {
    let p = process();
    let args = kfd::GetTileConfigArgs {
        tile_config_ptr: 1,
        macro_tile_config_ptr: 2,
        num_tile_configs: 40,
        num_macro_tile_configs: 4,
        gpu_id: gpu_id(&p),
        ..Default::default()
    };
    let (t, tail) = call(&p, cmd::GET_TILE_CONFIG, args, &[0xaa; 44 * 4]).unwrap();
    assert_eq!((t.num_tile_configs, t.num_macro_tile_configs), (32, 4));
    assert_eq!(t.gb_addr_config, device::GB_ADDR_CONFIG_GFX9);
    assert!(tail.iter().all(|&b| b == 0));
}

#[test]
fn scratch_and_trap_handler_are_recorded() {
    let p = process();
    let id = gpu_id(&p);
    call(
        &p,
        cmd::SET_SCRATCH_BACKING_VA,
        kfd::SetScratchBackingVaArgs { va_addr: 0x7f12_3456, gpu_id: id, pad: 0 },
        &[],
    )
    .unwrap();
    call(
        &p,
        cmd::SET_TRAP_HANDLER,
        kfd::SetTrapHandlerArgs { tba_addr: 0x1000, tma_addr: 0x2000, gpu_id: id, pad: 0 },
        &[],
    )
    .unwrap();
    let s = p.device_settings(0).unwrap();
    assert_eq!(s.scratch_backing_va, Some(0x7f12_3456 << 16));
    assert_eq!(s.trap_handler, Some((0x1000, 0x2000)));
}

#[test]
fn unsupported_and_unknown_ioctls_fail_loudly() {
    let p = process();
    let e = call(&p, cmd::DBG_TRAP, kfd::DbgTrapArgs { op: 7, ..Default::default() }, &[]).unwrap_err();
    assert_eq!(e.errno(), EINVAL);
    assert!(!e.is_unsupported_request(), "the debugger probe is expected to fail quietly");
    let e = call(&p, cmd::SMI_EVENTS, kfd::SmiEventsArgs::default(), &[]).unwrap_err();
    assert_eq!(e.errno(), EINVAL);
    assert!(e.is_unsupported_request());
    let e = p.ioctl(0xc0084bee, &mut [0u8; 8]).unwrap_err();
    assert_eq!(e.errno(), ENOTTY);
    assert!(e.is_unsupported_request());
}

#[test]
fn one_queue_per_process_and_gpu_holds_the_gws() {
    use crate::gpu::queue::{Queue, QueueKind};
    let p = process();
    for id in [0, 1] {
        p.queues().insert(Arc::new(Queue::new(id, 0, QueueKind::Aql, 0, 4096, 0x38, 0x80, id, 100, 7)));
    }
    let gws = |queue_id, num_gws| {
        let a = kfd::AllocQueueGwsArgs { queue_id, num_gws, first_gws: 99, pad: 0 };
        call(&p, cmd::ALLOC_QUEUE_GWS, a, &[]).map(|(a, _)| a.first_gws).map_err(|e| e.errno())
    };
    assert_eq!(gws(7, 1), Err(EINVAL), "no such queue");
    assert_eq!(gws(0, 0), Err(EINVAL), "nothing to release");
    assert_eq!(gws(0, 1), Ok(0));
    assert_eq!(gws(1, 1), Err(EBUSY), "queue 0 holds them");
    assert_eq!(gws(0, 1), Err(EBUSY), "already held");
    assert_eq!(gws(0, 0), Ok(0));
    assert_eq!(gws(1, 1), Ok(0));
}

/// HIP IPC: two daemon clients of one machine share a buffer (legacy share
/// handles and dmabufs), and the handles behave as capabilities.
mod ipc {
    use super::*;
    use rustix::fd::AsFd;

    /// What a daemon's processes share: the GPUs' usage, the exported buffers, the scheduler.
    struct Shared {
        gpus: Arc<[Device]>,
        usage: Arc<DeviceUsage>,
        exports: Arc<crate::driver::kfd::ipc::Exports>,
        scheduler: Arc<Scheduler>,
    }

    impl Shared {
        fn open_process(&self, pid: u32, userptr: UserptrMode) -> Result<Arc<KfdProcess>, KfdError> {
            let (gpus, usage, scheduler) = (self.gpus.clone(), self.usage.clone(), self.scheduler.clone());
            KfdProcess::open(pid, gpus, usage, 1 << 30, userptr, scheduler, self.exports.clone())
        }

        fn usage(&self) -> &DeviceUsage {
            &self.usage
        }
    }

    fn service() -> Shared {
        let gpus: Arc<[Device]> = default_config().gpus().to_vec().into();
        let scheduler = Scheduler::new(gpus.len(), None);
        let usage = Arc::new(DeviceUsage::new(gpus.iter().map(|g| g.local_mem_size), 1 << 30));
        Shared { gpus, usage, exports: Default::default(), scheduler }
    }

    const VRAM: u32 = alloc_flags::VRAM | alloc_flags::WRITABLE | alloc_flags::EXECUTABLE;
    const SIZE: u64 = 2 << 20;

    /// Allocates and maps SIZE bytes of VRAM at `va` and writes `pattern` at
    /// byte `at` through the GPU's view.
    fn filled(p: &KfdProcess, va: u64, at: u64, pattern: u32) -> u64 {
        let a = alloc(p, va, SIZE, VRAM, 0).unwrap();
        map(p, a.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
        write_u32(p, va + at, pattern);
        a.handle
    }

    fn write_u32(p: &KfdProcess, va: u64, v: u32) {
        let host = p.vm().translate(va, 4, true).unwrap();
        // SAFETY: `translate` checked that 4 writable bytes at `va` are mapped at `host`.
        unsafe { (host as *mut u32).write_volatile(v) };
    }

    fn read_u32(p: &KfdProcess, va: u64) -> u32 {
        let host = p.vm().translate(va, 4, false).unwrap();
        // SAFETY: `translate` checked that 4 bytes at `va` are mapped at `host`.
        unsafe { (host as *const u32).read_volatile() }
    }

    fn free(p: &KfdProcess, handle: u64) -> Result<(), KfdError> {
        let _ = call(
            p,
            cmd::UNMAP_MEMORY_FROM_GPU,
            kfd::MapMemoryToGpuArgs { handle, device_ids_array_ptr: 8, n_devices: 1, n_success: 0 },
            &gpu_id(p).to_le_bytes(),
        );
        call(p, cmd::FREE_MEMORY_OF_GPU, kfd::FreeMemoryOfGpuArgs { handle }, &[]).map(drop)
    }

    fn export(p: &KfdProcess, handle: u64) -> Result<[u32; 4], KfdError> {
        let a = kfd::IpcExportHandleArgs { handle, gpu_id: gpu_id(p), flags: 0x1234, ..Default::default() };
        Ok(call(p, cmd::IPC_EXPORT_HANDLE, a, &[])?.0.share_handle)
    }

    fn import(p: &KfdProcess, key: [u32; 4], va: u64) -> Result<kfd::IpcImportHandleArgs, KfdError> {
        let a = kfd::IpcImportHandleArgs { share_handle: key, gpu_id: gpu_id(p), va_addr: va, ..Default::default() };
        Ok(call(p, cmd::IPC_IMPORT_HANDLE, a, &[])?.0)
    }

    #[test]
    fn a_share_handle_maps_the_exporters_memory_until_the_importer_frees_it() {
        let s = service();
        let (a, b) = (s.open_process(1, UserptrMode::Lent).unwrap(), s.open_process(2, UserptrMode::Lent).unwrap());
        let handle = filled(&a, 0x7f00_0000_0000, 4096, 0xfeed_beef);
        let used = s.usage().vram_used(0);
        let key = export(&a, handle).unwrap();
        assert_eq!(export(&a, handle).unwrap(), key, "one buffer, one share handle");
        let imported = import(&b, key, 0x7e00_0000_0000).unwrap();
        assert_eq!(imported.flags, 0x1234, "the exporter's flags");
        map(&b, imported.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
        assert_eq!(read_u32(&b, 0x7e00_0000_0000 + 4096), 0xfeed_beef);
        // The importer's CPU mapping (the render fd at the returned offset) is the
        // exporter's memory file, at the buffer's place in it.
        let render = DeviceFile::Render { minor: 128 };
        let t = b.mmap_target(render, imported.mmap_offset + 4096, 4096).unwrap();
        let arena = t.foreign.expect("the exporter's memory file");
        assert!(Arc::ptr_eq(&arena, &a.arena));
        assert_eq!(arena.host_addr(t.file_offset), a.vm().translate(0x7f00_0000_0000 + 4096, 4, false).unwrap());
        assert!(b.mmap_target(render, imported.mmap_offset + SIZE, 4096).is_err(), "nothing past the buffer");
        write_u32(&b, 0x7e00_0000_0000 + 8, 7);
        assert_eq!(read_u32(&a, 0x7f00_0000_0000 + 8), 7, "both see one memory");

        // A forged handle (one bit off) opens nothing.
        let mut forged = key;
        forged[2] ^= 1 << 7;
        assert_eq!(import(&b, forged, 0x7d00_0000_0000).unwrap_err().errno(), EINVAL);

        // The exporter frees: the handle is stale, the importer keeps the memory
        // and the GPU keeps counting it.
        free(&a, handle).unwrap();
        assert_eq!(import(&b, key, 0x7d00_0000_0000).unwrap_err().errno(), EINVAL);
        assert_eq!(read_u32(&b, 0x7e00_0000_0000 + 4096), 0xfeed_beef);
        assert_eq!(s.usage().vram_used(0), used);
        free(&b, imported.handle).unwrap();
        assert_eq!(s.usage().vram_used(0), used - SIZE, "the last holder gave the VRAM back");
    }

    #[test]
    fn an_importer_keeps_the_memory_of_an_exporter_that_exits() {
        let s = service();
        let b = s.open_process(2, UserptrMode::Lent).unwrap();
        let key = {
            let a = s.open_process(1, UserptrMode::Lent).unwrap();
            let handle = filled(&a, 0x7f00_0000_0000, 0, 42);
            let key = export(&a, handle).unwrap();
            let imported = import(&b, key, 0x7e00_0000_0000).unwrap();
            map(&b, imported.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
            a.close();
            key
        };
        assert_eq!(read_u32(&b, 0x7e00_0000_0000), 42);
        assert_eq!(import(&b, key, 0x7d00_0000_0000).unwrap_err().errno(), EINVAL, "the exporter's exit revoked it");
        b.close();
        drop(b);
        assert_eq!(s.usage().vram_used(0), 0);
    }

    #[test]
    fn a_dmabuf_names_its_buffer_and_nothing_else() {
        let s = service();
        let (a, b) = (s.open_process(1, UserptrMode::Lent).unwrap(), s.open_process(2, UserptrMode::Lent).unwrap());
        let handle = filled(&a, 0x7f00_0000_0000, 64, 99);
        let export = kfd::ExportDmabufArgs { handle, flags: 0, dmabuf_fd: 0 };
        let dmabuf = a.export_dmabuf(&mut bytemuck::bytes_of(&export).to_vec()).unwrap();
        assert_eq!(rustix::fs::fstat(&dmabuf).unwrap().st_size as u64, SIZE, "lseek(SEEK_END) is the size");

        let info = kfd::GetDmabufInfoArgs { metadata_size: 32, metadata_ptr: 8, ..Default::default() };
        let mut payload = bytemuck::bytes_of(&info).to_vec();
        payload.extend_from_slice(&[0; 32]);
        b.dmabuf_info(&mut payload, dmabuf.as_fd()).unwrap();
        let info: kfd::GetDmabufInfoArgs = bytemuck::pod_read_unaligned(&payload[..32]);
        assert_eq!((info.size, info.gpu_id, info.flags), (SIZE, gpu_id(&b), alloc_flags::VRAM));

        let import = kfd::ImportDmabufArgs { va_addr: 0x7e00_0000_0000, gpu_id: gpu_id(&b), ..Default::default() };
        let mut payload = bytemuck::bytes_of(&import).to_vec();
        b.import_dmabuf(&mut payload, dmabuf.as_fd()).unwrap();
        let import: kfd::ImportDmabufArgs = bytemuck::pod_read_unaligned(&payload);
        map(&b, import.handle, cmd::MAP_MEMORY_TO_GPU).unwrap();
        assert_eq!(read_u32(&b, 0x7e00_0000_0000 + 64), 99);

        // Another file of the same size is no dmabuf of ours.
        let other = rustix::fs::memfd_create("forged", rustix::fs::MemfdFlags::empty()).unwrap();
        rustix::fs::ftruncate(&other, SIZE).unwrap();
        let mut payload = bytemuck::bytes_of(&import).to_vec();
        assert_eq!(b.import_dmabuf(&mut payload, other.as_fd()).unwrap_err().errno(), EINVAL);
        // Without its file the request cannot name a dmabuf.
        assert_eq!(b.ioctl(cmd::IMPORT_DMABUF, &mut payload).unwrap_err().errno(), EINVAL);
        // The exporter's free makes the dmabuf stale.
        free(&a, handle).unwrap();
        assert_eq!(b.import_dmabuf(&mut payload, dmabuf.as_fd()).unwrap_err().errno(), EINVAL);
        assert_eq!(read_u32(&b, 0x7e00_0000_0000 + 64), 99);
    }

    #[test]
    fn a_process_with_its_own_gpu_cannot_export() {
        let p = process();
        let handle = alloc(&p, 0x7f00_0000_0000, SIZE, VRAM, 0).unwrap().handle;
        let e = export(&p, handle).unwrap_err();
        assert!(matches!(e, KfdError::NeedsDaemon(_)), "{e}");
        assert!(e.to_string().contains("rocjitsu --daemon"), "{e}");
        let export = kfd::ExportDmabufArgs { handle, flags: 0, dmabuf_fd: 0 };
        let e = call(&p, cmd::EXPORT_DMABUF, export, &[]).unwrap_err();
        assert!(matches!(e, KfdError::NeedsDaemon(_)), "{e}");
    }

    #[test]
    fn a_refusal_is_worth_one_warning_per_process() {
        let (p, q) = (process(), process());
        assert!(p.first_warning("IPC_EXPORT_HANDLE: refused"));
        assert!(!p.first_warning("IPC_EXPORT_HANDLE: refused"), "said already");
        assert!(p.first_warning("another refusal"));
        assert!(q.first_warning("IPC_EXPORT_HANDLE: refused"), "another process hears it too");
    }

    #[test]
    fn only_vram_and_gtt_can_be_shared() {
        let s = service();
        let a = s.open_process(1, UserptrMode::Lent).unwrap();
        let doorbell = alloc(&a, 0x7f00_0000_0000, 8192, alloc_flags::DOORBELL, 0).unwrap().handle;
        assert_eq!(export(&a, doorbell).unwrap_err().errno(), EINVAL);
        assert_eq!(export(&a, 0x1234_5678).unwrap_err().errno(), EINVAL, "no such handle");
    }
}
