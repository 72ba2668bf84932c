//! The embedding API: drive the simulated GPU without ROCR — allocate
//! memory, load a code object, dispatch a kernel by name, read results.
//! ISA tests and benchmarks use it; so can anyone embedding the simulator.
//!
//! ```no_run
//! # fn demo(elf: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
//! let machine = sim::Machine::new(sim::config::default_config());
//! let runner = machine.kernel_runner()?;
//! let code = runner.load_code_object(elf)?;
//! let out = runner.alloc(4 * 64)?;
//! runner.dispatch(code.kernel("fill")?, [64, 1, 1], [64, 1, 1], &out.to_le_bytes())?;
//! let values: Vec<u32> = runner.read_vec(out, 64)?;
//! # Ok(()) }
//! ```

use crate::driver::kfd::{KfdError, KfdProcess, UserptrMode};
use crate::gpu::context::Context;
use crate::gpu::cp::aql::{packet_type, KernelDispatch};
use crate::gpu::cp::dispatch::DispatchError;
use crate::gpu::exec::{DispatchInfo, Executor};
use crate::gpu::memory::{GpuFault, GpuMem};
use crate::loader::{self, LoadError};
use crate::machine::Machine;
use bytemuck::Pod;
use proto::abi::kfd::alloc_flags;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where the runner places its buffers in the GPU address space.
const VA_BASE: u64 = 0x1000_0000_0000;

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Kfd(#[from] KfdError),
    #[error(transparent)]
    Fault(#[from] GpuFault),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    #[error("no kernel named {0:?} in the code object")]
    NoKernel(String),
}

/// A kernel of a loaded code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// GPU VA of the kernel descriptor.
    pub kd: u64,
}

/// A code object in GPU memory.
#[derive(Debug, Clone)]
pub struct CodeObject {
    pub base: u64,
    pub kernels: BTreeMap<String, Kernel>,
}

impl CodeObject {
    pub fn kernel(&self, name: &str) -> Result<&Kernel, RunnerError> {
        self.kernels.get(name).ok_or_else(|| RunnerError::NoKernel(name.to_string()))
    }
}

/// One simulated process using the GPU directly.
pub struct KernelRunner {
    process: Arc<KfdProcess>,
    executor: Executor,
    next_va: Mutex<u64>,
    gpu: usize,
    /// A buffer reused by every dispatch for its packet, queue and kernargs
    /// (dispatches are synchronous), so repeated dispatches allocate nothing.
    dispatch_area: Mutex<Option<u64>>,
}

/// Layout of the dispatch area.
const AREA_BYTES: u64 = 64 * 1024;
const AREA_PACKET: u64 = 0;
const AREA_QUEUE: u64 = 256;
const AREA_KERNARGS: u64 = 1024;

impl Machine {
    /// A kernel runner on GPU 0 of this machine, with `workers` threads (the
    /// config's worker count by default).
    pub fn kernel_runner(&self) -> Result<KernelRunner, KfdError> {
        self.kernel_runner_with_workers(self.config().workers().get())
    }

    /// Like [`kernel_runner`](Self::kernel_runner) with an explicit worker count.
    pub fn kernel_runner_with_workers(&self, workers: usize) -> Result<KernelRunner, KfdError> {
        let process = self.service().open_process(std::process::id(), UserptrMode::Direct)?;
        Ok(KernelRunner {
            process,
            executor: Executor::new(workers, self.scheduler().thread_hook().cloned()),
            next_va: Mutex::new(VA_BASE),
            gpu: 0,
            dispatch_area: Mutex::new(None),
        })
    }
}

impl KernelRunner {
    /// The KFD process behind the runner.
    pub fn process(&self) -> &Arc<KfdProcess> {
        &self.process
    }

    /// Allocates `bytes` of VRAM (zeroed) and returns its GPU VA.
    pub fn alloc(&self, bytes: u64) -> Result<u64, RunnerError> {
        let size = bytes.max(1).div_ceil(4096) * 4096;
        let va = {
            let mut next = self.next_va.lock().unwrap_or_else(|e| e.into_inner());
            let va = *next;
            // A guard page between buffers, as libhsakmt leaves.
            *next += size + 4096;
            va
        };
        let flags = alloc_flags::VRAM | alloc_flags::WRITABLE | alloc_flags::EXECUTABLE | alloc_flags::PUBLIC;
        self.process.alloc_and_map(self.gpu, va, size, flags)?;
        Ok(va)
    }

    /// Copies `data` to GPU VA `va`.
    pub fn write(&self, va: u64, data: &[u8]) -> Result<(), RunnerError> {
        let vm = self.process.vm();
        Ok(GpuMem::new(&vm).write_bytes(va, data)?)
    }

    /// Copies a slice of plain values to `va`.
    pub fn write_slice<T: Pod>(&self, va: u64, data: &[T]) -> Result<(), RunnerError> {
        self.write(va, bytemuck::cast_slice(data))
    }

    /// Copies `out.len()` bytes from `va`.
    pub fn read(&self, va: u64, out: &mut [u8]) -> Result<(), RunnerError> {
        let vm = self.process.vm();
        Ok(GpuMem::new(&vm).read_bytes(va, out)?)
    }

    /// Reads `n` plain values from `va`.
    pub fn read_vec<T: Pod>(&self, va: u64, n: usize) -> Result<Vec<T>, RunnerError> {
        let mut v = vec![T::zeroed(); n];
        self.read(va, bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }

    /// Allocates a buffer holding `data`.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<u64, RunnerError> {
        let va = self.alloc(std::mem::size_of_val(data) as u64)?;
        self.write_slice(va, data)?;
        Ok(va)
    }

    /// Loads an AMDGPU code object (the ELF a compiler produces for one
    /// target) into GPU memory.
    pub fn load_code_object(&self, elf: &[u8]) -> Result<CodeObject, RunnerError> {
        // Lay out once to learn the size, then again at the real base.
        let size = loader::layout(elf, 0)?.bytes.len() as u64;
        let base = self.alloc(size)?;
        let image = loader::layout(elf, base)?;
        self.write(base, &image.bytes)?;
        let kernels =
            image.kernels.into_iter().map(|(name, off)| (name.clone(), Kernel { name, kd: base + off })).collect();
        Ok(CodeObject { base, kernels })
    }

    /// Places a hand-made kernel (a 64-byte kernel descriptor followed by
    /// its code, `kernel_code_entry_byte_offset` = 64) in GPU memory.
    pub fn load_raw_kernel(&self, descriptor_and_code: &[u8]) -> Result<Kernel, RunnerError> {
        let kd = self.upload(descriptor_and_code)?;
        Ok(Kernel { name: "raw".into(), kd })
    }

    /// Runs `kernel` over `grid` work-items in workgroups of `block`, with
    /// `kernargs` as its argument segment, and waits for it.
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        kernargs: &[u8],
    ) -> Result<(), RunnerError> {
        self.dispatch_with(kernel, grid, block, kernargs, 0, 0)
    }

    /// [`dispatch`](Self::dispatch) with dynamic LDS and private-segment sizes.
    pub fn dispatch_with(
        &self,
        kernel: &Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        kernargs: &[u8],
        dynamic_lds: u32,
        private_segment: u32,
    ) -> Result<(), RunnerError> {
        let area = {
            let mut a = self.dispatch_area.lock().unwrap_or_else(|e| e.into_inner());
            match *a {
                Some(va) => va,
                None => *a.insert(self.alloc(AREA_BYTES)?),
            }
        };
        let kernarg_va = if kernargs.len() as u64 <= AREA_BYTES - AREA_KERNARGS {
            self.write(area + AREA_KERNARGS, kernargs)?;
            area + AREA_KERNARGS
        } else {
            self.upload(kernargs)?
        };
        let static_lds: u32 = self.read_vec::<u32>(kernel.kd, 1)?[0];
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        let packet = KernelDispatch {
            header: packet_type::KERNEL_DISPATCH as u16,
            setup: dims,
            workgroup_size: block.map(|b| b as u16),
            grid_size: grid,
            private_segment_size: private_segment,
            group_segment_size: static_lds + dynamic_lds,
            kernel_object: kernel.kd,
            kernarg_address: kernarg_va,
            ..Default::default()
        };
        let packet_va = area + AREA_PACKET;
        self.write_slice(packet_va, &[packet])?;
        // A zeroed amd_queue_t, for kernels that read their queue pointer.
        let queue_va = area + AREA_QUEUE;
        let context: Arc<dyn Context> = self.process.clone();
        let info = DispatchInfo::new(&context, self.gpu, &packet, packet_va, queue_va)?;
        Ok(self.executor.run(info)?)
    }
}
