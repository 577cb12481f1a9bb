//! Iterations of the boundary-element stress solve with and without its preconditioner: each
//! mesh is pulled apart by two opposite forces on the ends of its longest axis (along that axis,
//! then obliquely), and solved to 1e-8 without a preconditioner, with block Jacobi over clusters
//! of 32 triangles, and with the restricted additive Schwarz preconditioner (overlap 0.25) over
//! clusters of 16, 32 (the default) and 64. One line per mesh and pull: iterations (of which
//! warming up) and the time of the preparation and of the solve, on a pool of two threads.
//!
//! `cargo run --release --example bem_preconditioner -- [cow] [fandisk] [homer] [spot] [box] [sphere]`
//!
//! Mesh names are files of ../shared/meshes; `box` is a 0.4 x 0.2 x 0.2 m box of 5120 regular
//! triangles and `sphere` an icosphere of 5120. Without arguments: cow, box and sphere.

use std::time::Instant;

use glam::DVec3;
use shatter_collision::TriMesh;
use shatter_collision::io::{read_mesh, weld::weld_exact};
use shatter_fracture::bem::meshes::{Grading, grid_box};
use shatter_fracture::bem::{BemSettings, Elastic, ElasticBody, Loads, Preconditioner};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = ["cow", "box", "sphere"].map(String::from).to_vec();
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let preconditioners = [
        ("none", Preconditioner::None),
        (
            "block Jacobi 32",
            Preconditioner::Schwarz {
                cluster_size: 32,
                overlap: 0.0,
            },
        ),
        (
            "Schwarz 16",
            Preconditioner::Schwarz {
                cluster_size: 16,
                overlap: 0.25,
            },
        ),
        ("Schwarz 32", Preconditioner::default()),
        (
            "Schwarz 64",
            Preconditioner::Schwarz {
                cluster_size: 64,
                overlap: 0.25,
            },
        ),
    ];
    for name in &names {
        let mesh = match name.as_str() {
            "box" => grid_box(DVec3::new(0.2, 0.1, 0.1), 0.0125, Grading::Uniform)?,
            "sphere" => TriMesh::icosphere(1.0, 4),
            file => weld_exact(&read_mesh(format!(
                "{}/../shared/meshes/{file}.obj",
                env!("CARGO_MANIFEST_DIR")
            ))?),
        };
        for (pull, axis) in [("along", DVec3::X), ("oblique", DVec3::new(0.6, 0.8, 0.0))] {
            print!("{name} ({} triangles), {pull}:", mesh.triangles().len());
            for (label, preconditioner) in preconditioners {
                let settings = BemSettings {
                    preconditioner,
                    ..BemSettings::default()
                };
                let (prepare, solve, convergence) = pool
                    .install(|| -> Result<_, Box<dyn std::error::Error + Send + Sync>> {
                        let start = Instant::now();
                        let body = ElasticBody::try_new(mesh.clone(), Elastic::try_new(30.0e9, 0.2)?, settings)?;
                        let prepared = Instant::now();
                        let surface = body.surface();
                        let bounds = surface.mesh().bounds().ok_or("an empty mesh")?;
                        let radius = 0.1 * (bounds.max - bounds.min).x;
                        let mut loads = Loads::new(surface, 2400.0)?;
                        for (end, sign) in [bounds.min.x, bounds.max.x].into_iter().zip([-1.0, 1.0]) {
                            let point = DVec3::new(
                                end,
                                0.5 * (bounds.min.y + bounds.max.y),
                                0.5 * (bounds.min.z + bounds.max.z),
                            );
                            loads.add_force(surface, point, axis * (sign * 1.0e6), radius)?;
                        }
                        let solution = body.solve(&loads)?;
                        Ok((
                            (prepared - start).as_secs_f64(),
                            prepared.elapsed().as_secs_f64(),
                            solution.report().convergence,
                        ))
                    })
                    .map_err(|e| e.to_string())?;
                print!(
                    " | {label}: {} its ({} warming up), {prepare:.2} + {solve:.2} s",
                    convergence.iterations, convergence.warm_up_iterations
                );
            }
            println!();
        }
    }
    Ok(())
}
