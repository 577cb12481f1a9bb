//! Li 2018 Fig. 6: a hollow Stanford bunny, prescored into ten pieces, dropped on the floor; once
//! per energy factor alpha in {0, 0.5, 1, 2} (the paper's values for this scene).
//!
//! Built as the paper builds it: a coarse tet mesh of the bunny (the scan has holes in its base;
//! the generalized winding number still gives it an inside), the interior tets removed, a
//! round-robin flood fill from ten random seed tets, and a breakable fixed joint at every vertex
//! of every face two pieces share (about 300). What to look for: the bunny lands whole at about
//! 0.3 s and comes apart into its ten pieces, which scatter further the larger alpha: their
//! kinetic energy 0.5 s after the first break was 2.1, 2.9, 18.3 and 72.1 J at alpha 0, 0.5, 1, 2
//! when this was written. Writes `out/energized/bunny_alpha_{alpha}.glb`.
//!
//! `cargo run --release --example energized_bunny -- [MESH]` (default
//! `../shared/meshes/stanford-bunny.obj`).

use std::path::Path;

use shatter::collision::TriMesh;
use shatter::energized_run::compare_alphas;
use shatter::fracture::energized::EnergizedSettings;
use shatter::scene_world::SceneWorld;
use shatter::scenes::energized::bunny;

/// Time step, s: one step per 30 Hz frame.
const DT: f64 = 1.0 / 30.0;
/// Steps: 3 s.
const STEPS: usize = 90;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/meshes/stanford-bunny.obj".to_string());
    let mesh = TriMesh::load(Path::new(&path))?;
    let runs = compare_alphas(
        "bunny",
        &[0.0, 0.5, 1.0, 2.0],
        STEPS,
        0.5,
        Path::new("out/energized"),
        |alpha| {
            let scene = bunny(
                EnergizedSettings {
                    alpha,
                    ..Default::default()
                },
                &mesh,
                0.5,
                Vec::new(),
            )?;
            Ok(SceneWorld::from_world(scene.world, DT, STEPS, &[])?)
        },
    )?;
    if let Some(first) = runs.first() {
        println!("{} pieces", first.run.recording.tracks.len() - 1);
    }
    Ok(())
}
