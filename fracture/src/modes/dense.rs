//! Small dense linear algebra for the fracture-modes method: the symmetric eigenproblem of a
//! Rayleigh-Ritz projection, Cholesky solves of the small Gram matrices of the constraints, and
//! the dot products of long fields that the iterations repeat.
//!
//! Matrices are row-major `Vec<f64>` of `n x n`; the sizes here are tens to a few hundred. The
//! multipole operators' SVD (`bem::fmm::dense`) is not used for the Rayleigh-Ritz problem: it
//! truncates singular values below 1e-9 of the largest, which would drop the Laplacian's zero
//! eigenvalue (the constant field) that the modes need first.

/// Partial sums a dot product keeps: enough independent multiply-adds in flight that the sum is
/// bound by reading its operands, not by each addition waiting for the one before it.
const LANES: usize = 8;

/// `sum_i a_i b_i`, in [`LANES`] partial sums added pairwise in a fixed order (the same bits on
/// any machine and thread count, not those of a sum from left to right).
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut lanes = [0.0f64; LANES];
    let (mut a_chunks, mut b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    for (x, y) in (&mut a_chunks).zip(&mut b_chunks) {
        for lane in 0..LANES {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    let tail = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .fold(0.0, |sum, (x, y)| sum + x * y);
    added(lanes) + tail
}

/// `(a . b, a . c)` in one pass over `a`, each as [`dot`] sums it.
pub(crate) fn dot_pair(a: &[f64], b: &[f64], c: &[f64]) -> (f64, f64) {
    debug_assert!(a.len() == b.len() && a.len() == c.len());
    let (mut first, mut second) = ([0.0f64; LANES], [0.0f64; LANES]);
    let (mut a_chunks, mut b_chunks, mut c_chunks) =
        (a.chunks_exact(LANES), b.chunks_exact(LANES), c.chunks_exact(LANES));
    for ((x, y), z) in (&mut a_chunks).zip(&mut b_chunks).zip(&mut c_chunks) {
        for lane in 0..LANES {
            first[lane] += x[lane] * y[lane];
            second[lane] += x[lane] * z[lane];
        }
    }
    let (mut first_tail, mut second_tail) = (0.0, 0.0);
    for ((x, y), z) in a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .zip(c_chunks.remainder())
    {
        first_tail += x * y;
        second_tail += x * z;
    }
    (added(first) + first_tail, added(second) + second_tail)
}

/// `sum_i w_i a_i b_i`, summed as [`dot`] sums.
pub(crate) fn weighted_dot(a: &[f64], b: &[f64], weights: &[f64]) -> f64 {
    debug_assert!(a.len() == b.len() && a.len() == weights.len());
    let mut lanes = [0.0f64; LANES];
    let (mut a_chunks, mut b_chunks, mut w_chunks) = (
        a.chunks_exact(LANES),
        b.chunks_exact(LANES),
        weights.chunks_exact(LANES),
    );
    for ((x, y), w) in (&mut a_chunks).zip(&mut b_chunks).zip(&mut w_chunks) {
        for lane in 0..LANES {
            lanes[lane] += w[lane] * x[lane] * y[lane];
        }
    }
    let tail = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .zip(w_chunks.remainder())
        .fold(0.0, |sum, ((x, y), w)| sum + w * x * y);
    added(lanes) + tail
}

/// The partial sums added pairwise.
fn added(lanes: [f64; LANES]) -> f64 {
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lanes;
    ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))
}

/// Eigenvalues (ascending) and eigenvectors (column `i` of the returned row-major matrix belongs
/// to eigenvalue `i`) of the symmetric `n x n` matrix `a`, by cyclic Jacobi rotations (Golub and
/// Van Loan, section 8.5), which are accurate to round-off relative to the matrix's norm and
/// simple enough to check by eye. Sweeps stop when the off-diagonal mass is round-off.
pub fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    assert_eq!(a.len(), n * n, "a square matrix");
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let norm: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    for _sweep in 0..60 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum::<f64>()
            .sqrt();
        if off <= 1e-15 * norm || norm == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() <= 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut index: Vec<usize> = (0..n).collect();
    index.sort_by(|&i, &j| a[i * n + i].total_cmp(&a[j * n + j]).then(i.cmp(&j)));
    let values = index.iter().map(|&i| a[i * n + i]).collect();
    let mut vectors = vec![0.0; n * n];
    for (new, &old) in index.iter().enumerate() {
        for k in 0..n {
            vectors[k * n + new] = v[k * n + old];
        }
    }
    (values, vectors)
}

/// The lower Cholesky factor of the symmetric positive definite `n x n` matrix `a`, or `None`
/// when a pivot is not positive.
pub fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = a[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            if i == j {
                if !(sum > 0.0) {
                    return None;
                }
                l[i * n + i] = sum.sqrt();
            } else {
                l[i * n + j] = sum / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// Solves `L L^T x = b` in place with the factor of [`cholesky`].
pub fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let sum: f64 = b[i] - (0..i).map(|k| l[i * n + k] * b[k]).sum::<f64>();
        b[i] = sum / l[i * n + i];
    }
    for i in (0..n).rev() {
        let sum: f64 = b[i] - (i + 1..n).map(|k| l[k * n + i] * b[k]).sum::<f64>();
        b[i] = sum / l[i * n + i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane sums agree with a sum in exact arithmetic (integers small enough that every
    /// partial sum is exact), over lengths that leave every remainder.
    #[test]
    fn modes_dense_dots_sum_every_term_once() {
        for n in 0..40 {
            let a: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
            let b: Vec<f64> = (0..n).map(|i| (i % 5) as f64 + 1.0).collect();
            let c: Vec<f64> = (0..n).map(|i| (i % 3) as f64 - 1.0).collect();
            let exact = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
            assert_eq!(dot(&a, &b), exact(&a, &b));
            assert_eq!(dot_pair(&a, &b, &c), (exact(&a, &b), exact(&a, &c)));
            let wc: Vec<f64> = c.iter().zip(&b).map(|(p, q)| p * q).collect();
            assert_eq!(weighted_dot(&a, &b, &c), exact(&a, &wc));
        }
    }

    #[test]
    fn modes_dense_eigen_reconstructs_the_matrix() {
        let n = 7;
        let a: Vec<f64> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                1.0 / (1.0 + i as f64 + j as f64) + if i == j { 0.1 * i as f64 } else { 0.0 }
            })
            .collect();
        let (values, vectors) = symmetric_eigen(a.clone(), n);
        assert!(values.windows(2).all(|w| w[0] <= w[1]));
        for i in 0..n {
            for j in 0..n {
                let back: f64 = (0..n)
                    .map(|k| vectors[i * n + k] * values[k] * vectors[j * n + k])
                    .sum();
                assert!((back - a[i * n + j]).abs() < 1e-13, "{back} vs {}", a[i * n + j]);
                let gram: f64 = (0..n).map(|k| vectors[k * n + i] * vectors[k * n + j]).sum();
                assert!((gram - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13);
            }
        }
        let l = cholesky(&a, n).unwrap();
        let mut b: Vec<f64> = (0..n).map(|i| i as f64 - 2.0).collect();
        let expected = b.clone();
        let mut ab = vec![0.0; n];
        for i in 0..n {
            ab[i] = (0..n).map(|k| a[i * n + k] * b[k]).sum();
        }
        b.copy_from_slice(&ab);
        cholesky_solve(&l, n, &mut b);
        for (x, e) in b.iter().zip(&expected) {
            assert!((x - e).abs() < 1e-10);
        }
    }
}
