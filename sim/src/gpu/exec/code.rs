//! Instruction fetch with a decode cache.
//!
//! Decoding happens once per static instruction per worker and dispatch:
//! the cache maps code pages to decoded slots, so the hot path is a page
//! check and an index. Kernels live in a handful of pages and stay in one for
//! long stretches, so the pages are a short list with the last one used checked
//! first (hashing the PC on every instruction cost more than the rest of fetch). A cache lives
//! for one dispatch on one worker, so code
//! rewritten between dispatches (ROCR's loader copies code objects with its
//! own blit kernel) is always decoded afresh, and no locking is needed.

use super::jit::{self, select, Block};
use super::memory::WaveMem;
use super::{ops, ExecError, Handler, Wave};
use crate::isa::{decode, Inst, Target};
use std::sync::Arc;

/// Bytes of code per cache page. A page's slots are allocated and cleared whole when the
/// dispatch first runs code in it, and every dispatch starts with an empty cache: 1 KiB
/// (256 slots, 12 KiB of decoded state) keeps that cost small for the short kernels that
/// dominate launch latency, while a loop rarely spans two pages. 4 KiB pages cost about a
/// microsecond more per dispatch and worker (the empty launch measured 4.3 µs → 3.2–4.2 µs).
const PAGE: u64 = 1024;
const SLOTS: usize = (PAGE / 4) as usize;

/// A decoded instruction and its semantics.
#[derive(Clone, Copy)]
pub struct Decoded {
    pub inst: Inst,
    pub handler: Handler,
    /// Whether the instruction reaches memory, LDS, other waves or the host (else it only
    /// computes on its wave's registers and PC): what waves keep in step after a barrier.
    pub shared: bool,
}

type Page = Box<[Option<Decoded>; SLOTS]>;

/// What the translator knows about an address (with `ROCJITSU_ENGINE=jit`).
#[derive(Clone)]
enum JitSlot {
    /// Reached this many times in this dispatch; looked up or translated when hot.
    Cold(u32),
    /// No run worth translating starts here.
    Interpret,
    Ready(Arc<Block>),
}

/// Decoded instructions by address.
pub struct CodeCache {
    target: Target,
    /// (page address, its slots), in the order first used.
    pages: Vec<(u64, Page)>,
    /// Index in `pages` of the page of the last fetch.
    last: usize,
    /// The translator's slots of each page in `pages` (same index), made on first use.
    jit: Vec<Box<[JitSlot]>>,
    /// The same for runs cut before their next shared instruction after the one they start
    /// at ([`Self::jit_step_block`]).
    jit_step: Vec<Box<[JitSlot]>>,
}

impl CodeCache {
    pub fn new(target: Target) -> Self {
        CodeCache { target, pages: Vec::new(), last: 0, jit: Vec::new(), jit_step: Vec::new() }
    }

    /// Forgets everything (a new dispatch).
    pub fn clear(&mut self, target: Target) {
        self.target = target;
        self.pages.clear();
        self.jit.clear();
        self.jit_step.clear();
        self.last = 0;
    }

    /// The instruction at `pc`.
    #[inline]
    pub fn fetch(&mut self, pc: u64, mem: &WaveMem<'_>) -> Result<&Decoded, ExecError> {
        if !pc.is_multiple_of(4) {
            return Err(ExecError::Invalid(format!("program counter {pc:#x} is not dword-aligned")));
        }
        let slot = ((pc % PAGE) / 4) as usize;
        self.select_page(pc);
        if self.pages[self.last].1[slot].is_none() {
            let d = self.decode_at(pc, mem)?;
            self.pages[self.last].1[slot] = Some(d);
        }
        Ok(self.pages[self.last].1[slot].as_ref().expect("filled above"))
    }

    /// Makes the page of `pc` the current one (`last`), adding it if new.
    #[inline]
    fn select_page(&mut self, pc: u64) {
        let page = pc & !(PAGE - 1);
        if self.pages.get(self.last).is_none_or(|p| p.0 != page) {
            self.switch_page(page);
        }
    }

    /// The slow path of [`Self::select_page`], out of line: a new page's slots are built on the
    /// heap here, and a 12 KiB array in the caller's frame would cost every fetch its stack
    /// probes (measured: a third of an interpreted instruction's time).
    #[cold]
    #[inline(never)]
    fn switch_page(&mut self, page: u64) {
        self.last = match self.pages.iter().position(|p| p.0 == page) {
            Some(i) => i,
            None => {
                let slots: Page =
                    vec![None; SLOTS].into_boxed_slice().try_into().unwrap_or_else(|_| unreachable!("SLOTS slots"));
                self.pages.push((page, slots));
                self.pages.len() - 1
            }
        };
    }

    /// The translated run starting at `pc`, once the address is hot ([`jit::hot_threshold`] visits in
    /// this dispatch) and a run worth translating starts there; `None` to interpret.
    pub fn jit_block(&mut self, pc: u64, w: &Wave, mem: &WaveMem<'_>) -> Option<&Block> {
        self.translated(pc, w, mem, false)
    }

    /// The translated run from `pc` up to its next instruction that reaches beyond the wave's
    /// registers (not included; the one at `pc` itself does not count), if one worth
    /// translating starts there: at most one shared instruction, at `pc`. It is what a wave
    /// kept in step with the others after a barrier runs where the whole run from `pc` may
    /// not go ([`Self::jit_block`] found it hot): a stretch on its registers, or a shared
    /// instruction and the stretch after it.
    pub fn jit_step_block(&mut self, pc: u64, w: &Wave, mem: &WaveMem<'_>) -> Option<&Block> {
        self.translated(pc, w, mem, true)
    }

    /// [`Self::jit_block`] (`step` false) or [`Self::jit_step_block`]: the slot of `pc` in
    /// the table of whole runs or of step runs, translated when hot. A step run is asked for
    /// only where the whole run was hot, so it is translated at once.
    fn translated(&mut self, pc: u64, w: &Wave, mem: &WaveMem<'_>, step: bool) -> Option<&Block> {
        if !pc.is_multiple_of(4) {
            return None;
        }
        self.select_page(pc);
        let (page, slot) = (self.last, ((pc % PAGE) / 4) as usize);
        // Looked up in the process-wide cache at `look`, compiled if still absent at `hot`.
        let (look, hot) = if step { (1, 1) } else { (jit::LOOKUP_AFTER, jit::hot_threshold()) };
        let table = if step { &mut self.jit_step } else { &mut self.jit };
        while table.len() <= page {
            table.push(vec![JitSlot::Cold(0); SLOTS].into_boxed_slice());
        }
        if let JitSlot::Cold(n) = &mut table[page][slot] {
            *n += 1;
            let compile = *n >= hot;
            if !compile && *n != look {
                return None;
            }
            let ready = match self.translate_at(pc, w.mode, mem, step, compile) {
                jit::Cached::Ready(b) => JitSlot::Ready(b),
                jit::Cached::Interpret => JitSlot::Interpret,
                jit::Cached::Absent => return None,
            };
            let table = if step { &mut self.jit_step } else { &mut self.jit };
            table[page][slot] = ready;
        }
        let table = if step { &self.jit_step } else { &self.jit };
        match &table[page][slot] {
            JitSlot::Ready(b) => Some(b),
            _ => None,
        }
    }

    /// Decodes the translatable instructions from `pc` on (`step`: only up to the next that
    /// reaches beyond the wave's registers after the first) and has the run translated
    /// (`compile`) or looks it up.
    fn translate_at(&mut self, pc: u64, mode: u32, mem: &WaveMem<'_>, step: bool, compile: bool) -> jit::Cached {
        let mut insts = select::candidates(|offset| self.fetch(pc + offset, mem).ok().map(|d| d.inst));
        if step {
            let next = insts.iter().skip(1).position(select::reaches_beyond_registers).map_or(insts.len(), |i| i + 1);
            insts.truncate(next);
        }
        let words = |bytes: u32| (0..bytes as u64 / 4).map(|i| mem.read::<u32>(pc + 4 * i).ok()).collect();
        jit::cached(self.target, &insts, words, mode, jit::MIN_STEPS, compile)
    }

    fn decode_at(&self, pc: u64, mem: &WaveMem<'_>) -> Result<Decoded, ExecError> {
        // Up to four dwords (64-bit encoding + literal, or gfx950's 16-byte
        // block-scaled MFMA); the tail may lie past the end of the code mapping,
        // so read what exists.
        let mut words = [0u32; 4];
        let mut n = 0;
        for (i, w) in words.iter_mut().enumerate() {
            match mem.read::<u32>(pc + 4 * i as u64) {
                Ok(v) => {
                    *w = v;
                    n += 1;
                }
                Err(f) if i == 0 => return Err(f.into()),
                Err(_) => break,
            }
        }
        let inst = decode(&words[..n], self.target)?;
        Ok(Decoded { inst, handler: ops::handler(inst.op), shared: select::reaches_beyond_registers(&inst) })
    }
}
