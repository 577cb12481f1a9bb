//! shatter-peers: the benchmark scenes of shatter's scene library
//! ([`shatter::scenes::benchmark_scenes`]) built in shatter and in rapier3d from one description,
//! so the two engines can be timed side by side on identical bodies.
//!
//! This crate is not a default member of the workspace and nothing depends on it: building it
//! compiles rapier3d, which the engine itself never needs. It is for measuring, not for tests of
//! shatter's physics.
//!
//! # The runs
//!
//! Every [`Case`] is one scene at one time step with sleeping off or on, run for [`HORIZON`] of
//! simulated time (long enough for the top of each pile to land and, in rapier, the heap to come
//! to rest) in each engine, one step per frame.
//!
//! # Settings of each engine
//!
//! - **shatter**: `WorldSettings::default()` (gravity 9.81 m/s^2 down y; its solver iterations,
//!   contact margin and collision passes are whatever the defaults say), except
//!   `sleep.enabled = false` in the variants without sleeping. Bodies are shatter's analytic
//!   boxes and balls ([`shatter::scenes::BenchmarkBody::collider`]). The step runs inside a rayon
//!   pool of two threads (the size of the machines this project runs on), and with
//!   `WorldSettings::pool_use` at its default, `PoolUse::Faster`, each step shares its work
//!   between them or runs on one thread, whichever the world measured faster lately (on this
//!   machine kind the host sometimes places the two cores far apart, and then one thread is
//!   faster; `shatter::engine::pool_use`).
//! - **rapier3d** (0.36, default features: single precision, single-threaded, without the
//!   `parallel` and `simd8` features): `IntegrationParameters::default()` with `dt` set to the
//!   case's time step (in 0.36 that is four substeps per step, `num_solver_iterations`), gravity
//!   (0, -9.81, 0). Colliders are `ColliderBuilder::cuboid` (half extents) and
//!   `ColliderBuilder::ball` (radius) with the scene's density, attached to a dynamic or fixed
//!   rigid body at the scene's pose. Bodies are built with `RigidBodyBuilder::can_sleep(false)`
//!   in the variants without sleeping (rapier then gives them sleep thresholds of -1, so they never
//!   sleep) and with rapier's default sleeping otherwise.
//! - **Materials**: shatter combines a pair's friction as the geometric mean and its restitution
//!   as the larger of the two ([`shatter::engine::Material`]); rapier's colliders are given
//!   `CoefficientCombineRule::GeometricMean` for friction and `CoefficientCombineRule::Max` for
//!   restitution, so every pair gets the same coefficients in both engines (friction 0.5,
//!   restitution 0 in every scene).
//! - **Sleeping**, where on: each engine's default rule, shatter's `SleepSettings::default()` (an
//!   island sleeps once every body in it has stayed below a linear and an angular speed for a
//!   while) and rapier's `RigidBodyActivation::default()` (the same idea, its own thresholds).
//!
//! rapier3d stores everything in `f32`; shatter in `f64`. Positions and densities are rounded to
//! `f32` once, when the rapier bodies are built.

#![forbid(unsafe_code)]

mod rapier_world;
mod shatter_world;

use glam::{DQuat, DVec3};
use shatter::scenes::BenchmarkScene;

pub use rapier_world::{RapierWorld, rapier_body};
pub use shatter_world::ShatterWorld;

/// Simulated time every case runs for, s. The top layer of a pile falls about 10 m and lands at
/// about 1.4 s; rapier's axis-aligned pile is at rest and asleep by 2 s and about half its balls
/// by 2.5 s, so the last stretch shows what sleeping saves. (A longer horizon lets the heaps settle
/// further but makes every benchmark sample longer.)
pub const HORIZON: f64 = 3.0;

/// Threads of the rayon pool shatter steps in.
pub const SHATTER_THREADS: usize = 2;

/// Simulated time after which the table reports the fastest body, s. A cube that a solver ejects
/// from a heap shows up there; so does one that falls from the top of a pile once it topples: a
/// body dropped from 11 m at rest reaches 14.7 m/s at the ground, and one falling freely from the
/// start is at 9.81 m/s after this second.
pub const FAST_AFTER: f64 = 1.0;

/// One run: a scene at a time step, with sleeping off or on.
#[derive(Clone, Debug)]
pub struct Case {
    /// The scene.
    pub scene: BenchmarkScene,
    /// Time step, s.
    pub dt: f64,
    /// Whether the engines may put resting bodies to sleep (each with its own default rule).
    pub sleeping: bool,
}

impl Case {
    /// Every scene at each of its time steps, sleeping off then on.
    pub fn all() -> Vec<Case> {
        shatter::scenes::benchmark_scenes()
            .into_iter()
            .flat_map(|scene| {
                scene.time_steps.clone().into_iter().flat_map(move |dt| {
                    let scene = scene.clone();
                    [false, true].map(|sleeping| Case {
                        scene: scene.clone(),
                        dt,
                        sleeping,
                    })
                })
            })
            .collect()
    }

    /// Steps that cover [`HORIZON`].
    pub fn steps(&self) -> usize {
        (HORIZON / self.dt).round() as usize
    }

    /// `pile_1000/dt30/awake`: scene, frames per second, and `awake` (sleeping off) or
    /// `sleeping` (each engine's default sleeping).
    pub fn label(&self) -> String {
        format!(
            "{}/dt{}/{}",
            self.scene.name,
            (1.0 / self.dt).round(),
            if self.sleeping { "sleeping" } else { "awake" }
        )
    }
}

/// One body as an engine holds it, converted to `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodySample {
    /// Static rather than dynamic.
    pub fixed: bool,
    /// Centre of mass, world frame, m.
    pub position: DVec3,
    /// Body frame to world frame.
    pub orientation: DQuat,
    /// Linear velocity, world frame, m/s.
    pub linear_velocity: DVec3,
    /// Mass, kg (dynamic bodies; each engine's own value for a static body).
    pub mass: f64,
    /// Whether the engine steps the body (dynamic bodies that are not asleep).
    pub awake: bool,
}

/// What a reader checks to see that both engines did the same physics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Kinetic energy of the dynamic bodies, translation and rotation, J.
    pub kinetic_energy: f64,
    /// Mean height of the dynamic bodies' centres, m.
    pub mean_height: f64,
    /// Lowest dynamic body centre, m (below zero: something fell off the ground or through it).
    pub lowest: f64,
    /// Dynamic bodies awake.
    pub awake: usize,
}

impl Summary {
    /// The summary of `bodies` with kinetic energy `kinetic_energy` (J).
    pub fn of(bodies: &[BodySample], kinetic_energy: f64) -> Self {
        let dynamic: Vec<&BodySample> = bodies.iter().filter(|b| !b.fixed).collect();
        let heights = dynamic.iter().map(|b| b.position.y);
        Self {
            kinetic_energy,
            mean_height: heights.clone().sum::<f64>() / dynamic.len().max(1) as f64,
            lowest: heights.fold(f64::INFINITY, f64::min),
            awake: dynamic.iter().filter(|b| b.awake).count(),
        }
    }
}

/// The names of the benchmark scenes, comma-separated, for messages that say which there are.
pub fn scene_names() -> String {
    let names: Vec<&str> = shatter::scenes::benchmark_scenes()
        .iter()
        .map(|scene| scene.name)
        .collect();
    names.join(", ")
}

/// The largest speed of any dynamic body among `bodies`, m/s (0 without dynamic bodies).
pub fn fastest(bodies: &[BodySample]) -> f64 {
    bodies
        .iter()
        .filter(|b| !b.fixed)
        .map(|b| b.linear_velocity.length())
        .fold(0.0, f64::max)
}

/// The median of `values` (the mean of the middle two for an even count); NaN for none.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => 0.5 * (values[n / 2 - 1] + values[n / 2]),
    }
}
