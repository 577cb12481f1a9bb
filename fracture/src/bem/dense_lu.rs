//! Dense LU factorization with partial pivoting, for the small blocks of the Schwarz
//! preconditioner ([`super::schwarz`]).
//!
//! Gaussian elimination by rows, `P A = L U` (Golub and Van Loan, algorithm 3.4.1). A solve may
//! stop its back substitution after the last unknowns ([`Lu::solve_tail`]): the preconditioner
//! orders each block's own unknowns last and reads only those.

/// Smallest pivot accepted, relative to the largest entry: a thousand times the round-off of
/// an elimination on blocks of a few hundred rows.
pub(crate) const SINGULAR_PIVOT: f64 = 1e-13;

/// `P A = L U` of a dense `m x m` matrix.
#[derive(Clone, Debug)]
pub(crate) struct Lu {
    m: usize,
    /// Row-major: `L` below the diagonal (its unit diagonal implied), `U` on and above.
    factors: Vec<f64>,
    /// Row exchanged with row `k` at step `k`.
    pivots: Vec<usize>,
}

impl Lu {
    /// Factors the row-major `m x m` matrix `a`; `None` if an entry is not finite or a pivot is
    /// below [`SINGULAR_PIVOT`] times the largest entry (`a` singular to working precision).
    pub(crate) fn new(mut a: Vec<f64>, m: usize) -> Option<Self> {
        debug_assert_eq!(a.len(), m * m);
        if !a.iter().all(|x| x.is_finite()) {
            return None;
        }
        let smallest = SINGULAR_PIVOT * a.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        let mut pivots = Vec::with_capacity(m);
        for k in 0..m {
            let p = (k..m).fold(k, |p, r| if a[r * m + k].abs() > a[p * m + k].abs() { r } else { p });
            let d = a[p * m + k];
            if !(d.abs() > smallest) {
                return None;
            }
            pivots.push(p);
            if p != k {
                for c in 0..m {
                    a.swap(k * m + c, p * m + c);
                }
            }
            let (above, below) = a.split_at_mut((k + 1) * m);
            let pivot_row = &above[k * m + k + 1..];
            for row in below.chunks_exact_mut(m) {
                let l = row[k] / d;
                row[k] = l;
                for (x, u) in row[k + 1..].iter_mut().zip(pivot_row) {
                    *x -= l * u;
                }
            }
        }
        if !a.iter().all(|x| x.is_finite()) {
            return None;
        }
        Some(Self { m, factors: a, pivots })
    }

    /// Overwrites the last `tail` entries of `b` with those of `A^-1 b`; the others are left
    /// as intermediate values. `tail = m` is the whole solve.
    pub(crate) fn solve_tail(&self, b: &mut [f64], tail: usize) {
        let (m, a) = (self.m, &self.factors);
        debug_assert!(b.len() == m && tail <= m);
        for (k, &p) in self.pivots.iter().enumerate() {
            b.swap(k, p);
        }
        for k in 1..m {
            let s: f64 = a[k * m..k * m + k].iter().zip(&b[..k]).map(|(l, x)| l * x).sum();
            b[k] -= s;
        }
        // `U` is upper triangular: the last unknowns need only the rows and columns of the tail.
        for k in (m - tail..m).rev() {
            let s: f64 = a[k * m + k + 1..(k + 1) * m]
                .iter()
                .zip(&b[k + 1..])
                .map(|(u, x)| u * x)
                .sum();
            b[k] = (b[k] - s) / a[k * m + k];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    fn random_matrix(m: usize, rng: &mut SplitMix64) -> Vec<f64> {
        (0..m * m).map(|_| rng.next_f64() * 2.0 - 1.0).collect()
    }

    /// `A x` for the row-major `a`.
    fn product(a: &[f64], x: &[f64]) -> Vec<f64> {
        a.chunks_exact(x.len())
            .map(|row| row.iter().zip(x).map(|(a, x)| a * x).sum())
            .collect()
    }

    /// Solves of random systems recover a known solution to near round-off, whole and by their
    /// tails; one system has a zero diagonal, so every step exchanges rows.
    #[test]
    fn bem_dense_lu_solves_random_systems() {
        let mut rng = SplitMix64::new(7);
        for (m, zero_diagonal) in [(1, false), (5, false), (24, false), (24, true), (96, false)] {
            let mut a = random_matrix(m, &mut rng);
            if zero_diagonal {
                (0..m).for_each(|k| a[k * m + k] = 0.0);
            }
            let x: Vec<f64> = (0..m).map(|_| rng.next_f64() - 0.5).collect();
            let lu = Lu::new(a.clone(), m).expect("a random matrix is regular");
            if zero_diagonal {
                assert!(lu.pivots[..m - 1].iter().enumerate().all(|(k, &p)| p != k));
            }
            for tail in [m, m / 2, 1] {
                let mut b = product(&a, &x);
                lu.solve_tail(&mut b, tail);
                let error = x[m - tail..]
                    .iter()
                    .zip(&b[m - tail..])
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(error < 1e-10, "m {m}, tail {tail}: error {error:e}");
            }
        }
    }

    /// A singular or non-finite matrix has no factors.
    #[test]
    fn bem_dense_lu_refuses_singular_and_non_finite_matrices() {
        let mut rng = SplitMix64::new(3);
        let mut a = random_matrix(6, &mut rng);
        // Row 4 = row 1 + row 2.
        for c in 0..6 {
            a[4 * 6 + c] = a[6 + c] + a[2 * 6 + c];
        }
        assert!(Lu::new(a, 6).is_none());
        let mut a = random_matrix(6, &mut rng);
        a[13] = f64::NAN;
        assert!(Lu::new(a, 6).is_none());
        assert!(Lu::new(vec![0.0], 1).is_none());
    }
}
