//! Shared generators and oracles for the integrator tests.
#![allow(dead_code)]

use glam::{DQuat, DVec3};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use shatter_integrators::{MassProperties, RigidState};

/// One step per 30 Hz frame, s.
pub const FRAME: f64 = 1.0 / 30.0;

/// A unit quaternion drawn uniformly (Shoemake) from three numbers in [0, 1).
pub fn rotation_from(u: [f64; 3]) -> DQuat {
    let tau = std::f64::consts::TAU;
    let (a, b) = ((1.0 - u[0]).sqrt(), u[0].sqrt());
    DQuat::from_xyzw(
        a * (tau * u[1]).sin(),
        a * (tau * u[1]).cos(),
        b * (tau * u[2]).sin(),
        b * (tau * u[2]).cos(),
    )
}

/// A unit vector from two numbers in [0, 1).
pub fn direction_from(u: [f64; 2]) -> DVec3 {
    let z = 2.0 * u[0] - 1.0;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let phi = std::f64::consts::TAU * u[1];
    DVec3::new(r * phi.cos(), r * phi.sin(), z)
}

/// Principal moments with a ratio up to `max_ratio` between largest and smallest, meeting the
/// triangle inequality, from plates (I_s + I_m = I_l) to rods (I_m = I_l), in a shuffled order.
pub fn principal_moments(max_ratio: f64) -> impl Strategy<Value = DVec3> {
    (0.0..1.0f64, 0.0..1.0f64, 0usize..6, 0.01..10.0f64).prop_map(move |(ratio, middle, order, smallest)| {
        let largest = smallest * max_ratio.powf(ratio);
        let low = (largest - smallest).max(smallest);
        let middle = low + middle * (largest - low);
        let m = [smallest, middle, largest];
        let [a, b, c] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]][order];
        DVec3::new(m[a], m[b], m[c])
    })
}

/// A free dynamic body: principal inertia ratios up to 1:1000, spinning about a random axis at up
/// to `max_speed` rad/s, in a random orientation, with some linear motion.
pub fn free_body(max_speed: f64) -> impl Strategy<Value = (MassProperties, RigidState)> {
    (
        principal_moments(1000.0),
        0.1..100.0f64,
        prop::array::uniform3(0.0..1.0f64),
        prop::array::uniform2(0.0..1.0f64),
        0.0..max_speed,
        prop::array::uniform3(-5.0..5.0f64),
    )
        .prop_map(|(moments, mass, rotation, axis, speed, velocity)| {
            let props = MassProperties::try_new(mass, moments * mass).expect("valid moments");
            let state = RigidState::moving(
                DVec3::ZERO,
                rotation_from(rotation),
                DVec3::from(velocity),
                direction_from(axis) * speed,
            );
            (props, state)
        })
}

/// `count` values of `strategy` drawn with proptest's deterministic runner: the same values every
/// run, for tests that need statistics over a population rather than a property per case.
pub fn sample<S: Strategy>(strategy: S, count: usize) -> Vec<S::Value> {
    let mut runner = TestRunner::deterministic();
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).expect("strategy draws").current())
        .collect()
}

/// Torque-free rigid body equations in body frame, `q' = q (0, w_b) / 2`, `L_b' = L_b x w_b`,
/// integrated by classical Runge-Kutta with `steps` steps and renormalized: an independent
/// reference for the orientation update.
pub fn reference_rotation(
    orientation: DQuat,
    momentum_body: DVec3,
    inverse_inertia: DVec3,
    time: f64,
    steps: usize,
) -> DQuat {
    let derivative = |q: DQuat, l: DVec3| {
        let w = l * inverse_inertia;
        (q * DQuat::from_xyzw(w.x, w.y, w.z, 0.0) * 0.5, l.cross(w))
    };
    let h = time / steps as f64;
    let (mut q, mut l) = (orientation, momentum_body);
    for _ in 0..steps {
        let (k1q, k1l) = derivative(q, l);
        let (k2q, k2l) = derivative(q + k1q * (h / 2.0), l + k1l * (h / 2.0));
        let (k3q, k3l) = derivative(q + k2q * (h / 2.0), l + k2l * (h / 2.0));
        let (k4q, k4l) = derivative(q + k3q * h, l + k3l * h);
        q = (q + (k1q + k2q * 2.0 + k3q * 2.0 + k4q) * (h / 6.0)).normalize();
        l += (k1l + k2l * 2.0 + k3l * 2.0 + k4l) * (h / 6.0);
    }
    q
}

/// The angle (rad) of the rotation between two orientations, accurate down to round-off (glam's
/// `angle_between` goes through `acos` and bottoms out near 1e-8).
pub fn rotation_angle(a: DQuat, b: DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * DVec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
}
