//! Running one workgroup: its waves share LDS and barriers, so they are
//! stepped together on one worker thread, round-robin in quanta.

use super::code::CodeCache;
use super::dispatch::DispatchInfo;
use super::memory::{PrivateMem, WaveMem};
use super::{vector_modes, Ctx, ExecError, Flow, Wave, WaveStatus};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Wave-instructions retired by every dispatch of this process so far (for benchmarks:
/// read it before and after a run). Workers add their count once per workgroup, so
/// counting costs nothing per instruction.
static RETIRED: AtomicU64 = AtomicU64::new(0);

/// Wave-instructions retired so far by this process's simulated GPUs.
pub fn instructions_retired() -> u64 {
    RETIRED.load(Ordering::Relaxed)
}

/// Instructions a wave runs before the next wave of its group gets a turn
/// (small enough that waves spinning on each other make progress).
const QUANTUM: usize = 512;

/// A wave that could not continue, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveFailure {
    pub error: ExecError,
    pub pc: u64,
    /// The instruction, disassembled (empty if it could not be decoded).
    pub inst: String,
}

/// Per-worker storage reused across workgroups (allocation-free steady state).
pub struct WorkerState {
    pub code: CodeCache,
    pub waves: Vec<Wave>,
    pub private: Vec<PrivateMem>,
    pub lds: Vec<u8>,
}

impl WorkerState {
    pub fn new(target: crate::isa::Target) -> Self {
        WorkerState { code: CodeCache::new(target), waves: Vec::new(), private: Vec::new(), lds: Vec::new() }
    }
}

/// Why a workgroup stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    Failed(WaveFailure),
    Aborted,
}

/// Runs the waves in `state.waves` (already initialised for one workgroup)
/// to completion.
pub fn run(
    info: &DispatchInfo,
    state: &mut WorkerState,
    mem: &WaveMem<'_>,
    abort: &AtomicBool,
) -> Result<(), GroupError> {
    let WorkerState { code, waves, private, lds } = state;
    let mut retired = 0u64;
    let result = run_waves(info, code, waves, private, lds, mem, abort, &mut retired);
    RETIRED.fetch_add(retired, Ordering::Relaxed);
    result
}

#[allow(clippy::too_many_arguments)]
fn run_waves(
    info: &DispatchInfo,
    code: &mut CodeCache,
    waves: &mut [Wave],
    private: &mut [PrivateMem],
    lds: &mut [u8],
    mem: &WaveMem<'_>,
    abort: &AtomicBool,
    retired: &mut u64,
) -> Result<(), GroupError> {
    loop {
        let mut running = 0;
        for (w, p) in waves.iter_mut().zip(private.iter_mut()) {
            if w.status != WaveStatus::Running {
                continue;
            }
            running += 1;
            let mut ctx = Ctx { mem, lds: &mut *lds, private: p, dispatch: info };
            step_quantum(w, code, &mut ctx, retired).map_err(GroupError::Failed)?;
        }
        // A failure elsewhere in the dispatch, or the process going away (a client killed
        // in the middle of a long kernel), ends the workgroup within a quantum.
        if abort.load(Ordering::Relaxed) || info.process.closing() {
            return Err(GroupError::Aborted);
        }
        if running == 0 {
            // Everyone ended or waits at the barrier: release the barrier
            // (waves that ended do not count), or finish.
            let mut released = false;
            for w in waves.iter_mut().filter(|w| w.status == WaveStatus::AtBarrier) {
                w.status = WaveStatus::Running;
                released = true;
            }
            if !released {
                return Ok(());
            }
        }
    }
}

/// Runs up to [`QUANTUM`] instructions of one wave.
fn step_quantum(w: &mut Wave, code: &mut CodeCache, ctx: &mut Ctx<'_>, retired: &mut u64) -> Result<(), WaveFailure> {
    for _ in 0..QUANTUM {
        *retired += 1;
        let d = code.fetch(w.pc, ctx.mem).map_err(|error| WaveFailure { error, pc: w.pc, inst: String::new() })?;
        let indexed;
        let inst = if w.mode & vector_modes::MODE_BITS == 0 {
            &d.inst
        } else {
            match vector_modes::adjust(w, &d.inst) {
                vector_modes::Adjusted::AsIs => &d.inst,
                vector_modes::Adjusted::Skip => {
                    w.pc += d.inst.len as u64;
                    continue;
                }
                vector_modes::Adjusted::Indexed(i) => {
                    indexed = i;
                    &indexed
                }
            }
        };
        match (d.handler)(w, inst, ctx) {
            Ok(Flow::Next) => w.pc += d.inst.len as u64,
            Ok(Flow::Jump(target)) => w.pc = target,
            Ok(Flow::End) => {
                w.status = WaveStatus::Ended;
                return Ok(());
            }
            Ok(Flow::Yield) => return Ok(()),
            Ok(Flow::Barrier) => {
                w.pc += d.inst.len as u64;
                w.status = WaveStatus::AtBarrier;
                return Ok(());
            }
            Err(error) => return Err(WaveFailure { error, pc: w.pc, inst: d.inst.to_string() }),
        }
    }
    Ok(())
}
