//! `marching_cubes`: contouring a sphere level set 128 cells across (exact distance, two cells of
//! padding) into a closed mesh, on rayon pools of one and two threads; throughput counts output
//! triangles.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::{Aabb, GridSpec, SdfGrid, marching_cubes::contour};

fn marching_cubes(c: &mut Criterion) {
    let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 128, 2).expect("a grid");
    let grid = SdfGrid::from_fn(spec, |p| p.length() - 1.0).expect("finite distances");
    let triangles = contour(&grid).expect("a sphere").triangles().len();
    let mut group = c.benchmark_group("marching_cubes");
    group.throughput(Throughput::Elements(triangles as u64));
    group.sample_size(20);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        group.bench_with_input(BenchmarkId::new("sphere_128", threads), &threads, |b, _| {
            b.iter(|| pool.install(|| contour(&grid).expect("a sphere").triangles().len()))
        });
    }
    group.finish();
}

criterion_group!(benches, marching_cubes);
criterion_main!(benches);
