//! The error of each protocol layer, from the bytes up:
//!
//! - [`FrameError`]: the 16-byte header (reserved field, opcode, frame size).
//! - [`MessageError`]: one payload against the rules of its opcode (exact
//!   sizes, counts, versions, the fd trailer), wrapping [`IoctlError`].
//! - [`SequenceError`]: the order of messages on a connection (handshake first
//!   and once, roles, request-id and opcode echo).
//! - [`TransportError`]: moving frames and descriptors over a socket.
//! - [`RpcError`]: what the synchronous client returns; everything above.
//!
//! Every variant says what failed and with which values, and maps to the
//! errno the other world expects (`errno()`): the preload library returns it
//! from the intercepted call, the daemon puts it in a reply's `result`.

use crate::header::Opcode;
use crate::ioctl::{IoctlError, EINVAL, EIO, EPROTO};
use crate::payload::ProtocolErrorBody;
use thiserror::Error;

/// errno for a protocol version the peer does not speak.
pub const EPROTONOSUPPORT: i32 = 93;
/// errno for a connection that is shut down (used for a poisoned client).
pub const ENOTCONN: i32 = 107;

/// A header that cannot start a valid frame.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FrameError {
    #[error("frame header is {got} bytes, need 16")]
    ShortHeader { got: usize },
    #[error("reserved header field is {0:#06x}, must be 0")]
    ReservedNonZero(u16),
    #[error("unknown opcode {0}")]
    UnknownOpcode(u16),
    #[error("frame with {payload_bytes} payload bytes exceeds the limit of {max}")]
    TooLarge { payload_bytes: u32, max: u32 },
    #[error("frame is {got} bytes but its header says {declared}")]
    LengthMismatch { declared: usize, got: usize },
}

/// A payload that breaks the rules of its opcode.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum MessageError {
    #[error("{what}: payload is {got} bytes, expected {expected}")]
    PayloadSize { what: &'static str, expected: usize, got: usize },
    #[error("{what}: payload is {got} bytes, expected at least {min}")]
    PayloadTooShort { what: &'static str, min: usize, got: usize },
    #[error("{what}: magic is {got:#010x}, expected {expected:#010x} (not a rocjitsu peer)")]
    BadMagic { what: &'static str, got: u32, expected: u32 },
    #[error("protocol version mismatch: client speaks {client}, daemon speaks {daemon}")]
    VersionMismatch { client: u32, daemon: u32 },
    #[error("handshake flags {0:#x} have unknown bits or an unknown role")]
    UnknownFlags(u32),
    #[error("{what}: {value:#x} in a reserved field, must be 0")]
    ReservedNonZero { what: &'static str, value: u64 },
    #[error("{what}: count {count} exceeds the limit {max}")]
    TooMany { what: &'static str, count: u64, max: u64 },
    #[error("{what} is not valid UTF-8")]
    NotUtf8 { what: &'static str },
    #[error("{what} contains a NUL byte")]
    InteriorNul { what: &'static str },
    #[error("{opcode} is reserved and never valid")]
    ReservedOpcode { opcode: Opcode },
    #[error("{opcode} is sent only by the daemon, never as a request")]
    NotARequest { opcode: Opcode },
    #[error("{opcode} is never a reply")]
    NotAReply { opcode: Opcode },
    #[error("result {0} in a request, must be 0")]
    ResultInRequest(i32),
    #[error("result {0} in a reply, must be 0 or a negative errno")]
    PositiveResult(i32),
    #[error("{opcode} reply failed with {result} but carries a {len}-byte body")]
    BodyOnFailure { opcode: Opcode, result: i32, len: usize },
    #[error("IOCTL reply for {got:#010x}, the request was {expected:#010x}")]
    WrongIoctl { expected: u32, got: u32 },
    #[error("IOCTL reply has {got} argument bytes, the request had {expected}")]
    ReplyArgsSize { expected: usize, got: usize },
    #[error("fd {index}: unknown kind {kind}")]
    UnknownFdKind { index: usize, kind: u16 },
    #[error("fd {index}: unknown access bits {access:#x}")]
    UnknownFdAccess { index: usize, access: u16 },
    #[error("fd {index}: range offset {offset:#x} length {length:#x} is not page-aligned, empty or overflows")]
    BadFdRange { index: usize, offset: u64, length: u64 },
    #[error("{} made on device {device}, which is not a device of its kind (0 for /dev/kfd, a render minor 128-255 for DRM)", crate::ioctl::name_of(*.cmd))]
    WrongDevice { cmd: u32, device: u32 },
    #[error("device {device} is neither /dev/kfd (0) nor a render node (128-255)")]
    NoSuchDevice { device: u32 },
    #[error("{} request carries {count} fds; only a USERPTR ALLOC_MEMORY_OF_GPU hands over memory", crate::ioctl::name_of(*.cmd))]
    FdsNotExpected { cmd: u32, count: usize },
    #[error("fd {index} of a USERPTR allocation: kind {kind} access {access:#x}, must be USERPTR read/write memory")]
    WrongRequestFd { index: usize, kind: u16, access: u16 },
    #[error("the fds of a USERPTR allocation describe {described:#x} bytes, the allocation is {size:#x}")]
    UserMemorySize { described: u64, size: u64 },
    #[error("message describes {declared} fds but {received} arrived with it")]
    FdCountMismatch { declared: usize, received: usize },
    #[error("{opcode} failed with {result} but carries {count} fds")]
    FdsOnFailure { opcode: Opcode, result: i32, count: usize },
    #[error("unknown protocol error code {0}")]
    UnknownErrorCode(u32),
    #[error("message of {bytes} bytes does not fit in a frame")]
    TooLarge { bytes: usize },
    #[error(transparent)]
    Ioctl(#[from] IoctlError),
}

impl MessageError {
    /// The errno a caller sees for this failure.
    pub fn errno(&self) -> i32 {
        match self {
            MessageError::Ioctl(e) => e.errno(),
            MessageError::VersionMismatch { .. } => EPROTONOSUPPORT,
            _ => EPROTO,
        }
    }
}

/// A message that is valid on its own but not here and now.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SequenceError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("{got} before HANDSHAKE: the handshake must come first")]
    HandshakeRequired { got: Opcode },
    #[error("second HANDSHAKE on one connection")]
    DuplicateHandshake,
    #[error("{got} after a failed handshake")]
    HandshakeFailed { got: Opcode },
    #[error("{got} after CLOSE")]
    Closed { got: Opcode },
    #[error("{got} after a protocol error on this connection")]
    Poisoned { got: Opcode },
    #[error("{opcode}{} is not allowed on a {state} connection", ioctl_suffix(*.ioctl))]
    NotAllowed { opcode: Opcode, ioctl: Option<u32>, state: &'static str },
    #[error("{got} while {pending} is still unanswered (one request at a time per connection)")]
    RequestPending { pending: Opcode, got: Opcode },
    #[error("a {got} reply arrived but no request is outstanding")]
    NoRequestPending { got: Opcode },
    #[error("reply carries request id {got}, expected {expected}")]
    RequestIdMismatch { expected: u32, got: u32 },
    #[error("reply opcode {got}, expected {expected}")]
    OpcodeMismatch { expected: Opcode, got: Opcode },
    #[error("daemon refused the connection: {0}")]
    Rejected(ProtocolErrorBody),
    #[error("{got} descriptors arrived with a {opcode}, which carries none")]
    UnexpectedFds { opcode: Opcode, got: usize },
}

fn ioctl_suffix(cmd: Option<u32>) -> String {
    cmd.map(|c| format!(" {}", crate::ioctl::name_of(c))).unwrap_or_default()
}

impl SequenceError {
    /// The errno a caller sees for this failure.
    pub fn errno(&self) -> i32 {
        match self {
            SequenceError::Message(m) => m.errno(),
            SequenceError::Rejected(body) => body.errno(),
            _ => EPROTO,
        }
    }
}

/// A failure moving frames over a connection.
#[derive(Debug, Error)]
pub enum TransportError {
    #[error("connection closed by the peer")]
    Closed,
    #[error("connection closed inside a frame after {got} of {expected} bytes")]
    Truncated { got: usize, expected: usize },
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("control message truncated (MSG_CTRUNC): closed the {closed} descriptors that arrived")]
    ControlTruncated { closed: usize },
    #[error("{got} descriptors in one message, at most {max}")]
    TooManyHandles { got: usize, max: usize },
    #[error("{count} descriptors arrived with a message that carries none; closed them")]
    UnexpectedHandles { count: usize },
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl TransportError {
    /// The errno a caller sees for this failure.
    pub fn errno(&self) -> i32 {
        match self {
            TransportError::Io(e) => e.raw_os_error().unwrap_or(EIO),
            TransportError::TooManyHandles { .. } => EINVAL,
            _ => EPROTO,
        }
    }
}

/// What the synchronous client returns.
#[derive(Debug, Error)]
pub enum RpcError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Sequence(#[from] SequenceError),
    #[error(transparent)]
    Ioctl(#[from] IoctlError),
    #[error("daemon refused {opcode} with errno {errno}")]
    Refused { opcode: Opcode, errno: i32 },
    #[error("connection unusable after an earlier failure")]
    Poisoned,
}

impl RpcError {
    /// The errno the intercepted call should fail with.
    pub fn errno(&self) -> i32 {
        match self {
            RpcError::Transport(e) => e.errno(),
            RpcError::Sequence(e) => e.errno(),
            RpcError::Ioctl(e) => e.errno(),
            RpcError::Refused { errno, .. } => *errno,
            RpcError::Poisoned => EPROTO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_values() {
        let e = SequenceError::from(MessageError::VersionMismatch { client: 2, daemon: 1 });
        assert_eq!(e.to_string(), "protocol version mismatch: client speaks 2, daemon speaks 1");
        assert_eq!(e.errno(), EPROTONOSUPPORT);
        let e = SequenceError::NotAllowed {
            opcode: Opcode::Ioctl,
            ioctl: Some(crate::abi::kfd::cmd::CREATE_QUEUE),
            state: "wait",
        };
        assert_eq!(e.to_string(), "IOCTL CREATE_QUEUE is not allowed on a wait connection");
    }
}
