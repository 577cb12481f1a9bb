//! [`World::step`]: one time step, read top to bottom as its own table of contents.
//!
//! The stages, in order (the [`Stage`] enum; its order is asserted as the step runs):
//!
//! | stage | what it does |
//! |---|---|
//! | `broad_phase` | candidate pairs from swept boxes (start and predicted end of the step) |
//! | `collide` | narrow phase per pair in parallel; elastic collision pass at predicted positions, each impulse clamped (Su 2009 sections 3.1, 3.2) |
//! | `apply_forces` | gravity into the velocities of awake dynamic bodies |
//! | `solve_constraints` | contacts and joints as one LCP, warm started; split velocities for positions |
//! | `fracture` | every registered fracture model; then the queued spawns and despawns |
//! | `integrate` | poses, with the energy-and-momentum fix (Su 2009 section 2) |
//! | `sleep` | wake requests granted; resting islands go to sleep |
//!
//! After every stage that changes states, a body whose state is no longer finite is caught,
//! put back where the step began with zero velocity, and quarantined (reported with its id),
//! so NaN never spreads through contacts to its neighbours.

use core::fmt;
use std::time::Instant;

use shatter_integrators::RigidState;

use crate::contacts::PairContacts;
use crate::error::EngineError;
use crate::handle::BodyId;
use crate::report::{Quarantine, StepReport};
use crate::settings::check_time_step;
use crate::stages::integrate::{IntegrateScratch, SplitVelocity};
use crate::stages::{broad_phase, collide, collision_pass, forces, integrate, sleep, solve};
use crate::store::BodyMotion;
use crate::world::{World, kinetic_energy, potential_energy};

/// The stages of a step, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// Candidate pairs from swept boxes.
    BroadPhase,
    /// Narrow phase and the elastic collision pass.
    Collide,
    /// Gravity into velocities.
    ApplyForces,
    /// Contacts and joints as one LCP.
    SolveConstraints,
    /// Fracture models and their queued structural changes.
    Fracture,
    /// Poses.
    Integrate,
    /// Islands to sleep and wake.
    Sleep,
}

impl Stage {
    /// Number of stages.
    pub const COUNT: usize = 7;

    /// Every stage in the order the step runs them.
    pub const ALL: [Stage; Stage::COUNT] = [
        Stage::BroadPhase,
        Stage::Collide,
        Stage::ApplyForces,
        Stage::SolveConstraints,
        Stage::Fracture,
        Stage::Integrate,
        Stage::Sleep,
    ];

    /// Position in [`Stage::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The stage's name as the docs and reports write it.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::BroadPhase => "broad_phase",
            Stage::Collide => "collide",
            Stage::ApplyForces => "apply_forces",
            Stage::SolveConstraints => "solve_constraints",
            Stage::Fracture => "fracture",
            Stage::Integrate => "integrate",
            Stage::Sleep => "sleep",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Times the stages and checks that they run in [`Stage::ALL`] order, each once.
struct StageClock {
    next: usize,
    started: Instant,
}

impl StageClock {
    fn new() -> Self {
        Self {
            next: 0,
            started: Instant::now(),
        }
    }

    fn begin(&mut self, stage: Stage) {
        assert_eq!(stage.index(), self.next, "stage {stage} runs out of order");
        self.started = Instant::now();
    }

    fn end(&mut self, stage: Stage, count: usize, report: &mut StepReport) {
        assert_eq!(stage.index(), self.next, "stage {stage} ends out of order");
        let figures = &mut report.stages[stage.index()];
        figures.time = self.started.elapsed();
        figures.count = count;
        self.next += 1;
    }
}

/// How many times one step wakes islands touched by moving bodies and looks for the woken
/// bodies' contacts; a chain of sleeping islands longer than this wakes over several steps.
const WAKE_ROUNDS: usize = 8;

/// A body's state at the start of the step, by slot index (for quarantine).
#[derive(Clone, Copy, Debug)]
struct StartState {
    generation: u32,
    state: RigidState,
}

/// Buffers the step reuses from one step to the next.
#[derive(Clone, Debug, Default)]
pub(crate) struct StepScratch {
    pairs: Vec<[u32; 2]>,
    broad: broad_phase::BroadScratch,
    start: Vec<Option<StartState>>,
    wake_requests: Vec<u32>,
    links: Vec<[u32; 2]>,
    integrate: IntegrateScratch,
}

impl World {
    /// Advances the world by `dt` seconds: one step, every stage once (see the [module
    /// docs](self)). Frame-rate use means `dt = 1/30`.
    ///
    /// Fails, changing nothing, when `dt` is not a finite number of seconds in `(0, 1]`.
    pub fn step(&mut self, dt: f64) -> Result<StepReport, EngineError> {
        check_time_step(dt)?;
        let mut report = StepReport {
            dt,
            kinetic_energy_before: kinetic_energy(&self.bodies),
            potential_energy_before: potential_energy(&self.bodies, self.settings.gravity),
            ..StepReport::default()
        };
        self.remember_start_states();
        let mut clock = StageClock::new();

        clock.begin(Stage::BroadPhase);
        report.woken += self.wake_jointed();
        let mut pairs = std::mem::take(&mut self.scratch.pairs);
        let found = broad_phase::find_pairs(
            &self.bodies,
            &mut self.broad_phase,
            dt,
            self.settings.contact_margin,
            &mut pairs,
            &mut self.scratch.broad,
        );
        let overflowed = match found {
            Ok(overflowed) => overflowed,
            Err(error) => {
                self.scratch.pairs = pairs;
                return Err(error);
            }
        };
        self.quarantine_non_finite(Stage::BroadPhase, &overflowed, &mut report);
        report.pairs = pairs.len();
        clock.end(Stage::BroadPhase, pairs.len(), &mut report);

        clock.begin(Stage::Collide);
        // The narrow phase fails only on a non-finite pose or margin, which validation and
        // quarantine rule out: a failure here is a bug, reported rather than hidden.
        let narrow =
            collide::narrow_phase(&self.bodies, &pairs, dt, self.settings.contact_margin).and_then(|mut contacts| {
                report.woken += self.wake_touched(&mut pairs, &mut contacts, dt)?;
                Ok(contacts)
            });
        self.scratch.pairs = pairs;
        let mut contacts = narrow?;
        let collisions = collision_pass::run(&mut self.bodies, &mut contacts, dt, &self.settings);
        report.manifolds = contacts.len();
        report.contacts = contacts.iter().map(|p| p.contacts.len()).sum();
        report.collision_impulses = collisions.impulses;
        report.clamped_collisions = collisions.clamped;
        report.energy_removed_by_clamping += collisions.energy_removed;
        self.quarantine_non_finite(Stage::Collide, &[], &mut report);
        clock.end(Stage::Collide, report.contacts, &mut report);

        clock.begin(Stage::ApplyForces);
        let pushed = forces::run(&mut self.bodies, self.settings.gravity, dt);
        self.quarantine_non_finite(Stage::ApplyForces, &[], &mut report);
        clock.end(Stage::ApplyForces, pushed, &mut report);

        clock.begin(Stage::SolveConstraints);
        let solved = solve::run(self, &mut contacts, dt);
        report.solver_rows = solved.rows;
        report.solver_islands = solved.islands;
        report.solver_iterations = solved.iterations;
        report.clamped_solver_increments = solved.clamped;
        report.solver_failures = solved.failures.clone();
        self.quarantine_non_finite(Stage::SolveConstraints, &[], &mut report);
        clock.end(Stage::SolveConstraints, solved.rows, &mut report);

        clock.begin(Stage::Fracture);
        let hooks = self.fracture_stage(&contacts, &solved.joints, dt, &mut report);
        self.quarantine_non_finite(Stage::Fracture, &[], &mut report);
        clock.end(Stage::Fracture, hooks, &mut report);

        clock.begin(Stage::Integrate);
        let split = self.split_displacements(&solved.split);
        let moved = integrate::run(
            &mut self.bodies,
            &split,
            dt,
            &self.settings.integration,
            &mut self.scratch.integrate,
        );
        self.quarantine_non_finite(Stage::Integrate, &moved.failed, &mut report);
        clock.end(Stage::Integrate, moved.moved, &mut report);

        clock.begin(Stage::Sleep);
        self.collect_links(&contacts);
        let rested = sleep::run(
            &mut self.bodies,
            &self.scratch.links,
            &mut self.scratch.wake_requests,
            dt,
            &self.settings.sleep,
        );
        report.fell_asleep = rested.fell_asleep;
        report.woken += rested.woken;
        clock.end(Stage::Sleep, rested.fell_asleep, &mut report);

        contacts.retain(|pair| self.bodies.contains(pair.body_a) && self.bodies.contains(pair.body_b));
        self.contact_cache.rebuild(&contacts);
        self.contacts = contacts;
        self.time += dt;
        self.steps += 1;
        report.awake_bodies = (0..self.bodies.len())
            .filter(|&i| self.bodies.is_awake_dynamic(i))
            .count();
        report.kinetic_energy_after = kinetic_energy(&self.bodies);
        report.potential_energy_after = potential_energy(&self.bodies, self.settings.gravity);
        Ok(report)
    }

    /// Records every body's state by slot, to put a quarantined body back.
    fn remember_start_states(&mut self) {
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
    fn quarantine_non_finite(&mut self, stage: Stage, failed: &[(usize, String)], report: &mut StepReport) {
        let mut caught: Vec<(usize, String)> = failed.to_vec();
        for (dense, state) in self.bodies.states().iter().enumerate() {
            if !state.is_valid() && !failed.iter().any(|(i, _)| *i == dense) {
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
            state.linear_velocity = glam::DVec3::ZERO;
            state.body_angular_velocity = glam::DVec3::ZERO;
            if !state.is_valid() {
                // No finite state to go back to (cannot happen for bodies the world validated).
                state.position = glam::DVec3::ZERO;
                state.orientation = glam::DQuat::IDENTITY;
            }
            let motion = &mut self.bodies.motion_mut()[dense];
            motion.flags = BodyMotion::QUARANTINED;
            motion.resting_time = 0.0;
            report.quarantined.push(Quarantine { id, stage, detail });
        }
    }

    /// Wakes, before anything is computed, the sleeping islands jointed to moving bodies.
    fn wake_jointed(&mut self) -> usize {
        let mut tags = Vec::new();
        for joint in self.joints.joints() {
            let Ok(a) = self.bodies.dense_index(joint.body_a) else {
                continue;
            };
            let Some(Ok(b)) = joint.body_b.map(|b| self.bodies.dense_index(b)) else {
                continue;
            };
            tags.extend(sleep::wake_request(&self.bodies, a, b));
        }
        tags.sort_unstable();
        tags.dedup();
        tags.into_iter()
            .map(|tag| sleep::wake_island(&mut self.bodies, tag))
            .sum()
    }

    /// Wakes the sleeping islands that `contacts` show touched by moving bodies, and adds the
    /// pairs and contacts the woken bodies bring (with each other and with static bodies), so
    /// they take part in this step with all their contacts. Repeats while waking spreads, up to
    /// [`WAKE_ROUNDS`] times; islands still touched after that wake at the end of the step.
    fn wake_touched(
        &mut self,
        pairs: &mut Vec<[u32; 2]>,
        contacts: &mut Vec<PairContacts>,
        dt: f64,
    ) -> Result<usize, EngineError> {
        let mut woken = 0;
        for round in 0..=WAKE_ROUNDS {
            let mut tags: Vec<u32> = contacts
                .iter()
                .filter_map(|pair| sleep::wake_request(&self.bodies, pair.dense[0] as usize, pair.dense[1] as usize))
                .collect();
            tags.sort_unstable();
            tags.dedup();
            if tags.is_empty() {
                break;
            }
            if round == WAKE_ROUNDS {
                self.scratch.wake_requests.extend(tags);
                break;
            }
            for tag in tags {
                woken += sleep::wake_island(&mut self.bodies, tag);
            }
            let records = self.bodies.records();
            let key = |pair: &[u32; 2]| (records[pair[0] as usize].id, records[pair[1] as usize].id);
            let mut fresh = Vec::new();
            broad_phase::find_pairs(
                &self.bodies,
                &mut self.broad_phase,
                dt,
                self.settings.contact_margin,
                &mut fresh,
                &mut self.scratch.broad,
            )?;
            // Bodies that overflow were caught by the first search of the step and have no box.
            debug_assert!(fresh.iter().all(|[a, b]| {
                self.bodies.states()[*a as usize].is_valid() && self.bodies.states()[*b as usize].is_valid()
            }));
            fresh.retain(|pair| pairs.binary_search_by_key(&key(pair), key).is_err());
            let extra = collide::narrow_phase(&self.bodies, &fresh, dt, self.settings.contact_margin)?;
            pairs.extend(fresh);
            pairs.sort_unstable_by_key(key);
            contacts.extend(extra);
            contacts.sort_by_key(|pair| (pair.body_a, pair.body_b));
        }
        Ok(woken)
    }

    /// The step's contact and joint links as dense indices of live bodies (after the command
    /// buffer, so looked up by handle).
    fn collect_links(&mut self, contacts: &[PairContacts]) {
        let links = &mut self.scratch.links;
        links.clear();
        let dense = |id: BodyId| self.bodies.dense_index(id).ok().map(|i| i as u32);
        for pair in contacts {
            if let (Some(a), Some(b)) = (dense(pair.body_a), dense(pair.body_b)) {
                links.push([a, b]);
            }
        }
        for joint in self.joints.joints() {
            if let (Some(a), Some(Some(b))) = (dense(joint.body_a), joint.body_b.map(dense)) {
                links.push([a, b]);
            }
        }
    }

    /// The solve's split velocities keyed by handle, as dense entries of live bodies.
    fn split_displacements(&self, split: &[(BodyId, glam::DVec3, glam::DVec3)]) -> Vec<SplitVelocity> {
        split
            .iter()
            .filter_map(|&(id, linear, angular)| {
                let dense = self.bodies.dense_index(id).ok()?;
                Some(SplitVelocity {
                    dense: dense as u32,
                    linear,
                    angular,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage table in this module's docs is checked against [`Stage::ALL`], so the two cannot
    /// drift apart.
    #[test]
    fn step_docs_list_the_stages_in_enum_order() {
        let documented: Vec<&str> = include_str!("step.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("//! | `"))
            .filter_map(|rest| rest.split('`').next())
            .collect();
        let declared: Vec<&str> = Stage::ALL.iter().map(|stage| stage.name()).collect();
        assert_eq!(documented, declared);
        assert!(
            Stage::ALL
                .windows(2)
                .all(|w| w[0] < w[1] && w[0].index() + 1 == w[1].index())
        );
    }
}
