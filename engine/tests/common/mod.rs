//! Scenes shared by the engine's tests: the ground, boxes, balls, a small pile.
#![allow(dead_code)]

use glam::{DQuat, DVec3};
use shatter_collision::{Collider, Cuboid, HalfSpace, Shape, Sphere};
use shatter_engine::{BodyDesc, BodyId, World, WorldSettings};

/// The frame-rate time step, s.
pub const FRAME: f64 = 1.0 / 30.0;

/// Standard gravity used by the default settings, m/s^2.
pub const G: f64 = 9.81;

pub fn ball(radius: f64) -> Collider {
    Collider::from_shape(Shape::Sphere(Sphere::try_new(radius).unwrap()), radius / 3.0).unwrap()
}

pub fn cuboid(half_extents: DVec3) -> Collider {
    Collider::from_shape(
        Shape::Cuboid(Cuboid::try_new(half_extents).unwrap()),
        half_extents.min_element() / 2.0,
    )
    .unwrap()
}

/// The static ground: everything below y = 0.
pub fn ground() -> BodyDesc {
    BodyDesc::fixed(Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0).unwrap()), 1.0).unwrap())
}

/// A world without gravity.
pub fn weightless() -> World {
    World::try_with_settings(WorldSettings {
        gravity: DVec3::ZERO,
        ..WorldSettings::default()
    })
    .unwrap()
}

/// A ground and a small pile: `n` boxes and balls stacked loosely in a column with small
/// offsets and turns, so contacts of every kind occur.
pub fn pile(world: &mut World, n: usize) -> Vec<BodyId> {
    world.add_body(ground()).unwrap();
    let mut rng = shatter_integrators::SplitMix64::new(42);
    (0..n)
        .map(|i| {
            let position = DVec3::new(rng.range(-0.1, 0.1), 0.35 + 0.55 * i as f64, rng.range(-0.1, 0.1));
            let turn = DQuat::from_rotation_y(rng.range(-0.5, 0.5));
            let desc = if i % 3 == 2 {
                BodyDesc::dynamic(ball(0.25))
            } else {
                BodyDesc::dynamic(cuboid(DVec3::new(0.3, 0.2, 0.25)))
            };
            world
                .add_body(desc.with_position(position).with_orientation(turn))
                .unwrap()
        })
        .collect()
}
