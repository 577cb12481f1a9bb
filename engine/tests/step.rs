//! The step: time-step checks, stage order, free fall against the closed form of the scheme,
//! the elastic collision pass, energy figures, quarantine.

mod common;

use common::{FRAME, G, ball, cuboid, ground, weightless};
use glam::{DQuat, DVec3};
use shatter_collision::{Collider, TriMesh};
use shatter_engine::{BodyDesc, BodyId, EngineError, Material, Stage, World};
use shatter_integrators::{MassProperties, SplitMix64};

#[test]
fn step_refuses_bad_time_steps_by_name_and_changes_nothing() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y * 3.0))
        .unwrap();
    world.step(FRAME).unwrap();
    let (hash, time) = (world.state_hash(), world.time());
    for dt in [0.0, -FRAME, f64::NAN, f64::INFINITY, 1.5] {
        let err = world.step(dt).unwrap_err();
        assert!(matches!(err, EngineError::InvalidTimeStep { .. }));
        assert!(err.to_string().contains(&format!("dt = {dt} s")), "{err}");
        assert_eq!((world.state_hash(), world.time()), (hash, time));
    }
}

#[test]
fn step_stages_run_in_declared_order_and_are_timed() {
    let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "broad_phase",
            "collide",
            "apply_forces",
            "solve_constraints",
            "fracture",
            "integrate",
            "sleep"
        ]
    );
    assert!(Stage::ALL.iter().enumerate().all(|(i, s)| s.index() == i));
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::Y * 0.5))
        .unwrap();
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.pairs, 1);
    assert_eq!(report.stage(Stage::BroadPhase).count, 1);
    assert_eq!(report.stage(Stage::ApplyForces).count, 1);
    assert_eq!(report.stage(Stage::Integrate).count, 1);
    assert!(report.total_time() > std::time::Duration::ZERO);
}

#[test]
fn step_free_fall_matches_symplectic_euler_in_closed_form() {
    // apply_forces then integrate is symplectic Euler: v_{k+1} = v_k + h g, x_{k+1} = x_k + h v_{k+1},
    // so x_N = x_0 + N h v_0 + h^2 g N (N + 1) / 2 = x_0 + v_0 t + g t^2 / 2 + g h t / 2.
    let mut world = World::new();
    let (x0, v0, w0) = (
        DVec3::new(1.0, 50.0, -2.0),
        DVec3::new(3.0, 4.0, -1.0),
        DVec3::new(2.0, -7.0, 5.0),
    );
    let id = world
        .add_body(
            BodyDesc::dynamic(cuboid(DVec3::new(0.1, 0.3, 0.5)))
                .with_position(x0)
                .with_velocity(v0, w0),
        )
        .unwrap();
    let rotational = |world: &World| {
        let view = world.body(id).unwrap();
        view.state.rotational_kinetic_energy(view.mass)
    };
    let spin_energy = rotational(&world);
    let g = DVec3::new(0.0, -G, 0.0);
    let h = FRAME;
    let mass = world.body(id).unwrap().mass.mass();
    for n in 1..=60u32 {
        let report = world.step(h).unwrap();
        let n = f64::from(n);
        let expected = x0 + v0 * (n * h) + g * (h * h * n * (n + 1.0) / 2.0);
        let x = world.pose(id).unwrap().position;
        assert!(
            (x - expected).length() < 1e-12 * expected.length(),
            "step {n}: {x} against {expected}"
        );
        assert!((world.linear_velocity(id).unwrap() - (v0 + g * (n * h))).length() < 1e-12);
        // Each step of symplectic Euler changes KE + PE by exactly -m h^2 |g|^2 / 2.
        let change = report.energy_after() - report.energy_before();
        let expected_change = -0.5 * mass * h * h * G * G;
        assert!((change - expected_change).abs() < 1e-9 * report.kinetic_energy_after.max(1.0));
    }
    // The energy fix keeps the spin's energy at frame rate.
    assert!((rotational(&world) - spin_energy).abs() < 1e-12 * spin_energy);
}

#[test]
fn step_ball_dropped_with_restitution_one_bounces_back_to_its_height() {
    let mut world = World::new();
    world
        .add_body(ground().with_material(Material {
            friction: 0.5,
            restitution: 1.0,
        }))
        .unwrap();
    let r = 0.25;
    let id = world
        .add_body(
            BodyDesc::dynamic(ball(r))
                .with_position(DVec3::Y * (2.0 + r))
                .with_material(Material {
                    friction: 0.5,
                    restitution: 1.0,
                }),
        )
        .unwrap();
    let mass = world.body(id).unwrap().mass.mass();
    let mut bounced = false;
    let mut peak_after = 0.0_f64;
    for _ in 0..90 {
        let before = world.linear_velocity(id).unwrap();
        let report = world.step(FRAME).unwrap();
        if report.collision_impulses > 0 && !bounced {
            bounced = true;
            // Sphere on static ground: K = 1/m, so the impulse is (1 + e) m |v_n| exactly.
            let impulse: f64 = world
                .contacts()
                .iter()
                .flat_map(|p| &p.contacts)
                .map(|c| c.collision_impulse)
                .sum();
            assert!((impulse - 2.0 * mass * -before.y).abs() < 1e-12 * impulse, "{impulse}");
            assert!(world.linear_velocity(id).unwrap().y > 0.0);
        }
        if bounced {
            peak_after = peak_after.max(world.pose(id).unwrap().position.y - r);
        }
        assert!(report.energy_removed_by_clamping >= 0.0);
    }
    assert!(bounced, "the ball never hit the ground");
    // Symplectic Euler conserves a shadow energy `E - m g h v_y / 2` rather than `E`; reversing
    // `v_y` at impact moves `E` by up to `m g h |v|`, i.e. the height by up to `h |v|` (0.21 m
    // here at 30 Hz). Within that, and never above the drop height, the ball climbs back.
    let loss = FRAME * (2.0 * G * 2.0).sqrt();
    assert!(
        peak_after > 2.0 - 1.5 * loss && peak_after < 2.0 + 0.01,
        "peak after the bounce {peak_after} m from 2 m"
    );
}

#[test]
fn step_head_on_collision_conserves_momentum_and_follows_restitution() {
    for e in [1.0, 0.5, 0.0] {
        let mut world = weightless();
        let material = Material {
            friction: 0.0,
            restitution: e,
        };
        let a = world
            .add_body(
                BodyDesc::dynamic(ball(0.5))
                    .with_velocity(DVec3::X * 2.0, DVec3::ZERO)
                    .with_material(material),
            )
            .unwrap();
        let b = world
            .add_body(
                BodyDesc::dynamic(ball(0.5))
                    .with_position(DVec3::X * 1.05)
                    .with_material(material),
            )
            .unwrap();
        world.step(FRAME).unwrap();
        let (va, vb) = (world.linear_velocity(a).unwrap(), world.linear_velocity(b).unwrap());
        // Equal masses: v_a' = (1 - e) v / 2, v_b' = (1 + e) v / 2.
        assert!((va - DVec3::X * (1.0 - e)).length() < 1e-12, "e = {e}: {va}");
        assert!((vb - DVec3::X * (1.0 + e)).length() < 1e-12, "e = {e}: {vb}");
    }
}

#[test]
fn step_collisions_never_add_kinetic_energy() {
    let mut rng = SplitMix64::new(11);
    for trial in 0..20 {
        let mut world = weightless();
        let e = rng.range(0.0, 1.0);
        world
            .add_body(ground().with_material(Material {
                friction: 0.5,
                restitution: e,
            }))
            .unwrap();
        let he = DVec3::new(rng.range(0.05, 0.4), rng.range(0.05, 0.4), rng.range(0.05, 0.4));
        world
            .add_body(
                BodyDesc::dynamic(cuboid(he))
                    .with_position(DVec3::Y * 0.5)
                    .with_orientation(rng.rotation())
                    .with_velocity(
                        DVec3::new(rng.range(-1.0, 1.0), -3.0, 0.0),
                        rng.unit_vector() * rng.range(0.0, 8.0),
                    )
                    .with_material(Material {
                        friction: 0.5,
                        restitution: e,
                    }),
            )
            .unwrap();
        for _ in 0..20 {
            let report = world.step(FRAME).unwrap();
            let (before, after) = (report.kinetic_energy_before, report.kinetic_energy_after);
            assert!(
                after <= before * (1.0 + 1e-12),
                "trial {trial}: {before} J -> {after} J"
            );
        }
    }
}

#[test]
fn step_quarantines_a_body_whose_state_would_overflow() {
    let mut world = weightless();
    let calm = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_velocity(DVec3::X, DVec3::ZERO))
        .unwrap();
    let wild = world
        .add_body(
            BodyDesc::dynamic(ball(0.5))
                .with_position(DVec3::Y * 5.0)
                .with_orientation(DQuat::from_rotation_x(0.3)),
        )
        .unwrap();
    world.set_velocity(wild, DVec3::X, DVec3::new(0.0, 1e200, 0.0)).unwrap();
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.quarantined.len(), 1);
    assert_eq!(report.quarantined[0].id, wild);
    assert_eq!(report.quarantined[0].stage, Stage::Integrate);
    let pose = world.pose(wild).unwrap();
    assert_eq!(pose.position, DVec3::Y * 5.0);
    assert_eq!(world.linear_velocity(wild).unwrap(), DVec3::ZERO);
    assert!(!world.is_awake(wild).unwrap());
    // The other body moved as usual.
    assert!((world.pose(calm).unwrap().position - DVec3::X * FRAME).length() < 1e-15);
    // Quarantined bodies stay put until the user moves them.
    world.step(FRAME).unwrap();
    assert_eq!(world.pose(wild).unwrap().position, DVec3::Y * 5.0);
    world.set_velocity(wild, DVec3::Y, DVec3::ZERO).unwrap();
    world.step(FRAME).unwrap();
    assert!((world.pose(wild).unwrap().position.y - (5.0 + FRAME)).abs() < 1e-14);
}

/// A stage that changes only velocities is checked through the kinetic energy it sums anyway
/// (step.rs, `end_velocity_stage`): a velocity it makes infinite must still quarantine the body
/// at that stage, and a finite velocity too large for its energy to be finite must not.
#[test]
fn step_quarantines_a_body_whose_velocity_a_velocity_stage_made_infinite() {
    let mut world = World::try_with_settings(shatter_engine::WorldSettings {
        gravity: DVec3::new(0.0, -1e308, 0.0),
        ..shatter_engine::WorldSettings::default()
    })
    .unwrap();
    let wild = world
        .add_body(BodyDesc::dynamic(ball(0.5)).with_position(DVec3::X * 5.0))
        .unwrap();
    // Finite, with an infinite kinetic energy (the collision stage, before gravity, must let it
    // be); gravity's `g dt` then takes it past `f64::MAX`.
    world
        .set_velocity(wild, DVec3::new(0.0, -f64::MAX, 0.0), DVec3::ZERO)
        .unwrap();
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.quarantined.len(), 1, "{:?}", report.quarantined);
    assert_eq!(report.quarantined[0].id, wild);
    assert_eq!(report.quarantined[0].stage, Stage::ApplyForces);
    assert_eq!(world.pose(wild).unwrap().position, DVec3::X * 5.0);
    assert_eq!(world.linear_velocity(wild).unwrap(), DVec3::ZERO);
    // The energy the stage reports is the quarantined body's, none.
    assert_eq!(report.stage(Stage::ApplyForces).kinetic_energy_after, 0.0);
    assert_eq!(report.kinetic_energy_after, 0.0);
}

#[test]
fn step_a_moving_kinematic_body_pushes_what_it_meets() {
    // Su 2009 section 3.2 measures energy in the kinematic body's frame; measured in the world
    // frame, the push would count as added energy and be dropped, and the wall would pass through.
    let mut world = weightless();
    let wall = world
        .add_body(BodyDesc::kinematic(cuboid(DVec3::new(0.1, 1.0, 1.0))).with_velocity(DVec3::X, DVec3::ZERO))
        .unwrap();
    let ball_id = world
        .add_body(BodyDesc::dynamic(ball(0.3)).with_position(DVec3::X * 0.5))
        .unwrap();
    for _ in 0..30 {
        world.step(FRAME).unwrap();
    }
    let gap = world.pose(ball_id).unwrap().position.x - world.pose(wall).unwrap().position.x;
    assert!(
        gap >= 0.4 - 1e-9,
        "the wall passed into the ball: centres {gap} m apart"
    );
    assert!((world.linear_velocity(ball_id).unwrap().x - 1.0).abs() < 1e-9);
    // The kinematic body keeps its prescribed velocity.
    assert_eq!(world.linear_velocity(wall).unwrap(), DVec3::X);
}

#[test]
fn step_a_box_resting_on_the_ground_stays_put_and_sleeps() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let he = DVec3::new(0.3, 0.2, 0.25);
    let start = DVec3::new(0.5, he.y, -0.25);
    let id = world
        .add_body(BodyDesc::dynamic(cuboid(he)).with_position(start))
        .unwrap();
    let mut slept = false;
    for _ in 0..120 {
        let report = world.step(FRAME).unwrap();
        assert!(report.quarantined.is_empty());
        let pose = world.pose(id).unwrap();
        assert!((pose.position - start).length() < 1e-6, "drifted to {}", pose.position);
        assert!(pose.orientation.angle_between(DQuat::IDENTITY) < 1e-4);
        slept |= !world.is_awake(id).unwrap();
    }
    assert!(slept, "a box at rest should fall asleep");
}

#[test]
fn step_a_ball_resting_on_the_ground_stays_put() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let r = 0.4;
    let id = world
        .add_body(BodyDesc::dynamic(ball(r)).with_position(DVec3::Y * r))
        .unwrap();
    for _ in 0..90 {
        world.step(FRAME).unwrap();
        let y = world.pose(id).unwrap().position.y;
        assert!((y - r).abs() < 1e-6, "height {y} against radius {r}");
    }
}

#[test]
fn step_a_sliding_ball_ends_rolling_at_five_sevenths_of_its_speed() {
    // A solid ball sliding without spin: friction at the contact conserves the angular momentum
    // about the contact point, m v0 r = m v r + 2/5 m r^2 (v / r), so v = 5/7 v0 once it rolls.
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let (r, v0) = (0.3, 4.0);
    let id = world
        .add_body(
            BodyDesc::dynamic(ball(r))
                .with_position(DVec3::Y * r)
                .with_velocity(DVec3::X * v0, DVec3::ZERO)
                .with_material(Material {
                    friction: 0.4,
                    restitution: 0.0,
                }),
        )
        .unwrap();
    for _ in 0..90 {
        world.step(FRAME).unwrap();
    }
    let v = world.linear_velocity(id).unwrap();
    let w = world.angular_velocity(id).unwrap();
    assert!((v.x - 5.0 / 7.0 * v0).abs() < 1e-6 * v0, "final speed {v}");
    // Rolling without slipping: v = -w x (r n) at the contact, i.e. w_z = -v_x / r.
    assert!((w.z + v.x / r).abs() < 1e-6 * v0 / r, "spin {w} for speed {v}");
}

/// A box on a slope of `angle` rad with friction `mu`; returns its velocity along the slope after
/// `steps` frames (the ground is a tilted half-space, the box lies flat on it).
fn slide(angle: f64, mu: f64, steps: usize) -> f64 {
    let mut world = World::new();
    let normal = DVec3::new(angle.sin(), angle.cos(), 0.0);
    let slope = shatter_collision::HalfSpace::try_new(normal, 0.0).unwrap();
    let material = Material {
        friction: mu,
        restitution: 0.0,
    };
    let plane = Collider::from_shape(shatter_collision::Shape::HalfSpace(slope), 1.0).unwrap();
    world.add_body(BodyDesc::fixed(plane).with_material(material)).unwrap();
    let he = DVec3::new(0.3, 0.1, 0.2);
    let tilt = DQuat::from_rotation_z(-angle);
    let id = world
        .add_body(
            BodyDesc::dynamic(cuboid(he))
                .with_position(normal * he.y)
                .with_orientation(tilt)
                .with_material(material),
        )
        .unwrap();
    for _ in 0..steps {
        world.step(FRAME).unwrap();
    }
    let down = DVec3::new(angle.cos(), -angle.sin(), 0.0);
    world.linear_velocity(id).unwrap().dot(down)
}

#[test]
fn step_a_box_slides_down_a_slope_at_the_coulomb_rate_or_sticks() {
    // Su 2009 figure 3: sliding, the box accelerates at g (sin a - mu cos a); with mu above tan a
    // it does not move.
    let angle = 30f64.to_radians();
    let (mu, steps) = (0.3, 30);
    let v = slide(angle, mu, steps);
    let expected = G * (angle.sin() - mu * angle.cos()) * steps as f64 * FRAME;
    assert!(
        (v - expected).abs() < 1e-6 * expected,
        "slid at {v} m/s, expected {expected}"
    );
    let stuck = slide(angle, 0.7, steps);
    assert!(stuck.abs() < 1e-3, "a box with mu > tan a slid at {stuck} m/s");
}

/// Boxes of 150 different masses slide on the ground, each its own contact pair, so their rows are
/// built in several chunks side by side (64 pairs each) and joined. Each box must feel Coulomb
/// friction from its own normal impulse: one step takes `mu g dt` off every box's speed whatever
/// its mass. A friction row bounded by another box's normal rows (a chunk's indices not shifted
/// when joined) would slow light and heavy boxes differently.
#[test]
fn step_many_sliding_boxes_each_feel_coulomb_friction_from_their_own_contacts() {
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let ids: Vec<_> = (0..150)
        .map(|k| {
            let desc = BodyDesc::dynamic(cuboid(DVec3::splat(0.5)))
                .with_density(100.0 + 40.0 * k as f64)
                .with_position(DVec3::new(3.0 * k as f64, 0.5, 0.0))
                .with_velocity(DVec3::X * 2.0, DVec3::ZERO);
            world.add_body(desc).unwrap()
        })
        .collect();
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.manifolds, 150, "one contact pair per box");
    let expected = 2.0 - Material::default().friction * G * FRAME;
    for (k, id) in ids.iter().enumerate() {
        let v = world.linear_velocity(*id).unwrap();
        assert!(
            (v.x - expected).abs() < 1e-6 && v.y.abs() < 1e-6 && v.z.abs() < 1e-6,
            "box {k} moves at {v}, not {expected} m/s along x"
        );
    }
}

/// Speculative contacts only where the step can close the gap: two level-set boxes (and two
/// balls, the exact path) 6 cm apart, three times the margin, at frame rate. Moving apart,
/// sliding past or spinning about the line between them closes nothing, so they have no contact
/// (a margin bounding every direction of motion gave them four); moving together at 5 m/s (17 cm
/// a step) they have one and stop short of each other.
#[test]
fn step_speculative_contacts_only_where_the_step_can_close_the_gap() {
    let half = 0.1;
    let level_set_box = Collider::from_mesh(&TriMesh::cuboid(DVec3::splat(half)), 20, 0.04).unwrap();
    for (name, collider) in [("level-set boxes", level_set_box), ("balls", ball(half))] {
        let gap = 0.06;
        for (motion, linear, angular, touch) in [
            ("apart", DVec3::new(-5.0, 0.0, 0.0), DVec3::ZERO, false),
            ("sliding", DVec3::new(0.0, 5.0, 0.0), DVec3::ZERO, false),
            ("spinning", DVec3::ZERO, DVec3::new(20.0, 0.0, 0.0), false),
            ("together", DVec3::new(5.0, 0.0, 0.0), DVec3::ZERO, true),
        ] {
            let mut world = weightless();
            let mass = MassProperties::solid_cuboid(8.0, DVec3::splat(half)).unwrap();
            let desc = || BodyDesc::dynamic(collider.clone()).with_mass_properties(mass);
            let a = world.add_body(desc().with_velocity(linear, angular)).unwrap();
            let b = world
                .add_body(desc().with_position(DVec3::X * (2.0 * half + gap)))
                .unwrap();
            let report = world.step(FRAME).unwrap();
            assert_eq!(
                report.contacts > 0,
                touch,
                "{name} {motion}: {} contacts",
                report.contacts
            );
            let apart = world.state(b).unwrap().position.x - world.state(a).unwrap().position.x - 2.0 * half;
            if touch {
                assert!(apart > -2e-3, "{name} {motion}: {apart} m apart after the step");
            }
        }
    }
}

/// A column of ten balls (radius 0.25 m, 0.6 m apart) dropped together from 1 m: each lands on
/// the one below while the balls above are still falling at up to 7 m/s, 23 cm a step, through
/// gaps of 10 cm. No ball may end a step more than 5 mm into another or into the ground (before
/// speculative contacts counted the body that stops, the upper balls sank by up to 25 cm into
/// the lower ones and took a second of position correction to come out), and the column, landed
/// within 0.75 s, is asleep half a second later.
#[test]
fn step_a_column_of_balls_dropped_together_lands_without_sinking_into_itself() {
    let radius = 0.25;
    let mut world = World::new();
    world.add_body(ground()).unwrap();
    let balls: Vec<BodyId> = (0..10)
        .map(|i| {
            let position = DVec3::new(0.0, 1.0 + radius + 0.6 * i as f64, 0.0);
            world
                .add_body(BodyDesc::dynamic(ball(radius)).with_position(position))
                .unwrap()
        })
        .collect();
    for step in 1..=45 {
        world.step(FRAME).unwrap();
        let heights: Vec<f64> = balls.iter().map(|&b| world.state(b).unwrap().position.y).collect();
        assert!(heights[0] > radius - 5e-3, "step {step}: lowest ball at {}", heights[0]);
        for (k, pair) in heights.windows(2).enumerate() {
            let overlap = 2.0 * radius - (pair[1] - pair[0]);
            assert!(
                overlap < 5e-3,
                "step {step}: balls {k} and {} overlap by {overlap} m",
                k + 1
            );
        }
    }
    for &b in &balls {
        assert!(
            !world.body(b).unwrap().motion.is_awake(),
            "a ball is still awake after 1.5 s"
        );
    }
}

/// A heap of small bodies takes the broad phase's sort and sweep (most bodies move, each far
/// smaller than the fat boxes' margin): its pairs must be exactly the pairs of overlapping swept
/// boxes, counted here by testing every pair (bodies at rest, so a swept box is the world box
/// grown by half the contact margin).
#[test]
fn broad_phase_sweep_pairs_a_heap_of_small_bodies_as_every_pair_test_does() {
    let mut world = weightless();
    let margin = world.settings().contact_margin;
    let mut random = SplitMix64::new(11);
    let mut boxes = Vec::new();
    for k in 0..300 {
        let half = DVec3::new(0.02, 0.03, 0.015) * (1.0 + (k % 3) as f64 * 0.2);
        let centre = DVec3::new(random.next_f64(), random.next_f64(), random.next_f64()) * 0.5;
        let axis = DVec3::new(random.next_f64() - 0.5, random.next_f64() - 0.5, 1.0).normalize();
        let orientation = DQuat::from_axis_angle(axis, 6.0 * random.next_f64());
        let collider = cuboid(half);
        let local = collider.local_bounds().unwrap();
        let rotation = glam::DMat3::from_quat(orientation);
        let abs = glam::DMat3::from_cols(rotation.x_axis.abs(), rotation.y_axis.abs(), rotation.z_axis.abs());
        let reach = abs * (0.5 * local.size()) + DVec3::splat(0.5 * margin);
        let middle = centre + orientation * local.center();
        boxes.push((middle - reach, middle + reach));
        let desc = BodyDesc::dynamic(collider)
            .with_position(centre)
            .with_orientation(orientation);
        world.add_body(desc).unwrap();
    }
    let overlap = |a: &(DVec3, DVec3), b: &(DVec3, DVec3)| a.0.cmple(b.1).all() && b.0.cmple(a.1).all();
    let expected = (0..boxes.len())
        .flat_map(|i| (i + 1..boxes.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| overlap(&boxes[i], &boxes[j]))
        .count();
    assert!(expected > 100, "a heap, not a scatter: {expected} pairs");
    let report = world.step(FRAME).unwrap();
    assert_eq!(report.pairs, expected);
}

/// Adds a static box far below everything: placed among the bodies of a test, it splits the
/// moving bodies into two runs of the store's arrays, so they are advanced through copies.
fn add_far_static_box(world: &mut World) {
    let far = BodyDesc::fixed(cuboid(DVec3::splat(0.5))).with_position(DVec3::new(0.0, -500.0, 0.0));
    world.add_body(far).unwrap();
}

/// The pose update advances the moving bodies where they are when they are one run of the store
/// (every body but a static one at an end) and through copies otherwise (a static body between
/// them): spinning, tumbling boxes and balls in flight, far apart, follow the same bits either
/// way, step after step.
#[test]
fn step_bodies_advanced_in_place_match_bodies_advanced_through_copies() {
    let build = |fixed_at: usize| {
        let mut world = World::new();
        let mut rng = SplitMix64::new(9);
        let mut ids = Vec::new();
        for k in 0..40 {
            if k == fixed_at {
                add_far_static_box(&mut world);
            }
            let desc = if k % 3 == 0 {
                BodyDesc::dynamic(ball(0.3))
            } else {
                BodyDesc::dynamic(cuboid(DVec3::new(0.2, 0.35, 0.5)))
            };
            let position = DVec3::new(4.0 * k as f64, rng.range(0.0, 10.0), 0.0);
            let spin = DVec3::new(rng.range(-9.0, 9.0), rng.range(-9.0, 9.0), rng.range(-9.0, 9.0));
            let turn = DQuat::from_rotation_y(rng.range(-1.0, 1.0)) * DQuat::from_rotation_x(rng.range(-1.0, 1.0));
            let desc = desc.with_position(position).with_orientation(turn);
            ids.push(world.add_body(desc.with_velocity(DVec3::Y, spin)).unwrap());
        }
        (world, ids)
    };
    let bits = |v: [f64; 4]| v.map(f64::to_bits);
    let (mut in_place, first) = build(0);
    let (mut copied, second) = build(20);
    for step in 0..90 {
        in_place.step(FRAME).unwrap();
        copied.step(FRAME).unwrap();
        for (&a, &b) in first.iter().zip(&second) {
            let (x, y) = (in_place.body(a).unwrap().state, copied.body(b).unwrap().state);
            assert!(
                bits(x.position.extend(0.0).to_array()) == bits(y.position.extend(0.0).to_array())
                    && bits(x.orientation.to_array()) == bits(y.orientation.to_array())
                    && bits(x.angular_velocity().extend(0.0).to_array())
                        == bits(y.angular_velocity().extend(0.0).to_array()),
                "step {step}: {a} and {b} differ"
            );
        }
    }
}

/// A lattice of `size` unit boxes at rest, each a fraction of the contact margin from its
/// neighbours, takes the broad phase's read of its fat pairs, which keeps the pairs' dense indices
/// from step to step. Removing a plane (no box, so the fat pairs stay as they were) moves the
/// store's last box into the plane's dense place, and adding it back moves nothing: the pairs
/// must follow both, each time exactly the pairs of overlapping swept boxes counted by testing
/// every pair (bodies at rest: a swept box is the world box grown by half the contact margin).
fn lattice_pairs_follow_bodies_moved_in_the_store(size: [usize; 3]) {
    let mut world = weightless();
    let margin = world.settings().contact_margin;
    let plane = || {
        let far_below = shatter_collision::HalfSpace::ground(-100.0).unwrap();
        BodyDesc::fixed(Collider::from_shape(shatter_collision::Shape::HalfSpace(far_below), 1.0).unwrap())
    };
    let first_plane = world.add_body(plane()).unwrap();
    let pitch = 1.0 + 0.4 * margin;
    let [nx, ny, nz] = size;
    let count = nx * ny * nz;
    let mut boxes = Vec::new();
    for k in 0..count {
        let centre = DVec3::new((k % nx) as f64, (k / (nx * nz)) as f64, (k / nx % nz) as f64) * pitch;
        boxes.push((
            centre - DVec3::splat(0.5 + 0.5 * margin),
            centre + DVec3::splat(0.5 + 0.5 * margin),
        ));
        world
            .add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.5))).with_position(centre))
            .unwrap();
    }
    let overlap = |a: &(DVec3, DVec3), b: &(DVec3, DVec3)| a.0.cmple(b.1).all() && b.0.cmple(a.1).all();
    let expected = (0..boxes.len())
        .flat_map(|i| (i + 1..boxes.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| overlap(&boxes[i], &boxes[j]))
        .count();
    // Every box pairs with its face, edge and corner neighbours: over the offsets of -1, 0 or 1
    // along each axis, (n + 2 (n - 1)) places a side with a neighbour there, less the boxes'
    // zero offsets, each pair counted from both ends.
    let places = |n: usize| 3 * n - 2;
    assert_eq!(expected, (places(nx) * places(ny) * places(nz) - count) / 2);
    for _ in 0..2 {
        assert_eq!(world.step(FRAME).unwrap().pairs, expected);
    }
    world.remove_body(first_plane).unwrap();
    assert_eq!(world.step(FRAME).unwrap().pairs, expected, "after the plane went");
    world.add_body(plane()).unwrap();
    for _ in 0..2 {
        assert_eq!(world.step(FRAME).unwrap().pairs, expected, "after a plane came back");
    }
}

#[test]
fn broad_phase_fat_pairs_kept_from_step_to_step_follow_bodies_moved_in_the_store() {
    lattice_pairs_follow_bodies_moved_in_the_store([4, 3, 4]);
}

/// The same with 512 boxes: 5068 pairs, so at least as many fat pairs, more than twice the 1024
/// the broad phase reads in one task (`KEYS_PER_TASK`): their bodies are looked up and their swept
/// boxes tested in fixed runs on the pool, which the 48 boxes' few hundred never reach.
#[test]
fn broad_phase_fat_pairs_of_a_large_lattice_read_on_the_pool_are_every_overlapping_pair() {
    lattice_pairs_follow_bodies_moved_in_the_store([8, 8, 8]);
}

/// Bodies pushed out of each other by the solve's split velocities take those displacements in
/// one pass with their check where the moving bodies are one run of the store, and one after
/// another through copies otherwise (a static body between them): pairs of boxes started a few
/// centimetres into each other, falling and turning, follow the same bits either way.
#[test]
fn step_split_displacements_in_place_match_those_through_copies() {
    let build = |fixed_at: usize| {
        let mut world = World::new();
        let mut rng = SplitMix64::new(4);
        let mut ids = Vec::new();
        for k in 0..30 {
            if k == fixed_at {
                add_far_static_box(&mut world);
            }
            let turn = DQuat::from_rotation_y(rng.range(-1.0, 1.0)) * DQuat::from_rotation_x(rng.range(-0.2, 0.2));
            let spin = DVec3::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
            let low = DVec3::new(4.0 * k as f64, rng.range(0.0, 10.0), 0.0);
            let sunk = rng.range(0.01, 0.05);
            for position in [low, low + turn * DVec3::new(0.0, 0.7 - sunk, 0.0)] {
                let desc = BodyDesc::dynamic(cuboid(DVec3::new(0.5, 0.35, 0.4)))
                    .with_position(position)
                    .with_orientation(turn)
                    .with_velocity(DVec3::ZERO, spin);
                ids.push(world.add_body(desc).unwrap());
            }
        }
        (world, ids)
    };
    let (mut in_place, first) = build(0);
    let (mut copied, second) = build(15);
    let mut pushed_apart = 0;
    for step in 0..30 {
        let report = in_place.step(FRAME).unwrap();
        copied.step(FRAME).unwrap();
        pushed_apart += usize::from(report.solver_rows > 0);
        for (&a, &b) in first.iter().zip(&second) {
            let (x, y) = (in_place.body(a).unwrap().state, copied.body(b).unwrap().state);
            assert!(
                bytemuck::bytes_of(x) == bytemuck::bytes_of(y),
                "step {step}: {a} and {b} differ"
            );
        }
    }
    assert!(pushed_apart >= 5, "the pairs met in {pushed_apart} steps");
    for pair in first.chunks(2) {
        let (low, high) = (
            in_place.body(pair[0]).unwrap().state,
            in_place.body(pair[1]).unwrap().state,
        );
        let along = (high.position - low.position).dot(low.orientation * DVec3::Y);
        assert!(along > 0.69, "a pair still {} m into each other", 0.7 - along);
    }
}
