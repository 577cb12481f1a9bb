//! Stage `integrate`: the poses of every moving body, through `integrate_batch` with the
//! energy-and-momentum fix of Su 2009 section 2.
//!
//! Moving bodies (awake dynamic and kinematic ones) are advanced in parallel by the integrators
//! crate: where they are, when they are one run of the store's arrays (a world without sleepers),
//! or else gathered into dense scratch arrays (the per-awake-body tier of the store) and written
//! back; sleeping and static bodies are not touched. Before the advance, each body also takes the
//! displacement of the solve's split (pseudo) velocities: position `x += h v_split`, orientation
//! `R = exp(h w_split) R`. These push overlapping bodies apart without ever entering the velocities
//! (Catto's split impulses), so the position correction adds no kinetic energy.
//!
//! A body whose kinetic energy is no longer finite (an absurd impulse) would overflow the pose
//! update; it is handed back for quarantine instead of being advanced.

use glam::{DQuat, DVec3};
use rayon::prelude::*;
use shatter_integrators::{BodyKind, EnergyFixTally, IntegrationSettings, MassProperties, RigidState, integrate_batch};

use crate::store::BodyStore;

/// Bodies one task checks before they are advanced in place.
const CHECK_CHUNK: usize = 256;

/// Pseudo velocities of one body from the solve: added to its pose only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SplitVelocity {
    /// Dense index of the body.
    pub(crate) dense: u32,
    /// Linear pseudo velocity, m/s.
    pub(crate) linear: DVec3,
    /// Angular pseudo velocity, world frame, rad/s.
    pub(crate) angular: DVec3,
}

/// Reusable buffers of the stage.
#[derive(Clone, Debug, Default)]
pub(crate) struct IntegrateScratch {
    /// Per body of the moving run: its place in the split list, or [`NO_SPLIT`].
    split_at: Vec<u32>,
    indices: Vec<usize>,
    states: Vec<RigidState>,
    masses: Vec<MassProperties>,
    kinds: Vec<BodyKind>,
}

/// What the stage did.
#[derive(Clone, Debug, Default)]
pub(crate) struct IntegrateOutcome {
    /// Bodies advanced.
    pub(crate) moved: usize,
    /// What the energy fix did.
    pub(crate) energy_fix: EnergyFixTally,
    /// Bodies that could not be advanced: dense index and why.
    pub(crate) failed: Vec<(usize, String)>,
}

/// Advances every moving body by `dt` seconds, first displacing them by `split` velocities.
pub(crate) fn run(
    bodies: &mut BodyStore,
    split: &[SplitVelocity],
    dt: f64,
    settings: &IntegrationSettings,
    scratch: &mut IntegrateScratch,
) -> IntegrateOutcome {
    let mut outcome = IntegrateOutcome::default();
    let moved = bodies.moving().len();
    // The common case: the moving bodies are one run of the store's arrays and all can be
    // advanced, so they are advanced where they are (gathering them into the scratch arrays and
    // back took the stage from 0.077 to 0.093 ms for a thousand awake spheres). The same bits as
    // the copies. Each body of the run takes its split displacement and is checked in one
    // parallel pass (one after another, the displacements were a third of the stage for a
    // thousand resting balls, each pushed out of its neighbours a little every step).
    if let Some((first, states, masses, kinds)) = bodies.moving_run_mut()
        && place_splits(&mut scratch.split_at, split, first, states.len())
    {
        let at = &scratch.split_at;
        let all_advanceable = (states.par_iter_mut().zip(masses).enumerate().with_min_len(CHECK_CHUNK))
            .map(|(i, (state, mass))| {
                if let Some(s) = split.get(at[i] as usize) {
                    displace(state, s.linear * dt, s.angular * dt);
                }
                advanceable(state, mass).is_ok()
            })
            .filter(|&ok| !ok)
            .count()
            == 0;
        if all_advanceable {
            match integrate_batch(states, masses, kinds, dt, settings) {
                Ok(tally) => outcome.energy_fix = tally,
                Err(failure) => outcome.failed.push((first + failure.index, failure.error.to_string())),
            }
            outcome.moved = moved;
            return outcome;
        }
    } else {
        let states = bodies.states_mut();
        for s in split {
            displace(&mut states[s.dense as usize], s.linear * dt, s.angular * dt);
        }
    }
    scratch.indices.clear();
    scratch.states.clear();
    scratch.masses.clear();
    scratch.kinds.clear();
    for &dense in bodies.moving() {
        let dense = dense as usize;
        let view = bodies.view(dense);
        if let Err(energy) = advanceable(view.state, view.mass) {
            outcome
                .failed
                .push((dense, format!("kinetic energy {energy} J before the pose update")));
            continue;
        }
        scratch.indices.push(dense);
        scratch.states.push(*view.state);
        scratch.masses.push(*view.mass);
        scratch.kinds.push(view.kind);
    }
    match integrate_batch(&mut scratch.states, &scratch.masses, &scratch.kinds, dt, settings) {
        Ok(tally) => outcome.energy_fix = tally,
        Err(failure) => outcome
            .failed
            .push((scratch.indices[failure.index], failure.error.to_string())),
    }
    let states = bodies.states_mut();
    for (&dense, state) in scratch.indices.iter().zip(&scratch.states) {
        states[dense] = *state;
    }
    outcome.moved = scratch.indices.len();
    outcome
}

/// Marks a body of the moving run without a split displacement ([`IntegrateScratch::split_at`]).
const NO_SPLIT: u32 = u32::MAX;

/// Writes into `at`, per body of the moving run of `len` bodies starting at dense index `first`,
/// its place in `split` (or [`NO_SPLIT`]); `false` when a body of `split` is outside the run or
/// listed twice (then the displacements are made one after another instead).
fn place_splits(at: &mut Vec<u32>, split: &[SplitVelocity], first: usize, len: usize) -> bool {
    at.clear();
    at.resize(len, NO_SPLIT);
    split.iter().enumerate().all(
        |(k, s)| match (s.dense as usize).checked_sub(first).and_then(|i| at.get_mut(i)) {
            Some(slot) if *slot == NO_SPLIT => {
                *slot = k as u32;
                true
            }
            _ => false,
        },
    )
}

/// Moves a body's pose by `shift` (m) and turns it by the rotation vector `turn` (rad), `R =
/// exp(turn) R`, keeping its world angular velocity: a position correction, not a motion (the
/// split velocities' displacement here, the rigid joints' projection in joint_positions.rs). A
/// displacement whose result would not be finite is left out.
pub(crate) fn displace(state: &mut RigidState, shift: DVec3, turn: DVec3) {
    let moved_position = state.position + shift;
    let turned = (DQuat::from_scaled_axis(turn) * state.orientation).normalize();
    if moved_position.is_finite() && turned.is_finite() {
        let angular = state.angular_velocity();
        state.position = moved_position;
        state.orientation = turned;
        state.set_angular_velocity(angular);
    }
}

/// The kinetic energy of a body whose pose can be advanced, J; `Err` with the energy for one that
/// cannot (an invalid state, or an energy that is not finite: the update would overflow).
fn advanceable(state: &RigidState, mass: &MassProperties) -> Result<f64, f64> {
    let energy = state.kinetic_energy(mass);
    if state.is_valid() && energy.is_finite() {
        Ok(energy)
    } else {
        Err(energy)
    }
}
