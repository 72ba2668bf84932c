//! From a dispatch packet to running waves: validate the packet, read the
//! kernel descriptor, lay out the grid in workgroups, set up each wave's
//! registers as the hardware does (AMDHSA ABI), and hand the workgroups to the
//! GPU's compute units ([`super::units`]), which admit them in increasing order
//! and time-slice the resident ones on the host workers.

use super::itrace;
use super::kd::{properties, KernelDescriptor};
use super::memory::PRIVATE_BUFFER_BASE;
use super::units::{ComputeUnits, CuShape};
use super::workgroup::{GroupState, WaveFailure};
use super::{ExecError, Wave, LANES};
use crate::gpu::context::Context;
use crate::gpu::cp::aql::KernelDispatch;
use crate::gpu::cp::aql_queue::queue_error;
use crate::gpu::cp::dispatch::{DispatchError, DispatchExecutor, DispatchJob, DispatchTicket};
use crate::gpu::memory::GpuMem;
use crate::gpu::queue::amd_queue;
use crate::isa::Target;
use crate::threads::ThreadHook;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The most work-items one workgroup may have.
pub const MAX_WORKGROUP_SIZE: u64 = 1024;

/// Everything about one dispatch that its waves need.
pub struct DispatchInfo {
    pub target: Target,
    pub process: Arc<dyn Context>,
    pub gpu: usize,
    pub packet: KernelDispatch,
    pub packet_va: u64,
    pub queue_va: u64,
    pub dispatch_id: u64,
    pub kd: KernelDescriptor,
    pub entry_pc: u64,
    pub grid: [u32; 3],
    pub wg_size: [u32; 3],
    pub groups: [u32; 3],
    pub lds_bytes: usize,
    pub private_per_lane: usize,
    pub vgprs: usize,
    pub agprs: usize,
    /// Whether a d16 load keeps the other half of its destination register (LLVM's
    /// `D16PreservesUnusedBits`). Only GPUs without SRAM ECC do; with it (the MI210's
    /// `sramecc+`, every MI300) a d16 load writes zeros there, and compilers rely on it:
    /// Tensile's int8 edge loads OR four `_d16`/`_d16_hi` byte loads into one register.
    pub d16_preserves_unused: bool,
    /// Whether the waves count their instructions by class for the process's statistics
    /// (the loop without counting runs otherwise).
    pub count_instructions: bool,
    /// Whether the dispatch and its workgroup turns go into the process's timeline.
    pub trace: bool,
    /// The instruction trace that matches this dispatch's kernel (`ROCJITSU_ITRACE`).
    pub itrace: Option<&'static itrace::Filter>,
    /// The interpreter alone, or with hot runs translated (`ROCJITSU_ENGINE`).
    pub engine: super::jit::Engine,
}

impl DispatchInfo {
    /// An interrupt from a wave (`s_sendmsg MSG_INTERRUPT`): the KFD event
    /// whose id is the message context.
    pub fn raise_interrupt(&self, context: u32) {
        self.process.interrupt(context);
    }

    /// Number of workgroups.
    pub fn group_count(&self) -> u64 {
        self.groups.iter().map(|&g| g as u64).product()
    }

    /// Validates `packet` and reads its kernel descriptor.
    pub fn new(
        process: &Arc<dyn Context>,
        gpu: usize,
        packet: &KernelDispatch,
        packet_va: u64,
        queue_va: u64,
    ) -> Result<DispatchInfo, DispatchError> {
        let invalid = |code, reason: String| DispatchError::Invalid { code, reason };
        let device =
            process.gpus().get(gpu).ok_or_else(|| invalid(queue_error::INVALID_PACKET, "no such GPU".into()))?;
        let target = match device.gfx_target_version / 100 {
            900 => Target::Gfx90a,
            904 => Target::Gfx942,
            905 => Target::Gfx950,
            _ => {
                return Err(invalid(
                    queue_error::INVALID_CODE,
                    format!("no ISA for gfx_target_version {}", device.gfx_target_version),
                ))
            }
        };
        let dims = packet.dimensions();
        if !(1..=3).contains(&dims) {
            return Err(invalid(queue_error::INVALID_DIMENSION, format!("{dims} grid dimensions")));
        }
        let mut grid = packet.grid_size;
        let mut wg_size = packet.workgroup_size.map(u32::from);
        for d in dims as usize..3 {
            grid[d] = grid[d].max(1);
            wg_size[d] = wg_size[d].max(1);
        }
        if grid.contains(&0) || wg_size.contains(&0) {
            return Err(invalid(queue_error::INVALID_DIMENSION, format!("grid {grid:?}, workgroup {wg_size:?}")));
        }
        if wg_size.iter().map(|&w| w as u64).product::<u64>() > MAX_WORKGROUP_SIZE {
            return Err(invalid(queue_error::GROUP_TOO_LARGE, format!("workgroup {wg_size:?}")));
        }
        if packet.kernel_object == 0 {
            return Err(invalid(queue_error::INVALID_CODE, "null kernel object".into()));
        }
        let vm = process.vm();
        let mut raw = [0u8; KernelDescriptor::BYTES];
        GpuMem::new(&vm).read_bytes(packet.kernel_object, &mut raw)?;
        let kd = KernelDescriptor::parse(&raw);
        if kd.has(properties::WAVEFRONT_SIZE32) {
            return Err(invalid(queue_error::INVALID_CODE, "wave32 kernels do not run on CDNA".into()));
        }
        let lds_bytes = kd.group_segment_fixed_size.max(packet.group_segment_size) as usize;
        if lds_bytes > device.lds_bytes() as usize {
            return Err(invalid(queue_error::INVALID_GROUP_MEMORY, format!("{lds_bytes} bytes of LDS requested")));
        }
        let total_vgprs = kd.vgprs(8) as usize;
        let accum = kd.accum_offset() as usize;
        let agprs = total_vgprs.saturating_sub(accum);
        let groups = [0, 1, 2].map(|d| grid[d].div_ceil(wg_size[d]));
        let dispatch_id = if queue_va != 0 {
            GpuMem::new(&vm).read::<u64>(queue_va + amd_queue::READ_DISPATCH_ID).unwrap_or(0)
        } else {
            0
        };
        Ok(DispatchInfo {
            target,
            process: process.clone(),
            gpu,
            packet: *packet,
            packet_va,
            queue_va,
            dispatch_id,
            kd,
            entry_pc: packet.kernel_object.wrapping_add(kd.entry_offset as u64),
            grid,
            wg_size,
            groups,
            lds_bytes,
            private_per_lane: kd.private_segment_fixed_size.max(packet.private_segment_size) as usize,
            vgprs: total_vgprs.max(1),
            agprs,
            d16_preserves_unused: !device.sramecc(),
            count_instructions: process.stats().is_some(),
            engine: super::jit::Engine::from_env(),
            trace: process.trace().is_some(),
            itrace: itrace::Filter::from_env().filter(|f| {
                let name = crate::gpu::kernel_names::kernel_name(&*process.vm(), packet.kernel_object);
                f.matches_kernel(&name)
            }),
        })
    }

    /// Sets up the waves of workgroup `index` (linear, x fastest) in `state`.
    pub fn init_workgroup(&self, index: u64, state: &mut GroupState) {
        state.index = index;
        let [gx, gy, _] = self.groups.map(|g| g as u64);
        let id = [(index % gx) as u32, ((index / gx) % gy) as u32, (index / (gx * gy)) as u32];
        // The last workgroup of each dimension may be partial.
        let size = [0, 1, 2].map(|d| self.wg_size[d].min(self.grid[d] - id[d] * self.wg_size[d]));
        let items = size.iter().map(|&s| s as usize).product::<usize>();
        let n_waves = items.div_ceil(LANES);
        state.waves.truncate(n_waves);
        while state.waves.len() < n_waves {
            state.waves.push(Wave::new(self.vgprs, self.agprs));
        }
        state.private.resize_with(n_waves, Default::default);
        state.lds.clear();
        state.lds.resize(self.lds_bytes, 0);
        for (k, (w, p)) in state.waves.iter_mut().zip(state.private.iter_mut()).enumerate() {
            self.init_wave(w, k, n_waves, id, size, items);
            p.reset(self.private_per_lane);
        }
    }

    fn init_wave(&self, w: &mut Wave, k: usize, n_waves: usize, id: [u32; 3], size: [u32; 3], items: usize) {
        w.vgpr.resize(self.vgprs, [0; LANES]);
        w.agpr.resize(self.agprs, [0; LANES]);
        w.scc = false;
        w.vcc = 0;
        w.m0 = 0;
        w.flat_scratch = 0;
        w.trapsts = 0;
        w.status = super::WaveStatus::Running;
        w.wave_in_group = k as u32;
        w.pc = self.entry_pc;
        // MODE: FP round/denorm from RSRC1, DX10 clamp (bit 8), IEEE (bit 9).
        w.mode = self.kd.float_mode()
            | (self.kd.dx10_clamp() as u32) << 8
            | (self.kd.ieee_mode() as u32) << 9
            | (self.kd.fp16_ovfl() as u32) << 23;

        let kd = &self.kd;
        let mut s = SgprCursor(0);
        if kd.has(properties::PRIVATE_SEGMENT_BUFFER) {
            // A buffer resource over the private buffer window (a V# base has
            // only 48 bits, so the private aperture itself cannot be named):
            // swizzled, ADD_TID_ENABLE, index stride 64, as ROCR sets it up.
            // Buffer accesses through it reach the lane's private memory.
            s.push(w, PRIVATE_BUFFER_BASE as u32);
            s.push(w, (PRIVATE_BUFFER_BASE >> 32) as u32 & 0xffff | 1 << 31);
            s.push(w, u32::MAX);
            s.push(w, PRIVATE_SEGMENT_WORD3);
        }
        if kd.has(properties::DISPATCH_PTR) {
            s.push64(w, self.packet_va);
        }
        if kd.has(properties::QUEUE_PTR) {
            s.push64(w, self.queue_va);
        }
        if kd.has(properties::KERNARG_SEGMENT_PTR) {
            s.push64(w, self.packet.kernarg_address);
        }
        if kd.has(properties::DISPATCH_ID) {
            s.push64(w, self.dispatch_id);
        }
        if kd.has(properties::FLAT_SCRATCH_INIT) {
            s.push(w, 0);
            s.push(w, self.private_per_lane as u32);
        }
        if kd.has(properties::PRIVATE_SEGMENT_SIZE) {
            s.push(w, self.private_per_lane as u32);
        }
        // System SGPRs start at USER_SGPR_COUNT.
        let mut s = SgprCursor(kd.user_sgpr_count() as usize);
        for (d, enabled) in kd.workgroup_id_enabled().into_iter().enumerate() {
            if enabled {
                s.push(w, id[d]);
            }
        }
        if kd.workgroup_info() {
            s.push(w, ((k == 0) as u32) << 31 | (n_waves as u32 - 1) & 0x3f);
        }
        if kd.private_segment() {
            // Private memory is per wave already: the wave's offset is 0.
            s.push(w, 0);
        }

        // Work-item ids of each lane; EXEC covers the lanes that exist.
        let first = k * LANES;
        let lanes = items.saturating_sub(first).min(LANES);
        w.exec = if lanes == LANES { u64::MAX } else { (1u64 << lanes) - 1 };
        let packed = matches!(self.target, Target::Gfx90a | Target::Gfx942 | Target::Gfx950);
        let dims = kd.workitem_id_dims();
        let (vgpr0, rest) = w.vgpr.split_first_mut().expect("a wave has VGPRs");
        if size[1] == 1 && size[2] == 1 {
            // One dimension (most kernels): lane l is work-item first + l, y and z are 0, and
            // lanes past the last work-item repeat its id, as below.
            let last = (items.max(1) - 1) as u32;
            if first + LANES <= items {
                // A whole wave (all but perhaps the last): a plain count, which the compiler
                // makes vector code (the clamp below it does not).
                for (l, v) in vgpr0.iter_mut().enumerate() {
                    *v = first as u32 + l as u32;
                }
            } else {
                for (l, v) in vgpr0.iter_mut().enumerate() {
                    *v = (first as u32 + l as u32).min(last);
                }
            }
            if !packed {
                for r in rest.iter_mut().take(dims.min(2) as usize) {
                    *r = [0; LANES];
                }
            }
            return;
        }
        // Walk x, y, z incrementally from the wave's first work-item: three integer
        // divisions per lane cost more than the rest of the wave's set-up.
        let first_flat = first.min(items.max(1) - 1) as u32;
        let (mut x, mut y, mut z) =
            (first_flat % size[0], (first_flat / size[0]) % size[1], first_flat / (size[0] * size[1]));
        for l in 0..LANES {
            if packed {
                vgpr0[l] = x | y << 10 | z << 20;
            } else {
                vgpr0[l] = x;
                if dims >= 1 && !rest.is_empty() {
                    rest[0][l] = y;
                }
                if dims >= 2 && rest.len() > 1 {
                    rest[1][l] = z;
                }
            }
            // Lanes past the last work-item repeat its ids (they are not in EXEC).
            if first + l + 1 < items {
                x += 1;
                if x == size[0] {
                    x = 0;
                    y += 1;
                    if y == size[1] {
                        y = 0;
                        z += 1;
                    }
                }
            }
        }
    }
}

/// Word 3 of the private segment buffer descriptor: DST_SEL XYZW, float
/// 32-bit format, INDEX_STRIDE 64 (3 << 21), ADD_TID_ENABLE (1 << 23).
const PRIVATE_SEGMENT_WORD3: u32 = 0x0002_7fac | 3 << 21 | 1 << 23;

/// Writes consecutive SGPRs from an index (the AMDHSA initial-SGPR layout).
struct SgprCursor(usize);

impl SgprCursor {
    fn push(&mut self, w: &mut Wave, v: u32) {
        if let Some(r) = w.sgpr.get_mut(self.0) {
            *r = v;
        }
        self.0 += 1;
    }

    fn push64(&mut self, w: &mut Wave, v: u64) {
        self.push(w, v as u32);
        self.push(w, (v >> 32) as u32);
    }
}

/// The most GPUs one executor serves (the KFD's limit on GPU nodes is lower).
const MAX_GPUS: usize = 64;

/// Runs dispatches on the compute units of each GPU, with `workers` host threads per GPU
/// (`workers - 1` pool threads and the command processor's thread, which helps).
pub struct Executor {
    workers: usize,
    hook: Option<ThreadHook>,
    gpus: Vec<OnceLock<Arc<ComputeUnits>>>,
}

impl Executor {
    pub fn new(workers: usize, hook: Option<ThreadHook>) -> Self {
        Executor { workers: workers.max(1), hook, gpus: (0..MAX_GPUS).map(|_| OnceLock::new()).collect() }
    }

    fn units(&self, gpu: usize, device: &crate::config::Device) -> Result<&Arc<ComputeUnits>, DispatchError> {
        let slot = self.gpus.get(gpu).ok_or_else(|| DispatchError::Invalid {
            code: queue_error::INVALID_PACKET,
            reason: format!("GPU {gpu} is beyond the executor's {MAX_GPUS}"),
        })?;
        Ok(slot.get_or_init(|| ComputeUnits::new(gpu, CuShape::of(device), self.workers, self.hook.clone())))
    }

    /// Runs every workgroup of `info` and waits for the outcome, running workgroups on the
    /// calling thread too (the embedding API's synchronous dispatch).
    pub fn run(&self, info: DispatchInfo) -> Result<(), DispatchError> {
        let device = info.process.gpus().get(info.gpu).cloned().ok_or_else(|| DispatchError::Invalid {
            code: queue_error::INVALID_PACKET,
            reason: format!("no GPU {}", info.gpu),
        })?;
        let units = self.units(info.gpu, &device)?;
        let ticket = DispatchTicket::new(None);
        units.submit(info, ticket.clone(), None);
        loop {
            if let Some(outcome) = ticket.outcome() {
                return outcome.clone();
            }
            if !units.help() {
                ticket.wait_for(Duration::from_millis(1));
            }
        }
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        for units in self.gpus.iter().filter_map(OnceLock::get) {
            units.shutdown();
        }
    }
}

/// Maps a wave failure to what the command processor reports.
pub(super) fn failure_to_error(f: WaveFailure) -> DispatchError {
    let what = if f.inst.is_empty() { f.error.to_string() } else { format!("{} ({})", f.error, f.inst) };
    match f.error {
        ExecError::Fault(fault) => {
            tracing::error!("GPU page fault at PC {:#x}: {what}", f.pc);
            DispatchError::Fault(fault)
        }
        ExecError::Trap(_) => DispatchError::Invalid { code: 0x8000_0000, reason: format!("{what} at PC {:#x}", f.pc) },
        ExecError::PrivateOutOfRange { .. } => {
            DispatchError::Invalid { code: queue_error::MEMORY_VIOLATION, reason: format!("{what} at PC {:#x}", f.pc) }
        }
        _ => DispatchError::Illegal { pc: f.pc, what },
    }
}

impl DispatchExecutor for Executor {
    fn start(&self, job: &DispatchJob<'_>, ticket: &Arc<DispatchTicket>) -> Result<(), DispatchError> {
        let info = DispatchInfo::new(job.process, job.gpu, &job.packet, job.packet_va, job.amd_queue)?;
        let device = &job.process.gpus()[job.gpu];
        self.units(job.gpu, device)?.submit(info, ticket.clone(), job.queue.cloned());
        Ok(())
    }

    fn help(&self, gpu: usize) -> bool {
        self.gpus.get(gpu).and_then(OnceLock::get).is_some_and(|units| units.help())
    }
}
