//! `modes`: the fracture-modes method's costs on a rayon pool of two threads, on spot
//! (../shared/meshes/spot.obj) filled with tets at a 64-cell level set.
//!
//! - `modes_precompute/{d1_10k,d3_10k,d1_20k}`: computing the first non-trivial modes after
//!   the rigid ones (two scalar modes after one, or two vector modes after three) on 10,937 tets
//!   (18 lattice cubes across) and 22,424 (23 across: the first lattice over 20k tets; 22 across
//!   gives 19,267), from the Laplacian guesses to the last subproblem. Criterion's "time" is the
//!   whole computation: half of it is the time per mode (the rigid modes cost nothing but the
//!   shared setup, the guesses and one factorization, about 0.1 s at 10k tets, counted in).
//! - `modes_precompute/{d1_10k,d3_10k,d1_20k}_ten_modes`: the same with the default ten modes
//!   (nine non-trivial scalar modes, or seven vector ones): later modes start from guesses
//!   farther from their result and cost more than the first two.
//! - `modes_impact/d1_10k_20_modes`: one impact projected onto 20 modes and the fragments
//!   extracted (the atomic pieces' labels), on the 10k mesh. The modes are computed once outside
//!   the timing (a few minutes).
//!
//! `cargo bench -p shatter-fracture --bench modes -- impact` runs the projection alone.

use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::{TetMesh, TriMesh};
use shatter_fracture::modes::{
    Dimension, FractureModes, Impact, ImpactProjector, ModeSettings, ProjectionSettings, compute_modes, solid_tets,
};

/// Threads of the pool.
const THREADS: usize = 2;

fn spot_tets(tet_cells: usize) -> TetMesh {
    let surface = TriMesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/meshes/spot.obj"))
        .expect("spot.obj in ../shared/meshes");
    solid_tets(&surface, 64, tet_cells).expect("spot fills with tets")
}

fn modes_of(mesh: &TetMesh, modes: usize, dimension: Dimension) -> FractureModes {
    let settings = ModeSettings {
        modes,
        dimension,
        ..ModeSettings::default()
    };
    compute_modes(mesh, &settings, None, |_| ()).expect("modes")
}

fn modes(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool");
    let small = spot_tets(18);
    let large = spot_tets(23);
    let mut group = c.benchmark_group("modes_precompute");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    for (name, mesh, count, dimension) in [
        ("d1_10k", &small, 3, Dimension::Scalar),
        ("d3_10k", &small, 5, Dimension::Vector),
        ("d1_20k", &large, 3, Dimension::Scalar),
        ("d1_10k_ten_modes", &small, 10, Dimension::Scalar),
        ("d3_10k_ten_modes", &small, 10, Dimension::Vector),
        ("d1_20k_ten_modes", &large, 10, Dimension::Scalar),
    ] {
        group.bench_function(name, |b| b.iter(|| pool.install(|| modes_of(mesh, count, dimension))));
    }
    group.finish();
    let mut group = c.benchmark_group("modes_impact");
    let computed = pool.install(|| modes_of(&small, 20, Dimension::Scalar));
    let projector = ImpactProjector::new(&small, &computed, &ProjectionSettings::default()).expect("a projector");
    let bounds = small.bounds();
    let impact = Impact {
        point: DVec3::new(bounds.center().x, bounds.max.y, bounds.center().z),
        direction: DVec3::NEG_Y,
        magnitude: 1.0,
    };
    group.bench_function("d1_10k_20_modes", |b| {
        b.iter(|| projector.fragments(&impact, 0.3).expect("fragments"))
    });
    group.finish();
}

criterion_group!(benches, modes);
criterion_main!(benches);
