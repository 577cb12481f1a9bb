//! The `shatter` binary end to end: exit statuses and reports of `mesh`, `check`, `run`, `info`,
//! the default run, `export-sample` and the spin-drift study, each checked against the library it reports on.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use shatter::collision::{TriMesh, topology};
use shatter::scene_file::load_scene;

const SPOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/meshes/spot.obj");
const SUZANNE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/meshes/suzanne.obj");

fn shatter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shatter"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the shatter binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("shatter-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory
}

/// The number after `label` on its line of `report`.
fn number_after(report: &str, label: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} in {report}"));
    let value = line.trim_start()[label.len()..].split_whitespace().next().unwrap();
    value.parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn cli_mesh_reports_a_solid_and_exits_0() {
    let output = shatter(&["mesh", SPOT]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{report}{}", text(&output.stderr));
    let mesh = TriMesh::load(SPOT).unwrap();
    assert_eq!(number_after(&report, "vertices:") as usize, mesh.vertices().len());
    assert_eq!(number_after(&report, "triangles:") as usize, mesh.triangles().len());
    assert_eq!(number_after(&report, "components:"), 1.0);
    // shared/meshes/README.md: closed, genus 0, volume 0.7183.
    assert!((number_after(&report, "volume:") - 0.7183).abs() < 1e-4, "{report}");
    assert!((number_after(&report, "surface area:") - mesh.surface_area()).abs() < 1e-12);
    assert!(report.contains("closed (2-manifold):   yes") && report.contains("consistently oriented: yes"));
    assert!(report.contains("verdict: bounds a solid"), "{report}");
}

#[test]
fn cli_mesh_reports_an_open_surface_and_exits_1() {
    let output = shatter(&["mesh", SUZANNE]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{report}");
    let defects = topology::inspect(&TriMesh::load(SUZANNE).unwrap());
    assert!(defects.boundary_edges > 0);
    assert_eq!(
        number_after(&report, "boundary (open) edges:") as usize,
        defects.boundary_edges
    );
    assert_eq!(
        number_after(&report, "non-manifold edges:") as usize,
        defects.non_manifold_edges
    );
    assert_eq!(number_after(&report, "components:") as usize, defects.components);
    assert!(report.contains("closed (2-manifold):   no"), "{report}");
    assert!(report.contains("verdict: does not bound a solid"), "{report}");
}

#[test]
fn cli_mesh_missing_or_malformed_files_exit_2() {
    let output = shatter(&["mesh", "no/such/mesh.obj"]);
    assert_eq!(output.status.code(), Some(2));
    let error = text(&output.stderr);
    assert!(error.contains("no/such/mesh.obj"), "{error}");
    assert!(output.stdout.is_empty());

    let directory = scratch("malformed");
    let bad = directory.join("bad.obj");
    std::fs::write(&bad, "v 0 0 0\nv 1 0 0\nf 1 2 7\n").unwrap();
    let output = shatter(&["mesh", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = text(&output.stderr);
    assert!(error.contains("bad.obj, line 3"), "{error}");
    let output = shatter(&["mesh", "mesh.off"]);
    assert_eq!(output.status.code(), Some(2));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn cli_check_example_scenes() {
    for name in ["wall_and_ball.json", "pyramid.json"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name);
        let output = shatter(&["check", path.to_str().unwrap()]);
        let report = text(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{name}: {}", text(&output.stderr));
        let scene = load_scene(&path).unwrap();
        assert_eq!(number_after(&report, "bodies:") as usize, scene.bodies.len());
        assert_eq!(number_after(&report, "joints:") as usize, scene.joints.len());
        let mass = number_after(&report, "total mass (dynamic bodies):");
        assert!((mass - scene.total_mass()).abs() <= 1e-12 * mass, "{report}");
    }
}

#[test]
fn cli_check_rejects_a_scene_naming_the_path() {
    let directory = scratch("check");
    let scene = directory.join("bad.json");
    std::fs::write(
        &scene,
        r#"{"bodies": [{"name": "a", "shape": {"cuboid": {"half_extents": [1, 1, 1]}}},
            {"name": "b", "shape": {"sphere": {"radius": 0}}}]}"#,
    )
    .unwrap();
    let output = shatter(&["check", scene.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let error = text(&output.stderr);
    assert!(
        error.contains("bad.json: bodies[1].shape.sphere.radius: 0 is invalid"),
        "{error}"
    );
    let output = shatter(&["check", directory.join("missing.json").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("missing.json"));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn cli_export_sample_writes_glb_and_obj() {
    let directory = scratch("export");
    let glb = directory.join("sample.glb");
    let output = shatter(&["export-sample", "--out", glb.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let bytes = std::fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len()
    );

    let frames = directory.join("frames");
    let output = shatter(&["export-sample", "--format", "obj", "--out", frames.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(std::fs::read_dir(&frames).unwrap().count(), 60);
    TriMesh::load(frames.join("frame_00059.obj")).unwrap();

    let output = shatter(&["export-sample", "--format", "fbx"]);
    assert_eq!(output.status.code(), Some(2));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn cli_spin_drift_flags_work_as_a_subcommand() {
    let directory = scratch("spin-drift");
    let out = directory.join("study");
    let output = shatter(&[
        "spin-drift",
        "--bodies",
        "3",
        "--seconds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let csv = std::fs::read_to_string(out.join("spin_drift.csv")).unwrap();
    assert!(csv.lines().count() > 1);
    assert!(out.join("spin_drift.svg").exists());
    let output = shatter(&["spin-drift", "--bodies", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("expected a positive whole number"));
    std::fs::remove_dir_all(&directory).unwrap();
}

/// The JSON chunk of a `.glb` file, after checking its header (glTF 2.0 section 4.4).
fn glb_json(bytes: &[u8]) -> serde_json::Value {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(word(4), 2, "version");
    assert_eq!(word(8), bytes.len(), "header length");
    assert_eq!(&bytes[16..20], b"JSON");
    serde_json::from_slice(&bytes[20..20 + word(12)]).unwrap()
}

/// Node names and the number of keyframes of the animation's first sampler.
fn nodes_and_keyframes(json: &serde_json::Value) -> (Vec<String>, u64) {
    let nodes = json["nodes"].as_array().unwrap();
    let names = nodes.iter().map(|n| n["name"].as_str().unwrap().to_string()).collect();
    let input = &json["animations"][0]["samplers"][0]["input"];
    let keyframes = json["accessors"][input.as_u64().unwrap() as usize]["count"]
        .as_u64()
        .unwrap();
    (names, keyframes)
}

#[test]
fn cli_run_writes_a_glb_with_a_node_per_body_and_a_frame_per_step() {
    let directory = scratch("run");
    let scene_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/pyramid.json");
    let output = shatter(&[
        "run",
        scene_path.to_str().unwrap(),
        "--frames",
        "4",
        "--out",
        directory.to_str().unwrap(),
    ]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{report}{}", text(&output.stderr));
    let scene = load_scene(&scene_path).unwrap();
    let (names, keyframes) = nodes_and_keyframes(&glb_json(&std::fs::read(directory.join("pyramid.glb")).unwrap()));
    let expected: Vec<String> = scene.bodies.iter().map(|b| b.name.clone()).collect();
    assert_eq!(names, expected);
    // 4 steps: the initial state and one frame after each step.
    assert_eq!(keyframes, 5);
    assert!(report.contains("steps: 4 of"), "{report}");
    assert!(report.contains("5 frames recorded"), "{report}");
    assert!(report.contains("energy at start: kinetic"), "{report}");
    assert!(report.contains("wall time per step:"), "{report}");
    // Not a terminal: no progress bar in the output.
    assert!(!report.contains("eta"), "{report}");

    let frames = directory.join("obj");
    let output = shatter(&[
        "run",
        scene_path.to_str().unwrap(),
        "--frames",
        "2",
        "--format",
        "obj",
        "--out",
        frames.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(std::fs::read_dir(frames.join("pyramid")).unwrap().count(), 3);

    let output = shatter(&["run", "no/such/scene.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("no/such/scene.json"));
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn cli_default_runs_the_built_in_scene() {
    let directory = scratch("default");
    let output = shatter(&["--frames", "8", "--out", directory.to_str().unwrap()]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{report}{}", text(&output.stderr));
    let path = directory.join("default.glb");
    assert!(report.contains(&format!("wrote {}", path.display())), "{report}");
    // The ball reaches the wall within the first few frames and the wall breaks.
    assert!(report.contains("bodies broken: 1 into"), "{report}");
    let fragments = number_after(&report, "bodies broken: 1 into") as usize;
    let (names, keyframes) = nodes_and_keyframes(&glb_json(&std::fs::read(&path).unwrap()));
    let scene = shatter::scenes::shatter_wall();
    assert_eq!(names.len(), scene.bodies.len() + fragments);
    assert!(names.iter().any(|n| n == "ball"));
    assert_eq!(keyframes, 9);
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn cli_info_prints_bodies_mass_and_energies() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/wall_and_ball.json");
    let output = shatter(&["info", path.to_str().unwrap()]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{report}{}", text(&output.stderr));
    let scene = load_scene(&path).unwrap();
    assert_eq!(number_after(&report, "bodies:") as usize, scene.bodies.len());
    assert!(report.contains("(49 dynamic, 1 static, 0 kinematic)"), "{report}");
    let mass = number_after(&report, "total mass:");
    assert!((mass - scene.total_mass()).abs() <= 1e-12 * mass, "{report}");
    // Only the ball moves at first: 1/2 m |v|^2, m = 7850 kg/m^3 * 4/3 pi (0.25 m)^3.
    let ball = 7850.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.25f64.powi(3);
    let kinetic = 0.5 * ball * (12.0f64 * 12.0 + 1.5 * 1.5);
    assert!((number_after(&report, "initial kinetic energy:") - kinetic).abs() < 1e-9 * kinetic);
    // Potential m g y summed over the dynamic bodies.
    let potential: f64 = scene
        .bodies
        .iter()
        .filter_map(|b| Some(b.mass_kg()? * 9.81 * b.position.y))
        .sum();
    assert!((number_after(&report, "initial potential energy:") - potential).abs() < 1e-9 * potential);
}

/// `shatter run` on a scene with a boundary-element body: the glass slab breaks on landing, the
/// run prints the event table (one event, its cuts, a piece more than cuts, momentum kept to
/// round-off) and writes the crack walls beside the recording as an OBJ whose triangles are all
/// inside the slab's material-frame box.
#[test]
fn cli_run_bem_scene_reports_its_fracture_events_and_writes_the_cracks() {
    let directory = scratch("run_bem");
    let scene_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/bem_slab.json");
    let output = shatter(&[
        "run",
        scene_path.to_str().unwrap(),
        "--frames",
        "20",
        "--out",
        directory.to_str().unwrap(),
    ]);
    let report = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{report}{}", text(&output.stderr));
    assert!(
        report.contains("boundary-element fracture: 1 events, 1 broke a body"),
        "{report}"
    );
    let row = report
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("slab"))
        .unwrap_or_else(|| panic!("no event row for the slab: {report}"));
    let columns: Vec<&str> = row.split_whitespace().collect();
    // time, body, triangles, contacts, iterations, cracks, sub-steps, cuts, pieces, ...,
    // momentum error: every cut through the slab's section adds a piece (two cracks cut it in
    // three); the slab is meshed at its scene's 5 cm edge.
    let (cuts, pieces): (usize, usize) = (columns[7].parse().unwrap(), columns[8].parse().unwrap());
    let triangles: usize = columns[2].parse().unwrap();
    assert!((100..2000).contains(&triangles), "{row}");
    assert!(cuts >= 1 && pieces == cuts + 1, "{row}");
    let error: f64 = columns[columns.len() - 1].parse().unwrap();
    assert!(error < 1e-12, "{row}");
    let obj = std::fs::read_to_string(directory.join("bem_slab_cracks.obj")).unwrap();
    let corners: Vec<[f64; 3]> = obj
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    assert!(!corners.is_empty());
    let half = [0.25, 0.05, 0.15];
    for c in &corners {
        assert!((0..3).all(|k| c[k].abs() <= half[k] + 1e-9), "{c:?}");
    }
    assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count() * 3, corners.len());
    std::fs::remove_dir_all(&directory).unwrap();
}
