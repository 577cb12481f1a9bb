//! Contacts that persist from step to step: warm starting finds every contact of a resting stack
//! (with the narrow phase run afresh every step, and with manifolds carried by the manifold
//! cache), and carried manifolds agree with a fresh narrow phase to the reuse distance.

mod common;

use common::{FRAME, cuboid, ground, pile};
use glam::{DQuat, DVec3};
use shatter_collision::{Pose, collide};
use shatter_engine::{BodyDesc, BodyId, World, WorldSettings};

/// A ground and three unit cubes stacked flush, each turned 45 degrees about y from the one
/// below, so every box-box face clips to an octagon whose eight equally deep corners are reduced
/// to four; sleep off, so the stack stays in the step.
fn turned_stack(reuse: f64) -> World {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    settings.contact_reuse_distance = reuse;
    let mut world = World::try_with_settings(settings).unwrap();
    world.add_body(ground()).unwrap();
    for level in 0..3 {
        let turn = DQuat::from_rotation_y(level as f64 * std::f64::consts::FRAC_PI_4);
        let desc = BodyDesc::dynamic(cuboid(DVec3::splat(0.5)))
            .with_position(DVec3::new(0.0, 0.5 + level as f64, 0.0))
            .with_orientation(turn);
        world.add_body(desc).unwrap();
    }
    world
}

#[test]
fn manifold_cache_warm_starts_every_contact_of_a_resting_stack() {
    for reuse in [0.0, 1e-3] {
        let mut world = turned_stack(reuse);
        for step in 0..90 {
            let report = world.step(FRAME).unwrap();
            // Three pairs (ground and two box-box) of four points each.
            assert_eq!(report.contacts, 12, "reuse {reuse}, step {step}");
            // Once the stack has settled, every contact of a step was there the step before,
            // with the same feature id: the solve starts from last step's impulses everywhere.
            if step >= 30 {
                assert_eq!(report.warm_started, report.contacts, "reuse {reuse}, step {step}");
                // Carried over only when reuse is on (and then, the stack resting, always).
                let carried = if reuse > 0.0 { 3 } else { 0 };
                assert_eq!(report.carried_manifolds, carried, "reuse {reuse}, step {step}");
            }
        }
    }
}

/// The deepest penetration of each touching pair at the poses `poses` (by handle), from a fresh
/// narrow phase with margin `margin`.
fn fresh_depths(world: &World, poses: &[(BodyId, Pose)], margin: f64) -> Vec<Option<f64>> {
    let pose = |id: BodyId| poses.iter().find(|(i, _)| *i == id).map(|(_, p)| *p).unwrap();
    world
        .contacts()
        .iter()
        .map(|pair| {
            let (a, b) = (world.body(pair.body_a).unwrap(), world.body(pair.body_b).unwrap());
            collide(
                &a.record.collider,
                &pose(pair.body_a),
                &b.record.collider,
                &pose(pair.body_b),
                margin,
            )
            .unwrap()
            .max_depth()
        })
        .collect()
}

#[test]
fn manifold_cache_carried_manifolds_agree_with_a_fresh_narrow_phase() {
    let mut world = World::new();
    let ids = pile(&mut world, 9);
    let reuse = world.settings().contact_reuse_distance;
    let mut carried = 0;
    for _ in 0..90 {
        // The contacts of a step are found at the poses the step starts from.
        let poses: Vec<(BodyId, Pose)> = ids.iter().map(|id| (*id, world.pose(*id).unwrap())).collect();
        let ground_id = world.bodies().ids().next().unwrap();
        let poses = [vec![(ground_id, world.pose(ground_id).unwrap())], poses].concat();
        carried += world.step(FRAME).unwrap().carried_manifolds;
        let fresh = fresh_depths(&world, &poses, 0.05);
        for (pair, fresh) in world.contacts().iter().zip(fresh) {
            let deepest = pair.contacts.iter().map(|c| c.depth).fold(f64::NEG_INFINITY, f64::max);
            // Only pairs in contact are compared (a speculative pair's deepest point depends on
            // the margin, which here differs from the step's).
            let Some(fresh) = fresh.filter(|d| *d > 0.0) else {
                continue;
            };
            assert!(
                (deepest - fresh).abs() <= reuse + 1e-9,
                "{:?}-{:?}: carried {deepest}, fresh {fresh}",
                pair.body_a,
                pair.body_b
            );
        }
    }
    // The pile rests most of the time: most of its manifolds were carried.
    assert!(carried > 100, "{carried} manifolds carried");
}
