//! Li 2018 Fig. 5: a chain of ten links between two end cubes driven slowly apart, without
//! gravity, until it snaps and recoils; once per energy factor alpha in {0, 0.5, 1, 2} (the
//! paper's values for this scene).
//!
//! What to look for: one joint breaks (the rate limit allows one break of the chain's group per
//! 0.3 s, as in the paper), in pure tension, so the impulse's direction is drawn from the model's
//! seed orthogonal to the chain; at alpha 0 the two halves only fall slack, at larger alpha they
//! recoil and swing sideways: the two links the broken joint held have 0.006, 0.007, 0.009 and
//! 0.011 J of kinetic energy 0.5 s after the break at alpha 0, 0.5, 1, 2 (when this was written).
//! Writes `out/energized/chain_alpha_{alpha}.glb`.
//!
//! `cargo run --release --example energized_chain`

use std::path::Path;

use shatter::energized_run::compare_alphas;
use shatter::fracture::energized::EnergizedSettings;
use shatter::scene_world::SceneWorld;
use shatter::scenes::energized::chain;

/// Time step, s: one step per 30 Hz frame.
const DT: f64 = 1.0 / 30.0;
/// Steps: 4 s.
const STEPS: usize = 120;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    compare_alphas(
        "chain",
        &[0.0, 0.5, 1.0, 2.0],
        STEPS,
        0.5,
        Path::new("out/energized"),
        |alpha| {
            let model = EnergizedSettings {
                alpha,
                group_interval: 0.3,
                seed: 7,
                ..Default::default()
            };
            let scene = chain(model, 10, 0.05, Vec::new())?;
            let names = [(scene.ends[0], "end_left"), (scene.ends[1], "end_right")];
            Ok(SceneWorld::from_world(scene.world, DT, STEPS, &names)?)
        },
    )?;
    Ok(())
}
