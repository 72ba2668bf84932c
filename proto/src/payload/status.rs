//! The STATUS reply: what `rocjitsu status` shows of a running daemon — its sessions (client
//! processes), their allocations and their queues, with what each queue's command processor
//! has done and is doing.
//!
//! Wire (protocol 3): a 24-byte head `daemon_pid u32, sessions u32, allocations u32,
//! queues u32, uptime_ms u64`, then the records in that order: [`SessionStatus`] (48 bytes
//! each), [`AllocationStatus`] (40), [`QueueStatus`] (64, then the running kernel's name).
//!
//! Queue records carry a name, so the reply is not a multiple of a record size: the decoder
//! first checks that the fixed parts of all records fit in the payload (so a count of four
//! billion is a size error, not an allocation), then reads each name within what is left
//! and insists that nothing remains.

use super::{check_count, check_text, reserved, text, unreachable_size};
use crate::error::MessageError;
use crate::header::MAX_PAYLOAD_BYTES;
use crate::wire::{Put, Reader};

/// Longest kernel name in a [`QueueStatus`]. C++ template kernels can have demangled names of
/// many kilobytes; the daemon cuts them ([`clip_text`]) rather than fail the reply.
pub const MAX_KERNEL_NAME_BYTES: usize = 4096;

/// One session (48 bytes on the wire: `session_id u64, client_pid u32,
/// wait_connections u32, allocations u32, queues u32, events u32, reserved u32,
/// bytes_allocated u64, uptime_ms u64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStatus {
    pub session_id: u64,
    pub client_pid: u32,
    pub wait_connections: u32,
    /// How many allocations the session has (the reply may carry fewer records when they
    /// do not all fit in a frame).
    pub allocations: u32,
    pub queues: u32,
    pub events: u32,
    pub bytes_allocated: u64,
    /// Time since the client connected.
    pub uptime_ms: u64,
}

impl SessionStatus {
    pub const SIZE: usize = 48;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.session_id);
        out.put_u32(self.client_pid);
        out.put_u32(self.wait_connections);
        out.put_u32(self.allocations);
        out.put_u32(self.queues);
        out.put_u32(self.events);
        out.put_u32(0);
        out.put_u64(self.bytes_allocated);
        out.put_u64(self.uptime_ms);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, MessageError> {
        let (
            Some(session_id),
            Some(client_pid),
            Some(wait_connections),
            Some(allocations),
            Some(queues),
            Some(events),
            Some(res),
            Some(bytes_allocated),
            Some(uptime_ms),
        ) = (r.u64(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32(), r.u64(), r.u64())
        else {
            return unreachable_size();
        };
        reserved("session status reserved", res.into())?;
        Ok(Self { session_id, client_pid, wait_connections, allocations, queues, events, bytes_allocated, uptime_ms })
    }
}

/// One allocation (40 bytes: `session_id u64, va u64, size u64, handle u64, gpu_id u32,
/// flags u32`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocationStatus {
    pub session_id: u64,
    pub va: u64,
    pub size: u64,
    pub handle: u64,
    pub gpu_id: u32,
    /// KFD allocation flags (`abi::kfd::alloc_flags`): the kind of memory (VRAM, GTT,
    /// USERPTR, …) and its attributes.
    pub flags: u32,
}

impl AllocationStatus {
    pub const SIZE: usize = 40;

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.session_id);
        out.put_u64(self.va);
        out.put_u64(self.size);
        out.put_u64(self.handle);
        out.put_u32(self.gpu_id);
        out.put_u32(self.flags);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, MessageError> {
        let (Some(session_id), Some(va), Some(size), Some(handle), Some(gpu_id), Some(flags)) =
            (r.u64(), r.u64(), r.u64(), r.u64(), r.u32(), r.u32())
        else {
            return unreachable_size();
        };
        Ok(Self { session_id, va, size, handle, gpu_id, flags })
    }
}

/// One queue (64 bytes: `session_id u64, ring_base_address u64, packets_consumed u64,
/// dispatches_done u64, running_kernel u64, queue_id u32, gpu_id u32, queue_type u32,
/// ring_size u32, name_len u32, reserved u32`, then `name_len` bytes of `kernel_name`
/// (UTF-8, no NUL, at most [`MAX_KERNEL_NAME_BYTES`])).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueStatus {
    pub session_id: u64,
    pub ring_base_address: u64,
    /// Packets the command processor consumed (AQL queues; SDMA queues report 0).
    pub packets_consumed: u64,
    /// Kernel dispatches that completed.
    pub dispatches_done: u64,
    /// The kernel object (kernel descriptor address) of the dispatch running now; 0 when
    /// the queue runs none.
    pub running_kernel: u64,
    pub queue_id: u32,
    pub gpu_id: u32,
    /// KFD queue type (`abi::kfd`: 0 compute, 1 SDMA, 2 AQL compute).
    pub queue_type: u32,
    pub ring_size: u32,
    /// The running kernel's name; empty when none runs.
    pub kernel_name: String,
}

impl QueueStatus {
    /// The record without its name.
    pub const FIXED_SIZE: usize = 64;

    /// Bytes of this record on the wire.
    pub fn wire_len(&self) -> usize {
        Self::FIXED_SIZE + self.kernel_name.len()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.session_id);
        out.put_u64(self.ring_base_address);
        out.put_u64(self.packets_consumed);
        out.put_u64(self.dispatches_done);
        out.put_u64(self.running_kernel);
        out.put_u32(self.queue_id);
        out.put_u32(self.gpu_id);
        out.put_u32(self.queue_type);
        out.put_u32(self.ring_size);
        out.put_u32(self.kernel_name.len() as u32);
        out.put_u32(0);
        out.extend_from_slice(self.kernel_name.as_bytes());
    }

    fn decode(r: &mut Reader<'_>, payload_len: usize) -> Result<Self, MessageError> {
        let (
            Some(session_id),
            Some(ring_base_address),
            Some(packets_consumed),
            Some(dispatches_done),
            Some(running_kernel),
            Some(queue_id),
            Some(gpu_id),
            Some(queue_type),
            Some(ring_size),
            Some(name_len),
            Some(res),
        ) = (r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32())
        else {
            return unreachable_size();
        };
        reserved("queue status reserved", res.into())?;
        check_count("kernel name bytes", name_len as usize, MAX_KERNEL_NAME_BYTES)?;
        let remaining = r.remaining();
        let name = r.bytes(name_len as usize).ok_or(MessageError::PayloadSize {
            what: StatusReply::WHAT,
            expected: payload_len - remaining + name_len as usize,
            got: payload_len,
        })?;
        Ok(Self {
            session_id,
            ring_base_address,
            packets_consumed,
            dispatches_done,
            running_kernel,
            queue_id,
            gpu_id,
            queue_type,
            ring_size,
            kernel_name: text("kernel name", name)?,
        })
    }
}

/// STATUS reply: the daemon's sessions, allocations and queues (see the module doc for the
/// layout). Its encoded size is bounded by the frame size ([`StatusReply::fit_frame`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusReply {
    pub daemon_pid: u32,
    /// Time since the daemon started.
    pub uptime_ms: u64,
    pub sessions: Vec<SessionStatus>,
    pub allocations: Vec<AllocationStatus>,
    pub queues: Vec<QueueStatus>,
}

impl StatusReply {
    pub const FIXED_SIZE: usize = 24;
    const WHAT: &'static str = "STATUS reply";

    /// Bytes of the encoded reply.
    pub fn encoded_len(&self) -> usize {
        Self::FIXED_SIZE
            + self.sessions.len() * SessionStatus::SIZE
            + self.allocations.len() * AllocationStatus::SIZE
            + self.queues.iter().map(QueueStatus::wire_len).sum::<usize>()
    }

    /// Drops records from the end until the reply fits in a frame: allocations first (the
    /// sessions' counts and byte totals still tell about them), then queues, then sessions.
    /// Returns whether everything fit.
    pub fn fit_frame(&mut self) -> bool {
        let max = MAX_PAYLOAD_BYTES as usize;
        let mut len = self.encoded_len();
        let fits = len <= max;
        while len > max {
            if self.allocations.pop().is_some() {
                len -= AllocationStatus::SIZE;
            } else if let Some(q) = self.queues.pop() {
                len -= q.wire_len();
            } else if self.sessions.pop().is_some() {
                len -= SessionStatus::SIZE;
            } else {
                break;
            }
        }
        fits
    }

    /// Refuses names longer than [`MAX_KERNEL_NAME_BYTES`] or with a NUL, and replies that do
    /// not fit in a frame.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        for q in &self.queues {
            check_text("kernel name bytes", &q.kernel_name, MAX_KERNEL_NAME_BYTES)?;
        }
        let len = self.encoded_len();
        if len > MAX_PAYLOAD_BYTES as usize {
            return Err(MessageError::TooLarge { bytes: len });
        }
        out.reserve(len);
        out.put_u32(self.daemon_pid);
        out.put_u32(self.sessions.len() as u32);
        out.put_u32(self.allocations.len() as u32);
        out.put_u32(self.queues.len() as u32);
        out.put_u64(self.uptime_ms);
        self.sessions.iter().for_each(|s| s.encode(out));
        self.allocations.iter().for_each(|a| a.encode(out));
        self.queues.iter().for_each(|q| q.encode(out));
        Ok(())
    }

    pub fn decode(payload: &[u8]) -> Result<Self, MessageError> {
        let mut r = Reader::new(payload);
        let (Some(daemon_pid), Some(ns), Some(na), Some(nq), Some(uptime_ms)) =
            (r.u32(), r.u32(), r.u32(), r.u32(), r.u64())
        else {
            return Err(MessageError::PayloadTooShort { what: Self::WHAT, min: Self::FIXED_SIZE, got: payload.len() });
        };
        // The fixed parts of all records must fit before anything is allocated; u64
        // arithmetic cannot overflow with u32 counts.
        let fixed = Self::FIXED_SIZE as u64
            + ns as u64 * SessionStatus::SIZE as u64
            + na as u64 * AllocationStatus::SIZE as u64
            + nq as u64 * QueueStatus::FIXED_SIZE as u64;
        if fixed > payload.len() as u64 {
            return Err(MessageError::PayloadSize {
                what: Self::WHAT,
                expected: usize::try_from(fixed).unwrap_or(usize::MAX),
                got: payload.len(),
            });
        }
        let sessions = (0..ns).map(|_| SessionStatus::decode(&mut r)).collect::<Result<_, _>>()?;
        let allocations = (0..na).map(|_| AllocationStatus::decode(&mut r)).collect::<Result<_, _>>()?;
        let queues = (0..nq).map(|_| QueueStatus::decode(&mut r, payload.len())).collect::<Result<_, _>>()?;
        if r.remaining() != 0 {
            return Err(MessageError::PayloadSize {
                what: Self::WHAT,
                expected: payload.len() - r.remaining(),
                got: payload.len(),
            });
        }
        Ok(Self { daemon_pid, uptime_ms, sessions, allocations, queues })
    }
}

/// `s` cut to at most `max` bytes at a character boundary, with NULs replaced: a diagnostic
/// text that must fit a bounded field.
pub fn clip_text(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].replace('\0', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(name: &str) -> QueueStatus {
        QueueStatus {
            session_id: 3,
            ring_base_address: 0x7000_0000,
            packets_consumed: 12,
            dispatches_done: 9,
            running_kernel: 0x7f00_1000,
            queue_id: 1,
            gpu_id: 0x1234,
            queue_type: 2,
            ring_size: 4096,
            kernel_name: name.into(),
        }
    }

    fn sample() -> StatusReply {
        StatusReply {
            daemon_pid: 1,
            uptime_ms: 2,
            sessions: vec![SessionStatus { session_id: 3, uptime_ms: 77, ..Default::default() }],
            allocations: vec![AllocationStatus::default(); 2],
            queues: vec![queue("spin(unsigned int*)"), queue("")],
        }
    }

    fn encoded(s: &StatusReply) -> Vec<u8> {
        let mut v = Vec::new();
        s.encode(&mut v).unwrap();
        v
    }

    #[test]
    fn layout_and_round_trip() {
        let s = sample();
        let v = encoded(&s);
        assert_eq!(v.len(), 24 + 48 + 2 * 40 + 2 * 64 + "spin(unsigned int*)".len());
        assert_eq!(v.len(), s.encoded_len());
        // The session's uptime is its last field.
        assert_eq!(&v[24 + 40..24 + 48], &77u64.to_le_bytes());
        // The first queue record: dispatches done, running kernel, then the name after 64 bytes.
        let q = 24 + 48 + 80;
        assert_eq!(&v[q + 24..q + 32], &9u64.to_le_bytes());
        assert_eq!(&v[q + 32..q + 40], &0x7f00_1000u64.to_le_bytes());
        assert_eq!(&v[q + 56..q + 60], &19u32.to_le_bytes());
        assert_eq!(&v[q + 64..q + 64 + 19], b"spin(unsigned int*)");
        assert_eq!(StatusReply::decode(&v).unwrap(), s);
    }

    #[test]
    fn counts_are_bounded_by_the_payload() {
        let mut v = encoded(&sample());
        // Four billion sessions, queues or allocations in a small payload: a size error,
        // not an allocation.
        for at in [4, 8, 12] {
            let mut bad = v.clone();
            bad[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
            assert!(matches!(StatusReply::decode(&bad), Err(MessageError::PayloadSize { .. })), "count at {at}");
        }
        // One queue fewer than the records: bytes left over.
        v[12..16].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(StatusReply::decode(&v), Err(MessageError::PayloadSize { .. })));
    }

    #[test]
    fn every_cut_and_every_extra_byte_is_refused() {
        let v = encoded(&sample());
        for len in 0..v.len() {
            assert!(StatusReply::decode(&v[..len]).is_err(), "cut at {len}");
        }
        let mut long = v.clone();
        long.push(0);
        assert!(StatusReply::decode(&long).is_err());
    }

    #[test]
    fn names_are_bounded_and_checked() {
        let v = encoded(&sample());
        let len_at = 24 + 48 + 80 + 56;
        // A name length past the limit, then one past the payload.
        let mut bad = v.clone();
        bad[len_at..len_at + 4].copy_from_slice(&(MAX_KERNEL_NAME_BYTES as u32 + 1).to_le_bytes());
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::TooMany { .. })));
        bad[len_at..len_at + 4].copy_from_slice(&4000u32.to_le_bytes());
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::PayloadSize { .. })));
        // Invalid UTF-8 and a NUL in the name.
        let name_at = len_at + 8;
        let mut bad = v.clone();
        bad[name_at] = 0xff;
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::NotUtf8 { .. })));
        bad[name_at] = 0;
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::InteriorNul { .. })));
        // Reserved fields must be 0.
        let mut bad = v.clone();
        bad[len_at + 4] = 1;
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::ReservedNonZero { .. })));
        let mut bad = v.clone();
        bad[24 + 28] = 1;
        assert!(matches!(StatusReply::decode(&bad), Err(MessageError::ReservedNonZero { .. })));
        // The encoder refuses what the decoder would.
        let mut s = sample();
        s.queues[0].kernel_name = "x".repeat(MAX_KERNEL_NAME_BYTES + 1);
        assert!(matches!(s.encode(&mut Vec::new()), Err(MessageError::TooMany { .. })));
        s.queues[0].kernel_name = "a\0b".into();
        assert!(matches!(s.encode(&mut Vec::new()), Err(MessageError::InteriorNul { .. })));
    }

    #[test]
    fn clipped_names_fit() {
        let long = "é".repeat(MAX_KERNEL_NAME_BYTES);
        let clipped = clip_text(&long, MAX_KERNEL_NAME_BYTES);
        assert_eq!(clipped.len(), MAX_KERNEL_NAME_BYTES);
        assert_eq!(clip_text("aé", 2), "a");
        assert_eq!(clip_text("a\0b", 10), "a b");
        let mut s = sample();
        s.queues[0].kernel_name = clipped;
        assert_eq!(StatusReply::decode(&encoded(&s)).unwrap(), s);
    }

    #[test]
    fn a_reply_too_large_for_a_frame_is_cut_to_fit() {
        let max = MAX_PAYLOAD_BYTES as usize;
        let mut s = sample();
        let n = (max - s.encoded_len()) / AllocationStatus::SIZE + 10;
        s.allocations.extend(std::iter::repeat_n(AllocationStatus::default(), n));
        assert!(matches!(s.encode(&mut Vec::new()), Err(MessageError::TooLarge { .. })));
        assert!(!s.fit_frame());
        assert!(s.encoded_len() <= max && s.encoded_len() + AllocationStatus::SIZE > max);
        assert_eq!((s.sessions.len(), s.queues.len()), (1, 2), "sessions and queues are kept");
        assert_eq!(StatusReply::decode(&encoded(&s)).unwrap(), s);
        assert!(s.fit_frame(), "a reply that fits is left alone");
    }
}
