//! Stage `fracture`: every registered [`crate::FractureModel`] in registration order, then the
//! command buffer.
//!
//! Each hook gets a [`FractureContext`] over the post-solve state; what it asks for (impulses,
//! joint breaks) is applied when it returns `Ok` and discarded with its queued commands when it
//! returns `Err` (see [`crate::fracture`] for the full contract). After the last hook the queued
//! spawns and despawns are applied in order, and each model is told which bodies its spawns
//! became. The kinetic energy across the whole stage is reported as the energy fracture injected.

use core::ops::Range;

use crate::commands::{Command, Spawned};
use crate::contacts::PairContacts;
use crate::fracture::{Action, FractureContext, FractureModel};
use crate::joints::SolvedJoint;
use crate::report::kinetic_energy;
use crate::report::{FractureFailure, StepReport};
use crate::world::World;

impl World {
    /// Runs the fracture models and applies their commands; returns how many hooks ran.
    pub(crate) fn fracture_stage(
        &mut self,
        contacts: &[PairContacts],
        joints: &[SolvedJoint],
        dt: f64,
        report: &mut StepReport,
    ) -> usize {
        if self.fracture_models.is_empty() && self.commands.is_empty() {
            return 0;
        }
        let energy_before = kinetic_energy(&self.bodies);
        let mut models: Vec<Box<dyn FractureModel>> = std::mem::take(&mut self.fracture_models);
        let mut tickets: Vec<Range<u32>> = Vec::with_capacity(models.len());
        for model in models.iter_mut() {
            let mark = self.commands.len();
            let first_ticket = self.commands.next_ticket();
            let mut context = FractureContext {
                dt,
                time: self.time,
                gravity: self.settings.gravity,
                bodies: &self.bodies,
                contacts,
                joints: &self.joints,
                solved_joints: joints,
                actions: Vec::new(),
                commands: &mut self.commands,
            };
            let result = model.fracture(&mut context);
            let actions = context.actions;
            match result {
                Ok(()) => self.apply_actions(&actions, report),
                Err(message) => {
                    self.commands.truncate(mark);
                    report.fracture_failures.push(FractureFailure {
                        model: model.name().to_string(),
                        message,
                    });
                }
            }
            tickets.push(first_ticket..self.commands.next_ticket());
        }
        let spawned = self.apply_commands(report);
        for (model, range) in models.iter_mut().zip(tickets) {
            let own: Vec<Spawned> = spawned
                .iter()
                .filter(|s| range.contains(&s.ticket.0))
                .copied()
                .collect();
            if !own.is_empty() {
                model.spawned(&own);
            }
        }
        let hooks = models.len();
        self.fracture_models = models;
        report.energy_injected_by_fracture = kinetic_energy(&self.bodies) - energy_before;
        hooks
    }

    /// Applies one hook's impulses and joint breaks, in order.
    fn apply_actions(&mut self, actions: &[Action], report: &mut StepReport) {
        for action in actions {
            match *action {
                Action::Impulse {
                    id,
                    linear,
                    point,
                    angular,
                } => {
                    // Checked when queued; bodies cannot disappear before the commands apply.
                    if let Err(error) = self.apply_impulse_at(id, linear, point, angular) {
                        report.command_failures.push(format!("impulse on {id}: {error}"));
                    }
                }
                Action::BreakJoint(id) => {
                    // A joint asked to break twice breaks once.
                    if self.remove_joint(id).is_ok() {
                        report.broken_joints += 1;
                    }
                }
            }
        }
    }

    /// Applies the queued spawns and despawns in order; returns the spawns that succeeded.
    fn apply_commands(&mut self, report: &mut StepReport) -> Vec<Spawned> {
        let mut spawned = Vec::new();
        for command in self.commands.take() {
            match command {
                Command::Spawn { ticket, desc } => match self.add_body(*desc) {
                    Ok(id) => {
                        self.remember_spawn(id);
                        spawned.push(Spawned { ticket, id });
                    }
                    Err(error) => report.command_failures.push(format!("spawn {}: {error}", ticket.0)),
                },
                Command::Despawn { id } => match self.remove_body(id) {
                    Ok(joints) => {
                        report.fractures += 1;
                        report.broken_joints += joints;
                    }
                    Err(error) => report.command_failures.push(format!("despawn: {error}")),
                },
            }
        }
        report.spawned.extend_from_slice(&spawned);
        spawned
    }
}
