//! The status report: a daemon's STATUS reply regrouped per client, with its memory summed by
//! kind. Pure (the command lines come from the caller), so it is tested without a daemon, and
//! serialisable: `rocjitsu status --json` prints exactly this.

use proto::abi::kfd::{self, alloc_flags};
use proto::payload::{AllocationStatus, QueueStatus, StatusReply};
use serde::Serialize;
use std::path::Path;

/// What `rocjitsu status` reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The socket the daemon was asked on.
    pub socket: String,
    pub daemon: Daemon,
    /// In the order the daemon's sessions began.
    pub clients: Vec<Client>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Daemon {
    pub pid: u32,
    pub uptime_ms: u64,
}

/// One client process (a session of the daemon).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Client {
    pub session_id: u64,
    pub pid: u32,
    /// Its arguments, `None` when `/proc` does not tell.
    pub command_line: Option<Vec<String>>,
    /// Time since it connected.
    pub uptime_ms: u64,
    /// Extra connections of threads blocked in WAIT_EVENTS.
    pub wait_connections: u32,
    pub events: u32,
    pub memory: Memory,
    pub queues: Vec<Queue>,
}

/// A client's memory by kind, from the KFD allocation flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub vram_bytes: u64,
    pub gtt_bytes: u64,
    pub userptr_bytes: u64,
    /// Doorbell and MMIO pages (mapped, not memory the client uses for data).
    pub other_bytes: u64,
    /// All of the client's allocations, as the daemon counts them.
    pub allocations: u32,
    /// Whether every allocation was in the reply: a reply cut to fit in a frame leaves some
    /// out, and the sums above are then lower bounds.
    pub complete: bool,
}

/// One of a client's queues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Queue {
    pub gpu_id: u32,
    pub queue_id: u32,
    /// `compute`, `aql`, `sdma` or `sdma-xgmi` (`type <n>` for others).
    pub kind: String,
    /// Packets consumed; `None` where the simulator does not count them (SDMA queues).
    pub packets_consumed: Option<u64>,
    /// Kernel dispatches completed.
    pub dispatches_done: u64,
    /// The kernel object of the dispatch running now, `None` when idle.
    pub running_kernel: Option<u64>,
    /// Its name (demangled), `None` when idle.
    pub kernel_name: Option<String>,
}

/// The kind of memory an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    Vram,
    Gtt,
    Userptr,
    /// Doorbells, MMIO remap pages, or flags that name no kind.
    Other,
}

impl MemoryKind {
    /// The kind the KFD allocation `flags` select.
    pub fn of(flags: u32) -> MemoryKind {
        match flags & alloc_flags::KIND_MASK {
            alloc_flags::VRAM => MemoryKind::Vram,
            alloc_flags::GTT => MemoryKind::Gtt,
            alloc_flags::USERPTR => MemoryKind::Userptr,
            _ => MemoryKind::Other,
        }
    }
}

impl Memory {
    /// Adds one allocation to its kind's sum.
    fn add(&mut self, a: &AllocationStatus) {
        let sum = match MemoryKind::of(a.flags) {
            MemoryKind::Vram => &mut self.vram_bytes,
            MemoryKind::Gtt => &mut self.gtt_bytes,
            MemoryKind::Userptr => &mut self.userptr_bytes,
            MemoryKind::Other => &mut self.other_bytes,
        };
        *sum = sum.saturating_add(a.size);
    }
}

/// The name of a KFD queue type.
pub fn queue_kind(queue_type: u32) -> String {
    match queue_type {
        kfd::KFD_IOC_QUEUE_TYPE_COMPUTE => "compute".into(),
        kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => "aql".into(),
        kfd::KFD_IOC_QUEUE_TYPE_SDMA | kfd::KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID => "sdma".into(),
        kfd::KFD_IOC_QUEUE_TYPE_SDMA_XGMI => "sdma-xgmi".into(),
        other => format!("type {other}"),
    }
}

impl Queue {
    fn from_status(q: &QueueStatus) -> Queue {
        let running = q.running_kernel != 0;
        Queue {
            gpu_id: q.gpu_id,
            queue_id: q.queue_id,
            kind: queue_kind(q.queue_type),
            packets_consumed: (q.queue_type == kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL).then_some(q.packets_consumed),
            dispatches_done: q.dispatches_done,
            running_kernel: running.then_some(q.running_kernel),
            kernel_name: running.then(|| q.kernel_name.clone()),
        }
    }
}

/// Regroups `reply` per client; `command_line` gives a client's arguments by pid.
pub fn build(reply: &StatusReply, socket: &Path, command_line: impl Fn(u32) -> Option<Vec<String>>) -> Report {
    let clients = reply
        .sessions
        .iter()
        .map(|s| {
            let mut memory = Memory { allocations: s.allocations, ..Memory::default() };
            let mut listed = 0u64;
            for a in reply.allocations.iter().filter(|a| a.session_id == s.session_id) {
                memory.add(a);
                listed += 1;
            }
            memory.complete = listed >= u64::from(s.allocations);
            Client {
                session_id: s.session_id,
                pid: s.client_pid,
                command_line: command_line(s.client_pid),
                uptime_ms: s.uptime_ms,
                wait_connections: s.wait_connections,
                events: s.events,
                memory,
                queues: reply.queues.iter().filter(|q| q.session_id == s.session_id).map(Queue::from_status).collect(),
            }
        })
        .collect();
    Report {
        socket: socket.display().to_string(),
        daemon: Daemon { pid: reply.daemon_pid, uptime_ms: reply.uptime_ms },
        clients,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proto::payload::SessionStatus;

    fn alloc(session_id: u64, size: u64, flags: u32) -> AllocationStatus {
        AllocationStatus { session_id, size, flags, ..Default::default() }
    }

    /// Two clients: one with memory of every kind and two queues (one running a kernel),
    /// one with nothing.
    pub(crate) fn sample_reply() -> StatusReply {
        use alloc_flags::*;
        StatusReply {
            daemon_pid: 100,
            uptime_ms: 3_723_000,
            sessions: vec![
                SessionStatus {
                    session_id: 1,
                    client_pid: 200,
                    allocations: 6,
                    queues: 2,
                    uptime_ms: 65_000,
                    ..Default::default()
                },
                SessionStatus { session_id: 2, client_pid: 300, uptime_ms: 1_500, ..Default::default() },
            ],
            allocations: vec![
                alloc(1, 1 << 20, VRAM | WRITABLE | EXECUTABLE),
                alloc(1, 3 << 20, VRAM | PUBLIC),
                alloc(1, 2 << 20, GTT | COHERENT),
                alloc(1, 64 << 10, USERPTR | WRITABLE),
                alloc(1, 4096, DOORBELL),
                alloc(1, 4096, MMIO_REMAP),
            ],
            queues: vec![
                QueueStatus {
                    session_id: 1,
                    queue_id: 0,
                    gpu_id: 52_127,
                    queue_type: kfd::KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
                    packets_consumed: 12,
                    dispatches_done: 9,
                    running_kernel: 0x7f00_1000,
                    kernel_name: "spin(unsigned int*, unsigned int)".into(),
                    ..Default::default()
                },
                QueueStatus {
                    session_id: 1,
                    queue_id: 1,
                    gpu_id: 52_127,
                    queue_type: kfd::KFD_IOC_QUEUE_TYPE_SDMA,
                    ..Default::default()
                },
            ],
        }
    }

    pub(crate) fn sample_report() -> Report {
        build(&sample_reply(), Path::new("/run/rocjitsu/daemon.sock"), |pid| {
            (pid == 200).then(|| vec!["/bin/app".to_string(), "--n".to_string(), "3".to_string()])
        })
    }

    #[test]
    fn memory_is_summed_by_kind() {
        let r = sample_report();
        let m = &r.clients[0].memory;
        assert_eq!((m.vram_bytes, m.gtt_bytes, m.userptr_bytes, m.other_bytes), (4 << 20, 2 << 20, 64 << 10, 8192));
        assert!(m.complete);
        assert_eq!(r.clients[1].memory, Memory { complete: true, ..Memory::default() });
    }

    #[test]
    fn kinds_come_from_the_kind_bits_alone() {
        use alloc_flags::*;
        assert_eq!(MemoryKind::of(VRAM | WRITABLE | NO_SUBSTITUTE | AQL_QUEUE_MEM), MemoryKind::Vram);
        assert_eq!(MemoryKind::of(GTT | UNCACHED), MemoryKind::Gtt);
        assert_eq!(MemoryKind::of(USERPTR | COHERENT), MemoryKind::Userptr);
        assert_eq!(MemoryKind::of(DOORBELL), MemoryKind::Other);
        assert_eq!(MemoryKind::of(0), MemoryKind::Other);
        assert_eq!(MemoryKind::of(VRAM | GTT), MemoryKind::Other, "two kinds at once is no kind");
    }

    #[test]
    fn a_cut_reply_marks_the_sums_as_incomplete() {
        let mut reply = sample_reply();
        reply.allocations.truncate(2);
        let r = build(&reply, Path::new("s"), |_| None);
        assert!(!r.clients[0].memory.complete);
        assert_eq!(r.clients[0].memory.allocations, 6);
        assert_eq!(r.clients[0].memory.vram_bytes, 4 << 20);
    }

    #[test]
    fn records_go_to_their_own_client() {
        let r = sample_report();
        assert_eq!(r.daemon, Daemon { pid: 100, uptime_ms: 3_723_000 });
        assert_eq!(r.clients.iter().map(|c| c.pid).collect::<Vec<_>>(), [200, 300]);
        assert_eq!(r.clients[0].command_line.as_deref().map(<[String]>::len), Some(3));
        assert_eq!(r.clients[1].command_line, None);
        assert_eq!(r.clients[0].queues.len(), 2);
        assert!(r.clients[1].queues.is_empty());
        let (aql, sdma) = (&r.clients[0].queues[0], &r.clients[0].queues[1]);
        assert_eq!((aql.kind.as_str(), aql.packets_consumed, aql.dispatches_done), ("aql", Some(12), 9));
        assert_eq!(aql.running_kernel, Some(0x7f00_1000));
        assert_eq!(aql.kernel_name.as_deref(), Some("spin(unsigned int*, unsigned int)"));
        assert_eq!((sdma.kind.as_str(), sdma.packets_consumed, sdma.running_kernel), ("sdma", None, None));
        assert_eq!(sdma.kernel_name, None);
    }

    #[test]
    fn json_names_every_field() {
        let v: serde_json::Value = serde_json::to_value(sample_report()).unwrap();
        assert_eq!(v["daemon"]["pid"], 100);
        let c = &v["clients"][0];
        assert_eq!(c["pid"], 200);
        assert_eq!(c["command_line"][0], "/bin/app");
        assert_eq!(c["uptime_ms"], 65_000);
        assert_eq!(c["memory"]["vram_bytes"], 4 << 20);
        assert_eq!(c["memory"]["userptr_bytes"], 64 << 10);
        assert_eq!(c["queues"][0]["dispatches_done"], 9);
        assert_eq!(c["queues"][0]["kernel_name"], "spin(unsigned int*, unsigned int)");
        assert!(c["queues"][1]["kernel_name"].is_null());
        assert!(v["clients"][1]["command_line"].is_null());
    }

    #[test]
    fn queue_kinds_are_named() {
        assert_eq!(queue_kind(0), "compute");
        assert_eq!(queue_kind(2), "aql");
        assert_eq!(queue_kind(3), "sdma-xgmi");
        assert_eq!(queue_kind(77), "type 77");
    }
}
