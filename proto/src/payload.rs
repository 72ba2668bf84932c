//! The typed payload of each opcode, with its exact wire layout.
//!
//! Every payload has a size that follows from its own fields, and decoding
//! insists on exactly that size: a byte too many is as wrong as a byte too few.
//! All counts are bounded before anything is allocated.
//!
//! | opcode | request | reply (result 0) |
//! |---|---|---|
//! | HANDSHAKE | [`HandshakeRequest`] (16) | [`HandshakeReply`] (40 + 4 × GPUs + path) |
//! | CLOSE | empty | empty |
//! | MMAP | [`MmapRequest`] (40) | [`MmapReply`]: fd trailer |
//! | MUNMAP | [`MunmapRequest`] (16) | empty |
//! | IOCTL | [`IoctlRequest`]: 16 + ioctl payload + fd trailer | [`IoctlReply`]: 8 + ioctl payload + fd trailer |
//! | ATTACH_WAIT | [`AttachWaitRequest`] (16) | empty |
//! | STATUS | empty | [`StatusReply`] (24 + 48 × sessions + 40 × allocations + (64 + name) × queues) |
//! | PROTOCOL_ERROR | never | [`ProtocolErrorBody`] (16 + reason) |
//!
//! A reply whose `result` is negative has an empty payload, except IOCTL,
//! whose reply keeps its shape (the kernel copies an ioctl's arguments back
//! even when it fails) but may leave out the arguments (`args_bytes` 0: "do
//! not touch the caller's struct") and carries no fds.

use crate::abi::drm::RENDER_MINORS;
use crate::error::{MessageError, EPROTONOSUPPORT};
use crate::header::{Opcode, MAX_PAYLOAD_BYTES};
use crate::ioctl::EPROTO;
use crate::wire::{Put, Reader};

mod status;
pub use status::{clip_text, AllocationStatus, QueueStatus, SessionStatus, StatusReply, MAX_KERNEL_NAME_BYTES};

/// "RJSU": first field of the handshake in both directions, so a peer that
/// is not rocjitsu (or AMD's C++ rocjitsu, whose handshake is empty) is told
/// so instead of being misread.
pub const PROTOCOL_MAGIC: u32 = u32::from_le_bytes(*b"RJSU");
/// Our protocol version. Both sides check it and report both values.
/// 2: IOCTL requests name their device and end with an fd trailer (USERPTR memory from
/// the client).
/// 3: STATUS reports each session's uptime and, per queue, the dispatches done and the
/// kernel running now with its name. STATS: a session's run statistics and timeline.
pub const PROTOCOL_VERSION: u32 = 3;
/// Most descriptors one message may carry (as AMD's transport).
pub const MAX_FDS: usize = 4;
/// Most GPUs a handshake may describe.
pub const MAX_GPUS: usize = 64;
/// Longest topology directory path.
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest reason text in a [`ProtocolErrorBody`].
pub const MAX_REASON_BYTES: usize = 1024;
/// Granularity of fd offsets and of the lengths handed to `mmap`.
pub const FD_PAGE_SIZE: u64 = 4096;

/// What a connection is for, declared in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A client process's main connection: a new session (one KFD process).
    Process,
    /// An extra connection of an existing session that carries only
    /// WAIT_EVENTS (after ATTACH_WAIT), one per blocked application thread.
    Wait,
    /// A tool (`rocjitsu status`): STATUS only, no session.
    Tool,
}

impl Role {
    const MASK: u32 = 0b11;

    fn flags(self) -> u32 {
        match self {
            Role::Process => 0,
            Role::Wait => 1,
            Role::Tool => 2,
        }
    }

    fn from_flags(flags: u32) -> Result<Role, MessageError> {
        match (flags & !Role::MASK, flags & Role::MASK) {
            (0, 0) => Ok(Role::Process),
            (0, 1) => Ok(Role::Wait),
            (0, 2) => Ok(Role::Tool),
            _ => Err(MessageError::UnknownFlags(flags)),
        }
    }

    /// The name used in errors.
    pub fn name(self) -> &'static str {
        match self {
            Role::Process => "process",
            Role::Wait => "wait",
            Role::Tool => "tool",
        }
    }
}

fn exact(what: &'static str, payload: &[u8], expected: usize) -> Result<(), MessageError> {
    if payload.len() != expected {
        return Err(MessageError::PayloadSize { what, expected, got: payload.len() });
    }
    Ok(())
}

/// Reads magic and version, the two fields every handshake layout (past and
/// future) starts with, and checks them before the size: a peer of another
/// version is told about versions, not about a size it cannot know.
fn magic_and_version<'a>(what: &'static str, payload: &'a [u8]) -> Result<(Reader<'a>, u32), MessageError> {
    let mut r = Reader::new(payload);
    let (Some(magic), Some(version)) = (r.u32(), r.u32()) else {
        return Err(MessageError::PayloadTooShort { what, min: 8, got: payload.len() });
    };
    if magic != PROTOCOL_MAGIC {
        return Err(MessageError::BadMagic { what, got: magic, expected: PROTOCOL_MAGIC });
    }
    Ok((r, version))
}

fn reserved(what: &'static str, value: u64) -> Result<(), MessageError> {
    if value != 0 {
        return Err(MessageError::ReservedNonZero { what, value });
    }
    Ok(())
}

/// HANDSHAKE request: `magic u32, version u32, client_pid u32, flags u32`.
/// `flags` bits 0–1 are the [`Role`]; the other bits must be 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandshakeRequest {
    pub version: u32,
    pub client_pid: u32,
    pub role: Role,
}

impl HandshakeRequest {
    pub const SIZE: usize = 16;

    /// A request of our protocol version.
    pub fn new(client_pid: u32, role: Role) -> Self {
        Self { version: PROTOCOL_VERSION, client_pid, role }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.put_u32(PROTOCOL_MAGIC);
        out.put_u32(self.version);
        out.put_u32(self.client_pid);
        out.put_u32(self.role.flags());
    }

    /// Daemon side: refuses another protocol version (reporting both).
    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        let (mut r, version) = magic_and_version("HANDSHAKE request", payload)?;
        if version != PROTOCOL_VERSION {
            return Err(MessageError::VersionMismatch { client: version, daemon: PROTOCOL_VERSION });
        }
        exact("HANDSHAKE request", payload, Self::SIZE)?;
        let (Some(client_pid), Some(flags)) = (r.u32(), r.u32()) else { unreachable_size()? };
        Ok(Self { version, client_pid, role: Role::from_flags(flags)? })
    }
}

/// A size check already passed, so a field read cannot fail; this keeps the
/// code free of `unwrap` all the same (and of panics on any input).
fn unreachable_size<T>() -> Result<T, MessageError> {
    Err(MessageError::PayloadTooShort { what: "payload", min: 0, got: 0 })
}

/// HANDSHAKE reply: what the client needs to build its view of the machine.
///
/// Wire: `magic u32, version u32, session_id u64, attach_token u64,
/// daemon_pid u32, gpu_count u32, topology_dir_len u32, reserved u32` (40),
/// then `gpu_count` render minors (u32 each), then the topology directory
/// (UTF-8, no NUL, no terminator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandshakeReply {
    pub version: u32,
    /// The session (KFD process) this connection created; 0 for wait and
    /// tool connections, which create none.
    pub session_id: u64,
    /// Secret that a wait connection must present to attach to this session
    /// (ATTACH_WAIT), so one client cannot wait on another's events.
    pub attach_token: u64,
    pub daemon_pid: u32,
    /// The simulated machine as clients see it.
    pub machine: MachineInfo,
}

/// What a client needs to present the daemon's simulated machine to the application: the
/// files the daemon wrote and the render nodes it serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachineInfo {
    /// The DRM render minor of each GPU, in topology order (GPU count = len).
    pub render_minors: Vec<u32>,
    /// The directory holding the sysfs topology tree the daemon wrote.
    pub topology_dir: String,
}

impl HandshakeReply {
    pub const FIXED_SIZE: usize = 40;

    /// The number of GPUs.
    pub fn gpu_count(&self) -> usize {
        self.machine.render_minors.len()
    }

    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        let MachineInfo { render_minors, topology_dir } = &self.machine;
        check_count("render_minors", render_minors.len(), MAX_GPUS)?;
        check_text("topology_dir", topology_dir, MAX_PATH_BYTES)?;
        out.put_u32(PROTOCOL_MAGIC);
        out.put_u32(self.version);
        out.put_u64(self.session_id);
        out.put_u64(self.attach_token);
        out.put_u32(self.daemon_pid);
        out.put_u32(render_minors.len() as u32);
        out.put_u32(topology_dir.len() as u32);
        out.put_u32(0);
        for m in render_minors {
            out.put_u32(*m);
        }
        out.extend_from_slice(topology_dir.as_bytes());
        Ok(())
    }

    /// Client side: refuses another protocol version (reporting both).
    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        const WHAT: &str = "HANDSHAKE reply";
        let (mut r, version) = magic_and_version(WHAT, payload)?;
        if version != PROTOCOL_VERSION {
            return Err(MessageError::VersionMismatch { client: PROTOCOL_VERSION, daemon: version });
        }
        let (Some(session_id), Some(attach_token), Some(daemon_pid), Some(gpus), Some(dir_len), Some(res)) =
            (r.u64(), r.u64(), r.u32(), r.u32(), r.u32(), r.u32())
        else {
            return Err(MessageError::PayloadTooShort { what: WHAT, min: Self::FIXED_SIZE, got: payload.len() });
        };
        reserved("HANDSHAKE reply reserved", res.into())?;
        check_count("render_minors", gpus as usize, MAX_GPUS)?;
        check_count("topology_dir bytes", dir_len as usize, MAX_PATH_BYTES)?;
        exact(WHAT, payload, Self::FIXED_SIZE + 4 * gpus as usize + dir_len as usize)?;
        let mut render_minors = Vec::with_capacity(gpus as usize);
        for _ in 0..gpus {
            render_minors.push(r.u32().map_or_else(unreachable_size, Ok)?);
        }
        let topology_dir = text("topology_dir", r.rest())?;
        Ok(Self { version, session_id, attach_token, daemon_pid, machine: MachineInfo { render_minors, topology_dir } })
    }
}

fn check_count(what: &'static str, count: usize, max: usize) -> Result<(), MessageError> {
    if count > max {
        return Err(MessageError::TooMany { what, count: count as u64, max: max as u64 });
    }
    Ok(())
}

fn check_text(what: &'static str, s: &str, max: usize) -> Result<(), MessageError> {
    check_count(what, s.len(), max)?;
    if s.as_bytes().contains(&0) {
        return Err(MessageError::InteriorNul { what });
    }
    Ok(())
}

fn text(what: &'static str, bytes: &[u8]) -> Result<String, MessageError> {
    let s = core::str::from_utf8(bytes).map_err(|_| MessageError::NotUtf8 { what })?;
    check_text(what, s, usize::MAX)?;
    Ok(s.to_owned())
}

/// MMAP request: `addr u64, length u64, prot i32, flags i32, offset i64, device u32,
/// reserved u32`: the arguments of the application's `mmap` of the kfd or a render fd, and
/// which file it was (see [`DeviceFile`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmapRequest {
    pub addr: u64,
    pub length: u64,
    pub prot: i32,
    pub flags: i32,
    pub offset: i64,
    pub device: DeviceFile,
}

impl Default for MmapRequest {
    fn default() -> Self {
        Self { addr: 0, length: 0, prot: 0, flags: 0, offset: 0, device: DeviceFile::Kfd }
    }
}

impl MmapRequest {
    pub const SIZE: usize = 40;

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.addr);
        out.put_u64(self.length);
        out.put_i32(self.prot);
        out.put_i32(self.flags);
        out.put_i64(self.offset);
        out.put_u32(self.device.to_wire());
        out.put_u32(0);
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        exact("MMAP request", payload, Self::SIZE)?;
        let mut r = Reader::new(payload);
        match (r.u64(), r.u64(), r.i32(), r.i32(), r.i64(), r.u32(), r.u32()) {
            (Some(addr), Some(length), Some(prot), Some(flags), Some(offset), Some(device), Some(res)) => {
                reserved("MMAP request reserved", res.into())?;
                let device = DeviceFile::from_mmap_wire(device)?;
                Ok(Self { addr, length, prot, flags, offset, device })
            }
            _ => unreachable_size(),
        }
    }
}

/// MUNMAP request: `addr u64, length u64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MunmapRequest {
    pub addr: u64,
    pub length: u64,
}

impl MunmapRequest {
    pub const SIZE: usize = 16;

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.addr);
        out.put_u64(self.length);
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        exact("MUNMAP request", payload, Self::SIZE)?;
        let mut r = Reader::new(payload);
        match (r.u64(), r.u64()) {
            (Some(addr), Some(length)) => Ok(Self { addr, length }),
            _ => unreachable_size(),
        }
    }
}

/// ATTACH_WAIT request: `session_id u64, attach_token u64`, both from the
/// session's HANDSHAKE reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttachWaitRequest {
    pub session_id: u64,
    pub attach_token: u64,
}

impl AttachWaitRequest {
    pub const SIZE: usize = 16;

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.session_id);
        out.put_u64(self.attach_token);
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        exact("ATTACH_WAIT request", payload, Self::SIZE)?;
        let mut r = Reader::new(payload);
        match (r.u64(), r.u64()) {
            (Some(session_id), Some(attach_token)) => Ok(Self { session_id, attach_token }),
            _ => unreachable_size(),
        }
    }
}

/// Which memory a descriptor in a reply is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum FdKind {
    /// The memfd backing a VRAM or GTT allocation (ALLOC reply, or the MMAP
    /// of the render fd at the BO's offset).
    Allocation = 1,
    /// In an ALLOC_MEMORY_OF_GPU request for USERPTR memory: a memfd of the
    /// client's that backs (part of) the registered range in the client's own
    /// address space, so the daemon maps the very pages the application uses.
    /// Sealed against shrinking (the daemon checks), never sent in replies.
    Userptr = 2,
    /// The process's doorbell page of one GPU (MMAP of the kfd fd).
    Doorbell = 3,
    /// The events page (MMAP of the kfd fd with the EVENTS type).
    Events = 4,
    /// The MMIO remap page (HDP flush registers).
    Mmio = 5,
    /// A dmabuf (HIP IPC on ROCm 6.x): in an EXPORT_DMABUF reply, the file the
    /// application gets as `dmabuf_fd`; in a GET_DMABUF_INFO or IMPORT_DMABUF
    /// request, the file the application named there. A name, never mapped:
    /// access 0, offset 0, length the buffer's size.
    Dmabuf = 6,
}

impl FdKind {
    pub const ALL: [FdKind; 6] =
        [FdKind::Allocation, FdKind::Userptr, FdKind::Doorbell, FdKind::Events, FdKind::Mmio, FdKind::Dmabuf];

    fn from_u16(v: u16) -> Option<FdKind> {
        FdKind::ALL.into_iter().find(|k| *k as u16 == v)
    }
}

/// The most a client may map a descriptor with (`FdDesc::access` bits).
pub mod fd_access {
    pub const READ: u16 = 1;
    pub const WRITE: u16 = 2;
    pub const EXEC: u16 = 4;
    pub const ALL: u16 = READ | WRITE | EXEC;
}

/// Says what the i-th descriptor of a message is and which part of it to
/// map: `mmap(addr, length, prot, MAP_SHARED | MAP_FIXED, fd, offset)`.
/// Several allocations may share one memfd at different offsets.
///
/// Wire (24): `kind u16, access u16, reserved u32, offset u64, length u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdDesc {
    pub kind: FdKind,
    /// [`fd_access`] bits.
    pub access: u16,
    /// Page-aligned offset of the memory within the fd.
    pub offset: u64,
    /// Length of the memory, non-zero; `offset + length` must not overflow.
    pub length: u64,
}

impl FdDesc {
    pub const SIZE: usize = 24;

    fn validate(&self, index: usize) -> Result<(), MessageError> {
        if self.access & !fd_access::ALL != 0 {
            return Err(MessageError::UnknownFdAccess { index, access: self.access });
        }
        let ok =
            self.offset & (FD_PAGE_SIZE - 1) == 0 && self.length != 0 && self.offset.checked_add(self.length).is_some();
        if !ok {
            return Err(MessageError::BadFdRange { index, offset: self.offset, length: self.length });
        }
        Ok(())
    }
}

/// Wire size of a trailer describing `n` descriptors.
pub fn fd_trailer_len(n: usize) -> usize {
    8 + n * FdDesc::SIZE
}

/// Appends the fd trailer: `count u32, reserved u32`, then `count` [`FdDesc`].
pub fn put_fd_trailer(out: &mut Vec<u8>, fds: &[FdDesc]) -> Result<(), MessageError> {
    check_count("fds", fds.len(), MAX_FDS)?;
    for (i, d) in fds.iter().enumerate() {
        d.validate(i)?;
    }
    out.put_u32(fds.len() as u32);
    out.put_u32(0);
    for d in fds {
        out.put_u16(d.kind as u16);
        out.put_u16(d.access);
        out.put_u32(0);
        out.put_u64(d.offset);
        out.put_u64(d.length);
    }
    Ok(())
}

/// Reads an fd trailer that must be exactly the rest of the payload.
fn read_fd_trailer(what: &'static str, r: &mut Reader<'_>) -> Result<Vec<FdDesc>, MessageError> {
    let rest = r.remaining();
    let (Some(count), Some(res)) = (r.u32(), r.u32()) else {
        return Err(MessageError::PayloadTooShort { what, min: 8, got: rest });
    };
    reserved("fd trailer reserved", res.into())?;
    check_count("fds", count as usize, MAX_FDS)?;
    if rest != fd_trailer_len(count as usize) {
        return Err(MessageError::PayloadSize { what, expected: fd_trailer_len(count as usize), got: rest });
    }
    let mut fds = Vec::with_capacity(count as usize);
    for index in 0..count as usize {
        let (Some(kind), Some(access), Some(res), Some(offset), Some(length)) =
            (r.u16(), r.u16(), r.u32(), r.u64(), r.u64())
        else {
            return unreachable_size();
        };
        reserved("fd reserved", res.into())?;
        let kind = FdKind::from_u16(kind).ok_or(MessageError::UnknownFdKind { index, kind })?;
        let d = FdDesc { kind, access, offset, length };
        d.validate(index)?;
        fds.push(d);
    }
    Ok(fds)
}

/// MMAP reply: which descriptor to map (none: nothing to map, e.g. the
/// daemon answered the call on its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MmapReply {
    pub fds: Vec<FdDesc>,
}

impl MmapReply {
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        put_fd_trailer(out, &self.fds)
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        let mut r = Reader::new(payload);
        Ok(Self { fds: read_fd_trailer("MMAP reply", &mut r)? })
    }
}

/// The device file an ioctl or mmap was made on: `/dev/kfd`, or a render node by its minor
/// (DRM queries describe the GPU behind that node; buffer objects are mapped through it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceFile {
    Kfd,
    Render { minor: u32 },
}

impl DeviceFile {
    /// The wire value: 0 for `/dev/kfd`, else the render minor.
    pub fn to_wire(self) -> u32 {
        match self {
            DeviceFile::Kfd => 0,
            DeviceFile::Render { minor } => minor,
        }
    }

    /// The device an MMAP request names: 0 or a render minor.
    pub fn from_mmap_wire(wire: u32) -> Result<DeviceFile, MessageError> {
        match wire {
            0 => Ok(DeviceFile::Kfd),
            minor if RENDER_MINORS.contains(&minor) => Ok(DeviceFile::Render { minor }),
            _ => Err(MessageError::NoSuchDevice { device: wire }),
        }
    }

    /// Whether ioctl `cmd` is one of this device's kind: KFD ioctls are made on `/dev/kfd`,
    /// DRM ioctls on a render node.
    pub fn accepts(self, cmd: u32) -> bool {
        let ty = crate::abi::ioc_type(cmd);
        match self {
            DeviceFile::Kfd => ty == crate::abi::kfd::KFD_IOCTL_BASE,
            DeviceFile::Render { minor } => ty == crate::abi::drm::DRM_IOCTL_BASE && RENDER_MINORS.contains(&minor),
        }
    }

    /// The device of an ioctl `cmd` whose request names `wire` (0 for `/dev/kfd`, else a
    /// render minor), if `cmd` belongs to it.
    pub fn from_wire(cmd: u32, wire: u32) -> Result<DeviceFile, MessageError> {
        let device = if wire == 0 { DeviceFile::Kfd } else { DeviceFile::Render { minor: wire } };
        if device.accepts(cmd) {
            Ok(device)
        } else {
            Err(MessageError::WrongDevice { cmd, device: wire })
        }
    }

    /// The device an ioctl of `cmd`'s kind is made on when nothing says which: `/dev/kfd`, or
    /// the first render node for DRM ioctls.
    pub fn default_for(cmd: u32) -> DeviceFile {
        if crate::abi::ioc_type(cmd) == crate::abi::drm::DRM_IOCTL_BASE {
            DeviceFile::Render { minor: *RENDER_MINORS.start() }
        } else {
            DeviceFile::Kfd
        }
    }
}

/// IOCTL request: `cmd u32, args_bytes u32, device u32, reserved u32`, then the ioctl
/// payload (the argument struct and the arrays it points at, see [`crate::ioctl`]), then an
/// fd trailer. `device` says which file the ioctl was made on ([`DeviceFile`]).
///
/// The trailer is empty except for an ALLOC_MEMORY_OF_GPU of USERPTR memory:
/// there the client hands over the memory it registers, as
/// [`FdKind::Userptr`] descriptors of memfds that back its pages, in address
/// order; their lengths add up to the allocation's size in whole pages. And
/// GET_DMABUF_INFO and IMPORT_DMABUF carry the dmabuf they name, as one
/// [`FdKind::Dmabuf`] descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoctlRequest {
    pub cmd: u32,
    pub device: DeviceFile,
    pub payload: Vec<u8>,
    pub fds: Vec<FdDesc>,
}

/// Size of the `cmd, args_bytes` head of IOCTL replies.
pub const IOCTL_HEAD_SIZE: usize = 8;
/// Size of the `cmd, args_bytes, device, reserved` head of IOCTL requests.
pub const IOCTL_REQUEST_HEAD_SIZE: usize = 16;

impl IoctlRequest {
    /// A request that hands over no memory, made on [`DeviceFile::default_for`] `cmd`.
    pub fn new(cmd: u32, payload: Vec<u8>) -> Self {
        Self { cmd, device: DeviceFile::default_for(cmd), payload, fds: Vec::new() }
    }

    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        check_request(self.cmd, self.device, &self.payload, &self.fds)?;
        put_ioctl_request_head(out, self.cmd, self.payload.len(), self.device)?;
        out.extend_from_slice(&self.payload);
        put_fd_trailer(out, &self.fds)
    }

    /// Daemon side: the ioctl must be known and made on its kind of device, its payload
    /// exactly the size its argument struct describes, and any descriptors must be the
    /// memory of a USERPTR allocation (see [`check_request_fds`]).
    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        const WHAT: &str = "IOCTL request";
        let mut r = Reader::new(payload);
        let (Some(cmd), Some(args_bytes), Some(device), Some(res)) = (r.u32(), r.u32(), r.u32(), r.u32()) else {
            return Err(MessageError::PayloadTooShort { what: WHAT, min: IOCTL_REQUEST_HEAD_SIZE, got: payload.len() });
        };
        reserved("IOCTL request reserved", res.into())?;
        let device = DeviceFile::from_wire(cmd, device)?;
        let args = r.bytes(args_bytes as usize).ok_or(MessageError::PayloadSize {
            what: WHAT,
            expected: IOCTL_REQUEST_HEAD_SIZE.saturating_add(args_bytes as usize),
            got: payload.len(),
        })?;
        crate::ioctl::check_payload(cmd, args)?;
        let fds = read_fd_trailer(WHAT, &mut r)?;
        check_request_fds(cmd, args, &fds)?;
        Ok(Self { cmd, device, payload: args.to_vec(), fds })
    }
}

/// What the client checks before sending an IOCTL request (the daemon checks the same on
/// arrival): the ioctl is made on its kind of device, and any descriptors are the memory of a
/// USERPTR allocation ([`check_request_fds`]).
pub(crate) fn check_request(cmd: u32, device: DeviceFile, args: &[u8], fds: &[FdDesc]) -> Result<(), MessageError> {
    if !device.accepts(cmd) {
        return Err(MessageError::WrongDevice { cmd, device: device.to_wire() });
    }
    check_request_fds(cmd, args, fds)
}

/// Appends the head of an IOCTL request.
pub(crate) fn put_ioctl_request_head(
    out: &mut Vec<u8>,
    cmd: u32,
    args_len: usize,
    device: DeviceFile,
) -> Result<(), MessageError> {
    put_ioctl_head(out, cmd, args_len)?;
    out.put_u32(device.to_wire());
    out.put_u32(0);
    Ok(())
}

/// The descriptors an IOCTL request may carry: none; or for an
/// ALLOC_MEMORY_OF_GPU of USERPTR memory, [`FdKind::Userptr`] pieces
/// (readable and writable) whose lengths add up to the allocation's size
/// rounded up to whole pages; or for GET_DMABUF_INFO and IMPORT_DMABUF, one
/// [`FdKind::Dmabuf`] (access 0).
pub fn check_request_fds(cmd: u32, args: &[u8], fds: &[FdDesc]) -> Result<(), MessageError> {
    use crate::abi::kfd::{self, alloc_flags};
    if fds.is_empty() {
        return Ok(());
    }
    if cmd == kfd::cmd::GET_DMABUF_INFO || cmd == kfd::cmd::IMPORT_DMABUF {
        if fds.len() != 1 {
            return Err(MessageError::FdsNotExpected { cmd, count: fds.len() });
        }
        let d = fds[0];
        if d.kind != FdKind::Dmabuf || d.access != 0 {
            return Err(MessageError::WrongRequestFd { index: 0, kind: d.kind as u16, access: d.access });
        }
        return Ok(());
    }
    let userptr_alloc = (cmd == kfd::cmd::ALLOC_MEMORY_OF_GPU)
        .then(|| args.get(..size_of::<kfd::AllocMemoryOfGpuArgs>()))
        .flatten()
        .map(bytemuck::pod_read_unaligned::<kfd::AllocMemoryOfGpuArgs>)
        .filter(|a| a.flags & alloc_flags::USERPTR != 0);
    let Some(alloc) = userptr_alloc else {
        return Err(MessageError::FdsNotExpected { cmd, count: fds.len() });
    };
    let mut total = 0u64;
    for (index, d) in fds.iter().enumerate() {
        if d.kind != FdKind::Userptr || d.access != fd_access::READ | fd_access::WRITE {
            return Err(MessageError::WrongRequestFd { index, kind: d.kind as u16, access: d.access });
        }
        total = total.saturating_add(d.length);
    }
    let size = alloc.size.div_ceil(FD_PAGE_SIZE).saturating_mul(FD_PAGE_SIZE);
    if total != size {
        return Err(MessageError::UserMemorySize { described: total, size });
    }
    Ok(())
}

pub(crate) fn put_ioctl_head(out: &mut Vec<u8>, cmd: u32, args_len: usize) -> Result<(), MessageError> {
    let args_bytes = u32::try_from(args_len)
        .ok()
        .filter(|n| *n <= MAX_PAYLOAD_BYTES)
        .ok_or(MessageError::TooLarge { bytes: args_len })?;
    out.put_u32(cmd);
    out.put_u32(args_bytes);
    Ok(())
}

/// Reads `cmd, args_bytes` and returns the cmd and the `args_bytes` that
/// follow (checked to be present, not to be all that follows).
fn read_ioctl_head<'a>(what: &'static str, payload: &'a [u8]) -> Result<(u32, &'a [u8]), MessageError> {
    let mut r = Reader::new(payload);
    let (Some(cmd), Some(args_bytes)) = (r.u32(), r.u32()) else {
        return Err(MessageError::PayloadTooShort { what, min: IOCTL_HEAD_SIZE, got: payload.len() });
    };
    let args = r.bytes(args_bytes as usize).ok_or(MessageError::PayloadSize {
        what,
        expected: IOCTL_HEAD_SIZE.saturating_add(args_bytes as usize),
        got: payload.len(),
    })?;
    Ok((cmd, args))
}

/// IOCTL reply: `cmd u32, args_bytes u32`, the ioctl payload as the daemon
/// left it (or nothing: `args_bytes` 0, allowed only when the call failed),
/// then the fd trailer (e.g. an ALLOC reply's memfd with the offset of the
/// BO in it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoctlReply {
    pub cmd: u32,
    pub payload: Vec<u8>,
    pub fds: Vec<FdDesc>,
}

/// What an IOCTL reply must match: the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoctlContext {
    pub cmd: u32,
    pub args_len: usize,
}

impl IoctlReply {
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        encode_ioctl_reply(out, self.cmd, &self.payload, &self.fds)
    }

    /// Client side: the reply must be for the ioctl that was sent, carry the
    /// same number of argument bytes (or none after a failure), and no fds
    /// after a failure.
    pub fn decode(payload: &[u8], result: i32, ctx: IoctlContext) -> Result<Self, MessageError> {
        const WHAT: &str = "IOCTL reply";
        let (cmd, args) = read_ioctl_head(WHAT, payload)?;
        if cmd != ctx.cmd {
            return Err(MessageError::WrongIoctl { expected: ctx.cmd, got: cmd });
        }
        if args.len() != ctx.args_len && !(result < 0 && args.is_empty()) {
            return Err(MessageError::ReplyArgsSize { expected: ctx.args_len, got: args.len() });
        }
        let mut r = Reader::new(&payload[IOCTL_HEAD_SIZE + args.len()..]);
        let fds = read_fd_trailer(WHAT, &mut r)?;
        if result < 0 && !fds.is_empty() {
            return Err(MessageError::FdsOnFailure { opcode: Opcode::Ioctl, result, count: fds.len() });
        }
        Ok(Self { cmd, payload: args.to_vec(), fds })
    }
}

/// Appends an IOCTL reply payload built from borrowed parts (the daemon
/// replies with the buffer it modified in place; no copy into a struct).
pub fn encode_ioctl_reply(out: &mut Vec<u8>, cmd: u32, payload: &[u8], fds: &[FdDesc]) -> Result<(), MessageError> {
    put_ioctl_head(out, cmd, payload.len())?;
    out.extend_from_slice(payload);
    put_fd_trailer(out, fds)
}

/// Why the daemon refused a frame ([`ProtocolErrorBody::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorCode {
    VersionMismatch = 1,
    BadMagic = 2,
    MalformedFrame = 3,
    MalformedPayload = 4,
    HandshakeRequired = 5,
    DuplicateHandshake = 6,
    HandshakeFailed = 7,
    NotAllowed = 8,
    RequestPending = 9,
    UnexpectedFds = 10,
    Closed = 11,
    Internal = 12,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::VersionMismatch,
        ErrorCode::BadMagic,
        ErrorCode::MalformedFrame,
        ErrorCode::MalformedPayload,
        ErrorCode::HandshakeRequired,
        ErrorCode::DuplicateHandshake,
        ErrorCode::HandshakeFailed,
        ErrorCode::NotAllowed,
        ErrorCode::RequestPending,
        ErrorCode::UnexpectedFds,
        ErrorCode::Closed,
        ErrorCode::Internal,
    ];

    fn from_u32(v: u32) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| *c as u32 == v)
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::VersionMismatch => "protocol version mismatch",
            ErrorCode::BadMagic => "not a rocjitsu client",
            ErrorCode::MalformedFrame => "malformed frame",
            ErrorCode::MalformedPayload => "malformed payload",
            ErrorCode::HandshakeRequired => "handshake required",
            ErrorCode::DuplicateHandshake => "duplicate handshake",
            ErrorCode::HandshakeFailed => "handshake failed",
            ErrorCode::NotAllowed => "request not allowed",
            ErrorCode::RequestPending => "request while another is pending",
            ErrorCode::UnexpectedFds => "unexpected descriptors",
            ErrorCode::Closed => "session closed",
            ErrorCode::Internal => "internal daemon error",
        }
    }
}

/// PROTOCOL_ERROR payload: `code u32, daemon_version u32, client_version u32,
/// reason_len u32`, then the reason (UTF-8). `client_version` is what the
/// daemon read from the client's handshake (0 if it never got that far), so
/// the client can print both versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolErrorBody {
    pub code: ErrorCode,
    pub daemon_version: u32,
    pub client_version: u32,
    pub reason: String,
}

impl core::fmt::Display for ProtocolErrorBody {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}: {} (client protocol {}, daemon protocol {})",
            self.code.name(),
            self.reason,
            self.client_version,
            self.daemon_version
        )
    }
}

impl ProtocolErrorBody {
    pub const FIXED_SIZE: usize = 16;

    /// The errno a client reports for it.
    pub fn errno(&self) -> i32 {
        match self.code {
            ErrorCode::VersionMismatch => EPROTONOSUPPORT,
            _ => EPROTO,
        }
    }

    /// Appends the body; a reason longer than [`MAX_REASON_BYTES`] is cut at
    /// a character boundary (it is a diagnostic, not data).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut end = self.reason.len().min(MAX_REASON_BYTES);
        while !self.reason.is_char_boundary(end) {
            end -= 1;
        }
        let reason = self.reason[..end].replace('\0', " ");
        out.put_u32(self.code as u32);
        out.put_u32(self.daemon_version);
        out.put_u32(self.client_version);
        out.put_u32(reason.len() as u32);
        out.extend_from_slice(reason.as_bytes());
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        const WHAT: &str = "PROTOCOL_ERROR";
        let mut r = Reader::new(payload);
        let (Some(code), Some(daemon_version), Some(client_version), Some(len)) = (r.u32(), r.u32(), r.u32(), r.u32())
        else {
            return Err(MessageError::PayloadTooShort { what: WHAT, min: Self::FIXED_SIZE, got: payload.len() });
        };
        check_count("reason bytes", len as usize, MAX_REASON_BYTES)?;
        exact(WHAT, payload, Self::FIXED_SIZE + len as usize)?;
        let code = ErrorCode::from_u32(code).ok_or(MessageError::UnknownErrorCode(code))?;
        Ok(Self { code, daemon_version, client_version, reason: text("reason", r.rest())? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_request_layout() {
        let mut v = Vec::new();
        HandshakeRequest::new(0x1234, Role::Wait).encode(&mut v);
        assert_eq!(v.len(), HandshakeRequest::SIZE);
        assert_eq!(&v[..4], b"RJSU");
        assert_eq!(&v[4..8], &PROTOCOL_VERSION.to_le_bytes());
        assert_eq!(&v[8..12], &0x1234u32.to_le_bytes());
        assert_eq!(&v[12..16], &1u32.to_le_bytes());
        assert_eq!(HandshakeRequest::decode(&v).unwrap(), HandshakeRequest::new(0x1234, Role::Wait));
    }

    #[test]
    fn handshake_request_checks_version_before_size() {
        // A future client with a longer handshake is told about versions.
        let mut v = Vec::new();
        HandshakeRequest { version: PROTOCOL_VERSION + 1, client_pid: 1, role: Role::Process }.encode(&mut v);
        v.extend_from_slice(&[0; 8]);
        assert_eq!(
            HandshakeRequest::decode(&v),
            Err(MessageError::VersionMismatch { client: PROTOCOL_VERSION + 1, daemon: PROTOCOL_VERSION })
        );
        // AMD's client sends an empty handshake.
        assert!(matches!(HandshakeRequest::decode(&[]), Err(MessageError::PayloadTooShort { min: 8, got: 0, .. })));
        let mut v = Vec::new();
        HandshakeRequest::new(1, Role::Process).encode(&mut v);
        v.push(0);
        assert!(matches!(HandshakeRequest::decode(&v), Err(MessageError::PayloadSize { expected: 16, got: 17, .. })));
        v.pop();
        v[0] ^= 1;
        assert!(matches!(HandshakeRequest::decode(&v), Err(MessageError::BadMagic { .. })));
    }

    #[test]
    fn handshake_flags_must_be_known() {
        for (flags, ok) in [(0, true), (1, true), (2, true), (3, false), (4, false), (1 << 31, false)] {
            let mut v = Vec::new();
            HandshakeRequest::new(1, Role::Process).encode(&mut v);
            v[12..16].copy_from_slice(&(flags as u32).to_le_bytes());
            assert_eq!(HandshakeRequest::decode(&v).is_ok(), ok, "flags {flags:#x}");
        }
    }

    fn reply() -> HandshakeReply {
        HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id: 7,
            attach_token: 0xfeed,
            daemon_pid: 99,
            machine: crate::payload::MachineInfo {
                render_minors: vec![128, 129],
                topology_dir: "/run/rocjitsu/1/topology".into(),
            },
        }
    }

    #[test]
    fn handshake_reply_round_trips_and_is_exact() {
        let mut v = Vec::new();
        reply().encode(&mut v).unwrap();
        assert_eq!(v.len(), 40 + 8 + 24);
        assert_eq!(HandshakeReply::decode(&v).unwrap(), reply());
        v.push(b'x');
        assert!(matches!(HandshakeReply::decode(&v), Err(MessageError::PayloadSize { .. })));
    }

    #[test]
    fn handshake_reply_refuses_too_many_gpus_and_bad_paths() {
        let mut r = reply();
        r.machine.render_minors = vec![128; MAX_GPUS + 1];
        assert!(matches!(r.encode(&mut Vec::new()), Err(MessageError::TooMany { count: 65, max: 64, .. })));
        let mut v = Vec::new();
        reply().encode(&mut v).unwrap();
        v[28..32].copy_from_slice(&65u32.to_le_bytes());
        assert!(matches!(HandshakeReply::decode(&v), Err(MessageError::TooMany { count: 65, max: 64, .. })));
        let mut r = reply();
        r.machine.topology_dir = "a\0b".into();
        assert!(matches!(r.encode(&mut Vec::new()), Err(MessageError::InteriorNul { .. })));
        let mut v = Vec::new();
        reply().encode(&mut v).unwrap();
        let last = v.len() - 1;
        v[last] = 0xff;
        assert!(matches!(HandshakeReply::decode(&v), Err(MessageError::NotUtf8 { .. })));
    }

    #[test]
    fn client_reports_a_daemon_of_another_version() {
        let mut r = reply();
        r.version = 9;
        let mut v = Vec::new();
        r.encode(&mut v).unwrap();
        assert_eq!(
            HandshakeReply::decode(&v),
            Err(MessageError::VersionMismatch { client: PROTOCOL_VERSION, daemon: 9 })
        );
    }

    #[test]
    fn fixed_requests_are_exact() {
        let m = MmapRequest {
            addr: 1,
            length: 2,
            prot: 3,
            flags: -4,
            offset: -5,
            device: DeviceFile::Render { minor: 129 },
        };
        let mut v = Vec::new();
        m.encode(&mut v);
        assert_eq!(v.len(), 40);
        assert_eq!(MmapRequest::decode(&v).unwrap(), m);
        assert!(MmapRequest::decode(&v[..39]).is_err());
        // A device that is neither /dev/kfd nor a render node.
        let mut bad = v.clone();
        bad[32] = 7;
        assert!(matches!(MmapRequest::decode(&bad), Err(MessageError::NoSuchDevice { device: 7 })));
        v.push(0);
        assert!(MmapRequest::decode(&v).is_err());
        let mut v = Vec::new();
        MunmapRequest { addr: 1, length: 2 }.encode(&mut v);
        assert_eq!(v.len(), 16);
        assert!(MunmapRequest::decode(&v[..15]).is_err());
        let mut v = Vec::new();
        AttachWaitRequest { session_id: 1, attach_token: 2 }.encode(&mut v);
        assert_eq!(v.len(), 16);
        assert!(AttachWaitRequest::decode(&[v.as_slice(), &[0]].concat()).is_err());
    }

    #[test]
    fn fd_trailer_validates_every_field() {
        let good = FdDesc {
            kind: FdKind::Allocation,
            access: fd_access::READ | fd_access::WRITE,
            offset: 0x20_0000,
            length: 0x1000,
        };
        let mut v = Vec::new();
        put_fd_trailer(&mut v, &[good, good]).unwrap();
        assert_eq!(v.len(), fd_trailer_len(2));
        assert_eq!(MmapReply::decode(&v).unwrap().fds, vec![good, good]);
        assert!(put_fd_trailer(&mut Vec::new(), &[good; 5]).is_err());
        for bad in [
            FdDesc { offset: 1, ..good },
            FdDesc { length: 0, ..good },
            FdDesc { offset: !0xfff, length: 0x2000, ..good },
            FdDesc { access: 8, ..good },
        ] {
            assert!(put_fd_trailer(&mut Vec::new(), &[bad]).is_err(), "{bad:?}");
        }
        let mut bad_kind = v.clone();
        bad_kind[8] = 9;
        assert!(matches!(MmapReply::decode(&bad_kind), Err(MessageError::UnknownFdKind { index: 0, kind: 9 })));
        let mut five = v.clone();
        five[0] = 5;
        assert!(matches!(MmapReply::decode(&five), Err(MessageError::TooMany { count: 5, .. })));
        let mut short = v.clone();
        short.pop();
        assert!(MmapReply::decode(&short).is_err());
    }

    #[test]
    fn protocol_error_body_round_trips_and_bounds_its_reason() {
        let b = ProtocolErrorBody {
            code: ErrorCode::VersionMismatch,
            daemon_version: 1,
            client_version: 2,
            reason: "é".repeat(600),
        };
        let mut v = Vec::new();
        b.encode(&mut v);
        let back = ProtocolErrorBody::decode(&v).unwrap();
        assert_eq!(back.reason.len(), MAX_REASON_BYTES);
        assert_eq!(back.errno(), EPROTONOSUPPORT);
        assert!(back.to_string().contains("client protocol 2, daemon protocol 1"));
        v[0] = 99;
        assert_eq!(ProtocolErrorBody::decode(&v), Err(MessageError::UnknownErrorCode(99)));
    }
}

/// STATS request: what to do with the session's run statistics and timeline.
///
/// Wire: `op u32` (0 start the statistics, 1 report them, 2 start the timeline, 3 a piece of
/// the timeline), `reserved u32` (0), `offset u64` (the piece's offset; 0 for the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsRequest {
    /// From now on, count the session's dispatches and copies.
    Enable,
    /// Send the statistics so far (a JSON document).
    Report,
    /// From now on, record the session's timeline.
    EnableTrace,
    /// Up to a frame of the timeline's JSON document from `offset`: piece 0 writes the
    /// document, a piece shorter than [`STATS_PIECE_BYTES`] is the last.
    TracePiece { offset: u64 },
}

/// The longest piece of a timeline one STATS reply carries.
pub const STATS_PIECE_BYTES: usize = 8 << 20;

impl StatsRequest {
    pub const SIZE: usize = 16;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let (op, offset) = match *self {
            StatsRequest::Enable => (0, 0),
            StatsRequest::Report => (1, 0),
            StatsRequest::EnableTrace => (2, 0),
            StatsRequest::TracePiece { offset } => (3, offset),
        };
        out.put_u32(op);
        out.put_u32(0);
        out.put_u64(offset);
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        exact("STATS request", payload, Self::SIZE)?;
        let mut r = Reader::new(payload);
        let (Some(op), Some(reserved), Some(offset)) = (r.u32(), r.u32(), r.u64()) else { unreachable_size()? };
        if reserved != 0 {
            return Err(MessageError::ReservedNonZero { what: "STATS request", value: u64::from(reserved) });
        }
        match (op, offset) {
            (0, 0) => Ok(StatsRequest::Enable),
            (1, 0) => Ok(StatsRequest::Report),
            (2, 0) => Ok(StatsRequest::EnableTrace),
            (3, offset) => Ok(StatsRequest::TracePiece { offset }),
            (0..=2, offset) => Err(MessageError::ReservedNonZero { what: "STATS request offset", value: offset }),
            (op, _) => Err(MessageError::ReservedNonZero { what: "STATS request operation", value: u64::from(op) }),
        }
    }
}

#[cfg(test)]
mod stats_request_tests {
    use super::*;

    #[test]
    fn every_operation_round_trips_and_others_are_refused() {
        for r in [
            StatsRequest::Enable,
            StatsRequest::Report,
            StatsRequest::EnableTrace,
            StatsRequest::TracePiece { offset: 0 },
            StatsRequest::TracePiece { offset: 8 << 20 },
        ] {
            let mut out = Vec::new();
            r.encode(&mut out);
            assert_eq!(out.len(), StatsRequest::SIZE);
            assert_eq!(StatsRequest::decode(&out), Ok(r));
        }
        let frame = |op: u32, reserved: u32, offset: u64| {
            let mut out = Vec::new();
            out.put_u32(op);
            out.put_u32(reserved);
            out.put_u64(offset);
            out
        };
        assert!(StatsRequest::decode(&frame(4, 0, 0)).is_err());
        assert!(StatsRequest::decode(&frame(1, 1, 0)).is_err());
        assert!(StatsRequest::decode(&frame(1, 0, 5)).is_err());
        assert!(StatsRequest::decode(&[0; 4]).is_err());
    }
}
