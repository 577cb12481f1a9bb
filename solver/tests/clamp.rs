//! Energy clamping of contact rows (Su 2009 section 3.2): kinetic energy never grows, momentum is
//! conserved, and the warm start and Baumgarte pushes are scaled or dropped as the paper's cases say.

mod common;

use common::{
    GRAVITY, angular_momentum, box_on_ground, dynamic_body, kinetic_energy, linear_momentum, resting_box, unit, vec3,
};
use glam::{DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{BiasMode, ContactPoint, NO_BODY, Row, SolverBody, SolverSettings, push_contact_rows, solve};

/// A random dynamic body: mass, principal moments (a valid inertia), orientation, velocities.
fn body() -> impl Strategy<Value = SolverBody> {
    (0.2..5.0f64, vec3(0.5), vec3(3.0), vec3(3.0), vec3(3.0)).prop_map(|(mass, moments, rotation, v, w)| {
        dynamic_body(
            mass,
            DVec3::splat(1.5) + moments,
            DQuat::from_scaled_axis(rotation),
            v,
            w,
        )
    })
}

/// Everything random about one contact but its bodies and arms.
#[derive(Clone, Debug)]
struct ContactDraw {
    normal: DVec3,
    point: DVec3,
    depth: f64,
    mu: f64,
    warm: (f64, f64, f64),
    target: f64,
    baumgarte: bool,
    erp: f64,
}

fn contact_draw() -> impl Strategy<Value = ContactDraw> {
    (
        unit(),
        vec3(1.0),
        -0.05..0.05f64,
        0.0..1.5f64,
        (0.0..5.0f64, -3.0..3.0f64, -3.0..3.0f64),
        prop_oneof![Just(0.0), 0.0..2.0f64],
        any::<bool>(),
        0.05..=1.0f64,
    )
        .prop_map(|(normal, point, depth, mu, warm, target, baumgarte, erp)| ContactDraw {
            normal,
            point,
            depth,
            mu,
            warm,
            target,
            baumgarte,
            erp,
        })
}

/// Pushes the rows of `draw` between `a` and `b` whose centres of mass are at `x_a`, `x_b`: random
/// warm-start impulses, a motor-like target on the normal row (which the clamp must stop from adding
/// energy) and, for some contacts, a Baumgarte bias in the velocity solve instead of the split pass.
fn push(rows: &mut Vec<Row>, bodies: &[SolverBody], draw: &ContactDraw, a: u32, b: u32, x_a: DVec3, x_b: DVec3) {
    let mut contact = ContactPoint::new(
        a,
        b,
        draw.point - x_a,
        draw.point - x_b,
        draw.normal,
        draw.depth,
        draw.mu,
    );
    contact.softness = shatter_solver::Softness::rigid(draw.erp);
    let normal = push_contact_rows(rows, bodies, &contact, 1.0 / 60.0).unwrap() as usize;
    rows[normal].warm = draw.warm.0;
    rows[normal + 1].warm = draw.warm.1;
    rows[normal + 2].warm = draw.warm.2;
    rows[normal].target_velocity = draw.target;
    if draw.baumgarte {
        rows[normal].bias_mode = BiasMode::Velocity;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Two dynamic bodies and a static one, random clamped contacts among them and with the world:
    /// the kinetic energy after the solve never exceeds the energy before.
    #[test]
    fn clamp_kinetic_energy_never_grows(
        a in body(), b in body(),
        contacts in prop::collection::vec((0..4usize, contact_draw()), 1..8),
        iterations in 0..30usize,
    ) {
        let mut bodies = vec![a, b, SolverBody::STATIC];
        let mut rows = Vec::new();
        for (pair, draw) in &contacts {
            let (i, j) = [(0, 1), (0, 2), (1, 2), (1, NO_BODY)][*pair];
            push(&mut rows, &bodies, draw, i, j, DVec3::ZERO, DVec3::ONE);
        }
        let before = kinetic_energy(&bodies);
        let settings = SolverSettings { iterations, ..SolverSettings::default() };
        let report = solve(&mut bodies, &mut rows, 1.0 / 60.0, &settings).unwrap();
        let after = kinetic_energy(&bodies);
        prop_assert!(after <= before * (1.0 + 1e-12), "energy {before} -> {after} ({report:?})");
    }

    /// Contacts between two dynamic bodies only: linear momentum and angular momentum about the
    /// origin are conserved to round-off, and the energy does not grow.
    #[test]
    fn clamp_momentum_conserved_between_two_bodies(
        a in body(), b in body(), x_a in vec3(2.0), x_b in vec3(2.0),
        contacts in prop::collection::vec(contact_draw(), 1..8),
        iterations in 0..30usize,
    ) {
        let mut bodies = vec![a, b];
        let mut rows = Vec::new();
        for draw in &contacts {
            push(&mut rows, &bodies, draw, 0, 1, x_a, x_b);
        }
        let positions = [x_a, x_b];
        let (p0, l0, e0) = (linear_momentum(&bodies), angular_momentum(&bodies, &positions), kinetic_energy(&bodies));
        let settings = SolverSettings { iterations, ..SolverSettings::default() };
        solve(&mut bodies, &mut rows, 1.0 / 60.0, &settings).unwrap();
        let (p1, l1, e1) = (linear_momentum(&bodies), angular_momentum(&bodies, &positions), kinetic_energy(&bodies));
        let impulse: f64 = rows.iter().map(|r| r.lambda.abs()).sum();
        let scale = 1.0 + impulse + bodies.iter().map(|b| b.linear_velocity.length() / b.inverse_mass).sum::<f64>();
        prop_assert!((p1 - p0).length() <= 1e-12 * scale, "linear momentum {p0} -> {p1}");
        prop_assert!((l1 - l0).length() <= 1e-11 * scale * (1.0 + x_a.length() + x_b.length()),
            "angular momentum {l0} -> {l1}");
        prop_assert!(e1 <= e0 * (1.0 + 1e-12), "energy {e0} -> {e1}");
    }
}

/// Enough sweeps for a box's four corner contacts with friction to converge to 1e-12 m/s.
fn converged() -> SolverSettings {
    SolverSettings {
        iterations: 200,
        tolerance: 1e-12,
        ..SolverSettings::default()
    }
}

/// One body falling onto the ground at 0.1 m/s, its contact warm-started with ten times the plastic
/// impulse: Su's factor scales the warm start to the elastic impulse, so the body leaves at exactly
/// 0.1 m/s (no energy gained), and the report counts the scaled increment.
#[test]
fn clamp_warm_start_scaled_to_elastic_bounce() {
    let mut bodies = [resting_box(1.0, DVec3::splat(0.5))];
    bodies[0].linear_velocity = DVec3::new(0.0, -0.1, 0.0);
    let mut rows = Vec::new();
    let contact = ContactPoint::new(0, NO_BODY, DVec3::ZERO, DVec3::ZERO, DVec3::Y, 0.0, 0.5);
    push_contact_rows(&mut rows, &bodies, &contact, 1.0 / 60.0).unwrap();
    rows[0].warm = 1.0;
    let settings = SolverSettings {
        iterations: 0,
        ..SolverSettings::default()
    };
    let report = solve(&mut bodies, &mut rows, 1.0 / 60.0, &settings).unwrap();
    assert_eq!((report.scaled_increments, report.dropped_increments), (1, 0));
    assert!(
        (bodies[0].linear_velocity.y - 0.1).abs() <= 1e-15,
        "v = {}",
        bodies[0].linear_velocity
    );
    assert!((rows[0].lambda - 0.2).abs() <= 1e-15, "lambda = {}", rows[0].lambda);
    // With sweeps the contact then settles to the plastic impulse.
    rows[0].warm = 1.0;
    bodies[0].linear_velocity = DVec3::new(0.0, -0.1, 0.0);
    solve(&mut bodies, &mut rows, 1.0 / 60.0, &SolverSettings::default()).unwrap();
    assert!(bodies[0].linear_velocity.y.abs() <= 1e-12);
    assert!((rows[0].lambda - 0.1).abs() <= 1e-12);
}

/// A body at rest with a stale warm-start impulse: any push adds energy, so it is dropped (P = 0).
#[test]
fn clamp_warm_start_dropped_on_resting_body() {
    let mut bodies = [resting_box(1.0, DVec3::splat(0.5))];
    let mut rows = Vec::new();
    box_on_ground(&mut rows, &bodies, 0, DVec3::splat(0.5), 0.0, 0.5, 1.0 / 60.0);
    rows[0].warm = 1.0;
    rows[3].warm = 0.5;
    let report = solve(&mut bodies, &mut rows, 1.0 / 60.0, &SolverSettings::default()).unwrap();
    assert_eq!(report.dropped_increments, 2);
    assert_eq!(bodies[0].linear_velocity, DVec3::ZERO);
    assert_eq!(bodies[0].angular_velocity, DVec3::ZERO);
    assert!(rows.iter().all(|r| r.lambda == 0.0));
}

/// Resting contact is not starved: a box after a gravity step gets its full support, with and
/// without a warm start, and nothing is scaled or dropped.
#[test]
fn clamp_resting_box_keeps_full_support() {
    let dt = 1.0 / 60.0;
    let half = DVec3::splat(0.5);
    let mut rows = Vec::new();
    let bodies = [resting_box(2.0, half)];
    let normals = box_on_ground(&mut rows, &bodies, 0, half, 0.0, 0.6, dt);
    for _ in 0..3 {
        let mut bodies = bodies;
        bodies[0].linear_velocity = GRAVITY * dt;
        let report = solve(&mut bodies, &mut rows, dt, &converged()).unwrap();
        assert_eq!((report.scaled_increments, report.dropped_increments), (0, 0));
        let support: f64 = normals.iter().map(|&i| rows[i as usize].lambda).sum();
        assert!((support - 2.0 * -GRAVITY.y * dt).abs() <= 1e-9, "support {support}");
        assert!(bodies[0].linear_velocity.length() <= 1e-9);
    }
}

/// Why contacts use the split pass: a penetrated resting box with a Baumgarte contact is launched
/// upward (kinetic energy from nothing) unless the row is clamped, and clamped it is not pushed out
/// at all.
#[test]
fn clamp_blocks_baumgarte_energy_gain() {
    let dt = 1.0 / 60.0;
    let half = DVec3::splat(0.5);
    for clamped in [false, true] {
        let mut bodies = [resting_box(1.0, half)];
        let mut rows = Vec::new();
        box_on_ground(&mut rows, &bodies, 0, half, 0.02, 0.5, dt);
        for row in &mut rows {
            row.bias_mode = BiasMode::Velocity;
            row.energy_clamp = clamped;
        }
        let report = solve(&mut bodies, &mut rows, dt, &converged()).unwrap();
        let v = bodies[0].linear_velocity.y;
        if clamped {
            assert_eq!(v, 0.0);
            assert!(report.dropped_increments > 0);
        } else {
            // -ERP phi / h = 0.2 * 0.02 * 60 = 0.24 m/s of real velocity.
            assert!((v - 0.24).abs() <= 1e-9, "v = {v}");
        }
    }
}
