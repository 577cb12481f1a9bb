//! Fracture modes from a scene file: `shatter modes precompute`'s asset loaded by a `modes` body,
//! which a ball then breaks. Every test name starts with `modes` so `cargo test --test
//! scene_modes modes` (or `cargo test modes`) selects them.

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
