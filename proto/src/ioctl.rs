//! The ioctl codec: which ioctls exist, how big their argument struct is, and
//! which of its fields point at arrays in the caller's memory.
//!
//! An ioctl travels as one *payload*: the argument struct followed by every
//! array it points at, inlined in field order with no padding or length prefix
//! (each length follows from the struct). The same payload is used in both
//! modes: in local mode the preload library builds it and hands it to the
//! in-process simulator; in daemon mode it crosses the socket. The simulator
//! therefore never dereferences a pointer field: it reads and writes the
//! inlined copies ([`split_payload`]).
//!
//! Client side: [`encode_request`] copies the input arrays out of the caller's
//! memory (through [`UserMemory`]), [`decode_reply`] writes the struct back
//! with the caller's own pointers restored and scatters output arrays back.

use crate::abi::{drm, kfd};
use core::mem::size_of;
use thiserror::Error;

/// Which way an inlined array's contents flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Read from the caller before the call.
    In,
    /// Written to the caller after the call.
    Out,
    /// Both.
    InOut,
}

impl Direction {
    pub fn is_in(self) -> bool {
        matches!(self, Direction::In | Direction::InOut)
    }
    pub fn is_out(self) -> bool {
        matches!(self, Direction::Out | Direction::InOut)
    }
}

/// Where an array's element count lives in the argument struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// A u32 element count at this byte offset.
    U32 { offset: usize },
    /// A u64 element count at this byte offset.
    U64 { offset: usize },
    /// A u64 byte length at this byte offset.
    U64Bytes { offset: usize },
    /// A u32 byte length at this byte offset.
    U32Bytes { offset: usize },
    /// A u32 count of *bits* at this offset; the array holds `bits / 32` u32s.
    /// The count must be a multiple of 32.
    U32Bits { offset: usize },
    /// A u32 byte length at this offset of which the kernel copies at most
    /// `cap` bytes (DBG_TRAP's runtime and exception info): larger values are
    /// clamped like the kernel does, not rejected.
    U32BytesAtMost { offset: usize, cap: u64 },
}

/// Makes an array exist only for some values of a selector field (DBG_TRAP's
/// `op`: the same `ptr` is a queue-id array for one op, a snapshot buffer for
/// another and a plain address for a third).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct When {
    /// Byte offset of the u32 selector in the argument struct.
    pub offset: usize,
    /// The selector values for which the array exists.
    pub values: &'static [u32],
}

/// Where an array's address lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A u64 pointer field at this byte offset of the struct.
    Pointer { offset: usize },
    /// Directly after the struct in the caller's buffer (SVM's attributes).
    Trailing,
}

/// One array an ioctl's argument points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayField {
    pub name: &'static str,
    pub location: Location,
    pub count: Count,
    /// Bytes per element (1 for byte buffers).
    pub elem_size: usize,
    /// The most elements we accept; more is an error, never a truncation.
    pub max_elems: u64,
    pub dir: Direction,
    /// `None`: always present. Otherwise present only when the selector matches.
    pub when: Option<When>,
}

/// Everything the codec knows about one ioctl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoctlSpec {
    pub cmd: u32,
    pub name: &'static str,
    /// Size of the argument struct (what the ioctl number encodes).
    pub arg_size: usize,
    pub arrays: &'static [ArrayField],
}

/// Errors of the codec. Each maps to the errno the kernel would return.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IoctlError {
    #[error("unknown ioctl {0:#010x}")]
    Unknown(u32),
    #[error("{name}: payload is {got} bytes, expected {expected}")]
    PayloadSize { name: &'static str, expected: usize, got: usize },
    #[error("{name}: argument struct is {got} bytes, expected {expected}")]
    ArgSize { name: &'static str, expected: usize, got: usize },
    #[error("{name}.{field}: count {count} exceeds the limit {max}")]
    TooMany { name: &'static str, field: &'static str, count: u64, max: u64 },
    #[error("{name}.{field}: count {count} is not valid")]
    BadCount { name: &'static str, field: &'static str, count: u64 },
    #[error("{name}.{field}: null pointer with a non-zero count")]
    NullPointer { name: &'static str, field: &'static str },
    #[error("{name}: cannot access caller memory at {addr:#x}")]
    Fault { name: &'static str, addr: u64 },
}

impl IoctlError {
    /// The errno an ioctl failing this way returns.
    pub fn errno(&self) -> i32 {
        match self {
            IoctlError::Unknown(_) => ENOTTY,
            IoctlError::NullPointer { .. } | IoctlError::Fault { .. } => EFAULT,
            IoctlError::TooMany { .. } => E2BIG,
            _ => EINVAL,
        }
    }
}

// errno values (x86-64 Linux); kept here so the crate needs no libc.
pub const EPERM: i32 = 1;
pub const ENOENT: i32 = 2;
pub const ESRCH: i32 = 3;
pub const EINTR: i32 = 4;
pub const EIO: i32 = 5;
pub const E2BIG: i32 = 7;
pub const EBADF: i32 = 9;
pub const EAGAIN: i32 = 11;
pub const ENOMEM: i32 = 12;
pub const EACCES: i32 = 13;
pub const EFAULT: i32 = 14;
pub const EBUSY: i32 = 16;
pub const EEXIST: i32 = 17;
pub const ENODEV: i32 = 19;
pub const EINVAL: i32 = 22;
pub const ENOSPC: i32 = 28;
pub const ENOTTY: i32 = 25;
pub const ERANGE: i32 = 34;
pub const ENOSYS: i32 = 38;
pub const EOPNOTSUPP: i32 = 95;
pub const EPROTO: i32 = 71;
pub const ETIMEDOUT: i32 = 110;

/// Access to the memory of the process that issued the ioctl. In local mode
/// this is the process's own memory (the preload library implements it with
/// raw copies); tests implement it over a map.
pub trait UserMemory {
    /// Copies `out.len()` bytes from `addr`.
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress>;
    /// Copies `data` to `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress>;
}

/// The caller's memory cannot be read or written at that address (the codec
/// turns it into `IoctlError::Fault` with the address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("bad address")]
pub struct BadAddress;

macro_rules! arr {
    ($name:expr, ptr $p:expr, $count:expr, $elem:expr, max $max:expr, $dir:ident) => {
        ArrayField {
            name: $name,
            location: Location::Pointer { offset: $p },
            count: $count,
            elem_size: $elem,
            max_elems: $max,
            dir: Direction::$dir,
            when: None,
        }
    };
    ($name:expr, ptr $p:expr, $count:expr, $elem:expr, max $max:expr, $dir:ident, when $sel:expr => $vals:expr) => {
        ArrayField {
            name: $name,
            location: Location::Pointer { offset: $p },
            count: $count,
            elem_size: $elem,
            max_elems: $max,
            dir: Direction::$dir,
            when: Some(When { offset: $sel, values: $vals }),
        }
    };
}

/// Most events one WAIT_EVENTS may name (the kernel's signal-event limit).
pub const MAX_WAIT_EVENTS: u64 = kfd::KFD_SIGNAL_EVENT_LIMIT as u64;
/// Most devices one MAP/UNMAP may name.
pub const MAX_DEVICES: u64 = 64;
/// Most topology nodes GET_PROCESS_APERTURES_NEW may be asked about.
pub const MAX_APERTURE_NODES: u64 = 256;
/// Most CU-mask bits SET_CU_MASK accepts.
pub const MAX_CU_MASK_BITS: u64 = 4096;
/// Most bytes of one DRM string or AMDGPU_INFO return buffer.
pub const MAX_DRM_BUFFER: u64 = 64 * 1024;
/// Most queues one DBG_TRAP suspend/resume/snapshot may name.
pub const MAX_DBG_QUEUES: u64 = 4096;
/// Most bytes DBG_TRAP QUERY_EXCEPTION_INFO copies.
pub const MAX_DBG_EXCEPTION_INFO: u64 = 4096;

const fn s<T>() -> usize {
    size_of::<T>()
}

const KFD_PLAIN: &[(u32, &str, usize)] = &[
    (kfd::cmd::GET_VERSION, "GET_VERSION", s::<kfd::GetVersionArgs>()),
    (kfd::cmd::CREATE_QUEUE, "CREATE_QUEUE", s::<kfd::CreateQueueArgs>()),
    (kfd::cmd::DESTROY_QUEUE, "DESTROY_QUEUE", s::<kfd::DestroyQueueArgs>()),
    (kfd::cmd::SET_MEMORY_POLICY, "SET_MEMORY_POLICY", s::<kfd::SetMemoryPolicyArgs>()),
    (kfd::cmd::GET_CLOCK_COUNTERS, "GET_CLOCK_COUNTERS", s::<kfd::GetClockCountersArgs>()),
    (kfd::cmd::GET_PROCESS_APERTURES, "GET_PROCESS_APERTURES", s::<kfd::GetProcessAperturesArgs>()),
    (kfd::cmd::UPDATE_QUEUE, "UPDATE_QUEUE", s::<kfd::UpdateQueueArgs>()),
    (kfd::cmd::CREATE_EVENT, "CREATE_EVENT", s::<kfd::CreateEventArgs>()),
    (kfd::cmd::DESTROY_EVENT, "DESTROY_EVENT", s::<kfd::EventIdArgs>()),
    (kfd::cmd::SET_EVENT, "SET_EVENT", s::<kfd::EventIdArgs>()),
    (kfd::cmd::RESET_EVENT, "RESET_EVENT", s::<kfd::EventIdArgs>()),
    (kfd::cmd::DBG_REGISTER_DEPRECATED, "DBG_REGISTER_DEPRECATED", s::<kfd::DbgRegisterArgs>()),
    (kfd::cmd::DBG_UNREGISTER_DEPRECATED, "DBG_UNREGISTER_DEPRECATED", s::<kfd::DbgRegisterArgs>()),
    (kfd::cmd::SET_SCRATCH_BACKING_VA, "SET_SCRATCH_BACKING_VA", s::<kfd::SetScratchBackingVaArgs>()),
    (kfd::cmd::SET_TRAP_HANDLER, "SET_TRAP_HANDLER", s::<kfd::SetTrapHandlerArgs>()),
    (kfd::cmd::ACQUIRE_VM, "ACQUIRE_VM", s::<kfd::AcquireVmArgs>()),
    (kfd::cmd::ALLOC_MEMORY_OF_GPU, "ALLOC_MEMORY_OF_GPU", s::<kfd::AllocMemoryOfGpuArgs>()),
    (kfd::cmd::FREE_MEMORY_OF_GPU, "FREE_MEMORY_OF_GPU", s::<kfd::FreeMemoryOfGpuArgs>()),
    (kfd::cmd::GET_QUEUE_WAVE_STATE, "GET_QUEUE_WAVE_STATE", s::<kfd::GetQueueWaveStateArgs>()),
    (kfd::cmd::IMPORT_DMABUF, "IMPORT_DMABUF", s::<kfd::ImportDmabufArgs>()),
    (kfd::cmd::ALLOC_QUEUE_GWS, "ALLOC_QUEUE_GWS", s::<kfd::AllocQueueGwsArgs>()),
    (kfd::cmd::SMI_EVENTS, "SMI_EVENTS", s::<kfd::SmiEventsArgs>()),
    (kfd::cmd::SET_XNACK_MODE, "SET_XNACK_MODE", s::<kfd::SetXnackModeArgs>()),
    (kfd::cmd::CRIU_OP, "CRIU_OP", s::<kfd::CriuArgs>()),
    (kfd::cmd::AVAILABLE_MEMORY, "AVAILABLE_MEMORY", s::<kfd::AvailableMemoryArgs>()),
    (kfd::cmd::EXPORT_DMABUF, "EXPORT_DMABUF", s::<kfd::ExportDmabufArgs>()),
    (kfd::cmd::RUNTIME_ENABLE, "RUNTIME_ENABLE", s::<kfd::RuntimeEnableArgs>()),
    (kfd::cmd::IPC_IMPORT_HANDLE, "IPC_IMPORT_HANDLE", s::<kfd::IpcImportHandleArgs>()),
    (kfd::cmd::IPC_EXPORT_HANDLE, "IPC_EXPORT_HANDLE", s::<kfd::IpcExportHandleArgs>()),
    (kfd::cmd::RLC_SPM, "RLC_SPM", s::<kfd::SpmArgs>()),
];

static WAIT_EVENTS_ARRAYS: [ArrayField; 1] = [arr!(
    "events_ptr", ptr 0, Count::U32 { offset: 8 }, s::<kfd::EventData>(), max MAX_WAIT_EVENTS, InOut
)];
static MAP_ARRAYS: [ArrayField; 1] = [arr!(
    "device_ids_array_ptr", ptr 8, Count::U32 { offset: 16 }, 4, max MAX_DEVICES, In
)];
static APERTURES_ARRAYS: [ArrayField; 1] = [arr!(
    "kfd_process_device_apertures_ptr", ptr 0, Count::U32 { offset: 8 },
    s::<kfd::ProcessDeviceApertures>(), max MAX_APERTURE_NODES, Out
)];
static CU_MASK_ARRAYS: [ArrayField; 1] = [arr!(
    "cu_mask_ptr", ptr 8, Count::U32Bits { offset: 4 }, 4, max MAX_CU_MASK_BITS / 32, In
)];
static TILE_CONFIG_ARRAYS: [ArrayField; 2] = [
    arr!("tile_config_ptr", ptr 0, Count::U32 { offset: 16 }, 4, max 64, Out),
    arr!("macro_tile_config_ptr", ptr 8, Count::U32 { offset: 20 }, 4, max 64, Out),
];
static DMABUF_INFO_ARRAYS: [ArrayField; 1] = [arr!(
    "metadata_ptr", ptr 8, Count::U32Bytes { offset: 16 }, 1, max MAX_DRM_BUFFER, Out
)];
static SVM_ARRAYS: [ArrayField; 1] = [ArrayField {
    name: "attrs",
    location: Location::Trailing,
    count: Count::U32 { offset: 20 },
    elem_size: s::<kfd::SvmAttribute>(),
    max_elems: 1024,
    dir: Direction::InOut,
    when: None,
}];
static CROSS_MEMORY_ARRAYS: [ArrayField; 2] = [
    arr!("src_mem_range_array", ptr 8, Count::U64 { offset: 16 }, s::<kfd::MemoryRange>(), max 1024, In),
    arr!("dst_mem_range_array", ptr 24, Count::U64 { offset: 32 }, s::<kfd::MemoryRange>(), max 1024, In),
];
static DBG_WATCH_ARRAYS: [ArrayField; 1] = [arr!(
    "content_ptr", ptr 0, Count::U32Bytes { offset: 12 }, 1, max 4096, In
)];
/// Offset of DBG_TRAP's `op`, the selector of its arrays.
const DBG_OP: usize = 20;
/// Offsets of DBG_TRAP's `data1`, `data3` and `data4`.
const DBG_DATA1: usize = 24;
const DBG_DATA3: usize = 32;
const DBG_DATA4: usize = 36;

/// DBG_TRAP's `ptr` per op, as the 5.2 thunk's header documents them. Ops
/// not listed carry no buffer (`ptr` is unused or is a plain address).
pub static DBG_TRAP_ARRAYS: [ArrayField; 5] = [
    arr!("ptr (runtime info)", ptr 8,
        Count::U32BytesAtMost { offset: DBG_DATA3, cap: s::<kfd::RuntimeInfo>() as u64 },
        1, max s::<kfd::RuntimeInfo>() as u64, Out,
        when DBG_OP => &[kfd::dbg_trap_op::ENABLE]),
    arr!("ptr (queue ids)", ptr 8, Count::U32 { offset: DBG_DATA1 }, 4, max MAX_DBG_QUEUES, InOut,
        when DBG_OP => &[kfd::dbg_trap_op::NODE_SUSPEND, kfd::dbg_trap_op::NODE_RESUME]),
    arr!("ptr (queue snapshot)", ptr 8, Count::U32 { offset: DBG_DATA1 },
        s::<kfd::QueueSnapshotEntry>(), max MAX_DBG_QUEUES, Out,
        when DBG_OP => &[kfd::dbg_trap_op::GET_QUEUE_SNAPSHOT]),
    arr!("ptr (exception info)", ptr 8,
        Count::U32BytesAtMost { offset: DBG_DATA4, cap: MAX_DBG_EXCEPTION_INFO },
        1, max MAX_DBG_EXCEPTION_INFO, Out,
        when DBG_OP => &[kfd::dbg_trap_op::QUERY_EXCEPTION_INFO]),
    arr!("ptr (device snapshot)", ptr 8, Count::U32 { offset: DBG_DATA1 },
        s::<kfd::DbgDeviceInfoEntry>(), max MAX_DEVICES, Out,
        when DBG_OP => &[kfd::dbg_trap_op::DEVICE_SNAPSHOT]),
];

static DRM_VERSION_ARRAYS: [ArrayField; 3] = [
    arr!("name", ptr 24, Count::U64Bytes { offset: 16 }, 1, max MAX_DRM_BUFFER, Out),
    arr!("date", ptr 40, Count::U64Bytes { offset: 32 }, 1, max MAX_DRM_BUFFER, Out),
    arr!("desc", ptr 56, Count::U64Bytes { offset: 48 }, 1, max MAX_DRM_BUFFER, Out),
];
static AMDGPU_INFO_ARRAYS: [ArrayField; 1] = [arr!(
    "return_pointer", ptr 0, Count::U32Bytes { offset: 8 }, 1, max MAX_DRM_BUFFER, Out
)];

const fn with_arrays(cmd: u32, name: &'static str, arg_size: usize, arrays: &'static [ArrayField]) -> IoctlSpec {
    IoctlSpec { cmd, name, arg_size, arrays }
}

static SPECS_WITH_ARRAYS: [IoctlSpec; 15] = [
    with_arrays(kfd::cmd::WAIT_EVENTS, "WAIT_EVENTS", s::<kfd::WaitEventsArgs>(), &WAIT_EVENTS_ARRAYS),
    with_arrays(kfd::cmd::MAP_MEMORY_TO_GPU, "MAP_MEMORY_TO_GPU", s::<kfd::MapMemoryToGpuArgs>(), &MAP_ARRAYS),
    with_arrays(kfd::cmd::UNMAP_MEMORY_FROM_GPU, "UNMAP_MEMORY_FROM_GPU", s::<kfd::MapMemoryToGpuArgs>(), &MAP_ARRAYS),
    with_arrays(
        kfd::cmd::GET_PROCESS_APERTURES_NEW,
        "GET_PROCESS_APERTURES_NEW",
        s::<kfd::GetProcessAperturesNewArgs>(),
        &APERTURES_ARRAYS,
    ),
    with_arrays(kfd::cmd::SET_CU_MASK, "SET_CU_MASK", s::<kfd::SetCuMaskArgs>(), &CU_MASK_ARRAYS),
    with_arrays(kfd::cmd::GET_TILE_CONFIG, "GET_TILE_CONFIG", s::<kfd::GetTileConfigArgs>(), &TILE_CONFIG_ARRAYS),
    with_arrays(kfd::cmd::GET_DMABUF_INFO, "GET_DMABUF_INFO", s::<kfd::GetDmabufInfoArgs>(), &DMABUF_INFO_ARRAYS),
    with_arrays(kfd::cmd::SVM, "SVM", s::<kfd::SvmArgs>(), &SVM_ARRAYS),
    with_arrays(
        kfd::cmd::CROSS_MEMORY_COPY,
        "CROSS_MEMORY_COPY",
        s::<kfd::CrossMemoryCopyArgs>(),
        &CROSS_MEMORY_ARRAYS,
    ),
    with_arrays(
        kfd::cmd::DBG_ADDRESS_WATCH_DEPRECATED,
        "DBG_ADDRESS_WATCH_DEPRECATED",
        s::<kfd::DbgAddressWatchArgs>(),
        &DBG_WATCH_ARRAYS,
    ),
    with_arrays(
        kfd::cmd::DBG_WAVE_CONTROL_DEPRECATED,
        "DBG_WAVE_CONTROL_DEPRECATED",
        s::<kfd::DbgAddressWatchArgs>(),
        &DBG_WATCH_ARRAYS,
    ),
    with_arrays(drm::cmd::VERSION, "DRM_IOCTL_VERSION", s::<drm::DrmVersion>(), &DRM_VERSION_ARRAYS),
    with_arrays(drm::cmd::AMDGPU_INFO, "DRM_IOCTL_AMDGPU_INFO", s::<drm::AmdgpuInfo>(), &AMDGPU_INFO_ARRAYS),
    with_arrays(drm::cmd::GET_CLIENT, "DRM_IOCTL_GET_CLIENT", 40, &[]),
    with_arrays(kfd::cmd::DBG_TRAP, "DBG_TRAP", s::<kfd::DbgTrapArgs>(), &DBG_TRAP_ARRAYS),
];

/// Looks up an ioctl by its full request number. SVM is known at every size
/// (its number encodes the attribute array: `SVM + (8 × nattr << 16)`); the
/// spec keeps the caller's number.
pub fn spec(cmd: u32) -> Option<IoctlSpec> {
    let canon = canonical(cmd);
    if let Some(found) = SPECS_WITH_ARRAYS.iter().find(|s| s.cmd == canon) {
        return Some(IoctlSpec { cmd, ..*found });
    }
    // An older, shorter form of a plain struct is that many bytes of it.
    let arg_size = |current| if cmd == canon { current } else { crate::abi::ioc_size(cmd) };
    KFD_PLAIN.iter().find(|(c, _, _)| *c == canon).map(|&(_, name, size)| IoctlSpec {
        cmd,
        name,
        arg_size: arg_size(size),
        arrays: &[],
    })
}

/// Whether this ioctl may block in the driver for a long time: a WAIT_EVENTS with a
/// timeout (ROCR's event threads wait "forever"). Such a call must not hold a connection or
/// a thread that other requests need.
pub fn blocks(cmd: u32, args: &[u8]) -> bool {
    cmd == kfd::cmd::WAIT_EVENTS
        && args
            .get(..size_of::<kfd::WaitEventsArgs>())
            .is_some_and(|a| bytemuck::pod_read_unaligned::<kfd::WaitEventsArgs>(a).timeout != 0)
}

/// The number the simulator knows an ioctl by: for an ioctl whose argument
/// grew across interface versions, its current form, whatever size the caller
/// used (the kernel dispatches on the number alone and copies the caller's
/// size); every other number is itself.
pub fn canonical(cmd: u32) -> u32 {
    use crate::abi::{ioc_nr, ioc_size, ioc_type};
    let svm_size = ioc_size(cmd);
    match (ioc_type(cmd), ioc_nr(cmd)) {
        (kfd::KFD_IOCTL_BASE, 0x02) if cmd == kfd::cmd::CREATE_QUEUE_88 => kfd::cmd::CREATE_QUEUE,
        (kfd::KFD_IOCTL_BASE, 0x20)
            if crate::abi::ioc_dir(cmd) == kfd::cmd::SVM >> 30
                && svm_size >= size_of::<kfd::SvmArgs>()
                && (svm_size - size_of::<kfd::SvmArgs>()).is_multiple_of(size_of::<kfd::SvmAttribute>()) =>
        {
            kfd::cmd::SVM
        }
        _ => cmd,
    }
}

/// Every ioctl the codec knows, for tests and documentation.
pub fn all_specs() -> impl Iterator<Item = IoctlSpec> {
    SPECS_WITH_ARRAYS.iter().copied().chain(KFD_PLAIN.iter().map(|&(cmd, name, arg_size)| IoctlSpec {
        cmd,
        name,
        arg_size,
        arrays: &[],
    }))
}

/// A human-readable name for any ioctl number (for log lines).
pub fn name_of(cmd: u32) -> String {
    match spec(cmd) {
        Some(s) => s.name.to_string(),
        None => format!(
            "ioctl {cmd:#010x} (type '{}', nr {:#04x}, size {})",
            crate::abi::ioc_type(cmd).escape_ascii(),
            crate::abi::ioc_nr(cmd),
            crate::abi::ioc_size(cmd)
        ),
    }
}

fn read_u32(args: &[u8], offset: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&args[offset..offset + 4]);
    u32::from_le_bytes(b)
}

fn read_u64(args: &[u8], offset: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&args[offset..offset + 8]);
    u64::from_le_bytes(b)
}

fn write_u64(args: &mut [u8], offset: usize, v: u64) {
    args[offset..offset + 8].copy_from_slice(&v.to_le_bytes());
}

impl ArrayField {
    /// The number of bytes this array occupies, as the struct describes it.
    pub fn byte_len(&self, spec_name: &'static str, args: &[u8]) -> Result<usize, IoctlError> {
        if !self.is_present(args) {
            return Ok(0);
        }
        self.counted_len(spec_name, args)
    }

    /// Whether this array exists for this argument struct (see [`When`]).
    pub fn is_present(&self, args: &[u8]) -> bool {
        match self.when {
            None => true,
            Some(w) => w.values.contains(&read_u32(args, w.offset)),
        }
    }

    /// The length the count field describes, whether or not the array is present.
    fn counted_len(&self, spec_name: &'static str, args: &[u8]) -> Result<usize, IoctlError> {
        let (elems, raw) = match self.count {
            Count::U32 { offset } => {
                let n = read_u32(args, offset) as u64;
                (n, n)
            }
            Count::U64 { offset } => {
                let n = read_u64(args, offset);
                (n, n)
            }
            Count::U32Bytes { offset } => {
                let n = read_u32(args, offset) as u64;
                (n, n)
            }
            Count::U64Bytes { offset } => {
                let n = read_u64(args, offset);
                (n, n)
            }
            Count::U32Bits { offset } => {
                let bits = read_u32(args, offset) as u64;
                if bits & 31 != 0 {
                    return Err(IoctlError::BadCount { name: spec_name, field: self.name, count: bits });
                }
                (bits / 32, bits)
            }
            Count::U32BytesAtMost { offset, cap } => {
                let n = read_u32(args, offset) as u64;
                (n.min(cap), n)
            }
        };
        if elems > self.max_elems {
            return Err(IoctlError::TooMany { name: spec_name, field: self.name, count: raw, max: self.max_elems });
        }
        // elems ≤ max_elems ≤ 64 Ki and elem_size ≤ 128, so this cannot overflow.
        Ok(elems as usize * self.elem_size)
    }

    /// The caller's address of this array, or `None` when it is a trailing array.
    pub fn pointer(&self, args: &[u8]) -> Option<u64> {
        match self.location {
            Location::Pointer { offset } => Some(read_u64(args, offset)),
            Location::Trailing => None,
        }
    }
}

/// The byte lengths of every array of `spec` given the argument struct.
pub fn array_lengths(spec: &IoctlSpec, args: &[u8]) -> Result<Vec<usize>, IoctlError> {
    if args.len() != spec.arg_size {
        return Err(IoctlError::ArgSize { name: spec.name, expected: spec.arg_size, got: args.len() });
    }
    let lens: Vec<usize> = spec.arrays.iter().map(|a| a.byte_len(spec.name, args)).collect::<Result<_, _>>()?;
    // An SVM number says how many attributes follow; `nattr` must agree (the
    // kernel copies exactly what the number says).
    if canonical(spec.cmd) == kfd::cmd::SVM {
        let described = crate::abi::ioc_size(spec.cmd).checked_sub(spec.arg_size);
        let attrs = lens.first().copied().unwrap_or(0);
        if Some(attrs) != described {
            let count = (attrs / size_of::<kfd::SvmAttribute>()) as u64;
            return Err(IoctlError::BadCount { name: spec.name, field: "nattr", count });
        }
    }
    Ok(lens)
}

/// The total payload length an ioctl with this argument struct has.
pub fn payload_len(spec: &IoctlSpec, args: &[u8]) -> Result<usize, IoctlError> {
    Ok(spec.arg_size + array_lengths(spec, args)?.iter().sum::<usize>())
}

/// A payload split into its argument struct and its inlined arrays.
#[derive(Debug)]
pub struct IoctlView<'a> {
    pub spec: IoctlSpec,
    pub args: &'a mut [u8],
    pub arrays: Vec<&'a mut [u8]>,
}

impl IoctlView<'_> {
    /// Reads the argument struct as `T`. A caller that passed a shorter,
    /// older form of the struct gets zeros in the fields it did not pass, as
    /// from the kernel.
    pub fn get<T: bytemuck::Pod>(&self) -> T {
        let mut value = T::zeroed();
        let n = size_of::<T>().min(self.args.len());
        bytemuck::bytes_of_mut(&mut value)[..n].copy_from_slice(&self.args[..n]);
        value
    }

    /// Writes the argument struct back from `T`, as much of it as the
    /// caller's form of the struct holds.
    pub fn set<T: bytemuck::Pod>(&mut self, value: &T) {
        let n = size_of::<T>().min(self.args.len());
        self.args[..n].copy_from_slice(&bytemuck::bytes_of(value)[..n]);
    }
}

/// Checks, without modifying or splitting it, that `payload` is exactly the
/// argument struct of `cmd` plus the arrays it describes. This is the check
/// [`split_payload`] makes; the protocol layer runs it when a request arrives.
pub fn check_payload(cmd: u32, payload: &[u8]) -> Result<IoctlSpec, IoctlError> {
    let spec = spec(cmd).ok_or(IoctlError::Unknown(cmd))?;
    if payload.len() < spec.arg_size {
        return Err(IoctlError::PayloadSize { name: spec.name, expected: spec.arg_size, got: payload.len() });
    }
    let expected = payload_len(&spec, &payload[..spec.arg_size])?;
    if expected != payload.len() {
        return Err(IoctlError::PayloadSize { name: spec.name, expected, got: payload.len() });
    }
    Ok(spec)
}

/// Daemon/simulator side: checks that `payload` is exactly the struct plus the
/// arrays it describes, and splits it.
pub fn split_payload(cmd: u32, payload: &mut [u8]) -> Result<IoctlView<'_>, IoctlError> {
    let spec = spec(cmd).ok_or(IoctlError::Unknown(cmd))?;
    if payload.len() < spec.arg_size {
        return Err(IoctlError::PayloadSize { name: spec.name, expected: spec.arg_size, got: payload.len() });
    }
    let (args, mut rest) = payload.split_at_mut(spec.arg_size);
    let lens = array_lengths(&spec, args)?;
    let expected = spec.arg_size + lens.iter().sum::<usize>();
    if expected != spec.arg_size + rest.len() {
        return Err(IoctlError::PayloadSize { name: spec.name, expected, got: spec.arg_size + rest.len() });
    }
    let mut arrays = Vec::with_capacity(lens.len());
    for len in lens {
        let (head, tail) = rest.split_at_mut(len);
        arrays.push(head);
        rest = tail;
    }
    Ok(IoctlView { spec, args, arrays })
}

/// Client side: builds the payload for the ioctl whose argument struct is
/// `args` (the caller's struct, read out of its memory by the caller of this
/// function) and whose trailing data, for SVM, is at `args_addr + arg_size`.
pub fn encode_request(cmd: u32, args: &[u8], args_addr: u64, mem: &dyn UserMemory) -> Result<Vec<u8>, IoctlError> {
    let mut payload = Vec::new();
    encode_request_into(cmd, args, args_addr, mem, &mut payload)?;
    Ok(payload)
}

/// [`encode_request`] appending to `out` (so a connection can reuse one
/// buffer for every call). On error `out` keeps its original length.
pub fn encode_request_into(
    cmd: u32,
    args: &[u8],
    args_addr: u64,
    mem: &dyn UserMemory,
    out: &mut Vec<u8>,
) -> Result<(), IoctlError> {
    let spec = spec(cmd).ok_or(IoctlError::Unknown(cmd))?;
    let lens = array_lengths(&spec, args)?;
    let total = spec.arg_size + lens.iter().sum::<usize>();
    let base = out.len();
    out.reserve(total);
    out.extend_from_slice(args);
    for (field, &len) in spec.arrays.iter().zip(&lens) {
        let start = out.len();
        out.resize(start + len, 0);
        if len == 0 {
            continue;
        }
        let read = array_address(&spec, field, args, args_addr).and_then(|addr| {
            if field.dir.is_in() {
                mem.read(addr, &mut out[start..]).map_err(|BadAddress| IoctlError::Fault { name: spec.name, addr })
            } else {
                Ok(())
            }
        });
        if let Err(e) = read {
            out.truncate(base);
            return Err(e);
        }
    }
    Ok(())
}

fn array_address(spec: &IoctlSpec, field: &ArrayField, args: &[u8], args_addr: u64) -> Result<u64, IoctlError> {
    let addr = match field.location {
        Location::Pointer { offset } => read_u64(args, offset),
        Location::Trailing => {
            args_addr.checked_add(spec.arg_size as u64).ok_or(IoctlError::Fault { name: spec.name, addr: args_addr })?
        }
    };
    if addr == 0 {
        return Err(IoctlError::NullPointer { name: spec.name, field: field.name });
    }
    Ok(addr)
}

/// Client side: applies a reply payload to the caller. `args` is the caller's
/// original struct (as sent); on return it holds the reply's struct with the
/// caller's own pointers restored, ready to be written back. Output arrays are
/// written to the caller's memory; for each, at most the smaller of what the
/// caller offered and what the reply's struct says was produced.
pub fn decode_reply(
    cmd: u32,
    args: &mut [u8],
    args_addr: u64,
    reply: &[u8],
    mem: &dyn UserMemory,
) -> Result<(), IoctlError> {
    let spec = spec(cmd).ok_or(IoctlError::Unknown(cmd))?;
    let sent_lens = array_lengths(&spec, args)?;
    let expected = spec.arg_size + sent_lens.iter().sum::<usize>();
    if reply.len() != expected {
        return Err(IoctlError::PayloadSize { name: spec.name, expected, got: reply.len() });
    }
    let original = args.to_vec();
    args.copy_from_slice(&reply[..spec.arg_size]);
    for field in spec.arrays {
        if let (Location::Pointer { offset }, true) = (field.location, field.is_present(&original)) {
            write_u64(args, offset, read_u64(&original, offset));
        }
    }
    let mut pos = spec.arg_size;
    for (field, &sent) in spec.arrays.iter().zip(&sent_lens) {
        let slot = &reply[pos..pos + sent];
        pos += sent;
        if !field.dir.is_out() || sent == 0 {
            continue;
        }
        // A reply may shrink a count (fewer apertures, a shorter name); it can
        // never make us write past what the caller offered.
        let produced = field.counted_len(spec.name, args).unwrap_or(sent).min(sent);
        if produced == 0 {
            continue;
        }
        let addr = array_address(&spec, field, &original, args_addr)?;
        mem.write(addr, &slot[..produced]).map_err(|BadAddress| IoctlError::Fault { name: spec.name, addr })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    /// Caller memory as a sparse byte map.
    #[derive(Default)]
    struct FakeMemory(RefCell<BTreeMap<u64, u8>>);

    impl FakeMemory {
        fn put(&self, addr: u64, data: &[u8]) {
            let mut m = self.0.borrow_mut();
            for (i, b) in data.iter().enumerate() {
                m.insert(addr + i as u64, *b);
            }
        }
        fn get(&self, addr: u64, len: usize) -> Vec<u8> {
            let m = self.0.borrow();
            (0..len).map(|i| *m.get(&(addr + i as u64)).unwrap_or(&0xee)).collect()
        }
    }

    impl UserMemory for FakeMemory {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
            let m = self.0.borrow();
            for (i, o) in out.iter_mut().enumerate() {
                *o = *m.get(&(addr + i as u64)).ok_or(BadAddress)?;
            }
            Ok(())
        }
        fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
            self.put(addr, data);
            Ok(())
        }
    }

    #[test]
    fn every_spec_size_matches_its_number() {
        for s in all_specs() {
            assert_eq!(crate::abi::ioc_size(s.cmd), s.arg_size, "{}", s.name);
        }
    }

    #[test]
    fn wait_events_round_trip_restores_pointer_and_copies_events() {
        let mem = FakeMemory::default();
        let events_addr = 0x7000_0000;
        let mut ev = [kfd::EventData::default(); 2];
        ev[0].event_id = 1;
        ev[1].event_id = 2;
        mem.put(events_addr, bytemuck::bytes_of(&ev));
        let args =
            kfd::WaitEventsArgs { events_ptr: events_addr, num_events: 2, wait_for_all: 0, timeout: 5, wait_result: 9 };
        let mut args_bytes = bytemuck::bytes_of(&args).to_vec();
        let mut payload = encode_request(kfd::cmd::WAIT_EVENTS, &args_bytes, 0x1000, &mem).unwrap();
        assert_eq!(payload.len(), 24 + 96);

        // The simulator's side.
        {
            let mut view = split_payload(kfd::cmd::WAIT_EVENTS, &mut payload).unwrap();
            let mut a: kfd::WaitEventsArgs = view.get();
            a.wait_result = kfd::KFD_IOC_WAIT_RESULT_COMPLETE;
            a.events_ptr = 0xdead; // must not leak back to the caller
            view.set(&a);
            let evs: &mut [kfd::EventData] = bytemuck::cast_slice_mut(&mut view.arrays[0][..]);
            assert_eq!(evs[1].event_id, 2);
            evs[1].memory_exception_data.va = 0x1234;
        }

        decode_reply(kfd::cmd::WAIT_EVENTS, &mut args_bytes, 0x1000, &payload, &mem).unwrap();
        let back: kfd::WaitEventsArgs = bytemuck::pod_read_unaligned(&args_bytes);
        assert_eq!(back.events_ptr, events_addr);
        assert_eq!(back.wait_result, 0);
        let out: Vec<kfd::EventData> = bytemuck::cast_slice(&mem.get(events_addr, 96)).to_vec();
        assert_eq!(out[1].memory_exception_data.va, 0x1234);
    }

    #[test]
    fn payload_with_wrong_tail_is_rejected() {
        let args = kfd::MapMemoryToGpuArgs { handle: 1, device_ids_array_ptr: 8, n_devices: 2, n_success: 0 };
        let mut payload = bytemuck::bytes_of(&args).to_vec();
        payload.extend_from_slice(&[0; 4]); // one device id instead of two
        let err = split_payload(kfd::cmd::MAP_MEMORY_TO_GPU, &mut payload).unwrap_err();
        assert!(matches!(err, IoctlError::PayloadSize { expected: 32, got: 28, .. }));
        assert_eq!(err.errno(), EINVAL);
    }

    #[test]
    fn too_many_events_is_rejected_before_allocating() {
        let args = kfd::WaitEventsArgs { events_ptr: 8, num_events: u32::MAX, ..Default::default() };
        let err =
            encode_request(kfd::cmd::WAIT_EVENTS, bytemuck::bytes_of(&args), 0, &FakeMemory::default()).unwrap_err();
        assert!(matches!(err, IoctlError::TooMany { count: 0xffff_ffff, .. }));
    }

    #[test]
    fn null_pointer_with_count_faults() {
        let args = kfd::MapMemoryToGpuArgs { handle: 1, device_ids_array_ptr: 0, n_devices: 1, n_success: 0 };
        let err = encode_request(kfd::cmd::MAP_MEMORY_TO_GPU, bytemuck::bytes_of(&args), 0, &FakeMemory::default())
            .unwrap_err();
        assert_eq!(err.errno(), EFAULT);
    }

    #[test]
    fn cu_mask_must_be_whole_words() {
        let args = kfd::SetCuMaskArgs { queue_id: 1, num_cu_mask: 33, cu_mask_ptr: 8 };
        let err =
            encode_request(kfd::cmd::SET_CU_MASK, bytemuck::bytes_of(&args), 0, &FakeMemory::default()).unwrap_err();
        assert!(matches!(err, IoctlError::BadCount { count: 33, .. }));
    }

    #[test]
    fn drm_version_copies_back_at_most_the_callers_buffer() {
        let mem = FakeMemory::default();
        let v = drm::DrmVersion { name_len: 4, name: 0x5000, ..Default::default() };
        let mut args = bytemuck::bytes_of(&v).to_vec();
        let mut payload = encode_request(drm::cmd::VERSION, &args, 0, &mem).unwrap();
        {
            let mut view = split_payload(drm::cmd::VERSION, &mut payload).unwrap();
            view.arrays[0].copy_from_slice(b"amdg");
            let mut d: drm::DrmVersion = view.get();
            d.name_len = 6; // "amdgpu": longer than the buffer, as the kernel reports
            d.version_major = 3;
            view.set(&d);
        }
        decode_reply(drm::cmd::VERSION, &mut args, 0, &payload, &mem).unwrap();
        let d: drm::DrmVersion = bytemuck::pod_read_unaligned(&args);
        assert_eq!((d.name_len, d.name, d.version_major), (6, 0x5000, 3));
        assert_eq!(mem.get(0x5000, 5), b"amdg\xee");
    }

    #[test]
    fn svm_attributes_trail_the_struct_and_the_number_counts_them() {
        let mem = FakeMemory::default();
        let head = kfd::SvmArgs { start_addr: 0x1000, size: 0x1000, op: 1, nattr: 2 };
        let attrs = [kfd::SvmAttribute { ty: 1, value: 2 }, kfd::SvmAttribute { ty: 3, value: 4 }];
        mem.put(0x9000 + 24, bytemuck::bytes_of(&attrs));
        let cmd = kfd::cmd::svm(2);
        assert_eq!(canonical(cmd), kfd::cmd::SVM);
        let payload = encode_request(cmd, bytemuck::bytes_of(&head), 0x9000, &mem).unwrap();
        assert_eq!(&payload[24..], bytemuck::bytes_of(&attrs));
        check_payload(cmd, &payload).unwrap();
        // A number that disagrees with nattr, in either direction.
        for wrong in [kfd::cmd::svm(1), kfd::cmd::svm(3), kfd::cmd::SVM] {
            assert!(matches!(
                encode_request(wrong, bytemuck::bytes_of(&head), 0x9000, &mem),
                Err(IoctlError::BadCount { field: "nattr", .. })
            ));
        }
        // Not an SVM number at all: another direction, or a size between attributes.
        assert_eq!(canonical(kfd::cmd::SVM + (4 << 16)), kfd::cmd::SVM + (4 << 16));
        assert!(spec(kfd::cmd::SVM & !(1 << 31)).is_none());
    }

    #[test]
    fn only_waits_with_a_timeout_block() {
        let wait = |timeout| kfd::WaitEventsArgs { events_ptr: 8, num_events: 1, timeout, ..Default::default() };
        assert!(blocks(kfd::cmd::WAIT_EVENTS, bytemuck::bytes_of(&wait(0xffff_fffe))));
        assert!(!blocks(kfd::cmd::WAIT_EVENTS, bytemuck::bytes_of(&wait(0))), "a poll returns at once");
        assert!(!blocks(kfd::cmd::GET_VERSION, &[0; 8]));
        assert!(!blocks(kfd::cmd::WAIT_EVENTS, &[0; 4]), "too short to be a wait");
    }

    #[test]
    fn both_create_queue_sizes_are_one_ioctl() {
        assert_eq!(canonical(kfd::cmd::CREATE_QUEUE_88), kfd::cmd::CREATE_QUEUE);
        assert_eq!(spec(kfd::cmd::CREATE_QUEUE_88).unwrap().arg_size, 88);
        // The older form reads as the current one with zeros after it, and
        // only its own bytes are written back.
        let mut payload = vec![0xabu8; 88];
        let mut view = split_payload(kfd::cmd::CREATE_QUEUE_88, &mut payload).unwrap();
        let mut q: kfd::CreateQueueArgs = view.get();
        assert_eq!((q.ctl_stack_size, q.sdma_engine_id, q.pad), (0xabab_abab, 0, 0));
        q.queue_id = 7;
        q.sdma_engine_id = 9;
        view.set(&q);
        assert_eq!(payload.len(), 88);
        assert_eq!(&payload[52..56], &7u32.to_le_bytes());
    }

    fn dbg(op: u32, ptr: u64, data1: u32, data3: u32, data4: u32) -> kfd::DbgTrapArgs {
        kfd::DbgTrapArgs { ptr, op, data1, data3, data4, ..Default::default() }
    }

    #[test]
    fn dbg_trap_arrays_follow_the_op() {
        let mem = FakeMemory::default();
        mem.put(0x8000, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]);
        let len =
            |a: &kfd::DbgTrapArgs| encode_request(kfd::cmd::DBG_TRAP, bytemuck::bytes_of(a), 0, &mem).unwrap().len();
        use kfd::dbg_trap_op as op;
        // GET_VERSION: ptr and data1 mean nothing; nothing is inlined.
        assert_eq!(len(&dbg(op::GET_VERSION, 0x8000, 3, 0, 0)), 40);
        // SET_ADDRESS_WATCH: ptr is the watched address, not a buffer.
        assert_eq!(len(&dbg(op::SET_ADDRESS_WATCH, 0x8000, 3, 0, 0)), 40);
        assert_eq!(len(&dbg(op::NODE_SUSPEND, 0x8000, 3, 0, 0)), 40 + 12);
        assert_eq!(len(&dbg(op::NODE_RESUME, 0x8000, 3, 0, 0)), 40 + 12);
        assert_eq!(len(&dbg(op::GET_QUEUE_SNAPSHOT, 0x8000, 3, 0, 0)), 40 + 3 * 128);
        assert_eq!(len(&dbg(op::DEVICE_SNAPSHOT, 0x8000, 2, 0, 0)), 40 + 2 * 64);
        // The kernel copies at most sizeof(kfd_runtime_info) = 16 bytes.
        assert_eq!(len(&dbg(op::ENABLE, 0x8000, 1, 1000, 0)), 40 + 16);
        assert_eq!(len(&dbg(op::ENABLE, 0x8000, 1, 8, 0)), 40 + 8);
        assert_eq!(len(&dbg(op::QUERY_EXCEPTION_INFO, 0x8000, 0, 0, 24)), 40 + 24);
        let too_many = dbg(op::DEVICE_SNAPSHOT, 0x8000, 65, 0, 0);
        let err = encode_request(kfd::cmd::DBG_TRAP, bytemuck::bytes_of(&too_many), 0, &mem).unwrap_err();
        assert!(matches!(err, IoctlError::TooMany { count: 65, max: 64, .. }));
    }

    #[test]
    fn dbg_trap_suspend_copies_queue_ids_both_ways() {
        let mem = FakeMemory::default();
        mem.put(0x8000, &[1, 0, 0, 0, 2, 0, 0, 0]);
        let a = dbg(kfd::dbg_trap_op::NODE_SUSPEND, 0x8000, 2, 0, 0);
        let mut args = bytemuck::bytes_of(&a).to_vec();
        let mut payload = encode_request(kfd::cmd::DBG_TRAP, &args, 0, &mem).unwrap();
        assert_eq!(&payload[40..], &[1, 0, 0, 0, 2, 0, 0, 0]);
        {
            let mut view = split_payload(kfd::cmd::DBG_TRAP, &mut payload).unwrap();
            view.arrays[1][7] = 0x80; // queue 2 invalid (KFD_DBG_QUEUE_INVALID_MASK)
            let mut d: kfd::DbgTrapArgs = view.get();
            d.ptr = 0x1;
            view.set(&d);
        }
        decode_reply(kfd::cmd::DBG_TRAP, &mut args, 0, &payload, &mem).unwrap();
        let back: kfd::DbgTrapArgs = bytemuck::pod_read_unaligned(&args);
        assert_eq!(back.ptr, 0x8000);
        assert_eq!(mem.get(0x8000, 8), [1, 0, 0, 0, 2, 0, 0, 0x80]);
    }

    #[test]
    fn dbg_trap_without_buffer_echoes_ptr_as_a_value() {
        // For ops whose ptr is not a buffer the daemon's value is the answer.
        let mem = FakeMemory::default();
        let a = dbg(kfd::dbg_trap_op::GET_VERSION, 0x1234, 0, 0, 0);
        let mut args = bytemuck::bytes_of(&a).to_vec();
        let mut payload = encode_request(kfd::cmd::DBG_TRAP, &args, 0, &mem).unwrap();
        {
            let mut view = split_payload(kfd::cmd::DBG_TRAP, &mut payload).unwrap();
            assert!(view.arrays.iter().all(|a| a.is_empty()));
            let mut d: kfd::DbgTrapArgs = view.get();
            d.data1 = 10;
            d.data2 = 3;
            view.set(&d);
        }
        decode_reply(kfd::cmd::DBG_TRAP, &mut args, 0, &payload, &mem).unwrap();
        let back: kfd::DbgTrapArgs = bytemuck::pod_read_unaligned(&args);
        assert_eq!((back.ptr, back.data1, back.data2), (0x1234, 10, 3));
    }

    #[test]
    fn unknown_ioctl_is_enotty_and_named() {
        let err = split_payload(0xc0084bff, &mut []).unwrap_err();
        assert_eq!(err.errno(), ENOTTY);
        assert!(name_of(0xc0084bff).contains("0xc0084bff"));
        assert_eq!(name_of(kfd::cmd::WAIT_EVENTS), "WAIT_EVENTS");
    }
}
