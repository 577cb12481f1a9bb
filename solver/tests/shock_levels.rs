//! The shock pass solves the groups of one contact level side by side when the rayon pool has more
//! than one thread (shock_state.rs). Its answer must be the same bits as one group after another:
//! the scene here is a wall two boxes high, 24 boxes on the ground and 23 on top, each resting on
//! two below, so both levels are wide enough to be split among threads, in the velocity pass and
//! in the split (penetration) pass; and the island is large enough that the split pass runs beside
//! the velocity solve (pgs.rs).

mod common;

use common::{GRAVITY, box_inertia, dynamic_body, stack};
use glam::{DQuat, DVec3};
use shatter_solver::{
    ContactPatch, NO_BODY, PatchPoint, Row, Softness, SolveReport, SolverBody, SolverSettings, push_patch_rows, solve,
};

const DT: f64 = 1.0 / 30.0;
const HALF: DVec3 = DVec3::new(0.5, 0.5, 0.5);
const BOTTOM: usize = 24;

/// A uniform number in `[-1, 1)` from a 64-bit LCG (fixed scene, no dependency).
fn uniform(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The patch of four points between body `a` (above, centre `centre_a`) and body `b` (below,
/// centre `centre_b`, or the ground) over `x` in `[x0, x1]` at height `y`, each point `depth`
/// plus a little noise into the bodies.
#[allow(clippy::too_many_arguments)]
fn push_patch(
    rows: &mut Vec<Row>,
    bodies: &[SolverBody],
    (a, centre_a): (u32, DVec3),
    (b, centre_b): (u32, DVec3),
    (x0, x1, y): (f64, f64, f64),
    depth: f64,
    seed: &mut u64,
) {
    let points: Vec<PatchPoint> = [(x0, -0.5), (x1, -0.5), (x1, 0.5), (x0, 0.5)]
        .into_iter()
        .map(|(x, z)| {
            let point = DVec3::new(x, y, z);
            PatchPoint {
                arm_a: point - centre_a,
                arm_b: point - centre_b,
                normal: DVec3::Y,
                depth: depth * (1.0 + 0.5 * uniform(seed)),
            }
        })
        .collect();
    let patch = ContactPatch {
        a,
        b,
        points: &points,
        normal: DVec3::Y,
        friction: 0.6,
        softness: Softness::rigid(0.2),
        energy_clamp: true,
        friction_direction: None,
    };
    push_patch_rows(rows, bodies, &patch, DT).unwrap();
}

/// The wall: bodies moving a little after one step of gravity, and their contact rows.
fn wall() -> (Vec<SolverBody>, Vec<Row>) {
    let mut seed = 7u64;
    let mut centres = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..2 * BOTTOM - 1 {
        let (x, y) = if i < BOTTOM {
            (i as f64, 0.5)
        } else {
            ((i - BOTTOM) as f64 + 0.5, 1.5)
        };
        centres.push(DVec3::new(x, y, 0.0));
        let linear = GRAVITY * DT + 0.2 * DVec3::new(uniform(&mut seed), uniform(&mut seed), uniform(&mut seed));
        let angular = 0.3 * DVec3::new(uniform(&mut seed), uniform(&mut seed), uniform(&mut seed));
        let mass = 2.0 + uniform(&mut seed);
        bodies.push(dynamic_body(
            mass,
            box_inertia(mass, HALF),
            DQuat::IDENTITY,
            linear,
            angular,
        ));
    }
    let mut rows = Vec::new();
    for (i, &centre) in centres[..BOTTOM].iter().enumerate() {
        let ground = DVec3::new(centre.x, 0.0, 0.0);
        let span = (centre.x - 0.5, centre.x + 0.5, 0.0);
        push_patch(
            &mut rows,
            &bodies,
            (i as u32, centre),
            (NO_BODY, ground),
            span,
            2e-3,
            &mut seed,
        );
    }
    for top in BOTTOM..2 * BOTTOM - 1 {
        let left = top - BOTTOM;
        let x = centres[top].x;
        for (below, span) in [(left, (x - 0.5, x, 1.0)), (left + 1, (x, x + 0.5, 1.0))] {
            let a = (top as u32, centres[top]);
            let b = (below as u32, centres[below]);
            push_patch(&mut rows, &bodies, a, b, span, 1e-3, &mut seed);
        }
    }
    (bodies, rows)
}

/// Solves the wall on a rayon pool of `threads` threads with the default settings.
fn solve_on(threads: usize) -> (Vec<SolverBody>, Vec<Row>, SolveReport) {
    solve_with_settings(threads, &SolverSettings::default())
}

/// Solves the wall on a rayon pool of `threads` threads with `settings`.
fn solve_with_settings(threads: usize, settings: &SolverSettings) -> (Vec<SolverBody>, Vec<Row>, SolveReport) {
    let (mut bodies, mut rows) = wall();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let report = pool.install(|| solve(&mut bodies, &mut rows, DT, settings)).unwrap();
    (bodies, rows, report)
}

/// Every component of a body's velocities, as bits.
fn velocity_bits(body: &SolverBody) -> [u64; 6] {
    let (v, w) = (body.linear_velocity, body.angular_velocity);
    [v.x, v.y, v.z, w.x, w.y, w.z].map(f64::to_bits)
}

#[test]
fn shock_levels_side_by_side_give_the_bits_of_one_after_another() {
    let (bodies_one, rows_one, report_one) = solve_on(1);
    assert!(
        report_one.split_iterations > 0,
        "the scene must exercise the split pass"
    );
    assert!(
        bodies_one.iter().any(|b| b.linear_velocity.length() > 1e-3),
        "the scene must leave something to solve"
    );
    // Enough rows that, on more than one thread, the split pass also runs beside the velocity
    // solve (from 256 rows, pgs.rs).
    assert!(rows_one.len() >= 256, "{} rows", rows_one.len());
    // The load pass ran: `warm` is not the sweeps' impulse.
    let (_, sweeps_rows, _) = solve_with_settings(
        1,
        &SolverSettings {
            carry_loads: false,
            ..SolverSettings::default()
        },
    );
    assert!(rows_one.iter().zip(&sweeps_rows).any(|(a, b)| a.warm != b.warm));
    for threads in [2, 4] {
        let (bodies, rows, report) = solve_on(threads);
        for (k, (one, many)) in bodies_one.iter().zip(&bodies).enumerate() {
            assert_eq!(velocity_bits(one), velocity_bits(many), "body {k} on {threads} threads");
        }
        for (k, (one, many)) in rows_one.iter().zip(&rows).enumerate() {
            assert_eq!(
                one.lambda.to_bits(),
                many.lambda.to_bits(),
                "row {k} on {threads} threads"
            );
            // The wall rests, so `warm` is the load pass's (loads.rs), whose wide levels are
            // solved side by side as well.
            assert_eq!(
                one.warm.to_bits(),
                many.warm.to_bits(),
                "warm of row {k} on {threads} threads"
            );
        }
        for (k, (one, many)) in report_one
            .split_velocities
            .iter()
            .zip(&report.split_velocities)
            .enumerate()
        {
            let bits = |s: &shatter_solver::SplitVelocity| {
                [
                    s.linear.x,
                    s.linear.y,
                    s.linear.z,
                    s.angular.x,
                    s.angular.y,
                    s.angular.z,
                ]
                .map(f64::to_bits)
            };
            assert_eq!(bits(one), bits(many), "split velocity of body {k} on {threads} threads");
        }
        assert_eq!(report_one.scaled_increments, report.scaled_increments);
        assert_eq!(report_one.dropped_increments, report.dropped_increments);
    }
}

/// Whether each body of the wall's solve changed its momentum (linear and angular) by exactly
/// the impulses `felt(row, on_b)` of its rows (`on_b`: the body is the row's side B), from
/// `before` to `after`; the first body that did not, with the figures.
fn momentum_mismatch(
    before: &[SolverBody],
    after: &[SolverBody],
    rows: &[Row],
    felt: impl Fn(&Row, bool) -> f64,
) -> Option<String> {
    for (k, (old, new)) in before.iter().zip(after).enumerate() {
        let (mut impulse, mut angular) = (DVec3::ZERO, DVec3::ZERO);
        for row in rows {
            if row.a as usize == k {
                impulse += row.jacobian.linear_a * felt(row, false);
                angular += row.jacobian.angular_a * felt(row, false);
            }
            if row.b as usize == k {
                impulse += row.jacobian.linear_b * felt(row, true);
                angular += row.jacobian.angular_b * felt(row, true);
            }
        }
        let change = (new.linear_velocity - old.linear_velocity) / old.inverse_mass;
        if (change - impulse).length() > 1e-12 * impulse.length().max(1.0) {
            return Some(format!(
                "body {k}: momentum change {change} N s, rows' impulse {impulse} N s"
            ));
        }
        let spin = new.angular_velocity - old.angular_velocity;
        let expected = old.inverse_inertia * angular;
        if (spin - expected).length() > 1e-12 * expected.length().max(1.0) {
            return Some(format!(
                "body {k}: angular velocity change {spin} rad/s, rows' {expected} rad/s"
            ));
        }
    }
    None
}

/// Side B of a row from a top box of the wall down to a bottom box: the support the shock pass
/// holds still.
fn held(row: &Row, on_b: bool) -> bool {
    on_b && row.a as usize >= BOTTOM
}

/// Without the load pass (`carry_loads: false`), a solve leaves in `warm` the impulses its sweeps
/// reached before the shock pass and in `lambda` the impulses after it. The pass holds each
/// contact's lower body still, so the wall's bottom boxes felt the rows to the boxes above them
/// only up to `warm`, and everything else up to `lambda`: each body's momentum change adds up to
/// exactly that (linear and angular). `exchanged`, what both bodies felt, is `warm` for every
/// row of the wall: each has a side the pass holds (a bottom box under a top one, or the
/// ground). And on a column of five cubes (too few rows for batches,
/// so both solves sweep alike), `warm` is bit for bit the `lambda` of the same solve with the
/// pass turned off.
#[test]
fn shock_levels_warm_is_the_sweeps_impulse_and_lambda_the_shock_pass() {
    let sweeps_warm = SolverSettings {
        carry_loads: false,
        ..SolverSettings::default()
    };
    let (before, _) = wall();
    let (after, rows, _) = solve_with_settings(1, &sweeps_warm);
    assert!(
        rows.iter().any(|row| row.lambda != row.warm),
        "the shock pass must change some impulse"
    );
    let felt = |row: &Row, on_b: bool| if held(row, on_b) { row.warm } else { row.lambda };
    if let Some(mismatch) = momentum_mismatch(&before, &after, &rows, felt) {
        panic!("{mismatch}");
    }
    // Every row of the wall has a side the pass holds (a bottom box under a top one, or the
    // ground), so both felt the sweeps' impulse alone.
    for (k, row) in rows.iter().enumerate() {
        assert!(
            row.a as usize >= BOTTOM || row.b == NO_BODY,
            "row {k} between {} and {}",
            row.a,
            row.b
        );
        assert_eq!(row.exchanged.to_bits(), row.warm.to_bits(), "row {k}");
    }
    let (bodies, rows) = stack(5, 0.5, 0.5, DT);
    let solved = |settings: &SolverSettings| {
        let (mut bodies, mut rows) = (bodies.clone(), rows.clone());
        solve(&mut bodies, &mut rows, DT, settings).unwrap();
        rows
    };
    let with_pass = solved(&sweeps_warm);
    let without = solved(&SolverSettings {
        shock_sweeps: 0,
        ..sweeps_warm
    });
    assert!(with_pass.iter().zip(&without).any(|(a, b)| a.lambda != b.lambda));
    for (k, (a, b)) in with_pass.iter().zip(&without).enumerate() {
        assert_eq!(a.warm.to_bits(), b.lambda.to_bits(), "row {k}");
    }
}

/// With the default settings the load pass writes the loads into `warm`, so `warm` is no longer
/// what the held supports felt; `exchanged` is: each body's momentum change is the rows'
/// `exchanged` on the supports the shock pass held and `lambda` everywhere else, exactly, and
/// the same bookkeeping with `lambda` for the supports too (what contact reports read before
/// `exchanged`: a fracture model took it back from a support that never felt it) does not add
/// up.
#[test]
fn shock_levels_exchanged_is_what_both_bodies_felt() {
    let (before, _) = wall();
    let (after, rows, _) = solve_with_settings(1, &SolverSettings::default());
    let settled = rows.iter().filter(|row| row.exchanged != row.lambda).count();
    assert!(settled > 0, "the shock pass must settle some row");
    assert!(
        rows.iter().any(|row| row.exchanged != row.warm),
        "the loads must differ from the sweeps' impulses somewhere"
    );
    let felt = |row: &Row, on_b: bool| if held(row, on_b) { row.exchanged } else { row.lambda };
    if let Some(mismatch) = momentum_mismatch(&before, &after, &rows, felt) {
        panic!("{mismatch}");
    }
    let total = |row: &Row, _: bool| row.lambda;
    assert!(
        momentum_mismatch(&before, &after, &rows, total).is_some(),
        "the settling must not reach the supports"
    );
}
