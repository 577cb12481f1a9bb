//! A symmetric positive definite matrix stored by its lower profile (skyline) and factored in place
//! as `L D L^T`: row `p` keeps the entries from column `first[p]` to `p - 1`, so a banded system
//! (a chain, a grid in Cuthill-McKee order) costs about `sum (p - first[p])^2 / 2` multiply-adds
//! to factor. Shared by the two ways joint rows are solved directly (joint_block.rs).

/// The lower profile of a symmetric matrix, then its `L D L^T` factor.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    /// First stored column of each row.
    first: Vec<usize>,
    /// Start of each row's entries in `values`.
    start: Vec<usize>,
    /// Strictly lower entries, row by row from `first[p]` to `p - 1` (the unit `L` once factored).
    values: Vec<f64>,
    /// The diagonal (the pivots `D` once factored).
    pivots: Vec<f64>,
}

impl Profile {
    /// A zero matrix with the profile `first` (`first[p] <= p`).
    pub(crate) fn zeros(first: Vec<usize>) -> Self {
        let mut start = Vec::with_capacity(first.len() + 1);
        let mut total = 0;
        for (p, &f) in first.iter().enumerate() {
            start.push(total);
            total += p - f;
        }
        start.push(total);
        let n = first.len();
        Self {
            first,
            start,
            values: vec![0.0; total],
            pivots: vec![0.0; n],
        }
    }

    /// Number of rows (and columns).
    pub(crate) fn len(&self) -> usize {
        self.first.len()
    }

    /// First stored column of row `p`.
    pub(crate) fn first(&self, p: usize) -> usize {
        self.first[p]
    }

    /// Entry `(p, q)` for `first[p] <= q < p`, to set or add to.
    pub(crate) fn lower_mut(&mut self, p: usize, q: usize) -> &mut f64 {
        debug_assert!(q < p && q >= self.first[p]);
        &mut self.values[self.start[p] + q - self.first[p]]
    }

    /// Diagonal entry `p`, to set or add to.
    pub(crate) fn diagonal_mut(&mut self, p: usize) -> &mut f64 {
        &mut self.pivots[p]
    }

    /// `y = A x` for the matrix as stored (call it before [`Profile::factor`]): the lower profile
    /// used both ways, since `A` is symmetric.
    pub(crate) fn multiply(&self, x: &[f64], y: &mut [f64]) {
        for (p, out) in y.iter_mut().enumerate() {
            *out = self.pivots[p] * x[p];
        }
        for p in 0..self.first.len() {
            let first = self.first[p];
            let row = &self.values[self.start[p]..self.start[p + 1]];
            let mut dot = 0.0;
            for (k, a) in row.iter().enumerate() {
                dot += a * x[first + k];
                y[first + k] += a * x[p];
            }
            y[p] += dot;
        }
    }

    /// Factors in place as `L D L^T`. A pivot that falls to `floor` times its diagonal entry or
    /// below (a rank-deficient matrix) is replaced by that floor.
    pub(crate) fn factor(&mut self, floor: f64) {
        let Self {
            first,
            start,
            values,
            pivots,
        } = self;
        for p in 0..first.len() {
            for q in first[p]..p {
                // l_pq D_q = a_pq - sum_{k < q} l_pk D_k l_qk
                let lo = first[p].max(first[q]);
                let mut sum = values[start[p] + q - first[p]];
                for k in lo..q {
                    sum -= values[start[p] + k - first[p]] * pivots[k] * values[start[q] + k - first[q]];
                }
                values[start[p] + q - first[p]] = sum / pivots[q];
            }
            let mut pivot = pivots[p];
            for k in first[p]..p {
                let l = values[start[p] + k - first[p]];
                pivot -= l * l * pivots[k];
            }
            let least = floor * pivots[p];
            pivots[p] = if pivot > least { pivot } else { least };
        }
    }

    /// Overwrites `x` with the factored matrix's inverse times `x`.
    pub(crate) fn solve(&self, x: &mut [f64]) {
        let n = self.first.len();
        // L y = b, then D z = y, then L^T x = z.
        for p in 0..n {
            let row = &self.values[self.start[p]..self.start[p + 1]];
            let dot: f64 = row.iter().zip(&x[self.first[p]..p]).map(|(l, v)| l * v).sum();
            x[p] -= dot;
        }
        for (value, pivot) in x.iter_mut().zip(&self.pivots) {
            *value /= pivot;
        }
        for p in (0..n).rev() {
            let value = x[p];
            let first = self.first[p];
            for (k, l) in self.values[self.start[p]..self.start[p + 1]].iter().enumerate() {
                x[first + k] -= l * value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joints_profile_multiply_is_the_symmetric_product_of_the_stored_lower_half() {
        // A 5 x 5 profile with a ragged envelope against the dense product of the full matrix.
        let first = vec![0, 0, 1, 0, 2];
        let entry = |p: usize, q: usize| {
            let (high, low) = (p.max(q), p.min(q));
            if high == low {
                4.0 + high as f64
            } else if low >= first[high] {
                0.3 * high as f64 - 0.7 * low as f64 + 0.1
            } else {
                0.0
            }
        };
        let mut matrix = Profile::zeros(first.clone());
        for (p, &start) in first.iter().enumerate() {
            *matrix.diagonal_mut(p) = entry(p, p);
            for q in start..p {
                *matrix.lower_mut(p, q) = entry(p, q);
            }
        }
        let x = [1.0, -2.0, 0.5, 3.0, -1.5];
        let mut y = [f64::NAN; 5];
        matrix.multiply(&x, &mut y);
        for (p, got) in y.iter().enumerate() {
            let expected: f64 = x.iter().enumerate().map(|(q, v)| entry(p, q) * v).sum();
            assert!((got - expected).abs() < 1e-14, "row {p}: {got} vs {expected}");
        }
    }

    #[test]
    fn joints_profile_factor_solves_a_banded_system_exactly() {
        // The 1-D Laplacian plus identity, tridiagonal: A x = b checked by multiplying back.
        let n = 12;
        let first: Vec<usize> = (0..n).map(|p: usize| p.saturating_sub(1)).collect();
        let mut matrix = Profile::zeros(first);
        for p in 0..n {
            *matrix.diagonal_mut(p) = 3.0;
            if p > 0 {
                *matrix.lower_mut(p, p - 1) = -1.0;
            }
        }
        matrix.factor(1e-10);
        let b: Vec<f64> = (0..n).map(|p| (p as f64).sin() + 1.0).collect();
        let mut x = b.clone();
        matrix.solve(&mut x);
        for p in 0..n {
            let left = if p > 0 { x[p - 1] } else { 0.0 };
            let right = if p + 1 < n { x[p + 1] } else { 0.0 };
            assert!((3.0 * x[p] - left - right - b[p]).abs() < 1e-14);
        }
    }
}
