//! The engine thread: owns the simulated machine and the table of sessions
//! (one KFD process per client connection). Connection tasks send it jobs
//! and await the answers on oneshot channels; it never blocks on a client.
//! (Blocking WAIT_EVENTS never comes here: connection tasks run it through the
//! machine's request service on a waiter thread of their own.)

use proto::payload::{
    clip_text, fd_access, AllocationStatus, DeviceFile, FdDesc, FdKind, MachineInfo, MmapRequest, QueueStatus,
    SessionStatus, StatusReply, MAX_KERNEL_NAME_BYTES,
};
use sim::driver::kfd::{KfdProcess, MapKind, UserptrMode};
use sim::driver::service::{IoctlFiles, Service};
use sim::gpu::memory::LentPiece;
use sim::Machine;
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};

/// A descriptor to send with a reply, and its description.
pub type FdOut = (FdDesc, OwnedFd);

/// A descriptor a client lent with a request (the memory behind a USERPTR
/// range), and its description.
pub type Lent = (FdDesc, OwnedFd);

/// What a new session is.
pub struct Opened {
    pub session_id: u64,
    pub attach_token: u64,
    pub process: Arc<KfdProcess>,
}

/// The answer to an IOCTL: 0 or -errno, the payload to copy back, and the file it gives
/// the client (the dmabuf of an EXPORT_DMABUF).
pub struct IoctlDone {
    pub result: i32,
    pub payload: Vec<u8>,
    pub file: Option<FdOut>,
}

/// Work for the engine thread.
pub enum Job {
    Open {
        pid: u32,
        reply: oneshot::Sender<Result<Opened, i32>>,
    },
    Attach {
        session_id: u64,
        token: u64,
        reply: oneshot::Sender<Result<Arc<KfdProcess>, i32>>,
    },
    Ioctl {
        session_id: u64,
        device: DeviceFile,
        cmd: u32,
        payload: Vec<u8>,
        memory: Vec<Lent>,
        reply: oneshot::Sender<IoctlDone>,
    },
    Mmap {
        session_id: u64,
        req: MmapRequest,
        reply: oneshot::Sender<Result<FdOut, i32>>,
    },
    WaitConnections {
        session_id: u64,
        delta: i32,
    },
    Close {
        session_id: u64,
    },
    Status {
        reply: oneshot::Sender<StatusReply>,
    },
}

struct Session {
    process: Arc<KfdProcess>,
    token: u64,
    pid: u32,
    wait_connections: u32,
    /// When the client connected (its uptime in STATUS).
    connected: Instant,
}

struct Engine {
    machine: Machine,
    sessions: HashMap<u64, Session>,
    next_id: u64,
    started: Instant,
}

/// A handle to send jobs to the engine.
#[derive(Clone)]
pub struct EngineHandle {
    tx: mpsc::UnboundedSender<Job>,
    /// What every handshake reply tells clients about the machine.
    pub machine: Arc<MachineInfo>,
    /// The machine's request service, for the requests that must not wait for the engine
    /// (blocking WAIT_EVENTS, polls on wait connections).
    pub service: Arc<Service>,
}

impl EngineHandle {
    /// Sends a job; false if the engine is gone.
    pub fn send(&self, job: Job) -> bool {
        self.tx.send(job).is_ok()
    }
}

/// Starts the engine thread for `machine`. The thread ends when every
/// handle is dropped (after finishing the jobs it has), dropping the machine.
pub fn start(machine: Machine, topology_dir: PathBuf) -> std::io::Result<(EngineHandle, std::thread::JoinHandle<()>)> {
    let info = Arc::new(MachineInfo {
        render_minors: machine.service().gpus().iter().map(|g| g.drm_render_minor).collect(),
        topology_dir: topology_dir.to_string_lossy().into_owned(),
    });
    let service = machine.service().clone();
    let (tx, rx) = mpsc::unbounded_channel();
    let thread = std::thread::Builder::new().name("rocjitsu-engine".into()).spawn(move || {
        let mut e = Engine { machine, sessions: HashMap::new(), next_id: 1, started: Instant::now() };
        e.run(rx);
    })?;
    Ok((EngineHandle { tx, machine: info, service }, thread))
}

/// A secret that is hard to guess (the attach token of a session).
fn random_token() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most `b.len()` bytes into `b`.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        // Fall back on time and address entropy; tokens only keep clients
        // of the same user apart.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        return (t as u64) ^ (&b as *const _ as u64).rotate_left(17);
    }
    u64::from_le_bytes(b)
}

/// How long the engine keeps polling for the next request after one, before it sleeps.
/// Clients issue ioctls in bursts (ROCR's start-up, a kernel launch, a pinned copy): a
/// request that arrives while the engine still polls skips a thread wake-up, which is most
/// of a round trip's cost. An idle daemon sleeps.
const POLL_AFTER_REQUEST: std::time::Duration = std::time::Duration::from_micros(50);

/// The next request, polling briefly before blocking; `None` once every sender is gone.
fn next_job(rx: &mut mpsc::UnboundedReceiver<Job>) -> Option<Job> {
    let start = std::time::Instant::now();
    loop {
        match rx.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::error::TryRecvError::Disconnected) => return None,
            // Yield rather than spin: on a small machine the thread that will send the next
            // request (the connection's I/O task, the client) needs this core.
            Err(mpsc::error::TryRecvError::Empty) if start.elapsed() < POLL_AFTER_REQUEST => std::thread::yield_now(),
            Err(mpsc::error::TryRecvError::Empty) => return rx.blocking_recv(),
        }
    }
}

impl Engine {
    fn run(&mut self, mut rx: mpsc::UnboundedReceiver<Job>) {
        while let Some(job) = next_job(&mut rx) {
            self.handle(job);
        }
        for (_, s) in self.sessions.drain() {
            s.process.close();
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Open { pid, reply } => {
                let r =
                    self.machine.service().open_process(pid, UserptrMode::Lent).map_err(|e| e.errno()).map(|process| {
                        let session_id = self.next_id;
                        self.next_id += 1;
                        let token = random_token();
                        let session = Session {
                            process: process.clone(),
                            token,
                            pid,
                            wait_connections: 0,
                            connected: Instant::now(),
                        };
                        self.sessions.insert(session_id, session);
                        tracing::info!("session {session_id}: process {pid} connected");
                        Opened { session_id, attach_token: token, process }
                    });
                let _ = reply.send(r);
            }
            Job::Attach { session_id, token, reply } => {
                let r = match self.sessions.get(&session_id) {
                    Some(s) if s.token == token => Ok(s.process.clone()),
                    _ => Err(libc::EACCES),
                };
                let _ = reply.send(r);
            }
            Job::WaitConnections { session_id, delta } => {
                if let Some(s) = self.sessions.get_mut(&session_id) {
                    s.wait_connections = s.wait_connections.saturating_add_signed(delta);
                }
            }
            Job::Ioctl { session_id, device, cmd, mut payload, memory, reply } => {
                let done = match self.sessions.get(&session_id) {
                    Some(s) => ioctl(&self.machine, &s.process, device, cmd, &mut payload, memory),
                    None => Err(libc::EBADF),
                };
                let (result, file) = match done {
                    Ok(file) => (0, file),
                    Err(errno) => (-errno, None),
                };
                let _ = reply.send(IoctlDone { result, payload, file });
            }
            Job::Mmap { session_id, req, reply } => {
                let r = match self.sessions.get(&session_id) {
                    Some(s) => mmap(&self.machine, &s.process, &req),
                    None => Err(libc::EBADF),
                };
                let _ = reply.send(r);
            }
            Job::Close { session_id } => {
                if let Some(s) = self.sessions.remove(&session_id) {
                    tracing::info!(
                        "session {session_id}: process {} gone; its queues, events and memory are freed",
                        s.pid
                    );
                    s.process.close();
                    drop(s);
                    release_freed_memory();
                }
            }
            Job::Status { reply } => {
                let _ = reply.send(self.status());
            }
        }
    }

    fn status(&self) -> StatusReply {
        let mut sessions = Vec::new();
        let mut allocations = Vec::new();
        let mut queues = Vec::new();
        let mut ids: Vec<_> = self.sessions.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let s = &self.sessions[&id];
            let p = &s.process;
            let summary = p.summary();
            sessions.push(SessionStatus {
                session_id: id,
                client_pid: s.pid,
                wait_connections: s.wait_connections,
                allocations: summary.allocations.len() as u32,
                queues: summary.queues.len() as u32,
                events: summary.events as u32,
                bytes_allocated: summary.allocations.iter().map(|a| a.size).sum(),
                uptime_ms: s.connected.elapsed().as_millis() as u64,
            });
            for a in summary.allocations {
                allocations.push(AllocationStatus {
                    session_id: id,
                    va: a.va,
                    size: a.size,
                    handle: a.handle,
                    gpu_id: a.gpu_id,
                    flags: a.flags,
                });
            }
            for q in summary.queues {
                let running = q.activity.running_kernel;
                queues.push(QueueStatus {
                    session_id: id,
                    ring_base_address: q.ring_base,
                    packets_consumed: q.activity.packets_consumed,
                    dispatches_done: q.activity.dispatches_done,
                    running_kernel: running,
                    queue_id: q.id,
                    gpu_id: q.gpu_id,
                    queue_type: q.queue_type,
                    ring_size: q.ring_bytes as u32,
                    kernel_name: running_kernel_name(p, running),
                });
            }
        }
        let mut reply = StatusReply {
            daemon_pid: std::process::id(),
            uptime_ms: self.started.elapsed().as_millis() as u64,
            sessions,
            allocations,
            queues,
        };
        if !reply.fit_frame() {
            tracing::warn!("STATUS: the reply is cut to fit in a frame (allocation records first)");
        }
        reply
    }
}

/// The name of the kernel a queue runs (empty when it runs none), read from the process's GPU
/// memory and cut to what a STATUS record carries.
fn running_kernel_name(process: &KfdProcess, kernel_object: u64) -> String {
    if kernel_object == 0 {
        return String::new();
    }
    let name = sim::gpu::kernel_names::kernel_name(&*process.vm(), kernel_object);
    clip_text(&name, MAX_KERNEL_NAME_BYTES)
}

/// Gives the heap memory a session freed back to the system. glibc's allocator keeps
/// freed memory in its arenas for reuse; in a daemon that lives for weeks, the peak of
/// concurrent clients would otherwise stay resident after they have all gone. A session
/// ends rarely (it is a process exit), so the few milliseconds the trim takes are cheap.
fn release_freed_memory() {
    // SAFETY: malloc_trim only walks and trims the allocator's own arenas, under their
    // locks; it is safe to call from any thread at any time.
    unsafe { libc::malloc_trim(0) };
}

/// A duplicate of the process's memory file, to send.
fn arena_fd(process: &KfdProcess) -> Result<OwnedFd, i32> {
    rustix::io::fcntl_dupfd_cloexec(process.arena_fd(), 3).map_err(|e| e.raw_os_error())
}

/// Runs one ioctl through the machine's request service. A USERPTR allocation comes with
/// the client's memory behind the range, which the process maps and keeps; a dmabuf
/// import with the dmabuf (`files`). Returns the file to send back, if the ioctl made one.
fn ioctl(
    machine: &Machine,
    process: &KfdProcess,
    device: DeviceFile,
    cmd: u32,
    payload: &mut [u8],
    files: Vec<Lent>,
) -> Result<Option<FdOut>, i32> {
    let pieces: Vec<LentPiece<'_>> =
        files.iter().map(|(desc, fd)| LentPiece { fd: fd.as_fd(), offset: desc.offset, len: desc.length }).collect();
    let files = match files.as_slice() {
        [] => IoctlFiles::None,
        [(desc, fd)] if desc.kind == FdKind::Dmabuf => IoctlFiles::Dmabuf(fd.as_fd()),
        _ => IoctlFiles::Lent(&pieces),
    };
    let Some(file) = machine.service().ioctl_with_files(Some(process), device, cmd, payload, files)? else {
        return Ok(None);
    };
    // The dmabuf's description: a name the size of its buffer, never mapped.
    let size = rustix::fs::fstat(&file).map_err(|e| e.raw_os_error())?.st_size as u64;
    Ok(Some((FdDesc { kind: FdKind::Dmabuf, access: 0, offset: 0, length: size }, file)))
}

/// An mmap through the machine's request service: the process's memory file, with the
/// range to map.
fn mmap(machine: &Machine, process: &KfdProcess, req: &MmapRequest) -> Result<FdOut, i32> {
    let target = machine.service().mmap(process, req.device, req.offset as u64, req.length)?;
    let kind = match target.kind {
        MapKind::Allocation => FdKind::Allocation,
        MapKind::Doorbell => FdKind::Doorbell,
        MapKind::Events => FdKind::Events,
        MapKind::Mmio => FdKind::Mmio,
    };
    let desc = FdDesc { kind, access: fd_access::ALL, offset: target.file_offset, length: target.len };
    let file = match &target.foreign {
        // An imported buffer lives in its exporter's memory file.
        Some(arena) => rustix::io::fcntl_dupfd_cloexec(arena.fd(), 3).map_err(|e| e.raw_os_error())?,
        None => arena_fd(process)?,
    };
    Ok((desc, file))
}
