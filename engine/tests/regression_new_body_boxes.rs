//! Regression: a body's first broad-phase search must give its proxy the box it sweeps over the
//! step. It used to keep the box it was inserted with (no swept motion, and none of the contact
//! margin for a fixed body), so in a search that reads the broad phase's pair list, a body that
//! had just been added (a fragment, a thrown ball) missed the pairs its motion reached within
//! its first step and went into the ground.

mod common;

use common::{FRAME, ball, cuboid};
use glam::DVec3;
use shatter_engine::{BodyDesc, World};

/// A floor slab whose top is at y = 0, fixed, and `clutter` fixed cubes far off to the side, so
/// that the one moving body is too few for the searches that look at moving bodies alone.
fn floor_and_clutter(clutter: usize) -> World {
    let mut world = World::new();
    let slab = BodyDesc::fixed(cuboid(DVec3::new(5.0, 0.5, 5.0))).with_position(DVec3::new(0.0, -0.5, 0.0));
    world.add_body(slab).unwrap();
    for k in 0..clutter {
        let cube =
            BodyDesc::fixed(cuboid(DVec3::splat(0.5))).with_position(DVec3::new(100.0 + 2.0 * k as f64, 0.5, 0.0));
        world.add_body(cube).unwrap();
    }
    world
}

#[test]
fn broad_phase_pairs_a_new_body_with_what_its_first_step_reaches() {
    let radius = 0.25;
    // 0.3 m above the floor, falling 0.4 m in the step: only its swept box reaches the floor.
    for clutter in [0, 100] {
        let mut world = floor_and_clutter(clutter);
        let thrown = BodyDesc::dynamic(ball(radius))
            .with_position(DVec3::new(0.0, radius + 0.3, 0.0))
            .with_velocity(DVec3::new(0.0, -12.0, 0.0), DVec3::ZERO);
        let id = world.add_body(thrown).unwrap();
        let report = world.step(FRAME).unwrap();
        let height = world.bodies().get(id).unwrap().state.position.y;
        assert_eq!(report.pairs, 1, "{clutter} cubes: the ball and the floor");
        assert!(
            height > radius - 0.01,
            "{clutter} cubes: the ball's centre ends at {height} m, {} m into the floor",
            radius - height
        );
    }
}
