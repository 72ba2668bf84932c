//! Input element conversions of the matrix instructions: every narrow float format
//! widens exactly to f32, so products of two inputs are exact in f32.
//!
//! The 8-bit float inputs depend on the target: gfx942 reads them as the "FNUZ" formats
//! (`fp::F8`), gfx950 as OCP E4M3/E5M2 (the CDNA4 guide, section 7.3, table 30: bias 7/15,
//! E4M3 NaN at S.1111.111, E5M2 with infinities). gfx950's `*_f8f6f4` MFMAs add the OCP
//! fp6/bf6/fp4 formats ([`Small`]).

use super::shape::Elem;
use crate::gpu::exec::ops::valu::fp::{f8_to_f32, F8};
use crate::gpu::exec::ops::valu::minifloat::{Mini, BF6, BF8, FP4, FP6, FP8};
use crate::gpu::exec::ops::vmem::format::{bf16_to_f32, f16_to_f32};
use crate::isa::Target;
use std::sync::OnceLock;

/// An element format of the gfx950 `*_f8f6f4` MFMAs, chosen by cbsz (A) and blgp (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Small {
    Fp8,
    Bf8,
    Fp6,
    Bf6,
    Fp4,
}

impl Small {
    pub const ALL: [Small; 5] = [Small::Fp8, Small::Bf8, Small::Fp6, Small::Bf6, Small::Fp4];

    /// The format a cbsz/blgp code selects (0 E4M3, 1 E5M2, 2 E2M3, 3 E3M2, 4 E2M1).
    pub fn from_code(code: u8) -> Option<Small> {
        Small::ALL.get(usize::from(code)).copied()
    }

    pub fn bits(self) -> usize {
        self.mini().bits() as usize
    }

    fn mini(self) -> Mini {
        match self {
            Small::Fp8 => FP8,
            Small::Bf8 => BF8,
            Small::Fp6 => FP6,
            Small::Bf6 => BF6,
            Small::Fp4 => FP4,
        }
    }

    /// The value of every code (indexed by the raw bits), built once per format.
    pub fn table(self) -> &'static [f32; 256] {
        static TABLES: OnceLock<[[f32; 256]; 5]> = OnceLock::new();
        let all = TABLES.get_or_init(|| Small::ALL.map(|f| std::array::from_fn(|v| f.mini().decode(v as u32))));
        &all[self as usize]
    }
}

/// How one source's raw elements become values for one instruction.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    /// By the op's element type ([`to_f32`]).
    Std(Elem),
    /// Through a small format's table (raw codes below 256).
    Table(&'static [f32; 256]),
}

impl Input {
    /// The decoding of `e` on `target`: gfx950 reads fp8/bf8 as OCP E4M3/E5M2.
    pub fn of(e: Elem, target: Target) -> Input {
        match (e, target) {
            (Elem::Fp8, Target::Gfx950) => Input::Table(Small::Fp8.table()),
            (Elem::Bf8, Target::Gfx950) => Input::Table(Small::Bf8.table()),
            _ => Input::Std(e),
        }
    }

    #[inline]
    pub fn f32(self, raw: u32) -> f32 {
        match self {
            Input::Std(e) => to_f32(e, raw),
            Input::Table(t) => t[(raw & 0xff) as usize],
        }
    }
}

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
    fn gfx950_reads_8_bit_floats_as_ocp_and_gfx942_as_fnuz() {
        let (ocp, fnuz) = (Input::of(Elem::Fp8, Target::Gfx950), Input::of(Elem::Fp8, Target::Gfx942));
        // E4M3 one is 0x38 (bias 7); FNUZ one is 0x40 (bias 8).
        assert_eq!((ocp.f32(0x38), fnuz.f32(0x40)), (1.0, 1.0));
        assert_eq!((ocp.f32(0x7e), fnuz.f32(0x7f)), (448.0, 240.0));
        assert!(ocp.f32(0x7f).is_nan() && ocp.f32(0xff).is_nan() && fnuz.f32(0x80).is_nan());
        // OCP has a negative zero where FNUZ has its NaN.
        assert_eq!(ocp.f32(0x80).to_bits(), (-0.0f32).to_bits());
        let (ocp, fnuz) = (Input::of(Elem::Bf8, Target::Gfx950), Input::of(Elem::Bf8, Target::Gfx942));
        assert_eq!((ocp.f32(0x3c), fnuz.f32(0x40)), (1.0, 1.0));
        assert_eq!(ocp.f32(0x7c), f32::INFINITY);
        assert_eq!(ocp.f32(0xfc), f32::NEG_INFINITY);
        assert!(ocp.f32(0x7d).is_nan());
        assert_eq!(ocp.f32(0x01), 2f32.powi(-16));
        // Other inputs do not depend on the target.
        assert!(matches!(Input::of(Elem::F16, Target::Gfx950), Input::Std(Elem::F16)));
    }

    #[test]
    fn small_format_tables_follow_the_codes() {
        assert_eq!(Small::from_code(4), Some(Small::Fp4));
        assert_eq!(Small::from_code(5), None);
        assert_eq!(Small::ALL.map(Small::bits), [8, 8, 6, 6, 4]);
        assert_eq!(Small::Fp6.table()[0x1f], 7.5);
        assert_eq!(Small::Bf6.table()[0x3f], -28.0);
        assert_eq!(Small::Fp4.table()[0x7], 6.0);
        assert_eq!(Small::Fp4.table()[0x9], -0.5);
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
