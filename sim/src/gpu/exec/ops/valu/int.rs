//! Integer and bitwise VALU ops with one or two sources (VOP1/VOP2 and
//! their VOP3, SDWA and DPP forms, plus the two-source VOP3-only ops).
//! Three-source and 64-bit ops are in [`super::int3`].
//!
//! 16-bit ops compute on the low halves of their (already selected)
//! sources and return a zero-extended result (gfx9 zeroes the high half),
//! except the `op_sel` ops, whose half write is done by
//! [`super::common::write32`]. `clamp` saturates to the result range on
//! the arithmetic ops whose VOP3 form has it.

use super::common::clamp;
use super::run::{map1, map2, map2_carry, map2_lane};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

type R = Result<Flow, ExecError>;

/// Sign-extends the low 24 bits.
#[inline]
pub fn i24(v: u32) -> i64 {
    ((v << 8) as i32 >> 8) as i64
}

/// Saturates `v` to the u32 range.
#[inline]
pub fn sat_u32(v: i128) -> u32 {
    v.clamp(0, u32::MAX as i128) as u32
}

/// Saturates `v` to the i32 range.
#[inline]
pub fn sat_i32(v: i128) -> u32 {
    v.clamp(i32::MIN as i128, i32::MAX as i128) as i32 as u32
}

/// Saturates `v` to the u16 range.
#[inline]
pub fn sat_u16(v: i64) -> u32 {
    v.clamp(0, 0xffff) as u32
}

/// Saturates `v` to the i16 range, as a zero-extended 16-bit pattern.
#[inline]
pub fn sat_i16(v: i64) -> u32 {
    v.clamp(i16::MIN as i64, i16::MAX as i64) as i16 as u16 as u32
}

/// A binary op on 32-bit results: with clamp, `f` on exact (i128) values
/// saturated by `sat`; without, wrapping.
#[inline(always)]
fn arith2(
    w: &mut Wave,
    i: &Inst,
    f: impl Fn(i128, i128) -> i128 + Copy,
    sat: impl Fn(i128) -> u32 + Copy,
    signed: bool,
) -> R {
    let ext = move |v: u32| if signed { v as i32 as i128 } else { v as i128 };
    if clamp(i) {
        map2(w, i, move |a, b| sat(f(ext(a), ext(b))))
    } else {
        map2(w, i, move |a, b| f(ext(a), ext(b)) as u32)
    }
}

/// A binary op on 16-bit values (`signed` sign-extends them); the result
/// is zero-extended, saturated to the 16-bit range with clamp.
#[inline(always)]
fn arith16(w: &mut Wave, i: &Inst, f: impl Fn(i64, i64) -> i64 + Copy, signed: bool) -> R {
    let ext = move |v: u32| if signed { v as u16 as i16 as i64 } else { v as u16 as i64 };
    let c = clamp(i);
    map2(w, i, move |a, b| {
        let r = f(ext(a), ext(b));
        match (c, signed) {
            (true, true) => sat_i16(r),
            (true, false) => sat_u16(r),
            _ => r as u32 & 0xffff,
        }
    })
}

/// `v_add_co/sub_co` family: `f` gives the exact result of
/// (a, b, carry-in); the carry-out is whether it left [0, 2^32). With
/// clamp the result saturates.
#[inline(always)]
fn carry(w: &mut Wave, i: &Inst, f: impl Fn(i64, i64, i64) -> i64 + Copy) -> R {
    let c = clamp(i);
    map2_carry(w, i, move |a, b, cin| {
        let r = f(a as i64, b as i64, cin as i64);
        let out = !(0..=u32::MAX as i64).contains(&r);
        let v = if c { r.clamp(0, u32::MAX as i64) as u32 } else { r as u32 };
        (v, out)
    })
}

/// Find first one from the MSB: its index counted from bit 31, or -1.
fn ffbh_u32(v: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v.leading_zeros()
    }
}

/// Index (from bit 31) of the first bit that differs from the sign bit,
/// or -1 for 0 and -1.
fn ffbh_i32(v: u32) -> u32 {
    let x = v ^ ((v as i32 >> 31) as u32);
    if x == 0 {
        u32::MAX
    } else {
        x.leading_zeros()
    }
}

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        // ----- 32-bit add/sub -----
        Op::VAddU32 => |w, i, _| match clamp(i) {
            false => map2(w, i, u32::wrapping_add),
            true => map2(w, i, u32::saturating_add),
        },
        Op::VSubU32 => |w, i, _| match clamp(i) {
            false => map2(w, i, u32::wrapping_sub),
            true => map2(w, i, u32::saturating_sub),
        },
        Op::VSubrevU32 => |w, i, _| match clamp(i) {
            false => map2(w, i, |a, b| b.wrapping_sub(a)),
            true => map2(w, i, |a, b| b.saturating_sub(a)),
        },
        Op::VAddI32 => |w, i, _| arith2(w, i, |a, b| a + b, sat_i32, true),
        Op::VSubI32 => |w, i, _| arith2(w, i, |a, b| a - b, sat_i32, true),
        Op::VAddCoU32 => |w, i, _| carry(w, i, |a, b, _| a + b),
        Op::VSubCoU32 => |w, i, _| carry(w, i, |a, b, _| a - b),
        Op::VSubrevCoU32 => |w, i, _| carry(w, i, |a, b, _| b - a),
        Op::VAddcCoU32 => |w, i, _| carry(w, i, |a, b, c| a + b + c),
        Op::VSubbCoU32 => |w, i, _| carry(w, i, |a, b, c| a - b - c),
        Op::VSubbrevCoU32 => |w, i, _| carry(w, i, |a, b, c| b - a - c),
        // ----- 16-bit arithmetic -----
        Op::VAddU16 => |w, i, _| arith16(w, i, |a, b| a + b, false),
        Op::VSubU16 => |w, i, _| arith16(w, i, |a, b| a - b, false),
        Op::VSubrevU16 => |w, i, _| arith16(w, i, |a, b| b - a, false),
        Op::VAddI16 => |w, i, _| arith16(w, i, |a, b| a + b, true),
        Op::VSubI16 => |w, i, _| arith16(w, i, |a, b| a - b, true),
        Op::VMulLoU16 => |w, i, _| map2(w, i, |a, b| a.wrapping_mul(b) & 0xffff),
        Op::VMaxU16 => |w, i, _| map2(w, i, |a, b| (a as u16).max(b as u16) as u32),
        Op::VMinU16 => |w, i, _| map2(w, i, |a, b| (a as u16).min(b as u16) as u32),
        Op::VMaxI16 => |w, i, _| map2(w, i, |a, b| (a as i16).max(b as i16) as u16 as u32),
        Op::VMinI16 => |w, i, _| map2(w, i, |a, b| (a as i16).min(b as i16) as u16 as u32),
        Op::VLshlrevB16 => |w, i, _| map2(w, i, |a, b| ((b as u16) << (a & 15)) as u32),
        Op::VLshrrevB16 => |w, i, _| map2(w, i, |a, b| ((b as u16) >> (a & 15)) as u32),
        Op::VAshrrevI16 => |w, i, _| map2(w, i, |a, b| ((b as i16) >> (a & 15)) as u16 as u32),
        // ----- shifts, bitwise, min/max -----
        Op::VLshlrevB32 => |w, i, _| map2(w, i, |a, b| b << (a & 31)),
        Op::VLshrrevB32 => |w, i, _| map2(w, i, |a, b| b >> (a & 31)),
        Op::VAshrrevI32 => |w, i, _| map2(w, i, |a, b| ((b as i32) >> (a & 31)) as u32),
        Op::VAndB32 => |w, i, _| map2(w, i, |a, b| a & b),
        Op::VOrB32 => |w, i, _| map2(w, i, |a, b| a | b),
        Op::VXorB32 => |w, i, _| map2(w, i, |a, b| a ^ b),
        Op::VXnorB32 => |w, i, _| map2(w, i, |a, b| !(a ^ b)),
        Op::VMaxU32 => |w, i, _| map2(w, i, |a, b| a.max(b)),
        Op::VMinU32 => |w, i, _| map2(w, i, |a, b| a.min(b)),
        Op::VMaxI32 => |w, i, _| map2(w, i, |a, b| (a as i32).max(b as i32) as u32),
        Op::VMinI32 => |w, i, _| map2(w, i, |a, b| (a as i32).min(b as i32) as u32),
        // ----- multiplies -----
        Op::VMulLoU32 => |w, i, _| map2(w, i, |a, b| a.wrapping_mul(b)),
        Op::VMulHiU32 => |w, i, _| map2(w, i, |a, b| ((a as u64 * b as u64) >> 32) as u32),
        Op::VMulHiI32 => |w, i, _| map2(w, i, |a, b| ((a as i32 as i64 * b as i32 as i64) >> 32) as u32),
        Op::VMulU32U24 => |w, i, _| arith2(w, i, |a, b| (a & 0xff_ffff) * (b & 0xff_ffff), sat_u32, false),
        Op::VMulI32I24 => |w, i, _| arith2(w, i, |a, b| i24(a as u32) as i128 * i24(b as u32) as i128, sat_i32, false),
        Op::VMulHiU32U24 => {
            |w, i, _| map2(w, i, |a, b| (((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) >> 32) as u32)
        }
        Op::VMulHiI32I24 => |w, i, _| map2(w, i, |a, b| ((i24(a) * i24(b)) >> 32) as u32),
        // ----- bit counting and fields -----
        Op::VNotB32 => |w, i, _| map1(w, i, |a| !a),
        Op::VBfrevB32 => |w, i, _| map1(w, i, u32::reverse_bits),
        Op::VFfbhU32 => |w, i, _| map1(w, i, ffbh_u32),
        Op::VFfbhI32 => |w, i, _| map1(w, i, ffbh_i32),
        Op::VFfblB32 => |w, i, _| map1(w, i, |a| if a == 0 { u32::MAX } else { a.trailing_zeros() }),
        Op::VBcntU32B32 => |w, i, _| map2(w, i, |a, b| a.count_ones().wrapping_add(b)),
        Op::VBfmB32 => |w, i, _| map2(w, i, |a, b| ((1u32 << (a & 31)).wrapping_sub(1)) << (b & 31)),
        Op::VMbcntLoU32B32 => |w, i, _| map2_lane(w, i, |l, a, b| (a & lanes_below(l) as u32).count_ones() + b),
        Op::VMbcntHiU32B32 => |w, i, _| map2_lane(w, i, |l, a, b| (a & (lanes_below(l) >> 32) as u32).count_ones() + b),
        _ => return super::int3::handler(op),
    };
    Some(h)
}

/// The mask of lanes below lane `l` (`v_mbcnt`'s thread mask).
#[inline]
fn lanes_below(l: usize) -> u64 {
    (1u64 << l) - 1
}
