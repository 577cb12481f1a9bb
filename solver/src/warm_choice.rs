//! Which impulses the next step of an island at rest starts from: the loads the load pass carried
//! down to the ground (loads.rs), or the sweeps' own impulses.
//!
//! The loads let a wall's or a column's next sweeps converge at once. Where bodies of one level
//! press on each other, as the cubes of a heap of debris do, the rows between them keep the
//! sweeps' impulses beside the loads, and the two do not balance: warm started from that mix every
//! step, the sweeps never converged and the heap crept. Measured on 64 cubes in random
//! orientations dropped from a 4 x 4 x 4 lattice at 60 Hz with sleeping off: from 15 s to 20 s
//! the cubes still moved up to 0.25 mm, 4.0 mm, 4.3 mm, 1.0 cm and 5.0 cm (five lattices). Warm
//! started from the sweeps' impulses instead, each step's sweeps carry on where the last one's
//! stopped, and the same heaps come to rest.
//!
//! So the two starts are tried as the next step will use them: from the velocities the step
//! started with, each start's impulses applied, one Gauss-Seidel sweep, row by row in the same
//! order, over the rows the island's sweeps visit (a joint block's rows left out). The start
//! whose sweep changes the rows less (its residual, the largest `|delta lambda| * diagonal`, m/s,
//! as the sweeps measure theirs) is the next step's warm start: the loads on a tie or where their
//! residual is within the solver's tolerance. With it the five heaps above moved 7.5e-10 m to
//! 1.2e-5 m from 15 s to 20 s, and the running-bond wall of tests/stability_stacks.rs 3.1e-5 m in
//! 20 s at 30 Hz (7.8e-4 m with the loads always kept). Not every heap rests: of 72 lattices, 13
//! to 18 (depending on round-off alone) still had cubes sliding at up to millimetres a second
//! from 15 s to 20 s (tests/stability_stacks.rs). Its cost is the two sweeps, on one thread, in each step of an island at rest whose
//! sweeps did not converge: a step whose sweeps converge carries no loads and tries nothing.

use crate::body::{SlotMass, SolverBody, fill_slot_velocities};
use crate::pgs::{Prepared, sweep_rows};
use crate::settings::SolveReport;
use crate::twist::Twist;

/// The choice's memory, kept from step to step: capacity only, no state.
#[derive(Default)]
pub(crate) struct WarmChoice {
    /// The sweeps' impulses, N s (N m s), kept while the load pass writes the loads over them.
    sweeps: Vec<f64>,
    /// The velocities a trial sweep works on, per slot (the last slot is the world).
    velocities: Vec<Twist>,
    /// The impulses a trial sweep works on, N s (N m s).
    lambdas: Vec<f64>,
    /// Energy budgets per body pair for a trial sweep, J: unlimited, since a trial changes nothing
    /// the solve returns.
    budgets: Vec<f64>,
}

/// The rows an island's sweeps visit: its prepared rows, the runs of them the sweeps visit
/// (ranges between one body pair, phases.rs), and the number of energy-clamped body pairs.
pub(crate) type SweptRows<'a> = (&'a [Prepared], &'a [(usize, usize)], usize);

impl WarmChoice {
    /// Keeps the sweeps' impulses `warm`, before the load pass writes the loads into it.
    pub(crate) fn keep_sweeps(&mut self, warm: &[f64]) {
        self.sweeps.clear();
        self.sweeps.extend_from_slice(warm);
    }

    /// Leaves in `warm` (the loads, as the load pass left them) whichever of the loads and the
    /// sweeps' impulses kept by [`WarmChoice::keep_sweeps`] a trial sweep from `bodies`'
    /// velocities (those the step started with; `masses` their slots' `M^-1`) changes less, as
    /// the module docs say; returns whether the loads were kept.
    pub(crate) fn choose(
        &mut self,
        warm: &mut [f64],
        rows: SweptRows<'_>,
        bodies: (&[SolverBody], &[SlotMass]),
        tolerance: f64,
    ) -> bool {
        let from_loads = self.trial_residual(warm, rows, bodies);
        let sweeps = core::mem::take(&mut self.sweeps);
        let from_sweeps = self.trial_residual(&sweeps, rows, bodies);
        let keep = from_loads <= from_sweeps.max(tolerance);
        if !keep {
            warm.copy_from_slice(&sweeps);
        }
        self.sweeps = sweeps;
        keep
    }

    /// The residual (m/s) of one sweep over `rows` from the impulses `start`, applied to
    /// `bodies`' velocities (`masses` their slots' `M^-1`).
    fn trial_residual(
        &mut self,
        start: &[f64],
        (prepared, runs, pairs): SweptRows<'_>,
        (bodies, masses): (&[SolverBody], &[SlotMass]),
    ) -> f64 {
        let Self {
            velocities,
            lambdas,
            budgets,
            ..
        } = self;
        fill_slot_velocities(bodies, velocities);
        for (row, &impulse) in prepared.iter().zip(start) {
            if impulse != 0.0 {
                row.apply(masses, velocities, impulse);
            }
        }
        lambdas.clear();
        lambdas.extend_from_slice(start);
        budgets.clear();
        budgets.resize(pairs, f64::INFINITY);
        sweep_rows(
            (prepared, masses),
            runs,
            velocities,
            lambdas,
            budgets,
            &mut SolveReport::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::NO_BODY;
    use crate::test_scenes::{prepare_rows, push_flat_patch};
    use glam::{DMat3, DVec3};

    const DT: f64 = 1.0 / 30.0;
    const G: f64 = 9.81;

    /// A 1 kg unit box resting flat on the world at the start of a step (gravity's `g dt`
    /// already in its velocity), its four corners touching: the prepared rows, the one run of
    /// them, and the body.
    fn slot_masses(bodies: &[SolverBody]) -> Vec<SlotMass> {
        let mut masses = Vec::new();
        SlotMass::fill(bodies, &mut masses);
        masses
    }

    fn box_on_the_world() -> (Vec<Prepared>, Vec<(usize, usize)>, Vec<SolverBody>) {
        let bodies = vec![SolverBody {
            linear_velocity: DVec3::new(0.0, -G * DT, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY * 6.0,
        }];
        let mut rows = Vec::new();
        push_flat_patch(&mut rows, &bodies, (0, NO_BODY));
        let prepared = prepare_rows(&rows, &bodies, DT);
        let runs = vec![(0, prepared.len())];
        (prepared, runs, bodies)
    }

    /// The box's exact load: a quarter of its weight's impulse `m g dt` on each corner's normal
    /// row, no friction.
    fn exact_load(prepared: &[Prepared]) -> Vec<f64> {
        let normals = prepared.iter().filter(|row| row.friction().is_none()).count();
        assert_eq!(normals, 4, "one normal row per corner");
        (prepared.iter())
            .map(|row| if row.friction().is_none() { G * DT / 4.0 } else { 0.0 })
            .collect()
    }

    /// From the exact load a sweep changes nothing (to round-off); from no impulse it must supply
    /// the whole weight, a residual of the order of `g dt`.
    #[test]
    fn warm_choice_trial_sweep_measures_how_far_a_start_is_from_holding() {
        let (prepared, runs, bodies) = box_on_the_world();
        let masses = slot_masses(&bodies);
        let bodies = (&bodies[..], &masses[..]);
        let mut choice = WarmChoice::default();
        let rows = (&prepared[..], &runs[..], 1);
        let exact = exact_load(&prepared);
        let held = choice.trial_residual(&exact, rows, bodies);
        assert!(held < 1e-12, "residual {held} m/s from the exact load");
        let none = choice.trial_residual(&vec![0.0; prepared.len()], rows, bodies);
        assert!(none > 0.1 * G * DT, "residual {none} m/s from no impulse");
    }

    /// The start nearer to holding wins either way round: exact loads over a half-converged
    /// sweep, and the sweeps' exact impulses over loads carrying half the weight.
    #[test]
    fn warm_choice_keeps_the_start_nearer_to_holding() {
        let (prepared, runs, bodies) = box_on_the_world();
        let masses = slot_masses(&bodies);
        let bodies = (&bodies[..], &masses[..]);
        let rows = (&prepared[..], &runs[..], 1);
        let exact = exact_load(&prepared);
        let half: Vec<f64> = exact.iter().map(|l| 0.5 * l).collect();
        let mut choice = WarmChoice::default();

        choice.keep_sweeps(&half);
        let mut warm = exact.clone();
        assert!(choice.choose(&mut warm, rows, bodies, 1e-9));
        assert_eq!(warm, exact);

        choice.keep_sweeps(&exact);
        let mut warm = half.clone();
        assert!(!choice.choose(&mut warm, rows, bodies, 1e-9));
        assert_eq!(warm, exact);
    }

    /// Where both starts are within the tolerance the loads stay, even if the sweeps' are nearer.
    #[test]
    fn warm_choice_keeps_loads_within_the_tolerance() {
        let (prepared, runs, bodies) = box_on_the_world();
        let masses = slot_masses(&bodies);
        let bodies = (&bodies[..], &masses[..]);
        let rows = (&prepared[..], &runs[..], 1);
        let exact = exact_load(&prepared);
        let near: Vec<f64> = exact.iter().map(|l| l * (1.0 + 1e-6)).collect();
        let mut choice = WarmChoice::default();
        choice.keep_sweeps(&exact);
        let mut warm = near.clone();
        assert!(choice.choose(&mut warm, rows, bodies, 1e-3));
        assert_eq!(warm, near);
        let mut warm = near.clone();
        assert!(!choice.choose(&mut warm, rows, bodies, 1e-12));
        assert_eq!(warm, exact);
    }
}
