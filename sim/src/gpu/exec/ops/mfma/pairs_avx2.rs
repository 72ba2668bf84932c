//! CDNA2's grouped pairwise sums in their exact form ([`super::accum::Cdna2Exact`]), written
//! with AVX2+FMA intrinsics.
//!
//! The portable loop (`dense::mac_grouped_in_registers`) makes a pass over a D row per group
//! of `k`, and its set-up costs more than the pass at these sizes (a 32×32×8 op makes 64 of
//! them); with D rows held in host registers across `k`, the compiler kept every B value of
//! a group live at once and spilled. Here the register use is spelled out: one D row at a
//! time, its `n / 8` vectors of 8 sums in registers across all of `k`, a group's four B
//! vectors loaded per column block and its four A values broadcast once per group. The
//! arithmetic is the portable one's, operation for operation, so the bits are the same
//! (`the_avx2_kernel_gives_the_portable_bits`).

use crate::gpu::exec::ops::mfma::layout::Pos;
use crate::gpu::exec::wave::Lanes;

/// Whether [`mac_block`] serves blocks of `n` columns summed in groups of `group`: the host
/// has AVX2 and FMA, `n` is 16 or 32, `group` 2 or 4.
pub fn applies(n: usize, group: usize) -> bool {
    matches!(n, 16 | 32)
        && matches!(group, 2 | 4)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
}

/// `D += A·B` for one block: A k-major (`a[kk*m + i]`), B row-major (`b[kk*n + j]`), D row
/// `i` at `rows[i*n]` (`n` consecutive lanes of one register), products summed in groups of
/// `group` as `Cdna2Exact` sums them, C flushed to +0 if denormal. Only where [`applies`].
pub fn mac_block(d: &mut [Lanes], rows: &[Pos], (m, n, k): (usize, usize, usize), group: usize, a: &[f32], b: &[f32]) {
    assert!(applies(n, group), "no AVX2 kernel for {n} columns in groups of {group}");
    assert!(a.len() >= m * k && b.len() >= k * n && rows.len() >= m * n && k.is_multiple_of(group));
    // SAFETY (all four calls): the CPU has AVX2 and FMA (`applies`); the slices hold `m*k` A
    // and `k*n` B values and `m*n` row positions, and `k` is a multiple of the group (all
    // asserted above); `n` is the kernel's column count.
    match (n, group) {
        (32, 4) => unsafe { kernel::<4, 4>(d, rows, m, k, a, b) },
        (32, _) => unsafe { kernel::<4, 2>(d, rows, m, k, a, b) },
        (_, 4) => unsafe { kernel::<2, 4>(d, rows, m, k, a, b) },
        _ => unsafe { kernel::<2, 2>(d, rows, m, k, a, b) },
    }
}

/// `CHUNKS` vectors of 8 columns (`n = 8 * CHUNKS`), groups of `G`.
///
/// # Safety
/// The CPU must have AVX2 and FMA; `a` must hold `m*k` values, `b` `k*n`, `rows` `m*n`
/// positions, and `k` be a multiple of `G`.
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel<const CHUNKS: usize, const G: usize>(
    d: &mut [Lanes],
    rows: &[Pos],
    m: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
) {
    use std::arch::x86_64::*;
    let n = 8 * CHUNKS;
    let zero = _mm256_setzero_ps();
    let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let min_normal = _mm256_set1_ps(f32::MIN_POSITIVE);
    for i in 0..m {
        let p = rows[i * n];
        let row: &mut [u32; 64] = &mut d[p.reg];
        let row = &mut row[p.lane..p.lane + n];
        // C, flushed to +0 where it is denormal (or -0): `Cdna2Exact::accumulator`.
        let mut acc = [zero; CHUNKS];
        for (c, v) in acc.iter_mut().enumerate() {
            // SAFETY: `row` holds `n = 8 * CHUNKS` words; unaligned loads.
            let x = unsafe { _mm256_loadu_ps(row.as_ptr().add(8 * c).cast()) };
            let tiny = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_and_ps(x, abs_mask), min_normal);
            *v = _mm256_andnot_ps(tiny, x);
        }
        for kk in (0..k).step_by(G) {
            // SAFETY: `kk + g < k`, so `(kk + g) * m + i < m * k <= a.len()`.
            let av: [__m256; G] =
                std::array::from_fn(|g| _mm256_set1_ps(unsafe { *a.get_unchecked((kk + g) * m + i) }));
            for (c, v) in acc.iter_mut().enumerate() {
                // SAFETY: `(kk + g) * n + 8 * c + 8 <= k * n <= b.len()`.
                let bv = |g: usize| unsafe { _mm256_loadu_ps(b.as_ptr().add((kk + g) * n + 8 * c)) };
                // fma(a1, b1, fma(a0, b0, +0)): `Cdna2Exact::pair`.
                let mut sum = _mm256_fmadd_ps(av[1], bv(1), _mm256_fmadd_ps(av[0], bv(0), zero));
                if G == 4 {
                    let second = _mm256_fmadd_ps(av[3], bv(3), _mm256_fmadd_ps(av[2], bv(2), zero));
                    sum = _mm256_add_ps(sum, second);
                }
                *v = _mm256_add_ps(*v, sum);
            }
        }
        for (c, v) in acc.iter().enumerate() {
            // SAFETY: as for the loads above.
            unsafe { _mm256_storeu_ps(row.as_mut_ptr().add(8 * c).cast(), *v) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::accum::{Accum, Cdna2Exact};
    use super::super::{dense, plan};
    use super::*;
    use crate::isa::Op;

    /// The kernel against the portable loop, bit for bit, on every gfx90a f16/bf16 shape
    /// it serves: exact products of f16-sized values (cancelling ones included) and C of
    /// every kind (denormal, -0, NaN, infinite, huge).
    #[test]
    fn the_avx2_kernel_gives_the_portable_bits() {
        if !applies(32, 4) {
            return; // No AVX2 on this host: the portable loop is all there is.
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let specials = [f32::from_bits(1), -0.0, f32::NAN, f32::INFINITY, 3.0e38, -1.0e-38, 0.0];
        let mut served = 0;
        for name in [
            "v_mfma_f32_32x32x8f16",
            "v_mfma_f32_16x16x16f16",
            "v_mfma_f32_32x32x4f16",
            "v_mfma_f32_32x32x8bf16_1k",
            "v_mfma_f32_16x16x16bf16_1k",
            "v_mfma_f32_32x32x4bf16",
            "v_mfma_f32_16x16x8bf16",
            "v_mfma_f32_32x32x2bf16",
        ] {
            let op = (0..).map_while(Op::from_index).find(|op| op.name() == name).expect(name);
            let plan = plan(op).expect(name);
            let s = plan.shape;
            let group = if name.ends_with("_1k") || !name.contains("bf16") { 4 } else { 2 };
            for _ in 0..20 {
                // Values of up to 11 significant bits, scaled by 2^-8..2^7: exact products.
                let value = |r: u64| {
                    let v = ((r >> 8) % 2048) as f32 * 2f32.powi((r % 16) as i32 - 18);
                    if r & 0x8000 != 0 {
                        -v
                    } else {
                        v
                    }
                };
                let mut a: Vec<f32> = (0..s.blocks * s.m * s.k).map(|_| value(next())).collect();
                // Row 0 of A is zero: D's row 0 is then C as the arithmetic takes it.
                a.iter_mut().step_by(s.m).for_each(|v| *v = 0.0);
                let mut b: Vec<f32> = (0..s.blocks * s.k * s.n).map(|_| value(next())).collect();
                b[..s.n].copy_from_slice(&a[..s.n].iter().map(|v| -v).collect::<Vec<_>>()); // cancelling
                let mut regs: Vec<Lanes> = vec![[0; 64]; s.acc_regs()];
                for w in regs.iter_mut().flatten() {
                    let r = next();
                    *w = if r % 5 == 0 {
                        specials[(r >> 8) as usize % specials.len()].to_bits()
                    } else {
                        value(r >> 3).to_bits()
                    };
                }
                let (ea, eb): (Vec<Cdna2Exact<4>>, Vec<Cdna2Exact<4>>) =
                    (a.iter().map(|&v| Cdna2Exact(v)).collect(), b.iter().map(|&v| Cdna2Exact(v)).collect());
                let mut want = regs.clone();
                let mut got = regs.clone();
                if group == 4 {
                    dense::mac_into_registers(&mut want, &plan.d, &s, &ea, &eb);
                    Cdna2Exact::<4>::mac_into_registers(&mut got, &plan.d, &s, &ea, &eb);
                } else {
                    let (ea, eb): (&[Cdna2Exact<2>], &[Cdna2Exact<2>]) =
                        (bytemuck::cast_slice(&ea), bytemuck::cast_slice(&eb));
                    dense::mac_into_registers(&mut want, &plan.d, &s, ea, eb);
                    Cdna2Exact::<2>::mac_into_registers(&mut got, &plan.d, &s, ea, eb);
                }
                for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                    for (l, (g, w)) in g.iter().zip(w).enumerate() {
                        let same = g == w || (f32::from_bits(*g).is_nan() && f32::from_bits(*w).is_nan());
                        assert!(same, "{name}: register {r} lane {l}: {g:#x} != {w:#x}");
                    }
                }
            }
            served += usize::from(applies(s.n, group));
        }
        assert_eq!(served, 8, "every shape above has a kernel");
    }
}
