//! Nine bricks dropped from 1.5 m at different angles onto the ground, each an SPH particle
//! solid (Chen 2014, Fig. 8): `scenes/sph_bricks.json`, the same file `shatter run` takes.
//!
//! What to look for: bricks landing on an edge or a corner crack across, near where they
//! land; bricks landing flat mostly survive; pieces cracked off can crack again on the next
//! bounce. Writes `out/sph/bricks.glb`.
//!
//! `cargo run --release --example sph_bricks -- [FRAMES]` (default 60: two seconds).

use std::path::Path;

use shatter::scene_file::load_scene;
use shatter::scene_world::build_world;
use shatter::sph_run::run_sph;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let frames: usize = std::env::args().nth(1).map_or(Ok(60), |a| a.parse())?;
    let scene = load_scene(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/sph_bricks.json"))?;
    let mut built = build_world(&scene)?;
    let out = Path::new("out/sph");
    std::fs::create_dir_all(out)?;
    println!("nine bricks, {frames} frames at 30 Hz");
    print!("{}", run_sph("bricks", &mut built, frames, out)?);
    Ok(())
}
