//! The convex subproblem of each iterated-convexification step:
//!
//! `min_u E(u) = sum_f w_f ||D_f u||  subject to  A u = b`,
//!
//! with `D_f u = u_a - u_b` the jump across interior face `f`, and `A` the linearized
//! normalization `(M c)^T u = 1` and the orthogonality `(M U_j)^T u = 0` to the modes already
//! found. One second-order cone per face.
//!
//! Solved by the alternating direction method of multipliers (Boyd et al. 2011) on the split
//! `z_f = D_f u`, chosen over the alternatives the issue names because:
//! - the `u` step is a least-squares solve with the weighted face-graph Laplacian
//!   `K = D^T W D (+ delta M)`, which is the same matrix for every step, every subproblem and every
//!   mode of a mesh: one sparse Cholesky factorization serves the whole computation, and the
//!   constraints enter through a Schur complement of `m` extra solves per subproblem (the
//!   orthogonality columns `K^-1 M U_j` are computed once per mode and reused by all later
//!   modes);
//! - the `z` step is the closed-form block soft threshold, which leaves exactly zero jumps, so a
//!   mode's cut faces are read off `z`, not guessed with a threshold;
//! - an interior-point SOCP would refactor a matrix of the same size (with changing weights) at
//!   every one of its 20 to 50 iterations; a primal-dual splitting with no solve needs thousands
//!   of iterations on this problem, whose conditioning worsens with the mesh size.
//!
//! Scaling and speed: the penalty is `rho * w_f` on face `f` (so the shrink threshold `1 / rho`
//! is the same everywhere, whatever the face areas or the weight field) with `rho` fixed at
//! [`PENALTY`] over the mode's root mean square value; the `z` and `y` steps are over-relaxed with
//! `alpha = 1.6` (section 3.4.3); and the iteration is Anderson-accelerated (type II, Walker and
//! Ni 2011, as SCS does), with a safeguard that falls back to the plain step when an extrapolated
//! point raises the fixed-point residual. ADMM on this problem spends long stretches drifting
//! (every step moves the jumps by the same amount while the set of cut faces changes one face at
//! a time); acceleration cuts the iterations of a warm-started subproblem by about five. A pure
//! drift, whose steps all repeat, is beyond acceleration (its residuals are all equal); it is
//! jumped over in closed form (the crate's `modes::drift`).
//!
//! The iteration's state is one field per face component, `v = alpha D u + (1 - alpha) z + y`
//! after the z step (Douglas-Rachford's variable): `z` is its block shrink and `y = v - z` the
//! rest, so `(z, y)` need not be stored, and the acceleration and the jumps act on `v`. Any `v`
//! gives duals inside their balls, where an extrapolated `(z, y)` did not. Measured against
//! accelerating the pair `(z, y)` (twice the length), runs alternated, spot's default ten scalar
//! modes at 22,424 tets: 6.28-6.36 s to 5.30-5.39 s, in 1880 ADMM iterations against about
//! 2150, with the energies equal to 7 digits; at 10,937 tets 1.65 to 1.37 s (d = 1) and 2.75 to
//! 2.71 s (d = 3).
//! Residual balancing (changing `rho` as the iteration goes) was tried: alone it made the
//! notched bar's second mode cycle without converging, and combined with the extrapolation it
//! diverged. The proximal term `delta/2 ||u - u_k||_M^2` with a tiny `delta`
//! makes `K` definite on the constants (the jump energy's null space) without changing the fixed
//! points.
//!
//! Every pass over the faces, the constraint rows and the acceleration history runs on the rayon
//! pool in fixed tasks whose partial sums are added in task order, so the iteration has the same
//! bits on any thread count; the passes over faces are compiled per component count (the
//! crate's `modes::face_passes`). On this problem the history and the factor (7 MB and 20 MB on
//! a 43k-face mesh with ten steps of history) are read at memory speed, which two cores share
//! only in part: spot's default ten scalar modes at 22,424 tets went from 31.2 s to 21.4 s with
//! the passes on two threads and the solves by supernodes (20.2 s with the ordering's
//! best-of-three-axes separators), on a slow machine. Per iteration there, on two threads
//! (about 1800 iterations in 4.3 s, with 0.6 s of setup): the sparse Cholesky solve 1.35 ms, the
//! acceleration 0.35 ms, the constraint projection 0.12 ms, the z and y steps 0.09 ms and the
//! right-hand side 0.09 ms.
//!
//! Optimality is reported as a KKT residual (see [`Kkt`]) computed from the returned primal and
//! dual, not from the iteration's own residuals.

use rayon::prelude::*;

use super::anderson::Anderson;
use super::cholesky::Cholesky;
use super::dense::{cholesky, cholesky_solve};
use super::drift::{SHORTEST, is_drift, steps_before_change};
use super::face_passes::{RelaxedStep, add_target_sums, apply_d, apply_dt, relaxed_step, split_state};
use super::problem::JumpProblem;
use crate::sums::dot;

/// The penalty `rho` times the mode's root mean square value `1 / sqrt(volume)`: the shrink
/// threshold `1 / rho` is then a tenth of a typical mode value. Measured on the notched bar
/// (without acceleration), iteration counts change by under 30 % for `rho` from 0.03 to 3 times
/// this.
pub const PENALTY: f64 = 10.0;

/// Over-relaxation of the `z` and `y` steps.
const RELAXATION: f64 = 1.6;
/// An extrapolated point is rejected when its residual exceeds the smallest one since the last
/// restart by this factor.
const SAFEGUARD: f64 = 2.0;

/// Entries one task takes in the iteration's entry-by-entry passes.
const ENTRIES_PER_TASK: usize = 4096;

/// Past steps the Anderson acceleration combines.
const MEMORY: usize = 10;

/// How far the subproblem is solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubproblemSettings {
    /// Relative primal and dual residual of the iteration at which it stops.
    pub tolerance: f64,
    /// When set, the iteration goes on past `tolerance` (to a tenth of it at a time) until the
    /// KKT residual ([`Kkt::residual`]) is at most this.
    pub kkt_tolerance: Option<f64>,
    /// Most iterations.
    pub max_iterations: usize,
}

impl Default for SubproblemSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-7,
            kkt_tolerance: Some(1e-6),
            max_iterations: 20_000,
        }
    }
}

/// The optimality of a subproblem solution `u` with dual `y` (`||y_f|| <= w_f` holds exactly):
/// each part relative, the KKT residual their maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Kkt {
    /// `||A u - b|| / ||b||`, rows of `A` normalized.
    pub feasibility: f64,
    /// `||D^T y + A^T lambda||_{M^-1} / ||D^T y||_{M^-1}`, with `lambda` the least-squares
    /// multipliers: stationarity.
    pub stationarity: f64,
    /// `(E(u) - y^T D u) / E(u)`: complementarity (zero exactly when every dual aligns with its
    /// face's jump), equal to the duality gap when stationarity holds.
    pub gap: f64,
    /// ADMM iterations run.
    pub iterations: usize,
}

impl Kkt {
    /// The largest relative residual.
    pub fn residual(&self) -> f64 {
        self.feasibility.max(self.stationarity).max(self.gap)
    }
}

/// The factor of `K = D^T W D + delta M` (one per mesh and dimension) and the state the
/// iteration carries from one subproblem to the next (a warm start).
pub struct JumpSolver<'a> {
    problem: &'a JumpProblem,
    factor: Cholesky,
    delta: f64,
    /// The iteration's state per face component: the relaxed point `v = z + y` of the last z
    /// step, whose block shrink is the split variable `z` (the kept jumps) and whose rest is
    /// the scaled dual `y`.
    v: Vec<f64>,
    rho: f64,
    work: Vec<f64>,
}

impl<'a> JumpSolver<'a> {
    /// A solver for `problem` with `factor` the Cholesky factor of its scalar `K` (built by
    /// [`super::iccm::face_laplacian`]) and `delta` the proximal weight it holds.
    pub fn new(problem: &'a JumpProblem, factor: Cholesky, delta: f64) -> Self {
        let d = problem.dimension.components();
        let total_volume: f64 = problem.masses.iter().sum();
        Self {
            problem,
            delta,
            v: vec![0.0; problem.faces.len() * d],
            rho: PENALTY * total_volume.sqrt(),
            work: vec![0.0; factor.work_len()],
            factor,
        }
    }

    /// Forgets the warm start (a new mode begins).
    pub fn reset(&mut self) {
        self.v.fill(0.0);
    }

    /// `x = K^-1 x` for a field of `d` components (each component is its own scalar solve).
    pub fn solve_k(&mut self, x: &mut [f64]) {
        let d = self.problem.dimension.components();
        if d == 1 {
            self.factor.solve_in_place(x, &mut self.work);
            return;
        }
        let n = self.problem.tets;
        let mut component = vec![0.0; n];
        for k in 0..d {
            for t in 0..n {
                component[t] = x[t * d + k];
            }
            self.factor.solve_in_place(&mut component, &mut self.work);
            for t in 0..n {
                x[t * d + k] = component[t];
            }
        }
    }

    /// Solves the subproblem with constraint rows `rows` (`rows[0] = M c`, then `M U_j` for the
    /// non-trivial modes), their solves `solved[i] = K^-1 rows[i]`, right-hand side
    /// `b = (1, 0, ...)`, and orthogonality to the trivial modes `rigid` (M-orthonormal fields
    /// constant on each connected part), starting from `u` (overwritten with the solution).
    /// Returns the KKT report.
    ///
    /// The trivial modes are projected out rather than carried as rows: `K^-1 M U_j = U_j / delta`
    /// exactly, so as rows they would put `1 / delta` into the Schur complement and lose its
    /// accuracy, while their M-orthogonal projection is also the K-orthogonal one and keeps
    /// every other row's solve orthogonal to them.
    ///
    /// # Panics
    /// When the rows are linearly dependent (the caller orthonormalizes `c` against the modes
    /// first, and refuses a guess in their span).
    pub fn solve(
        &mut self,
        rows: &[&[f64]],
        solved: &[&[f64]],
        rigid: &[&[f64]],
        u: &mut [f64],
        settings: SubproblemSettings,
    ) -> Kkt {
        let problem = self.problem;
        let d = problem.dimension.components();
        let n = problem.unknowns();
        let m = rows.len();
        let b: Vec<f64> = (0..m).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
        // Schur complement S = A K^-1 A^T.
        let mut s = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                s[i * m + j] = dot(rows[i], solved[j]);
            }
        }
        let s_factor = cholesky(&s, m).expect("independent constraint rows");
        let faces = problem.faces.len();
        let mut du = vec![0.0; faces * d];
        let mut rhs = vec![0.0; n];
        let mut iterations = 0;
        let all_rows: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| r.to_vec())
            .chain(rigid.iter().map(|r| problem.mass_times(r)))
            .collect();
        let all_rows: Vec<&[f64]> = all_rows.iter().map(Vec::as_slice).collect();
        // The rigid fields times `M`.
        let weighted_rigid = &all_rows[m..];
        // Start from the projection of u onto the constraints.
        remove_rigid(rigid, weighted_rigid, u);
        project(rows, solved, &s_factor, &b, u);
        apply_d(problem, u, &mut du);
        if self.v.iter().all(|&x| x == 0.0) {
            self.v.copy_from_slice(&du);
        }
        let mut tolerance = settings.tolerance;
        let mut mu = vec![0.0; m];
        let mut accelerator = Anderson::new(MEMORY);
        // The state `v` (see the field) carries the whole iteration in `faces * d` entries
        // (Douglas-Rachford's variable), and any `v` gives duals inside their balls: the
        // acceleration and the drift jumps work on it.
        let length = faces * d;
        let mut fresh = vec![0.0; length];
        let mut plain = vec![0.0; length];
        let mut residual = vec![0.0; length];
        let mut previous_step = vec![0.0; length];
        let mut has_previous_step = false;
        let mut best_norm = f64::INFINITY;
        let norm_weights: Vec<f64> = (0..length).map(|i| problem.weights[i / d]).collect();
        // The proximal term's diagonal `delta M`.
        let proximal: Vec<f64> = (0..n).map(|i| self.delta * problem.masses[i / d]).collect();
        let threshold = 1.0 / self.rho;
        while iterations < settings.max_iterations {
            iterations += 1;
            // u step: min sum_f w_f ||D_f u - z_f + y_f||^2 + delta ||u - u_k||_M^2, A u = b,
            // with z and y split off the state face by face.
            rhs.iter_mut()
                .zip(proximal.iter().zip(u.iter()))
                .for_each(|(r, (p, u))| *r = p * u);
            add_target_sums(problem, &self.v, threshold, &mut rhs);
            // K^-1 would multiply a rigid part of the right-hand side by 1 / delta and drown the
            // rest in its round-off: take it out first (the solution is orthogonal to it anyway).
            for (field, weighted) in rigid.iter().zip(weighted_rigid) {
                let projection: f64 = dot(field, &rhs);
                rhs.iter_mut().zip(*weighted).for_each(|(r, m)| *r -= projection * m);
            }
            self.solve_k(&mut rhs);
            u.copy_from_slice(&rhs);
            remove_rigid(rigid, weighted_rigid, u);
            {
                let u = &*u;
                mu.par_iter_mut()
                    .zip(rows.par_iter().zip(&b))
                    .for_each(|(mu, (row, b))| *mu = dot(row, u) - b);
            }
            cholesky_solve(&s_factor, m, &mut mu);
            // u -= sum_j mu_j K^-1 A_j, the columns subtracted one after another in each task.
            u.par_chunks_mut(ENTRIES_PER_TASK).enumerate().for_each(|(task, part)| {
                let entries = task * ENTRIES_PER_TASK..task * ENTRIES_PER_TASK + part.len();
                for (g, mu) in solved.iter().zip(&mu) {
                    part.iter_mut()
                        .zip(&g[entries.clone()])
                        .for_each(|(x, gx)| *x -= mu * gx);
                }
            });
            apply_d(problem, u, &mut du);
            // z and y steps, over-relaxed: the next state `fresh = alpha D u + (1 - alpha) z + y`
            // and its step from `v`, with the sums of the stopping test and of the drift test.
            let step = RelaxedStep {
                state: &self.v,
                jumps: &du,
                previous: &previous_step,
                relaxation: RELAXATION,
                threshold,
            };
            let sums = relaxed_step(problem, &step, &mut fresh, &mut residual);
            // Residuals in the W metric: primal ||Du - z||, dual rho ||z - z_old|| (an upper
            // bound of ||D^T W (z - z_old)|| up to the graph's degree), against their scales.
            let (primal, dual) = (sums.primal.sqrt(), self.rho * sums.dual.sqrt());
            let (scale_primal, scale_dual) = (sums.scale_primal.sqrt(), self.rho * sums.scale_dual.sqrt());
            if primal <= tolerance * scale_primal && dual <= tolerance * scale_dual {
                match settings.kkt_tolerance {
                    Some(target) if tolerance > 1e-14 && self.kkt_at(&fresh, &all_rows, u).residual() > target => {
                        tolerance *= 0.1;
                    }
                    _ => {
                        std::mem::swap(&mut plain, &mut fresh);
                        break;
                    }
                }
            }
            // Anderson acceleration of the map v -> fresh, whose fixed-point residual is `residual`.
            let norm = sums.step.sqrt();
            if norm > SAFEGUARD * best_norm && accelerator.len() > 0 {
                // The extrapolated point did worse than the plain step it replaced: go back to
                // that step and start the history afresh.
                accelerator.clear();
                self.v.copy_from_slice(&plain);
                best_norm = f64::INFINITY;
                has_previous_step = false;
                continue;
            }
            best_norm = best_norm.min(norm);
            std::mem::swap(&mut plain, &mut fresh);
            // A drift (see `drift`): jump to its last step before the next face changes sides.
            if has_previous_step
                && is_drift(sums.step, sums.change)
                && let Some(n) = steps_before_change(&plain, &residual, d, threshold).filter(|&n| n >= SHORTEST)
            {
                let n = n as f64;
                self.v
                    .iter_mut()
                    .zip(plain.iter().zip(&residual))
                    .for_each(|(v, (p, s))| *v = p + n * s);
                accelerator.clear();
                best_norm = f64::INFINITY;
                has_previous_step = false;
                continue;
            }
            self.v.copy_from_slice(&plain);
            accelerator.extrapolate(&plain, &residual, &norm_weights, &mut self.v);
            // This step is the next one's previous (the residual is rewritten whole each time).
            std::mem::swap(&mut previous_step, &mut residual);
            has_previous_step = true;
        }
        // The state kept is the last plain step: out of iterations, not an extrapolated point
        // (whose duals lie in their balls too, but which no step of the map has checked).
        if iterations > 0 {
            self.v.copy_from_slice(&plain);
        }
        let mut kkt = self.kkt(&all_rows, u);
        kkt.iterations = iterations;
        kkt
    }

    /// The true dual `y_f = rho w_f y_scaled_f`, inside the balls `||y_f|| <= w_f`.
    pub fn dual(&self) -> Vec<f64> {
        self.dual_of(&self.v)
    }

    /// The true dual of the state `v`.
    fn dual_of(&self, v: &[f64]) -> Vec<f64> {
        let d = self.problem.dimension.components();
        let (_, mut y) = split_state(self.problem, v, 1.0 / self.rho);
        for (i, y) in y.iter_mut().enumerate() {
            *y *= self.rho * self.problem.weights[i / d];
        }
        y
    }

    /// The split variable: the jumps the iteration kept, exactly zero on unbroken faces.
    pub fn kept_jumps(&self) -> Vec<f64> {
        split_state(self.problem, &self.v, 1.0 / self.rho).0
    }

    fn kkt(&self, rows: &[&[f64]], u: &[f64]) -> Kkt {
        self.kkt_at(&self.v, rows, u)
    }

    /// The KKT report of `u` with the dual of the state `v`.
    fn kkt_at(&self, v: &[f64], rows: &[&[f64]], u: &[f64]) -> Kkt {
        let problem = self.problem;
        let d = problem.dimension.components();
        let m = rows.len();
        let y = self.dual_of(v);
        let feasibility = (0..m)
            .map(|i| {
                let target = if i == 0 { 1.0 } else { 0.0 };
                let norm = dot(rows[i], rows[i]).sqrt();
                ((dot(rows[i], u) - target) / norm).powi(2)
            })
            .sum::<f64>()
            .sqrt();
        // D^T y, and lambda minimizing ||D^T y + A^T lambda||_{M^-1}.
        let mut dty = vec![0.0; problem.unknowns()];
        apply_dt(problem, &y, &mut dty);
        let inverse_mass = |i: usize| 1.0 / problem.masses[i / d];
        let mdot = |a: &[f64], b: &[f64]| -> f64 {
            a.iter()
                .zip(b)
                .enumerate()
                .map(|(i, (x, y))| x * y * inverse_mass(i))
                .sum()
        };
        let mut gram = vec![0.0; m * m];
        let mut lambda = vec![0.0; m];
        for i in 0..m {
            for j in 0..m {
                gram[i * m + j] = mdot(rows[i], rows[j]);
            }
            lambda[i] = -mdot(rows[i], &dty);
        }
        let stationarity = match cholesky(&gram, m) {
            Some(l) => {
                cholesky_solve(&l, m, &mut lambda);
                let mut residual = dty.clone();
                for (j, row) in rows.iter().enumerate() {
                    residual
                        .iter_mut()
                        .zip(row.iter())
                        .for_each(|(r, a)| *r += lambda[j] * a);
                }
                mdot(&residual, &residual).sqrt() / mdot(&dty, &dty).sqrt().max(f64::MIN_POSITIVE)
            }
            None => f64::INFINITY,
        };
        let energy = problem.energy(u);
        let mut du = vec![0.0; problem.faces.len() * d];
        apply_d(problem, u, &mut du);
        let paired: f64 = y.iter().zip(&du).map(|(a, b)| a * b).sum();
        let gap = if energy > 0.0 { (energy - paired) / energy } else { 0.0 };
        Kkt {
            feasibility,
            stationarity,
            gap,
            iterations: 0,
        }
    }
}

/// `u = u - sum_j (U_j^T M u) U_j` over the M-orthonormal `rigid` fields, with `weighted`
/// their products `M U_j`.
fn remove_rigid(rigid: &[&[f64]], weighted: &[&[f64]], u: &mut [f64]) {
    for (field, weighted) in rigid.iter().zip(weighted) {
        let projection = dot(weighted, u);
        u.iter_mut().zip(field.iter()).for_each(|(x, f)| *x -= projection * f);
    }
}

/// `u = u - K^-1 A^T S^-1 (A u - b)`: the K-orthogonal projection onto `A u = b`.
fn project(rows: &[&[f64]], solved: &[&[f64]], s_factor: &[f64], b: &[f64], u: &mut [f64]) {
    let m = rows.len();
    let mut mu: Vec<f64> = (0..m).map(|i| dot(rows[i], u) - b[i]).collect();
    cholesky_solve(s_factor, m, &mut mu);
    for (j, g) in solved.iter().enumerate() {
        u.iter_mut().zip(g.iter()).for_each(|(x, gx)| *x -= mu[j] * gx);
    }
}
