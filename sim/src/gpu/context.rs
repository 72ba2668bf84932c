//! A process as the GPU sees it: one address space (a VMID's page tables), the queues its
//! command processors serve, and what the hardware asks of the driver — an interrupt for an
//! event, a page-fault report. The driver's process implements it, so the GPU layer never
//! depends on the driver: arrows point down only.

use super::gws::GwsTable;
use super::memory::{GpuFault, GpuVm};
use super::queue::Queue;
use super::stats::ProcessStats;
use super::trace::TraceLog;
use crate::config::Device;
use std::sync::Arc;

/// `current` unless it is `kept` (the answer of [`Context::vm_since`]).
pub fn snapshot_since(kept: Option<&Arc<GpuVm>>, current: Arc<GpuVm>) -> Option<Arc<GpuVm>> {
    (!kept.is_some_and(|k| Arc::ptr_eq(k, &current))).then_some(current)
}

/// One process's context on the GPUs.
pub trait Context: Send + Sync + std::fmt::Debug {
    /// The process id (for log lines).
    fn pid(&self) -> u32;
    /// A snapshot of the GPU address space, for the accesses of one packet, copy or wave.
    fn vm(&self) -> Arc<GpuVm>;
    /// The current snapshot if it is not `kept` (`None`: `kept` is still current). A worker
    /// keeps its snapshot from turn to turn and asks this each turn: taking a new reference
    /// each time ([`Self::vm`]) writes the snapshot's shared reference count, a cache line
    /// every worker of a dispatch then takes in turn, once per workgroup.
    fn vm_since(&self, kept: Option<&Arc<GpuVm>>) -> Option<Arc<GpuVm>> {
        snapshot_since(kept, self.vm())
    }
    /// The GPUs of the machine, by index.
    fn gpus(&self) -> &[Device];
    /// The live queues of this process on GPU `gpu`.
    fn queues_on(&self, gpu: usize) -> Vec<Arc<Queue>>;
    /// Whether the process is going away (running dispatches stop early).
    fn closing(&self) -> bool;
    /// The global wave sync resources of GPU `gpu`.
    fn gws(&self, gpu: usize) -> &GwsTable;
    /// The trap handler (TBA, TMA) the runtime installed on GPU `gpu`, if any.
    fn trap_handler(&self, gpu: usize) -> Option<(u64, u64)>;
    /// The GPU raised the interrupt of event `event_id` (a signal's mailbox, an SDMA trap,
    /// `s_sendmsg`): the driver signals the event.
    fn interrupt(&self, event_id: u32);
    /// A GPU page fault: the driver reports it to the process as the real one does.
    fn report_fault(&self, gpu: usize, fault: GpuFault);
    /// The process's run statistics, when it asked for them (`ROCJITSU_STATS`): dispatches
    /// then count their instructions, and SDMA queues their copies.
    fn stats(&self) -> Option<&ProcessStats>;
    /// The process's timeline, when it asked for one (`ROCJITSU_TRACE`).
    fn trace(&self) -> Option<&TraceLog>;
}
