//! The multipole mat-vec of the boundary-element solver against direct summation, on `n` points
//! spread evenly over a unit sphere (a Fibonacci lattice) with radial normals and random point
//! forces, on a pool of two threads: one line per run with the build time, the traction mat-vec
//! time, the direct mat-vec time (measured up to `--direct-limit` points, 20000 by default, and
//! extrapolated as n^2 from the largest measured size above it), the relative L-infinity error
//! over 100 sampled targets, and the process's peak memory.
//!
//! `cargo run --release --example bem_fmm_scaling -- 1000 10000 100000 1000000 [--order 10] [--leaf 256] [--separation 2]`
//!
//! Each size runs in the same process, so the peak memory printed after a size is the largest so
//! far: give one size per run to read its own peak.

use std::time::Instant;

use glam::DVec3;
use shatter_fracture::bem::fmm::{Fmm, FmmSettings, Target};
use shatter_fracture::bem::meshes::fibonacci_sphere;
use shatter_fracture::bem::operator::direct_traction_sum;
use shatter_fracture::bem::{Elastic, Kelvin};
use shatter_integrators::SplitMix64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = Vec::new();
    let mut settings = FmmSettings::default();
    let mut direct_limit = 20_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--order" => settings.order = args.next().ok_or("--order needs a number")?.parse()?,
            "--leaf" => settings.leaf_size = args.next().ok_or("--leaf needs a number")?.parse()?,
            "--separation" => settings.separation = args.next().ok_or("--separation needs 1 or 2")?.parse()?,
            "--direct-limit" => direct_limit = args.next().ok_or("--direct-limit needs a number")?.parse()?,
            n => sizes.push(n.parse::<usize>()?),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1000, 10_000];
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let kelvin = Kelvin::new(&Elastic::try_new(20.0e9, 0.25)?);
    println!(
        "order {} leaf size {} separation {}",
        settings.order, settings.leaf_size, settings.separation
    );
    println!("n, tree depth, build s, fmm mat-vec s, direct mat-vec s, relative error, peak MiB");
    let mut last_direct: Option<(usize, f64)> = None;
    for n in sizes {
        let points = fibonacci_sphere(n);
        let mut rng = SplitMix64::new(17);
        let charges: Vec<DVec3> = (0..n).map(|_| rng.unit_vector() * rng.range(0.5, 2.0)).collect();
        let start = Instant::now();
        let fmm = pool.install(|| Fmm::new(kelvin, &points, settings));
        let build = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let fast = pool.install(|| fmm.evaluate(&charges, Target::Traction(&points)));
        let matvec = start.elapsed().as_secs_f64();
        let (direct, measured) = if n <= direct_limit {
            let mut out = vec![DVec3::ZERO; n];
            let start = Instant::now();
            pool.install(|| direct_traction_sum(&kelvin, &points, &points, &charges, &mut out));
            let t = start.elapsed().as_secs_f64();
            last_direct = Some((n, t));
            (t, "")
        } else {
            let (m, t) = last_direct.unwrap_or((1, f64::NAN));
            (t * (n as f64 / m as f64).powi(2), " (extrapolated)")
        };
        let (mut error, mut scale) = (0.0f64, 0.0f64);
        for i in (0..n).step_by((n / 100).max(1)) {
            let mut exact = DVec3::ZERO;
            for (j, (y, q)) in points.iter().zip(&charges).enumerate() {
                if j != i {
                    exact += kelvin.traction_times(points[i] - *y, points[i], *q);
                }
            }
            error = error.max((exact - fast[i]).length());
            scale = scale.max(exact.length());
        }
        println!(
            "{n}, {}, {build:.2}, {matvec:.3}, {direct:.3}{measured}, {:.1e}, {:.0}",
            fmm.tree().depth(),
            error / scale,
            peak_mib()
        );
    }
    Ok(())
}

/// Peak resident memory of the process (VmHWM), MiB; NaN where /proc is not available.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}
