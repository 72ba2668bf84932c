//! Per-lane memory access shared by the vector memory families: where each
//! lane's address points (global memory, LDS, the lane's private memory),
//! loads, stores and atomics over the active lanes, and moving data between
//! registers and per-lane buffers.
//!
//! The common case — every active lane in one global mapping — translates
//! the address range once ([`WaveMem::span`]) and runs a tight loop; other
//! cases go lane by lane.

use super::atomic::Rmw;
use crate::gpu::exec::memory::{all_global, flat_target, FlatSegment};
use crate::gpu::exec::{Ctx, ExecError, Lanes, Wave, LANES};
use crate::isa::Operand;

/// Up to four dwords per lane (the widest vector memory access).
pub type Data = [Lanes; 4];

/// Which memory the lane addresses of an [`Access`] name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// GPU virtual addresses.
    Global,
    /// Byte offsets in each lane's private memory.
    Private,
    /// FLAT addresses: each lane's aperture decides.
    Flat,
}

/// The addresses of one instruction's active lanes.
pub struct Access {
    pub addr: [u64; LANES],
    pub space: Space,
    /// Bytes accessible from each lane's address (buffer range checks);
    /// `None` when unlimited. Inaccessible bytes read as 0 and are not
    /// written.
    pub avail: Option<[u64; LANES]>,
}

/// Where one lane's access goes.
#[derive(Clone, Copy)]
enum Loc {
    Global(u64),
    Lds(u32),
    Private(u64),
}

impl Access {
    pub fn new(space: Space) -> Access {
        Access { addr: [0; LANES], space, avail: None }
    }

    fn loc(&self, l: usize) -> Loc {
        let a = self.addr[l];
        match self.space {
            Space::Global => Loc::Global(a),
            Space::Private => Loc::Private(a),
            Space::Flat => match flat_target(a) {
                FlatSegment::Global(g) => Loc::Global(g),
                FlatSegment::Lds(o) => Loc::Lds(o),
                FlatSegment::Private(o) => Loc::Private(o),
            },
        }
    }

    /// Whether `[addr + from, addr + to)` of lane `l` is accessible.
    #[inline]
    fn ok(&self, l: usize, to: u64) -> bool {
        self.avail.as_ref().is_none_or(|a| a[l] >= to)
    }

    /// `[lowest address, highest address + bytes)` over the active lanes when
    /// they all address global memory and every lane has all `bytes`
    /// accessible (for [`WaveMem::span`]).
    fn global_bounds(&self, exec: u64, bytes: u64) -> Option<(u64, u64)> {
        if exec == 0 || self.space == Space::Private {
            return None;
        }
        let (mut lo, mut hi, mut min_avail) = (u64::MAX, 0u64, u64::MAX);
        let avail = self.avail.as_ref();
        if exec == u64::MAX {
            for &a in &self.addr {
                lo = lo.min(a);
                hi = hi.max(a);
            }
            if let Some(av) = avail {
                min_avail = av.iter().copied().min().unwrap_or(0);
            }
        } else {
            for_lanes(exec, |l| {
                let a = self.addr[l];
                lo = lo.min(a);
                hi = hi.max(a);
                if let Some(av) = avail {
                    min_avail = min_avail.min(av[l]);
                }
            });
        }
        if min_avail < bytes {
            return None;
        }
        let hi = hi.checked_add(bytes)?;
        if self.space == Space::Flat && (flat_target(lo) != FlatSegment::Global(lo) || !all_global(lo, hi)) {
            return None;
        }
        Some((lo, hi))
    }

    /// One translation covering every active lane's `bytes`, when the fast
    /// path applies (all global, all in range, one mapping).
    pub fn span(&self, ctx: &Ctx<'_>, exec: u64, bytes: u64) -> Option<crate::gpu::exec::memory::Span> {
        self.global_bounds(exec, bytes).and_then(|(lo, hi)| ctx.mem.span(lo, hi))
    }

    /// [`Access::span`] for writing.
    pub fn span_mut(&self, ctx: &Ctx<'_>, exec: u64, bytes: u64) -> Option<crate::gpu::exec::memory::WriteSpan> {
        self.global_bounds(exec, bytes).and_then(|(lo, hi)| ctx.mem.span_mut(lo, hi))
    }
}

/// Copies the lanes of `src` set in `mask` into `dst`.
#[inline]
pub fn merge_lanes(dst: &mut [u32; LANES], src: &[u32; LANES], mask: u64) {
    if mask == u64::MAX {
        *dst = *src;
    } else {
        for_lanes(mask, |l| dst[l] = src[l]);
    }
}

/// Calls `f` for each set bit of `mask`, lowest first.
pub use crate::gpu::exec::memory::for_each_lane as for_lanes;

fn lds_range(lds: &[u8], off: u32, len: usize) -> Option<std::ops::Range<usize>> {
    let s = off as usize;
    (s + len <= lds.len()).then_some(s..s + len)
}

/// Reads LDS; an access reaching beyond the allocation reads 0.
pub fn lds_read(lds: &[u8], off: u32, out: &mut [u8]) {
    match lds_range(lds, off, out.len()) {
        Some(r) => out.copy_from_slice(&lds[r]),
        None => out.fill(0),
    }
}

/// Writes LDS; an access reaching beyond the allocation is dropped.
pub fn lds_write(lds: &mut [u8], off: u32, data: &[u8]) {
    if let Some(r) = lds_range(lds, off, data.len()) {
        lds[r].copy_from_slice(data)
    }
}

fn read_loc(ctx: &mut Ctx<'_>, l: usize, loc: Loc, out: &mut [u8]) -> Result<(), ExecError> {
    match loc {
        Loc::Global(va) => ctx.mem.read_bytes(va, out)?,
        Loc::Lds(o) => lds_read(ctx.lds, o, out),
        Loc::Private(o) => ctx.private.read(l, o, out)?,
    }
    Ok(())
}

fn write_loc(ctx: &mut Ctx<'_>, l: usize, loc: Loc, data: &[u8]) -> Result<(), ExecError> {
    match loc {
        Loc::Global(va) => ctx.mem.write_bytes(va, data)?,
        Loc::Lds(o) => lds_write(ctx.lds, o, data),
        Loc::Private(o) => ctx.private.write(l, o, data)?,
    }
    Ok(())
}

/// Loads `bytes` (1, 2, 4, 8, 12 or 16) per active lane into `out`
/// (little-endian dwords; sub-dword values zero-extended). Lanes or dwords
/// out of range read 0.
pub fn load(ctx: &mut Ctx<'_>, acc: &Access, exec: u64, bytes: u64, out: &mut Data) -> Result<(), ExecError> {
    let dwords = bytes.div_ceil(4) as usize;
    if let Some(span) = acc.span(ctx, exec, bytes) {
        let a = &acc.addr;
        match bytes {
            1 => for_lanes(exec, |l| out[0][l] = span.read::<u8>(a[l]).unwrap_or(0) as u32),
            2 => for_lanes(exec, |l| out[0][l] = span.read::<u16>(a[l]).unwrap_or(0) as u32),
            _ => {
                // 64-bit halves in one access each (single-copy atomic when aligned).
                let mut d = 0;
                while d + 1 < dwords {
                    let (lo, hi) = out.split_at_mut(d + 1);
                    span.gather_u64(a, exec, 4 * d as u64, &mut lo[d], &mut hi[0]);
                    d += 2;
                }
                if d < dwords {
                    span.gather_u32(a, exec, 4 * d as u64, &mut out[d]);
                }
            }
        }
        return Ok(());
    }
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let mut buf = [0u8; 16];
        let b = &mut buf[..bytes as usize];
        if bytes < 4 {
            if acc.ok(l, bytes) {
                read_loc(ctx, l, acc.loc(l), b)?;
            }
        } else {
            for d in 0..dwords {
                if acc.ok(l, 4 * d as u64 + 4) {
                    read_loc(ctx, l, loc_at(acc, l, 4 * d as u64), &mut b[4 * d..4 * d + 4])?;
                }
            }
        }
        for (d, o) in out.iter_mut().enumerate().take(dwords) {
            let mut w = [0u8; 4];
            let n = (bytes as usize - 4 * d).min(4);
            w[..n].copy_from_slice(&buf[4 * d..4 * d + n]);
            o[l] = u32::from_le_bytes(w);
        }
    }
    Ok(())
}

/// The location of lane `l`'s address plus `delta`.
fn loc_at(acc: &Access, l: usize, delta: u64) -> Loc {
    match acc.loc(l) {
        Loc::Global(a) => Loc::Global(a.wrapping_add(delta)),
        Loc::Lds(o) => Loc::Lds(o.wrapping_add(delta as u32)),
        Loc::Private(o) => Loc::Private(o.wrapping_add(delta)),
    }
}

/// Stores `bytes` (1, 2, 4, 8, 12 or 16) per active lane from `data`
/// (sub-dword values from the low bits). Out-of-range lanes or dwords are
/// dropped.
pub fn store(ctx: &mut Ctx<'_>, acc: &Access, exec: u64, bytes: u64, data: &Data) -> Result<(), ExecError> {
    let dwords = bytes.div_ceil(4) as usize;
    if let Some(span) = acc.span_mut(ctx, exec, bytes) {
        let a = &acc.addr;
        match bytes {
            1 => for_lanes(exec, |l| {
                span.write(a[l], data[0][l] as u8);
            }),
            2 => for_lanes(exec, |l| {
                span.write(a[l], data[0][l] as u16);
            }),
            _ => {
                let mut d = 0;
                while d + 1 < dwords {
                    span.scatter_u64(a, exec, 4 * d as u64, &data[d], &data[d + 1]);
                    d += 2;
                }
                if d < dwords {
                    span.scatter_u32(a, exec, 4 * d as u64, &data[d]);
                }
            }
        }
        return Ok(());
    }
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        if bytes < 4 {
            if acc.ok(l, bytes) {
                write_loc(ctx, l, acc.loc(l), &data[0][l].to_le_bytes()[..bytes as usize])?;
            }
        } else {
            for (d, v) in data.iter().enumerate().take(dwords) {
                if acc.ok(l, 4 * d as u64 + 4) {
                    write_loc(ctx, l, loc_at(acc, l, 4 * d as u64), &v[l].to_le_bytes())?;
                }
            }
        }
    }
    Ok(())
}

/// Runs `rmw` on each active lane's 32-bit (or, with `wide`, 64-bit)
/// word. `data[0]` (`data[0..2]` wide) is the operand, `data[1]`
/// (`data[2..4]`) the compare value or mask. Returns the old values in
/// `old[0]` (`old[0..2]`); out-of-range lanes do nothing and return 0.
pub fn atomic(
    ctx: &mut Ctx<'_>,
    acc: &Access,
    exec: u64,
    rmw: Rmw,
    wide: bool,
    data: &Data,
    old: &mut Data,
) -> Result<(), ExecError> {
    let size = if wide { 8 } else { 4 };
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        if !acc.ok(l, size) {
            old[0][l] = 0;
            old[1][l] = 0;
            continue;
        }
        if wide {
            let d = data[0][l] as u64 | (data[1][l] as u64) << 32;
            let c = data[2][l] as u64 | (data[3][l] as u64) << 32;
            let prev = match acc.loc(l) {
                Loc::Global(va) => rmw.host64(ctx.mem.atomic_u64(va)?, d, c),
                loc => {
                    let mut b = [0u8; 8];
                    let loc2 = loc;
                    read_loc(ctx, l, loc, &mut b)?;
                    let prev = u64::from_le_bytes(b);
                    write_loc(ctx, l, loc2, &rmw.apply64(prev, d, c).to_le_bytes())?;
                    prev
                }
            };
            old[0][l] = prev as u32;
            old[1][l] = (prev >> 32) as u32;
        } else {
            let (d, c) = (data[0][l], data[1][l]);
            old[0][l] = match acc.loc(l) {
                Loc::Global(va) => rmw.host32(ctx.mem.atomic_u32(va)?, d, c),
                loc => {
                    let mut b = [0u8; 4];
                    let loc2 = loc;
                    read_loc(ctx, l, loc, &mut b)?;
                    let prev = u32::from_le_bytes(b);
                    write_loc(ctx, l, loc2, &rmw.apply32(prev, d, c).to_le_bytes())?;
                    prev
                }
            };
        }
    }
    Ok(())
}

// ----- registers -------------------------------------------------------------

/// Reads `n` consecutive data registers starting at `op`.
pub fn gather(w: &Wave, op: Operand, n: usize) -> Result<Data, ExecError> {
    let mut d = [[0; LANES]; 4];
    for (i, r) in d.iter_mut().enumerate().take(n) {
        *r = *w.vreg(op, i)?;
    }
    Ok(d)
}

/// Writes the active lanes of `n` consecutive registers starting at `op`.
pub fn scatter(w: &mut Wave, op: Operand, n: usize, exec: u64, vals: &Data) -> Result<(), ExecError> {
    for (i, v) in vals.iter().enumerate().take(n) {
        let dst = w.vreg_mut(op, i)?;
        if exec == u64::MAX {
            *dst = *v;
        } else {
            for_lanes(exec, |l| dst[l] = v[l]);
        }
    }
    Ok(())
}

/// How a load's value lands in its destination register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    /// The whole register (sub-dword values extended to 32 bits).
    Full,
    /// Bits 15:0, keeping 31:16 (`_d16`).
    Lo,
    /// Bits 31:16, keeping 15:0 (`_d16_hi`).
    Hi,
}

/// A load's shape: bytes per lane, sign extension, destination half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ld {
    pub bytes: u8,
    pub signed: bool,
    pub half: Half,
}

impl Ld {
    pub const fn dwords(n: u8) -> Ld {
        Ld { bytes: 4 * n, signed: false, half: Half::Full }
    }
    pub const fn sub(bytes: u8, signed: bool, half: Half) -> Ld {
        Ld { bytes, signed, half }
    }

    /// Number of destination registers.
    pub fn regs(&self) -> usize {
        (self.bytes as usize).div_ceil(4)
    }

    /// Merges loaded sub-dword values into the old register contents.
    pub fn merge(&self, raw: &mut Data, old: &Lanes, exec: u64) {
        if self.bytes >= 4 {
            return;
        }
        let bits = 8 * self.bytes as u32;
        let (signed, half) = (self.signed, self.half);
        let r = &mut raw[0];
        for_lanes(exec, |l| {
            let v = r[l];
            let ext = if signed { (((v << (32 - bits)) as i32) >> (32 - bits)) as u32 } else { v };
            r[l] = match half {
                Half::Full => ext,
                Half::Lo => (old[l] & 0xffff_0000) | (ext & 0xffff),
                Half::Hi => (old[l] & 0xffff) | ext << 16,
            };
        });
    }
}

/// A store's shape: bytes per lane, and whether sub-dword data comes from
/// the high half of the register (`_d16_hi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct St {
    pub bytes: u8,
    pub hi: bool,
}

impl St {
    pub const fn dwords(n: u8) -> St {
        St { bytes: 4 * n, hi: false }
    }

    pub fn regs(&self) -> usize {
        (self.bytes as usize).div_ceil(4)
    }

    /// Moves `_d16_hi` data down to the low bits.
    pub fn prepare(&self, data: &mut Data) {
        if self.hi {
            for v in data[0].iter_mut() {
                *v >>= 16;
            }
        }
    }
}
