//! One client connection: validate each frame (`proto::ServerSequence`), hand the work to the
//! engine thread, send the reply with its descriptors. A bad frame gets a PROTOCOL_ERROR and
//! closes only this connection. When the connection ends for any reason, the client's
//! session is closed: its queues stop, its events fail their waiters, its memory is freed.
//!
//! One method per opcode; the work itself is the machine's request service, on the engine
//! thread (or, for a blocking WAIT_EVENTS, on this connection's waiter thread).

use super::engine::{EngineHandle, FdOut, Job, Lent};
use proto::framing::tokio_io::{Connection, Received};
use proto::header::Opcode;
use proto::message::{Reply, Request};
use proto::payload::{
    AttachWaitRequest, DeviceFile, FdDesc, HandshakeReply, HandshakeRequest, IoctlRequest, MachineInfo, MmapReply,
    MmapRequest, Role, StatsRequest, PROTOCOL_VERSION, STATS_PIECE_BYTES,
};
use proto::sequence::{Pending, ServerSequence};
use sim::driver::kfd::KfdProcess;
use sim::driver::service::Service;
use std::os::fd::AsFd;
use std::sync::Arc;
use tokio::net::UnixStream;
use tokio::sync::{oneshot, watch};

/// What this connection is attached to.
enum Attachment {
    None,
    /// A process connection: its own session.
    Session {
        id: u64,
        process: Arc<KfdProcess>,
    },
    /// A wait connection attached to a session.
    Waiter {
        id: u64,
        process: Arc<KfdProcess>,
    },
}

/// Runs the blocking WAIT_EVENTS of one connection on a thread of its own,
/// which lives as long as the connection: no thread is created per wait,
/// none blocks the async runtime or the engine, and when the client goes
/// away its waiter thread goes too.
struct WaitWorker {
    jobs: std::sync::mpsc::Sender<WaitJob>,
}

/// A WAIT_EVENTS for the waiter thread: the process, the ioctl payload, and
/// where to send (result, payload).
type WaitJob = (Arc<KfdProcess>, Vec<u8>, oneshot::Sender<(i32, Vec<u8>)>);

impl WaitWorker {
    /// A waiter thread that runs its waits through `service`, like every other request.
    fn start(service: Arc<Service>) -> std::io::Result<WaitWorker> {
        let (tx, rx) = std::sync::mpsc::channel::<WaitJob>();
        std::thread::Builder::new().name("rocjitsu-wait".into()).stack_size(256 * 1024).spawn(move || {
            while let Ok((process, mut payload, reply)) = rx.recv() {
                let result = wait_events(&service, &process, &mut payload);
                let _ = reply.send((result, payload));
            }
        })?;
        Ok(WaitWorker { jobs: tx })
    }

    async fn wait(&self, process: Arc<KfdProcess>, payload: Vec<u8>) -> (i32, Vec<u8>) {
        let (tx, rx) = oneshot::channel();
        if self.jobs.send((process, payload, tx)).is_err() {
            return (-libc::EIO, Vec::new());
        }
        rx.await.unwrap_or((-libc::EIO, Vec::new()))
    }
}

/// One WAIT_EVENTS through the request service: 0 or -errno.
fn wait_events(service: &Service, process: &KfdProcess, payload: &mut [u8]) -> i32 {
    let cmd = proto::abi::kfd::cmd::WAIT_EVENTS;
    service.ioctl(Some(process), DeviceFile::Kfd, cmd, payload, &[]).err().map_or(0, |errno| -errno)
}

/// What answering one request produced: the reply frame is in the client's `out` buffer.
enum Answered {
    /// Send `out` with these descriptors and go on.
    Reply(Vec<FdOut>),
    /// Send `out`, then close the connection (CLOSE).
    Last,
}

/// One client connection's state.
struct Client {
    peer_pid: u32,
    engine: EngineHandle,
    sequence: ServerSequence,
    attached: Attachment,
    waiter: Option<WaitWorker>,
    /// The reply being built.
    out: Vec<u8>,
}

/// Serves one connection until it closes, errs, or the daemon shuts down.
pub async fn serve(stream: UnixStream, peer_pid: u32, engine: EngineHandle, mut shutdown: watch::Receiver<bool>) {
    let mut conn = Connection::new(stream);
    let mut client = Client {
        peer_pid,
        engine,
        sequence: ServerSequence::new(),
        attached: Attachment::None,
        waiter: None,
        out: Vec::new(),
    };
    loop {
        let received = tokio::select! {
            r = conn.recv() => r,
            _ = shutdown.changed() => break,
        };
        let rx = match received {
            Ok(Some(rx)) => rx,
            Ok(None) => break,
            Err(proto::error::TransportError::Frame(e)) => {
                // A header the framing refused (e.g. a frame over 16 MiB):
                // explain before closing, like any other bad frame.
                tracing::warn!("client {peer_pid}: refused frame: {e}; closing the connection");
                client.out.clear();
                client.sequence.encode_rejection(&[], &proto::error::SequenceError::Frame(e), &mut client.out);
                let _ = conn.send(&client.out, &[]).await;
                break;
            }
            Err(e) => {
                log_io(peer_pid, &e);
                break;
            }
        };
        let Some(answered) = client.answer(rx).await else {
            // A refused frame: the rejection is in `out`.
            let _ = conn.send(&client.out, &[]).await;
            break;
        };
        let (fds, last) = match answered {
            Answered::Reply(fds) => (fds, false),
            Answered::Last => (Vec::new(), true),
        };
        let borrowed: Vec<_> = fds.iter().map(|(_, fd)| fd.as_fd()).collect();
        if let Err(e) = conn.send(&client.out, &borrowed).await {
            log_io(peer_pid, &e);
            break;
        }
        if last {
            break;
        }
    }
    let last_word = match client.attached {
        Attachment::Session { id, .. } => Some(Job::Close { session_id: id }),
        Attachment::Waiter { id, .. } => Some(Job::WaitConnections { session_id: id, delta: -1 }),
        Attachment::None => None,
    };
    // This connection's reference to the process goes first, so that the engine's is the
    // last one when it lets the process go (and its memory can be given back then).
    let engine = client.engine.clone();
    drop(client);
    if let Some(job) = last_word {
        engine.send(job);
    }
}

impl Client {
    /// Validates one frame and answers it into `out`. `None`: the frame was refused (the
    /// rejection is in `out`) and the connection must close.
    async fn answer(&mut self, rx: Received) -> Option<Answered> {
        self.out.clear();
        let (pending, request) = match self.sequence.accept(&rx.frame, rx.fds.len()) {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("client {}: refused frame: {e}; closing the connection", self.peer_pid);
                self.sequence.encode_rejection(&rx.frame, &e, &mut self.out);
                return None;
            }
        };
        let answered = match request {
            Request::Handshake(h) => self.handshake(pending, h).await.map(|()| Answered::Reply(Vec::new())),
            Request::AttachWait(a) => self.attach_wait(pending, a).await.map(|()| Answered::Reply(Vec::new())),
            Request::Ioctl(r) => {
                // The descriptors that came with the request (the sequence checked their
                // number): the client's memory behind a USERPTR allocation.
                let memory: Vec<Lent> = r.fds.iter().copied().zip(rx.fds).collect();
                self.ioctl(pending, r, memory).await.map(Answered::Reply)
            }
            Request::Mmap(m) => self.mmap(pending, m).await.map(Answered::Reply),
            Request::Munmap(_) => self
                .sequence
                .encode_reply(pending, 0, &Reply::Munmap, &mut self.out)
                .map(|()| Answered::Reply(Vec::new())),
            Request::Status => self.status(pending).await.map(|()| Answered::Reply(Vec::new())),
            Request::Stats(s) => self.stats(pending, s).map(|()| Answered::Reply(Vec::new())),
            Request::Close => {
                self.sequence.encode_reply(pending, 0, &Reply::Close, &mut self.out).map(|()| Answered::Last)
            }
        };
        match answered {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::error!("client {}: cannot encode a reply: {e}; closing the connection", self.peer_pid);
                self.out.clear();
                self.sequence.encode_rejection(&rx.frame, &e, &mut self.out);
                None
            }
        }
    }

    /// HANDSHAKE: a process connection gets a session (one KFD process); wait and tool
    /// connections none.
    async fn handshake(&mut self, pending: Pending, h: HandshakeRequest) -> Result<(), proto::error::SequenceError> {
        let peer_pid = self.peer_pid;
        let (id, token, result) = match h.role {
            Role::Process => match call(&self.engine, |reply| Job::Open { pid: peer_pid, reply }).await {
                Some(Ok(o)) => {
                    self.attached = Attachment::Session { id: o.session_id, process: o.process };
                    (o.session_id, o.attach_token, 0)
                }
                Some(Err(errno)) => (0, 0, -errno),
                None => (0, 0, -libc::ESHUTDOWN),
            },
            Role::Wait | Role::Tool => (0, 0, 0),
        };
        let body = if result == 0 {
            Reply::Handshake(HandshakeReply {
                version: PROTOCOL_VERSION,
                session_id: id,
                attach_token: token,
                daemon_pid: std::process::id(),
                machine: MachineInfo::clone(&self.engine.machine),
            })
        } else {
            Reply::Failed(Opcode::Handshake)
        };
        self.sequence.encode_reply(pending, result, &body, &mut self.out)
    }

    /// ATTACH_WAIT: this connection carries the WAIT_EVENTS of an existing session.
    async fn attach_wait(&mut self, pending: Pending, a: AttachWaitRequest) -> Result<(), proto::error::SequenceError> {
        let r =
            call(&self.engine, |reply| Job::Attach { session_id: a.session_id, token: a.attach_token, reply }).await;
        let result = match r {
            Some(Ok(process)) => {
                self.engine.send(Job::WaitConnections { session_id: a.session_id, delta: 1 });
                self.attached = Attachment::Waiter { id: a.session_id, process };
                0
            }
            Some(Err(errno)) => -errno,
            None => -libc::ESHUTDOWN,
        };
        let body = if result == 0 { Reply::AttachWait } else { Reply::Failed(Opcode::AttachWait) };
        self.sequence.encode_reply(pending, result, &body, &mut self.out)
    }

    /// IOCTL: on the engine thread; a WAIT_EVENTS that may block runs on this connection's
    /// waiter thread against the process itself, never on the engine.
    async fn ioctl(
        &mut self,
        pending: Pending,
        r: IoctlRequest,
        memory: Vec<Lent>,
    ) -> Result<Vec<FdOut>, proto::error::SequenceError> {
        let IoctlRequest { cmd, device, mut payload, .. } = r;
        let mut file = None;
        let (result, payload) = match &self.attached {
            Attachment::Waiter { process, .. } | Attachment::Session { process, .. }
                if proto::ioctl::blocks(cmd, &payload) =>
            {
                let process = process.clone();
                match self.waiter() {
                    Some(w) => w.wait(process, payload).await,
                    None => (-libc::EAGAIN, Vec::new()),
                }
            }
            // A wait connection carries nothing but WAIT_EVENTS (the sequence rules
            // already refused anything else); a poll returns at once.
            Attachment::Waiter { process, .. } => (wait_events(&self.engine.service, process, &mut payload), payload),
            Attachment::Session { id, .. } => {
                let session_id = *id;
                match call(&self.engine, |reply| Job::Ioctl { session_id, device, cmd, payload, memory, reply }).await {
                    Some(done) => {
                        file = done.file;
                        (done.result, done.payload)
                    }
                    None => (-libc::ESHUTDOWN, Vec::new()),
                }
            }
            Attachment::None => (-libc::EBADF, Vec::new()),
        };
        // Memory files travel with MMAP replies; an IOCTL reply carries at most the dmabuf
        // an EXPORT_DMABUF made.
        let descs: Vec<FdDesc> = file.iter().map(|(d, _)| *d).collect();
        self.sequence.encode_ioctl_reply(pending, result, &payload, &descs, &mut self.out)?;
        Ok(file.into_iter().collect())
    }

    /// This connection's waiter thread, started on first use.
    fn waiter(&mut self) -> Option<&WaitWorker> {
        if self.waiter.is_none() {
            match WaitWorker::start(self.engine.service.clone()) {
                Ok(w) => self.waiter = Some(w),
                Err(e) => tracing::error!("cannot start a waiter thread: {e}"),
            }
        }
        self.waiter.as_ref()
    }

    /// MMAP: which memory file (and where in it) the client maps.
    async fn mmap(&mut self, pending: Pending, m: MmapRequest) -> Result<Vec<FdOut>, proto::error::SequenceError> {
        let r = match &self.attached {
            Attachment::Session { id, .. } => {
                let session_id = *id;
                call(&self.engine, |reply| Job::Mmap { session_id, req: m, reply })
                    .await
                    .unwrap_or(Err(libc::ESHUTDOWN))
            }
            _ => Err(libc::EBADF),
        };
        match r {
            Ok(fd) => {
                let desc = fd.0;
                self.sequence.encode_reply(pending, 0, &Reply::Mmap(MmapReply { fds: vec![desc] }), &mut self.out)?;
                Ok(vec![fd])
            }
            Err(errno) => {
                self.sequence.encode_reply(pending, -errno, &Reply::Failed(Opcode::Mmap), &mut self.out)?;
                Ok(Vec::new())
            }
        }
    }

    /// STATS: the session's run statistics, kept by its process (no engine round trip: the
    /// simulator's workers update them under their own lock).
    fn stats(&mut self, pending: Pending, request: StatsRequest) -> Result<(), proto::error::SequenceError> {
        let Attachment::Session { process, .. } = &self.attached else {
            return self.sequence.encode_reply(pending, -libc::EINVAL, &Reply::Failed(Opcode::Stats), &mut self.out);
        };
        let document = match request {
            StatsRequest::Enable => {
                process.enable_stats();
                Ok(Vec::new())
            }
            StatsRequest::Report => match process.stats_report() {
                Some(report) => Ok(report.to_json()),
                None => Err(libc::ENODATA),
            },
            StatsRequest::EnableTrace => {
                process.enable_trace();
                Ok(Vec::new())
            }
            StatsRequest::TracePiece { offset } => {
                let name = process_name(self.peer_pid);
                process.trace_piece(&name, offset, STATS_PIECE_BYTES).ok_or(libc::ENODATA)
            }
        };
        // A report larger than a frame (tens of thousands of kernels) is refused rather than
        // ending the connection.
        let document = document.and_then(|d| {
            if d.len() <= proto::header::MAX_PAYLOAD_BYTES as usize {
                Ok(d)
            } else {
                tracing::warn!("client {}: its statistics ({} bytes) exceed a frame", self.peer_pid, d.len());
                Err(libc::E2BIG)
            }
        });
        match document {
            Ok(d) => self.sequence.encode_reply(pending, 0, &Reply::Stats(d), &mut self.out),
            Err(errno) => self.sequence.encode_reply(pending, -errno, &Reply::Failed(Opcode::Stats), &mut self.out),
        }
    }

    /// STATUS: the daemon's sessions, allocations and queues.
    async fn status(&mut self, pending: Pending) -> Result<(), proto::error::SequenceError> {
        match call(&self.engine, |reply| Job::Status { reply }).await {
            Some(s) => self.sequence.encode_reply(pending, 0, &Reply::Status(s), &mut self.out),
            None => {
                self.sequence.encode_reply(pending, -libc::ESHUTDOWN, &Reply::Failed(Opcode::Status), &mut self.out)
            }
        }
    }
}

/// A client that went away mid-exchange is normal (a process exits while
/// one of its threads waits); anything else is worth a warning.
fn log_io(peer_pid: u32, e: &proto::error::TransportError) {
    let gone = matches!(e, proto::error::TransportError::Io(io)
        if matches!(io.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset));
    if gone {
        tracing::debug!("client {peer_pid} went away: {e}");
    } else {
        tracing::warn!("client {peer_pid}: {e}; closing the connection");
    }
}

/// Sends a job built around a reply channel and awaits the answer (`None`
/// if the engine is gone).
async fn call<T>(engine: &EngineHandle, make: impl FnOnce(oneshot::Sender<T>) -> Job) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    if !engine.send(make(tx)) {
        return None;
    }
    rx.await.ok()
}

/// How a client's process track is named in its timeline: its program and pid.
fn process_name(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let program = cmdline.split(|&b| b == 0).next().map(String::from_utf8_lossy).unwrap_or_default();
    let program = program.rsplit('/').next().unwrap_or("").to_string();
    if program.is_empty() {
        format!("process {pid}")
    } else {
        format!("{program} (pid {pid})")
    }
}
