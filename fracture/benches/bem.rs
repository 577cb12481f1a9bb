//! `bem`: the boundary-element solver's costs on a rayon pool of two threads.
//!
//! - `bem_matvec/{direct,fmm,fmm_1e-6}/N`: one traction mat-vec (every point a source and a
//!   target) on N points spread evenly over a unit sphere, by direct summation (up to 2e4
//!   points: beyond that one mat-vec takes minutes) and by the multipole method at default
//!   settings (1e-5) and at the 1e-6 ones (the operators, built once per material, are built
//!   outside the timing; the tree is inside, as a solve on a new mesh pays for it). 1e6 points
//!   take about half a minute per sample: `cargo bench -p shatter-fracture --bench bem -- fmm`
//!   runs the multipole sizes alone, and the scaling example prints peak memory per size.
//! - `bem_solve/{spot,fandisk}`: preparing the body (near-field quadrature, multipole tree) and
//!   solving a pull on the two ends of the longest axis to 1e-8 relative residual, on
//!   ../shared/meshes/spot.obj (5856 triangles) and fandisk.obj (12946).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::DVec3;
use shatter_collision::io::{read_mesh, weld::weld_exact};
use shatter_fracture::bem::fmm::{Fmm, FmmSettings, Target};
use shatter_fracture::bem::meshes::fibonacci_sphere;
use shatter_fracture::bem::operator::direct_traction_sum;
use shatter_fracture::bem::{BemSettings, Elastic, ElasticBody, Kelvin, Loads};
use shatter_integrators::SplitMix64;

/// Threads of the pool.
const THREADS: usize = 2;

fn bem(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build()
        .expect("a rayon pool of two threads");
    let kelvin = Kelvin::new(&Elastic::try_new(20.0e9, 0.25).expect("a material"));
    let mut group = c.benchmark_group("bem_matvec");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    // Build the operators once, outside any timing.
    pool.install(|| Fmm::new(kelvin, &fibonacci_sphere(100), FmmSettings::default()));
    pool.install(|| Fmm::new(kelvin, &fibonacci_sphere(100), FmmSettings::for_accuracy(1e-6)));
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let points = fibonacci_sphere(n);
        let mut rng = SplitMix64::new(17);
        let charges: Vec<DVec3> = (0..n).map(|_| rng.unit_vector()).collect();
        if n <= 20_000 {
            group.bench_with_input(BenchmarkId::new("direct", n), &n, |b, _| {
                let mut out = vec![DVec3::ZERO; n];
                b.iter(|| pool.install(|| direct_traction_sum(&kelvin, &points, &points, &charges, &mut out)))
            });
        }
        group.bench_with_input(BenchmarkId::new("fmm", n), &n, |b, _| {
            b.iter(|| {
                pool.install(|| {
                    let fmm = Fmm::new(kelvin, &points, FmmSettings::default());
                    fmm.evaluate(&charges, Target::Traction(&points))
                })
            })
        });
        group.bench_with_input(BenchmarkId::new("fmm_1e-6", n), &n, |b, _| {
            b.iter(|| {
                pool.install(|| {
                    let fmm = Fmm::new(kelvin, &points, FmmSettings::for_accuracy(1e-6));
                    fmm.evaluate(&charges, Target::Traction(&points))
                })
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("bem_solve");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    for name in ["spot", "fandisk"] {
        let mesh = weld_exact(
            &read_mesh(format!("{}/../../shared/meshes/{name}.obj", env!("CARGO_MANIFEST_DIR")))
                .expect("the shared meshes"),
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                pool.install(|| {
                    let body = ElasticBody::try_new(
                        mesh.clone(),
                        Elastic::try_new(30.0e9, 0.2).expect("a material"),
                        BemSettings::default(),
                    )
                    .expect("a closed mesh");
                    let surface = body.surface();
                    let bounds = surface.mesh().bounds().expect("not empty");
                    let axis = DVec3::X;
                    let radius = 0.1 * (bounds.max - bounds.min).x;
                    let mut loads = Loads::new(surface, 2400.0).expect("a density");
                    let ends = [bounds.min.x, bounds.max.x];
                    for (end, sign) in ends.into_iter().zip([-1.0, 1.0]) {
                        let point = DVec3::new(
                            end,
                            0.5 * (bounds.min.y + bounds.max.y),
                            0.5 * (bounds.min.z + bounds.max.z),
                        );
                        loads
                            .add_force(surface, point, axis * (sign * 1.0e6), radius)
                            .expect("a force");
                    }
                    body.solve(&loads)
                        .expect("the solve converges")
                        .report()
                        .convergence
                        .iterations
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bem);
criterion_main!(benches);
