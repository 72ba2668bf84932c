//! SMEM: scalar loads, stores and atomics on global memory or through a
//! buffer resource, the time counters, and cache maintenance.
//!
//! Addresses: `sbase + offset (+ soffset)` with the two low bits ignored.
//! Global accesses that miss the GPU VM fault (`ExecError::Fault`). Buffer
//! accesses use the resource's base (V#[47:0]) and are bounds-checked per
//! dword against num_records bytes (num_records × stride when the stride is
//! nonzero): out-of-range dwords read 0 and are not written, and an
//! out-of-range buffer atomic does nothing and returns 0.
//!
//! The caches are not simulated (every access goes to memory), so
//! `s_dcache_*` and `s_atc_probe*` do nothing. `s_scratch_*` stay
//! unimplemented: no compiler or ROCm code emits them.

use super::vmem::atomic::Rmw;
use crate::clock;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::gpu::memory::GpuFault;
use crate::isa::{Ext, Inst, Op, Ty};

/// The engine clock `s_memtime` counts at when the config gives none (MHz).
const DEFAULT_ENGINE_MHZ: u64 = 1700;

pub fn handler(op: Op) -> Option<Handler> {
    use Op::*;
    let h: Handler = match op {
        SLoadDword | SLoadDwordx2 | SLoadDwordx4 | SLoadDwordx8 | SLoadDwordx16 => load,
        SBufferLoadDword | SBufferLoadDwordx2 | SBufferLoadDwordx4 | SBufferLoadDwordx8 | SBufferLoadDwordx16 => {
            buffer_load
        }
        SStoreDword | SStoreDwordx2 | SStoreDwordx4 => store,
        SBufferStoreDword | SBufferStoreDwordx2 | SBufferStoreDwordx4 => buffer_store,
        SMemtime => |w, i, c| {
            let mhz = c.dispatch.process.gpus().get(c.dispatch.gpu).map_or(DEFAULT_ENGINE_MHZ, |d| {
                if d.max_engine_clk_fcompute == 0 {
                    DEFAULT_ENGINE_MHZ
                } else {
                    d.max_engine_clk_fcompute as u64
                }
            });
            let ticks = (clock::monotonic_raw_ns() as u128 * mhz as u128 / 1000) as u64;
            w.write_scalar64(i.dst[0], ticks)?;
            Ok(Flow::Next)
        },
        SMemrealtime => |w, i, _| {
            w.write_scalar64(i.dst[0], clock::gpu_ticks())?;
            Ok(Flow::Next)
        },
        SDcacheInv | SDcacheInvVol | SDcacheWb | SDcacheWbVol | SDcacheDiscard | SDcacheDiscardX2 | SAtcProbe
        | SAtcProbeBuffer => |_, _, _| Ok(Flow::Next),
        _ if rmw(op).is_some() => atomic,
        _ => return None,
    };
    Some(h)
}

/// The SMEM offset: the immediate (signed) plus the SGPR offset.
#[inline]
fn offset(w: &Wave, i: &Inst) -> Result<i64, ExecError> {
    let Ext::Smem(m) = i.ext else { return Ok(0) };
    let mut off = if m.has_imm { m.offset as i64 } else { 0 };
    if !m.soffset.is_none() {
        off += w.read_scalar32(m.soffset, Ty::B32, 0)? as i64;
    }
    Ok(off)
}

/// The dword-aligned global address of a non-buffer access.
#[inline]
fn global_addr(w: &Wave, i: &Inst) -> Result<u64, ExecError> {
    let base = w.read_scalar64(i.src[0], Ty::I64, 0)?;
    Ok(base.wrapping_add(offset(w, i)? as u64) & !3)
}

/// A buffer resource's base and size in bytes.
struct Buffer {
    base: u64,
    limit: u64,
    /// Dword-aligned byte offset of the access (negative: out of range).
    offset: i64,
}

impl Buffer {
    fn of(w: &Wave, i: &Inst) -> Result<Buffer, ExecError> {
        let mut r = [0u32; 4];
        w.read_sgprs(i.src[0], &mut r)?;
        let base = r[0] as u64 | ((r[1] & 0xffff) as u64) << 32;
        let stride = (r[1] >> 16) & 0x3fff;
        let limit = if stride == 0 { r[2] as u64 } else { r[2] as u64 * stride as u64 };
        Ok(Buffer { base, limit, offset: offset(w, i)? & !3 })
    }

    /// The address of dword `k` of `bytes` bytes accessed, if all of them
    /// lie inside the buffer.
    fn addr(&self, k: usize, bytes: u64) -> Option<u64> {
        let o = self.offset + 4 * k as i64;
        (o >= 0 && o as u64 + bytes <= self.limit).then(|| self.base.wrapping_add(o as u64))
    }
}

fn load(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let n = i.dst_regs(0) as usize;
    let addr = global_addr(w, i)?;
    let mut data = [0u32; 16];
    for (k, d) in data[..n].iter_mut().enumerate() {
        *d = ctx.mem.read::<u32>(addr.wrapping_add(4 * k as u64))?;
    }
    w.write_sgprs(i.dst[0], &data[..n])?;
    Ok(Flow::Next)
}

fn buffer_load(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let n = i.dst_regs(0) as usize;
    let buf = Buffer::of(w, i)?;
    let mut data = [0u32; 16];
    for (k, d) in data[..n].iter_mut().enumerate() {
        if let Some(a) = buf.addr(k, 4) {
            *d = ctx.mem.read::<u32>(a)?;
        }
    }
    w.write_sgprs(i.dst[0], &data[..n])?;
    Ok(Flow::Next)
}

fn store(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let n = i.src_regs(1) as usize;
    let mut data = [0u32; 4];
    w.read_sgprs(i.src[1], &mut data[..n])?;
    let addr = global_addr(w, i)?;
    for (k, d) in data[..n].iter().enumerate() {
        ctx.mem.write::<u32>(addr.wrapping_add(4 * k as u64), *d)?;
    }
    Ok(Flow::Next)
}

fn buffer_store(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let n = i.src_regs(1) as usize;
    let mut data = [0u32; 4];
    w.read_sgprs(i.src[1], &mut data[..n])?;
    let buf = Buffer::of(w, i)?;
    for (k, d) in data[..n].iter().enumerate() {
        if let Some(a) = buf.addr(k, 4) {
            ctx.mem.write::<u32>(a, *d)?;
        }
    }
    Ok(Flow::Next)
}

/// (operation, 64-bit, through a buffer resource) of an SMEM atomic.
fn rmw(op: Op) -> Option<(Rmw, bool, bool)> {
    use Op::*;
    use Rmw::*;
    Some(match op {
        SAtomicSwap => (Swap, false, false),
        SAtomicCmpswap => (CmpSwap, false, false),
        SAtomicAdd => (Add, false, false),
        SAtomicSub => (Sub, false, false),
        SAtomicSmin => (SMin, false, false),
        SAtomicUmin => (UMin, false, false),
        SAtomicSmax => (SMax, false, false),
        SAtomicUmax => (UMax, false, false),
        SAtomicAnd => (And, false, false),
        SAtomicOr => (Or, false, false),
        SAtomicXor => (Xor, false, false),
        SAtomicInc => (Inc, false, false),
        SAtomicDec => (Dec, false, false),
        SAtomicSwapX2 => (Swap, true, false),
        SAtomicCmpswapX2 => (CmpSwap, true, false),
        SAtomicAddX2 => (Add, true, false),
        SAtomicSubX2 => (Sub, true, false),
        SAtomicSminX2 => (SMin, true, false),
        SAtomicUminX2 => (UMin, true, false),
        SAtomicSmaxX2 => (SMax, true, false),
        SAtomicUmaxX2 => (UMax, true, false),
        SAtomicAndX2 => (And, true, false),
        SAtomicOrX2 => (Or, true, false),
        SAtomicXorX2 => (Xor, true, false),
        SAtomicIncX2 => (Inc, true, false),
        SAtomicDecX2 => (Dec, true, false),
        SBufferAtomicSwap => (Swap, false, true),
        SBufferAtomicCmpswap => (CmpSwap, false, true),
        SBufferAtomicAdd => (Add, false, true),
        SBufferAtomicSub => (Sub, false, true),
        SBufferAtomicSmin => (SMin, false, true),
        SBufferAtomicUmin => (UMin, false, true),
        SBufferAtomicSmax => (SMax, false, true),
        SBufferAtomicUmax => (UMax, false, true),
        SBufferAtomicAnd => (And, false, true),
        SBufferAtomicOr => (Or, false, true),
        SBufferAtomicXor => (Xor, false, true),
        SBufferAtomicInc => (Inc, false, true),
        SBufferAtomicDec => (Dec, false, true),
        SBufferAtomicSwapX2 => (Swap, true, true),
        SBufferAtomicCmpswapX2 => (CmpSwap, true, true),
        SBufferAtomicAddX2 => (Add, true, true),
        SBufferAtomicSubX2 => (Sub, true, true),
        SBufferAtomicSminX2 => (SMin, true, true),
        SBufferAtomicUminX2 => (UMin, true, true),
        SBufferAtomicSmaxX2 => (SMax, true, true),
        SBufferAtomicUmaxX2 => (UMax, true, true),
        SBufferAtomicAndX2 => (And, true, true),
        SBufferAtomicOrX2 => (Or, true, true),
        SBufferAtomicXorX2 => (Xor, true, true),
        SBufferAtomicIncX2 => (Inc, true, true),
        SBufferAtomicDecX2 => (Dec, true, true),
        _ => return None,
    })
}

fn atomic(w: &mut Wave, i: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let Some((op, wide, buffer)) = rmw(i.op) else { return Err(ExecError::Unimplemented(i.op)) };
    let words = if wide { 2 } else { 1 };
    // Data: the new value, then (compare-swap) the value to compare with.
    let mut raw = [0u32; 4];
    let n = if op == Rmw::CmpSwap { 2 * words } else { words };
    w.read_sgprs(i.src[1], &mut raw[..n])?;
    let join = |lo: usize| if wide { raw[lo] as u64 | (raw[lo + 1] as u64) << 32 } else { raw[lo] as u64 };
    let (data, cmp) = (join(0), if op == Rmw::CmpSwap { join(words) } else { 0 });
    let addr = if buffer { Buffer::of(w, i)?.addr(0, 4 * words as u64) } else { Some(global_addr(w, i)?) };
    let old = match addr {
        None => 0,
        Some(a) if wide => {
            if a % 8 != 0 {
                return Err(ExecError::Fault(GpuFault { va: a, write: true, not_present: false }));
            }
            op.host64(ctx.mem.atomic_u64(a)?, data, cmp)
        }
        Some(a) => u64::from(op.host32(ctx.mem.atomic_u32(a)?, data as u32, cmp as u32)),
    };
    let glc = matches!(i.ext, Ext::Smem(m) if m.glc);
    if glc {
        w.write_sgprs(i.dst[0], &[old as u32, (old >> 32) as u32][..words])?;
    }
    Ok(Flow::Next)
}
