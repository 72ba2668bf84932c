//! Running one workgroup: its waves share LDS and barriers, so they are
//! stepped together on one worker thread, round-robin in quanta, for one turn
//! (a bounded number of rounds) at a time; between turns the workgroup stays
//! resident and other workgroups get the worker (see [`super::units`]).

use super::code::CodeCache;
use super::dispatch::DispatchInfo;
use super::jit::{Engine, Ran};
use super::memory::{PrivateMem, WaveMem};
use super::{itrace, vector_modes, Ctx, ExecError, Flow, Wave, WaveStatus};
use crate::gpu::stats::{op_table, InstClass, InstCounts, Traffic};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Rounds of one instruction per wave after a barrier releases its workgroup.
///
/// On the hardware the waves of a workgroup leave a barrier together and then advance side by
/// side, one instruction every few cycles each, while a global load takes hundreds of cycles.
/// Code relies on that: RCCL's kernel loop reads `isLast` from LDS after a barrier while
/// wave 0 is already fetching the next work item over it, a race the hardware's timing always
/// wins. Running wave 0 for a whole quantum first would let it overwrite the value before the
/// other waves read it, so after a barrier the waves run in lockstep for this many rounds.
const LOCKSTEP_ROUNDS: u32 = 64;

/// A wave that could not continue, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveFailure {
    pub error: ExecError,
    pub pc: u64,
    /// The instruction, disassembled (empty if it could not be decoded).
    pub inst: String,
}

/// One workgroup's state between its turns on the workers: its waves, their private
/// memory and its LDS. Recycled from workgroup to workgroup.
pub struct GroupState {
    /// The workgroup's linear index in its grid.
    pub index: u64,
    pub waves: Vec<Wave>,
    pub private: Vec<PrivateMem>,
    pub lds: Vec<u8>,
    /// Wave-instructions retired since the owner last took the count
    /// ([`Self::take_retired`]): how a dispatch learns its own count.
    retired: u64,
    /// Instructions by class and memory traffic since the owner last took them, when the
    /// dispatch counts them ([`DispatchInfo::count_instructions`]).
    counts: InstCounts,
    /// Rounds of one instruction per wave still to run since a barrier released the group
    /// ([`LOCKSTEP_ROUNDS`]); kept across turns, as a release may end one.
    pub(super) lockstep: u32,
}

impl GroupState {
    pub fn new() -> Self {
        GroupState {
            index: 0,
            waves: Vec::new(),
            private: Vec::new(),
            lds: Vec::new(),
            retired: 0,
            counts: InstCounts::default(),
            lockstep: 0,
        }
    }

    /// The wave-instructions retired since the last call.
    pub fn take_retired(&mut self) -> u64 {
        std::mem::take(&mut self.retired)
    }

    /// The instruction counts since the last call (all zero unless the dispatch counts).
    pub fn take_counts(&mut self) -> InstCounts {
        std::mem::take(&mut self.counts)
    }
}

impl Default for GroupState {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a workgroup stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    Failed(WaveFailure),
    Aborted,
}

/// How a workgroup's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// Every wave ended.
    Finished,
    /// The slice is used up, or every wave that can run is waiting (a GWS barrier or
    /// semaphore, `s_sleep`): the workgroup stays resident and runs again later.
    Paused,
}

/// Runs the waves of `group` (initialised by [`DispatchInfo::init_workgroup`]) for at most
/// `rounds` rounds of a quantum per wave. `stop` is asked after each round: a failure
/// elsewhere in the dispatch, the queue's destruction or the process going away (a client
/// killed in the middle of a long kernel) end the workgroup within a round.
pub fn run_turn(
    info: &DispatchInfo,
    code: &mut CodeCache,
    group: &mut GroupState,
    mem: &WaveMem<'_>,
    rounds: usize,
    stop: impl Fn() -> bool,
) -> Result<TurnEnd, GroupError> {
    let GroupState { index, waves, private, lds, counts, lockstep, .. } = group;
    let mut retired = 0u64;
    // Instances of the loop: the one without statistics or a trace has no code for them.
    let traced = info.itrace.is_some_and(|f| f.matches_workgroup(*index));
    let result = if traced {
        let mut tracer = Tracer { dispatch: info.dispatch_id, workgroup: *index, entry: info.entry_pc };
        run_rounds(info, code, waves, private, lds, lockstep, mem, rounds, stop, &mut retired, &mut tracer)
    } else if info.count_instructions {
        let mut counter = Counter { table: op_table(), counts };
        run_rounds(info, code, waves, private, lds, lockstep, mem, rounds, stop, &mut retired, &mut counter)
    } else {
        run_rounds(info, code, waves, private, lds, lockstep, mem, rounds, stop, &mut retired, &mut NoCounting)
    };
    RETIRED.fetch_add(retired, Ordering::Relaxed);
    group.retired += retired;
    result
}

#[allow(clippy::too_many_arguments)]
fn run_rounds(
    info: &DispatchInfo,
    code: &mut CodeCache,
    waves: &mut [Wave],
    private: &mut [PrivateMem],
    lds: &mut [u8],
    lockstep: &mut u32,
    mem: &WaveMem<'_>,
    rounds: usize,
    stop: impl Fn() -> bool,
    retired: &mut u64,
    counter: &mut impl Observe,
) -> Result<TurnEnd, GroupError> {
    let mut round = 0;
    while round < rounds {
        // Lockstep rounds after a barrier do not count against the turn: they are short.
        let quantum = if *lockstep > 0 {
            *lockstep -= 1;
            1
        } else {
            round += 1;
            QUANTUM
        };
        let mut running = 0;
        let mut advanced = false;
        for (w, p) in waves.iter_mut().zip(private.iter_mut()) {
            if w.status != WaveStatus::Running {
                continue;
            }
            running += 1;
            let mut ctx = Ctx { mem, lds: &mut *lds, private: p, dispatch: info };
            match step_quantum(w, code, &mut ctx, quantum, retired, counter).map_err(GroupError::Failed)? {
                Quantum::Ran => advanced = true,
                Quantum::Waiting => {}
            }
        }
        if stop() {
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
                return Ok(TurnEnd::Finished);
            }
            *lockstep = LOCKSTEP_ROUNDS;
        } else if !advanced {
            // Every runnable wave waits for something outside the workgroup: let the
            // worker run someone else instead of spinning here.
            return Ok(TurnEnd::Paused);
        }
    }
    Ok(TurnEnd::Paused)
}

/// How a wave's quantum ended.
enum Quantum {
    /// It ran instructions (all of its quantum, or up to its end or a barrier).
    Ran,
    /// It waits for something outside its workgroup, or sleeps (`s_sleep`).
    Waiting,
}

/// What the interpreter loop does for each instruction it runs, besides running it: nothing,
/// counting it for the statistics, or tracing it (`ROCJITSU_ITRACE`). A type parameter rather
/// than a flag, so that the loop without statistics or a trace has no code for them.
trait Observe {
    /// Whether translated runs may replace interpreted instructions: they are neither
    /// counted by class nor traced one by one.
    const TRANSLATES: bool = false;
    /// Before the instruction runs.
    fn before(&mut self, op: crate::isa::Op, exec: u64);
    /// After it ran (`pc` its address), whatever its outcome.
    #[inline(always)]
    fn after(&mut self, _w: &Wave, _inst: &crate::isa::Inst, _pc: u64) {}
}

struct NoCounting;

impl Observe for NoCounting {
    const TRANSLATES: bool = true;
    #[inline(always)]
    fn before(&mut self, _op: crate::isa::Op, _exec: u64) {}
}

/// Prints each instruction with what it wrote ([`itrace`]).
struct Tracer {
    dispatch: u64,
    workgroup: u64,
    entry: u64,
}

impl Observe for Tracer {
    fn before(&mut self, _op: crate::isa::Op, _exec: u64) {}

    fn after(&mut self, w: &Wave, inst: &crate::isa::Inst, pc: u64) {
        itrace::emit(&itrace::line(self.dispatch, self.workgroup, w, inst, pc, self.entry));
    }
}

struct Counter<'a> {
    table: &'static [(InstClass, Traffic)],
    counts: &'a mut InstCounts,
}

impl Observe for Counter<'_> {
    #[inline(always)]
    fn before(&mut self, op: crate::isa::Op, exec: u64) {
        self.counts.count(self.table, op, exec.count_ones());
    }
}

/// Runs up to `quantum` instructions of one wave.
fn step_quantum<O: Observe>(
    w: &mut Wave,
    code: &mut CodeCache,
    ctx: &mut Ctx<'_>,
    quantum: usize,
    retired: &mut u64,
    counter: &mut O,
) -> Result<Quantum, WaveFailure> {
    let translate = O::TRANSLATES && ctx.dispatch.engine == Engine::Jit;
    let mut done = 0;
    while done < quantum {
        if translate && w.mode & vector_modes::MODE_BITS == 0 {
            if let Some(block) = code.jit_block(w.pc, w, ctx.mem) {
                // In the one-instruction rounds after a barrier only runs that compute on the
                // wave's registers alone: the other waves cannot tell when those ran, while
                // a run with LDS or memory accesses would take this wave past them in one step.
                if block.applies(w) && (quantum > 1 || !block.shared()) {
                    let budget = (quantum - done).max(block.insts() as usize) as u64;
                    let (ran, n) = block.run(w, ctx, budget).map_err(|(error, pc, inst)| {
                        w.pc = pc;
                        WaveFailure { error, pc, inst }
                    })?;
                    *retired += n;
                    done += n as usize;
                    match ran {
                        Ran::Through => w.pc += block.bytes(),
                        Ran::Stopped { flow, pc, len } => {
                            w.pc = pc;
                            if let Some(q) = follow(w, flow, len) {
                                return Ok(q);
                            }
                        }
                    }
                    continue;
                }
            }
        }
        done += 1;
        *retired += 1;
        let d = code.fetch(w.pc, ctx.mem).map_err(|error| WaveFailure { error, pc: w.pc, inst: String::new() })?;
        counter.before(d.inst.op, w.exec);
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
        let pc = w.pc;
        let outcome = (d.handler)(w, inst, ctx);
        counter.after(w, inst, pc);
        match outcome {
            Ok(flow) => {
                if let Some(q) = follow(w, flow, d.inst.len) {
                    return Ok(q);
                }
            }
            Err(error) => return Err(WaveFailure { error, pc: w.pc, inst: d.inst.to_string() }),
        }
    }
    Ok(Quantum::Ran)
}

/// Moves the wave on after its instruction at `w.pc` (`len` bytes long) answered `flow`;
/// `Some` when the wave's quantum ends there.
#[inline(always)]
fn follow(w: &mut Wave, flow: Flow, len: u8) -> Option<Quantum> {
    match flow {
        Flow::Next => w.pc += len as u64,
        Flow::Jump(target) => w.pc = target,
        Flow::End => {
            w.status = WaveStatus::Ended;
            return Some(Quantum::Ran);
        }
        Flow::Yield => return Some(Quantum::Waiting),
        Flow::Sleep => {
            w.pc += len as u64;
            return Some(Quantum::Waiting);
        }
        Flow::Barrier => {
            w.pc += len as u64;
            w.status = WaveStatus::AtBarrier;
            return Some(Quantum::Ran);
        }
    }
    None
}
