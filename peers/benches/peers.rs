//! `peers`: every benchmark scene of shatter's scene library at each of its time steps, sleeping
//! off (`awake`) and each engine's default sleeping (`sleeping`), stepped through
//! [`shatter_peers::HORIZON`] of simulated time in shatter and in rapier3d. Benchmarks are named
//! `SCENE/dtHZ/awake|sleeping/ENGINE` (`pile_1000/dt30/awake/shatter`); throughput is in steps per
//! second. Each run starts from a fresh copy of the scene, built outside the timing. shatter steps
//! in a rayon pool of two threads, rapier3d on one (see the crate docs for both engines' settings).
//!
//! One run of a scene takes seconds, so each benchmark takes ten samples of one run each (after
//! one warm-up run): `cargo bench -p shatter-peers`, or `-- pile_1000/dt30` for some of them.

use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use shatter_peers::{Case, RapierWorld, SHATTER_THREADS, ShatterWorld};

fn peers(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(SHATTER_THREADS)
        .build()
        .expect("a rayon pool of two threads");
    for case in Case::all() {
        let steps = case.steps();
        let mut group = c.benchmark_group(case.label());
        group
            .throughput(Throughput::Elements(steps as u64))
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(100));
        let descs = case.scene.descs();
        group.bench_function("shatter", |b| {
            b.iter_batched(
                || ShatterWorld::from_descs(descs.clone(), &case),
                |mut world| {
                    pool.install(|| {
                        for _ in 0..steps {
                            world.step();
                        }
                    });
                    world
                },
                BatchSize::PerIteration,
            )
        });
        let rapier = RapierWorld::new(&case);
        group.bench_function("rapier", |b| {
            b.iter_batched(
                || rapier.clone(),
                |mut world| {
                    for _ in 0..steps {
                        world.step();
                    }
                    world
                },
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, peers);
criterion_main!(benches);
