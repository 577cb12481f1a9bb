//! `prescored`: Su 2009's performance figures, on a rayon pool of two threads.
//!
//! - `event_wall_150x10x100`: one fracture event on the paper's 150 x 10 x 100 wall with the
//!   dart-board pattern: align, label and flood-fill the lattice, particles, mass properties, the
//!   fragments' level sets and bodies, and spawning them into a world. Criterion's "time" is one
//!   event.
//! - `cylinder_frame_55x105x55`: the cylinder scene (Fig. 5) stepped at one step per 30 Hz frame
//!   through the ball's impact, the fracture and the 2 s after it (60 steps); one run goes on
//!   across samples and is rebuilt outside the timing when it ends. Criterion's "time" is the
//!   mean time of one frame.
//! - `table_frame_after_fracture_1000_spheres` (group `prescored_table`): Su's Fig. 8, 1000
//!   spheres on a 150 x 10 x 100 table top that a large sphere shatters into thousands of
//!   pieces. Each run is built and stepped to just after the break outside the timing, then its
//!   next 60 frames (2 s of the pieces and spheres falling and piling on the ground) are timed;
//!   criterion's "time" is the mean time of one of those frames over a run (ten runs, about ten
//!   minutes on two cores). The peak resident memory of the process is printed when the group
//!   ends.

use std::time::{Duration, Instant};

mod common;

use common::RunningScene;
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::{Collider, Cuboid, Pose, Shape};
use shatter_engine::World;
use shatter_fracture::fragments::ParentMomentum;
use shatter_fracture::prescored::scenes::{
    TABLE_IMPACT_FRAME, WALL_CELLS, WALL_HALF_EXTENTS, cylinder, dartboard, table,
};
use shatter_fracture::prescored::{
    Alignment, Debris, Parent, PrescoredFracture, ShatterSettings, shape_lattice, shatter,
};

/// Threads of the pool.
const THREADS: usize = 2;
/// Time step, s.
const DT: f64 = 1.0 / 30.0;
/// Steps of one cylinder run.
const RUN_STEPS: usize = 60;
/// Small spheres on the table (Su 2009 Fig. 8).
const TABLE_SPHERES: usize = 1000;
/// Frames timed after the table breaks.
const TABLE_STEPS: usize = 60;

fn prescored(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool of two threads");
    let mut group = c.benchmark_group("prescored");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));

    let shape = Shape::Cuboid(Cuboid::try_new(WALL_HALF_EXTENTS).expect("a box"));
    let lattice = shape_lattice(&shape, WALL_CELLS).expect("the wall's lattice");
    let particles = Collider::from_shape(shape, 0.03).expect("a box").particles().to_vec();
    let pattern = dartboard().expect("the pattern");
    let parent = Parent {
        level_set: &lattice,
        particles: &particles,
        pose: Pose::from_position(DVec3::new(0.0, 1.0, 0.0)),
        mass: 2300.0 * 1.2,
        momentum: ParentMomentum::default(),
    };
    let settings = ShatterSettings {
        alignment: Alignment::Overlay,
        min_fragment_volume: 2e-4,
        debris: Debris::Merge,
        particle_spacing: 0.03,
    };
    group.bench_function("event_wall_150x10x100", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let mut world = World::new();
                let start = Instant::now();
                pool.install(|| {
                    let shattered = shatter(&parent, &pattern, DVec3::new(0.3, -0.2, 0.1), -DVec3::Z, &settings)
                        .expect("the wall breaks");
                    for desc in shattered.fragments {
                        world.add_body(desc).expect("a fragment spawns");
                    }
                });
                total += start.elapsed();
            }
            total
        })
    });

    let mut cylinder_run = RunningScene::new(|| cylinder().expect("the cylinder scene").world, RUN_STEPS);
    group.bench_function("cylinder_frame_55x105x55", |b| {
        b.iter_custom(|iterations| cylinder_run.time(iterations, DT, &pool))
    });
    group.finish();

    let mut group = c.benchmark_group("prescored_table");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(60));
    let broken_table = || {
        let mut world = table(TABLE_SPHERES).expect("the table scene").world;
        pool.install(|| {
            for _ in 0..TABLE_IMPACT_FRAME {
                world.step(DT).expect("the scene steps");
            }
        });
        let model = world.fracture_model::<PrescoredFracture>().expect("the model");
        assert_eq!(model.events().len(), 1, "the table has broken");
        world
    };
    // One iteration is one whole run after the break, so the mean covers its heavy first frames
    // (every piece touching its neighbours and the spheres) and the pile's later ones alike.
    group.bench_function("table_frame_after_fracture_1000_spheres", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let mut world = broken_table();
                let start = Instant::now();
                pool.install(|| {
                    for _ in 0..TABLE_STEPS {
                        world.step(DT).expect("the scene steps");
                    }
                });
                total += start.elapsed() / TABLE_STEPS as u32;
            }
            total
        })
    });
    group.finish();
    match peak_resident_memory() {
        Some(bytes) => eprintln!("peak resident memory: {:.0} MiB", bytes as f64 / (1 << 20) as f64),
        None => eprintln!("peak resident memory: not available on this system"),
    }
}

/// The process's peak resident set (VmHWM), bytes; Linux only.
fn peak_resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

criterion_group!(benches, prescored);
criterion_main!(benches);
