//! The host CPU's fused multiply-add for the f32 FMA lane loops.
//!
//! Baseline x86-64 has no FMA instruction, so the portable path
//! ([`super::float_fast::fma_core`]) computes in f64 and redoes the lanes
//! where double rounding could bite. Almost every x86-64 CPU still in use
//! has FMA3 (and AVX2): a lane loop compiled for those features, chosen at
//! run time, computes the same correctly rounded results (IEEE fused
//! multiply-add, round to nearest even, denormals kept: Rust never sets
//! MXCSR's FTZ/DAZ) eight lanes per instruction. The binary still runs on
//! any x86-64: the feature is detected once, and without it callers use the
//! portable path.
//!
//! The one place hosts may differ is which NaN a NaN result carries when
//! several inputs are NaNs (the x86 rule depends on the operand order the
//! compiler picked), so lanes with a NaN input get the rule the rest of the
//! interpreter follows (the first NaN input, quieted) after the FMA. Whole
//! waves of them are common: every f32 division with a zero numerator
//! carries `v_div_scale`'s NaN through its FMAs.

use crate::gpu::exec::wave::Lanes;

/// Whether the host has FMA and AVX2 (`is_x86_feature_detected!` caches
/// the CPUID answer in a static, so this is a load and a bit test).
#[inline]
pub fn detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `d = a * b + c` (fused, round to nearest even) for the lanes in `mask`,
/// with `flags` = (flush input denormals, flush output denormals, `c` is
/// `d`'s old value) as in [`super::float_fast::lanes_into`]. Returns false,
/// having written nothing, when the host has no FMA: the caller then uses
/// the portable path.
#[inline]
pub fn fma_into(flags: (bool, bool, bool), d: &mut Lanes, s: [&Lanes; 3], mask: u64) -> bool {
    if !detected() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `detected()` checked that this CPU has FMA and AVX2, the only
    // requirement of the `target_feature` functions called here.
    unsafe {
        match flags {
            (false, false, false) => x86::fma::<false, false, false>(d, s, mask),
            (false, true, false) => x86::fma::<false, true, false>(d, s, mask),
            (true, false, false) => x86::fma::<true, false, false>(d, s, mask),
            (true, true, false) => x86::fma::<true, true, false>(d, s, mask),
            (false, false, true) => x86::fma::<false, false, true>(d, s, mask),
            (false, true, true) => x86::fma::<false, true, true>(d, s, mask),
            (true, false, true) => x86::fma::<true, false, true>(d, s, mask),
            (true, true, true) => x86::fma::<true, true, true>(d, s, mask),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (flags, d, s, mask);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::float_fast::lanes_into;
    use crate::gpu::exec::wave::Lanes;

    /// The lane loop compiled with FMA and AVX2: `mul_add` is one
    /// `vfmadd` per eight lanes. The NaN-input check (one pass over the
    /// three inputs) is compiled for AVX2 too, and so is the loop that
    /// gives NaN-input lanes their NaN.
    #[target_feature(enable = "avx2,fma")]
    pub fn fma<const FIN: bool, const FOUT: bool, const ACC: bool>(d: &mut Lanes, s: [&Lanes; 3], mask: u64) -> bool {
        let c = if ACC { &*d } else { s[2] };
        let nan = |v: u32| ((v & 0x7fff_ffff) > 0x7f80_0000) as u32;
        let mut any = 0u32;
        for l in 0..d.len() {
            any |= nan(s[0][l]) | nan(s[1][l]) | nan(c[l]);
        }
        if any == 0 {
            lanes_into::<FIN, FOUT, ACC>(d, s, mask, |a, b, c| {
                f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)).to_bits()
            });
        } else {
            // A lane with a NaN input gives its first NaN input, quieted (as the portable
            // path does); the others the host's FMA. Blends, so it still vectorizes.
            lanes_into::<FIN, FOUT, ACC>(d, s, mask, |a, b, c| {
                let r = f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c)).to_bits();
                let first = if nan(a) != 0 {
                    a
                } else if nan(b) != 0 {
                    b
                } else {
                    c
                };
                if nan(a) | nan(b) | nan(c) != 0 {
                    first | 0x0040_0000
                } else {
                    r
                }
            });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::float_fast::{fma_core, host_fma};
    use super::*;
    use crate::gpu::exec::wave::LANES;

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
        }
    }

    /// Edge values: zeros, denormals, the normal/denormal boundary,
    /// infinities, the largest finite, and values near 1.
    const EDGES: [u32; 16] = [
        0x0000_0000,
        0x8000_0000,
        0x0000_0001,
        0x8000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x8080_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x3f80_0000,
        0xbf80_0000,
        0x3f80_0001,
        0x3380_0000,
        0x3400_0000,
    ];

    /// The exact reference: f64 product (exact for f32), round-to-odd sum,
    /// one rounding to f32.
    fn reference(a: u32, b: u32, c: u32) -> u32 {
        host_fma(a, b, c)
    }

    /// A NaN input's result: the first NaN input, quieted.
    fn first_nan(a: u32, b: u32, c: u32) -> Option<u32> {
        [a, b, c].into_iter().find(|v| v & 0x7fff_ffff > 0x7f80_0000).map(|v| v | 0x0040_0000)
    }

    fn check(a: &Lanes, b: &Lanes, c: &Lanes) {
        let mut hw = [0u32; LANES];
        if !fma_into((false, false, false), &mut hw, [a, b, c], u64::MAX) {
            return; // no FMA on this host: nothing to compare
        }
        let mut portable = [0u32; LANES];
        fma_core([a, b, c], &mut portable);
        for l in 0..LANES {
            let want = first_nan(a[l], b[l], c[l]).unwrap_or_else(|| reference(a[l], b[l], c[l]));
            assert_eq!(hw[l], want, "hw fma({:#x}, {:#x}, {:#x})", a[l], b[l], c[l]);
            assert_eq!(portable[l], want, "portable fma({:#x}, {:#x}, {:#x})", a[l], b[l], c[l]);
        }
    }

    #[test]
    fn hardware_fma_matches_the_exact_path_on_random_inputs() {
        let mut r = Rng(0x1234_5678_9abc_def1);
        for round in 0..2000 {
            let mut a = [0u32; LANES];
            let mut b = [0u32; LANES];
            let mut c = [0u32; LANES];
            for l in 0..LANES {
                // Mix full-range bit patterns with exponents near each other
                // (where cancellation and rounding ties happen).
                let near = |x: u32| (x & 0x807f_ffff) | (0x3c00_0000 + ((x >> 8) & 0x07f0_0000));
                let (x, y, z) = (r.next(), r.next(), r.next());
                (a[l], b[l], c[l]) = match round % 3 {
                    0 => (x, y, z),
                    1 => (near(x), near(y), near(z)),
                    _ => (EDGES[x as usize % 16], near(y), EDGES[z as usize % 16]),
                };
                // Random bit patterns are NaNs about once in 256 values; a third of the
                // rounds keep them (signalling and quiet, in any source), the others
                // turn them into infinities.
                if round % 3 != 0 {
                    for v in [&mut a[l], &mut b[l], &mut c[l]] {
                        if *v & 0x7fff_ffff > 0x7f80_0000 {
                            *v &= 0xff80_0000;
                        }
                    }
                }
            }
            check(&a, &b, &c);
        }
    }

    #[test]
    fn hardware_fma_matches_on_edges_and_double_rounding_traps() {
        let mut cases: Vec<(u32, u32, u32)> = Vec::new();
        for &x in &EDGES {
            for &y in &EDGES {
                for &z in &EDGES {
                    cases.push((x, y, z));
                }
            }
        }
        let f = |x: f32| x.to_bits();
        // The f64 sum lands exactly on an f32 midpoint although the exact
        // value is just above/below it: (1 + 2^-23) * 2^-24 + 1 and its
        // mirror, and a tiny product that breaks a tie.
        cases.push((f(1.0 + 2f32.powi(-23)), f(2f32.powi(-24)), f(1.0)));
        cases.push((f(-(1.0 + 2f32.powi(-23))), f(2f32.powi(-24)), f(-1.0)));
        cases.push((f(2f32.powi(-40)), f(-(2f32.powi(-40))), f(1.0 + 2f32.powi(-23))));
        cases.push((f(1.0 + 2f32.powi(-23)), f(1.0 - 2f32.powi(-24)), f(2f32.powi(-24))));
        // Results in the f32 denormal range, and overflow.
        cases.push((f(2f32.powi(-70)), f(2f32.powi(-70)), f(-(2f32.powi(-140)))));
        cases.push((f(1.5 * 2f32.powi(-75)), f(2f32.powi(-74)), 0x0000_0001));
        cases.push((0x7f7f_ffff, f(2.0), 0xff7f_ffff));
        // Exact cancellation (sign of zero) and invalid operations (NaN results).
        cases.push((f(2.0), f(3.0), f(-6.0)));
        cases.push((f(-2.0), f(3.0), f(6.0)));
        cases.push((f(0.0), 0x7f80_0000, f(1.0)));
        cases.push((0x7f80_0000, f(1.0), 0xff80_0000));
        for chunk in cases.chunks(LANES) {
            let mut a = [0u32; LANES];
            let mut b = [0u32; LANES];
            let mut c = [0u32; LANES];
            for (l, &(x, y, z)) in chunk.iter().enumerate() {
                (a[l], b[l], c[l]) = (x, y, z);
            }
            check(&a, &b, &c);
        }
    }

    #[test]
    fn nan_inputs_and_holes_and_accumulate() {
        let a = [0x3fc0_0000u32; LANES]; // 1.5
        let b = [0x4000_0000u32; LANES]; // 2.0
        let mut c = [0x3f80_0000u32; LANES]; // 1.0
        c[5] = 0x7fc0_0001;
        c[9] = 0xff80_0002; // signalling, negative
        let mut a_nan = a;
        a_nan[9] = 0x7f80_0003; // the first NaN input wins
        let mut d = [7u32; LANES];
        if !fma_into((false, false, false), &mut d, [&a_nan, &b, &c], !(1 << 7)) {
            assert!(!detected());
            assert_eq!(d, [7; LANES], "nothing written");
            return;
        }
        for (l, &v) in d.iter().enumerate() {
            let want = match l {
                5 => 0x7fc0_0001,
                7 => 7,
                9 => 0x7fc0_0003,
                _ => 0x4080_0000, // 1.5 * 2 + 1
            };
            assert_eq!(v, want, "lane {l}");
        }
        // Accumulate into d (c = old d = 1.0) for the odd lanes only.
        let mut d = [0x3f80_0000u32; LANES];
        assert!(fma_into((false, false, true), &mut d, [&a, &b, &ZEROS], 0xaaaa_aaaa_aaaa_aaaa));
        for (l, &v) in d.iter().enumerate() {
            assert_eq!(v, if l % 2 == 1 { 0x4080_0000 } else { 0x3f80_0000 }, "lane {l}");
        }
        // Flushing: a denormal input reads as zero, a denormal result becomes zero.
        let tiny = [0x0000_0001u32; LANES];
        let mut d = [0u32; LANES];
        assert!(fma_into((true, false, false), &mut d, [&tiny, &b, &tiny], u64::MAX));
        assert_eq!(d, [0; LANES]);
        let half = [0x3f00_0000u32; LANES];
        assert!(fma_into((false, true, false), &mut d, [&tiny, &half, &ZEROS], u64::MAX));
        assert_eq!(d, [0; LANES], "2^-150 rounds to 0 (tie to even)");
        let two = [0x4000_0000u32; LANES];
        assert!(fma_into((false, true, false), &mut d, [&tiny, &two, &ZEROS], u64::MAX));
        assert_eq!(d, [0; LANES], "2^-148 is flushed");
        assert!(fma_into((false, false, false), &mut d, [&tiny, &two, &ZEROS], u64::MAX));
        assert_eq!(d, [2; LANES], "2^-148 is kept");
    }

    static ZEROS: Lanes = [0; LANES];
}
