//! Su 2009 Fig. 8: small spheres (1000 by default) fall onto a concrete table top on four legs;
//! once they have landed a 2 t steel sphere falls onto the top and shatters it into thousands of
//! pieces, which fall with the spheres to the ground.
//!
//! What to look for: one fracture event in the table, at about 1.6 s, with thousands of
//! fragments and its momentum balance at round-off; the time per step, and each stage's time per
//! step after the break (what the `prescored_table` bench measures as a whole).
//! Writes `out/prescored/table.glb`.
//!
//! `cargo run --release --example prescored_table -- [SPHERES] [STEPS]` (defaults 1000 and 75)

use std::path::Path;

use shatter::prescored_run::run_prescored;
use shatter::scenes::prescored::table;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let spheres: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let steps: usize = args.next().map_or(Ok(75), |a| a.parse())?;
    let run = run_prescored("table", table(spheres)?, steps, Path::new("out/prescored"))?;
    print!("{}", run.report);
    Ok(())
}
