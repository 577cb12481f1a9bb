//! One time step of a body's pose: position, then orientation with the optional energy fix.
//!
//! This is the `integrate` stage of the world step for a single body, as a pure function over
//! plain data, plus a data-parallel batch form. Forces and impulses were applied to the velocities
//! by earlier stages; here the pose moves with those velocities:
//!
//! - dynamic: `x' = x + h v`; the orientation follows torque-free motion with the angular momentum
//!   `L = I w` held fixed ([`crate::free_rotation`]), then the energy fix restores the rotational
//!   energy the step started with ([`crate::energy_fix`]); the new angular velocity is
//!   read back in body frame, `w_b' = I_0^-1 L_b'`;
//! - kinematic: `x' = x + h v`, `R' = exp(h w*) R` with the prescribed velocities unchanged;
//! - static: nothing moves.

use core::array::from_fn;

use glam::{DQuat, DVec3};
use rayon::prelude::*;

use crate::energy_fix::{EnergyFixOutcome, EnergyFixSettings, LaneFix, fix_energy_body_frame, fix_energy_lanes};
use crate::error::IntegratorError;
use crate::free_rotation::{OrientationScheme, advance_free_rotation, advance_free_rotation_lanes};
use crate::lanes::{QuatLanes, Vec3Lanes};
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
fn advance_validated(
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
enum LaneResult {
    /// The body moved; what the energy fix did, if it ran.
    Advanced(Option<EnergyFixOutcome>),
    /// The update overflowed (finite but absurd input); the body was left unchanged.
    Overflowed(&'static str, DVec3),
}

impl LaneResult {
    fn into_result(self) -> Result<Option<EnergyFixOutcome>, IntegratorError> {
        match self {
            Self::Advanced(outcome) => Ok(outcome),
            Self::Overflowed(quantity, value) => Err(IntegratorError::not_finite(quantity, value)),
        }
    }
}

/// Advances `N` valid dynamic bodies in lock step (see [`crate::lanes`]); each lane's result is
/// bit-identical to advancing that body alone.
#[inline(always)]
fn advance_dynamic_lanes<const N: usize>(
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
    let mut results = [LaneResult::Advanced(None); N];
    for (i, state) in states.into_iter().enumerate() {
        let next = RigidState {
            position: state.position + state.linear_velocity * dt,
            orientation: orientation.lane(i),
            linear_velocity: state.linear_velocity,
            body_angular_velocity: velocity.lane(i),
        };
        results[i] = if next.is_valid() {
            *state = next;
            LaneResult::Advanced(outcomes[i])
        } else if !next.position.is_finite() {
            LaneResult::Overflowed("position after the step (m)", next.position)
        } else {
            LaneResult::Overflowed(
                "angular velocity after the step (rad/s, body frame)",
                next.body_angular_velocity,
            )
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

/// Counts of what the energy fix did over a batch of bodies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnergyFixTally {
    /// Bodies rotated about the primary axis `L x w`.
    pub primary: usize,
    /// Bodies rotated about a fallback axis `L x r_max` or `L x r_min`.
    pub fallback: usize,
    /// Bodies left alone: error at round-off or energy negligible.
    pub skipped: usize,
    /// Bodies whose target energy was out of reach (round-off only); left alone.
    pub unreachable: usize,
}

impl EnergyFixTally {
    fn record(mut self, outcome: Option<EnergyFixOutcome>) -> Self {
        use crate::energy_fix::FixAxis;
        match outcome {
            Some(EnergyFixOutcome::Rotated {
                axis: FixAxis::Primary, ..
            }) => self.primary += 1,
            Some(EnergyFixOutcome::Rotated { .. }) => self.fallback += 1,
            Some(EnergyFixOutcome::Unreachable { .. }) => self.unreachable += 1,
            Some(_) => self.skipped += 1,
            None => {}
        }
        self
    }

    fn merge(self, other: Self) -> Self {
        Self {
            primary: self.primary + other.primary,
            fallback: self.fallback + other.fallback,
            skipped: self.skipped + other.skipped,
            unreachable: self.unreachable + other.unreachable,
        }
    }
}

/// A batch integration failed at body `index`.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchError {
    /// Index of the first offending body in the slices given.
    pub index: usize,
    /// What was wrong with it.
    pub error: IntegratorError,
}

impl core::fmt::Display for BatchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "body {}: {}", self.index, self.error)
    }
}

impl std::error::Error for BatchError {}

/// Bodies per rayon task in [`integrate_batch`]; large enough to amortize scheduling, and a
/// multiple of [`LANES`].
const BATCH_CHUNK: usize = 4096;

/// Dynamic bodies advanced in lock step by [`integrate_batch`] (see [`crate::lanes`]).
const LANES: usize = 4;

/// Advances many independent bodies by `dt` seconds on the current rayon pool.
///
/// `states`, `masses` and `kinds` are parallel arrays. Every body is checked first; if any is
/// invalid, the error names the lowest such index and nothing changes. A body whose update would
/// overflow (finite but absurd velocities) is left unchanged and reported the same way, the
/// others having moved. Results do not depend on the thread count.
///
/// # Panics
///
/// If the three slices differ in length (a programming error, not bad data).
pub fn integrate_batch(
    states: &mut [RigidState],
    masses: &[MassProperties],
    kinds: &[BodyKind],
    dt: f64,
    settings: &IntegrationSettings,
) -> Result<EnergyFixTally, BatchError> {
    assert!(
        states.len() == masses.len() && states.len() == kinds.len(),
        "integrate_batch: states, masses and kinds must have the same length"
    );
    validate_time_step(dt).map_err(|error| BatchError { index: 0, error })?;
    let first_bad = states
        .par_chunks(BATCH_CHUNK)
        .zip(masses.par_chunks(BATCH_CHUNK).zip(kinds.par_chunks(BATCH_CHUNK)))
        .enumerate()
        .filter_map(|(chunk, (states, (masses, kinds)))| {
            let valid = |((state, mass), kind): ((&RigidState, &MassProperties), &BodyKind)| {
                state.is_valid() && !(*kind == BodyKind::Dynamic && mass.is_infinite())
            };
            let offset = states.iter().zip(masses).zip(kinds).position(|body| !valid(body))?;
            Some(chunk * BATCH_CHUNK + offset)
        })
        .min();
    if let Some(index) = first_bad {
        let error = validate_body(&states[index], &masses[index], kinds[index]).expect_err("found invalid above");
        return Err(BatchError { index, error });
    }

    let results: Vec<(EnergyFixTally, Option<BatchError>)> = states
        .par_chunks_mut(BATCH_CHUNK)
        .zip(masses.par_chunks(BATCH_CHUNK).zip(kinds.par_chunks(BATCH_CHUNK)))
        .enumerate()
        .map(|(chunk, (states, (masses, kinds)))| {
            let mut tally = EnergyFixTally::default();
            let mut failure = None;
            let mut note = |index: usize, result: Result<Option<EnergyFixOutcome>, IntegratorError>| match result {
                Ok(outcome) => tally = tally.record(outcome),
                Err(error) => {
                    if failure.is_none() {
                        failure = Some(BatchError {
                            index: chunk * BATCH_CHUNK + index,
                            error,
                        });
                    }
                }
            };
            for (group, ((states, masses), kinds)) in states
                .chunks_mut(LANES)
                .zip(masses.chunks(LANES))
                .zip(kinds.chunks(LANES))
                .enumerate()
            {
                let start = group * LANES;
                let lanes: Option<&mut [RigidState; LANES]> = states.try_into().ok();
                match lanes {
                    Some(lanes) if kinds.iter().all(|k| *k == BodyKind::Dynamic) => {
                        let results = advance_dynamic_lanes(lanes.each_mut(), from_fn(|i| &masses[i]), dt, settings);
                        for (i, result) in results.into_iter().enumerate() {
                            match result {
                                LaneResult::Advanced(outcome) => note(start + i, Ok(outcome)),
                                overflow => note(start + i, overflow.into_result()),
                            }
                        }
                    }
                    _ => {
                        for (i, ((state, mass), kind)) in states.iter_mut().zip(masses).zip(kinds).enumerate() {
                            note(start + i, advance_validated(state, mass, *kind, dt, settings));
                        }
                    }
                }
            }
            (tally, failure)
        })
        .collect();
    let mut tally = EnergyFixTally::default();
    for (chunk_tally, failure) in results {
        if let Some(failure) = failure {
            return Err(failure);
        }
        tally = tally.merge(chunk_tally);
    }
    Ok(tally)
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
