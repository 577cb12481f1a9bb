//! Su 2009 Fig. 7: a wall hit in its lower right corner breaks into small pieces there and large
//! ones far away; about half a second later a second ball hits one of the large pieces, which breaks
//! again: fragments are ordinary bodies that carry the pattern on.
//!
//! What to look for: two fracture events in the table, the second one's body being "a fragment",
//! each with its momentum balance at round-off. Writes `out/prescored/corner.glb`.
//!
//! `cargo run --release --example prescored_corner -- [STEPS]` (default 60)

use std::path::Path;

use shatter::prescored_run::run_prescored;
use shatter::scenes::prescored::corner;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let steps: usize = std::env::args().nth(1).map_or(Ok(60), |a| a.parse())?;
    let run = run_prescored("corner", corner()?, steps, Path::new("out/prescored"))?;
    print!("{}", run.report);
    Ok(())
}
