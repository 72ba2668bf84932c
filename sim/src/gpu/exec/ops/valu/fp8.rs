//! fp8/bf8 conversions. On MI300 (gfx942) the formats are the FNUZ ones
//! (E4M3 and E5M2 with biases 8 and 16, 0x80 the only NaN, no infinities,
//! in [`fp`]): encoding rounds to nearest even (or stochastically for the
//! `_sr_` forms, with source 1 as the random bits); a value beyond the
//! format's range, infinity or NaN becomes 0x80.
//!
//! On gfx950 (CDNA4) the same instructions use the OCP formats of
//! [`minifloat`] (the guide's table 30: E4M3 bias 7, NaN 0x7f/0xff; E5M2
//! bias 15 with infinities), with section 7.3's overflow rule: MODE.FP16_OVFL
//! (bit 23) saturates infinities and overflow to ±max, else they become NaN
//! (E4M3) or ±inf (E5M2). f32 inputs honour MODE's input-denormal control.
//! The stochastic forms add `S1[31:12]` (fp8) or `S1[31:11]` (bf8) below the
//! kept mantissa and truncate, as the pseudocode says (a mantissa carry moves
//! to the next binade, see [`Mini::encode`]).

use super::float_io::{op32, op32_acc, Out};
use super::fp::{self, Env, F8};
use super::minifloat::{self, Mini};
use crate::gpu::exec::wave::LANES;
use crate::gpu::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Inst, Op, Target};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VCvtF32Fp8 => |w, i, _| op32(w, i, Out::F32, |[a], _| decode(a, byte_sel(i), F8::Fp8, i.target)),
        Op::VCvtF32Bf8 => |w, i, _| op32(w, i, Out::F32, |[a], _| decode(a, byte_sel(i), F8::Bf8, i.target)),
        Op::VCvtPkF32Fp8 => |w, i, c| pk_decode(w, i, c, F8::Fp8),
        Op::VCvtPkF32Bf8 => |w, i, c| pk_decode(w, i, c, F8::Bf8),
        Op::VCvtPkFp8F32 => |w, i, _| pk_encode(w, i, F8::Fp8),
        Op::VCvtPkBf8F32 => |w, i, _| pk_encode(w, i, F8::Bf8),
        Op::VCvtSrFp8F32 => |w, i, _| sr_encode(w, i, F8::Fp8),
        Op::VCvtSrBf8F32 => |w, i, _| sr_encode(w, i, F8::Bf8),
        _ => return None,
    };
    Some(h)
}

/// VOP3 `op_sel[1:0]` byte select of the source (SDWA selects are
/// applied by the source read).
fn byte_sel(inst: &Inst) -> u32 {
    match inst.ext {
        Ext::Vop3(m) => (m.op_sel & 3) as u32,
        _ => 0,
    }
}

/// The OCP format gfx950 uses where gfx942 has FNUZ format `k`.
fn ocp(k: F8) -> Mini {
    match k {
        F8::Fp8 => minifloat::FP8,
        F8::Bf8 => minifloat::BF8,
    }
}

fn decode(a: u32, byte: u32, k: F8, target: Target) -> u32 {
    let b = (a >> (8 * byte)) as u8;
    if target == Target::Gfx950 {
        ocp(k).decode(b as u32).to_bits()
    } else {
        fp::f8_to_f32(b, k).to_bits()
    }
}

/// f32 bits `a` to the 8-bit format `k` of `target`: gfx942's FNUZ encoding (no saturation),
/// or on gfx950 OCP with MODE.FP16_OVFL saturation and f32 input-denormal control. `sr`:
/// the random bits of the stochastic forms.
fn encode(a: u32, k: F8, target: Target, env: Env, sr: Option<u32>) -> u32 {
    if target == Target::Gfx950 {
        let f = ocp(k);
        let saturate = env.mode >> 23 & 1 != 0;
        f.encode(fp::in32(a, env), sr.map(|r| (r, 23 - f.mbits)), saturate)
    } else {
        fp::f32_to_f8(f32::from_bits(a), k, false, sr) as u32
    }
}

/// Two bytes of a word (VOP3 `op_sel[0]` or SDWA `WORD_1` picks the high
/// word) to two f32.
fn pk_decode(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>, k: F8) -> Result<Flow, ExecError> {
    let mask = super::common::write_mask(w, inst);
    let a = super::common::src32(w, inst, 0)?;
    let shift = if byte_sel(inst) & 1 != 0 { 16 } else { 0 };
    let out: [u64; LANES] = std::array::from_fn(|l| {
        let v = a[l] >> shift;
        decode(v, 0, k, inst.target) as u64 | (decode(v, 1, k, inst.target) as u64) << 32
    });
    super::common::write64(w, inst, &out, mask)?;
    Ok(Flow::Next)
}

fn dst_sel(inst: &Inst) -> u32 {
    match inst.ext {
        Ext::Vop3(m) => (m.op_sel >> 2) as u32,
        _ => 0,
    }
}

/// `v_cvt_pk_fp8_f32`: two f32 to the bytes of the word chosen by
/// `op_sel[3]`; the other word is kept.
fn pk_encode(w: &mut Wave, inst: &Inst, k: F8) -> Result<Flow, ExecError> {
    let sh = 16 * ((dst_sel(inst) >> 1) & 1);
    let t = inst.target;
    op32_acc(w, inst, Out::Bits, move |[a, b, d], env| {
        let pair = encode(a, k, t, env, None) | encode(b, k, t, env, None) << 8;
        (d & !(0xffff << sh)) | pair << sh
    })
}

/// `v_cvt_sr_fp8_f32`: one f32, stochastically rounded with the bits of
/// source 1, to the byte chosen by `op_sel[3:2]`; the other bytes are kept.
fn sr_encode(w: &mut Wave, inst: &Inst, k: F8) -> Result<Flow, ExecError> {
    let sh = 8 * (dst_sel(inst) & 3);
    let t = inst.target;
    op32_acc(w, inst, Out::Bits, move |[a, b, d], env| {
        let v = encode(a, k, t, env, Some(b));
        (d & !(0xff << sh)) | v << sh
    })
}
