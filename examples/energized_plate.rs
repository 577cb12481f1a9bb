//! Li 2018 Fig. 4: a plate of 5 x 5 cubes glued at the corners of their shared faces, dropped flat
//! from 0.5 m onto a sphere, once per energy factor alpha in {0, 0.5, 1, 1.5}.
//!
//! What to look for: the plate breaks where it lands on the sphere (about 0.3 s) into pieces of
//! one to a few cubes; "given J" is alpha times "stored J"; the kinetic energy of the pieces 0.1 s
//! after the first break grows with alpha (253.1, 263.4, 268.5, 270.7 J at 60 Hz when this was
//! written; the test `energized_plate_fragments_move_faster_the_larger_alpha` checks it). At
//! 30 Hz the pieces stay in contact with the sphere across the 0.1 s and the contacts even the
//! energies out (236.8, 233.9, 235.2, 232.4 J), while the first frame after the break still shows
//! the kicks (138.4, 159.5, 171.6, 182.2 J). Writes `out/energized/plate_alpha_{alpha}.glb`.
//!
//! `cargo run --release --example energized_plate -- [RATE]` (steps per second, default 60, as
//! the test runs it).

use std::path::Path;

use shatter::energized_run::compare_alphas;
use shatter::fracture::energized::EnergizedSettings;
use shatter::scene_world::SceneWorld;
use shatter::scenes::energized::plate;

/// Simulated time, s.
const DURATION: f64 = 3.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rate: f64 = std::env::args().nth(1).map_or(Ok(60.0), |a| a.parse())?;
    let steps = (DURATION * rate).round() as usize;
    compare_alphas(
        "plate",
        &[0.0, 0.5, 1.0, 1.5],
        steps,
        0.1,
        Path::new("out/energized"),
        |alpha| {
            let scene = plate(
                EnergizedSettings {
                    alpha,
                    ..Default::default()
                },
                0.5,
                Vec::new(),
            )?;
            let names = [(scene.sphere, "sphere")];
            Ok(SceneWorld::from_world(scene.world, 1.0 / rate, steps, &names)?)
        },
    )?;
    Ok(())
}
