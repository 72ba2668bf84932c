//! The small float formats of gfx950 (CDNA4), after the OCP Microscaling (MX) specification:
//! fp8 E4M3 ("FN": no infinities, S.1111.111 is NaN), bf8 E5M2 (IEEE-like: infinities and
//! NaNs), fp6 E2M3, bf6 E3M2 and fp4 E2M1 (every code a finite number), and the E8M0 scale
//! (a biased power of two). gfx942's FNUZ fp8/bf8 are in `fp` (`F8`).
//!
//! Decoding is exact in f32 (every value of these formats is an f32).

/// How a format spends its top exponent code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// Every code is a finite number (fp6, bf6, fp4).
    None,
    /// Only the all-ones magnitude is NaN; no infinities (OCP E4M3).
    NanAllOnes,
    /// Top exponent: infinity (mantissa 0) or NaN (OCP E5M2).
    Ieee,
}

/// A sign-magnitude small float: `ebits` exponent bits with `bias`, `mbits` mantissa bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mini {
    pub ebits: u32,
    pub mbits: u32,
    pub bias: i32,
    pub special: Special,
}

pub const FP8: Mini = Mini { ebits: 4, mbits: 3, bias: 7, special: Special::NanAllOnes };
pub const BF8: Mini = Mini { ebits: 5, mbits: 2, bias: 15, special: Special::Ieee };
pub const FP6: Mini = Mini { ebits: 2, mbits: 3, bias: 1, special: Special::None };
pub const BF6: Mini = Mini { ebits: 3, mbits: 2, bias: 3, special: Special::None };
pub const FP4: Mini = Mini { ebits: 2, mbits: 1, bias: 1, special: Special::None };

impl Mini {
    /// Bits per value, sign included.
    pub const fn bits(self) -> u32 {
        1 + self.ebits + self.mbits
    }

    const fn sign_bit(self) -> u32 {
        1 << (self.ebits + self.mbits)
    }

    /// Decodes the low `bits()` bits of `v` (exact).
    pub fn decode(self, v: u32) -> f32 {
        let v = v & ((1 << self.bits()) - 1);
        let neg = v & self.sign_bit() != 0;
        let mag = v & (self.sign_bit() - 1);
        let e = mag >> self.mbits;
        let m = mag & ((1 << self.mbits) - 1);
        let top = (1 << self.ebits) - 1;
        let x = match self.special {
            Special::NanAllOnes if mag == self.sign_bit() - 1 => f32::NAN,
            Special::Ieee if e == top && m == 0 => f32::INFINITY,
            Special::Ieee if e == top => f32::NAN,
            _ if e == 0 => m as f32 * pow2(1 - self.bias - self.mbits as i32),
            _ => (m | 1 << self.mbits) as f32 * pow2(e as i32 - self.bias - self.mbits as i32),
        };
        if neg {
            -x
        } else {
            x
        }
    }
}

/// The E8M0 scale `v` (low 8 bits) as an f32: 2^(v - 127); 0xff is NaN.
pub fn e8m0(v: u32) -> f32 {
    match v & 0xff {
        0xff => f32::NAN,
        e => pow2(e as i32 - 127),
    }
}

/// 2^n as an f32 for the exponents these formats reach (-149..=127; below, 0).
fn pow2(n: i32) -> f32 {
    if n >= -126 {
        f32::from_bits(((n + 127) as u32) << 23)
    } else if n >= -149 {
        f32::from_bits(1 << (n + 149))
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from the OCP MX specification's format tables.
    #[test]
    fn decodes_the_ocp_tables() {
        // E4M3: max 448 (0x7e), min normal 2^-6 (0x08), min subnormal 2^-9, NaN 0x7f/0xff.
        assert_eq!(FP8.decode(0x7e), 448.0);
        assert_eq!(FP8.decode(0x38), 1.0);
        assert_eq!(FP8.decode(0x08), 2f32.powi(-6));
        assert_eq!(FP8.decode(0x01), 2f32.powi(-9));
        assert!(FP8.decode(0x7f).is_nan() && FP8.decode(0xff).is_nan());
        assert_eq!(FP8.decode(0xb8), -1.0);
        // E5M2: max 57344 (0x7b), inf 0x7c, NaN 0x7d..0x7f, min subnormal 2^-16.
        assert_eq!(BF8.decode(0x7b), 57344.0);
        assert_eq!(BF8.decode(0x3c), 1.0);
        assert_eq!(BF8.decode(0x7c), f32::INFINITY);
        assert_eq!(BF8.decode(0xfc), f32::NEG_INFINITY);
        assert!(BF8.decode(0x7d).is_nan());
        assert_eq!(BF8.decode(0x01), 2f32.powi(-16));
        // E2M3: max 7.5, min subnormal 0.125; E3M2: max 28, min subnormal 0.0625;
        // E2M1: values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
        assert_eq!(FP6.decode(0x1f), 7.5);
        assert_eq!(FP6.decode(0x01), 0.125);
        assert_eq!(FP6.decode(0x3f), -7.5);
        assert_eq!(BF6.decode(0x1f), 28.0);
        assert_eq!(BF6.decode(0x01), 0.0625);
        let fp4: Vec<f32> = (0..8).map(|v| FP4.decode(v)).collect();
        assert_eq!(fp4, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(FP4.decode(0xf), -6.0);
        // E8M0: 127 is 1.0, 0 is 2^-127, 254 is 2^127, 255 NaN.
        assert_eq!(e8m0(127), 1.0);
        assert_eq!(e8m0(0), 2f32.powi(-127));
        assert_eq!(e8m0(254), 2f32.powi(127));
        assert!(e8m0(255).is_nan());
    }
}
