//! Floating-point machinery shared by the float VALU ops: the MODE
//! register's rounding and denormal controls, exact rounding of a value to
//! f16/f32/f64 under any rounding mode, denormal flushing, NaN quieting,
//! and the fp8/bf8 formats of MI300.
//!
//! The approach: an op computes its exact result, or a *round-to-odd* f64
//! approximation of it (which keeps enough information to round once more
//! to any narrower format under any mode), and [`round`] produces the
//! destination's bits. Plain host arithmetic is used where it is already
//! exact (round-to-nearest-even with denormals kept).

/// IEEE rounding direction (MODE.FP_ROUND encoding: 0 nearest-even,
/// 1 toward +inf, 2 toward -inf, 3 toward zero).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rm {
    Ne,
    Up,
    Down,
    Zero,
}

impl Rm {
    pub fn from_bits(b: u32) -> Rm {
        match b & 3 {
            0 => Rm::Ne,
            1 => Rm::Up,
            2 => Rm::Down,
            _ => Rm::Zero,
        }
    }
}

/// The float controls of the MODE register: round (bits 0..1 f32,
/// 2..3 f64/f16), denormals (bits 4..5 f32, 6..7 f64/f16; in each pair the
/// low bit keeps input denormals, the high bit keeps output denormals),
/// DX10 clamp (bit 8) and IEEE (bit 9).
#[derive(Clone, Copy, Debug)]
pub struct Env {
    pub mode: u32,
}

impl Env {
    #[inline]
    pub fn new(mode: u32) -> Env {
        Env { mode }
    }
    #[inline]
    pub fn rm32(self) -> Rm {
        Rm::from_bits(self.mode)
    }
    /// Rounding of f64 and f16 results.
    #[inline]
    pub fn rm64(self) -> Rm {
        Rm::from_bits(self.mode >> 2)
    }
    #[inline]
    pub fn in32(self) -> bool {
        self.mode >> 4 & 1 != 0
    }
    #[inline]
    pub fn out32(self) -> bool {
        self.mode >> 5 & 1 != 0
    }
    /// Input denormals kept for f64 and f16.
    #[inline]
    pub fn in64(self) -> bool {
        self.mode >> 6 & 1 != 0
    }
    #[inline]
    pub fn out64(self) -> bool {
        self.mode >> 7 & 1 != 0
    }
    #[inline]
    pub fn ieee(self) -> bool {
        self.mode >> 9 & 1 != 0
    }
    /// f32 results can come straight from host arithmetic: round to
    /// nearest even, denormals kept on input and output.
    #[inline]
    pub fn host32(self) -> bool {
        self.mode & 0x33 == 0x30
    }
    /// As [`Env::host32`] for f64 (and f16 through f64).
    #[inline]
    pub fn host64(self) -> bool {
        self.mode & 0xcc == 0xc0
    }
}

/// A binary floating-point format: exponent and stored mantissa widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    pub ebits: u32,
    pub mbits: u32,
}

pub const F16: Fmt = Fmt { ebits: 5, mbits: 10 };
/// bf16: the top half of an f32.
pub const BF16: Fmt = Fmt { ebits: 8, mbits: 7 };
pub const F32: Fmt = Fmt { ebits: 8, mbits: 23 };
pub const F64: Fmt = Fmt { ebits: 11, mbits: 52 };

impl Fmt {
    #[inline]
    pub const fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    #[inline]
    pub const fn sign(self) -> u64 {
        1 << (self.ebits + self.mbits)
    }
    #[inline]
    pub const fn exp_mask(self) -> u64 {
        ((1 << self.ebits) - 1) << self.mbits
    }
    #[inline]
    pub const fn man_mask(self) -> u64 {
        (1 << self.mbits) - 1
    }
    #[inline]
    pub const fn inf(self) -> u64 {
        self.exp_mask()
    }
    /// The largest finite magnitude.
    #[inline]
    pub const fn max(self) -> u64 {
        self.exp_mask() - 1
    }
    #[inline]
    pub const fn is_nan(self, b: u64) -> bool {
        b & self.exp_mask() == self.exp_mask() && b & self.man_mask() != 0
    }
    #[inline]
    pub const fn is_snan(self, b: u64) -> bool {
        self.is_nan(b) && b >> (self.mbits - 1) & 1 == 0
    }
    #[inline]
    pub const fn is_denorm(self, b: u64) -> bool {
        b & self.exp_mask() == 0 && b & self.man_mask() != 0
    }
    /// Sets the quiet bit of a NaN.
    #[inline]
    pub const fn quiet(self, b: u64) -> u64 {
        b | 1 << (self.mbits - 1)
    }
    /// A denormal becomes a zero of the same sign when `keep` is false.
    #[inline]
    pub const fn flush(self, b: u64, keep: bool) -> u64 {
        if !keep && self.is_denorm(b) {
            b & self.sign()
        } else {
            b
        }
    }
}

/// Rounds `(-1)^sign * m * 2^e` (exact) to format `f` under `rm`; a
/// denormal result becomes a signed zero unless `denorm`.
pub fn round_parts(sign: bool, m: u128, e: i32, f: Fmt, rm: Rm, denorm: bool) -> u64 {
    let sbit = if sign { f.sign() } else { 0 };
    if m == 0 {
        return sbit;
    }
    let bias = f.bias();
    let emin = 1 - bias;
    let lead = 127 - m.leading_zeros() as i32 + e;
    let q = lead.max(emin) - f.mbits as i32;
    let shift = q - e;
    let (mut r, rem_up) = if shift <= 0 {
        (m << (-shift) as u32, false)
    } else if shift >= 128 {
        // The whole value is below half the quantum.
        (0, matches!((rm, sign), (Rm::Up, false) | (Rm::Down, true)))
    } else {
        let s = shift as u32;
        let r = m >> s;
        let rem = m & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        let up = match rm {
            Rm::Ne => rem > half || (rem == half && r & 1 == 1),
            Rm::Zero => false,
            Rm::Up => !sign && rem != 0,
            Rm::Down => sign && rem != 0,
        };
        (r, up)
    };
    let mut q = q;
    if rem_up {
        r += 1;
    }
    if r >> (f.mbits + 1) != 0 {
        r >>= 1;
        q += 1;
    }
    if r >> f.mbits == 0 {
        // Subnormal (q is the minimum quantum).
        return if denorm || r == 0 { sbit | r as u64 } else { sbit };
    }
    let field = q + f.mbits as i32 + bias;
    if field >= (1 << f.ebits) - 1 {
        let inf = match rm {
            Rm::Ne => true,
            Rm::Zero => false,
            Rm::Up => !sign,
            Rm::Down => sign,
        };
        return sbit | if inf { f.inf() } else { f.max() };
    }
    sbit | (field as u64) << f.mbits | (r as u64 & f.man_mask())
}

/// Splits a finite f64 into sign, integer mantissa and exponent.
#[inline]
pub fn parts(x: f64) -> (bool, u64, i32) {
    let b = x.to_bits();
    let be = (b >> 52 & 0x7ff) as i32;
    let frac = b & ((1 << 52) - 1);
    if be == 0 {
        (b >> 63 != 0, frac, -1074)
    } else {
        (b >> 63 != 0, frac | 1 << 52, be - 1075)
    }
}

/// Rounds `x` (exact, or a round-to-odd approximation with at least two
/// more bits than `f`) to format `f`. NaNs keep their sign and top payload
/// bits and become quiet.
pub fn round(x: f64, f: Fmt, rm: Rm, denorm: bool) -> u64 {
    if f == F32 && rm == Rm::Ne {
        // The host conversion is exactly this (NaNs included).
        return F32.flush((x as f32).to_bits() as u64, denorm);
    }
    let b = x.to_bits();
    if f == F16 && rm == Rm::Ne {
        // Results in the normal f16 range: round the mantissa directly
        // (a carry out of it correctly bumps the exponent, up to inf).
        let e = (b >> 52 & 0x7ff) as i64 - 1023;
        if (-14..=15).contains(&e) {
            let m = b & ((1 << 52) - 1);
            let (r, rem) = (m >> 42, m & ((1 << 42) - 1));
            let up = (rem > 1 << 41 || (rem == 1 << 41 && r & 1 == 1)) as u64;
            let sign = (b >> 63) << 15;
            return sign | ((((e + 15) as u64) << 10) + r + up);
        }
        let sign = (b >> 63) << 15;
        if e > 15 && !x.is_nan() {
            // At least 2^16: beyond the largest finite f16 (65504) and the halfway point to
            // the next power (65520), so infinity.
            return sign | 0x7c00;
        }
        if e < -14 && denorm {
            // Below the smallest normal (zeros too), denormals kept: the mantissa is |x| in
            // units of 2^-24 rounded to an integer, ties to even (exact: a power-of-two
            // scaling, then one rounding); 1024 is the smallest normal's encoding.
            return sign | (x.abs() * 2f64.powi(24)).round_ties_even() as u64;
        }
    }
    let sbit = if b >> 63 != 0 { f.sign() } else { 0 };
    if x.is_nan() {
        let payload = (b & ((1 << 52) - 1)) >> (52 - f.mbits);
        return f.quiet(sbit | f.inf() | payload);
    }
    if x.is_infinite() {
        return sbit | f.inf();
    }
    if x == 0.0 {
        // A signed zero in any mode (the f16 conversion of zero-padded data: whole waves).
        return sbit;
    }
    let (s, m, e) = parts(x);
    round_parts(s, m as u128, e, f, rm, denorm)
}

/// `a + b` exactly as `s + err` (Knuth's TwoSum; `s` is the rounded sum).
#[inline]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// The round-to-odd version of `s` given the exact error `err` of `s`:
/// an inexact result with an even last bit moves one ulp toward the truth.
#[inline]
pub fn odd(s: f64, err: f64) -> f64 {
    let b = s.to_bits();
    if err != 0.0 && s.is_finite() && b & 1 == 0 {
        if (err > 0.0) == (s > 0.0) {
            f64::from_bits(b + 1)
        } else {
            f64::from_bits(b - 1)
        }
    } else {
        s
    }
}

/// `a + b` rounded to odd. Branch-free (the lane loops vectorize it): an
/// inexact sum with an even last bit moves one ulp toward the exact value;
/// infinities and NaNs (whose error term is NaN) are left alone.
#[inline]
pub fn add_odd(a: f64, b: f64) -> f64 {
    let (s, err) = two_sum(a, b);
    let bits = s.to_bits();
    let fix = (err.abs() > 0.0) as u64 & !bits & 1;
    let toward_zero = (err.to_bits() ^ bits) >> 63;
    f64::from_bits(bits.wrapping_add(fix).wrapping_sub(2 * (fix & toward_zero)))
}

/// `a * b + c` for operands of at most 26 significant bits (f32, f16: the
/// product is exact in f64), rounded to odd.
#[inline]
pub fn fma_odd(a: f64, b: f64, c: f64) -> f64 {
    add_odd(a * b, c)
}

/// Rounds the round-to-odd or exact `x` to f32 bits under `env`.
#[inline]
pub fn out32(x: f64, env: Env) -> u32 {
    if env.rm32() == Rm::Ne {
        // The host conversion rounds to nearest even, denormals included;
        // flushing the rounded result is what the hardware does.
        F32.flush((x as f32).to_bits() as u64, env.out32()) as u32
    } else {
        round(x, F32, env.rm32(), env.out32()) as u32
    }
}

/// Rounds the round-to-odd or exact `x` to f16 bits under `env`.
#[inline]
pub fn out16(x: f64, env: Env) -> u32 {
    round(x, F16, env.rm64(), env.out64()) as u32
}

/// An f32 operand with input-denormal flushing applied.
#[inline]
pub fn in32(b: u32, env: Env) -> f64 {
    f32::from_bits(F32.flush(b as u64, env.in32()) as u32) as f64
}

/// An f16 operand (low 16 bits of `b`) with input-denormal flushing applied.
#[inline]
pub fn in16(b: u32, env: Env) -> f64 {
    f16_to_f64(F16.flush((b & 0xffff) as u64, env.in64()) as u16)
}

/// An f64 operand with input-denormal flushing applied.
#[inline]
pub fn in64(b: u64, env: Env) -> f64 {
    f64::from_bits(F64.flush(b, env.in64()))
}

/// `2^n` for `n` in the normal f64 exponent range (-1022..=1023).
#[inline]
pub fn pow2(n: i32) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// Exact widening of an f16 to f64 (NaNs stay NaN with their payload).
#[inline]
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = ((h >> 15) as u64) << 63;
    let e = (h >> 10 & 0x1f) as u64;
    let m = (h & 0x3ff) as u64;
    match e {
        // m * 2^-24, exact.
        0 => f64::from_bits(sign | (m as f64 * f64::from_bits(0x3e70_0000_0000_0000)).to_bits()),
        31 if m == 0 => f64::from_bits(sign | 0x7ff0_0000_0000_0000),
        31 => f64::from_bits(sign | 0x7ff8_0000_0000_0000 | m << 42),
        _ => f64::from_bits(sign | (e + 1023 - 15) << 52 | m << 42),
    }
}

/// Finishes an f64 result `s` computed with round-to-nearest whose exact
/// error is `err`, for the directed rounding modes.
pub fn directed64(s: f64, err: f64, rm: Rm) -> f64 {
    if err == 0.0 || err.is_nan() || !s.is_finite() {
        return s;
    }
    match rm {
        Rm::Ne => s,
        Rm::Up if err > 0.0 => s.next_up(),
        Rm::Down if err < 0.0 => s.next_down(),
        Rm::Zero if s > 0.0 && err < 0.0 => s.next_down(),
        Rm::Zero if s < 0.0 && err > 0.0 => s.next_up(),
        _ => s,
    }
}

/// The result of an f64 op whose exact value overflowed to `s = ±inf`
/// under round-to-nearest, for the other modes.
pub fn overflow64(s: f64, rm: Rm) -> f64 {
    let keep_inf = match rm {
        Rm::Ne => true,
        Rm::Zero => false,
        Rm::Up => s > 0.0,
        Rm::Down => s < 0.0,
    };
    if keep_inf {
        s
    } else {
        f64::MAX.copysign(s)
    }
}

/// Finishes an f64 result: rounding direction, overflow, output flushing.
#[inline]
pub fn fin64(s: f64, err: f64, finite_inputs: bool, env: Env) -> u64 {
    let rm = env.rm64();
    let v = if rm == Rm::Ne {
        s
    } else if s.is_infinite() && finite_inputs {
        overflow64(s, rm)
    } else {
        directed64(s, err, rm)
    };
    F64.flush(v.to_bits(), env.out64())
}

/// `a * b + c` in f64, times `2^scale`, rounded once to f64 under `rm`
/// (exact integer arithmetic: the product has 106 bits, and an addend too
/// far below the other term only matters as a sticky bit).
pub fn fma64_scaled(a: f64, b: f64, c: f64, scale: i32, rm: Rm, denorm: bool) -> u64 {
    let finish = |v: f64| F64.flush(v.to_bits(), denorm);
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return finish(a.mul_add(b, c));
    }
    if a == 0.0 || b == 0.0 || c == 0.0 {
        let (s, m, e, zero) = if a == 0.0 || b == 0.0 {
            let (s, m, e) = parts(c);
            (s, m as u128, e, c == 0.0)
        } else {
            let (sa, ma, ea) = parts(a);
            let (sb, mb, eb) = parts(b);
            (sa != sb, ma as u128 * mb as u128, ea + eb, false)
        };
        if zero {
            // Signed-zero rules of IEEE addition.
            let r = (a * b) + c;
            return if r == 0.0 && rm == Rm::Down && (a * b).is_sign_negative() != c.is_sign_negative() {
                (-0.0f64).to_bits()
            } else {
                r.to_bits()
            };
        }
        return round_parts(s, m, e.saturating_add(scale), F64, rm, denorm);
    }
    let (sa, ma, ea) = parts(a);
    let (sb, mb, eb) = parts(b);
    let (sc, mc, ec) = parts(c);
    let (p, ep, sp) = (ma as u128 * mb as u128, ea + eb, sa != sb);
    let top = |m: u128, e: i32| 127 - m.leading_zeros() as i32 + e;
    let ((hm, he, hs), (lm, le, ls)) = if top(p, ep) >= top(mc as u128, ec) {
        ((p, ep, sp), (mc as u128, ec, sc))
    } else {
        ((mc as u128, ec, sc), (p, ep, sp))
    };
    // Put the larger term's top bit at bit 124.
    let sh = 124 - (127 - hm.leading_zeros() as i32);
    let (h, e0) = (hm << sh, he - sh);
    let (l, sticky) = if le >= e0 {
        (lm << (le - e0), false)
    } else {
        let d = e0 - le;
        if d < 128 {
            (lm >> d, lm & ((1u128 << d) - 1) != 0)
        } else {
            (0, true)
        }
    };
    let (mut m, mut neg) = if hs == ls {
        (((h + l) << 1) | sticky as u128, hs)
    } else if h >= l {
        (((h - l) << 1) - sticky as u128, hs)
    } else {
        (((l - h) << 1) - sticky as u128, ls)
    };
    if m == 0 {
        neg = rm == Rm::Down;
        m = 0;
    }
    round_parts(neg, m, e0 - 1 + scale, F64, rm, denorm)
}

// ----- min/max ----------------------------------------------------------

/// Total "less than" on non-NaN values with -0 < +0.
#[inline]
fn lt_signed_zero(a: f64, b: f64) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && !b.is_sign_negative())
}

/// `v_min`/`v_max` on bits of format `f` (values already flushed): in IEEE
/// mode a signalling NaN operand is quieted and returned; otherwise a NaN
/// operand yields the other operand; -0 orders below +0.
pub fn minmax(a: u64, b: u64, av: f64, bv: f64, f: Fmt, max: bool, ieee: bool) -> u64 {
    if ieee && f.is_snan(a) {
        return f.quiet(a);
    }
    if ieee && f.is_snan(b) {
        return f.quiet(b);
    }
    if f.is_nan(a) {
        return if f.is_nan(b) { f.quiet(b) } else { b };
    }
    if f.is_nan(b) {
        return a;
    }
    let pick_b = if max { lt_signed_zero(av, bv) } else { lt_signed_zero(bv, av) };
    if pick_b {
        b
    } else {
        a
    }
}

/// `v_med3`: the middle of three values; with any NaN, the ISA's
/// `min3`-of-the-rest rule (IEEE: NaN operands as in min/max).
pub fn med3(v: [u64; 3], x: [f64; 3], f: Fmt, ieee: bool) -> u64 {
    if v.iter().any(|&b| f.is_nan(b)) {
        let m = minmax(v[0], v[1], x[0], x[1], f, false, ieee);
        return minmax(m, v[2], to_f64(m, f), x[2], f, false, ieee);
    }
    let (lo, hi) = if lt_signed_zero(x[1], x[0]) { (1, 0) } else { (0, 1) };
    if lt_signed_zero(x[hi], x[2]) {
        v[hi]
    } else if lt_signed_zero(x[2], x[lo]) {
        v[lo]
    } else {
        v[2]
    }
}

/// Bits of format `f` as an f64 (exact).
pub fn to_f64(b: u64, f: Fmt) -> f64 {
    match f.mbits {
        10 => f16_to_f64(b as u16),
        23 => f32::from_bits(b as u32) as f64,
        _ => f64::from_bits(b),
    }
}

// ----- fp8 / bf8 (MI300) --------------------------------------------------

/// MI300's 8-bit float formats (the "FNUZ" variants): no infinities, a
/// single NaN 0x80 (negative zero's encoding), no negative zero.
/// fp8 = E4M3 with bias 8, bf8 = E5M2 with bias 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F8 {
    Fp8,
    Bf8,
}

impl F8 {
    fn layout(self) -> (u32, u32, i32) {
        match self {
            F8::Fp8 => (4, 3, 8),
            F8::Bf8 => (5, 2, 16),
        }
    }
}

/// Decodes an 8-bit float to f32 (exact). 0x80 is NaN.
pub fn f8_to_f32(b: u8, k: F8) -> f32 {
    let (eb, mb, bias) = k.layout();
    if b == 0x80 {
        return f32::from_bits(0x7fc0_0000);
    }
    let sign = if b >> 7 != 0 { -1.0f32 } else { 1.0 };
    let e = (b as u32 >> mb) & ((1 << eb) - 1);
    let m = (b as u32) & ((1 << mb) - 1);
    let mag = if e == 0 {
        m as f32 * pow2(1 - bias - mb as i32) as f32
    } else {
        (m | 1 << mb) as f32 * pow2(e as i32 - bias - mb as i32) as f32
    };
    sign * mag
}

/// Encodes an f32 as an 8-bit float: round to nearest even, or
/// stochastically with `sr = Some(bits)` (the random bits are added below
/// the kept mantissa before truncation). NaN and infinity become 0x80;
/// with `saturate`, finite overflow clamps to the largest magnitude,
/// otherwise it becomes 0x80.
pub fn f32_to_f8(x: f32, k: F8, saturate: bool, sr: Option<u32>) -> u8 {
    let (eb, mb, bias) = k.layout();
    if x.is_nan() {
        return 0x80;
    }
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let max_field = (1u32 << (eb + mb)) - 1; // all ones magnitude is the largest finite
    if x.is_infinite() {
        return if saturate { sign | max_field as u8 } else { 0x80 };
    }
    let a = x.abs() as f64;
    if a == 0.0 {
        return 0;
    }
    let (_, m, e) = parts(a);
    let emin = 1 - bias;
    let lead = 63 - m.leading_zeros() as i32 + e;
    let q = lead.max(emin) - mb as i32;
    let shift = (q - e) as u32;
    // shift >= 1: an f32 never fits an 8-bit format exactly without loss of
    // these low bits being zero, which the rounding handles.
    let (r, up) = if shift == 0 {
        (m, false)
    } else if shift >= 64 {
        (0, false)
    } else {
        let r = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        match sr {
            None => {
                let half = 1u64 << (shift - 1);
                (r, rem > half || (rem == half && r & 1 == 1))
            }
            Some(rnd) => {
                // Compare the discarded bits with random bits of the same width.
                let w = shift.min(32);
                let top = if shift > 32 { rem >> (shift - 32) } else { rem };
                let rnd = (rnd as u64) & ((1u64 << w) - 1);
                (r, top + rnd >= 1u64 << w)
            }
        }
    };
    let mut r = r + up as u64;
    let mut q = q;
    if r >> (mb + 1) != 0 {
        r >>= 1;
        q += 1;
    }
    if r == 0 {
        return 0;
    }
    let field = if r >> mb == 0 { 0 } else { q + mb as i32 + bias };
    let enc = (field as u32) << mb | (r as u32 & ((1 << mb) - 1));
    if field >= 1 << eb || enc > max_field {
        return if saturate { sign | max_field as u8 } else { 0x80 };
    }
    sign | enc as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_rounding_outside_the_normal_range_matches_the_general_rounding() {
        // Every exponent from f64's denormals to f16 overflow, mantissas with ties and
        // near-ties at the f16 denormal quantum, both signs: the shortcuts of `round` give
        // `round_parts`'s bits.
        let fracs = [0u64, 1, 1 << 41, (1 << 41) + 1, (1 << 41) - 1, 1 << 51, (1 << 52) - 1, 0x8_1234_5678_9abc];
        for be in (0u64..1000).step_by(97).chain(990..1060) {
            for &frac in &fracs {
                for sign in [0, 1u64 << 63] {
                    let x = f64::from_bits(sign | be << 52 | frac);
                    let (s, m, e) = parts(x);
                    let want =
                        if x == 0.0 { (sign >> 48) & 0x8000 } else { round_parts(s, m as u128, e, F16, Rm::Ne, true) };
                    assert_eq!(round(x, F16, Rm::Ne, true), want, "{x:e}");
                }
            }
        }
        assert_eq!(round(2f64.powi(-25), F16, Rm::Ne, true), 0, "half the smallest denormal ties to 0");
        assert_eq!(round(3.0 * 2f64.powi(-25), F16, Rm::Ne, true), 2, "1.5 quanta tie to 2");
        assert_eq!(round(1023.5 * 2f64.powi(-24), F16, Rm::Ne, true), 0x400, "to the smallest normal");
        assert_eq!(round(-70000.0, F16, Rm::Ne, true), 0xfc00);
        assert_eq!(round(f64::from_bits(0x7ff8_0000_0000_1234), F16, Rm::Ne, true) & 0x7e00, 0x7e00, "NaN");
    }

    #[test]
    fn rounding_modes_to_f32() {
        let one_third = 1.0f64 / 3.0;
        let ne = round(one_third, F32, Rm::Ne, true) as u32;
        assert_eq!(ne, (1.0f32 / 3.0).to_bits());
        assert_eq!(round(one_third, F32, Rm::Zero, true), 0x3eaa_aaaa);
        assert_eq!(round(one_third, F32, Rm::Up, true), 0x3eaa_aaab);
        assert_eq!(round(-one_third, F32, Rm::Up, true), 0xbeaa_aaaa);
        assert_eq!(round(-one_third, F32, Rm::Down, true), 0xbeaa_aaab);
        // Overflow: nearest gives inf, toward zero the largest finite.
        assert_eq!(round(1e39, F32, Rm::Ne, true), 0x7f80_0000);
        assert_eq!(round(1e39, F32, Rm::Zero, true), 0x7f7f_ffff);
        assert_eq!(round(-1e39, F32, Rm::Up, true), 0xff7f_ffff);
        // Denormals: kept or flushed to a signed zero.
        let tiny = 2f64.powi(-140);
        assert_eq!(round(tiny, F32, Rm::Ne, true), 1 << 9);
        assert_eq!(round(-tiny, F32, Rm::Ne, false), 0x8000_0000);
        // Ties to even at the smallest denormal: 2^-150 -> 0, 3*2^-150 -> 2*2^-149.
        assert_eq!(round(2f64.powi(-150), F32, Rm::Ne, true), 0);
        assert_eq!(round(3.0 * 2f64.powi(-150), F32, Rm::Ne, true), 2);
        assert_eq!(round(2f64.powi(-150), F32, Rm::Up, true), 1);
        // NaN payloads survive and are quieted.
        assert_eq!(round(f64::from_bits(0x7ff0_0000_2000_0000), F32, Rm::Ne, true), 0x7fc0_0001);
    }

    #[test]
    fn f16_round_trip_and_rounding() {
        for h in 0..=0xffffu16 {
            let x = f16_to_f64(h);
            let back = round(x, F16, Rm::Ne, true) as u16;
            if F16.is_nan(h as u64) {
                assert_eq!(back, h | 0x200);
            } else {
                assert_eq!(back, h, "{h:#x}");
            }
        }
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        assert_eq!(round(65520.0, F16, Rm::Ne, true), 0x7c00, "halfway to 2^16 rounds to inf");
        assert_eq!(round(65519.0, F16, Rm::Ne, true), 0x7bff);
        assert_eq!(round(1.0 + 2f64.powi(-11), F16, Rm::Ne, true), 0x3c00, "tie to even");
        assert_eq!(round(1.0 + 3.0 * 2f64.powi(-11), F16, Rm::Ne, true), 0x3c02);
    }

    #[test]
    fn add_odd_moves_toward_the_exact_value() {
        let one = 1.0f64;
        assert_eq!(add_odd(one, 2f64.powi(-60)), one.next_up());
        assert_eq!(add_odd(one, -(2f64.powi(-60))), one.next_down());
        assert_eq!(add_odd(-one, -(2f64.powi(-60))), (-one).next_down());
        assert_eq!(add_odd(-one, 2f64.powi(-60)), (-one).next_up());
        assert_eq!(add_odd(one, 2f64.powi(-52)), one + 2f64.powi(-52), "exact sums are untouched");
        assert_eq!(add_odd(f64::INFINITY, 1.0), f64::INFINITY);
        assert!(add_odd(f64::INFINITY, f64::NEG_INFINITY).is_nan());
        assert_eq!(add_odd(1.0, -1.0), 0.0);
    }

    #[test]
    fn round_to_odd_fma_is_exact_for_f32() {
        // a*b+c whose f64 sum lands exactly on an f32 tie: 1 + 2^-24 + 2^-60.
        let a = 1.0f32 + 2f32.powi(-23);
        let b = 2f32.powi(-24);
        let c = 1.0f32;
        // exact: 1 + 2^-24 + 2^-47 -> rounds up to 1 + 2^-23.
        let r = round(fma_odd(a as f64, b as f64, c as f64), F32, Rm::Ne, true) as u32;
        assert_eq!(r, (1.0f32 + 2f32.powi(-23)).to_bits());
        // 1 + 2^-24 - 2^-80: just below the tie, rounds down.
        let r = out32(fma_odd(2f64.powi(-40), -(2f64.powi(-40)), 1.0 + 2f64.powi(-24)), Env::new(0xf0));
        assert_eq!(r, 1.0f32.to_bits());
    }

    #[test]
    fn exact_fma64() {
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20000 {
            let (a, b, c) = (f64::from_bits(next()), f64::from_bits(next()), f64::from_bits(next() >> (next() % 3)));
            let want = a.mul_add(b, c);
            let got = f64::from_bits(fma64_scaled(a, b, c, 0, Rm::Ne, true));
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{a:e} {b:e} {c:e}");
        }
        // Scaling into the subnormal range rounds once.
        let v = fma64_scaled(1.5, 2f64.powi(-1000), 0.0, -74, Rm::Ne, true);
        assert_eq!(v, 2, "1.5 * 2^-1074 ties to 2 * 2^-1074");
    }

    #[test]
    fn directed_f64() {
        let (s, e) = two_sum(1.0, 2f64.powi(-60));
        assert_eq!(directed64(s, e, Rm::Up), 1.0f64.next_up());
        assert_eq!(directed64(s, e, Rm::Zero), 1.0);
        let (s, e) = two_sum(-1.0, -(2f64.powi(-60)));
        assert_eq!(directed64(s, e, Rm::Zero), -1.0);
        assert_eq!(directed64(s, e, Rm::Down), (-1.0f64).next_down());
        let (s, e) = two_sum(1.0, -(2f64.powi(-60)));
        assert_eq!(directed64(s, e, Rm::Zero), 1.0f64.next_down());
        assert_eq!(directed64(s, e, Rm::Down), 1.0f64.next_down());
        assert_eq!(directed64(s, e, Rm::Up), 1.0);
        assert_eq!(overflow64(f64::INFINITY, Rm::Zero), f64::MAX);
    }

    #[test]
    fn min_max_nan_and_zero_rules() {
        let f = F32;
        let (q, s) = (0x7fc0_0000u64, 0x7f80_0001u64);
        let one = 1.0f32.to_bits() as u64;
        assert_eq!(minmax(q, one, f64::NAN, 1.0, f, true, true), one);
        assert_eq!(minmax(s, one, f64::NAN, 1.0, f, true, true), 0x7fc0_0001);
        assert_eq!(minmax(s, one, f64::NAN, 1.0, f, true, false), one);
        assert_eq!(minmax(0x8000_0000, 0, -0.0, 0.0, f, true, true), 0);
        assert_eq!(minmax(0, 0x8000_0000, 0.0, -0.0, f, false, true), 0x8000_0000);
        assert_eq!(med3([1, 3, 2], [1.0, 3.0, 2.0], F64, true), 2);
        assert_eq!(med3([3, 1, 2], [3.0, 1.0, 2.0], F64, true), 2);
        assert_eq!(med3([5, 1, 0], [5.0, 1.0, 0.0], F64, true), 1);
    }

    #[test]
    fn fp8_and_bf8() {
        // fp8 E4M3 bias 8: 0x40 = 2^(8-8) = 1.0; max 0x7f = 1.875 * 2^7 = 240.
        assert_eq!(f8_to_f32(0x40, F8::Fp8), 1.0);
        assert_eq!(f8_to_f32(0x7f, F8::Fp8), 240.0);
        assert_eq!(f8_to_f32(0x01, F8::Fp8), 2f32.powi(-10));
        assert!(f8_to_f32(0x80, F8::Fp8).is_nan());
        assert_eq!(f8_to_f32(0xc0, F8::Fp8), -1.0);
        // bf8 E5M2 bias 16: 0x40 = 1.0; max 0x7f = 1.75 * 2^15 = 57344.
        assert_eq!(f8_to_f32(0x40, F8::Bf8), 1.0);
        assert_eq!(f8_to_f32(0x7f, F8::Bf8), 57344.0);
        for k in [F8::Fp8, F8::Bf8] {
            for b in 0..=255u8 {
                if b == 0x80 {
                    continue;
                }
                let x = f8_to_f32(b, k);
                let want = if b == 0 || x != 0.0 { b } else { 0 };
                assert_eq!(f32_to_f8(x, k, true, None), want, "{k:?} {b:#x}");
            }
        }
        assert_eq!(f32_to_f8(1e9, F8::Fp8, true, None), 0x7f);
        assert_eq!(f32_to_f8(-1e9, F8::Fp8, true, None), 0xff);
        assert_eq!(f32_to_f8(1e9, F8::Fp8, false, None), 0x80);
        assert_eq!(f32_to_f8(f32::NAN, F8::Bf8, true, None), 0x80);
        assert_eq!(f32_to_f8(-0.0, F8::Fp8, true, None), 0);
        // 1 + 1/16 is halfway between 1.0 and 1.125: ties to even (1.0).
        assert_eq!(f32_to_f8(1.0625, F8::Fp8, true, None), 0x40);
        assert_eq!(f32_to_f8(1.0625, F8::Fp8, true, Some(0xffff_ffff)), 0x41);
        assert_eq!(f32_to_f8(1.0625, F8::Fp8, true, Some(0)), 0x40);
    }
}
