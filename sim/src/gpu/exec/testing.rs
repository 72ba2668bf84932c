//! A harness for instruction tests: one wave, a block of GPU memory, LDS and
//! private memory, and a way to run a few encoded instructions on them.
//!
//! ```
//! use sim::gpu::exec::testing::Harness;
//! let mut h = Harness::new();
//! h.wave.sgpr[0] = 5;
//! // s_add_u32 s1, s0, 3 (assembled with llvm-mc-15 -mcpu=gfx90a)
//! # let _ = || -> Result<(), sim::gpu::exec::ExecError> {
//! h.run(&[0x8001_8300])?;
//! # Ok(()) };
//! ```

use super::code::CodeCache;
use super::dispatch::DispatchInfo;
use super::kd::KernelDescriptor;
use super::memory::{PrivateMem, WaveMem};
use super::{Ctx, ExecError, Flow, Wave};
use crate::driver::kfd::{KfdProcess, UserptrMode};
use crate::gpu::cp::aql::KernelDispatch;
use crate::gpu::memory::GpuMem;
use crate::isa::{decode, Inst, Target};
use crate::machine::Machine;
use proto::abi::kfd::alloc_flags;
use std::sync::Arc;

/// GPU VA of the harness's memory block.
pub const MEM_BASE: u64 = 0x1000_0000;
/// Size of the memory block.
pub const MEM_BYTES: u64 = 1 << 20;

/// One wave and the memory around it.
pub struct Harness {
    pub wave: Wave,
    pub lds: Vec<u8>,
    pub private: PrivateMem,
    pub target: Target,
    info: DispatchInfo,
    process: Arc<KfdProcess>,
    _machine: Machine,
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

    pub fn for_target(target: Target) -> Harness {
        let machine = Machine::new(crate::config::default_config());
        let process = machine.open_process(0, UserptrMode::Direct).expect("a KFD process");
        let flags = alloc_flags::VRAM | alloc_flags::WRITABLE | alloc_flags::EXECUTABLE | alloc_flags::PUBLIC;
        process.alloc_and_map(0, MEM_BASE, MEM_BYTES, flags).expect("harness memory");
        let kd = KernelDescriptor::parse(&[0; 64]);
        let info = DispatchInfo {
            target,
            process: process.clone(),
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
        };
        Harness {
            wave: Wave::new(64, 32),
            lds: vec![0; 64 * 1024],
            private: PrivateMem::new(256),
            target,
            info,
            process,
            _machine: machine,
        }
    }

    /// Decodes one instruction.
    pub fn decode(&self, words: &[u32]) -> Result<Inst, ExecError> {
        Ok(decode(words, self.target)?)
    }

    /// Runs the encoded instructions in `words` in order, starting at
    /// pc 0; branches move within `words`. Stops at the end of `words` or at
    /// `s_endpgm`, and returns the first error.
    pub fn run(&mut self, words: &[u32]) -> Result<(), ExecError> {
        let vm = self.process.vm();
        let mem = WaveMem::new(&vm);
        self.wave.pc = 0;
        let mut steps = 0;
        while (self.wave.pc as usize) < words.len() * 4 {
            steps += 1;
            if steps > 100_000 {
                return Err(ExecError::Invalid("the test program does not terminate".into()));
            }
            let at = self.wave.pc as usize / 4;
            let mut inst = decode(&words[at..], self.target)?;
            let handler = super::ops::handler(inst.op);
            if self.wave.mode & super::vector_modes::MODE_BITS != 0 {
                match super::vector_modes::adjust(&self.wave, &inst) {
                    super::vector_modes::Adjusted::AsIs => {}
                    super::vector_modes::Adjusted::Skip => {
                        self.wave.pc += inst.len as u64;
                        continue;
                    }
                    super::vector_modes::Adjusted::Indexed(i) => inst = i,
                }
            }
            let mut ctx = Ctx { mem: &mem, lds: &mut self.lds, private: &mut self.private, dispatch: &self.info };
            match handler(&mut self.wave, &inst, &mut ctx)? {
                Flow::Next | Flow::Barrier => self.wave.pc += inst.len as u64,
                Flow::Jump(t) => self.wave.pc = t,
                // One wave alone: waiting means trying again (until the step limit).
                Flow::Yield => {}
                Flow::End => break,
            }
        }
        Ok(())
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

    /// A decode cache for the harness's target (for tests of `code`).
    pub fn code_cache(&self) -> CodeCache {
        CodeCache::new(self.target)
    }
}

/// Compiles the OpenCL C file `src` with one of Debian's clangs (`clang-15`, `clang-19`)
/// for `mcpu`, using compiler builtins only (`-nogpulib`), and returns the code object:
/// how tests, benchmarks and examples get real compiled kernels without ROCm.
///
/// # Panics
/// When the compiler is missing (`cargo xtask deps` installs it) or fails.
pub fn compile_opencl(clang: &str, mcpu: &str, src: &std::path::Path) -> Vec<u8> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("rocjitsu-{}-{n}.co", std::process::id()));
    let status = std::process::Command::new(clang)
        .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-O2", "-nogpulib"])
        .arg(format!("-mcpu={mcpu}"))
        .arg("-o")
        .arg(&out)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {clang} (`cargo xtask deps` installs it): {e}"));
    assert!(status.success(), "{clang} failed on {}", src.display());
    let elf = std::fs::read(&out).expect("the compiled code object");
    let _ = std::fs::remove_file(&out);
    elf
}

/// The directory of Rust's `llvm-tools` component (`llc`, `llvm-objdump`) and of `rust-lld`:
/// the only LLVM ≥ 20 (the first to know gfx950) that this project's registries provide.
pub fn rust_llvm_bin() -> std::path::PathBuf {
    let out = std::process::Command::new("rustc").args(["--print", "sysroot"]).output().expect("rustc --print sysroot");
    let sysroot = String::from_utf8(out.stdout).expect("utf-8 sysroot");
    let out = std::process::Command::new("rustc").arg("-vV").output().expect("rustc -vV");
    let verbose = String::from_utf8(out.stdout).expect("utf-8 rustc -vV");
    let host = verbose.lines().find_map(|l| l.strip_prefix("host: ")).expect("host triple");
    std::path::Path::new(sysroot.trim()).join("lib/rustlib").join(host).join("bin")
}

/// Compiles LLVM IR for `mcpu` with llvm-tools' `llc` and links it with `rust-lld` into a code
/// object: how tests get gfx950 kernels.
///
/// # Panics
/// When llvm-tools is missing (`cargo xtask deps` adds it: `rustup component add llvm-tools`)
/// or compilation fails.
pub fn compile_llvm_ir(mcpu: &str, src: &std::path::Path) -> Vec<u8> {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = std::env::temp_dir();
    let (obj, co) = (
        tmp.join(format!("rocjitsu-{}-{n}.o", std::process::id())),
        tmp.join(format!("rocjitsu-{}-{n}.co", std::process::id())),
    );
    let bin = rust_llvm_bin();
    let run = |cmd: &mut std::process::Command, what: &str| {
        let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {what} (`cargo xtask deps` installs it): {e}"));
        assert!(status.success(), "{what} failed on {}", src.display());
    };
    run(
        std::process::Command::new(bin.join("llc"))
            .args(["-mtriple=amdgcn-amd-amdhsa", "-O2", "-filetype=obj", &format!("-mcpu={mcpu}"), "-o"])
            .arg(&obj)
            .arg(src),
        "llc (rustup component add llvm-tools)",
    );
    run(
        std::process::Command::new(bin.join("rust-lld")).args(["-flavor", "gnu", "-shared", "-o"]).arg(&co).arg(&obj),
        "rust-lld",
    );
    let elf = std::fs::read(&co).expect("the linked code object");
    let _ = std::fs::remove_file(&obj);
    let _ = std::fs::remove_file(&co);
    elf
}

/// A kernel argument segment made of 64-bit words (pointers, or scalars packed in pairs).
pub fn kernargs(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
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
