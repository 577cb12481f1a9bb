//! Su 2009 Fig. 5: a concrete cylinder (lattice 55 x 105 x 55) shattered into about 25 pieces by
//! a steel ball at 10 m/s, with an impact-centred pattern of wedges in every direction.
//!
//! What to look for: the cylinder breaks in the step the ball reaches it; pieces near the impact
//! are small and fly with the ball, the far side breaks into a few large ones that fall. The
//! paper ran this at 22 frames/s; the time per step printed here is ours (the criterion bench
//! `prescored` measures it properly). Writes `out/prescored/cylinder.glb`.
//!
//! `cargo run --release --example prescored_cylinder -- [STEPS]` (default 60)

use std::path::Path;

use shatter::prescored_run::run_prescored;
use shatter::scenes::prescored::cylinder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let steps: usize = std::env::args().nth(1).map_or(Ok(60), |a| a.parse())?;
    let run = run_prescored("cylinder", cylinder()?, steps, Path::new("out/prescored"))?;
    print!("{}", run.report);
    Ok(())
}
