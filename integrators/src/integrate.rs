//! One time step of a body's pose: position, then orientation with the optional energy fix.
//!
//! This is the `integrate` stage of the world step for a single body, as a pure function over
//! plain data ([`crate::batch`] runs it over many bodies). Forces and impulses were applied to the
//! velocities by earlier stages; here the pose moves with those velocities:
//!
//! - dynamic: `x' = x + h v`; the orientation follows torque-free motion with the angular momentum
//!   `L = I w` held fixed ([`crate::free_rotation`]), then the energy fix restores the rotational
//!   energy the step started with ([`crate::energy_fix`]); the new angular velocity is
//!   read back in body frame, `w_b' = I_0^-1 L_b'`;
//! - kinematic: `x' = x + h v`, `R' = exp(h w*) R` with the prescribed velocities unchanged;
//! - static: nothing moves.

use core::array::from_fn;

use glam::{DQuat, DVec3};

use crate::energy_fix::{EnergyFixOutcome, EnergyFixSettings, LaneFix, fix_energy_body_frame, fix_energy_lanes};
use crate::error::IntegratorError;
use crate::free_rotation::{OrientationScheme, advance_free_rotation, advance_free_rotation_lanes};
use crate::lanes::{Lanes, QuatLanes, Vec3Lanes};
use crate::mass::MassProperties;
use crate::state::{BodyKind, RigidState};

/// How the pose of dynamic bodies is advanced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegrationSettings {
    /// The base orientation update.
    pub orientation_scheme: OrientationScheme,
    /// The energy fix after the base update; `None` turns it off.
    pub energy_fix: Option<EnergyFixSettings>,
}

impl Default for IntegrationSettings {
    fn default() -> Self {
        Self {
            orientation_scheme: OrientationScheme::Splitting,
            energy_fix: Some(EnergyFixSettings::default()),
        }
    }
}

impl IntegrationSettings {
    /// The default base update without the energy fix.
    pub fn without_energy_fix() -> Self {
        Self {
            energy_fix: None,
            ..Self::default()
        }
    }
}

/// Checks a time step: it must be positive and finite.
pub fn validate_time_step(dt: f64) -> Result<(), IntegratorError> {
    if dt.is_finite() && dt > 0.0 {
        Ok(())
    } else {
        Err(IntegratorError::InvalidTimeStep { dt })
    }
}

/// Advances the pose of one body by `dt` seconds.
///
/// Returns what the energy fix did (`None` for static and kinematic bodies or when the fix is
/// off). On error (`dt` not positive and finite, a non-finite or non-unit state, a dynamic body
/// with infinite mass, or an update that would overflow) `state` is left unchanged.
pub fn integrate(
    state: &mut RigidState,
    mass: &MassProperties,
    kind: BodyKind,
    dt: f64,
    settings: &IntegrationSettings,
) -> Result<Option<EnergyFixOutcome>, IntegratorError> {
    validate_time_step(dt)?;
    validate_body(state, mass, kind)?;
    advance_validated(state, mass, kind, dt, settings)
}

/// [`integrate`] without the input checks: `dt` and the body must already be valid.
pub(crate) fn advance_validated(
    state: &mut RigidState,
    mass: &MassProperties,
    kind: BodyKind,
    dt: f64,
    settings: &IntegrationSettings,
) -> Result<Option<EnergyFixOutcome>, IntegratorError> {
    match kind {
        BodyKind::Static => Ok(None),
        BodyKind::Kinematic => {
            // A kinematic body turns at its prescribed body-frame angular velocity: the
            // exponential map with unit inertia, so that "momentum" and velocity coincide. (A
            // constant body-frame angular velocity is also constant in world frame, because the
            // body turns about that very axis.)
            let (orientation, _) = advance_free_rotation(
                state.orientation,
                state.body_angular_velocity,
                DVec3::ONE,
                dt,
                OrientationScheme::ExponentialMap,
            );
            let next = RigidState {
                position: state.position + state.linear_velocity * dt,
                orientation: orientation.normalize(),
                ..*state
            };
            commit(state, next)?;
            Ok(None)
        }
        BodyKind::Dynamic => {
            let [result] = advance_dynamic_lanes([state], [mass], dt, settings);
            result.into_result()
        }
    }
}

/// What happened to one lane of [`advance_dynamic_lanes`]: a small `Copy` value, so the hot loop
/// moves no error strings around.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LaneResult {
    /// The body moved; what the energy fix did, if it ran.
    Advanced(Option<EnergyFixOutcome>),
    /// The update overflowed (finite but absurd input); the body was left unchanged.
    Overflowed(&'static str, DVec3),
}

impl LaneResult {
    pub(crate) fn into_result(self) -> Result<Option<EnergyFixOutcome>, IntegratorError> {
        match self {
            Self::Advanced(outcome) => Ok(outcome),
            Self::Overflowed(quantity, value) => Err(IntegratorError::not_finite(quantity, value)),
        }
    }
}

/// Advances `N` valid dynamic bodies in lock step (see [`crate::lanes`]); each lane's result is
/// bit-identical to advancing that body alone.
#[inline(always)]
pub(crate) fn advance_dynamic_lanes<const N: usize>(
    states: [&mut RigidState; N],
    masses: [&MassProperties; N],
    dt: f64,
    settings: &IntegrationSettings,
) -> [LaneResult; N] {
    let inertia = Vec3Lanes::<N>::gather(from_fn(|i| masses[i].principal_inertia()));
    let inverse_inertia = Vec3Lanes::<N>::gather(from_fn(|i| masses[i].inverse_principal_inertia()));
    let velocity = Vec3Lanes::<N>::gather(from_fn(|i| states[i].body_angular_velocity));
    let momentum = velocity.mul_elements(inertia);
    let target = momentum.dot(velocity) * 0.5;
    let (orientation, momentum) = advance_free_rotation_lanes(
        QuatLanes::<N>::gather(from_fn(|i| states[i].orientation)),
        momentum,
        inverse_inertia,
        dt,
        settings.orientation_scheme,
    );
    let mut outcomes = [None; N];
    let (orientation, momentum) = match &settings.energy_fix {
        Some(fix) => {
            let (mut q, mut l, lane_fixes) = fix_energy_lanes(orientation, momentum, inverse_inertia, target, fix);
            for (i, lane_fix) in lane_fixes.into_iter().enumerate() {
                let outcome = match lane_fix {
                    LaneFix::Done(outcome) => outcome,
                    LaneFix::NeedsFallback => {
                        let (qi, li, outcome) = fix_energy_body_frame(
                            orientation.lane(i),
                            momentum.lane(i),
                            inverse_inertia.lane(i),
                            target.0[i],
                            fix,
                        );
                        set_lane(&mut q, &mut l, i, qi, li);
                        outcome
                    }
                };
                outcomes[i] = Some(outcome);
            }
            (q, l)
        }
        None => (orientation, momentum),
    };
    let orientation = orientation.renormalize();
    // Divide rather than multiply by the rounded inverse: `(L * (1/I)) * I` is biased (for I = 3
    // it is always low), and that bias compounds over steps into angular-momentum drift; the
    // correctly rounded quotient is not.
    let velocity = momentum.div_elements(inertia);
    // x * 0 is 0 for finite x and NaN otherwise: one lane-wise sum checks every new component
    // (the orientation was just renormalized, so its norm needs no check).
    let poison = [
        orientation.v.x,
        orientation.v.y,
        orientation.v.z,
        orientation.w,
        velocity.x,
        velocity.y,
        velocity.z,
    ]
    .into_iter()
    .fold(Lanes::splat(0.0), |sum, value| sum + value * 0.0);
    let mut results = [LaneResult::Advanced(None); N];
    for (i, state) in states.into_iter().enumerate() {
        let position = state.position + state.linear_velocity * dt;
        results[i] = if poison.0[i] == 0.0 && position.is_finite() {
            state.position = position;
            state.orientation = orientation.lane(i);
            state.body_angular_velocity = velocity.lane(i);
            LaneResult::Advanced(outcomes[i])
        } else if !position.is_finite() {
            LaneResult::Overflowed("position after the step (m)", position)
        } else {
            LaneResult::Overflowed("angular velocity after the step (rad/s, body frame)", velocity.lane(i))
        };
    }
    results
}

fn set_lane<const N: usize>(q: &mut QuatLanes<N>, l: &mut Vec3Lanes<N>, i: usize, qi: DQuat, li: DVec3) {
    (q.v.x.0[i], q.v.y.0[i], q.v.z.0[i], q.w.0[i]) = (qi.x, qi.y, qi.z, qi.w);
    (l.x.0[i], l.y.0[i], l.z.0[i]) = (li.x, li.y, li.z);
}

/// Checks a body before integration: finite unit state, and finite mass for dynamic bodies.
pub fn validate_body(state: &RigidState, mass: &MassProperties, kind: BodyKind) -> Result<(), IntegratorError> {
    state.validate()?;
    if kind == BodyKind::Dynamic && mass.is_infinite() {
        return Err(IntegratorError::InvalidMass { mass: mass.mass() });
    }
    Ok(())
}

/// Writes `next` into `state` unless the update overflowed.
fn commit(state: &mut RigidState, next: RigidState) -> Result<(), IntegratorError> {
    if !next.position.is_finite() {
        return Err(IntegratorError::not_finite(
            "position after the step (m)",
            next.position,
        ));
    }
    if !(next.orientation.is_finite() && next.body_angular_velocity.is_finite()) {
        return Err(IntegratorError::not_finite(
            "angular velocity after the step (rad/s, body frame)",
            next.body_angular_velocity,
        ));
    }
    *state = next;
    Ok(())
}

/// Applies the energy fix of Su 2009 section 2 to a body on its own, outside [`integrate`], so a
/// caller can choose per body whether and when to use it.
///
/// Rotates the dynamic body about an axis orthogonal to its angular momentum so that its
/// rotational kinetic energy becomes `target` (J); the angular momentum is unchanged and the
/// angular velocity is updated to match the new orientation. Static and kinematic bodies are
/// rejected. On error `state` is unchanged.
pub fn apply_energy_fix(
    state: &mut RigidState,
    mass: &MassProperties,
    target: f64,
    settings: &EnergyFixSettings,
) -> Result<EnergyFixOutcome, IntegratorError> {
    validate_body(state, mass, BodyKind::Dynamic)?;
    if !(target.is_finite() && target >= 0.0) {
        return Err(IntegratorError::InvalidEnergy { energy: target });
    }
    let inverse_inertia = mass.inverse_principal_inertia();
    let momentum_body = state.body_angular_velocity * mass.principal_inertia();
    let (orientation, momentum_body, outcome) =
        fix_energy_body_frame(state.orientation, momentum_body, inverse_inertia, target, settings);
    if !matches!(outcome, EnergyFixOutcome::Rotated { .. }) {
        return Ok(outcome);
    }
    let next = RigidState {
        orientation: orientation.normalize(),
        body_angular_velocity: momentum_body / mass.principal_inertia(),
        ..*state
    };
    commit(state, next)?;
    Ok(outcome)
}
