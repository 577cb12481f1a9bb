//! The fracture-modes model (Sellan 2023, `fracture::modes`) from a scene file: bodies whose
//! `fracture` block names the `modes` model.
//!
//! ```text
//! bodies[i].shape: {"mesh": {"path": "meshes/spot.obj", "scale": 1}}
//! bodies[i].fracture: {
//!   "model": "modes",
//!   "asset": "spot.modes",     // written by `shatter modes precompute`, relative to the scene
//!   "threshold": 50,           // N s: contact impulses above this are projected on the modes
//!   "toughness": 20,           // N s: neighbouring pieces separate at this projected jump
//!   "level_set_cells": 64,     // the resolution the asset was computed at (these defaults
//!   "tet_cells": 18            // are `shatter modes precompute`'s)
//! }
//! ```
//!
//! A modes body must be a dynamic mesh body. Its tets are rebuilt from its (scaled) surface at
//! the given resolution and must be the ones the asset was computed on: a different surface,
//! scale or resolution is refused by the asset's fingerprint check, naming the path. Fragments
//! share the body's mass exactly (their density is the body's mass over the tets' volume).

use std::sync::Arc;

use crate::collision::Pose;
use crate::engine::{BodyId, World};
use crate::fracture::fragments::FragmentResolution;
use crate::fracture::modes::{ModesAsset, ModesFracture, ModesFractureSettings, ModesShape};
use crate::integrators::BodyKind;
use crate::modes_precompute::{TetResolution, shape_tets};
use crate::scene_file::{FractureModel, JsonPath, SceneDescription, SceneError, ShapeDescription};

use super::prescored::{check_keys, number, whole_in};
use super::{MESH_LEVEL_SET_CELLS, particle_spacing};

/// The modes model for `scene`, with every body whose fracture block names it made breakable
/// (`ids[i]` is body `i`'s handle); `None` when no body uses it. Fails naming the JSON path of
/// the first bad parameter, a body that is not a dynamic mesh, or an asset that cannot be read or
/// belongs to other tets.
pub fn modes_model(
    scene: &SceneDescription,
    world: &World,
    ids: &[BodyId],
) -> Result<Option<ModesFracture>, SceneError> {
    let users = scene.bodies_using(FractureModel::Modes);
    if users.is_empty() {
        return Ok(None);
    }
    let mut model = ModesFracture::new(ModesFractureSettings::default());
    for i in users {
        let body = &scene.bodies[i];
        let path = JsonPath::root().key("bodies").index(i).key("fracture");
        let parameters = &body.fracture.as_ref().expect("a modes body").parameters;
        check_keys(
            &path,
            parameters,
            &["asset", "threshold", "toughness", "level_set_cells", "tet_cells"],
        )?;
        let ShapeDescription::Mesh(file) = &body.shape else {
            return Err(SceneError::at(&path, "a modes body must have a mesh shape".to_string()));
        };
        if body.kind != BodyKind::Dynamic {
            return Err(SceneError::at(&path, "a modes body must be dynamic".to_string()));
        }
        let threshold = number(&path, parameters, "threshold", None)?;
        let toughness = number(&path, parameters, "toughness", None)?;
        let defaults = TetResolution::default();
        let resolution = TetResolution {
            level_set_cells: whole_in(&path, parameters, "level_set_cells", defaults.level_set_cells, 1..=4096)?,
            tet_cells: whole_in(&path, parameters, "tet_cells", defaults.tet_cells, 1..=4096)?,
        };
        let asset_path = match parameters.get("asset") {
            Some(serde_json::Value::String(name)) => scene.base_directory.join(name),
            Some(other) => {
                return Err(SceneError::invalid(
                    &path.key("asset"),
                    other,
                    "the path of a modes file",
                ));
            }
            None => {
                return Err(SceneError::at(
                    &path.key("asset"),
                    "missing: the path of a modes file".to_string(),
                ));
            }
        };
        let tets = shape_tets(&file.mesh, resolution).map_err(|e| SceneError::at(&path, e.to_string()))?;
        let asset =
            ModesAsset::load(&asset_path, &tets).map_err(|e| SceneError::at(&path.key("asset"), e.to_string()))?;
        let view = world.body(ids[i]).map_err(|e| SceneError::at(&path, e.to_string()))?;
        let tet_volume: f64 = tets.volumes().iter().sum();
        let density = view.mass.mass() / tet_volume;
        let size = file.mesh.bounds().map_or(glam::DVec3::ONE, |b| b.size());
        let resolution = FragmentResolution {
            cells: MESH_LEVEL_SET_CELLS,
            particle_spacing: particle_spacing(size),
        };
        let shape = ModesShape::new(tets, asset.projector, density, resolution)
            .map_err(|e| SceneError::at(&path, e.to_string()))?;
        // The surface's frame sits where the file placed it: at the body's position and
        // orientation as given (the engine then put the body frame at the centre of mass).
        let mesh_pose = Pose::new(body.position, body.orientation);
        model
            .make_breakable(world, ids[i], Arc::new(shape), &mesh_pose, threshold, toughness)
            .map_err(|e| SceneError::at(&path, format!("body {:?}: {e}", body.name)))?;
    }
    Ok(Some(model))
}
