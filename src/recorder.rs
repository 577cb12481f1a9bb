//! Running a built scene and recording it: one [`World::step`] per frame, every body's pose at
//! every frame into a [`Recording`] the exporters write.
//!
//! Frame `k` of the recording is the world after `k` steps, so a run of `n` steps records `n + 1`
//! frames, from the initial state at time 0 to time `n dt`, and the animation lasts exactly the
//! simulated time. Bodies spawned during a step (fracture fragments) get a track starting at that
//! step's frame, drawn from their collider; bodies removed stop at the last frame they existed in.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{BodyId, EngineError, StepReport, World};
use crate::export::{Normals, Recording, Track};
use crate::scene_world::{MESH_COLOR, SceneWorld, collider_mesh};

/// Records a world frame by frame. Create it before the first step (it records frame 0), then
/// call [`Recorder::record`] after every step.
#[derive(Debug)]
pub struct Recorder {
    recording: Recording,
    /// The bodies still alive, with their track index.
    live: Vec<(BodyId, usize)>,
    /// The frame last recorded.
    frame: usize,
}

impl Recorder {
    /// A recorder at one frame per step (`1 / dt` Hz) whose frame 0 is `scene`'s current state.
    pub fn new(scene: &SceneWorld) -> Result<Self, EngineError> {
        let mut recording = Recording::new(1.0 / scene.dt);
        let mut live = Vec::with_capacity(scene.bodies.len());
        for body in &scene.bodies {
            let mut track = Track::new(body.name.clone(), Arc::clone(&body.mesh))
                .with_color(body.color)
                .with_normals(body.normals);
            track.poses.push(scene.world.pose(body.id)?);
            live.push((body.id, recording.tracks.len()));
            recording.tracks.push(track);
        }
        Ok(Self {
            recording,
            live,
            frame: 0,
        })
    }

    /// Records the next frame: the world after the step that returned `report`. Bodies the step
    /// spawned start a track here; bodies it removed are dropped. Fails only if a spawned body's
    /// level set cannot be contoured into a surface.
    pub fn record(&mut self, world: &World, report: &StepReport) -> Result<(), EngineError> {
        self.frame += 1;
        let tracks = &mut self.recording.tracks;
        self.live.retain(|(id, track)| match world.pose(*id) {
            Ok(pose) => {
                tracks[*track].poses.push(pose);
                true
            }
            Err(_) => false,
        });
        for spawned in &report.spawned {
            let Ok(view) = world.body(spawned.id) else {
                // Spawned and removed within the same step: it never shows.
                continue;
            };
            let mesh = collider_mesh(&view.record.collider).map_err(|error| EngineError::Geometry {
                context: "surface of a spawned body",
                error,
            })?;
            let mut track = Track::new(format!("spawned_{}", tracks.len()), Arc::new(mesh))
                .with_color(MESH_COLOR)
                .with_normals(Normals::Flat)
                .starting_at(self.frame);
            track.poses.push(view.pose());
            self.live.push((spawned.id, tracks.len()));
            tracks.push(track);
        }
        Ok(())
    }

    /// Frames recorded so far (the initial state counts as one).
    pub fn frame_count(&self) -> usize {
        self.frame + 1
    }

    /// The recording so far.
    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// The finished recording.
    pub fn finish(self) -> Recording {
        self.recording
    }
}

/// What a run did, as `shatter run` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Steps taken.
    pub steps: usize,
    /// Bodies at the start.
    pub bodies_at_start: usize,
    /// Bodies at the end.
    pub bodies_at_end: usize,
    /// Simulated time, s.
    pub simulated_time: f64,
    /// Wall-clock time spent in [`World::step`], summed.
    pub step_time: Duration,
    /// Kinetic energy of the dynamic bodies before the first step, J.
    pub kinetic_energy_start: f64,
    /// Gravitational potential energy before the first step, J.
    pub potential_energy_start: f64,
    /// Kinetic energy after the last step, J.
    pub kinetic_energy_end: f64,
    /// Potential energy after the last step, J.
    pub potential_energy_end: f64,
    /// Joints broken over the run (past their breaking impulse, or by a fracture model).
    pub broken_joints: usize,
    /// Bodies broken by fracture models over the run.
    pub fractures: usize,
    /// Fragments fracture models spawned over the run.
    pub fragments: usize,
    /// Bodies quarantined (state went non-finite) over the run.
    pub quarantined: usize,
    /// Contacts or joints whose rows the solver could not build, over the run.
    pub solver_failures: usize,
}

impl RunSummary {
    /// Mean wall-clock time of one step; zero when no step was taken.
    pub fn time_per_step(&self) -> Duration {
        if self.steps == 0 {
            Duration::ZERO
        } else {
            self.step_time / self.steps as u32
        }
    }
}

/// Steps `scene` `steps` times at its time step, recording every frame; `observe` is called
/// after each step with the number of steps done, the world and the step's report (a progress
/// bar, or a fracture model's breaks). Returns the recording and a summary.
pub fn run_and_record(
    scene: &mut SceneWorld,
    steps: usize,
    mut observe: impl FnMut(usize, &World, &StepReport),
) -> Result<(Recording, RunSummary), EngineError> {
    let mut recorder = Recorder::new(scene)?;
    let world = &mut scene.world;
    let mut summary = RunSummary {
        steps,
        bodies_at_start: world.bodies().len(),
        bodies_at_end: world.bodies().len(),
        simulated_time: 0.0,
        step_time: Duration::ZERO,
        kinetic_energy_start: world.kinetic_energy(),
        potential_energy_start: world.potential_energy(),
        kinetic_energy_end: world.kinetic_energy(),
        potential_energy_end: world.potential_energy(),
        broken_joints: 0,
        fractures: 0,
        fragments: 0,
        quarantined: 0,
        solver_failures: 0,
    };
    let start_time = world.time();
    for step in 0..steps {
        let started = Instant::now();
        let report = world.step(scene.dt)?;
        summary.step_time += started.elapsed();
        if step == 0 {
            summary.kinetic_energy_start = report.kinetic_energy_before;
            summary.potential_energy_start = report.potential_energy_before;
        }
        summary.kinetic_energy_end = report.kinetic_energy_after;
        summary.potential_energy_end = report.potential_energy_after;
        summary.broken_joints += report.broken_joints;
        summary.fractures += report.fractures;
        summary.fragments += report.spawned.len();
        summary.quarantined += report.quarantined.len();
        summary.solver_failures += report.solver_failures.len();
        recorder.record(world, &report)?;
        observe(step + 1, world, &report);
    }
    summary.bodies_at_end = world.bodies().len();
    summary.simulated_time = world.time() - start_time;
    Ok((recorder.finish(), summary))
}
