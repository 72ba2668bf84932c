//! Conversions: between f16/f32/f64, float ↔ integer (with saturation;
//! NaN converts to 0), normalized and packed forms, bytes, and MI300's
//! fp8/bf8.
//!
//! Float results round per MODE (the destination type's rounding mode and
//! denormal controls); float → integer conversions truncate toward zero
//! except `v_cvt_flr` (floor) and `v_cvt_rpi` (floor of x + 0.5, exact).

use super::float_fast::{try_fast, Flush};
use super::float_io::{op32, op32_acc, op32_to64, op64_to32, Out};
use super::fp::{self, Env, Rm, F16, F64};
use super::fp8;
use crate::gpu::exec::Handler;
use crate::isa::Op;

/// The handler of `op`, if this module implements it.
pub fn handler(op: Op) -> Option<Handler> {
    let h: Handler = match op {
        Op::VCvtF32F16 => |w, i, _| {
            let e = Env::new(w.mode);
            try_fast(w, i, 1, false, Flush::Never, move |a, _, _| fp::out32(fp::in16(a, e), e))
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| fp::out32(fp::in16(a, e), e)))
        },
        Op::VCvtF16F32 => |w, i, _| {
            let e = Env::new(w.mode);
            try_fast(w, i, 1, false, Flush::Never, move |a, _, _| fp::out16(fp::in32(a, e), e))
                .unwrap_or_else(|| op32(w, i, Out::F16, |[a], e| fp::out16(fp::in32(a, e), e)))
        },
        Op::VCvtF32F64 => |w, i, _| op64_to32(w, i, Out::F32, |a, e| fp::out32(fp::in64(a, e), e)),
        Op::VCvtF64F32 => |w, i, _| op32_to64(w, i, |a, e| F64.flush(fp::in32(a, e).to_bits(), e.out64())),
        Op::VCvtF32I32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Never, |a, _, _| (a as i32 as f32).to_bits())
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| fp::out32(a as i32 as f64, e)))
        },
        Op::VCvtF32U32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Never, |a, _, _| (a as f32).to_bits())
                .unwrap_or_else(|| op32(w, i, Out::F32, |[a], e| fp::out32(a as f64, e)))
        },
        Op::VCvtF64I32 => |w, i, _| op32_to64(w, i, |a, _| (a as i32 as f64).to_bits()),
        Op::VCvtF64U32 => |w, i, _| op32_to64(w, i, |a, _| (a as f64).to_bits()),
        Op::VCvtF16I16 => |w, i, _| op32(w, i, Out::F16, |[a], e| fp::out16(a as i16 as f64, e)),
        Op::VCvtF16U16 => |w, i, _| op32(w, i, Out::F16, |[a], e| fp::out16(a as u16 as f64, e)),
        // Host float -> int casts truncate, saturate and give 0 for NaN, as
        // the ISA does; a denormal truncates to 0 whether flushed or not.
        Op::VCvtI32F32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Never, |a, _, _| f32::from_bits(a) as i32 as u32).unwrap_or_else(|| {
                op32(w, i, Out::Bits, |[a], e| to_int(fp::in32(a, e).trunc(), i32::MIN as f64, i32::MAX as f64) as u32)
            })
        },
        Op::VCvtU32F32 => |w, i, _| {
            try_fast(w, i, 1, false, Flush::Never, |a, _, _| f32::from_bits(a) as u32).unwrap_or_else(|| {
                op32(w, i, Out::Bits, |[a], e| to_int(fp::in32(a, e).trunc(), 0.0, u32::MAX as f64) as u32)
            })
        },
        Op::VCvtI32F64 => |w, i, _| {
            op64_to32(w, i, Out::Bits, |a, e| to_int(fp::in64(a, e).trunc(), i32::MIN as f64, i32::MAX as f64) as u32)
        },
        Op::VCvtU32F64 => {
            |w, i, _| op64_to32(w, i, Out::Bits, |a, e| to_int(fp::in64(a, e).trunc(), 0.0, u32::MAX as f64) as u32)
        }
        Op::VCvtI16F16 => {
            |w, i, _| op32(w, i, Out::Bits, |[a], e| to_int(fp::in16(a, e).trunc(), -32768.0, 32767.0) as u32 & 0xffff)
        }
        Op::VCvtU16F16 => |w, i, _| op32(w, i, Out::Bits, |[a], e| to_int(fp::in16(a, e).trunc(), 0.0, 65535.0) as u32),
        Op::VCvtFlrI32F32 => |w, i, _| {
            op32(w, i, Out::Bits, |[a], e| to_int(fp::in32(a, e).floor(), i32::MIN as f64, i32::MAX as f64) as u32)
        },
        Op::VCvtRpiI32F32 => |w, i, _| {
            op32(w, i, Out::Bits, |[a], e| {
                to_int((fp::in32(a, e) + 0.5).floor(), i32::MIN as f64, i32::MAX as f64) as u32
            })
        },
        Op::VCvtF32Ubyte0 => |w, i, _| op32(w, i, Out::F32, |[a], _| (a as u8 as f32).to_bits()),
        Op::VCvtF32Ubyte1 => |w, i, _| op32(w, i, Out::F32, |[a], _| ((a >> 8) as u8 as f32).to_bits()),
        Op::VCvtF32Ubyte2 => |w, i, _| op32(w, i, Out::F32, |[a], _| ((a >> 16) as u8 as f32).to_bits()),
        Op::VCvtF32Ubyte3 => |w, i, _| op32(w, i, Out::F32, |[a], _| ((a >> 24) as u8 as f32).to_bits()),
        Op::VCvtOffF32I4 => {
            |w, i, _| op32(w, i, Out::F32, |[a], _| ((((a as i32) << 28) >> 28) as f32 / 16.0).to_bits())
        }
        Op::VCvtNormI16F16 => |w, i, _| op32(w, i, Out::Bits, |[a], e| snorm16(fp::in16(a, e))),
        Op::VCvtNormU16F16 => |w, i, _| op32(w, i, Out::Bits, |[a], e| unorm16(fp::in16(a, e))),
        Op::VCvtPknormI16F32 => {
            |w, i, _| op32(w, i, Out::Bits, |[a, b], e| snorm16(fp::in32(a, e)) | snorm16(fp::in32(b, e)) << 16)
        }
        Op::VCvtPknormU16F32 => {
            |w, i, _| op32(w, i, Out::Bits, |[a, b], e| unorm16(fp::in32(a, e)) | unorm16(fp::in32(b, e)) << 16)
        }
        Op::VCvtPknormI16F16 => {
            |w, i, _| op32(w, i, Out::Bits, |[a, b], e| snorm16(fp::in16(a, e)) | snorm16(fp::in16(b, e)) << 16)
        }
        Op::VCvtPknormU16F16 => {
            |w, i, _| op32(w, i, Out::Bits, |[a, b], e| unorm16(fp::in16(a, e)) | unorm16(fp::in16(b, e)) << 16)
        }
        Op::VCvtPkrtzF16F32 => |w, i, _| op32(w, i, Out::Bits, |[a, b], e| rtz16(a, e) | rtz16(b, e) << 16),
        Op::VCvtPkI16I32 => |w, i, _| op32(w, i, Out::Bits, |[a, b], _| sat_i16(a as i32) | sat_i16(b as i32) << 16),
        Op::VCvtPkU16U32 => |w, i, _| op32(w, i, Out::Bits, |[a, b], _| a.min(0xffff) | b.min(0xffff) << 16),
        Op::VSatPkU8I16 => |w, i, _| op32(w, i, Out::Bits, |[a], _| sat_u8(a as i16) | sat_u8((a >> 16) as i16) << 8),
        Op::VCvtPkU8F32 => |w, i, _| op32(w, i, Out::Bits, |[a, b, c], e| pk_u8(fp::in32(a, e), b, c)),
        Op::VCvtPkaccumU8F32 => op32_acc_pk_u8,
        Op::VPackB32F16 => |w, i, _| op32(w, i, Out::Bits, |[a, b], _| (a & 0xffff) | (b & 0xffff) << 16),
        Op::VCvtF32Fp8 | Op::VCvtF32Bf8 | Op::VCvtPkF32Fp8 | Op::VCvtPkF32Bf8 => return fp8::handler(op),
        Op::VCvtPkFp8F32 | Op::VCvtPkBf8F32 | Op::VCvtSrFp8F32 | Op::VCvtSrBf8F32 => return fp8::handler(op),
        _ => return None,
    };
    Some(h)
}

/// A float (already rounded to an integer value) to an integer with
/// saturation; NaN is 0.
#[inline]
fn to_int(x: f64, lo: f64, hi: f64) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.clamp(lo, hi) as i64
    }
}

/// [-1, 1] → signed 16-bit normalized, rounded to nearest even; NaN is 0.
fn snorm16(x: f64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i32 as u32 & 0xffff
}

/// [0, 1] → unsigned 16-bit normalized, rounded to nearest even; NaN is 0.
fn unorm16(x: f64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u32
}

/// f32 → f16 rounding toward zero (`v_cvt_pkrtz_f16_f32`).
fn rtz16(a: u32, e: Env) -> u32 {
    fp::round(fp::in32(a, e), F16, Rm::Zero, e.out64()) as u32
}

fn sat_i16(v: i32) -> u32 {
    v.clamp(-32768, 32767) as u32 & 0xffff
}

fn sat_u8(v: i16) -> u32 {
    v.clamp(0, 255) as u32
}

/// f32 → u8 for `v_cvt_pk_u8_f32`: round to nearest even, saturate; NaN
/// is 0.
fn to_u8(x: f64) -> u32 {
    if x.is_nan() {
        0
    } else {
        x.round_ties_even().clamp(0.0, 255.0) as u32
    }
}

/// `v_cvt_pk_u8_f32`: byte `b[1:0]` of `c` replaced by `u8(x)`.
fn pk_u8(x: f64, b: u32, c: u32) -> u32 {
    let sh = 8 * (b & 3);
    (c & !(0xff << sh)) | to_u8(x) << sh
}

/// `v_cvt_pkaccum_u8_f32`: as [`pk_u8`] into the destination's old value.
fn op32_acc_pk_u8(
    w: &mut crate::gpu::exec::Wave,
    inst: &crate::isa::Inst,
    _: &mut crate::gpu::exec::Ctx<'_>,
) -> Result<crate::gpu::exec::Flow, crate::gpu::exec::ExecError> {
    op32_acc(w, inst, Out::Bits, |[a, b, d], e| pk_u8(fp::in32(a, e), b, d))
}

/// Checks used by tests: f32 → f32 conversion helpers are exact.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norms_and_saturation() {
        assert_eq!(snorm16(1.0), 0x7fff);
        assert_eq!(snorm16(-1.0), 0x8001);
        assert_eq!(snorm16(-2.0), 0x8001);
        assert_eq!(unorm16(0.5), 32768);
        assert_eq!(unorm16(f64::NAN), 0);
        assert_eq!(sat_i16(40000), 0x7fff);
        assert_eq!(sat_i16(-40000), 0x8000);
        assert_eq!(sat_u8(-5), 0);
        assert_eq!(pk_u8(300.0, 1, 0x1122_3344), 0x1122_ff44);
        assert_eq!(to_int(f64::NAN, 0.0, 1.0), 0);
        assert_eq!(rtz16(0x3f80_0001, Env::new(0x2f0)), 0x3c00);
    }
}
