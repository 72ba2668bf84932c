//! Hardware registers as `s_getreg_b32`/`s_setreg_b32`/`s_setreg_imm32_b32`
//! see them, and the bit layouts other ops share (MODE, M0 for VGPR
//! indexing).
//!
//! MODE is `Wave::mode` and fully writable; TRAPSTS is `Wave::trapsts`,
//! writable except bits 31:29; STATUS, HW_ID, GPR_ALLOC, LDS_ALLOC are
//! built from the wave and its dispatch; TBA/TMA come from the process's
//! registered trap handler. Unknown registers read 0 and writes to
//! read-only ones are dropped.

use super::dst32;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::{Inst, Op};

/// MODE register bits used by the interpreter beyond the FP modes.
pub mod mode {
    /// VGPR indexing is on (`s_set_gpr_idx_on`): VALU operands selected by
    /// M0[15:12] are offset by M0[7:0] (see [`super::gpr_idx`]).
    pub const GPR_IDX_EN: u32 = 1 << 27;
    /// VSKIP (`s_setvskip`): vector instructions are skipped.
    pub const VSKIP: u32 = 1 << 28;
    /// The fork/join control stack pointer, MODE[31:29].
    pub const CSP: u32 = 7 << CSP_SHIFT;
    pub const CSP_SHIFT: u32 = 29;
}

/// M0 while VGPR indexing is on.
pub mod gpr_idx {
    /// M0[7:0]: the index added to the selected VGPR operands.
    pub const INDEX: u32 = 0xff;
    /// M0[15:12]: which operands are indexed.
    pub const MODES: u32 = 0xf << MODES_SHIFT;
    pub const MODES_SHIFT: u32 = 12;
    pub const SRC0: u32 = 1 << MODES_SHIFT;
    pub const SRC1: u32 = 2 << MODES_SHIFT;
    pub const SRC2: u32 = 4 << MODES_SHIFT;
    pub const DST: u32 = 8 << MODES_SHIFT;
}

/// Hardware register ids (`hwreg(HW_REG_*)`).
pub mod id {
    pub const MODE: u8 = 1;
    pub const STATUS: u8 = 2;
    pub const TRAPSTS: u8 = 3;
    pub const HW_ID: u8 = 4;
    pub const GPR_ALLOC: u8 = 5;
    pub const LDS_ALLOC: u8 = 6;
    pub const IB_STS: u8 = 7;
    pub const SH_MEM_BASES: u8 = 15;
    pub const TBA_LO: u8 = 16;
    pub const TBA_HI: u8 = 17;
    pub const TMA_LO: u8 = 18;
    pub const TMA_HI: u8 = 19;
    /// gfx940+: which XCC the wave runs on.
    pub const XCC_ID: u8 = 20;
}

/// STATUS bits the simulator reports.
pub mod status {
    pub const SCC: u32 = 1 << 0;
    pub const TRAP_EN: u32 = 1 << 6;
    pub const EXECZ: u32 = 1 << 9;
    pub const VCCZ: u32 = 1 << 10;
    pub const IN_TG: u32 = 1 << 11;
    pub const VALID: u32 = 1 << 16;
}

/// TRAPSTS bits 31:29 are read-only.
const TRAPSTS_WRITABLE: u32 = 0x1fff_ffff;

/// SH_MEM_BASES: the private (15:0) and shared (31:16) aperture bases'
/// top 16 bits, consistent with `src_shared_base`/`src_private_base`.
pub const SH_MEM_BASES: u32 = 0x0001_0002;

pub(super) fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SGetregB32 => getreg,
        Op::SSetregB32 => |w, i, c| {
            let v = super::src32(w, i, 0)?;
            setreg(w, i, c, v)
        },
        Op::SSetregImm32B32 => |w, i, c| setreg(w, i, c, i.literal),
        _ => return None,
    };
    Some(h)
}

/// (offset, mask) of the `hwreg(id, offset, size)` field.
fn field(i: &Inst) -> (u8, u32, u32) {
    let f = i.hwreg().unwrap_or(crate::isa::HwReg { id: 0, offset: 0, size: 32 });
    let ones = if f.size >= 32 { u32::MAX } else { (1u32 << f.size) - 1 };
    (f.id, f.offset as u32, ones)
}

fn getreg(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let (id, offset, ones) = field(i);
    let v = read(w, id, ctx);
    dst32(w, i, (v >> offset) & ones)?;
    Ok(Flow::Next)
}

fn setreg(w: &mut Wave, i: &Inst, _: &mut Ctx<'_>, value: u32) -> Result<Flow, ExecError> {
    let (id, offset, ones) = field(i);
    let mask = ((ones as u64) << offset) as u32;
    let bits = ((value as u64) << offset) as u32 & mask;
    match id {
        id::MODE => w.mode = (w.mode & !mask) | bits,
        id::TRAPSTS => {
            let mask = mask & TRAPSTS_WRITABLE;
            w.trapsts = (w.trapsts & !mask) | (bits & mask);
        }
        _ => {}
    }
    Ok(Flow::Next)
}

/// The whole hardware register `id` of wave `w`.
pub fn read(w: &Wave, id: u8, ctx: &Ctx<'_>) -> u32 {
    let d = ctx.dispatch;
    let trap = || d.process.trap_handler(d.gpu);
    match id {
        id::MODE => w.mode,
        id::TRAPSTS => w.trapsts,
        id::STATUS => {
            let waves = d.wg_size.iter().map(|&s| s as usize).product::<usize>().div_ceil(LANES);
            let mut s = status::VALID;
            s |= if w.scc { status::SCC } else { 0 };
            s |= if w.exec == 0 { status::EXECZ } else { 0 };
            s |= if w.vcc == 0 { status::VCCZ } else { 0 };
            s |= if waves > 1 { status::IN_TG } else { 0 };
            s |= if trap().is_some() { status::TRAP_EN } else { 0 };
            s
        }
        // WAVE_ID[3:0], SIMD_ID[5:4]; CU, SE, TG, queue ids 0; VM_ID[23:20]
        // 8 (the first VMID the KFD hands out); ME_ID[31:30] 1 (a MEC).
        id::HW_ID => {
            let k = w.wave_in_group;
            ((k >> 2) & 0xf) | (k & 3) << 4 | 8 << 20 | 1 << 30
        }
        // VGPR_SIZE[13:8] in granules of 8 registers (arch + acc) minus one,
        // SGPR_SIZE[27:24] in granules of 16 minus one (112 SGPRs allocated).
        id::GPR_ALLOC => {
            let vgprs = (d.vgprs + d.agprs).max(1).div_ceil(8) as u32 - 1;
            (vgprs & 0x3f) << 8 | (112 / 16 - 1) << 24
        }
        // LDS_SIZE[20:12] in granules of 128 dwords.
        id::LDS_ALLOC => (d.lds_bytes.div_ceil(512) as u32 & 0x1ff) << 12,
        id::IB_STS => 0,
        id::SH_MEM_BASES => SH_MEM_BASES,
        // TBA/TMA hold address bits 39:8 (LO) and 47:40 (HI).
        id::TBA_LO => trap().map_or(0, |(tba, _)| (tba >> 8) as u32),
        id::TBA_HI => trap().map_or(0, |(tba, _)| (tba >> 40) as u32 & 0xff),
        id::TMA_LO => trap().map_or(0, |(_, tma)| (tma >> 8) as u32),
        id::TMA_HI => trap().map_or(0, |(_, tma)| (tma >> 40) as u32 & 0xff),
        // One XCC per simulated GPU partition.
        id::XCC_ID => 0,
        _ => 0,
    }
}
