//! A harness for instruction tests: one wave, a block of GPU memory, LDS and
//! private memory, and a way to run a few encoded instructions on them.
//!
//! ```
//! use sim::testing::Harness;
//! let mut h = Harness::new();
//! h.wave.sgpr[0] = 5;
//! // s_add_u32 s1, s0, 3 (assembled with llvm-mc-15 -mcpu=gfx90a)
//! # let _ = || -> Result<(), sim::gpu::exec::ExecError> {
//! h.run(&[0x8001_8300])?;
//! # Ok(()) };
//! ```

use super::context::TestContext;
use crate::gpu::context::Context;
use crate::gpu::cp::aql::KernelDispatch;
use crate::gpu::exec::code::CodeCache;
use crate::gpu::exec::dispatch::DispatchInfo;
use crate::gpu::exec::jit::{self, select, Block, Engine, Ran};
use crate::gpu::exec::kd::KernelDescriptor;
use crate::gpu::exec::memory::{PrivateMem, TlbKeeper, WaveMem};
use crate::gpu::exec::{ops, vector_modes, Ctx, ExecError, Flow, Wave};
use crate::gpu::memory::GpuMem;
use crate::isa::{decode, Inst, Target};
use std::sync::Arc;

/// GPU VA of the harness's memory block.
pub const MEM_BASE: u64 = 0x1000_0000;
/// Size of the memory block.
pub const MEM_BYTES: u64 = 1 << 20;
/// Test memory beyond the block, for a test's own mappings (`TestContext::map`).
pub const EXTRA_BYTES: u64 = 64 << 10;

/// One wave and the memory around it.
pub struct Harness {
    pub wave: Wave,
    pub lds: Vec<u8>,
    pub private: PrivateMem,
    pub target: Target,
    info: DispatchInfo,
    process: Arc<TestContext>,
    /// The translation cache (and translated code's site mappings) from one `run` to the
    /// next, as a worker keeps it from one turn to the next.
    tlb: TlbKeeper,
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// A gfx90a wave with 64 VGPRs, 32 AGPRs, EXEC all ones, 64 KiB of LDS,
    /// 256 bytes of private memory per lane, and [`MEM_BYTES`] of zeroed
    /// memory at [`MEM_BASE`].
    pub fn new() -> Harness {
        Harness::for_target(Target::Gfx90a)
    }

    /// Models a GPU without SRAM ECC (`keep`), whose d16 loads keep the other half of their
    /// destination, or one with it (the default MI210, `sramecc+`), whose d16 loads zero it.
    pub fn set_d16_preserves_unused(&mut self, keep: bool) {
        self.info.d16_preserves_unused = keep;
    }

    pub fn for_target(target: Target) -> Harness {
        let config = crate::config::default_config();
        // (Room for a test's own extra mappings past the block.)
        let process = Arc::new(TestContext::new(&config, MEM_BYTES + EXTRA_BYTES));
        process.map(MEM_BASE, MEM_BYTES);
        let context: Arc<dyn Context> = process.clone();
        let kd = KernelDescriptor::parse(&[0; 64]);
        let info = DispatchInfo {
            target,
            process: context,
            gpu: 0,
            packet: KernelDispatch::default(),
            packet_va: 0,
            queue_va: 0,
            dispatch_id: 0,
            kd,
            entry_pc: 0,
            grid: [64, 1, 1],
            wg_size: [64, 1, 1],
            groups: [1, 1, 1],
            lds_bytes: 64 * 1024,
            private_per_lane: 256,
            vgprs: 64,
            agprs: 32,
            d16_preserves_unused: !config.gpus()[0].sramecc(),
            count_instructions: false,
            engine: crate::gpu::exec::jit::Engine::from_env(),
            trace: false,
            itrace: None,
        };
        Harness {
            wave: Wave::new(64, 32),
            lds: vec![0; 64 * 1024],
            private: PrivateMem::new(256),
            target,
            info,
            process,
            tlb: TlbKeeper::default(),
        }
    }

    /// Decodes one instruction.
    pub fn decode(&self, words: &[u32]) -> Result<Inst, ExecError> {
        Ok(decode(words, self.target)?)
    }

    /// Runs with the interpreter alone, or with every run the translator takes translated
    /// (even a single instruction), whatever `ROCJITSU_ENGINE` says.
    pub fn set_engine(&mut self, engine: Engine) {
        self.info.engine = engine;
    }

    /// The translation of the run at the start of `words` (even one instruction long).
    fn translated(&self, words: &[u32]) -> Option<Arc<Block>> {
        let insts = select::candidates(|offset| decode(words.get(offset as usize / 4..)?, self.target).ok());
        let words = |bytes: u32| words.get(..bytes as usize / 4).map(<[u32]>::to_vec);
        jit::translate(self.target, &insts, words, self.wave.mode, 1)
    }

    /// Runs the encoded instructions in `words` in order, starting at
    /// pc 0; branches move within `words`. Stops at the end of `words` or at
    /// `s_endpgm`, and returns the first error. With the translator on
    /// ([`Self::set_engine`], `ROCJITSU_ENGINE=jit`), every run it takes is translated and
    /// run as host code, the rest interpreted.
    pub fn run(&mut self, words: &[u32]) -> Result<(), ExecError> {
        let mut tlb = std::mem::take(&mut self.tlb);
        let process = self.process.clone();
        let result = tlb.with_wave_mem(|kept| process.vm_since(kept), |_, mem| self.run_with(words, mem));
        self.tlb = tlb;
        result
    }

    fn run_with(&mut self, words: &[u32], mem: &WaveMem<'_>) -> Result<(), ExecError> {
        self.wave.pc = 0;
        let mut steps = 0;
        while (self.wave.pc as usize) < words.len() * 4 {
            steps += 1;
            if steps > 100_000 {
                return Err(ExecError::Invalid("the test program does not terminate".into()));
            }
            let at = self.wave.pc as usize / 4;
            if self.info.engine == Engine::Jit && self.wave.mode & vector_modes::MODE_BITS == 0 {
                if let Some(block) = self.translated(&words[at..]).filter(|b| b.applies(&self.wave)) {
                    let mut ctx = Ctx { mem, lds: &mut self.lds, private: &mut self.private, dispatch: &self.info };
                    // Loops inside the translated code too, within the step limit.
                    let (ran, n, _) =
                        block.run(&mut self.wave, &mut ctx, 64 * block.insts(), None).map_err(|(error, ..)| error)?;
                    steps += n as usize - 1;
                    match ran {
                        Ran::Through => self.wave.pc += block.bytes(),
                        Ran::Stopped { flow, pc, len } => {
                            self.wave.pc = pc;
                            if !self.follow(flow, len) {
                                break;
                            }
                        }
                        Ran::BeforeShared { .. } => unreachable!("a run without a bound on shared instructions"),
                    }
                    continue;
                }
            }
            let mut inst = decode(&words[at..], self.target)?;
            let handler = ops::handler(inst.op);
            if self.wave.mode & vector_modes::MODE_BITS != 0 {
                match vector_modes::adjust(&self.wave, &inst) {
                    vector_modes::Adjusted::AsIs => {}
                    vector_modes::Adjusted::Skip => {
                        self.wave.pc += inst.len as u64;
                        continue;
                    }
                    vector_modes::Adjusted::Indexed(i) => inst = i,
                }
            }
            let mut ctx = Ctx { mem, lds: &mut self.lds, private: &mut self.private, dispatch: &self.info };
            let flow = handler(&mut self.wave, &inst, &mut ctx)?;
            if !self.follow(flow, inst.len) {
                break;
            }
        }
        Ok(())
    }

    /// Moves the wave on after its instruction at the PC (`len` bytes long) answered `flow`;
    /// false at the end of the program.
    fn follow(&mut self, flow: Flow, len: u8) -> bool {
        match flow {
            Flow::Next | Flow::Barrier | Flow::Sleep => self.wave.pc += len as u64,
            Flow::Jump(t) => self.wave.pc = t,
            // One wave alone: waiting means trying again (until the step limit).
            Flow::Yield => {}
            Flow::End => return false,
        }
        true
    }

    /// Runs `f` with the wave and an instruction context, e.g. to call a
    /// handler directly (timing without decode and handler lookup).
    pub fn with_ctx<R>(&mut self, f: impl FnOnce(&mut Wave, &mut Ctx<'_>) -> R) -> R {
        let vm = self.process.vm();
        let mem = WaveMem::new(&vm);
        let mut ctx = Ctx { mem: &mem, lds: &mut self.lds, private: &mut self.private, dispatch: &self.info };
        f(&mut self.wave, &mut ctx)
    }

    /// Writes `data` into the memory block at GPU VA `va`.
    pub fn write_mem(&self, va: u64, data: &[u8]) {
        let vm = self.process.vm();
        GpuMem::new(&vm).write_bytes(va, data).expect("inside the harness memory");
    }

    /// Reads the memory block at GPU VA `va`.
    pub fn read_mem(&self, va: u64, out: &mut [u8]) {
        let vm = self.process.vm();
        GpuMem::new(&vm).read_bytes(va, out).expect("inside the harness memory");
    }

    /// Reads one u32 of the memory block.
    pub fn read_u32(&self, va: u64) -> u32 {
        let mut b = [0u8; 4];
        self.read_mem(va, &mut b);
        u32::from_le_bytes(b)
    }

    /// A wave as HIP code starts: round to nearest even, denormals kept (MODE 0x2f0).
    pub fn with_hip_mode(target: Target) -> Harness {
        let mut h = Harness::for_target(target);
        h.wave.mode = 0x2f0;
        h
    }

    /// The process the wave runs in (its interrupts and faults).
    pub fn context(&self) -> &TestContext {
        &self.process
    }

    /// A decode cache for the harness's target (for tests of `code`).
    pub fn code_cache(&self) -> CodeCache {
        CodeCache::new(self.target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_program_control_and_reports_missing_ops() {
        let mut h = Harness::new();
        // s_branch 1; s_trap 2; s_endpgm
        h.run(&[0xbf82_0001, 0xbf92_0002, 0xbf81_0000]).unwrap();
        assert_eq!(h.run(&[0xbf92_0002]), Err(ExecError::Trap(2)));
        h.write_mem(MEM_BASE + 8, &7u32.to_le_bytes());
        assert_eq!(h.read_u32(MEM_BASE + 8), 7);
    }
}
