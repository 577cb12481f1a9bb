//! Projected Gauss-Seidel: exactness on one row, agreement with a brute-force LCP solve, friction
//! bounds, warm starting, determinism and the refusal of bad input.

mod common;

use common::{GRAVITY, box_on_ground, dynamic_body, resting_box, stack, vec3};
use glam::{DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{
    BiasMode, ContactPoint, Jacobian, NO_BODY, Row, SolverBody, SolverError, SolverSettings, SolverWorkspace,
    contact_rows, solve, solve_with,
};

/// `J v` of a row over `bodies`.
fn row_velocity(bodies: &[SolverBody], row: &Row) -> f64 {
    let side = |index: u32, linear: DVec3, angular: DVec3| {
        bodies
            .get(index as usize)
            .map_or(0.0, |b| linear.dot(b.linear_velocity) + angular.dot(b.angular_velocity))
    };
    side(row.a, row.jacobian.linear_a, row.jacobian.angular_a)
        + side(row.b, row.jacobian.linear_b, row.jacobian.angular_b)
}

fn settings(iterations: usize, tolerance: f64) -> SolverSettings {
    SolverSettings {
        iterations,
        tolerance,
        ..SolverSettings::default()
    }
}

/// An unbounded rigid row reaches `J v = target` in one sweep, whatever the bodies.
#[test]
fn pgs_single_unbounded_row_reaches_target_exactly() {
    let q = DQuat::from_axis_angle(DVec3::new(1.0, -2.0, 0.5).normalize(), 0.9);
    let mut bodies = [
        dynamic_body(
            3.0,
            DVec3::new(1.0, 1.5, 2.0),
            q,
            DVec3::new(1.0, -2.0, 0.3),
            DVec3::new(0.2, 0.1, -3.0),
        ),
        dynamic_body(
            0.7,
            DVec3::new(0.3, 0.4, 0.5),
            q.inverse(),
            DVec3::new(-1.0, 0.0, 2.0),
            DVec3::ONE,
        ),
    ];
    let jacobian = Jacobian {
        linear_a: DVec3::new(0.3, -0.8, 0.5),
        angular_a: DVec3::new(0.1, 0.7, -0.4),
        linear_b: DVec3::new(-0.3, 0.8, -0.5),
        angular_b: DVec3::new(0.9, 0.2, 0.3),
    };
    let mut row = Row::new(0, 1, jacobian);
    row.target_velocity = 1.25;
    let mut rows = [row];
    solve(&mut bodies, &mut rows, 0.01, &settings(1, 0.0)).unwrap();
    let jv = row_velocity(&bodies, &rows[0]);
    assert!((jv - 1.25).abs() <= 1e-14, "J v = {jv}");
    // A Baumgarte error on top: J v = target - ERP phi / h.
    rows[0].position_error = -0.003;
    rows[0].erp = 0.5;
    rows[0].warm = 0.0;
    solve(&mut bodies, &mut rows, 0.01, &settings(1, 0.0)).unwrap();
    let jv = row_velocity(&bodies, &rows[0]);
    assert!((jv - (1.25 + 0.15)).abs() <= 1e-14, "J v = {jv}");
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (n <= 4).
fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-14 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col].clone();
            for (entry, above) in a[row].iter_mut().zip(&pivot_row).skip(col) {
                *entry -= factor * above;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let tail: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    Some(x)
}

/// The boxed LCP `lo <= x <= hi`, `w = b - A x`, with `w = 0` where free, `w <= 0` at `lo`,
/// `w >= 0` at `hi`, solved by enumerating the 3^n active sets.
fn brute_force_lcp(a: &[Vec<f64>], b: &[f64], lo: &[f64], hi: &[f64]) -> Vec<f64> {
    let n = b.len();
    let tolerance = 1e-9;
    for code in 0..3usize.pow(n as u32) {
        let state: Vec<usize> = (0..n).map(|i| code / 3usize.pow(i as u32) % 3).collect();
        let mut x = vec![0.0; n];
        let mut feasible = true;
        for i in 0..n {
            match state[i] {
                0 if lo[i].is_finite() => x[i] = lo[i],
                1 if hi[i].is_finite() => x[i] = hi[i],
                2 => {}
                _ => feasible = false,
            }
        }
        if !feasible {
            continue;
        }
        let free: Vec<usize> = (0..n).filter(|&i| state[i] == 2).collect();
        let sub_a = free.iter().map(|&i| free.iter().map(|&j| a[i][j]).collect()).collect();
        let sub_b = free
            .iter()
            .map(|&i| b[i] - (0..n).filter(|j| state[*j] != 2).map(|j| a[i][j] * x[j]).sum::<f64>())
            .collect();
        let Some(solution) = dense_solve(sub_a, sub_b) else {
            continue;
        };
        for (&i, value) in free.iter().zip(solution) {
            x[i] = value;
        }
        let ok = (0..n).all(|i| {
            let w = b[i] - (0..n).map(|j| a[i][j] * x[j]).sum::<f64>();
            match state[i] {
                0 => w <= tolerance,
                1 => w >= -tolerance,
                _ => x[i] >= lo[i] - tolerance && x[i] <= hi[i] + tolerance,
            }
        });
        if ok {
            return x;
        }
    }
    panic!("no active set solves the LCP");
}

/// A random row between bodies 0, 1 and the world, with bounds of one of four kinds.
fn random_row() -> impl Strategy<Value = Row> {
    (
        0..3usize,
        (vec3(1.0), vec3(1.0), vec3(1.0), vec3(1.0)),
        (0..4usize, 0.1..2.0f64),
        (-2.0..2.0f64, -0.01..0.01f64, 0.1..=1.0f64, 0.02..0.5f64),
    )
        .prop_map(
            |(pair, (la, aa, lb, ab), (bounds, limit), (target, phi, erp, cfm_over_h))| {
                let (a, b) = [(0, 1), (0, NO_BODY), (1, NO_BODY)][pair];
                let mut row = Row::new(
                    a,
                    b,
                    Jacobian {
                        linear_a: la,
                        angular_a: aa,
                        linear_b: lb,
                        angular_b: ab,
                    },
                );
                (row.lower, row.upper) = [
                    (0.0, f64::INFINITY),
                    (f64::NEG_INFINITY, f64::INFINITY),
                    (-limit, limit),
                    (0.0, limit),
                ][bounds];
                row.target_velocity = target;
                row.position_error = phi;
                row.erp = erp;
                row.cfm = cfm_over_h * DT;
                row.bias_mode = BiasMode::Velocity;
                row
            },
        )
}

const DT: f64 = 0.01;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After many sweeps the PGS impulses solve the boxed LCP of Li 2018 eq. 2 (with CFM / h on the
    /// diagonal): they match the brute-force enumeration of active sets, and the final velocities
    /// satisfy complementarity row by row.
    #[test]
    fn pgs_matches_brute_force_lcp(
        masses in (0.5..5.0f64, 0.5..5.0f64),
        inertia in (vec3(0.5), vec3(0.5)),
        rotations in (vec3(3.0), vec3(3.0)),
        velocities in (vec3(2.0), vec3(2.0), vec3(2.0), vec3(2.0)),
        rows in prop::collection::vec(random_row(), 2..=4),
    ) {
        let moments = |v: DVec3| DVec3::splat(1.5) + v; // in [1, 2]: a valid inertia
        let mut bodies = [
            dynamic_body(masses.0, moments(inertia.0), DQuat::from_scaled_axis(rotations.0), velocities.0, velocities.1),
            dynamic_body(masses.1, moments(inertia.1), DQuat::from_scaled_axis(rotations.1), velocities.2, velocities.3),
        ];
        let initial = bodies;
        let mut rows = rows;
        let n = rows.len();

        // The dense LCP: A = J M^-1 J^T + diag(CFM / h), b = target - ERP phi / h - J v.
        let response = |row: &Row, side: usize| -> (DVec3, DVec3) {
            let (index, linear, angular) = if side == 0 {
                (row.a, row.jacobian.linear_a, row.jacobian.angular_a)
            } else {
                (row.b, row.jacobian.linear_b, row.jacobian.angular_b)
            };
            match initial.get(index as usize) {
                Some(b) => (linear * b.inverse_mass, b.inverse_inertia * angular),
                None => (DVec3::ZERO, DVec3::ZERO),
            }
        };
        let mut a = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                for (side_j, body_j) in [(0, rows[j].a), (1, rows[j].b)] {
                    let (lin, ang) = response(&rows[j], side_j);
                    for (body_i, li, ai) in [
                        (rows[i].a, rows[i].jacobian.linear_a, rows[i].jacobian.angular_a),
                        (rows[i].b, rows[i].jacobian.linear_b, rows[i].jacobian.angular_b),
                    ] {
                        if body_i == body_j && body_i != NO_BODY {
                            a[i][j] += li.dot(lin) + ai.dot(ang);
                        }
                    }
                }
            }
            a[i][i] += rows[i].cfm / DT;
        }
        let b: Vec<f64> = rows
            .iter()
            .map(|r| r.target_velocity - r.erp * r.position_error / DT - row_velocity(&initial, r))
            .collect();
        let lo: Vec<f64> = rows.iter().map(|r| r.lower).collect();
        let hi: Vec<f64> = rows.iter().map(|r| r.upper).collect();
        let expected = brute_force_lcp(&a, &b, &lo, &hi);

        let solver = SolverSettings { iterations: 20_000, tolerance: 1e-13, warm_start: false, ..SolverSettings::default() };
        let report = solve(&mut bodies, &mut rows, DT, &solver).unwrap();
        let scale = 1.0 + expected.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (i, row) in rows.iter().enumerate() {
            prop_assert!((row.lambda - expected[i]).abs() <= 1e-7 * scale,
                "row {i}: PGS {} vs brute force {} after {} sweeps", row.lambda, expected[i], report.iterations);
            let w = row.target_velocity - row.erp * row.position_error / DT - row_velocity(&bodies, row)
                - row.cfm / DT * row.lambda;
            let at_lower = row.lambda <= row.lower + 1e-9 * scale;
            let at_upper = row.lambda >= row.upper - 1e-9 * scale;
            prop_assert!(row.lambda >= row.lower && row.lambda <= row.upper);
            prop_assert!(at_lower || at_upper || w.abs() <= 1e-7 * scale, "row {i}: free with residual {w}");
            prop_assert!(!at_lower || at_upper || w <= 1e-7 * scale, "row {i}: at lower with residual {w}");
            prop_assert!(!at_upper || at_lower || w >= -1e-7 * scale, "row {i}: at upper with residual {w}");
        }
    }
}

/// A box sliding on the static ground at speed 3 m/s: each friction row saturates, so the tangential
/// impulse is mu times the normal impulse and the box loses exactly `mu g h` of speed.
#[test]
fn pgs_friction_sliding_box_loses_mu_g_h() {
    let (dt, mu, mass) = (1.0 / 60.0, 0.4, 2.0);
    let half = DVec3::splat(0.5);
    let mut bodies = [resting_box(mass, half)];
    bodies[0].linear_velocity = DVec3::new(3.0, 0.0, 0.0) + GRAVITY * dt;
    let mut rows = Vec::new();
    let normals = box_on_ground(&mut rows, &bodies, 0, half, 0.0, mu, dt);
    solve(&mut bodies, &mut rows, dt, &settings(500, 1e-13)).unwrap();
    let normal: f64 = normals.iter().map(|&i| rows[i as usize].lambda).sum();
    let along_x: f64 = normals.iter().map(|&i| rows[i as usize + 1].lambda).sum();
    let along_z: f64 = normals.iter().map(|&i| rows[i as usize + 2].lambda).sum();
    let g = -GRAVITY.y;
    assert!((normal - mass * g * dt).abs() <= 1e-9, "normal impulse {normal}");
    assert!(
        (along_x + mu * normal).abs() <= 1e-9,
        "friction {along_x} vs -mu N = {}",
        -mu * normal
    );
    assert!(along_z.abs() <= 1e-12);
    let v = bodies[0].linear_velocity;
    assert!((v.x - (3.0 - mu * g * dt)).abs() <= 1e-9, "v = {v}");
    assert!(v.y.abs() <= 1e-9 && bodies[0].angular_velocity.length() <= 1e-9);
}

/// With a large coefficient the same box stops within the step, and friction stays inside its bounds.
#[test]
fn pgs_friction_stops_box_when_mu_large() {
    let (dt, mu, mass) = (1.0 / 60.0, 5.0, 2.0);
    let half = DVec3::splat(0.5);
    let mut bodies = [resting_box(mass, half)];
    bodies[0].linear_velocity = DVec3::new(0.05, 0.0, -0.02) + GRAVITY * dt;
    let mut rows = Vec::new();
    let normals = box_on_ground(&mut rows, &bodies, 0, half, 0.0, mu, dt);
    solve(&mut bodies, &mut rows, dt, &settings(500, 1e-13)).unwrap();
    assert!(
        bodies[0].linear_velocity.length() <= 1e-9,
        "v = {}",
        bodies[0].linear_velocity
    );
    assert!(bodies[0].angular_velocity.length() <= 1e-9);
    for &i in &normals {
        let n = rows[i as usize].lambda;
        for t in 1..=2 {
            assert!(rows[i as usize + t].lambda.abs() <= mu * n + 1e-12);
        }
    }
}

/// The pyramid: sliding along a diagonal of the tangent basis, both rows saturate and friction takes
/// `sqrt(2) mu g h` of speed; with the first tangent along the sliding direction it takes exactly
/// `mu g h`, as the Coulomb cone would.
#[test]
fn pgs_friction_pyramid_versus_sliding_aligned_tangent() {
    let (dt, mu, mass) = (1.0 / 60.0, 0.3, 1.0);
    let half = DVec3::splat(0.5);
    let direction = DVec3::new(1.0, 0.0, 1.0).normalize();
    let g = -GRAVITY.y;
    for (aligned, expected_loss) in [(false, 2f64.sqrt() * mu * g * dt), (true, mu * g * dt)] {
        let mut bodies = [resting_box(mass, half)];
        bodies[0].linear_velocity = direction * 2.0 + GRAVITY * dt;
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0, half, 0.0, mu, dt);
        if aligned {
            rows.clear();
            for corner in common::bottom_corners(half) {
                let mut contact = ContactPoint::new(0, NO_BODY, corner, corner, DVec3::Y, 0.0, mu);
                contact.friction_direction = Some(direction);
                shatter_solver::push_contact_rows(&mut rows, &bodies, &contact, dt).unwrap();
            }
        }
        solve(&mut bodies, &mut rows, dt, &settings(500, 1e-13)).unwrap();
        let speed = bodies[0].linear_velocity.dot(direction);
        assert!(
            (2.0 - speed - expected_loss).abs() <= 1e-9,
            "aligned {aligned}: speed {speed}"
        );
    }
}

/// Warm starting from last step's impulses: a resting stack re-solved every step converges in far
/// fewer sweeps than from zero, to the same support (the stack's weight on the ground).
#[test]
fn pgs_warm_start_reduces_iterations() {
    // Three boxes with friction: from zero, PGS needs several hundred sweeps to 1e-10 m/s.
    let (dt, count) = (1.0 / 60.0, 3);
    let run = |warm: bool| {
        let (template, mut rows) = stack(count, 0.5, 0.5, dt);
        let solver = SolverSettings {
            iterations: 5000,
            tolerance: 1e-10,
            warm_start: warm,
            ..SolverSettings::default()
        };
        let mut sweeps = Vec::new();
        for _ in 0..10 {
            // The stack rests: every step starts from the velocities gravity gives it.
            let mut bodies = template.clone();
            let report = solve(&mut bodies, &mut rows, dt, &solver).unwrap();
            // The warm start of a stack, taken as one impulse, never has to be cut back.
            assert_eq!((report.scaled_increments, report.dropped_increments), (0, 0));
            sweeps.push(report.iterations);
        }
        let support: f64 = (0..4).map(|c| rows[3 * c].lambda).sum();
        (sweeps, support)
    };
    let (cold, cold_support) = run(false);
    let (warm, warm_support) = run(true);
    let weight = count as f64 * -GRAVITY.y * dt;
    assert!((cold_support - weight).abs() <= 1e-9 && (warm_support - weight).abs() <= 1e-9);
    assert!(cold.iter().all(|&n| n < 5000), "cold solves must converge: {cold:?}");
    assert_eq!(warm[0], cold[0], "the first step has nothing to warm-start from");
    let (cold_last, warm_last) = (cold[9], warm[9]);
    assert!(warm_last * 5 <= cold_last, "warm {warm:?} vs cold {cold:?}");
}

/// The same input gives the same bits.
#[test]
fn pgs_same_input_same_bits() {
    let dt = 1.0 / 60.0;
    let (template, rows) = stack(8, 0.5, 0.6, dt);
    let run = || {
        let mut bodies = template.clone();
        let mut rows = rows.clone();
        bodies[3].angular_velocity = DVec3::new(0.3, -0.2, 0.1);
        solve(&mut bodies, &mut rows, dt, &SolverSettings::default()).unwrap();
        let mut bits: Vec<u64> = rows.iter().map(|r| r.lambda.to_bits()).collect();
        for b in &bodies {
            bits.extend(b.linear_velocity.to_array().map(f64::to_bits));
            bits.extend(b.angular_velocity.to_array().map(f64::to_bits));
        }
        bits
    };
    assert_eq!(run(), run());
}

/// A workspace that solved something else before (a taller stack, more rows and bodies) gives the
/// same bits as a fresh solve: it lends memory, not state.
#[test]
fn pgs_reused_workspace_gives_the_same_bits() {
    let dt = 1.0 / 30.0;
    let bits = |bodies: &[SolverBody], rows: &[Row]| {
        let mut bits: Vec<u64> = rows.iter().map(|r| r.lambda.to_bits()).collect();
        for b in bodies {
            bits.extend(b.linear_velocity.to_array().map(f64::to_bits));
            bits.extend(b.angular_velocity.to_array().map(f64::to_bits));
        }
        bits
    };
    let (small_bodies, small_rows) = stack(3, 0.5, 0.4, dt);
    let (mut fresh_bodies, mut fresh_rows) = (small_bodies.clone(), small_rows.clone());
    fresh_bodies[1].angular_velocity = DVec3::new(0.2, 0.1, -0.3);
    let fresh_report = solve(&mut fresh_bodies, &mut fresh_rows, dt, &SolverSettings::default()).unwrap();
    let mut workspace = SolverWorkspace::default();
    let (mut big_bodies, mut big_rows) = stack(9, 0.5, 0.8, dt);
    big_bodies[4].linear_velocity = DVec3::new(1.0, -2.0, 0.5);
    solve_with(
        &mut workspace,
        &mut big_bodies,
        &mut big_rows,
        dt,
        &SolverSettings::default(),
    )
    .unwrap();
    let (mut reused_bodies, mut reused_rows) = (small_bodies.clone(), small_rows.clone());
    reused_bodies[1].angular_velocity = DVec3::new(0.2, 0.1, -0.3);
    let reused_report = solve_with(
        &mut workspace,
        &mut reused_bodies,
        &mut reused_rows,
        dt,
        &SolverSettings::default(),
    )
    .unwrap();
    assert_eq!(bits(&fresh_bodies, &fresh_rows), bits(&reused_bodies, &reused_rows));
    assert_eq!(fresh_report.split_velocities, reused_report.split_velocities);
    assert_eq!(fresh_report.iterations, reused_report.iterations);
    assert!(fresh_bodies != small_bodies, "the solve did something");
}

/// Kinematic bodies keep their prescribed velocities bit for bit; a rising platform lifts the box on
/// it (the energy clamp measures in the platform's frame).
#[test]
fn pgs_kinematic_body_velocity_untouched() {
    let dt = 1.0 / 60.0;
    let half = DVec3::splat(0.5);
    let platform = SolverBody::kinematic(DVec3::new(-0.0, 0.5, 0.0), DVec3::ZERO);
    let mut bodies = [resting_box(1.0, half), platform];
    bodies[0].linear_velocity = GRAVITY * dt;
    let mut rows = Vec::new();
    for corner in common::bottom_corners(half) {
        let contact = ContactPoint::new(0, 1, corner, corner, DVec3::Y, 0.0, 1.0);
        shatter_solver::push_contact_rows(&mut rows, &bodies, &contact, dt).unwrap();
    }
    solve(&mut bodies, &mut rows, dt, &settings(200, 1e-12)).unwrap();
    assert_eq!(bodies[1].linear_velocity.x.to_bits(), (-0.0f64).to_bits());
    assert_eq!(bodies[1], platform);
    assert!((bodies[0].linear_velocity - DVec3::new(0.0, 0.5, 0.0)).length() <= 1e-9);
}

/// Every kind of bad input is refused with a message naming it, and nothing is modified.
#[test]
fn pgs_rejects_bad_input_and_leaves_it_unchanged() {
    let dt = 1.0 / 60.0;
    let half = DVec3::splat(0.5);
    let mut base_bodies = vec![resting_box(1.0, half), resting_box(2.0, half)];
    base_bodies[0].linear_velocity = DVec3::new(0.1, -0.2, 0.0);
    let mut base_rows = Vec::new();
    box_on_ground(&mut base_rows, &base_bodies, 0, half, 0.01, 0.5, dt);
    base_rows.push(Row::new(0, 1, Jacobian::linear(DVec3::X, DVec3::Y, -DVec3::Y)));
    for row in &mut base_rows {
        row.warm = 0.1;
    }
    let joint = base_rows.len() - 1;
    type Edit = Box<dyn Fn(&mut Vec<SolverBody>, &mut Vec<Row>, &mut f64, &mut SolverSettings)>;
    let cases: Vec<(Edit, &[&str])> = vec![
        (
            Box::new(|b, _, _, _| b[0].linear_velocity.y = f64::NAN),
            &["body 0", "linear velocity", "NaN"],
        ),
        (
            Box::new(|b, _, _, _| b[1].angular_velocity.x = f64::INFINITY),
            &["body 1", "angular velocity"],
        ),
        (
            Box::new(|b, _, _, _| b[1].inverse_mass = -0.5),
            &["body 1", "inverse mass", "-0.5"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].cfm = -1.0),
            &["row 12", "cfm", "-1"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].erp = 0.0),
            &["row 12", "erp", "0.0"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].erp = 1.5),
            &["row 12", "erp", "1.5"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].erp = f64::NAN),
            &["row 12", "erp", "NaN"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].a = 7),
            &["row 12", "body a", "7", "only 2"],
        ),
        (Box::new(move |_, r, _, _| r[joint].b = 0), &["row 12", "bodies"]),
        (
            Box::new(move |_, r, _, _| (r[joint].lower, r[joint].upper) = (1.0, 0.5)),
            &["row 12", "bounds"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].position_error = f64::NAN),
            &["row 12", "position error"],
        ),
        (
            Box::new(move |_, r, _, _| r[joint].jacobian.linear_a.x = f64::NAN),
            &["row 12", "jacobian"],
        ),
        (Box::new(|_, r, _, _| r[1].warm = f64::NAN), &["row 1", "warm"]),
        (
            Box::new(|_, r, _, _| r[1].friction.as_mut().unwrap().normal_row = 99),
            &["row 1", "friction normal row", "99"],
        ),
        (
            Box::new(|_, r, _, _| r[1].friction.as_mut().unwrap().normal_row = 2),
            &["row 1", "friction normal row"],
        ),
        (
            Box::new(|_, r, _, _| r[1].friction.as_mut().unwrap().coefficient = -0.1),
            &["row 1", "friction coefficient"],
        ),
        (Box::new(|_, _, dt, _| *dt = 0.0), &["time step", "0"]),
        (Box::new(|_, _, dt, _| *dt = -0.01), &["time step", "-0.01"]),
        (Box::new(|_, _, dt, _| *dt = f64::NAN), &["time step", "NaN"]),
        (
            Box::new(|_, _, _, s| s.max_split_velocity = 0.0),
            &["max split velocity"],
        ),
        (Box::new(|_, _, _, s| s.tolerance = f64::NAN), &["tolerance"]),
    ];
    // The same rows followed by enough valid ones that the rows are checked on the pool: the same
    // errors, naming the same rows.
    let mut large_rows = base_rows.clone();
    while large_rows.len() < 600 {
        box_on_ground(&mut large_rows, &base_bodies, 1, half, 0.01, 0.5, dt);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for (edit, words) in cases {
        for base in [&base_rows, &large_rows] {
            let (mut bodies, mut rows, mut step, mut solver) =
                (base_bodies.clone(), base.clone(), dt, SolverSettings::default());
            edit(&mut bodies, &mut rows, &mut step, &mut solver);
            let (bodies_before, rows_before) = (format!("{bodies:?}"), format!("{rows:?}"));
            let message = pool
                .install(|| solve(&mut bodies, &mut rows, step, &solver))
                .unwrap_err()
                .to_string();
            for word in words {
                assert!(message.contains(word), "{message:?} lacks {word:?}");
            }
            assert_eq!(format!("{bodies:?}"), bodies_before, "{message}: bodies modified");
            assert_eq!(format!("{rows:?}"), rows_before, "{message}: rows modified");
        }
    }
    solve(
        &mut base_bodies.clone(),
        &mut large_rows,
        dt,
        &SolverSettings::default(),
    )
    .unwrap();
    // The unedited scene solves, and so does an empty island.
    solve(&mut base_bodies, &mut base_rows, dt, &SolverSettings::default()).unwrap();
    let empty = solve(&mut [], &mut [], dt, &SolverSettings::default()).unwrap();
    assert!(empty.split_velocities.is_empty());
}

/// Finite input whose arithmetic overflows is reported as divergence and written nowhere.
#[test]
fn pgs_overflow_is_reported_and_not_written_back() {
    let mut bodies = [dynamic_body(
        1e-300,
        DVec3::ONE,
        DQuat::IDENTITY,
        DVec3::new(1e300, 0.0, 0.0),
        DVec3::ZERO,
    )];
    let mut rows = [Row::new(
        0,
        NO_BODY,
        Jacobian::linear(DVec3::X * 1e300, DVec3::ZERO, DVec3::ZERO),
    )];
    let (bodies_before, rows_before) = (bodies, rows);
    let error = solve(&mut bodies, &mut rows, 0.01, &SolverSettings::default()).unwrap_err();
    assert!(matches!(error, SolverError::Diverged { .. }), "{error}");
    assert_eq!(bodies, bodies_before);
    assert_eq!(rows, rows_before);
}

/// The warm start bounds a friction row by its normal row's incoming impulse wherever the rows
/// stand: a sliding box's contact listed friction first gets the same warm start as listed normal
/// first (friction cut to `mu` times the normal's warm impulse), and a bound taken from a normal
/// row not yet warm-started (zero) would drop the friction instead.
#[test]
fn pgs_warm_start_bounds_friction_listed_before_its_normal_row() {
    let dt = 1.0 / 60.0;
    let mut template = [resting_box(1.0, DVec3::splat(0.5))];
    template[0].linear_velocity = DVec3::new(1.0, -0.5, 0.2);
    let contact = ContactPoint::new(0, NO_BODY, DVec3::new(0.1, -0.5, 0.0), DVec3::ZERO, DVec3::Y, 0.0, 0.5);
    let warm = [0.3, -5.0, 5.0];
    // Only the warm start: no sweeps.
    let settings = SolverSettings {
        iterations: 0,
        ..SolverSettings::default()
    };
    let run = |friction_first: bool| {
        let mut bodies = template;
        let normal_row = if friction_first { 2 } else { 0 };
        let [normal, t1, t2] = contact_rows(&bodies, &contact, normal_row, dt).unwrap();
        let mut rows = if friction_first {
            vec![t1, t2, normal]
        } else {
            vec![normal, t1, t2]
        };
        let order: [usize; 3] = if friction_first { [2, 0, 1] } else { [0, 1, 2] };
        for (&index, &lambda) in order.iter().zip(&warm) {
            rows[index].warm = lambda;
        }
        let report = solve(&mut bodies, &mut rows, dt, &settings).unwrap();
        assert_eq!((report.scaled_increments, report.dropped_increments), (0, 0));
        (order.map(|index| rows[index].lambda), bodies[0])
    };
    let (normal_first, body_a) = run(false);
    let (friction_first, body_b) = run(true);
    assert_eq!(normal_first, [0.3, -0.15, 0.15]);
    assert_eq!(friction_first, normal_first);
    assert!((body_a.linear_velocity - body_b.linear_velocity).length() <= 1e-15);
    assert!((body_a.angular_velocity - body_b.angular_velocity).length() <= 1e-15);
}
