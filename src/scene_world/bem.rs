//! The boundary-element fracture model (Zhu 2015, `fracture::bem`) from a scene file: bodies
//! whose `fracture` block names the `bem` model.
//!
//! ```text
//! bodies[i].shape: {"cuboid": {...}}, {"sphere": {...}} or {"mesh": {...}}
//! bodies[i].fracture: {
//!   "model": "bem",
//!   "threshold": 50,           // N s: a contact impulse above this loads the body (the screen)
//!   "initiate": 1e6,           // Pa: Rankine threshold where a crack starts (required)
//!   "propagate": 5e5,          // Pa: where a crack front moves on (default: half `initiate`)
//!   "young": 6e10,             // Pa (default 60 GPa, glass); or "lame_lambda" and "lame_mu"
//!   "poisson": 0.22,           //   (Pa, both) in place of "young" and "poisson"
//!   "edge": 0.05,              // m: the surface's target edge length (see below)
//!   "thickness": 0.002,        // m: crack thickness (default: a 25th of the edge)
//!   "contact_duration": 0.001, // s: a contact impulse I acts as the force I / duration
//!   "max_substeps": 60,        // most sub-steps of front motion in one event
//!   "substeps_per_solve": 0,   // sub-steps between stress solves on the cracked surface
//!                              //   (0: never, the fronts move in the uncracked stress)
//!   "crack_tips": false,       // fronts in the uncracked stress add their own tips' field
//!                              //   (`fracture::bem::crack::tip`; default false)
//!   "break_out": false,        // runs of a front that reach the far surface break out through
//!                              //   it, the rest running on (`fracture::bem::crack::breakout`)
//!   "ligament": 0.1,           // m: thickest ligament left ahead of a stopped front that breaks
//!                              //   (default two edges; a thin wall's thickness breaks through it)
//!   "piece_spacing": 0.025     // m: samples of the grid the pieces are found on when the
//! }                            //   surface's own cuts leave it whole (default half the edge,
//!                              //   `fracture::bem::crack::separate`)
//! ```
//!
//! The surface the stress is solved on: a cuboid becomes a box whose faces are a grid of about
//! `edge` squares (default: a twelfth of its longest side, at most half its shortest), a sphere
//! an icosphere whose edges are at most `edge` (default: a sixth of its radius), and a mesh file
//! is used as given, its triangles being the boundary elements (default `edge`: its median edge
//! length; give a mesh of even edges). The body's mass is shared by its fragments exactly: their
//! density is the body's mass over the surface's volume.

use glam::DVec3;

use crate::collision::{Pose, Shape, TriMesh};
use crate::engine::{BodyId, World};
use crate::fracture::bem::crack::{EventSettings, Rankine};
use crate::fracture::bem::meshes::{Grading, grid_box};
use crate::fracture::bem::{BemFracture, BemFractureSettings, BemMaterial, Elastic};
use crate::fracture::fragments::FragmentResolution;
use crate::integrators::BodyKind;
use crate::scene_file::{FractureModel, JsonPath, SceneDescription, SceneError, ShapeDescription};

use super::prescored::{check_keys, number, whole_in};
use super::{MESH_LEVEL_SET_CELLS, particle_spacing};

/// Every member a `bem` fracture block may have.
const KEYS: [&str; 16] = [
    "threshold",
    "initiate",
    "propagate",
    "young",
    "poisson",
    "lame_lambda",
    "lame_mu",
    "edge",
    "thickness",
    "contact_duration",
    "max_substeps",
    "substeps_per_solve",
    "crack_tips",
    "break_out",
    "ligament",
    "piece_spacing",
];

/// Young's modulus of the default material, Pa (soda-lime glass).
pub const DEFAULT_YOUNG: f64 = 60.0e9;
/// Poisson's ratio of the default material (soda-lime glass).
pub const DEFAULT_POISSON: f64 = 0.22;

/// The boundary-element model for `scene`, with every body whose fracture block names it made
/// breakable (`ids[i]` is body `i`'s handle); `None` when no body uses it. Fails naming the JSON
/// path of the first bad parameter, or of a body that is not a dynamic cuboid, sphere or mesh.
pub fn bem_model(scene: &SceneDescription, world: &World, ids: &[BodyId]) -> Result<Option<BemFracture>, SceneError> {
    let users = scene.bodies_using(FractureModel::Bem);
    if users.is_empty() {
        return Ok(None);
    }
    let mut model = BemFracture::new(BemFractureSettings::default());
    for i in users {
        let body = &scene.bodies[i];
        let path = JsonPath::root().key("bodies").index(i).key("fracture");
        let parameters = &body.fracture.as_ref().expect("a bem body").parameters;
        check_keys(&path, parameters, &KEYS)?;
        if body.kind != BodyKind::Dynamic {
            return Err(SceneError::at(&path, "a bem body must be dynamic".to_string()));
        }
        let get = |key: &str, default: Option<f64>| number(&path, parameters, key, default);
        let threshold = get("threshold", None)?;
        let elastic = elastic(&path, parameters)?;
        let initiate = get("initiate", None)?;
        let rankine = Rankine::try_new(initiate, get("propagate", Some(0.5 * initiate))?)
            .map_err(|e| SceneError::at(&path, e.to_string()))?;
        let edge = match parameters.get("edge") {
            Some(_) => get("edge", None)?,
            None => default_edge(&body.shape).ok_or_else(|| {
                SceneError::at(&path, "a bem body must have a cuboid, sphere or mesh shape".to_string())
            })?,
        };
        if !(edge.is_finite() && edge > 0.0) {
            return Err(SceneError::invalid(
                &path.key("edge"),
                edge,
                "a positive length in metres",
            ));
        }
        let mesh = surface(&body.shape, edge).map_err(|e| SceneError::at(&path, e))?;
        let mut event = EventSettings::new(elastic, rankine, edge, get("thickness", Some(edge / 25.0))?);
        event.max_substeps = whole_in(&path, parameters, "max_substeps", event.max_substeps, 0..=10_000)?;
        event.substeps_per_solve = whole_in(&path, parameters, "substeps_per_solve", 0, 0..=10_000)?;
        let flag = |key: &str, default: bool| match parameters.get(key) {
            None => Ok(default),
            Some(value) => value
                .as_bool()
                .ok_or_else(|| SceneError::invalid(&path.key(key), value, "true or false")),
        };
        event.crack_tips = flag("crack_tips", event.crack_tips)?;
        event.track.break_out = flag("break_out", event.track.break_out)?;
        event.ligament = get("ligament", Some(event.ligament))?;
        event.piece_spacing = get("piece_spacing", Some(event.piece_spacing))?;
        let view = world.body(ids[i]).map_err(|e| SceneError::at(&path, e.to_string()))?;
        let integrals = crate::collision::mass_properties::mesh_integrals(&mesh);
        let material = BemMaterial {
            contact_duration: get("contact_duration", Some(1.0e-3))?,
            ..BemMaterial::new(event, view.mass.mass() / integrals.volume)
        };
        material.validate().map_err(|e| SceneError::at(&path, e.to_string()))?;
        let resolution = FragmentResolution {
            cells: MESH_LEVEL_SET_CELLS / 2,
            particle_spacing: particle_spacing(mesh.bounds().map_or(DVec3::ONE, |b| b.size())),
        };
        // The surface's frame sits where the file placed the shape: at the body's position and
        // orientation as given.
        let mesh_pose = Pose::new(body.position, body.orientation);
        model
            .make_breakable(world, ids[i], mesh, material, &mesh_pose, threshold)
            .map_err(|e| SceneError::at(&path, format!("body {:?}: {e}", body.name)))?;
        model.set_resolution(ids[i], resolution);
    }
    Ok(Some(model))
}

/// The material from Young's modulus and Poisson's ratio, or from the two Lamé parameters
/// (`E = mu (3 lambda + 2 mu) / (lambda + mu)`, `nu = lambda / (2 (lambda + mu))`).
fn elastic(path: &JsonPath, parameters: &serde_json::Map<String, serde_json::Value>) -> Result<Elastic, SceneError> {
    let lame = ["lame_lambda", "lame_mu"].map(|k| parameters.contains_key(k));
    let engineering = ["young", "poisson"].map(|k| parameters.contains_key(k));
    let (young, poisson) = match (lame, engineering) {
        ([false, false], _) => (
            number(path, parameters, "young", Some(DEFAULT_YOUNG))?,
            number(path, parameters, "poisson", Some(DEFAULT_POISSON))?,
        ),
        ([true, true], [false, false]) => {
            let lambda = number(path, parameters, "lame_lambda", None)?;
            let mu = number(path, parameters, "lame_mu", None)?;
            (
                mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu),
                lambda / (2.0 * (lambda + mu)),
            )
        }
        _ => {
            let message = "give both lame_lambda and lame_mu, or young and poisson, not a mix";
            return Err(SceneError::at(path, message.to_string()));
        }
    };
    Elastic::try_new(young, poisson).map_err(|e| SceneError::at(path, e.to_string()))
}

/// The default target edge length for `shape` (m); `None` for shapes a bem body cannot have.
fn default_edge(shape: &ShapeDescription) -> Option<f64> {
    match shape {
        ShapeDescription::Primitive(Shape::Cuboid(c)) => {
            let size = 2.0 * c.half_extents();
            Some((size.max_element() / 12.0).min(0.5 * size.min_element()))
        }
        ShapeDescription::Primitive(Shape::Sphere(s)) => Some(s.radius() / 6.0),
        ShapeDescription::Mesh(file) => median_edge(&file.mesh),
        _ => None,
    }
}

/// The median edge length of `mesh` (m); `None` for a mesh without triangles.
fn median_edge(mesh: &TriMesh) -> Option<f64> {
    let v = mesh.vertices();
    let mut lengths: Vec<f64> = mesh
        .triangles()
        .iter()
        .flat_map(|t| (0..3).map(move |k| v[t[k] as usize].distance(v[t[(k + 1) % 3] as usize])))
        .collect();
    if lengths.is_empty() {
        return None;
    }
    lengths.sort_by(f64::total_cmp);
    Some(lengths[lengths.len() / 2])
}

/// Icosphere subdivisions beyond which a sphere's surface is not refined (20 480 triangles).
const MAX_SPHERE_SUBDIVISIONS: u32 = 5;

/// The closed surface the stress is solved on for `shape` at target edge `edge` (m), in the
/// shape's frame; the error says why there is none.
fn surface(shape: &ShapeDescription, edge: f64) -> Result<TriMesh, String> {
    match shape {
        ShapeDescription::Primitive(Shape::Cuboid(c)) => {
            grid_box(c.half_extents(), edge, Grading::Uniform).map_err(|e| e.to_string())
        }
        ShapeDescription::Primitive(Shape::Sphere(s)) => {
            // An icosahedron's edge is 1.0515 radii; each subdivision halves it.
            let mut subdivisions = 0;
            while 1.0515 * s.radius() / f64::from(1u32 << subdivisions) > edge && subdivisions < MAX_SPHERE_SUBDIVISIONS
            {
                subdivisions += 1;
            }
            Ok(TriMesh::icosphere(s.radius(), subdivisions))
        }
        ShapeDescription::Mesh(file) => Ok((*file.mesh).clone()),
        _ => Err("a bem body must have a cuboid, sphere or mesh shape".to_string()),
    }
}
