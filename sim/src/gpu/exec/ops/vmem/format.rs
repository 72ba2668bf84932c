//! Data and number formats of typed memory accesses (`buffer_*_format_*`,
//! `tbuffer_*`, images): how one element's bits become four 32-bit
//! components and back.
//!
//! A data format names the component widths, listed from the most
//! significant bits down (`10_11_11` is X in bits 10:0, Y in 21:11, Z in
//! 31:22). Number formats say how a component's bits read: normalized,
//! scaled, integer, float or sRGB.

/// One component field of an element: bit position and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    shift: u8,
    bits: u8,
}

/// A data format: element size and its components (X, Y, Z, W order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFormat {
    /// Element size in bytes.
    pub bytes: u8,
    fields: &'static [Field],
}

impl DataFormat {
    /// Number of components the format stores.
    pub fn components(&self) -> usize {
        self.fields.len()
    }

    /// The data format with hardware code `code` (buffer and image data
    /// formats share codes 1..=14; 16..=21 exist for images); `None` for
    /// invalid, compressed and subsampled formats.
    pub fn from_code(code: u8) -> Option<DataFormat> {
        let (bytes, fields): (u8, &'static [Field]) = match code {
            1 => (1, &[Field { shift: 0, bits: 8 }]),
            2 => (2, &[Field { shift: 0, bits: 16 }]),
            3 => (2, &[Field { shift: 0, bits: 8 }, Field { shift: 8, bits: 8 }]),
            4 => (4, &[Field { shift: 0, bits: 32 }]),
            5 => (4, &[Field { shift: 0, bits: 16 }, Field { shift: 16, bits: 16 }]),
            6 => (4, &[Field { shift: 0, bits: 11 }, Field { shift: 11, bits: 11 }, Field { shift: 22, bits: 10 }]),
            7 => (4, &[Field { shift: 0, bits: 10 }, Field { shift: 10, bits: 11 }, Field { shift: 21, bits: 11 }]),
            8 => (
                4,
                &[
                    Field { shift: 0, bits: 2 },
                    Field { shift: 2, bits: 10 },
                    Field { shift: 12, bits: 10 },
                    Field { shift: 22, bits: 10 },
                ],
            ),
            9 => (
                4,
                &[
                    Field { shift: 0, bits: 10 },
                    Field { shift: 10, bits: 10 },
                    Field { shift: 20, bits: 10 },
                    Field { shift: 30, bits: 2 },
                ],
            ),
            10 => (
                4,
                &[
                    Field { shift: 0, bits: 8 },
                    Field { shift: 8, bits: 8 },
                    Field { shift: 16, bits: 8 },
                    Field { shift: 24, bits: 8 },
                ],
            ),
            11 => (8, &[Field { shift: 0, bits: 32 }, Field { shift: 32, bits: 32 }]),
            12 => (
                8,
                &[
                    Field { shift: 0, bits: 16 },
                    Field { shift: 16, bits: 16 },
                    Field { shift: 32, bits: 16 },
                    Field { shift: 48, bits: 16 },
                ],
            ),
            13 => (12, &[Field { shift: 0, bits: 32 }, Field { shift: 32, bits: 32 }, Field { shift: 64, bits: 32 }]),
            14 => (
                16,
                &[
                    Field { shift: 0, bits: 32 },
                    Field { shift: 32, bits: 32 },
                    Field { shift: 64, bits: 32 },
                    Field { shift: 96, bits: 32 },
                ],
            ),
            16 => (2, &[Field { shift: 0, bits: 5 }, Field { shift: 5, bits: 6 }, Field { shift: 11, bits: 5 }]),
            17 => (
                2,
                &[
                    Field { shift: 0, bits: 5 },
                    Field { shift: 5, bits: 5 },
                    Field { shift: 10, bits: 5 },
                    Field { shift: 15, bits: 1 },
                ],
            ),
            18 => (
                2,
                &[
                    Field { shift: 0, bits: 1 },
                    Field { shift: 1, bits: 5 },
                    Field { shift: 6, bits: 5 },
                    Field { shift: 11, bits: 5 },
                ],
            ),
            19 => (
                2,
                &[
                    Field { shift: 0, bits: 4 },
                    Field { shift: 4, bits: 4 },
                    Field { shift: 8, bits: 4 },
                    Field { shift: 12, bits: 4 },
                ],
            ),
            20 => (4, &[Field { shift: 0, bits: 24 }, Field { shift: 24, bits: 8 }]),
            21 => (4, &[Field { shift: 0, bits: 8 }, Field { shift: 8, bits: 24 }]),
            _ => return None,
        };
        Some(DataFormat { bytes, fields })
    }
}

/// Number formats (buffer and image codes agree on 0..=7; 9 is sRGB, images only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumFormat {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
    Srgb,
}

impl NumFormat {
    pub fn from_code(code: u8) -> Option<NumFormat> {
        Some(match code {
            0 => NumFormat::Unorm,
            1 => NumFormat::Snorm,
            2 => NumFormat::Uscaled,
            3 => NumFormat::Sscaled,
            4 => NumFormat::Uint,
            5 => NumFormat::Sint,
            7 => NumFormat::Float,
            9 => NumFormat::Srgb,
            _ => return None,
        })
    }

    /// Whether components read as integers (the "one" of DST_SEL is 1, not 1.0).
    pub fn is_integer(self) -> bool {
        matches!(self, NumFormat::Uint | NumFormat::Sint)
    }
}

/// A typed element format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub data: DataFormat,
    pub num: NumFormat,
}

fn sext(v: u64, bits: u8) -> i64 {
    let s = 64 - bits as u32;
    ((v << s) as i64) >> s
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Format {
    /// Unpacks the element in `raw` (little-endian, `data.bytes` long) to
    /// four components as 32-bit patterns (f32 bits for float-valued
    /// formats); components the format lacks read as (0, 0, 0, 1).
    pub fn unpack(&self, raw: &[u8]) -> [u32; 4] {
        let mut out = [0, 0, 0, self.one()];
        for (c, fl) in self.data.fields.iter().enumerate() {
            let v = read_bits(raw, fl.shift, fl.bits);
            out[c] = self.decode(v, fl.bits, c == 3);
        }
        out
    }

    /// Packs four components into an element; components the format does
    /// not store are dropped. Integer formats saturate.
    pub fn pack(&self, comps: &[u32; 4], raw: &mut [u8]) {
        raw.fill(0);
        for (c, fl) in self.data.fields.iter().enumerate() {
            let v = self.encode(comps[c], fl.bits, c == 3);
            write_bits(raw, fl.shift, fl.bits, v);
        }
    }

    fn decode(&self, v: u64, bits: u8, alpha: bool) -> u32 {
        let max = mask(bits) as f64;
        match self.num {
            NumFormat::Unorm => ((v as f64 / max) as f32).to_bits(),
            NumFormat::Srgb if alpha => ((v as f64 / max) as f32).to_bits(),
            NumFormat::Srgb => srgb_to_linear((v as f64 / max) as f32).to_bits(),
            NumFormat::Snorm => {
                let m = mask(bits - 1) as f64;
                ((sext(v, bits) as f64 / m).max(-1.0) as f32).to_bits()
            }
            NumFormat::Uscaled => (v as f32).to_bits(),
            NumFormat::Sscaled => (sext(v, bits) as f32).to_bits(),
            NumFormat::Uint => v as u32,
            NumFormat::Sint => sext(v, bits) as u32,
            NumFormat::Float => match bits {
                32 => v as u32,
                16 => f16_to_f32(v as u16).to_bits(),
                11 => ufloat_to_f32(v as u32, 6).to_bits(),
                10 => ufloat_to_f32(v as u32, 5).to_bits(),
                _ => 0,
            },
        }
    }

    fn encode(&self, c: u32, bits: u8, alpha: bool) -> u64 {
        let x = f32::from_bits(c);
        let umax = mask(bits);
        let smax = mask(bits - 1) as i64;
        let norm = |x: f32, lo: f32| -> f64 {
            let x = if x.is_nan() { 0.0 } else { x.clamp(lo, 1.0) };
            x as f64
        };
        match self.num {
            NumFormat::Unorm => (norm(x, 0.0) * umax as f64).round_ties_even() as u64,
            NumFormat::Srgb if alpha => (norm(x, 0.0) * umax as f64).round_ties_even() as u64,
            NumFormat::Srgb => (norm(linear_to_srgb(x), 0.0) * umax as f64).round_ties_even() as u64,
            NumFormat::Snorm => (((norm(x, -1.0) * smax as f64).round_ties_even() as i64) as u64) & umax,
            NumFormat::Uscaled => (x as f64).clamp(0.0, umax as f64) as u64,
            NumFormat::Sscaled => ((x as f64).clamp(-(smax as f64) - 1.0, smax as f64) as i64 as u64) & umax,
            NumFormat::Uint => (c as u64).min(umax),
            NumFormat::Sint => ((c as i32 as i64).clamp(-smax - 1, smax) as u64) & umax,
            NumFormat::Float => match bits {
                32 => c as u64,
                16 => f32_to_f16(x) as u64,
                11 => f32_to_ufloat(x, 6) as u64,
                10 => f32_to_ufloat(x, 5) as u64,
                _ => 0,
            },
        }
    }

    /// The "one" constant of DST_SEL for this format.
    pub fn one(&self) -> u32 {
        if self.num.is_integer() {
            1
        } else {
            1.0f32.to_bits()
        }
    }
}

fn read_bits(raw: &[u8], shift: u8, bits: u8) -> u64 {
    let mut v = 0u128;
    for (i, b) in raw.iter().enumerate().take(16) {
        v |= (*b as u128) << (8 * i);
    }
    ((v >> shift) as u64) & mask(bits)
}

fn write_bits(raw: &mut [u8], shift: u8, bits: u8, value: u64) {
    for i in 0..bits as usize {
        let bit = shift as usize + i;
        if value >> i & 1 != 0 {
            raw[bit / 8] |= 1 << (bit % 8);
        }
    }
}

/// Applies a descriptor's DST_SEL (3 bits per component: 0 zero, 1 one,
/// 4..=7 X..W) to unpacked components.
pub fn dst_sel(sel: u32, comps: &[u32; 4], one: u32) -> [u32; 4] {
    std::array::from_fn(|c| match sel >> (3 * c) & 7 {
        0 => 0,
        1 => one,
        s @ 4..=7 => comps[s as usize - 4],
        _ => 0,
    })
}

/// Undoes DST_SEL for a store: the component stored in memory slot `m` is
/// the register component whose selector names `m`; 0 when none does.
pub fn undo_dst_sel(sel: u32, regs: &[u32; 4]) -> [u32; 4] {
    let mut out = [0u32; 4];
    for c in (0..4).rev() {
        if let s @ 4..=7 = sel >> (3 * c) & 7 {
            out[s as usize - 4] = regs[c];
        }
    }
    out
}

// ----- small floats ----------------------------------------------------------

/// f16 bits to f32 (exact).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = (h >> 10) & 0x1f;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Denormal: m * 2^-24.
            let v = m as f32 * (-24f32).exp2();
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | m << 13,
        (e, m) => sign | ((e as u32 + 112) << 23) | m << 13,
    };
    f32::from_bits(bits)
}

/// f32 to f16 bits, rounding to nearest even; overflow becomes infinity.
pub fn f32_to_f16(x: f32) -> u16 {
    round_to_small(x, 5, 10, true) as u16
}

/// bf16 bits to f32 (exact).
pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// f32 to bf16 bits, rounding to nearest even (NaN stays quiet NaN).
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// An unsigned small float (10- or 11-bit: 5-bit exponent, `man` mantissa bits) to f32.
fn ufloat_to_f32(v: u32, man: u32) -> f32 {
    let e = v >> man;
    let m = v & ((1 << man) - 1);
    match e {
        0 => m as f32 * (-14.0 - man as f32).exp2(),
        31 if m == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + m as f32 / (1 << man) as f32) * (e as f32 - 15.0).exp2(),
    }
}

fn f32_to_ufloat(x: f32, man: u32) -> u32 {
    if x.is_nan() {
        return (31 << man) | 1;
    }
    if x <= 0.0 {
        return 0;
    }
    round_to_small(x, 5, man, false)
}

/// Rounds f32 `x` to a float with `exp_bits` exponent bits (bias 2^(e-1)-1)
/// and `man_bits` mantissa bits, nearest even; returns the bit pattern with
/// the sign bit above the exponent when `signed`.
fn round_to_small(x: f32, exp_bits: u32, man_bits: u32, signed: bool) -> u32 {
    let sign = if signed && x.is_sign_negative() { 1u32 << (exp_bits + man_bits) } else { 0 };
    let a = x.abs();
    let emax = (1u32 << exp_bits) - 1;
    if a.is_nan() {
        return sign | emax << man_bits | 1 << (man_bits - 1);
    }
    if a.is_infinite() {
        return sign | emax << man_bits;
    }
    let bias = (1i32 << (exp_bits - 1)) - 1;
    // Quantum of the smallest exponent (denormals): 2^(1 - bias - man_bits).
    let min_exp = 1 - bias;
    let e = if a == 0.0 { min_exp } else { (a.to_bits() >> 23) as i32 - 127 }.max(min_exp);
    let quantum = ((e - man_bits as i32) as f64).exp2();
    let q = (a as f64 / quantum).round_ties_even();
    // q in [0, 2^(man+1)]: an integer significand at exponent e.
    let (mut e, mut q) = (e, q as u64);
    if q >> (man_bits + 1) != 0 {
        q >>= 1;
        e += 1;
    }
    let biased = if q >> man_bits == 0 { 0 } else { (e + bias) as u32 };
    if biased >= emax {
        return sign | emax << man_bits;
    }
    sign | biased << man_bits | (q as u32 & ((1 << man_bits) - 1))
}

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(l: f32) -> f32 {
    if l.is_nan() {
        0.0
    } else if l <= 0.0031308 {
        (l * 12.92).max(0.0)
    } else {
        (1.055 * l.min(1.0).powf(1.0 / 2.4) - 0.055).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_and_rounds() {
        for (h, x) in [(0x3c00u16, 1.0f32), (0xc000, -2.0), (0x0001, 5.960_464_5e-8), (0x7bff, 65504.0), (0x8000, -0.0)]
        {
            assert_eq!(f16_to_f32(h).to_bits(), x.to_bits(), "{h:#x}");
            assert_eq!(f32_to_f16(x), h, "{x}");
        }
        assert_eq!(f32_to_f16(65520.0), 0x7c00, "rounds up to infinity");
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3c00, "tie to even");
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3c02, "tie to even (up)");
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(f32_to_bf16(1.0 + 3.0 / 256.0), 0x3f82);
    }

    #[test]
    fn unorm8_and_packed_10_11_11() {
        let fmt = Format { data: DataFormat::from_code(10).unwrap(), num: NumFormat::Unorm };
        let c = fmt.unpack(&[0, 255, 51, 128]);
        assert_eq!(c.map(f32::from_bits), [0.0, 1.0, 0.2, 128.0 / 255.0]);
        let mut raw = [0u8; 4];
        fmt.pack(&[0.5f32.to_bits(), 2.0f32.to_bits(), (-1.0f32).to_bits(), f32::NAN.to_bits()], &mut raw);
        assert_eq!(raw, [128, 255, 0, 0]);
        // 10_11_11 float: X = 1.0 (exp 15, 11 bits), Y = 2.0, Z = 0.5 (10 bits).
        let fmt = Format { data: DataFormat::from_code(6).unwrap(), num: NumFormat::Float };
        let word: u32 = (15 << 6) | (16 << 6) << 11 | (14 << 5) << 22;
        assert_eq!(fmt.unpack(&word.to_le_bytes()).map(f32::from_bits), [1.0, 2.0, 0.5, 1.0]);
        let mut raw = [0u8; 4];
        fmt.pack(&[1.0f32.to_bits(), 2.0f32.to_bits(), 0.5f32.to_bits(), 0], &mut raw);
        assert_eq!(u32::from_le_bytes(raw), word);
    }

    #[test]
    fn integer_formats_saturate_and_sign_extend() {
        let fmt = Format { data: DataFormat::from_code(5).unwrap(), num: NumFormat::Sint };
        assert_eq!(fmt.unpack(&[0xff, 0xff, 2, 0]), [u32::MAX, 2, 0, 1], "missing W reads 1");
        let mut raw = [0u8; 4];
        fmt.pack(&[70000, (-70000i32) as u32, 0, 0], &mut raw);
        assert_eq!(raw, [0xff, 0x7f, 0x00, 0x80]);
        let snorm = Format { data: DataFormat::from_code(1).unwrap(), num: NumFormat::Snorm };
        assert_eq!(f32::from_bits(snorm.unpack(&[0x80])[0]), -1.0, "-128 clamps to -1");
        assert_eq!(dst_sel(0b001_000_101_110, &[1, 2, 3, 4], 9), [3, 2, 0, 9]);
        assert_eq!(undo_dst_sel(0b001_000_101_110, &[1, 2, 3, 4]), [0, 2, 1, 0]);
    }
}
