//! The compute units of one simulated GPU: which workgroups are resident, and which one a
//! host worker runs next.
//!
//! The hardware runs every resident wave at once, and kernels rely on it: a workgroup may
//! wait, through memory, for another workgroup, another kernel of any queue or process,
//! another GPU or the host. The simulator has a few host workers instead, so it
//! time-slices. A worker gives a workgroup a *turn* — at most [`TURN_ROUNDS`] rounds of a
//! quantum per wave, less when all its waves wait (`s_sleep`, GWS) — and then takes the
//! next. Between turns a workgroup stays resident with all its state.
//!
//! Residency follows the hardware's limits per CU: wave slots (`max_waves_per_simd` ×
//! SIMDs), VGPRs (512 per SIMD lane, arch and acc together) and LDS. A new workgroup is
//! admitted on a CU with room whenever one has it, exactly as the dispatcher does, so a
//! grid the occupancy API calls co-resident is co-resident here, and a workgroup waiting
//! for one that has not started yet cannot starve it while room is left.
//!
//! Which turn comes next: processes take turns (round robin), and within a process its
//! running dispatches do — at most one per queue, since a queue's packets complete in
//! order — each getting `1 + priority / 4` consecutive turns (queue priorities 0–15, from
//! `hipStreamCreateWithPriority`). A process with eight busy streams thus gets the share of
//! a process with one. Within a dispatch, a new workgroup is admitted first if one fits;
//! otherwise the resident workgroup that waited longest runs. A workgroup is never pre-empted in the middle of a
//! turn, so a turn is the unit of both fairness and latency.
//!
//! A turn of a new workgroup may carry a batch of the next ones, run one after another in
//! its place while each finishes within its turn and all together within an eighth of one
//! turn's instructions: a vector add's workgroup ends in a hundred instructions, less than
//! taking and giving back a turn costs. What a batch does not start goes back, as a range,
//! to be admitted first (in batches again).
//!
//! Threads: `workers - 1` pool threads per GPU, plus whoever calls
//! [`ComputeUnits::help`] — the command processor's thread between visits of its queues —
//! so a one-workgroup kernel runs without waking anyone.

use super::code::CodeCache;
use super::dispatch::{failure_to_error, DispatchInfo};
use super::memory::TlbKeeper;
use super::workgroup::{self, GroupError, GroupState, TurnEnd};
use super::LANES;
use crate::config::Device;
use crate::gpu::cp::dispatch::{DispatchError, DispatchTicket};
use crate::gpu::kernel_names;
use crate::gpu::queue::Queue;
use crate::gpu::stats::{DispatchRecord, InstCounts};
use crate::gpu::trace::{Detail, Track};
use crate::isa::Target;
use crate::threads::ThreadHook;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rounds (a quantum of 512 instructions per running wave) in one turn: long enough that
/// switching costs nothing measurable, short enough that a workgroup spinning on another
/// holds a worker for well under a millisecond per wave.
pub const TURN_ROUNDS: usize = 16;

/// Rounds in a turn run by a thread that [helps](ComputeUnits::help): the command processor
/// returns to its queues after it, so a short turn keeps packet latency low for every other
/// queue while a long kernel runs.
pub const HELP_ROUNDS: usize = 2;

/// VGPRs per SIMD lane on gfx90a/gfx94x/gfx950 (architected and accumulation registers
/// share one file of 512).
const VGPRS_PER_SIMD: u32 = 512;

/// Decode caches a worker keeps, one per recent dispatch (several dispatches take turns).
const CODE_CACHES: usize = 4;

/// Most workgroups a turn may run one after another ([`Units::take`]).
const MAX_BATCH: u64 = 64;

/// A batch's workgroups run together at most `1 / BATCH_SHARE` of a turn's instructions.
const BATCH_SHARE: u64 = 8;

/// Recycled workgroup states kept for reuse.
const SPARE_STATES: usize = 64;

/// How long an idle pool thread sleeps before it looks for stopped dispatches again.
const IDLE_WAIT: Duration = Duration::from_millis(5);

/// What one CU holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuShape {
    pub cus: usize,
    pub wave_slots: u32,
    pub vgprs: u32,
    pub lds: u32,
}

impl CuShape {
    pub fn of(device: &Device) -> CuShape {
        CuShape {
            cus: device.cu_count().max(1) as usize,
            wave_slots: device.max_waves_per_cu(),
            vgprs: device.simd_per_cu * VGPRS_PER_SIMD,
            lds: device.lds_bytes(),
        }
    }
}

/// What one workgroup of a dispatch takes on its CU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GroupCost {
    waves: u32,
    vgprs: u32,
    lds: u32,
}

impl GroupCost {
    fn of(info: &DispatchInfo) -> GroupCost {
        let items: u64 = info.wg_size.iter().map(|&s| s as u64).product();
        let waves = items.div_ceil(LANES as u64) as u32;
        GroupCost { waves, vgprs: waves * info.vgprs as u32, lds: info.lds_bytes as u32 }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct CuLoad {
    groups: u32,
    waves: u32,
    vgprs: u32,
    lds: u32,
}

/// The CUs' occupancy.
struct Cus {
    shape: CuShape,
    load: Vec<CuLoad>,
    /// Where the next placement starts looking (spreads workgroups over the CUs).
    cursor: usize,
}

impl Cus {
    fn new(shape: CuShape) -> Cus {
        Cus { shape, load: vec![CuLoad::default(); shape.cus], cursor: 0 }
    }

    /// A CU with room for `cost`, now taken by it. An empty CU takes any workgroup: one
    /// larger than a CU would never run otherwise (the runtime does not send those).
    fn place(&mut self, cost: GroupCost) -> Option<usize> {
        let n = self.load.len();
        for k in 0..n {
            let i = (self.cursor + k) % n;
            let l = &mut self.load[i];
            let fits = l.groups == 0
                || (l.waves + cost.waves <= self.shape.wave_slots
                    && l.vgprs + cost.vgprs <= self.shape.vgprs
                    && l.lds + cost.lds <= self.shape.lds);
            if fits {
                l.groups += 1;
                l.waves += cost.waves;
                l.vgprs += cost.vgprs;
                l.lds += cost.lds;
                self.cursor = (i + 1) % n;
                return Some(i);
            }
        }
        None
    }

    fn release(&mut self, cu: usize, cost: GroupCost) {
        let l = &mut self.load[cu];
        l.groups -= 1;
        l.waves -= cost.waves;
        l.vgprs -= cost.vgprs;
        l.lds -= cost.lds;
    }
}

/// A resident workgroup waiting for its next turn.
struct Resident {
    cu: usize,
    state: GroupState,
}

/// A dispatch whose workgroups are being admitted or run.
struct Running {
    serial: u64,
    refs: DispatchRefs,
    ticket: Arc<DispatchTicket>,
    cost: GroupCost,
    /// Consecutive turns per round-robin visit.
    weight: u32,
    total: u64,
    admitted: u64,
    /// Ranges of indices that batches took and gave back unstarted (their turns ended
    /// early), the lowest last: they are admitted, in batches again, before new ones.
    returned: Vec<Range<u64>>,
    finished: u64,
    parked: VecDeque<Resident>,
    on_workers: usize,
    failure: Option<GroupError>,
    /// Wave-instructions its workgroups retired, and when it was submitted: for the debug
    /// line each dispatch logs when it ends.
    retired: u64,
    submitted: std::time::Instant,
    /// Its workgroups' instruction counts, when the process keeps statistics.
    counts: InstCounts,
    /// Host time its turns spent translating its code.
    translation: std::time::Duration,
}

impl Running {
    fn should_stop(&self) -> bool {
        self.refs.should_stop()
    }

    fn has_work(&self) -> bool {
        !self.should_stop() && (self.admitted < self.total || !self.returned.is_empty() || !self.parked.is_empty())
    }

    /// Which process the dispatch belongs to (the address of its context).
    fn process_key(&self) -> usize {
        Arc::as_ptr(&self.refs.info.process) as *const () as usize
    }
}

/// What every turn of a dispatch needs of it. A worker keeps the last turn's for the next
/// turn of the same dispatch (see [`Units::take`]): cloning them for every turn writes
/// their reference counts, cache lines that every worker of the dispatch then takes in
/// turn, once per workgroup.
#[derive(Clone)]
struct DispatchRefs {
    serial: u64,
    info: Arc<DispatchInfo>,
    /// Set when a workgroup failed: the others end at their next round.
    failed: Arc<AtomicBool>,
    queue: Option<Arc<Queue>>,
}

impl DispatchRefs {
    fn should_stop(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
            || self.info.process.closing()
            || self.queue.as_deref().is_some_and(Queue::destroyed)
    }
}

/// One workgroup's turn, taken out of the shared state to run without the lock.
struct Turn {
    refs: DispatchRefs,
    cu: usize,
    state: GroupState,
    /// Not started yet: its waves are set up at the start of the turn.
    fresh: bool,
    /// More workgroups, not started, that the turn runs in the same place one after another
    /// while each finishes within its turn (see [`Units::take`]).
    batch: Range<u64>,
    /// How many workgroups of the batch finished before the one in `state`.
    batch_finished: u64,
}

/// A dispatch that ended, to be reported once the lock is released.
struct Ended {
    ticket: Arc<DispatchTicket>,
    queue: Option<Arc<Queue>>,
    outcome: Result<(), DispatchError>,
    /// For the process's statistics and timeline, when it keeps either: what the dispatch
    /// did, and when it was submitted.
    record: Option<(Arc<DispatchInfo>, DispatchRecord, Instant)>,
}

/// The shared state of a GPU's compute units.
struct Units {
    cus: Cus,
    running: Vec<Running>,
    /// The dispatch being served (serial number) and how many more consecutive turns it
    /// gets (its priority weight).
    current: Option<(u64, u32)>,
    /// The process served last (its context's address) and, per process, its dispatch
    /// served last: processes take turns, and within a process its queues do.
    last_process: usize,
    last_of_process: Vec<(usize, u64)>,
    spare: Vec<GroupState>,
    idle_workers: usize,
    serial: u64,
    /// Host threads that run turns (the pool and one helper).
    workers: u64,
}

impl Units {
    /// The next turn, if anything can run. `kept` is the worker's references to the
    /// dispatch of its last turn, used again if the turn is of the same dispatch.
    fn pick(&mut self, ended: &mut Vec<Ended>, kept: &mut Option<DispatchRefs>) -> Option<Turn> {
        self.retire_stopped(ended);
        if let Some((serial, left)) = self.current {
            if left > 0 {
                if let Some(i) = self.running.iter().position(|r| r.serial == serial) {
                    if let Some(turn) = self.take(i, kept) {
                        self.current = Some((serial, left - 1));
                        return Some(turn);
                    }
                }
            }
        }
        if self.running.len() == 1 {
            let turn = self.take(0, kept)?;
            self.current = Some((turn.refs.serial, self.running[0].weight - 1));
            return Some(turn);
        }
        let keys: Vec<(usize, u64)> = self.running.iter().map(|r| (r.process_key(), r.serial)).collect();
        self.last_of_process.retain(|(p, _)| keys.iter().any(|(k, _)| k == p));
        for i in turn_order(&keys, self.last_process, &self.last_of_process) {
            let Some(turn) = self.take(i, kept) else { continue };
            let process = keys[i].0;
            self.last_process = process;
            match self.last_of_process.iter_mut().find(|(p, _)| *p == process) {
                Some(entry) => entry.1 = turn.refs.serial,
                None => self.last_of_process.push((process, turn.refs.serial)),
            }
            self.current = Some((turn.refs.serial, self.running[i].weight - 1));
            return Some(turn);
        }
        None
    }

    /// A turn from dispatch `i`: a new workgroup if one fits, else the longest-waiting
    /// resident one. Its references to the dispatch are `kept`'s if they are this
    /// dispatch's, else new ones.
    ///
    /// A new workgroup comes with a batch of the next ones while the dispatch has many more
    /// than the workers: the turn runs them in its workgroup's place, one after another, as
    /// long as each finishes within its turn. A vector add's workgroup is a hundred
    /// instructions, and a turn for each cost more in taking and giving back than running
    /// it (the lock, and the shared state's cache lines moving between the workers' cores).
    /// One at a time they are resident one at a time, so they take one place on a CU. What
    /// the turn does not start it gives back ([`Self::finish`]), to be admitted first, in
    /// batches again (one at a time, given-back workgroups made the thread that helps
    /// between queue visits, whose turns are short, hand most of its batches to the pool
    /// as single workgroups: vector add 28 -> 38 ms).
    fn take(&mut self, i: usize, kept: &mut Option<DispatchRefs>) -> Option<Turn> {
        let workers = self.workers;
        let Units { cus, running, spare, .. } = self;
        let r = &mut running[i];
        if r.should_stop() {
            return None;
        }
        let placed = if r.admitted < r.total || !r.returned.is_empty() { cus.place(r.cost) } else { None };
        let mut batch = 0..0;
        let (cu, state, fresh) = match placed {
            Some(cu) => {
                let mut state = spare.pop().unwrap_or_default();
                let unadmitted = r.total - r.admitted;
                state.index = match r.returned.pop() {
                    Some(given_back) => {
                        // The rest of the range (still the lowest) goes back after the batch.
                        let left = given_back.end - given_back.start - 1;
                        let more = batch_len(left + unadmitted, workers).min(left);
                        batch = given_back.start + 1..given_back.start + 1 + more;
                        if batch.end < given_back.end {
                            r.returned.push(batch.end..given_back.end);
                        }
                        given_back.start
                    }
                    None => {
                        let more = batch_len(unadmitted - 1, workers);
                        batch = r.admitted + 1..r.admitted + 1 + more;
                        r.admitted = batch.end;
                        batch.start - 1
                    }
                };
                (cu, state, true)
            }
            None => {
                let resident = r.parked.pop_front()?;
                (resident.cu, resident.state, false)
            }
        };
        r.on_workers += 1;
        let refs = match kept.take() {
            Some(refs) if refs.serial == r.serial => refs,
            _ => r.refs.clone(),
        };
        Some(Turn { refs, cu, state, fresh, batch, batch_finished: 0 })
    }

    /// Takes back a turn that ran; its references to the dispatch, for the worker to keep.
    fn finish(&mut self, turn: Turn, result: Result<TurnEnd, GroupError>, ended: &mut Vec<Ended>) -> DispatchRefs {
        let Turn { refs, cu, mut state, batch, batch_finished, .. } = turn;
        let Some(i) = self.running.iter().position(|r| r.serial == refs.serial) else { return refs };
        let Units { cus, running, spare, .. } = self;
        let r = &mut running[i];
        r.on_workers -= 1;
        r.finished += batch_finished;
        if !batch.is_empty() {
            r.returned.push(batch);
            r.returned.sort_unstable_by_key(|range| std::cmp::Reverse(range.start));
        }
        r.retired += state.take_retired();
        // Taken after every turn (the turn ran on this thread), so none is left for another.
        r.translation += crate::gpu::exec::jit::take_thread_translation_time();
        if r.refs.info.count_instructions {
            r.counts.add(&state.take_counts());
        }
        let keep = match result {
            Ok(TurnEnd::Finished) => {
                r.finished += 1;
                false
            }
            Ok(TurnEnd::Paused) => !r.should_stop(),
            Err(e) => {
                r.refs.failed.store(true, Ordering::Relaxed);
                r.failure.get_or_insert(e);
                false
            }
        };
        if keep {
            r.parked.push_back(Resident { cu, state });
        } else {
            cus.release(cu, r.cost);
            if spare.len() < SPARE_STATES {
                spare.push(state);
            }
        }
        self.retire_if_over(i, ended);
        refs
    }

    /// Ends every stopped dispatch that no worker runs.
    fn retire_stopped(&mut self, ended: &mut Vec<Ended>) {
        let mut i = 0;
        while i < self.running.len() {
            if !self.retire_if_over(i, ended) {
                i += 1;
            }
        }
    }

    /// Ends dispatch `i` if all its workgroups finished, or it stopped and no worker runs
    /// it any more. Whether it ended.
    fn retire_if_over(&mut self, i: usize, ended: &mut Vec<Ended>) -> bool {
        let r = &self.running[i];
        let over = r.on_workers == 0 && (r.finished == r.total || r.should_stop());
        if !over {
            return false;
        }
        let r = self.running.remove(i);
        for resident in r.parked {
            self.cus.release(resident.cu, r.cost);
        }
        let outcome = match r.failure {
            None if r.finished == r.total => Ok(()),
            None | Some(GroupError::Aborted) => Err(DispatchError::Aborted),
            Some(GroupError::Failed(f)) => Err(failure_to_error(f)),
        };
        let took = r.submitted.elapsed();
        let info = &r.refs.info;
        log_end(info, r.retired, took, r.translation, &outcome);
        let record = (info.count_instructions || info.trace).then(|| {
            let record = DispatchRecord {
                workgroups: r.finished,
                counts: r.counts,
                host_time: took,
                translation: r.translation,
            };
            (info.clone(), record, r.submitted)
        });
        ended.push(Ended { ticket: r.ticket, queue: r.refs.queue, outcome, record });
        true
    }

    fn has_work(&self) -> bool {
        self.running.iter().any(Running::has_work)
    }
}

/// The workgroups a new workgroup's turn takes after it ([`Units::take`]), with `left` not
/// yet admitted: enough that a turn is not mostly taking and giving back, few enough that
/// every worker keeps getting some (the batches get smaller towards the end).
fn batch_len(left: u64, workers: u64) -> u64 {
    (left / (4 * workers)).min(MAX_BATCH)
}

/// The order in which to try the running dispatches, given as (process, serial) in
/// admission order: processes in order of their oldest running dispatch, starting after
/// `last_process`; within a process, its dispatches starting after the one it was last
/// served (`last_of_process`). Every process gets a turn before any gets a second.
fn turn_order(keys: &[(usize, u64)], last_process: usize, last_of_process: &[(usize, u64)]) -> Vec<usize> {
    let mut processes: Vec<usize> = Vec::new();
    for &(p, _) in keys {
        if !processes.contains(&p) {
            processes.push(p);
        }
    }
    let first = processes.iter().position(|&p| p == last_process).map_or(0, |k| k + 1);
    let mut order = Vec::with_capacity(keys.len());
    for k in 0..processes.len() {
        let process = processes[(first + k) % processes.len()];
        let mine: Vec<usize> = (0..keys.len()).filter(|&i| keys[i].0 == process).collect();
        let last = last_of_process.iter().find(|(p, _)| *p == process).map(|&(_, s)| s);
        let after = mine.iter().position(|&i| Some(keys[i].1) == last).map_or(0, |j| j + 1);
        order.extend((0..mine.len()).map(|j| mine[(after + j) % mine.len()]));
    }
    order
}

/// A worker's decode caches, one per recent dispatch: code may be rewritten between
/// dispatches (ROCR's loader copies code objects with its own blit kernel), so a cache
/// never outlives its dispatch's serial number.
struct WorkerCaches {
    caches: Vec<(u64, CodeCache)>,
    /// The address-space snapshot and translation cache of the worker's last turn.
    tlb: TlbKeeper,
    /// The references to the dispatch of the worker's last turn.
    refs: Option<DispatchRefs>,
}

impl WorkerCaches {
    fn new() -> Self {
        WorkerCaches { caches: Vec::with_capacity(CODE_CACHES), tlb: TlbKeeper::default(), refs: None }
    }

    /// Whether the worker holds on to a dispatch or an address space.
    fn holds(&self) -> bool {
        self.refs.is_some() || self.tlb.holds()
    }

    /// Lets go of the last turn's dispatch and address space (the worker has nothing to
    /// run: what it kept must not keep a finished dispatch's process or freed memory
    /// alive).
    fn release(&mut self) {
        self.refs = None;
        self.tlb.release();
    }
}

/// The decode cache of dispatch `serial` among a worker's `caches` (most recent first).
fn code_cache_for(caches: &mut Vec<(u64, CodeCache)>, serial: u64, target: Target) -> &mut CodeCache {
    if let Some(i) = caches.iter().position(|(s, _)| *s == serial) {
        if i != 0 {
            let c = caches.remove(i);
            caches.insert(0, c);
        }
    } else {
        let mut entry =
            if caches.len() == CODE_CACHES { caches.pop().expect("full") } else { (serial, CodeCache::new(target)) };
        entry.0 = serial;
        entry.1.clear(target);
        caches.insert(0, entry);
    }
    &mut caches[0].1
}

/// The compute units of one GPU and the host threads that run their workgroups.
pub struct ComputeUnits {
    gpu: usize,
    units: Mutex<Units>,
    work: Condvar,
    pool_size: usize,
    threads: Mutex<Vec<JoinHandle<()>>>,
    shutdown: AtomicBool,
    hook: Option<ThreadHook>,
    /// The decode caches of the threads that [help](Self::help).
    helper_caches: Mutex<WorkerCaches>,
}

impl std::fmt::Debug for ComputeUnits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputeUnits").field("gpu", &self.gpu).field("pool", &self.pool_size).finish()
    }
}

impl ComputeUnits {
    /// The compute units of GPU `gpu`, run by `workers` host threads in all (the pool
    /// has one fewer: the caller of [`help`](Self::help) is the last).
    pub fn new(gpu: usize, shape: CuShape, workers: usize, hook: Option<ThreadHook>) -> Arc<ComputeUnits> {
        Arc::new(ComputeUnits {
            gpu,
            units: Mutex::new(Units {
                cus: Cus::new(shape),
                running: Vec::new(),
                current: None,
                last_process: 0,
                last_of_process: Vec::new(),
                spare: Vec::new(),
                idle_workers: 0,
                serial: 0,
                workers: workers.max(1) as u64,
            }),
            work: Condvar::new(),
            pool_size: workers.max(1) - 1,
            threads: Mutex::new(Vec::new()),
            shutdown: AtomicBool::new(false),
            hook,
            helper_caches: Mutex::new(WorkerCaches::new()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Units> {
        self.units.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts running `info`'s workgroups; the outcome goes to `ticket`. Destroying `queue`
    /// stops the dispatch.
    pub fn submit(self: &Arc<Self>, info: DispatchInfo, ticket: Arc<DispatchTicket>, queue: Option<Arc<Queue>>) {
        self.start_pool();
        if let Some(q) = &queue {
            q.dispatch_started();
        }
        let total = info.group_count();
        let priority = queue.as_ref().map_or(0, |q| q.priority.load(Ordering::Relaxed));
        let mut units = self.lock();
        units.serial += 1;
        let serial = units.serial;
        units.running.push(Running {
            serial,
            cost: GroupCost::of(&info),
            refs: DispatchRefs { serial, info: Arc::new(info), failed: Arc::new(AtomicBool::new(false)), queue },
            ticket,
            weight: 1 + priority.min(15) / 4,
            total,
            admitted: 0,
            returned: Vec::new(),
            finished: 0,
            parked: VecDeque::new(),
            on_workers: 0,
            failure: None,
            retired: 0,
            submitted: std::time::Instant::now(),
            counts: InstCounts::default(),
            translation: std::time::Duration::ZERO,
        });
        // The caller's thread takes one workgroup when it helps; wake the pool for more.
        if total > 1 && units.idle_workers > 0 {
            self.work.notify_all();
        }
    }

    /// Runs one turn on the calling thread. Whether there was one to run.
    pub fn help(&self) -> bool {
        let mut own;
        let mut caches = match self.helper_caches.try_lock() {
            Ok(c) => c,
            Err(_) => {
                // Another thread helps at the same time (two embedding-API callers):
                // decode afresh rather than wait.
                own = WorkerCaches::new();
                return self.one_turn(&mut own, HELP_ROUNDS);
            }
        };
        self.one_turn(&mut caches, HELP_ROUNDS)
    }

    /// Runs turns of `rounds` rounds on the calling thread until they have retired as many
    /// instructions as one such turn of the first workgroup may: a workgroup of a vector
    /// add ends in a hundred, and a thread that helps between visits of its queues would
    /// otherwise visit them (and take the lock twice) per hundred instructions. Whether
    /// there was a turn to run.
    fn one_turn(&self, caches: &mut WorkerCaches, rounds: usize) -> bool {
        let mut ended = Vec::new();
        let turn = self.lock().pick(&mut ended, &mut caches.refs);
        report(ended);
        let Some(mut turn) = turn else {
            caches.release();
            return false;
        };
        let budget = workgroup::turn_instructions(rounds, turn.state.waves.len().max(1));
        let mut retired = 0;
        loop {
            let result = play(&mut turn, caches, rounds);
            retired += turn.state.retired();
            let mut ended = Vec::new();
            let next = {
                let mut units = self.lock();
                caches.refs = Some(units.finish(turn, result, &mut ended));
                let next = if retired < budget { units.pick(&mut ended, &mut caches.refs) } else { None };
                if units.idle_workers > 0 && units.has_work() {
                    self.work.notify_one();
                }
                next
            };
            report(ended);
            match next {
                Some(t) => turn = t,
                None => return true,
            }
        }
    }

    fn start_pool(self: &Arc<Self>) {
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        if !threads.is_empty() || self.pool_size == 0 {
            return;
        }
        for k in 0..self.pool_size {
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("rocjitsu-cu{}.{k}", self.gpu))
                .spawn(move || me.pool_thread());
            match spawned {
                Ok(t) => threads.push(t),
                Err(err) => tracing::error!("cannot start a compute thread for GPU {}: {err}", self.gpu),
            }
        }
    }

    fn pool_thread(self: Arc<Self>) {
        if let Some(h) = &self.hook {
            h();
        }
        let mut caches = WorkerCaches::new();
        let mut done: Option<(Turn, Result<TurnEnd, GroupError>)> = None;
        loop {
            let mut ended = Vec::new();
            let turn = {
                let mut units = self.lock();
                if let Some((turn, result)) = done.take() {
                    caches.refs = Some(units.finish(turn, result, &mut ended));
                }
                loop {
                    if self.shutdown.load(Ordering::Acquire) {
                        drop(units);
                        report(ended);
                        return;
                    }
                    if let Some(t) = units.pick(&mut ended, &mut caches.refs) {
                        break t;
                    }
                    if !ended.is_empty() || caches.holds() {
                        // Report before sleeping: someone waits for these. And let go of
                        // the last turn's dispatch and memory outside the lock.
                        drop(units);
                        report(std::mem::take(&mut ended));
                        caches.release();
                        units = self.lock();
                        continue;
                    }
                    units.idle_workers += 1;
                    units = self.work.wait_timeout(units, IDLE_WAIT).unwrap_or_else(|e| e.into_inner()).0;
                    units.idle_workers -= 1;
                }
            };
            report(ended);
            let mut turn = turn;
            let result = play(&mut turn, &mut caches, TURN_ROUNDS);
            done = Some((turn, result));
        }
    }

    /// Stops the pool threads (running turns end first).
    pub fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        self.work.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        let me = std::thread::current().id();
        // The last owner may be a pool thread itself (it woke a command processor whose
        // machine was dropped meanwhile): it cannot join itself, and ends on its own.
        for t in threads.into_iter().filter(|t| t.thread().id() != me) {
            let _ = t.join();
        }
    }
}

/// Runs one turn of a workgroup.
fn play(turn: &mut Turn, caches: &mut WorkerCaches, rounds: usize) -> Result<TurnEnd, GroupError> {
    let Turn { refs, state, fresh, batch, batch_finished, .. } = turn;
    let info = &*refs.info;
    if *fresh {
        info.init_workgroup(state.index, state);
        *fresh = false;
    }
    let code = code_cache_for(&mut caches.caches, refs.serial, info.target);
    // The workgroups of a batch run while each finishes and together they stay within an
    // eighth of what one turn of the first may run: batches are for workgroups far shorter
    // than a turn (a vector add's is 1/300 of one). Longer ones gain nothing from them and
    // lose the other workers' help at the end of the grid (rocRAND's normal distributions
    // ran 5 % slower with batches up to a whole turn).
    let budget = workgroup::turn_instructions(rounds, state.waves.len().max(1)) / BATCH_SHARE;
    // The current snapshot each turn: a long-running workgroup sees memory mapped since.
    caches.tlb.with_wave_mem(
        |kept| info.process.vm_since(kept),
        |vm, mem| {
            let (started, first) = (info.trace.then(Instant::now), state.index);
            let result = loop {
                let result = workgroup::run_turn(info, code, state, mem, rounds, || refs.should_stop());
                // What is left of the batch otherwise goes back unstarted.
                let go_on = matches!(result, Ok(TurnEnd::Finished)) && state.retired() < budget && !refs.should_stop();
                if !go_on {
                    break result;
                }
                let Some(next) = batch.next() else { break result };
                *batch_finished += 1;
                info.init_workgroup(next, state);
            };
            // One event for the turn and the batch it carried (consecutive workgroups): one per
            // workgroup of a vector add's batches doubled its time with a timeline.
            if let (Some(started), Some(trace)) = (started, info.process.trace()) {
                let worker: Arc<str> = std::thread::current().name().unwrap_or("unnamed").into();
                let ko = info.packet.kernel_object;
                let name = trace.kernel_name(ko, || kernel_names::kernel_name(&**vm, ko));
                // A turn plays once: the batch's finished ones and the one in `state`.
                let count = *batch_finished + 1;
                let detail = Detail::Workgroup { dispatch_id: info.dispatch_id, index: first, count };
                trace.record(Track::Worker(worker), name, started, Instant::now(), detail);
            }
            result
        },
    )
}

/// One debug line per dispatch (`ROCJITSU_LOG=sim=debug`): which kernel, its shape, and what
/// it cost, so a slow test points at its kernel.
fn log_end(
    info: &DispatchInfo,
    retired: u64,
    took: Duration,
    translation: Duration,
    outcome: &Result<(), DispatchError>,
) {
    tracing::debug!(
        "dispatch {} kernel object {:#x} grid {:?} workgroup {:?}: {} wave-instructions in {:.3} s ({:.1} M/s), {:.3} s of it translating{}",
        info.dispatch_id,
        info.packet.kernel_object,
        info.grid,
        info.wg_size,
        retired,
        took.as_secs_f64(),
        retired as f64 / took.as_secs_f64().max(1e-9) / 1e6,
        translation.as_secs_f64(),
        match outcome {
            Ok(()) => String::new(),
            Err(e) => format!(", {e}"),
        }
    );
}

/// Tells the owners of ended dispatches (outside the lock: waking the command processor
/// takes other locks).
fn report(ended: Vec<Ended>) {
    for e in ended {
        if let Some((info, record, started)) = &e.record {
            let ko = info.packet.kernel_object;
            let trace = info.process.trace();
            // Read from GPU memory once per kernel object: the timeline keeps names, and the
            // statistics ask only for a kernel they have not seen.
            let read = || kernel_names::kernel_name(&*info.process.vm(), ko);
            let name = || trace.map_or_else(read, |t| t.kernel_name(ko, read).to_string());
            if let Some(stats) = info.process.stats() {
                stats.record_dispatch(ko, name, record);
            }
            if let Some(trace) = trace {
                let track = match &e.queue {
                    Some(q) => Track::Queue { gpu: q.gpu, queue: q.id },
                    None => Track::Queue { gpu: info.gpu, queue: u32::MAX },
                };
                let detail = Detail::Dispatch {
                    dispatch_id: info.dispatch_id,
                    grid: info.grid,
                    workgroup: info.wg_size,
                    translation_us: record.translation.as_micros() as u64,
                };
                trace.record(track, trace.kernel_name(ko, read), *started, *started + record.host_time, detail);
            }
        }
        if let Some(q) = &e.queue {
            q.dispatch_stopped();
        }
        e.ticket.finish(e.outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> CuShape {
        CuShape { cus: 2, wave_slots: 8, vgprs: 4 * 512, lds: 64 * 1024 }
    }

    #[test]
    fn workgroups_are_placed_while_a_cu_has_room() {
        let mut cus = Cus::new(shape());
        let cost = GroupCost { waves: 4, vgprs: 4 * 128, lds: 16 * 1024 };
        // Two per CU by wave slots, spread over both CUs first.
        assert_eq!(cus.place(cost), Some(0));
        assert_eq!(cus.place(cost), Some(1));
        assert_eq!(cus.place(cost), Some(0));
        assert_eq!(cus.place(cost), Some(1));
        assert_eq!(cus.place(cost), None);
        cus.release(1, cost);
        assert_eq!(cus.place(cost), Some(1));
        assert_eq!(cus.place(cost), None);
    }

    #[test]
    fn vgprs_and_lds_limit_residency_too() {
        let mut cus = Cus::new(CuShape { cus: 1, ..shape() });
        let heavy = GroupCost { waves: 1, vgprs: 1024, lds: 0 };
        assert_eq!(cus.place(heavy), Some(0));
        assert_eq!(cus.place(heavy), Some(0));
        assert_eq!(cus.place(heavy), None, "2048 VGPRs per CU are used up");
        let mut cus = Cus::new(CuShape { cus: 1, ..shape() });
        let lds = GroupCost { waves: 1, vgprs: 8, lds: 40 * 1024 };
        assert_eq!(cus.place(lds), Some(0));
        assert_eq!(cus.place(lds), None, "64 KiB of LDS per CU");
    }

    #[test]
    fn an_oversized_workgroup_still_gets_an_empty_cu() {
        let mut cus = Cus::new(CuShape { cus: 1, ..shape() });
        let huge = GroupCost { waves: 16, vgprs: 16 * 512, lds: 0 };
        assert_eq!(cus.place(huge), Some(0));
        assert_eq!(cus.place(GroupCost { waves: 1, vgprs: 8, lds: 0 }), None);
    }

    #[test]
    fn processes_take_turns_before_their_queues_do() {
        // Process 1 has three running dispatches (serials 1, 2, 4), process 2 one (3).
        let keys = [(1, 1), (1, 2), (2, 3), (1, 4)];
        assert_eq!(turn_order(&keys, 0, &[]), vec![0, 1, 3, 2], "nobody served yet: oldest first");
        // Process 1 was served last with dispatch 1: process 2 is next, then process 1's
        // dispatch after 1.
        assert_eq!(turn_order(&keys, 1, &[(1, 1)]), vec![2, 1, 3, 0]);
        // Then process 1 again, from the dispatch after the one it had last.
        assert_eq!(turn_order(&keys, 2, &[(1, 1), (2, 3)]), vec![1, 3, 0, 2]);
        // Simulating picks: over 8 turns process 2 gets 4, process 1's three queues the rest.
        let (mut last, mut last_of): (usize, Vec<(usize, u64)>) = (0, vec![]);
        let mut served = vec![];
        for _ in 0..8 {
            let i = turn_order(&keys, last, &last_of)[0];
            let (p, serial) = keys[i];
            last = p;
            last_of.retain(|(q, _)| *q != p);
            last_of.push((p, serial));
            served.push(serial);
        }
        assert_eq!(served, vec![1, 3, 2, 3, 4, 3, 1, 3]);
    }

    #[test]
    fn decode_caches_are_per_dispatch_and_bounded() {
        let mut c = Vec::new();
        for serial in 1..=6 {
            code_cache_for(&mut c, serial, Target::Gfx90a);
        }
        let serials: Vec<u64> = c.iter().map(|(s, _)| *s).collect();
        assert_eq!(serials, vec![6, 5, 4, 3]);
        code_cache_for(&mut c, 4, Target::Gfx90a);
        assert_eq!(c[0].0, 4);
    }
}
