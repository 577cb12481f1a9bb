//! Small dense matrices for the multipole operators: row-major storage, products, and the
//! singular value decomposition by one-sided Jacobi rotations (Hestenes 1958).
//!
//! One-sided Jacobi is chosen over bidiagonalization + QR because it is short, computes small
//! singular values to high relative accuracy (the check-to-equivalent matrices are ill-conditioned
//! and their pseudo-inverse is truncated at 1e-10 or so), and is deterministic; its O(n^3) per
//! sweep cost is paid once per operator set, at n of a few hundred.

use rayon::prelude::*;

/// Vectors per block of [`Matrix::apply_many`].
pub const BATCH: usize = 16;

/// A dense row-major matrix of f64.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// A `rows x cols` matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Entry `(i, j)`.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    /// Sets entry `(i, j)`.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.cols + j] = v;
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// `y += A x` (`x` of length `cols`, `y` of length `rows`).
    pub fn mul_add(&self, x: &[f64], y: &mut [f64]) {
        debug_assert!(x.len() == self.cols && y.len() == self.rows);
        for (yi, row) in y.iter_mut().zip(self.data.chunks_exact(self.cols)) {
            *yi += dot(row, x);
        }
    }

    /// `A x` for every `x` of `inputs` (each of length `cols`), in input order. Vectors go in
    /// blocks of [`BATCH`], so each row of `A` is read once per block rather than once per vector:
    /// a matrix of a few megabytes applied vector by vector streams from memory every time.
    /// Each output entry is one [`dot`], so the result does not depend on the thread count.
    pub fn apply_many(&self, inputs: &[&[f64]]) -> Vec<Vec<f64>> {
        inputs
            .par_chunks(BATCH)
            .flat_map_iter(|block| {
                let mut outputs = vec![vec![0.0; self.rows]; block.len()];
                for (i, row) in self.data.chunks_exact(self.cols).enumerate() {
                    for (x, y) in block.iter().zip(outputs.iter_mut()) {
                        y[i] = dot(row, x);
                    }
                }
                outputs
            })
            .collect()
    }

    /// `A B`.
    pub fn mul(&self, other: &Matrix) -> Matrix {
        assert_eq!(self.cols, other.rows, "inner dimensions");
        let mut out = Matrix::zeros(self.rows, other.cols);
        for i in 0..self.rows {
            let out_row = &mut out.data[i * other.cols..(i + 1) * other.cols];
            for (k, &a) in self.row(i).iter().enumerate() {
                if a != 0.0 {
                    for (o, b) in out_row.iter_mut().zip(other.row(k)) {
                        *o += a * b;
                    }
                }
            }
        }
        out
    }

    /// `A^T`.
    pub fn transpose(&self) -> Matrix {
        let mut out = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                out.data[j * self.rows + i] = self.data[i * self.cols + j];
            }
        }
        out
    }

    /// Multiplies every entry by `s`.
    pub fn scale(&mut self, s: f64) {
        self.data.iter_mut().for_each(|v| *v *= s);
    }

    /// The first `k` columns.
    pub fn leading_columns(&self, k: usize) -> Matrix {
        let mut out = Matrix::zeros(self.rows, k);
        for i in 0..self.rows {
            out.data[i * k..(i + 1) * k].copy_from_slice(&self.row(i)[..k]);
        }
        out
    }
}

/// `sum a_i b_i`.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    // Four accumulators let the compiler vectorize; the order is fixed, so results are too.
    let mut acc = [0.0f64; 4];
    let chunks = a.len() / 4;
    for c in 0..chunks {
        for l in 0..4 {
            acc[l] += a[4 * c + l] * b[4 * c + l];
        }
    }
    let mut sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in 4 * chunks..a.len() {
        sum += a[i] * b[i];
    }
    sum
}

/// A singular value decomposition `A = U diag(s) V^T`, singular values descending.
#[derive(Clone, Debug)]
pub struct Svd {
    /// Left singular vectors, `rows x n` (columns).
    pub u: Matrix,
    /// Singular values, descending.
    pub s: Vec<f64>,
    /// Right singular vectors, `n x n` (columns).
    pub v: Matrix,
}

/// Most Jacobi sweeps; convergence is quadratic once the columns are nearly orthogonal.
const MAX_SWEEPS: usize = 60;

/// The SVD of `a` (`rows >= cols`) by one-sided Jacobi: rotate pairs of columns of `A V` until
/// every pair is orthogonal to `1e-15` relative; the column norms are then the singular values.
pub fn svd(a: &Matrix) -> Svd {
    let (m, n) = (a.rows, a.cols);
    assert!(m >= n, "one-sided Jacobi needs rows >= cols");
    // Work on columns: store A^T and V^T row-major, so a column is a contiguous row.
    let mut w = a.transpose();
    let mut vt = Matrix::zeros(n, n);
    for i in 0..n {
        vt.set(i, i, 1.0);
    }
    let mut norms: Vec<f64> = (0..n)
        .map(|j| dot(&w.data[j * m..(j + 1) * m], &w.data[j * m..(j + 1) * m]))
        .collect();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let (alpha, beta) = (norms[p], norms[q]);
                let gamma = dot(&w.data[p * m..(p + 1) * m], &w.data[q * m..(q + 1) * m]);
                if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let t = if zeta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                rotate(&mut w.data, m, p, q, c, s);
                rotate(&mut vt.data, n, p, q, c, s);
                // The rotation zeroes gamma: the squared norms move by t * gamma each.
                norms[p] = alpha - t * gamma;
                norms[q] = beta + t * gamma;
            }
        }
        // Refresh the norms once a sweep so the updates do not drift.
        for (j, norm) in norms.iter_mut().enumerate() {
            *norm = dot(&w.data[j * m..(j + 1) * m], &w.data[j * m..(j + 1) * m]);
        }
        if !rotated {
            break;
        }
    }
    let mut order: Vec<(usize, f64)> = (0..n)
        .map(|j| (j, dot(&w.data[j * m..(j + 1) * m], &w.data[j * m..(j + 1) * m]).sqrt()))
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut u = Matrix::zeros(m, n);
    let mut v = Matrix::zeros(n, n);
    let mut s = Vec::with_capacity(n);
    for (k, &(j, sigma)) in order.iter().enumerate() {
        s.push(sigma);
        for i in 0..m {
            u.set(i, k, if sigma > 0.0 { w.data[j * m + i] / sigma } else { 0.0 });
        }
        for i in 0..n {
            v.set(i, k, vt.data[j * n + i]);
        }
    }
    Svd { u, s, v }
}

/// Rotates rows `p` and `q` (each of length `len`) of a row-major block.
fn rotate(data: &mut [f64], len: usize, p: usize, q: usize, c: f64, s: f64) {
    let (head, tail) = data.split_at_mut(q * len);
    let rp = &mut head[p * len..(p + 1) * len];
    let rq = &mut tail[..len];
    for (x, y) in rp.iter_mut().zip(rq.iter_mut()) {
        let (a, b) = (*x, *y);
        *x = c * a - s * b;
        *y = s * a + c * b;
    }
}

impl Svd {
    /// How many singular values exceed `tolerance` times the largest.
    pub fn rank(&self, tolerance: f64) -> usize {
        let largest = self.s.first().copied().unwrap_or(0.0);
        self.s.iter().take_while(|&&s| s > tolerance * largest).count()
    }

    /// The truncated pseudo-inverse `V_k diag(1 / s_k) U_k^T` over the singular values above
    /// `tolerance` times the largest.
    pub fn pseudo_inverse(&self, tolerance: f64) -> Matrix {
        let k = self.rank(tolerance);
        let (m, n) = (self.u.rows, self.v.rows);
        let mut out = Matrix::zeros(n, m);
        for i in 0..n {
            for r in 0..k {
                let vr = self.v.get(i, r) / self.s[r];
                if vr != 0.0 {
                    let row = &mut out.data[i * m..(i + 1) * m];
                    for (j, o) in row.iter_mut().enumerate() {
                        *o += vr * self.u.get(j, r);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    fn random(rows: usize, cols: usize, seed: u64) -> Matrix {
        let mut rng = SplitMix64::new(seed);
        let mut a = Matrix::zeros(rows, cols);
        for i in 0..rows {
            for j in 0..cols {
                a.set(i, j, rng.next_f64() - 0.5);
            }
        }
        a
    }

    #[test]
    fn bem_fmm_svd_reconstructs_and_inverts() {
        let a = random(40, 30, 7);
        let d = svd(&a);
        // U diag(s) V^T = A, U and V orthonormal.
        for i in 0..40 {
            for j in 0..30 {
                let sum: f64 = (0..30).map(|k| d.u.get(i, k) * d.s[k] * d.v.get(j, k)).sum();
                assert!((sum - a.get(i, j)).abs() < 1e-12, "{sum} vs {}", a.get(i, j));
            }
        }
        let vtv = d.v.transpose().mul(&d.v);
        let utu = d.u.transpose().mul(&d.u);
        for i in 0..30 {
            for j in 0..30 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((vtv.get(i, j) - e).abs() < 1e-12 && (utu.get(i, j) - e).abs() < 1e-12);
            }
        }
        assert!(d.s.windows(2).all(|w| w[0] >= w[1]));
        // The pseudo-inverse of a full-rank tall matrix is a left inverse.
        let p = d.pseudo_inverse(1e-14).mul(&a);
        for i in 0..30 {
            for j in 0..30 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((p.get(i, j) - e).abs() < 1e-10);
            }
        }
    }
}
