//! One mesh through the whole geometry pipeline of the collision crate: read and validate it,
//! build its signed-distance level set, contour the level set back to a mesh, sample surface
//! particles, fill it with tetrahedra, and compute its mass properties three ways (exact surface
//! integrals, grid cell sums, tet sums).
//!
//! What to look for: the table's volumes and principal moments agree to a fraction of a percent
//! (the grid and tet figures converge to the exact ones as the resolution grows), the contour and
//! the tet boundary are closed solids, and an open scan such as stanford-bunny is reported open with
//! its defect counts but still gets a sensible inside from the winding number. Writes
//! `out/geometry_pipeline/{contour,tet_boundary,particles}.obj`, which open in Blender, MeshLab or
//! three.js (particles as a point cloud of vertices).
//!
//! `cargo run --release --example geometry_pipeline -- [MESH] [CELLS]`
//! (default `../shared/meshes/spot.obj`, 64 cells along the longest side).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use shatter::collision::{
    BodyMassProperties, GeometryError, GridSpec, LatticeResolution, TriMesh, level_set::level_set_from_mesh,
    marching_cubes::contour, particles::sample_level_set, tetrahedralize, topology,
};

/// Density used for the mass table, kg/m^3 (water): any value gives the same ratios.
const DENSITY: f64 = 1000.0;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "../shared/meshes/spot.obj".to_string());
    let cells = match args.next().map(|a| a.parse::<usize>()) {
        None => 64,
        Some(Ok(n)) if n >= 4 => n,
        Some(_) => {
            eprintln!("usage: geometry_pipeline [MESH] [CELLS >= 4]");
            return ExitCode::FAILURE;
        }
    };
    match run(Path::new(&path), cells) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("geometry_pipeline: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &Path, cells: usize) -> Result<String, GeometryError> {
    let mut out = String::new();
    let clock = Instant::now();
    let mesh = TriMesh::load(path)?;
    let defects = topology::inspect(&mesh);
    let _ = writeln!(
        out,
        "{}: {} vertices, {} triangles, {}",
        path.display(),
        mesh.vertices().len(),
        mesh.triangles().len(),
        if defects.is_solid() {
            format!("closed solid of volume {:.6}", defects.signed_volume)
        } else {
            format!("not a solid ({defects})")
        }
    );
    let bounds = mesh.bounds().ok_or(GeometryError::Empty { what: "mesh" })?;
    let spec = GridSpec::with_resolution(bounds, cells, 3)?;
    let grid = level_set_from_mesh(&mesh, spec)?;
    let _ = writeln!(
        out,
        "level set: {:?} samples, cell {:.4}, built in {:.2} s",
        spec.dims,
        spec.spacing,
        clock.elapsed().as_secs_f64()
    );
    let surface = contour(&grid)?;
    let _ = writeln!(
        out,
        "contour: {} triangles, {}",
        surface.triangles().len(),
        topology::inspect(&surface)
    );
    let particles = sample_level_set(&grid, 2.0 * spec.spacing, 0)?;
    let _ = writeln!(
        out,
        "surface particles: {} at spacing {:.4}",
        particles.len(),
        2.0 * spec.spacing
    );
    let tets = tetrahedralize(&grid, LatticeResolution::CellsAcross(cells / 2))?;
    let _ = writeln!(
        out,
        "tet mesh: {} tets, {} vertices, volume {:.6}",
        tets.tets().len(),
        tets.vertices().len(),
        tets.volume()
    );

    let _ = writeln!(out, "\nmass properties at {DENSITY} kg/m^3:");
    let _ = writeln!(
        out,
        "{:<10} {:>12} {:>12} {:>38}",
        "from", "volume", "mass", "principal moments"
    );
    let mut rows = Vec::new();
    if defects.is_solid() {
        rows.push(("mesh", BodyMassProperties::from_mesh(&mesh, DENSITY)?));
    }
    rows.push(("grid", BodyMassProperties::from_grid(&grid, DENSITY, 2)?));
    rows.push(("tets", BodyMassProperties::from_tet_mesh(&tets, DENSITY)?));
    for (name, body) in rows {
        let moments = body.mass.principal_inertia();
        let _ = writeln!(
            out,
            "{name:<10} {:>12.6} {:>12.4} {:>12.5e} {:>12.5e} {:>12.5e}",
            body.volume,
            body.mass.mass(),
            moments.x,
            moments.y,
            moments.z
        );
    }

    let dir = Path::new("out/geometry_pipeline");
    std::fs::create_dir_all(dir).map_err(|e| GeometryError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    surface.save(dir.join("contour.obj"))?;
    tets.boundary_surface().save(dir.join("tet_boundary.obj"))?;
    write_points(&dir.join("particles.obj"), &particles)?;
    let _ = writeln!(out, "\nwrote {}/{{contour,tet_boundary,particles}}.obj", dir.display());
    Ok(out)
}

/// Particles as an OBJ point cloud (vertices only).
fn write_points(path: &Path, points: &[glam::DVec3]) -> Result<(), GeometryError> {
    let mut text = String::with_capacity(points.len() * 40);
    for p in points {
        let _ = writeln!(text, "v {} {} {}", p.x, p.y, p.z);
    }
    std::fs::write(path, text).map_err(|e| GeometryError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}
