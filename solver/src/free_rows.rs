//! The linear system of a shock block's free rows (shock_block.rs), and how it is solved.
//!
//! The system is `S delta = r`, `S = D + J W`: `D` diagonal (each row's `CFM / h` plus the
//! block's regularization `eps`), `J` the free rows' Jacobians on the one moving body
//! (`count x 6`) and `W` (`6 x count`) that body's velocity change per unit of each row's impulse,
//! the sliding rows' share included (so `W` is `M^-1 J^T` only without sliding rows, and the
//! matrix unsymmetric). Its rank part is at most 6, so it is solved through the 6 x 6 capacitance
//! matrix (Woodbury identity)
//!
//! ```text
//! S^-1 r = D^-1 (r - J y),   (I + W D^-1 J) y = W D^-1 r,
//! ```
//!
//! where `y` is the body's velocity change. A box on two supports has 14 free rows, so this is a
//! 6 x 6 factorization instead of elimination on the 14 x 14 matrix: measured in instructions on
//! one thread, the block fell from 26 to 12 percent of the pyramid's step, and the step by 17
//! percent. `r - J y` is the small difference of nearly equal terms when `D` is only the
//! regularization, so one step of iterative refinement against the full system follows; it brings
//! the rows' residuals back to round-off of the impulses, as elimination on the full matrix gives.
//!
//! # Rows that ask for incompatible velocities
//!
//! Where the rows cannot all hold (a body pinched between two supports that close on it, or
//! corners of one face asking for slightly different velocities), `r` has a part outside the
//! range of `J W`, and `S^-1 r` answers it with opposing impulses of that part over `eps`: a
//! 0.58 kg ball pinched between two others took 4e6 N s from each side while its velocity hardly
//! changed, which a fracture model reads as a crushing blow. So the block solves
//! `delta = S^-1 (S - eps I) S^-1 r` instead (Tikhonov filtering): along each eigenvector of
//! `A = S - eps I` with eigenvalue `l` it scales `r` by `l / (l + eps)^2`, which is `1 / l` to
//! within `2 eps / l` where the rows can hold and vanishes where they cannot, so incompatible rows
//! get the least-squares compromise with the smallest impulses. `(S - eps I) S^-1 r` is formed row
//! by row as `(Sigma r + eps J y) / D` from the velocity change `y` of the first solve, never from
//! `S^-1 r` itself, whose size grows as `1 / eps`.
//!
//! # Rows that must hold to round-off
//!
//! The filtered solve leaves rows that can hold off by about `2 eps / l` of their impulse change:
//! for a box on its supports at 30 Hz, near 1e-9 m/s, the solver's tolerance. Where that matters
//! (the load pass's warm start, and the shock pass of an island nearly at rest, whose velocities
//! the load pass starts from), the same filtered solve is applied once more to what the first left,
//! `r - (S - eps I) delta` (iterated Tikhonov): along each eigenvalue the remaining error is then
//! about `(2 eps / l)^2` of it, round-off, and where `l` is much smaller than `eps` (rows that
//! cannot hold) the second solve adds no more than the first gave, a filtered share of what is
//! left. It costs a second set of triangular solves on the same factors.
//!
//! # Small, well-conditioned systems
//!
//! A group of at most six free rows (a ball on a ball: one normal and two friction rows) is
//! first factored as it is, `count x count`, by elimination with partial pivoting. When no pivot
//! is smaller than [`DIRECT_PIVOT`] of the largest diagonal entry, the rows are independent and
//! compatible, `S^-1 r` has no part of the size `1 / eps`, and the same filtered solve is done
//! straight on those factors: `x = S^-1 r`, then `delta = S^-1 (r - eps x)`, refined once. That
//! replaces forming and factoring the 6 x 6 capacitance matrix and its four triangular solves:
//! measured on the 1000 balls in 100 columns at 30 Hz (two threads; every shock group a ball on
//! the ball below, three rows), the solve stage from 1.18 to 1.09 ms and the step from 1.69 to
//! 1.60 ms. A smaller pivot (redundant rows such as two opposite normals, or four corners of one
//! face) sends the system to the capacitance form above.

use crate::shock_block::MAX_BLOCK_ROWS;

/// The free rows' system `D + J W` of one shock block.
pub(crate) struct FreeSystem {
    /// Rows of `J`: each free row's moving-side Jacobian (linear, then angular).
    pub(crate) jacobian: [[f64; 6]; MAX_BLOCK_ROWS],
    /// Columns of `W`: the body's velocity change per unit impulse of each free row.
    pub(crate) effect: [[f64; 6]; MAX_BLOCK_ROWS],
    /// `D`, 1/kg.
    pub(crate) diagonal: [f64; MAX_BLOCK_ROWS],
    /// Free rows.
    count: usize,
    /// The LU factors of the capacitance matrix `I + W D^-1 J`, once [`Self::factor`] ran.
    capacitance: Lu6,
}

impl FreeSystem {
    /// A system of `count` free rows (at most [`MAX_BLOCK_ROWS`]), to be filled in.
    pub(crate) fn new(count: usize) -> Self {
        Self {
            jacobian: [[0.0; 6]; MAX_BLOCK_ROWS],
            effect: [[0.0; 6]; MAX_BLOCK_ROWS],
            diagonal: [0.0; MAX_BLOCK_ROWS],
            count,
            capacitance: Lu6::default(),
        }
    }

    /// Makes this a system of `count` free rows (at most [`MAX_BLOCK_ROWS`]), to be filled in:
    /// one system serves every guess of a block, and no row past `count` is ever read, so
    /// nothing is cleared (each new system wrote its two kilobytes of zeros, once a guess).
    pub(crate) fn reset(&mut self, count: usize) {
        debug_assert!(count <= MAX_BLOCK_ROWS, "{count} free rows");
        self.count = count;
    }

    /// Solves the system in the least-squares sense its `regularization` (`eps`, 1/kg, already in
    /// `D`) stands for (module docs): writes `delta = S^-1 (S - eps I) S^-1 rhs`, `S = D + J W`,
    /// and with `accuracy` [`Accuracy::Refined`] adds the same filtered solve of what is left,
    /// `rhs - (S - eps I) delta` (module docs). `false` when a pivot vanishes or the result is not
    /// finite.
    pub(crate) fn solve(&mut self, rhs: &[f64], regularization: f64, delta: &mut [f64], accuracy: Accuracy) -> bool {
        let direct = Direct::factor(self);
        if direct.is_none() && !self.factor() {
            return false;
        }
        let filtered = |system: &Self, rhs: &[f64], delta: &mut [f64]| match &direct {
            Some(direct) => direct.solve(rhs, regularization, delta),
            None => system.solve_by_capacitance(rhs, regularization, delta),
        };
        if !filtered(self, rhs, delta) {
            return false;
        }
        if accuracy == Accuracy::Filtered {
            return true;
        }
        let count = self.count;
        let moved_by = self.velocity_change(delta);
        let mut left = [0.0; MAX_BLOCK_ROWS];
        for i in 0..count {
            let held = self.diagonal[i] - regularization;
            left[i] = rhs[i] - dot6(&self.jacobian[i], &moved_by) - held * delta[i];
        }
        let mut correction = [0.0; MAX_BLOCK_ROWS];
        if !filtered(self, &left[..count], &mut correction[..count]) {
            return false;
        }
        for (d, c) in delta.iter_mut().zip(&correction) {
            *d += c;
        }
        delta.iter().all(|d| d.is_finite())
    }

    /// The filtered solve of [`Self::solve`] through the capacitance matrix (factored by
    /// [`Self::factor`]), whatever the system's size or conditioning.
    fn solve_by_capacitance(&self, rhs: &[f64], regularization: f64, delta: &mut [f64]) -> bool {
        let count = self.count;
        // (S - eps I) S^-1 r, row by row (Sigma r + eps J y) / D with `y` the body's velocity
        // change under S^-1 r: no term of the size of S^-1 r itself, which grows as 1 / eps.
        let moved_by = self.moved_by(rhs);
        let mut filtered = [0.0; MAX_BLOCK_ROWS];
        for i in 0..count {
            let (d, j) = (self.diagonal[i], &self.jacobian[i]);
            filtered[i] = ((d - regularization) * rhs[i] + regularization * dot6(j, &moved_by)) / d;
        }
        self.solve_regularized(&filtered[..count], delta)
    }

    /// Solves `S delta = rhs` itself, `S = D + J W`, after [`Self::factor`], refined once; `false`
    /// when the result is not finite.
    fn solve_regularized(&self, rhs: &[f64], delta: &mut [f64]) -> bool {
        let count = self.count;
        self.apply_inverse(rhs, delta);
        // One refinement step: the residual of the full system, solved again with the same factors.
        let moved_by = self.velocity_change(delta);
        let mut residual = [0.0; MAX_BLOCK_ROWS];
        for i in 0..count {
            residual[i] = rhs[i] - dot6(&self.jacobian[i], &moved_by) - self.diagonal[i] * delta[i];
        }
        let mut correction = [0.0; MAX_BLOCK_ROWS];
        self.apply_inverse(&residual[..count], &mut correction[..count]);
        for (d, c) in delta.iter_mut().zip(&correction) {
            *d += c;
        }
        delta.iter().all(|d| d.is_finite())
    }

    /// Forms and factors the capacitance matrix with partial pivoting; `false` when a pivot is
    /// zero or not finite.
    fn factor(&mut self) -> bool {
        let mut c = [[0.0; 6]; 6];
        for i in 0..self.count {
            let (w, j, d) = (&self.effect[i], &self.jacobian[i], self.diagonal[i]);
            for r in 0..6 {
                let scaled = w[r] / d;
                for k in 0..6 {
                    c[r][k] += scaled * j[k];
                }
            }
        }
        for (k, line) in c.iter_mut().enumerate() {
            line[k] += 1.0;
        }
        self.capacitance = Lu6::of(c, 6);
        self.capacitance.factor(0.0)
    }

    /// `W x`: the body's velocity change from impulse changes `x`.
    fn velocity_change(&self, x: &[f64]) -> [f64; 6] {
        let mut v = [0.0; 6];
        for (w, &xi) in self.effect.iter().zip(x) {
            for (vk, wk) in v.iter_mut().zip(w) {
                *vk += wk * xi;
            }
        }
        v
    }

    /// `y = C^-1 W D^-1 r` with the capacitance matrix's factors: the body's velocity change
    /// under `S^-1 r`.
    fn moved_by(&self, r: &[f64]) -> [f64; 6] {
        let mut scaled = [0.0; MAX_BLOCK_ROWS];
        for ((s, &ri), &d) in scaled.iter_mut().zip(r).zip(&self.diagonal) {
            *s = ri / d;
        }
        let g = self.velocity_change(&scaled[..self.count]);
        let mut y = [0.0; 6];
        self.capacitance.solve(&g, &mut y);
        y
    }

    /// `x = S^-1 r = D^-1 (r - J y)` with the factors.
    fn apply_inverse(&self, r: &[f64], x: &mut [f64]) {
        let y = self.moved_by(r);
        for (i, xi) in x.iter_mut().enumerate() {
            *xi = (r[i] - dot6(&self.jacobian[i], &y)) / self.diagonal[i];
        }
    }
}

/// How closely a block's solve makes its rows hold where they can.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accuracy {
    /// One filtered solve: rows that can hold are off by about `2 eps / l` of their impulse change
    /// along each eigenvalue `l` of the system (module docs). Enough for the shock pass of an
    /// island still moving, which settles this step's velocities only: refined at any speed, the
    /// tumbling random 1000-cube pile's step was 3 to 7 percent longer (phases.rs).
    Filtered,
    /// The filtered solve, then the same solve of what it left (iterated Tikhonov): the error
    /// along `l` shrinks to about `(2 eps / l)^2`, round-off of the impulses, while rows that
    /// cannot hold still get only a filtered share. For impulses that must hold exactly, as the
    /// load pass's warm start (loads.rs).
    Refined,
}

/// Most free rows factored directly as a `count x count` system (module docs).
const DIRECT_ROWS: usize = 6;

/// Smallest pivot of the direct factorization, relative to the system's largest diagonal entry,
/// for the direct solve to stand (module docs). The regularization is `1e-8` of that entry, so
/// with no pivot smaller than this `eps S^-1 r` stays near a thousandth of `r` or less: nothing of
/// the size `1 / eps` to cancel.
const DIRECT_PIVOT: f64 = 1e-5;

/// A square system of up to six unknowns factored with partial pivoting, `P A = L U`: the
/// capacitance matrix (six) and a small group's own system ([`Direct`], up to [`DIRECT_ROWS`]).
#[derive(Clone, Copy, Debug, Default)]
struct Lu6 {
    /// Unknowns.
    n: usize,
    /// `L` (unit, below the diagonal) and `U` (on and above it) of the row-permuted matrix.
    factors: [[f64; 6]; 6],
    /// `order[i]`: the matrix row in row `i` of the factors.
    order: [usize; 6],
}

impl Lu6 {
    /// The leading `n x n` block of `matrix`, not yet factored ([`Self::factor`]).
    fn of(matrix: [[f64; 6]; 6], n: usize) -> Self {
        debug_assert!(n <= 6, "{n} unknowns");
        Self {
            n,
            factors: matrix,
            order: [0, 1, 2, 3, 4, 5],
        }
    }

    /// Factors the matrix in place; `false` when a pivot is zero, not finite, or smaller in size
    /// than `smallest` (the factors are then meaningless). In place: passed and returned by
    /// value, the 288-byte matrix was copied twice a factorization, thousands of times a step.
    fn factor(&mut self, smallest: f64) -> bool {
        // Each size compiled on its own, its loops unrolled: a shock block factors and solves
        // these thousands of times a step.
        match self.n {
            0 => self.factor_sized::<0>(smallest),
            1 => self.factor_sized::<1>(smallest),
            2 => self.factor_sized::<2>(smallest),
            3 => self.factor_sized::<3>(smallest),
            4 => self.factor_sized::<4>(smallest),
            5 => self.factor_sized::<5>(smallest),
            _ => self.factor_sized::<6>(smallest),
        }
    }

    /// [`Self::factor`] of the leading `N x N` block.
    #[inline(always)]
    fn factor_sized<const N: usize>(&mut self, smallest: f64) -> bool {
        let Self {
            factors: matrix, order, ..
        } = self;
        for col in 0..N {
            let pivot_row = (col..N)
                .max_by(|&x, &y| matrix[x][col].abs().total_cmp(&matrix[y][col].abs()))
                .unwrap_or(col);
            let pivot = matrix[pivot_row][col];
            if !(pivot.abs() > 0.0 && pivot.abs() >= smallest && pivot.is_finite()) {
                return false;
            }
            matrix.swap(col, pivot_row);
            order.swap(col, pivot_row);
            let pivot_line = matrix[col];
            for line in matrix[col + 1..N].iter_mut() {
                let factor = line[col] / pivot;
                line[col] = factor;
                for k in col + 1..N {
                    line[k] -= factor * pivot_line[k];
                }
            }
        }
        true
    }

    /// `x = A^-1 r` (the first `n` entries of each) with the factors.
    fn solve(&self, r: &[f64], x: &mut [f64]) {
        match self.n {
            0 => {}
            1 => self.solve_sized::<1>(r, x),
            2 => self.solve_sized::<2>(r, x),
            3 => self.solve_sized::<3>(r, x),
            4 => self.solve_sized::<4>(r, x),
            5 => self.solve_sized::<5>(r, x),
            _ => self.solve_sized::<6>(r, x),
        }
    }

    /// [`Self::solve`] with `N` unknowns.
    #[inline(always)]
    fn solve_sized<const N: usize>(&self, r: &[f64], x: &mut [f64]) {
        let f = &self.factors;
        let (r, x) = (&r[..N], &mut x[..N]);
        let mut y = [0.0; 6];
        for i in 0..N {
            let mut sum = r[self.order[i]];
            for k in 0..i {
                sum -= f[i][k] * y[k];
            }
            y[i] = sum;
        }
        for i in (0..N).rev() {
            let mut sum = y[i];
            for k in i + 1..N {
                sum -= f[i][k] * x[k];
            }
            x[i] = sum / f[i][i];
        }
    }
}

/// A small free-row system `S = D + J W` factored as it is (module docs).
struct Direct {
    /// `S` as built, for the refinement's residual.
    matrix: [[f64; 6]; 6],
    /// Its factors.
    factors: Lu6,
}

impl Direct {
    /// The factors of `system`, or `None` when it has more than [`DIRECT_ROWS`] rows or a pivot
    /// below [`DIRECT_PIVOT`] of its largest diagonal entry (or not finite, or no entry above zero).
    fn factor(system: &FreeSystem) -> Option<Self> {
        let count = system.count;
        if count > DIRECT_ROWS {
            return None;
        }
        let mut matrix = [[0.0; 6]; 6];
        let mut largest: f64 = 0.0;
        for (i, line) in matrix.iter_mut().enumerate().take(count) {
            for (k, entry) in line.iter_mut().enumerate().take(count) {
                *entry = dot6(&system.jacobian[i], &system.effect[k]);
            }
            line[i] += system.diagonal[i];
            largest = largest.max(line[i].abs());
        }
        if !(largest > 0.0 && largest.is_finite()) {
            return None;
        }
        let mut direct = Self {
            matrix,
            factors: Lu6::of(matrix, count),
        };
        direct.factors.factor(DIRECT_PIVOT * largest).then_some(direct)
    }

    /// Writes `delta = S^-1 (r - eps S^-1 r)`, `eps` = `regularization`, refined once against
    /// `S`; `false` when it is not finite.
    fn solve(&self, rhs: &[f64], regularization: f64, delta: &mut [f64]) -> bool {
        let count = self.factors.n;
        let mut first = [0.0; DIRECT_ROWS];
        self.factors.solve(rhs, &mut first[..count]);
        let mut filtered = [0.0; DIRECT_ROWS];
        for i in 0..count {
            filtered[i] = rhs[i] - regularization * first[i];
        }
        self.factors.solve(&filtered[..count], delta);
        let mut residual = [0.0; DIRECT_ROWS];
        for i in 0..count {
            let applied: f64 = self.matrix[i][..count].iter().zip(&*delta).map(|(m, d)| m * d).sum();
            residual[i] = filtered[i] - applied;
        }
        let mut correction = [0.0; DIRECT_ROWS];
        self.factors.solve(&residual[..count], &mut correction[..count]);
        for (d, c) in delta.iter_mut().zip(&correction) {
            *d += c;
        }
        delta.iter().all(|d| d.is_finite())
    }
}

/// Dot product of two six-vectors.
#[inline]
fn dot6(a: &[f64; 6], b: &[f64; 6]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `A x = b` for the `n x n` matrix `A` (row-major, overwritten) by Gaussian elimination
/// with partial pivoting; `b` is overwritten too. Returns `false` when a pivot is zero or not
/// finite (then `x` is meaningless). The tests' reference for the capacitance form.
#[cfg(test)]
fn gauss_solve(matrix: &mut [f64], n: usize, b: &mut [f64], x: &mut [f64]) -> bool {
    for col in 0..n {
        let mut pivot_row = col;
        for r in col + 1..n {
            if matrix[r * n + col].abs() > matrix[pivot_row * n + col].abs() {
                pivot_row = r;
            }
        }
        let pivot = matrix[pivot_row * n + col];
        if !(pivot.abs() > 0.0 && pivot.is_finite()) {
            return false;
        }
        if pivot_row != col {
            for c in 0..n {
                matrix.swap(col * n + c, pivot_row * n + c);
            }
            b.swap(col, pivot_row);
        }
        for r in col + 1..n {
            let factor = matrix[r * n + col] / pivot;
            if factor != 0.0 {
                for c in col..n {
                    matrix[r * n + c] -= factor * matrix[col * n + c];
                }
                b[r] -= factor * b[col];
            }
        }
    }
    for i in (0..n).rev() {
        let mut sum = b[i];
        for c in i + 1..n {
            sum -= matrix[i * n + c] * x[c];
        }
        x[i] = sum / matrix[i * n + i];
    }
    x[..n].iter().all(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shock_block::REGULARIZATION;
    use crate::test_scenes::FACE_CORNERS;

    /// A uniform number in `[-1, 1)` from a 64-bit LCG.
    fn uniform(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// A system of `count` random rows on a body with a random diagonal mass: `W = M^-1 J^T`,
    /// plus an unsymmetric part on every third row (a sliding row's share); its diagonal is left
    /// zero. Returns it with its largest `|J_i W_i|`.
    fn random_system(count: usize, seed: &mut u64) -> (FreeSystem, f64) {
        let mut system = FreeSystem::new(count);
        let inverse_mass: [f64; 6] = core::array::from_fn(|_| 0.2 + uniform(seed).abs());
        for i in 0..count {
            for (k, &inverse) in inverse_mass.iter().enumerate() {
                system.jacobian[i][k] = uniform(seed);
                system.effect[i][k] = inverse * system.jacobian[i][k];
            }
            if i % 3 == 2 {
                for (k, &inverse) in inverse_mass.iter().enumerate() {
                    system.effect[i][k] += 0.3 * uniform(seed) * inverse;
                }
            }
        }
        let largest = (0..count)
            .map(|i| dot6(&system.jacobian[i], &system.effect[i]).abs())
            .fold(0.0, f64::max);
        (system, largest)
    }

    /// A system reused for a smaller guess (`FreeSystem::reset`, as a shock block does between
    /// guesses) reads no row past its count: with NaN in every row a larger guess left behind,
    /// it gives the bits of a fresh system of the same rows, through the direct form (three rows)
    /// and through the capacitance form (nine), filtered and refined.
    #[test]
    fn shock_block_reset_system_reads_no_row_past_its_count() {
        let mut seed = 5u64;
        for count in [3, 9] {
            let (mut fresh, largest) = random_system(count, &mut seed);
            for i in 0..count {
                fresh.diagonal[i] = REGULARIZATION * largest * (1.0 + (i % 2) as f64);
            }
            let rhs: Vec<f64> = (0..count).map(|_| uniform(&mut seed)).collect();
            let mut reused = FreeSystem::new(MAX_BLOCK_ROWS);
            reused.jacobian = [[f64::NAN; 6]; MAX_BLOCK_ROWS];
            reused.effect = [[f64::NAN; 6]; MAX_BLOCK_ROWS];
            reused.diagonal = [f64::NAN; MAX_BLOCK_ROWS];
            reused.reset(count);
            reused.jacobian[..count].copy_from_slice(&fresh.jacobian[..count]);
            reused.effect[..count].copy_from_slice(&fresh.effect[..count]);
            reused.diagonal[..count].copy_from_slice(&fresh.diagonal[..count]);
            let regularization = REGULARIZATION * largest;
            for accuracy in [Accuracy::Filtered, Accuracy::Refined] {
                let (mut expected, mut got) = (vec![0.0; count], vec![0.0; count]);
                assert!(fresh.solve(&rhs, regularization, &mut expected, accuracy));
                assert!(reused.solve(&rhs, regularization, &mut got, accuracy), "{count} rows");
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&expected), "{count} rows, {accuracy:?}");
            }
        }
    }

    /// The capacitance form solves the same system as elimination on the full matrix, for groups
    /// of up to the largest block, with unsymmetric effects (sliding rows) and a diagonal as small
    /// as the regularization. Measured: the impulses agree to 2e-8 of the largest (the share among
    /// redundant rows is fixed only by the regularization, to that precision in either method),
    /// the body's velocity change to 5e-12.
    #[test]
    fn shock_block_capacitance_form_matches_elimination() {
        let mut seed = 11u64;
        for case in 0..200 {
            let count = 7 + case % (MAX_BLOCK_ROWS - 6);
            let (mut system, largest) = random_system(count, &mut seed);
            for i in 0..count {
                system.diagonal[i] = REGULARIZATION * largest * (1.0 + (i % 2) as f64);
            }
            // Rows that nearly agree on one velocity change (as contact corners do), off by a
            // little each.
            let wanted: [f64; 6] = core::array::from_fn(|_| uniform(&mut seed));
            let rhs: Vec<f64> = (0..count)
                .map(|i| dot6(&system.jacobian[i], &wanted) + 1e-6 * uniform(&mut seed))
                .collect();
            let mut matrix = vec![0.0; count * count];
            for i in 0..count {
                for j in 0..count {
                    matrix[i * count + j] = dot6(&system.jacobian[i], &system.effect[j]);
                }
                matrix[i * count + i] += system.diagonal[i];
            }
            let mut eliminated = vec![0.0; count];
            assert!(gauss_solve(&mut matrix, count, &mut rhs.clone(), &mut eliminated));
            let mut refined = vec![0.0; count];
            assert!(system.factor());
            assert!(system.solve_regularized(&rhs, &mut refined), "case {case}");
            let scale = eliminated.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            for i in 0..count {
                assert!(
                    (refined[i] - eliminated[i]).abs() <= 1e-6 * scale,
                    "case {case} row {i}: capacitance {} against elimination {}",
                    refined[i],
                    eliminated[i]
                );
            }
            // What matters physically, the body's velocity change, agrees far more closely.
            let by_elimination = system.velocity_change(&eliminated);
            let by_capacitance = system.velocity_change(&refined);
            let speed = by_elimination.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            for k in 0..6 {
                assert!(
                    (by_capacitance[k] - by_elimination[k]).abs() <= 1e-10 * speed,
                    "case {case} velocity {k}: {} vs {} (speed {speed})",
                    by_capacitance[k],
                    by_elimination[k]
                );
            }
        }
    }

    /// Up to six independent rows are solved on their own factors (module docs), and give what the
    /// capacitance form gives: the impulses and the body's velocity change to 1e-10 of the
    /// largest, for symmetric and sliding (unsymmetric) systems with a diagonal from the
    /// regularization up to a soft row's CFM. Two rows that are one row twice (redundant) are left
    /// to the capacitance form.
    #[test]
    fn shock_block_small_systems_are_solved_directly_as_by_capacitance() {
        let mut seed = 5u64;
        let mut direct = 0;
        for case in 0..300 {
            let count = 1 + case % DIRECT_ROWS;
            let (mut system, largest) = random_system(count, &mut seed);
            let regularization = REGULARIZATION * largest;
            for i in 0..count {
                let soft = if case % 4 == 1 {
                    0.1 * largest * uniform(&mut seed).abs()
                } else {
                    0.0
                };
                system.diagonal[i] = regularization + soft;
            }
            let rhs: Vec<f64> = (0..count).map(|_| uniform(&mut seed)).collect();
            let (mut by_direct, mut by_capacitance) = (vec![0.0; count], vec![0.0; count]);
            let Some(factors) = Direct::factor(&system) else {
                continue;
            };
            direct += 1;
            assert!(factors.solve(&rhs, regularization, &mut by_direct));
            assert!(system.factor());
            assert!(system.solve_by_capacitance(&rhs, regularization, &mut by_capacitance));
            let scale = by_capacitance.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            for i in 0..count {
                assert!(
                    (by_direct[i] - by_capacitance[i]).abs() <= 1e-10 * scale,
                    "case {case} row {i}: direct {} against capacitance {}",
                    by_direct[i],
                    by_capacitance[i]
                );
            }
            let (moved_direct, moved_capacitance) = (
                system.velocity_change(&by_direct),
                system.velocity_change(&by_capacitance),
            );
            let speed = moved_capacitance.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            for k in 0..6 {
                assert!(
                    (moved_direct[k] - moved_capacitance[k]).abs() <= 1e-10 * speed,
                    "case {case}"
                );
            }
        }
        // Random rows of six or fewer are nearly always independent enough.
        assert!(direct >= 280, "only {direct} of 300 systems were solved directly");
        let mut twice = FreeSystem::new(2);
        for i in 0..2 {
            twice.jacobian[i] = [0.0, 1.0, 0.0, 0.3, 0.0, 0.0];
            twice.effect[i] = [0.0, 0.5, 0.0, 0.6, 0.0, 0.0];
            twice.diagonal[i] = REGULARIZATION;
        }
        assert!(
            Direct::factor(&twice).is_none(),
            "a row given twice was factored directly"
        );
        assert!(
            Direct::factor(&FreeSystem::new(3)).is_none(),
            "a zero system was factored directly"
        );
    }

    /// Rows that ask for incompatible velocities get the least-squares compromise with the
    /// smallest impulses (the pseudo-inverse solution), not impulses that grow as one over the
    /// regularization. A body with a diagonal mass (masses `m_k`, one per velocity): rows `+x` and
    /// `-x` asking for `a` and `b` (`a + b != 0`: they cannot both hold) share `m_x (a - b) / 2`
    /// as `+-m_x (a - b) / 4`; two rows along `y` asking the same `t` share `m_y t` equally; a row
    /// alone along velocity `k` gets `m_k c_k`. Checked with two rows and with eight (more rows
    /// than the body has velocities).
    #[test]
    fn shock_block_incompatible_rows_get_least_squares_impulses() {
        let masses = [2.0, 3.0, 5.0, 0.7, 1.1, 1.3];
        let unit = |k: usize, sign: f64| -> [f64; 6] { core::array::from_fn(|j| if j == k { sign } else { 0.0 }) };
        let (a, b, t) = (0.3, 0.1, -0.4);
        // (velocity, sign, target, expected impulse)
        let quarter = masses[0] * (a - b) / 4.0;
        let all = [
            (0, 1.0, a, quarter),
            (0, -1.0, b, -quarter),
            (1, 1.0, t, masses[1] * t / 2.0),
            (1, 1.0, t, masses[1] * t / 2.0),
            (2, 1.0, 0.2, masses[2] * 0.2),
            (3, 1.0, -0.5, masses[3] * -0.5),
            (4, 1.0, 0.05, masses[4] * 0.05),
            (5, 1.0, 0.7, masses[5] * 0.7),
        ];
        for count in [2, 8] {
            let rows = &all[..count];
            let mut system = FreeSystem::new(count);
            for (i, &(k, sign, _, _)) in rows.iter().enumerate() {
                system.jacobian[i] = unit(k, sign);
                system.effect[i] = unit(k, sign / masses[k]);
            }
            let largest = rows.iter().map(|&(k, _, _, _)| 1.0 / masses[k]).fold(0.0, f64::max);
            let regularization = REGULARIZATION * largest;
            system.diagonal[..count].fill(regularization);
            let rhs: Vec<f64> = rows.iter().map(|row| row.2).collect();
            for accuracy in [Accuracy::Filtered, Accuracy::Refined] {
                let mut delta = vec![0.0; count];
                assert!(system.solve(&rhs, regularization, &mut delta, accuracy));
                for (i, row) in rows.iter().enumerate() {
                    assert!(
                        (delta[i] - row.3).abs() <= 1e-6 * row.3.abs().max(0.1),
                        "{count} rows, {accuracy:?}, row {i}: {} where the least-squares impulse is {}",
                        delta[i],
                        row.3
                    );
                }
            }
        }
    }

    /// A unit cube's bottom face on a support, its four corner rows (redundant: four rows, three
    /// velocities they can change) asking for the velocity change that stops the cube falling at
    /// `g dt` and turning a little: every row can hold. The filtered solve leaves the rows off by
    /// about the regularization's share (near 1e-9 m/s here, where the load pass's warm start
    /// left the pyramid's sweeps at the solver's 1e-9 m/s tolerance); the refined one holds them
    /// to round-off with the impulses closest to zero (equal shares of the weight change, plus and
    /// minus what the turn asks of the corners on either side).
    #[test]
    fn shock_block_refined_solve_holds_redundant_rows_to_round_off() {
        let mass = 2.0;
        let inertia = mass / 6.0;
        let corners = FACE_CORNERS;
        let mut system = FreeSystem::new(corners.len());
        for (i, &(x, z)) in corners.iter().enumerate() {
            // Normal +y at the corner r = (x, -0.5, z): J = (n, r x n).
            let (arm, normal) = ([x, -0.5, z], [0.0, 1.0, 0.0]);
            let turn = [
                arm[1] * normal[2] - arm[2] * normal[1],
                arm[2] * normal[0] - arm[0] * normal[2],
                arm[0] * normal[1] - arm[1] * normal[0],
            ];
            system.jacobian[i] = [0.0, 1.0, 0.0, turn[0], turn[1], turn[2]];
            system.effect[i] = [
                0.0,
                1.0 / mass,
                0.0,
                turn[0] / inertia,
                turn[1] / inertia,
                turn[2] / inertia,
            ];
        }
        let largest = (0..corners.len())
            .map(|i| dot6(&system.jacobian[i], &system.effect[i]))
            .fold(0.0, f64::max);
        let regularization = REGULARIZATION * largest;
        system.diagonal[..corners.len()].fill(regularization);
        let (fall, spin) = (9.81 / 30.0, 0.01);
        let wanted = [0.0, fall, 0.0, spin, 0.0, 0.0];
        let rhs: Vec<f64> = (0..corners.len()).map(|i| dot6(&system.jacobian[i], &wanted)).collect();
        let mut filtered = vec![0.0; corners.len()];
        assert!(system.solve(&rhs, regularization, &mut filtered, Accuracy::Filtered));
        let mut refined = vec![0.0; corners.len()];
        assert!(system.solve(&rhs, regularization, &mut refined, Accuracy::Refined));
        let off_by = |delta: &[f64]| {
            let moved = system.velocity_change(delta);
            (0..corners.len())
                .map(|i| (dot6(&system.jacobian[i], &moved) - rhs[i]).abs())
                .fold(0.0, f64::max)
        };
        assert!(
            off_by(&filtered) > 1e-11,
            "the filtered solve already holds the rows to {:e} m/s",
            off_by(&filtered)
        );
        assert!(
            off_by(&refined) <= 1e-14 * fall,
            "the refined solve leaves the rows off by {:e} m/s",
            off_by(&refined)
        );
        // The impulses closest to zero: a push up at a corner turns the cube about x by `-z` times
        // the push, so the spin about +x asks the z = -0.5 corners for more.
        let share = mass * fall / 4.0;
        let lean = inertia * spin / (4.0 * 0.5);
        for (i, &(_, z)) in corners.iter().enumerate() {
            let expected = share - lean * z.signum();
            assert!(
                (refined[i] - expected).abs() <= 1e-12 * share,
                "corner {i}: {} N s, not {expected} N s",
                refined[i]
            );
        }
    }
}
