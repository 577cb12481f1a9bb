//! Running a prescored-fracture scene (`fracture::prescored::scenes`) and reporting what broke:
//! the examples' shared loop, so each example is the scene and what to look for.

use std::fmt::Write as _;
use std::path::Path;

use crate::export::{self, ExportFormat, Recording};
use crate::fracture::prescored::PrescoredFracture;
use crate::fracture::prescored::scenes::PrescoredScene;
use crate::recorder::{RunSummary, run_and_record};
use crate::scene_world::SceneWorld;

/// Time step of the scenes, s: one step per 30 Hz frame.
pub const FRAME: f64 = 1.0 / 30.0;

/// A finished run.
pub struct PrescoredRun {
    /// Every body's pose at every frame.
    pub recording: Recording,
    /// What the run did.
    pub summary: RunSummary,
    /// One line per fracture event (when, which body, how many fragments, their mass range and
    /// the event's momentum balance), the file written and the time per step.
    pub report: String,
}

/// Runs `scene` for `steps` steps and writes `out/NAME.glb`. Fails on an engine or export error.
pub fn run_prescored(
    name: &str,
    scene: PrescoredScene,
    steps: usize,
    out: &Path,
) -> Result<PrescoredRun, Box<dyn std::error::Error>> {
    let owned = scene.names.clone();
    let names: Vec<(_, &str)> = owned.iter().map(|(id, n)| (*id, n.as_str())).collect();
    let mut built = SceneWorld::from_world(scene.world, FRAME, steps, &names)?;
    let (recording, summary) = run_and_record(&mut built, steps, |_, _, _| {})?;
    let mut report = String::new();
    if let Some(model) = built.world.fracture_model::<PrescoredFracture>() {
        let _ = writeln!(
            report,
            "  time s  body          impulse N s  fragments  lightest kg  heaviest kg  momentum error"
        );
        for event in model.events() {
            let lightest = event.fragment_masses.iter().copied().fold(f64::INFINITY, f64::min);
            let heaviest = event.fragment_masses.iter().copied().fold(0.0, f64::max);
            let linear = (event.momentum_after.linear - event.momentum_before.linear).length()
                / event.momentum_before.linear.length().max(f64::MIN_POSITIVE);
            let _ = writeln!(
                report,
                "  {:6.3}  {:12}  {:11.1}  {:9}  {:11.3}  {:11.1}  {:.1e}",
                event.time,
                owned
                    .iter()
                    .find(|(id, _)| *id == event.parent)
                    .map_or("a fragment", |(_, n)| n.as_str()),
                event.impulse.length(),
                event.fragments.len(),
                lightest,
                heaviest,
                linear
            );
        }
        for failure in model.failures() {
            let _ = writeln!(report, "  failed: {failure}");
        }
    }
    let path = out.join(format!("{name}.glb"));
    let written = export::write(&recording, ExportFormat::Glb, &path)?;
    let _ = writeln!(report, "{written}");
    let _ = writeln!(
        report,
        "{} steps, {:.2} ms per step ({:.0} frames/s), {} bodies at the end",
        summary.steps,
        summary.time_per_step().as_secs_f64() * 1e3,
        1.0 / summary.time_per_step().as_secs_f64().max(f64::MIN_POSITIVE),
        summary.bodies_at_end
    );
    Ok(PrescoredRun {
        recording,
        summary,
        report,
    })
}
