//! Scenes and measurements shared by the solver's tests and benches: bodies from mass and inertia,
//! kinetic energy and momentum, boxes resting on the ground and stacks of them.

#![allow(dead_code)] // each test binary uses a different part

use glam::{DMat3, DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{ContactPoint, NO_BODY, Row, SolverBody, push_contact_rows};

/// Standard gravity, m/s^2 (Y up).
pub const GRAVITY: DVec3 = DVec3::new(0.0, -9.81, 0.0);

/// A dynamic body of `mass` (kg) with principal moments `inertia` (kg m^2) rotated by `orientation`,
/// moving with `linear` (m/s) and `angular` (rad/s).
pub fn dynamic_body(mass: f64, inertia: DVec3, orientation: DQuat, linear: DVec3, angular: DVec3) -> SolverBody {
    let rotation = DMat3::from_quat(orientation);
    SolverBody {
        linear_velocity: linear,
        angular_velocity: angular,
        inverse_mass: 1.0 / mass,
        inverse_inertia: rotation * DMat3::from_diagonal(inertia.recip()) * rotation.transpose(),
    }
}

/// Principal moments of a solid box of `mass` (kg) with `half_extents` (m).
pub fn box_inertia(mass: f64, half_extents: DVec3) -> DVec3 {
    let e = half_extents * 2.0;
    DVec3::new(e.y * e.y + e.z * e.z, e.x * e.x + e.z * e.z, e.x * e.x + e.y * e.y) * (mass / 12.0)
}

/// A solid box body at rest, axis-aligned.
pub fn resting_box(mass: f64, half_extents: DVec3) -> SolverBody {
    dynamic_body(
        mass,
        box_inertia(mass, half_extents),
        DQuat::IDENTITY,
        DVec3::ZERO,
        DVec3::ZERO,
    )
}

/// Kinetic energy of the dynamic bodies, J: `1/2 v.v / m^-1 + 1/2 w . (I^-1)^-1 w`.
pub fn kinetic_energy(bodies: &[SolverBody]) -> f64 {
    bodies
        .iter()
        .filter(|b| b.inverse_mass > 0.0)
        .map(|b| {
            0.5 * b.linear_velocity.length_squared() / b.inverse_mass
                + 0.5 * b.angular_velocity.dot(b.inverse_inertia.inverse() * b.angular_velocity)
        })
        .sum()
}

/// Total linear momentum of the dynamic bodies, kg m/s.
pub fn linear_momentum(bodies: &[SolverBody]) -> DVec3 {
    bodies
        .iter()
        .filter(|b| b.inverse_mass > 0.0)
        .map(|b| b.linear_velocity / b.inverse_mass)
        .sum()
}

/// Total angular momentum of the dynamic bodies about the world origin, kg m^2/s, given their
/// centres of mass (m).
pub fn angular_momentum(bodies: &[SolverBody], positions: &[DVec3]) -> DVec3 {
    bodies
        .iter()
        .zip(positions)
        .filter(|(b, _)| b.inverse_mass > 0.0)
        .map(|(b, x)| x.cross(b.linear_velocity / b.inverse_mass) + b.inverse_inertia.inverse() * b.angular_velocity)
        .sum()
}

/// The four bottom corners of a box with `half_extents`, relative to its centre.
pub fn bottom_corners(half_extents: DVec3) -> [DVec3; 4] {
    let h = half_extents;
    [
        DVec3::new(-h.x, -h.y, -h.z),
        DVec3::new(h.x, -h.y, -h.z),
        DVec3::new(h.x, -h.y, h.z),
        DVec3::new(-h.x, -h.y, h.z),
    ]
}

/// Pushes the four corner contacts of box `body` (centre at height `half_extents.y - depth`) resting
/// on the static ground plane y = 0, with friction `mu`. Returns the normal row indices.
pub fn box_on_ground(
    rows: &mut Vec<Row>,
    bodies: &[SolverBody],
    body: u32,
    half_extents: DVec3,
    depth: f64,
    mu: f64,
    dt: f64,
) -> Vec<u32> {
    let centre = DVec3::new(0.0, half_extents.y - depth, 0.0);
    bottom_corners(half_extents)
        .into_iter()
        .map(|corner| {
            // The contact point lies midway between the corner and the ground.
            let point = DVec3::new(corner.x, -0.5 * depth, corner.z);
            let contact = ContactPoint::new(body, NO_BODY, point - centre, point, DVec3::Y, depth, mu);
            push_contact_rows(rows, bodies, &contact, dt).unwrap()
        })
        .collect()
}

/// A stack of `count` unit-mass cubes (half extent `h`) on the ground, each touching the one below at
/// its four bottom corners: bodies in `bodies` and `4 * 3 * count` contact rows (body 0 on the ground,
/// body i on body i - 1), with the velocities after one gravity step of `dt`.
pub fn stack(count: usize, h: f64, mu: f64, dt: f64) -> (Vec<SolverBody>, Vec<Row>) {
    let half = DVec3::splat(h);
    let bodies: Vec<SolverBody> = (0..count)
        .map(|_| {
            let mut body = resting_box(1.0, half);
            body.linear_velocity = GRAVITY * dt;
            body
        })
        .collect();
    let mut rows = Vec::with_capacity(12 * count);
    box_on_ground(&mut rows, &bodies, 0, half, 0.0, mu, dt);
    for upper in 1..count {
        for corner in bottom_corners(half) {
            // Body `upper` sits 2h above body `upper - 1`; the contact is at the shared face.
            let arm_a = corner;
            let arm_b = corner + DVec3::new(0.0, 2.0 * h, 0.0);
            let contact = ContactPoint::new(upper as u32, upper as u32 - 1, arm_a, arm_b, DVec3::Y, 0.0, mu);
            push_contact_rows(&mut rows, &bodies, &contact, dt).unwrap();
        }
    }
    (bodies, rows)
}

/// Vectors with components uniform in `(-range, range)`.
pub fn vec3(range: f64) -> impl Strategy<Value = DVec3> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

/// Unit vectors, roughly uniform in direction.
pub fn unit() -> impl Strategy<Value = DVec3> {
    vec3(1.0)
        .prop_filter("non-degenerate", |v| v.length() > 0.1)
        .prop_map(DVec3::normalize)
}
