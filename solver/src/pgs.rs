//! Projected Gauss-Seidel over constraint rows: the velocity-level LCP of Li et al. 2018 eq. 1-2,
//! with warm starting, accumulated-impulse clamping, friction bounds, energy clamping and the split
//! pass.
//!
//! # The equations, with CFM scaled as ODE defines it
//!
//! Li 2018 eq. 1 couples the velocity update with the constraints. With `lambda` the impulse of a
//! step (N s) and `v*` the velocities after external forces, `M v = M v* + J^T lambda`. ODE defines
//! CFM on the constraint *force* `f = lambda / h` (N): a soft row satisfies `J v = c - CFM f` with
//! `c = -ERP phi / h` (the sign of `CFM f` chosen so that CFM >= 0 softens). In impulses,
//!
//! ```text
//! J v + (CFM / h) lambda = -ERP phi / h + target,
//! ```
//!
//! and eliminating `v` gives the row of the Schur complement, Li 2018 eq. 2 with `Sigma = CFM / h`:
//!
//! ```text
//! (J M^-1 J^T + CFM / h) lambda = -ERP phi / h + target - J v*.
//! ```
//!
//! (The paper prints `Sigma` bare; its own stiffness `K = Gamma / (h Sigma)` has units N/m only for
//! `Sigma` = ODE's CFM in s/kg, which enters the impulse system divided by `h`. softness.rs shows that
//! this row is one backward-Euler step of the spring-damper `k = ERP / (h CFM)`, `c = (1 - ERP) / CFM`.)
//!
//! # One Gauss-Seidel update
//!
//! Row `i` with diagonal `d_i = J_i M^-1 J_i^T + CFM_i / h` and accumulated impulse `lambda_i`:
//!
//! ```text
//! delta   = (target_i - J_i v - (CFM_i / h) lambda_i) / d_i
//! new     = clamp(lambda_i + delta, lower_i, upper_i)           (accumulated, not per-increment)
//! delta   = new - lambda_i,   then eps delta is applied:  v += M^-1 J_i^T eps delta,  lambda_i += eps delta
//! ```
//!
//! with `eps = 1` unless the row is energy-clamped (clamp.rs: Su 2009's factor, with the energy of
//! each body pair compared with the start of the solve rather than with the previous iterate).
//! Clamping the accumulated impulse, not each increment, lets a later sweep take back part of an
//! earlier one (Catto's sequential impulses).
//! Friction rows take their bounds `+-mu |lambda_n|` from the normal row's current impulse each time
//! they are solved: a pyramid (box) friction model when a contact carries two orthogonal tangent rows,
//! which lets the friction impulse reach `sqrt(2) mu lambda_n` along a diagonal. contact.rs can align
//! the first tangent with the sliding direction, where the pyramid and the Coulomb cone agree.
//!
//! Each sweep visits the rows in runs between one body pair (a contact patch's rows are one run),
//! four runs that share no moving body at a time (lanes.rs). An island of fewer than
//! `lanes::WIDE_RUNS` runs is swept in the order its rows are given; a wider one level by level
//! from the ground up (the shock pass's contact levels), each level's runs cut into four segments
//! swept side by side. The order depends on the rows alone: no hashing, no timing. The engine
//! hands the solver one island at a time, or several of one make at once ([`solve_together`],
//! which sweeps small islands side by side and gives each the bits it gets alone), and may solve
//! islands in parallel. Within an island, work is shared among threads only where the result
//! cannot depend on it: the rows are checked and prepared each on its own in one pass (phases.rs),
//! their body pairs numbered stretch by stretch around one sort (`assign_pairs`), the batches' rows
//! written each batch on its own once the dealing has placed them (lanes.rs), the split pass
//! (split.rs), which reads the prepared rows and never the velocity solve's results, runs beside
//! the velocity solve in a large island, and the shock pass solves the groups of a wide level
//! side by side (shock_state.rs). The bits are those of one thread either way, and the same on
//! machines with and without AVX2 (wide.rs).
//!
//! # Warm starting
//!
//! With [`SolverSettings::warm_start`], each row's incoming `warm` impulse, clamped to its bounds
//! (friction rows to the normal rows' warm-start impulses: non-friction rows are warm-started
//! first), is applied before the first sweep. The energy-clamped rows' warm impulses are applied as
//! one impulse, scaled by Su's factor for all of them together (warm_start.rs says why not row by
//! row), and the energy that removes is credited to the pairs' budgets.

use glam::DVec3;
use rayon::prelude::*;

use crate::body::{SlotMass, SolverBody};
use crate::clamp::clamp_row_increment_within;
use crate::error::SolverError;
use crate::head::RowHead;
use crate::phases;
use crate::row::{BiasMode, Row};
use crate::settings::{SolveReport, SolverSettings};
#[cfg(doc)]
use crate::together::solve_together;
use crate::twist::Twist;
use crate::workspace::SolverWorkspace;
use shatter_integrators::ClampVerdict;

/// A row with everything that does not change during the sweeps precomputed.
///
/// Every pass over a large island's rows (the warm start, the sweeps, the shock and split passes,
/// the batches' rows) streams them from memory, so a row keeps only what it cannot derive: its
/// velocity slots and pair as 32-bit indices, no `J M^-1 J^T` or diagonal (each one addition from
/// the bodies' parts and `CFM / h`), no response `M^-1 J^T` (formed from the Jacobian and the
/// slot's [`SlotMass`] where it is applied, as the lane sweeps do), a friction row's coefficient
/// in the lower bound it does not use: 192 bytes, three cache lines, where storing those took 336
/// (the same bits either way).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prepared {
    /// Body A's velocity slot (the world's is one past the bodies).
    slot_a: u32,
    /// Body B's velocity slot.
    slot_b: u32,
    /// Body A's block of `J`.
    pub(crate) jacobian_a: Twist,
    /// Body B's block of `J`.
    pub(crate) jacobian_b: Twist,
    /// Body A's part of `J M^-1 J^T`, 1/kg.
    pub(crate) inverse_mass_a: f64,
    /// Body B's part of `J M^-1 J^T`, 1/kg.
    pub(crate) inverse_mass_b: f64,
    /// `CFM / h`, 1/kg.
    pub(crate) cfm_over_h: f64,
    /// `1 / diagonal` (0 for an inactive row): one division per row per solve, not per sweep.
    pub(crate) inverse_diagonal: f64,
    /// Whether the row can act at all (`J M^-1 J^T > 0`).
    pub(crate) active: bool,
    /// The velocity solve's right-hand side, m/s.
    pub(crate) target: f64,
    /// The split solve's right-hand side, m/s, for a split row (see [`Prepared::split_target`]);
    /// zero for the others. Held as a number and a flag rather than an `Option`, which takes 16
    /// bytes: a prepared row is streamed from memory several times a step.
    split_rhs: f64,
    /// Whether the row takes part in the split solve.
    split: bool,
    /// The lower impulse bound, N s (N m s); a friction row's friction coefficient instead (its
    /// bounds are that times its normal rows' impulses, [`Prepared::friction`]).
    lower: f64,
    /// The upper impulse bound, N s (N m s); unused for a friction row.
    pub(crate) upper: f64,
    /// A friction row's first normal row and one past its last (zero for the others).
    normal_rows: (u32, u32),
    /// Whether the row is a friction row.
    is_friction: bool,
    pub(crate) energy_clamp: bool,
    /// Index of the row's body pair in the energy budgets (energy-clamped rows only).
    pair: u32,
    /// The impulse carried over from the last step ([`Row::warm`]), N s (N m s), which the warm
    /// start begins from: kept here, in the eight bytes the row had to spare, so that the warm
    /// start reads the prepared rows alone instead of one cache line of every 208-byte row too.
    pub(crate) incoming: f64,
}

// The size the docs above give, which the setup passes' memory traffic is measured in.
const _: () = assert!(size_of::<Prepared>() == 192);

impl Prepared {
    /// A row that is never solved, only a place to prepare a row into: inactive, between no
    /// bodies, with zero Jacobians.
    pub(crate) fn unset() -> Self {
        Self {
            slot_a: 0,
            slot_b: 0,
            jacobian_a: Twist::default(),
            jacobian_b: Twist::default(),
            inverse_mass_a: 0.0,
            inverse_mass_b: 0.0,
            cfm_over_h: 0.0,
            inverse_diagonal: 0.0,
            active: false,
            target: 0.0,
            split_rhs: 0.0,
            split: false,
            lower: 0.0,
            upper: 0.0,
            normal_rows: (0, 0),
            is_friction: false,
            energy_clamp: false,
            pair: 0,
            incoming: 0.0,
        }
    }

    /// The split solve's right-hand side, m/s, for a split row (penetration pushed out by the split
    /// pass, split.rs); `None` for the others.
    #[inline]
    pub(crate) fn split_target(&self) -> Option<f64> {
        self.split.then_some(self.split_rhs)
    }

    /// Body A's velocity slot.
    #[inline]
    pub(crate) fn a(&self) -> usize {
        self.slot_a as usize
    }

    /// Body B's velocity slot.
    #[inline]
    pub(crate) fn b(&self) -> usize {
        self.slot_b as usize
    }

    /// `J M^-1 J^T`, 1/kg: the sum of the two bodies' parts, as the row was prepared with.
    #[inline]
    pub(crate) fn inverse_effective_mass(&self) -> f64 {
        self.inverse_mass_a + self.inverse_mass_b
    }

    /// `J M^-1 J^T + CFM / h`, 1/kg.
    #[inline]
    pub(crate) fn diagonal(&self) -> f64 {
        self.inverse_effective_mass() + self.cfm_over_h
    }

    /// `(first normal row, one past the last, coefficient)` for a friction row, `None` for the
    /// others. Held as two 32-bit indices, the coefficient in the unused lower bound and a flag
    /// (9 bytes where the `Option` took 32): a prepared row is streamed from memory several times
    /// a step.
    #[inline]
    pub(crate) fn friction(&self) -> Option<(usize, usize, f64)> {
        self.is_friction
            .then_some((self.normal_rows.0 as usize, self.normal_rows.1 as usize, self.lower))
    }

    /// The lower impulse bound of a row that is not a friction row, N s (N m s).
    #[inline]
    pub(crate) fn lower(&self) -> f64 {
        self.lower
    }

    /// Index of the row's body pair in the energy budgets.
    #[inline]
    pub(crate) fn pair(&self) -> usize {
        self.pair as usize
    }

    /// Gives the row the body pair `pair` in the energy budgets, as [`assign_pairs`] does (the
    /// structure memo, structure.rs, gives back the numbers it gave).
    #[inline]
    pub(crate) fn set_pair(&mut self, pair: u32) {
        self.pair = pair;
    }

    /// `J v` at the current velocities.
    #[inline]
    pub(crate) fn relative_velocity(&self, velocities: &[Twist]) -> f64 {
        self.relative_velocity_of(&velocities[self.a()], &velocities[self.b()])
    }

    /// `J v` with body A moving at `va` and body B at `vb`.
    #[inline]
    pub(crate) fn relative_velocity_of(&self, va: &Twist, vb: &Twist) -> f64 {
        self.jacobian_a.products(va).add(self.jacobian_b.products(vb)).sum()
    }

    /// Body A's part of `J v` with body A moving at `va`.
    #[inline]
    pub(crate) fn side_a(&self, va: &Twist) -> f64 {
        self.jacobian_a.dot(va)
    }

    /// Body B's part of `J v` with body B moving at `vb`.
    #[inline]
    pub(crate) fn side_b(&self, vb: &Twist) -> f64 {
        self.jacobian_b.dot(vb)
    }

    /// `v += M^-1 J^T delta`, the slots' inverse masses in `masses`.
    #[inline]
    pub(crate) fn apply(&self, masses: &[SlotMass], velocities: &mut [Twist], delta: f64) {
        velocities[self.a()] = self.pushed_a(&masses[self.a()], velocities[self.a()], delta);
        velocities[self.b()] = self.pushed_b(&masses[self.b()], velocities[self.b()], delta);
    }

    /// Body A's block of `M^-1 J^T` (its velocity change per unit impulse), body A's inverse mass
    /// being `mass`.
    #[inline]
    pub(crate) fn response_a(&self, mass: &SlotMass) -> Twist {
        mass.response(&self.jacobian_a)
    }

    /// Body B's block of `M^-1 J^T`, body B's inverse mass being `mass`.
    #[inline]
    pub(crate) fn response_b(&self, mass: &SlotMass) -> Twist {
        mass.response(&self.jacobian_b)
    }

    /// Body A's velocity `va` after the impulse `delta` on this row, its inverse mass `mass`.
    #[inline]
    pub(crate) fn pushed_a(&self, mass: &SlotMass, va: Twist, delta: f64) -> Twist {
        va.add_scaled(&self.response_a(mass), delta)
    }

    /// Body B's velocity `vb` after the impulse `delta` on this row, its inverse mass `mass`.
    #[inline]
    pub(crate) fn pushed_b(&self, mass: &SlotMass, vb: Twist, delta: f64) -> Twist {
        vb.add_scaled(&self.response_b(mass), delta)
    }
}

/// Solves the rows for one step of length `dt` (s): updates the dynamic bodies' velocities and each
/// row's `lambda`, and returns the split velocities with the counts of what happened.
///
/// Validation comes first and covers every body, every row and the settings; on any error the
/// bodies and rows are left exactly as they were. The solve itself works on copies and writes back
/// only when every result is finite.
pub fn solve(
    bodies: &mut [SolverBody],
    rows: &mut [Row],
    dt: f64,
    settings: &SolverSettings,
) -> Result<SolveReport, SolverError> {
    solve_with(&mut SolverWorkspace::default(), bodies, rows, dt, settings)
}

/// [`solve`] working in the caller's `workspace`, so that a caller solving every step reuses the
/// same memory (workspace.rs). The result does not depend on what the workspace was used for before.
pub fn solve_with(
    workspace: &mut SolverWorkspace,
    bodies: &mut [SolverBody],
    rows: &mut [Row],
    dt: f64,
    settings: &SolverSettings,
) -> Result<SolveReport, SolverError> {
    let report = phases::start(workspace, bodies, rows, dt, settings)?;
    phases::finish(workspace, bodies, rows, settings, report, false)
}

/// One Gauss-Seidel sweep over `runs` (ranges of `prepared` between one body pair), row by row,
/// the slots' inverse masses in `masses`: updates `velocities`, `lambdas`, the pairs' energy
/// `budgets` and the clamp counts of `report`, and returns the sweep's residual, the largest
/// `|delta| * diagonal` (m/s).
pub(crate) fn sweep_rows(
    (prepared, masses): (&[Prepared], &[SlotMass]),
    runs: &[(usize, usize)],
    velocities: &mut [Twist],
    lambdas: &mut [f64],
    budgets: &mut [f64],
    report: &mut SolveReport,
) -> f64 {
    let mut residual: f64 = 0.0;
    for &(start, end) in runs {
        let (a, b) = (prepared[start].a(), prepared[start].b());
        let (mut va, mut vb) = (velocities[a], velocities[b]);
        let pair_masses = (&masses[a], &masses[b]);
        for (index, row) in prepared.iter().enumerate().take(end).skip(start) {
            let lambda = lambdas[index];
            let jv = row.relative_velocity_of(&va, &vb);
            let wanted = (row.target - jv - row.cfm_over_h * lambda) * row.inverse_diagonal;
            let (lower, upper) = bounds(row, lambdas);
            let delta = clamp(lambda + wanted, lower, upper) - lambda;
            let budget = &mut budgets[row.pair()];
            let applied = apply_increment(
                row,
                &mut lambdas[index],
                (pair_masses, &mut va, &mut vb),
                delta,
                jv,
                budget,
                report,
            );
            residual = residual.max(applied.abs() * row.diagonal());
        }
        velocities[a] = va;
        velocities[b] = vb;
    }
    residual
}

/// The impulse bounds of a row now: its own, or `+-mu N` for friction, `N` the sum of its normal
/// rows' `|lambda|`.
#[inline]
pub(crate) fn bounds(row: &Prepared, lambdas: &[f64]) -> (f64, f64) {
    match row.friction() {
        Some((start, end, mu)) => {
            let limit = mu * lambdas[start..end].iter().map(|l| l.abs()).sum::<f64>();
            (-limit, limit)
        }
        None => (row.lower, row.upper),
    }
}

/// `value` limited to `[lower, upper]`. Unlike `f64::clamp` it never panics: a NaN bound, which only
/// an overflow elsewhere can produce, is ignored (a NaN value stays NaN), and the end-of-solve
/// check reports the overflow. Two comparisons, which compile to one instruction each (`f64::max`
/// and `f64::min` need several to order NaN).
#[inline]
pub(crate) fn clamp(value: f64, lower: f64, upper: f64) -> f64 {
    let raised = if value < lower { lower } else { value };
    if raised > upper { upper } else { raised }
}

/// Applies `delta` to a row whose current `J v` is `jv` and whose bodies, of inverse masses
/// `masses`, move at `va` and `vb` (updated in place), and returns the increment actually applied.
/// An energy-clamped row's increment is scaled so that it raises the kinetic energy by no more than
/// its body pair's `budget` (the energy that pair's clamped rows removed so far, J), which is then
/// charged with the increment's exact energy change (clamp.rs).
#[inline]
fn apply_increment(
    row: &Prepared,
    lambda: &mut f64,
    ((mass_a, mass_b), va, vb): ((&SlotMass, &SlotMass), &mut Twist, &mut Twist),
    delta: f64,
    jv: f64,
    budget: &mut f64,
    report: &mut SolveReport,
) -> f64 {
    if delta == 0.0 {
        return 0.0;
    }
    let mut delta = delta;
    if row.energy_clamp {
        let clamp = clamp_row_increment_within(jv, row.inverse_effective_mass(), delta, *budget);
        match clamp.verdict {
            ClampVerdict::Scaled => report.scaled_increments += 1,
            ClampVerdict::Dropped => report.dropped_increments += 1,
            ClampVerdict::Kept | ClampVerdict::NoEffect => {}
        }
        delta *= clamp.scale;
        *budget -= delta * jv + 0.5 * delta * delta * row.inverse_effective_mass();
    }
    if delta != 0.0 {
        *lambda += delta;
        *va = row.pushed_a(mass_a, *va, delta);
        *vb = row.pushed_b(mass_b, *vb, delta);
    }
    delta
}

/// Gives every energy-clamped row of `prepared` (found by its `heads`) the index of its unordered
/// body pair, numbered in sorted order so the numbering is the same on every run; returns the
/// number of pairs (at least one, so that rows without a pair can point at slot 0 harmlessly).
pub(crate) fn assign_pairs(prepared: &mut [Prepared], heads: &[RowHead], keys: &mut PairKeys) -> usize {
    let PairKeys {
        sorted: pairs,
        stretches,
    } = keys;
    // Body indices fit in 32 bits (rows hold u32 indices), so a pair packs into one sortable u64.
    let key = |row: &RowHead| ((row.a().min(row.b()) as u64) << 32) | row.a().max(row.b()) as u64;
    // A patch's rows come together, so one key per run of equal keys leaves the sort a seventh of
    // the rows.
    let keys_of = |heads: &[RowHead], keys: &mut Vec<u64>| {
        for row in heads.iter().filter(|r| r.clamped()) {
            let row_key = key(row);
            if keys.last() != Some(&row_key) {
                keys.push(row_key);
            }
        }
    };
    let number = |(rows, heads): (&mut [Prepared], &[RowHead]), pairs: &[u64]| {
        let mut last: Option<(u64, u32)> = None;
        for (row, head) in rows.iter_mut().zip(heads).filter(|(_, head)| head.clamped()) {
            let row_key = key(head);
            row.pair = match last {
                Some((previous, pair)) if previous == row_key => pair,
                // Present by construction; fewer pairs than rows, whose indices fit in 32 bits.
                _ => pairs.binary_search(&row_key).unwrap_or(0) as u32,
            };
            last = Some((row_key, row.pair));
        }
    };
    pairs.clear();
    // Both passes read each stretch of rows on its own and the keys are sorted in between, so a
    // large island numbers its pairs on the pool: the same numbers either way.
    if prepared.len() >= PARALLEL_PAIR_ROWS {
        let count = prepared.len().div_ceil(PAIR_STRETCH);
        if stretches.len() < count {
            stretches.resize_with(count, Vec::new);
        }
        heads
            .par_chunks(PAIR_STRETCH)
            .zip(stretches[..count].par_iter_mut())
            .for_each(|(heads, keys)| {
                keys.clear();
                keys_of(heads, keys);
            });
        for keys in &stretches[..count] {
            pairs.extend_from_slice(keys);
        }
    } else {
        keys_of(heads, pairs);
    }
    pairs.sort_unstable();
    pairs.dedup();
    let sorted = &pairs[..];
    if prepared.len() >= PARALLEL_PAIR_ROWS {
        prepared
            .par_chunks_mut(PAIR_STRETCH)
            .zip(heads.par_chunks(PAIR_STRETCH))
            .for_each(|stretch| number(stretch, sorted));
    } else {
        number((prepared, heads), sorted);
    }
    pairs.len().max(1)
}

/// The memory of [`assign_pairs`], kept between solves.
#[derive(Debug, Default)]
pub(crate) struct PairKeys {
    /// Sorted body-pair keys of the energy-clamped rows.
    sorted: Vec<u64>,
    /// Each stretch's keys, when the rows are read on the pool.
    stretches: Vec<Vec<u64>>,
}

/// Rows from which [`assign_pairs`] reads them on the pool, in stretches of [`PAIR_STRETCH`]. Its
/// numbering writes into every energy-clamped prepared row, a cache miss each once the island's
/// rows outgrow a core's cache: on one thread it took 164 us a step of the random 1000-cube
/// pile's 13 500 rows at 30 Hz (temporary timers), on the two-thread step's critical path. With
/// this at 4096 (it was 16 384) the pile's median step on two threads went 7.58 -> 7.45 ms at 30
/// Hz and 7.12 -> 7.05 ms at 60 Hz (`stage_times`, interleaved runs), one thread unchanged.
const PARALLEL_PAIR_ROWS: usize = 4096;
/// Rows per stretch of [`assign_pairs`] on the pool.
const PAIR_STRETCH: usize = 2048;

/// Precomputes a validated row: `M^-1 J^T`, the diagonal, the targets of both passes.
#[inline]
pub(crate) fn prepare(row: &Row, bodies: &[SolverBody], dt: f64, settings: &SolverSettings) -> Prepared {
    let world = bodies.len();
    let index = |body: u32| {
        if body == crate::body::NO_BODY {
            world
        } else {
            body as usize
        }
    };
    let (a, b) = (index(row.a), index(row.b));
    let inverse = |slot: usize, linear: DVec3, angular: DVec3| match bodies.get(slot) {
        Some(body) => body.response(linear, angular),
        None => (DVec3::ZERO, DVec3::ZERO),
    };
    let j = &row.jacobian;
    let (linear_a, angular_a) = inverse(a, j.linear_a, j.angular_a);
    let (linear_b, angular_b) = inverse(b, j.linear_b, j.angular_b);
    let inverse_mass_a = j.linear_a.dot(linear_a) + j.angular_a.dot(angular_a);
    let inverse_mass_b = j.linear_b.dot(linear_b) + j.angular_b.dot(angular_b);
    let inverse_effective_mass = inverse_mass_a + inverse_mass_b;
    let cfm_over_h = row.cfm / dt;
    let phi = row.position_error;
    let (target, split_target) = match (row.bias_mode, row.friction) {
        (BiasMode::Velocity, _) | (BiasMode::Split, Some(_)) => (row.target_velocity - row.erp * phi / dt, None),
        (BiasMode::Split, None) => {
            // A speculative gap may close within the step, exactly; penetration is the split pass's.
            // A push no larger than the tolerance the sweeps stop at is round-off of the depth: the
            // row holds at zero, and a solve whose rows all hold so runs no split pass at all. At
            // rest, 1100 of the 210-box pyramid's 1600 contact normal rows asked for pushes under
            // 1e-11 m/s every step at 30 Hz, and its split batches and sweep were 5 percent of the
            // step.
            let velocity_target = row.target_velocity - phi.max(0.0) / dt;
            let push = (-row.erp * phi.min(0.0) / dt).min(settings.max_split_velocity);
            (
                velocity_target,
                Some(if push > settings.tolerance { push } else { 0.0 }),
            )
        }
    };
    Prepared {
        // Body indices fit in 32 bits (rows hold u32 indices), and so does the world's slot.
        slot_a: a as u32,
        slot_b: b as u32,
        jacobian_a: Twist::new(j.linear_a, j.angular_a),
        jacobian_b: Twist::new(j.linear_b, j.angular_b),
        inverse_mass_a,
        inverse_mass_b,
        cfm_over_h,
        inverse_diagonal: if inverse_effective_mass > 0.0 {
            1.0 / (inverse_effective_mass + cfm_over_h)
        } else {
            0.0
        },
        active: inverse_effective_mass > 0.0,
        target,
        split_rhs: split_target.unwrap_or(0.0),
        split: split_target.is_some(),
        lower: row.friction.map_or(row.lower, |f| f.coefficient),
        upper: row.upper,
        normal_rows: row.friction.map_or((0, 0), |f| {
            let normals = f.normal_rows();
            (normals.start as u32, normals.end as u32)
        }),
        is_friction: row.friction.is_some(),
        energy_clamp: row.energy_clamp,
        pair: 0,
        incoming: row.warm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::NO_BODY;
    use crate::head::heads_of;
    use crate::test_scenes::{prepare_rows, push_stacked_patch};
    use glam::DMat3;
    use shatter_integrators::SplitMix64;

    /// Pairs are numbered by their rank among the sorted distinct pairs of the clamped rows,
    /// whether the rows are read on one thread or in stretches on the pool: checked against
    /// that definition for a small island and for one past the size read on the pool (patches
    /// between random bodies and the world, some without the clamp, both orders of a pair).
    #[test]
    fn pgs_assign_pairs_numbers_pairs_by_their_sorted_rank() {
        let mut rng = SplitMix64::new(23);
        let bodies: Vec<SolverBody> = (0..300)
            .map(|_| SolverBody {
                linear_velocity: rng.unit_vector(),
                angular_velocity: DVec3::ZERO,
                inverse_mass: 1.0,
                inverse_inertia: DMat3::IDENTITY * 6.0,
            })
            .collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for patches in [40, 3000] {
            let mut rows = Vec::new();
            for _ in 0..patches {
                let a = (rng.range(0.0, 300.0) as u32).min(299);
                let b = if rng.range(0.0, 1.0) < 0.2 {
                    NO_BODY
                } else {
                    (a + 1 + (rng.range(0.0, 20.0) as u32)) % 300
                };
                let clamped = rng.range(0.0, 1.0) < 0.9;
                let corners = [(-0.4, -0.5), (0.4, -0.5), (0.4, 0.5)];
                push_stacked_patch(
                    &mut rows,
                    &bodies,
                    (a, b),
                    &corners,
                    (&mut rng, (0.0, 0.01)),
                    (0.5, clamped),
                );
            }
            let mut prepared = prepare_rows(&rows, &bodies, 1.0 / 30.0);
            assert_eq!(
                patches > 40,
                prepared.len() >= PARALLEL_PAIR_ROWS,
                "{} rows",
                prepared.len()
            );
            let heads = heads_of(&prepared);
            let count = pool.install(|| assign_pairs(&mut prepared, &heads, &mut PairKeys::default()));
            let key = |row: &Prepared| (row.a().min(row.b()), row.a().max(row.b()));
            let distinct: std::collections::BTreeSet<(usize, usize)> =
                prepared.iter().filter(|row| row.energy_clamp).map(key).collect();
            let ranked: Vec<(usize, usize)> = distinct.into_iter().collect();
            assert_eq!(count, ranked.len().max(1));
            for row in prepared.iter().filter(|row| row.energy_clamp) {
                assert_eq!(ranked[row.pair()], key(row));
            }
        }
    }
}
