//! Sums of products over long fields in a fixed order of partial sums.
//!
//! A sum from left to right chains every addition to the one before it, so a long dot product
//! runs at one term per floating-point add latency. These keep [`LANES`] independent partial
//! sums (term `i` goes to lane `i % LANES`), add them pairwise, then add the terms past the
//! last whole group one by one: the order is fixed by the length alone, so the bits are the
//! same on any machine and thread count (but are not those of a left-to-right sum). Used by the
//! multipole operators' SVD and by the fracture modes' solves and iterations.

/// Independent partial sums: enough multiply-adds in flight for the compiler to vectorize and
/// for the sum to be bound by reading its operands.
pub(crate) const LANES: usize = 4;

/// The sums over `i < len` of each of the `K` components of `term(i)`, in the order of the
/// module docs.
#[inline]
fn lane_sums<const K: usize>(len: usize, term: impl Fn(usize) -> [f64; K]) -> [f64; K] {
    let mut lanes = [[0.0f64; LANES]; K];
    let whole = len / LANES * LANES;
    for start in (0..whole).step_by(LANES) {
        for (lane, i) in (start..start + LANES).enumerate() {
            for (sums, t) in lanes.iter_mut().zip(term(i)) {
                sums[lane] += t;
            }
        }
    }
    let mut sums = lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]));
    for i in whole..len {
        for (sum, t) in sums.iter_mut().zip(term(i)) {
            *sum += t;
        }
    }
    sums
}

/// `sum_i a_i b_i`.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let b = &b[..a.len()];
    lane_sums(a.len(), |i| [a[i] * b[i]])[0]
}

/// `(a . b, a . c)` in one pass over `a`.
pub(crate) fn dot_pair(a: &[f64], b: &[f64], c: &[f64]) -> (f64, f64) {
    let (b, c) = (&b[..a.len()], &c[..a.len()]);
    let [ab, ac] = lane_sums(a.len(), |i| [a[i] * b[i], a[i] * c[i]]);
    (ab, ac)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane sums agree with a sum in exact arithmetic (integers small enough that every
    /// partial sum is exact), over lengths that leave every remainder, and keep the documented
    /// order (checked on terms whose sum depends on it).
    #[test]
    fn sums_add_every_term_once_in_their_order() {
        for n in 0..40 {
            let a: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
            let b: Vec<f64> = (0..n).map(|i| (i % 5) as f64 + 1.0).collect();
            let c: Vec<f64> = (0..n).map(|i| (i % 3) as f64 - 1.0).collect();
            let exact = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
            assert_eq!(dot(&a, &b), exact(&a, &b));
            assert_eq!(dot_pair(&a, &b, &c), (exact(&a, &b), exact(&a, &c)));
        }
        // Terms 1, -1e16, 1e16, 1, 5: the lanes give ((1 - 1e16) + (1e16 + 1)) + 5, where each
        // 1 is lost to rounding beside 1e16, so 5; from left to right the sum would be 6.
        let terms = [1.0, -1e16, 1e16, 1.0, 5.0];
        assert_eq!(dot(&terms, &[1.0; 5]), 5.0);
        assert_eq!(terms.iter().sum::<f64>(), 6.0);
    }
}
