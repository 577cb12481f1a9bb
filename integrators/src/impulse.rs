//! Impulses on rigid bodies, and the clamp that keeps them from adding kinetic energy
//! (Su, Schroeder and Fedkiw 2009, section 3.2, with the per-body angular impulse of the errata).
//!
//! An impulse acts on a pair of bodies A and B: A receives the linear impulse `j` at world arm
//! `r_a` (from its centre of mass to the point of application) plus an optional pure angular
//! impulse `j_tau`; B receives the opposite at its own arm `r_b`. As generalized impulses,
//!
//! ```text
//! J_A = ( j,  r_a x j + j_tau),      J_B = (-j, -(r_b x j) - j_tau).
//! ```
//!
//! Scaling the pair by `eps` changes the kinetic energy, measured at the velocities `V_i` of a
//! non-split state and with mass matrices `M_i`, by
//!
//! ```text
//! dKE(eps) = eps P + eps^2 Q / 2,    P = sum_i J_i . V_i,    Q = sum_i J_i^T M_i^-1 J_i >= 0,
//! ```
//!
//! whose non-trivial root is `eps* = -2 P / Q`. The impulse is kept when `eps* >= 1` (it removes
//! energy, as friction and inelastic collision should), scaled by `eps*` when `0 < eps* < 1`, and
//! dropped when `eps* <= 0` (a split-state impulse pointing the wrong way).
//!
//! Infinite-mass bodies contribute nothing. A kinematic body is not a fixed wall, though: a box on
//! a rising platform must be lifted. Su's remedy is to measure the dynamic body's energy in the
//! frame moving with the kinematic body's point velocity at the contact, `u = v_k + w_k x r_k`,
//! which is what [`clamp_pair_impulse`] does. Between two dynamic bodies `P` is frame independent,
//! because the pair conserves momentum.

use glam::DVec3;

use crate::error::{IntegratorError, check_finite3};
use crate::mass::MassProperties;
use crate::state::{BodyKind, RigidState};

/// Applies a linear impulse `linear` (N s) at world arm `arm` (m, from the centre of mass) and a
/// pure angular impulse `angular` (N m s) to a body: `v += j / m`, `w += I^-1 (r x j + j_tau)`
/// (world frame; the state keeps `w` in body frame).
///
/// Static and kinematic bodies are not moved. A non-finite input is refused by name and the state
/// is left as it was.
pub fn apply_impulse(
    state: &mut RigidState,
    mass: &MassProperties,
    kind: BodyKind,
    linear: DVec3,
    arm: DVec3,
    angular: DVec3,
) -> Result<(), IntegratorError> {
    check_finite3("linear impulse (N s)", linear)?;
    check_finite3("impulse arm (m)", arm)?;
    check_finite3("angular impulse (N m s)", angular)?;
    if kind != BodyKind::Dynamic || mass.is_infinite() {
        return Ok(());
    }
    state.linear_velocity += linear * mass.inverse_mass();
    let body_impulse = state.orientation.inverse() * (arm.cross(linear) + angular);
    state.body_angular_velocity += body_impulse * mass.inverse_principal_inertia();
    Ok(())
}

/// One body of a pair, as the clamp sees it: its kind, its state at the non-split time level and
/// its mass properties.
#[derive(Clone, Copy, Debug)]
pub struct ClampBody<'a> {
    /// How the body moves.
    pub kind: BodyKind,
    /// Pose and velocities at the non-split state the energy is measured in.
    pub state: &'a RigidState,
    /// Mass properties (ignored unless the body is dynamic).
    pub mass: &'a MassProperties,
}

/// An equal-and-opposite impulse on a pair of bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairImpulse {
    /// Linear impulse on body A, N s; body B receives its negation.
    pub linear: DVec3,
    /// Arm from A's centre of mass to the point where the impulse acts, world frame, m.
    pub arm_a: DVec3,
    /// Arm from B's centre of mass to the point where the impulse acts, world frame, m.
    pub arm_b: DVec3,
    /// Pure angular impulse on body A, N m s (torsional friction, joint rows); B receives its
    /// negation.
    pub angular: DVec3,
}

/// What the clamp decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClampVerdict {
    /// The whole impulse removes kinetic energy (or adds none): scale 1.
    Kept,
    /// The impulse would add energy; it was scaled down so it adds none: scale in (0, 1).
    Scaled,
    /// Any positive multiple of the impulse adds energy: scale 0.
    Dropped,
    /// Neither body is dynamic, or the impulse is zero, so nothing can change: scale 1.
    NoEffect,
}

/// The factor to multiply a pair impulse by, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImpulseClamp {
    /// Factor in `[0, 1]` to apply to both the linear and the angular impulse.
    pub scale: f64,
    /// Which case applied.
    pub verdict: ClampVerdict,
}

/// Returns the scale in `[0, 1]` that keeps `impulse` from raising the total kinetic energy of the
/// pair (Su 2009 section 3.2; see the module docs for the formula and the kinematic case).
///
/// Errors name any non-finite input; nothing is modified either way.
pub fn clamp_pair_impulse(
    a: ClampBody<'_>,
    b: ClampBody<'_>,
    impulse: &PairImpulse,
) -> Result<ImpulseClamp, IntegratorError> {
    check_finite3("linear impulse (N s)", impulse.linear)?;
    check_finite3("angular impulse (N m s)", impulse.angular)?;
    check_finite3("impulse arm on body A (m)", impulse.arm_a)?;
    check_finite3("impulse arm on body B (m)", impulse.arm_b)?;
    for body in [&a, &b] {
        check_finite3("linear velocity (m/s)", body.state.linear_velocity)?;
        check_finite3("angular velocity (rad/s, body frame)", body.state.body_angular_velocity)?;
        if !body.state.orientation.is_finite() {
            return Err(IntegratorError::not_finite(
                "orientation quaternion",
                body.state.orientation,
            ));
        }
    }

    let dynamic = |body: &ClampBody<'_>| body.kind == BodyKind::Dynamic && !body.mass.is_infinite();
    // Velocity of the frame the energy is measured in: the kinematic partner's point velocity.
    let frame_velocity = |other: &ClampBody<'_>, arm: DVec3| {
        if other.kind == BodyKind::Kinematic {
            other.state.point_velocity(arm)
        } else {
            DVec3::ZERO
        }
    };
    let mut slope = 0.0; // P
    let mut curvature = 0.0; // Q
    let mut add = |body: &ClampBody<'_>, frame: DVec3, linear: DVec3, angular: DVec3| {
        let velocity = body.state.linear_velocity - frame;
        let body_angular = body.state.orientation.inverse() * angular;
        slope += linear.dot(velocity) + body_angular.dot(body.state.body_angular_velocity);
        curvature += linear.length_squared() * body.mass.inverse_mass()
            + body_angular.dot(body_angular * body.mass.inverse_principal_inertia());
    };
    let j = impulse.linear;
    if dynamic(&a) {
        let frame = if dynamic(&b) {
            DVec3::ZERO
        } else {
            frame_velocity(&b, impulse.arm_b)
        };
        add(&a, frame, j, impulse.arm_a.cross(j) + impulse.angular);
    }
    if dynamic(&b) {
        let frame = if dynamic(&a) {
            DVec3::ZERO
        } else {
            frame_velocity(&a, impulse.arm_a)
        };
        add(&b, frame, -j, -impulse.arm_b.cross(j) - impulse.angular);
    }

    let verdict = |scale, verdict| Ok(ImpulseClamp { scale, verdict });
    // Inputs are finite, so the curvature is a finite sum of non-negative terms.
    if curvature <= 0.0 {
        return verdict(1.0, ClampVerdict::NoEffect);
    }
    if slope >= 0.0 {
        return verdict(0.0, ClampVerdict::Dropped);
    }
    let root = -2.0 * slope / curvature;
    if root >= 1.0 {
        verdict(1.0, ClampVerdict::Kept)
    } else {
        verdict(root, ClampVerdict::Scaled)
    }
}
