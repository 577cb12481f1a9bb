//! `step_pile`: one 30 Hz step of a settling pile on the ground, 256 bodies (two thirds boxes
//! with particle contacts, one third balls), sleep off so every body stays in the step; rayon
//! pools of one and two threads, each step's work shared among the pool's threads
//! (`PoolUse::Shared`, so that two threads are measured as two). Throughput counts bodies stepped.
//!
//! `step_few_awake`: one 30 Hz step of a world where one ball moves and a 10 x 10 x 10 lattice of
//! touching boxes sleeps (no gravity, so nothing else ever moves): the cost of a step should
//! follow the moving bodies, not the sleeping ones. Throughput counts every body in the world.
//!
//! `step_small`: one 30 Hz step of a world too small to share work (three balls rolling on the
//! ground; a chain of ten balls hanging from ball joints), stepped from the bench's own thread,
//! outside any rayon pool, as a game loop steps it: such a step should cost what its bodies do,
//! not a hand-over to the pool. Throughput counts the moving bodies.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{DQuat, DVec3};
use shatter_collision::{Collider, Cuboid, HalfSpace, Shape, Sphere};
use shatter_engine::{BodyDesc, JointDesc, JointKind, PoolUse, World, WorldSettings};
use shatter_integrators::SplitMix64;

const FRAME: f64 = 1.0 / 30.0;
const BODIES: usize = 256;

/// A ground and `BODIES` bodies in loose columns on an 8 x 8 grid, each turned at random about y.
pub fn pile() -> World {
    let mut settings = WorldSettings {
        pool_use: PoolUse::Shared,
        ..WorldSettings::default()
    };
    settings.sleep.enabled = false;
    let mut world = World::try_with_settings(settings).expect("valid settings");
    let ground = Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0).expect("plane")), 1.0).expect("ground");
    world.add_body(BodyDesc::fixed(ground)).expect("ground");
    let cube = Collider::from_shape(
        Shape::Cuboid(Cuboid::try_new(DVec3::new(0.3, 0.2, 0.25)).expect("box")),
        0.1,
    )
    .expect("box");
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.25).expect("ball")), 0.1).expect("ball");
    let mut rng = SplitMix64::new(5);
    for i in 0..BODIES {
        let (column, level) = (i % 64, i / 64);
        let position = DVec3::new(
            (column % 8) as f64 * 0.9 + rng.range(-0.05, 0.05),
            0.3 + 0.6 * level as f64,
            (column / 8) as f64 * 0.9 + rng.range(-0.05, 0.05),
        );
        let collider = if i % 3 == 2 { ball.clone() } else { cube.clone() };
        let desc = BodyDesc::dynamic(collider)
            .with_position(position)
            .with_orientation(DQuat::from_rotation_y(rng.range(-0.6, 0.6)));
        world.add_body(desc).expect("body");
    }
    world
}

fn step_pile(c: &mut Criterion) {
    let mut group = c.benchmark_group("step_pile");
    group.throughput(Throughput::Elements(BODIES as u64));
    group.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        let mut world = pile();
        pool.install(|| {
            for _ in 0..60 {
                world.step(FRAME).expect("step");
            }
        });
        group.bench_with_input(BenchmarkId::new("256_bodies", threads), &threads, |b, _| {
            b.iter(|| pool.install(|| world.step(FRAME).expect("step").contacts))
        });
    }
    group.finish();
}

/// The sleeping lattice and the moving ball of `step_few_awake`, stepped until the lattice sleeps.
fn few_awake() -> World {
    let settings = WorldSettings {
        gravity: DVec3::ZERO,
        ..WorldSettings::default()
    };
    let mut world = World::try_with_settings(settings).expect("valid settings");
    let cube =
        Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.5)).expect("box")), 0.25).expect("box");
    for i in 0..1000 {
        let cell = DVec3::new((i % 10) as f64, (i / 10 % 10) as f64, (i / 100) as f64);
        world
            .add_body(BodyDesc::dynamic(cube.clone()).with_position(cell))
            .expect("box");
    }
    for _ in 0..60 {
        world.step(FRAME).expect("step");
    }
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.25).expect("ball")), 0.1).expect("ball");
    world
        .add_body(
            BodyDesc::dynamic(ball)
                .with_position(DVec3::new(-20.0, 5.0, 5.0))
                .with_velocity(DVec3::new(0.0, 0.0, 1.0), DVec3::ZERO),
        )
        .expect("ball");
    world
}

fn step_few_awake(c: &mut Criterion) {
    let mut group = c.benchmark_group("step_few_awake");
    group.throughput(Throughput::Elements(1001));
    let mut world = few_awake();
    let report = world.step(FRAME).expect("step");
    assert_eq!(report.awake_bodies, 1, "the lattice sleeps and the ball moves");
    group.bench_function("one_ball_beside_1000_asleep", |b| {
        b.iter(|| world.step(FRAME).expect("step").awake_bodies)
    });
    group.finish();
}

/// Three balls rolling on the ground, 2 m apart, or ten balls 1 m apart hanging in a chain of
/// ball joints from a point 12 m up; sleeping off, so they stay in every step.
fn small_world(chain: bool) -> World {
    let mut settings = WorldSettings::default();
    settings.sleep.enabled = false;
    let mut world = World::try_with_settings(settings).expect("valid settings");
    let ground = Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0).expect("plane")), 1.0).expect("ground");
    world.add_body(BodyDesc::fixed(ground)).expect("ground");
    let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).expect("ball")), 0.5 / 3.0).expect("ball");
    if !chain {
        for k in 0..3 {
            let desc = BodyDesc::dynamic(ball.clone())
                .with_position(DVec3::new(2.0 * k as f64, 0.5, 0.0))
                .with_velocity(DVec3::X * 2.0, DVec3::ZERO);
            world.add_body(desc).expect("ball");
        }
        return world;
    }
    let mut above = None;
    for k in 0..10 {
        let x = k as f64 + 1.0;
        let link = world
            .add_body(BodyDesc::dynamic(ball.clone()).with_position(DVec3::new(x, 12.0, 0.0)))
            .expect("link");
        let anchor = DVec3::new(x - 0.5, 12.0, 0.0);
        let joint = match above {
            None => JointDesc::new(JointKind::Ball, link, None, DVec3::new(0.0, 12.0, 0.0)),
            Some(above) => JointDesc::new(JointKind::Ball, above, Some(link), anchor),
        };
        world.add_joint(joint).expect("joint");
        above = Some(link);
    }
    world
}

fn step_small(c: &mut Criterion) {
    let mut group = c.benchmark_group("step_small");
    for (name, chain, moving) in [("three_rolling_balls", false, 3), ("chain_of_ten_links", true, 10)] {
        group.throughput(Throughput::Elements(moving));
        let mut world = small_world(chain);
        for _ in 0..60 {
            world.step(FRAME).expect("step");
        }
        group.bench_function(name, |b| b.iter(|| world.step(FRAME).expect("step").awake_bodies));
    }
    group.finish();
}

criterion_group!(benches, step_pile, step_few_awake, step_small);
criterion_main!(benches);
