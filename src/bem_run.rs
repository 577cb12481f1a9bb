//! What a run with boundary-element fracture (`fracture::bem`) did: a table of its fracture
//! events for `shatter run` and the examples, and the crack surfaces in each body's material
//! frame as an OBJ file, the paper's crack paths drawn apart from the fragments.

use std::fmt::Write as _;
use std::path::Path;

use crate::engine::World;
use crate::fracture::bem::{BemFracture, BemFractureEvent};
use crate::scene_world::SceneBody;

/// The report of `world`'s boundary-element model, `None` when it has none: one line per
/// fracture event (when, which body, contacts, solver iterations, cracks opened, sub-steps, cuts,
/// pieces, seconds solving, evaluating stress and tracking, and the relative momentum error of
/// an event that broke the body), the totals, and any failures.
pub fn bem_report(world: &World, bodies: &[SceneBody]) -> Option<String> {
    let model = world.fracture_model::<BemFracture>()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  boundary-element fracture: {} events, {} broke a body",
        model.events().len(),
        model.events().iter().filter(|e| !e.fragments.is_empty()).count()
    );
    if !model.events().is_empty() {
        let _ = writeln!(
            out,
            "    time s  body              triangles  contacts  iterations  cracks  substeps  cuts  pieces  solve s  stress s  track s  momentum error"
        );
    }
    for event in model.events() {
        let body = bodies
            .iter()
            .find(|b| b.id == event.body)
            .map_or("a fragment", |b| b.name.as_str());
        let report = &event.report;
        let iterations = report
            .iterations
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let _ = writeln!(
            out,
            "    {:6.3}  {:16}  {:9}  {:8}  {:>10}  {:6}  {:8}  {:4}  {:6}  {:7.3}  {:8.3}  {:7.3}  {}",
            event.time,
            body,
            report.triangles,
            event.contacts,
            iterations,
            report.opened,
            report.substeps,
            report.cut_through,
            report.pieces,
            report.solve_seconds,
            report.stress_seconds,
            report.track_seconds,
            momentum_error(event).map_or_else(|| "-".to_string(), |e| format!("{e:.1e}")),
        );
    }
    for event in model.events().iter().filter(|e| !e.fragments.is_empty()) {
        let volumes = &event.report.piece_volumes;
        let total: f64 = volumes.iter().sum();
        let shares: Vec<String> = volumes
            .iter()
            .map(|v| format!("{:.1}", 100.0 * v / total.max(f64::MIN_POSITIVE)))
            .collect();
        let _ = writeln!(
            out,
            "    at {:.3} s: pieces of {} % of the volume{}",
            event.time,
            shares.join(", "),
            if event.report.pieces_on_grid {
                " (found on the grid)"
            } else {
                ""
            }
        );
    }
    for failure in model.failures() {
        let _ = writeln!(out, "    failed: {failure}");
    }
    Some(out)
}

/// The relative error of the fragments' linear momentum against the parent's, for an event
/// that broke its body.
fn momentum_error(event: &BemFractureEvent) -> Option<f64> {
    if event.fragments.is_empty() {
        return None;
    }
    let before = event.momentum_before.linear;
    Some((event.momentum_after.linear - before).length() / before.length().max(f64::MIN_POSITIVE))
}

/// The crack surfaces of every fracture event of `world`'s boundary-element model as OBJ text:
/// one object per event that opened a crack (`event_K_TIME`), its triangles in the broken body's
/// material frame (m), both walls of each crack. `None` when the world has no such model.
pub fn crack_paths_obj(world: &World) -> Option<String> {
    let model = world.fracture_model::<BemFracture>()?;
    let mut out = String::from("# crack walls of each boundary-element fracture event, material frame, m\n");
    let mut base = 1;
    for (k, event) in model.events().iter().enumerate() {
        if event.crack_walls.is_empty() {
            continue;
        }
        let _ = writeln!(out, "o event_{k}_{:.3}s", event.time);
        for corner in event.crack_walls.iter().flatten() {
            let _ = writeln!(out, "v {} {} {}", corner.x, corner.y, corner.z);
        }
        for t in 0..event.crack_walls.len() {
            let i = base + 3 * t;
            let _ = writeln!(out, "f {} {} {}", i, i + 1, i + 2);
        }
        base += 3 * event.crack_walls.len();
    }
    Some(out)
}

/// Writes [`crack_paths_obj`] to `path`; `Ok(None)` when the world has no boundary-element
/// model, else what was written.
pub fn write_crack_paths(world: &World, path: &Path) -> std::io::Result<Option<String>> {
    let Some(text) = crack_paths_obj(world) else {
        return Ok(None);
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, &text)?;
    Ok(Some(format!("wrote {} ({} bytes)", path.display(), text.len())))
}

/// Runs `built` for `steps` steps, writes `out/NAME.glb` (the bodies and their fragments) and
/// `out/NAME_cracks.obj` (the crack surfaces in each broken body's material frame), and reports
/// every boundary-element fracture event ([`bem_report`]), the files written and the time per
/// step. Fails on an engine, export or file error.
pub fn run_bem(
    name: &str,
    built: &mut crate::scene_world::SceneWorld,
    steps: usize,
    out: &Path,
) -> Result<String, Box<dyn std::error::Error>> {
    let (recording, summary) = crate::recorder::run_and_record(built, steps, |_, _, _| {})?;
    let mut report = bem_report(&built.world, &built.bodies).ok_or("the world has a boundary-element model")?;
    let _ = writeln!(report, "  {} bodies at the end", built.world.bodies().len());
    let glb = out.join(format!("{name}.glb"));
    let written = crate::export::write(&recording, crate::export::ExportFormat::Glb, &glb)?;
    let _ = writeln!(report, "  {written}");
    if let Some(written) = write_crack_paths(&built.world, &out.join(format!("{name}_cracks.obj")))? {
        let _ = writeln!(report, "  {written}");
    }
    let _ = writeln!(
        report,
        "  {:.1} ms per step",
        summary.time_per_step().as_secs_f64() * 1e3
    );
    Ok(report)
}
