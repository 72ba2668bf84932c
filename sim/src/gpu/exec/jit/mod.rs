//! The translator: hot runs of GFX9/CDNA vector code to host machine code, with Cranelift.
//!
//! The interpreter stays the reference and the fallback. Where a wave reaches an address
//! often enough, the run from there to the next branch ([`select::plan`]) is translated
//! ([`lower`]): its lane-wise VALU code is compiled to host SIMD code, the common scalar ALU
//! ops, branches, scalar loads, whole-wave global loads and stores and LDS reads and writes
//! to host code, and everything else in it (other scalar code and memory, other LDS ops,
//! MFMA, the vector ops not compiled) becomes a direct call of the interpreter's handler,
//! without fetch and dispatch. The few instructions a run must not hold (they change MODE,
//! VGPR indexing or the PC other than as a branch) end it and are interpreted as before.
//!
//! A run can be told to stop before its first instruction that reaches beyond the wave's
//! registers at or past an index ([`Block::run`]'s `shared_limit`): how the waves of a
//! workgroup, kept in step after a barrier, each run up to their next shared instruction in
//! one call.
//!
//! Translated code is cached process-wide by its machine code (target, MODE and the run's
//! instruction words), so it is reused across dispatches, workers and, in the daemon, clients,
//! and code that ROCR's loader rewrites between dispatches is never run stale.
//!
//! It is the default engine; `ROCJITSU_ENGINE=interp` runs the interpreter alone (the
//! reference, which CI runs every test with too).

pub mod lower;
pub mod select;

use super::vector_modes::MODE_BITS;
use super::wave::{Lanes, Wave};
use super::{ops, Ctx, ExecError, Flow, Handler};
use crate::gpu::stats::{Traffic, CLASSES};
use crate::isa::{Inst, Target};
use cranelift_jit::{JITBuilder, JITModule};
use select::Plan;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, LazyLock, Mutex};

/// Which engine runs kernel code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// The interpreter alone (`ROCJITSU_ENGINE=interp`): the reference.
    Interp,
    /// Hot runs translated to host code, the interpreter for the rest (the default).
    #[default]
    Jit,
}

impl Engine {
    /// The engine `ROCJITSU_ENGINE` names (`jit`, the default, or `interp`), read once per
    /// process; an unknown name is reported and the default used.
    pub fn from_env() -> Engine {
        static ENGINE: LazyLock<Engine> = LazyLock::new(|| match std::env::var("ROCJITSU_ENGINE").as_deref() {
            Ok("interp") => Engine::Interp,
            Ok("jit") | Ok("") | Err(_) => Engine::Jit,
            Ok(other) => {
                tracing::warn!("ROCJITSU_ENGINE={other:?} is not an engine (jit, interp): using the translator");
                Engine::Jit
            }
        });
        *ENGINE
    }
}

/// Times a wave must reach an address within one dispatch (on one worker) before the run
/// there is looked up or translated, unless `ROCJITSU_JIT_HOT` sets it.
///
/// Why so many: a run costs 0.1-0.2 ms of compiling per instruction (3.4 ms for 25) and
/// saves ~20 ns per instruction and visit, so it pays for itself after thousands of visits.
/// At 16 visits, rocRAND's MTGP32 normal kernel spent 325 of its 334 ms translating code
/// that ran a few hundred times (4 ms interpreted at 1024); a loop or a large grid reaches
/// 1024 in well under a millisecond of interpreting.
pub const DEFAULT_HOT: u32 = 1024;

/// Visits after which an address's run is looked up in the process-wide cache (without
/// compiling): code translated for an earlier dispatch or another client is used after as
/// few visits as before the threshold rose, not after [`hot_threshold`] again in every
/// dispatch (a short kernel dispatched many times would interpret most of each).
pub const LOOKUP_AFTER: u32 = 16;

/// The hot threshold in force: `ROCJITSU_JIT_HOT` (a positive number, read once per process;
/// CI's test pass uses 16 so that its kernels' code is translated too) or [`DEFAULT_HOT`].
pub fn hot_threshold() -> u32 {
    static HOT: LazyLock<u32> = LazyLock::new(|| match std::env::var("ROCJITSU_JIT_HOT") {
        Err(_) => DEFAULT_HOT,
        Ok(v) => match v.parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                tracing::warn!("ROCJITSU_JIT_HOT={v:?} is not a positive number: using {DEFAULT_HOT}");
                DEFAULT_HOT
            }
        },
    });
    *HOT
}
/// Runs with fewer compiled instructions than this stay with the interpreter (a call
/// costs about what one interpreted instruction does).
pub const MIN_STEPS: usize = 2;
/// Translations kept at most per process: past it, new runs are interpreted (a daemon that
/// serves many applications for weeks must not grow without bound; a kernel has tens of runs).
const MAX_TRANSLATIONS: usize = 50_000;

/// The translated function: `(wave, vgprs, ctx, exit, pc) -> stopped` ([`lower`]).
type RunFn = unsafe extern "C" fn(*mut Wave, *mut Lanes, *mut c_void, *mut Exit, u64) -> u32;

/// An interpreted instruction of a run, as [`interpret_step`] needs it.
pub struct Entry {
    inst: Inst,
    handler: Handler,
    /// Its index in the run.
    index: u32,
    /// The memory it moves per active lane or per wave, for the statistics.
    traffic: Traffic,
}

/// Bytes of memory a translated run's instructions moved, as the statistics count them
/// ([`Traffic`]: vector accesses per active lane, scalar loads per wave): compiled accesses
/// (whole waves) add their constant, [`interpret_step`] what the interpreted ones moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    pub read: u64,
    pub written: u64,
}

/// How a run stopped early, written by [`interpret_step`].
pub struct Exit {
    /// The instruction's answer: a branch taken, a barrier, a wait, the end.
    flow: Option<Flow>,
    error: Option<ExecError>,
    /// The index in the run of the instruction that stopped it.
    index: u32,
    /// The run's own address: a branch back to it loops inside the translated code, at most
    /// `loops_left` more times.
    loop_pc: u64,
    loops_left: u64,
    /// Times the run looped.
    loops: u64,
    /// What its memory instructions moved so far.
    moved: Moved,
    /// The run's index from which on it must not run an instruction that reaches beyond the
    /// wave's registers (`u64::MAX`: no bound): the translated code stops before the first
    /// such one at or past it, and says so in `before_shared`. How a wave kept in step with
    /// the others after a barrier runs up to its next shared instruction in one call.
    shared_limit: u64,
    /// Set (1) by the translated code when it stopped before a shared instruction
    /// (`index`).
    before_shared: u32,
    /// Set (1) by the translated code when a compiled branch was taken elsewhere than
    /// back to the run's start: the run stopped at `index` with a jump to `jump`.
    jumped: u32,
    jump: u64,
    /// The workgroup's LDS for the call (`ctx.lds`), where compiled LDS accesses check their
    /// range inline instead of asking `span_host`.
    lds: *mut u8,
    lds_len: u64,
}

impl Default for Exit {
    fn default() -> Self {
        Exit {
            flow: None,
            error: None,
            index: 0,
            loop_pc: 0,
            loops_left: 0,
            loops: 0,
            moved: Moved::default(),
            shared_limit: u64::MAX,
            before_shared: 0,
            jumped: 0,
            jump: 0,
            lds: std::ptr::null_mut(),
            lds_len: 0,
        }
    }
}

/// Where translated code adds what its compiled accesses moved: `exit.moved`.
pub(crate) const EXIT_MOVED_READ: i32 = (std::mem::offset_of!(Exit, moved) + std::mem::offset_of!(Moved, read)) as i32;
/// Where translated code finds its bound on shared instructions and says it stopped there.
pub(crate) const EXIT_SHARED_LIMIT: i32 = std::mem::offset_of!(Exit, shared_limit) as i32;
pub(crate) const EXIT_BEFORE_SHARED: i32 = std::mem::offset_of!(Exit, before_shared) as i32;
pub(crate) const EXIT_INDEX: i32 = std::mem::offset_of!(Exit, index) as i32;
pub(crate) const EXIT_JUMPED: i32 = std::mem::offset_of!(Exit, jumped) as i32;
pub(crate) const EXIT_JUMP: i32 = std::mem::offset_of!(Exit, jump) as i32;
pub(crate) const EXIT_LDS: i32 = std::mem::offset_of!(Exit, lds) as i32;
pub(crate) const EXIT_LDS_LEN: i32 = std::mem::offset_of!(Exit, lds_len) as i32;
pub(crate) const EXIT_MOVED_WRITTEN: i32 =
    (std::mem::offset_of!(Exit, moved) + std::mem::offset_of!(Moved, written)) as i32;

/// Runs one instruction of a translated run with the interpreter's handler. Called
/// from translated code only (its address is compiled in). Returns 0 to go on, 1 when the
/// run must stop here (`exit` says why), 2 to start the run again (a branch back to its
/// start, while the caller's budget lasts).
///
/// # Safety
/// `wave`, `ctx`, `entry` and `exit` point to live, exclusively accessible values of their
/// types for the call (the translated function passes on what [`Block::run`] gave it).
unsafe extern "C" fn interpret_step(
    wave: *mut Wave,
    ctx: *mut c_void,
    entry: *const Entry,
    pc: u64,
    exit: *mut Exit,
) -> u32 {
    // SAFETY: the caller's contract; `ctx` is the `Ctx` that `Block::run` passed as `c_void`.
    let (w, ctx, e, exit) = unsafe { (&mut *wave, &mut *(ctx as *mut Ctx<'_>), &*entry, &mut *exit) };
    w.pc = pc;
    if !e.traffic.is_none() {
        // Counted before it runs, with the lanes on then, as the interpreter's loop counts.
        let (read, written) = e.traffic.bytes(w.exec.count_ones());
        exit.moved.read += read;
        exit.moved.written += written;
    }
    // A panic must not unwind through translated code (its frames have no unwind tables, and
    // this function is `extern "C"`): a handler's panic, a simulator bug, becomes the wave's
    // failure, which ends its dispatch and is reported like a fault, as elsewhere.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (e.handler)(w, &e.inst, ctx)))
        .unwrap_or_else(|_| Err(ExecError::Invalid(format!("internal error: the simulator panicked in {}", e.inst))));
    match outcome {
        Ok(Flow::Next) => 0,
        Ok(Flow::Jump(target)) if target == exit.loop_pc && exit.loops_left > 0 => {
            exit.loops_left -= 1;
            exit.loops += 1;
            2
        }
        Ok(flow) => {
            exit.flow = Some(flow);
            exit.index = e.index;
            1
        }
        Err(error) => {
            exit.error = Some(error);
            exit.index = e.index;
            1
        }
    }
}

/// The operations whose fast test in translated code failed for some lane of a chunk
/// (`op`, a [`select::LaneFn`] number): the division helpers (`v_div_scale`, `v_div_fmas`,
/// `v_div_fixup`, f64 and f32) and `v_ldexp_f64`, on four lanes, by the interpreter's own
/// per-lane functions. `io` holds the sources' four lanes (`a`, `b`, `c`; an f32 value in
/// the low dword of its word, as is `v_ldexp_f64`'s exponent in `b`) and a lane-mask word
/// (bit `l`: lane `l`'s VCC bit for `v_div_fmas`); the results go to the first four words,
/// `v_div_scale`'s VCC bits to the mask word. Called from translated code only.
///
/// # Safety
/// `io` points to 13 words the caller owns for the call (a stack slot of the translated code).
unsafe extern "C" fn f64_lanes(op: u64, mode: u64, io: *mut [u64; 13]) {
    use crate::gpu::exec::ops::valu::{float, float_div, fp::Env};
    use select::LaneFn;
    // SAFETY: the caller's contract.
    let io = unsafe { &mut *io };
    let env = Env::new(mode as u32);
    let mut mask = 0;
    for l in 0..4 {
        let (a, b, c) = (io[l], io[4 + l], io[8 + l]);
        io[l] = match op {
            op if op == LaneFn::DivScale as u64 => {
                let (v, vcc) = float_div::scale64(a, b, c);
                mask |= (vcc as u64) << l;
                v
            }
            op if op == LaneFn::DivFmas as u64 => float_div::fmas64(a, b, c, io[12] >> l & 1 != 0, env),
            op if op == LaneFn::DivFixup as u64 => float_div::fixup64(a, b, c, env),
            op if op == LaneFn::DivScale32 as u64 => {
                let (v, vcc) = float_div::scale32(a as u32, b as u32, c as u32);
                mask |= (vcc as u64) << l;
                v as u64
            }
            op if op == LaneFn::DivFmas32 as u64 => {
                float_div::fmas32(a as u32, b as u32, c as u32, io[12] >> l & 1 != 0, env) as u64
            }
            op if op == LaneFn::DivFixup32 as u64 => float_div::fixup32(a as u32, b as u32, c as u32, env) as u64,
            _ => float::ldexp64(a, b as u32 as i32, env),
        };
    }
    io[12] = mask;
}

/// The host address of the GPU range `[start, start + len)` for a compiled memory access, or 0
/// where the interpreter must take it: not inside one mapping (or not writable, for a store,
/// `flags` bit 0), or, for a FLAT access (bit 1), touching the LDS or private aperture. With
/// bit 2 the range is in the workgroup's LDS, and must lie inside its allocation. Bits 8..16,
/// when not 0, are one more than the access's site (see `WaveMem::sites`), which then keeps
/// the mapping for the translated code's own check next time.
/// Called from translated code only, through the wave's translation cache.
///
/// # Safety
/// `ctx` is the `Ctx` that [`Block::run`] passed on as `c_void`, live for the call.
unsafe extern "C" fn span_host(ctx: *mut c_void, start: u64, len: u64, flags: u64) -> u64 {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *(ctx as *mut Ctx<'_>) };
    let Some(end) = start.checked_add(len) else { return 0 };
    if flags & 4 != 0 {
        // The workgroup's LDS (byte offsets), for the rest of the translated call.
        return if end <= ctx.lds.len() as u64 { ctx.lds.as_mut_ptr() as u64 + start } else { 0 };
    }
    if flags & 2 != 0 && !super::memory::all_global(start, end) {
        return 0;
    }
    let write = flags & 1 != 0;
    let host = match (flags >> 8 & 0xff) as usize {
        0 => ctx.mem.translate(start, len, write),
        site => ctx.mem.translate_for_site(start, len, write, site - 1),
    };
    host.map_or(0, |host| host as u64)
}

/// Asks the host to bring into its caches the memory that a compiled vector access's site
/// will most likely reach two accesses after this one at `[start, start + len)` (see
/// `WaveMem::ahead_for_site`; `site` is the access's site). Called from translated code
/// after the site's own check passed, so the access itself is already known to be fine.
///
/// Why a call: Cranelift has no prefetch instruction, and a load would wait for the memory
/// (and could not be dropped when the guess is wrong); the call costs ~20 host instructions
/// against a page walk and a trip to memory on every pass of a grid-striding loop.
///
/// # Safety
/// `ctx` is the `Ctx` that [`Block::run`] passed on as `c_void`, live for the call.
unsafe extern "C" fn prefetch_ahead(ctx: *mut c_void, start: u64, len: u64, site: u64) {
    // SAFETY: the caller's contract.
    let ctx = unsafe { &*(ctx as *const Ctx<'_>) };
    if let Some(host) = ctx.mem.ahead_for_site(site as usize, start, len) {
        prefetch_lines(host, len.min(MAX_PREFETCH));
    }
}

/// The most bytes one access prefetches: a wave's 64 lanes of 16 bytes.
const MAX_PREFETCH: u64 = 1024;

/// Prefetches the cache lines of `[host, host + len)`.
fn prefetch_lines(host: usize, len: u64) {
    let first = host & !63;
    for line in (first..host + len as usize).step_by(64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint: it reads nothing into the program and never faults,
        // whatever the address.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line as *const i8)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = line;
    }
}

/// A translated run, ready to call.
pub struct Block {
    func: RunFn,
    plan: Plan,
    /// The run's instructions, and where each starts (bytes from the run's start).
    insts: Vec<(Inst, u32)>,
    /// The entries of its interpreted instructions (their addresses are compiled in: never
    /// moved).
    _entries: Box<[Entry]>,
    /// MODE at translation, when the run does f32 arithmetic (its flushing is compiled in).
    mode: Option<u32>,
    /// Instructions by statistics class among the run's first `i`, for each `i` up to all.
    class_prefix: Box<[[u32; CLASSES]]>,
}

/// [`Block::class_prefix`] of a run.
fn class_prefix(insts: &[(Inst, u32)]) -> Box<[[u32; CLASSES]]> {
    let table = crate::gpu::stats::op_table();
    let mut counts = [0u32; CLASSES];
    let mut prefix = Vec::with_capacity(insts.len() + 1);
    prefix.push(counts);
    for (inst, _) in insts {
        counts[table[inst.op as usize].0 as usize] += 1;
        prefix.push(counts);
    }
    prefix.into_boxed_slice()
}

// SAFETY: `func` points into executable memory of the process-wide `JITModule`, which is
// never freed (see `Translator`); the function and the entries it points to are
// never written after translation.
unsafe impl Send for Block {}
// SAFETY: as above; calling the function concurrently is safe (it touches only its
// arguments and the read-only entries).
unsafe impl Sync for Block {}

/// How a translated run ended.
pub enum Ran {
    /// It ran to its end: the next instruction follows it.
    Through,
    /// Its instruction at `pc` (`len` bytes long) answered `flow` (a branch taken, …).
    Stopped { flow: Flow, pc: u64, len: u8 },
    /// It stopped before its instruction at `pc`, which reaches beyond the wave's registers,
    /// at or past the bound it was given.
    BeforeShared { pc: u64 },
}

impl Block {
    /// Instructions in the run.
    pub fn insts(&self) -> u64 {
        self.plan.insts as u64
    }

    /// Instructions by statistics class among `retired` retired by [`Self::run`]: whole
    /// passes (it loops back to its start) and then the run's first instructions.
    pub fn class_counts(&self, retired: u64) -> [u64; CLASSES] {
        let (passes, part) = (retired / self.insts(), (retired % self.insts()) as usize);
        let (all, first) = (self.class_prefix[self.insts() as usize], self.class_prefix[part]);
        std::array::from_fn(|c| passes * all[c] as u64 + first[c] as u64)
    }

    /// Bytes of code the run covers.
    pub fn bytes(&self) -> u64 {
        self.plan.bytes as u64
    }

    /// Whether the translation is valid for `w` as it is now: the MODE it was compiled for,
    /// no VGPR indexing, and every VGPR the run names allocated (else the interpreter runs
    /// it and reports the bad register).
    #[inline]
    pub fn applies(&self, w: &Wave) -> bool {
        w.mode & MODE_BITS == 0 && self.mode.is_none_or(|m| m == w.mode) && self.plan.vgprs as usize <= w.vgpr.len()
    }

    /// Runs the block at `w.pc` (where `applies` holds), looping while it branches back to
    /// its start and at most `budget` instructions have run; with `shared_limit`, once, and
    /// only up to its first instruction at or past that index that reaches beyond the wave's
    /// registers. Returns how it ended, how many instructions it retired and the memory they
    /// moved, or the failure of one of its instructions with that instruction's address. The
    /// caller moves the PC.
    pub fn run(
        &self,
        w: &mut Wave,
        ctx: &mut Ctx<'_>,
        budget: u64,
        shared_limit: Option<u64>,
    ) -> Result<(Ran, u64, Moved), (ExecError, u64, String)> {
        assert!(self.plan.vgprs as usize <= w.vgpr.len(), "Block::run without Block::applies");
        let pc = w.pc;
        let loops_left = if shared_limit.is_some() { 0 } else { budget / self.insts() - 1 };
        let mut exit = Exit {
            loop_pc: pc,
            loops_left,
            shared_limit: shared_limit.unwrap_or(u64::MAX),
            lds: ctx.lds.as_mut_ptr(),
            lds_len: ctx.lds.len() as u64,
            ..Exit::default()
        };
        let vgprs = w.vgpr.as_mut_ptr();
        let ctx = ctx as *mut Ctx<'_> as *mut c_void;
        // SAFETY: the function reads and writes 256-byte registers 0..plan.vgprs of the VGPR
        // file (all allocated: asserted above) and the wave's scalar registers, and passes the
        // wave, `ctx` and `exit` on to `interpret_step`, which the caller lends for the call.
        // Translated code never keeps VGPR values across an interpreted step (segments store at
        // their end), and handlers never resize the VGPR file.
        let stopped = unsafe { (self.func)(w, vgprs, ctx, &mut exit, pc) };
        w.pc = pc;
        let looped = exit.loops * self.insts();
        if stopped == 0 {
            return Ok((Ran::Through, looped + self.insts(), exit.moved));
        }
        let (inst, offset) = &self.insts[exit.index as usize];
        let at = pc + *offset as u64;
        if exit.before_shared != 0 {
            return Ok((Ran::BeforeShared { pc: at }, looped + exit.index as u64, exit.moved));
        }
        if exit.jumped != 0 {
            let stopped = Ran::Stopped { flow: Flow::Jump(exit.jump), pc: at, len: inst.len };
            return Ok((stopped, looped + exit.index as u64 + 1, exit.moved));
        }
        match (exit.flow, exit.error) {
            (_, Some(error)) => Err((error, at, inst.to_string())),
            (Some(flow), None) => {
                Ok((Ran::Stopped { flow, pc: at, len: inst.len }, looped + exit.index as u64 + 1, exit.moved))
            }
            (None, None) => unreachable!("interpret_step stops a run with a flow or an error"),
        }
    }
}

/// The cache key of a translation: what it was compiled from.
#[derive(Hash, PartialEq, Eq)]
struct Key {
    target: Target,
    mode: Option<u32>,
    words: Vec<u32>,
}

/// The process-wide code generator and its cache. Compiled code is kept for the life of the
/// process: kernels are few, and a run's code is a few kilobytes.
struct Translator {
    module: JITModule,
    cache: HashMap<Key, Option<Arc<Block>>>,
    failures: u32,
    /// Time spent translating, in all and the longest translation (with its length).
    total: std::time::Duration,
    longest: (std::time::Duration, usize),
}

static TRANSLATOR: LazyLock<Mutex<Option<Translator>>> = LazyLock::new(|| {
    // Cranelift checks every function it compiles unless told not to: a quarter of the
    // translation time (`throughput barriers`' 24 runs: 22.8 ms with the checks, 16.5 ms
    // without), for IR that the tests have already checked. Debug builds and the translator's
    // own tests ([`check_translations`]) keep the checks.
    // `opt_level=speed` was measured too: slower code for VALU, memory and vector-add kernels
    // (VALU 205 against 266 M wave-instr/s), faster only for f64 division; not taken.
    let verify = cfg!(debug_assertions) || CHECK_TRANSLATIONS.load(std::sync::atomic::Ordering::Relaxed);
    let flags = [("enable_verifier", if verify { "true" } else { "false" })];
    let module = JITBuilder::with_flags(&flags, cranelift_module::default_libcall_names()).map(JITModule::new);
    match module {
        Ok(module) => Mutex::new(Some(Translator {
            module,
            cache: HashMap::new(),
            failures: 0,
            total: Default::default(),
            longest: Default::default(),
        })),
        Err(e) => {
            tracing::warn!("the translator is not available on this host ({e}): interpreting everything");
            Mutex::new(None)
        }
    }
});

/// Whether Cranelift checks every function it compiles (see [`check_translations`]).
static CHECK_TRANSLATIONS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes the code generator check every function it compiles, as it does in debug builds:
/// the translator's tests call it first (it takes effect only before the process's first
/// translation), so that IR the lowering gets wrong fails there and not as wrong code.
pub fn check_translations() {
    CHECK_TRANSLATIONS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Translated runs: how many were compiled, and how many plans failed to compile (each
/// failure is interpreted instead, and logged once).
pub fn stats() -> (usize, u32) {
    let t = TRANSLATOR.lock().unwrap_or_else(|e| e.into_inner());
    t.as_ref().map_or((0, 0), |t| (t.cache.values().filter(|b| b.is_some()).count(), t.failures))
}

thread_local! {
    /// Time this thread spent translating since [`take_thread_translation_time`] last took it.
    static TRANSLATING: std::cell::Cell<std::time::Duration> = const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

/// The time this thread spent translating since the last call: a worker takes it at the end
/// of each turn, so the statistics give each kernel the translations its own turns made.
pub fn take_thread_translation_time() -> std::time::Duration {
    TRANSLATING.with(|t| t.take())
}

/// Time spent translating so far, and the longest translation with its run's length.
pub fn translation_time() -> (std::time::Duration, (std::time::Duration, usize)) {
    let t = TRANSLATOR.lock().unwrap_or_else(|e| e.into_inner());
    t.as_ref().map_or(Default::default(), |t| (t.total, t.longest))
}

/// What the translation cache holds for a run ([`cached`]), or compiled for it.
pub enum Cached {
    /// Its translation.
    Ready(Arc<Block>),
    /// Nothing to translate: shorter than the minimum, unreadable, or it did not compile.
    Interpret,
    /// Not translated yet.
    Absent,
}

/// The translation of the run `insts` (decoded from `words`, at the head of which it starts)
/// under `mode`: from the cache, or compiled now. `None` if the run is shorter than
/// `min_steps` ([`MIN_STEPS`] in kernels) or does not compile.
pub fn translate(
    target: Target,
    insts: &[Inst],
    words: impl Fn(u32) -> Option<Vec<u32>>,
    mode: u32,
    min_steps: usize,
) -> Option<Arc<Block>> {
    match cached(target, insts, words, mode, min_steps, true) {
        Cached::Ready(b) => Some(b),
        Cached::Interpret | Cached::Absent => None,
    }
}

/// [`translate`], but without `compile` only what the process-wide cache holds for the run
/// ([`Cached::Absent`] if nothing): a run that another dispatch (or client) made hot is used
/// at once, while compiling a new one waits for [`hot_threshold`] visits.
pub fn cached(
    target: Target,
    insts: &[Inst],
    words: impl Fn(u32) -> Option<Vec<u32>>,
    mode: u32,
    min_steps: usize,
    compile: bool,
) -> Cached {
    let plan = select::plan(insts, mode);
    if plan.compiled_insts < min_steps.max(1) {
        return Cached::Interpret;
    }
    let Some(words) = words(plan.bytes) else { return Cached::Interpret };
    let mode = plan.uses_f32.then_some(mode);
    let key = Key { target, mode, words };
    let mut guard = TRANSLATOR.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = guard.as_mut() else { return Cached::Interpret };
    if let Some(b) = t.cache.get(&key) {
        return b.clone().map_or(Cached::Interpret, Cached::Ready);
    }
    if !compile {
        return Cached::Absent;
    }
    if t.cache.len() >= MAX_TRANSLATIONS {
        if t.cache.len() == MAX_TRANSLATIONS {
            tracing::warn!("{MAX_TRANSLATIONS} runs translated: interpreting new code from now on");
            t.cache.insert(key, None);
        }
        return Cached::Interpret;
    }
    let n = plan.insts;
    let mut offset = 0;
    let insts: Vec<(Inst, u32)> = insts[..n]
        .iter()
        .map(|i| {
            let at = offset;
            offset += i.len as u32;
            (*i, at)
        })
        .collect();
    let entries_vec: Box<[Entry]> = plan
        .items
        .iter()
        .filter_map(|item| match item {
            select::Item::Interpreted { index, .. }
            | select::Item::Memory { index, .. }
            | select::Item::ScalarLoad { index, .. } => {
                let inst = insts[*index as usize].0;
                let traffic = crate::gpu::stats::op_table()[inst.op as usize].1;
                Some(Entry { inst, handler: ops::handler(inst.op), index: *index as u32, traffic })
            }
            select::Item::Vector(_) | select::Item::Scalar(_) | select::Item::Branch { .. } => None,
        })
        .collect();
    let entry_of = |index: u16| -> u64 {
        let e = entries_vec.iter().find(|e| e.index == index as u32).expect("an entry per interpreted instruction");
        e as *const Entry as u64
    };
    let helpers = lower::Helpers {
        step: interpret_step as *const () as u64,
        span: span_host as *const () as u64,
        prefetch: prefetch_ahead as *const () as u64,
        f64_lanes: f64_lanes as *const () as u64,
    };
    let started = std::time::Instant::now();
    let compiled = lower::compile(&mut t.module, &plan, mode.unwrap_or(0), helpers, &entry_of);
    let took = started.elapsed();
    t.total += took;
    TRANSLATING.with(|t| t.set(t.get() + took));
    if took > t.longest.0 {
        t.longest = (took, n);
    }
    let block = match compiled {
        Ok(code) => {
            // SAFETY: `lower::compile` built the function with exactly this signature (five
            // 64-bit integer arguments, a 32-bit result) in the host's default calling convention.
            let func = unsafe { std::mem::transmute::<*const u8, RunFn>(code) };
            tracing::debug!(
                "translated a run of {n} instructions ({} bytes of GPU code) in {} µs",
                plan.bytes,
                took.as_micros()
            );
            let class_prefix = class_prefix(&insts);
            Some(Arc::new(Block { func, plan, insts, _entries: entries_vec, mode, class_prefix }))
        }
        Err(e) => {
            t.failures += 1;
            tracing::debug!("the plan that failed: {plan:#?}");
            tracing::warn!("could not translate a run of {n} instructions ({e}): interpreting it");
            None
        }
    };
    t.cache.insert(key, block.clone());
    block.map_or(Cached::Interpret, Cached::Ready)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::stats::InstClass;
    use crate::isa::decode;

    #[test]
    fn a_run_counts_its_classes_by_whole_passes_and_then_its_first_instructions() {
        // v_add_f32 v0, v1, v2; s_add_u32 s0, s1, s2; v_mul_f32 v3, v1, v2; v_sub_f32 v4, v1, v2;
        // s_mul_i32 s3, s1, s2; v_max_f32 v5, v1, v2 (llvm-mc-15 -mcpu=gfx90a).
        let words = [0x0200_0501u32, 0x8000_0201, 0x0a06_0501, 0x0408_0501, 0x9203_0201, 0x160a_0501];
        let insts: Vec<Inst> = (0..words.len()).map(|i| decode(&words[i..], Target::Gfx90a).unwrap()).collect();
        let block = translate(Target::Gfx90a, &insts, |bytes| Some(words[..bytes as usize / 4].to_vec()), 0, 1)
            .expect("a translated run");
        assert_eq!(block.insts(), 6);
        let (s, v) = (InstClass::Salu as usize, InstClass::Valu as usize);
        let at = |retired| {
            let c = block.class_counts(retired);
            (c[s], c[v], c.iter().sum::<u64>())
        };
        assert_eq!(at(0), (0, 0, 0));
        assert_eq!(at(1), (0, 1, 1));
        assert_eq!(at(2), (1, 1, 2));
        assert_eq!(at(5), (2, 3, 5), "stopped at its fifth");
        assert_eq!(at(6), (2, 4, 6), "one whole pass");
        assert_eq!(at(6 * 3 + 2), (3 * 2 + 1, 3 * 4 + 1, 20), "three passes and two more");
    }
}
