//! The hand-off from the command processor to whatever runs kernels: a dispatch packet with
//! the process and queue it came from, the ticket through which its outcome comes back, and
//! the ways a dispatch can fail. The ISA interpreter (`gpu::exec`) implements
//! [`DispatchExecutor`]; the command processor only knows the trait.
//!
//! Dispatches are asynchronous, as on the hardware: the command processor starts one and
//! goes on serving its other queues (and other processes' queues) while the dispatch's
//! workgroups run; it retires the packet once the ticket holds an outcome.

use super::aql::KernelDispatch;
use crate::gpu::context::Context;
use crate::gpu::memory::GpuFault;
use crate::gpu::queue::Queue;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// A kernel dispatch handed to the executor.
pub struct DispatchJob<'a> {
    pub process: &'a Arc<dyn Context>,
    pub gpu: usize,
    /// The queue the packet came from (`None` for dispatches made without one, such as the
    /// embedding API's): destroying it stops the dispatch.
    pub queue: Option<&'a Arc<Queue>>,
    /// GPU VA of the queue's `amd_queue_t` (what the dispatch's queue pointer names).
    pub amd_queue: u64,
    pub packet: KernelDispatch,
    /// GPU VA of the packet (the dispatch pointer kernels may read).
    pub packet_va: u64,
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Fault(#[from] GpuFault),
    /// The packet is malformed (`code` is ROCR's queue error code).
    #[error("invalid dispatch: {reason}")]
    Invalid { code: i64, reason: String },
    /// An instruction the simulator cannot execute.
    #[error("{what} at PC {pc:#x}")]
    Illegal { pc: u64, what: String },
    /// The process or the queue is going away.
    #[error("aborted")]
    Aborted,
}

/// Called when a dispatch ends, from whichever thread ended it (the command processor's
/// thread wakes up to retire the packet).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// The outcome of a started dispatch, filled in once by the executor.
pub struct DispatchTicket {
    outcome: OnceLock<Result<(), DispatchError>>,
    wake: Option<Wake>,
    /// For callers that block on the outcome ([`DispatchTicket::wait_for`]): whether it
    /// ended, and how many wait (a notification is a system call, made only for them).
    ended: Mutex<(bool, usize)>,
    cond: Condvar,
}

impl DispatchTicket {
    pub fn new(wake: Option<Wake>) -> Arc<DispatchTicket> {
        Arc::new(DispatchTicket { outcome: OnceLock::new(), wake, ended: Mutex::new((false, 0)), cond: Condvar::new() })
    }

    /// Records the outcome (the first one counts) and wakes whoever waits for it.
    pub fn finish(&self, outcome: Result<(), DispatchError>) {
        if self.outcome.set(outcome).is_err() {
            return;
        }
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        ended.0 = true;
        if ended.1 > 0 {
            self.cond.notify_all();
        }
        drop(ended);
        if let Some(wake) = &self.wake {
            wake();
        }
    }

    /// The outcome, once the dispatch has ended.
    pub fn outcome(&self) -> Option<&Result<(), DispatchError>> {
        self.outcome.get()
    }

    /// Blocks until the dispatch ends or `timeout` passes.
    pub fn wait_for(&self, timeout: Duration) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        if !ended.0 {
            ended.1 += 1;
            ended = self.cond.wait_timeout(ended, timeout).unwrap_or_else(|e| e.into_inner()).0;
            ended.1 -= 1;
        }
    }
}

/// Runs kernels. The ISA interpreter implements it; tests may supply others.
pub trait DispatchExecutor: Send + Sync {
    /// Validates `job` and starts it; the outcome arrives in `ticket`. An error here means
    /// the dispatch never started (a malformed packet).
    fn start(&self, job: &DispatchJob<'_>, ticket: &Arc<DispatchTicket>) -> Result<(), DispatchError>;

    /// Runs about one time slice of the started work of `gpu` on the calling thread (the
    /// command processor lends its thread between visits of its queues). Whether there was
    /// anything to run.
    fn help(&self, gpu: usize) -> bool;
}

/// Refuses every dispatch (until an executor is installed).
pub struct NoExecutor;

impl DispatchExecutor for NoExecutor {
    fn start(&self, job: &DispatchJob<'_>, _ticket: &Arc<DispatchTicket>) -> Result<(), DispatchError> {
        Err(DispatchError::Illegal {
            pc: job.packet.kernel_object,
            what: "kernel execution is not available in this build".to_string(),
        })
    }

    fn help(&self, _gpu: usize) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_ticket_keeps_its_first_outcome_and_wakes_once() {
        let woken = Arc::new(AtomicU32::new(0));
        let w = woken.clone();
        let ticket = DispatchTicket::new(Some(Arc::new(move || {
            w.fetch_add(1, Ordering::Relaxed);
        })));
        assert!(ticket.outcome().is_none());
        ticket.finish(Err(DispatchError::Aborted));
        ticket.finish(Ok(()));
        assert_eq!(ticket.outcome(), Some(&Err(DispatchError::Aborted)));
        assert_eq!(woken.load(Ordering::Relaxed), 1);
        // An ended ticket does not block.
        ticket.wait_for(Duration::from_secs(60));
    }
}
