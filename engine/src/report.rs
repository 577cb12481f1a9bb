//! What one step did: [`StepReport`]. Tests, the command-line tool and benches read it.
//!
//! Energies: kinetic energy sums `1/2 m |v|^2 + 1/2 w . I w` over dynamic bodies; potential energy
//! is that of uniform gravity, `-m g . x` summed over dynamic bodies (zero at the world origin).
//! "Before" is measured at the start of the step, "after" at its end, both at non-split states.

use core::time::Duration;

use glam::DVec3;

use crate::commands::Spawned;
use crate::handle::BodyId;
use crate::step::Stage;
use crate::store::BodyStore;

/// A body whose state went non-finite (or would have overflowed) during the step. It was put
/// back where the step began, with zero velocity, and is held still (quarantined) until the user
/// sets its pose or velocity.
#[derive(Clone, Debug, PartialEq)]
pub struct Quarantine {
    /// The body.
    pub id: BodyId,
    /// The stage after which it was caught.
    pub stage: Stage,
    /// What was wrong.
    pub detail: String,
}

/// A fracture model that returned an error; what it queued in that call was discarded.
#[derive(Clone, Debug, PartialEq)]
pub struct FractureFailure {
    /// The model's name.
    pub model: String,
    /// Its message.
    pub message: String,
}

/// Per-stage figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageReport {
    /// Wall-clock time spent in the stage.
    pub time: Duration,
    /// How many items the stage handled: pairs (broad phase), contacts (collide), bodies
    /// (forces, integrate), rows (solve), hooks (fracture), bodies put to sleep (sleep).
    pub count: usize,
    /// Kinetic energy of the dynamic bodies when the stage began, J, at the non-split state (the
    /// split pseudo-velocities never enter it). Lets a test check that a stage which may only
    /// remove energy (collide, solve_constraints without joints) never adds any.
    pub kinetic_energy_before: f64,
    /// Kinetic energy of the dynamic bodies when the stage ended, J, at the non-split state.
    pub kinetic_energy_after: f64,
}

/// What one [`crate::World::step`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// The time step, s.
    pub dt: f64,
    /// Candidate pairs from the broad phase.
    pub pairs: usize,
    /// Pairs with at least one contact.
    pub manifolds: usize,
    /// Contact points.
    pub contacts: usize,
    /// Contact points the solve warm-started from last step's impulses: those whose pair and
    /// feature last step's contact cache holds, among the points it solved (a pair neither of
    /// whose bodies can move is not solved). Close to [`StepReport::contacts`] for a resting
    /// pile, where every contact persists with its feature id.
    pub warm_started: usize,
    /// Touching pairs whose contact manifold was carried over from an earlier step by the
    /// manifold cache (see [`crate::WorldSettings::contact_reuse_distance`]) rather than found
    /// afresh by the narrow phase.
    pub carried_manifolds: usize,
    /// Impulses applied by the elastic collision pass.
    pub collision_impulses: usize,
    /// Impulses of the collision pass that the energy clamp scaled down or dropped.
    pub clamped_collisions: usize,
    /// Constraint rows solved (contacts and joints).
    pub solver_rows: usize,
    /// Islands the constraint solve fell apart into (each solved on its own, in parallel).
    pub solver_islands: usize,
    /// The most solver sweeps any island ran (velocity and split passes together).
    pub solver_iterations: usize,
    /// The most velocity sweeps any island ran: at most the solver's `iterations`, all of which an
    /// island runs only when its sweeps do not meet the tolerance (its shock pass then follows).
    pub solver_velocity_iterations: usize,
    /// Solver impulse increments the energy clamp (Su 2009 section 3.2) scaled down or dropped.
    pub clamped_solver_increments: usize,
    /// Contacts or joints whose rows could not be built, or a solve that was refused, with why
    /// (their velocities were left as they were). Empty in a healthy world.
    pub solver_failures: Vec<String>,
    /// Joints broken in the step: past their breaking impulse, by fracture models, or removed
    /// with their bodies.
    pub broken_joints: usize,
    /// Bodies removed by fracture models (parents replaced by fragments).
    pub fractures: usize,
    /// Bodies added by fracture models, with their tickets.
    pub spawned: Vec<Spawned>,
    /// Fracture models that failed.
    pub fracture_failures: Vec<FractureFailure>,
    /// Queued commands that could not be applied (a bad description, a stale handle).
    pub command_failures: Vec<String>,
    /// Bodies quarantined in the step.
    pub quarantined: Vec<Quarantine>,
    /// Bodies that fell asleep at the end of the step.
    pub fell_asleep: usize,
    /// Bodies woken at the end of the step by contacts and joints with moving bodies.
    pub woken: usize,
    /// Awake dynamic bodies at the end of the step.
    pub awake_bodies: usize,
    /// Threads the step's work could be shared among: the rayon pool's, or 1 when the step ran
    /// on the world's one-thread pool ([`crate::WorldSettings::pool_use`]).
    pub threads: usize,
    /// Per stage, indexed by [`Stage::index`].
    pub stages: [StageReport; Stage::COUNT],
    /// Kinetic energy of the dynamic bodies at the start of the step, J.
    pub kinetic_energy_before: f64,
    /// Kinetic energy of the dynamic bodies at the end of the step, J.
    pub kinetic_energy_after: f64,
    /// Gravitational potential energy `-sum m g . x` at the start of the step, J.
    pub potential_energy_before: f64,
    /// Gravitational potential energy at the end of the step, J.
    pub potential_energy_after: f64,
    /// Kinetic energy that impulse clamping (Su 2009 section 3.2) kept from being added in the
    /// collision pass, J (>= 0). (The solver clamps every contact increment too; it counts them,
    /// [`StepReport::clamped_solver_increments`], but does not measure their energy.)
    pub energy_removed_by_clamping: f64,
    /// Change of kinetic energy across the fracture stage and its commands (impulses applied,
    /// bodies spawned and despawned), J; positive when fracture added energy.
    pub energy_injected_by_fracture: f64,
}

impl StepReport {
    /// The figures of one stage.
    pub fn stage(&self, stage: Stage) -> &StageReport {
        &self.stages[stage.index()]
    }

    /// Total mechanical energy at the start of the step, J.
    pub fn energy_before(&self) -> f64 {
        self.kinetic_energy_before + self.potential_energy_before
    }

    /// Total mechanical energy at the end of the step, J.
    pub fn energy_after(&self) -> f64 {
        self.kinetic_energy_after + self.potential_energy_after
    }

    /// Wall-clock time of all stages together.
    pub fn total_time(&self) -> Duration {
        self.stages.iter().map(|s| s.time).sum()
    }
}

/// Kinetic energy of the dynamic bodies of `bodies`, J, summed in dense order.
pub(crate) fn kinetic_energy(bodies: &BodyStore) -> f64 {
    // Only moving bodies can carry kinetic energy (sleeping ones are stopped when they fall asleep,
    // static and quarantined ones have none), so a resting world costs nothing here.
    // `+ 0.0` turns the empty sum's -0 into 0.
    let (states, masses) = (bodies.states(), bodies.masses());
    bodies
        .moving()
        .iter()
        .map(|&dense| states[dense as usize].kinetic_energy(&masses[dense as usize]))
        .sum::<f64>()
        + 0.0
}

/// Potential energy `-sum m g . x` of the dynamic bodies, J: summed over the moving ones, plus
/// `-g . (sum m x)` of the resting ones, which the store keeps.
pub(crate) fn potential_energy(bodies: &BodyStore, gravity: DVec3) -> f64 {
    let (states, masses) = (bodies.states(), bodies.masses());
    let moving: f64 = bodies
        .moving()
        .iter()
        .map(|&dense| (&states[dense as usize], &masses[dense as usize]))
        .filter(|(_, m)| !m.is_infinite())
        .map(|(s, m)| -m.mass() * gravity.dot(s.position))
        .sum();
    moving - gravity.dot(bodies.resting_mass_moment())
}
