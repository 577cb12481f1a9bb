//! Geometric stiffness of joint anchors, and the rotational inertia a body is given for one solve
//! so that the stiff mode it drives stays within the time step's stability limit (the "armature"
//! of MuJoCo and of PhysX articulations, sized from the geometric stiffness of Tournier et al.
//! 2015, "Stable Constrained Dynamics", and Andrews, Teichmann and Kry 2017, "Geometric Stiffness
//! for Real-time Constrained Multibody Dynamics").
//!
//! # Why
//!
//! A velocity-level solve holds `J(x_n) v_{n+1} = -ERP phi / h` with the Jacobian at the start of
//! the step, so the direction in which a joint pulls on a body's anchor is frozen for the step:
//! the change of the torque as the body turns is explicit. Under tension that change is a stiff
//! restoring spring. A link of a hanging chain, pulled up at its top anchor and down at its bottom
//! anchor with tensions near `T`, turns back towards the chain's line with stiffness `k` about
//! `2 T r` (N m/rad, `r` the arm from its centre to an anchor), and semi-implicit Euler is stable
//! for that zig-zag mode only while `h^2 k / I < 4`. In a hanging chain of 20 capsules 0.3 m apart
//! that limit is passed near the top at 30 Hz: measured, a kick of 1 mm/s at the bottom grew until
//! the chain came apart by metres, while at a quarter of the gravity, or at 60 Hz, it held its
//! joints to a micrometre. The exact velocity solve cannot help: the rows hold, along stale
//! directions.
//!
//! # The stiffness of one anchor
//!
//! A joint's point rows pull body A's anchor, at world arm `r` from its centre of mass, with the
//! force `f` (N, the rows' `lambda e / h`); the torque is `r x f`. Turning the body by `dtheta`
//! turns the arm to `r + dtheta x r` while the rows' world axes stay, so
//!
//! ```text
//! d(r x f) = (dtheta x r) x f = (r f^T - (f . r) 1) dtheta = K dtheta.
//! ```
//!
//! Point rows' Jacobians depend on no other coordinate (their linear parts are world axes), so this
//! per-body angular block is the whole geometric stiffness of a ball joint. With `a = r / |r|`,
//! `b = f / |f|`, `c = a . b`, `s = |r| |f|`, the symmetric part of `-K` has eigenvalues
//! `s (c - 1) / 2` on `a + b`, `s (1 + c) / 2` on `a - b` and `s c` on `a x b`: under tension
//! (`c > 0`) a restoring stiffness but for a small negative eigenvalue from misalignment. The
//! stiffness of an anchor ([`anchor_geometric_stiffness`]) is the positive semidefinite part: the
//! restoring springs, which are what limits the step. The antisymmetric part does no work to first
//! order and is dropped. `f` is this step's force, unknown before the solve: the joint's impulse
//! of the last step (its warm start) stands in for it, as in Andrews 2017.
//!
//! # The added inertia
//!
//! For a body with inertia `I` and summed anchor stiffness `k`, the modes of `(h^2 k, I)`, i.e. the
//! eigenpairs `(s, u)` of `W^(1/2) h^2 k W^(1/2)` with `W = I^-1`, are its stiff turning modes with
//! `(h w)^2 = s`. [`stabilizing_inertia`] adds, along each mode with `s` above
//! [`MAX_STEP_STIFFNESS`], the inertia that brings `h^2 k / (I + D)` down to it, and nothing
//! elsewhere: `D = W^(-1/2) U diag(max(0, s / s_max - 1)) U^T W^(-1/2)`. The solve then sees the
//! body with inverse inertia `(I + D)^-1` and its own angular velocity. Measured on chains of 20,
//! 40 and 80 links kicked at 0.01 to 3 m/s, 400 steps at 30 Hz: stable for every `s_max` up to 4
//! and unstable from 4.5 on, the single-link limit; `s_max = 2` leaves the tension room to double
//! from one step to the next.
//!
//! Energy: with `D` fixed, the step conserves `1/2 w^T (I + D) w` where it conserved
//! `1/2 w^T I w` (the body's kinetic energy changes by `w . tau - 1/2 d(w^T D w)` minus a
//! non-negative term), so the added term can hold at most `1/2 w^T D w`, a few times a link's own
//! turning energy, and cannot pump. Measured on those chains, the total energy after the first step
//! never rose above its value then.
//!
//! Rejected alternatives:
//! - the implicit geometric stiffness of Andrews 2017, `(I + h^2 k) w_{n+1} = I w* + tau`: stable
//!   at any tension and never adds energy, but it resists every turning of a tensioned link, also
//!   the slow swing of the whole chain, in which the links turn with the chain: a kicked 10-link
//!   chain kept 46 percent of its swing energy after 13 s, against 78 percent without it and 77
//!   percent with the added inertia;
//! - sub-stepping the joint solve (Box2D v3, Rapier): moves the limit to `(h w / n)^2 < 4`, but a
//!   long enough chain passes it again, and it multiplies the cost of the solve;
//! - position-level projection after the step (non-linear Gauss-Seidel): closes the gaps the
//!   instability opens, not the oscillation that opens them.

use glam::{DMat3, DVec3};
use shatter_integrators::principal_axes;

use crate::body::SolverBody;

/// The largest `(h w)^2 = h^2 k / I` that [`stabilizing_inertia`] leaves a body's stiff turning
/// modes, dimensionless: half of semi-implicit Euler's limit 4, so that a tension twice the last
/// step's is still stable.
pub const MAX_STEP_STIFFNESS: f64 = 2.0;

/// Below this `|a x b|` the arm and the force count as parallel, and the `a x b` direction is left
/// out (its coefficient vanishes there).
const PARALLEL: f64 = 1e-12;

/// The restoring rotational stiffness (N m/rad, world frame, symmetric positive semidefinite) that
/// a joint gives a body by pulling its anchor, at world `arm` (m) from the centre of mass, with
/// `force` (N, world frame): the positive semidefinite part of `(f . r) 1 - (r f^T + f r^T) / 2`
/// (see the module docs). Zero when either vector is zero or not finite, or when they point
/// straight against each other.
pub fn anchor_geometric_stiffness(arm: DVec3, force: DVec3) -> DMat3 {
    let (length, strength) = (arm.length(), force.length());
    let scale = length * strength;
    if !(scale > 0.0 && scale.is_finite()) {
        return DMat3::ZERO;
    }
    let (a, b) = (arm / length, force / strength);
    let cosine = a.dot(b).clamp(-1.0, 1.0);
    // s (1 + c) / 2 on the plane normal to a + b, which a - b and a x b span.
    let plane = 0.5 * scale * (1.0 + cosine);
    let mut stiffness = DMat3::ZERO;
    if plane > 0.0 {
        let u = (a + b).normalize();
        stiffness = (DMat3::IDENTITY - outer(u, u)) * plane;
    }
    // On a x b the eigenvalue is s c: keep its positive part.
    let normal = a.cross(b);
    if normal.length() > PARALLEL {
        let w = normal.normalize();
        stiffness += outer(w, w) * ((scale * cosine).max(0.0) - plane);
    }
    stiffness
}

/// The rotational inertia (kg m^2, world frame, symmetric positive semidefinite) to add for one
/// step of `dt` seconds to a body with world inverse inertia `inverse_inertia` (1/(kg m^2)) and
/// summed anchor stiffness `stiffness` (N m/rad, from [`anchor_geometric_stiffness`]), so that no
/// turning mode has `h^2 k / I` above `max_step_stiffness` (see the module docs;
/// [`MAX_STEP_STIFFNESS`] is the engine's). Zero when every mode is below it, for a body that
/// cannot turn about some axis (a zero principal inverse inertia), and for non-finite input.
pub fn stabilizing_inertia(inverse_inertia: DMat3, stiffness: DMat3, dt: f64, max_step_stiffness: f64) -> DMat3 {
    if stiffness == DMat3::ZERO || !(dt > 0.0 && max_step_stiffness > 0.0) {
        return DMat3::ZERO;
    }
    let Ok(frame) = principal_axes(inverse_inertia) else {
        return DMat3::ZERO;
    };
    if !(frame.values.min_element() > 0.0) {
        return DMat3::ZERO;
    }
    let axes = DMat3::from_quat(frame.rotation);
    let root = axes * DMat3::from_diagonal(frame.values.map(f64::sqrt)) * axes.transpose();
    let inverse_root = axes * DMat3::from_diagonal(frame.values.map(|w| 1.0 / w.sqrt())) * axes.transpose();
    let Ok(modes) = principal_axes(root * (stiffness * (dt * dt)) * root) else {
        return DMat3::ZERO;
    };
    let scale = modes.values.map(|s| (s / max_step_stiffness - 1.0).max(0.0));
    if scale == DVec3::ZERO {
        return DMat3::ZERO;
    }
    let vectors = DMat3::from_quat(modes.rotation);
    let added = inverse_root * vectors * DMat3::from_diagonal(scale) * vectors.transpose() * inverse_root;
    (added + added.transpose()) * 0.5
}

/// `u v^T`.
fn outer(u: DVec3, v: DVec3) -> DMat3 {
    DMat3::from_cols(u * v.x, u * v.y, u * v.z)
}

impl SolverBody {
    /// This body as a solve should see it when `added` inertia (kg m^2, world frame, symmetric
    /// positive semidefinite, e.g. from [`stabilizing_inertia`]) joins its own for the step: inverse
    /// inertia `(I + D)^-1`, computed as `(1 + W D)^-1 W` from the inverse inertia `W` so that it
    /// holds for a singular `W` too; velocities unchanged. Static and kinematic bodies, and a zero
    /// `added`, come back unchanged.
    pub fn with_added_inertia(self, added: DMat3) -> Self {
        if !self.is_dynamic() || added == DMat3::ZERO {
            return self;
        }
        // 1 + W D has the eigenvalues of 1 + W^(1/2) D W^(1/2), all >= 1: always invertible.
        let resisted = (DMat3::IDENTITY + self.inverse_inertia * added).inverse() * self.inverse_inertia;
        Self {
            // Symmetric in exact arithmetic; symmetrized so that round-off cannot fail validation.
            inverse_inertia: (resisted + resisted.transpose()) * 0.5,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;
    use proptest::prelude::*;

    /// `|a - b|`, largest entry.
    fn distance(a: DMat3, b: DMat3) -> f64 {
        (a - b).to_cols_array().iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// The torque `r x f` on a body turned by `turn` (rotation vector, rad) with `f` held.
    fn torque(arm: DVec3, force: DVec3, turn: DVec3) -> DVec3 {
        (DQuat::from_scaled_axis(turn) * arm).cross(force)
    }

    #[test]
    fn geometric_stiffness_of_a_pendulum_anchor_is_tension_times_arm() {
        // A body hanging from an anchor 0.5 m above its centre under a 20 N pull: turned by a
        // small angle about any horizontal axis, the pull turns it back with 20 x 0.5 N m/rad.
        let (arm, force) = (DVec3::Y * 0.5, DVec3::Y * 20.0);
        let stiffness = anchor_geometric_stiffness(arm, force);
        assert!(distance(stiffness, DMat3::from_diagonal(DVec3::new(10.0, 0.0, 10.0))) < 1e-12);
        let turn = DVec3::new(1e-6, 0.0, -2e-6);
        let restoring = torque(arm, force, turn) - torque(arm, force, DVec3::ZERO);
        assert!((restoring + stiffness * turn).length() < 1e-9 * turn.length() * 10.0);
        // Pushed instead of pulled, the anchor does not restore: nothing to stabilize.
        assert_eq!(anchor_geometric_stiffness(arm, -force), DMat3::ZERO);
        assert_eq!(anchor_geometric_stiffness(DVec3::ZERO, force), DMat3::ZERO);
        assert_eq!(anchor_geometric_stiffness(arm, DVec3::NAN), DMat3::ZERO);
    }

    fn vector() -> impl Strategy<Value = DVec3> {
        (-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    proptest! {
        /// The stiffness is the positive part of the finite-difference stiffness `-d(r x f)/dtheta`
        /// (symmetric part): the same eigenvalues where those are positive, zero elsewhere.
        #[test]
        fn geometric_stiffness_is_the_positive_part_of_the_torque_derivative(
            arm in vector(),
            force in vector(),
        ) {
            prop_assume!(arm.length() > 1e-3 && force.length() > 1e-3);
            let step = 1e-6;
            let columns = [DVec3::X, DVec3::Y, DVec3::Z].map(|e| {
                (torque(arm, force, -e * step) - torque(arm, force, e * step)) / (2.0 * step)
            });
            let derivative = DMat3::from_cols(columns[0], columns[1], columns[2]);
            let symmetric = (derivative + derivative.transpose()) * 0.5;
            let exact = principal_axes(symmetric).unwrap();
            let kept = principal_axes(anchor_geometric_stiffness(arm, force)).unwrap();
            let scale = arm.length() * force.length();
            let expected = exact.values.map(|v| v.max(0.0));
            prop_assert!((kept.values - expected).abs().max_element() < 1e-6 * scale);
            // Same eigenvectors on the kept part: D u = s u for each positive exact pair.
            let axes = DMat3::from_quat(exact.rotation);
            let stiffness = anchor_geometric_stiffness(arm, force);
            for i in 0..3 {
                let u = axes.col(i);
                let s = exact.values[i].max(0.0);
                prop_assert!((stiffness * u - u * s).length() < 1e-6 * scale);
            }
        }
    }

    #[test]
    fn geometric_stabilizing_inertia_caps_the_step_stiffness() {
        // A rod-like body, inertia diag(0.5, 0.02, 0.5) kg m^2, turned: its stiff axis lies
        // askew of the stiffness.
        let turn = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -1.0).normalize(), 0.8);
        let axes = DMat3::from_quat(turn);
        let inertia = axes * DMat3::from_diagonal(DVec3::new(0.5, 0.02, 0.5)) * axes.transpose();
        let inverse = inertia.inverse();
        let dt = 1.0 / 30.0;
        let stiffness = anchor_geometric_stiffness(DVec3::new(0.1, 0.3, 0.0), DVec3::new(500.0, 4000.0, 300.0));
        let added = stabilizing_inertia(inverse, stiffness, dt, MAX_STEP_STIFFNESS);
        // Every mode of (h^2 k, I + D) at or below the cap, and the stiffest exactly at it.
        let modes = |inertia: DMat3| {
            let body = principal_axes(inertia).unwrap();
            let r = DMat3::from_quat(body.rotation);
            let root = r * DMat3::from_diagonal(body.values.map(|v| 1.0 / v.sqrt())) * r.transpose();
            principal_axes(root * stiffness * (dt * dt) * root).unwrap().values
        };
        let before = modes(inertia);
        assert!(
            before.max_element() > 2.0 * MAX_STEP_STIFFNESS,
            "the case must need stabilizing"
        );
        let after = modes(inertia + added);
        assert!((after.max_element() - MAX_STEP_STIFFNESS).abs() < 1e-9, "{after}");
        // Modes already below the cap keep their stiffness: nothing added along them.
        for (b, a) in before.to_array().iter().zip(after.to_array()) {
            if *b <= MAX_STEP_STIFFNESS {
                assert!((a - b).abs() < 1e-9 * MAX_STEP_STIFFNESS, "{before} -> {after}");
            }
        }
        assert!(principal_axes(added).unwrap().values.min_element() > -1e-12);
        // A soft pull needs nothing; a body that cannot turn about an axis gets nothing.
        assert_eq!(
            stabilizing_inertia(inverse, stiffness * 1e-4, dt, MAX_STEP_STIFFNESS),
            DMat3::ZERO
        );
        let locked = DMat3::from_diagonal(DVec3::new(2.0, 0.0, 2.0));
        assert_eq!(
            stabilizing_inertia(locked, stiffness, dt, MAX_STEP_STIFFNESS),
            DMat3::ZERO
        );
    }

    #[test]
    fn geometric_added_inertia_inverts_the_sum_and_keeps_velocities() {
        let inertia = DMat3::from_diagonal(DVec3::new(0.3, 0.05, 0.3));
        let added = DMat3::from_cols_array(&[0.4, 0.1, 0.0, 0.1, 0.2, 0.0, 0.0, 0.0, 0.0]);
        let body = SolverBody {
            linear_velocity: DVec3::X,
            angular_velocity: DVec3::new(1.0, -2.0, 3.0),
            inverse_mass: 0.5,
            inverse_inertia: inertia.inverse(),
        };
        let resisted = body.with_added_inertia(added);
        assert!(distance(resisted.inverse_inertia, (inertia + added).inverse()) < 1e-12);
        assert_eq!(resisted.angular_velocity, body.angular_velocity);
        assert_eq!(resisted.linear_velocity, body.linear_velocity);
        assert!(resisted.validate(0).is_ok());
        let kinematic = SolverBody::kinematic(DVec3::X, DVec3::Y);
        assert_eq!(kinematic.with_added_inertia(added), kinematic);
        assert_eq!(body.with_added_inertia(DMat3::ZERO), body);
    }
}
