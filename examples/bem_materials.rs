//! Three bodies of different materials dropped on a stone table (Zhu 2015, Fig. 14): a glass
//! slab, a porcelain bar and a sandstone block, each with its own elasticity, Rankine thresholds
//! and crack thickness: `scenes/bem_materials.json`, the same file `shatter run` takes.
//!
//! What to look for: each landing loads its body through the contacts; where the stress beats
//! the body's initiation threshold a crack starts and runs on while it stays above the lower
//! propagation threshold; a crack that reaches across its body splits it. The table printed
//! lists every fracture event. Writes `out/bem/materials.glb` and the crack surfaces, in each
//! body's own frame, to `out/bem/materials_cracks.obj`.
//!
//! `cargo run --release --example bem_materials -- [FRAMES]` (default 45: one and a half
//! seconds).

use std::path::Path;

use shatter::bem_run::run_bem;
use shatter::scene_file::load_scene;
use shatter::scene_world::build_world;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: usize = std::env::args().nth(1).map_or(Ok(45), |a| a.parse())?;
    let scene = load_scene(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/bem_materials.json"))?;
    let mut built = build_world(&scene)?;
    let out = Path::new("out/bem");
    std::fs::create_dir_all(out)?;
    println!("glass, porcelain and sandstone dropped on a table, {frames} frames at 30 Hz");
    print!("{}", run_bem("materials", &mut built, frames, out)?);
    Ok(())
}
