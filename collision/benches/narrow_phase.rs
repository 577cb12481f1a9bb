//! `narrow_phase`: particle-against-level-set queries per second. Sixteen pairs, each a box with
//! about 10,000 surface particles sunk halfway into a level-set ball 64 cells across, collided in
//! parallel on rayon pools of one and two threads; throughput counts particle queries.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::{
    Collider, Cuboid, GridSpec, Pose, Shape, TriMesh, collide, level_set::level_set_from_mesh,
    particles::sample_surface,
};

fn narrow_phase(c: &mut Criterion) {
    let mesh = TriMesh::icosphere(1.0, 5);
    let grid = level_set_from_mesh(&mesh, GridSpec::with_resolution(mesh.bounds().unwrap(), 64, 3).unwrap()).unwrap();
    let ball = Collider::from_level_set(grid, sample_surface(&mesh, 0.1, 1).unwrap()).unwrap();
    let cube = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.6)).unwrap()), 0.0125).unwrap();
    let pairs: Vec<Pose> = (0..16)
        .map(|i| Pose::from_position(DVec3::new(0.9, 0.0, 0.01 * i as f64)))
        .collect();
    let queries = (cube.particles().len() + ball.particles().len()) * pairs.len();
    let mut group = c.benchmark_group("narrow_phase");
    group.throughput(Throughput::Elements(queries as u64));
    group.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        group.bench_with_input(
            BenchmarkId::new("particles_vs_level_set_64", threads),
            &threads,
            |b, _| {
                b.iter(|| {
                    pool.install(|| {
                        pairs
                            .par_iter()
                            .map(|pose| collide(&cube, pose, &ball, &Pose::IDENTITY, 0.0).expect("valid").len())
                            .sum::<usize>()
                    })
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, narrow_phase);
criterion_main!(benches);
