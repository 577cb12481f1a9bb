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
//! `alpha = 1.6` (section 3.4.3); and the map `(z, y) -> (z', y')` is Anderson-accelerated
//! (type II, Walker and Ni 2011, as SCS does), with a safeguard that falls back to the plain
//! step when an extrapolated point raises the fixed-point residual. ADMM on this problem spends
//! long stretches drifting (every step moves the jumps by the same amount while the set of cut
//! faces changes one face at a time); acceleration cuts the iterations of a warm-started
//! subproblem by about five. A pure drift, whose steps all repeat, is beyond acceleration (its
//! residuals are all equal); it is jumped over in closed form (the crate's `modes::drift`).
//! Residual balancing (changing `rho` as the iteration goes) was tried: alone it made the
//! notched bar's second mode cycle without converging, and combined with the extrapolation it
//! diverged. The proximal term `delta/2 ||u - u_k||_M^2` with a tiny `delta`
//! makes `K` definite on the constants (the jump energy's null space) without changing the fixed
//! points.
//!
//! Every pass over the faces, the constraint rows and the acceleration history runs on the rayon
//! pool in fixed tasks whose partial sums are added in task order, so the iteration has the same
//! bits on any thread count. On this problem each of those passes reads more than the caches
//! hold (with ten steps of history on a 43k-face mesh, 14 MB beside a 20 MB factor) and runs at
//! memory speed, which two cores share only in part: spot's default ten scalar modes at 22,424
//! tets went from 31.2 s to 21.4 s with the passes on two threads and the solves by supernodes
//! (20.2 s with the ordering's best-of-three-axes separators), on a slow machine.
//!
//! Optimality is reported as a KKT residual (see [`Kkt`]) computed from the returned primal and
//! dual, not from the iteration's own residuals.

use rayon::prelude::*;

use super::anderson::Anderson;
use super::cholesky::Cholesky;
use super::dense::{cholesky, cholesky_solve};
use super::drift::{SHORTEST, is_drift, steps_before_change};
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

/// Faces one task takes in the iteration's face-by-face passes (they run on the rayon pool).
const FACES_PER_TASK: usize = 4096;
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
    /// Scaled dual per face component, and the split variable.
    y: Vec<f64>,
    z: Vec<f64>,
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
            y: vec![0.0; problem.faces.len() * d],
            z: vec![0.0; problem.faces.len() * d],
            rho: PENALTY * total_volume.sqrt(),
            work: vec![0.0; factor.work_len()],
            factor,
        }
    }

    /// Forgets the warm start (a new mode begins).
    pub fn reset(&mut self) {
        self.y.fill(0.0);
        self.z.fill(0.0);
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
        let mut z_old = vec![0.0; faces * d];
        let mut iterations = 0;
        // Start from the projection of u onto the constraints.
        remove_rigid(problem, rigid, u);
        project(rows, solved, &s_factor, &b, u);
        apply_d(problem, u, &mut du);
        if self.z.iter().all(|&x| x == 0.0) {
            self.z.copy_from_slice(&du);
        }
        let all_rows: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| r.to_vec())
            .chain(rigid.iter().map(|r| problem.mass_times(r)))
            .collect();
        let all_rows: Vec<&[f64]> = all_rows.iter().map(Vec::as_slice).collect();
        let mut tolerance = settings.tolerance;
        let mut mu = vec![0.0; m];
        let state = 2 * faces * d;
        let mut accelerator = Anderson::new(MEMORY);
        let mut x = vec![0.0; state];
        let mut plain = vec![0.0; state];
        let mut next = vec![0.0; state];
        let mut target = vec![0.0; faces * d];
        let mut residual = vec![0.0; state];
        let mut best_norm = f64::INFINITY;
        let mut previous_step = vec![0.0; state];
        let mut has_previous_step = false;
        let norm_weights: Vec<f64> = (0..state).map(|i| problem.weights[(i % (faces * d)) / d]).collect();
        let mut converged = false;
        while iterations < settings.max_iterations {
            iterations += 1;
            x[..faces * d].copy_from_slice(&self.z);
            x[faces * d..].copy_from_slice(&self.y);
            // u step: min sum_f w_f ||D_f u - z_f + y_f||^2 + delta ||u - u_k||_M^2, A u = b.
            target
                .iter_mut()
                .zip(self.z.iter().zip(&self.y))
                .for_each(|(t, (z, y))| *t = z - y);
            apply_dt_weighted(problem, &target, &mut rhs);
            for (i, r) in rhs.iter_mut().enumerate() {
                *r += self.delta * problem.masses[i / d] * u[i];
            }
            // K^-1 would multiply a rigid part of the right-hand side by 1 / delta and drown the
            // rest in its round-off: take it out first (the solution is orthogonal to it anyway).
            for field in rigid {
                let projection: f64 = dot(field, &rhs);
                rhs.iter_mut()
                    .enumerate()
                    .for_each(|(i, r)| *r -= projection * problem.masses[i / d] * field[i]);
            }
            self.solve_k(&mut rhs);
            u.copy_from_slice(&rhs);
            remove_rigid(problem, rigid, u);
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
            // z and y steps, over-relaxed.
            z_old.copy_from_slice(&self.z);
            let threshold = 1.0 / self.rho;
            // Face by face in tasks of FACES_PER_TASK faces; each task's four sums are its own,
            // added in task order, so the bits do not depend on the thread count.
            let chunk = FACES_PER_TASK * d;
            let sums: Vec<[f64; 4]> = self
                .z
                .par_chunks_mut(chunk)
                .zip(self.y.par_chunks_mut(chunk))
                .zip(du.par_chunks(chunk).zip(z_old.par_chunks(chunk)))
                .zip(problem.weights.par_chunks(FACES_PER_TASK))
                .map(|(((z, y), (du, z_old)), weights)| {
                    let mut sums = [0.0; 4];
                    for (f, &w) in weights.iter().enumerate() {
                        let range = f * d..(f + 1) * d;
                        let mut v = [0.0; 3];
                        let mut length = 0.0;
                        for (k, i) in range.clone().enumerate() {
                            let relaxed = RELAXATION * du[i] + (1.0 - RELAXATION) * z_old[i];
                            v[k] = relaxed + y[i];
                            length += v[k] * v[k];
                        }
                        let length = length.sqrt();
                        let keep = if length > threshold {
                            1.0 - threshold / length
                        } else {
                            0.0
                        };
                        for (k, i) in range.enumerate() {
                            let kept = keep * v[k];
                            z[i] = kept;
                            y[i] = v[k] - kept;
                            sums[0] += w * (du[i] - kept) * (du[i] - kept);
                            sums[1] += w * (kept - z_old[i]) * (kept - z_old[i]);
                            sums[2] += w * du[i].powi(2).max(kept * kept);
                            sums[3] += w * y[i] * y[i];
                        }
                    }
                    sums
                })
                .collect();
            let [primal, dual, scale_primal, scale_dual] = sums.iter().fold([0.0; 4], |total, part| {
                [
                    total[0] + part[0],
                    total[1] + part[1],
                    total[2] + part[2],
                    total[3] + part[3],
                ]
            });
            // Residuals in the W metric: primal ||Du - z||, dual rho ||z - z_old|| (an upper
            // bound of ||D^T W (z - z_old)|| up to the graph's degree), against their scales.
            let (primal, dual) = (primal.sqrt(), self.rho * dual.sqrt());
            let (scale_primal, scale_dual) = (scale_primal.sqrt(), self.rho * scale_dual.sqrt());
            if primal <= tolerance * scale_primal && dual <= tolerance * scale_dual {
                match settings.kkt_tolerance {
                    Some(target) if tolerance > 1e-14 && self.kkt(&all_rows, u).residual() > target => {
                        tolerance *= 0.1;
                    }
                    _ => {
                        converged = true;
                        break;
                    }
                }
            }
            // Anderson acceleration of the map x = (z, y) -> (z', y').
            let (residual_z, residual_y) = residual.split_at_mut(faces * d);
            let (x_z, x_y) = x.split_at(faces * d);
            let norm = (squared_step(residual_z, &self.z, x_z, &norm_weights[..faces * d])
                + squared_step(residual_y, &self.y, x_y, &norm_weights[faces * d..]))
            .sqrt();
            if norm > SAFEGUARD * best_norm && accelerator.len() > 0 {
                // The extrapolated point did worse than the plain step it replaced: go back to
                // that step and start the history afresh.
                accelerator.clear();
                self.z.copy_from_slice(&plain[..faces * d]);
                self.y.copy_from_slice(&plain[faces * d..]);
                best_norm = f64::INFINITY;
                has_previous_step = false;
                continue;
            }
            best_norm = best_norm.min(norm);
            plain[..faces * d].copy_from_slice(&self.z);
            plain[faces * d..].copy_from_slice(&self.y);
            // A drift (see `drift`): jump to its last step before the next face changes sides.
            if has_previous_step && is_drift(&residual, &previous_step, &norm_weights) {
                let (step_z, step_y) = residual.split_at(faces * d);
                if let Some(n) =
                    steps_before_change(&self.z, &self.y, step_z, step_y, d, threshold).filter(|&n| n >= SHORTEST)
                {
                    let n = n as f64;
                    for (z, s) in self.z.chunks_exact_mut(d).zip(step_z.chunks_exact(d)) {
                        if z.iter().any(|&x| x != 0.0) {
                            z.iter_mut().zip(s).for_each(|(z, s)| *z += n * s);
                        }
                    }
                    self.y.iter_mut().zip(step_y).for_each(|(y, s)| *y += n * s);
                    accelerator.clear();
                    best_norm = f64::INFINITY;
                    has_previous_step = false;
                    continue;
                }
            }
            next.copy_from_slice(&plain);
            accelerator.extrapolate(&plain, &residual, &norm_weights, &mut next);
            self.z.copy_from_slice(&next[..faces * d]);
            self.y.copy_from_slice(&next[faces * d..]);
            // This step is the next one's previous (the residual is rewritten whole each time).
            std::mem::swap(&mut previous_step, &mut residual);
            has_previous_step = true;
        }
        if !converged && iterations > 0 {
            // Out of iterations: keep the last plain step, whose duals lie in their balls, not
            // an extrapolated point.
            self.z.copy_from_slice(&plain[..faces * d]);
            self.y.copy_from_slice(&plain[faces * d..]);
        }
        let mut kkt = self.kkt(&all_rows, u);
        kkt.iterations = iterations;
        kkt
    }

    /// The true dual `y_f = rho w_f y_scaled_f`, inside the balls `||y_f|| <= w_f`.
    pub fn dual(&self) -> Vec<f64> {
        let d = self.problem.dimension.components();
        self.y
            .iter()
            .enumerate()
            .map(|(i, y)| self.rho * self.problem.weights[i / d] * y)
            .collect()
    }

    /// The split variable: the jumps the iteration kept, exactly zero on unbroken faces.
    pub fn kept_jumps(&self) -> &[f64] {
        &self.z
    }

    fn kkt(&self, rows: &[&[f64]], u: &[f64]) -> Kkt {
        let problem = self.problem;
        let d = problem.dimension.components();
        let m = rows.len();
        let y = self.dual();
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

/// Writes `step = next - now` and returns `sum_i w_i step_i^2`, in tasks of
/// [`ENTRIES_PER_TASK`] entries whose sums are added in task order.
fn squared_step(step: &mut [f64], next: &[f64], now: &[f64], weights: &[f64]) -> f64 {
    step.par_chunks_mut(ENTRIES_PER_TASK)
        .zip(next.par_chunks(ENTRIES_PER_TASK).zip(now.par_chunks(ENTRIES_PER_TASK)))
        .zip(weights.par_chunks(ENTRIES_PER_TASK))
        .map(|((step, (next, now)), weights)| {
            let mut sum = 0.0;
            for ((s, (a, b)), w) in step.iter_mut().zip(next.iter().zip(now)).zip(weights) {
                *s = a - b;
                sum += w * *s * *s;
            }
            sum
        })
        .collect::<Vec<f64>>()
        .iter()
        .sum()
}

/// `u = u - sum_j (U_j^T M u) U_j` over the M-orthonormal `rigid` fields.
fn remove_rigid(problem: &JumpProblem, rigid: &[&[f64]], u: &mut [f64]) {
    for field in rigid {
        let projection = problem.mass_dot(field, u);
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

/// `out = D u`, the jumps of every face.
pub fn apply_d(problem: &JumpProblem, u: &[f64], out: &mut [f64]) {
    let d = problem.dimension.components();
    out.par_chunks_mut(FACES_PER_TASK * d)
        .zip(problem.faces.par_chunks(FACES_PER_TASK))
        .for_each(|(out, faces)| {
            for (jump, [a, b]) in out.chunks_exact_mut(d).zip(faces) {
                let (a, b) = (*a as usize * d, *b as usize * d);
                for (k, jump) in jump.iter_mut().enumerate() {
                    *jump = u[a + k] - u[b + k];
                }
            }
        });
}

/// `out = D^T v`.
pub fn apply_dt(problem: &JumpProblem, v: &[f64], out: &mut [f64]) {
    let d = problem.dimension.components();
    out.fill(0.0);
    for (f, [a, b]) in problem.faces.iter().enumerate() {
        let (a, b) = (*a as usize * d, *b as usize * d);
        for k in 0..d {
            out[a + k] += v[f * d + k];
            out[b + k] -= v[f * d + k];
        }
    }
}

/// `out = D^T W v`.
fn apply_dt_weighted(problem: &JumpProblem, v: &[f64], out: &mut [f64]) {
    let d = problem.dimension.components();
    out.fill(0.0);
    for (f, [a, b]) in problem.faces.iter().enumerate() {
        let w = problem.weights[f];
        let (a, b) = (*a as usize * d, *b as usize * d);
        for k in 0..d {
            out[a + k] += w * v[f * d + k];
            out[b + k] -= w * v[f * d + k];
        }
    }
}
