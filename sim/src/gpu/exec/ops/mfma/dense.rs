//! The arithmetic of a dense block: `D_row += A_row · B` for one row of D at a time.
//!
//! Each D element sums its products in `k` order, as the module's semantics say; the loop is
//! blocked so that eight D elements stay in host registers across the whole `k` loop (one
//! load and one store of D per row block instead of one per `k`), and, on an x86-64 host with
//! AVX2, compiled a second time for 256-bit vectors. Neither changes a result bit: the order
//! of every element's sum is the same, and products and sums stay separate operations (no
//! fused multiply-add unless the accumulator type's `mac` says so).

use super::Accum;

/// D elements kept in registers at once.
const BLOCK: usize = 8;

/// `d_row[j] = mac(... mac(d_row[j], a_row[0], b[0][j]) ..., a_row[k-1], b[k-1][j])`, with
/// `b` row-major (`k` rows of `d_row.len()`).
#[inline]
pub fn mac_row<T: Accum>(d_row: &mut [T], a_row: &[T], b: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { mac_row_avx2(d_row, a_row, b) };
            return;
        }
    }
    mac_row_portable(d_row, a_row, b);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mac_row_avx2<T: Accum>(d_row: &mut [T], a_row: &[T], b: &[T]) {
    mac_row_portable(d_row, a_row, b);
}

#[inline(always)]
fn mac_row_portable<T: Accum>(d_row: &mut [T], a_row: &[T], b: &[T]) {
    let n = d_row.len();
    let mut j = 0;
    while j + BLOCK <= n {
        let mut acc: [T; BLOCK] = std::array::from_fn(|t| d_row[j + t]);
        for (&av, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
            let bv: &[T; BLOCK] = b_row[j..j + BLOCK].try_into().expect("a block");
            for t in 0..BLOCK {
                acc[t] = acc[t].mac(av, bv[t]);
            }
        }
        d_row[j..j + BLOCK].copy_from_slice(&acc);
        j += BLOCK;
    }
    // Narrow shapes (4×4 blocks): element by element.
    for (jj, dv) in d_row.iter_mut().enumerate().skip(j) {
        let mut acc = *dv;
        for (&av, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
            acc = acc.mac(av, b_row[jj]);
        }
        *dv = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocked loop gives the k-ordered sums bit for bit, for every width and for values
    /// whose sums round differently in another order.
    #[test]
    fn blocked_rows_sum_in_k_order() {
        for n in [4usize, 8, 16, 32, 12] {
            let k = 5;
            let a: Vec<f32> = (0..k).map(|i| 1.0e8 / (i as f32 + 1.0) * if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
            let b: Vec<f32> = (0..k * n).map(|i| 1.0 + (i as f32) * 0.3).collect();
            let start: Vec<f32> = (0..n).map(|j| j as f32 * 0.1).collect();
            let mut d = start.clone();
            mac_row(&mut d, &a, &b);
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
