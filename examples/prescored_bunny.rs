//! Su 2009 Fig. 6: the Stanford bunny (lattice 70 x 60 x 45) shattered into about 35 pieces by a
//! steel ball at 10 m/s.
//!
//! What to look for: the bunny breaks where the ball hits its flank; the ears and the far side
//! come off as larger pieces. Writes `out/prescored/bunny.glb`.
//!
//! `cargo run --release --example prescored_bunny -- [MESH] [STEPS]` (default
//! ../shared/meshes/stanford-bunny.obj, 60 steps)

use std::path::Path;

use shatter::collision::TriMesh;
use shatter::collision::io::read_mesh;
use shatter::prescored_run::run_prescored;
use shatter::scenes::prescored::bunny;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "../shared/meshes/stanford-bunny.obj".into());
    let steps: usize = args.next().map_or(Ok(60), |a| a.parse())?;
    let mesh: TriMesh = read_mesh(&path)?;
    let run = run_prescored("bunny", bunny(&mesh)?, steps, Path::new("out/prescored"))?;
    print!("{}", run.report);
    Ok(())
}
