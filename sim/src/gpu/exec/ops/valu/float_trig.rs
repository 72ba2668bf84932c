//! `v_trig_preop_f64`: 53-bit slices of 2/π for large-argument reduction.
//!
//! The hardware holds 1201 fractional bits of 2/π. They are derived here
//! once, in fixed point: π by Machin's formula (π = 16·atan(1/5) −
//! 4·atan(1/239), whose series only divide by small integers), then 2/π
//! by Newton's iteration for the reciprocal, y ← y·(2 − π·y).

use std::sync::OnceLock;

/// Fractional bits of 2/π the hardware table holds.
const TABLE_BITS: usize = 1201;
/// Working precision: 32-bit limbs after the binary point.
const LIMBS: usize = 44; // 1408 bits

/// A non-negative fixed-point number: `int + frac / 2^(32·LIMBS)`, limbs
/// most significant first.
#[derive(Clone)]
struct Fixed {
    int: u64,
    frac: [u32; LIMBS],
}

impl Fixed {
    fn from_int(v: u64) -> Fixed {
        Fixed { int: v, frac: [0; LIMBS] }
    }

    /// `self / d` for a divisor below 2^32.
    fn div_small(&self, d: u64) -> Fixed {
        let mut r = self.int % d;
        let int = self.int / d;
        let mut frac = [0u32; LIMBS];
        for (o, &x) in frac.iter_mut().zip(&self.frac) {
            let cur = (r << 32) | x as u64;
            *o = (cur / d) as u32;
            r = cur % d;
        }
        Fixed { int, frac }
    }

    fn add(&self, o: &Fixed) -> Fixed {
        let mut frac = [0u32; LIMBS];
        let mut carry = 0u64;
        for i in (0..LIMBS).rev() {
            let s = self.frac[i] as u64 + o.frac[i] as u64 + carry;
            frac[i] = s as u32;
            carry = s >> 32;
        }
        Fixed { int: self.int + o.int + carry, frac }
    }

    /// `self - o`, requiring `self >= o`.
    fn sub(&self, o: &Fixed) -> Fixed {
        let mut frac = [0u32; LIMBS];
        let mut borrow = 0i64;
        for i in (0..LIMBS).rev() {
            let s = self.frac[i] as i64 - o.frac[i] as i64 - borrow;
            frac[i] = s.rem_euclid(1 << 32) as u32;
            borrow = (s < 0) as i64;
        }
        Fixed { int: self.int - o.int - borrow as u64, frac }
    }

    /// The product, truncated to the working precision (operands below 8).
    fn mul(&self, o: &Fixed) -> Fixed {
        // Digits: index 0 is the integer part, then the fraction limbs.
        let a: Vec<u64> = std::iter::once(self.int).chain(self.frac.iter().map(|&x| x as u64)).collect();
        let b: Vec<u64> = std::iter::once(o.int).chain(o.frac.iter().map(|&x| x as u64)).collect();
        let mut acc = vec![0u128; 2 * LIMBS + 2];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                acc[i + j] += x as u128 * y as u128;
            }
        }
        // Normalize base 2^32 from the least significant digit.
        let mut carry = 0u128;
        for d in acc.iter_mut().rev() {
            let v = *d + carry;
            *d = v & 0xffff_ffff;
            carry = v >> 32;
        }
        let mut frac = [0u32; LIMBS];
        for (k, f) in frac.iter_mut().enumerate() {
            *f = acc[k + 1] as u32;
        }
        Fixed { int: (acc[0] + (carry << 32)) as u64, frac }
    }
}

/// `atan(1/m)` by its alternating series.
fn atan_inv(m: u64) -> Fixed {
    let mut power = Fixed::from_int(1).div_small(m); // 1/m^(2k+1)
    let mut sum = power.clone();
    let mut k = 1u64;
    loop {
        power = power.div_small(m * m);
        if power.int == 0 && power.frac.iter().all(|&x| x == 0) {
            break;
        }
        let term = power.div_small(2 * k + 1);
        sum = if k % 2 == 1 { sum.sub(&term) } else { sum.add(&term) };
        k += 1;
    }
    sum
}

/// The fractional bits of 2/π, most significant first (bit 0 has weight 2^-1).
fn two_over_pi_bits() -> &'static [bool; TABLE_BITS] {
    static BITS: OnceLock<[bool; TABLE_BITS]> = OnceLock::new();
    BITS.get_or_init(|| {
        let pi = atan_inv(5).mul(&Fixed::from_int(16)).sub(&atan_inv(239).mul(&Fixed::from_int(4)));
        // Newton: y ← y (2 − π y), from a 53-bit start.
        let start = (1.0 / std::f64::consts::PI * (1u64 << 52) as f64) as u64;
        let mut y = Fixed::from_int(start).div_small(1 << 26).div_small(1 << 26);
        for _ in 0..6 {
            let t = Fixed::from_int(2).sub(&pi.mul(&y));
            y = y.mul(&t);
        }
        // 2/π = 2·(1/π).
        let two = y.add(&y);
        std::array::from_fn(|i| two.frac[i / 32] >> (31 - i % 32) & 1 != 0)
    })
}

/// `v_trig_preop_f64 D, S0, S1`: the 53 bits of 2/π starting
/// `S1[4:0]·53` bits in (further in by the exponent of S0 beyond 1077),
/// scaled to their place (and by 2^128 for very large S0).
pub fn trig_preop(s0: u64, s1: u32) -> u64 {
    let bits = two_over_pi_bits();
    let exp = (s0 >> 52 & 0x7ff) as usize;
    let mut shift = (s1 & 31) as usize * 53;
    if exp > 1077 {
        shift += exp - 1077;
    }
    let mut m = 0u64;
    for i in 0..53 {
        let b = bits.get(shift + i).copied().unwrap_or(false);
        m = m << 1 | b as u64;
    }
    let mut scale = -53 - shift as i32;
    if exp >= 1968 {
        scale += 128;
    }
    super::fp::round_parts(false, m as u128, scale, super::fp::F64, super::fp::Rm::Ne, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_over_pi_is_right() {
        // The first 64 fractional bits of 2/π are 0xa2f9836e4e441529.
        let bits = two_over_pi_bits();
        let top = bits[..64].iter().fold(0u64, |a, &b| a << 1 | b as u64);
        assert_eq!(top, 0xa2f9_836e_4e44_1529);
        // Slice 0 is 2/π rounded down to 53 bits.
        let d = f64::from_bits(trig_preop(1.0f64.to_bits(), 0));
        assert!((d - std::f64::consts::FRAC_2_PI).abs() <= f64::EPSILON);
        assert!(d <= std::f64::consts::FRAC_2_PI);
        // The slices sum to 2/π far beyond f64 precision.
        let s1 = f64::from_bits(trig_preop(1.0f64.to_bits(), 1));
        assert!(s1 < 2f64.powi(-53) && s1 > 0.0);
    }
}
