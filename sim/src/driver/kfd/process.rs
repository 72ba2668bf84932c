//! `KfdProcess`: the driver state of one application process (one open of
//! `/dev/kfd` in local mode, one daemon client in daemon mode), and the ioctl
//! dispatch.
//!
//! Every ioctl arrives as a payload built by `proto::ioctl` (argument struct
//! plus inlined arrays), so the same code serves local and daemon mode and
//! never dereferences a pointer from the application.

use super::events::EventTable;
use super::ipc::Exports;
use super::mem::{AllocTable, UserptrMode};
use super::usage::DeviceUsage;
use super::KfdError;
use crate::clock;
use crate::config::Device;
use crate::gpu::context::Context;
use crate::gpu::exec::memory::{
    PRIVATE_APERTURE_BASE as SCRATCH_APERTURE_BASE, SHARED_APERTURE_BASE as LDS_APERTURE_BASE,
};
use crate::gpu::gws::GwsTable;
use crate::gpu::memory::{Arena, GpuFault, GpuVm};
use crate::gpu::queue::{Queue, QueueTable};
use crate::gpu::scheduler::Scheduler;
use crate::gpu::stats::{ProcessStats, StatsReport};
use crate::gpu::trace::TraceLog;
use arc_swap::ArcSwap;
use bytemuck::Pod;
use proto::abi::kfd::{self, cmd};
use proto::ioctl::{canonical, split_payload, IoctlView};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The GPU VA range libhsakmt may use (as a current kernel reports it): from
/// 2 MiB to the top of the 47-bit user address space. Because the limit
/// reaches 2^47-1, libhsakmt picks GPU VAs with plain `mmap`, so CPU VA ==
/// GPU VA for host-visible buffers.
pub const GPUVM_BASE: u64 = 0x20_0000;
pub const GPUVM_LIMIT: u64 = (1 << 47) - 1;
/// The LDS and scratch apertures are the GPU's (it decodes flat addresses with them); the
/// driver reports them (kernel `MAKE_LDS_APP_BASE` etc.), each 4 GiB.
const APERTURE_SIZE_MASK: u64 = 0xffff_ffff;

/// What a process holds, for status reports.
#[derive(Debug, Clone, Default)]
pub struct ProcessSummary {
    pub allocations: Vec<AllocationSummary>,
    pub queues: Vec<QueueSummary>,
    pub events: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct AllocationSummary {
    pub handle: u64,
    pub va: u64,
    pub size: u64,
    pub gpu_id: u32,
    pub flags: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct QueueSummary {
    pub id: u32,
    pub gpu_id: u32,
    /// KFD queue type (2 AQL, 1 SDMA).
    pub queue_type: u32,
    pub ring_base: u64,
    pub ring_bytes: u64,
    /// Packets consumed, dispatches done, the kernel running now.
    pub activity: crate::gpu::queue::ActivitySnapshot,
}

/// Per-process, per-GPU settings the runtime makes once.
#[derive(Debug, Default, Clone)]
pub struct DeviceSettings {
    pub drm_fd: Option<u32>,
    pub default_policy: u32,
    pub alternate_policy: u32,
    pub alternate_aperture: (u64, u64),
    /// SET_SCRATCH_BACKING_VA's address (already shifted back to bytes).
    pub scratch_backing_va: Option<u64>,
    pub trap_handler: Option<(u64, u64)>,
}

#[derive(Debug)]
struct Settings {
    devices: Vec<DeviceSettings>,
    xnack_enabled: bool,
}

/// The driver-side state of one process.
#[derive(Debug)]
pub struct KfdProcess {
    pid: u32,
    gpus: Arc<[Device]>,
    pub(crate) arena: Arc<Arena>,
    /// The machine's exported buffers (HIP IPC).
    pub(crate) exports: Arc<Exports>,
    /// How USERPTR memory is reached (fixed for the process's life).
    userptr: UserptrMode,
    /// The GPU address space, replaced (copy-on-write) by map/unmap so that
    /// the GPU threads read a consistent snapshot without holding a lock.
    vm: ArcSwap<GpuVm>,
    vm_update: Mutex<()>,
    events: EventTable,
    pub(crate) allocs: Mutex<AllocTable>,
    settings: Mutex<Settings>,
    queues: Mutex<QueueTable>,
    scheduler: Arc<Scheduler>,
    /// Set when the process goes away: running dispatches stop early.
    closing: AtomicBool,
    /// Global wave sync resources, per GPU.
    gws: Box<[crate::gpu::gws::GwsTable]>,
    /// Run statistics, once the process asks for them ([`Self::enable_stats`]).
    stats: std::sync::OnceLock<ProcessStats>,
    /// Its timeline, once it asks for one ([`Self::enable_trace`]).
    trace: std::sync::OnceLock<TraceLog>,
    /// The timeline as written, kept from the first piece a daemon client fetches to the last.
    trace_document: Mutex<Option<Arc<Vec<u8>>>>,
    /// The failures already warned about ([`Self::first_warning`]).
    warned: Mutex<Vec<String>>,
}

impl KfdProcess {
    /// A fresh process on `gpus`, allocating against the machine's `usage`, whose queues
    /// `scheduler` serves from now on. `gtt_budget` sizes its memory file's host-memory part;
    /// `userptr` says how USERPTR memory is reached; `exports` are the machine's buffers
    /// shared between processes.
    pub fn open(
        pid: u32,
        gpus: Arc<[Device]>,
        usage: Arc<DeviceUsage>,
        gtt_budget: u64,
        userptr: UserptrMode,
        scheduler: Arc<Scheduler>,
        exports: Arc<Exports>,
    ) -> Result<Arc<Self>, KfdError> {
        let vram: u64 = gpus.iter().map(|g| g.local_mem_size).sum();
        // Doorbell and MMIO pages, plus slack for alignment.
        let extra = 64 << 20;
        let arena = Arc::new(Arena::new(&format!("rocjitsu-gpu-memory-{pid}"), vram + gtt_budget + extra)?);
        let devices = vec![DeviceSettings::default(); gpus.len()];
        let devices_count = gpus.len();
        let process = Arc::new(KfdProcess {
            pid,
            allocs: Mutex::new(AllocTable::new(&gpus, usage, userptr, arena.clone(), exports.clone())),
            gpus,
            arena,
            exports,
            userptr,
            vm: ArcSwap::from_pointee(GpuVm::new()),
            vm_update: Mutex::new(()),
            events: EventTable::new(),
            settings: Mutex::new(Settings { devices, xnack_enabled: false }),
            gws: (0..devices_count).map(|_| Default::default()).collect(),
            queues: Mutex::new(QueueTable::default()),
            scheduler: scheduler.clone(),
            closing: AtomicBool::new(false),
            stats: std::sync::OnceLock::new(),
            trace: std::sync::OnceLock::new(),
            trace_document: Mutex::new(None),
            warned: Mutex::new(Vec::new()),
        });
        let context: Arc<dyn Context> = process.clone();
        scheduler.register(&context);
        Ok(process)
    }

    /// Whether `message` is new for this process: a request the simulator refuses is worth one
    /// warning, not one per call (RCCL asks for an IPC handle of every buffer it registers).
    pub fn first_warning(&self, message: &str) -> bool {
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.iter().any(|w| w == message) {
            return false;
        }
        // Bounded: a process cycling through distinct failures keeps warning about each.
        if warned.len() == 64 {
            warned.remove(0);
        }
        warned.push(message.to_string());
        true
    }

    /// The memfd behind every VRAM/GTT/doorbell/MMIO buffer of this process
    /// (what device-file mmaps map).
    pub fn arena_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.arena.fd()
    }

    /// Whether other processes share this process's machine (a daemon's
    /// clients do; a process that runs the simulator inside itself does not),
    /// so that buffers can cross to them.
    pub fn shares_machine(&self) -> bool {
        self.userptr == UserptrMode::Lent
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn gpus(&self) -> &[Device] {
        &self.gpus
    }

    pub fn events(&self) -> &EventTable {
        &self.events
    }

    /// From now on, dispatches count their instructions and SDMA queues their copies
    /// (`ROCJITSU_STATS`). Dispatches already running stay uncounted.
    pub fn enable_stats(&self) {
        self.stats.get_or_init(ProcessStats::default);
    }

    /// The statistics so far, if the process keeps them.
    pub fn stats_report(&self) -> Option<StatsReport> {
        self.stats.get().map(|s| s.report(self.pid))
    }

    /// From now on, the process's dispatches, workgroup turns, copies and ioctls go into its
    /// timeline (`ROCJITSU_TRACE`).
    pub fn enable_trace(&self) {
        self.trace.get_or_init(TraceLog::default);
    }

    /// The timeline as a Chrome trace-event JSON document (`process_name` names the process
    /// track), if the process keeps one.
    pub fn trace_document(&self, process_name: &str) -> Option<Vec<u8>> {
        self.trace.get().map(|t| t.to_chrome_json(self.pid, process_name))
    }

    /// Up to `max` bytes of the timeline's document from `offset`, for a daemon client that
    /// fetches it in frames: the document is written when piece 0 is asked for and kept until
    /// the last piece (shorter than `max`) is taken.
    pub fn trace_piece(&self, process_name: &str, offset: u64, max: usize) -> Option<Vec<u8>> {
        let mut kept = self.trace_document.lock().unwrap_or_else(|e| e.into_inner());
        if offset == 0 || kept.is_none() {
            *kept = Some(Arc::new(self.trace_document(process_name)?));
        }
        let document = kept.clone().expect("set above");
        let start = (offset as usize).min(document.len());
        let end = start.saturating_add(max).min(document.len());
        if end - start < max {
            *kept = None;
        }
        Some(document[start..end].to_vec())
    }

    /// A snapshot of the GPU address space, for the simulated GPU's memory
    /// accesses (held for the duration of one packet or copy).
    pub fn vm(&self) -> Arc<GpuVm> {
        self.vm.load_full()
    }

    /// Changes the GPU address space: copies the current map, applies `f`,
    /// publishes the result.
    pub(crate) fn update_vm<R>(&self, f: impl FnOnce(&mut GpuVm) -> R) -> R {
        let _serial = self.vm_update.lock().unwrap_or_else(|e| e.into_inner());
        let mut next = GpuVm::clone(&self.vm.load());
        let r = f(&mut next);
        self.vm.store(Arc::new(next));
        r
    }

    pub(crate) fn allocs(&self) -> MutexGuard<'_, AllocTable> {
        self.allocs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn settings(&self) -> MutexGuard<'_, Settings> {
        self.settings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The settings of one GPU (scratch, trap handler, …), for the command
    /// processor.
    pub fn device_settings(&self, gpu_index: usize) -> Option<DeviceSettings> {
        self.settings().devices.get(gpu_index).cloned()
    }

    /// Whether XNACK (retry on page fault) is enabled for this process.
    pub fn xnack_enabled(&self) -> bool {
        self.settings().xnack_enabled
    }

    /// The index of the GPU with `gpu_id`.
    pub fn gpu_index(&self, gpu_id: u32) -> Result<usize, KfdError> {
        self.gpus.iter().position(|g| g.gpu_id == gpu_id).ok_or(KfdError::NoSuchGpu(gpu_id))
    }

    pub(crate) fn queues(&self) -> MutexGuard<'_, QueueTable> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// The live queues of this process on GPU `gpu`.
    pub fn queues_on(&self, gpu: usize) -> Vec<Arc<Queue>> {
        self.queues().on_gpu(gpu)
    }

    /// Its allocations, queues and events, for status reports.
    pub fn summary(&self) -> ProcessSummary {
        let allocations = self
            .allocs()
            .iter()
            .map(|a| AllocationSummary {
                handle: a.handle,
                va: a.va,
                size: a.size,
                gpu_id: self.gpus[a.gpu].gpu_id,
                flags: a.flags,
            })
            .collect();
        let queues = self
            .queues()
            .all()
            .iter()
            .map(|q| {
                let (ring_base, ring_bytes) = q.ring();
                QueueSummary {
                    id: q.id,
                    gpu_id: self.gpus[q.gpu].gpu_id,
                    queue_type: match q.kind {
                        crate::gpu::queue::QueueKind::Aql => kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
                        crate::gpu::queue::QueueKind::Sdma => kfd::KFD_IOC_QUEUE_TYPE_SDMA,
                    },
                    ring_base,
                    ring_bytes,
                    activity: q.activity.snapshot(),
                }
            })
            .collect();
        ProcessSummary { allocations, queues, events: self.events.len() }
    }

    /// The GWS resources of GPU `gpu` (index).
    pub fn gws(&self, gpu: usize) -> &GwsTable {
        &self.gws[gpu.min(self.gws.len() - 1)]
    }

    /// Whether the process is going away (running kernels should stop).
    pub fn closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// A GPU page fault in this process: like the driver, signal every
    /// memory-exception event with the faulting page.
    fn memory_exception(&self, gpu: usize, fault: GpuFault) {
        let mut data = kfd::MemoryExceptionData {
            va: fault.va & !0xfff,
            gpu_id: self.gpus.get(gpu).map(|g| g.gpu_id).unwrap_or(0),
            ..Default::default()
        };
        data.failure.not_present = fault.not_present as u32;
        data.failure.read_only = (!fault.not_present && fault.write) as u32;
        if self.events.signal_memory_fault(data) == 0 {
            tracing::warn!("process {} has no memory-exception event to report {fault}", self.pid);
        }
    }

    /// Tears the process down: stops its queues (waiting for packets in
    /// flight), fails blocked waits. Memory goes with the last reference.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Release);
        let queues = std::mem::take(&mut *self.queues());
        for q in queues.all() {
            q.destroy();
        }
        self.events.close();
    }

    /// Executes one KFD ioctl on a payload built by `proto::ioctl`.
    pub fn ioctl(&self, request: u32, payload: &mut [u8]) -> Result<(), KfdError> {
        let mut view = split_payload(request, payload)?;
        // Older and newer forms of one ioctl are one request (the argument
        // view zero-extends and truncates like the kernel's copies).
        match canonical(request) {
            cmd::GET_VERSION => {
                view.set(&kfd::GetVersionArgs {
                    major_version: kfd::KFD_IOCTL_MAJOR_VERSION,
                    minor_version: kfd::KFD_IOCTL_MINOR_VERSION,
                });
                Ok(())
            }
            cmd::GET_PROCESS_APERTURES_NEW => self.get_apertures_new(&mut view),
            cmd::GET_PROCESS_APERTURES => self.get_apertures_old(&mut view),
            cmd::ACQUIRE_VM => self.acquire_vm(view.get()),
            cmd::SET_MEMORY_POLICY => self.set_memory_policy(view.get()),
            cmd::GET_CLOCK_COUNTERS => update(&mut view, |a: &mut kfd::GetClockCountersArgs| self.clock_counters(a)),
            cmd::SET_SCRATCH_BACKING_VA => {
                let a: kfd::SetScratchBackingVaArgs = view.get();
                let i = self.gpu_index(a.gpu_id)?;
                self.settings().devices[i].scratch_backing_va = Some(a.va_addr << 16);
                Ok(())
            }
            cmd::SET_TRAP_HANDLER => {
                let a: kfd::SetTrapHandlerArgs = view.get();
                let i = self.gpu_index(a.gpu_id)?;
                self.settings().devices[i].trap_handler = Some((a.tba_addr, a.tma_addr));
                Ok(())
            }
            cmd::SET_XNACK_MODE => update(&mut view, |a: &mut kfd::SetXnackModeArgs| self.set_xnack(a)),
            cmd::GET_TILE_CONFIG => self.get_tile_config(&mut view),
            cmd::AVAILABLE_MEMORY => update(&mut view, |a: &mut kfd::AvailableMemoryArgs| {
                let i = self.gpu_index(a.gpu_id)?;
                a.available = self.allocs().vram_available(i);
                Ok(())
            }),
            cmd::CREATE_EVENT => update(&mut view, |a: &mut kfd::CreateEventArgs| self.create_event(a)),
            cmd::DESTROY_EVENT => Ok(self.events.destroy(view.get::<kfd::EventIdArgs>().event_id)?),
            cmd::SET_EVENT => Ok(self.events.set(view.get::<kfd::EventIdArgs>().event_id)?),
            cmd::RESET_EVENT => Ok(self.events.reset(view.get::<kfd::EventIdArgs>().event_id)?),
            cmd::WAIT_EVENTS => {
                // A thread about to sleep on the GPU: make sure the scheduler looks.
                self.scheduler.kick_all();
                self.wait_events(&mut view)
            }
            cmd::CREATE_QUEUE => update(&mut view, |a: &mut kfd::CreateQueueArgs| self.create_queue(a)),
            cmd::DESTROY_QUEUE => self.destroy_queue(view.get::<kfd::DestroyQueueArgs>().queue_id),
            cmd::UPDATE_QUEUE => self.update_queue(&view.get()),
            cmd::ALLOC_QUEUE_GWS => update(&mut view, |a: &mut kfd::AllocQueueGwsArgs| self.alloc_queue_gws(a)),
            cmd::SET_CU_MASK => {
                let a: kfd::SetCuMaskArgs = view.get();
                self.set_cu_mask(&a, view.arrays[0])
            }
            cmd::ALLOC_MEMORY_OF_GPU => update(&mut view, |a: &mut kfd::AllocMemoryOfGpuArgs| self.alloc_memory(a)),
            cmd::FREE_MEMORY_OF_GPU => self.free_memory(view.get::<kfd::FreeMemoryOfGpuArgs>().handle),
            cmd::MAP_MEMORY_TO_GPU => self.map_memory(&mut view, true),
            cmd::UNMAP_MEMORY_FROM_GPU => self.map_memory(&mut view, false),
            // An upstream kernel has no ioctl 0x82: ROCR reads the failure as
            // "no debugger support" and installs its own trap handler.
            cmd::DBG_TRAP => Err(KfdError::NotSupported { name: "DBG_TRAP", quiet: true }),
            // Only issued with capability bit 29, which the topology does not report.
            cmd::RUNTIME_ENABLE => Err(KfdError::NotSupported { name: "RUNTIME_ENABLE", quiet: false }),
            cmd::IPC_EXPORT_HANDLE => update(&mut view, |a: &mut kfd::IpcExportHandleArgs| self.ipc_export(a)),
            cmd::IPC_IMPORT_HANDLE => update(&mut view, |a: &mut kfd::IpcImportHandleArgs| self.ipc_import(a)),
            // These pass an fd, which a request without files cannot carry
            // (`Service::ioctl_with_files` serves them).
            cmd::EXPORT_DMABUF | cmd::GET_DMABUF_INFO | cmd::IMPORT_DMABUF if self.shares_machine() => {
                Err(KfdError::BadArgument(format!("{} came without its dmabuf fd", view.spec.name)))
            }
            cmd::EXPORT_DMABUF => Err(super::ipc::needs_daemon()),
            cmd::GET_DMABUF_INFO | cmd::IMPORT_DMABUF => Err(KfdError::BadArgument(
                "no dmabuf can reach a process that runs its own simulated GPU (local mode)".into(),
            )),
            _ => Err(KfdError::NotSupported { name: view.spec.name, quiet: false }),
        }
    }

    fn get_apertures_new(&self, view: &mut IoctlView<'_>) -> Result<(), KfdError> {
        let mut args: kfd::GetProcessAperturesNewArgs = view.get();
        if args.num_of_nodes == 0 {
            // The caller asks how many entries it needs.
            args.num_of_nodes = self.gpus.len() as u32;
            view.set(&args);
            return Ok(());
        }
        let n = (args.num_of_nodes as usize).min(self.gpus.len());
        for (i, gpu) in self.gpus.iter().take(n).enumerate() {
            write_elem(view.arrays[0], i, &apertures(gpu));
        }
        args.num_of_nodes = n as u32;
        view.set(&args);
        Ok(())
    }

    fn get_apertures_old(&self, view: &mut IoctlView<'_>) -> Result<(), KfdError> {
        let mut args = kfd::GetProcessAperturesArgs::default();
        let n = self.gpus.len().min(kfd::NUM_OF_SUPPORTED_GPUS);
        for (slot, gpu) in args.process_apertures.iter_mut().zip(self.gpus.iter()) {
            *slot = apertures(gpu);
        }
        args.num_of_nodes = n as u32;
        view.set(&args);
        Ok(())
    }

    fn acquire_vm(&self, a: kfd::AcquireVmArgs) -> Result<(), KfdError> {
        let i = self.gpu_index(a.gpu_id)?;
        let mut settings = self.settings();
        match settings.devices[i].drm_fd {
            // Acquiring again through the same render fd is a no-op; through
            // another one it is refused, as the kernel does.
            Some(fd) if fd != a.drm_fd => Err(KfdError::Busy("the GPU VM is already acquired through another fd")),
            _ => {
                settings.devices[i].drm_fd = Some(a.drm_fd);
                Ok(())
            }
        }
    }

    fn set_memory_policy(&self, a: kfd::SetMemoryPolicyArgs) -> Result<(), KfdError> {
        let i = self.gpu_index(a.gpu_id)?;
        let valid = |p| p == kfd::KFD_IOC_CACHE_POLICY_COHERENT || p == kfd::KFD_IOC_CACHE_POLICY_NONCOHERENT;
        if !valid(a.default_policy) || !valid(a.alternate_policy) {
            return Err(KfdError::BadArgument(format!(
                "cache policies {} / {} are not 0 (coherent) or 1 (non-coherent)",
                a.default_policy, a.alternate_policy
            )));
        }
        let mut settings = self.settings();
        let d = &mut settings.devices[i];
        d.default_policy = a.default_policy;
        d.alternate_policy = a.alternate_policy;
        d.alternate_aperture = (a.alternate_aperture_base, a.alternate_aperture_size);
        Ok(())
    }

    fn clock_counters(&self, a: &mut kfd::GetClockCountersArgs) -> Result<(), KfdError> {
        // gpu_id 0 is allowed (ROCR asks once without a GPU): no GPU counter.
        let has_gpu = a.gpu_id != 0 && self.gpu_index(a.gpu_id).is_ok();
        if a.gpu_id != 0 && !has_gpu {
            return Err(KfdError::NoSuchGpu(a.gpu_id));
        }
        a.gpu_clock_counter = if has_gpu { clock::gpu_ticks() } else { 0 };
        a.cpu_clock_counter = clock::monotonic_raw_ns();
        a.system_clock_counter = clock::boottime_ns();
        a.system_clock_freq = 1_000_000_000;
        Ok(())
    }

    fn set_xnack(&self, a: &mut kfd::SetXnackModeArgs) -> Result<(), KfdError> {
        let mut settings = self.settings();
        if a.xnack_enabled >= 0 && (a.xnack_enabled != 0) != settings.xnack_enabled && !self.queues().is_empty() {
            // The kernel refuses to switch modes under live queues.
            return Err(KfdError::Busy("XNACK mode cannot change while queues exist"));
        }
        if a.xnack_enabled >= 0 {
            settings.xnack_enabled = a.xnack_enabled != 0;
        }
        a.xnack_enabled = settings.xnack_enabled as i32;
        Ok(())
    }

    fn get_tile_config(&self, view: &mut IoctlView<'_>) -> Result<(), KfdError> {
        // gfx9 has no tile-mode tables: the kernel reports 32 and 16 zeroed
        // entries and GB_ADDR_CONFIG, which addrlib needs for image layouts.
        let mut a: kfd::GetTileConfigArgs = view.get();
        let i = self.gpu_index(a.gpu_id)?;
        a.num_tile_configs = a.num_tile_configs.min(32);
        a.num_macro_tile_configs = a.num_macro_tile_configs.min(16);
        for arr in view.arrays.iter_mut() {
            arr.fill(0);
        }
        a.gb_addr_config = super::device::gb_addr_config(&self.gpus[i]);
        a.num_banks = 0;
        a.num_ranks = 0;
        view.set(&a);
        Ok(())
    }

    fn create_event(&self, a: &mut kfd::CreateEventArgs) -> Result<(), KfdError> {
        if a.event_page_offset != 0 {
            // On dGPUs libhsakmt passes the handle of the GTT buffer it
            // allocated for the events page with its first event.
            self.allocs().set_event_page(a.event_page_offset)?;
        }
        let created = self.events.create(a.event_type, a.auto_reset != 0)?;
        a.event_id = created.event_id;
        a.event_trigger_data = created.trigger_data;
        if created.has_slot {
            a.event_slot_index = created.slot_index;
            a.event_page_offset = kfd::mmap_offset::TYPE_EVENTS;
            self.allocs().write_event_slot(&self.arena, created.slot_index, super::events::UNSIGNALED_EVENT_SLOT);
        }
        Ok(())
    }

    fn wait_events(&self, view: &mut IoctlView<'_>) -> Result<(), KfdError> {
        let mut a: kfd::WaitEventsArgs = view.get();
        let n = a.num_events as usize;
        let mut events: Vec<kfd::EventData> = (0..n).map(|i| read_elem(view.arrays[0], i)).collect();
        let result = self.events.wait(&mut events, a.wait_for_all != 0, a.timeout)?;
        for (i, e) in events.iter().enumerate() {
            write_elem(view.arrays[0], i, e);
        }
        a.wait_result = result.to_abi();
        view.set(&a);
        Ok(())
    }

    /// What the GPU does when it completes a packet whose signal names a KFD
    /// event: the interrupt handler signals the event and re-arms its slot.
    fn event_interrupt(&self, event_id: u32) {
        if self.events.set(event_id).is_ok() && event_id < kfd::KFD_SIGNAL_EVENT_LIMIT {
            self.allocs().write_event_slot(&self.arena, event_id, super::events::UNSIGNALED_EVENT_SLOT);
        }
    }
}

/// The apertures of one GPU, identical for every gfx9 device.
fn apertures(gpu: &Device) -> kfd::ProcessDeviceApertures {
    kfd::ProcessDeviceApertures {
        lds_base: LDS_APERTURE_BASE,
        lds_limit: LDS_APERTURE_BASE | APERTURE_SIZE_MASK,
        scratch_base: SCRATCH_APERTURE_BASE,
        scratch_limit: SCRATCH_APERTURE_BASE | APERTURE_SIZE_MASK,
        gpuvm_base: GPUVM_BASE,
        gpuvm_limit: GPUVM_LIMIT,
        gpu_id: gpu.gpu_id,
        pad: 0,
    }
}

/// Reads the argument struct, lets `f` update it, writes it back on success.
fn update<T: Pod>(view: &mut IoctlView<'_>, f: impl FnOnce(&mut T) -> Result<(), KfdError>) -> Result<(), KfdError> {
    let mut args: T = view.get();
    f(&mut args)?;
    view.set(&args);
    Ok(())
}

/// Element `i` of an inlined array (which need not be aligned).
pub(crate) fn read_elem<T: Pod>(bytes: &[u8], i: usize) -> T {
    let size = std::mem::size_of::<T>();
    bytemuck::pod_read_unaligned(&bytes[i * size..(i + 1) * size])
}

/// Writes element `i` of an inlined array.
pub(crate) fn write_elem<T: Pod>(bytes: &mut [u8], i: usize, value: &T) {
    let size = std::mem::size_of::<T>();
    bytes[i * size..(i + 1) * size].copy_from_slice(bytemuck::bytes_of(value));
}

impl Context for KfdProcess {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn vm(&self) -> Arc<GpuVm> {
        KfdProcess::vm(self)
    }

    fn vm_since(&self, kept: Option<&Arc<GpuVm>>) -> Option<Arc<GpuVm>> {
        // `load` borrows the current snapshot without touching its reference count.
        let current = self.vm.load();
        match kept {
            Some(k) if Arc::ptr_eq(k, &current) => None,
            _ => Some(arc_swap::Guard::into_inner(current)),
        }
    }

    fn gpus(&self) -> &[Device] {
        &self.gpus
    }

    fn queues_on(&self, gpu: usize) -> Vec<Arc<Queue>> {
        KfdProcess::queues_on(self, gpu)
    }

    fn closing(&self) -> bool {
        KfdProcess::closing(self)
    }

    fn gws(&self, gpu: usize) -> &GwsTable {
        KfdProcess::gws(self, gpu)
    }

    fn trap_handler(&self, gpu: usize) -> Option<(u64, u64)> {
        self.settings().devices.get(gpu).and_then(|d| d.trap_handler)
    }

    fn interrupt(&self, event_id: u32) {
        self.event_interrupt(event_id);
    }

    fn report_fault(&self, gpu: usize, fault: GpuFault) {
        self.memory_exception(gpu, fault);
    }

    fn stats(&self) -> Option<&ProcessStats> {
        self.stats.get()
    }

    fn trace(&self) -> Option<&TraceLog> {
        self.trace.get()
    }
}
