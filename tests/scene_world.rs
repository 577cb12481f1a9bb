//! Worlds built from scene files, and runs recorded from them: every body of the file is in the
//! world with the file's mass and pose, a mesh body's drawn surface sits where the file put the
//! mesh, bad scenes fail naming the body or joint, and the recorder keeps one track per body with
//! bodies spawned and removed mid-run starting and stopping at the right frames.

use std::path::Path;

use glam::{DQuat, DVec3};
use shatter::collision::{BodyMassProperties, Collider, Cuboid, Shape, TriMesh};
use shatter::engine::{BodyDesc, BodyId, FractureContext, FractureModel, JointKind};
use shatter::integrators::BodyKind;
use shatter::recorder::{Recorder, run_and_record};
use shatter::scene_file::{SceneDescription, load_scene, parse_scene};
use shatter::scene_world::{SceneWorld, build_world};
use shatter::scenes::wall_and_ball;
use shatter::solver::Softness;

const SPOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/meshes/spot.obj");

fn example(name: &str) -> SceneDescription {
    load_scene(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)).unwrap()
}

/// Total mass of the world's dynamic bodies, kg.
fn world_mass(built: &SceneWorld) -> f64 {
    built
        .bodies
        .iter()
        .map(|b| built.world.body(b.id).unwrap())
        .filter(|v| v.kind == BodyKind::Dynamic)
        .map(|v| v.mass.mass())
        .sum()
}

#[test]
fn scene_world_example_scenes_build_with_every_body_and_its_mass() {
    for name in ["wall_and_ball.json", "pyramid.json", "sph_bricks.json"] {
        let scene = example(name);
        let built = build_world(&scene).unwrap();
        assert_eq!(built.bodies.len(), scene.bodies.len(), "{name}");
        assert_eq!(built.world.bodies().len(), scene.bodies.len(), "{name}");
        assert_eq!(built.world.joints().len(), scene.joints.len(), "{name}");
        let mass = world_mass(&built);
        assert!((mass - scene.total_mass()).abs() <= 1e-12 * mass, "{name}: {mass}");
        for body in &scene.bodies {
            let id = built.id(&body.name).unwrap();
            let view = built.world.body(id).unwrap();
            // Primitives are centred on their centre of mass: the body sits where the file says.
            assert_eq!(view.state.position, body.position, "{name} {}", body.name);
            assert_eq!(view.kind, body.kind);
            assert_eq!(view.record.material.friction, body.friction);
            assert_eq!(view.state.linear_velocity, body.linear_velocity);
        }
    }
    // The built-in copy is the file.
    assert_eq!(wall_and_ball(), example("wall_and_ball.json"));
}

#[test]
fn scene_world_mesh_body_is_drawn_where_the_file_puts_the_mesh() {
    let (position, axis, angle) = ([0.5, 2.0, -1.0], [1.0, 2.0, 0.5], 0.7);
    let (velocity, spin) = ([1.0, 0.0, -2.0], [0.0, 3.0, 1.0]);
    let text = format!(
        r#"{{"bodies": [
            {{"name": "cow", "shape": {{"mesh": {{"path": {SPOT:?}, "scale": 2}}}}, "density": 800,
              "position": {position:?}, "orientation": {{"axis": {axis:?}, "angle": {angle}}},
              "linear_velocity": {velocity:?}, "angular_velocity": {spin:?}}}]}}"#
    );
    let scene = parse_scene(&text, Path::new(".")).unwrap();
    let built = build_world(&scene).unwrap();
    let body = built.body("cow").unwrap();
    let file_mesh = TriMesh::load(SPOT).unwrap();
    let pose = built.world.pose(body.id).unwrap();
    let placed = DQuat::from_axis_angle(DVec3::from(axis).normalize(), angle);
    // Every drawn vertex, placed by the body's pose, lands where the file's vertex, scaled by 2
    // and placed by the file's pose, lands.
    for (drawn, file) in body.mesh.vertices().iter().zip(file_mesh.vertices()) {
        let expected = placed * (2.0 * *file) + DVec3::from(position);
        assert!((pose.transform_point(*drawn) - expected).length() < 1e-9);
    }
    // Mass from the closed mesh: the README's volume 0.7183 m^3, times 2^3, times the density.
    let mass = built.world.body(body.id).unwrap().mass.mass();
    assert!((mass - 0.7183 * 8.0 * 800.0).abs() < 1e-4 * mass, "{mass}");
    let exact = BodyMassProperties::from_mesh(
        &file_mesh.transformed(glam::DAffine3::from_scale(DVec3::splat(2.0))),
        800.0,
    )
    .unwrap();
    assert!((mass - exact.mass.mass()).abs() < 1e-9 * mass);
    // The file's velocity is the mesh origin's; the centre of mass moves at v + w x (c - p).
    let arm = pose.position - DVec3::from(position);
    let expected = DVec3::from(velocity) + DVec3::from(spin).cross(arm);
    let got = built.world.linear_velocity(body.id).unwrap();
    assert!(
        arm.length() > 0.01 && (got - expected).length() < 1e-12,
        "{got} vs {expected}"
    );
}

#[test]
fn scene_world_bad_joint_body_name_fails_naming_the_joint() {
    let text = r#"{"bodies": [
        {"name": "a", "shape": {"sphere": {"radius": 0.5}}},
        {"name": "b", "shape": {"sphere": {"radius": 0.5}}, "position": [2, 0, 0]}],
        "joints": [{"type": "ball", "bodies": ["a", "c"], "anchor": [1, 0, 0]}]}"#;
    let error = parse_scene(text, Path::new(".")).unwrap_err();
    assert_eq!(error.location, "joints[0].bodies[1]");
    assert!(error.message.contains("\"c\""), "{error}");

    // A description built in code with a joint to a body that is not there fails in the build.
    let mut scene = parse_scene(&text.replace("\"c\"", "\"b\""), Path::new(".")).unwrap();
    scene.joints[0].bodies[1] = 7;
    let error = build_world(&scene).unwrap_err();
    assert_eq!(error.location, "joints[0].bodies[1]", "{error}");
    assert!(error.message.contains("7 is invalid"), "{error}");
}

#[test]
fn scene_world_nan_fails_naming_the_body() {
    let mut scene = wall_and_ball();
    scene.bodies[3].position.y = f64::NAN;
    let error = build_world(&scene).unwrap_err();
    assert_eq!(error.location, "bodies[3]", "{error}");
    assert!(
        error.message.contains(&format!("{:?}", scene.bodies[3].name)),
        "{error}"
    );
    assert!(error.message.contains("NaN"), "{error}");

    let mut scene = wall_and_ball();
    scene.bodies[5].friction = f64::NAN;
    let error = build_world(&scene).unwrap_err();
    assert_eq!(error.location, "bodies[5]", "{error}");
    assert!(error.message.contains("friction"), "{error}");

    let mut scene = wall_and_ball();
    scene.gravity.x = f64::NAN;
    assert_eq!(build_world(&scene).unwrap_err().location, "gravity");
    scene = wall_and_ball();
    scene.dt = 0.0;
    assert_eq!(build_world(&scene).unwrap_err().location, "dt");
}

#[test]
fn scene_world_joints_keep_their_kind_anchor_and_softness() {
    let text = r#"{"bodies": [
        {"name": "frame", "kind": "static", "shape": {"cuboid": {"half_extents": [0.1, 1, 0.1]}}},
        {"name": "door", "shape": {"cuboid": {"half_extents": [0.5, 1, 0.05]}}, "position": [0.6, 0, 0]},
        {"name": "ball", "shape": {"sphere": {"radius": 0.2}}, "position": [0.6, -1.5, 0]}],
        "joints": [
        {"type": "hinge", "bodies": ["frame", "door"], "anchor": [0.1, 0, 0], "axis": [0, 2, 0],
         "softness": {"erp": 0.5, "cfm": 0.001}},
        {"type": "ball", "bodies": ["door", "ball"], "anchor": [0.6, -1.2, 0],
         "softness": {"stiffness": 5000, "damping": 10}, "break_impulse": 12.5}]}"#;
    let built = build_world(&parse_scene(text, Path::new(".")).unwrap()).unwrap();
    let joints = built.world.joints().joints();
    assert_eq!(joints.len(), 2);
    let hinge = joints.iter().find(|j| j.body_b == built.id("door")).unwrap();
    assert_eq!(hinge.kind, JointKind::Hinge { axis: DVec3::Y });
    assert_eq!(hinge.softness, Softness::ErpCfm { erp: 0.5, cfm: 0.001 });
    assert_eq!(hinge.angular_softness, hinge.softness);
    // The anchor, in the door's frame, is the door's left edge.
    assert!((hinge.local_anchor_b - DVec3::new(-0.5, 0.0, 0.0)).length() < 1e-12);
    let ball = joints.iter().find(|j| j.body_b == built.id("ball")).unwrap();
    assert_eq!(ball.kind, JointKind::Ball);
    assert_eq!(
        ball.softness,
        Softness::SpringDamper {
            stiffness: 5000.0,
            damping: 10.0
        }
    );
    assert_eq!(ball.breaking_impulse, Some(12.5));
    assert_eq!(hinge.breaking_impulse, None);
}

/// At step 3, replaces body `parent` by two halves side by side: a spawn and a despawn mid-run.
struct Splitter {
    parent: BodyId,
    steps: usize,
}

impl FractureModel for Splitter {
    fn name(&self) -> &str {
        "splitter"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        self.steps += 1;
        if self.steps == 3 {
            let pose = context.body(self.parent).map_err(|e| e.to_string())?.pose();
            let half = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.25)).unwrap()), 0.05)
                .map_err(|e| e.to_string())?;
            for dx in [-0.3, 0.3] {
                context.spawn(BodyDesc::dynamic(half.clone()).with_position(pose.position + DVec3::new(dx, 0.0, 0.0)));
            }
            context.despawn(self.parent).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[test]
fn scene_world_recorder_tracks_every_body_every_frame() {
    let mut scene = build_world(&example("pyramid.json")).unwrap();
    let initial: Vec<_> = scene.bodies.iter().map(|b| scene.world.pose(b.id).unwrap()).collect();
    let (recording, summary) = run_and_record(&mut scene, 5, |_, _, _| {}).unwrap();
    assert_eq!(recording.tracks.len(), scene.bodies.len());
    assert_eq!(recording.frame_count(), 6);
    assert!((recording.frame_rate - 30.0).abs() < 1e-9);
    for ((track, body), start) in recording.tracks.iter().zip(&scene.bodies).zip(&initial) {
        assert_eq!(track.name, body.name);
        assert_eq!(track.poses.len(), 6);
        assert_eq!(track.pose_at(0), Some(*start));
        assert_eq!(track.pose_at(5), Some(scene.world.pose(body.id).unwrap()));
    }
    assert_eq!(summary.steps, 5);
    assert!((summary.simulated_time - 5.0 / 30.0).abs() < 1e-12);

    // Spawned bodies start at the frame of the step that made them; removed ones stop.
    let mut scene = build_world(&example("wall_and_ball.json")).unwrap();
    let parent = scene.id("brick_7_5").unwrap();
    scene.world.add_fracture_model(Box::new(Splitter { parent, steps: 0 }));
    let mut recorder = Recorder::new(&scene).unwrap();
    for _ in 0..5 {
        let report = scene.world.step(scene.dt).unwrap();
        recorder.record(&scene.world, &report).unwrap();
    }
    let recording = recorder.finish();
    assert_eq!(recording.frame_count(), 6);
    assert_eq!(recording.tracks.len(), scene.bodies.len() + 2);
    let parent_track = recording.tracks.iter().find(|t| t.name == "brick_7_5").unwrap();
    assert_eq!(parent_track.last_frame(), Some(2));
    for track in &recording.tracks[scene.bodies.len()..] {
        assert_eq!(track.first_frame, 3, "{}", track.name);
        assert_eq!(track.last_frame(), Some(5));
        // Drawn from its collider: a 0.5 m cube.
        let size = track.mesh.bounds().unwrap().size();
        assert!((size - DVec3::splat(0.5)).abs().max_element() < 1e-12, "{size}");
    }
}

#[test]
fn scene_world_energized_beam_file_breaks_its_glue_and_gives_back_alpha_times_the_stored_energy() {
    use shatter::energized_run::run_energized;
    use shatter::fracture::energized::EnergizedFracture;
    let file = example("energized_beam.json");
    assert_eq!(file.energized.map(|m| m.alpha), Some(1.0));
    let mut given = Vec::new();
    for alpha in [0.0, 1.0] {
        let mut scene = file.clone();
        scene.energized = scene
            .energized
            .map(|m| shatter::scene_file::EnergizedSettings { alpha, ..m });
        let mut built = build_world(&scene).unwrap();
        let model = built
            .world
            .fracture_model::<EnergizedFracture>()
            .expect("registered from the file");
        assert_eq!((model.settings().alpha, model.joint_count()), (alpha, 4));
        let run = run_energized(&mut built, 30).unwrap();
        let totals = run.totals();
        // The block pushes the beam's middle through the goal: all four glue joints let go.
        assert_eq!(totals.count, 4, "{totals:?}");
        assert!(totals.stored > 1.0, "{totals:?}");
        assert!(
            (totals.injected - alpha * totals.stored).abs() <= 1e-9 * totals.stored,
            "{totals:?}"
        );
        assert_eq!(run.recording.frame_count(), 31);
        // The per-body energies the run keeps add up to the world's own total at the end.
        let end = run.kinetic_energy_at(1.0);
        let world = run.summary.kinetic_energy_end;
        assert!((end - world).abs() <= 1e-12 * world.max(1.0), "{end} vs {world}");
        given.push(totals.injected);
    }
    assert!(given[0] == 0.0 && given[1] > 0.0, "{given:?}");
}

#[test]
fn scene_world_prescored_bodies_break_and_bad_parameters_are_named() {
    use shatter::fracture::prescored::PrescoredFracture;
    let scene = shatter::scenes::shatter_wall();
    let mut built = build_world(&scene).unwrap();
    let wall = built.id("wall").unwrap();
    let model = built.world.fracture_model::<PrescoredFracture>().unwrap();
    assert!(model.is_breakable(wall));
    assert!(!model.is_breakable(built.id("ball").unwrap()));
    let (_, summary) = run_and_record(&mut built, 8, |_, _, _| {}).unwrap();
    assert_eq!(summary.fractures, 1);
    assert!(summary.fragments >= 20, "{} fragments", summary.fragments);
    // The block and the body parameters round-trip through the file format.
    let again = parse_scene(&scene.to_json_string(), Path::new("scenes")).unwrap();
    assert_eq!(again, scene);
    let broken = |from: &str, to: &str| {
        let text = shatter::scenes::SHATTER_WALL_JSON.replace(from, to);
        let scene = parse_scene(&text, Path::new("scenes")).unwrap();
        build_world(&scene).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let message = broken("\"threshold\": 2000, ", "");
    assert!(message.contains("bodies[1].fracture.threshold"), "{message}");
    let message = broken("\"pattern\": \"dartboard\"", "\"pattern\": \"lattice\"");
    assert!(
        message.contains("bodies[1].fracture.pattern") && message.contains("lattice"),
        "{message}"
    );
    let message = broken("\"debris\": \"merge\"", "\"debris\": \"dust\"");
    assert!(message.contains("prescored.debris"), "{message}");
    let message = broken("\"rings\": 4", "\"rings\": 0");
    assert!(message.contains("prescored.patterns.dartboard.radial"), "{message}");
    let message = broken("\"threshold\": 2000", "\"threshold\": -5");
    assert!(message.contains("threshold"), "{message}");
}

#[test]
fn scene_world_prescored_pattern_files_are_read_relative_to_the_scene() {
    use shatter::fracture::prescored::FracturePattern;
    let directory = std::env::temp_dir().join(format!("shatter-pattern-file-{}", std::process::id()));
    std::fs::create_dir_all(directory.join("patterns")).unwrap();
    FracturePattern::uniform(6, 3)
        .unwrap()
        .save(directory.join("patterns").join("six.shatpat"))
        .unwrap();
    let with_pattern = |pattern: &str| {
        shatter::scenes::SHATTER_WALL_JSON.replace("\"pattern\": \"dartboard\"", &format!("\"pattern\": {pattern}"))
    };
    let run = |scene: &SceneDescription| {
        let mut built = build_world(scene).unwrap();
        let (_, summary) = run_and_record(&mut built, 8, |_, _, _| {}).unwrap();
        (
            summary.fractures,
            summary.fragments,
            summary.kinetic_energy_end.to_bits(),
        )
    };
    // The file gives the same fracture, bit for bit, as the same pattern described inline, and
    // not the scene's own dartboard (dozens of pieces).
    std::fs::write(
        directory.join("six.json"),
        with_pattern("{\"file\": \"patterns/six.shatpat\"}"),
    )
    .unwrap();
    let from_file = run(&load_scene(directory.join("six.json")).unwrap());
    let inline = run(&parse_scene(
        &with_pattern("{\"uniform\": {\"count\": 6, \"seed\": 3}}"),
        Path::new("scenes"),
    )
    .unwrap());
    assert_eq!(from_file, inline);
    assert!(from_file.0 == 1 && (2..=6).contains(&from_file.1), "{from_file:?}");
    // A missing file is named with its full path and the JSON path that gave it.
    std::fs::write(
        directory.join("missing.json"),
        with_pattern("{\"file\": \"patterns/gone.shatpat\"}"),
    )
    .unwrap();
    let scene = load_scene(directory.join("missing.json")).unwrap();
    let message = build_world(&scene).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains("bodies[1].fracture.pattern.file") && message.contains("gone.shatpat"),
        "{message}"
    );
    std::fs::remove_dir_all(&directory).unwrap();
}

/// Fracture modes from a scene file: `shatter modes precompute`'s asset loaded by a `modes` body,
/// which a ball then breaks (`cargo test --test scene_world modes`).
mod modes {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use shatter::fracture::modes::{Dimension, ModesFracture};
    use shatter::modes_precompute::{TetResolution, precompute};
    use shatter::scene_file::parse_scene;
    use shatter::scene_world::build_world;

    /// A coarse lattice, so the precomputation takes a second or two.
    const RESOLUTION: TetResolution = TetResolution {
        level_set_cells: 40,
        tet_cells: 8,
    };

    fn spot() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/meshes/spot.obj")
    }

    /// A directory holding spot's modes asset, computed once.
    fn asset_directory() -> &'static Path {
        static DIRECTORY: OnceLock<PathBuf> = OnceLock::new();
        DIRECTORY.get_or_init(|| {
            let directory = std::env::temp_dir().join(format!("shatter_scene_modes_{}", std::process::id()));
            std::fs::create_dir_all(&directory).unwrap();
            let (tets, asset) = precompute(&spot(), 1.0, RESOLUTION, 4, Dimension::Scalar, |_| ()).unwrap();
            asset.save(&tets, &directory.join("spot.modes")).unwrap();
            directory
        })
    }

    /// Spot (about 1.4 m long) lying on nothing, a steel ball coming down on its back at 20 m/s.
    fn scene(tet_cells: usize) -> String {
        format!(
            r#"{{
              "gravity": [0, 0, 0], "dt": 0.0333333333, "frames": 20,
              "bodies": [
                {{"name": "ball", "shape": {{"sphere": {{"radius": 0.1}}}}, "density": 7800,
                  "position": [0, 0.9, 0], "linear_velocity": [0, -20, 0]}},
                {{"name": "spot", "shape": {{"mesh": {{"path": {path:?}}}}}, "density": 1000,
                  "fracture": {{"model": "modes", "asset": "spot.modes", "threshold": 5, "toughness": 1,
                                "level_set_cells": 40, "tet_cells": {tet_cells}}}}}
              ]
            }}"#,
            path = spot().display().to_string()
        )
    }

    #[test]
    fn modes_scene_body_breaks_along_its_precomputed_modes() {
        let directory = asset_directory();
        let description = parse_scene(&scene(RESOLUTION.tet_cells), directory).unwrap();
        let mut built = build_world(&description).unwrap();
        let spot_id = built.bodies[1].id;
        for _ in 0..20 {
            built.world.step(built.dt).unwrap();
        }
        let model = built.world.fracture_model::<ModesFracture>().unwrap();
        assert!(model.failures().is_empty(), "{:?}", model.failures());
        assert_eq!(model.events().len(), 1, "spot breaks once");
        let event = &model.events()[0];
        assert_eq!(event.parent, spot_id);
        assert!(event.fragments.len() >= 2);
        assert!(!built.world.contains(spot_id));
        let scale = event.momentum_before.linear.length().max(1.0);
        assert!((event.momentum_after.linear - event.momentum_before.linear).length() <= 1e-9 * scale);
    }

    #[test]
    fn modes_scene_refuses_an_asset_of_other_tets_by_path() {
        let directory = asset_directory();
        let description = parse_scene(&scene(RESOLUTION.tet_cells + 1), directory).unwrap();
        let error = build_world(&description).unwrap_err().to_string();
        assert!(error.contains("bodies[1].fracture.asset"), "{error}");
        assert!(error.contains("another mesh"), "{error}");
    }
}

mod sph {
    use shatter::fracture::sph::SphFracture;
    use shatter::integrators::BodyKind;
    use shatter::scene_file::parse_scene;
    use shatter::scene_world::build_world;
    use std::path::Path;

    /// A brick dropped on its edge at 4 m/s onto a ground box, with an `sph` block.
    fn scene(fracture: &str) -> String {
        format!(
            r#"{{
              "gravity": [0, -9.81, 0], "dt": 0.0333333333, "frames": 6,
              "bodies": [
                {{"name": "ground", "kind": "static", "shape": {{"cuboid": {{"half_extents": [2, 0.25, 2]}}}},
                  "position": [0, -0.25, 0]}},
                {{"name": "brick", "shape": {{"cuboid": {{"half_extents": [0.2, 0.1, 0.05]}}}}, "density": 1800,
                  "position": [0, 0.3, 0], "orientation": {{"axis": [0, 0, 1], "angle": 0.3}},
                  "linear_velocity": [0, -4, 0], "fracture": {fracture}}}
              ]
            }}"#
        )
    }

    #[test]
    fn sph_scene_brick_breaks_into_bodies_that_keep_its_mass() {
        let fracture = r#"{"model": "sph", "threshold": 1, "tensile_strength": 2e6, "crack_radius": 0.25,
                            "contact_radius": 0.05, "cells": 8, "subdivision": true}"#;
        let description = parse_scene(&scene(fracture), Path::new(".")).unwrap();
        let mut built = build_world(&description).unwrap();
        let mass = built.world.body(built.bodies[1].id).unwrap().mass.mass();
        for _ in 0..6 {
            built.world.step(built.dt).unwrap();
        }
        let model = built.world.fracture_model::<SphFracture>().unwrap();
        assert!(model.failures().is_empty(), "{:?}", model.failures());
        let event = model.events().iter().find(|e| e.pieces > 1).expect("the brick breaks");
        assert_eq!(event.fragments.len(), event.pieces);
        assert!(!built.world.contains(built.bodies[1].id));
        // The pieces (and pieces of pieces) share the brick's mass exactly.
        let bodies = built.world.bodies();
        let dynamic = bodies
            .ids()
            .filter_map(|id| built.world.body(id).ok())
            .filter(|v| v.kind == BodyKind::Dynamic);
        let fragments: f64 = dynamic.map(|v| v.mass.mass()).sum();
        assert!((fragments - mass).abs() <= 1e-9 * mass, "{fragments} vs {mass}");
    }

    #[test]
    fn sph_scene_bad_parameters_are_named_by_path() {
        let cases = [
            (
                r#"{"model": "sph", "threshold": 1, "crack_radius": 0.1}"#,
                "bodies[1].fracture.tensile_strength",
            ),
            (
                r#"{"model": "sph", "threshold": 1, "tensile_strength": 1e6, "crack_radius": 0.1, "colour": 1}"#,
                "bodies[1].fracture.colour",
            ),
            (
                r#"{"model": "sph", "threshold": 1, "tensile_strength": 1e6, "crack_radius": 0.1, "poisson": 0.7}"#,
                "Poisson",
            ),
            (
                r#"{"model": "sph", "threshold": 1, "tensile_strength": 1e6, "crack_radius": 0.1, "subdivision": 1}"#,
                "bodies[1].fracture.subdivision",
            ),
            (
                r#"{"model": "sph", "threshold": -1, "tensile_strength": 1e6, "crack_radius": 0.1}"#,
                "threshold",
            ),
        ];
        for (fracture, named) in cases {
            let description = parse_scene(&scene(fracture), Path::new(".")).unwrap();
            let Err(error) = build_world(&description) else {
                panic!("{fracture} was accepted")
            };
            let error = error.to_string();
            assert!(error.contains(named), "{error} should name {named}");
        }
    }
}

mod bem {
    use shatter::bem_run::{bem_report, crack_paths_obj};
    use shatter::fracture::bem::BemFracture;
    use shatter::integrators::BodyKind;
    use shatter::scene_file::parse_scene;
    use shatter::scene_world::build_world;
    use std::path::Path;

    /// A glass slab landing on one end at about 5 m/s on a ground box, with `fracture` as its
    /// block and `shape` as its shape.
    fn scene(shape: &str, fracture: &str) -> String {
        format!(
            r#"{{
              "gravity": [0, -9.81, 0], "dt": 0.0333333333, "frames": 6,
              "bodies": [
                {{"name": "ground", "kind": "static", "shape": {{"cuboid": {{"half_extents": [2, 0.25, 2]}}}},
                  "position": [0, -0.25, 0]}},
                {{"name": "slab", "shape": {shape}, "density": 2500,
                  "position": [0, 0.2, 0], "orientation": {{"axis": [0, 0, 1], "angle": 0.15}},
                  "linear_velocity": [0, -5, 0], "fracture": {fracture}}}
              ]
            }}"#
        )
    }

    const SLAB: &str = r#"{"cuboid": {"half_extents": [0.25, 0.05, 0.15]}}"#;

    /// The example scene file builds, its slab breaks on landing into bodies that share its mass
    /// and momentum, and the crack's walls come out in the slab's material frame.
    #[test]
    fn bem_scene_slab_breaks_into_bodies_that_keep_its_mass() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/bem_slab.json");
        let mut built = build_world(&shatter::scene_file::load_scene(&path).unwrap()).unwrap();
        let slab = built.bodies[1].id;
        let mass = built.world.body(slab).unwrap().mass.mass();
        assert!((mass - 2500.0 * 0.5 * 0.1 * 0.3).abs() < 1e-9 * mass, "{mass}");
        for _ in 0..20 {
            built.world.step(built.dt).unwrap();
        }
        let model = built.world.fracture_model::<BemFracture>().unwrap();
        assert!(model.failures().is_empty(), "{:?}", model.failures());
        let event = model
            .events()
            .iter()
            .find(|e| !e.fragments.is_empty())
            .expect("the slab breaks");
        assert_eq!(event.fragments.len(), event.report.pieces);
        assert!(!built.world.contains(slab));
        let before = event.momentum_before.linear;
        assert!((event.momentum_after.linear - before).length() <= 1e-9 * before.length());
        let dynamic = built
            .world
            .bodies()
            .ids()
            .filter_map(|id| built.world.body(id).ok())
            .filter(|v| v.kind == BodyKind::Dynamic)
            .map(|v| v.mass.mass())
            .sum::<f64>();
        assert!((dynamic - mass).abs() <= 1e-9 * mass, "{dynamic} vs {mass}");
        // The crack walls lie inside the slab's box (material frame), both faces of a crack
        // through its whole 0.1 m thickness.
        assert!(!event.crack_walls.is_empty());
        let corners = event.crack_walls.iter().flatten();
        let (low, high) = corners.fold((glam::DVec3::MAX, glam::DVec3::MIN), |(l, h), c| (l.min(*c), h.max(*c)));
        assert!(low.cmpge(glam::DVec3::new(-0.25, -0.05, -0.15) - 1e-9).all(), "{low}");
        assert!(high.cmple(glam::DVec3::new(0.25, 0.05, 0.15) + 1e-9).all(), "{high}");
        assert!(high.y - low.y > 0.099, "{low} {high}");
        let obj = crack_paths_obj(&built.world).unwrap();
        assert_eq!(
            obj.lines().filter(|l| l.starts_with("f ")).count(),
            event.crack_walls.len()
        );
        let report = bem_report(&built.world, &built.bodies).unwrap();
        assert!(report.contains("1 broke a body"), "{report}");
    }

    /// A sphere becomes an icosphere with edges at most the target, Lamé parameters stand in for
    /// Young's modulus and Poisson's ratio, and the file's `crack_tips`, `break_out`, `ligament`
    /// and `piece_spacing` reach the event settings.
    #[test]
    fn bem_scene_sphere_and_lame_parameters_are_accepted() {
        let fracture = r#"{"model": "bem", "threshold": 1e9, "initiate": 1e6, "lame_lambda": 2.5e10,
                            "lame_mu": 2.5e10, "edge": 0.05, "crack_tips": true,
                            "break_out": true, "ligament": 0.07, "piece_spacing": 0.02}"#;
        let description = parse_scene(&scene(r#"{"sphere": {"radius": 0.2}}"#, fracture), Path::new(".")).unwrap();
        let built = build_world(&description).unwrap();
        let model = built.world.fracture_model::<BemFracture>().unwrap();
        let mesh = model.mesh(built.bodies[1].id).unwrap();
        let event = model.material(built.bodies[1].id).unwrap().event;
        assert!(event.crack_tips, "the file's crack_tips is used");
        assert!(event.track.break_out, "the file's break_out is used");
        assert_eq!(event.ligament, 0.07);
        assert_eq!(event.piece_spacing, 0.02);
        let v = mesh.vertices();
        let longest = mesh
            .triangles()
            .iter()
            .flat_map(|t| (0..3).map(move |k| v[t[k] as usize].distance(v[t[(k + 1) % 3] as usize])))
            .fold(0.0, f64::max);
        assert!(longest <= 0.05 && longest > 0.025, "{longest}");
    }

    #[test]
    fn bem_scene_bad_parameters_are_named_by_path() {
        let cases = [
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1}"#,
                "bodies[1].fracture.initiate",
            ),
            (
                SLAB,
                r#"{"model": "bem", "initiate": 1e6}"#,
                "bodies[1].fracture.threshold",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "colour": 1}"#,
                "bodies[1].fracture.colour",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "propagate": 2e6}"#,
                "propagat",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "poisson": 0.7}"#,
                "Poisson",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "young": 1e9, "lame_mu": 1e9}"#,
                "lame_lambda and lame_mu",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "edge": -0.1}"#,
                "bodies[1].fracture.edge",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "thickness": 0}"#,
                "crack thickness",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "contact_duration": 0}"#,
                "contact duration",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "ligament": -0.1}"#,
                "ligament",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "piece_spacing": 0}"#,
                "separation grid spacing",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": -1, "initiate": 1e6}"#,
                "threshold",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "crack_tips": 1}"#,
                "bodies[1].fracture.crack_tips",
            ),
            (
                SLAB,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6, "break_out": "yes"}"#,
                "bodies[1].fracture.break_out",
            ),
            (
                r#"{"capsule": {"half_height": 0.2, "radius": 0.1}}"#,
                r#"{"model": "bem", "threshold": 1, "initiate": 1e6}"#,
                "cuboid, sphere or mesh",
            ),
        ];
        for (shape, fracture, named) in cases {
            let description = parse_scene(&scene(shape, fracture), Path::new(".")).unwrap();
            let Err(error) = build_world(&description) else {
                panic!("{fracture} was accepted")
            };
            let error = error.to_string();
            assert!(error.contains(named), "{error} should name {named}");
        }
    }
}
