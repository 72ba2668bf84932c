//! Accumulator types: how the products of an MFMA go into its sums, per input format and
//! target, and how inputs become the accumulator type.
//!
//! The arithmetic follows what is known of the hardware. Where AMD's documents are silent,
//! the facts come from MMA-Sim (Xie et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor
//! Cores and Matrix Cores", 2025, whose models are checked bit for bit against real GPUs,
//! AMD's matrix cores among them):
//! - f32 inputs (every CDNA generation it models): each product is added to the sum by a fused multiply-add, in `k`
//!   order ([`FusedF32`]).
//! - CDNA2 (gfx90a) f16 and bf16: products are summed in groups of consecutive `k` (f16:
//!   four; bf16: two, `_1k` ops four) as a pairwise tree, and the group's sum is added to the
//!   accumulator; denormal inputs, sums and C are flushed to zero ([`Cdna2Exact`],
//!   [`Cdna2Bf16`]). This is MI200's known flushing of f16/bf16 denormals in matrix cores,
//!   the reason for rocBLAS's and PyTorch's `fp16_alt_impl`.
//! - CDNA3 (gfx942) f16, bf16, xf32 and fp8 sum groups of products in a wider fixed-point
//!   form with truncation; that is not modelled yet: those ops use the fused or the plain
//!   accumulator below, and may differ from hardware in the last bits of sums of many terms.

use super::dense;
use super::elem::Input;
use super::layout::Pos;
use super::shape::{Elem, Shape};
use crate::gpu::exec::wave::Lanes;

/// The raw-bits and negation methods of an [`Accum`] that is an f32 in a newtype (`Self(f32)`):
/// the same for every such type.
macro_rules! f32_bits {
    () => {
        fn from_bits(raw: u64) -> Self {
            Self(f32::from_bits(raw as u32))
        }
        fn to_bits(self) -> u64 {
            u64::from(self.0.to_bits())
        }
        fn neg(self) -> Self {
            Self(-self.0)
        }
    };
}

/// An i32 accumulator that saturates (FP16_OVFL set): each multiply-add clamps to the i32
/// range (the guide says only that the result "is clamped to +/-MAX on overflow").
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub(super) struct SatI32(i32);

impl Accum for SatI32 {
    fn input(_: Input, raw: u64) -> SatI32 {
        SatI32(i32::from(raw as u8 as i8))
    }
    fn from_bits(raw: u64) -> SatI32 {
        SatI32(raw as u32 as i32)
    }
    fn to_bits(self) -> u64 {
        u64::from(self.0 as u32)
    }
    #[inline(always)]
    fn mac(self, a: SatI32, b: SatI32) -> SatI32 {
        SatI32(self.0.saturating_add(a.0 * b.0))
    }
    fn neg(self) -> SatI32 {
        SatI32(self.0.saturating_neg())
    }
    fn add(self, other: SatI32) -> SatI32 {
        SatI32(self.0.saturating_add(other.0))
    }
}

/// The f16 elements at bit `bit` of `words` widened to f32 sixteen at a time: two 256-bit
/// loads shifted and packed to sixteen halves, widened by the host's F16C instruction, which
/// widens exactly as `f16_to_f32` does (NaN quieted, payload kept):
/// `f16c_widens_like_the_scalar_conversion` checks every value from either half.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn widen_f16_f16c(words: &[u32], bit: u32, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let shift = _mm_cvtsi32_si128(bit as i32);
    let low = _mm256_set1_epi32(0xffff);
    let mut outs = out.chunks_exact_mut(16);
    let mut chunks = words.chunks_exact(16);
    for (o, w) in (&mut outs).zip(&mut chunks) {
        let w: [__m256i; 2] = bytemuck::cast(<[u32; 16]>::try_from(w).expect("16 words"));
        let [lo, hi] = w.map(|v| _mm256_and_si256(_mm256_srl_epi32(v, shift), low));
        // The pack interleaves the two sources by 128-bit halves; the permute restores order.
        let halves = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(lo, hi));
        let wide: [__m256; 2] =
            [_mm256_cvtph_ps(_mm256_castsi256_si128(halves)), _mm256_cvtph_ps(_mm256_extracti128_si256::<1>(halves))];
        o.copy_from_slice(&bytemuck::cast::<_, [f32; 16]>(wide));
    }
    for (o, &w) in outs.into_remainder().iter_mut().zip(chunks.remainder()) {
        *o = crate::gpu::exec::ops::vmem::format::f16_to_f32((w >> bit) as u16);
    }
}

/// A mask of the low `bits` bits of a word (all 32 for 32).
pub(super) fn low_bits(bits: usize) -> u32 {
    u32::MAX >> (32 - bits.clamp(1, 32))
}

/// An f32 accumulator where each product goes into the sum by one fused multiply-add, rounded
/// once. This is how CDNA's f32 MFMAs sum (MMA-Sim, which reproduces CDNA1–3 bit for bit,
/// models `v_mfma_f32_*f32` as `fmaf(a, b, sum)` in `k` order), and, for inputs whose
/// products are exact in f32 and far from its limits (f16, fp8 and bf8: at most 22
/// significant bits, magnitudes between 2^-48 and 2^32), the same as a product and a sum,
/// in one host instruction instead of two.
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub(super) struct FusedF32(pub(super) f32);

impl FusedF32 {
    /// Whether products of `a` and `b` elements are exact in f32 and can neither overflow nor
    /// become denormal (the fused form is then also a product and a sum).
    pub(super) fn exact_products(a: Elem, b: Elem) -> bool {
        let exact = |e| matches!(e, Elem::F16 | Elem::Fp8 | Elem::Bf8);
        exact(a) && exact(b)
    }
}

impl Accum for FusedF32 {
    fn input(e: Input, raw: u64) -> FusedF32 {
        FusedF32(f32::input(e, raw))
    }
    #[inline(always)]
    fn convert(e: Input, raw: &[u64], out: &mut [FusedF32]) {
        f32::convert(e, raw, bytemuck::cast_slice_mut(out));
    }
    #[inline(always)]
    fn from_words(e: Input, words: &[u32], bit: u32, bits: usize, out: &mut [FusedF32]) {
        f32::from_words(e, words, bit, bits, bytemuck::cast_slice_mut(out));
    }
    f32_bits!();
    #[inline(always)]
    fn mac(self, a: FusedF32, b: FusedF32) -> FusedF32 {
        FusedF32(a.0.mul_add(b.0, self.0))
    }
    fn add(self, other: FusedF32) -> FusedF32 {
        FusedF32(self.0 + other.0)
    }
}

/// An accumulator type and how inputs become it.
pub(super) trait Accum: Copy + Default {
    fn input(e: Input, raw: u64) -> Self;
    /// [`Accum::input`] of every element (a type may give the common formats their own loop).
    #[inline(always)]
    fn convert(e: Input, raw: &[u64], out: &mut [Self]) {
        for (o, &r) in out.iter_mut().zip(raw) {
            *o = Self::input(e, r);
        }
    }
    /// [`Accum::input`] of the `bits`-wide element at bit `bit` of each of `words`.
    #[inline(always)]
    fn from_words(e: Input, words: &[u32], bit: u32, bits: usize, out: &mut [Self]) {
        let mask = low_bits(bits);
        for (o, &w) in out.iter_mut().zip(words) {
            *o = Self::input(e, u64::from((w >> bit) & mask));
        }
    }
    fn from_bits(raw: u64) -> Self;
    fn to_bits(self) -> u64;
    fn neg(self) -> Self;

    /// How many consecutive products (along `k`) the hardware sums among themselves before
    /// it adds their sum to the accumulator: 1, 2 or 4. With 1 each product goes in by
    /// [`Accum::mac`]; otherwise a group of four is `add(add(pair(0, 1), pair(2, 3)))`, a
    /// group of two `pair(0, 1)`, and the accumulator takes it by [`Accum::add`].
    const GROUP: usize = 1;
    /// The accumulator plus one product (`GROUP` 1).
    fn mac(self, a: Self, b: Self) -> Self;
    /// The sum of two products, as the hardware forms it (`GROUP` 2 and 4).
    #[inline(always)]
    fn pair(a0: Self, b0: Self, a1: Self, b1: Self) -> Self {
        Self::default().mac(a0, b0).mac(a1, b1)
    }
    /// The sum of two partial sums, or of the accumulator and a group's sum (`GROUP` 2 and 4).
    fn add(self, other: Self) -> Self;
    /// `D += A·B` with D (holding C) in its registers: [`dense::mac_into_registers`]; a type
    /// may choose a cheaper equivalent form for the operands at hand.
    #[inline(always)]
    fn mac_into_registers(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[Self], b: &[Self])
    where
        Self: bytemuck::Pod,
    {
        dense::mac_into_registers(d, d_pos, s, a, b);
    }
    /// C as the arithmetic takes it (CDNA2's f16/bf16 ops flush a denormal C to +0). Only
    /// types with `GROUP` > 1 may change C: the blocked loop for the others does not call it.
    #[inline(always)]
    fn accumulator(self) -> Self {
        self
    }
}

/// The sum of products `a[kk]·b[kk]` for `kk` in `0..k` added to `acc`, grouped as `T`'s
/// hardware groups them (`k` is a multiple of `T::GROUP`); the scalar form of the blocked
/// loops in `dense`.
#[inline(always)]
pub(super) fn dot<T: Accum>(acc: T, k: usize, a: impl Fn(usize) -> T, b: impl Fn(usize) -> T) -> T {
    let mut acc = acc.accumulator();
    match T::GROUP {
        1 => (0..k).for_each(|kk| acc = acc.mac(a(kk), b(kk))),
        2 => (0..k).step_by(2).for_each(|kk| acc = acc.add(T::pair(a(kk), b(kk), a(kk + 1), b(kk + 1)))),
        _ => (0..k).step_by(4).for_each(|kk| {
            let sum =
                T::pair(a(kk), b(kk), a(kk + 1), b(kk + 1)).add(T::pair(a(kk + 2), b(kk + 2), a(kk + 3), b(kk + 3)));
            acc = acc.add(sum)
        }),
    }
    acc
}

/// The smallest positive normal f16, as f32: CDNA2 flushes f16 inputs below it.
const F16_MIN_NORMAL: f32 = 6.103_515_6e-5;

/// An input of format `e` as CDNA2's f16/bf16 MFMAs take it: +0 if it is denormal in its
/// format (f16: below 2^-14; bf16: below f32's smallest normal).
#[inline(always)]
fn flush_input(e: Input, x: f32) -> f32 {
    let min_normal = if matches!(e, Input::Std(Elem::F16)) { F16_MIN_NORMAL } else { f32::MIN_POSITIVE };
    flush_to_plus_zero(x, min_normal)
}

/// `x`, or +0 if it is a denormal (or zero: -0 becomes +0), as CDNA2 takes an f16/bf16
/// MFMA's inputs and C.
#[inline(always)]
fn flush_to_plus_zero(x: f32, min_normal: f32) -> f32 {
    if x.abs() < min_normal {
        0.0
    } else {
        x
    }
}

/// `x`, or a zero of its sign if it is a denormal, as CDNA2 flushes the sums of f16/bf16
/// MFMAs.
#[inline(always)]
fn flush_keeping_sign(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE {
        x * 0.0
    } else {
        x
    }
}

/// CDNA2 (gfx90a) bf16 MFMAs: groups of `G` products (2; 4 for the `_1k` ops) summed
/// pairwise, each product and each sum rounded to f32 and flushed to a zero of its sign if
/// it is denormal, the group's sum added to the accumulator (flushed likewise); denormal
/// bf16 inputs and a denormal C are flushed to +0. Unlike f16's, bf16 products span f32's
/// whole range, so every step needs its rounding and its flush.
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub(super) struct Cdna2Bf16<const G: usize>(pub(super) f32);

impl<const G: usize> Cdna2Bf16<G> {
    /// One product, rounded (`+ 0`: a zero product is +0, as the hardware's is) and flushed.
    #[inline(always)]
    fn product(a: f32, b: f32) -> f32 {
        flush_keeping_sign(a.mul_add(b, 0.0))
    }

    /// Whether, for these (flushed) inputs and this C, no product or sum of the flushing form
    /// can be rounded off or denormal, so that [`Cdna2Exact`] gives the same bits: every
    /// nonzero input between 2^-50 and 2^51 in magnitude, every C zero, denormal (flushed)
    /// or at least 2^-90 (or infinite, or NaN). Then each product (8 × 8 significant bits) is
    /// exact, a multiple of 2^-114 and below 2^102; every sum of such, rounded or not, is a
    /// multiple of 2^-114 too, so nonzero ones are normal; C is a multiple of 2^-113, so every
    /// accumulator stays a multiple of 2^-114 (or overflows, alike in both forms).
    fn no_step_can_be_denormal(a: &[Self], b: &[Self], c: &[Lanes]) -> bool {
        let exponent = |w: u32| (w >> 23) & 0xff;
        let input_ok = |v: &Self| {
            let w = v.0.to_bits();
            w << 1 == 0 || (77..=177).contains(&exponent(w))
        };
        let c_ok = |w: u32| exponent(w) == 0 || exponent(w) >= 37;
        // Folds without an early exit: they vectorise.
        let inputs = a.iter().chain(b).fold(true, |ok, v| ok & input_ok(v));
        inputs && c.iter().flatten().fold(true, |ok, &w| ok & c_ok(w))
    }
}

impl<const G: usize> Accum for Cdna2Bf16<G> {
    fn input(e: Input, raw: u64) -> Self {
        Self(Cdna2Exact::<G>::input(e, raw).0)
    }
    #[inline(always)]
    fn convert(e: Input, raw: &[u64], out: &mut [Self]) {
        Cdna2Exact::<G>::convert(e, raw, bytemuck::cast_slice_mut(out));
    }
    #[inline(always)]
    fn from_words(e: Input, words: &[u32], bit: u32, bits: usize, out: &mut [Self]) {
        Cdna2Exact::<G>::from_words(e, words, bit, bits, bytemuck::cast_slice_mut(out));
    }
    f32_bits!();
    const GROUP: usize = G;
    #[inline(always)]
    fn mac(self, a: Self, b: Self) -> Self {
        self.add(Self(Self::product(a.0, b.0)))
    }
    #[inline(always)]
    fn pair(a0: Self, b0: Self, a1: Self, b1: Self) -> Self {
        Self(flush_keeping_sign(Self::product(a0.0, b0.0) + Self::product(a1.0, b1.0)))
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Self(flush_keeping_sign(self.0 + other.0))
    }
    #[inline(always)]
    fn accumulator(self) -> Self {
        Self(flush_to_plus_zero(self.0, f32::MIN_POSITIVE))
    }
    fn mac_into_registers(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[Self], b: &[Self]) {
        if Self::no_step_can_be_denormal(a, b, d) {
            let (a, b): (&[Cdna2Exact<G>], &[Cdna2Exact<G>]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
            Cdna2Exact::<G>::mac_into_registers(d, d_pos, s, a, b);
        } else {
            dense::mac_into_registers(d, d_pos, s, a, b);
        }
    }
}

/// CDNA2 (gfx90a) MFMAs' grouped, pairwise sums where no product is rounded and no sum can
/// be denormal: every f16 op (groups of four), and bf16 ops on operands that
/// [`Cdna2Bf16::no_step_can_be_denormal`] admits. A group of four is `(p0 + p1) + (p2 + p3)`,
/// each sum rounded to f32, then added to the accumulator; each pair is one fused
/// multiply-add on an exact product, `fma(a1, b1, fma(a0, b0, +0))`, which rounds once as
/// the pair's sum does. Denormal inputs (of their format: f16 below 2^-14) and a denormal C
/// are flushed to +0.
///
/// The hardware flushes denormal sums too, but none can arise here, so none is flushed: for
/// f16, with denormal inputs flushed, every product, and every rounded sum of products, is
/// zero or a multiple of 2^-48 (at least 2^-48 when nonzero). Adding such a sum `s` ≠ 0 to
/// an accumulator that is zero or normal gives zero, or at least 2^-72 in magnitude: an
/// accumulator below 2^-48 is at most 2^-48 - 2^-72 (its unit there is 2^-72), and one from
/// 2^-48 up is a multiple of 2^-71. `f16_sums_need_no_flush` checks this against the
/// flushing form.
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub(super) struct Cdna2Exact<const G: usize>(pub(super) f32);

impl<const G: usize> Accum for Cdna2Exact<G> {
    fn input(e: Input, raw: u64) -> Self {
        Self(flush_input(e, f32::input(e, raw)))
    }
    #[inline(always)]
    fn convert(e: Input, raw: &[u64], out: &mut [Self]) {
        f32::convert(e, raw, bytemuck::cast_slice_mut(out));
        out.iter_mut().for_each(|v| v.0 = flush_input(e, v.0));
    }
    #[inline(always)]
    fn from_words(e: Input, words: &[u32], bit: u32, bits: usize, out: &mut [Self]) {
        f32::from_words(e, words, bit, bits, bytemuck::cast_slice_mut(out));
        out.iter_mut().for_each(|v| v.0 = flush_input(e, v.0));
    }
    f32_bits!();
    const GROUP: usize = G;
    #[inline(always)]
    fn mac(self, a: Self, b: Self) -> Self {
        Self(a.0.mul_add(b.0, self.0))
    }
    #[inline(always)]
    fn pair(a0: Self, b0: Self, a1: Self, b1: Self) -> Self {
        Self(a1.0.mul_add(b1.0, a0.0.mul_add(b0.0, 0.0)))
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Self(self.0 + other.0)
    }
    #[inline(always)]
    fn accumulator(self) -> Self {
        Self(flush_to_plus_zero(self.0, f32::MIN_POSITIVE))
    }
    fn mac_into_registers(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[Self], b: &[Self]) {
        let (m, n, k) = (s.m, s.n, s.k);
        #[cfg(target_arch = "x86_64")]
        if super::pairs_avx2::applies(n, G) {
            let (a, b): (&[f32], &[f32]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
            for blk in 0..s.blocks {
                let rows = &d_pos[blk * m * n..][..m * n];
                super::pairs_avx2::mac_block(
                    d,
                    rows,
                    (m, n, k),
                    G,
                    &a[blk * m * k..][..m * k],
                    &b[blk * k * n..][..k * n],
                );
            }
            return;
        }
        dense::mac_into_registers(d, d_pos, s, a, b);
    }
}

impl Accum for f32 {
    #[inline]
    fn input(e: Input, raw: u64) -> f32 {
        e.f32(raw as u32)
    }
    #[inline(always)]
    fn convert(e: Input, raw: &[u64], out: &mut [f32]) {
        // One loop per common format, with the conversion inlined.
        match e {
            Input::Std(Elem::F16) => {
                for (o, &r) in out.iter_mut().zip(raw) {
                    *o = crate::gpu::exec::ops::vmem::format::f16_to_f32(r as u16);
                }
            }
            Input::Std(Elem::Bf16) => {
                for (o, &r) in out.iter_mut().zip(raw) {
                    *o = crate::gpu::exec::ops::vmem::format::bf16_to_f32(r as u16);
                }
            }
            Input::Std(Elem::F32) => {
                for (o, &r) in out.iter_mut().zip(raw) {
                    *o = f32::from_bits(r as u32);
                }
            }
            Input::Table(t) => {
                for (o, &r) in out.iter_mut().zip(raw) {
                    *o = t[(r & 0xff) as usize];
                }
            }
            _ => {
                for (o, &r) in out.iter_mut().zip(raw) {
                    *o = e.f32(r as u32);
                }
            }
        }
    }
    #[inline(always)]
    fn from_words(e: Input, words: &[u32], bit: u32, bits: usize, out: &mut [f32]) {
        // One loop per common format, with the conversion inlined.
        let pairs = out.iter_mut().zip(words);
        match (e, bits) {
            (Input::Std(Elem::F32), 32) => pairs.for_each(|(o, &w)| *o = f32::from_bits(w)),
            (Input::Std(Elem::F16), 16) => {
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("f16c") {
                    // SAFETY: the CPU has AVX2 and F16C, checked just above.
                    unsafe { widen_f16_f16c(words, bit, out) };
                    return;
                }
                pairs.for_each(|(o, &w)| *o = crate::gpu::exec::ops::vmem::format::f16_to_f32((w >> bit) as u16));
            }
            (Input::Std(Elem::Bf16), 16) => {
                pairs.for_each(|(o, &w)| *o = crate::gpu::exec::ops::vmem::format::bf16_to_f32((w >> bit) as u16));
            }
            (Input::Table(t), _) => {
                let mask = low_bits(bits.min(8));
                pairs.for_each(|(o, &w)| *o = t[((w >> bit) & mask) as usize]);
            }
            _ => {
                let mask = low_bits(bits);
                pairs.for_each(|(o, &w)| *o = e.f32((w >> bit) & mask));
            }
        }
    }
    fn from_bits(raw: u64) -> f32 {
        f32::from_bits(raw as u32)
    }
    fn to_bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    #[inline(always)]
    fn mac(self, a: f32, b: f32) -> f32 {
        self + a * b
    }
    fn neg(self) -> f32 {
        -self
    }
    fn add(self, other: f32) -> f32 {
        self + other
    }
}

impl Accum for i32 {
    fn input(_: Input, raw: u64) -> i32 {
        i32::from(raw as u8 as i8)
    }
    fn from_bits(raw: u64) -> i32 {
        raw as u32 as i32
    }
    fn to_bits(self) -> u64 {
        u64::from(self as u32)
    }
    #[inline(always)]
    fn mac(self, a: i32, b: i32) -> i32 {
        self.wrapping_add(a.wrapping_mul(b))
    }
    fn neg(self) -> i32 {
        self.wrapping_neg()
    }
    fn add(self, other: i32) -> i32 {
        self.wrapping_add(other)
    }
}

impl Accum for f64 {
    fn input(_: Input, raw: u64) -> f64 {
        f64::from_bits(raw)
    }
    fn from_bits(raw: u64) -> f64 {
        f64::from_bits(raw)
    }
    fn to_bits(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn mac(self, a: f64, b: f64) -> f64 {
        self + a * b
    }
    fn neg(self) -> f64 {
        -self
    }
    fn add(self, other: f64) -> f64 {
        self + other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Target;

    /// The F16C widening (where the host has it) gives `f16_to_f32`'s bits for every f16,
    /// NaNs and denormals included, from either half of a word.
    #[test]
    fn f16c_widens_like_the_scalar_conversion() {
        let words: Vec<u32> = (0..=u32::from(u16::MAX)).map(|h| h | (u32::from(u16::MAX) - h) << 16).collect();
        for bit in [0, 16] {
            let mut out = vec![0f32; words.len()];
            f32::from_words(Input::Std(Elem::F16), &words, bit, 16, &mut out);
            for (&w, v) in words.iter().zip(&out) {
                let h = (w >> bit) as u16;
                let want = crate::gpu::exec::ops::vmem::format::f16_to_f32(h);
                assert_eq!(v.to_bits(), want.to_bits(), "f16 {h:#06x} at bit {bit}");
            }
        }
    }

    /// A fused multiply-add of exact products rounds as the separate product and sum do:
    /// f16 and 8-bit float inputs of every class (extremes, denormals, infinities, NaN)
    /// against sums of every magnitude.
    #[test]
    fn fused_accumulator_matches_product_then_sum_for_exact_products() {
        let f16s = [
            0x0001u16, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff, 0xfbff, 0x8001, 0x7c00, 0xfc00, 0x7e00, 0x0000, 0x8000,
            0x5555, 0x2aaa,
        ];
        let f8s: Vec<u8> = (0..=255).collect();
        let mut inputs: Vec<f32> = f16s.iter().map(|&h| crate::gpu::exec::ops::vmem::format::f16_to_f32(h)).collect();
        for target in [Target::Gfx942, Target::Gfx950] {
            for e in [Elem::Fp8, Elem::Bf8] {
                inputs.extend(f8s.iter().map(|&v| Input::of(e, target).f32(u32::from(v))));
            }
        }
        let sums = [0.0f32, -0.0, 1.0, -1.0e-30, 3.0e38, -3.4e38, 1.0e-45, 7.25e9, f32::INFINITY];
        let mut compared = 0;
        for &a in &inputs {
            for &b in inputs.iter().step_by(7) {
                for &c in &sums {
                    let want = c.mac(a, b);
                    let got = FusedF32(c).mac(FusedF32(a), FusedF32(b)).0;
                    assert!(
                        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                        "{c} + {a} * {b}: {got} != {want}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 100_000);
    }

    /// f16 → f32 by the format's definition, as the inputs of the tests below.
    fn f16(h: u16) -> f32 {
        crate::gpu::exec::ops::vmem::format::f16_to_f32(h)
    }

    /// A deterministic stream of f16 bit patterns weighted towards the edges: tiny, denormal,
    /// huge, and values whose products cancel.
    fn f16_patterns(seed: u64, count: usize) -> Vec<u16> {
        let mut x = seed;
        (0..count)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let r = x as u16;
                match (x >> 32) % 4 {
                    0 => r & 0x83ff,            // denormal or zero
                    1 => (r & 0x87ff) | 0x0400, // just above the smallest normal
                    2 => r & 0xbfff,            // magnitude below 2
                    _ => r & 0xfbff,            // finite
                }
            })
            .collect()
    }

    /// `Cdna2Exact` leaves out the flushes of its sums: the hardware's form with every sum
    /// flushed (as MMA-Sim models CDNA2) gives the same bits, for random f16 inputs weighted
    /// to the edges and accumulators that are tiny, denormal, huge or cancel the sum.
    #[test]
    fn f16_sums_need_no_flush() {
        let flushed = |x: f32| flush_keeping_sign(x);
        let mut compared = 0;
        for seed in 1..400u64 {
            let h = f16_patterns(seed * 0x9e37_79b9, 8);
            let (a, b): (Vec<f32>, Vec<f32>) =
                (h[..4].iter().map(|&v| f16(v)).collect(), h[4..].iter().map(|&v| f16(v)).collect());
            let exact: f64 = a.iter().zip(&b).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum();
            for c in [
                0.0f32,
                -0.0,
                1.0e-40,
                -1.0e-38,
                f32::MIN_POSITIVE,
                -(exact as f32),
                3.0e38,
                1.5,
                -(exact as f32) * 1.000_001,
            ] {
                let input = |v: f32| flush_to_plus_zero(v, F16_MIN_NORMAL);
                let p = |i: usize| input(a[i]) * input(b[i]); // exact
                let want = flushed(
                    flush_to_plus_zero(c, f32::MIN_POSITIVE) + flushed(flushed(p(0) + p(1)) + flushed(p(2) + p(3))),
                );
                let got = dot(
                    Cdna2Exact::<4>(c),
                    4,
                    |i| Cdna2Exact::<4>::input(Input::Std(Elem::F16), u64::from(h[i])),
                    |i| Cdna2Exact::<4>::input(Input::Std(Elem::F16), u64::from(h[4 + i])),
                )
                .0;
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "c {c:e}, a {a:?}, b {b:?}: {got:e} != {want:e}"
                );
                compared += 1;
            }
        }
        assert!(compared > 3000);
    }

    /// CDNA2's f16 and bf16 MFMAs flush denormal inputs and a denormal C to +0 (MI200's
    /// known flushing, the reason for `fp16_alt_impl`); f32 and other targets keep them.
    #[test]
    fn cdna2_f16_and_bf16_flush_denormal_inputs_and_c() {
        let tiny_f16 = Cdna2Exact::<4>::input(Input::Std(Elem::F16), 0x0001); // 2^-24
        assert_eq!(tiny_f16.0.to_bits(), 0);
        assert_eq!(Cdna2Exact::<4>::input(Input::Std(Elem::F16), 0x8200).0.to_bits(), 0, "-denormal becomes +0");
        assert_eq!(
            Cdna2Exact::<4>::input(Input::Std(Elem::F16), 0x0400).0,
            2f32.powi(-14),
            "the smallest normal stays"
        );
        let tiny_bf16 = Cdna2Bf16::<2>::input(Input::Std(Elem::Bf16), 0x0040); // 2^-127
        assert_eq!(tiny_bf16.0.to_bits(), 0);
        assert_eq!(Cdna2Bf16::<2>::input(Input::Std(Elem::Bf16), 0x0080).0, f32::MIN_POSITIVE);
        // C: a denormal (and -0) becomes +0 before anything is added.
        let one = Cdna2Exact::<4>(1.0);
        let zero = Cdna2Exact::<4>(0.0);
        let d = dot(Cdna2Exact::<4>(f32::from_bits(1)), 4, |_| zero, |_| one);
        assert_eq!(d.0.to_bits(), 0);
        let d = dot(Cdna2Exact::<4>(-0.0), 4, |_| zero, |_| one);
        assert_eq!(d.0.to_bits(), 0, "-0 + zero products is +0");
        // The f32 form keeps a denormal C.
        let d = dot(FusedF32(f32::from_bits(1)), 2, |_| FusedF32(0.0), |_| FusedF32(1.0));
        assert_eq!(d.0.to_bits(), 1);
    }

    /// bf16 products that underflow f32 are rounded, then flushed to a zero of their sign,
    /// and so are sums: 2^-70 · 2^-70 = 2^-140 is denormal → 0; 2^-63 · -2^-63 + 2^-126 · 1.5
    /// cancel to a denormal → -0 ... + C.
    #[test]
    fn cdna2_bf16_flushes_each_product_and_sum() {
        let bf = |x: f32| Cdna2Bf16::<2>(x);
        let p = 2f32.powi(-70);
        // Each product denormal: the pair is 0, and C (1.0) comes through unchanged.
        assert_eq!(dot(bf(1.0), 2, |_| bf(p), |_| bf(p)).0, 1.0);
        // Unflushed, 2^-140 + 2^-140 = 2^-139 would survive as a denormal sum with C = 0.
        assert_eq!(dot(bf(0.0), 2, |_| bf(p), |_| bf(p)).0.to_bits(), 0);
        // A pair that cancels to a denormal is flushed keeping its sign: (-2^-125) + 1.5·2^-126
        // = -2^-127 → -0, and +0 + -0 = +0 in the accumulator.
        let a = [bf(-(2f32.powi(-62))), bf(1.5 * 2f32.powi(-63))];
        let b = [bf(2f32.powi(-63)), bf(2f32.powi(-63))];
        let pair = Cdna2Bf16::<2>::pair(a[0], b[0], a[1], b[1]);
        assert_eq!(pair.0.to_bits(), (-0.0f32).to_bits());
        assert_eq!(dot(bf(0.0), 2, |i| a[i], |i| b[i]).0.to_bits(), 0);
        // Groups of four (`_1k`) against groups of two, C = 2^30, products 32, 32, -2^30, 0:
        // in twos, 2^30 + 64 is a tie (the unit is 128) that rounds to even, 2^30, and
        // - 2^30 leaves 0; in fours, 64 + -2^30 = -(2^30 - 64) is exact (the unit below 2^30
        // is 64), and 2^30 plus it is 64. (In k order: 0.)
        let a = [32.0, 32.0, -(2f32.powi(30)), 0.0];
        let c = 2f32.powi(30);
        assert_eq!(dot(Cdna2Bf16::<4>(c), 4, |i| Cdna2Bf16::<4>(a[i]), |_| Cdna2Bf16::<4>(1.0)).0, 64.0);
        assert_eq!(dot(Cdna2Bf16::<2>(c), 4, |i| Cdna2Bf16::<2>(a[i]), |_| Cdna2Bf16::<2>(1.0)).0, 0.0);
    }

    /// The grouping of CDNA2's f16 sums, with values where it shows (each sum is checked
    /// by hand): `(p0 + p1) + (p2 + p3)` then `+ C`.
    #[test]
    fn cdna2_f16_sums_pairs_of_pairs_then_adds_c() {
        let h = |x: f32| Cdna2Exact::<4>(x);
        // p = 2^16, 2^-8, 2^-8, -2^16 (256·256, 2^-4·2^-4, ...). k order: 2^16 + 2^-8 is a tie
        // that rounds to even (2^16), twice, then - 2^16 = 0. Grouped: (2^16 + 2^-8) = 2^16,
        // (2^-8 - 2^16) = -(2^16 - 2^-8) exactly, and their sum is 2^-8.
        let a = [h(256.0), h(0.0625), h(0.0625), h(-256.0)];
        let b = [h(256.0), h(0.0625), h(0.0625), h(256.0)];
        assert_eq!(dot(h(0.0), 4, |i| a[i], |i| b[i]).0, 2f32.powi(-8));
        // C is added after the group: C = 2^16 and two products of 2^-8: k order loses both
        // (ties to even), grouped their sum 2^-7 is one unit of 2^16 and stays.
        let a = [h(0.0625), h(0.0625), h(0.0), h(0.0)];
        assert_eq!(dot(h(65536.0), 4, |i| a[i], |i| a[i]).0, 65536.0 + 2f32.powi(-7));
    }

    /// CDNA's f32 MFMA sums each product by one fused multiply-add: (1 + 2^-12)^2 - 1 is
    /// 2^-11 + 2^-24 exactly; a rounded product first would give 2^-11.
    #[test]
    fn f32_products_are_fused_into_the_sum() {
        let a = FusedF32(1.0 + 2f32.powi(-12));
        let d = dot(FusedF32(-1.0), 1, |_| a, |_| a);
        assert_eq!(d.0, 2f32.powi(-11) + 2f32.powi(-24));
    }

    /// Where `Cdna2Bf16::no_step_can_be_denormal` admits the operands, the exact form gives
    /// the flushing form's bits: random bf16 inputs over the whole admitted range (its edges
    /// included, and products that cancel), C of every admitted kind, groups of two and four.
    #[test]
    fn bf16_exact_form_matches_the_flushing_form_where_admitted() {
        fn check<const G: usize>(seed: u64) -> usize {
            let mut x = seed;
            let mut next = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            };
            let mut compared = 0;
            for _ in 0..4000 {
                // bf16 values with exponents 77..=177 (edges weighted), or zero.
                let mut bf = || {
                    let r = next();
                    let e = match r % 8 {
                        0 => 77,
                        1 => 177,
                        2 => 0,
                        // Anywhere: the predicate must turn away what would round or flush.
                        3 => 1 + (r >> 8) % 254,
                        _ => 77 + (r >> 8) % 101,
                    };
                    let bits = ((r >> 40) as u32 & 0x807f) | (e as u32) << 7;
                    f32::from_bits(if e == 0 { 0 } else { bits << 16 })
                };
                let mut a: Vec<f32> = (0..8).map(|_| bf()).collect();
                let b: Vec<f32> = (0..8).map(|_| bf()).collect();
                if next() % 4 == 0 {
                    // A product that cancels the one before it.
                    a[1] = -a[0] * b[0] / b[1];
                    a[1] = f32::from_bits(a[1].to_bits() & 0xffff_0000);
                }
                let c_exponent = match next() % 7 {
                    0 => 37,
                    1 => 0,
                    2 => 255,
                    3 => next() % 40,
                    _ => 37 + next() % 218,
                } as u32;
                let c = f32::from_bits((next() as u32 & 0x807f_ffff) | c_exponent << 23);
                let (a16, b16): (Vec<Cdna2Bf16<G>>, Vec<Cdna2Bf16<G>>) =
                    (a.iter().map(|&v| Cdna2Bf16(v)).collect(), b.iter().map(|&v| Cdna2Bf16(v)).collect());
                let lanes: Vec<Lanes> = vec![[c.to_bits(); 64]];
                if !Cdna2Bf16::<G>::no_step_can_be_denormal(&a16, &b16, &lanes) {
                    continue;
                }
                let want = dot(Cdna2Bf16::<G>(c), 8, |i| a16[i], |i| b16[i]).0;
                let got = dot(Cdna2Exact::<G>(c), 8, |i| Cdna2Exact(a[i]), |i| Cdna2Exact(b[i])).0;
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "G {G}, c {c:e}, a {a:?}, b {b:?}: {got:e} != {want:e}"
                );
                compared += 1;
            }
            compared
        }
        assert!(check::<2>(0x1234_5678_9abc) > 500);
        assert!(check::<4>(0x0fed_cba9_8765) > 500);
        // Outside the range the flushing form is taken: an input of 2^-51, a C of 2^-91.
        let ok = |a: f32, c: f32| {
            Cdna2Bf16::<2>::no_step_can_be_denormal(&[Cdna2Bf16(a)], &[Cdna2Bf16(1.0)], &[[c.to_bits(); 64]])
        };
        assert!(ok(2f32.powi(-50), 2f32.powi(-90)) && ok(-0.0, 0.0) && ok(2f32.powi(51) * 0.99, f32::NAN));
        assert!(
            !ok(2f32.powi(-51), 1.0) && !ok(2f32.powi(51), 1.0) && !ok(1.0, 2f32.powi(-91)) && !ok(f32::INFINITY, 1.0)
        );
    }
}
