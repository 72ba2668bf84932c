//! KFD ioctl argument structs and numbers: the 1.8 header ROCm 5.2's libhsakmt
//! is built with, and what later headers (up to the 1.17 of ROCm 6.4's thunk)
//! changed or added.
//!
//! Numbers 0x01–0x26 match upstream Linux; 0x80–0x84 are ROCm-DKMS-only numbers
//! that an upstream kernel rejects (ROCm 5.2 and the legacy IPC mode of 6.x
//! issue them). Where a struct grew (CREATE_QUEUE: 88 → 96 bytes in 1.17, SVM:
//! sized by its attribute count), both forms are known, as the kernel accepts
//! any size and copies what the caller passed.

use super::{ioc, IOC_READ, IOC_WRITE};
use bytemuck::{Pod, Zeroable};
use core::mem::size_of;

/// The ioctl type byte of `/dev/kfd`.
pub const KFD_IOCTL_BASE: u8 = b'K';

/// The KFD interface version we report. ROCR requires major 1. The minor
/// turns features on in the thunks (ROCm 6.x `CHECK_KFD_MINOR_VERSION`):
/// 9 AVAILABLE_MEMORY (asserted at the first queue), 12 EXPORT_DMABUF and
/// dmabuf IPC, 13 RUNTIME_ENABLE (only with capability bit 29, which we do
/// not report), 14 event ages. 15 would turn on the virtual-memory API
/// (dmabuf + DRM PRIME/GEM) and 17 SDMA-by-engine queues, which the simulated
/// driver does not provide, so it stays at 14.
pub const KFD_IOCTL_MAJOR_VERSION: u32 = 1;
pub const KFD_IOCTL_MINOR_VERSION: u32 = 14;

/// Event ids and slots must stay below this (the kernel's KFD_SIGNAL_EVENT_LIMIT).
pub const KFD_SIGNAL_EVENT_LIMIT: u32 = 4096;

const fn iowr<T>(nr: u8) -> u32 {
    ioc(IOC_READ | IOC_WRITE, KFD_IOCTL_BASE, nr, size_of::<T>())
}
const fn ior<T>(nr: u8) -> u32 {
    ioc(IOC_READ, KFD_IOCTL_BASE, nr, size_of::<T>())
}
const fn iow<T>(nr: u8) -> u32 {
    ioc(IOC_WRITE, KFD_IOCTL_BASE, nr, size_of::<T>())
}

macro_rules! kfd_struct {
    ($(#[$m:meta])* $name:ident, $size:expr, { $($(#[$fm:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
        pub struct $name { $($(#[$fm])* pub $field: $ty),* }
        const _: () = assert!(size_of::<$name>() == $size);
    };
}

kfd_struct!(GetVersionArgs, 8, { major_version: u32, minor_version: u32 });

/// `queue_type` values of CREATE_QUEUE.
pub const KFD_IOC_QUEUE_TYPE_COMPUTE: u32 = 0;
pub const KFD_IOC_QUEUE_TYPE_SDMA: u32 = 1;
pub const KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: u32 = 2;
pub const KFD_IOC_QUEUE_TYPE_SDMA_XGMI: u32 = 3;
/// SDMA queue on the engine `sdma_engine_id` names (KFD 1.17).
pub const KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: u32 = 4;
pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;

kfd_struct!(
    /// CREATE_QUEUE as KFD 1.17 defines it (96 bytes, ROCm 6.4's thunk). The
    /// thunks of ROCm 5.2 and ROCT 6.2 send the first 88 bytes only
    /// ([`cmd::CREATE_QUEUE_88`]); the rest then reads as zero.
    CreateQueueArgs, 96, {
    ring_base_address: u64,
    write_pointer_address: u64,
    read_pointer_address: u64,
    doorbell_offset: u64,
    ring_size: u32,
    gpu_id: u32,
    queue_type: u32,
    queue_percentage: u32,
    queue_priority: u32,
    queue_id: u32,
    eop_buffer_address: u64,
    eop_buffer_size: u64,
    ctx_save_restore_address: u64,
    ctx_save_restore_size: u32,
    ctl_stack_size: u32,
    /// For [`KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID`] queues (KFD 1.17).
    sdma_engine_id: u32,
    pad: u32,
});

kfd_struct!(DestroyQueueArgs, 8, { queue_id: u32, pad: u32 });

kfd_struct!(UpdateQueueArgs, 24, {
    ring_base_address: u64,
    queue_id: u32,
    ring_size: u32,
    queue_percentage: u32,
    queue_priority: u32,
});

kfd_struct!(SetCuMaskArgs, 16, { queue_id: u32, num_cu_mask: u32, cu_mask_ptr: u64 });

kfd_struct!(GetQueueWaveStateArgs, 24, {
    ctl_stack_address: u64,
    ctl_stack_used_size: u32,
    save_area_used_size: u32,
    queue_id: u32,
    pad: u32,
});

/// Cache policies of SET_MEMORY_POLICY.
pub const KFD_IOC_CACHE_POLICY_COHERENT: u32 = 0;
pub const KFD_IOC_CACHE_POLICY_NONCOHERENT: u32 = 1;

kfd_struct!(SetMemoryPolicyArgs, 32, {
    alternate_aperture_base: u64,
    alternate_aperture_size: u64,
    gpu_id: u32,
    default_policy: u32,
    alternate_policy: u32,
    pad: u32,
});

kfd_struct!(GetClockCountersArgs, 40, {
    gpu_clock_counter: u64,
    cpu_clock_counter: u64,
    system_clock_counter: u64,
    system_clock_freq: u64,
    gpu_id: u32,
    pad: u32,
});

kfd_struct!(
    /// One GPU's apertures, as GET_PROCESS_APERTURES(_NEW) report them.
    ProcessDeviceApertures, 56, {
    lds_base: u64,
    lds_limit: u64,
    scratch_base: u64,
    scratch_limit: u64,
    gpuvm_base: u64,
    gpuvm_limit: u64,
    gpu_id: u32,
    pad: u32,
});

/// How many GPUs the old, fixed-size GET_PROCESS_APERTURES can describe.
pub const NUM_OF_SUPPORTED_GPUS: usize = 7;

/// The old GET_PROCESS_APERTURES argument: a fixed array of 7 entries.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GetProcessAperturesArgs {
    pub process_apertures: [ProcessDeviceApertures; NUM_OF_SUPPORTED_GPUS],
    pub num_of_nodes: u32,
    pub pad: u32,
}
const _: () = assert!(size_of::<GetProcessAperturesArgs>() == 400);

kfd_struct!(GetProcessAperturesNewArgs, 16, {
    /// Points at `num_of_nodes` [`ProcessDeviceApertures`] (out).
    kfd_process_device_apertures_ptr: u64,
    num_of_nodes: u32,
    pad: u32,
});

kfd_struct!(DbgRegisterArgs, 8, { gpu_id: u32, pad: u32 });
kfd_struct!(DbgAddressWatchArgs, 16, { content_ptr: u64, gpu_id: u32, buf_size_in_bytes: u32 });

/// DBG_TRAP operations of the ROCm-DKMS debug interface the 5.2 thunk's
/// header describes (debug API 10.3). The meaning of `ptr` and `data1..4`
/// depends on the op; the ones that point at caller memory are inlined by the
/// codec (see `ioctl::DBG_TRAP_ARRAYS`).
pub mod dbg_trap_op {
    /// `ptr` → runtime info (out, `min(data3, 16)` bytes); `data2` ← an fd.
    pub const ENABLE: u32 = 0;
    pub const SET_WAVE_LAUNCH_OVERRIDE: u32 = 1;
    pub const SET_WAVE_LAUNCH_MODE: u32 = 2;
    /// `ptr` → `data1` queue ids (in/out, u32 each).
    pub const NODE_SUSPEND: u32 = 3;
    /// `ptr` → `data1` queue ids (in/out, u32 each).
    pub const NODE_RESUME: u32 = 4;
    pub const QUERY_DEBUG_EVENT: u32 = 5;
    /// `ptr` → `data1` [`super::QueueSnapshotEntry`] (out).
    pub const GET_QUEUE_SNAPSHOT: u32 = 6;
    /// The only op the 5.2 stack issues without a debugger (at open and close).
    pub const GET_VERSION: u32 = 7;
    pub const CLEAR_ADDRESS_WATCH: u32 = 8;
    /// `ptr` is the watched address itself, not a buffer.
    pub const SET_ADDRESS_WATCH: u32 = 9;
    pub const SET_PRECISE_MEM_OPS: u32 = 10;
    /// `ptr` → exception info (out, `min(data4, 4096)` bytes).
    pub const QUERY_EXCEPTION_INFO: u32 = 11;
    /// `ptr` → `data1` [`super::DbgDeviceInfoEntry`] (out).
    pub const DEVICE_SNAPSHOT: u32 = 12;
    /// `ptr` is the r_debug address to remember, not a buffer.
    pub const RUNTIME_ENABLE: u32 = 13;
    pub const SEND_RUNTIME_EVENT: u32 = 14;
    pub const SET_EXCEPTIONS_ENABLED: u32 = 15;
}

kfd_struct!(
    /// `struct kfd_runtime_info`: what DBG_TRAP ENABLE copies to `ptr`.
    RuntimeInfo, 16, { r_debug: u64, runtime_state: u32, ttmp_setup: u32 });

kfd_struct!(
    /// `struct kfd_queue_snapshot_entry` (GET_QUEUE_SNAPSHOT).
    QueueSnapshotEntry, 128, {
    exception_status: u64,
    ring_base_address: u64,
    write_pointer_address: u64,
    read_pointer_address: u64,
    ctx_save_restore_address: u64,
    queue_id: u32,
    gpu_id: u32,
    ring_size: u32,
    queue_type: u32,
    ctx_save_restore_area_size: u32,
    reserved: [u32; 17],
});

kfd_struct!(
    /// `struct kfd_dbg_device_info_entry` (DEVICE_SNAPSHOT).
    DbgDeviceInfoEntry, 64, {
    exception_status: u64,
    lds_base: u64,
    lds_limit: u64,
    scratch_base: u64,
    scratch_limit: u64,
    gpuvm_base: u64,
    gpuvm_limit: u64,
    gpu_id: u32,
    pad: u32,
});

kfd_struct!(DbgTrapArgs, 40, {
    exception_mask: u64,
    ptr: u64,
    pid: u32,
    op: u32,
    data1: u32,
    data2: u32,
    data3: u32,
    data4: u32,
});

/// Event types of CREATE_EVENT.
pub const KFD_IOC_EVENT_SIGNAL: u32 = 0;
pub const KFD_IOC_EVENT_NODECHANGE: u32 = 1;
pub const KFD_IOC_EVENT_DEVICESTATECHANGE: u32 = 2;
pub const KFD_IOC_EVENT_HW_EXCEPTION: u32 = 3;
pub const KFD_IOC_EVENT_SYSTEM_EVENT: u32 = 4;
pub const KFD_IOC_EVENT_DEBUG_EVENT: u32 = 5;
pub const KFD_IOC_EVENT_PROFILE_EVENT: u32 = 6;
pub const KFD_IOC_EVENT_QUEUE_EVENT: u32 = 7;
pub const KFD_IOC_EVENT_MEMORY: u32 = 8;

/// `wait_result` values of WAIT_EVENTS.
pub const KFD_IOC_WAIT_RESULT_COMPLETE: u32 = 0;
pub const KFD_IOC_WAIT_RESULT_TIMEOUT: u32 = 1;
pub const KFD_IOC_WAIT_RESULT_FAIL: u32 = 2;

kfd_struct!(CreateEventArgs, 32, {
    event_page_offset: u64,
    event_trigger_data: u32,
    event_type: u32,
    auto_reset: u32,
    node_id: u32,
    event_id: u32,
    event_slot_index: u32,
});

kfd_struct!(
    /// The argument of DESTROY_EVENT, SET_EVENT and RESET_EVENT.
    EventIdArgs, 8, { event_id: u32, pad: u32 });

kfd_struct!(MemoryExceptionFailure, 16, {
    not_present: u32,
    read_only: u32,
    no_execute: u32,
    imprecise: u32,
});

kfd_struct!(
    /// The memory-exception half of `kfd_event_data`'s union (the larger member,
    /// so it also defines the union's size).
    MemoryExceptionData, 32, {
    failure: MemoryExceptionFailure,
    va: u64,
    gpu_id: u32,
    error_type: u32,
});

kfd_struct!(
    /// One element of WAIT_EVENTS' `events_ptr` array (48 bytes).
    EventData, 48, {
    memory_exception_data: MemoryExceptionData,
    kfd_event_data_ext: u64,
    event_id: u32,
    pad: u32,
});

impl EventData {
    /// For a signal event: the `last_event_age` of the union (KFD 1.14): the
    /// age the caller last saw, 0 for "no ages".
    pub fn last_event_age(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytemuck::bytes_of(&self.memory_exception_data)[..8]);
        u64::from_le_bytes(b)
    }

    /// Sets the union's `last_event_age` (signal events).
    pub fn set_last_event_age(&mut self, age: u64) {
        bytemuck::bytes_of_mut(&mut self.memory_exception_data)[..8].copy_from_slice(&age.to_le_bytes());
    }
}

kfd_struct!(WaitEventsArgs, 24, {
    /// Points at `num_events` [`EventData`] (in/out).
    events_ptr: u64,
    num_events: u32,
    wait_for_all: u32,
    timeout: u32,
    wait_result: u32,
});

/// ROCR's "wait forever" WAIT_EVENTS timeout, in milliseconds.
pub const KFD_EVENT_TIMEOUT_INFINITE: u32 = 0xffff_ffff;

kfd_struct!(SetScratchBackingVaArgs, 16, { va_addr: u64, gpu_id: u32, pad: u32 });

kfd_struct!(GetTileConfigArgs, 40, {
    /// Points at `num_tile_configs` u32 (out).
    tile_config_ptr: u64,
    /// Points at `num_macro_tile_configs` u32 (out).
    macro_tile_config_ptr: u64,
    num_tile_configs: u32,
    num_macro_tile_configs: u32,
    gpu_id: u32,
    gb_addr_config: u32,
    num_banks: u32,
    num_ranks: u32,
});

kfd_struct!(SetTrapHandlerArgs, 24, { tba_addr: u64, tma_addr: u64, gpu_id: u32, pad: u32 });

kfd_struct!(AcquireVmArgs, 8, { drm_fd: u32, gpu_id: u32 });

/// Allocation flags of ALLOC_MEMORY_OF_GPU.
pub mod alloc_flags {
    pub const VRAM: u32 = 1 << 0;
    pub const GTT: u32 = 1 << 1;
    pub const USERPTR: u32 = 1 << 2;
    pub const DOORBELL: u32 = 1 << 3;
    pub const MMIO_REMAP: u32 = 1 << 4;
    pub const WRITABLE: u32 = 1 << 31;
    pub const EXECUTABLE: u32 = 1 << 30;
    pub const PUBLIC: u32 = 1 << 29;
    pub const NO_SUBSTITUTE: u32 = 1 << 28;
    pub const AQL_QUEUE_MEM: u32 = 1 << 27;
    pub const COHERENT: u32 = 1 << 26;
    pub const UNCACHED: u32 = 1 << 25;
    /// The bits that select the kind of memory; exactly one must be set.
    pub const KIND_MASK: u32 = VRAM | GTT | USERPTR | DOORBELL | MMIO_REMAP;
}

kfd_struct!(AllocMemoryOfGpuArgs, 40, {
    va_addr: u64,
    size: u64,
    handle: u64,
    /// In: the CPU address for USERPTR. Out: the offset to mmap the BO at.
    mmap_offset: u64,
    gpu_id: u32,
    flags: u32,
});

kfd_struct!(FreeMemoryOfGpuArgs, 8, { handle: u64 });

kfd_struct!(
    /// The argument of MAP_MEMORY_TO_GPU and UNMAP_MEMORY_FROM_GPU.
    MapMemoryToGpuArgs, 24, {
    handle: u64,
    /// Points at `n_devices` u32 gpu ids (in).
    device_ids_array_ptr: u64,
    n_devices: u32,
    n_success: u32,
});

kfd_struct!(AllocQueueGwsArgs, 16, { queue_id: u32, num_gws: u32, first_gws: u32, pad: u32 });

kfd_struct!(GetDmabufInfoArgs, 32, {
    size: u64,
    metadata_ptr: u64,
    metadata_size: u32,
    gpu_id: u32,
    flags: u32,
    dmabuf_fd: u32,
});

kfd_struct!(ImportDmabufArgs, 24, { va_addr: u64, handle: u64, gpu_id: u32, dmabuf_fd: u32 });

kfd_struct!(SmiEventsArgs, 8, { gpuid: u32, anon_fd: u32 });

kfd_struct!(
    /// The fixed head of SVM; `nattr` [`SvmAttribute`]s follow it in the same
    /// buffer (the ioctl number encodes only the head's size).
    SvmArgs, 24, { start_addr: u64, size: u64, op: u32, nattr: u32 });

kfd_struct!(SvmAttribute, 8, { ty: u32, value: u32 });

kfd_struct!(SetXnackModeArgs, 4, { xnack_enabled: i32 });

kfd_struct!(CriuArgs, 56, {
    devices: u64,
    bos: u64,
    priv_data: u64,
    priv_data_size: u64,
    num_devices: u32,
    num_bos: u32,
    num_objects: u32,
    pid: u32,
    op: u32,
    pad: u32,
});

kfd_struct!(IpcImportHandleArgs, 48, {
    handle: u64,
    va_addr: u64,
    mmap_offset: u64,
    share_handle: [u32; 4],
    gpu_id: u32,
    flags: u32,
});

kfd_struct!(IpcExportHandleArgs, 32, {
    handle: u64,
    share_handle: [u32; 4],
    gpu_id: u32,
    flags: u32,
});

kfd_struct!(MemoryRange, 16, { va_addr: u64, size: u64 });

kfd_struct!(CrossMemoryCopyArgs, 48, {
    pid: u32,
    flags: u32,
    src_mem_range_array: u64,
    src_mem_array_size: u64,
    dst_mem_range_array: u64,
    dst_mem_array_size: u64,
    bytes_copied: u64,
});

kfd_struct!(SpmArgs, 32, {
    dest_buf: u64,
    buf_size: u32,
    op: u32,
    timeout: u32,
    gpu_id: u32,
    bytes_copied: u32,
    has_data_loss: u32,
});

kfd_struct!(
    /// Upstream-only (KFD 1.9+): how much VRAM this process may still allocate.
    AvailableMemoryArgs, 16, { available: u64, gpu_id: u32, pad: u32 });

kfd_struct!(
    /// KFD 1.12: a dmabuf fd for a buffer (`flags`: the fd's O_CLOEXEC).
    ExportDmabufArgs, 16, { handle: u64, flags: u32, dmabuf_fd: u32 });

kfd_struct!(
    /// KFD 1.13: the process opts in to (`mode_mask` bit 0) or out of runtime
    /// debugging; `capabilities_mask` out.
    RuntimeEnableArgs, 16, { r_debug: u64, mode_mask: u32, capabilities_mask: u32 });

/// The ioctl numbers, each built from its argument struct so number and size
/// cannot disagree.
pub mod cmd {
    use super::*;

    pub const GET_VERSION: u32 = ior::<GetVersionArgs>(0x01);
    pub const CREATE_QUEUE: u32 = iowr::<CreateQueueArgs>(0x02);
    /// CREATE_QUEUE of the KFD ≤ 1.16 headers (ROCm 5.2, ROCT 6.2): 88 bytes.
    pub const CREATE_QUEUE_88: u32 = ioc(IOC_READ | IOC_WRITE, KFD_IOCTL_BASE, 0x02, 88);
    pub const DESTROY_QUEUE: u32 = iowr::<DestroyQueueArgs>(0x03);
    pub const SET_MEMORY_POLICY: u32 = iow::<SetMemoryPolicyArgs>(0x04);
    pub const GET_CLOCK_COUNTERS: u32 = iowr::<GetClockCountersArgs>(0x05);
    pub const GET_PROCESS_APERTURES: u32 = ior::<GetProcessAperturesArgs>(0x06);
    pub const UPDATE_QUEUE: u32 = iow::<UpdateQueueArgs>(0x07);
    pub const CREATE_EVENT: u32 = iowr::<CreateEventArgs>(0x08);
    pub const DESTROY_EVENT: u32 = iow::<EventIdArgs>(0x09);
    pub const SET_EVENT: u32 = iow::<EventIdArgs>(0x0a);
    pub const RESET_EVENT: u32 = iow::<EventIdArgs>(0x0b);
    pub const WAIT_EVENTS: u32 = iowr::<WaitEventsArgs>(0x0c);
    pub const DBG_REGISTER_DEPRECATED: u32 = iow::<DbgRegisterArgs>(0x0d);
    pub const DBG_UNREGISTER_DEPRECATED: u32 = iow::<DbgRegisterArgs>(0x0e);
    pub const DBG_ADDRESS_WATCH_DEPRECATED: u32 = iow::<DbgAddressWatchArgs>(0x0f);
    pub const DBG_WAVE_CONTROL_DEPRECATED: u32 = iow::<DbgAddressWatchArgs>(0x10);
    pub const SET_SCRATCH_BACKING_VA: u32 = iowr::<SetScratchBackingVaArgs>(0x11);
    pub const GET_TILE_CONFIG: u32 = iowr::<GetTileConfigArgs>(0x12);
    pub const SET_TRAP_HANDLER: u32 = iow::<SetTrapHandlerArgs>(0x13);
    pub const GET_PROCESS_APERTURES_NEW: u32 = iowr::<GetProcessAperturesNewArgs>(0x14);
    pub const ACQUIRE_VM: u32 = iow::<AcquireVmArgs>(0x15);
    pub const ALLOC_MEMORY_OF_GPU: u32 = iowr::<AllocMemoryOfGpuArgs>(0x16);
    pub const FREE_MEMORY_OF_GPU: u32 = iow::<FreeMemoryOfGpuArgs>(0x17);
    pub const MAP_MEMORY_TO_GPU: u32 = iowr::<MapMemoryToGpuArgs>(0x18);
    pub const UNMAP_MEMORY_FROM_GPU: u32 = iowr::<MapMemoryToGpuArgs>(0x19);
    pub const SET_CU_MASK: u32 = iow::<SetCuMaskArgs>(0x1a);
    pub const GET_QUEUE_WAVE_STATE: u32 = iowr::<GetQueueWaveStateArgs>(0x1b);
    pub const GET_DMABUF_INFO: u32 = iowr::<GetDmabufInfoArgs>(0x1c);
    pub const IMPORT_DMABUF: u32 = iowr::<ImportDmabufArgs>(0x1d);
    pub const ALLOC_QUEUE_GWS: u32 = iowr::<AllocQueueGwsArgs>(0x1e);
    pub const SMI_EVENTS: u32 = iowr::<SmiEventsArgs>(0x1f);
    /// SVM with no attributes; see [`svm`] for the number with `nattr`.
    pub const SVM: u32 = iowr::<SvmArgs>(0x20);

    /// The SVM number for `nattr` attributes (the kernel sizes it by them).
    pub const fn svm(nattr: u32) -> u32 {
        ioc(
            IOC_READ | IOC_WRITE,
            KFD_IOCTL_BASE,
            0x20,
            size_of::<SvmArgs>() + nattr as usize * size_of::<SvmAttribute>(),
        )
    }
    pub const SET_XNACK_MODE: u32 = iowr::<SetXnackModeArgs>(0x21);
    pub const CRIU_OP: u32 = iowr::<CriuArgs>(0x22);
    pub const AVAILABLE_MEMORY: u32 = iowr::<AvailableMemoryArgs>(0x23);
    pub const EXPORT_DMABUF: u32 = iowr::<ExportDmabufArgs>(0x24);
    pub const RUNTIME_ENABLE: u32 = iowr::<RuntimeEnableArgs>(0x25);
    pub const IPC_IMPORT_HANDLE: u32 = iowr::<IpcImportHandleArgs>(0x80);
    pub const IPC_EXPORT_HANDLE: u32 = iowr::<IpcExportHandleArgs>(0x81);
    pub const DBG_TRAP: u32 = iowr::<DbgTrapArgs>(0x82);
    pub const CROSS_MEMORY_COPY: u32 = iowr::<CrossMemoryCopyArgs>(0x83);
    pub const RLC_SPM: u32 = iowr::<SpmArgs>(0x84);
}

/// KFD mmap offsets (kernel `kfd_priv.h`): the type in bits 63:62, the gpu_id
/// in bits 61:46, an offset below that.
pub mod mmap_offset {
    pub const TYPE_SHIFT: u32 = 62;
    pub const TYPE_MASK: u64 = 3 << TYPE_SHIFT;
    pub const TYPE_DOORBELL: u64 = 3 << TYPE_SHIFT;
    pub const TYPE_EVENTS: u64 = 2 << TYPE_SHIFT;
    pub const TYPE_RESERVED_MEM: u64 = 1 << TYPE_SHIFT;
    pub const TYPE_MMIO: u64 = 0;
    pub const GPU_ID_SHIFT: u32 = 46;
    pub const GPU_ID_MASK: u64 = 0xffff << GPU_ID_SHIFT;

    /// Builds an offset of `ty` for `gpu_id`.
    pub const fn encode(ty: u64, gpu_id: u32) -> u64 {
        ty | ((gpu_id as u64 & 0xffff) << GPU_ID_SHIFT)
    }

    /// The gpu_id encoded in an offset.
    pub const fn gpu_id(offset: u64) -> u32 {
        ((offset & GPU_ID_MASK) >> GPU_ID_SHIFT) as u32
    }
}

/// The bytes of one doorbell page of a process on SOC15 GPUs (1024 × 8-byte
/// doorbells); libhsakmt maps it with 8 KiB granularity.
pub const DOORBELL_PAGE_SIZE: u64 = 0x2000;

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers as measured on the ROCm 5.2.3 stack (client contract §5.1).
    #[test]
    fn numbers_match_the_thunk() {
        assert_eq!(cmd::GET_VERSION, 0x80084b01);
        assert_eq!(cmd::CREATE_QUEUE_88, 0xc0584b02);
        // ROCm 6.4's thunk (KFD 1.17 header, rocm64 contract §3.1).
        assert_eq!(cmd::CREATE_QUEUE, 0xc0604b02);
        assert_eq!(cmd::EXPORT_DMABUF, 0xc0104b24);
        assert_eq!(cmd::RUNTIME_ENABLE, 0xc0104b25);
        assert_eq!(cmd::DESTROY_QUEUE, 0xc0084b03);
        assert_eq!(cmd::SET_MEMORY_POLICY, 0x40204b04);
        assert_eq!(cmd::GET_CLOCK_COUNTERS, 0xc0284b05);
        assert_eq!(cmd::GET_PROCESS_APERTURES, 0x81904b06);
        assert_eq!(cmd::UPDATE_QUEUE, 0x40184b07);
        assert_eq!(cmd::CREATE_EVENT, 0xc0204b08);
        assert_eq!(cmd::DESTROY_EVENT, 0x40084b09);
        assert_eq!(cmd::SET_EVENT, 0x40084b0a);
        assert_eq!(cmd::RESET_EVENT, 0x40084b0b);
        assert_eq!(cmd::WAIT_EVENTS, 0xc0184b0c);
        assert_eq!(cmd::SET_SCRATCH_BACKING_VA, 0xc0104b11);
        assert_eq!(cmd::GET_TILE_CONFIG, 0xc0284b12);
        assert_eq!(cmd::SET_TRAP_HANDLER, 0x40184b13);
        assert_eq!(cmd::GET_PROCESS_APERTURES_NEW, 0xc0104b14);
        assert_eq!(cmd::ACQUIRE_VM, 0x40084b15);
        assert_eq!(cmd::ALLOC_MEMORY_OF_GPU, 0xc0284b16);
        assert_eq!(cmd::FREE_MEMORY_OF_GPU, 0x40084b17);
        assert_eq!(cmd::MAP_MEMORY_TO_GPU, 0xc0184b18);
        assert_eq!(cmd::UNMAP_MEMORY_FROM_GPU, 0xc0184b19);
        assert_eq!(cmd::SET_CU_MASK, 0x40104b1a);
        assert_eq!(cmd::GET_QUEUE_WAVE_STATE, 0xc0184b1b);
        assert_eq!(cmd::GET_DMABUF_INFO, 0xc0204b1c);
        assert_eq!(cmd::IMPORT_DMABUF, 0xc0184b1d);
        assert_eq!(cmd::ALLOC_QUEUE_GWS, 0xc0104b1e);
        assert_eq!(cmd::SMI_EVENTS, 0xc0084b1f);
        assert_eq!(cmd::SVM, 0xc0184b20);
        // ROCm 6.4's CWSR registration: six attributes.
        assert_eq!(cmd::svm(6), 0xc0484b20);
        assert_eq!(cmd::SET_XNACK_MODE, 0xc0044b21);
        assert_eq!(cmd::CRIU_OP, 0xc0384b22);
        assert_eq!(cmd::AVAILABLE_MEMORY, 0xc0104b23);
        assert_eq!(cmd::IPC_IMPORT_HANDLE, 0xc0304b80);
        assert_eq!(cmd::IPC_EXPORT_HANDLE, 0xc0204b81);
        assert_eq!(cmd::DBG_TRAP, 0xc0284b82);
        assert_eq!(cmd::CROSS_MEMORY_COPY, 0xc0304b83);
        assert_eq!(cmd::RLC_SPM, 0xc0204b84);
    }

    #[test]
    fn mmap_offset_encodes_type_and_gpu() {
        let off = mmap_offset::encode(mmap_offset::TYPE_DOORBELL, 0xc3e5);
        assert_eq!(off >> 62, 3);
        assert_eq!(mmap_offset::gpu_id(off), 0xc3e5);
    }
}
