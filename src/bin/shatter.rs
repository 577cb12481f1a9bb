//! The `shatter` command-line tool.
//!
//! With no arguments it runs the default scene built into the binary (a concrete wall shattered
//! by a heavy steel ball with an impact-centred fracture pattern, 3 s at 30 Hz) and writes
//! `out/default.glb`. Subcommands run and summarize
//! scene files, inspect mesh files, check scene files, write the exporters' analytic sample and
//! run the spin-drift study, and precompute fracture modes.

#[path = "shatter/modes.rs"]
mod modes;
#[path = "shatter/run.rs"]
mod run;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use shatter::collision::{GeometryError, TriMesh, topology};
use shatter::export::analytic::sample_recording;
use shatter::export::{self, ExportFormat};
use shatter::scene_file::{FractureModel, Reinjection, SceneDescription, load_scene};
use shatter::spin_drift::run_study;

/// A rigid-body physics engine in which fracture is first-class.
///
/// Without a subcommand, runs the built-in scene (a concrete wall shattered by a heavy ball) for
/// 90 frames at 30 Hz and writes out/default.glb.
#[derive(Parser)]
#[command(name = "shatter", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    default_run: DefaultRunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a scene file and writes the recording for viewers.
    ///
    /// One step per frame at the scene's time step; every body's pose at every frame goes to
    /// DIR/SCENE.glb (one glTF file with an animation) or DIR/SCENE/frame_NNNNN.obj. Prints the
    /// steps taken, the bodies, the wall time per step and the energy at the start and the end.
    Run {
        /// The scene file (JSON).
        scene: PathBuf,
        /// Steps to take [default: the scene's `frames`]; N steps record N + 1 frames, the first
        /// being the initial state.
        #[arg(long, value_name = "N", value_parser = parse_frames)]
        frames: Option<usize>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Summarizes a scene as built: bodies by kind, total mass, initial kinetic and potential
    /// energy.
    Info {
        /// The scene file (JSON).
        scene: PathBuf,
    },
    /// Runs the spin-drift study.
    ///
    /// Random ill-conditioned bodies spin freely at one step per 30 Hz frame, with and without
    /// the energy fix; writes DIR/spin_drift.csv and DIR/spin_drift.svg.
    SpinDrift(SpinDriftArgs),
    /// Inspects a mesh file (OBJ, STL, PLY): does it bound a solid, and if not, why not.
    ///
    /// Prints vertex and triangle counts, components, whether the surface is closed and
    /// consistently oriented, volume, surface area, bounds and every defect. Exit status: 0 for a
    /// solid, 1 for anything else, 2 when the file cannot be read or parsed.
    Mesh {
        /// The mesh file.
        file: PathBuf,
    },
    /// Checks a scene file: parses and validates it, and summarizes it.
    ///
    /// Prints the numbers of bodies and joints and the total mass of the dynamic bodies. Exit
    /// status: 0 for a valid scene, 1 otherwise, with an error that names the JSON path of the
    /// value at fault.
    Check {
        /// The scene file (JSON).
        scene: PathBuf,
    },
    /// Fracture modes (Sellan 2023): precomputes a shape's modes as an asset scenes can use.
    #[command(subcommand)]
    Modes(ModesCommand),
    /// Writes the exporters' sample animation, as glTF or per-frame OBJ.
    ///
    /// Closed-form motion, no simulation: a box in free fall, a spinning plate, and bodies that
    /// appear at frame 15, over 2 s at 30 Hz.
    ExportSample {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Glb)]
        format: Format,
        /// Output file (glb) or directory (obj) [default: out/export_sample.glb or
        /// out/export_sample].
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ModesCommand {
    /// Computes the fracture modes of the solid a mesh file bounds and writes them (with the
    /// matrices impacts are projected with) to a file a scene's `modes` body loads.
    ///
    /// The mesh is filled with tets through a level set; the same resolution must be given to
    /// the scene. Prints the tets, each mode's energy, iterations and KKT residual, and the
    /// atomic pieces.
    Precompute {
        /// The mesh file (OBJ, STL, PLY) of a closed surface.
        mesh: PathBuf,
        /// Modes to compute, the rigid ones included.
        #[arg(long, value_name = "K", default_value_t = 10, value_parser = parse_bodies)]
        modes: usize,
        /// The asset to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Components per tet: 1 (scalar modes) or 3 (vector modes).
        #[arg(long, value_name = "D", default_value_t = 1, value_parser = parse_dimension)]
        dimension: usize,
        /// Uniform scale of the mesh file's coordinates.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Level-set cells along the longest side.
        #[arg(long, value_name = "N", default_value_t = shatter::modes_precompute::DEFAULT_LEVEL_SET_CELLS)]
        level_set_cells: usize,
        /// Tet lattice cubes along the longest side (about 10,000 tets at 18 for a compact shape).
        #[arg(long, value_name = "N", default_value_t = shatter::modes_precompute::DEFAULT_TET_CELLS)]
        tet_cells: usize,
    },
}

fn parse_dimension(text: &str) -> Result<usize, String> {
    match text {
        "1" => Ok(1),
        "3" => Ok(3),
        _ => Err(format!("{text}: expected 1 (scalar modes) or 3 (vector modes)")),
    }
}

#[derive(Args)]
struct DefaultRunArgs {
    /// Steps to take (N + 1 frames are recorded).
    #[arg(long, value_name = "N", default_value_t = run::DEFAULT_FRAMES, value_parser = parse_frames)]
    frames: usize,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
struct OutputArgs {
    /// Directory to write into.
    #[arg(long, value_name = "DIR", default_value = "out")]
    out: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Glb)]
    format: Format,
}

impl OutputArgs {
    fn options(&self, frames: Option<usize>) -> run::RunOptions {
        run::RunOptions {
            frames,
            out: self.out.clone(),
            format: self.format.into(),
        }
    }
}

fn parse_frames(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|n| *n as u64 <= shatter::scene_file::MAX_FRAMES)
        .ok_or_else(|| {
            format!(
                "{text}: expected a whole number of frames from 0 to {}",
                shatter::scene_file::MAX_FRAMES
            )
        })
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// One binary glTF 2.0 file with an animation.
    Glb,
    /// One OBJ file per frame in a directory.
    Obj,
}

#[derive(Args)]
struct SpinDriftArgs {
    /// Directory for spin_drift.csv and spin_drift.svg.
    #[arg(long, value_name = "DIR", default_value = "out")]
    out: PathBuf,
    /// Number of bodies.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = parse_bodies)]
    bodies: usize,
    /// Simulated time, s (1 to 100000).
    #[arg(long, value_name = "S", default_value_t = 100.0, value_parser = parse_seconds)]
    seconds: f64,
}

fn parse_bodies(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text}: expected a positive whole number"))
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    text.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 1.0 && *s <= 1e5)
        .ok_or_else(|| format!("{text}: expected a number of seconds from 1 to 100000"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => run::run_default(&cli.default_run.output.options(Some(cli.default_run.frames))),
        Some(Command::Run { scene, frames, output }) => run::run_file(&scene, &output.options(frames)),
        Some(Command::Info { scene }) => run::info(&scene),
        Some(Command::SpinDrift(args)) => spin_drift(&args),
        Some(Command::Mesh { file }) => mesh(&file),
        Some(Command::Check { scene }) => check(&scene),
        Some(Command::ExportSample { format, out }) => export_sample(format, out),
        Some(Command::Modes(ModesCommand::Precompute {
            mesh,
            modes: count,
            out,
            dimension,
            scale,
            level_set_cells,
            tet_cells,
        })) => {
            let options = modes::PrecomputeOptions {
                modes: count,
                dimension: if dimension == 3 {
                    shatter::fracture::modes::Dimension::Vector
                } else {
                    shatter::fracture::modes::Dimension::Scalar
                },
                scale,
                resolution: shatter::modes_precompute::TetResolution {
                    level_set_cells,
                    tet_cells,
                },
            };
            modes::precompute_file(&mesh, &out, &options)
        }
    }
}

fn spin_drift(options: &SpinDriftArgs) -> ExitCode {
    let study = run_study(options.bodies, options.seconds, 2009);
    print!("{}", study.table());
    let written = std::fs::create_dir_all(&options.out).and_then(|()| {
        let csv = options.out.join("spin_drift.csv");
        let svg = options.out.join("spin_drift.svg");
        std::fs::write(&csv, study.csv())?;
        std::fs::write(&svg, study.svg())?;
        Ok((csv, svg))
    });
    match written {
        Ok((csv, svg)) => {
            println!("\nwrote {} and {}", csv.display(), svg.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot write to {}: {error}", options.out.display());
            ExitCode::FAILURE
        }
    }
}

fn mesh(file: &Path) -> ExitCode {
    match TriMesh::load(file) {
        Ok(mesh) => {
            let (report, solid) = mesh_report(file, &mesh);
            print!("{report}");
            if solid { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(error) => {
            let error = match error {
                // The reader's message already names the file; an I/O error names it too.
                GeometryError::Parse { .. } | GeometryError::Io { .. } => error.to_string(),
                other => format!("{}: {other}", file.display()),
            };
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// The report of `shatter mesh`, and whether the mesh bounds a solid.
fn mesh_report(file: &Path, mesh: &TriMesh) -> (String, bool) {
    let defects = topology::inspect(mesh);
    let mut out = String::new();
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let closed = defects.boundary_edges == 0 && defects.non_manifold_edges == 0;
    let oriented = defects.inconsistently_oriented_edges == 0;
    // Writing into a String cannot fail.
    let _ = writeln!(out, "{}", file.display());
    let _ = writeln!(out, "  vertices:              {}", mesh.vertices().len());
    let _ = writeln!(out, "  triangles:             {}", mesh.triangles().len());
    let _ = writeln!(out, "  components:            {}", defects.components);
    let _ = writeln!(out, "  closed (2-manifold):   {}", yes_no(closed));
    let _ = writeln!(out, "  consistently oriented: {}", yes_no(oriented));
    let volume_note = if closed && oriented {
        ""
    } else {
        " (not meaningful: the surface does not enclose a volume)"
    };
    let _ = writeln!(out, "  volume:                {}{volume_note}", defects.signed_volume);
    let _ = writeln!(out, "  surface area:          {}", mesh.surface_area());
    if let Some(bounds) = mesh.bounds() {
        let [min, max, size] = [bounds.min, bounds.max, bounds.size()].map(|v| format!("({}, {}, {})", v.x, v.y, v.z));
        let _ = writeln!(out, "  bounds:                {min} to {max}, size {size}");
    }
    let _ = writeln!(out, "  defects:");
    for (count, what) in [
        (defects.boundary_edges, "boundary (open) edges"),
        (defects.non_manifold_edges, "non-manifold edges"),
        (defects.inconsistently_oriented_edges, "inconsistently oriented edges"),
        (defects.degenerate_triangles, "degenerate triangles"),
    ] {
        let _ = writeln!(out, "    {what}: {count}");
    }
    if !(defects.signed_volume > 0.0) {
        let _ = writeln!(out, "    non-positive signed volume (inside out or empty)");
    }
    let solid = defects.is_solid();
    if solid {
        let _ = writeln!(out, "  verdict: bounds a solid");
    } else {
        let _ = writeln!(out, "  verdict: does not bound a solid: {defects}");
    }
    (out, solid)
}

fn check(path: &Path) -> ExitCode {
    match load_scene(path) {
        Ok(scene) => {
            print!("{}", scene_report(path, &scene));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}

/// The report of `shatter check` for a valid scene.
fn scene_report(path: &Path, scene: &SceneDescription) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: valid scene", path.display());
    if let Some(description) = &scene.description {
        let _ = writeln!(out, "  {description}");
    }
    run::write_counts(&mut out, scene);
    let breakable = scene.joints.iter().filter(|j| j.break_impulse.is_some()).count();
    if breakable > 0 {
        let _ = writeln!(out, "  breakable joints: {breakable}");
    }
    let energized = scene.joints.iter().filter(|j| j.breakable.is_some()).count();
    if let Some(model) = scene.energized_model() {
        let variant = match model.reinjection {
            Reinjection::PerBody => "per body",
            Reinjection::MomentumConserving => "momentum conserving",
        };
        let _ = writeln!(
            out,
            "  energized fracture: {energized} joints watched, alpha {}, {variant}, at most one break per group \
             every {} s, seed {}",
            model.alpha, model.group_interval, model.seed
        );
    }
    let models: Vec<String> = FractureModel::ALL
        .into_iter()
        .filter_map(|model| {
            let n = scene
                .bodies
                .iter()
                .filter(|b| b.fracture.as_ref().is_some_and(|f| f.model == model))
                .count();
            (n > 0).then(|| format!("{n} {}", model.name()))
        })
        .collect();
    if !models.is_empty() {
        let _ = writeln!(out, "  bodies that can fracture: {}", models.join(", "));
    }
    let _ = writeln!(out, "  total mass (dynamic bodies): {} kg", scene.total_mass());
    let g = scene.gravity;
    let _ = writeln!(out, "  gravity: ({}, {}, {}) m/s^2", g.x, g.y, g.z);
    run::write_time(&mut out, scene);
    out
}

impl From<Format> for ExportFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Glb => Self::Glb,
            Format::Obj => Self::Obj,
        }
    }
}

fn export_sample(format: Format, out: Option<PathBuf>) -> ExitCode {
    let format = ExportFormat::from(format);
    let path = out.unwrap_or_else(|| match format {
        ExportFormat::Glb => PathBuf::from("out/export_sample.glb"),
        ExportFormat::Obj => PathBuf::from("out/export_sample"),
    });
    match export::write(&sample_recording(60, 30.0), format, &path) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
