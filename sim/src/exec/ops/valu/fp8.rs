//! MI300 (gfx942) fp8/bf8 conversions. The formats (E4M3 and E5M2 with
//! biases 8 and 16, 0x80 the only NaN, no infinities) are in [`fp`].
//! Encoding to 8 bits rounds to nearest even (or stochastically for the
//! `_sr_` forms, with source 1 as the random bits); a value beyond the
//! format's range, infinity or NaN becomes 0x80.

use super::float_io::{op32, op32_acc, Out};
use super::fp::{self, F8};
use crate::exec::wave::LANES;
use crate::exec::{Ctx, ExecError, Flow, Handler, Wave};
use crate::isa::{Ext, Inst, Op};

pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VCvtF32Fp8 => |w, i, _| op32(w, i, Out::F32, |[a], _| decode(a, byte_sel(i), F8::Fp8)),
        Op::VCvtF32Bf8 => |w, i, _| op32(w, i, Out::F32, |[a], _| decode(a, byte_sel(i), F8::Bf8)),
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

fn decode(a: u32, byte: u32, k: F8) -> u32 {
    fp::f8_to_f32((a >> (8 * byte)) as u8, k).to_bits()
}

/// Two bytes of a word (VOP3 `op_sel[0]` or SDWA `WORD_1` picks the high
/// word) to two f32.
fn pk_decode(w: &mut Wave, inst: &Inst, _: &mut Ctx<'_>, k: F8) -> Result<Flow, ExecError> {
    let mask = super::common::write_mask(w, inst);
    let a = super::common::src32(w, inst, 0)?;
    let shift = if byte_sel(inst) & 1 != 0 { 16 } else { 0 };
    let out: [u64; LANES] = std::array::from_fn(|l| {
        let v = a[l] >> shift;
        decode(v, 0, k) as u64 | (decode(v, 1, k) as u64) << 32
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
    op32_acc(w, inst, Out::Bits, move |[a, b, d], _| {
        let pair = fp::f32_to_f8(f32::from_bits(a), k, false, None) as u32
            | (fp::f32_to_f8(f32::from_bits(b), k, false, None) as u32) << 8;
        (d & !(0xffff << sh)) | pair << sh
    })
}

/// `v_cvt_sr_fp8_f32`: one f32, stochastically rounded with the bits of
/// source 1, to the byte chosen by `op_sel[3:2]`; the other bytes are kept.
fn sr_encode(w: &mut Wave, inst: &Inst, k: F8) -> Result<Flow, ExecError> {
    let sh = 8 * (dst_sel(inst) & 3);
    op32_acc(w, inst, Out::Bits, move |[a, b, d], _| {
        let v = fp::f32_to_f8(f32::from_bits(a), k, false, Some(b)) as u32;
        (d & !(0xff << sh)) | v << sh
    })
}
