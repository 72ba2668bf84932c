//! Running one workgroup: its waves share LDS and barriers, so they are
//! stepped together on one worker thread, round-robin in quanta, for one turn
//! (a bounded number of rounds) at a time; between turns the workgroup stays
//! resident and other workgroups get the worker (see [`super::units`]).

use super::code::CodeCache;
use super::dispatch::DispatchInfo;
use super::jit::{Block, Engine, Moved, Ran};
use super::memory::{PrivateMem, WaveMem};
use super::{itrace, vector_modes, Ctx, ExecError, Flow, Wave, WaveStatus};
use crate::gpu::stats::{op_table, InstClass, InstCounts, Traffic};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Wave-instructions retired by every dispatch of this process so far (for benchmarks:
/// read it before and after a run). Workers add their count once per turn, so counting
/// costs nothing per instruction; and each thread adds to its own shard, as one counter
/// shared by all would move between their cores on every turn (a vector add's turn is a
/// hundred instructions).
static RETIRED: [RetiredShard; RETIRED_SHARDS] = [const { RetiredShard(AtomicU64::new(0)) }; RETIRED_SHARDS];
const RETIRED_SHARDS: usize = 16;

/// One counter on a cache line (two: the adjacent-line prefetcher pairs them) of its own.
#[repr(align(128))]
struct RetiredShard(AtomicU64);

/// Shards handed to threads so far.
static SHARDS_GIVEN: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MY_SHARD: usize = SHARDS_GIVEN.fetch_add(1, Ordering::Relaxed) % RETIRED_SHARDS;
}

fn add_retired(n: u64) {
    let shard = MY_SHARD.with(|s| *s);
    RETIRED[shard].0.fetch_add(n, Ordering::Relaxed);
}

/// Wave-instructions retired so far by this process's simulated GPUs.
pub fn instructions_retired() -> u64 {
    RETIRED.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
}

/// Instructions a wave runs before the next wave of its group gets a turn
/// (small enough that waves spinning on each other make progress).
const QUANTUM: usize = 512;

/// Instructions each wave runs in step with the others after a barrier releases its workgroup.
///
/// On the hardware the waves of a workgroup leave a barrier together and then advance side by
/// side, one instruction every few cycles each, while a global load takes hundreds of cycles.
/// Code relies on that: RCCL's kernel loop reads `isLast` from LDS after a barrier while
/// wave 0 is already fetching the next work item over it, a race the hardware's timing always
/// wins. Running wave 0 for a whole quantum first would let it overwrite the value before the
/// other waves read it, so for this many instructions after a barrier the waves' accesses to
/// memory, LDS and each other happen in the order of one-instruction rounds
/// ([`run_in_step`]).
const IN_STEP_INSTS: u32 = 64;

/// Waves in the largest workgroup (1024 work-items of 64 lanes).
const MAX_GROUP_WAVES: usize = 16;

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
        }
    }

    /// The wave-instructions retired since [`Self::take_retired`] was last called.
    pub fn retired(&self) -> u64 {
        self.retired
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
    let GroupState { index, waves, private, lds, counts, .. } = group;
    let mut retired = 0u64;
    // Instances of the loop: the one without statistics or a trace has no code for them.
    let traced = info.itrace.is_some_and(|f| f.matches_workgroup(*index));
    let result = if traced {
        let mut tracer = Tracer { dispatch: info.dispatch_id, workgroup: *index, entry: info.entry_pc };
        run_rounds(info, code, waves, private, lds, mem, rounds, stop, &mut retired, &mut tracer)
    } else if info.count_instructions {
        let mut counter = Counter { table: op_table(), counts };
        run_rounds(info, code, waves, private, lds, mem, rounds, stop, &mut retired, &mut counter)
    } else {
        run_rounds(info, code, waves, private, lds, mem, rounds, stop, &mut retired, &mut NoCounting)
    };
    add_retired(retired);
    group.retired += retired;
    result
}

/// The wave-instructions a turn of `rounds` rounds of a workgroup of `waves` waves may run.
pub fn turn_instructions(rounds: usize, waves: usize) -> u64 {
    rounds as u64 * QUANTUM as u64 * waves as u64
}

#[allow(clippy::too_many_arguments)]
fn run_rounds(
    info: &DispatchInfo,
    code: &mut CodeCache,
    waves: &mut [Wave],
    private: &mut [PrivateMem],
    lds: &mut [u8],
    mem: &WaveMem<'_>,
    rounds: usize,
    stop: impl Fn() -> bool,
    retired: &mut u64,
    counter: &mut impl Observe,
) -> Result<TurnEnd, GroupError> {
    // The turn's length is counted in instructions, `rounds` quanta per wave: a round that a
    // barrier ends early (every few dozen instructions in barrier-bound kernels) would
    // otherwise end the turn, and the worker would switch workgroups, after a few hundred.
    let budget = turn_instructions(rounds, waves.len());
    let start = *retired;
    while *retired - start < budget {
        let mut running = 0;
        let mut advanced = false;
        for (w, p) in waves.iter_mut().zip(private.iter_mut()) {
            if w.status != WaveStatus::Running {
                continue;
            }
            running += 1;
            let mut ctx = Ctx { mem, lds: &mut *lds, private: p, dispatch: info };
            match step(w, code, &mut ctx, Reach::quantum(QUANTUM), retired, counter).map_err(GroupError::Failed)? {
                Stepped::Ran | Stepped::BeforeShared { .. } => advanced = true,
                Stepped::Waiting => {}
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
            run_in_step(info, code, waves, private, lds, mem, retired, counter)?;
        } else if !advanced {
            // Every runnable wave waits for something outside the workgroup: let the
            // worker run someone else instead of spinning here.
            return Ok(TurnEnd::Paused);
        }
    }
    Ok(TurnEnd::Paused)
}

/// Runs the waves just released from a barrier for their first [`IN_STEP_INSTS`]
/// instructions, as one-instruction rounds would (wave 0's first instruction, wave 1's
/// first, …, wave 0's second, …) but without paying a round per instruction: what a wave
/// computes on its own registers no other wave can see, so each wave runs freely up to its
/// next instruction that reaches memory, LDS or another wave, and those instructions run one
/// at a time in the rounds' order, by (instructions since the release, wave index).
///
/// A wave leaves the step when it reaches the barrier again, ends, waits or sleeps, or has
/// run [`IN_STEP_INSTS`] instructions; the normal rounds take it on from there.
#[allow(clippy::too_many_arguments)]
fn run_in_step(
    info: &DispatchInfo,
    code: &mut CodeCache,
    waves: &mut [Wave],
    private: &mut [PrivateMem],
    lds: &mut [u8],
    mem: &WaveMem<'_>,
    retired: &mut u64,
    counter: &mut impl Observe,
) -> Result<(), GroupError> {
    assert!(waves.len() <= MAX_GROUP_WAVES, "a workgroup of {} waves", waves.len());
    // Per wave: instructions since the release, and whether it stopped before a shared
    // instruction that it may still run in step.
    let mut position = [0u32; MAX_GROUP_WAVES];
    let mut pending = [false; MAX_GROUP_WAVES];
    let n_waves = waves.len();
    // Runs wave `i` as far as `reach` lets it; whether it stopped before a shared
    // instruction that it may still run in step.
    let mut advance = |i: usize, reach: Reach, position: &mut [u32]| -> Result<bool, GroupError> {
        let w = &mut waves[i];
        if w.status != WaveStatus::Running {
            return Ok(false);
        }
        let mut ctx = Ctx { mem, lds: &mut *lds, private: &mut private[i], dispatch: info };
        match step(w, code, &mut ctx, reach, retired, counter).map_err(GroupError::Failed)? {
            Stepped::BeforeShared { insts } => {
                position[i] += insts as u32;
                Ok(w.status == WaveStatus::Running && position[i] < IN_STEP_INSTS)
            }
            Stepped::Ran | Stepped::Waiting => Ok(false),
        }
    };
    // First every wave computes on its registers up to its first shared instruction.
    let private = Reach { insts: IN_STEP_INSTS as usize, shared_before: 0 };
    for (i, pending) in pending.iter_mut().enumerate().take(n_waves) {
        *pending = advance(i, private, &mut position)?;
    }
    // Then the wave whose shared instruction one-instruction rounds would run first (by
    // position; ties: the lower wave index, as in a round) runs, up to the first shared
    // instruction that would come after another waiting wave's.
    while let Some(i) = (0..n_waves).filter(|&i| pending[i]).min_by_key(|&i| position[i]) {
        let p = position[i];
        let shared_before = (0..n_waves)
            .filter(|&o| o != i && pending[o])
            .map(|o| position[o] - p + u32::from(i < o))
            .fold(IN_STEP_INSTS - p, u32::min);
        let reach = Reach { insts: (IN_STEP_INSTS - p) as usize, shared_before: shared_before as usize };
        pending[i] = advance(i, reach, &mut position)?;
    }
    Ok(())
}

/// How far [`step`] takes a wave: up to `insts` instructions (a translated run may go past,
/// to its end), of which those that reach memory, LDS or other waves only before the
/// `shared_before`th one from the start (it stops before the first at or past it).
#[derive(Clone, Copy)]
struct Reach {
    insts: usize,
    shared_before: usize,
}

impl Reach {
    /// A quantum of the normal rounds: no bound on shared instructions.
    fn quantum(insts: usize) -> Self {
        Reach { insts, shared_before: usize::MAX }
    }
}

/// How a wave's step ended.
enum Stepped {
    /// It ran all it could, or up to its end or a barrier.
    Ran,
    /// It ran this many and stopped before an instruction that reaches beyond its registers
    /// ([`Reach::shared_before`]).
    BeforeShared { insts: usize },
    /// It waits for something outside its workgroup, or sleeps (`s_sleep`).
    Waiting,
}

/// What the interpreter loop does for each instruction it runs, besides running it: nothing,
/// counting it for the statistics, or tracing it (`ROCJITSU_ITRACE`). A type parameter rather
/// than a flag, so that the loop without statistics or a trace has no code for them.
trait Observe {
    /// Whether translated runs may replace interpreted instructions (they are not traced one
    /// by one; they are counted by [`Self::translated`]).
    const TRANSLATES: bool = false;
    /// Before the instruction runs.
    fn before(&mut self, op: crate::isa::Op, exec: u64);
    /// After a translated run of `block` retired `retired` instructions that moved `moved`.
    #[inline(always)]
    fn translated(&mut self, _block: &Block, _retired: u64, _moved: Moved) {}
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
    const TRANSLATES: bool = true;
    #[inline(always)]
    fn before(&mut self, op: crate::isa::Op, exec: u64) {
        self.counts.count(self.table, op, exec.count_ones());
    }

    fn translated(&mut self, block: &Block, retired: u64, moved: Moved) {
        for (total, n) in self.counts.by_class.iter_mut().zip(block.class_counts(retired)) {
            *total += n;
        }
        self.counts.bytes_read += moved.read;
        self.counts.bytes_written += moved.written;
    }
}

/// Runs one wave as far as `reach` lets it.
fn step<O: Observe>(
    w: &mut Wave,
    code: &mut CodeCache,
    ctx: &mut Ctx<'_>,
    reach: Reach,
    retired: &mut u64,
    counter: &mut O,
) -> Result<Stepped, WaveFailure> {
    let translate = O::TRANSLATES && ctx.dispatch.engine == Engine::Jit;
    let Reach { insts: quantum, shared_before } = reach;
    let mut done = 0;
    while done < quantum {
        // Past the bound on shared instructions (a wave kept in step after a barrier), the
        // step ends before the next one: asked first, as a translated run would not start
        // there anyway.
        if done >= shared_before {
            let d = code.fetch(w.pc, ctx.mem).map_err(|error| WaveFailure { error, pc: w.pc, inst: String::new() })?;
            if d.shared {
                return Ok(Stepped::BeforeShared { insts: done });
            }
        }
        if translate && w.mode & vector_modes::MODE_BITS == 0 {
            if let Some(block) = code.jit_block(w.pc, w, ctx.mem).filter(|b| b.applies(w)) {
                // Where shared instructions are bounded, the run goes once, and only up to
                // its first shared instruction at or past the bound.
                let (budget, shared_limit) = if shared_before == usize::MAX {
                    ((quantum - done).max(block.insts() as usize), None)
                } else {
                    (block.insts() as usize, Some(shared_before.saturating_sub(done) as u64))
                };
                match run_translated(block, w, ctx, budget, shared_limit, retired, &mut done, counter)? {
                    Some(stepped) => return Ok(stepped),
                    None => continue,
                }
            }
        }
        let d = code.fetch(w.pc, ctx.mem).map_err(|error| WaveFailure { error, pc: w.pc, inst: String::new() })?;
        if d.shared && done >= shared_before {
            return Ok(Stepped::BeforeShared { insts: done });
        }
        done += 1;
        *retired += 1;
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
    Ok(Stepped::Ran)
}

/// Runs a translated run of `w` at its PC for at most `budget` instructions (counted in
/// `retired` and `done`, and shown to `observer`), with `shared_limit` once and up to its
/// first shared instruction at or past that index, and moves the PC on; `Some` when the
/// wave's step ends there.
#[inline]
#[allow(clippy::too_many_arguments)]
fn run_translated<O: Observe>(
    block: &Block,
    w: &mut Wave,
    ctx: &mut Ctx<'_>,
    budget: usize,
    shared_limit: Option<u64>,
    retired: &mut u64,
    done: &mut usize,
    observer: &mut O,
) -> Result<Option<Stepped>, WaveFailure> {
    let (ran, n, moved) = block.run(w, ctx, budget as u64, shared_limit).map_err(|(error, pc, inst)| {
        w.pc = pc;
        WaveFailure { error, pc, inst }
    })?;
    observer.translated(block, n, moved);
    *retired += n;
    *done += n as usize;
    Ok(match ran {
        Ran::Through => {
            w.pc += block.bytes();
            None
        }
        Ran::Stopped { flow, pc, len } => {
            w.pc = pc;
            follow(w, flow, len)
        }
        Ran::BeforeShared { pc } => {
            w.pc = pc;
            Some(Stepped::BeforeShared { insts: *done })
        }
    })
}

/// Moves the wave on after its instruction at `w.pc` (`len` bytes long) answered `flow`;
/// `Some` when the wave's step ends there.
#[inline(always)]
fn follow(w: &mut Wave, flow: Flow, len: u8) -> Option<Stepped> {
    match flow {
        Flow::Next => w.pc += len as u64,
        Flow::Jump(target) => w.pc = target,
        Flow::End => {
            w.status = WaveStatus::Ended;
            return Some(Stepped::Ran);
        }
        Flow::Yield => return Some(Stepped::Waiting),
        Flow::Sleep => {
            w.pc += len as u64;
            return Some(Stepped::Waiting);
        }
        Flow::Barrier => {
            w.pc += len as u64;
            w.status = WaveStatus::AtBarrier;
            return Some(Stepped::Ran);
        }
    }
    None
}
