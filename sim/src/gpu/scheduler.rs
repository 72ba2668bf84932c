//! The queue scheduler of the simulated GPUs: one thread per GPU that watches every
//! queue of every process on that GPU and consumes what is ready — AQL
//! queues through the command processor, SDMA queues through the DMA engine.
//!
//! Doorbells are plain stores by the application, so nothing announces new
//! work: the thread polls. It spins briefly after activity (a dispatch loop
//! sees microsecond latency), then sleeps with a growing timeout; any ioctl
//! that implies pending work (CREATE_QUEUE, WAIT_EVENTS, …) wakes it at once.

use super::context::Context;
use super::cp::dispatch::{DispatchExecutor, NoExecutor};
use super::queue::{Progress, Queue, QueueKind};
use crate::threads::ThreadHook;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a GPU thread keeps polling hot after the last activity.
const SPIN_WINDOW: Duration = Duration::from_micros(500);
/// Sleep bounds while idle.
const MIN_SLEEP: Duration = Duration::from_micros(20);
const MAX_SLEEP: Duration = Duration::from_millis(2);

#[derive(Default)]
struct Wake {
    kicked: bool,
}

struct GpuThread {
    wake: Mutex<Wake>,
    cond: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// The threads of all GPUs of a machine, and the processes they serve.
pub struct Scheduler {
    gpus: Vec<GpuThread>,
    processes: Mutex<Vec<Weak<dyn Context>>>,
    executor: Mutex<Arc<dyn DispatchExecutor>>,
    thread_hook: Option<ThreadHook>,
    shutdown: AtomicBool,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("gpus", &self.gpus.len()).finish()
    }
}

impl Scheduler {
    pub fn new(gpus: usize, thread_hook: Option<ThreadHook>) -> Arc<Scheduler> {
        Arc::new(Scheduler {
            gpus: (0..gpus)
                .map(|_| GpuThread {
                    wake: Mutex::new(Wake::default()),
                    cond: Condvar::new(),
                    thread: Mutex::new(None),
                })
                .collect(),
            processes: Mutex::new(Vec::new()),
            executor: Mutex::new(Arc::new(NoExecutor)),
            thread_hook,
            shutdown: AtomicBool::new(false),
        })
    }

    /// Installs the kernel executor.
    pub fn set_executor(&self, exec: Arc<dyn DispatchExecutor>) {
        *self.executor.lock().unwrap_or_else(|e| e.into_inner()) = exec;
    }

    pub fn thread_hook(&self) -> Option<&ThreadHook> {
        self.thread_hook.as_ref()
    }

    /// Starts serving a process.
    pub fn register(&self, p: &Arc<dyn Context>) {
        let mut list = self.processes.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(p));
    }

    fn live_processes(&self) -> Vec<Arc<dyn Context>> {
        let list = self.processes.lock().unwrap_or_else(|e| e.into_inner());
        list.iter().filter_map(Weak::upgrade).collect()
    }

    /// Wakes the thread of `gpu` (starting its thread on first use).
    pub fn kick(self: &Arc<Self>, gpu: usize) {
        let Some(e) = self.gpus.get(gpu) else { return };
        let mut thread = e.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_none() {
            let me = Arc::downgrade(self);
            let hook = self.thread_hook.clone();
            *thread = std::thread::Builder::new()
                .name(format!("rocjitsu-gpu{gpu}"))
                .spawn(move || {
                    if let Some(h) = hook {
                        h();
                    }
                    run(me, gpu);
                })
                .map_err(|err| tracing::error!("cannot start the GPU {gpu} scheduler thread: {err}"))
                .ok();
        }
        drop(thread);
        e.wake.lock().unwrap_or_else(|e| e.into_inner()).kicked = true;
        e.cond.notify_one();
    }

    /// Wakes every started GPU thread.
    pub fn kick_all(self: &Arc<Self>) {
        for gpu in 0..self.gpus.len() {
            if self.gpus[gpu].thread.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
                self.kick(gpu);
            }
        }
    }

    /// Stops and joins every GPU thread.
    pub fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        for e in &self.gpus {
            e.wake.lock().unwrap_or_else(|e| e.into_inner()).kicked = true;
            e.cond.notify_all();
            if let Some(t) = e.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.join();
            }
        }
    }

    /// Visits every queue on `gpu` once.
    fn visit(&self, gpu: usize) -> Progress {
        let exec = self.executor.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut progress = Progress::Idle;
        for p in self.live_processes() {
            for q in p.queues_on(gpu) {
                if !q.runnable() {
                    continue;
                }
                let r = service_queue(&p, &q, exec.as_ref());
                progress = progress.max(r);
            }
        }
        progress
    }
}

fn service_queue(p: &Arc<dyn Context>, q: &Queue, exec: &dyn DispatchExecutor) -> Progress {
    match q.kind {
        QueueKind::Aql => super::cp::aql_queue::service(p, q, exec),
        QueueKind::Sdma => super::sdma::service(p, q),
    }
}

/// The scheduler thread of one GPU.
fn run(scheduler: Weak<Scheduler>, gpu: usize) {
    let mut last_activity = Instant::now();
    let mut sleep = MIN_SLEEP;
    loop {
        let Some(e) = scheduler.upgrade() else { return };
        if e.shutdown.load(Ordering::Acquire) {
            return;
        }
        match e.visit(gpu) {
            Progress::Advanced => {
                last_activity = Instant::now();
                sleep = MIN_SLEEP;
                continue;
            }
            Progress::Blocked | Progress::Idle => {}
        }
        if last_activity.elapsed() < SPIN_WINDOW {
            drop(e);
            std::thread::yield_now();
            continue;
        }
        let thread = &e.gpus[gpu];
        let mut wake = thread.wake.lock().unwrap_or_else(|e| e.into_inner());
        if !wake.kicked {
            wake = thread.cond.wait_timeout(wake, sleep).unwrap_or_else(|e| e.into_inner()).0;
        }
        if wake.kicked {
            wake.kicked = false;
            last_activity = Instant::now();
            sleep = MIN_SLEEP;
        } else {
            sleep = (sleep * 2).min(MAX_SLEEP);
        }
    }
}
