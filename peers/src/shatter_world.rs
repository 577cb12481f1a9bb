//! A benchmark case in shatter: the scene library's world, stepped at the case's time step.

use shatter::engine::{BodyDesc, BodyId, StepReport, World};
use shatter::integrators::BodyKind;
use shatter::scenes::BenchmarkScene;

use crate::{BodySample, Case, Summary};

/// A shatter world built from a benchmark scene, with its time step.
pub struct ShatterWorld {
    /// The world.
    pub world: World,
    /// The bodies, in the scene's order.
    pub ids: Vec<BodyId>,
    /// Time step, s.
    pub dt: f64,
}

impl ShatterWorld {
    /// The scene of `case` in a fresh world.
    pub fn new(case: &Case) -> Self {
        Self::from_descs(case.scene.descs(), case)
    }

    /// A fresh world from `descs`, the scene's descriptions built once
    /// ([`BenchmarkScene::descs`]): clones of them share their colliders, so a bench can rebuild
    /// the world for every run cheaply. (shatter's `World` is not `Clone`: it may own fracture
    /// models, which are trait objects.)
    pub fn from_descs(descs: Vec<BodyDesc>, case: &Case) -> Self {
        let (world, ids) = BenchmarkScene::world_from(descs, case.sleeping);
        Self {
            world,
            ids,
            dt: case.dt,
        }
    }

    /// One step.
    ///
    /// # Panics
    ///
    /// If the engine refuses the step (it never should: the scenes and time steps are valid).
    pub fn step(&mut self) -> StepReport {
        self.world.step(self.dt).expect("a valid benchmark step")
    }

    /// Every body, in the scene's order.
    pub fn bodies(&self) -> Vec<BodySample> {
        self.ids
            .iter()
            .map(|id| {
                let view = self.world.body(*id).expect("benchmark bodies are never removed");
                BodySample {
                    fixed: view.kind == BodyKind::Static,
                    position: view.state.position,
                    orientation: view.state.orientation,
                    linear_velocity: view.state.linear_velocity,
                    mass: view.mass.mass(),
                    awake: view.kind == BodyKind::Dynamic && view.motion.is_awake(),
                }
            })
            .collect()
    }

    /// Kinetic energy, height and wakefulness of the dynamic bodies.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.bodies(), self.world.kinetic_energy())
    }
}
