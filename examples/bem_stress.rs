//! Boundary-element stress on a closed mesh (Zhu 2015 sections 4-5): two patches at the ends of
//! the mesh's longest axis are pulled apart by equal and opposite forces, the surface stress is
//! solved, and the surface is written coloured by the largest principal stress, so a person can
//! see where it would crack (blue: compression or none, through white, to red: the most tension).
//!
//! What to look for: the iteration count (well under 50), the resultant force and the rigid
//! acceleration the inertia carried (zero: the loads balance), and where the peak tension sits.
//! Writes `out/bem/<mesh name>_stress.ply` (vertex colours; opens in Blender, MeshLab, Houdini).
//!
//! `cargo run --release --example bem_stress -- [MESH] [FORCE_N]` (defaults
//! `../shared/meshes/spot.obj` and 1e6 N). The mesh is welded by position first (spot.obj repeats
//! vertices along its texture seams).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use glam::DVec3;
use shatter_collision::io::{read_mesh, weld::weld_exact};
use shatter_fracture::bem::{BemSettings, Elastic, ElasticBody, Loads, principal_stress};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "../shared/meshes/spot.obj".to_string());
    let force: f64 = args.next().map_or(Ok(1.0e6), |a| a.parse())?;
    let mesh = weld_exact(&read_mesh(&path)?);
    let start = Instant::now();
    let body = ElasticBody::try_new(mesh, Elastic::try_new(30.0e9, 0.2)?, BemSettings::default())?;
    let surface = body.surface();
    println!(
        "{path}: {} triangles, volume {:.4} m^3, far field by {} ({:.2} s to prepare)",
        surface.len(),
        surface.volume(),
        if body.operator().uses_multipole() {
            "multipole"
        } else {
            "direct sums"
        },
        start.elapsed().as_secs_f64()
    );
    // The two ends of the longest axis of the bounding box, a patch of a tenth of its length each.
    let bounds = surface.mesh().bounds().ok_or("empty mesh")?;
    let size = bounds.max - bounds.min;
    let axis = if size.x >= size.y && size.x >= size.z {
        DVec3::X
    } else if size.y >= size.z {
        DVec3::Y
    } else {
        DVec3::Z
    };
    let extreme = |sign: f64| {
        surface
            .centroids()
            .iter()
            .copied()
            .max_by(|a, b| (a.dot(axis) * sign).total_cmp(&(b.dot(axis) * sign)))
            .unwrap_or(DVec3::ZERO)
    };
    let radius = 0.1 * size.dot(axis);
    let mut loads = Loads::new(surface, 2400.0)?;
    loads.add_force(surface, extreme(1.0), axis * force, radius)?;
    loads.add_force(surface, extreme(-1.0), -axis * force, radius)?;
    let start = Instant::now();
    let solution = body.solve(&loads)?;
    let report = solution.report();
    println!(
        "solved in {:.2} s: {} iterations, relative residual {:.1e}; resultant {:.2e} N, rigid acceleration {:.2e} m/s^2",
        start.elapsed().as_secs_f64(),
        report.convergence.iterations,
        report.convergence.relative_residual,
        report.resultant_force.length(),
        report.acceleration.length()
    );
    let start = Instant::now();
    let stresses = solution.vertex_stresses();
    let largest: Vec<f64> = stresses
        .iter()
        .map(|s| principal_stress(*s).map(|p| p.values[0]))
        .collect::<Result<_, _>>()?;
    let peak = largest.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let at = largest.iter().position(|v| *v == peak).unwrap_or(0);
    println!(
        "vertex stresses in {:.2} s; peak largest principal stress {:.3e} Pa at {:.3?}",
        start.elapsed().as_secs_f64(),
        peak,
        surface.mesh().vertices()[at]
    );
    let name = Path::new(&path).file_stem().and_then(|s| s.to_str()).unwrap_or("mesh");
    let out = Path::new("out/bem").join(format!("{name}_stress.ply"));
    write_coloured_ply(
        &out,
        surface.mesh().vertices(),
        surface.mesh().triangles(),
        &largest,
        peak,
    )?;
    println!("wrote {}", out.display());
    Ok(())
}

/// An ASCII PLY of the mesh with a colour per vertex: `value / peak` from 0 (blue) through 0.5
/// (white) to 1 (red); negative values are blue.
fn write_coloured_ply(
    path: &Path,
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    values: &[f64],
    peak: f64,
) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "ply\nformat ascii 1.0\nelement vertex {}", vertices.len())?;
    writeln!(f, "property float x\nproperty float y\nproperty float z")?;
    writeln!(f, "property uchar red\nproperty uchar green\nproperty uchar blue")?;
    writeln!(
        f,
        "element face {}\nproperty list uchar int vertex_indices\nend_header",
        triangles.len()
    )?;
    for (v, value) in vertices.iter().zip(values) {
        let t = if peak > 0.0 {
            (value / peak).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (r, g, b) = if t < 0.5 {
            let s = t * 2.0;
            (s, s, 1.0)
        } else {
            let s = (1.0 - t) * 2.0;
            (1.0, s, s)
        };
        let byte = |c: f64| (c * 255.0).round() as u8;
        writeln!(f, "{} {} {} {} {} {}", v.x, v.y, v.z, byte(r), byte(g), byte(b))?;
    }
    for t in triangles {
        writeln!(f, "3 {} {} {}", t[0], t[1], t[2])?;
    }
    f.flush()
}
