//! Split impulses: penetration is removed by pseudo velocities (`ERP * depth` per step) that never
//! reach the real velocities.

mod common;

use common::{GRAVITY, box_on_ground, linear_momentum, resting_box};
use glam::DVec3;
use shatter_solver::{ContactPoint, NO_BODY, SolverSettings, push_contact_rows, solve};

const DT: f64 = 1.0 / 60.0;
const HALF: DVec3 = DVec3::splat(0.5);

fn converged() -> SolverSettings {
    SolverSettings {
        iterations: 200,
        split_iterations: 200,
        tolerance: 1e-13,
        ..SolverSettings::default()
    }
}

/// A box at rest, 1 cm into the ground, no gravity: the split pass gives it the pseudo velocity that
/// removes ERP * depth in one step, and its real velocity and contact impulses stay exactly zero.
#[test]
fn split_resting_penetrated_body_pushed_out_by_erp_depth() {
    let depth = 0.01;
    let mut bodies = [resting_box(1.0, HALF)];
    let mut rows = Vec::new();
    box_on_ground(&mut rows, &bodies, 0, HALF, depth, 0.5, DT);
    let report = solve(&mut bodies, &mut rows, DT, &converged()).unwrap();
    assert_eq!(bodies[0].linear_velocity, DVec3::ZERO);
    assert_eq!(bodies[0].angular_velocity, DVec3::ZERO);
    assert!(rows.iter().all(|r| r.lambda == 0.0));
    let pseudo = report.split_velocities[0];
    let correction = pseudo.linear.y * DT;
    assert!(
        (correction - 0.2 * depth).abs() <= 1e-12,
        "moved {correction} m, expected {}",
        0.2 * depth
    );
    assert!(pseudo.linear.x.abs() + pseudo.linear.z.abs() + pseudo.angular.length() <= 1e-12);
}

/// The same box under gravity: the velocity solve supports its weight (real velocity zero, support
/// m g h) and the split pass still removes ERP * depth.
#[test]
fn split_with_gravity_supports_weight_and_corrects_depth() {
    let depth = 0.004;
    let mut bodies = [resting_box(3.0, HALF)];
    bodies[0].linear_velocity = GRAVITY * DT;
    let mut rows = Vec::new();
    let normals = box_on_ground(&mut rows, &bodies, 0, HALF, depth, 0.5, DT);
    let report = solve(&mut bodies, &mut rows, DT, &converged()).unwrap();
    assert!(bodies[0].linear_velocity.length() <= 1e-10);
    let support: f64 = normals.iter().map(|&i| rows[i as usize].lambda).sum();
    assert!((support - 3.0 * -GRAVITY.y * DT).abs() <= 1e-9);
    assert!((report.split_velocities[0].linear.y * DT - 0.2 * depth).abs() <= 1e-12);
}

/// Deep penetration asks for more than `max_split_velocity`: the pseudo velocity is capped.
#[test]
fn split_pseudo_velocity_capped_by_max_split_velocity() {
    let mut bodies = [resting_box(1.0, HALF)];
    let mut rows = Vec::new();
    // 0.2 * 0.5 m / (1/60 s) = 6 m/s asked; 2 m/s allowed.
    box_on_ground(&mut rows, &bodies, 0, HALF, 0.5, 0.5, DT);
    let settings = SolverSettings {
        max_split_velocity: 2.0,
        ..converged()
    };
    let report = solve(&mut bodies, &mut rows, DT, &settings).unwrap();
    assert!((report.split_velocities[0].linear.y - 2.0).abs() <= 1e-12);
    assert_eq!(bodies[0].linear_velocity, DVec3::ZERO);
}

/// A speculative contact (a gap, negative depth) lets the body approach by exactly the gap in the
/// step and no further, and does not touch a body that will not close the gap.
#[test]
fn split_speculative_gap_allows_exact_approach() {
    let gap = 0.01;
    for (speed, expected) in [(1.0, gap / DT), (0.3, 0.3)] {
        let mut bodies = [resting_box(1.0, HALF)];
        bodies[0].linear_velocity.y = -speed;
        let mut rows = Vec::new();
        let contact = ContactPoint::new(0, NO_BODY, DVec3::ZERO, DVec3::ZERO, DVec3::Y, -gap, 0.0);
        push_contact_rows(&mut rows, &bodies, &contact, DT).unwrap();
        let report = solve(&mut bodies, &mut rows, DT, &converged()).unwrap();
        assert!(
            (bodies[0].linear_velocity.y + expected).abs() <= 1e-12,
            "v = {}",
            bodies[0].linear_velocity
        );
        assert_eq!(report.split_velocities[0].linear, DVec3::ZERO);
    }
}

/// Stepping positions by `(v + u) h`, the penetration decays as `(1 - ERP)^n` while the real
/// velocity stays zero: the box is pushed out without ever being given kinetic energy.
#[test]
fn split_penetration_decays_geometrically_without_velocity() {
    let mut depth: f64 = 0.02;
    let initial = depth;
    for step in 1..=30 {
        let mut bodies = [resting_box(1.0, HALF)];
        bodies[0].linear_velocity = GRAVITY * DT;
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0, HALF, depth, 0.5, DT);
        let report = solve(&mut bodies, &mut rows, DT, &converged()).unwrap();
        let v = bodies[0].linear_velocity.y;
        assert!(v.abs() <= 1e-10, "step {step}: real velocity {v}");
        depth -= (v + report.split_velocities[0].linear.y) * DT;
        let expected = initial * 0.8f64.powi(step);
        assert!(
            (depth - expected).abs() <= 1e-11,
            "step {step}: depth {depth} vs {expected}"
        );
    }
}

/// Between two dynamic bodies the pseudo impulses are equal and opposite: pseudo momentum is zero.
#[test]
fn split_between_two_bodies_has_zero_pseudo_momentum() {
    let mut bodies = [resting_box(1.0, HALF), resting_box(4.0, HALF)];
    let mut rows = Vec::new();
    for corner in common::bottom_corners(HALF) {
        let above = corner + DVec3::new(0.0, 1.0 - 0.01, 0.0);
        let contact = ContactPoint::new(0, 1, corner, above, DVec3::Y, 0.01, 0.5);
        push_contact_rows(&mut rows, &bodies, &contact, DT).unwrap();
    }
    let report = solve(&mut bodies, &mut rows, DT, &converged()).unwrap();
    let pseudo: Vec<_> = report.split_velocities.iter().collect();
    let momentum = pseudo[0].linear * 1.0 + pseudo[1].linear * 4.0;
    assert!(momentum.length() <= 1e-12, "pseudo momentum {momentum}");
    // The separation closes by ERP * depth: (u_0 - u_1) h = 0.2 * 0.01.
    assert!(((pseudo[0].linear.y - pseudo[1].linear.y) * DT - 0.002).abs() <= 1e-12);
    assert_eq!(linear_momentum(&bodies), DVec3::ZERO);
}

/// Zero split sweeps disable the pass: no pseudo velocity at all.
#[test]
fn split_disabled_with_zero_iterations() {
    let mut bodies = [resting_box(1.0, HALF)];
    let mut rows = Vec::new();
    box_on_ground(&mut rows, &bodies, 0, HALF, 0.05, 0.5, DT);
    let settings = SolverSettings {
        split_iterations: 0,
        ..converged()
    };
    let report = solve(&mut bodies, &mut rows, DT, &settings).unwrap();
    assert_eq!(report.split_iterations, 0);
    assert_eq!(report.split_velocities[0].linear, DVec3::ZERO);
}

/// A penetration whose push `ERP depth / h` is no larger than the tolerance the sweeps stop at is
/// round-off of the depth: no split sweep runs and the pseudo velocity is exactly zero. Ten times
/// the depth whose push is the tolerance, the pass runs and removes `ERP * depth`.
#[test]
fn split_push_within_the_tolerance_runs_no_split_pass() {
    let settings = SolverSettings {
        tolerance: 1e-9,
        ..converged()
    };
    // ERP 0.2: the depth whose push is the tolerance.
    let edge = settings.tolerance * DT / 0.2;
    for (depth, runs) in [(0.99 * edge, false), (10.0 * edge, true)] {
        let mut bodies = [resting_box(1.0, HALF)];
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0, HALF, depth, 0.5, DT);
        let report = solve(&mut bodies, &mut rows, DT, &settings).unwrap();
        let pseudo = report.split_velocities[0];
        if runs {
            assert!(report.split_iterations > 0, "depth {depth} m: no split sweep ran");
            let correction = pseudo.linear.y * DT;
            assert!(
                (correction - 0.2 * depth).abs() <= 1e-3 * 0.2 * depth,
                "depth {depth} m: moved {correction} m, expected {}",
                0.2 * depth
            );
        } else {
            assert_eq!(report.split_iterations, 0, "depth {depth} m: split sweeps ran");
            assert_eq!((pseudo.linear, pseudo.angular), (DVec3::ZERO, DVec3::ZERO));
        }
        assert_eq!(bodies[0].linear_velocity, DVec3::ZERO);
    }
}
