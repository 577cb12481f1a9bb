//! A thin-walled bowl with precomputed fracture modes (Sellan 2023), hit on its rim by a steel
//! ball.
//!
//! What to look for: the shell breaks into curved shards along cuts that run across the wall,
//! the way thin ceramics break, not into blocks. Writes `out/modes/bowl.glb`.
//!
//! `cargo run --release --example modes_bowl -- [MODES] [TET_CELLS]` (default 8 modes, 16
//! lattice cubes across the bowl).

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use shatter::collision::{GridSpec, LatticeResolution, SdfGrid, tetrahedralize};
use shatter::fracture::fragments::FragmentResolution;
use shatter::fracture::modes::ModesShape;
use shatter::modes_run::{ModesImpact, modes_runtime, run_modes_impact};

/// Outer radius of the bowl's spherical wall and its thickness, m.
const RADIUS: f64 = 0.3;
const THICKNESS: f64 = 0.05;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let modes: usize = args.next().map_or(Ok(8), |a| a.parse())?;
    let tet_cells: usize = args.next().map_or(Ok(16), |a| a.parse())?;
    // The lower half of a spherical shell: inside where both the shell and the half-space
    // y < 0 are (the maximum of their signed distances, exact enough near the surface).
    let spacing = THICKNESS / 6.0;
    let cells = (2.4 * RADIUS / spacing).ceil() as usize;
    let origin = DVec3::new(-1.2 * RADIUS, -1.2 * RADIUS, -1.2 * RADIUS);
    let spec = GridSpec::try_new(origin, spacing, [cells, cells / 2 + 4, cells])?;
    let middle = RADIUS - THICKNESS / 2.0;
    let grid = SdfGrid::from_fn(spec, move |p: DVec3| {
        ((p.length() - middle).abs() - THICKNESS / 2.0).max(p.y)
    })?;
    let tets = tetrahedralize(&grid, LatticeResolution::CellsAcross(tet_cells))?;
    let (projector, summary) = modes_runtime("bowl", &tets, modes)?;
    println!("{summary}");
    let resolution = FragmentResolution {
        cells: 48,
        particle_spacing: THICKNESS / 2.0,
    };
    let shape = Arc::new(ModesShape::new(tets, projector, 2400.0, resolution)?);
    // The rim's highest point on +x.
    let target = shape
        .mesh
        .vertices()
        .iter()
        .copied()
        .filter(|v| v.x > 0.5 * RADIUS)
        .max_by(|a, b| a.y.total_cmp(&b.y))
        .ok_or("the bowl has a rim")?;
    let ball_radius = 0.05;
    let ball_speed = 10.0;
    let ball_momentum =
        7800.0 * 4.0 / 3.0 * std::f64::consts::PI * ball_radius * ball_radius * ball_radius * ball_speed;
    let impact = ModesImpact {
        name: "bowl".into(),
        shape,
        orientation: DQuat::IDENTITY,
        target,
        ball_radius,
        ball_speed,
        threshold: 0.1 * ball_momentum,
        toughness: 0.3 * ball_momentum,
    };
    let out = Path::new("out/modes");
    std::fs::create_dir_all(out)?;
    print!("{}", run_modes_impact(&impact, 45, out)?);
    Ok(())
}
