//! The queue scheduler of the simulated GPUs: one thread per GPU that watches every
//! queue of every process on that GPU and consumes what is ready — AQL
//! queues through the command processor, SDMA queues through the DMA engine.
//! Kernel dispatches run asynchronously on the GPU's compute units: the thread starts
//! them, serves the other queues meanwhile, lends itself to the compute units for a
//! turn between visits, and retires each dispatch's packet once it has ended.
//!
//! Doorbells are plain stores by the application, so nothing announces new
//! work: the thread polls. It spins briefly after activity (a dispatch loop
//! sees microsecond latency), then sleeps with a growing timeout; any ioctl
//! that implies pending work (CREATE_QUEUE, WAIT_EVENTS, …) wakes it at once.

use super::context::Context;
use super::cp::aql_queue::InFlight;
use super::cp::dispatch::{DispatchExecutor, NoExecutor, Wake};
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
struct Kick {
    kicked: bool,
    /// The thread waits on the condition variable (only then is a notification, a system
    /// call, worth making: a busy thread sees `kicked` on its next loop).
    sleeping: bool,
}

struct GpuThread {
    wake: Mutex<Kick>,
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
                    wake: Mutex::new(Kick::default()),
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
        let mut kick = e.wake.lock().unwrap_or_else(|e| e.into_inner());
        kick.kicked = true;
        if kick.sleeping {
            e.cond.notify_one();
        }
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

    /// Visits every queue on `gpu` once, then runs a turn of compute work.
    fn visit(&self, gpu: usize, cp: &mut CpState) -> Progress {
        let exec = self.executor.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut progress = Progress::Idle;
        let mut kept = Vec::with_capacity(cp.in_flight.len());
        for p in self.live_processes() {
            for q in p.queues_on(gpu) {
                if !q.runnable() {
                    continue;
                }
                let r = match q.kind {
                    QueueKind::Aql => {
                        let at = cp.in_flight.iter().position(|(k, _)| Arc::ptr_eq(k, &q));
                        let mut slot = at.map(|i| cp.in_flight.swap_remove(i).1);
                        let r = super::cp::aql_queue::service(&p, &q, exec.as_ref(), &mut slot, &cp.wake);
                        if let Some(f) = slot {
                            kept.push((q.clone(), f));
                        }
                        r
                    }
                    QueueKind::Sdma => super::sdma::service(&p, &q),
                };
                progress = progress.max(r);
            }
        }
        // Queues not visited keep their dispatch (a queue suspended by UPDATE_QUEUE resumes
        // it) unless they are gone.
        kept.extend(cp.in_flight.drain(..).filter(|(q, _)| !q.destroyed()));
        cp.in_flight = kept;
        if exec.help(gpu) {
            progress = Progress::Advanced;
        }
        progress
    }
}

/// What a GPU's scheduler thread keeps between visits.
struct CpState {
    /// The running dispatch of each AQL queue that has one.
    in_flight: Vec<(Arc<Queue>, InFlight)>,
    /// Wakes this thread when a dispatch ends.
    wake: Wake,
}

/// The scheduler thread of one GPU.
fn run(scheduler: Weak<Scheduler>, gpu: usize) {
    let mut last_activity = Instant::now();
    let mut sleep = MIN_SLEEP;
    let waker = scheduler.clone();
    let mut cp = CpState {
        in_flight: Vec::new(),
        wake: Arc::new(move || {
            if let Some(s) = waker.upgrade() {
                s.kick(gpu);
            }
        }),
    };
    loop {
        let Some(e) = scheduler.upgrade() else { return };
        if e.shutdown.load(Ordering::Acquire) {
            return;
        }
        match e.visit(gpu, &mut cp) {
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
            wake.sleeping = true;
            wake = thread.cond.wait_timeout(wake, sleep).unwrap_or_else(|e| e.into_inner()).0;
            wake.sleeping = false;
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
