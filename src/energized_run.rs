//! Running a scene with an energized-fracture model and recording it: every frame, every joint
//! the model broke with the energy it gave back, and each body's kinetic energy per frame. What
//! the energized examples print and write.

use std::collections::BTreeSet;

use crate::engine::{BodyId, EngineError, World};
use crate::export::Recording;
use crate::fracture::energized::{EnergizedBreak, EnergizedFracture};
use crate::integrators::BodyKind;
use crate::recorder::{RunSummary, run_and_record};
use crate::scene_world::SceneWorld;

/// A recorded run of a world with an [`EnergizedFracture`] model.
#[derive(Debug)]
pub struct EnergizedRun {
    /// Every body's pose at every frame.
    pub recording: Recording,
    /// What the run did: steps, energies at the ends, wall time.
    pub summary: RunSummary,
    /// The breaks, in the order the model made them.
    pub breaks: Vec<EnergizedBreak>,
    /// Every dynamic body's kinetic energy at every frame (frame 0 before the first step), J.
    pub body_energy: Vec<Vec<(BodyId, f64)>>,
}

/// What the breaks of a run add up to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BreakTotals {
    /// Joints broken.
    pub count: usize,
    /// Energy the broken joints' springs held, J.
    pub stored: f64,
    /// Energy given back, `sum 1/2 dv^T M dv`, J (`alpha` times `stored`).
    pub injected: f64,
    /// The cross terms `v^T M dv` the paper leaves out, J: how much more the kinetic energy rose
    /// because the bodies were already moving.
    pub cross_term: f64,
}

impl EnergizedRun {
    /// The breaks, summed.
    pub fn totals(&self) -> BreakTotals {
        self.breaks.iter().fold(BreakTotals::default(), |t, b| BreakTotals {
            count: t.count + 1,
            stored: t.stored + b.stored_energy,
            injected: t.injected + b.injected_energy,
            cross_term: t.cross_term + b.cross_term,
        })
    }

    /// Simulated time of the first break, s, if any.
    pub fn first_break(&self) -> Option<f64> {
        self.breaks.first().map(|b| b.time)
    }

    /// The frame nearest `time` (s); the last frame beyond the run.
    fn frame_at(&self, time: f64) -> usize {
        let frame = (time * self.recording.frame_rate).round().max(0.0) as usize;
        frame.min(self.body_energy.len() - 1)
    }

    /// Kinetic energy of all dynamic bodies at the frame nearest `time` (s), J.
    pub fn kinetic_energy_at(&self, time: f64) -> f64 {
        self.body_energy[self.frame_at(time)]
            .iter()
            .map(|(_, energy)| energy)
            .sum()
    }

    /// Kinetic energy at the frame nearest `time` (s) of the pieces: the dynamic bodies that any
    /// joint broken in the run held (a projectile or a bystander does not count), J.
    pub fn pieces_kinetic_energy_at(&self, time: f64) -> f64 {
        let pieces: BTreeSet<BodyId> = self
            .breaks
            .iter()
            .flat_map(|b| [Some(b.bodies.0), b.bodies.1])
            .flatten()
            .collect();
        self.body_energy[self.frame_at(time)]
            .iter()
            .filter(|(id, _)| pieces.contains(id))
            .map(|(_, energy)| energy)
            .sum()
    }
}

/// Steps `scene` `steps` times at its time step ([`run_and_record`]), keeping the breaks of its
/// world's [`EnergizedFracture`] model (none if it has none) and each body's kinetic energy.
pub fn run_energized(scene: &mut SceneWorld, steps: usize) -> Result<EnergizedRun, EngineError> {
    let mut breaks = Vec::new();
    let mut body_energy = Vec::with_capacity(steps + 1);
    body_energy.push(energies(&scene.world));
    let (recording, summary) = run_and_record(scene, steps, |_, world, _| {
        if let Some(model) = world.fracture_model::<EnergizedFracture>() {
            breaks.extend_from_slice(model.breaks());
        }
        body_energy.push(energies(world));
    })?;
    Ok(EnergizedRun {
        recording,
        summary,
        breaks,
        body_energy,
    })
}

/// Every dynamic body's kinetic energy, J.
fn energies(world: &World) -> Vec<(BodyId, f64)> {
    let bodies = world.bodies();
    bodies
        .ids()
        .enumerate()
        .filter(|(dense, _)| bodies.kinds()[*dense] == BodyKind::Dynamic)
        .map(|(dense, id)| (id, bodies.states()[dense].kinetic_energy(&bodies.masses()[dense])))
        .collect()
}

/// One row of [`compare_alphas`]'s table.
#[derive(Debug)]
pub struct AlphaRun {
    /// The energy factor the run used.
    pub alpha: f64,
    /// The run.
    pub run: EnergizedRun,
    /// Where its recording was written.
    pub path: std::path::PathBuf,
}

/// Builds a scene per `alpha` with `build`, runs each for `steps` steps, writes each recording to
/// `directory/{name}_alpha_{alpha}.glb`, and prints a table: breaks, stored, given back and cross
/// term energies, and the kinetic energy of the pieces (the bodies broken joints held) `after`
/// seconds after the first break (or at the end when nothing broke). Fails on the first scene that cannot be built, stepped or written.
pub fn compare_alphas(
    name: &str,
    alphas: &[f64],
    steps: usize,
    after: f64,
    directory: &std::path::Path,
    mut build: impl FnMut(f64) -> Result<SceneWorld, Box<dyn std::error::Error>>,
) -> Result<Vec<AlphaRun>, Box<dyn std::error::Error>> {
    println!(
        "{:>5} | {:>6} | {:>10} | {:>10} | {:>10} | {:>12} | {:>8} | file",
        "alpha", "breaks", "stored J", "given J", "cross J", "pieces KE J", "ms/step"
    );
    let mut rows = Vec::with_capacity(alphas.len());
    for &alpha in alphas {
        let mut scene = build(alpha)?;
        let run = run_energized(&mut scene, steps)?;
        let path = directory.join(format!("{name}_alpha_{alpha}.glb"));
        crate::export::write(&run.recording, crate::export::ExportFormat::Glb, &path)?;
        let totals = run.totals();
        let end = run.recording.time(run.recording.frame_count().saturating_sub(1));
        let later = run.first_break().map_or(end, |t| t + after);
        println!(
            "{alpha:>5} | {:>6} | {:>10.3} | {:>10.3} | {:>10.3} | {:>12.3} | {:>8.3} | {}",
            totals.count,
            totals.stored,
            totals.injected,
            totals.cross_term,
            run.pieces_kinetic_energy_at(later),
            run.summary.time_per_step().as_secs_f64() * 1e3,
            path.display()
        );
        rows.push(AlphaRun { alpha, run, path });
    }
    Ok(rows)
}
