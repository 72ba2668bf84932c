//! Lane loops shared by the integer, compare and lane ops: read the
//! sources once (with modifiers, through [`common`]), run a per-lane
//! function and write the result straight into the destination register
//! under the write mask.
//!
//! Every driver is generic over the per-lane function, so an op's handler
//! is one closure and the loop is monomorphised for it. With EXEC all ones
//! and a plain destination the loop has no per-lane branch.

use super::common::{plain_write, plan, read_lane_mask, src32_with, src64_into, write32, write64, write_lane_mask};
use crate::exec::wave::{Lanes, Wave, LANES};
use crate::exec::{ExecError, Flow};
use crate::isa::{Inst, Operand};

/// Writes `f(lane)` to `dst[0]` for the lanes in `mask`: straight into the
/// register for a plain destination, else through [`write32`].
#[inline(always)]
pub fn store32(w: &mut Wave, inst: &Inst, mask: u64, f: impl Fn(usize) -> u32) -> Result<(), ExecError> {
    if plain_write(inst) {
        let d = w.vreg_mut(inst.dst[0], 0)?;
        if mask == u64::MAX {
            for (l, x) in d.iter_mut().enumerate() {
                *x = f(l);
            }
        } else {
            for (l, x) in d.iter_mut().enumerate() {
                let v = f(l);
                *x = if mask >> l & 1 != 0 { v } else { *x };
            }
        }
        Ok(())
    } else {
        let vals: Lanes = std::array::from_fn(f);
        write32(w, inst, &vals, mask)
    }
}

/// `dst = f(src0)`.
#[inline(always)]
pub fn map1(w: &mut Wave, inst: &Inst, f: impl Fn(u32) -> u32) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let a = src32_with(w, inst, 0, &p)?;
    store32(w, inst, p.mask, |l| f(a[l]))?;
    Ok(Flow::Next)
}

/// `dst = f(src0, src1)`.
#[inline(always)]
pub fn map2(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32) -> u32) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let a = src32_with(w, inst, 0, &p)?;
    let b = src32_with(w, inst, 1, &p)?;
    store32(w, inst, p.mask, |l| f(a[l], b[l]))?;
    Ok(Flow::Next)
}

/// `dst = f(src0, src1, src2)`.
#[inline(always)]
pub fn map3(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let a = src32_with(w, inst, 0, &p)?;
    let b = src32_with(w, inst, 1, &p)?;
    let c = src32_with(w, inst, 2, &p)?;
    store32(w, inst, p.mask, |l| f(a[l], b[l], c[l]))?;
    Ok(Flow::Next)
}

/// `dst = f(lane, src0, src1)` (ops that depend on the lane number).
#[inline(always)]
pub fn map2_lane(w: &mut Wave, inst: &Inst, f: impl Fn(usize, u32, u32) -> u32) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let a = src32_with(w, inst, 0, &p)?;
    let b = src32_with(w, inst, 1, &p)?;
    store32(w, inst, p.mask, |l| f(l, a[l], b[l]))?;
    Ok(Flow::Next)
}

/// `(dst, carry-out) = f(src0, src1, carry-in)`: the VOP2/VOP3b carry ops.
/// The carry-in is `src[2]` when the op has one (else false); the carry-out
/// goes to `dst[1]` (VCC in the 32-bit forms), 0 for inactive lanes.
#[inline(always)]
pub fn map2_carry(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, bool) -> (u32, bool)) -> Result<Flow, ExecError> {
    let p = plan(w, inst);
    let a = src32_with(w, inst, 0, &p)?;
    let b = src32_with(w, inst, 1, &p)?;
    let cin = match inst.src[2] {
        Operand::None => 0,
        op => read_lane_mask(w, op)?,
    };
    let mut vals = [0u32; LANES];
    let mut cout = 0u64;
    for (l, v) in vals.iter_mut().enumerate() {
        let (r, c) = f(a[l], b[l], cin >> l & 1 != 0);
        *v = r;
        cout |= (c as u64) << l;
    }
    write32(w, inst, &vals, p.mask)?;
    write_lane_mask(w, inst.dst[1], cout, p.mask)?;
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

/// The lanes of a compare result: bit l = `f(l)` for the lanes in `mask`.
#[inline(always)]
pub fn lane_bits(mask: u64, f: impl Fn(usize) -> bool) -> u64 {
    let mut bits = 0u64;
    for l in 0..LANES {
        bits |= (f(l) as u64) << l;
    }
    bits & mask
}
