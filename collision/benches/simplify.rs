//! `simplify`: a sphere contoured 128 cells across (about 200k triangles, the slivers marching
//! cubes makes) simplified to an edge of two cells within half a cell, on two threads (the
//! edits are serial; the final self-intersection sweep runs on the pool); throughput counts
//! input triangles.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::simplify::{Simplification, simplify};
use shatter_collision::{Aabb, GridSpec, SdfGrid, marching_cubes::contour};

fn simplify_sphere(c: &mut Criterion) {
    let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 128, 2).expect("a grid");
    let cell = spec.spacing;
    let grid = SdfGrid::from_fn(spec, |p| p.length() - 1.0).expect("finite distances");
    let mesh = contour(&grid).expect("a sphere");
    let settings = Simplification::new(2.0 * cell, 0.5 * cell);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a rayon pool");
    let mut group = c.benchmark_group("simplify");
    group.throughput(Throughput::Elements(mesh.triangles().len() as u64));
    group.sample_size(10);
    group.bench_function("sphere_128", |b| {
        b.iter(|| pool.install(|| simplify(&mesh, &settings).expect("a closed sphere").0.triangles().len()))
    });
    group.finish();
}

criterion_group!(benches, simplify_sphere);
criterion_main!(benches);
