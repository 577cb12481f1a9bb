//! `shatter modes precompute`: a shape's fracture modes computed once and written as an asset.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shatter::fracture::modes::Dimension;
use shatter::modes_precompute::{TetResolution, precompute};

/// What to precompute.
pub struct PrecomputeOptions {
    /// Modes, trivial ones included.
    pub modes: usize,
    /// Scalar (1) or vector (3) modes.
    pub dimension: Dimension,
    /// Uniform scale of the mesh file.
    pub scale: f64,
    /// How the tets are made.
    pub resolution: TetResolution,
}

/// Computes the modes of the solid in `mesh` and writes them to `out`, with a progress bar
/// over the modes and a summary per mode.
pub fn precompute_file(mesh: &Path, out: &Path, options: &PrecomputeOptions) -> ExitCode {
    let bar = ProgressBar::with_draw_target(Some(options.modes as u64), ProgressDrawTarget::hidden());
    if std::io::stdout().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stdout());
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} modes, {elapsed} elapsed, eta {eta}") {
            bar.set_style(style);
        }
    }
    let start = Instant::now();
    let result = precompute(
        mesh,
        options.scale,
        options.resolution,
        options.modes,
        options.dimension,
        |_| bar.inc(1),
    );
    bar.finish_and_clear();
    let (tets, asset) = match result {
        Ok(done) => done,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    if let Err(error) = asset.save(&tets, out) {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    println!(
        "{}: {} tets, {} interior faces, {} modes (d = {}) in {seconds:.2} s",
        mesh.display(),
        tets.tets().len(),
        tets.interior_faces().len(),
        asset.modes.modes.len(),
        options.dimension.components()
    );
    for (k, (energy, report)) in asset.modes.energies.iter().zip(&asset.modes.reports).enumerate() {
        println!(
            "  mode {k}: energy {energy:.4e}, {} iterations, KKT residual {:.1e}{}",
            report.iterations,
            report.kkt.residual(),
            if report.converged { "" } else { " (not converged)" }
        );
    }
    println!(
        "  {} atomic pieces; written to {}",
        asset.projector.pieces().count(),
        out.display()
    );
    ExitCode::SUCCESS
}
