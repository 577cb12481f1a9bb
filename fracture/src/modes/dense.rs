//! Small dense linear algebra for the fracture-modes method: the symmetric eigenproblem of a
//! Rayleigh-Ritz projection, and Cholesky solves of the small Gram matrices of the constraints.
//!
//! Matrices are row-major `Vec<f64>` of `n x n`; the sizes here are tens to a few hundred. The
//! multipole operators' SVD (`bem::fmm::dense`) is not used for the Rayleigh-Ritz problem: it
//! truncates singular values below 1e-9 of the largest, which would drop the Laplacian's zero
//! eigenvalue (the constant field) that the modes need first.

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
