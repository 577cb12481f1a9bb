//! `energized`: milliseconds per step of Li 2018's hollow bunny (ten pieces, about 300 glue joints,
//! dropped on the floor) and plate (25 cubes, 160 glue joints, dropped on a sphere) at
//! dt = 1/60 s on a rayon pool of two threads, alpha = 1.
//!
//! Each measured step belongs to one run of the scene through its fall, its impact and the breaks
//! that follow (the first 90 steps, 1.5 s); a run that reaches its end is rebuilt outside the
//! timing, and the run goes on across criterion's samples, so the mean covers the whole story,
//! glued and broken. Criterion's "time" is the mean time of one step.

use std::path::Path;
use std::time::Duration;

mod common;

use common::RunningScene;
use criterion::{Criterion, criterion_group, criterion_main};
use shatter_collision::TriMesh;
use shatter_fracture::energized::EnergizedSettings;
use shatter_fracture::energized::scenes::{bunny, plate};

/// Time step, s.
const DT: f64 = 1.0 / 60.0;
/// Steps of one run: 1.5 s, the fall, the impact and the breaks.
const RUN_STEPS: usize = 90;
/// Threads of the pool the steps run on.
const THREADS: usize = 2;

fn energized(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool of two threads");
    let model = EnergizedSettings::default();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/meshes/stanford-bunny.obj");
    let mesh = TriMesh::load(&path).expect("the Stanford bunny in ../shared/meshes");
    let mut group = c.benchmark_group("energized");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    let mut bunny_run = RunningScene::new(
        || bunny(model, &mesh, 0.5, Vec::new()).expect("the bunny scene").world,
        RUN_STEPS,
    );
    group.bench_function("bunny_step", |b| {
        b.iter_custom(|iterations| bunny_run.time(iterations, DT, &pool))
    });
    let mut plate_run = RunningScene::new(
        || plate(model, 0.5, Vec::new()).expect("the plate scene").world,
        RUN_STEPS,
    );
    group.bench_function("plate_step", |b| {
        b.iter_custom(|iterations| plate_run.time(iterations, DT, &pool))
    });
    group.finish();
}

criterion_group!(benches, energized);
criterion_main!(benches);
