//! Running a fracture-modes impact (`fracture::modes`) and reporting what broke: the examples'
//! shared loop. A shape with precomputed modes rests on the ground and a steel ball comes down
//! on a chosen point of it; the recording goes to a .glb file.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use glam::{DQuat, DVec3};

use std::time::Instant;

use crate::collision::{Collider, HalfSpace, Pose, Shape, Sphere, TetMesh};
use crate::engine::{BodyDesc, World};
use crate::export::{self, ExportFormat};
use crate::fracture::FractureError;
use crate::fracture::modes::{
    Dimension, ImpactProjector, ModeSettings, ModesFracture, ModesFractureSettings, ModesShape, ProjectionSettings,
    compute_modes,
};
use crate::recorder::run_and_record;
use crate::scene_world::SceneWorld;

/// Time step, s: one step per 30 Hz frame.
pub const FRAME: f64 = 1.0 / 30.0;

/// One impact on a shape with modes.
pub struct ModesImpact {
    /// File name (without extension) and the body's name.
    pub name: String,
    /// The shape, its modes' runtime and its fragments' density and resolution.
    pub shape: Arc<ModesShape>,
    /// Rotation of the shape's mesh frame in the world; it is then set on the ground.
    pub orientation: DQuat,
    /// Where the ball hits, as a point of the shape's mesh frame, m.
    pub target: DVec3,
    /// Radius of the steel ball, m.
    pub ball_radius: f64,
    /// Its speed, m/s, straight down onto the target.
    pub ball_speed: f64,
    /// Contact impulse above which the shape is tested, N s.
    pub threshold: f64,
    /// Projected jump at which its pieces separate, N s.
    pub toughness: f64,
}

/// The scalar modes of `tets` (`count` of them, the rigid one included) and their runtime with
/// the default projection, and a line saying what was computed and how long it took.
pub fn modes_runtime(name: &str, tets: &TetMesh, count: usize) -> Result<(ImpactProjector, String), FractureError> {
    let start = Instant::now();
    let settings = ModeSettings {
        modes: count,
        dimension: Dimension::Scalar,
        ..ModeSettings::default()
    };
    let computed = compute_modes(tets, &settings, None, |_| ())?;
    let projector = ImpactProjector::new(tets, &computed, &ProjectionSettings::default())?;
    let line = format!(
        "{name}: {} tets, {count} modes in {:.1} s, {} atomic pieces",
        tets.tets().len(),
        start.elapsed().as_secs_f64(),
        projector.pieces().count()
    );
    Ok((projector, line))
}

/// Runs `impact` for `steps` steps and writes `out/NAME.glb`; returns a report (the fracture, its
/// fragments and momentum balance, the file written). Fails on an engine or export error.
pub fn run_modes_impact(impact: &ModesImpact, steps: usize, out: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let mut world = World::new();
    let ground = world.add_body(BodyDesc::fixed(Collider::from_shape(
        Shape::HalfSpace(HalfSpace::try_new(DVec3::Y, 0.0)?),
        1.0,
    )?))?;
    // Rest the shape's lowest vertex a millimetre above the ground.
    let lowest = impact
        .shape
        .mesh
        .vertices()
        .iter()
        .map(|v| (impact.orientation * *v).y)
        .fold(f64::INFINITY, f64::min);
    let mesh_pose = Pose::new(DVec3::new(0.0, 0.001 - lowest, 0.0), impact.orientation);
    let body = world.add_body(impact.shape.body_desc(&mesh_pose)?)?;
    let target = mesh_pose.transform_point(impact.target);
    let ball = world.add_body(
        BodyDesc::dynamic(Collider::from_shape(
            Shape::Sphere(Sphere::try_new(impact.ball_radius)?),
            impact.ball_radius / 4.0,
        )?)
        .with_density(7800.0)
        .with_position(target + DVec3::Y * (impact.ball_radius + 0.05))
        .with_velocity(DVec3::NEG_Y * impact.ball_speed, DVec3::ZERO),
    )?;
    let mut model = ModesFracture::new(ModesFractureSettings::default());
    model.make_breakable(
        &world,
        body,
        impact.shape.clone(),
        &mesh_pose,
        impact.threshold,
        impact.toughness,
    )?;
    world.add_fracture_model(Box::new(model));
    let names = [(ground, "ground"), (body, impact.name.as_str()), (ball, "ball")];
    let mut built = SceneWorld::from_world(world, FRAME, steps, &names)?;
    let (recording, summary) = run_and_record(&mut built, steps, |_, _, _| {})?;
    let mut report = String::new();
    let model = built
        .world
        .fracture_model::<ModesFracture>()
        .ok_or("the modes model is registered")?;
    for event in model.events() {
        let error = (event.momentum_after.linear - event.momentum_before.linear).length()
            / event.momentum_before.linear.length().max(f64::MIN_POSITIVE);
        let _ = writeln!(
            report,
            "  {}: broke at {:.3} s under {:.1} N s into {} fragments (momentum error {error:.1e})",
            impact.name,
            event.time,
            event.impact.magnitude,
            event.fragments.len()
        );
    }
    if model.events().is_empty() {
        let _ = writeln!(report, "  {}: did not break", impact.name);
    }
    for failure in model.failures() {
        let _ = writeln!(report, "  failed: {failure}");
    }
    let written = export::write(&recording, ExportFormat::Glb, &out.join(format!("{}.glb", impact.name)))?;
    let _ = writeln!(
        report,
        "  {written}; {:.2} ms per step",
        summary.time_per_step().as_secs_f64() * 1e3
    );
    Ok(report)
}
