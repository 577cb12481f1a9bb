//! The `shatter` binary end to end: exit statuses and reports of `mesh`, `check`,
//! `export-sample` and the spin-drift run, each checked against the library it reports on.

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
fn cli_spin_drift_flags_work_with_and_without_the_subcommand() {
    let directory = scratch("spin-drift");
    for (args, sub) in [(vec!["spin-drift"], "a"), (vec![], "b")] {
        let out = directory.join(sub);
        let mut args = args;
        args.extend(["--bodies", "3", "--seconds", "1", "--out", out.to_str().unwrap()]);
        let output = shatter(&args);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        let csv = std::fs::read_to_string(out.join("spin_drift.csv")).unwrap();
        assert!(csv.lines().count() > 1);
        assert!(out.join("spin_drift.svg").exists());
    }
    let output = shatter(&["--bodies", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("expected a positive whole number"));
    std::fs::remove_dir_all(&directory).unwrap();
}
