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
}

impl CodeCache {
    pub fn new(target: Target) -> Self {
        CodeCache { target, pages: Vec::new(), last: 0, jit: Vec::new() }
    }

    /// Forgets everything (a new dispatch).
    pub fn clear(&mut self, target: Target) {
        self.target = target;
        self.pages.clear();
        self.jit.clear();
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

    /// The translated run starting at `pc`, once the address is hot ([`jit::hot_threshold`]
    /// visits in this dispatch) and a run worth translating starts there; `None` to
    /// interpret. A run that a process-wide cache already holds is used after
    /// [`jit::LOOKUP_AFTER`] visits.
    pub fn jit_block(&mut self, pc: u64, w: &Wave, mem: &WaveMem<'_>) -> Option<&Block> {
        if !pc.is_multiple_of(4) {
            return None;
        }
        self.select_page(pc);
        let (page, slot) = (self.last, ((pc % PAGE) / 4) as usize);
        while self.jit.len() <= page {
            self.jit.push(vec![JitSlot::Cold(0); SLOTS].into_boxed_slice());
        }
        if let JitSlot::Cold(n) = &mut self.jit[page][slot] {
            *n += 1;
            let compile = *n >= jit::hot_threshold();
            if !compile && *n != jit::LOOKUP_AFTER {
                return None;
            }
            let ready = match self.translate_at(pc, w.mode, mem, compile) {
                jit::Cached::Ready(b) => JitSlot::Ready(b),
                jit::Cached::Interpret => JitSlot::Interpret,
                jit::Cached::Absent => return None,
            };
            self.jit[page][slot] = ready;
        }
        match &self.jit[page][slot] {
            JitSlot::Ready(b) => Some(b),
            _ => None,
        }
    }

    /// Decodes the translatable instructions from `pc` on and has the run translated
    /// (`compile`) or looks it up.
    fn translate_at(&mut self, pc: u64, mode: u32, mem: &WaveMem<'_>, compile: bool) -> jit::Cached {
        let insts = select::candidates(|offset| self.fetch(pc + offset, mem).ok().map(|d| d.inst));
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
