//! The 16-byte frame header every message starts with, and the opcodes.
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 2 | opcode | request type; a reply echoes it |
//! | 2 | 2 | reserved | 0; anything else is a protocol error |
//! | 4 | 4 | request_id | chosen by the client, echoed by the daemon, checked by the client |
//! | 8 | 4 | payload_bytes | length of what follows, at most [`MAX_PAYLOAD_BYTES`] |
//! | 12 | 4 | result | 0 in requests; 0 or a negative errno in replies |
//!
//! All fields are little-endian. The width of each field follows AMD's code,
//! not its diagram (which draws 8-bit opcode and reserved fields).

use crate::error::FrameError;
use crate::wire::{Put, Reader};

/// Size of the header.
pub const HEADER_LEN: usize = 16;
/// Largest frame (header + payload) either side accepts. Checked on the
/// header, before any payload is read or allocated.
pub const MAX_FRAME_BYTES: usize = 16 << 20;
/// Largest `payload_bytes`.
pub const MAX_PAYLOAD_BYTES: u32 = (MAX_FRAME_BYTES - HEADER_LEN) as u32;

/// What a frame asks for (requests) or answers (replies).
///
/// 0–5 are AMD's opcodes (OPEN is reserved: declared but never sent, and we
/// refuse it). Ours start at 16 so the two ranges can never be confused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum Opcode {
    /// First message on every connection: versions, pid, role.
    Handshake = 0,
    /// Reserved by AMD's protocol and never used; always refused.
    Open = 1,
    /// The application closed its last /dev/kfd fd: tear the session down.
    Close = 2,
    /// `mmap` of the kfd or render fd; the reply carries the memfd to map.
    Mmap = 3,
    /// `munmap` of a range the daemon handed out.
    Munmap = 4,
    /// One KFD or DRM ioctl.
    Ioctl = 5,
    /// Makes this connection a wait connection of an existing session: it
    /// then carries only WAIT_EVENTS, so a blocking wait never holds the
    /// connection other threads need.
    AttachWait = 16,
    /// Lists sessions, allocations and queues (for tools).
    Status = 17,
    /// Sent by the daemon only, instead of a reply, when it refuses a frame
    /// (bad version, malformed frame, request not allowed); it then closes
    /// the connection. Carries a code, both versions and a reason.
    ProtocolError = 18,
    /// The session's run statistics: start keeping them, or report them (a JSON document
    /// the simulator writes; the protocol carries it as bytes).
    Stats = 19,
}

impl Opcode {
    /// Every opcode, for tests and tools.
    pub const ALL: [Opcode; 10] = [
        Opcode::Handshake,
        Opcode::Open,
        Opcode::Close,
        Opcode::Mmap,
        Opcode::Munmap,
        Opcode::Ioctl,
        Opcode::AttachWait,
        Opcode::Status,
        Opcode::ProtocolError,
        Opcode::Stats,
    ];

    /// The opcode with this wire value, if any.
    pub fn from_u16(v: u16) -> Option<Opcode> {
        Opcode::ALL.into_iter().find(|o| *o as u16 == v)
    }

    /// The name used in logs and errors.
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Handshake => "HANDSHAKE",
            Opcode::Open => "OPEN",
            Opcode::Close => "CLOSE",
            Opcode::Mmap => "MMAP",
            Opcode::Munmap => "MUNMAP",
            Opcode::Ioctl => "IOCTL",
            Opcode::AttachWait => "ATTACH_WAIT",
            Opcode::Status => "STATUS",
            Opcode::ProtocolError => "PROTOCOL_ERROR",
            Opcode::Stats => "STATS",
        }
    }
}

impl core::fmt::Display for Opcode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub opcode: Opcode,
    pub request_id: u32,
    pub payload_bytes: u32,
    pub result: i32,
}

impl Header {
    /// The header as it goes on the wire.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut v = Vec::with_capacity(HEADER_LEN);
        self.put(&mut v);
        let mut out = [0u8; HEADER_LEN];
        out.copy_from_slice(&v);
        out
    }

    /// Appends the header to `out`.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.put_u16(self.opcode as u16);
        out.put_u16(0);
        out.put_u32(self.request_id);
        out.put_u32(self.payload_bytes);
        out.put_i32(self.result);
    }

    /// Parses and validates the first [`HEADER_LEN`] bytes of `bytes`:
    /// reserved must be 0, the opcode known and the payload within limits.
    pub fn decode(bytes: &[u8]) -> Result<Header, FrameError> {
        let raw = RawHeader::decode(bytes)?;
        if raw.reserved != 0 {
            return Err(FrameError::ReservedNonZero(raw.reserved));
        }
        let opcode = Opcode::from_u16(raw.opcode).ok_or(FrameError::UnknownOpcode(raw.opcode))?;
        check_payload_len(raw.payload_bytes)?;
        Ok(Header { opcode, request_id: raw.request_id, payload_bytes: raw.payload_bytes, result: raw.result })
    }

    /// Header plus payload, in bytes.
    pub fn frame_len(&self) -> usize {
        HEADER_LEN + self.payload_bytes as usize
    }
}

/// The header's fields before validation. Transports use it to learn how many
/// payload bytes to read (so the stream stays in step even for a frame the
/// session will refuse), and the daemon to echo the request id of a frame it
/// refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawHeader {
    pub opcode: u16,
    pub reserved: u16,
    pub request_id: u32,
    pub payload_bytes: u32,
    pub result: i32,
}

impl RawHeader {
    /// Reads the first [`HEADER_LEN`] bytes without judging them.
    pub fn decode(bytes: &[u8]) -> Result<RawHeader, FrameError> {
        let mut r = Reader::new(bytes);
        match (r.u16(), r.u16(), r.u32(), r.u32(), r.i32()) {
            (Some(opcode), Some(reserved), Some(request_id), Some(payload_bytes), Some(result)) => {
                Ok(RawHeader { opcode, reserved, request_id, payload_bytes, result })
            }
            _ => Err(FrameError::ShortHeader { got: bytes.len() }),
        }
    }

    /// The payload length, refused when over the frame limit.
    pub fn checked_payload_len(&self) -> Result<usize, FrameError> {
        check_payload_len(self.payload_bytes).map(|()| self.payload_bytes as usize)
    }
}

fn check_payload_len(payload_bytes: u32) -> Result<(), FrameError> {
    if payload_bytes > MAX_PAYLOAD_BYTES {
        return Err(FrameError::TooLarge { payload_bytes, max: MAX_PAYLOAD_BYTES });
    }
    Ok(())
}

/// Finds the first complete frame at the start of `buf`: `Ok(None)` when more
/// bytes are needed, otherwise the frame's length. Only the length is judged
/// here; the session validates the rest of the header.
pub fn complete_frame_len(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = HEADER_LEN + RawHeader::decode(buf)?.checked_payload_len()?;
    Ok((buf.len() >= len).then_some(len))
}

/// How many more bytes the frame starting at `buf` needs (never more than the
/// rest of that frame, so a reader that asks for exactly this never reads
/// into the next frame and file descriptors stay with their frame).
pub fn bytes_missing(buf: &[u8]) -> Result<usize, FrameError> {
    if buf.len() < HEADER_LEN {
        return Ok(HEADER_LEN - buf.len());
    }
    let len = HEADER_LEN + RawHeader::decode(buf)?.checked_payload_len()?;
    Ok(len.saturating_sub(buf.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(opcode: u16, reserved: u16, id: u32, len: u32, result: i32) -> Vec<u8> {
        let mut v = Vec::new();
        v.put_u16(opcode);
        v.put_u16(reserved);
        v.put_u32(id);
        v.put_u32(len);
        v.put_i32(result);
        v
    }

    #[test]
    fn header_layout_matches_the_table() {
        let h = Header { opcode: Opcode::Ioctl, request_id: 0x0403_0201, payload_bytes: 0x10, result: -22 };
        let b = h.encode();
        assert_eq!(b, raw(5, 0, 0x0403_0201, 0x10, -22).as_slice());
        assert_eq!(&b[4..8], &[1, 2, 3, 4]);
        assert_eq!(Header::decode(&b).unwrap(), h);
        assert_eq!(h.frame_len(), 32);
    }

    #[test]
    fn reserved_must_be_zero() {
        let b = raw(5, 1, 0, 0, 0);
        assert_eq!(Header::decode(&b), Err(FrameError::ReservedNonZero(1)));
    }

    #[test]
    fn unknown_opcodes_are_refused_and_named() {
        for op in [6u16, 15, 20, 0xffff] {
            assert_eq!(Header::decode(&raw(op, 0, 0, 0, 0)), Err(FrameError::UnknownOpcode(op)));
        }
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_u16(op as u16), Some(op));
        }
    }

    #[test]
    fn frames_over_16_mib_are_refused_from_the_header_alone() {
        let ok = raw(5, 0, 0, MAX_PAYLOAD_BYTES, 0);
        assert!(Header::decode(&ok).is_ok());
        let big = raw(5, 0, 0, MAX_PAYLOAD_BYTES + 1, 0);
        assert!(matches!(Header::decode(&big), Err(FrameError::TooLarge { .. })));
        assert!(matches!(complete_frame_len(&big), Err(FrameError::TooLarge { .. })));
        assert!(matches!(bytes_missing(&big), Err(FrameError::TooLarge { .. })));
        assert_eq!(HEADER_LEN + MAX_PAYLOAD_BYTES as usize, 16 * 1024 * 1024);
    }

    #[test]
    fn short_header_is_an_error_not_a_panic() {
        assert_eq!(Header::decode(&[0; 15]), Err(FrameError::ShortHeader { got: 15 }));
    }

    #[test]
    fn frame_boundaries() {
        let mut b = raw(2, 0, 9, 3, 0);
        assert_eq!(complete_frame_len(&b[..10]), Ok(None));
        assert_eq!(bytes_missing(&b[..10]), Ok(6));
        assert_eq!(complete_frame_len(&b), Ok(None));
        assert_eq!(bytes_missing(&b), Ok(3));
        b.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(complete_frame_len(&b), Ok(Some(19)));
        assert_eq!(bytes_missing(&b), Ok(0));
    }
}
