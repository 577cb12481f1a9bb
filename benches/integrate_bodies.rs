//! `integrate_bodies`: the pose update (orientation splitting plus the energy fix) of one million
//! independent, ill-conditioned, fast-spinning bodies at one step per 30 Hz frame, on rayon pools
//! of one and two threads. Throughput is reported in body-updates per second.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shatter::integrators::{IntegrationSettings, integrate_batch};
use shatter::scenes::spinning_bodies;

const BODY_COUNT: usize = 1_000_000;
const DT: f64 = 1.0 / 30.0;

fn integrate_bodies(c: &mut Criterion) {
    let bodies = spinning_bodies(BODY_COUNT, 0x5eed);
    let mut group = c.benchmark_group("integrate_bodies");
    group.throughput(Throughput::Elements(BODY_COUNT as u64));
    group.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool of one or two threads");
        let mut states = bodies.states.clone();
        let settings = IntegrationSettings::default();
        group.bench_with_input(BenchmarkId::new("threads", threads), &threads, |b, _| {
            b.iter(|| {
                pool.install(|| integrate_batch(&mut states, &bodies.masses, &bodies.kinds, DT, &settings))
                    .expect("valid bodies")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, integrate_bodies);
criterion_main!(benches);
