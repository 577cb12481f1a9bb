//! Quarantine: a body whose state stops being finite during a step is caught after the stage
//! that broke it, put back where the step began with zero velocity, and held still (flagged
//! [`BodyMotion::QUARANTINED`]) until the user sets its pose or velocity; the step's report names
//! it with the stage (Rapier's quarantine of non-finite bodies). Its neighbours never see the NaN:
//! every stage after the one that caught it treats the body as fixed.

use glam::{DQuat, DVec3};
use shatter_integrators::RigidState;

use crate::handle::BodyId;
use crate::report::{Quarantine, StepReport};
use crate::step::Stage;
use crate::store::BodyMotion;
use crate::world::World;

/// A body's state at the start of the step, by slot index (for quarantine).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StartState {
    generation: u32,
    state: RigidState,
}

impl World {
    /// Records every body's state by slot, to put a quarantined body back.
    pub(crate) fn remember_start_states(&mut self) {
        let start = &mut self.scratch.start;
        start.clear();
        for (record, state) in self.bodies.records().iter().zip(self.bodies.states()) {
            let slot = record.id.index as usize;
            if start.len() <= slot {
                start.resize(slot + 1, None);
            }
            start[slot] = Some(StartState {
                generation: record.id.generation,
                state: *state,
            });
        }
    }

    /// Records the start state of a body that appeared during the step (a spawn).
    pub(crate) fn remember_spawn(&mut self, id: BodyId) {
        let Ok(view) = self.bodies.get(id) else { return };
        let state = *view.state;
        let slot = id.index as usize;
        let start = &mut self.scratch.start;
        if start.len() <= slot {
            start.resize(slot + 1, None);
        }
        start[slot] = Some(StartState {
            generation: id.generation,
            state,
        });
    }

    /// Quarantines every body whose state is not finite, and the bodies in `failed` (dense
    /// index, reason): back to its start-of-step pose, zero velocity, held still.
    pub(crate) fn quarantine_non_finite(&mut self, stage: Stage, failed: &[(usize, String)], report: &mut StepReport) {
        let mut caught: Vec<(usize, String)> = failed.to_vec();
        // Only a body that moves this step can have changed (sleeping, static and quarantined
        // bodies keep their checked states), so a resting world costs one flag test per body.
        for (dense, state) in self.bodies.states().iter().enumerate() {
            if self.bodies.is_moving(dense) && !state.is_valid() && !failed.iter().any(|(i, _)| *i == dense) {
                let detail = match state.validate() {
                    Err(error) => error.to_string(),
                    Ok(()) => "state is not finite".to_string(),
                };
                caught.push((dense, detail));
            }
        }
        for (dense, detail) in caught {
            let id = self.bodies.records()[dense].id;
            let start = self.scratch.start.get(id.index as usize).copied().flatten();
            let state = &mut self.bodies.states_mut()[dense];
            if let Some(start) = start.filter(|s| s.generation == id.generation) {
                *state = start.state;
            }
            state.linear_velocity = DVec3::ZERO;
            state.body_angular_velocity = DVec3::ZERO;
            if !state.is_valid() {
                // No finite state to go back to (cannot happen for bodies the world validated).
                state.position = DVec3::ZERO;
                state.orientation = DQuat::IDENTITY;
            }
            let motion = &mut self.bodies.motion_mut()[dense];
            motion.flags = BodyMotion::QUARANTINED;
            motion.resting_time = 0.0;
            report.quarantined.push(Quarantine { id, stage, detail });
        }
    }
}
