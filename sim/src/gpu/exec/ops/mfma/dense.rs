//! The arithmetic of a dense block: `D_row += A_row · B` for one row of D at a time.
//!
//! Each D element sums its products in `k` order, as the module's semantics say; the loop is
//! blocked so that a whole row of D (32 or 16 elements, else blocks of 8) stays in host
//! registers across the `k` loop: one load and one store of D per row instead of one per `k`,
//! and several independent sums in flight (one 8-wide sum is bound by the latency of its
//! additions). On an x86-64 host with AVX2 and FMA it is compiled a second time for 256-bit
//! vectors (FMA for the accumulators whose `mac` is a fused multiply-add).
//! Neither changes a result bit: the order of every element's sum is the same, and products
//! and sums stay separate operations (no fused multiply-add unless the accumulator type's
//! `mac` says so).

use super::layout::Pos;
use super::shape::Shape;
use super::Accum;
use crate::gpu::exec::wave::Lanes;

/// Whether the host runs the AVX2+FMA instances of the loops below (each entry point has its
/// own `#[target_feature]` instance; the check is shared).
#[cfg(target_arch = "x86_64")]
#[inline]
fn host_has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `D += A·B` for every block, with A and B dense row-major (`A[b][i][k]`, `B[b][k][j]`) and
/// D in its registers: `d_pos` holds each D element's position (row `i` of block `b` starts
/// at `(b*m + i)*n` and is `n` consecutive lanes of one register). One call per instruction,
/// so the host-feature dispatch happens once.
pub fn mac_into_registers<T: Accum + bytemuck::Pod>(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[T], b: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if host_has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { mac_into_registers_avx2(d, d_pos, s, a, b) };
        return;
    }
    mac_into_registers_portable(d, d_pos, s, a, b);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mac_into_registers_avx2<T: Accum + bytemuck::Pod>(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[T], b: &[T]) {
    mac_into_registers_portable(d, d_pos, s, a, b);
}

#[inline(always)]
fn mac_into_registers_portable<T: Accum + bytemuck::Pod>(d: &mut [Lanes], d_pos: &[Pos], s: &Shape, a: &[T], b: &[T]) {
    let (m, n, k) = (s.m, s.n, s.k);
    for blk in 0..s.blocks {
        let a = &a[blk * m * k..][..m * k];
        let b = &b[blk * k * n..][..k * n];
        let mut i = 0;
        while i < m {
            let p = d_pos[(blk * m + i) * n];
            let a_row = &a[i * k..][..k];
            // Two rows at once where they are the same lanes of two registers (all but the
            // 4×4 shapes' rows).
            let next = (i + 1 < m).then(|| d_pos[(blk * m + i + 1) * n]).filter(|q| q.lane == p.lane);
            let pair = next.and_then(|q| d.get_disjoint_mut([p.reg, q.reg]).ok().map(|regs| (q, regs)));
            if let Some((q, [r0, r1])) = pair {
                let rows = [&mut r0[p.lane..p.lane + n], &mut r1[q.lane..q.lane + n]];
                mac_rows_portable(rows.map(bytemuck::cast_slice_mut), [a_row, &a[(i + 1) * k..][..k]], b);
                i += 2;
                continue;
            }
            mac_rows_portable([bytemuck::cast_slice_mut(&mut d[p.reg][p.lane..p.lane + n])], [a_row], b);
            i += 1;
        }
    }
}

/// `d_row[j] = mac(... mac(d_row[j], a_row[0], b[0][j]) ..., a_row[k-1], b[k-1][j])` for
/// each of the `R` rows (one or two: two rows share each load of B and double the sums in
/// flight), with `b` row-major (`k` rows of `d_row.len()`).
#[inline]
pub fn mac_rows<T: Accum, const R: usize>(d_rows: [&mut [T]; R], a_rows: [&[T]; R], b: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if host_has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { mac_rows_avx2(d_rows, a_rows, b) };
        return;
    }
    mac_rows_portable(d_rows, a_rows, b);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mac_rows_avx2<T: Accum, const R: usize>(d_rows: [&mut [T]; R], a_rows: [&[T]; R], b: &[T]) {
    mac_rows_portable(d_rows, a_rows, b);
}

#[inline(always)]
fn mac_rows_portable<T: Accum, const R: usize>(mut d_rows: [&mut [T]; R], a_rows: [&[T]; R], b: &[T]) {
    let n = d_rows[0].len();
    let mut j = 0;
    if n.is_multiple_of(32) {
        while j < n {
            mac_block::<T, 32, R>(&mut d_rows, &a_rows, b, j);
            j += 32;
        }
    } else if n.is_multiple_of(16) {
        while j < n {
            mac_block::<T, 16, R>(&mut d_rows, &a_rows, b, j);
            j += 16;
        }
    } else {
        while j + 8 <= n {
            mac_block::<T, 8, R>(&mut d_rows, &a_rows, b, j);
            j += 8;
        }
    }
    // Narrow shapes (4×4 blocks): element by element.
    for (d_row, a_row) in d_rows.iter_mut().zip(a_rows) {
        for (jj, dv) in d_row.iter_mut().enumerate().skip(j) {
            let mut acc = *dv;
            for (&av, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
                acc = acc.mac(av, b_row[jj]);
            }
            *dv = acc;
        }
    }
}

/// Elements `j..j + BLOCK` of each row, summed in registers.
#[inline(always)]
fn mac_block<T: Accum, const BLOCK: usize, const R: usize>(
    d_rows: &mut [&mut [T]; R],
    a_rows: &[&[T]; R],
    b: &[T],
    j: usize,
) {
    let n = d_rows[0].len();
    let mut acc: [[T; BLOCK]; R] = std::array::from_fn(|r| d_rows[r][j..j + BLOCK].try_into().expect("a block"));
    for (kk, b_row) in b.chunks_exact(n).enumerate().take(a_rows[0].len()) {
        let bv: &[T; BLOCK] = b_row[j..j + BLOCK].try_into().expect("a block");
        for r in 0..R {
            let av = a_rows[r][kk];
            for t in 0..BLOCK {
                acc[r][t] = acc[r][t].mac(av, bv[t]);
            }
        }
    }
    for r in 0..R {
        d_rows[r][j..j + BLOCK].copy_from_slice(&acc[r]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked loop gives the k-ordered sums bit for bit, for every width and for values
    /// whose sums round differently in another order.
    #[test]
    fn blocked_rows_sum_in_k_order() {
        for n in [4usize, 8, 16, 32, 12, 24, 64] {
            let k = 5;
            let a: Vec<f32> = (0..k).map(|i| 1.0e8 / (i as f32 + 1.0) * if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
            let b: Vec<f32> = (0..k * n).map(|i| 1.0 + (i as f32) * 0.3).collect();
            let start: Vec<f32> = (0..n).map(|j| j as f32 * 0.1).collect();
            let mut d = start.clone();
            mac_rows([&mut d[..]], [&a[..]], &b);
            let (mut d0, mut d1) = (start.clone(), start.clone());
            let a1: Vec<f32> = a.iter().rev().copied().collect();
            mac_rows([&mut d0[..], &mut d1[..]], [&a[..], &a1[..]], &b);
            assert_eq!(d0, d, "n {n}: the first of two rows");
            for j in 0..n {
                let mut want = start[j];
                for kk in 0..k {
                    want += a1[kk] * b[kk * n + j];
                }
                assert_eq!(d1[j].to_bits(), want.to_bits(), "n {n}, second row, column {j}");
            }
            for j in 0..n {
                let mut want = start[j];
                for kk in 0..k {
                    want += a[kk] * b[kk * n + j];
                }
                assert_eq!(d[j].to_bits(), want.to_bits(), "n {n}, column {j}");
            }
        }
    }
}
