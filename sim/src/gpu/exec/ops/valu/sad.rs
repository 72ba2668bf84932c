//! The SAD (sum of absolute byte/word differences) family: `v_sad_*`,
//! `v_msad_u8` and the quad SADs. The masked forms skip the bytes where
//! the reference (`s1`) is 0; clamp saturates each accumulated result.

use super::common::{clamp, plan, src32_with, src64_into, write64, write_lanes, Plan};
use super::run::map3;
use crate::gpu::exec::wave::{Lanes, LANES};
use crate::gpu::exec::{ExecError, Flow, Handler, Wave};
use crate::isa::{Inst, Op, Operand, Ty};

type R = Result<Flow, ExecError>;

/// The lanes a VOP3-only op writes (no DPP forms) and its plan.
fn vop3_plan(w: &Wave, inst: &Inst) -> Plan {
    plan(w, inst)
}

/// Absolute difference of two bytes of `a` and `b` at byte `i`.
#[inline]
fn byte_diff(a: u64, b: u64, i: u32) -> u32 {
    let x = (a >> (8 * i)) as u8;
    let y = (b >> (8 * i)) as u8;
    x.abs_diff(y) as u32
}

/// Sum of the byte differences of the low four bytes of `a` and `r`;
/// with `masked`, bytes where the reference `r` is 0 are skipped.
fn sad4(a: u64, r: u32, masked: bool) -> u32 {
    (0..4).filter(|&i| !masked || (r >> (8 * i)) & 0xff != 0).map(|i| byte_diff(a, r as u64, i)).sum()
}

/// A 32-bit accumulating SAD: `sum + acc`, saturated with clamp.
fn acc32(sum: u64, acc: u32, c: bool) -> u32 {
    let r = sum + acc as u64;
    if c {
        r.min(u32::MAX as u64) as u32
    } else {
        r as u32
    }
}

/// The four SADs of the quad-SAD ops: window `k` is bytes `k..k+4` of
/// the 64-bit `s0`, against the reference `s1`.
fn quad_sads(s0: u64, s1: u32, masked: bool) -> [u32; 4] {
    std::array::from_fn(|k| sad4(s0 >> (8 * k), s1, masked))
}

/// `v_qsad_pk_u16_u8` / `v_mqsad_pk_u16_u8`: four 16-bit SADs plus the
/// 16-bit accumulators of `s2`, packed into a 64-bit result.
fn qsad_pk(w: &mut Wave, inst: &Inst, masked: bool) -> R {
    let p = vop3_plan(w, inst);
    let mut s0 = [0u64; LANES];
    let mut acc = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut s0)?;
    let s1 = src32_with(w, inst, 1, &p)?;
    src64_into(w, inst, 2, &p, &mut acc)?;
    let c = clamp(inst);
    for (l, x) in acc.iter_mut().enumerate() {
        let sads = quad_sads(s0[l], s1[l], masked);
        let mut out = 0u64;
        for (k, s) in sads.iter().enumerate() {
            let r = (*x >> (16 * k) & 0xffff) + *s as u64;
            let r = if c { r.min(0xffff) } else { r & 0xffff };
            out |= r << (16 * k);
        }
        *x = out;
    }
    write64(w, inst, &acc, p.mask)?;
    Ok(Flow::Next)
}

/// The 128-bit accumulator of `v_mqsad_u32_u8`: four registers, four
/// SGPRs, or a constant that fills only the low two dwords.
fn acc128(w: &Wave, inst: &Inst) -> Result<[Lanes; 4], ExecError> {
    let op = inst.src[2];
    let mut out = [[0u32; LANES]; 4];
    match op {
        Operand::Vgpr(_) | Operand::Agpr(_) => {
            for (k, o) in out.iter_mut().enumerate() {
                *o = *w.vreg(op, k)?;
            }
        }
        Operand::Sgpr(_) | Operand::Ttmp(_) => {
            let mut s = [0u32; 4];
            w.read_sgprs(op, &mut s)?;
            for (o, v) in out.iter_mut().zip(s) {
                *o = [v; LANES];
            }
        }
        _ => {
            let v = w.read_scalar64(op, Ty::I64, inst.literal)?;
            out[0] = [v as u32; LANES];
            out[1] = [(v >> 32) as u32; LANES];
        }
    }
    Ok(out)
}

/// `v_mqsad_u32_u8`: four masked SADs, each added to a 32-bit accumulator
/// (saturated with clamp), into four registers.
fn mqsad_u32(w: &mut Wave, inst: &Inst) -> R {
    let p = vop3_plan(w, inst);
    let mut s0 = [0u64; LANES];
    src64_into(w, inst, 0, &p, &mut s0)?;
    let s1 = src32_with(w, inst, 1, &p)?;
    let mut acc = acc128(w, inst)?;
    let c = clamp(inst);
    for l in 0..LANES {
        let sads = quad_sads(s0[l], s1[l], true);
        for (k, s) in sads.iter().enumerate() {
            acc[k][l] = acc32(*s as u64, acc[k][l], c);
        }
    }
    for (k, vals) in acc.iter().enumerate() {
        write_lanes(w.vreg_mut(inst.dst[0], k)?, vals, p.mask);
    }
    Ok(Flow::Next)
}

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VSadU8 => |w, i, _| {
            let c = clamp(i);
            map3(w, i, move |a, b, d| acc32(sad4(a as u64, b, false) as u64, d, c))
        },
        Op::VSadHiU8 => |w, i, _| {
            let c = clamp(i);
            map3(w, i, move |a, b, d| acc32((sad4(a as u64, b, false) as u64) << 16, d, c))
        },
        Op::VSadU16 => |w, i, _| {
            let c = clamp(i);
            let half = |a: u32, b: u32, k: u32| ((a >> k) as u16).abs_diff((b >> k) as u16) as u64;
            map3(w, i, move |a, b, d| acc32(half(a, b, 0) + half(a, b, 16), d, c))
        },
        Op::VSadU32 => |w, i, _| {
            let c = clamp(i);
            map3(w, i, move |a, b, d| acc32(a.abs_diff(b) as u64, d, c))
        },
        Op::VMsadU8 => |w, i, _| {
            let c = clamp(i);
            map3(w, i, move |a, b, d| acc32(sad4(a as u64, b, true) as u64, d, c))
        },
        Op::VQsadPkU16U8 => |w, i, _| qsad_pk(w, i, false),
        Op::VMqsadPkU16U8 => |w, i, _| qsad_pk(w, i, true),
        Op::VMqsadU32U8 => |w, i, _| mqsad_u32(w, i),
        _ => return None,
    };
    Some(h)
}
