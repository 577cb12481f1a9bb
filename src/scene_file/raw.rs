//! The scene file as written: serde types that mirror the JSON one to one, with the defaults of
//! omitted members. Nothing here is checked beyond types and member names (every struct denies
//! unknown members); `validate` turns these into a [`SceneDescription`](super::SceneDescription).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Default gravity, m/s^2: standard gravity along -Y.
pub const DEFAULT_GRAVITY: [f64; 3] = [0.0, -9.81, 0.0];
/// Default time step, s: one step per 30 Hz frame.
pub const DEFAULT_DT: f64 = 1.0 / 30.0;
/// Default number of frames: 10 s at 30 Hz.
pub const DEFAULT_FRAMES: u64 = 300;
/// Default density of dynamic bodies, kg/m^3 (water).
pub const DEFAULT_DENSITY: f64 = 1000.0;
/// Default Coulomb friction coefficient.
pub const DEFAULT_FRICTION: f64 = 0.5;
/// Default restitution: no bounce.
pub const DEFAULT_RESTITUTION: f64 = 0.0;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawScene {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    #[serde(default = "default_dt")]
    pub dt: f64,
    #[serde(default = "default_frames")]
    pub frames: u64,
    #[serde(default)]
    pub bodies: Vec<RawBody>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joints: Vec<RawJoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energized: Option<RawEnergized>,
    /// The prescored-fracture model's settings and named patterns, kept as given for the model
    /// to check when the world is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prescored: Option<Value>,
}

/// The energized-fracture model's settings (Li 2018).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawEnergized {
    #[serde(default = "one")]
    pub alpha: f64,
    #[serde(default)]
    pub reinjection: RawReinjection,
    #[serde(default)]
    pub group_interval: f64,
    #[serde(default)]
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawReinjection {
    #[default]
    PerBody,
    MomentumConserving,
}

/// A joint the energized model watches.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreakable {
    pub threshold: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBody {
    pub name: String,
    pub shape: RawShape,
    #[serde(default)]
    pub kind: RawKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    #[serde(default = "default_friction")]
    pub friction: f64,
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    #[serde(default)]
    pub position: [f64; 3],
    #[serde(default)]
    pub orientation: RawOrientation,
    #[serde(default)]
    pub linear_velocity: [f64; 3],
    #[serde(default)]
    pub angular_velocity: [f64; 3],
    /// Kept as a value: its `model` is checked by `validate`, its other members belong to the
    /// fracture method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fracture: Option<Value>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawKind {
    #[default]
    Dynamic,
    Static,
    Kinematic,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RawShape {
    Sphere(RawSphere),
    Cuboid(RawCuboid),
    Capsule(RawCapsule),
    HalfSpace(RawHalfSpace),
    Mesh(RawMesh),
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSphere {
    pub radius: f64,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawCuboid {
    pub half_extents: [f64; 3],
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapsule {
    pub half_height: f64,
    pub radius: f64,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawHalfSpace {
    pub normal: [f64; 3],
    #[serde(default)]
    pub offset: f64,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawMesh {
    pub path: String,
    #[serde(default = "one")]
    pub scale: f64,
}

/// A quaternion `[x, y, z, w]` (glTF's order) or `{"axis": [x, y, z], "angle": radians}`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "an orientation: a unit quaternion [x, y, z, w] or {\"axis\": [x, y, z], \"angle\": radians}"
)]
pub enum RawOrientation {
    Quaternion([f64; 4]),
    AxisAngle(RawAxisAngle),
}

impl Default for RawOrientation {
    fn default() -> Self {
        Self::Quaternion([0.0, 0.0, 0.0, 1.0])
    }
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawAxisAngle {
    pub axis: [f64; 3],
    pub angle: f64,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawJoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: RawJointKind,
    pub bodies: [String; 2],
    pub anchor: [f64; 3],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softness: Option<RawSoftness>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_impulse: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakable: Option<RawBreakable>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawJointKind {
    Ball,
    Fixed,
    Hinge,
}

/// Exactly one pair must be given; `validate` checks which.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSoftness {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erp: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cfm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hertz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_ratio: Option<f64>,
}

fn default_gravity() -> [f64; 3] {
    DEFAULT_GRAVITY
}

fn default_dt() -> f64 {
    DEFAULT_DT
}

fn default_frames() -> u64 {
    DEFAULT_FRAMES
}

fn default_friction() -> f64 {
    DEFAULT_FRICTION
}

fn default_restitution() -> f64 {
    DEFAULT_RESTITUTION
}

fn one() -> f64 {
    1.0
}
