//! Scene files: a world described in JSON, read into a validated [`SceneDescription`].
//!
//! # Format
//!
//! SI units throughout; world frame right-handed with Y up. Every member below except a body's
//! `name` and `shape` and a joint's `type`, `bodies` and `anchor` may be left out, and then takes
//! the default shown. A member that is not listed here is an error (so a typo never silently
//! becomes a default).
//!
//! ```json
//! {
//!   "description": "free text",                  // optional
//!   "gravity": [0, -9.81, 0],                    // m/s^2
//!   "dt": 0.03333333333333333,                   // s, in (0, 1]: one step per frame
//!   "frames": 300,                               // 1 to 2592000
//!   "bodies": [
//!     {
//!       "name": "ball",                          // unique, non-empty
//!       "shape": {"sphere": {"radius": 0.5}},    // exactly one of the shapes below
//!       "kind": "dynamic",                       // "dynamic" | "static" | "kinematic"
//!       "density": 1000,                         // kg/m^3, or "mass": kg (not both); dynamic only
//!       "friction": 0.5,                         // Coulomb coefficient, >= 0
//!       "restitution": 0,                        // in [0, 1]
//!       "position": [0, 0, 0],                   // m: where the shape's reference point sits
//!       "orientation": [0, 0, 0, 1],             // unit quaternion [x, y, z, w], or
//!                                                // {"axis": [x, y, z], "angle": radians}
//!       "linear_velocity": [0, 0, 0],            // m/s, world frame
//!       "angular_velocity": [0, 0, 0],           // rad/s, world frame
//!       "fracture": {"model": "prescored", ...}  // optional, see below
//!     }
//!   ],
//!   "joints": [
//!     {
//!       "name": "door hinge",                    // optional
//!       "type": "hinge",                         // "ball" | "fixed" | "hinge"
//!       "bodies": ["frame", "door"],             // two different body names
//!       "anchor": [0, 1, 0],                     // m, world frame, at the initial poses
//!       "axis": [0, 1, 0],                       // hinge only: world frame, normalized on reading
//!       "softness": {"hertz": 30, "damping_ratio": 1},  // optional, see below
//!       "break_impulse": 50,                     // N s, optional: unbreakable when absent
//!       "breakable": {"threshold": 4, "group": 0}  // optional, not with break_impulse: see below
//!     }
//!   ],
//!   "energized": {                               // optional, see below
//!     "alpha": 1,                                // >= 0: share of a broken joint's energy given back
//!     "reinjection": "per_body",                 // "per_body" | "momentum_conserving"
//!     "group_interval": 0,                       // s, >= 0: one break per group per interval
//!     "seed": 0                                  // directions drawn under pure tension
//!   },
//!   "prescored": {                               // optional, see below
//!     "debris": "merge",                         // "merge" | "remove" | "keep"
//!     "patterns": {"dartboard": {"radial": {"rings": 4, "spokes": 10}}}
//!   }
//! }
//! ```
//!
//! Shapes, in the body's own frame:
//! - `{"sphere": {"radius": r}}`, centred on the body's position;
//! - `{"cuboid": {"half_extents": [hx, hy, hz]}}`, centred;
//! - `{"capsule": {"half_height": h, "radius": r}}`: the points within `r` of the segment from
//!   `(0, -h, 0)` to `(0, h, 0)`;
//! - `{"half_space": {"normal": [nx, ny, nz], "offset": d}}`: the points `x` with `n . x <= d`
//!   (`n` normalized on reading); static or kinematic only, since its volume is infinite;
//! - `{"mesh": {"path": "meshes/rock.obj", "scale": 1}}`: an OBJ, STL or PLY file, its path
//!   relative to the scene file's directory (or absolute), scaled uniformly; its origin is the
//!   body's reference point. A dynamic body's mesh must bound a solid; static and kinematic
//!   bodies may use open surfaces.
//!
//! Orientation: a quaternion in glTF's order `[x, y, z, w]` whose length is 1 to within 1e-4
//! (four decimals, as people type them; it is normalized on reading), or an axis (any non-zero
//! length) and an angle in radians, right-handed about the axis.
//!
//! Mass: dynamic bodies take `density` (kg/m^3) or `mass` (kg), default density 1000 kg/m^3;
//! static and kinematic bodies have infinite mass, and giving either is an error.
//!
//! Fracture: an object whose `model` is one of `energized`, `prescored`, `modes`, `bem`, `sph`;
//! its other members are that method's parameters, kept as given
//! ([`FractureDescription::parameters`]) for the method to check. A `prescored` body (Su 2009,
//! `fracture::prescored`) breaks when a contact impulse on it exceeds its `threshold` (N s,
//! required), with its `pattern` (a name from the top-level `prescored.patterns`, or a pattern
//! object) aligned on the impact; `cells` (default 100) is the lattice resolution along an
//! analytic shape's longest side. The top-level `prescored` block (kept as given too) holds the
//! model's settings and the named patterns; `scene_world::prescored` documents every member. A
//! `modes` body (Sellan 2023, `fracture::modes`) is a dynamic mesh body that breaks along the
//! modes in its `asset` (written by `shatter modes precompute`) when a contact impulse exceeds
//! its `threshold` (N s), separating pieces at its `toughness` (N s); `scene_world::modes`
//! documents every member. An `sph` body (Chen 2014, `fracture::sph`) is a dynamic cuboid or
//! mesh body made of tet-bound particles that cracks where a contact's stress exceeds its
//! `tensile_strength` (Pa); `scene_world::sph` documents every member. A `bem` body (Zhu 2015,
//! `fracture::bem`) is a dynamic cuboid, sphere or mesh body whose surface stress under a contact
//! impulse above its `threshold` (N s) is solved by the boundary-element method; cracks start
//! above its `initiate` stress (Pa) and run on above `propagate`, tracked on its surface mesh;
//! `scene_world::bem` documents every member (elasticity as Young's modulus and Poisson's ratio
//! or as the Lamé parameters, crack thickness, contact duration).
//!
//! Joint anchors and hinge axes are in the world frame at the initial poses (the engine converts
//! them into each body's frame once), because that is how one places a joint by eye. Softness is
//! one pair of: `{"erp", "cfm"}` (ODE's per-step error reduction in (0, 1] and constraint force
//! mixing >= 0), `{"stiffness", "damping"}` (N/m and N s/m, > 0 and >= 0), or
//! `{"hertz", "damping_ratio"}` (natural frequency > 0 and damping ratio >= 0, 1 is critical).
//!
//! Breaking joints, two ways. `break_impulse` (N s) has the engine remove the joint in the step
//! one of its rows carries more impulse, giving nothing back. `breakable` has the scene's
//! energized-fracture model (Li 2018, `fracture::energized`) watch the joint: it breaks when a
//! row's impulse in one step exceeds `threshold` (N s; N m s for angular rows), and the energy its
//! soft rows held comes back as motion, `alpha` times it; `group` (a non-negative integer,
//! optional) puts it in a rate-limit group, of which at most one joint breaks per
//! `group_interval` seconds. Rigid rows hold no energy: give breakable joints a `softness`. The
//! `energized` block sets the model (`per_body` is the paper's impulse on each body at the joint;
//! `momentum_conserving` an equal and opposite pair that keeps linear and angular momentum); a
//! scene with breakable joints and no block gets these defaults.
//!
//! # Errors
//!
//! Every rejection names the JSON path of the value at fault and what would be valid, e.g.
//! `bodies[3].shape.sphere.radius: -1 is invalid: expected a positive radius in metres`, or
//! `bodies[0].colour: unknown field ...`. Text that is not JSON at all is reported by line and
//! column.

mod description;
mod duplicates;
mod error;
mod joints;
mod json_path;
mod raw;
mod serialize;
#[cfg(test)]
mod tests;
mod validate;

use std::path::Path;

pub use description::{
    BodyDescription, Breakable, EnergizedSettings, FractureDescription, FractureModel, JointDescription, JointKind,
    MassDescription, MeshShape, Reinjection, SceneDescription, ShapeDescription, Softness,
};
pub use error::SceneError;
pub use json_path::JsonPath;
pub use raw::{DEFAULT_DENSITY, DEFAULT_DT, DEFAULT_FRAMES, DEFAULT_FRICTION, DEFAULT_GRAVITY, DEFAULT_RESTITUTION};
pub use validate::{MAX_DT, MAX_FRAMES, QUATERNION_TOLERANCE};

/// Reads a scene from JSON `text`, with mesh paths relative to `base_directory`.
pub fn parse_scene(text: &str, base_directory: &Path) -> Result<SceneDescription, SceneError> {
    let syntax = |e: serde_json::Error| {
        // serde_json's message ends with " at line L column C"; the location goes first instead.
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        SceneError {
            file: None,
            location: format!("line {} column {}", e.line(), e.column()),
            message,
        }
    };
    if let Some((path, key)) = duplicates::find_duplicate_member(text).map_err(syntax)? {
        return Err(SceneError::at(
            &path,
            format!("duplicate field `{key}`: a member may appear only once in an object"),
        ));
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(syntax)?;
    let raw: raw::RawScene = json_path::from_value(&value).map_err(|e| SceneError {
        file: None,
        location: e.path.unwrap_or_default().to_string(),
        message: e.message,
    })?;
    validate::validate(raw, base_directory)
}

/// Reads the scene file at `path`; mesh paths in it are relative to its directory. Every error
/// names the file.
pub fn load_scene(path: impl AsRef<Path>) -> Result<SceneDescription, SceneError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| SceneError {
        file: Some(path.to_path_buf()),
        location: "file".into(),
        message: format!("cannot read it: {e}"),
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    parse_scene(&text, base).map_err(|e| e.in_file(path))
}
