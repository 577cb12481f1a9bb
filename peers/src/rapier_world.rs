//! A benchmark case in rapier3d: the same bodies as shatter's, built from the same description.

use glam::{DQuat, DVec3};
use rapier3d::prelude::{
    CoefficientCombineRule, ColliderBuilder, IntegrationParameters, PhysicsWorld, Pose, RigidBodyBuilder,
    RigidBodyHandle, Rotation, Vector,
};
use shatter::scenes::{BenchmarkBody, BenchmarkShape};

use crate::{BodySample, Case, Summary};

/// A rapier world built from a benchmark scene, with the case's time step.
pub struct RapierWorld {
    /// Bodies, colliders and the pipeline's workspaces.
    pub world: PhysicsWorld,
    /// The bodies, in the scene's order.
    pub handles: Vec<RigidBodyHandle>,
}

impl Clone for RapierWorld {
    /// A copy of every set with fresh pipelines (rapier's sets are `Clone`, its pipelines, which
    /// hold only scratch space, are not): for a world that has not been stepped, the same as
    /// rebuilding it.
    fn clone(&self) -> Self {
        Self {
            world: PhysicsWorld {
                gravity: self.world.gravity,
                integration_parameters: self.world.integration_parameters,
                islands: self.world.islands.clone(),
                broad_phase: self.world.broad_phase.clone(),
                narrow_phase: self.world.narrow_phase.clone(),
                bodies: self.world.bodies.clone(),
                colliders: self.world.colliders.clone(),
                impulse_joints: self.world.impulse_joints.clone(),
                multibody_joints: self.world.multibody_joints.clone(),
                soft_bodies: self.world.soft_bodies.clone(),
                ccd_solver: self.world.ccd_solver.clone(),
                ..PhysicsWorld::default()
            },
            handles: self.handles.clone(),
        }
    }
}

impl RapierWorld {
    /// The scene of `case`: rapier's default integration parameters with the case's time step,
    /// gravity 9.81 m/s^2 down y, each body built by [`rapier_body`].
    pub fn new(case: &Case) -> Self {
        let mut world = PhysicsWorld {
            integration_parameters: IntegrationParameters {
                dt: case.dt as f32,
                ..IntegrationParameters::default()
            },
            gravity: Vector::new(0.0, -9.81, 0.0),
            ..PhysicsWorld::default()
        };
        let handles = case
            .scene
            .bodies
            .iter()
            .map(|body| {
                let (rigid_body, collider) = rapier_body(body, case.sleeping);
                world.insert(rigid_body, collider).0
            })
            .collect();
        Self { world, handles }
    }

    /// One step of the case's time step.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// Every body, in the scene's order.
    pub fn bodies(&self) -> Vec<BodySample> {
        self.handles
            .iter()
            .map(|handle| {
                let body = &self.world.bodies[*handle];
                let (position, rotation, velocity) = (body.translation(), body.rotation(), body.linvel());
                BodySample {
                    fixed: body.is_fixed(),
                    position: DVec3::new(position.x.into(), position.y.into(), position.z.into()),
                    orientation: DQuat::from_xyzw(
                        rotation.x.into(),
                        rotation.y.into(),
                        rotation.z.into(),
                        rotation.w.into(),
                    ),
                    linear_velocity: DVec3::new(velocity.x.into(), velocity.y.into(), velocity.z.into()),
                    mass: body.mass().into(),
                    awake: body.is_dynamic() && !body.is_sleeping(),
                }
            })
            .collect()
    }

    /// Kinetic energy, height and wakefulness of the dynamic bodies.
    pub fn summary(&self) -> Summary {
        let kinetic_energy = self
            .handles
            .iter()
            .map(|handle| &self.world.bodies[*handle])
            .filter(|body| body.is_dynamic())
            .map(|body| f64::from(body.kinetic_energy()))
            .sum();
        Summary::of(&self.bodies(), kinetic_energy)
    }
}

/// rapier's rigid body and collider for `body`: a fixed or dynamic body at its pose (rounded to
/// `f32`), sleeping as rapier's default or never (`can_sleep(false)`), with a cuboid or ball
/// collider of the same size, density, friction and restitution. The combine rules reproduce
/// shatter's: geometric mean of the frictions, larger restitution.
pub fn rapier_body(body: &BenchmarkBody, sleeping: bool) -> (RigidBodyBuilder, ColliderBuilder) {
    let pose = Pose::from_parts(
        Vector::new(body.position.x as f32, body.position.y as f32, body.position.z as f32),
        Rotation::from_xyzw(
            body.orientation.x as f32,
            body.orientation.y as f32,
            body.orientation.z as f32,
            body.orientation.w as f32,
        ),
    );
    let rigid_body = if body.fixed {
        RigidBodyBuilder::fixed()
    } else {
        RigidBodyBuilder::dynamic()
    };
    let collider = match body.shape {
        BenchmarkShape::Cuboid(h) => ColliderBuilder::cuboid(h.x as f32, h.y as f32, h.z as f32),
        BenchmarkShape::Ball(radius) => ColliderBuilder::ball(radius as f32),
    };
    (
        rigid_body.pose(pose).can_sleep(sleeping),
        collider
            .density(body.density as f32)
            .friction(body.material.friction as f32)
            .friction_combine_rule(CoefficientCombineRule::GeometricMean)
            .restitution(body.material.restitution as f32)
            .restitution_combine_rule(CoefficientCombineRule::Max),
    )
}
