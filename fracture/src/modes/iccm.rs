//! Fracture modes one at a time by iterated convexification (Brandt and Hildebrandt 2017, as
//! Sellán et al. 2023 section 3.5 use it).
//!
//! Mode `k` minimizes the discontinuity energy `E(u)` over fields of unit mass norm that are
//! M-orthogonal to the modes before it. The unit-norm constraint is not convex, so it is
//! linearized about the current iterate `c`: solve the convex subproblem
//! `min E(u) s.t. (M c)^T u = 1, (M U_j)^T u = 0` ([`super::admm`]), set `c = u / ||u||_M`, and
//! repeat until `c` changes by less than the tolerance. The first iterate is the `k`-th
//! smallest Laplacian eigenvector ([`super::guesses`]) rounded to its best threshold cut
//! ([`super::rounding`]), M-orthogonalized against the earlier modes (which changes nothing in
//! the subproblem, whose solutions are orthogonal to them, but keeps the normalization row
//! independent of the orthogonality rows). Early subproblems are solved loosely (a tolerance
//! that follows the iterate's change), the last one until its KKT residual is at most the
//! subproblem's `kkt_tolerance`.
//!
//! Fields in the null space of `E` (constant on each connected part of the mesh) are the trivial
//! modes: rigid motions of the whole, with zero energy. A guess whose energy is zero is one, and
//! is taken as the mode without iterating.

use shatter_collision::TetMesh;

use super::admm::{JumpSolver, Kkt, SubproblemSettings};
use super::cholesky::Cholesky;
use super::guesses::laplacian_guesses;
use super::ordering::nested_dissection;
use super::problem::{Dimension, JumpProblem};
use super::rounding::sweep_cut;
use super::sparse::SymmetricMatrix;
use crate::error::FractureError;

/// Proximal weight of the subproblem's `u` step, relative to the face Laplacian's mean diagonal
/// over the mean tet volume.
const PROXIMAL: f64 = 1e-9;

/// Subproblem tolerance of a mode's first convexification step, and of later ones as a
/// fraction of the last change of the iterate.
const LOOSE_START: f64 = 1e-3;
const LOOSE_FRACTION: f64 = 0.1;

/// `u / ||u||_M`.
fn normalized(problem: &JumpProblem, u: &[f64]) -> Vec<f64> {
    let norm = problem.mass_dot(u, u).sqrt();
    u.iter().map(|x| x / norm).collect()
}

/// `max_i |a_i - b_i|`.
fn change(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// How modes are computed (defaults: the reference implementation's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModeSettings {
    /// Modes to compute, trivial (rigid) ones included.
    pub modes: usize,
    /// Components per tet.
    pub dimension: Dimension,
    /// Discontinuity weight per unit face area, `omega`. Only its ratio to the field matters
    /// for the modes' shape; it scales their energies.
    pub omega: f64,
    /// Iterations stop when no tet value changes by more than this, relative to the mode's root
    /// mean square value `1 / sqrt(volume)`.
    pub tolerance: f64,
    /// Most convexification iterations per mode.
    pub max_iterations: usize,
    /// How each convex subproblem is solved.
    pub subproblem: SubproblemSettings,
}

impl Default for ModeSettings {
    fn default() -> Self {
        Self {
            modes: 10,
            dimension: Dimension::Scalar,
            omega: 0.01,
            tolerance: 1e-4,
            max_iterations: 10,
            subproblem: SubproblemSettings::default(),
        }
    }
}

/// How the computation of one mode went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModeReport {
    /// Convexification iterations (0 for a trivial mode).
    pub iterations: usize,
    /// The last change of the iterate, relative as in [`ModeSettings::tolerance`].
    pub change: f64,
    /// Optimality of the last subproblem.
    pub kkt: Kkt,
    /// Whether the change fell under the tolerance.
    pub converged: bool,
}

/// A tet mesh's fracture modes: M-orthonormal per-tet fields, by increasing index.
#[derive(Clone, Debug, PartialEq)]
pub struct FractureModes {
    /// Components per tet.
    pub dimension: Dimension,
    /// Tets of the mesh they belong to.
    pub tets: usize,
    /// Interior faces of that mesh.
    pub faces: usize,
    /// The modes, `tets * d` values each (components interleaved per tet), `U^T M U = I`.
    pub modes: Vec<Vec<f64>>,
    /// Discontinuity energy `E(U_k)` of each mode.
    pub energies: Vec<f64>,
    /// Per mode, the jumps the subproblem kept (`faces * d`), exactly zero on faces the mode
    /// does not cut (empty for trivial modes).
    pub cuts: Vec<Vec<f64>>,
    /// How each mode's computation went.
    pub reports: Vec<ModeReport>,
}

/// The scalar face Laplacian `K = D^T W D + delta M` of `problem`, with `delta`.
pub fn face_laplacian(problem: &JumpProblem) -> (SymmetricMatrix, f64) {
    let n = problem.tets;
    let mut degree = vec![0.0; n];
    let mut triplets = Vec::with_capacity(problem.faces.len() + n);
    for ([a, b], w) in problem.faces.iter().zip(&problem.weights) {
        degree[*a as usize] += w;
        degree[*b as usize] += w;
        triplets.push((*a.max(b), *a.min(b), -w));
    }
    let mean_degree = degree.iter().sum::<f64>() / n as f64;
    let mean_mass = problem.masses.iter().sum::<f64>() / n as f64;
    let delta = PROXIMAL * mean_degree / mean_mass;
    for (t, (degree, mass)) in degree.iter().zip(&problem.masses).enumerate() {
        triplets.push((t as u32, t as u32, degree + delta * mass));
    }
    (SymmetricMatrix::from_lower_triplets(n, &triplets), delta)
}

/// The first `settings.modes` fracture modes of `mesh` with the face weight `field` (see
/// [`JumpProblem::try_new`]), calling `progress(k)` after mode `k`. Fails naming a bad setting
/// or a mesh whose Laplacian cannot be factored.
pub fn compute_modes(
    mesh: &TetMesh,
    settings: &ModeSettings,
    field: Option<&[f64]>,
    mut progress: impl FnMut(usize),
) -> Result<FractureModes, FractureError> {
    check_settings(settings)?;
    let problem = JumpProblem::try_new(mesh, settings.dimension, settings.omega, field)?;
    let d = settings.dimension.components();
    let count = settings.modes.min(problem.unknowns());
    let (_, scalar_guesses) = laplacian_guesses(mesh, count.div_ceil(d))?;
    let (k, delta) = face_laplacian(&problem);
    let factor = Cholesky::factor(&k, nested_dissection(&k, mesh.centroids()))
        .map_err(|e| FractureError::input(format!("the face Laplacian is singular at tet {}", e.unknown)))?;
    let mut solver = JumpSolver::new(&problem, factor, delta);
    let volume: f64 = problem.masses.iter().sum();
    let rms = 1.0 / volume.sqrt();
    let mut modes: Vec<Vec<f64>> = Vec::with_capacity(count);
    // Constraint rows M U_j and their solves K^-1 M U_j, for the non-trivial modes; the
    // indices of the trivial ones.
    let mut weighted: Vec<Vec<f64>> = Vec::with_capacity(count);
    let mut solved: Vec<Vec<f64>> = Vec::with_capacity(count);
    let mut trivial: Vec<usize> = Vec::new();
    let mut out = FractureModes {
        dimension: settings.dimension,
        tets: problem.tets,
        faces: problem.faces.len(),
        modes: Vec::new(),
        energies: Vec::new(),
        cuts: Vec::new(),
        reports: Vec::new(),
    };
    let total_weight: f64 = problem.weights.iter().sum();
    let scalar_problem = JumpProblem {
        dimension: Dimension::Scalar,
        ..problem.clone()
    };
    for index in 0..count {
        let guess = &scalar_guesses[index / d];
        let mut c = expand(guess, d, index % d);
        if !orthonormalize(&problem, &modes, &mut c) {
            return Err(FractureError::input(format!(
                "the guess of mode {index} lies in the span of the modes before it: the mesh has too \
                 few tets for {count} modes; ask for fewer"
            )));
        }
        if problem.energy(&c) > 1e-12 * total_weight * rms {
            // Start from the guess's best threshold cut ([`super::rounding`]) when it is not
            // in the span of the modes already found.
            if let Some(cut) = sweep_cut(&scalar_problem, guess) {
                let mut rounded = expand(&cut, d, index % d);
                if orthonormalize(&problem, &modes, &mut rounded) {
                    c = rounded;
                }
            }
        }
        let mut report = ModeReport::default();
        let mut cut = Vec::new();
        // A guess with no jump energy is a rigid motion of a connected part: a trivial mode.
        if problem.energy(&c) > 1e-12 * total_weight * rms {
            solver.reset();
            let mut u = c.clone();
            let mut loose_tolerance = LOOSE_START;
            for iteration in 1..=settings.max_iterations {
                let (mc, kmc) = constraint_row(&problem, &mut solver, &modes, &trivial, &c);
                let rows: Vec<&[f64]> = std::iter::once(mc.as_slice())
                    .chain(weighted.iter().map(Vec::as_slice))
                    .collect();
                let columns: Vec<&[f64]> = std::iter::once(kmc.as_slice())
                    .chain(solved.iter().map(Vec::as_slice))
                    .collect();
                let rigid: Vec<&[f64]> = trivial.iter().map(|&j| modes[j].as_slice()).collect();
                // Early subproblems only need to be as exact as the iterate is close to its
                // limit; the last one is solved to the full tolerance.
                let strict = settings.subproblem;
                let loose = SubproblemSettings {
                    tolerance: loose_tolerance.max(strict.tolerance),
                    kkt_tolerance: None,
                    ..strict
                };
                report.kkt = solver.solve(&rows, &columns, &rigid, &mut u, loose);
                let mut next = normalized(&problem, &u);
                report.change = change(&next, &c) / rms;
                if report.change < settings.tolerance {
                    let extra = report.kkt.iterations;
                    report.kkt = solver.solve(&rows, &columns, &rigid, &mut u, strict);
                    report.kkt.iterations += extra;
                    next = normalized(&problem, &u);
                    report.change = change(&next, &c) / rms;
                }
                loose_tolerance = (LOOSE_FRACTION * report.change).min(loose_tolerance);
                report.iterations = iteration;
                c = next;
                if report.change < settings.tolerance {
                    report.converged = true;
                    break;
                }
            }
            cut = solver.kept_jumps();
            let (mc, kmc) = constraint_row(&problem, &mut solver, &modes, &trivial, &c);
            weighted.push(mc);
            solved.push(kmc);
        } else {
            report.converged = true;
            trivial.push(index);
        }
        out.energies.push(problem.energy(&c));
        modes.push(c);
        out.cuts.push(cut);
        out.reports.push(report);
        progress(index);
    }
    // The greedy order is not always the energy order: a mode found later, in the complement of
    // more modes, can have less energy than one before it when the earlier iteration settled in
    // a local minimum (measured: the 4-voxel dumbbell's fourth and fifth scalar modes, 1.48e-2
    // then 1.24e-2). Every mode is orthogonal to every other either way, so the modes are
    // ordered by energy (stably, trivial ones first); a prefix of them is then always the
    // lowest-energy set found.
    let mut order: Vec<usize> = (0..modes.len()).collect();
    order.sort_by(|&a, &b| out.energies[a].total_cmp(&out.energies[b]).then(a.cmp(&b)));
    out.modes = order.iter().map(|&i| std::mem::take(&mut modes[i])).collect();
    out.energies = order.iter().map(|&i| out.energies[i]).collect();
    out.cuts = order.iter().map(|&i| std::mem::take(&mut out.cuts[i])).collect();
    out.reports = order.iter().map(|&i| out.reports[i]).collect();
    Ok(out)
}

fn check_settings(settings: &ModeSettings) -> Result<(), FractureError> {
    if settings.modes == 0 {
        return Err(FractureError::invalid("mode count", settings.modes, "at least 1"));
    }
    if !(settings.tolerance.is_finite() && settings.tolerance > 0.0) {
        return Err(FractureError::invalid(
            "mode tolerance",
            settings.tolerance,
            "a positive finite number",
        ));
    }
    if settings.max_iterations == 0 {
        return Err(FractureError::invalid(
            "convexification iterations per mode",
            settings.max_iterations,
            "at least 1",
        ));
    }
    if !(settings.subproblem.tolerance.is_finite() && settings.subproblem.tolerance > 0.0) {
        return Err(FractureError::invalid(
            "subproblem tolerance",
            settings.subproblem.tolerance,
            "a positive finite number",
        ));
    }
    Ok(())
}

/// A scalar tet field as component `component` of a `d`-component field.
fn expand(scalar: &[f64], d: usize, component: usize) -> Vec<f64> {
    let mut out = vec![0.0; scalar.len() * d];
    for (t, value) in scalar.iter().enumerate() {
        out[t * d + component] = *value;
    }
    out
}

/// M-orthogonalizes `c` against `modes` (twice) and M-normalizes it; `false` (leaving `c`
/// unusable) when less than 1e-8 of its norm is left, i.e. it lies in the modes' span.
fn orthonormalize(problem: &JumpProblem, modes: &[Vec<f64>], c: &mut [f64]) -> bool {
    let before = problem.mass_dot(c, c).sqrt();
    for _pass in 0..2 {
        for mode in modes {
            let projection = problem.mass_dot(mode, c);
            c.iter_mut().zip(mode).for_each(|(x, m)| *x -= projection * m);
        }
    }
    let norm = problem.mass_dot(c, c).sqrt();
    if !(norm > 1e-8 * before) {
        return false;
    }
    c.iter_mut().for_each(|x| *x /= norm);
    true
}

/// The constraint row `M c` and its solve `K^-1 M c` with the trivial modes' part taken out
/// (see [`JumpSolver::solve`]).
fn constraint_row(
    problem: &JumpProblem,
    solver: &mut JumpSolver<'_>,
    modes: &[Vec<f64>],
    trivial: &[usize],
    c: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let mc = problem.mass_times(c);
    let mut kmc = mc.clone();
    solver.solve_k(&mut kmc);
    for &j in trivial {
        let projection = problem.mass_dot(&modes[j], &kmc);
        kmc.iter_mut().zip(&modes[j]).for_each(|(a, m)| *a -= projection * m);
    }
    (mc, kmc)
}
