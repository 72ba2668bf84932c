//! The synchronous RPC client the preload library calls in daemon mode.
//!
//! One [`RpcClient`] owns one connection and runs one exchange at a time
//! (the preload library puts it behind a mutex, and gives each thread that
//! blocks in WAIT_EVENTS its own wait connection). It is written against
//! [`Transport`] only and does no I/O of its own. Its buffers are reused, so
//! a call allocates only for what it returns.
//!
//! Any failure of the transport or of the protocol poisons the client: the
//! stream may be out of step, so every later call fails with
//! [`RpcError::Poisoned`] instead of reading garbage. Errors found before
//! anything is sent (an ioctl the codec refuses, a fault reading the
//! caller's arrays) do not poison it.

use crate::error::{MessageError, RpcError, SequenceError};
use crate::header::Opcode;
use crate::ioctl::UserMemory;
use crate::message::{Reply, Request};
use crate::payload::{
    AttachWaitRequest, DeviceFile, FdDesc, HandshakeReply, HandshakeRequest, MmapRequest, MunmapRequest, Role,
    StatsRequest, StatusReply,
};
use crate::sequence::{ClientSequence, Response};
use crate::transport::Transport;

/// Descriptors received with a reply, each with its description.
pub type Fds<H> = Vec<(FdDesc, H)>;

/// The result of a call that may return descriptors (IOCTL, MMAP).
#[derive(Debug)]
pub struct Outcome<H> {
    /// 0 or a negative errno, as the kernel would have returned it.
    pub result: i32,
    /// Each descriptor with its description, in the reply's order.
    pub fds: Fds<H>,
}

/// A connection to the daemon after a successful handshake.
#[derive(Debug)]
pub struct RpcClient<T: Transport> {
    transport: T,
    sequence: ClientSequence,
    handshake: HandshakeReply,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    poisoned: bool,
}

impl<T: Transport> RpcClient<T> {
    /// Handshakes a process connection: the daemon creates a session (one
    /// KFD process) for it. The reply (topology, render minors, the session
    /// id and attach token for wait connections) is [`Self::handshake`].
    pub fn connect(transport: T, client_pid: u32) -> Result<Self, RpcError> {
        Self::open(transport, client_pid, Role::Process)
    }

    /// Handshakes a tool connection (STATUS only).
    pub fn connect_tool(transport: T, client_pid: u32) -> Result<Self, RpcError> {
        Self::open(transport, client_pid, Role::Tool)
    }

    /// Handshakes a wait connection and attaches it to `session_id`, using
    /// the token from that session's handshake. It then carries only
    /// WAIT_EVENTS.
    pub fn connect_wait(transport: T, client_pid: u32, session_id: u64, attach_token: u64) -> Result<Self, RpcError> {
        let mut client = Self::open(transport, client_pid, Role::Wait)?;
        let request = Request::AttachWait(AttachWaitRequest { session_id, attach_token });
        let response = client.call_without_fds(&request)?;
        if response.result < 0 {
            client.poisoned = true;
            return Err(RpcError::Refused { opcode: Opcode::AttachWait, errno: -response.result });
        }
        Ok(client)
    }

    fn open(transport: T, client_pid: u32, role: Role) -> Result<Self, RpcError> {
        let mut client = Self {
            transport,
            sequence: ClientSequence::new(),
            handshake: HandshakeReply {
                version: 0,
                session_id: 0,
                attach_token: 0,
                daemon_pid: 0,
                machine: crate::payload::MachineInfo { render_minors: Vec::new(), topology_dir: String::new() },
            },
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
            poisoned: false,
        };
        let request = Request::Handshake(HandshakeRequest::new(client_pid, role));
        match client.call_without_fds(&request)? {
            Response { reply: Reply::Handshake(h), .. } => {
                client.handshake = h;
                Ok(client)
            }
            Response { result, .. } => Err(RpcError::Refused { opcode: Opcode::Handshake, errno: -result }),
        }
    }

    /// What the daemon said in the handshake.
    pub fn handshake(&self) -> &HandshakeReply {
        &self.handshake
    }

    /// Whether an earlier failure made the connection unusable.
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// The transport (e.g. to read the peer's credentials).
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Sends `request` and waits for its reply and descriptors. A request that hands over
    /// descriptors goes through [`ioctl_with_memory`](Self::ioctl_with_memory), which sends them.
    pub fn call(&mut self, request: &Request) -> Result<(Response, Fds<T::Handle>), RpcError> {
        if self.poisoned {
            return Err(RpcError::Poisoned);
        }
        if !request.fds().is_empty() {
            let declared = request.fds().len();
            return Err(SequenceError::from(MessageError::FdCountMismatch { declared, received: 0 }).into());
        }
        self.send_buf.clear();
        self.sequence.encode_request(request, &mut self.send_buf)?;
        self.exchange()
    }

    fn call_without_fds(&mut self, request: &Request) -> Result<Response, RpcError> {
        // Only MMAP and IOCTL replies have an fd trailer; for the others the
        // sequence already refused any descriptor.
        let (response, _fds) = self.call(request)?;
        Ok(response)
    }

    /// Sends the frame in `send_buf` and receives its reply.
    fn exchange(&mut self) -> Result<(Response, Fds<T::Handle>), RpcError> {
        self.exchange_with(&[])
    }

    /// [`Self::exchange`], sending `handles` with the frame.
    fn exchange_with(&mut self, handles: &[T::HandleRef<'_>]) -> Result<(Response, Fds<T::Handle>), RpcError> {
        let out = self.exchange_inner(handles);
        if out.is_err() {
            self.poisoned = true;
        }
        out
    }

    fn exchange_inner(&mut self, handles: &[T::HandleRef<'_>]) -> Result<(Response, Fds<T::Handle>), RpcError> {
        self.transport.send_with_handles(&self.send_buf, handles)?;
        let mut handles = Vec::new();
        self.transport.recv_with_handles(&mut self.recv_buf, &mut handles)?;
        let response = self.sequence.decode_reply(&self.recv_buf, handles.len())?;
        let fds = response.reply.fds().iter().copied().zip(handles).collect();
        Ok((response, fds))
    }

    /// Forwards one ioctl. `args` is the caller's argument struct as read
    /// from `args_addr`; the arrays it points at are read from and written
    /// back to `mem`. On return `args` holds the struct to write back (with
    /// the caller's own pointers), unless the daemon failed the call without
    /// arguments. `Ok` carries the kernel-style result; `Err` means the call
    /// could not be forwarded (`RpcError::errno` says what to return).
    pub fn ioctl(
        &mut self,
        device: DeviceFile,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
    ) -> Result<Outcome<T::Handle>, RpcError> {
        self.send_ioctl(device, cmd, args, args_addr, mem, &[])
    }

    /// [`Self::ioctl`] (on `/dev/kfd`) for a USERPTR allocation that hands the daemon the
    /// memory behind the registered range: each descriptor with its description, in
    /// address order (see [`crate::payload::IoctlRequest`]).
    pub fn ioctl_with_memory(
        &mut self,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
        memory: &[(FdDesc, T::HandleRef<'_>)],
    ) -> Result<Outcome<T::Handle>, RpcError> {
        self.send_ioctl(DeviceFile::Kfd, cmd, args, args_addr, mem, memory)
    }

    fn send_ioctl(
        &mut self,
        device: DeviceFile,
        cmd: u32,
        args: &mut [u8],
        args_addr: u64,
        mem: &dyn UserMemory,
        memory: &[(FdDesc, T::HandleRef<'_>)],
    ) -> Result<Outcome<T::Handle>, RpcError> {
        if self.poisoned {
            return Err(RpcError::Poisoned);
        }
        self.send_buf.clear();
        let descs: Vec<FdDesc> = memory.iter().map(|(d, _)| *d).collect();
        self.sequence.encode_ioctl(cmd, device, args, args_addr, mem, &descs, &mut self.send_buf).map_err(
            |e| match e {
                SequenceError::Message(MessageError::Ioctl(i)) => RpcError::Ioctl(i),
                other => RpcError::Sequence(other),
            },
        )?;
        let handles: Vec<T::HandleRef<'_>> = memory.iter().map(|(_, h)| *h).collect();
        let (response, fds) = self.exchange_with(&handles)?;
        let Reply::Ioctl(reply) = &response.reply else {
            self.poisoned = true;
            return Err(SequenceError::OpcodeMismatch { expected: Opcode::Ioctl, got: response.reply.opcode() }.into());
        };
        if !reply.payload.is_empty() {
            crate::ioctl::decode_reply(cmd, args, args_addr, &reply.payload, mem)?;
        }
        Ok(Outcome { result: response.result, fds })
    }

    /// Forwards an `mmap` of the kfd or render fd; the reply says which
    /// descriptor to map where.
    pub fn mmap(&mut self, request: MmapRequest) -> Result<Outcome<T::Handle>, RpcError> {
        let (response, fds) = self.call(&Request::Mmap(request))?;
        Ok(Outcome { result: response.result, fds })
    }

    /// Forwards a `munmap`; returns 0 or a negative errno.
    pub fn munmap(&mut self, request: MunmapRequest) -> Result<i32, RpcError> {
        Ok(self.call_without_fds(&Request::Munmap(request))?.result)
    }

    /// Lists the daemon's sessions, allocations and queues.
    pub fn status(&mut self) -> Result<StatusReply, RpcError> {
        match self.call_without_fds(&Request::Status)? {
            Response { reply: Reply::Status(s), .. } => Ok(s),
            Response { result, .. } => Err(RpcError::Refused { opcode: Opcode::Status, errno: -result }),
        }
    }

    /// Starts the session's run statistics (`StatsRequest::Enable`, an empty answer) or
    /// fetches them (`StatsRequest::Report`, the JSON document the daemon's simulator wrote).
    pub fn stats(&mut self, request: StatsRequest) -> Result<Vec<u8>, RpcError> {
        match self.call_without_fds(&Request::Stats(request))? {
            Response { reply: Reply::Stats(document), .. } => Ok(document),
            Response { result, .. } => Err(RpcError::Refused { opcode: Opcode::Stats, errno: -result }),
        }
    }

    /// Ends the session and waits for the daemon to confirm; returns 0 or a
    /// negative errno. The connection is then done.
    pub fn close(mut self) -> Result<i32, RpcError> {
        Ok(self.call_without_fds(&Request::Close)?.result)
    }

    /// Gives the transport back (e.g. to drop the connection after `fork`
    /// without sending CLOSE).
    pub fn into_transport(self) -> T {
        self.transport
    }
}
