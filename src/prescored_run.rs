//! Running a prescored-fracture scene (`fracture::prescored::scenes`) and reporting what broke:
//! the examples' shared loop, so each example is the scene and what to look for.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::engine::{Stage, StepReport, World};
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
    /// the event's momentum balance), the file written, the time per step, and each stage's time
    /// per step after the first break.
    pub report: String,
}

/// The steps after a scene's first break and each stage's time in them, summed.
#[derive(Default)]
struct AfterBreak {
    broken: bool,
    steps: usize,
    stages: [Duration; Stage::COUNT],
}

impl AfterBreak {
    /// Counts the step just taken (`report`) if the world had broken before it, then notes
    /// whether it has now.
    fn observe(&mut self, world: &World, report: &StepReport) {
        if self.broken {
            self.steps += 1;
            for stage in Stage::ALL {
                self.stages[stage.index()] += report.stage(stage).time;
            }
        }
        self.broken = self.broken
            || world
                .fracture_model::<PrescoredFracture>()
                .is_some_and(|model| !model.events().is_empty());
    }

    /// `after the first break: N steps, ms per step: stage t, ..., sum T`, or nothing before a
    /// break.
    fn line(&self) -> Option<String> {
        let steps = u32::try_from(self.steps).ok().filter(|&n| n > 0)?;
        let ms = |time: Duration| (time / steps).as_secs_f64() * 1e3;
        let stages: Vec<String> = (Stage::ALL.iter())
            .map(|stage| format!("{} {:.2}", stage.name(), ms(self.stages[stage.index()])))
            .collect();
        let sum = ms(self.stages.iter().sum());
        Some(format!(
            "after the first break: {} steps, ms per step: {}, sum {sum:.2}",
            self.steps,
            stages.join(", ")
        ))
    }
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
    let mut after = AfterBreak::default();
    let (recording, summary) = run_and_record(&mut built, steps, |_, world, report| after.observe(world, report))?;
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
    if let Some(line) = after.line() {
        let _ = writeln!(report, "{line}");
    }
    Ok(PrescoredRun {
        recording,
        summary,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prescored_run_after_break_line_gives_each_stage_per_step() {
        let mut after = AfterBreak::default();
        assert!(after.line().is_none(), "nothing before a break");
        after.steps = 4;
        after.stages[Stage::Collide.index()] = Duration::from_millis(10);
        after.stages[Stage::SolveConstraints.index()] = Duration::from_millis(30);
        let line = after.line().expect("a line after a break");
        assert!(
            line.starts_with("after the first break: 4 steps")
                && line.contains("collide 2.50,")
                && line.contains("solve_constraints 7.50,")
                && line.ends_with("sum 10.00"),
            "{line}"
        );
    }
}
