//! `level_set`: building the signed-distance level set of the Stanford bunny (69,451 triangles,
//! an open scan, so signs come from the generalized winding number) on a grid with 128 cells
//! along its longest side plus 3 cells of padding (135 x 134 x 107 samples), on rayon pools of one
//! and two threads; throughput counts grid samples.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shatter_collision::{GridSpec, TriMesh, level_set::level_set_from_mesh};

fn level_set(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/meshes/stanford-bunny.obj");
    let mesh = TriMesh::load(path).expect("the bunny loads");
    let bounds = mesh.bounds().expect("the bunny has triangles");
    let spec = GridSpec::with_resolution(bounds, 128, 3).expect("a valid grid");
    let mut group = c.benchmark_group("level_set");
    group.throughput(Throughput::Elements(spec.sample_count() as u64));
    group.sample_size(10);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool");
        group.bench_with_input(BenchmarkId::new("level_set_bunny_128", threads), &threads, |b, _| {
            b.iter(|| pool.install(|| level_set_from_mesh(&mesh, spec).expect("a level set")))
        });
    }
    group.finish();
}

criterion_group!(benches, level_set);
criterion_main!(benches);
