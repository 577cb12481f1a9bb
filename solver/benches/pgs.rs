//! `pgs`: constraint rows solved per second. A stack of 84 unit cubes on the ground, each resting on
//! the one below at its four bottom corners: 336 contacts, 1008 contact rows (normal + two friction
//! rows each, energy-clamped), stepped as a resting stack at 60 Hz: each iteration adds one step of
//! gravity to the velocities and solves with 10 sweeps, warm-started from the previous step's
//! impulses. Throughput counts row updates (rows x sweeps); divide by 10 for rows per second of
//! whole solves.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shatter_solver::{SolverSettings, solve};

fn pgs(c: &mut Criterion) {
    let dt = 1.0 / 60.0;
    let (mut bodies, mut rows) = common::stack(84, 0.5, 0.5, dt);
    let settings = SolverSettings {
        iterations: 10,
        tolerance: 0.0,
        ..SolverSettings::default()
    };
    let mut group = c.benchmark_group("pgs");
    group.throughput(Throughput::Elements((rows.len() * settings.iterations) as u64));
    group.bench_function(format!("resting_stack_{}_rows_10_sweeps", rows.len()), |b| {
        b.iter(|| {
            for body in &mut bodies {
                body.linear_velocity += common::GRAVITY * dt;
            }
            solve(&mut bodies, &mut rows, dt, &settings).expect("a valid stack")
        })
    });
    group.finish();
}

criterion_group!(benches, pgs);
criterion_main!(benches);
