//! The small float formats of gfx950 (CDNA4), after the OCP Microscaling (MX) specification:
//! fp8 E4M3 ("FN": no infinities, S.1111.111 is NaN), bf8 E5M2 (IEEE-like: infinities and
//! NaNs), fp6 E2M3, bf6 E3M2 and fp4 E2M1 (every code a finite number), and the E8M0 scale
//! (a biased power of two). gfx942's FNUZ fp8/bf8 are in `fp` (`F8`).
//!
//! Decoding is exact in f32 (every value of these formats is an f32). Encoding ([`Mini::encode`])
//! takes an exact f64 (every f32/f16/bf16 times any E8M0 scale is one) and rounds to nearest
//! even or stochastically, with the overflow rules of the CDNA4 guide (section 7.3):
//! fp4/fp6 saturate to the largest magnitude (keeping the sign) and flush what rounds below the
//! smallest subnormal to (signed) zero; fp8/bf8 follow MODE.FP16_OVFL: set, infinities and
//! overflow saturate to ±max; clear, they give NaN (E4M3, which has no infinity) or ±inf (E5M2).

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
/// IEEE half and bf16, for the stochastic-rounding conversions from f32 (`v_cvt_sr_f16_f32`,
/// `v_cvt_sr_bf16_f32`), which round the same way as the small formats.
pub const F16: Mini = Mini { ebits: 5, mbits: 10, bias: 15, special: Special::Ieee };
pub const BF16: Mini = Mini { ebits: 8, mbits: 7, bias: 127, special: Special::Ieee };

impl Mini {
    /// Bits per value, sign included.
    pub const fn bits(self) -> u32 {
        1 + self.ebits + self.mbits
    }

    const fn sign_bit(self) -> u32 {
        1 << (self.ebits + self.mbits)
    }

    /// The largest finite magnitude's code (E4M3 0x7e = 448, E5M2 0x7b = 57344, else all ones).
    pub const fn max_code(self) -> u32 {
        match self.special {
            Special::None => self.sign_bit() - 1,
            Special::NanAllOnes => self.sign_bit() - 2,
            Special::Ieee => (((1 << self.ebits) - 1) << self.mbits) - 1,
        }
    }

    /// The code of a NaN result: the all-ones magnitude (E4M3 0x7f, E5M2 0x7f, both NaN), with
    /// the NaN's sign. fp4/fp6 have no NaN: the guide does not say what a NaN converts to;
    /// we give the largest magnitude with the NaN's sign bit, as for infinities.
    const fn nan_code(self) -> u32 {
        match self.special {
            Special::None => self.max_code(),
            _ => self.sign_bit() - 1,
        }
    }

    /// The code for a magnitude beyond the largest finite one (after rounding), or an infinity:
    /// fp4/fp6 saturate; fp8/bf8 saturate with `saturate` (MODE.FP16_OVFL), else give NaN (E4M3)
    /// or infinity (E5M2).
    const fn overflow_code(self, saturate: bool) -> u32 {
        match self.special {
            Special::None => self.max_code(),
            _ if saturate => self.max_code(),
            Special::NanAllOnes => self.sign_bit() - 1,
            Special::Ieee => ((1 << self.ebits) - 1) << self.mbits,
        }
    }

    /// Encodes the exact value `v`: rounded to nearest even (`sr = None`) or stochastically
    /// (`sr = Some((r, k))`: the top `k` bits of `r`, as a binary fraction of one unit in the
    /// last place of the result, are added to the magnitude, which is then truncated; this is
    /// the guide's "add the random value to the mantissa, then truncate", with `k` the number of
    /// mantissa bits the source has beyond the result's). A carry out of the mantissa moves to
    /// the next binade (the pseudocode's "wrap around" comment is not read as dropping it, which
    /// would turn a value near 2 into one near 1). See the module doc for overflow.
    pub fn encode(self, v: f64, sr: Option<(u32, u32)>, saturate: bool) -> u32 {
        let sign = if v.is_sign_negative() { self.sign_bit() } else { 0 };
        if v.is_nan() {
            return sign | self.nan_code();
        }
        let a = v.abs();
        if a.is_infinite() {
            return sign | self.overflow_code(saturate);
        }
        if a == 0.0 {
            return sign;
        }
        // `a` is a normal f64 here (every input is at least 2^-149 * 2^-127).
        let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let min_e = 1 - self.bias;
        let eq = e.max(min_e);
        let q = a * super::fp::pow2(self.mbits as i32 - eq); // exact: a power-of-two scaling
        let whole = q.floor();
        let frac = q - whole;
        let up = match sr {
            None => frac > 0.5 || (frac == 0.5 && whole % 2.0 == 1.0),
            Some((r, k)) => {
                let k = k.min(32);
                let bits = if k == 0 { 0 } else { (r as u64) >> (32 - k) };
                frac + bits as f64 / (1u64 << k) as f64 >= 1.0
            }
        };
        let n = whole as u32 + up as u32;
        // Subnormals (eq == min_e, n < 2^mbits) come out as n; a carry into the next binade,
        // or out of the subnormal range, lands on the next exponent code by itself.
        let code = (((eq + self.bias) as u32) << self.mbits) + n - (1 << self.mbits);
        if code > self.max_code() {
            return sign | self.overflow_code(saturate);
        }
        sign | code
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

    /// Every code decodes and encodes back to itself (NaNs to the canonical NaN).
    #[test]
    fn encoding_round_trips_every_code() {
        for f in [FP8, BF8, FP6, BF6, FP4] {
            for c in 0..1u32 << f.bits() {
                let x = f.decode(c) as f64;
                let back = f.encode(x, None, false);
                if x.is_nan() {
                    assert_eq!(back & (f.sign_bit() - 1), f.sign_bit() - 1, "{f:?} {c:#x}");
                } else {
                    assert_eq!(back, c, "{f:?} {c:#x}");
                }
            }
        }
    }

    /// Rounding to nearest even, overflow and underflow, from the OCP tables' values.
    #[test]
    fn encoding_rounds_and_saturates() {
        // E4M3 1.0 = 0x38, next 1.125 = 0x39: 1.0625 ties to even (0x38), 1.1875 to 0x3a.
        assert_eq!(FP8.encode(1.0625, None, false), 0x38);
        assert_eq!(FP8.encode(1.1875, None, false), 0x3a);
        assert_eq!(FP8.encode(-1.07, None, false), 0xb9);
        // Max 448 (mantissa 110); 464, halfway to 480 (111), ties to 448; above it overflows.
        assert_eq!(FP8.encode(464.0, None, false), 0x7e);
        assert_eq!(FP8.encode(465.0, None, false), 0x7f);
        assert_eq!(FP8.encode(465.0, None, true), 0x7e);
        assert_eq!(FP8.encode(f64::NEG_INFINITY, None, false), 0xff);
        assert_eq!(FP8.encode(f64::NEG_INFINITY, None, true), 0xfe);
        // Subnormals: 2^-9 is the smallest; 2^-10 ties to 0, a bit more rounds up.
        assert_eq!(FP8.encode(2f64.powi(-10), None, false), 0);
        assert_eq!(FP8.encode(-(2f64.powi(-10)) * 1.01, None, false), 0x81);
        assert_eq!(FP8.encode(3.0 * 2f64.powi(-10), None, false), 0x02);
        // E5M2: max 57344; 61440 ties to even (65536) -> inf, or max when saturating.
        assert_eq!(BF8.encode(61439.0, None, false), 0x7b);
        assert_eq!(BF8.encode(61440.0, None, false), 0x7c);
        assert_eq!(BF8.encode(-61440.0, None, true), 0xfb);
        assert_eq!(BF8.encode(f64::INFINITY, None, false), 0x7c);
        assert_eq!(BF8.encode(f64::NAN, None, false) & 0x7f, 0x7f);
        // fp4: 5 ties to 4 (even mantissa), 7 ties to 8 -> saturates at 6; 0.25 ties to 0.
        assert_eq!(FP4.encode(5.0, None, false), 0x6);
        assert_eq!(FP4.encode(7.0, None, false), 0x7);
        assert_eq!(FP4.encode(1e30, None, false), 0x7);
        assert_eq!(FP4.encode(f64::NEG_INFINITY, None, false), 0xf);
        assert_eq!(FP4.encode(0.25, None, false), 0x0);
        assert_eq!(FP4.encode(-0.26, None, false), 0x9);
        assert_eq!(FP4.encode(-0.1, None, false), 0x8, "flushed to a signed zero");
        // fp6 E2M3 max 7.5, bf6 E3M2 max 28.
        assert_eq!(FP6.encode(100.0, None, true), 0x1f);
        assert_eq!(BF6.encode(-30.0, None, false), 0x3f);
        assert_eq!(BF6.encode(0.0625 * 1.5, None, false), 0x02, "1.5 ulp ties to 2");
    }

    #[test]
    fn stochastic_rounding_adds_the_top_random_bits() {
        // 1 + 2^-4 is halfway between E4M3 1.0 and 1.125: an f32 source has 20 bits below
        // the result's mantissa, so r's top 20 bits are the fraction; 0x80000 of 2^20 is half.
        let x = 1.0 + 2f64.powi(-4);
        assert_eq!(FP8.encode(x, Some((0x7ffff << 12, 20)), false), 0x38);
        assert_eq!(FP8.encode(x, Some((0x80000 << 12, 20)), false), 0x39);
        assert_eq!(FP8.encode(x, Some((0x0000_0fff, 20)), false), 0x38, "low bits unused");
        // Exact values never move; the carry out of the mantissa reaches the next binade.
        assert_eq!(FP8.encode(1.0, Some((u32::MAX, 20)), false), 0x38);
        assert_eq!(FP8.encode(1.9, Some((u32::MAX, 20)), false), 0x40);
        // Past the largest value: fp4 saturates, fp8 follows the saturation flag.
        assert_eq!(FP4.encode(5.9, Some((u32::MAX, 22)), false), 0x7);
        assert_eq!(FP8.encode(447.0 + 15.0, Some((u32::MAX, 20)), false), 0x7f);
        assert_eq!(FP8.encode(447.0 + 15.0, Some((u32::MAX, 20)), true), 0x7e);
        // Below the smallest subnormal: rounds up to it or down to zero.
        assert_eq!(FP4.encode(0.125, Some((0xc000_0000, 22)), false), 0x1);
        assert_eq!(FP4.encode(0.125, Some((0x8000_0000, 22)), false), 0x0);
    }
}
