//! Scene-file tests: the example scenes, a full scene written and read back, and one test per kind
//! of error, each asserting that the message names the JSON path of the value at fault.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3};

use super::*;
use crate::collision::{Shape, TriMesh};
use crate::integrators::BodyKind;

const SPOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/meshes/spot.obj");
const SUZANNE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/meshes/suzanne.obj");

fn scene_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)
}

/// The error message for scene `json` read from the current directory.
fn error(json: &str) -> String {
    parse_scene(json, Path::new(".")).unwrap_err().to_string()
}

/// A scene with `body` (a JSON object's members) as its only body.
fn one_body(members: &str) -> String {
    format!(r#"{{"bodies": [{{"name": "b", {members}}}]}}"#)
}

fn assert_starts(message: String, prefix: &str) {
    assert!(message.starts_with(prefix), "expected {prefix:?}..., got {message:?}");
}

#[test]
fn scene_file_example_scenes_parse_with_their_masses() {
    let wall = load_scene(scene_path("wall_and_ball.json")).unwrap();
    assert_eq!((wall.bodies.len(), wall.joints.len()), (50, 0));
    assert_eq!(wall.gravity, DVec3::new(0.0, -9.81, 0.0));
    // 48 bricks of 0.4 x 0.2 x 0.2 m at 1900 kg/m^3 and a steel ball of radius 0.25 m.
    let expected = 48.0 * 1900.0 * 0.016 + 7850.0 * 4.0 / 3.0 * PI * 0.25f64.powi(3);
    assert!(
        (wall.total_mass() - expected).abs() < 1e-9 * expected,
        "{}",
        wall.total_mass()
    );
    let fractured = wall.bodies.iter().filter(|b| b.fracture.is_some()).count();
    assert_eq!(fractured, 4);
    let brick = &wall.bodies[wall.body_index("brick_2_2").unwrap()];
    let fracture = brick.fracture.as_ref().unwrap();
    assert_eq!(fracture.model, FractureModel::Prescored);
    assert_eq!(fracture.parameters["cells"], 40);
    assert_eq!(wall.bodies[0].kind, BodyKind::Static);
    assert_eq!(wall.bodies[0].mass_kg(), None);

    let pyramid = load_scene(scene_path("pyramid.json")).unwrap();
    assert_eq!((pyramid.bodies.len(), pyramid.joints.len()), (18, 1));
    assert!((pyramid.total_mass() - (15.0 * 500.0 + 2000.0)).abs() < 1e-9);
    assert_eq!(pyramid.gravity, DVec3::from_array(DEFAULT_GRAVITY), "default gravity");
    let ball = &pyramid.bodies[pyramid.body_index("wrecking_ball").unwrap()];
    let expected = DQuat::from_axis_angle(DVec3::X, -std::f64::consts::FRAC_PI_3);
    assert!((ball.orientation - expected).length() < 1e-15);
    let joint = &pyramid.joints[0];
    assert_eq!(joint.kind, JointKind::Ball);
    assert_eq!(
        joint.bodies.map(|i| pyramid.bodies[i].name.as_str()),
        ["beam", "wrecking_ball"]
    );
    // The ball hangs 4.5 m from the anchor, as the description says.
    assert!(((ball.position - joint.anchor).length() - 4.5).abs() < 1e-5);
}

#[test]
fn scene_file_full_scene_round_trips_exactly() {
    let directory = std::env::temp_dir().join(format!("shatter-scene-file-{}", std::process::id()));
    std::fs::create_dir_all(directory.join("meshes")).unwrap();
    TriMesh::cuboid(DVec3::new(0.5, 0.25, 1.0))
        .save(directory.join("meshes/slab.obj"))
        .unwrap();
    let text = format!(
        r#"{{
  "description": "every feature once",
  "gravity": [0, -3.71, 0.5], "dt": 0.01, "frames": 42,
  "bodies": [
    {{"name": "floor", "kind": "static", "shape": {{"half_space": {{"normal": [0, 2, 0], "offset": -1}}}}}},
    {{"name": "ball", "shape": {{"sphere": {{"radius": 0.3}}}}, "density": 2500, "friction": 0.3,
      "restitution": 0.6, "position": [1, 2, 3], "orientation": [0, 0.6, 0, 0.8],
      "linear_velocity": [1, 0, 0], "angular_velocity": [0, 5, 0]}},
    {{"name": "pill", "shape": {{"capsule": {{"half_height": 0.4, "radius": 0.1}}}}, "mass": 3,
      "orientation": {{"axis": [1, 1, 0], "angle": 0.7}},
      "fracture": {{"model": "sph", "particles": 500, "nested": {{"k": [1, 2]}}}}}},
    {{"name": "slab", "shape": {{"mesh": {{"path": "meshes/slab.obj", "scale": 2}}}}}},
    {{"name": "spot", "kind": "kinematic", "shape": {{"mesh": {{"path": "{SPOT}"}}}},
      "linear_velocity": [0, 0, -1]}},
    {{"name": "crate", "shape": {{"cuboid": {{"half_extents": [0.5, 0.5, 0.5]}}}}}}
  ],
  "joints": [
    {{"type": "ball", "bodies": ["ball", "pill"], "anchor": [1, 2.3, 3]}},
    {{"name": "weld", "type": "fixed", "bodies": ["crate", "slab"], "anchor": [0, 0, 0],
      "softness": {{"erp": 0.2, "cfm": 1e-6}}, "break_impulse": 12.5}},
    {{"type": "hinge", "bodies": ["floor", "crate"], "anchor": [0, 1, 0], "axis": [0, 0, 3],
      "softness": {{"stiffness": 1e5, "damping": 10}}}},
    {{"type": "hinge", "bodies": ["spot", "ball"], "anchor": [0, 1, 0], "axis": [1, 2, 3],
      "softness": {{"hertz": 5, "damping_ratio": 0.7}}}}
  ]
}}"#
    );
    let scene = parse_scene(&text, &directory).unwrap();
    // Spot-checks that the members landed where they belong.
    assert_eq!(scene.frames, 42);
    let ball = &scene.bodies[1];
    assert_eq!(ball.orientation, DQuat::from_xyzw(0.0, 0.6, 0.0, 0.8));
    assert_eq!(ball.mass, Some(MassDescription::Density(2500.0)));
    match &scene.bodies[0].shape {
        ShapeDescription::Primitive(Shape::HalfSpace(h)) => assert_eq!((h.normal(), h.offset()), (DVec3::Y, -1.0)),
        other => panic!("{other:?}"),
    }
    match &scene.bodies[3].shape {
        ShapeDescription::Mesh(mesh) => {
            assert_eq!(mesh.path, directory.join("meshes/slab.obj"));
            // Scaled by 2: an 2 x 1 x 4 m box.
            assert!((mesh.volume.unwrap() - 8.0).abs() < 1e-12);
            assert!((scene.bodies[3].mass_kg().unwrap() - 8000.0).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(scene.bodies[2].mass_kg(), Some(3.0));
    assert_eq!(scene.bodies[4].mass_kg(), None);
    assert_eq!(scene.joints[2].kind, JointKind::Hinge { axis: DVec3::Z });
    assert_eq!(scene.joints[1].bodies, [5, 3]);
    assert_eq!(
        scene.joints[3].softness,
        Some(Softness::Frequency {
            hertz: 5.0,
            damping_ratio: 0.7
        })
    );
    assert_eq!(
        scene.bodies[2].fracture.as_ref().unwrap().parameters["nested"]["k"][1],
        2
    );

    // Written and read back, through text: the same description, bit for bit.
    let again = parse_scene(&scene.to_json_string(), &directory).unwrap();
    assert_eq!(again, scene);
    for name in ["wall_and_ball.json", "pyramid.json"] {
        let scene = load_scene(scene_path(name)).unwrap();
        assert_eq!(
            parse_scene(&scene.to_json_string(), Path::new(".")).unwrap(),
            scene,
            "{name}"
        );
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn scene_file_unknown_fields_name_their_path() {
    assert_starts(
        error(r#"{"gravitee": [0, 0, 0]}"#),
        "gravitee: unknown field `gravitee`",
    );
    assert_starts(
        error(&one_body(r#""shape": {"sphere": {"radius": 1}}, "colour": [1, 0, 0]"#)),
        "bodies[0].colour: unknown field `colour`",
    );
    assert_starts(
        error(&one_body(r#""shape": {"sphere": {"radius": 1, "r": 2}}"#)),
        "bodies[0].shape.sphere.r: unknown field `r`",
    );
    assert_starts(
        error(&one_body(r#""shape": {"sphera": {"radius": 1}}"#)),
        "bodies[0].shape.sphera: unknown variant `sphera`",
    );
    let softness = r#"{"bodies": [{"name": "a", "shape": {"sphere": {"radius": 1}}},
        {"name": "c", "shape": {"sphere": {"radius": 1}}}],
        "joints": [{"type": "ball", "bodies": ["a", "c"], "anchor": [0, 0, 0], "softness": {"erp": 0.1, "spring": 1}}]}"#;
    assert_starts(error(softness), "joints[0].softness.spring: unknown field `spring`");
}

#[test]
fn scene_file_wrong_types_and_shapes_name_their_path() {
    let sphere = r#""shape": {"sphere": {"radius": 1}}"#;
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "friction": "high""#))),
        "bodies[0].friction: invalid type: string \"high\", expected f64",
    );
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "position": [0, "a", 0]"#))),
        "bodies[0].position[1]: invalid type: string \"a\"",
    );
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "position": [0, 0]"#))),
        "bodies[0].position: invalid length 2",
    );
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "position": [0, 0, 0, 0]"#))),
        "bodies[0].position: invalid length 4, expected 3 elements",
    );
    assert_starts(error(&one_body(r#""density": 3"#)), "bodies[0]: missing field `shape`");
    assert_starts(
        error(&one_body(r#""shape": 3"#)),
        "bodies[0].shape: invalid type: floating point",
    );
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "kind": "floating""#))),
        "bodies[0].kind: unknown variant `floating`",
    );
    assert_starts(
        error(&one_body(&format!(r#"{sphere}, "orientation": {{"axis": [0, 1, 0]}}"#))),
        "bodies[0].orientation: an orientation: a unit quaternion",
    );
    assert_starts(error(r#"{"frames": -1}"#), "frames: invalid value: integer `-1`");
    assert_starts(
        error(r#"{"bodies": {}}"#),
        "bodies: invalid type: map, expected a sequence",
    );
    // Not JSON at all: line and column.
    assert_starts(
        error("{\n  \"dt\": 0.1,\n  \"frames\" 3\n}"),
        "line 3 column 12: expected `:`",
    );
}

#[test]
fn scene_file_invalid_values_name_their_path() {
    let bodies = (0..3).map(|i| format!(r#"{{"name": "b{i}", "shape": {{"sphere": {{"radius": 1}}}}}}"#));
    let mut bodies: Vec<String> = bodies.collect();
    bodies.push(r#"{"name": "bad", "shape": {"sphere": {"radius": -1}}}"#.into());
    assert_eq!(
        error(&format!(r#"{{"bodies": [{}]}}"#, bodies.join(", "))),
        "bodies[3].shape.sphere.radius: -1 is invalid: expected a positive radius in metres"
    );
    assert_starts(
        error(&one_body(r#""shape": {"capsule": {"half_height": 1, "radius": 0}}"#)),
        "bodies[0].shape.capsule.radius: 0 is invalid: expected a positive radius",
    );
    assert_starts(
        error(&one_body(r#""shape": {"cuboid": {"half_extents": [1, -2, 1]}}"#)),
        "bodies[0].shape.cuboid.half_extents: [1, -2, 1] is invalid",
    );
    let sphere = r#""shape": {"sphere": {"radius": 1}}"#;
    for (members, prefix) in [
        (
            r#""density": -5"#,
            "bodies[0].density: -5 is invalid: expected a positive density in kg/m^3",
        ),
        (
            r#""mass": 0"#,
            "bodies[0].mass: 0 is invalid: expected a positive mass in kilograms",
        ),
        (
            r#""mass": 1, "density": 1"#,
            "bodies[0].mass: give density or mass, not both",
        ),
        (
            r#""orientation": [0, 0, 0, 2]"#,
            "bodies[0].orientation: [0, 0, 0, 2] is invalid: expected a unit quaternion",
        ),
        (
            r#""orientation": [0, 0, 0, 0]"#,
            "bodies[0].orientation: [0, 0, 0, 0] is invalid",
        ),
        (
            r#""orientation": {"axis": [0, 0, 0], "angle": 1}"#,
            "bodies[0].orientation.axis: [0, 0, 0] is invalid",
        ),
        (r#""friction": -0.1"#, "bodies[0].friction: -0.1 is invalid"),
        (r#""restitution": 1.5"#, "bodies[0].restitution: 1.5 is invalid"),
        (
            r#""kind": "static", "density": 5"#,
            "bodies[0].density: a static body has no mass",
        ),
        (
            r#""kind": "static", "angular_velocity": [0, 1, 0]"#,
            "bodies[0].angular_velocity: a static body does not move",
        ),
        (
            r#""fracture": {"model": "glass"}"#,
            "bodies[0].fracture.model: \"glass\" is invalid: expected one of energized, prescored, modes, bem, sph",
        ),
        (
            r#""fracture": {"threshold": 1}"#,
            "bodies[0].fracture: missing field `model`",
        ),
        (r#""fracture": 3"#, "bodies[0].fracture: 3 is invalid"),
        (r#""name": "x""#, "bodies[0].name: duplicate field `name`"),
    ] {
        assert_starts(error(&one_body(&format!("{sphere}, {members}"))), prefix);
    }
    assert_starts(
        error(&one_body(r#""shape": {"half_space": {"normal": [0, 1, 0]}}"#)),
        "bodies[0].kind: \"dynamic\" is invalid: expected \"static\" or \"kinematic\" for a half-space",
    );
    assert_starts(
        error(r#"{"dt": 0}"#),
        "dt: 0 is invalid: expected a time step in seconds",
    );
    assert_starts(error(r#"{"frames": 0}"#), "frames: 0 is invalid");
    assert_starts(
        error(r#"{"bodies": [{"name": " ", "shape": {"sphere": {"radius": 1}}}]}"#),
        "bodies[0].name: \" \" is invalid: expected a non-empty name",
    );
    assert_starts(
        error(
            r#"{"bodies": [{"name": "a", "shape": {"sphere": {"radius": 1}}},
                {"name": "a", "shape": {"sphere": {"radius": 2}}}]}"#,
        ),
        "bodies[1].name: \"a\" is already the name of bodies[0]",
    );
}

#[test]
fn scene_file_raw_nan_density_names_its_path() {
    // JSON cannot spell NaN, but a scene built in code can: validation still names the member.
    let value: serde_json::Value =
        serde_json::from_str(&one_body(r#""shape": {"sphere": {"radius": 1}}, "density": 1"#)).unwrap();
    let mut raw: raw::RawScene = json_path::from_value(&value).unwrap();
    raw.bodies[0].density = Some(f64::NAN);
    let message = validate::validate(raw, Path::new(".")).unwrap_err().to_string();
    assert_starts(message, "bodies[0].density: NaN is invalid");
}

#[test]
fn scene_file_joint_errors_name_their_path() {
    let scene = |joint: &str| {
        format!(
            r#"{{"bodies": [{{"name": "a", "shape": {{"sphere": {{"radius": 1}}}}}},
                {{"name": "wall", "kind": "static", "shape": {{"cuboid": {{"half_extents": [1, 1, 1]}}}}}},
                {{"name": "floor", "kind": "static", "shape": {{"half_space": {{"normal": [0, 1, 0]}}}}}}],
                "joints": [{{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0]}}, {joint}]}}"#
        )
    };
    for (joint, prefix) in [
        (
            r#"{"type": "ball", "bodies": ["a", "nobody"], "anchor": [0, 0, 0]}"#,
            "joints[1].bodies[1]: no body is named \"nobody\"",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "a"], "anchor": [0, 0, 0]}"#,
            "joints[1].bodies[1]: \"a\" is joined to itself",
        ),
        (
            r#"{"type": "fixed", "bodies": ["wall", "floor"], "anchor": [0, 0, 0]}"#,
            "joints[1].bodies: neither body is dynamic",
        ),
        (
            r#"{"type": "hinge", "bodies": ["a", "wall"], "anchor": [0, 0, 0]}"#,
            "joints[1]: missing field `axis`",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "axis": [0, 1, 0]}"#,
            "joints[1].axis: only a hinge has an axis",
        ),
        (
            r#"{"type": "hinge", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "axis": [0, 0, 0]}"#,
            "joints[1].axis: [0, 0, 0] is invalid",
        ),
        (
            r#"{"type": "slider", "bodies": ["a", "wall"], "anchor": [0, 0, 0]}"#,
            "joints[1].type: unknown variant `slider`",
        ),
        (
            r#"{"type": "ball", "bodies": ["a"], "anchor": [0, 0, 0]}"#,
            "joints[1].bodies: invalid length 1",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "break_impulse": -1}"#,
            "joints[1].break_impulse: -1 is invalid",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {"erp": 0.2, "hertz": 3}}"#,
            "joints[1].softness: give exactly one pair",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {}}"#,
            "joints[1].softness: give exactly one pair",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {"damping": 3}}"#,
            "joints[1].softness: missing field `stiffness`",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {"erp": 1.5, "cfm": 0}}"#,
            "joints[1].softness.erp: 1.5 is invalid",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {"hertz": 0, "damping_ratio": 1}}"#,
            "joints[1].softness.hertz: 0 is invalid",
        ),
        (
            r#"{"type": "ball", "bodies": ["a", "wall"], "anchor": [0, 0, 0], "softness": {"stiffness": 1, "damping": -1}}"#,
            "joints[1].softness.damping: -1 is invalid",
        ),
    ] {
        assert_starts(error(&scene(joint)), prefix);
    }
}

#[test]
fn scene_file_mesh_errors_name_their_path() {
    let missing = error(&one_body(r#""shape": {"mesh": {"path": "no/such/mesh.obj"}}"#));
    assert_starts(
        missing.clone(),
        "bodies[0].shape.mesh.path: cannot access ./no/such/mesh.obj",
    );
    let open = one_body(&format!(r#""shape": {{"mesh": {{"path": "{SUZANNE}"}}}}"#));
    let message = error(&open);
    assert_starts(message.clone(), "bodies[0].shape.mesh.path: ");
    assert!(
        message.contains("does not bound a solid") && message.contains("open (boundary) edges"),
        "{message}"
    );
    // The same open surface is fine as static scenery, and has no mass.
    let scenery = one_body(&format!(
        r#""kind": "static", "shape": {{"mesh": {{"path": "{SUZANNE}"}}}}"#
    ));
    let scene = parse_scene(&scenery, Path::new(".")).unwrap();
    assert_eq!(scene.total_mass(), 0.0);
    assert_starts(
        error(&one_body(&format!(
            r#""shape": {{"mesh": {{"path": "{SPOT}", "scale": 0}}}}"#
        ))),
        "bodies[0].shape.mesh.scale: 0 is invalid",
    );
    // spot's volume is 0.7183 (shared/meshes/README.md): the mass follows from it.
    let spot = parse_scene(
        &one_body(&format!(r#""shape": {{"mesh": {{"path": "{SPOT}"}}}}, "density": 10"#)),
        Path::new("."),
    )
    .unwrap();
    assert!((spot.total_mass() - 7.183).abs() < 0.001, "{}", spot.total_mass());
    // Through a file, the error also names the file.
    let message = load_scene("/no/such/scene.json").unwrap_err().to_string();
    assert_starts(message, "/no/such/scene.json: file: cannot read it");
}

#[test]
fn scene_file_energized_model_and_breakable_joints_read_check_and_round_trip() {
    let text = r#"{
      "energized": {"alpha": 1.5, "reinjection": "momentum_conserving", "group_interval": 0.3, "seed": 11},
      "bodies": [
        {"name": "a", "shape": {"cuboid": {"half_extents": [0.1, 0.1, 0.1]}}},
        {"name": "b", "shape": {"cuboid": {"half_extents": [0.1, 0.1, 0.1]}}, "position": [0.2, 0, 0]}
      ],
      "joints": [
        {"type": "fixed", "bodies": ["a", "b"], "anchor": [0.1, 0, 0],
         "softness": {"hertz": 10, "damping_ratio": 1}, "breakable": {"threshold": 4, "group": 2}},
        {"type": "ball", "bodies": ["a", "b"], "anchor": [0.1, 0.1, 0], "breakable": {"threshold": 0.5}}
      ]
    }"#;
    let scene = parse_scene(text, Path::new(".")).unwrap();
    let model = scene.energized.unwrap();
    assert_eq!(
        (model.alpha, model.reinjection, model.group_interval, model.seed),
        (1.5, Reinjection::MomentumConserving, 0.3, 11)
    );
    assert_eq!(
        scene.joints[0].breakable,
        Some(Breakable {
            threshold: 4.0,
            group: Some(2)
        })
    );
    assert_eq!(scene.joints[1].breakable.unwrap().group, None);
    assert_eq!(scene.energized_model(), Some(model));
    let again = parse_scene(&scene.to_json_string(), Path::new(".")).unwrap();
    assert_eq!(again, scene);

    // Defaults: a breakable joint without an `energized` block gets the model's defaults; a scene
    // with neither needs no model.
    let bare = parse_scene(
        &text.replace(
            r#""energized": {"alpha": 1.5, "reinjection": "momentum_conserving", "group_interval": 0.3, "seed": 11},"#,
            "",
        ),
        Path::new("."),
    )
    .unwrap();
    assert_eq!(bare.energized, None);
    assert_eq!(bare.energized_model(), Some(EnergizedSettings::default()));
    let plain = parse_scene(&one_body(r#""shape": {"sphere": {"radius": 1}}"#), Path::new(".")).unwrap();
    assert_eq!(plain.energized_model(), None);

    // Bad values name their path.
    let with = |energized: &str| {
        error(&format!(
            r#"{{"energized": {energized}, "bodies": [{{"name": "a", "shape": {{"sphere": {{"radius": 1}}}}}}]}}"#
        ))
    };
    assert_starts(with(r#"{"alpha": -0.5}"#), "energized.alpha: -0.5 is invalid");
    assert_starts(
        with(r#"{"group_interval": -1}"#),
        "energized.group_interval: -1 is invalid",
    );
    assert_starts(
        with(r#"{"reinjection": "sideways"}"#),
        "energized.reinjection: unknown variant",
    );
    assert_starts(with(r#"{"alfa": 1}"#), "energized.alfa: unknown field");
    let joint = |member: &str| {
        error(&format!(
            r#"{{"bodies": [{{"name": "a", "shape": {{"sphere": {{"radius": 1}}}}}},
                            {{"name": "b", "shape": {{"sphere": {{"radius": 1}}}}}}],
                "joints": [{{"type": "fixed", "bodies": ["a", "b"], "anchor": [0, 0, 0], {member}}}]}}"#
        ))
    };
    assert_starts(
        joint(r#""breakable": {"threshold": 0}"#),
        "joints[0].breakable.threshold: 0 is invalid",
    );
    assert_starts(
        joint(r#""breakable": {"group": 1}"#),
        "joints[0].breakable: missing field `threshold`",
    );
    assert_starts(
        joint(r#""breakable": {"threshold": 1}, "break_impulse": 2"#),
        "joints[0].breakable: give break_impulse",
    );
}
