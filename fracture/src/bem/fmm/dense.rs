//! Small dense matrices for the multipole operators: row-major storage, register-blocked
//! products, and the singular value decomposition by one-sided Jacobi rotations (Hestenes 1958)
//! after a pivoted QR.
//!
//! One-sided Jacobi is chosen over bidiagonalization + QR because it is short, accurate for the
//! ill-conditioned check-to-equivalent matrices (their pseudo-inverse is truncated at 1e-9), and
//! deterministic. Its O(n^3) per sweep cost is paid once per operator set, at n of 654 (order 7)
//! to 1464 (order 10): two pivoted QR factorizations first cut the sweeps from 42 to 10 at
//! order 7, and each sweep's rotations run in parallel. With the blocked products, building the
//! order-8 operators went from 25 s to 6 s on two threads (the SVD 4.4 s of it).

use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::bem::lanes::Avx;
use crate::bem::lanes::{LANES, Lanes, Portable, avx_available};
use crate::sums::dot;

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

    /// `A x` for every `x` of `inputs` (each of length `cols`), in input order.
    ///
    /// Vectors go in blocks of [`BATCH`], interleaved four by four, and each block of eight rows
    /// of `A` (the last rows one by one) meets every vector of the batch while it is in cache: the
    /// inner step multiplies eight matrix entries by four vector entries into 32 running sums,
    /// nine loads for 32 products where a dot product needs two per product, and eight vector
    /// additions independent of each other (with four rows the adds waited on each other's
    /// latency: the upward and downward passes of a 13k-point mat-vec took 45 ms, now 37 ms).
    /// Every output entry is one sum over the columns in order, so the result depends neither
    /// on the blocking nor on the thread count.
    pub fn apply_many(&self, inputs: &[&[f64]]) -> Vec<Vec<f64>> {
        let (rows, cols) = (self.rows, self.cols);
        inputs
            .par_chunks(BATCH)
            .flat_map_iter(|block| {
                let groups = block.len().div_ceil(LANES);
                // Group g's entry k of vector j (of four) at (g * cols + k) * 4 + j; missing
                // vectors of the last group are zeros whose results are dropped.
                let mut packed = vec![0.0; groups * cols * LANES];
                for (v, x) in block.iter().enumerate() {
                    let (g, j) = (v / LANES, v % LANES);
                    for (k, &value) in x.iter().enumerate() {
                        packed[(g * cols + k) * LANES + j] = value;
                    }
                }
                let mut outputs = vec![vec![0.0; rows]; block.len()];
                let mut r = 0;
                while r + ROWS <= rows {
                    for g in 0..groups {
                        let xs = &packed[g * cols * LANES..(g + 1) * cols * LANES];
                        let sums = eight_rows(&self.data[r * cols..(r + ROWS) * cols], cols, xs);
                        for j in 0..LANES.min(block.len() - g * LANES) {
                            for (i, sum) in sums.iter().enumerate() {
                                outputs[g * LANES + j][r + i] = sum[j];
                            }
                        }
                    }
                    r += ROWS;
                }
                // The last rows (fewer than eight), one at a time.
                while r < rows {
                    let row = self.row(r);
                    for g in 0..groups {
                        let xs = &packed[g * cols * LANES..(g + 1) * cols * LANES];
                        let mut sum = [0.0; LANES];
                        for (k, &a) in row.iter().enumerate() {
                            for j in 0..LANES {
                                sum[j] += a * xs[k * LANES + j];
                            }
                        }
                        for (j, value) in sum.iter().enumerate().take(block.len() - g * LANES) {
                            outputs[g * LANES + j][r] = *value;
                        }
                    }
                    r += 1;
                }
                outputs
            })
            .collect()
    }

    /// `A B`, column by column through [`Matrix::apply_many`].
    pub fn mul(&self, other: &Matrix) -> Matrix {
        assert_eq!(self.cols, other.rows, "inner dimensions");
        let columns = other.transpose();
        let inputs: Vec<&[f64]> = (0..other.cols).map(|j| columns.row(j)).collect();
        let mut out = Matrix::zeros(self.rows, other.cols);
        for (j, column) in self.apply_many(&inputs).iter().enumerate() {
            for (i, &v) in column.iter().enumerate() {
                out.data[i * other.cols + j] = v;
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

/// Rows of the register block of [`Matrix::apply_many`]: eight running sums of four lanes each,
/// so eight additions are in flight where four rows left the adder waiting on its latency.
const ROWS: usize = 8;

/// The products of eight consecutive rows (`rows`, row-major, `cols` each) with four interleaved
/// vectors (`xs[k * 4 + j]`): `sums[i][j]`, each a sum over `k` in order.
#[inline]
fn eight_rows(rows: &[f64], cols: usize, xs: &[f64]) -> [[f64; LANES]; ROWS] {
    #[cfg(target_arch = "x86_64")]
    if avx_available() {
        #[allow(unsafe_code)]
        // SAFETY: `avx_available` confirmed that this machine executes AVX.
        return unsafe { eight_rows_avx(rows, cols, xs) };
    }
    eight_rows_in::<Portable>(rows, cols, xs)
}

/// [`eight_rows_in`] in AVX registers: the same bits as the portable form.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn eight_rows_avx(rows: &[f64], cols: usize, xs: &[f64]) -> [[f64; LANES]; ROWS] {
    eight_rows_in::<Avx>(rows, cols, xs)
}

/// [`eight_rows`], the four vectors in the lanes of `V`.
#[inline(always)]
fn eight_rows_in<V: Lanes>(rows: &[f64], cols: usize, xs: &[f64]) -> [[f64; LANES]; ROWS] {
    let r: [&[f64]; ROWS] = core::array::from_fn(|i| &rows[i * cols..(i + 1) * cols]);
    let mut sums = [V::splat(0.0); ROWS];
    for (k, x) in xs.chunks_exact(LANES).enumerate() {
        let x = V::load(x.try_into().expect("four lanes"));
        for i in 0..ROWS {
            sums[i] = sums[i] + V::splat(r[i][k]) * x;
        }
    }
    sums.map(V::to_array)
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

/// One column of the Jacobi iteration: the column of `A V`, the matching column of `V`, and the
/// squared norm of the first.
struct Column {
    w: Vec<f64>,
    v: Vec<f64>,
    norm: f64,
}

/// The SVD of `a` (`rows >= cols`), preconditioned as in Drmac and Veselic 2008: a Householder
/// QR with column pivoting `A P = Q R`, a second one of `R^T` (`R^T P2 = Q2 R2`), then
/// one-sided Jacobi on `R2^T` (see the comment in the body for how the factors combine).
///
/// Jacobi on `A` itself converges slowly when its columns are far from orthogonal and its
/// singular values spread over twelve decades, as the check-to-equivalent matrices' do: 42
/// sweeps at order 7. On the twice-pivoted triangle the columns are already graded: 12 sweeps
/// after one QR, 10 after two.
pub fn svd(a: &Matrix) -> Svd {
    let (m, n) = (a.rows, a.cols);
    assert!(m >= n, "the SVD here needs rows >= cols");
    let qr = PivotedQr::new(a);
    // X = R^T, factored again: X P2 = Q2 R2. Jacobi on Z = R2^T = Uz Sigma Vz^T gives
    // X = (Q2 Vz) Sigma (P2 Uz)^T, so A P = Q X^T = (Q P2 Uz) Sigma (Q2 Vz)^T.
    let mut x = Matrix::zeros(n, n);
    for i in 0..n {
        for j in i..n {
            x.set(j, i, qr.r(i, j));
        }
    }
    let qr2 = PivotedQr::new(&x);
    let rows_of_r2: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| if j < i { 0.0 } else { qr2.r(i, j) }).collect())
        .collect();
    let (w, rotations) = jacobi(rows_of_r2);
    let mut order: Vec<(usize, f64)> = w.iter().enumerate().map(|(j, c)| (j, dot(c, c).sqrt())).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let columns: Vec<(Vec<f64>, Vec<f64>)> = order
        .par_iter()
        .map(|&(j, sigma)| {
            // Uz's column, permuted by P2, then Q applied: the left vector.
            let mut permuted = vec![0.0; n];
            for i in 0..n {
                permuted[qr2.permutation[i]] = if sigma > 0.0 { w[j][i] / sigma } else { 0.0 };
            }
            (qr.q_times(&permuted), qr2.q_times(&rotations[j]))
        })
        .collect();
    let mut u = Matrix::zeros(m, n);
    let mut v = Matrix::zeros(n, n);
    let mut s = Vec::with_capacity(n);
    for (k, (&(_, sigma), (left, right))) in order.iter().zip(&columns).enumerate() {
        s.push(sigma);
        for (i, &value) in left.iter().enumerate() {
            u.set(i, k, value);
        }
        for (&i, &value) in qr.permutation.iter().zip(right) {
            v.set(i, k, value);
        }
    }
    Svd { u, s, v }
}

/// A Householder QR factorization with column pivoting, `A P = Q R`.
struct PivotedQr {
    /// The reduced columns (in pivoted order): above and on the diagonal, `R`'s entries (the
    /// diagonal from `diagonal`); below it, the Householder vectors' tails.
    columns: Vec<Vec<f64>>,
    /// `R`'s diagonal.
    diagonal: Vec<f64>,
    /// Each reflector's full vector `v` (from its row down) and `2 / v.v`.
    reflectors: Vec<(Vec<f64>, f64)>,
    /// Column `k` of `A P` is column `permutation[k]` of `A`.
    permutation: Vec<usize>,
}

impl PivotedQr {
    fn new(a: &Matrix) -> Self {
        let (m, n) = (a.rows, a.cols);
        let at = a.transpose();
        let mut columns: Vec<Vec<f64>> = (0..n).map(|j| at.row(j).to_vec()).collect();
        let mut permutation: Vec<usize> = (0..n).collect();
        let mut diagonal = Vec::with_capacity(n);
        let mut reflectors = Vec::with_capacity(n);
        for k in 0..n {
            // Pivot: the largest remaining column norm (first on ties), computed afresh.
            let (pivot, _) =
                columns[k..]
                    .iter()
                    .map(|c| dot(&c[k..], &c[k..]))
                    .enumerate()
                    .fold(
                        (0, -1.0),
                        |best, (i, norm)| if norm > best.1 { (i, norm) } else { best },
                    );
            columns.swap(k, k + pivot);
            permutation.swap(k, k + pivot);
            let x = &columns[k][k..m];
            let norm = dot(x, x).sqrt();
            let alpha = if x[0] > 0.0 { -norm } else { norm };
            let mut v = x.to_vec();
            v[0] -= alpha;
            let vv = dot(&v, &v);
            let beta = if vv > 0.0 { 2.0 / vv } else { 0.0 };
            diagonal.push(alpha);
            columns[k + 1..].par_iter_mut().for_each(|c| {
                let t = beta * dot(&v, &c[k..m]);
                c[k..m].iter_mut().zip(&v).for_each(|(ci, vi)| *ci -= t * vi);
            });
            reflectors.push((v, beta));
        }
        Self {
            columns,
            diagonal,
            reflectors,
            permutation,
        }
    }

    /// `R_ij` (`i <= j`).
    fn r(&self, i: usize, j: usize) -> f64 {
        if i == j { self.diagonal[i] } else { self.columns[j][i] }
    }

    /// `Q [y; 0]` for `y` of length `n`: the reflectors applied last to first.
    fn q_times(&self, y: &[f64]) -> Vec<f64> {
        let m = self.columns.first().map_or(0, |c| c.len());
        let mut out = vec![0.0; m];
        out[..y.len()].copy_from_slice(y);
        for (k, (v, beta)) in self.reflectors.iter().enumerate().rev() {
            let t = beta * dot(v, &out[k..]);
            out[k..].iter_mut().zip(v).for_each(|(o, vi)| *o -= t * vi);
        }
        out
    }
}

/// One-sided Jacobi on the columns `a`: rotates pairs until every pair is orthogonal to `1e-15`
/// relative (or below the rounding floor); returns the rotated columns `A V` and the columns of
/// `V`.
///
/// Each sweep visits every pair once in round-robin (tournament) order: a round pairs every
/// column with another, so its rotations touch disjoint columns and run in parallel, and the
/// result does not depend on the thread count.
fn jacobi(a: Vec<Vec<f64>>) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let n = a.len();
    let mut columns: Vec<Option<Column>> = a
        .into_iter()
        .enumerate()
        .map(|(j, w)| {
            let mut v = vec![0.0; n];
            v[j] = 1.0;
            let norm = dot(&w, &w);
            Some(Column { w, v, norm })
        })
        .collect();
    // Rounding leaves every column with an error of about eps |A| whatever its size: columns
    // (and their overlaps) at that level are noise, and rotating them would never converge.
    let floor = 1e-15 * columns.iter().flatten().map(|c| c.norm).sum::<f64>().sqrt();
    // Round-robin seats: seat 0 stays, the others turn one place per round; `n` odd gets a bye.
    let players = n + n % 2;
    let mut seats: Vec<usize> = (0..players).collect();
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for _ in 0..players.saturating_sub(1) {
            let mut pairs: Vec<(usize, usize, Column, Column)> = Vec::with_capacity(players / 2);
            for k in 0..players / 2 {
                let (i, j) = (seats[k], seats[players - 1 - k]);
                let (p, q) = (i.min(j), i.max(j));
                if q < n {
                    let (cp, cq) = (columns[p].take(), columns[q].take());
                    if let (Some(cp), Some(cq)) = (cp, cq) {
                        pairs.push((p, q, cp, cq));
                    }
                }
            }
            rotated |= pairs
                .par_iter_mut()
                .map(|(_, _, cp, cq)| rotate_pair(cp, cq, floor))
                .reduce(|| false, |x, y| x || y);
            for (p, q, cp, cq) in pairs {
                columns[p] = Some(cp);
                columns[q] = Some(cq);
            }
            seats[1..].rotate_right(1);
        }
        // Refresh the norms once a sweep so the updates do not drift.
        for c in columns.iter_mut().flatten() {
            c.norm = dot(&c.w, &c.w);
        }
        if !rotated {
            break;
        }
    }
    columns.into_iter().flatten().map(|c| (c.w, c.v)).unzip()
}

/// Rotates columns `p` and `q` so they are orthogonal; whether a rotation was needed.
fn rotate_pair(p: &mut Column, q: &mut Column, floor: f64) -> bool {
    let (alpha, beta) = (p.norm, q.norm);
    let gamma = dot(&p.w, &q.w);
    if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() + floor * (alpha.sqrt() + beta.sqrt()) {
        return false;
    }
    let zeta = (beta - alpha) / (2.0 * gamma);
    let t = if zeta == 0.0 {
        1.0
    } else {
        zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt())
    };
    let c = 1.0 / (1.0 + t * t).sqrt();
    let s = c * t;
    rotate(&mut p.w, &mut q.w, c, s);
    rotate(&mut p.v, &mut q.v, c, s);
    // The rotation zeroes gamma: the squared norms move by t * gamma each.
    p.norm = alpha - t * gamma;
    q.norm = beta + t * gamma;
    true
}

/// `(x, y) <- (c x - s y, s x + c y)`, entry by entry.
fn rotate(x: &mut [f64], y: &mut [f64], c: f64, s: f64) {
    for (x, y) in x.iter_mut().zip(y.iter_mut()) {
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

    /// Every product of `apply_many` is the plain sum over the columns in order, bit for bit:
    /// with rows in blocks of eight, then one by one (29), and vectors filling one batch and part
    /// of another, the last group of four short (21).
    #[test]
    fn bem_fmm_apply_many_sums_each_row_in_column_order() {
        let a = random(29, 37, 3);
        let vectors: Vec<Vec<f64>> = (0..21)
            .map(|v| (0..37).map(|k| ((v * 37 + k) as f64 * 0.37).sin()).collect())
            .collect();
        let inputs: Vec<&[f64]> = vectors.iter().map(|v| v.as_slice()).collect();
        let got = a.apply_many(&inputs);
        for (x, y) in vectors.iter().zip(&got) {
            for (i, value) in y.iter().enumerate() {
                let mut sum = 0.0;
                for (k, xk) in x.iter().enumerate() {
                    sum += a.get(i, k) * xk;
                }
                assert_eq!(value.to_bits(), sum.to_bits(), "row {i}");
            }
        }
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

    /// A check-to-equivalent matrix (order 5, singular values over eight decades) and a
    /// tall random one with an odd column count (a bye in every round): the factors rebuild the
    /// matrix to 1e-13 of its largest entry, the vectors are orthonormal, the values descend,
    /// and the bits are the same with one thread and two.
    #[test]
    fn bem_fmm_svd_of_an_ill_conditioned_operator_and_an_odd_width() {
        use crate::bem::fmm::operators::{displacement_matrix, unit_surface};
        use crate::bem::{Elastic, Kelvin};
        let kelvin = Kelvin::new(&Elastic::try_new(1.0, 0.3).unwrap());
        let surface = unit_surface(5);
        let outer: Vec<_> = surface.iter().map(|p| *p * 3.0).collect();
        for a in [displacement_matrix(&kelvin, &outer, &surface), random(41, 31, 9)] {
            let (m, n) = (a.rows(), a.cols());
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap()
                .install(|| svd(&a));
            let d = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap()
                .install(|| svd(&a));
            assert_eq!((&one.s, &one.u, &one.v), (&d.s, &d.u, &d.v));
            let largest = (0..m)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .fold(0.0f64, |x, (i, j)| x.max(a.get(i, j).abs()));
            for i in 0..m {
                for j in 0..n {
                    let sum: f64 = (0..n).map(|k| d.u.get(i, k) * d.s[k] * d.v.get(j, k)).sum();
                    assert!((sum - a.get(i, j)).abs() < 1e-13 * largest, "{sum} vs {}", a.get(i, j));
                }
            }
            // U's columns come from A V scaled by 1 / s: orthonormal to rounding times s_1 / s,
            // checked where s > 1e-6 s_1 (the pseudo-inverse keeps s > 1e-9 s_1).
            let (utu, vtv) = (d.u.transpose().mul(&d.u), d.v.transpose().mul(&d.v));
            let kept = d.rank(1e-6);
            for i in 0..n {
                for j in 0..n {
                    let e = if i == j { 1.0 } else { 0.0 };
                    assert!((vtv.get(i, j) - e).abs() < 1e-12, "V {i} {j}");
                    if i < kept && j < kept {
                        let bound = 1e-14 * d.s[0] / d.s[i].min(d.s[j]);
                        assert!((utu.get(i, j) - e).abs() < bound, "U {i} {j} {}", utu.get(i, j));
                    }
                }
            }
            assert!(d.s.windows(2).all(|w| w[0] >= w[1]));
            println!(
                "{m} x {n}: smallest / largest singular value {:.1e}",
                d.s[n - 1] / d.s[0]
            );
        }
    }
}
