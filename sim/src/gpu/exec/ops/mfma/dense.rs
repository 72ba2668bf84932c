//! The arithmetic of a dense block: `D_row += A_row · B` for one row of D at a time.
//!
//! Each D element sums its products in `k` order, as the module's semantics say; the loop is
//! blocked so that a whole row of D (32 or 16 elements, else blocks of 8) stays in host
//! registers across the `k` loop: one load and one store of D per row instead of one per `k`,
//! and several independent sums in flight (one 8-wide sum is bound by the latency of its
//! additions). On an x86-64 host with AVX2 and FMA it is compiled a second time for 256-bit
//! vectors (FMA for the accumulators whose `mac` is a fused multiply-add).
//! Neither changes a result bit: the order of every element's sum is the same, and products
//! and sums stay separate operations (no fused multiply-add unless the accumulator type says
//! so); accumulator types that sum products in groups get their groups.

use super::accum::{dot, Accum};
use super::layout::Pos;
use super::shape::Shape;
use crate::gpu::exec::wave::Lanes;

/// Whether the host runs the AVX2+FMA instances of the loops below (each entry point has its
/// own `#[target_feature]` instance; the check is shared).
#[cfg(target_arch = "x86_64")]
#[inline]
fn host_has_avx2_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Where `R` rows' A values lie in one slice: the `k`-th value of row `r` at
/// `first[r] + k * step` (row-major rows have step 1; [`mac_into_registers`] reads A
/// k-major, as it is gathered, with step `m`).
#[derive(Debug, Clone, Copy)]
pub struct ARows<const R: usize> {
    pub first: [usize; R],
    pub step: usize,
}

impl ARows<1> {
    /// One row-major row starting at `a[0]`.
    pub const ROW: ARows<1> = ARows { first: [0], step: 1 };
}

/// `D += A·B` for every block, with A dense k-major (`A[b][k][i]`: each `k` holds a column
/// of A, as the registers hold it, `m` consecutive lanes) and B dense row-major
/// (`B[b][k][j]`), and D in its registers: `d_pos` holds each D element's position (row `i`
/// of block `b` starts at `(b*m + i)*n` and is `n` consecutive lanes of one register). One
/// call per instruction, so the host-feature dispatch happens once.
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
        let rows = &d_pos[blk * m * n..][..m * n];
        if T::GROUP > 1 {
            mac_grouped_in_registers(d, rows, (m, n, k), a, b);
        } else if n.is_multiple_of(32) {
            mac_rows_in_registers::<T, 32>(d, rows, (m, n), a, b);
        } else if n.is_multiple_of(16) {
            mac_rows_in_registers::<T, 16>(d, rows, (m, n), a, b);
        } else {
            // Narrow rows (4×4 blocks): one at a time.
            for i in 0..m {
                let p = rows[i * n];
                let d_row = bytemuck::cast_slice_mut(&mut d[p.reg][p.lane..p.lane + n]);
                mac_rows_portable([d_row], a, ARows { first: [i], step: m }, b);
            }
        }
    }
}

/// One block's `m` D rows of `n` (`rows`: each row's positions), two at a time, `BLOCK`
/// columns at a time: two rows share each load of B, and their `2 * BLOCK / 8` sums are in
/// flight at once (more rows were no faster: the compiler then takes B from memory for each
/// sum).
#[inline(always)]
fn mac_rows_in_registers<T: Accum + bytemuck::Pod, const BLOCK: usize>(
    d: &mut [Lanes],
    rows: &[Pos],
    (m, n): (usize, usize),
    a: &[T],
    b: &[T],
) {
    let row = |i: usize| rows[i * n];
    let mut i = 0;
    while i + 2 <= m {
        let a_rows = ARows { first: [i, i + 1], step: m };
        for j in (0..n).step_by(BLOCK) {
            mac_block_in_registers::<T, BLOCK, 2>(d, [row(i), row(i + 1)], a, a_rows, b, n, j);
        }
        i += 2;
    }
    if i < m {
        for j in (0..n).step_by(BLOCK) {
            mac_block_in_registers::<T, BLOCK, 1>(d, [row(i)], a, ARows { first: [i], step: m }, b, n, j);
        }
    }
}

/// One block's D (`rows`: each row's positions; row `i` is `n` consecutive lanes of one
/// register) plus `A·B` for accumulator types that sum their products in groups
/// ([`Accum::GROUP`] 2 or 4), with A k-major and B row-major: a pass over D per group, each
/// row a plain loop over its columns, which the compiler vectorises as it is. (Blocks of a
/// row held in host registers across `k`, as for the other types, made it keep a group's B
/// values for every block live at once and spill them; a pass per row and group repeated
/// the group's set-up for every row: both were twice as slow.)
#[inline(always)]
fn mac_grouped_in_registers<T: Accum + bytemuck::Pod>(
    d: &mut [Lanes],
    rows: &[Pos],
    (m, n, k): (usize, usize, usize),
    a: &[T],
    b: &[T],
) {
    let b_row = |kk: usize| &b[kk * n..][..n];
    let a_col = |kk: usize| &a[kk * m..][..m];
    for kk in (0..k).step_by(T::GROUP) {
        let (a0, a1, b0, b1) = (a_col(kk), a_col(kk + 1), b_row(kk), b_row(kk + 1));
        // A group of two, or the first pair of a group of four.
        let (a2, a3, b2, b3) =
            if T::GROUP == 4 { (a_col(kk + 2), a_col(kk + 3), b_row(kk + 2), b_row(kk + 3)) } else { (a0, a1, b0, b1) };
        for i in 0..m {
            let p = rows[i * n];
            let d_row: &mut [T] = bytemuck::cast_slice_mut(&mut d[p.reg][p.lane..p.lane + n]);
            let (x0, x1, x2, x3) = (a0[i], a1[i], a2[i], a3[i]);
            // C as the arithmetic takes it, in the first pass, where D is read anyway.
            let c = |dv: T| if kk == 0 { dv.accumulator() } else { dv };
            if T::GROUP == 2 {
                for ((dv, &y0), &y1) in d_row.iter_mut().zip(b0).zip(b1) {
                    *dv = c(*dv).add(T::pair(x0, y0, x1, y1));
                }
            } else {
                for ((((dv, &y0), &y1), &y2), &y3) in d_row.iter_mut().zip(b0).zip(b1).zip(b2).zip(b3) {
                    *dv = c(*dv).add(T::pair(x0, y0, x1, y1).add(T::pair(x2, y2, x3, y3)));
                }
            }
        }
    }
}

/// Elements `j..j + BLOCK` of the `R` D rows starting at `rows` (each `n` consecutive lanes
/// of one register), summed in host registers.
#[inline(always)]
fn mac_block_in_registers<T: Accum + bytemuck::Pod, const BLOCK: usize, const R: usize>(
    d: &mut [Lanes],
    rows: [Pos; R],
    a: &[T],
    a_rows: ARows<R>,
    b: &[T],
    n: usize,
    j: usize,
) {
    let mut acc: [[T; BLOCK]; R] = std::array::from_fn(|r| {
        let p = rows[r];
        let words: &[u32; BLOCK] = d[p.reg][p.lane + j..][..BLOCK].try_into().expect("a block");
        bytemuck::cast_slice::<u32, T>(words).try_into().expect("a block")
    });
    mac_k_loop(&mut acc, a, a_rows, b, n, j);
    for (p, acc) in rows.iter().zip(&acc) {
        d[p.reg][p.lane + j..][..BLOCK].copy_from_slice(bytemuck::cast_slice(acc));
    }
}

/// `d_row[j] = mac(... mac(d_row[j], a(r, 0), b[0][j]) ..., a(r, k-1), b[k-1][j])` for
/// each of the `R` rows (one or two: two rows share each load of B and double the sums in
/// flight), with `a(r, k)` in `a` where `a_rows` says and `b` row-major (`k` rows of
/// `d_row.len()`).
#[inline]
pub fn mac_rows<T: Accum, const R: usize>(d_rows: [&mut [T]; R], a: &[T], a_rows: ARows<R>, b: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if host_has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { mac_rows_avx2(d_rows, a, a_rows, b) };
        return;
    }
    mac_rows_portable(d_rows, a, a_rows, b);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mac_rows_avx2<T: Accum, const R: usize>(d_rows: [&mut [T]; R], a: &[T], a_rows: ARows<R>, b: &[T]) {
    mac_rows_portable(d_rows, a, a_rows, b);
}

#[inline(always)]
fn mac_rows_portable<T: Accum, const R: usize>(mut d_rows: [&mut [T]; R], a: &[T], a_rows: ARows<R>, b: &[T]) {
    let n = d_rows[0].len();
    let k = b.len() / n;
    let mut j = 0;
    if n.is_multiple_of(32) {
        while j < n {
            mac_block::<T, 32, R>(&mut d_rows, a, a_rows, b, j);
            j += 32;
        }
    } else if n.is_multiple_of(16) {
        while j < n {
            mac_block::<T, 16, R>(&mut d_rows, a, a_rows, b, j);
            j += 16;
        }
    } else {
        while j + 8 <= n {
            mac_block::<T, 8, R>(&mut d_rows, a, a_rows, b, j);
            j += 8;
        }
    }
    // Narrow shapes (4×4 blocks): element by element.
    for (d_row, first) in d_rows.iter_mut().zip(a_rows.first) {
        for (jj, dv) in d_row.iter_mut().enumerate().skip(j) {
            *dv = dot(*dv, k, |kk| a[first + kk * a_rows.step], |kk| b[kk * n + jj]);
        }
    }
}

/// The `k` loop both block forms share: `acc[r][t] = mac(acc[r][t], a(r, k), b[k][j + t])`
/// for each `k` in order, with `b` row-major (rows of `n`). For accumulator types that sum
/// products one at a time; the grouped ones ([`Accum::GROUP`] > 1) go to
/// [`mac_grouped_in_registers`].
#[inline(always)]
fn mac_k_loop<T: Accum, const BLOCK: usize, const R: usize>(
    acc: &mut [[T; BLOCK]; R],
    a: &[T],
    a_rows: ARows<R>,
    b: &[T],
    n: usize,
    j: usize,
) {
    debug_assert_eq!(T::GROUP, 1);
    for (kk, b_row) in b.chunks_exact(n).enumerate() {
        let bv: &[T; BLOCK] = b_row[j..j + BLOCK].try_into().expect("a block");
        for r in 0..R {
            let av = a[a_rows.first[r] + kk * a_rows.step];
            for t in 0..BLOCK {
                acc[r][t] = acc[r][t].mac(av, bv[t]);
            }
        }
    }
}

/// Elements `j..j + BLOCK` of each row, summed in registers.
#[inline(always)]
fn mac_block<T: Accum, const BLOCK: usize, const R: usize>(
    d_rows: &mut [&mut [T]; R],
    a: &[T],
    a_rows: ARows<R>,
    b: &[T],
    j: usize,
) {
    let n = d_rows[0].len();
    let mut acc: [[T; BLOCK]; R] = std::array::from_fn(|r| d_rows[r][j..j + BLOCK].try_into().expect("a block"));
    mac_k_loop(&mut acc, a, a_rows, b, n, j);
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
            mac_rows([&mut d[..]], &a, ARows::ROW, &b);
            let (mut d0, mut d1) = (start.clone(), start.clone());
            let a1: Vec<f32> = a.iter().rev().copied().collect();
            // The two rows k-major, as `mac_into_registers` reads A.
            let both: Vec<f32> = a.iter().zip(&a1).flat_map(|(&x, &y)| [x, y]).collect();
            mac_rows([&mut d0[..], &mut d1[..]], &both, ARows { first: [0, 1], step: 2 }, &b);
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
