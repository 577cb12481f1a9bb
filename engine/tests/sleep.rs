//! Sleep: resting islands go to sleep, and wake on impulses, contacts and joints.

mod common;

use common::{FRAME, ball, cuboid, ground, weightless};
use glam::DVec3;
use shatter_engine::{BodyDesc, JointDesc, JointKind, Material, World};

#[test]
fn sleep_a_resting_body_sleeps_after_the_time_to_sleep_and_an_impulse_wakes_it() {
    let mut world = weightless();
    let id = world.add_body(BodyDesc::dynamic(ball(0.5))).unwrap();
    let time_to_sleep = world.settings().sleep.time_to_sleep;
    let mut slept_at = None;
    for step in 1..=40 {
        let report = world.step(FRAME).unwrap();
        if report.fell_asleep > 0 {
            slept_at = Some(step);
            break;
        }
        assert!(world.is_awake(id).unwrap());
    }
    // Resting time grows by dt per step; the island sleeps on the first step it reaches the limit.
    assert_eq!(slept_at, Some((time_to_sleep / FRAME).round() as i32));
    assert!(!world.is_awake(id).unwrap());
    // Asleep, it ignores gravity.
    world.set_gravity(DVec3::new(0.0, -9.81, 0.0)).unwrap();
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.awake_bodies, 0);
    assert_eq!(world.pose(id).unwrap().position, DVec3::ZERO);
    // An impulse wakes it; it moves with the impulse and gravity from the next step.
    world.apply_impulse(id, DVec3::X, DVec3::ZERO).unwrap();
    assert!(world.is_awake(id).unwrap());
    world.step(FRAME).unwrap();
    assert!(world.pose(id).unwrap().position.x > 0.0);
    assert!(world.pose(id).unwrap().position.y < 0.0);
}

#[test]
fn sleep_a_moving_body_wakes_a_sleeper_it_hits_and_momentum_carries_over() {
    let mut world = weightless();
    let elastic = Material {
        friction: 0.0,
        restitution: 1.0,
    };
    let sleeper = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_material(elastic))
        .unwrap();
    for _ in 0..20 {
        world.step(FRAME).unwrap();
    }
    assert!(!world.is_awake(sleeper).unwrap());
    let hitter = world
        .add_body(
            BodyDesc::dynamic(ball(0.5))
                .with_position(DVec3::new(-1.5, 0.0, 0.0))
                .with_velocity(DVec3::X * 3.0, DVec3::ZERO)
                .with_material(elastic),
        )
        .unwrap();
    let mut woke = false;
    for _ in 0..10 {
        let report = world.step(FRAME).unwrap();
        woke |= report.woken > 0;
    }
    assert!(woke && world.is_awake(sleeper).unwrap());
    // Woken within the step of the hit, the sleeper takes the hitter's momentum (equal masses, e = 1).
    assert!((world.linear_velocity(sleeper).unwrap() - DVec3::X * 3.0).length() < 1e-9);
    assert!(world.linear_velocity(hitter).unwrap().length() < 1e-9);
}

#[test]
fn sleep_islands_sleep_and_wake_as_a_whole() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    // Two boxes held together by a joint form one island with each other but not with the ground.
    let a = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.2))).with_position(DVec3::Y * 0.2))
        .unwrap();
    let b = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.2))).with_position(DVec3::new(2.0, 0.2, 0.0)))
        .unwrap();
    world
        .add_joint(JointDesc::new(JointKind::Ball, a, Some(b), DVec3::new(1.0, 0.2, 0.0)))
        .unwrap();
    world.set_gravity(DVec3::ZERO).unwrap();
    for _ in 0..30 {
        world.step(FRAME).unwrap();
    }
    assert!(!world.is_awake(a).unwrap() && !world.is_awake(b).unwrap());
    // Waking one wakes its island partner.
    world.wake(a).unwrap();
    assert!(world.is_awake(b).unwrap());
}

#[test]
fn sleep_removing_a_body_wakes_what_touched_it() {
    let mut world = weightless();
    let below = world.add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.2)))).unwrap();
    let above = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.2))).with_position(DVec3::Y * 0.4))
        .unwrap();
    let apart = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.2))).with_position(DVec3::X * 5.0))
        .unwrap();
    for _ in 0..20 {
        world.step(FRAME).unwrap();
    }
    assert!(!world.is_awake(above).unwrap() && !world.is_awake(apart).unwrap());
    world.remove_body(below).unwrap();
    assert!(
        world.is_awake(above).unwrap(),
        "the body resting on the removed one must wake"
    );
    assert!(!world.is_awake(apart).unwrap(), "a body far away sleeps on");
}

#[test]
fn sleep_waits_until_a_spawned_overlap_is_pushed_out() {
    // A box spawned 10 cm into the ground, at rest: its real velocity stays near zero while the
    // split pass pushes it out (a fifth of the depth per step at the contact ERP), so it must not
    // fall asleep until the push is done. Asleep half-way it would keep millimetres of
    // penetration for good.
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let id = world
        .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(DVec3::new(0.0, 0.4, 0.0)))
        .unwrap();
    let mut asleep_at = None;
    for step in 1..=90 {
        world.step(FRAME).unwrap();
        if asleep_at.is_none() && !world.is_awake(id).unwrap() {
            asleep_at = Some(step);
        }
    }
    let height = world.pose(id).unwrap().position.y;
    assert!(
        asleep_at.is_some(),
        "a box at rest on the ground falls asleep in the end"
    );
    assert!(
        (height - 0.5).abs() < 5e-4,
        "asleep at step {asleep_at:?} with the box's centre at {height} m (0.5 m at contact)"
    );
}

/// `-sum m g . x` over the dynamic bodies, summed body by body.
fn potential_energy_by_hand(world: &World) -> f64 {
    let bodies = world.bodies();
    (0..bodies.len())
        .map(|dense| bodies.view(dense))
        .filter(|view| !view.mass.is_infinite())
        .map(|view| -view.mass.mass() * world.settings().gravity.dot(view.state.position))
        .sum()
}

#[test]
fn sleep_a_world_at_rest_keeps_its_moving_list_and_potential_energy_exact() {
    let mut world = World::default();
    world.add_body(ground()).unwrap();
    // A stack of two boxes and a box beside it, at rest within a few steps.
    let ids: Vec<_> = [(0.0, 0.5), (0.0, 1.5), (3.0, 0.5)]
        .into_iter()
        .map(|(x, y)| {
            let desc = BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(DVec3::new(x, y, 0.0));
            world.add_body(desc).unwrap()
        })
        .collect();
    let mut asleep = false;
    for _ in 0..300 {
        let report = world.step(FRAME).unwrap();
        let by_hand = potential_energy_by_hand(&world);
        assert!((report.potential_energy_after - by_hand).abs() <= 1e-12 * by_hand.abs().max(1.0));
        assert_eq!(world.bodies().check_consistency(), Ok(()));
        if report.awake_bodies == 0 {
            asleep = true;
            break;
        }
    }
    assert!(asleep, "the pile never fell asleep");
    assert!(world.bodies().moving().is_empty());
    // Resting, a step changes nothing and reports the same energy.
    let before = world.bodies().states().to_vec();
    let report = world.step(FRAME).unwrap();
    assert_eq!(world.bodies().states(), &before[..]);
    assert_eq!(report.kinetic_energy_after, 0.0);
    assert!(
        (report.potential_energy_after - potential_energy_by_hand(&world)).abs()
            <= 1e-12 * report.potential_energy_after.abs()
    );
    // A body woken by the user moves again and is on the list; its island with it.
    let top = *ids.last().unwrap();
    world
        .apply_impulse(top, DVec3::new(0.5, 0.0, 0.0), world.pose(top).unwrap().position)
        .unwrap();
    let dense = world.bodies().dense_index(top).unwrap() as u32;
    assert!(world.bodies().moving().contains(&dense));
    assert_eq!(world.bodies().check_consistency(), Ok(()));
    world.step(FRAME).unwrap();
    assert!(
        (world.potential_energy() - potential_energy_by_hand(&world)).abs() <= 1e-12 * world.potential_energy().abs()
    );
}

#[test]
fn sleep_a_fixed_body_the_user_moves_into_a_falling_ball_s_way_catches_it() {
    // Many fixed bodies and one moving ball: the broad phase looks only at the moving list unless
    // something else was edited, so this checks that a user's edit of a fixed body is seen.
    let mut world = World::default();
    let plates: Vec<_> = (0..12)
        .map(|k| {
            world
                .add_body(
                    BodyDesc::fixed(cuboid(DVec3::new(1.0, 0.1, 1.0))).with_position(DVec3::new(
                        10.0 + 5.0 * k as f64,
                        0.0,
                        0.0,
                    )),
                )
                .unwrap()
        })
        .collect();
    let falling = world
        .add_body(BodyDesc::dynamic(ball(0.25)).with_position(DVec3::new(0.0, 3.0, 0.0)))
        .unwrap();
    for _ in 0..5 {
        world.step(FRAME).unwrap();
    }
    world
        .set_pose(
            plates[0],
            shatter_collision::Pose::new(DVec3::ZERO, glam::DQuat::IDENTITY),
        )
        .unwrap();
    for _ in 0..90 {
        world.step(FRAME).unwrap();
    }
    let height = world.pose(falling).unwrap().position.y;
    // Resting on the plate's top (y = 0.1) with its radius, within the solver's slop.
    assert!((height - 0.35).abs() < 0.01, "the ball is at y = {height} m");
}

/// One ball dropped onto the 30th of a row of 60 sleeping boxes: few bodies move among many at
/// rest, so the broad phase finds the ball's pairs by querying around it rather than from its whole
/// pair list (test builds check that the two agree every step). The ball must land on the box and
/// wake it, and every other box must sleep on.
#[test]
fn sleep_a_ball_dropped_on_one_of_a_row_of_sleeping_boxes_lands_on_it_and_wakes_it_alone() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let boxes: Vec<_> = (0..60)
        .map(|k| {
            let desc = BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(DVec3::new(2.0 * k as f64, 0.5, 0.0));
            world.add_body(desc).unwrap()
        })
        .collect();
    for _ in 0..120 {
        world.step(FRAME).unwrap();
    }
    assert_eq!(world.step(FRAME).unwrap().awake_bodies, 0, "the row sleeps");
    let target = boxes[30];
    let x = world.pose(target).unwrap().position.x;
    let dropped = world
        .add_body(BodyDesc::dynamic(ball(0.25)).with_position(DVec3::new(x, 3.0, 0.0)))
        .unwrap();
    let mut woke = false;
    for _ in 0..30 {
        world.step(FRAME).unwrap();
        woke |= world.is_awake(target).unwrap();
        for (k, &id) in boxes.iter().enumerate() {
            assert!(k == 30 || !world.is_awake(id).unwrap(), "box {k} woke");
        }
    }
    assert!(woke, "the ball's box woke");
    let height = world.pose(dropped).unwrap().position.y;
    assert!(
        (height - 1.25).abs() < 0.02,
        "the ball rests at {height} m, not on its box (1.25 m)"
    );
}
