//! The base orientation update (module `free_rotation`): right, not only energy-preserving.

mod common;

use common::{principal_moments, reference_rotation, rotation_angle, sample};
use glam::{DQuat, DVec3, EulerRot};
use proptest::prelude::*;
use shatter_integrators::free_rotation::advance_free_rotation;
use shatter_integrators::{BodyKind, IntegrationSettings, MassProperties, OrientationScheme, RigidState, integrate};

/// Closed-form torque-free symmetric top (moments A, A, C about body x, y, z) with its angular
/// momentum of magnitude `l` along world z: `R(t) = Rz(phi) Rx(theta) Rz(psi)` with
/// `phi' = l / A` and `psi' = l cos(theta) (1/C - 1/A)`, theta constant.
fn symmetric_top(a: f64, c: f64, l: f64, theta: f64, time: f64) -> DQuat {
    let phi = 0.3 + time * l / a;
    let psi = -0.7 + time * l * theta.cos() * (1.0 / c - 1.0 / a);
    DQuat::from_euler(EulerRot::ZXZ, phi, theta, psi)
}

/// Largest angle (rad) between the integrated and the closed-form orientation of a symmetric top.
fn symmetric_top_error(a: f64, c: f64, theta: f64, dt: f64, steps: usize, scheme: OrientationScheme) -> f64 {
    let l = 7.0;
    let mass = MassProperties::try_new(1.0, DVec3::new(a, a, c)).unwrap();
    let orientation = symmetric_top(a, c, l, theta, 0.0);
    let momentum_body = orientation.inverse() * DVec3::new(0.0, 0.0, l);
    let mut state = RigidState {
        position: DVec3::ZERO,
        orientation,
        linear_velocity: DVec3::ZERO,
        body_angular_velocity: momentum_body / mass.principal_inertia(),
    };
    let settings = IntegrationSettings {
        orientation_scheme: scheme,
        energy_fix: None,
    };
    let mut worst = 0.0f64;
    for step in 1..=steps {
        integrate(&mut state, &mass, BodyKind::Dynamic, dt, &settings).unwrap();
        let expected = symmetric_top(a, c, l, theta, step as f64 * dt);
        worst = worst.max(rotation_angle(state.orientation, expected));
    }
    worst
}

/// A symmetric top precesses as the closed form says. The splitting is exact
/// for symmetric tops, so the bound is round-off, at small steps and at frame rate alike.
#[test]
fn free_rotation_symmetric_top_matches_closed_form() {
    for (a, c) in [(1.0, 2.0), (2.0, 0.5), (1.0, 1.9)] {
        for theta in [0.2, 1.0, 2.5] {
            let small = symmetric_top_error(a, c, theta, 1e-3, 2000, OrientationScheme::Splitting);
            let frame = symmetric_top_error(a, c, theta, 1.0 / 30.0, 300, OrientationScheme::Splitting);
            println!("symmetric top A {a} C {c} theta {theta}: {small:.1e} rad at 1 ms, {frame:.1e} rad at 30 Hz");
            assert!(
                small < 1e-12,
                "A {a} C {c} theta {theta}: error {small} rad at dt = 1 ms"
            );
            assert!(frame < 1e-12, "A {a} C {c} theta {theta}: error {frame} rad at 30 Hz");
        }
    }
}

/// The exponential map is first order on the same top: halving the step halves the error.
#[test]
fn free_rotation_exponential_map_is_first_order() {
    let coarse = symmetric_top_error(1.0, 2.0, 1.0, 2e-3, 500, OrientationScheme::ExponentialMap);
    let fine = symmetric_top_error(1.0, 2.0, 1.0, 1e-3, 1000, OrientationScheme::ExponentialMap);
    let ratio = coarse / fine;
    println!("exponential map on the top: {coarse:.3e} rad at 2 ms, {fine:.3e} rad at 1 ms");
    assert!((1.8..2.2).contains(&ratio), "error ratio {ratio} ({coarse} / {fine})");
}

/// Asymmetric bodies: the splitting converges to an independent Runge-Kutta reference at second
/// order (error ratio about 4 when the step halves).
#[test]
fn free_rotation_splitting_is_second_order_on_asymmetric_bodies() {
    let bodies = sample((principal_moments(20.0), prop::array::uniform3(-1.0..1.0f64)), 20);
    let (mut coarse_total, mut fine_total, mut finest_total) = (0.0, 0.0, 0.0);
    for (moments, spin) in bodies {
        let inverse = moments.recip();
        let momentum = DVec3::from(spin) * moments * 3.0;
        let start = DQuat::from_euler(EulerRot::XYZ, 0.4, -0.3, 1.2);
        let reference = reference_rotation(start, momentum, inverse, 1.0, 20_000);
        let error = |steps: usize| {
            let (mut q, mut l) = (start, momentum);
            for _ in 0..steps {
                (q, l) = advance_free_rotation(q, l, inverse, 1.0 / steps as f64, OrientationScheme::Splitting);
                q = q.normalize();
            }
            rotation_angle(q, reference)
        };
        coarse_total += error(50);
        fine_total += error(100);
        finest_total += error(200);
    }
    let (first, second) = (coarse_total / fine_total, fine_total / finest_total);
    println!("splitting against Runge-Kutta: error ratios {first:.3} and {second:.3} per halving");
    assert!(
        (3.5..4.5).contains(&first) && (3.5..4.5).contains(&second),
        "ratios {first}, {second}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Both base updates conserve angular momentum on their own, at any step.
    #[test]
    fn free_rotation_conserves_angular_momentum_without_the_fix(
        (mass, state) in common::free_body(50.0),
        exponential in any::<bool>(),
    ) {
        let settings = IntegrationSettings {
            orientation_scheme: if exponential { OrientationScheme::ExponentialMap } else { OrientationScheme::Splitting },
            energy_fix: None,
        };
        let momentum = state.angular_momentum(&mass);
        prop_assume!(momentum.length() > 0.0);
        let mut moved = state;
        for _ in 0..1000 {
            integrate(&mut moved, &mass, BodyKind::Dynamic, common::FRAME, &settings).unwrap();
        }
        prop_assert!((moved.angular_momentum(&mass) - momentum).length() <= 1e-12 * momentum.length());
        let expected_position = state.position + state.linear_velocity * (1000.0 * common::FRAME);
        prop_assert!((moved.position - expected_position).length() <= 1e-10 * (1.0 + expected_position.length()));
    }
}
