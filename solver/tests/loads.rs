//! The load pass (loads.rs): on a column at rest, the warm start it leaves carries each cube's
//! weight down to the ground, so the next step's sweeps find every row holding.

mod common;

use common::{GRAVITY, stack};
use shatter_solver::{Row, SolveReport, SolverBody, SolverSettings, solve};

const DT: f64 = 1.0 / 30.0;
const COUNT: usize = 8;

/// The sum of the normal rows' `warm` impulses of each contact patch of the column (rows
/// `12 k .. 12 k + 12`: body `k` on body `k - 1`, body 0 on the ground), N s.
fn patch_loads(rows: &[Row]) -> Vec<f64> {
    rows.chunks(12)
        .map(|patch| {
            patch
                .iter()
                .filter(|row| row.friction.is_none())
                .map(|row| row.warm)
                .sum()
        })
        .collect()
}

/// `steps` steps of the column from rest with `settings`, each putting gravity again on the
/// velocities the last left and warm started from its `warm`: the rows after the first step and
/// after the last, and every step's report.
fn steps(settings: &SolverSettings, steps: usize) -> (Vec<Row>, Vec<Row>, Vec<SolveReport>) {
    let (mut bodies, mut rows) = stack(COUNT, 0.5, 0.5, DT);
    let mut reports = vec![solve(&mut bodies, &mut rows, DT, settings).unwrap()];
    let first = rows.clone();
    for _ in 1..steps {
        for body in bodies.iter_mut() {
            body.linear_velocity += GRAVITY * DT;
        }
        reports.push(solve(&mut bodies, &mut rows, DT, settings).unwrap());
    }
    assert!(bodies.iter().all(SolverBody::is_dynamic));
    (first, rows, reports)
}

/// The contact under cube `k` of eight unit-mass cubes carries `8 - k` cubes' weight over the
/// step, `(8 - k) g dt`. After the first step the load pass leaves that within 1e-6 (the block
/// solve is regularized by 1e-8 of its largest diagonal entry, shock_block.rs), where the sweeps
/// alone (six of them) leave some contact more than a percent off. Warm started from the loads,
/// from the fourth step on every step's sweeps meet the tolerance on the first sweep (the shock
/// pass then has nothing to do), and the loads are right to 1e-12; warm started from the sweeps'
/// own impulses, every one of ten steps runs all six sweeps and the last still changes rows by
/// more than 1 cm/s.
#[test]
fn loads_column_carries_each_cubes_weight_to_the_ground() {
    let weight = GRAVITY.length() * DT;
    let expected = |k: usize| (COUNT - k) as f64 * weight;
    let worst_error = |rows: &[Row]| {
        patch_loads(rows)
            .into_iter()
            .enumerate()
            .map(|(k, load)| (load / expected(k) - 1.0).abs())
            .fold(0.0, f64::max)
    };
    let settings = SolverSettings::default();
    let (first, last, reports) = steps(&settings, 10);
    assert!(worst_error(&first) <= 1e-6, "{}", worst_error(&first));
    assert!(worst_error(&last) <= 1e-12, "{}", worst_error(&last));
    for (step, report) in reports.iter().enumerate().skip(3) {
        assert_eq!(report.iterations, 1, "step {step}: {report:?}");
        assert!(report.residual <= settings.tolerance, "step {step}: {report:?}");
    }
    let without = SolverSettings {
        carry_loads: false,
        ..settings
    };
    let (swept, _, reports) = steps(&without, 10);
    assert!(worst_error(&swept) > 1e-2, "{}", worst_error(&swept));
    assert!(reports.iter().all(|report| report.iterations == settings.iterations));
    assert!(reports[9].residual > 1e-2, "{:?}", reports[9]);
}

/// A column falling faster than the load pass's limit (0.25 m/s) keeps the sweeps' impulses as its
/// warm start: the same bits as with the pass turned off.
#[test]
fn loads_moving_island_keeps_the_sweeps_impulses() {
    let solved = |settings: &SolverSettings| {
        let (mut bodies, mut rows) = stack(COUNT, 0.5, 0.5, DT);
        for body in bodies.iter_mut() {
            body.linear_velocity.x += 1.0;
        }
        solve(&mut bodies, &mut rows, DT, settings).unwrap();
        rows
    };
    let with = solved(&SolverSettings::default());
    let without = solved(&SolverSettings {
        carry_loads: false,
        ..SolverSettings::default()
    });
    for (k, (a, b)) in with.iter().zip(&without).enumerate() {
        assert_eq!(a.warm.to_bits(), b.warm.to_bits(), "row {k}");
        assert_eq!(a.lambda.to_bits(), b.lambda.to_bits(), "row {k}");
    }
}
