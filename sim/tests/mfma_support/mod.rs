//! Helpers shared by the MFMA tests: a deterministic generator, input encodings built
//! from each format's definition, and register placement.

use sim::gpu::exec::ops::mfma::shape::Elem;
use sim::testing::Harness;

#[path = "../rng_support/mod.rs"]
mod rng;
pub use rng::Rng;

impl Rng {
    /// A small integer in `-r..=r`.
    pub fn small(&mut self, r: i64) -> i64 {
        (self.next() % (2 * r as u64 + 1)) as i64 - r
    }
}

/// The raw encoding of the small integer `v` as an input element.
pub fn encode(e: Elem, v: i64) -> u64 {
    match e {
        Elem::F32 | Elem::Xf32 => u64::from((v as f32).to_bits()),
        Elem::F64 => (v as f64).to_bits(),
        Elem::F16 => u64::from(half::f16::from_f32(v as f32).to_bits()),
        Elem::Bf16 => u64::from(half::bf16::from_f32(v as f32).to_bits()),
        Elem::I8 => u64::from(v as i8 as u8),
        // FNUZ formats by their definition: sign, exponent (bias 8 / 16), mantissa.
        Elem::Fp8 | Elem::Bf8 => {
            let (mbits, bias) = if e == Elem::Fp8 { (3, 8) } else { (2, 16) };
            if v == 0 {
                return 0;
            }
            let mag = v.unsigned_abs();
            let exp = 63 - mag.leading_zeros() as u64;
            let mant = (mag - (1 << exp)) << mbits >> exp;
            assert_eq!((mant + (1 << mbits)) << exp >> mbits, mag, "{v} is not exact in {e:?}");
            let sign = if v < 0 { 0x80 } else { 0 };
            sign | (exp + bias) << mbits | mant
        }
    }
}

/// Writes `raw` (width `bits`) at register `base + reg`, bit `bit`, lane `lane`.
pub fn put(h: &mut Harness, base: usize, (reg, bit, bits): (usize, usize, usize), lane: usize, raw: u64) {
    if bits == 64 {
        h.wave.vgpr[base + reg][lane] = raw as u32;
        h.wave.vgpr[base + reg + 1][lane] = (raw >> 32) as u32;
    } else {
        let mask = ((1u64 << bits) - 1) as u32;
        let r = &mut h.wave.vgpr[base + reg][lane];
        *r = (*r & !(mask << bit)) | ((raw as u32 & mask) << bit);
    }
}
