//! `shatter run`, `shatter info` and the default run: scenes built into worlds, stepped, recorded
//! and written for viewers.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shatter::bem_run::{bem_report, write_crack_paths};
use shatter::export::{self, ExportFormat};
use shatter::integrators::BodyKind;
use shatter::recorder::{RunSummary, run_and_record};
use shatter::scene_file::{SceneDescription, load_scene};
use shatter::scene_world::{SceneWorld, build_world};
use shatter::scenes::shatter_wall;

/// Steps of the default run: 3 s at 30 Hz, long enough for the ball to go through the wall and
/// the fragments to land.
pub const DEFAULT_FRAMES: usize = 90;

/// What to run and where to write it.
pub struct RunOptions {
    /// Steps to take; `None` for the scene's own `frames`.
    pub frames: Option<usize>,
    /// Directory to write into.
    pub out: PathBuf,
    /// File format.
    pub format: ExportFormat,
}

/// `shatter run SCENE`: the recording goes to `OUT/STEM.glb` or `OUT/STEM/`.
pub fn run_file(scene_path: &Path, options: &RunOptions) -> ExitCode {
    let scene = match load_scene(scene_path) {
        Ok(scene) => scene,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(1);
        }
    };
    let stem = scene_path
        .file_stem()
        .map_or_else(|| "scene".into(), |s| s.to_string_lossy().into_owned());
    run_scene(&scene_path.display().to_string(), &scene, &stem, options)
}

/// The default run: the built-in shattering wall, written to `OUT/default.glb`.
pub fn run_default(options: &RunOptions) -> ExitCode {
    let options = RunOptions {
        frames: Some(options.frames.unwrap_or(DEFAULT_FRAMES)),
        out: options.out.clone(),
        format: options.format,
    };
    run_scene("built-in scene shatter_wall", &shatter_wall(), "default", &options)
}

fn run_scene(label: &str, scene: &SceneDescription, stem: &str, options: &RunOptions) -> ExitCode {
    let mut built = match build_world(scene) {
        Ok(built) => built,
        Err(error) => {
            eprintln!("error: {label}: {error}");
            return ExitCode::from(1);
        }
    };
    let steps = options.frames.unwrap_or(scene.frames);
    println!("{label}: {} bodies, {} joints", built.bodies.len(), scene.joints.len());
    if let Some(description) = &scene.description {
        println!("  {description}");
    }
    let bar = progress_bar(steps);
    let result = run_and_record(&mut built, steps, |done, _, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    let (recording, summary) = match result {
        Ok(done) => done,
        Err(error) => {
            eprintln!("error: {label}: the engine stopped: {error}");
            return ExitCode::from(1);
        }
    };
    print!("{}", summary_report(&summary, built.dt, recording.frame_count()));
    if let Some(report) = bem_report(&built.world, &built.bodies) {
        print!("{report}");
    }
    let path = match options.format {
        ExportFormat::Glb => options.out.join(format!("{stem}.glb")),
        ExportFormat::Obj => options.out.join(stem),
    };
    match export::write(&recording, options.format, &path) {
        Ok(written) => println!("{written}"),
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    }
    // Boundary-element cracks are also written as surfaces in each body's material frame.
    match write_crack_paths(&built.world, &options.out.join(format!("{stem}_cracks.obj"))) {
        Ok(Some(written)) => println!("{written}"),
        Ok(None) => {}
        Err(error) => {
            eprintln!("error: writing the crack paths: {error}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// A progress bar over `steps` steps, drawn only when standard output is a terminal (a pipe or a
/// log file gets the summary alone).
fn progress_bar(steps: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
    if std::io::stdout().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stdout());
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} steps, {elapsed} elapsed, eta {eta}") {
            bar.set_style(style);
        }
    }
    bar
}

/// What `shatter run` prints after the run.
fn summary_report(summary: &RunSummary, dt: f64, frames: usize) -> String {
    let mut out = String::new();
    let energy = |kinetic: f64, potential: f64| {
        format!(
            "kinetic {kinetic:.6e} J + potential {potential:.6e} J = {:.6e} J",
            kinetic + potential
        )
    };
    let _ = writeln!(
        out,
        "  steps: {} of {dt} s ({} s simulated), {frames} frames recorded",
        summary.steps, summary.simulated_time
    );
    let _ = writeln!(
        out,
        "  bodies: {} at start, {} at end",
        summary.bodies_at_start, summary.bodies_at_end
    );
    let _ = writeln!(
        out,
        "  wall time per step: {:.3} ms ({:.3} s in all)",
        summary.time_per_step().as_secs_f64() * 1e3,
        summary.step_time.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  energy at start: {}",
        energy(summary.kinetic_energy_start, summary.potential_energy_start)
    );
    let _ = writeln!(
        out,
        "  energy at end:   {}",
        energy(summary.kinetic_energy_end, summary.potential_energy_end)
    );
    if summary.fractures > 0 {
        let _ = writeln!(
            out,
            "  bodies broken: {} into {} fragments",
            summary.fractures, summary.fragments
        );
    }
    if summary.broken_joints > 0 {
        let _ = writeln!(out, "  joints broken: {}", summary.broken_joints);
    }
    if summary.quarantined > 0 {
        let _ = writeln!(
            out,
            "  warning: {} bodies were quarantined (their state went non-finite)",
            summary.quarantined
        );
    }
    if summary.solver_failures > 0 {
        let _ = writeln!(
            out,
            "  warning: {} contacts or joints could not be solved",
            summary.solver_failures
        );
    }
    out
}

/// `shatter info SCENE`: bodies by kind, total mass and the initial energies of the built world.
pub fn info(path: &Path) -> ExitCode {
    let scene = match load_scene(path) {
        Ok(scene) => scene,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(1);
        }
    };
    match build_world(&scene) {
        Ok(built) => {
            print!("{}", info_report(path, &scene, &built));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {}: {error}", path.display());
            ExitCode::from(1)
        }
    }
}

fn info_report(path: &Path, scene: &SceneDescription, built: &SceneWorld) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", path.display());
    write_counts(&mut out, scene);
    let mass: f64 = built
        .bodies
        .iter()
        .filter_map(|b| built.world.body(b.id).ok())
        .filter(|v| v.kind == BodyKind::Dynamic)
        .map(|v| v.mass.mass())
        .sum();
    let _ = writeln!(out, "  total mass: {mass} kg");
    let _ = writeln!(out, "  initial kinetic energy: {} J", built.world.kinetic_energy());
    let _ = writeln!(
        out,
        "  initial potential energy: {} J (zero at the origin)",
        built.world.potential_energy()
    );
    write_time(&mut out, scene);
    out
}

/// The body counts by kind and the joint count of a scene, for the `check` and `info` reports.
pub(crate) fn write_counts(out: &mut String, scene: &SceneDescription) {
    let count = |kind: BodyKind| scene.bodies.iter().filter(|b| b.kind == kind).count();
    let _ = writeln!(
        out,
        "  bodies: {} ({} dynamic, {} static, {} kinematic)",
        scene.bodies.len(),
        count(BodyKind::Dynamic),
        count(BodyKind::Static),
        count(BodyKind::Kinematic)
    );
    let _ = writeln!(out, "  joints: {}", scene.joints.len());
}

/// The frame count and time step of a scene, for the `check` and `info` reports.
pub(crate) fn write_time(out: &mut String, scene: &SceneDescription) {
    let _ = writeln!(
        out,
        "  time: {} frames of {} s ({} s)",
        scene.frames,
        scene.dt,
        scene.frames as f64 * scene.dt
    );
}
