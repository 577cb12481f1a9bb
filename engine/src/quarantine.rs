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
use crate::store::{BodyMotion, BodyStore};
use crate::world::World;

/// A body's state at the start of the step, by slot index (for quarantine).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StartState {
    /// The step (a count of [`World::remember_start_states`] calls) it was recorded in.
    step: u64,
    generation: u32,
    state: RigidState,
}

impl World {
    /// Records the state of every moving body by slot, to put a quarantined body back. Only a
    /// moving body can go non-finite; a body woken during the step is recorded as it wakes
    /// ([`World::remember_woken`]).
    pub(crate) fn remember_start_states(&mut self) {
        self.scratch.start_step += 1;
        for &dense in self.bodies.moving() {
            remember(
                &self.bodies,
                &mut self.scratch.start,
                self.scratch.start_step,
                dense as usize,
            );
        }
    }

    /// Records the start states of bodies woken during the step (dense indices); between steps,
    /// the next step's start records them again.
    pub(crate) fn remember_woken(&mut self, woken: &[usize]) {
        for &dense in woken {
            remember(&self.bodies, &mut self.scratch.start, self.scratch.start_step, dense);
        }
    }

    /// Records the start state of a body that appeared during the step (a spawn).
    pub(crate) fn remember_spawn(&mut self, id: BodyId) {
        if let Ok(dense) = self.bodies.dense_index(id) {
            remember(&self.bodies, &mut self.scratch.start, self.scratch.start_step, dense);
        }
    }

    /// Quarantines every body whose state is not finite, and the bodies in `failed` (dense
    /// index, reason): back to its start-of-step pose, zero velocity, held still. Returns how many
    /// it quarantined.
    pub(crate) fn quarantine_non_finite(
        &mut self,
        stage: Stage,
        failed: &[(usize, String)],
        report: &mut StepReport,
    ) -> usize {
        let mut caught: Vec<(usize, String)> = failed.to_vec();
        // Only a body that moves this step can have changed (sleeping, static and quarantined
        // bodies keep their checked states), so a resting world costs nothing here.
        for &dense in self.bodies.moving() {
            let (dense, state) = (dense as usize, &self.bodies.states()[dense as usize]);
            if !state.is_valid() && !failed.iter().any(|(i, _)| *i == dense) {
                let detail = match state.validate() {
                    Err(error) => error.to_string(),
                    Ok(()) => "state is not finite".to_string(),
                };
                caught.push((dense, detail));
            }
        }
        let count = caught.len();
        for (dense, detail) in caught {
            let id = self.bodies.records()[dense].id;
            let start = self.scratch.start.get(id.index as usize).copied().flatten();
            let state = &mut self.bodies.states_mut()[dense];
            let step = self.scratch.start_step;
            if let Some(start) = start.filter(|s| s.generation == id.generation && s.step == step) {
                *state = start.state;
            }
            state.linear_velocity = DVec3::ZERO;
            state.body_angular_velocity = DVec3::ZERO;
            if !state.is_valid() {
                // No finite state to go back to (cannot happen for bodies the world validated).
                state.position = DVec3::ZERO;
                state.orientation = DQuat::IDENTITY;
            }
            self.bodies.update_motion(|motion| {
                motion[dense].flags = BodyMotion::QUARANTINED;
                motion[dense].resting_time = 0.0;
            });
            report.quarantined.push(Quarantine { id, stage, detail });
        }
        count
    }
}

/// Records in `start` the state of the body at `dense` as it is in step number `step`.
fn remember(bodies: &BodyStore, start: &mut Vec<Option<StartState>>, step: u64, dense: usize) {
    let view = bodies.view(dense);
    let slot = view.record.id.index as usize;
    if start.len() <= slot {
        start.resize(slot + 1, None);
    }
    start[slot] = Some(StartState {
        step,
        generation: view.record.id.generation,
        state: *view.state,
    });
}
