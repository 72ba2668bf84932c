//! Lane loops shared by the integer, compare and lane ops: read the
//! sources (with modifiers, through [`super::common`]), run a per-lane function
//! and write the result straight into the destination register under the
//! write mask.
//!
//! Every driver is generic over the per-lane function, so an op's handler
//! is one closure and the loop is monomorphised for it. Sources read
//! unchanged come straight from the register file (the destination is
//! split off it, so nothing is copied); only constants, SGPRs, modified or
//! DPP-moved lanes, and a source that is the destination itself are
//! materialised in a local buffer. With EXEC all ones and a plain
//! destination the loop has no per-lane branch.

use super::common::{
    direct_src, expand_mask, plain_write, plan, read_lane_mask, src32_into, src64_into, write32, write64,
    write_lane_mask, Plan,
};
use crate::gpu::exec::wave::{Lanes, Wave, LANES};
use crate::gpu::exec::{ExecError, Flow};
use crate::isa::{Inst, Operand};

/// Lanes of a source whose register does not exist (reported as an error
/// before any lane is used).
static NO_LANES: Lanes = [0; LANES];

/// Fills `bufs` with the sources of `inst` that must be computed, and
/// returns the registers of the others (read straight from a register
/// other than `dst`).
#[inline(always)]
fn buffers<const N: usize>(
    w: &Wave,
    inst: &Inst,
    p: &Plan,
    dst: Option<Operand>,
    bufs: &mut [Option<Lanes>; N],
) -> Result<[Option<Operand>; N], ExecError> {
    let mut regs = [None; N];
    for (i, (r, b)) in regs.iter_mut().zip(bufs.iter_mut()).enumerate() {
        match direct_src(inst, i) {
            Some(op) if Some(op) != dst => *r = Some(op),
            _ => src32_into(w, inst, i, p, b.insert([0; LANES]))?,
        }
    }
    Ok(regs)
}

/// Runs `f` on the sources' lanes (read-only access to the wave).
#[inline(always)]
pub fn with_srcs<const N: usize, R>(
    w: &Wave,
    inst: &Inst,
    p: &Plan,
    f: impl FnOnce([&Lanes; N]) -> R,
) -> Result<R, ExecError> {
    let mut bufs = [None; N];
    let regs = buffers::<N>(w, inst, p, None, &mut bufs)?;
    let mut srcs = [&NO_LANES; N];
    for (s, (r, b)) in srcs.iter_mut().zip(regs.iter().zip(&bufs)) {
        *s = match (r, b) {
            (Some(op), _) => w.vreg(*op, 0)?,
            (None, Some(b)) => b,
            (None, None) => &NO_LANES,
        };
    }
    Ok(f(srcs))
}

/// Runs `f` on the destination register `dst[0]` and the sources' lanes:
/// the destination is split off its register file so register sources
/// are borrowed, not copied.
#[inline(always)]
pub fn with_dst<const N: usize, R>(
    w: &mut Wave,
    inst: &Inst,
    p: &Plan,
    f: impl FnOnce(&mut Lanes, [&Lanes; N]) -> R,
) -> Result<R, ExecError> {
    let dst = inst.dst[0];
    let mut bufs = [None; N];
    let regs = buffers::<N>(w, inst, p, Some(dst), &mut bufs)?;
    let Wave { vgpr, agpr, .. } = w;
    let (file, other, di) = match dst {
        Operand::Vgpr(n) => (vgpr, &*agpr, n as usize),
        Operand::Agpr(n) => (agpr, &*vgpr, n as usize),
        op => return Err(ExecError::Register(op)),
    };
    if di >= file.len() {
        return Err(ExecError::Register(dst));
    }
    let (lo, rest) = file.split_at_mut(di);
    let Some((d, hi)) = rest.split_first_mut() else {
        return Err(ExecError::Register(dst));
    };
    let same_file = |op: Operand| std::mem::discriminant(&op) == std::mem::discriminant(&dst);
    let mut srcs = [&NO_LANES; N];
    for (s, (r, b)) in srcs.iter_mut().zip(regs.iter().zip(&bufs)) {
        *s = match (r, b) {
            (Some(op @ (Operand::Vgpr(n) | Operand::Agpr(n))), _) => {
                let n = *n as usize;
                let reg = match (same_file(*op), n < di) {
                    (false, _) => other.get(n),
                    (true, true) => lo.get(n),
                    (true, false) => hi.get(n - di - 1),
                };
                reg.ok_or(ExecError::Register(*op))?
            }
            (_, Some(b)) => b,
            _ => &NO_LANES,
        };
    }
    Ok(f(d, srcs))
}

/// Writes `f(lane)` into `d` for the lanes in `mask`.
#[inline(always)]
pub fn blend(d: &mut Lanes, mask: u64, f: impl Fn(usize) -> u32) {
    if mask == u64::MAX {
        for (l, x) in d.iter_mut().enumerate() {
            *x = f(l);
        }
    } else {
        let m = expand_mask(mask);
        for (l, (x, m)) in d.iter_mut().zip(&m).enumerate() {
            *x = (f(l) & m) | (*x & !m);
        }
    }
}

/// `dst = f(lane, sources)` for the write mask: straight into the register
/// for a plain destination, else through [`write32`] (SDWA fields, 16-bit
/// halves).
#[inline(always)]
pub fn map_n<const N: usize>(
    w: &mut Wave,
    inst: &Inst,
    f: impl Fn(usize, [&Lanes; N]) -> u32,
) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    if plain_write(inst) {
        with_dst::<N, _>(w, inst, &p, |d, s| blend(d, p.mask, |l| f(l, s)))?;
    } else {
        let mut vals = [0u32; LANES];
        with_srcs::<N, _>(w, inst, &p, |s| {
            for (l, v) in vals.iter_mut().enumerate() {
                *v = f(l, s);
            }
        })?;
        write32(w, inst, &vals, p.mask)?;
    }
    Ok(Flow::Next)
}

/// Writes `f(lane)` to `dst[0]` for the lanes in `mask` (for handlers that
/// computed their operands themselves).
#[inline(always)]
pub fn store32(w: &mut Wave, inst: &Inst, mask: u64, f: impl Fn(usize) -> u32) -> Result<(), ExecError> {
    if plain_write(inst) {
        blend(w.vreg_mut(inst.dst[0], 0)?, mask, f);
        Ok(())
    } else {
        let vals: Lanes = std::array::from_fn(f);
        write32(w, inst, &vals, mask)
    }
}

/// `dst = f(src0)`.
#[inline(always)]
pub fn map1(w: &mut Wave, inst: &Inst, f: impl Fn(u32) -> u32) -> Result<Flow, ExecError> {
    map_n::<1>(w, inst, |l, [a]| f(a[l]))
}

/// `dst = f(src0, src1)`.
#[inline(always)]
pub fn map2(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32) -> u32) -> Result<Flow, ExecError> {
    map_n::<2>(w, inst, |l, [a, b]| f(a[l], b[l]))
}

/// `dst = f(src0, src1, src2)`.
#[inline(always)]
pub fn map3(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<Flow, ExecError> {
    map_n::<3>(w, inst, |l, [a, b, c]| f(a[l], b[l], c[l]))
}

/// `dst = f(lane, src0, src1)` (ops that depend on the lane number).
#[inline(always)]
pub fn map2_lane(w: &mut Wave, inst: &Inst, f: impl Fn(usize, u32, u32) -> u32) -> Result<Flow, ExecError> {
    map_n::<2>(w, inst, |l, [a, b]| f(l, a[l], b[l]))
}

/// `(dst, carry-out) = f(src0, src1, carry-in)`: the VOP2/VOP3b carry ops.
/// The carry-in is `src[2]` when the op has one (else false); the carry-out
/// goes to `dst[1]` (VCC in the 32-bit forms), 0 for inactive lanes.
#[inline(always)]
pub fn map2_carry(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, bool) -> (u32, bool)) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let cin = match inst.src[2] {
        Operand::None => 0,
        op => read_lane_mask(w, op)?,
    };
    let mut carries = [false; LANES];
    if plain_write(inst) {
        let m = expand_mask(p.mask);
        let cin = expand_mask(cin);
        with_dst::<2, _>(w, inst, &p, |d, [a, b]| {
            for (l, (x, c)) in d.iter_mut().zip(carries.iter_mut()).enumerate() {
                let (r, co) = f(a[l], b[l], cin[l] & 1 != 0);
                *c = co;
                *x = (r & m[l]) | (*x & !m[l]);
            }
        })?;
    } else {
        let vals: Lanes = with_srcs::<2, _>(w, inst, &p, |[a, b]| {
            std::array::from_fn(|l| {
                let (r, co) = f(a[l], b[l], cin >> l & 1 != 0);
                carries[l] = co;
                r
            })
        })?;
        write32(w, inst, &vals, p.mask)?;
    }
    write_lane_mask(w, inst.dst[1], pack_bits(&carries), p.mask)?;
    Ok(Flow::Next)
}

/// Reads two 64-bit sources and writes `f(a, b)` to the pair `dst[0]`.
#[inline(always)]
pub fn map64_2(w: &mut Wave, inst: &Inst, f: impl Fn(u64, u64) -> u64) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let mut a = [0u64; LANES];
    let mut b = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut a)?;
    src64_into(w, inst, 1, &p, &mut b)?;
    for (x, y) in a.iter_mut().zip(&b) {
        *x = f(*x, *y);
    }
    write64(w, inst, &a, p.mask)?;
    Ok(Flow::Next)
}

/// Packs 64 booleans into a lane mask, eight at a time (a multiply
/// gathers the low bit of each byte into the top byte).
#[inline(always)]
pub fn pack_bits(b: &[bool; LANES]) -> u64 {
    let mut bits = 0u64;
    for (k, chunk) in b.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(std::array::from_fn(|i| chunk[i] as u8));
        bits |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    bits
}

/// The lanes of a compare result: bit l = `f(l)` for the lanes in `mask`.
#[inline(always)]
pub fn lane_bits(mask: u64, f: impl Fn(usize) -> bool) -> u64 {
    let b: [bool; LANES] = std::array::from_fn(f);
    pack_bits(&b) & mask
}
