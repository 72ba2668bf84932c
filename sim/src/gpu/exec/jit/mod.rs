//! The translator: hot runs of GFX9/CDNA vector code to host machine code, with Cranelift.
//!
//! The interpreter stays the reference and the fallback. Where a wave reaches an address
//! often enough, the longest run of translatable instructions from there
//! ([`select::plan`]: lane-wise 32-bit VALU code) is compiled ([`lower`]) and from then on
//! runs as one host function call instead of one handler call per instruction. Anything
//! the translator does not take — scalar code, memory, branches, cross-lane and 64-bit ops,
//! modifiers — ends a run and is interpreted, instruction by instruction, as before.
//!
//! Translated code is cached process-wide by its machine code (target, MODE and the run's
//! instruction words), so it is reused across dispatches, workers and, in the daemon, clients,
//! and code that ROCR's loader rewrites between dispatches is never run stale.
//!
//! `ROCJITSU_ENGINE=jit` turns it on; the default (`interp`) is the interpreter alone until
//! the translator covers everything its differential tests check.

pub mod lower;
pub mod select;

use super::ops::valu::common::{read_lane_mask, src32_val, write_lane_mask};
use super::vector_modes::MODE_BITS;
use super::wave::{Lanes, Wave};
use super::ExecError;
use crate::isa::{Inst, Target};
use cranelift_jit::{JITBuilder, JITModule};
use select::Plan;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// Which engine runs kernel code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// The interpreter alone.
    #[default]
    Interp,
    /// Hot runs translated to host code, the interpreter for the rest.
    Jit,
}

impl Engine {
    /// The engine `ROCJITSU_ENGINE` names (`interp` or `jit`), read once per process; an
    /// unknown name is reported and the interpreter used.
    pub fn from_env() -> Engine {
        static ENGINE: LazyLock<Engine> = LazyLock::new(|| match std::env::var("ROCJITSU_ENGINE").as_deref() {
            Ok("jit") => Engine::Jit,
            Ok("interp") | Ok("") | Err(_) => Engine::Interp,
            Ok(other) => {
                tracing::warn!("ROCJITSU_ENGINE={other:?} is not an engine (interp, jit): using the interpreter");
                Engine::Interp
            }
        });
        *ENGINE
    }
}

/// Times a wave must reach an address within one dispatch (on one worker) before the run
/// there is looked up or translated: code that runs once is not worth a cache lookup.
pub const HOT: u32 = 16;
/// Runs shorter than this stay with the interpreter (a call costs about what one
/// interpreted instruction does).
pub const MIN_STEPS: usize = 2;

/// The translated function: `(vgprs, uniforms, masks_in, masks_out, exec)`.
type RunFn = unsafe extern "C" fn(*mut Lanes, *const u32, *const u64, *mut u64, u64);

/// A translated run, ready to call.
pub struct Block {
    func: RunFn,
    /// The run's instructions (the uniform sources and lane masks are read from them).
    insts: Vec<Inst>,
    plan: Plan,
    /// MODE at translation, when the run does f32 arithmetic (its flushing is compiled in).
    mode: Option<u32>,
}

// SAFETY: `func` points into executable memory of the process-wide `JITModule`, which is
// never freed (see `Translator`), and the function has no state of its own.
unsafe impl Send for Block {}
// SAFETY: as above; calling it concurrently is safe (it touches only its arguments).
unsafe impl Sync for Block {}

impl Block {
    /// Instructions in the run.
    pub fn insts(&self) -> u64 {
        self.plan.steps.len() as u64
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

    /// Runs the block on `w` (whose `applies` holds); the caller advances the PC.
    pub fn run(&self, w: &mut Wave) -> Result<(), ExecError> {
        let mut uniforms = [0u32; select::MAX_UNIFORMS];
        for (k, &(i, s)) in self.plan.uniforms.iter().enumerate() {
            let inst = &self.insts[i as usize];
            uniforms[k] = src32_val(w, inst, s as usize)?.ok_or(ExecError::Register(inst.src[s as usize]))?;
        }
        let mut masks_in = [0u64; select::MAX_MASKS];
        for (k, op) in self.plan.masks_in.iter().enumerate() {
            masks_in[k] = read_lane_mask(w, *op)?;
        }
        let mut masks_out = [0u64; select::MAX_MASKS];
        assert!(self.plan.vgprs as usize <= w.vgpr.len(), "Block::run without Block::applies");
        // SAFETY: the function reads and writes 256-byte registers 0..plan.vgprs of the VGPR
        // file (all allocated: asserted above), reads `plan.uniforms.len()` values and
        // `plan.masks_in.len()` masks and writes `plan.masks_out.len()` masks, all within the
        // arrays passed (the plan's limits are these arrays' sizes). Nothing else is touched.
        unsafe {
            (self.func)(w.vgpr.as_mut_ptr(), uniforms.as_ptr(), masks_in.as_ptr(), masks_out.as_mut_ptr(), w.exec);
        }
        for (k, op) in self.plan.masks_out.iter().enumerate() {
            write_lane_mask(w, *op, masks_out[k], u64::MAX)?;
        }
        Ok(())
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
}

static TRANSLATOR: LazyLock<Mutex<Option<Translator>>> = LazyLock::new(|| {
    let module = JITBuilder::new(cranelift_module::default_libcall_names()).map(JITModule::new);
    match module {
        Ok(module) => Mutex::new(Some(Translator { module, cache: HashMap::new(), failures: 0 })),
        Err(e) => {
            tracing::warn!("the translator is not available on this host ({e}): interpreting everything");
            Mutex::new(None)
        }
    }
});

/// Translated runs: how many were compiled, and how many plans failed to compile (each
/// failure is interpreted instead, and logged once).
pub fn stats() -> (usize, u32) {
    let t = TRANSLATOR.lock().unwrap_or_else(|e| e.into_inner());
    t.as_ref().map_or((0, 0), |t| (t.cache.values().filter(|b| b.is_some()).count(), t.failures))
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
    let plan = select::plan(insts, mode);
    if plan.steps.len() < min_steps.max(1) {
        return None;
    }
    let words = words(plan.bytes)?;
    let mode = plan.uses_f32.then_some(mode);
    let key = Key { target, mode, words };
    let mut guard = TRANSLATOR.lock().unwrap_or_else(|e| e.into_inner());
    let t = guard.as_mut()?;
    if let Some(b) = t.cache.get(&key) {
        return b.clone();
    }
    let block = match lower::compile(&mut t.module, &plan, mode.unwrap_or(0)) {
        Ok(code) => {
            // SAFETY: `lower::compile` built the function with exactly this signature
            // (five 64-bit integer arguments, no result) in the host's default calling convention.
            let func = unsafe { std::mem::transmute::<*const u8, RunFn>(code) };
            let n = plan.steps.len();
            Some(Arc::new(Block { func, insts: insts[..n].to_vec(), plan, mode }))
        }
        Err(e) => {
            t.failures += 1;
            tracing::warn!("could not translate a run of {} instructions ({e}): interpreting it", plan.steps.len());
            None
        }
    };
    t.cache.insert(key, block.clone());
    block
}
