//! MUBUF and MTBUF: accesses through a buffer resource descriptor (V#).
//!
//! Address of a lane: `base + soffset + offset + index * stride` with
//! `index = vindex (idxen) + lane (ADD_TID_ENABLE)` and
//! `offset = voffset (offen) + instruction offset`; swizzled buffers
//! interleave `index_stride` records of 4-byte elements.
//!
//! Range checking (gfx9): a raw buffer (stride 0) is out of range where
//! `soffset + offset` reaches `num_records` bytes, per dword for multi-dword
//! accesses (gem5's Vega model checks `offset >= num_records - soffset` too);
//! a structured buffer is out of range when `index >= num_records`. Typed
//! accesses and atomics are all-or-nothing. Out-of-range loads return 0,
//! stores and atomics are dropped. Tensile's GEMM kernels step through K with
//! soffset and rely on the loads past the matrix reading zeros: rocBLAS's
//! tests pad matrices with NaN, and a check without soffset let it in.
//!
//! A descriptor whose base lies in the private buffer window
//! ([`PRIVATE_BUFFER_BASE`], the private segment buffer of s[0:3]) reaches
//! each lane's private memory: the swizzled, wave-interleaved scratch address
//! (SOFFSET is wave-scaled) is folded back to the lane's own offset
//! ([`private_lane_offset`]).

use super::access::{self, Access, Data, Space};
use super::format::{self, DataFormat, Format, NumFormat};
use super::Kind;
use crate::gpu::exec::memory::private_buffer_offset;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave, LANES};
use crate::isa::{Ext, Inst, Op, OpClass, Ty};

pub fn handler(op: Op) -> Option<Handler> {
    matches!(op.info().class, OpClass::Mubuf | OpClass::Mtbuf).then_some(exec as Handler)
}

/// A buffer resource descriptor (the fields the simulator uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vsharp {
    pub base: u64,
    pub stride: u32,
    pub swizzle: bool,
    pub num_records: u32,
    pub dst_sel: u32,
    pub nfmt: u8,
    pub dfmt: u8,
    /// Records interleaved when swizzled: 8, 16, 32 or 64.
    pub index_stride: u32,
    pub add_tid: bool,
}

impl Vsharp {
    pub fn parse(d: [u32; 4]) -> Vsharp {
        Vsharp {
            base: d[0] as u64 | ((d[1] & 0xffff) as u64) << 32,
            stride: (d[1] >> 16) & 0x3fff,
            swizzle: d[1] >> 31 != 0,
            num_records: d[2],
            dst_sel: d[3] & 0xfff,
            nfmt: (d[3] >> 12 & 7) as u8,
            dfmt: (d[3] >> 15 & 0xf) as u8,
            index_stride: 8 << (d[3] >> 21 & 3),
            add_tid: d[3] >> 23 & 1 != 0,
        }
    }
}

fn exec(w: &mut Wave, inst: &Inst, ctx: &mut Ctx<'_>) -> Result<Flow, ExecError> {
    let Some(kind) = super::kind(inst.op) else { return Err(ExecError::Unimplemented(inst.op)) };
    if kind == Kind::Cache {
        return Ok(Flow::Next);
    }
    let Ext::Buf(b) = inst.ext else { return Err(ExecError::Invalid(format!("{} without MUBUF fields", inst.op))) };
    let mut raw = [0u32; 4];
    w.read_sgprs(inst.src[2], &mut raw)?;
    let v = Vsharp::parse(raw);
    let acc = addresses(w, inst, &v)?;
    match kind {
        Kind::Load(ld) if b.lds => super::flat::run(w, inst, ctx, Kind::LoadLds(ld), &acc)?,
        Kind::LoadFormat { comps, d16, hi } => {
            let fmt = format_of(inst, &v)?;
            load_format(w, inst, ctx, acc, &v, fmt, comps, d16, hi)?
        }
        Kind::StoreFormat { comps, d16, hi } => {
            let fmt = format_of(inst, &v)?;
            store_format(w, inst, ctx, acc, &v, fmt, comps, d16, hi)?
        }
        Kind::Atomic { wide, .. } => {
            let acc = all_or_nothing(acc, if wide { 8 } else { 4 });
            super::flat::run(w, inst, ctx, kind, &acc)?
        }
        _ => super::flat::run(w, inst, ctx, kind, &acc)?,
    }
    Ok(Flow::Next)
}

/// The lane addresses (and range limits) of a MUBUF/MTBUF instruction.
pub fn addresses(w: &Wave, inst: &Inst, v: &Vsharp) -> Result<Access, ExecError> {
    let Ext::Buf(b) = inst.ext else { return Err(ExecError::Invalid(format!("{} without MUBUF fields", inst.op))) };
    let soffset = w.read_scalar32(b.soffset, Ty::B32, 0)? as u64;
    let vidx = if b.idxen { Some(w.vreg(inst.src[0], 0)?) } else { None };
    let voff = if b.offen { Some(w.vreg(inst.src[0], b.idxen as usize)?) } else { None };
    let private = private_buffer_offset(v.base);
    let mut acc = Access::new(if private.is_some() { Space::Private } else { Space::Global });
    let mut avail = [u64::MAX; LANES];
    let stride = v.stride as u64;
    for l in 0..LANES {
        let vi = vidx.map_or(0, |r| r[l]) as u64;
        let index = vi + if v.add_tid { l as u64 } else { 0 };
        let offset = voff.map_or(0, |r| r[l]) as u64 + b.offset as u64;
        avail[l] = if stride == 0 {
            (v.num_records as u64).saturating_sub(offset + soffset)
        } else if index < v.num_records as u64 {
            u64::MAX
        } else {
            0
        };
        acc.addr[l] = match private {
            Some(p) => private_lane_offset(p + soffset, offset, l) + vi * stride,
            None if v.swizzle && stride != 0 => {
                let is = v.index_stride as u64;
                let (imsb, ilsb) = (index / is, index % is);
                let (omsb, olsb) = (offset / 4, offset % 4);
                v.base + soffset + (imsb * stride + omsb * 4) * is + ilsb * 4 + olsb
            }
            None => v.base + soffset + offset + index * stride,
        };
    }
    acc.avail = Some(avail);
    Ok(acc)
}

/// Lane `lane`'s offset in its private memory for a private-segment buffer access at
/// `offset` from the wave's scratch byte offset `wave_base` (V# base + SOFFSET).
///
/// The private segment buffer is swizzled with 4-byte elements and an index stride of 64
/// (ADD_TID): the wave's scratch interleaves its lanes' dwords, lane `l`'s byte `o` sitting
/// at `(o / 4) * 256 + l * 4 + o % 4`. SOFFSET and the base are byte offsets in that
/// interleaved space — the compiler's stack and frame pointers are wave-scaled (a per-lane
/// offset times 64), so a callee's frame at s32 = 0x1000 starts 0x40 bytes into each lane's
/// memory. The simulator keeps each lane's private memory apart, so the interleaved address
/// is folded back to the lane's own offset.
fn private_lane_offset(wave_base: u64, offset: u64, lane: usize) -> u64 {
    let interleaved = wave_base + (offset / 4) * 256 + lane as u64 * 4 + offset % 4;
    (interleaved / 256) * 4 + interleaved % 4
}

/// Makes a lane's access all-or-nothing for `bytes` bytes.
fn all_or_nothing(mut acc: Access, bytes: u64) -> Access {
    if let Some(a) = acc.avail.as_mut() {
        for x in a.iter_mut() {
            *x = if *x >= bytes { u64::MAX } else { 0 };
        }
    }
    acc
}

/// The element format: the instruction's (MTBUF) or the descriptor's (MUBUF).
fn format_of(inst: &Inst, v: &Vsharp) -> Result<Format, ExecError> {
    let (dfmt, nfmt) = match inst.ext {
        Ext::Buf(b) if inst.info().class == OpClass::Mtbuf => (b.dfmt, b.nfmt),
        _ => (v.dfmt, v.nfmt),
    };
    let bad = || ExecError::Invalid(format!("{}: buffer format {dfmt}/{nfmt} is not supported", inst.op));
    let data = DataFormat::from_code(dfmt).filter(|_| dfmt <= 14).ok_or_else(bad)?;
    let num = NumFormat::from_code(nfmt).filter(|n| *n != NumFormat::Srgb).ok_or_else(bad)?;
    Ok(Format { data, num })
}

/// Reads one typed element per active lane and converts it to components.
pub fn read_elements(ctx: &mut Ctx<'_>, acc: &Access, exec: u64, fmt: &Format) -> Result<[[u32; 4]; LANES], ExecError> {
    let bytes = fmt.data.bytes as u64;
    let mut raw: Data = [[0; LANES]; 4];
    access::load(ctx, acc, exec, bytes, &mut raw)?;
    let mut out = [[0u32; 4]; LANES];
    access::for_lanes(exec, |l| {
        let mut b = [0u8; 16];
        for d in 0..4 {
            b[4 * d..4 * d + 4].copy_from_slice(&raw[d][l].to_le_bytes());
        }
        out[l] = fmt.unpack(&b[..bytes as usize]);
    });
    Ok(out)
}

/// Converts components to typed elements and writes them.
pub fn write_elements(
    ctx: &mut Ctx<'_>,
    acc: &Access,
    exec: u64,
    fmt: &Format,
    comps: &[[u32; 4]; LANES],
) -> Result<(), ExecError> {
    let bytes = fmt.data.bytes as usize;
    let mut raw: Data = [[0; LANES]; 4];
    access::for_lanes(exec, |l| {
        let mut b = [0u8; 16];
        fmt.pack(&comps[l], &mut b[..bytes]);
        for d in 0..4 {
            raw[d][l] = u32::from_le_bytes(b[4 * d..4 * d + 4].try_into().unwrap_or_default());
        }
    });
    access::store(ctx, acc, exec, bytes as u64, &raw)
}

/// 16-bit form of a component for d16 loads: f16 for float-valued formats,
/// the low 16 bits for integer formats.
pub fn to_d16(c: u32, fmt: &Format) -> u32 {
    if fmt.num.is_integer() {
        c & 0xffff
    } else {
        format::f32_to_f16(f32::from_bits(c)) as u32
    }
}

/// A component from a d16 register half.
pub fn from_d16(h: u32, fmt: &Format) -> u32 {
    match fmt.num {
        NumFormat::Uint => h & 0xffff,
        NumFormat::Sint => h as u16 as i16 as i32 as u32,
        _ => format::f16_to_f32(h as u16).to_bits(),
    }
}

/// Puts `comps` components per lane into registers (packed two per
/// register with d16; `hi` writes only the high half of one register). A single
/// d16 component keeps the register's other half when `preserve` (a GPU without
/// SRAM ECC, [`crate::gpu::exec::dispatch::DispatchInfo::d16_preserves_unused`]),
/// else zeros it.
#[allow(clippy::too_many_arguments)]
pub fn components_to_regs(
    w: &mut Wave,
    inst: &Inst,
    exec: u64,
    fmt: &Format,
    vals: &[[u32; 4]; LANES],
    comps: usize,
    d16: bool,
    hi: bool,
    preserve: bool,
) -> Result<(), ExecError> {
    let mut regs: Data = [[0; LANES]; 4];
    let n = if d16 { comps.div_ceil(2) } else { comps };
    let old = if preserve { *w.vreg(inst.dst[0], 0)? } else { [0; LANES] };
    access::for_lanes(exec, |l| {
        if !d16 {
            for c in 0..comps {
                regs[c][l] = vals[l][c];
            }
        } else if hi {
            regs[0][l] = (old[l] & 0xffff) | to_d16(vals[l][0], fmt) << 16;
        } else {
            for c in 0..comps {
                let h = to_d16(vals[l][c], fmt);
                regs[c / 2][l] |= h << (16 * (c % 2));
            }
            if comps == 1 {
                regs[0][l] |= old[l] & 0xffff_0000;
            }
        }
    });
    access::scatter(w, inst.dst[0], n, exec, &regs)
}

/// Reads `comps` components per lane from registers (missing ones 0).
pub fn regs_to_components(
    w: &Wave,
    inst: &Inst,
    fmt: &Format,
    comps: usize,
    d16: bool,
    hi: bool,
) -> Result<[[u32; 4]; LANES], ExecError> {
    let n = if d16 { comps.div_ceil(2) } else { comps };
    let regs = access::gather(w, inst.src[1], n)?;
    let mut out = [[0u32; 4]; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        for c in 0..comps {
            o[c] = if !d16 {
                regs[c][l]
            } else if hi {
                from_d16(regs[0][l] >> 16, fmt)
            } else {
                from_d16(regs[c / 2][l] >> (16 * (c % 2)), fmt)
            };
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn load_format(
    w: &mut Wave,
    inst: &Inst,
    ctx: &mut Ctx<'_>,
    acc: Access,
    v: &Vsharp,
    fmt: Format,
    comps: u8,
    d16: bool,
    hi: bool,
) -> Result<(), ExecError> {
    let acc = all_or_nothing(acc, fmt.data.bytes as u64);
    let exec = w.exec;
    let mut vals = read_elements(ctx, &acc, exec, &fmt)?;
    let one = fmt.one();
    access::for_lanes(exec, |l| {
        let in_range = acc.avail.as_ref().is_none_or(|a| a[l] != 0);
        vals[l] = if in_range { format::dst_sel(v.dst_sel, &vals[l], one) } else { [0; 4] };
    });
    let preserve = ctx.dispatch.d16_preserves_unused;
    components_to_regs(w, inst, exec, &fmt, &vals, comps as usize, d16, hi, preserve)
}

#[allow(clippy::too_many_arguments)]
fn store_format(
    w: &mut Wave,
    inst: &Inst,
    ctx: &mut Ctx<'_>,
    acc: Access,
    v: &Vsharp,
    fmt: Format,
    comps: u8,
    d16: bool,
    hi: bool,
) -> Result<(), ExecError> {
    let acc = all_or_nothing(acc, fmt.data.bytes as u64);
    let mut vals = regs_to_components(w, inst, &fmt, comps as usize, d16, hi)?;
    for c in vals.iter_mut() {
        *c = format::undo_dst_sel(v.dst_sel, c);
    }
    write_elements(ctx, &acc, w.exec, &fmt, &vals)
}
