//! The SPH fracture model (Chen 2014, `fracture::sph`) from a scene file: bodies whose
//! `fracture` block names the `sph` model.
//!
//! ```text
//! bodies[i].shape: {"cuboid": {...}} or {"mesh": {...}}
//! bodies[i].fracture: {
//!   "model": "sph",
//!   "threshold": 5,            // N s: a contact impulse above this stresses the body
//!   "tensile_strength": 3e6,   // Pa: the Rankine threshold, where a crack starts
//!   "crack_radius": 0.1,       // m: links crossing a crack plane this near its origin are cut
//!   "contact_radius": 0.05,    // m: the patch a contact pushes (default: the crack radius)
//!   "young": 1e10,             // Pa (default 10 GPa)
//!   "poisson": 0.2,            // (default 0.2)
//!   "subdivision": true,       // split particles 1-to-12 along cracks (default true)
//!   "max_level": 1,            // how many times a particle may be split (default 1)
//!   "cells": 12,               // a cuboid's tets: lattice boxes along its longest side
//!   "level_set_cells": 64,     // a mesh's tets: level-set cells and tet lattice cubes
//!   "tet_cells": 18            //   along its longest side (`shatter modes precompute`'s)
//! }
//! ```
//!
//! An SPH body must be dynamic, with a cuboid or mesh shape. It keeps the collider the scene
//! gave it until it breaks; its fragments get colliders from their particles' surfaces. Their
//! density is the body's mass over the tets' volume, so the pieces share its mass exactly.

use crate::collision::{Pose, Shape};
use crate::engine::{BodyId, World};
use crate::fracture::fragments::FragmentResolution;
use crate::fracture::sph::scenes::box_solid;
use crate::fracture::sph::{ParticleSolid, SphFracture, SphFractureSettings, SphMaterial};
use crate::integrators::BodyKind;
use crate::modes_precompute::{TetResolution, shape_tets};
use crate::scene_file::{FractureModel, JsonPath, SceneDescription, SceneError, ShapeDescription};

use super::prescored::{check_keys, number, whole_in};
use super::{MESH_LEVEL_SET_CELLS, particle_spacing};

/// Every member an `sph` fracture block may have.
const KEYS: [&str; 11] = [
    "threshold",
    "tensile_strength",
    "crack_radius",
    "contact_radius",
    "young",
    "poisson",
    "subdivision",
    "max_level",
    "cells",
    "level_set_cells",
    "tet_cells",
];

/// The SPH model for `scene`, with every body whose fracture block names it made breakable
/// (`ids[i]` is body `i`'s handle); `None` when no body uses it. Fails naming the JSON path of
/// the first bad parameter or a body that is not a dynamic cuboid or mesh.
pub fn sph_model(scene: &SceneDescription, world: &World, ids: &[BodyId]) -> Result<Option<SphFracture>, SceneError> {
    let users = scene.bodies_using(FractureModel::Sph);
    if users.is_empty() {
        return Ok(None);
    }
    let mut model = SphFracture::new(SphFractureSettings::default());
    for i in users {
        let body = &scene.bodies[i];
        let path = JsonPath::root().key("bodies").index(i).key("fracture");
        let parameters = &body.fracture.as_ref().expect("an sph body").parameters;
        check_keys(&path, parameters, &KEYS)?;
        if body.kind != BodyKind::Dynamic {
            return Err(SceneError::at(&path, "an sph body must be dynamic".to_string()));
        }
        let whole = |key: &str, default: usize, range| whole_in(&path, parameters, key, default, range);
        let flag = |key: &str, default: bool| -> Result<bool, SceneError> {
            match parameters.get(key) {
                None => Ok(default),
                Some(serde_json::Value::Bool(b)) => Ok(*b),
                Some(other) => Err(SceneError::invalid(&path.key(key), other, "true or false")),
            }
        };
        let threshold = number(&path, parameters, "threshold", None)?;
        let crack_radius = number(&path, parameters, "crack_radius", None)?;
        let material = SphMaterial {
            young: number(&path, parameters, "young", Some(1.0e10))?,
            poisson: number(&path, parameters, "poisson", Some(0.2))?,
            tensile_strength: number(&path, parameters, "tensile_strength", None)?,
            crack_radius,
            contact_radius: number(&path, parameters, "contact_radius", Some(crack_radius))?,
            subdivision: flag("subdivision", true)?,
            max_level: whole("max_level", 1, 0..=3)? as u8,
            density: 1.0,
        };
        let solid = match &body.shape {
            ShapeDescription::Primitive(Shape::Cuboid(cuboid)) => {
                box_solid(cuboid.half_extents(), whole("cells", 12, 1..=256)?)
                    .map_err(|e| SceneError::at(&path, e.to_string()))?
            }
            ShapeDescription::Mesh(file) => {
                let defaults = TetResolution::default();
                let resolution = TetResolution {
                    level_set_cells: whole("level_set_cells", defaults.level_set_cells, 4..=4096)?,
                    tet_cells: whole("tet_cells", defaults.tet_cells, 1..=4096)?,
                };
                let tets = shape_tets(&file.mesh, resolution).map_err(|e| SceneError::at(&path, e.to_string()))?;
                ParticleSolid::from_tet_mesh(&tets).map_err(|e| SceneError::at(&path, e.to_string()))?
            }
            _ => {
                let message = "an sph body must have a cuboid or mesh shape".to_string();
                return Err(SceneError::at(&path, message));
            }
        };
        let view = world.body(ids[i]).map_err(|e| SceneError::at(&path, e.to_string()))?;
        let material = SphMaterial {
            density: view.mass.mass() / solid.volume(),
            ..material
        };
        material.validate().map_err(|e| SceneError::at(&path, e.to_string()))?;
        let size = match &body.shape {
            ShapeDescription::Mesh(file) => file.mesh.bounds().map_or(glam::DVec3::ONE, |b| b.size()),
            ShapeDescription::Primitive(Shape::Cuboid(c)) => 2.0 * c.half_extents(),
            _ => glam::DVec3::ONE,
        };
        let resolution = FragmentResolution {
            cells: MESH_LEVEL_SET_CELLS / 2,
            particle_spacing: particle_spacing(size),
        };
        // The particles' frame sits where the file placed the shape: at the body's position and
        // orientation as given.
        let mesh_pose = Pose::new(body.position, body.orientation);
        model
            .make_breakable(world, ids[i], solid, material, &mesh_pose, threshold)
            .map_err(|e| SceneError::at(&path, format!("body {:?}: {e}", body.name)))?;
        model.set_resolution(ids[i], resolution);
    }
    Ok(Some(model))
}
