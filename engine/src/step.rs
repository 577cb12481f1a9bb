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
//! | `integrate` | poses, with the energy-and-momentum fix (Su 2009 section 2); then rigid joints' anchors projected together, positions only |
//! | `sleep` | wake requests granted; resting islands go to sleep |
//!
//! After every stage that changes states, a body whose state is no longer finite is caught,
//! put back where the step began with zero velocity, and quarantined (reported with its id),
//! so NaN never spreads through contacts to its neighbours. (After the stages that change only
//! velocities, through the kinetic energy the step reports: `World::end_velocity_stage`.)
//!
//! The stages share their work among the threads of the rayon pool the step is called in, or
//! the whole step runs on one thread, whichever the world measured faster lately
//! ([`WorldSettings::pool_use`](crate::WorldSettings::pool_use), pool_use.rs).

use core::fmt;
use std::time::Instant;

use crate::awake_pool::AwakePool;
use crate::contacts::PairContacts;
use crate::error::EngineError;
use crate::handle::BodyId;
use crate::manifold_cache::CachedManifold;
use crate::quarantine::{StartState, remember_moving};
use crate::report::StepReport;
use crate::report::{kinetic_energy, potential_energy};
use crate::settings::check_time_step;
use crate::stages::integrate::{IntegrateScratch, SplitVelocity};
use crate::stages::{broad_phase, collide, collision_pass, forces, integrate, joint_positions, sleep, solve};
use rayon::prelude::*;
use shatter_integrators::BodyKind;
use shatter_integrators::parallel::{alone, join};

use crate::store::BodyStore;
use crate::world::World;

/// Contact pairs from which the sleep stage's links are read on the pool.
const PARALLEL_LINKS: usize = 4096;

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
    /// The kinetic energy the last stage ended with (or the step began with), J: nothing touches
    /// the bodies between stages, so the next stage begins from it (checked in debug builds).
    energy: f64,
}

impl StageClock {
    /// A clock for a step that begins with kinetic energy `energy`, J.
    fn new(energy: f64) -> Self {
        Self {
            next: 0,
            started: Instant::now(),
            energy,
        }
    }

    /// Starts `stage`, recording the kinetic energy it begins from.
    fn begin(&mut self, stage: Stage, bodies: &BodyStore, report: &mut StepReport) {
        assert_eq!(stage.index(), self.next, "stage {stage} runs out of order");
        debug_assert_eq!(
            kinetic_energy(bodies).to_bits(),
            self.energy.to_bits(),
            "bodies changed between stages, before {stage}"
        );
        report.stages[stage.index()].kinetic_energy_before = self.energy;
        self.started = Instant::now();
    }

    /// Ends `stage`: its time (the energy sums excluded), item count and final kinetic energy.
    fn end(&mut self, stage: Stage, count: usize, bodies: &BodyStore, report: &mut StepReport) {
        self.end_at(stage, count, report);
        self.set_energy(stage, kinetic_energy(bodies), report);
    }

    /// Ends `stage` as [`StageClock::end`] does for a stage that changed no velocity: its final
    /// kinetic energy is the one it began with, the same bits as summing it again.
    fn end_unchanged(&mut self, stage: Stage, count: usize, bodies: &BodyStore, report: &mut StepReport) {
        debug_assert_eq!(
            kinetic_energy(bodies).to_bits(),
            self.energy.to_bits(),
            "{stage} changed a velocity"
        );
        self.end_at(stage, count, report);
        self.set_energy(stage, self.energy, report);
    }

    /// Records `stage`'s time and item count and moves on to the next stage.
    fn end_at(&mut self, stage: Stage, count: usize, report: &mut StepReport) {
        assert_eq!(stage.index(), self.next, "stage {stage} ends out of order");
        let figures = &mut report.stages[stage.index()];
        figures.time = self.started.elapsed();
        figures.count = count;
        self.next += 1;
    }

    /// Sets the kinetic energy the last ended `stage` left, J.
    fn set_energy(&mut self, stage: Stage, energy: f64, report: &mut StepReport) {
        self.energy = energy;
        report.stages[stage.index()].kinetic_energy_after = energy;
    }
}

/// Buffers the step reuses from one step to the next.
#[derive(Debug, Default)]
pub(crate) struct StepScratch {
    pub(crate) pairs: Vec<[u32; 2]>,
    pub(crate) broad: broad_phase::BroadScratch,
    pub(crate) narrow: collide::NarrowScratch,
    pub(crate) collisions: collision_pass::CollisionScratch,
    /// The contact list of the step before last: a step writes its contacts over its records
    /// (collide.rs), and last step's list takes its place here when the step ends.
    pub(crate) contacts: Vec<PairContacts>,
    /// Likewise for the manifold cache's entries.
    pub(crate) manifolds: Vec<CachedManifold>,
    /// Moving bodies' states at the start of the step, by slot index (for quarantine).
    pub(crate) start: Vec<Option<StartState>>,
    /// Number of the step `start` belongs to.
    pub(crate) start_step: u64,
    pub(crate) wake_requests: Vec<u32>,
    pub(crate) links: Vec<[u32; 2]>,
    pub(crate) integrate: IntegrateScratch,
    /// The solve stage's rows, patches and islands.
    pub(crate) solve: solve::SolveScratch,
    /// The sleep stage's arrays.
    pub(crate) sleep: sleep::SleepScratch,
}

/// Moving bodies from which a step keeps the pool's other threads looking for its work
/// (awake_pool.rs): with fewer, its stages hardly share work, and a world asleep steps in about a
/// microsecond, which waking the other threads would double. Below it, too, a step runs where it
/// is called under `PoolUse::Faster`, untimed (pool_use.rs).
const AWAKE_POOL_BODIES: usize = 64;

impl World {
    /// Advances the world by `dt` seconds: one step, every stage once (see the [module
    /// docs](self)). Frame-rate use means `dt = 1/30`.
    ///
    /// Its work is shared among the threads of the rayon pool it is called in, or it runs on one
    /// thread, as [`WorldSettings::pool_use`](crate::WorldSettings::pool_use) says (by default
    /// whichever the world measured faster lately); the results are the same bits either way.
    ///
    /// Fails, changing nothing, when `dt` is not a finite number of seconds in `(0, 1]`.
    pub fn step(&mut self, dt: f64) -> Result<StepReport, EngineError> {
        check_time_step(dt)?;
        // Shared among the pool's threads or run on one, whichever is faster here (pool_use.rs);
        // the choice is put back after the step, whether it failed or not.
        let shares = self.bodies.moving().len() >= AWAKE_POOL_BODIES;
        let mut choice = std::mem::take(&mut self.pool_choice);
        // A step with too few moving bodies to share its work hands none of it to the pool.
        let (stepped, threads) = choice.run(self.settings.pool_use, shares, || {
            if shares {
                self.step_here(dt, shares)
            } else {
                alone(|| self.step_here(dt, shares))
            }
        });
        self.pool_choice = choice;
        let mut report = stepped?;
        report.threads = threads;
        Ok(report)
    }

    /// [`World::step`] on the calling thread, sharing its work among the threads of the rayon
    /// pool it is called in; `shares` says whether there are enough moving bodies for the stages
    /// to share work at all.
    fn step_here(&mut self, dt: f64, shares: bool) -> Result<StepReport, EngineError> {
        // The pool's other threads watch for the step's parallel work until it returns.
        let _awake = shares.then(AwakePool::start);
        let mut report = StepReport {
            dt,
            kinetic_energy_before: kinetic_energy(&self.bodies),
            potential_energy_before: potential_energy(&self.bodies, self.settings.gravity),
            ..StepReport::default()
        };
        // The moving bodies' start poses are recorded beside the broad phase, below.
        let start_step = self.begin_start_states();
        let mut clock = StageClock::new(report.kinetic_energy_before);

        clock.begin(Stage::BroadPhase, &self.bodies, &mut report);
        report.woken += self.wake_jointed();
        let mut pairs = std::mem::take(&mut self.scratch.pairs);
        let connected = self.joints.connected_pairs();
        let edited = self.bodies.take_edited();
        // Recording the start poses reads only the store, which finding pairs does not change,
        // and nothing reads the record before a stage ends (a quarantine): the pool's other
        // thread records them while the step's thread finds pairs. On the step's thread before
        // the broad phase, they were 10 us of the aligned 1000-box pile's step on two threads.
        let (found, ()) = join(
            || {
                broad_phase::find_pairs(
                    &self.bodies,
                    &mut self.broad_phase,
                    dt,
                    self.settings.contact_margin,
                    edited,
                    &connected,
                    &mut pairs,
                    &mut self.scratch.broad,
                )
            },
            || remember_moving(&self.bodies, &mut self.scratch.start, start_step),
        );
        let overflowed = match found {
            Ok(overflowed) => overflowed,
            Err(error) => {
                self.scratch.pairs = pairs;
                return Err(error);
            }
        };
        let quarantined = self.quarantine_non_finite(Stage::BroadPhase, &overflowed, &mut report);
        report.pairs = pairs.len();
        // Finding pairs moves nothing; only a quarantine (which stops a body) changes a velocity.
        if quarantined == 0 {
            clock.end_unchanged(Stage::BroadPhase, pairs.len(), &self.bodies, &mut report);
        } else {
            clock.end(Stage::BroadPhase, pairs.len(), &self.bodies, &mut report);
        }

        clock.begin(Stage::Collide, &self.bodies, &mut report);
        // The narrow phase fails only on a non-finite pose or margin, which validation and
        // quarantine rule out: a failure here is a bug, reported rather than hidden.
        let mut contacts = std::mem::take(&mut self.scratch.contacts);
        let mut manifolds = std::mem::take(&mut self.scratch.manifolds);
        let job = collide::Narrow::new(&self.bodies, &self.manifold_cache, &self.settings, dt);
        let narrow = collide::narrow_phase(
            &job,
            &pairs,
            &mut self.scratch.narrow,
            (&mut contacts, 0),
            (&mut manifolds, 0),
        )
        .and_then(|()| self.wake_touched(&mut pairs, &mut contacts, &mut manifolds, &connected, dt));
        self.scratch.pairs = pairs;
        let woken_here = narrow?;
        report.woken += woken_here;
        report.carried_manifolds = std::mem::take(&mut self.scratch.narrow.carried);
        self.manifold_cache.swap(&mut manifolds);
        self.scratch.manifolds = manifolds;
        let collisions = collision_pass::run(
            &mut self.bodies,
            &mut contacts,
            dt,
            &self.settings,
            &mut self.scratch.collisions,
        );
        report.manifolds = contacts.len();
        report.contacts = contacts.iter().map(|p| p.contacts.len()).sum();
        report.collision_impulses = collisions.impulses;
        report.clamped_collisions = collisions.clamped;
        report.energy_removed_by_clamping += collisions.energy_removed;
        // Only the collision pass's impulses change a velocity here, and waking puts bodies (at
        // rest) on the list the energy is summed over: with neither, the stage ends with the
        // energy it began with, bit for bit, and one sum over the moving bodies is saved. With
        // the same at the sleep stage's end: 19.63 -> 19.55 million instructions a step for the
        // aligned 1000-box pile at 60 Hz (`tools/instructions.sh pile_1000 --hz 60`).
        if collisions.impulses == 0 && woken_here == 0 {
            clock.end_unchanged(Stage::Collide, report.contacts, &self.bodies, &mut report);
        } else {
            self.end_velocity_stage(&mut clock, Stage::Collide, report.contacts, &mut report);
        }

        clock.begin(Stage::ApplyForces, &self.bodies, &mut report);
        let pushed = forces::run(&mut self.bodies, self.settings.gravity, dt);
        self.end_velocity_stage(&mut clock, Stage::ApplyForces, pushed, &mut report);

        clock.begin(Stage::SolveConstraints, &self.bodies, &mut report);
        let mut solved = solve::run(self, &mut contacts, dt);
        report.solver_rows = solved.rows;
        report.warm_started = solved.warm_started;
        report.solver_islands = solved.islands;
        report.solver_iterations = solved.iterations;
        report.solver_velocity_iterations = solved.velocity_iterations;
        report.clamped_solver_increments = solved.clamped;
        report.solver_failures = solved.failures.clone();
        // A joint that carried more than its breaking impulse did its work this step and is gone
        // from the next; fracture hooks no longer see it.
        for &id in &solved.broken {
            if self.remove_joint(id).is_ok() {
                report.broken_joints += 1;
            }
        }
        solved.joints.retain(|joint| !solved.broken.contains(&joint.id));
        self.end_velocity_stage(&mut clock, Stage::SolveConstraints, solved.rows, &mut report);

        clock.begin(Stage::Fracture, &self.bodies, &mut report);
        // Without a model or a queued command the stage does nothing: nothing to check.
        let idle = self.fracture_models.is_empty() && self.commands.is_empty();
        let hooks = self.fracture_stage(&contacts, &solved.joints, dt, &mut report);
        if idle {
            clock.end_unchanged(Stage::Fracture, hooks, &self.bodies, &mut report);
        } else {
            self.quarantine_non_finite(Stage::Fracture, &[], &mut report);
            clock.end(Stage::Fracture, hooks, &self.bodies, &mut report);
        }

        // The contacts are final once the fracture stage has run: those of bodies it removed go,
        // and the rest are what the next step's warm start reads (contact_cache.rs). The cache is
        // rebuilt from them beside the integration, which reads neither, so that the pool's other
        // thread builds it while the step's thread integrates (the integration's own pieces go to
        // whichever thread is free). Rebuilt after the step's last stage, on the step's thread
        // alone, it was on the step's critical path: 22 us of the aligned 1000-box pile's step on
        // two threads, 63 us of the random pile's.
        contacts.retain(|pair| self.bodies.contains(pair.body_a) && self.bodies.contains(pair.body_b));
        clock.begin(Stage::Integrate, &self.bodies, &mut report);
        let split = self.split_displacements(&solved.split);
        let (moved, ()) = join(
            || {
                integrate::run(
                    &mut self.bodies,
                    &split,
                    dt,
                    &self.settings.integration,
                    &mut self.scratch.integrate,
                )
            },
            || self.contact_cache.rebuild(&contacts),
        );
        joint_positions::run(&mut self.bodies, self.joints.joints());
        self.quarantine_non_finite(Stage::Integrate, &moved.failed, &mut report);
        clock.end(Stage::Integrate, moved.moved, &self.bodies, &mut report);

        clock.begin(Stage::Sleep, &self.bodies, &mut report);
        self.collect_links(&contacts);
        let rested = sleep::run(
            &mut self.bodies,
            &self.scratch.links,
            &split,
            &mut self.scratch.wake_requests,
            dt,
            &self.settings.sleep,
            &mut self.scratch.sleep,
        );
        report.fell_asleep = rested.fell_asleep;
        report.woken += rested.woken;
        // Only a body falling asleep (it is stopped) changes a velocity here; with none, and
        // none woken, the energy is the one the stage began with, bit for bit.
        if rested.fell_asleep == 0 && rested.woken == 0 {
            clock.end_unchanged(Stage::Sleep, rested.fell_asleep, &self.bodies, &mut report);
        } else {
            clock.end(Stage::Sleep, rested.fell_asleep, &self.bodies, &mut report);
        }

        self.scratch.contacts = std::mem::replace(&mut self.contacts, contacts);
        self.time += dt;
        self.steps += 1;
        report.awake_bodies = self
            .bodies
            .moving()
            .iter()
            .filter(|&&i| self.bodies.kinds()[i as usize] == BodyKind::Dynamic)
            .count();
        debug_assert_eq!(self.bodies.check_consistency(), Ok(()));
        report.kinetic_energy_after = clock.energy;
        debug_assert_eq!(
            report.kinetic_energy_after.to_bits(),
            kinetic_energy(&self.bodies).to_bits()
        );
        report.potential_energy_after = potential_energy(&self.bodies, self.settings.gravity);
        Ok(report)
    }

    /// Ends a stage that changes only the velocities of awake dynamic bodies, no pose (collisions,
    /// forces, the solve), and quarantines what it made non-finite. The stage's final kinetic
    /// energy, which the clock sums anyway, is finite only if every such velocity is (`m |v|^2`
    /// and `w . I w` of a body with finite positive mass; an infinite or NaN component makes its
    /// term infinite or NaN), and the poses were checked when the broad phase ended; so the
    /// bodies are checked one by one only when that sum is not finite. Checked one by one after
    /// each of these stages, and the broad phase's energy summed again, the step took 2.1
    /// percent more instructions for the aligned 1000-box pile (20.23 against 19.80 million,
    /// `tools/instructions.sh pile_1000 --hz 60`) and 0.7 percent more for the pyramid, all of
    /// it on the step's own thread. (Checking after a fracture stage with no model and nothing
    /// queued, which changes nothing, took 0.5 percent more again.)
    fn end_velocity_stage(&mut self, clock: &mut StageClock, stage: Stage, count: usize, report: &mut StepReport) {
        clock.end(stage, count, &self.bodies, report);
        if !clock.energy.is_finite() {
            self.quarantine_non_finite(stage, &[], report);
            clock.set_energy(stage, kinetic_energy(&self.bodies), report);
        }
    }

    /// The step's contact and joint links as dense indices of live bodies (after the command
    /// buffer, so looked up by handle).
    fn collect_links(&mut self, contacts: &[PairContacts]) {
        let links = &mut self.scratch.links;
        links.clear();
        let dense = |id: BodyId| self.bodies.dense_index(id).ok().map(|i| i as u32);
        let link = |pair: &PairContacts| Some([dense(pair.body_a)?, dense(pair.body_b)?]);
        // Read on the pool for a heap of debris (tens of thousands of pairs), in order all the same.
        if contacts.len() >= PARALLEL_LINKS {
            links.par_extend(contacts.par_iter().filter_map(link));
        } else {
            links.extend(contacts.iter().filter_map(link));
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
