//! The order of messages on one connection, for both ends.
//!
//! Rules (the same table drives both ends, so a client never sends what the
//! daemon would refuse):
//! - HANDSHAKE first, exactly once. A failed handshake fails the connection:
//!   every later request is refused.
//! - One request at a time; the reply echoes its opcode and request id, and
//!   the client checks both (AMD's client never did).
//! - What a connection may send depends on the role it declared:
//!   a process connection sends CLOSE, MMAP, MUNMAP, IOCTL, STATUS; a wait
//!   connection sends ATTACH_WAIT, then only WAIT_EVENTS (and CLOSE); a tool
//!   connection sends STATUS (and CLOSE).
//! - A message carries exactly the descriptors its fd trailer describes.
//!   Replies to IOCTL and MMAP may carry some; of the requests only a USERPTR
//!   ALLOC_MEMORY_OF_GPU does (the client's memory, see `payload`).
//! - Nothing after CLOSE. After a protocol error, nothing at all.
//!
//! Both types are pure: they turn frames into typed messages and back and
//! never touch a socket.

use crate::abi::kfd;
use crate::error::{FrameError, MessageError, SequenceError};
use crate::header::{Header, Opcode, HEADER_LEN, MAX_FRAME_BYTES};
use crate::ioctl::UserMemory;
use crate::message::{Reply, Request};
use crate::payload::{
    check_request, encode_ioctl_reply, put_fd_trailer, put_ioctl_request_head, DeviceFile, ErrorCode, FdDesc,
    IoctlContext, ProtocolErrorBody, Role, IOCTL_REQUEST_HEAD_SIZE, PROTOCOL_VERSION,
};
use crate::wire::patch_u32;

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Nothing but HANDSHAKE is allowed.
    AwaitHandshake,
    /// A wait connection after its handshake: ATTACH_WAIT (or CLOSE).
    AwaitAttach,
    /// Handshake done; the role decides what is allowed.
    Ready(Role),
    /// The handshake failed, or a protocol error happened: nothing is allowed.
    Failed { during_handshake: bool },
    /// CLOSE was answered.
    Closed,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::AwaitHandshake => "new",
            Phase::AwaitAttach => "unattached wait",
            Phase::Ready(role) => role.name(),
            Phase::Failed { .. } => "failed",
            Phase::Closed => "closed",
        }
    }
}

/// Whether `opcode` (and, for IOCTL, `cmd`) may be sent in `phase`.
fn check_allowed(phase: Phase, opcode: Opcode, cmd: Option<u32>) -> Result<(), SequenceError> {
    match opcode {
        Opcode::Open => return Err(MessageError::ReservedOpcode { opcode }.into()),
        Opcode::ProtocolError => return Err(MessageError::NotARequest { opcode }.into()),
        _ => {}
    }
    let not_allowed = || SequenceError::NotAllowed { opcode, ioctl: cmd, state: phase.name() };
    match phase {
        Phase::AwaitHandshake if opcode == Opcode::Handshake => Ok(()),
        Phase::AwaitHandshake => Err(SequenceError::HandshakeRequired { got: opcode }),
        Phase::Failed { during_handshake: true } => Err(SequenceError::HandshakeFailed { got: opcode }),
        Phase::Failed { during_handshake: false } => Err(SequenceError::Poisoned { got: opcode }),
        Phase::Closed => Err(SequenceError::Closed { got: opcode }),
        _ if opcode == Opcode::Handshake => Err(SequenceError::DuplicateHandshake),
        Phase::AwaitAttach => match opcode {
            Opcode::AttachWait | Opcode::Close => Ok(()),
            _ => Err(not_allowed()),
        },
        Phase::Ready(Role::Process) => match opcode {
            Opcode::Close | Opcode::Mmap | Opcode::Munmap | Opcode::Ioctl | Opcode::Status | Opcode::Stats => Ok(()),
            _ => Err(not_allowed()),
        },
        Phase::Ready(Role::Wait) => match (opcode, cmd) {
            (Opcode::Close, _) => Ok(()),
            // A wait connection exists for WAIT_EVENTS alone; the cmd is
            // checked once it is known (see `check_ioctl_allowed`).
            (Opcode::Ioctl, None) => Ok(()),
            (Opcode::Ioctl, Some(kfd::cmd::WAIT_EVENTS)) => Ok(()),
            _ => Err(not_allowed()),
        },
        Phase::Ready(Role::Tool) => match opcode {
            Opcode::Status | Opcode::Close => Ok(()),
            _ => Err(not_allowed()),
        },
    }
}

/// The phase after a reply to `opcode` with `result`.
fn phase_after_reply(phase: Phase, opcode: Opcode, result: i32, role: Option<Role>) -> Phase {
    match (opcode, result < 0) {
        (Opcode::Close, _) => Phase::Closed,
        (Opcode::Handshake, true) => Phase::Failed { during_handshake: true },
        (Opcode::Handshake, false) => match role {
            Some(Role::Wait) => Phase::AwaitAttach,
            Some(role) => Phase::Ready(role),
            None => Phase::Failed { during_handshake: true },
        },
        (Opcode::AttachWait, false) => Phase::Ready(Role::Wait),
        _ => phase,
    }
}

/// The request a reply must answer. Returned by [`ServerSequence::accept`] and
/// consumed by the reply, so every request is answered once and the answer
/// echoes the right opcode and id by construction.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "every request must be answered"]
pub struct Pending {
    pub request_id: u32,
    pub opcode: Opcode,
    /// For IOCTL: the ioctl and its argument bytes, which the reply must match.
    pub ioctl: Option<IoctlContext>,
    role: Option<Role>,
}

/// Ends the frame that starts at `out[start]`: checks its size and writes the payload length
/// into its header. On error (or on `built` failing) the frame is removed from `out`, so a
/// refused message leaves nothing behind.
fn seal_frame<E: Into<SequenceError>>(
    out: &mut Vec<u8>,
    start: usize,
    built: Result<(), E>,
) -> Result<usize, SequenceError> {
    if let Err(e) = built {
        out.truncate(start);
        return Err(e.into());
    }
    let len = out.len() - start;
    if len > MAX_FRAME_BYTES {
        out.truncate(start);
        return Err(MessageError::TooLarge { bytes: len }.into());
    }
    patch_u32(&mut out[start..], 8, (len - HEADER_LEN) as u32);
    Ok(len)
}

/// The daemon's end of a connection.
#[derive(Debug)]
pub struct ServerSequence {
    phase: Phase,
    pending: Option<Opcode>,
    client_version: u32,
    client_pid: Option<u32>,
}

impl Default for ServerSequence {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerSequence {
    pub fn new() -> Self {
        Self { phase: Phase::AwaitHandshake, pending: None, client_version: 0, client_pid: None }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The role of a ready connection (a wait connection only once attached).
    pub fn role(&self) -> Option<Role> {
        match self.phase {
            Phase::Ready(role) => Some(role),
            _ => None,
        }
    }

    /// The pid the client declared in its handshake.
    pub fn client_pid(&self) -> Option<u32> {
        self.client_pid
    }

    /// Validates one request frame (header and payload, as a transport
    /// delivered it) that arrived with `fds` descriptors, and parses it.
    ///
    /// Any error leaves the connection failed: the daemon answers it with
    /// [`ServerSequence::encode_rejection`] and closes the connection.
    pub fn accept(&mut self, frame: &[u8], fds: usize) -> Result<(Pending, Request), SequenceError> {
        let handshaking = self.phase == Phase::AwaitHandshake;
        let out = self.accept_inner(frame, fds);
        if out.is_err() {
            self.pending = None;
            self.phase = match self.phase {
                Phase::Failed { during_handshake } => Phase::Failed { during_handshake },
                _ => Phase::Failed { during_handshake: handshaking },
            };
        }
        out
    }

    fn accept_inner(&mut self, frame: &[u8], fds: usize) -> Result<(Pending, Request), SequenceError> {
        let header = Header::decode(frame)?;
        if frame.len() != header.frame_len() {
            return Err(FrameError::LengthMismatch { declared: header.frame_len(), got: frame.len() }.into());
        }
        let payload = &frame[HEADER_LEN..];
        if header.result != 0 {
            return Err(MessageError::ResultInRequest(header.result).into());
        }
        if let Some(pending) = self.pending {
            return Err(SequenceError::RequestPending { pending, got: header.opcode });
        }
        check_allowed(self.phase, header.opcode, None)?;
        if fds != 0 && header.opcode != Opcode::Ioctl {
            return Err(SequenceError::UnexpectedFds { opcode: header.opcode, got: fds });
        }
        let request = match Request::decode(header.opcode, payload) {
            Err(MessageError::VersionMismatch { client, daemon }) => {
                self.client_version = client;
                return Err(MessageError::VersionMismatch { client, daemon }.into());
            }
            other => other?,
        };
        check_allowed(self.phase, header.opcode, request.ioctl_cmd())?;
        let declared = request.fds().len();
        if fds != declared {
            return Err(if declared == 0 {
                SequenceError::UnexpectedFds { opcode: header.opcode, got: fds }
            } else {
                MessageError::FdCountMismatch { declared, received: fds }.into()
            });
        }
        let (ioctl, role) = match &request {
            Request::Ioctl(r) => (Some(IoctlContext { cmd: r.cmd, args_len: r.payload.len() }), None),
            Request::Handshake(h) => {
                self.client_version = h.version;
                self.client_pid = Some(h.client_pid);
                (None, Some(h.role))
            }
            _ => (None, None),
        };
        self.pending = Some(header.opcode);
        Ok((Pending { request_id: header.request_id, opcode: header.opcode, ioctl, role }, request))
    }

    /// Appends the reply frame answering `pending`. `body` must be the reply
    /// of the same opcode (or [`Reply::Failed`] with a negative `result`).
    pub fn encode_reply(
        &mut self,
        pending: Pending,
        result: i32,
        body: &Reply,
        out: &mut Vec<u8>,
    ) -> Result<(), SequenceError> {
        if body.opcode() != pending.opcode {
            self.fail_reply();
            return Err(SequenceError::OpcodeMismatch { expected: pending.opcode, got: body.opcode() });
        }
        if let (Reply::Ioctl(r), Some(ctx)) = (body, pending.ioctl) {
            self.check_ioctl_reply(ctx, r.cmd, result, r.payload.len())?;
        }
        let start = out.len();
        let header = Header { opcode: pending.opcode, request_id: pending.request_id, payload_bytes: 0, result };
        header.put(out);
        let built = body.encode_payload(result, out);
        self.finish_reply(pending, result, start, out, built)
    }

    /// Appends the reply to an IOCTL from borrowed parts: the payload the
    /// engine modified in place and the descriptors' descriptions.
    pub fn encode_ioctl_reply(
        &mut self,
        pending: Pending,
        result: i32,
        payload: &[u8],
        fds: &[FdDesc],
        out: &mut Vec<u8>,
    ) -> Result<(), SequenceError> {
        let Some(ctx) = pending.ioctl else {
            self.fail_reply();
            return Err(SequenceError::OpcodeMismatch { expected: pending.opcode, got: Opcode::Ioctl });
        };
        self.check_ioctl_reply(ctx, ctx.cmd, result, payload.len())?;
        if result > 0 || (result < 0 && !fds.is_empty()) {
            self.fail_reply();
            return Err(if result > 0 {
                MessageError::PositiveResult(result)
            } else {
                MessageError::FdsOnFailure { opcode: Opcode::Ioctl, result, count: fds.len() }
            }
            .into());
        }
        let start = out.len();
        Header { opcode: Opcode::Ioctl, request_id: pending.request_id, payload_bytes: 0, result }.put(out);
        let built = encode_ioctl_reply(out, ctx.cmd, payload, fds);
        self.finish_reply(pending, result, start, out, built)
    }

    fn check_ioctl_reply(
        &mut self,
        ctx: IoctlContext,
        cmd: u32,
        result: i32,
        args_len: usize,
    ) -> Result<(), SequenceError> {
        if cmd != ctx.cmd {
            self.fail_reply();
            return Err(MessageError::WrongIoctl { expected: ctx.cmd, got: cmd }.into());
        }
        if args_len != ctx.args_len && !(result < 0 && args_len == 0) {
            self.fail_reply();
            return Err(MessageError::ReplyArgsSize { expected: ctx.args_len, got: args_len }.into());
        }
        Ok(())
    }

    /// Seals the reply frame at `out[start..]` (whose payload encoding gave `built`) and moves
    /// the connection on; any error fails the connection.
    fn finish_reply(
        &mut self,
        pending: Pending,
        result: i32,
        start: usize,
        out: &mut Vec<u8>,
        built: Result<(), MessageError>,
    ) -> Result<(), SequenceError> {
        if let Err(e) = seal_frame(out, start, built) {
            self.fail_reply();
            return Err(e);
        }
        self.pending = None;
        self.phase = phase_after_reply(self.phase, pending.opcode, result, pending.role);
        Ok(())
    }

    fn fail_reply(&mut self) {
        self.pending = None;
        self.phase = Phase::Failed { during_handshake: self.phase == Phase::AwaitHandshake };
    }

    /// Appends the PROTOCOL_ERROR frame that tells the client why `frame` was
    /// refused (echoing its request id when the header has one), and leaves
    /// the connection failed. The daemon sends it, logs `err`, and closes.
    pub fn encode_rejection(&mut self, frame: &[u8], err: &SequenceError, out: &mut Vec<u8>) {
        // The id is at bytes 4..8 even when the rest of the header is bad.
        let request_id = frame.get(4..8).and_then(|b| b.try_into().ok()).map_or(0, u32::from_le_bytes);
        let body = ProtocolErrorBody {
            code: error_code(err),
            daemon_version: PROTOCOL_VERSION,
            client_version: self.client_version,
            reason: err.to_string(),
        };
        let start = out.len();
        Header { opcode: Opcode::ProtocolError, request_id, payload_bytes: 0, result: -body.errno() }.put(out);
        body.encode(out);
        let len = (out.len() - start - HEADER_LEN) as u32;
        patch_u32(&mut out[start..], 8, len);
        self.pending = None;
        if !matches!(self.phase, Phase::Failed { .. }) {
            self.phase = Phase::Failed { during_handshake: self.phase == Phase::AwaitHandshake };
        }
    }
}

/// The wire code for a refusal.
pub fn error_code(err: &SequenceError) -> ErrorCode {
    match err {
        SequenceError::Frame(_) => ErrorCode::MalformedFrame,
        SequenceError::Message(MessageError::VersionMismatch { .. }) => ErrorCode::VersionMismatch,
        SequenceError::Message(MessageError::BadMagic { .. }) => ErrorCode::BadMagic,
        SequenceError::Message(_) => ErrorCode::MalformedPayload,
        SequenceError::HandshakeRequired { .. } => ErrorCode::HandshakeRequired,
        SequenceError::DuplicateHandshake => ErrorCode::DuplicateHandshake,
        SequenceError::HandshakeFailed { .. } => ErrorCode::HandshakeFailed,
        SequenceError::NotAllowed { .. } => ErrorCode::NotAllowed,
        SequenceError::RequestPending { .. } => ErrorCode::RequestPending,
        SequenceError::UnexpectedFds { .. } => ErrorCode::UnexpectedFds,
        SequenceError::Closed { .. } => ErrorCode::Closed,
        SequenceError::Poisoned { .. }
        | SequenceError::NoRequestPending { .. }
        | SequenceError::RequestIdMismatch { .. }
        | SequenceError::OpcodeMismatch { .. }
        | SequenceError::Rejected(_) => ErrorCode::Internal,
    }
}

/// A decoded reply and the header fields that travel with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub request_id: u32,
    /// 0 or a negative errno.
    pub result: i32,
    pub reply: Reply,
}

#[derive(Clone, Copy, Debug)]
struct ClientPending {
    request_id: u32,
    opcode: Opcode,
    ioctl: Option<IoctlContext>,
    role: Option<Role>,
}

/// The client's end of a connection.
#[derive(Debug)]
pub struct ClientSequence {
    phase: Phase,
    next_id: u32,
    pending: Option<ClientPending>,
}

impl Default for ClientSequence {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientSequence {
    pub fn new() -> Self {
        Self { phase: Phase::AwaitHandshake, next_id: 1, pending: None }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    fn begin(&mut self, opcode: Opcode, cmd: Option<u32>) -> Result<u32, SequenceError> {
        if let Some(p) = self.pending {
            return Err(SequenceError::RequestPending { pending: p.opcode, got: opcode });
        }
        check_allowed(self.phase, opcode, cmd)?;
        let id = self.next_id;
        // Ids start at 1 and skip 0 on wrap-around: 0 in a PROTOCOL_ERROR
        // means "the daemon could not read an id".
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        Ok(id)
    }

    /// Appends the frame for `request` and remembers what its reply must
    /// match. Returns the request id.
    pub fn encode_request(&mut self, request: &Request, out: &mut Vec<u8>) -> Result<u32, SequenceError> {
        let opcode = request.opcode();
        let id = self.begin(opcode, request.ioctl_cmd())?;
        let start = out.len();
        Header { opcode, request_id: id, payload_bytes: 0, result: 0 }.put(out);
        let built = request.encode_payload(out);
        seal_frame(out, start, built)?;
        self.pending = Some(ClientPending {
            request_id: id,
            opcode,
            ioctl: match request {
                Request::Ioctl(r) => Some(IoctlContext { cmd: r.cmd, args_len: r.payload.len() }),
                _ => None,
            },
            role: match request {
                Request::Handshake(h) => Some(h.role),
                _ => None,
            },
        });
        Ok(id)
    }

    /// Appends an IOCTL frame built straight from the caller's argument
    /// struct (`args`, read from `args_addr`) and the arrays it points at in
    /// `mem`, with no intermediate copy, followed by `fds` (the descriptors
    /// sent with the frame: memory a USERPTR allocation hands over, else
    /// none). Returns the request id.
    #[allow(clippy::too_many_arguments)] // the parts of one ioctl, as the caller holds them
    pub fn encode_ioctl(
        &mut self,
        cmd: u32,
        device: DeviceFile,
        args: &[u8],
        args_addr: u64,
        mem: &dyn UserMemory,
        fds: &[FdDesc],
        out: &mut Vec<u8>,
    ) -> Result<u32, SequenceError> {
        if let Some(p) = self.pending {
            return Err(SequenceError::RequestPending { pending: p.opcode, got: Opcode::Ioctl });
        }
        check_allowed(self.phase, Opcode::Ioctl, Some(cmd))?;
        check_request(cmd, device, args, fds)?;
        let start = out.len();
        let header_and_head = HEADER_LEN + IOCTL_REQUEST_HEAD_SIZE;
        Header { opcode: Opcode::Ioctl, request_id: 0, payload_bytes: 0, result: 0 }.put(out);
        let built = put_ioctl_request_head(out, cmd, 0, device).and_then(|()| {
            crate::ioctl::encode_request_into(cmd, args, args_addr, mem, out).map_err(MessageError::from)
        });
        // (Meaningless, and unused, when `built` failed.)
        let args_len = (out.len() - start).saturating_sub(header_and_head);
        let built = built.and_then(|()| put_fd_trailer(out, fds));
        seal_frame(out, start, built)?;
        let id = self.begin(Opcode::Ioctl, Some(cmd))?;
        let frame = &mut out[start..];
        patch_u32(frame, 4, id);
        patch_u32(frame, HEADER_LEN + 4, args_len as u32);
        self.pending = Some(ClientPending {
            request_id: id,
            opcode: Opcode::Ioctl,
            ioctl: Some(IoctlContext { cmd, args_len }),
            role: None,
        });
        Ok(id)
    }

    /// Validates and parses the reply `frame` that arrived with `fds`
    /// descriptors: it must answer the outstanding request (opcode and id),
    /// fit it (ioctl number and size) and describe exactly `fds` descriptors.
    /// A PROTOCOL_ERROR from the daemon becomes [`SequenceError::Rejected`].
    ///
    /// Any error leaves the connection failed (the connection is unusable).
    pub fn decode_reply(&mut self, frame: &[u8], fds: usize) -> Result<Response, SequenceError> {
        let out = self.decode_inner(frame, fds);
        match &out {
            Ok(r) => {
                if let Some(p) = self.pending.take() {
                    self.phase = phase_after_reply(self.phase, p.opcode, r.result, p.role);
                }
            }
            Err(_) => {
                self.pending = None;
                self.phase = Phase::Failed { during_handshake: self.phase == Phase::AwaitHandshake };
            }
        }
        out
    }

    fn decode_inner(&mut self, frame: &[u8], fds: usize) -> Result<Response, SequenceError> {
        let header = Header::decode(frame)?;
        if frame.len() != header.frame_len() {
            return Err(FrameError::LengthMismatch { declared: header.frame_len(), got: frame.len() }.into());
        }
        let payload = &frame[HEADER_LEN..];
        let Some(pending) = self.pending else {
            return Err(SequenceError::NoRequestPending { got: header.opcode });
        };
        if header.opcode == Opcode::ProtocolError {
            // Terminal, and the daemon may not have been able to read the id:
            // report it whatever id it carries.
            if fds != 0 {
                return Err(SequenceError::UnexpectedFds { opcode: header.opcode, got: fds });
            }
            let body = crate::payload::ProtocolErrorBody::decode(payload)?;
            return Err(SequenceError::Rejected(body));
        }
        if header.opcode != pending.opcode {
            return Err(SequenceError::OpcodeMismatch { expected: pending.opcode, got: header.opcode });
        }
        if header.request_id != pending.request_id {
            return Err(SequenceError::RequestIdMismatch { expected: pending.request_id, got: header.request_id });
        }
        let reply = Reply::decode(header.opcode, header.result, payload, pending.ioctl)?;
        if reply.fds().len() != fds {
            return Err(MessageError::FdCountMismatch { declared: reply.fds().len(), received: fds }.into());
        }
        Ok(Response { request_id: header.request_id, result: header.result, reply })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::{HandshakeReply, HandshakeRequest, MunmapRequest};

    fn hs_reply(session_id: u64) -> Reply {
        Reply::Handshake(HandshakeReply {
            version: PROTOCOL_VERSION,
            session_id,
            attach_token: 5,
            daemon_pid: 1,
            machine: crate::payload::MachineInfo { render_minors: vec![128], topology_dir: "/t".into() },
        })
    }

    /// Runs one request through client → server → client.
    fn exchange(
        client: &mut ClientSequence,
        server: &mut ServerSequence,
        req: Request,
        result: i32,
        reply: Reply,
    ) -> Result<Response, SequenceError> {
        let mut frame = Vec::new();
        client.encode_request(&req, &mut frame)?;
        let (pending, got) = server.accept(&frame, 0)?;
        assert_eq!(got, req);
        let mut out = Vec::new();
        server.encode_reply(pending, result, &reply, &mut out)?;
        client.decode_reply(&out, 0)
    }

    #[test]
    fn handshake_then_requests() {
        let (mut c, mut s) = (ClientSequence::new(), ServerSequence::new());
        let r = exchange(&mut c, &mut s, Request::Handshake(HandshakeRequest::new(42, Role::Process)), 0, hs_reply(3))
            .unwrap();
        assert_eq!(r.reply, hs_reply(3));
        assert_eq!(c.phase(), Phase::Ready(Role::Process));
        assert_eq!(s.phase(), Phase::Ready(Role::Process));
        assert_eq!(s.client_pid(), Some(42));
        assert_eq!(s.role(), Some(Role::Process));
        let r = exchange(
            &mut c,
            &mut s,
            Request::Munmap(MunmapRequest { addr: 1, length: 2 }),
            -2,
            Reply::Failed(Opcode::Munmap),
        )
        .unwrap();
        assert_eq!(r.result, -2);
        exchange(&mut c, &mut s, Request::Close, 0, Reply::Close).unwrap();
        assert_eq!(c.phase(), Phase::Closed);
        assert_eq!(s.phase(), Phase::Closed);
    }

    #[test]
    fn server_refuses_anything_before_the_handshake() {
        let mut c = ClientSequence::new();
        // The client refuses to send it in the first place...
        assert_eq!(
            c.encode_request(&Request::Status, &mut Vec::new()),
            Err(SequenceError::HandshakeRequired { got: Opcode::Status })
        );
        // ...and the server refuses it if sent anyway.
        let mut s = ServerSequence::new();
        let mut frame = Vec::new();
        Header { opcode: Opcode::Status, request_id: 9, payload_bytes: 0, result: 0 }.put(&mut frame);
        assert_eq!(s.accept(&frame, 0), Err(SequenceError::HandshakeRequired { got: Opcode::Status }));
        // The rejection echoes the id and says why.
        let mut out = Vec::new();
        s.encode_rejection(&frame, &SequenceError::HandshakeRequired { got: Opcode::Status }, &mut out);
        let h = Header::decode(&out).unwrap();
        assert_eq!((h.opcode, h.request_id), (Opcode::ProtocolError, 9));
        let body = ProtocolErrorBody::decode(&out[16..]).unwrap();
        assert_eq!(body.code, ErrorCode::HandshakeRequired);
    }
}
