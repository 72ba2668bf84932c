//! VOPC: `v_cmp_*`, `v_cmpx_*` (which also write EXEC) and
//! `v_cmp_class_*`, in their e32 (VCC), e64 (any SGPR pair) and SDWA
//! forms. Bits of inactive lanes are 0.
//!
//! Float compares flush input denormals to ±0 when MODE says so (FP_DENORM
//! bit 4 for f32, bit 6 for f16/f64); `v_cmp_class` never flushes. The
//! "n" conditions are the negations of the ordered ones, so they hold on
//! NaN.
//!
//! One generic handler per (type, condition, writes-EXEC), chosen by
//! parsing the op's name once when the decode cache asks for it.

use super::common::{plan, src32_with, src64_into};
use super::run::{lane_bits, with_srcs};
use crate::gpu::exec::wave::LANES;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op};

type R = Result<Flow, ExecError>;

/// Float conditions in opcode order.
const FLOAT_CONDS: [&str; 16] =
    ["f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "tru"];
/// Integer conditions in opcode order.
const INT_CONDS: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];

/// Float condition `C` (index into [`FLOAT_CONDS`]), on f32 or f64.
#[inline(always)]
#[allow(clippy::eq_op)]
fn float_cond<const C: u8, T: PartialOrd + Copy>(a: T, b: T) -> bool {
    // NaN is the only value unequal to itself.
    let unordered = a != a || b != b;
    match C {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => !unordered && a != b,
        6 => a >= b,
        7 => !unordered,
        8 => unordered,
        // The negated conditions: true when unordered.
        9 => unordered || a < b,
        10 => unordered || a == b,
        11 => unordered || a <= b,
        12 => unordered || a > b,
        13 => a != b,
        14 => unordered || a >= b,
        _ => true,
    }
}

/// Integer condition `C` (index into [`INT_CONDS`]) on order-preserving
/// unsigned keys.
#[inline(always)]
fn int_cond<const C: u8>(a: u64, b: u64) -> bool {
    match C {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

/// An f16 bit pattern as f64 (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10 & 0x1f) as i32;
    let mant = (h & 0x3ff) as f64;
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1024.0 + mant) * 2f64.powi(e - 25),
    }
}

/// An f16 input, its denormals flushed to ±0 when `flush`.
#[inline(always)]
fn in16(v: u32, flush: bool) -> f64 {
    let h = v as u16;
    let h = if flush && h & 0x7c00 == 0 { h & 0x8000 } else { h };
    f16_to_f64(h)
}

#[inline(always)]
fn in32(v: u32, flush: bool) -> f32 {
    let v = if flush && v & 0x7f80_0000 == 0 { v & 0x8000_0000 } else { v };
    f32::from_bits(v)
}

#[inline(always)]
fn in64(v: u64, flush: bool) -> f64 {
    let v = if flush && v & 0x7ff0_0000_0000_0000 == 0 { v & 1 << 63 } else { v };
    f64::from_bits(v)
}

/// MODE FP_DENORM bit that allows f32 input denormals.
const MODE_DENORM_IN_F32: u32 = 1 << 4;
/// MODE FP_DENORM bit that allows f16/f64 input denormals.
const MODE_DENORM_IN_F64: u32 = 1 << 6;

/// Writes a compare result: the SGPR pair (VCC in e32) and, for
/// `v_cmpx`, EXEC.
fn finish<const X: bool>(w: &mut Wave, inst: &Inst, bits: u64) -> R {
    w.write_scalar64(inst.dst[0], bits)?;
    if X {
        w.exec = bits;
    }
    Ok(Flow::Next)
}

fn cmp_f16<const C: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let flush = w.mode & MODE_DENORM_IN_F64 == 0;
    let bits = with_srcs::<2, _>(w, inst, &p, |[a, b]| {
        lane_bits(p.mask, |l| float_cond::<C, _>(in16(a[l], flush), in16(b[l], flush)))
    })?;
    finish::<X>(w, inst, bits)
}

fn cmp_f32<const C: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let flush = w.mode & MODE_DENORM_IN_F32 == 0;
    let bits = with_srcs::<2, _>(w, inst, &p, |[a, b]| {
        lane_bits(p.mask, |l| float_cond::<C, _>(in32(a[l], flush), in32(b[l], flush)))
    })?;
    finish::<X>(w, inst, bits)
}

fn cmp_f64<const C: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let mut a = [0u64; LANES];
    let mut b = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut a)?;
    src64_into(w, inst, 1, &p, &mut b)?;
    let flush = w.mode & MODE_DENORM_IN_F64 == 0;
    let bits = lane_bits(p.mask, |l| float_cond::<C, _>(in64(a[l], flush), in64(b[l], flush)));
    finish::<X>(w, inst, bits)
}

/// Integer types of 32-bit lanes: 0 i16, 1 u16, 2 i32, 3 u32.
#[inline(always)]
fn key32<const T: u8>(v: u32) -> u64 {
    const SIGN: u64 = 1 << 63;
    match T {
        0 => (v as u16 as i16 as i64 as u64) ^ SIGN,
        1 => v as u16 as u64,
        2 => (v as i32 as i64 as u64) ^ SIGN,
        _ => v as u64,
    }
}

fn cmp_int32<const T: u8, const C: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let bits = with_srcs::<2, _>(w, inst, &p, |[a, b]| {
        lane_bits(p.mask, |l| int_cond::<C>(key32::<T>(a[l]), key32::<T>(b[l])))
    })?;
    finish::<X>(w, inst, bits)
}

/// 64-bit integers: `T` 0 signed, 1 unsigned.
fn cmp_int64<const T: u8, const C: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let mut a = [0u64; LANES];
    let mut b = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut a)?;
    src64_into(w, inst, 1, &p, &mut b)?;
    let flip = if T == 0 { 1u64 << 63 } else { 0 };
    let bits = lane_bits(p.mask, |l| int_cond::<C>(a[l] ^ flip, b[l] ^ flip));
    finish::<X>(w, inst, bits)
}

/// The `v_cmp_class` class of a float given its fields: 0 sNaN, 1 qNaN,
/// 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal,
/// 9 +inf.
#[inline(always)]
fn class_of(sign: bool, exp_zero: bool, exp_max: bool, mant_zero: bool, quiet: bool) -> u32 {
    let mag = match (exp_zero, exp_max, mant_zero) {
        (_, true, false) => return if quiet { 1 } else { 0 },
        (_, true, true) => 3,
        (true, _, true) => 0,
        (true, _, false) => 1,
        _ => 2,
    };
    // Magnitudes 0 zero, 1 denormal, 2 normal, 3 inf; negatives count down from 5.
    if sign {
        5 - mag
    } else {
        6 + mag
    }
}

/// `T`: 0 f16, 1 f32, 2 f64.
#[inline(always)]
fn class_bits<const T: u8>(v: u64) -> u32 {
    let (exp_bits, mant_bits) = match T {
        0 => (5, 10),
        1 => (8, 23),
        _ => (11, 52),
    };
    let mant = v & ((1u64 << mant_bits) - 1);
    let exp = v >> mant_bits & ((1u64 << exp_bits) - 1);
    let sign = v >> (mant_bits + exp_bits) & 1 != 0;
    let quiet = mant >> (mant_bits - 1) & 1 != 0;
    class_of(sign, exp == 0, exp == (1u64 << exp_bits) - 1, mant == 0, quiet)
}

fn cmp_class<const T: u8, const X: bool>(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>) -> R {
    let p = plan(w, inst);
    let mut a = [0u64; LANES];
    if T == 2 {
        src64_into(w, inst, 0, &p, &mut a)?;
    } else {
        let s = src32_with(w, inst, 0, &p)?;
        for (x, v) in a.iter_mut().zip(s) {
            *x = if T == 0 { v as u16 as u64 } else { v as u64 };
        }
    }
    let m = src32_with(w, inst, 1, &p)?;
    let bits = lane_bits(p.mask, |l| m[l] >> class_bits::<T>(a[l]) & 1 != 0);
    finish::<X>(w, inst, bits)
}

macro_rules! row {
    ($f:ident, $x:literal; $($c:literal)*) => { [$($f::<$c, $x> as Handler),*] };
    ($f:ident, $t:literal, $x:literal; $($c:literal)*) => { [$($f::<$t, $c, $x> as Handler),*] };
}

macro_rules! float_table {
    ($f:ident) => {
        [row!($f, false; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15), row!($f, true; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)]
    };
}

macro_rules! int_table {
    ($f:ident, $t:literal) => {
        [row!($f, $t, false; 0 1 2 3 4 5 6 7), row!($f, $t, true; 0 1 2 3 4 5 6 7)]
    };
}

static F16: [[Handler; 16]; 2] = float_table!(cmp_f16);
static F32: [[Handler; 16]; 2] = float_table!(cmp_f32);
static F64: [[Handler; 16]; 2] = float_table!(cmp_f64);
static I16: [[Handler; 8]; 2] = int_table!(cmp_int32, 0);
static U16: [[Handler; 8]; 2] = int_table!(cmp_int32, 1);
static I32: [[Handler; 8]; 2] = int_table!(cmp_int32, 2);
static U32: [[Handler; 8]; 2] = int_table!(cmp_int32, 3);
static I64: [[Handler; 8]; 2] = int_table!(cmp_int64, 0);
static U64: [[Handler; 8]; 2] = int_table!(cmp_int64, 1);
static CLASS: [[Handler; 2]; 3] = [
    [cmp_class::<0, false>, cmp_class::<0, true>],
    [cmp_class::<1, false>, cmp_class::<1, true>],
    [cmp_class::<2, false>, cmp_class::<2, true>],
];

/// The handler of `op`, if it is a compare: `v_cmp[x]_<cond>_<type>`.
pub fn handler(op: Op) -> Option<Handler> {
    let name = op.name();
    let (rest, x) = match name.strip_prefix("v_cmpx_") {
        Some(r) => (r, 1),
        None => (name.strip_prefix("v_cmp_")?, 0),
    };
    let (cond, ty) = rest.rsplit_once('_')?;
    if cond == "class" {
        let t = ["f16", "f32", "f64"].iter().position(|&t| t == ty)?;
        return Some(CLASS[t][x]);
    }
    let float = |t: &[[Handler; 16]; 2]| FLOAT_CONDS.iter().position(|&c| c == cond).map(|c| t[x][c]);
    let int = |t: &[[Handler; 8]; 2]| INT_CONDS.iter().position(|&c| c == cond).map(|c| t[x][c]);
    match ty {
        "f16" => float(&F16),
        "f32" => float(&F32),
        "f64" => float(&F64),
        "i16" => int(&I16),
        "u16" => int(&U16),
        "i32" => int(&I32),
        "u32" => int(&U32),
        "i64" => int(&I64),
        "u64" => int(&U64),
        _ => None,
    }
}
