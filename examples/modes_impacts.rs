//! Sellan 2023's runtime: spot and fandisk with precomputed fracture modes, each hit twice, at
//! different places, by a steel ball.
//!
//! What to look for: the same shape breaks differently depending on where it is hit, a fifth of
//! the way in from one end of its long side or from the other: different fragment sets, more
//! of them near the impact. The modes are computed once
//! per shape (the offline half, tens of seconds); each impact is then one projection. Writes
//! `out/modes/spot_a.glb`, `spot_b.glb`, `fandisk_a.glb` and `fandisk_b.glb`.
//!
//! `cargo run --release --example modes_impacts -- [MODES] [TET_CELLS]` (default 8 modes, 12
//! lattice cubes along each shape's longest side, about 3,300 tets).

use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};
use shatter::collision::TriMesh;
use shatter::fracture::fragments::FragmentResolution;
use shatter::fracture::modes::ModesShape;
use shatter::modes_precompute::{TetResolution, shape_tets};
use shatter::modes_run::{ModesImpact, modes_runtime, run_modes_impact};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let modes: usize = args.next().map_or(Ok(8), |a| a.parse())?;
    let tet_cells: usize = args.next().map_or(Ok(12), |a| a.parse())?;
    let out = Path::new("out/modes");
    std::fs::create_dir_all(out)?;
    for (name, file) in [("spot", "spot.obj"), ("fandisk", "fandisk.obj")] {
        let surface = TriMesh::load(Path::new("../shared/meshes").join(file))?;
        let tets = shape_tets(
            &surface,
            TetResolution {
                tet_cells,
                ..TetResolution::default()
            },
        )?;
        let (projector, summary) = modes_runtime(name, &tets, modes)?;
        println!("{summary}");
        let bounds = tets.bounds();
        let size = bounds.size();
        let resolution = FragmentResolution {
            cells: 40,
            particle_spacing: size.max_element() / 40.0,
        };
        let shape = Arc::new(ModesShape::new(tets, projector, 1000.0, resolution)?);
        // The top of the shape a quarter of the way in from either end of its longest
        // horizontal side.
        let along = if size.x >= size.z { DVec3::X } else { DVec3::Z };
        for (label, fraction) in [("a", 0.2), ("b", 0.8)] {
            let at = bounds.min.dot(along) + fraction * size.dot(along);
            let target = shape
                .mesh
                .vertices()
                .iter()
                .filter(|v| (v.dot(along) - at).abs() < 0.1 * size.dot(along))
                .copied()
                .max_by(|a, b| a.y.total_cmp(&b.y))
                .ok_or("no vertex near the target")?;
            let ball_radius = 0.08 * size.max_element();
            let ball_speed = 12.0;
            let ball_momentum = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * ball_radius.powi(3) * ball_speed;
            let impact = ModesImpact {
                name: format!("{name}_{label}"),
                shape: shape.clone(),
                orientation: DQuat::IDENTITY,
                target,
                ball_radius,
                ball_speed,
                threshold: 0.1 * ball_momentum,
                // A hit of the ball's momentum separates pieces whose projected jump is at
                // least half of it: a few fragments, not every atomic piece.
                toughness: 0.5 * ball_momentum,
            };
            print!("{}", run_modes_impact(&impact, 45, out)?);
        }
    }
    Ok(())
}
