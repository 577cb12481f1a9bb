//! Su 2009 Fig. 4: one impact-centred fracture pattern (a dart board of rings and spokes) breaks
//! three walls, each hit by a 12 m/s steel ball at a different place (centre, lower left, upper
//! right); a fourth wall, too strong to break, shatters the ball that hits it with the same
//! pattern. Walls are sampled 150 x 10 x 100, the ball 55 across, as in the paper.
//!
//! What to look for: each wall breaks in the step its ball arrives, into small pieces around the
//! point it was hit and large ones far from it, so the three walls break differently from one
//! pattern; the ball breaks on the fourth wall, which stands. The table lists every fracture with
//! its momentum balance (round-off). Writes `out/prescored/walls.glb`.
//!
//! `cargo run --release --example prescored_walls -- [STEPS]` (default 60)

use std::path::Path;

use shatter::prescored_run::run_prescored;
use shatter::scenes::prescored::walls;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let steps: usize = std::env::args().nth(1).map_or(Ok(60), |a| a.parse())?;
    let run = run_prescored("walls", walls()?, steps, Path::new("out/prescored"))?;
    print!("{}", run.report);
    Ok(())
}
