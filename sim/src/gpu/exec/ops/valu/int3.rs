//! VOP3-only integer ops: three-source arithmetic and bit fields, 16-bit
//! multiply-adds and min/max/median, 64-bit shifts and multiply-adds. The
//! SAD family is in [`super::sad`].

use super::common::{clamp, plan, src32_with, src64_into, write64, write_lane_mask, Plan};
use super::int::{i24, sat_i16, sat_i32, sat_u16, sat_u32};
use super::run::{map3, pack_bits, with_srcs};
use crate::gpu::exec::wave::LANES;
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

type R = Result<Flow, ExecError>;

/// `v_perm_b32`: byte `sel` of the 64-bit `{s0, s1}`: 0..=7 a byte, 8..=11
/// the sign of byte 1, 3, 5, 7 replicated, 12 zero, above 0xff.
fn perm_byte(data: u64, sel: u32) -> u32 {
    match sel {
        0..=7 => (data >> (8 * sel)) as u32 & 0xff,
        8..=11 => {
            let bit = 16 * (sel - 8) + 15;
            if data >> bit & 1 != 0 {
                0xff
            } else {
                0
            }
        }
        12 => 0,
        _ => 0xff,
    }
}

fn perm(s0: u32, s1: u32, s2: u32) -> u32 {
    let data = (s0 as u64) << 32 | s1 as u64;
    (0..4).fold(0, |acc, i| acc | perm_byte(data, s2 >> (8 * i) & 0xff) << (8 * i))
}

/// `v_bfe_i32`: the field is taken by an arithmetic shift, then
/// sign-extended from its width (width 0 gives 0).
fn bfe_i32(s0: u32, s1: u32, s2: u32) -> u32 {
    let width = s2 & 31;
    if width == 0 {
        return 0;
    }
    let v = (s0 as i32) >> (s1 & 31);
    ((v << (32 - width)) >> (32 - width)) as u32
}

fn bfe_u32(s0: u32, s1: u32, s2: u32) -> u32 {
    (s0 >> (s1 & 31)) & ((1u32 << (s2 & 31)).wrapping_sub(1))
}

fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.max(b).min(a.min(b).max(c))
}

/// Three 32-bit sources; with clamp, the exact result `f` (over i128) is
/// saturated by `sat`, else wrapped.
#[inline(always)]
fn arith3(
    w: &mut Wave,
    i: &Inst,
    f: impl Fn(i128, i128, i128) -> i128 + Copy,
    sat: fn(i128) -> u32,
    signed: bool,
) -> R {
    let ext = move |v: u32| if signed { v as i32 as i128 } else { v as i128 };
    if clamp(i) {
        map3(w, i, move |a, b, c| sat(f(ext(a), ext(b), ext(c))))
    } else {
        map3(w, i, move |a, b, c| f(ext(a), ext(b), ext(c)) as u32)
    }
}

/// A 16-bit multiply-add (`v_mad_u16/i16`, legacy forms): the result is
/// a zero-extended 16-bit value, saturated with clamp.
fn mad16(w: &mut Wave, i: &Inst, signed: bool) -> R {
    let c = clamp(i);
    let ext = move |v: u32| if signed { v as u16 as i16 as i64 } else { v as u16 as i64 };
    map3(w, i, move |a, b, d| {
        let r = ext(a) * ext(b) + ext(d);
        match (c, signed) {
            (true, true) => sat_i16(r),
            (true, false) => sat_u16(r),
            _ => r as u32 & 0xffff,
        }
    })
}

/// `v_mad_u32_u16` / `v_mad_i32_i16`: 16-bit product plus a 32-bit addend.
fn mad32_16(w: &mut Wave, i: &Inst, signed: bool) -> R {
    let c = clamp(i);
    let ext = move |v: u32| if signed { v as u16 as i16 as i128 } else { v as u16 as i128 };
    map3(w, i, move |a, b, d| {
        let d = if signed { d as i32 as i128 } else { d as i128 };
        let r = ext(a) * ext(b) + d;
        match (c, signed) {
            (true, true) => sat_i32(r),
            (true, false) => sat_u32(r),
            _ => r as u32,
        }
    })
}

/// Three 16-bit sources (min3/max3/med3 16-bit): `f` on the low halves.
fn three16<T>(w: &mut Wave, i: &Inst, conv: fn(u32) -> T, f: fn(T, T, T) -> T, back: fn(T) -> u32) -> R {
    map3(w, i, move |a, b, c| back(f(conv(a), conv(b), conv(c))) & 0xffff)
}

/// The lanes a VOP3-only op writes (no DPP forms) and its plan.
fn vop3_plan(w: &Wave, inst: &Inst) -> Plan {
    plan(w, inst)
}

/// `v_mad_u64_u32` / `v_mad_i64_i32`: `{dst, carry} = s0 * s1 + s2` with
/// 32-bit factors and a 64-bit addend; the carry-out is bit 64 of the exact
/// result; clamp saturates to the 64-bit range.
fn mad64(w: &mut Wave, inst: &Inst, signed: bool) -> R {
    match (signed, clamp(inst)) {
        (false, false) => mad64_with(w, inst, |a, b, c| (a as u64 * b as u64).overflowing_add(c)),
        (false, true) => mad64_with(w, inst, |a, b, c| match (a as u64 * b as u64).overflowing_add(c) {
            (_, true) => (u64::MAX, true),
            r => r,
        }),
        (true, false) => mad64_with(w, inst, |a, b, c| {
            let r = mad_i64(a, b, c);
            (r as u64, (r >> 64) & 1 != 0)
        }),
        (true, true) => mad64_with(w, inst, |a, b, c| {
            let r = mad_i64(a, b, c);
            (r.clamp(i64::MIN as i128, i64::MAX as i128) as u64, (r >> 64) & 1 != 0)
        }),
    }
}

/// The exact signed `s0 * s1 + s2` of `v_mad_i64_i32`.
#[inline(always)]
fn mad_i64(a: u32, b: u32, c: u64) -> i128 {
    a as i32 as i128 * b as i32 as i128 + c as i64 as i128
}

#[inline(always)]
fn mad64_with(w: &mut Wave, inst: &Inst, f: impl Fn(u32, u32, u64) -> (u64, bool)) -> R {
    let p = vop3_plan(w, inst);
    let mut acc = [0u64; LANES];
    src64_into(w, inst, 2, &p, &mut acc)?;
    let mut carry = [false; LANES];
    with_srcs::<2, _>(w, inst, &p, |[a, b]| {
        for (l, (x, c)) in acc.iter_mut().zip(carry.iter_mut()).enumerate() {
            (*x, *c) = f(a[l], b[l], *x);
        }
    })?;
    write64(w, inst, &acc, p.mask)?;
    write_lane_mask(w, inst.dst[1], pack_bits(&carry), p.mask)?;
    Ok(Flow::Next)
}

/// 64-bit shifts: `dst = f(s1 (64-bit), s0 (shift))`.
fn shift64(w: &mut Wave, inst: &Inst, f: fn(u64, u32) -> u64) -> R {
    let p = vop3_plan(w, inst);
    let s = src32_with(w, inst, 0, &p)?;
    let mut v = [0u64; LANES];
    src64_into(w, inst, 1, &p, &mut v)?;
    for (x, &s) in v.iter_mut().zip(&s) {
        *x = f(*x, s & 63);
    }
    write64(w, inst, &v, p.mask)?;
    Ok(Flow::Next)
}

/// `v_lshl_add_u64` (gfx942): `(s0 << s1[2:0]) + s2`.
fn lshl_add_u64(w: &mut Wave, inst: &Inst) -> R {
    let p = vop3_plan(w, inst);
    let mut a = [0u64; LANES];
    let mut c = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut a)?;
    let s = src32_with(w, inst, 1, &p)?;
    src64_into(w, inst, 2, &p, &mut c)?;
    for (l, x) in a.iter_mut().enumerate() {
        *x = (*x << (s[l] & 7)).wrapping_add(c[l]);
    }
    write64(w, inst, &a, p.mask)?;
    Ok(Flow::Next)
}

/// `v_lerp_u8`: per byte, the rounded average `(a + b + c[0]) >> 1`, where
/// bit 0 of each byte of `c` is the rounding bit.
fn lerp_u8(a: u32, b: u32, c: u32) -> u32 {
    (0..4).fold(0, |acc, i| {
        let s = 8 * i;
        let v = ((a >> s & 0xff) + (b >> s & 0xff) + (c >> s & 1)) >> 1;
        acc | (v & 0xff) << s
    })
}

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VAdd3U32 => |w, i, _| map3(w, i, |a, b, c| a.wrapping_add(b).wrapping_add(c)),
        Op::VAddLshlU32 => |w, i, _| map3(w, i, |a, b, c| a.wrapping_add(b) << (c & 31)),
        Op::VLshlAddU32 => |w, i, _| map3(w, i, |a, b, c| (a << (b & 31)).wrapping_add(c)),
        Op::VLshlOrB32 => |w, i, _| map3(w, i, |a, b, c| (a << (b & 31)) | c),
        Op::VAndOrB32 => |w, i, _| map3(w, i, |a, b, c| (a & b) | c),
        Op::VOr3B32 => |w, i, _| map3(w, i, |a, b, c| a | b | c),
        Op::VXadU32 => |w, i, _| map3(w, i, |a, b, c| (a ^ b).wrapping_add(c)),
        Op::VAlignbitB32 => |w, i, _| map3(w, i, |a, b, c| (((a as u64) << 32 | b as u64) >> (c & 31)) as u32),
        Op::VAlignbyteB32 => |w, i, _| map3(w, i, |a, b, c| (((a as u64) << 32 | b as u64) >> (8 * (c & 3))) as u32),
        Op::VBfeU32 => |w, i, _| map3(w, i, bfe_u32),
        Op::VBfeI32 => |w, i, _| map3(w, i, bfe_i32),
        Op::VBfiB32 => |w, i, _| map3(w, i, |a, b, c| (a & b) | (!a & c)),
        Op::VPermB32 => |w, i, _| map3(w, i, perm),
        Op::VLerpU8 => |w, i, _| map3(w, i, lerp_u8),
        Op::VMin3U32 => |w, i, _| map3(w, i, |a, b, c| a.min(b).min(c)),
        Op::VMax3U32 => |w, i, _| map3(w, i, |a, b, c| a.max(b).max(c)),
        Op::VMed3U32 => |w, i, _| map3(w, i, med3),
        Op::VMin3I32 => |w, i, _| map3(w, i, |a, b, c| (a as i32).min(b as i32).min(c as i32) as u32),
        Op::VMax3I32 => |w, i, _| map3(w, i, |a, b, c| (a as i32).max(b as i32).max(c as i32) as u32),
        Op::VMed3I32 => |w, i, _| map3(w, i, |a, b, c| med3(a as i32, b as i32, c as i32) as u32),
        Op::VMin3U16 => |w, i, _| three16(w, i, |v| v as u16, |a, b, c| a.min(b).min(c), u32::from),
        Op::VMax3U16 => |w, i, _| three16(w, i, |v| v as u16, |a, b, c| a.max(b).max(c), u32::from),
        Op::VMed3U16 => |w, i, _| three16(w, i, |v| v as u16, med3, u32::from),
        Op::VMin3I16 => |w, i, _| three16(w, i, |v| v as i16, |a, b, c| a.min(b).min(c), |v| v as u32),
        Op::VMax3I16 => |w, i, _| three16(w, i, |v| v as i16, |a, b, c| a.max(b).max(c), |v| v as u32),
        Op::VMed3I16 => |w, i, _| three16(w, i, |v| v as i16, med3, |v| v as u32),
        Op::VMadU32U24 => |w, i, _| arith3(w, i, |a, b, c| (a & 0xff_ffff) * (b & 0xff_ffff) + c, sat_u32, false),
        Op::VMadI32I24 => |w, i, _| {
            arith3(w, i, |a, b, c| i24(a as u32) as i128 * i24(b as u32) as i128 + c as i32 as i128, sat_i32, false)
        },
        Op::VMadU16 | Op::VMadLegacyU16 => |w, i, _| mad16(w, i, false),
        Op::VMadI16 | Op::VMadLegacyI16 => |w, i, _| mad16(w, i, true),
        Op::VMadU32U16 => |w, i, _| mad32_16(w, i, false),
        Op::VMadI32I16 => |w, i, _| mad32_16(w, i, true),
        Op::VMadU64U32 => |w, i, _| mad64(w, i, false),
        Op::VMadI64I32 => |w, i, _| mad64(w, i, true),
        Op::VLshlrevB64 => |w, i, _| shift64(w, i, |v, s| v << s),
        Op::VLshrrevB64 => |w, i, _| shift64(w, i, |v, s| v >> s),
        Op::VAshrrevI64 => |w, i, _| shift64(w, i, |v, s| ((v as i64) >> s) as u64),
        Op::VLshlAddU64 => |w, i, _| lshl_add_u64(w, i),
        _ => return super::sad::handler(op),
    };
    Some(h)
}
