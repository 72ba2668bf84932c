//! One client connection: validate each frame (`proto::ServerSession`),
//! hand the work to the engine, send the reply with its descriptors. A bad
//! frame gets a PROTOCOL_ERROR and closes only this connection. When the
//! connection ends for any reason, the client's session is closed: its
//! queues stop, its events fail their waiters, its memory is freed.

use super::engine::{EngineHandle, FdOut, Job, Lent};
use proto::abi::kfd;
use proto::framing::tokio_io::Connection;
use proto::message::{Reply, Request};
use proto::payload::{HandshakeReply, MmapReply, Role, PROTOCOL_VERSION};
use proto::session::ServerSession;
use sim::kfd::KfdProcess;
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
    fn start() -> std::io::Result<WaitWorker> {
        let (tx, rx) = std::sync::mpsc::channel::<WaitJob>();
        std::thread::Builder::new().name("rocjitsu-wait".into()).stack_size(256 * 1024).spawn(move || {
            while let Ok((process, mut payload, reply)) = rx.recv() {
                let r = process.ioctl(kfd::cmd::WAIT_EVENTS, &mut payload);
                let _ = reply.send((r.err().map_or(0, |e| -e.errno()), payload));
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

/// Serves one connection until it closes, errs, or the daemon shuts down.
pub async fn serve(stream: UnixStream, peer_pid: u32, engine: EngineHandle, mut shutdown: watch::Receiver<bool>) {
    let mut conn = Connection::new(stream);
    let mut session = ServerSession::new();
    let mut attached = Attachment::None;
    let mut waiter: Option<WaitWorker> = None;
    let mut out = Vec::new();
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
                out.clear();
                session.encode_rejection(&[], &proto::error::SessionError::Frame(e), &mut out);
                let _ = conn.send(&out, &[]).await;
                break;
            }
            Err(e) => {
                log_io(peer_pid, &e);
                break;
            }
        };
        out.clear();
        let (pending, request) = match session.accept(&rx.frame, rx.fds.len()) {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("client {peer_pid}: refused frame: {e}; closing the connection");
                session.encode_rejection(&rx.frame, &e, &mut out);
                let _ = conn.send(&out, &[]).await;
                break;
            }
        };
        let mut fds: Vec<FdOut> = Vec::new();
        let mut close_after = false;
        let encoded = match request {
            Request::Handshake(h) => {
                let (id, token, result) = match h.role {
                    Role::Process => match call(&engine, |reply| Job::Open { pid: peer_pid, reply }).await {
                        Some(Ok(o)) => {
                            attached = Attachment::Session { id: o.session_id, process: o.process };
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
                        render_minors: engine.facts.render_minors.clone(),
                        topology_dir: engine.facts.topology_dir.to_string_lossy().into_owned(),
                    })
                } else {
                    Reply::Failed(proto::header::Opcode::Handshake)
                };
                session.encode_reply(pending, result, &body, &mut out)
            }
            Request::AttachWait(a) => {
                let r =
                    call(&engine, |reply| Job::Attach { session_id: a.session_id, token: a.attach_token, reply }).await;
                let result = match r {
                    Some(Ok(process)) => {
                        engine.send(Job::WaitConnections { session_id: a.session_id, delta: 1 });
                        attached = Attachment::Waiter { id: a.session_id, process };
                        0
                    }
                    Some(Err(errno)) => -errno,
                    None => -libc::ESHUTDOWN,
                };
                let body =
                    if result == 0 { Reply::AttachWait } else { Reply::Failed(proto::header::Opcode::AttachWait) };
                session.encode_reply(pending, result, &body, &mut out)
            }
            Request::Ioctl(r) => {
                // The descriptors that came with the request (the session checked their number):
                // the client's memory behind a USERPTR allocation.
                let memory: Vec<Lent> = r.fds.iter().copied().zip(rx.fds).collect();
                let (result, payload, ioctl_fds) =
                    run_ioctl(&engine, &attached, &mut waiter, r.cmd, r.payload, memory).await;
                fds = ioctl_fds;
                let descs: Vec<_> = fds.iter().map(|(d, _)| *d).collect();
                session.encode_ioctl_reply(pending, result, &payload, &descs, &mut out)
            }
            Request::Mmap(m) => {
                let r = match &attached {
                    Attachment::Session { id, .. } => {
                        call(&engine, |reply| Job::Mmap { session_id: *id, req: m, reply })
                            .await
                            .unwrap_or(Err(libc::ESHUTDOWN))
                    }
                    _ => Err(libc::EBADF),
                };
                match r {
                    Ok(fd) => {
                        let desc = fd.0;
                        fds.push(fd);
                        session.encode_reply(pending, 0, &Reply::Mmap(MmapReply { fds: vec![desc] }), &mut out)
                    }
                    Err(errno) => {
                        session.encode_reply(pending, -errno, &Reply::Failed(proto::header::Opcode::Mmap), &mut out)
                    }
                }
            }
            Request::Munmap(_) => session.encode_reply(pending, 0, &Reply::Munmap, &mut out),
            Request::Status => match call(&engine, |reply| Job::Status { reply }).await {
                Some(s) => session.encode_reply(pending, 0, &Reply::Status(s), &mut out),
                None => session.encode_reply(
                    pending,
                    -libc::ESHUTDOWN,
                    &Reply::Failed(proto::header::Opcode::Status),
                    &mut out,
                ),
            },
            Request::Close => {
                close_after = true;
                session.encode_reply(pending, 0, &Reply::Close, &mut out)
            }
        };
        if let Err(e) = encoded {
            tracing::error!("client {peer_pid}: cannot encode a reply: {e}; closing the connection");
            break;
        }
        let borrowed: Vec<_> = fds.iter().map(|(_, fd)| fd.as_fd()).collect();
        if let Err(e) = conn.send(&out, &borrowed).await {
            log_io(peer_pid, &e);
            break;
        }
        if close_after {
            break;
        }
    }
    match attached {
        Attachment::Session { id, .. } => {
            engine.send(Job::Close { session_id: id });
        }
        Attachment::Waiter { id, .. } => {
            engine.send(Job::WaitConnections { session_id: id, delta: -1 });
        }
        Attachment::None => {}
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

/// Runs an ioctl for this connection. A WAIT_EVENTS that may block runs on
/// a blocking thread against the process itself, never on the engine.
async fn run_ioctl(
    engine: &EngineHandle,
    attached: &Attachment,
    waiter: &mut Option<WaitWorker>,
    cmd: u32,
    mut payload: Vec<u8>,
    memory: Vec<Lent>,
) -> (i32, Vec<u8>, Vec<FdOut>) {
    let blocking_wait = cmd == kfd::cmd::WAIT_EVENTS
        && payload.len() >= size_of::<kfd::WaitEventsArgs>()
        && bytemuck::pod_read_unaligned::<kfd::WaitEventsArgs>(&payload[..size_of::<kfd::WaitEventsArgs>()]).timeout
            != 0;
    match attached {
        Attachment::Waiter { process, .. } | Attachment::Session { process, .. } if blocking_wait => {
            if waiter.is_none() {
                match WaitWorker::start() {
                    Ok(w) => *waiter = Some(w),
                    Err(e) => {
                        tracing::error!("cannot start a waiter thread: {e}");
                        return (-libc::EAGAIN, Vec::new(), Vec::new());
                    }
                }
            }
            let (result, payload) = waiter.as_ref().expect("just started").wait(process.clone(), payload).await;
            (result, payload, Vec::new())
        }
        // A wait connection carries nothing but WAIT_EVENTS (the session
        // layer already refused anything else).
        Attachment::Waiter { process, .. } => {
            let r = process.ioctl(cmd, &mut payload);
            (r.err().map_or(0, |e| -e.errno()), payload, Vec::new())
        }
        Attachment::Session { id, .. } => {
            match call(engine, |reply| Job::Ioctl { session_id: *id, cmd, payload, memory, reply }).await {
                Some(done) => (done.result, done.payload, done.fds),
                None => (-libc::ESHUTDOWN, Vec::new(), Vec::new()),
            }
        }
        Attachment::None => (-libc::EBADF, Vec::new(), Vec::new()),
    }
}
