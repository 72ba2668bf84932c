//! Requests and replies as whole messages: the payload of each opcode,
//! chosen by the header, with the rules that tie a payload to its header
//! (a request's `result` is 0; a failed reply has no body except IOCTL's;
//! replies never carry a positive result).

use crate::error::MessageError;
use crate::header::Opcode;
use crate::payload::{
    AttachWaitRequest, FdDesc, HandshakeReply, HandshakeRequest, IoctlContext, IoctlReply, IoctlRequest, MmapReply,
    MmapRequest, MunmapRequest, StatsRequest, StatusReply,
};

/// A request, client to daemon. Only an IOCTL that hands over USERPTR memory
/// carries descriptors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Handshake(HandshakeRequest),
    Close,
    Mmap(MmapRequest),
    Munmap(MunmapRequest),
    Ioctl(IoctlRequest),
    AttachWait(AttachWaitRequest),
    Status,
    Stats(StatsRequest),
}

impl Request {
    pub fn opcode(&self) -> Opcode {
        match self {
            Request::Handshake(_) => Opcode::Handshake,
            Request::Close => Opcode::Close,
            Request::Mmap(_) => Opcode::Mmap,
            Request::Munmap(_) => Opcode::Munmap,
            Request::Ioctl(_) => Opcode::Ioctl,
            Request::AttachWait(_) => Opcode::AttachWait,
            Request::Status => Opcode::Status,
            Request::Stats(_) => Opcode::Stats,
        }
    }

    /// The descriptors this request says it carries.
    pub fn fds(&self) -> &[FdDesc] {
        match self {
            Request::Ioctl(i) => &i.fds,
            _ => &[],
        }
    }

    /// The ioctl number of an IOCTL request.
    pub fn ioctl_cmd(&self) -> Option<u32> {
        match self {
            Request::Ioctl(r) => Some(r.cmd),
            _ => None,
        }
    }

    /// Appends the payload (not the header).
    pub fn encode_payload(&self, out: &mut Vec<u8>) -> Result<(), MessageError> {
        match self {
            Request::Handshake(h) => h.encode(out),
            Request::Close | Request::Status => {}
            Request::Mmap(m) => m.encode(out),
            Request::Munmap(m) => m.encode(out),
            Request::Ioctl(i) => i.encode(out)?,
            Request::AttachWait(a) => a.encode(out),
            Request::Stats(s) => s.encode(out),
        }
        Ok(())
    }

    /// Parses the payload of a request with this opcode.
    pub fn decode(opcode: Opcode, payload: &[u8]) -> Result<Request, MessageError> {
        let empty = |what| {
            if payload.is_empty() {
                Ok(())
            } else {
                Err(MessageError::PayloadSize { what, expected: 0, got: payload.len() })
            }
        };
        Ok(match opcode {
            Opcode::Handshake => Request::Handshake(HandshakeRequest::decode(payload)?),
            Opcode::Close => {
                empty("CLOSE request")?;
                Request::Close
            }
            Opcode::Mmap => Request::Mmap(MmapRequest::decode(payload)?),
            Opcode::Munmap => Request::Munmap(MunmapRequest::decode(payload)?),
            Opcode::Ioctl => Request::Ioctl(IoctlRequest::decode(payload)?),
            Opcode::AttachWait => Request::AttachWait(AttachWaitRequest::decode(payload)?),
            Opcode::Status => {
                empty("STATUS request")?;
                Request::Status
            }
            Opcode::Stats => Request::Stats(StatsRequest::decode(payload)?),
            Opcode::Open => return Err(MessageError::ReservedOpcode { opcode }),
            Opcode::ProtocolError => return Err(MessageError::NotARequest { opcode }),
        })
    }
}

/// A reply, daemon to client. The header's `result` travels beside it
/// (see [`crate::sequence::Response`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Handshake(HandshakeReply),
    Close,
    Mmap(MmapReply),
    Munmap,
    /// An ioctl's reply, whether the ioctl succeeded or failed.
    Ioctl(IoctlReply),
    AttachWait,
    Status(StatusReply),
    /// STATS: empty after `Enable`; the report (JSON) after `Report`.
    Stats(Vec<u8>),
    /// The request failed (negative result) and the reply has no body; used
    /// for every opcode but IOCTL.
    Failed(Opcode),
}

impl Reply {
    pub fn opcode(&self) -> Opcode {
        match self {
            Reply::Handshake(_) => Opcode::Handshake,
            Reply::Close => Opcode::Close,
            Reply::Mmap(_) => Opcode::Mmap,
            Reply::Munmap => Opcode::Munmap,
            Reply::Ioctl(_) => Opcode::Ioctl,
            Reply::AttachWait => Opcode::AttachWait,
            Reply::Status(_) => Opcode::Status,
            Reply::Stats(_) => Opcode::Stats,
            Reply::Failed(op) => *op,
        }
    }

    /// The descriptors this reply says it carries.
    pub fn fds(&self) -> &[FdDesc] {
        match self {
            Reply::Mmap(m) => &m.fds,
            Reply::Ioctl(i) => &i.fds,
            _ => &[],
        }
    }

    /// Checks that this body fits `result` (a failure has no body except
    /// IOCTL's, a success is never `Failed`, no fds on a failure), then
    /// appends the payload.
    pub fn encode_payload(&self, result: i32, out: &mut Vec<u8>) -> Result<(), MessageError> {
        if result > 0 {
            return Err(MessageError::PositiveResult(result));
        }
        match (self, result < 0) {
            (Reply::Failed(_), true) => return Ok(()),
            (Reply::Ioctl(i), _) => {
                if result < 0 && !i.fds.is_empty() {
                    return Err(MessageError::FdsOnFailure { opcode: Opcode::Ioctl, result, count: i.fds.len() });
                }
                return i.encode(out);
            }
            (Reply::Failed(opcode), false) => {
                return Err(MessageError::BodyOnFailure { opcode: *opcode, result, len: 0 })
            }
            (body, true) => return Err(MessageError::BodyOnFailure { opcode: body.opcode(), result, len: 1 }),
            (_, false) => {}
        }
        match self {
            Reply::Handshake(h) => h.encode(out)?,
            Reply::Mmap(m) => m.encode(out)?,
            Reply::Status(s) => s.encode(out)?,
            Reply::Stats(document) => out.extend_from_slice(document),
            Reply::Close | Reply::Munmap | Reply::AttachWait => {}
            Reply::Ioctl(_) | Reply::Failed(_) => {}
        }
        Ok(())
    }

    /// Parses the payload of a reply with this opcode and result. `ioctl`
    /// describes the request an IOCTL reply answers.
    pub fn decode(
        opcode: Opcode,
        result: i32,
        payload: &[u8],
        ioctl: Option<IoctlContext>,
    ) -> Result<Reply, MessageError> {
        if result > 0 {
            return Err(MessageError::PositiveResult(result));
        }
        match opcode {
            Opcode::Open => return Err(MessageError::ReservedOpcode { opcode }),
            Opcode::ProtocolError => return Err(MessageError::NotAReply { opcode }),
            Opcode::Ioctl => {
                let ctx = ioctl.ok_or(MessageError::NotAReply { opcode })?;
                return Ok(Reply::Ioctl(IoctlReply::decode(payload, result, ctx)?));
            }
            _ => {}
        }
        if result < 0 {
            if !payload.is_empty() {
                return Err(MessageError::BodyOnFailure { opcode, result, len: payload.len() });
            }
            return Ok(Reply::Failed(opcode));
        }
        let empty = |what, body| {
            if payload.is_empty() {
                Ok(body)
            } else {
                Err(MessageError::PayloadSize { what, expected: 0, got: payload.len() })
            }
        };
        match opcode {
            Opcode::Handshake => Ok(Reply::Handshake(HandshakeReply::decode(payload)?)),
            Opcode::Close => empty("CLOSE reply", Reply::Close),
            Opcode::Mmap => Ok(Reply::Mmap(MmapReply::decode(payload)?)),
            Opcode::Munmap => empty("MUNMAP reply", Reply::Munmap),
            Opcode::AttachWait => empty("ATTACH_WAIT reply", Reply::AttachWait),
            Opcode::Status => Ok(Reply::Status(StatusReply::decode(payload)?)),
            Opcode::Stats => Ok(Reply::Stats(payload.to_vec())),
            Opcode::Open | Opcode::ProtocolError | Opcode::Ioctl => Err(MessageError::NotAReply { opcode }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::kfd;
    use crate::payload::{fd_access, FdKind};

    #[test]
    fn open_is_reserved_and_protocol_error_is_no_request() {
        assert_eq!(Request::decode(Opcode::Open, &[]), Err(MessageError::ReservedOpcode { opcode: Opcode::Open }));
        assert!(matches!(Request::decode(Opcode::ProtocolError, &[]), Err(MessageError::NotARequest { .. })));
    }

    #[test]
    fn bodiless_requests_must_be_empty() {
        assert_eq!(Request::decode(Opcode::Close, &[]), Ok(Request::Close));
        assert!(Request::decode(Opcode::Close, &[0]).is_err());
        assert!(Request::decode(Opcode::Status, &[0]).is_err());
    }

    #[test]
    fn ioctl_request_size_is_exact_for_the_ioctl() {
        let args = kfd::WaitEventsArgs { events_ptr: 0x1000, num_events: 2, ..Default::default() };
        let mut payload = bytemuck::bytes_of(&args).to_vec();
        payload.extend_from_slice(&[0; 96]);
        let req = Request::Ioctl(IoctlRequest::new(kfd::cmd::WAIT_EVENTS, payload.clone()));
        let mut v = Vec::new();
        req.encode_payload(&mut v).unwrap();
        assert_eq!(v.len(), 16 + 24 + 96 + 8, "head, arguments, events, empty fd trailer");
        assert_eq!(Request::decode(Opcode::Ioctl, &v).unwrap(), req);
        // One event's worth missing: args_bytes and the array disagree.
        let mut short = Vec::new();
        Request::Ioctl(IoctlRequest::new(kfd::cmd::WAIT_EVENTS, payload[..24 + 48].to_vec()))
            .encode_payload(&mut short)
            .unwrap();
        assert!(matches!(
            Request::decode(Opcode::Ioctl, &short),
            Err(MessageError::Ioctl(crate::ioctl::IoctlError::PayloadSize { .. }))
        ));
        // args_bytes larger than the arguments: they no longer fit the ioctl.
        let mut lying = v.clone();
        lying[4] = lying[4].wrapping_add(1);
        assert!(matches!(
            Request::decode(Opcode::Ioctl, &lying),
            Err(MessageError::Ioctl(crate::ioctl::IoctlError::PayloadSize { .. }))
        ));
        // args_bytes beyond the end of the payload.
        let mut beyond = v.clone();
        beyond[4] = beyond[4].wrapping_add(16);
        assert!(matches!(Request::decode(Opcode::Ioctl, &beyond), Err(MessageError::PayloadSize { .. })));
        // A byte after the arguments.
        let mut long = v.clone();
        long.push(0);
        assert!(matches!(Request::decode(Opcode::Ioctl, &long), Err(MessageError::PayloadSize { .. })));
    }

    fn userptr_alloc(size: u64) -> Vec<u8> {
        let args = kfd::AllocMemoryOfGpuArgs {
            va_addr: 0x10_0000,
            size,
            mmap_offset: 0x7f00_0000_0000,
            flags: kfd::alloc_flags::USERPTR | kfd::alloc_flags::WRITABLE,
            ..Default::default()
        };
        bytemuck::bytes_of(&args).to_vec()
    }

    fn user_memory(length: u64) -> FdDesc {
        FdDesc { kind: FdKind::Userptr, access: fd_access::READ | fd_access::WRITE, offset: 0, length }
    }

    #[test]
    fn only_a_userptr_allocation_hands_over_memory() {
        // Two pieces that make up the 3 pages of a 0x2100-byte registration.
        let req = IoctlRequest {
            cmd: kfd::cmd::ALLOC_MEMORY_OF_GPU,
            device: crate::payload::DeviceFile::Kfd,
            payload: userptr_alloc(0x2100),
            fds: vec![user_memory(0x1000), FdDesc { offset: 0x5000, ..user_memory(0x2000) }],
        };
        let mut v = Vec::new();
        req.encode(&mut v).unwrap();
        let back = Request::decode(Opcode::Ioctl, &v).unwrap();
        assert_eq!(back.fds().len(), 2);
        assert_eq!(back, Request::Ioctl(req.clone()));
        // Pieces that do not add up to the registration.
        let short = IoctlRequest { fds: vec![user_memory(0x2000)], ..req.clone() };
        assert!(matches!(
            short.encode(&mut Vec::new()),
            Err(MessageError::UserMemorySize { described: 0x2000, size: 0x3000 })
        ));
        // Memory of another kind, or read-only.
        let wrong =
            IoctlRequest { fds: vec![FdDesc { kind: FdKind::Allocation, ..user_memory(0x3000) }], ..req.clone() };
        assert!(matches!(wrong.encode(&mut Vec::new()), Err(MessageError::WrongRequestFd { index: 0, .. })));
        let ro = IoctlRequest { fds: vec![FdDesc { access: fd_access::READ, ..user_memory(0x3000) }], ..req.clone() };
        assert!(matches!(ro.encode(&mut Vec::new()), Err(MessageError::WrongRequestFd { .. })));
        // A VRAM allocation, or another ioctl, hands over nothing.
        let mut vram = userptr_alloc(0x3000);
        vram[36..40].copy_from_slice(&kfd::alloc_flags::VRAM.to_le_bytes());
        let vram = IoctlRequest { payload: vram, ..req.clone() };
        assert!(matches!(vram.encode(&mut Vec::new()), Err(MessageError::FdsNotExpected { count: 2, .. })));
        // The daemon checks the same on what it receives: patch a valid frame.
        let mut v = Vec::new();
        IoctlRequest { payload: userptr_alloc(0x1000), fds: vec![user_memory(0x1000)], ..req }.encode(&mut v).unwrap();
        v[16 + 36..16 + 40].copy_from_slice(&kfd::alloc_flags::GTT.to_le_bytes());
        assert!(matches!(Request::decode(Opcode::Ioctl, &v), Err(MessageError::FdsNotExpected { .. })));
    }

    #[test]
    fn too_many_events_or_devices_are_refused() {
        for (cmd, args) in [
            (
                kfd::cmd::WAIT_EVENTS,
                bytemuck::bytes_of(&kfd::WaitEventsArgs { events_ptr: 8, num_events: 4097, ..Default::default() })
                    .to_vec(),
            ),
            (
                kfd::cmd::MAP_MEMORY_TO_GPU,
                bytemuck::bytes_of(&kfd::MapMemoryToGpuArgs {
                    device_ids_array_ptr: 8,
                    n_devices: 65,
                    ..Default::default()
                })
                .to_vec(),
            ),
        ] {
            let mut v = Vec::new();
            IoctlRequest::new(cmd, args).encode(&mut v).unwrap();
            assert!(matches!(
                Request::decode(Opcode::Ioctl, &v),
                Err(MessageError::Ioctl(crate::ioctl::IoctlError::TooMany { .. }))
            ));
        }
    }

    #[test]
    fn reply_bodies_must_fit_their_result() {
        let mut v = Vec::new();
        assert!(Reply::Failed(Opcode::Mmap).encode_payload(0, &mut v).is_err());
        assert!(Reply::Munmap.encode_payload(-2, &mut v).is_err());
        assert!(Reply::Munmap.encode_payload(1, &mut v).is_err());
        assert!(Reply::Failed(Opcode::Munmap).encode_payload(-2, &mut v).is_ok());
        assert!(v.is_empty());
        assert_eq!(Reply::decode(Opcode::Munmap, -2, &[], None), Ok(Reply::Failed(Opcode::Munmap)));
        assert!(Reply::decode(Opcode::Munmap, -2, &[0], None).is_err());
        assert!(Reply::decode(Opcode::Munmap, 5, &[], None).is_err());
        let fd = FdDesc { kind: FdKind::Allocation, access: fd_access::READ, offset: 0, length: 4096 };
        let failed_with_fd =
            Reply::Ioctl(IoctlReply { cmd: kfd::cmd::ALLOC_MEMORY_OF_GPU, payload: vec![], fds: vec![fd] });
        assert!(matches!(failed_with_fd.encode_payload(-12, &mut v), Err(MessageError::FdsOnFailure { .. })));
    }

    #[test]
    fn ioctl_reply_must_answer_the_request() {
        let ctx = IoctlContext { cmd: kfd::cmd::ALLOC_MEMORY_OF_GPU, args_len: 40 };
        let mut v = Vec::new();
        crate::payload::encode_ioctl_reply(&mut v, ctx.cmd, &[0; 40], &[]).unwrap();
        assert!(Reply::decode(Opcode::Ioctl, 0, &v, Some(ctx)).is_ok());
        assert!(matches!(
            Reply::decode(Opcode::Ioctl, 0, &v, Some(IoctlContext { cmd: kfd::cmd::FREE_MEMORY_OF_GPU, ..ctx })),
            Err(MessageError::WrongIoctl { .. })
        ));
        // A failed ioctl may omit its arguments; a successful one may not.
        let mut empty = Vec::new();
        crate::payload::encode_ioctl_reply(&mut empty, ctx.cmd, &[], &[]).unwrap();
        assert!(Reply::decode(Opcode::Ioctl, -12, &empty, Some(ctx)).is_ok());
        assert!(matches!(
            Reply::decode(Opcode::Ioctl, 0, &empty, Some(ctx)),
            Err(MessageError::ReplyArgsSize { expected: 40, got: 0 })
        ));
    }
}
