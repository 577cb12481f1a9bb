//! Joints through the step: what each kind holds and what it leaves free.

mod common;

use common::{FRAME, G, ball, cuboid, weightless};
use glam::{DQuat, DVec3};
use shatter_engine::{BodyDesc, JointDesc, JointKind, World, WorldSettings};

fn awake_world() -> World {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    World::try_with_settings(settings).unwrap()
}

#[test]
fn joints_fixed_joint_holds_a_body_against_gravity() {
    let mut world = awake_world();
    let start = DVec3::new(0.5, 2.0, 0.0);
    let turn = DQuat::from_rotation_z(0.4);
    let id = world
        .add_body(
            BodyDesc::dynamic(cuboid(DVec3::new(0.4, 0.1, 0.1)))
                .with_position(start)
                .with_orientation(turn),
        )
        .unwrap();
    // Welded to the world at a point off its centre: gravity pulls and twists it.
    world
        .add_joint(JointDesc::new(JointKind::Fixed, id, None, start - DVec3::X * 0.4))
        .unwrap();
    for _ in 0..60 {
        world.step(FRAME).unwrap();
    }
    let pose = world.pose(id).unwrap();
    assert!((pose.position - start).length() < 1e-3, "sagged to {}", pose.position);
    assert!(pose.orientation.angle_between(turn) < 1e-3);
}

#[test]
fn joints_hinge_leaves_only_its_axis_free() {
    let mut world = weightless();
    let id = world.add_body(BodyDesc::dynamic(ball(0.3))).unwrap();
    world
        .add_joint(JointDesc::new(
            JointKind::Hinge { axis: DVec3::Z },
            id,
            None,
            DVec3::ZERO,
        ))
        .unwrap();
    world.set_velocity(id, DVec3::X, DVec3::new(1.0, -0.5, 2.0)).unwrap();
    world.step(FRAME).unwrap();
    let w = world.angular_velocity(id).unwrap();
    // A ball's inertia is isotropic, so the hinge removes the off-axis spin and keeps the rest.
    assert!((w - DVec3::Z * 2.0).length() < 1e-9, "spin {w}");
    assert!(world.linear_velocity(id).unwrap().length() < 1e-9);
}

#[test]
fn joints_ball_joint_pendulum_swings_without_gaining_energy() {
    let mut world = awake_world();
    let pivot = DVec3::new(0.0, 3.0, 0.0);
    let id = world
        .add_body(BodyDesc::dynamic(ball(0.1)).with_position(pivot + DVec3::X))
        .unwrap();
    world
        .add_joint(JointDesc::new(JointKind::Ball, id, None, pivot))
        .unwrap();
    let start = world.kinetic_energy() + world.potential_energy();
    let mut lowest = f64::INFINITY;
    for _ in 0..90 {
        world.step(FRAME).unwrap();
        let energy = world.kinetic_energy() + world.potential_energy();
        assert!(
            energy <= start + 1e-6 * start.abs().max(1.0),
            "energy grew: {start} J -> {energy} J"
        );
        lowest = lowest.min(world.pose(id).unwrap().position.y);
        // The rod keeps its length up to the drift of a velocity-level joint at frame rate: a step
        // along the tangent lengthens it by (h v)^2 / 2L (1.1 cm at the bottom of the swing, where
        // v = sqrt(2 g L)), and Baumgarte at ERP 0.2 takes back a fifth of the error per step, so
        // the error stays within a few times (h v)^2 / (2 L ERP). A joint that did not hold would
        // let the ball fall away.
        let stretch = FRAME * FRAME * 2.0 * G / 2.0;
        let length = (world.pose(id).unwrap().position - pivot).length();
        assert!((length - 1.0).abs() < 1.5 * stretch / 0.2, "rod length {length}");
    }
    assert!(lowest < pivot.y - 0.95, "it swung down to {lowest}");
}

#[test]
fn joints_connected_bodies_do_not_collide() {
    // Two overlapping boxes: without a joint they touch; jointed, the pair is skipped (a joint's
    // bodies meet at the joint by design, and contacts there would fight its rows).
    let make = || {
        let mut world = weightless();
        let a = world
            .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(DVec3::ZERO))
            .unwrap();
        let b = world
            .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(DVec3::X * 0.9))
            .unwrap();
        (world, a, b)
    };
    let (mut free, _, _) = make();
    free.step(FRAME).unwrap();
    assert!(!free.contacts().is_empty(), "overlapping free boxes must touch");
    let (mut joined, a, b) = make();
    joined
        .add_joint(JointDesc::new(JointKind::Ball, a, Some(b), DVec3::X * 0.45))
        .unwrap();
    joined.step(FRAME).unwrap();
    assert!(joined.contacts().is_empty(), "{:?}", joined.contacts());
    assert!(joined.pose(b).unwrap().position.distance(DVec3::X * 0.9) < 1e-9);
}

/// A 1 m ball of mass `m` hanging at rest from a ball joint to the world whose breaking impulse is
/// `factor` times the weight's impulse per step, `m g h`; returns the world, the ball and how many
/// joints broke over 30 steps.
fn hanging_weight(factor: f64) -> (World, shatter_engine::BodyId, usize) {
    let mut world = awake_world();
    let start = DVec3::Y * 5.0;
    let id = world
        .add_body(BodyDesc::dynamic(ball(0.25)).with_position(start))
        .unwrap();
    let mass = world.body(id).unwrap().mass.mass();
    let weight_impulse = mass * G * FRAME;
    world
        .add_joint(
            JointDesc::new(JointKind::Ball, id, None, start + DVec3::Y * 0.5)
                .with_breaking_impulse(factor * weight_impulse),
        )
        .unwrap();
    let mut broken = 0;
    for _ in 0..30 {
        broken += world.step(FRAME).unwrap().broken_joints;
    }
    (world, id, broken)
}

#[test]
fn joints_break_past_their_breaking_impulse_and_hold_below_it() {
    // The joint carries m g h every step at rest: above that it holds, below it breaks at once.
    let (strong, ball_id, broken) = hanging_weight(1.5);
    assert_eq!(broken, 0);
    assert_eq!(strong.joints().len(), 1);
    assert!((strong.pose(ball_id).unwrap().position.y - 5.0).abs() < 1e-3);
    let (weak, ball_id, broken) = hanging_weight(0.5);
    assert_eq!(broken, 1);
    assert!(weak.joints().is_empty());
    // Free fall after the break: well below where the joint held it.
    assert!(weak.pose(ball_id).unwrap().position.y < 4.0);
    // A breaking impulse must be positive and finite, named in the error; nothing is added.
    let mut world = awake_world();
    let id = world.add_body(BodyDesc::dynamic(ball(0.25))).unwrap();
    for bad in [0.0, -1.0, f64::NAN] {
        let error = world
            .add_joint(JointDesc::new(JointKind::Ball, id, None, DVec3::Y).with_breaking_impulse(bad))
            .unwrap_err();
        assert!(error.to_string().contains("joint breaking impulse"), "{error}");
    }
    assert!(world.joints().is_empty());
}
