//! Scalar logic, shifts, bit fields and bit counting.
//!
//! Logic ops and shifts set SCC when the result is nonzero; shift amounts
//! use the low 5 (32-bit) or 6 (64-bit) bits; bit-field extracts take the
//! offset from S1[4:0]/S1[5:0] and the width from S1[22:16]. The searches
//! (`s_ff0`, `s_ff1`, `s_flbit*`) return -1 when nothing is found.

use super::{dst32, dst64, sop1, sop1_64, sop1_64_32, sop2, sop2_64, sopc, src32, src64, src64_signed};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op, Ty};

pub(super) fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::SAndB32 => |w, i, _| sop2(w, i, |a, b, _| nz(a & b)),
        Op::SOrB32 => |w, i, _| sop2(w, i, |a, b, _| nz(a | b)),
        Op::SXorB32 => |w, i, _| sop2(w, i, |a, b, _| nz(a ^ b)),
        Op::SAndn2B32 => |w, i, _| sop2(w, i, |a, b, _| nz(a & !b)),
        Op::SOrn2B32 => |w, i, _| sop2(w, i, |a, b, _| nz(a | !b)),
        Op::SNandB32 => |w, i, _| sop2(w, i, |a, b, _| nz(!(a & b))),
        Op::SNorB32 => |w, i, _| sop2(w, i, |a, b, _| nz(!(a | b))),
        Op::SXnorB32 => |w, i, _| sop2(w, i, |a, b, _| nz(!(a ^ b))),
        Op::SAndB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(a & b)),
        Op::SOrB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(a | b)),
        Op::SXorB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(a ^ b)),
        Op::SAndn2B64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(a & !b)),
        Op::SOrn2B64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(a | !b)),
        Op::SNandB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(!(a & b))),
        Op::SNorB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(!(a | b))),
        Op::SXnorB64 => |w, i, _| sop2_64(w, i, |a, b, _| nz64(!(a ^ b))),
        Op::SNotB32 => |w, i, _| sop1(w, i, |a, _| nz(!a)),
        Op::SNotB64 => |w, i, _| sop1_64(w, i, |a, _| nz64(!a)),

        Op::SLshlB32 => |w, i, _| sop2(w, i, |a, b, _| nz(a << (b & 31))),
        Op::SLshrB32 => |w, i, _| sop2(w, i, |a, b, _| nz(a >> (b & 31))),
        Op::SAshrI32 => |w, i, _| sop2(w, i, |a, b, _| nz(((a as i32) >> (b & 31)) as u32)),
        Op::SLshlB64 => |w, i, _| wide_by_32(w, i, |a, b, _| nz64(a << (b & 63))),
        Op::SLshrB64 => |w, i, _| wide_by_32(w, i, |a, b, _| nz64(a >> (b & 63))),
        Op::SAshrI64 => |w, i, _| signed_by_32(w, i, |a, b| nz64((a >> (b & 63)) as u64)),

        Op::SBfmB32 => |w, i, _| sop2(w, i, |a, b, c| (mask32(a & 31) << (b & 31), c)),
        Op::SBfmB64 => |w, i, _| {
            let (a, b) = (src32(w, i, 0)?, src32(w, i, 1)?);
            dst64(w, i, mask64(a & 63) << (b & 63))?;
            Ok(Flow::Next)
        },
        Op::SBfeU32 => |w, i, _| sop2(w, i, |a, b, _| nz(bfe_u32(a, b))),
        Op::SBfeI32 => |w, i, _| sop2(w, i, |a, b, _| nz(bfe_i32(a, b))),
        Op::SBfeU64 => |w, i, _| wide_by_32(w, i, |a, b, _| nz64(bfe_u64(a, b))),
        Op::SBfeI64 => |w, i, _| signed_by_32(w, i, |a, b| nz64(bfe_i64(a, b))),

        Op::SBitcmp0B32 => |w, i, _| sopc(w, i, |a, b| a >> (b & 31) & 1 == 0),
        Op::SBitcmp1B32 => |w, i, _| sopc(w, i, |a, b| a >> (b & 31) & 1 == 1),
        Op::SBitcmp0B64 => |w, i, _| {
            w.scc = src64(w, i, 0)? >> (src32(w, i, 1)? & 63) & 1 == 0;
            Ok(Flow::Next)
        },
        Op::SBitcmp1B64 => |w, i, _| {
            w.scc = src64(w, i, 0)? >> (src32(w, i, 1)? & 63) & 1 == 1;
            Ok(Flow::Next)
        },
        Op::SBitset0B32 => |w, i, _| bitset32(w, i, false),
        Op::SBitset1B32 => |w, i, _| bitset32(w, i, true),
        Op::SBitset0B64 => |w, i, _| bitset64(w, i, false),
        Op::SBitset1B64 => |w, i, _| bitset64(w, i, true),

        Op::SBrevB32 => |w, i, _| sop1(w, i, |a, c| (a.reverse_bits(), c)),
        Op::SBrevB64 => |w, i, _| sop1_64(w, i, |a, c| (a.reverse_bits(), c)),
        Op::SBcnt0I32B32 => |w, i, _| sop1(w, i, |a, _| nz(a.count_zeros())),
        Op::SBcnt1I32B32 => |w, i, _| sop1(w, i, |a, _| nz(a.count_ones())),
        Op::SBcnt0I32B64 => |w, i, _| sop1_64_32(w, i, |a, _| nz(a.count_zeros())),
        Op::SBcnt1I32B64 => |w, i, _| sop1_64_32(w, i, |a, _| nz(a.count_ones())),
        Op::SFf0I32B32 => |w, i, _| sop1(w, i, |a, c| (find(!a == 0, (!a).trailing_zeros()), c)),
        Op::SFf1I32B32 => |w, i, _| sop1(w, i, |a, c| (find(a == 0, a.trailing_zeros()), c)),
        Op::SFf0I32B64 => |w, i, _| sop1_64_32(w, i, |a, c| (find(!a == 0, (!a).trailing_zeros()), c)),
        Op::SFf1I32B64 => |w, i, _| sop1_64_32(w, i, |a, c| (find(a == 0, a.trailing_zeros()), c)),
        Op::SFlbitI32B32 => |w, i, _| sop1(w, i, |a, c| (find(a == 0, a.leading_zeros()), c)),
        Op::SFlbitI32B64 => |w, i, _| sop1_64_32(w, i, |a, c| (find(a == 0, a.leading_zeros()), c)),
        // Signed: the first bit (from the MSB) that differs from the sign bit.
        Op::SFlbitI32 => |w, i, _| {
            sop1(w, i, |a, c| {
                let m = if (a as i32) < 0 { !a } else { a };
                (find(m == 0, m.leading_zeros()), c)
            })
        },
        Op::SFlbitI32I64 => |w, i, _| {
            sop1_64_32(w, i, |a, c| {
                let m = if (a as i64) < 0 { !a } else { a };
                (find(m == 0, m.leading_zeros()), c)
            })
        },

        Op::SWqmB32 => |w, i, _| sop1(w, i, |a, _| nz(wqm(a as u64) as u32)),
        Op::SWqmB64 => |w, i, _| sop1_64(w, i, |a, _| nz64(wqm(a))),
        Op::SQuadmaskB32 => |w, i, _| sop1(w, i, |a, _| nz(quadmask(a as u64) as u32)),
        Op::SQuadmaskB64 => |w, i, _| sop1_64(w, i, |a, _| nz64(quadmask(a))),
        Op::SBitreplicateB64B32 => |w, i, _| {
            let a = src32(w, i, 0)?;
            dst64(w, i, bitreplicate(a))?;
            Ok(Flow::Next)
        },
        Op::SPackLlB32B16 => |w, i, _| sop2(w, i, |a, b, c| ((a & 0xffff) | b << 16, c)),
        Op::SPackLhB32B16 => |w, i, _| sop2(w, i, |a, b, c| ((a & 0xffff) | (b & 0xffff_0000), c)),
        Op::SPackHhB32B16 => |w, i, _| sop2(w, i, |a, b, c| (a >> 16 | (b & 0xffff_0000), c)),
        _ => return None,
    };
    Some(h)
}

#[inline(always)]
fn nz(v: u32) -> (u32, bool) {
    (v, v != 0)
}

#[inline(always)]
fn nz64(v: u64) -> (u64, bool) {
    (v, v != 0)
}

/// A bit position, or -1 when there is none.
#[inline(always)]
fn find(none: bool, pos: u32) -> u32 {
    if none {
        u32::MAX
    } else {
        pos
    }
}

/// `n` ones (n in 0..=32).
#[inline(always)]
fn mask32(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1 << n) - 1
    }
}

/// `n` ones (n in 0..=64).
#[inline(always)]
fn mask64(n: u32) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// `(S0 >> S1[4:0]) & ((1 << S1[22:16]) - 1)`; widths of 32 and more keep
/// every shifted bit.
fn bfe_u32(a: u32, s1: u32) -> u32 {
    (a >> (s1 & 31)) & mask32((s1 >> 16) & 0x7f)
}

/// As `bfe_u32` from an arithmetic shift, sign-extended from bit width-1
/// (width 0 gives 0).
fn bfe_i32(a: u32, s1: u32) -> u32 {
    let width = (s1 >> 16) & 0x7f;
    let v = (a as i32) >> (s1 & 31);
    match width {
        0 => 0,
        32.. => v as u32,
        _ => ((v << (32 - width)) >> (32 - width)) as u32,
    }
}

fn bfe_u64(a: u64, s1: u32) -> u64 {
    (a >> (s1 & 63)) & mask64((s1 >> 16) & 0x7f)
}

fn bfe_i64(a: i64, s1: u32) -> u64 {
    let width = (s1 >> 16) & 0x7f;
    let v = a >> (s1 & 63);
    match width {
        0 => 0,
        64.. => v as u64,
        _ => ((v << (64 - width)) >> (64 - width)) as u64,
    }
}

/// Whole quad mode: each quad of bits becomes all ones if any bit is set.
fn wqm(a: u64) -> u64 {
    let mut any = a | a >> 1;
    any |= any >> 2;
    let quads = any & 0x1111_1111_1111_1111;
    quads * 0xf
}

/// One bit per quad: bit i is set if any bit of quad i is.
fn quadmask(a: u64) -> u64 {
    (0..16).filter(|q| a >> (4 * q) & 0xf != 0).fold(0, |m, q| m | 1 << q)
}

/// Each bit of S0 twice: D[2i] = D[2i+1] = S0[i].
fn bitreplicate(a: u32) -> u64 {
    (0..32).filter(|b| a >> b & 1 != 0).fold(0, |m, b| m | 3 << (2 * b))
}

/// `D = f(S0 (64-bit), S1 (32-bit))`: 64-bit shifts and bit fields.
#[inline(always)]
fn wide_by_32(w: &mut Wave, i: &Inst, f: impl Fn(u64, u32, bool) -> (u64, bool)) -> Result<Flow, ExecError> {
    let (a, b) = (src64(w, i, 0)?, src32(w, i, 1)?);
    let (d, scc) = f(a, b, w.scc);
    dst64(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// As `wide_by_32` with a signed S0 (a literal is sign-extended).
#[inline(always)]
fn signed_by_32(w: &mut Wave, i: &Inst, f: impl Fn(i64, u32) -> (u64, bool)) -> Result<Flow, ExecError> {
    let (a, b) = (src64_signed(w, i, 0)?, src32(w, i, 1)?);
    let (d, scc) = f(a, b);
    dst64(w, i, d)?;
    w.scc = scc;
    Ok(Flow::Next)
}

/// `D[S0[4:0]] = bit`, the rest of D unchanged.
fn bitset32(w: &mut Wave, i: &Inst, bit: bool) -> Result<Flow, ExecError> {
    let n = src32(w, i, 0)? & 31;
    let d = w.read_scalar32(i.dst[0], Ty::B32, 0)?;
    dst32(w, i, if bit { d | 1 << n } else { d & !(1 << n) })?;
    Ok(Flow::Next)
}

/// `D[S0[5:0]] = bit` on a register pair.
fn bitset64(w: &mut Wave, i: &Inst, bit: bool) -> Result<Flow, ExecError> {
    let n = src32(w, i, 0)? & 63;
    let d = w.read_scalar64(i.dst[0], Ty::I64, 0)?;
    dst64(w, i, if bit { d | 1 << n } else { d & !(1 << n) })?;
    Ok(Flow::Next)
}
