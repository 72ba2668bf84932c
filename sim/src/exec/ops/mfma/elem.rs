//! Input element conversions of the matrix instructions: every narrow float format
//! widens exactly to f32, so products of two inputs are exact in f32.

use super::shape::Elem;
use crate::exec::ops::valu::fp::{f8_to_f32, F8};
use crate::exec::ops::vmem::format::{bf16_to_f32, f16_to_f32};

/// The value of a raw input element as f32 (exact for every format but `Xf32`, which
/// is f32 rounded to its 10-bit mantissa first).
#[inline]
pub fn to_f32(e: Elem, raw: u32) -> f32 {
    match e {
        Elem::F32 => f32::from_bits(raw),
        Elem::Xf32 => f32::from_bits(round_to_xf32(raw)),
        Elem::F16 => f16_to_f32(raw as u16),
        Elem::Bf16 => bf16_to_f32(raw as u16),
        // gfx942's "FNUZ" 8-bit floats: E4M3 bias 8 / E5M2 bias 16, no infinities, 0x80 NaN.
        Elem::Fp8 => f8_to_f32(raw as u8, F8::Fp8),
        Elem::Bf8 => f8_to_f32(raw as u8, F8::Bf8),
        // Integer and f64 inputs never take this path (their accumulators convert them).
        Elem::I8 => f32::from(raw as u8 as i8),
        Elem::F64 => f64::from_bits(u64::from(raw)) as f32,
    }
}

/// f32 bits rounded to nearest even at 10 mantissa bits (the "xf32" format of gfx942's
/// `_xf32` MFMAs); NaN and infinity pass through.
pub fn round_to_xf32(bits: u32) -> u32 {
    if bits & 0x7f80_0000 == 0x7f80_0000 {
        return bits;
    }
    let lsb = (bits >> 13) & 1;
    bits.wrapping_add(0x0fff + lsb) & !0x1fff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp8_to_f32(v: u8) -> f32 {
        to_f32(Elem::Fp8, u32::from(v))
    }

    fn bf8_to_f32(v: u8) -> f32 {
        to_f32(Elem::Bf8, u32::from(v))
    }

    #[test]
    fn fp8_values_from_the_format_definition() {
        assert_eq!(fp8_to_f32(0x00), 0.0);
        assert!(fp8_to_f32(0x80).is_nan());
        // Largest: exponent 15, mantissa 7: 1.875 * 2^7.
        assert_eq!(fp8_to_f32(0x7f), 240.0);
        assert_eq!(fp8_to_f32(0xff), -240.0);
        // One: exponent 8 (the bias), mantissa 0.
        assert_eq!(fp8_to_f32(0x40), 1.0);
        // Smallest denormal: 1/8 * 2^(1-8).
        assert_eq!(fp8_to_f32(0x01), 2f32.powi(-10));
    }

    #[test]
    fn bf8_values_from_the_format_definition() {
        assert!(bf8_to_f32(0x80).is_nan());
        assert_eq!(bf8_to_f32(0x7f), 57344.0);
        assert_eq!(bf8_to_f32(0x40), 1.0);
        assert_eq!(bf8_to_f32(0x01), 2f32.powi(-17));
        assert_eq!(bf8_to_f32(0xc2), -1.5);
    }

    #[test]
    fn xf32_rounds_to_ten_mantissa_bits() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
        assert_eq!(f32::from_bits(round_to_xf32((1.0f32 + 2f32.powi(-11)).to_bits())), 1.0);
        assert_eq!(
            f32::from_bits(round_to_xf32((1.0f32 + 3.0 * 2f32.powi(-11)).to_bits())),
            1.0 + 2.0 * 2f32.powi(-10)
        );
        assert_eq!(round_to_xf32(f32::INFINITY.to_bits()), f32::INFINITY.to_bits());
        assert!(f32::from_bits(round_to_xf32(f32::NAN.to_bits())).is_nan());
    }
}
