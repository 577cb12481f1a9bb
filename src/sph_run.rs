//! Running a world with SPH-fractured bodies (`fracture::sph`) and reporting what cracked: the
//! examples' shared loop, so each example is its scene and what to look for.

use std::fmt::Write as _;
use std::path::Path;

use crate::export::{self, ExportFormat};
use crate::fracture::sph::SphFracture;
use crate::recorder::run_and_record;
use crate::scene_world::SceneWorld;

/// Runs `built` for `steps` steps, writes `out/NAME.glb`, and reports every event that broke a
/// body (when, which body, into how many pieces, links cut and kept cut, particles split, the
/// momentum balance), the totals, the file written and the time per step. Fails on an engine
/// or export error.
pub fn run_sph(
    name: &str,
    built: &mut SceneWorld,
    steps: usize,
    out: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let (recording, summary) = run_and_record(built, steps, |_, _, _| {})?;
    let mut report = String::new();
    let model = built
        .world
        .fracture_model::<SphFracture>()
        .ok_or("the SPH model is registered")?;
    let _ = writeln!(
        report,
        "  time s  body        particles  pieces  links cut  kept cut  split  event ms  momentum error"
    );
    let mut broken = 0;
    for event in model.events().iter().filter(|e| e.pieces > 1) {
        broken += 1;
        let error = (event.momentum_after.linear - event.momentum_before.linear).length()
            / event.momentum_before.linear.length().max(f64::MIN_POSITIVE);
        let body = built
            .bodies
            .iter()
            .find(|b| b.id == event.body)
            .map_or("a fragment", |b| b.name.as_str());
        let _ = writeln!(
            report,
            "  {:6.3}  {:10}  {:9}  {:6}  {:9}  {:8}  {:5}  {:8.1}  {:.1e}",
            event.time,
            body,
            event.particles,
            event.pieces,
            event.report.links_cut(),
            event.report.links_kept_cut(),
            event.report.particles_split(),
            event.seconds * 1e3,
            error
        );
    }
    let peak = model
        .events()
        .iter()
        .flat_map(|e| e.report.passes.first())
        .map(|p| p.max_stress)
        .fold(0.0, f64::max);
    let _ = writeln!(
        report,
        "  {} stress events (highest first-pass stress {peak:.3e} Pa), {broken} broke a body; {} bodies at the end",
        model.events().len(),
        built.world.bodies().len()
    );
    for failure in model.failures() {
        let _ = writeln!(report, "  failed: {failure}");
    }
    let written = export::write(&recording, ExportFormat::Glb, &out.join(format!("{name}.glb")))?;
    let _ = writeln!(
        report,
        "  {written}; {:.1} ms per step",
        summary.time_per_step().as_secs_f64() * 1e3
    );
    Ok(report)
}
