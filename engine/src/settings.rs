//! The world's tunables, each with its unit, and their checks.

use glam::DVec3;
use shatter_integrators::IntegrationSettings;
use shatter_solver::SolverSettings;

use crate::error::{EngineError, check_finite3};
use crate::pool_use::PoolUse;

/// The longest time step [`crate::World::step`] accepts, s. One step per frame at 1 Hz is already
/// far outside what contact handling is built for; a longer step is almost certainly a unit
/// mistake (milliseconds given as seconds).
pub const MAX_TIME_STEP: f64 = 1.0;

/// When bodies go to sleep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SleepSettings {
    /// Whether islands may sleep at all.
    pub enabled: bool,
    /// A body counts as resting while its centre-of-mass speed stays below this, m/s.
    pub linear_threshold: f64,
    /// ... and its angular speed below this, rad/s.
    pub angular_threshold: f64,
    /// An island sleeps once every body in it has rested this long, s.
    pub time_to_sleep: f64,
}

impl Default for SleepSettings {
    /// Box2D v3's defaults scaled to metre-sized bodies: 5 cm/s, about 3 degrees per second,
    /// half a second.
    fn default() -> Self {
        Self {
            enabled: true,
            linear_threshold: 0.05,
            angular_threshold: 0.05,
            time_to_sleep: 0.5,
        }
    }
}

/// Everything [`crate::World::step`] can be tuned by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldSettings {
    /// Acceleration of gravity, world frame, m/s^2. Y is up.
    pub gravity: DVec3,
    /// Contacts are generated for surfaces up to this far apart (speculative contacts), m, on top
    /// of the distance the pair's motion closes along the contact's normal within the step (for
    /// two exact shapes, either body perhaps stopped by something else meanwhile; gravity
    /// included; `shatter_collision::Closing`). It covers what that first-order approach misses
    /// (a spinning point's curved path): millimetres for pieces a few centimetres across, more
    /// for large bodies turning fast.
    pub contact_margin: f64,
    /// A touching pair reuses its contact manifold, carried along with the bodies, while no
    /// point of one body has moved this far relative to the other since the manifold was made, m
    /// (and at most 1% of the smaller body's size; see the manifold cache in the collide stage).
    /// Zero tests every pair afresh every step.
    pub contact_reuse_distance: f64,
    /// Sweeps of the elastic collision pass over all contacts (Guendelman et al. 2003 iterate
    /// collisions a few times so that impulses propagate through stacks).
    pub collision_passes: usize,
    /// Only contacts approaching faster than this go through the elastic collision pass, m/s;
    /// slower ones are stopped inelastically by the solve, so resting contacts do not bounce from
    /// the speed gravity adds in one step.
    pub restitution_threshold: f64,
    /// Sleeping.
    pub sleep: SleepSettings,
    /// The pose update (orientation scheme and the energy fix of Su 2009 section 2).
    pub integration: IntegrationSettings,
    /// The constraint solve: iterations, warm starting, split-impulse limits.
    pub solver: SolverSettings,
    /// Whether a step shares its work among the threads of the rayon pool it runs in, runs on
    /// one thread, or (the default) runs whichever way its recent steps ran faster. The results
    /// are the same bits every way.
    pub pool_use: PoolUse,
}

impl Default for WorldSettings {
    fn default() -> Self {
        Self {
            gravity: DVec3::new(0.0, -9.81, 0.0),
            contact_margin: 0.02,
            // Jolt's default (PhysicsSettings::mBodyPairCacheMaxDeltaPositionSq): a millimetre.
            contact_reuse_distance: 1e-3,
            collision_passes: 4,
            restitution_threshold: 1.0,
            sleep: SleepSettings::default(),
            integration: IntegrationSettings::default(),
            solver: SolverSettings::default(),
            pool_use: PoolUse::default(),
        }
    }
}

impl WorldSettings {
    /// Checks every tunable, naming the first bad one.
    pub fn validate(&self) -> Result<(), EngineError> {
        check_finite3("gravity (m/s^2)", self.gravity)?;
        non_negative("contact margin (m)", self.contact_margin)?;
        non_negative("contact reuse distance (m)", self.contact_reuse_distance)?;
        non_negative("restitution threshold (m/s)", self.restitution_threshold)?;
        non_negative("sleep linear threshold (m/s)", self.sleep.linear_threshold)?;
        non_negative("sleep angular threshold (rad/s)", self.sleep.angular_threshold)?;
        non_negative("time to sleep (s)", self.sleep.time_to_sleep)?;
        self.solver.validate().map_err(|error| EngineError::Solver {
            message: error.to_string(),
        })?;
        if self.collision_passes > 1000 {
            return Err(EngineError::invalid(
                "collision passes",
                self.collision_passes,
                "at most 1000 sweeps",
            ));
        }
        Ok(())
    }
}

fn non_negative(what: &'static str, value: f64) -> Result<(), EngineError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(EngineError::invalid(what, value, "a finite number >= 0"))
    }
}

/// Checks a time step: positive, finite, at most [`MAX_TIME_STEP`].
pub(crate) fn check_time_step(dt: f64) -> Result<(), EngineError> {
    if dt.is_finite() && dt > 0.0 && dt <= MAX_TIME_STEP {
        Ok(())
    } else {
        Err(EngineError::InvalidTimeStep { dt })
    }
}
