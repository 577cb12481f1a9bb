//! From the file's serde types to a [`SceneDescription`]: every value range-checked, meshes read,
//! names resolved, and every rejection naming the JSON path of the value at fault.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use glam::{DAffine3, DQuat, DVec3};
use serde_json::Value;

use super::description::{
    BodyDescription, EnergizedSettings, FractureDescription, FractureModel, MassDescription, MeshShape, Reinjection,
    SceneDescription, ShapeDescription,
};
use super::error::{SceneError, list};
use super::joints::joint;
use super::json_path::JsonPath;
use super::raw::{DEFAULT_DENSITY, RawBody, RawEnergized, RawKind, RawOrientation, RawReinjection, RawScene, RawShape};
use crate::collision::{
    BodyMassProperties, Capsule, Cuboid, GeometryError, HalfSpace, Shape, Sphere, TriMesh, topology,
};
use crate::integrators::BodyKind;

/// Longest accepted time step, s: anything longer is a unit mistake, not a simulation.
pub const MAX_DT: f64 = 1.0;
/// Most frames a scene may ask for: a day at 30 Hz.
pub const MAX_FRAMES: u64 = 30 * 86_400;
/// How far a written quaternion's length may be from 1: four decimals, as people type them.
pub const QUATERNION_TOLERANCE: f64 = 1e-4;

/// Checks `raw`, reading mesh files relative to `base`.
pub(crate) fn validate(raw: RawScene, base: &Path) -> Result<SceneDescription, SceneError> {
    let root = JsonPath::root();
    let gravity = finite_vector(&root.key("gravity"), raw.gravity, "a finite acceleration in m/s^2")?;
    if !(raw.dt.is_finite() && raw.dt > 0.0 && raw.dt <= MAX_DT) {
        return Err(SceneError::invalid(
            &root.key("dt"),
            raw.dt,
            "a time step in seconds, positive and at most 1",
        ));
    }
    if raw.frames == 0 || raw.frames > MAX_FRAMES {
        return Err(SceneError::invalid(
            &root.key("frames"),
            raw.frames,
            "a number of frames from 1 to 2592000 (a day at 30 Hz)",
        ));
    }
    let mut bodies = Vec::with_capacity(raw.bodies.len());
    let mut names: HashMap<String, usize> = HashMap::new();
    for (index, body) in raw.bodies.into_iter().enumerate() {
        let path = root.key("bodies").index(index);
        if let Some(first) = names.get(&body.name) {
            return Err(SceneError::at(
                &path.key("name"),
                format!(
                    "{:?} is already the name of bodies[{first}]: names must be unique",
                    body.name
                ),
            ));
        }
        names.insert(body.name.clone(), index);
        bodies.push(self::body(&path, body, base)?);
    }
    let mut joints = Vec::with_capacity(raw.joints.len());
    for (index, raw_joint) in raw.joints.into_iter().enumerate() {
        joints.push(joint(&root.key("joints").index(index), raw_joint, &names, &bodies)?);
    }
    let energized = match raw.energized {
        None => None,
        Some(model) => Some(energized(&root.key("energized"), &model)?),
    };
    let prescored = match raw.prescored {
        None => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => {
            return Err(SceneError::invalid(
                &root.key("prescored"),
                other,
                "an object of prescored-fracture settings",
            ));
        }
    };
    Ok(SceneDescription {
        description: raw.description,
        gravity,
        dt: raw.dt,
        frames: raw.frames as usize,
        bodies,
        joints,
        energized,
        prescored,
        base_directory: base.to_path_buf(),
    })
}

/// The energized model's settings at `path`, range-checked.
fn energized(path: &JsonPath, raw: &RawEnergized) -> Result<EnergizedSettings, SceneError> {
    Ok(EnergizedSettings {
        alpha: non_negative(
            &path.key("alpha"),
            raw.alpha,
            "a finite fraction >= 0 of the stored energy to give back (1: all of it)",
        )?,
        reinjection: match raw.reinjection {
            RawReinjection::PerBody => Reinjection::PerBody,
            RawReinjection::MomentumConserving => Reinjection::MomentumConserving,
        },
        group_interval: non_negative(
            &path.key("group_interval"),
            raw.group_interval,
            "a finite time in seconds >= 0 (0: no rate limit)",
        )?,
        seed: raw.seed,
    })
}

fn body(path: &JsonPath, raw: RawBody, base: &Path) -> Result<BodyDescription, SceneError> {
    if raw.name.trim().is_empty() {
        return Err(SceneError::invalid(
            &path.key("name"),
            format!("{:?}", raw.name),
            "a non-empty name",
        ));
    }
    let kind = match raw.kind {
        RawKind::Dynamic => BodyKind::Dynamic,
        RawKind::Static => BodyKind::Static,
        RawKind::Kinematic => BodyKind::Kinematic,
    };
    let shape = shape(&path.key("shape"), &raw.shape, base)?;
    let mass = match (kind, raw.density, raw.mass) {
        (BodyKind::Dynamic, Some(_), Some(_)) => {
            return Err(SceneError::at(&path.key("mass"), "give density or mass, not both"));
        }
        (BodyKind::Dynamic, Some(density), None) => {
            MassDescription::Density(positive(&path.key("density"), density, "a positive density in kg/m^3")?)
        }
        (BodyKind::Dynamic, None, Some(mass)) => {
            MassDescription::Mass(positive(&path.key("mass"), mass, "a positive mass in kilograms")?)
        }
        (BodyKind::Dynamic, None, None) => MassDescription::Density(DEFAULT_DENSITY),
        (_, density, mass) => {
            if density.is_some() || mass.is_some() {
                let member = if density.is_some() { "density" } else { "mass" };
                return Err(SceneError::at(
                    &path.key(member),
                    format!("a {} body has no mass: remove {member}", kind_name(kind)),
                ));
            }
            // Static and kinematic bodies have infinite mass.
            return finish(path, raw, kind, shape, None);
        }
    };
    if shape.volume().is_none() {
        // A dynamic body needs a finite volume; which member is at fault depends on the shape.
        return Err(match &shape {
            ShapeDescription::Mesh(mesh) => SceneError::at(
                &path.key("shape").key("mesh").key("path"),
                format!(
                    "{} does not bound a solid ({}): a dynamic body needs a closed mesh",
                    mesh.path.display(),
                    topology::inspect(&mesh.mesh)
                ),
            ),
            _ => SceneError::invalid(
                &path.key("kind"),
                "\"dynamic\"",
                "\"static\" or \"kinematic\" for a half-space, which has infinite volume",
            ),
        });
    }
    finish(path, raw, kind, shape, Some(mass))
}

/// The members every body kind shares.
fn finish(
    path: &JsonPath,
    raw: RawBody,
    kind: BodyKind,
    shape: ShapeDescription,
    mass: Option<MassDescription>,
) -> Result<BodyDescription, SceneError> {
    if !(raw.friction.is_finite() && raw.friction >= 0.0) {
        return Err(SceneError::invalid(
            &path.key("friction"),
            raw.friction,
            "a non-negative friction coefficient",
        ));
    }
    if !(0.0..=1.0).contains(&raw.restitution) {
        return Err(SceneError::invalid(
            &path.key("restitution"),
            raw.restitution,
            "a restitution coefficient from 0 to 1",
        ));
    }
    let position = finite_vector(&path.key("position"), raw.position, "a finite position in metres")?;
    let orientation = orientation(&path.key("orientation"), &raw.orientation)?;
    let linear_velocity = finite_vector(
        &path.key("linear_velocity"),
        raw.linear_velocity,
        "a finite velocity in m/s",
    )?;
    let angular_velocity = finite_vector(
        &path.key("angular_velocity"),
        raw.angular_velocity,
        "a finite angular velocity in rad/s",
    )?;
    if kind == BodyKind::Static {
        for (member, v) in [
            ("linear_velocity", linear_velocity),
            ("angular_velocity", angular_velocity),
        ] {
            if v != DVec3::ZERO {
                return Err(SceneError::at(
                    &path.key(member),
                    "a static body does not move: make it \"kinematic\" or remove the velocity",
                ));
            }
        }
    }
    let fracture = match &raw.fracture {
        None => None,
        Some(value) => Some(fracture(&path.key("fracture"), value)?),
    };
    Ok(BodyDescription {
        name: raw.name,
        shape,
        kind,
        mass,
        friction: raw.friction,
        restitution: raw.restitution,
        position,
        orientation,
        linear_velocity,
        angular_velocity,
        fracture,
    })
}

/// Turns a geometry error into a scene error at `path`.
fn geometry(path: &JsonPath) -> impl Fn(GeometryError) -> SceneError + '_ {
    move |e| SceneError::at(path, e.to_string())
}

fn shape(path: &JsonPath, raw: &RawShape, base: &Path) -> Result<ShapeDescription, SceneError> {
    let shape = match raw {
        RawShape::Sphere(s) => {
            let path = path.key("sphere");
            positive(&path.key("radius"), s.radius, "a positive radius in metres")?;
            Shape::Sphere(Sphere::try_new(s.radius).map_err(geometry(&path))?)
        }
        RawShape::Cuboid(c) => {
            let path = path.key("cuboid").key("half_extents");
            if !c.half_extents.iter().all(|h| h.is_finite() && *h > 0.0) {
                return Err(SceneError::invalid(
                    &path,
                    list(&c.half_extents),
                    "three positive half extents in metres",
                ));
            }
            Shape::Cuboid(Cuboid::try_new(DVec3::from_array(c.half_extents)).map_err(geometry(&path))?)
        }
        RawShape::Capsule(c) => {
            let path = path.key("capsule");
            if !(c.half_height.is_finite() && c.half_height >= 0.0) {
                return Err(SceneError::invalid(
                    &path.key("half_height"),
                    c.half_height,
                    "a non-negative half height in metres",
                ));
            }
            positive(&path.key("radius"), c.radius, "a positive radius in metres")?;
            Shape::Capsule(Capsule::try_new(c.half_height, c.radius).map_err(geometry(&path))?)
        }
        RawShape::HalfSpace(h) => {
            let path = path.key("half_space");
            let normal = nonzero_vector(&path.key("normal"), h.normal, "a non-zero, finite outward normal")?;
            if !h.offset.is_finite() {
                return Err(SceneError::invalid(
                    &path.key("offset"),
                    h.offset,
                    "a finite distance in metres",
                ));
            }
            Shape::HalfSpace(HalfSpace::try_new(normal, h.offset).map_err(geometry(&path))?)
        }
        RawShape::Mesh(m) => {
            let path = path.key("mesh");
            positive(&path.key("scale"), m.scale, "a positive scale factor")?;
            let file = base.join(&m.path);
            let mesh = TriMesh::load(&file).map_err(geometry(&path.key("path")))?;
            let mesh = mesh.transformed(DAffine3::from_scale(DVec3::splat(m.scale)));
            let volume = match topology::inspect(&mesh).is_solid() {
                true => Some(
                    BodyMassProperties::from_mesh(&mesh, 1.0)
                        .map_err(geometry(&path.key("path")))?
                        .volume,
                ),
                // Open surfaces are fine for static scenery; `body` rejects them for dynamic ones.
                false => None,
            };
            return Ok(ShapeDescription::Mesh(MeshShape {
                source: m.path.clone(),
                path: file,
                scale: m.scale,
                mesh: Arc::new(mesh),
                volume,
            }));
        }
    };
    Ok(ShapeDescription::Primitive(shape))
}

fn orientation(path: &JsonPath, raw: &RawOrientation) -> Result<DQuat, SceneError> {
    match raw {
        RawOrientation::Quaternion(q) => {
            let quaternion = DQuat::from_array(*q);
            let length = quaternion.length();
            if !(quaternion.is_finite() && (length - 1.0).abs() <= QUATERNION_TOLERANCE) {
                return Err(SceneError::invalid(
                    path,
                    list(q),
                    &format!(
                        "a unit quaternion [x, y, z, w] (this one has length {length}), or {{\"axis\": [x, y, z], \"angle\": radians}}"
                    ),
                ));
            }
            // Normalize what people typed to four decimals, but keep a quaternion that is already
            // unit to round-off bit for bit, so writing a scene and reading it back is exact.
            Ok(if (length - 1.0).abs() <= 4.0 * f64::EPSILON {
                quaternion
            } else {
                quaternion / length
            })
        }
        RawOrientation::AxisAngle(a) => {
            let axis = nonzero_vector(&path.key("axis"), a.axis, "a non-zero, finite rotation axis")?;
            if !a.angle.is_finite() {
                return Err(SceneError::invalid(
                    &path.key("angle"),
                    a.angle,
                    "a finite angle in radians",
                ));
            }
            Ok(DQuat::from_axis_angle(axis.normalize(), a.angle))
        }
    }
}

fn fracture(path: &JsonPath, value: &Value) -> Result<FractureDescription, SceneError> {
    let Value::Object(members) = value else {
        return Err(SceneError::invalid(
            path,
            value,
            "an object with a \"model\" member and the model's parameters",
        ));
    };
    let names: Vec<&str> = FractureModel::ALL.iter().map(|m| m.name()).collect();
    let expected = format!("one of {}", names.join(", "));
    let model = match members.get("model") {
        None => {
            return Err(SceneError::at(path, format!("missing field `model`: {expected}")));
        }
        Some(Value::String(name)) => FractureModel::from_name(name),
        Some(_) => None,
    };
    let model = model.ok_or_else(|| SceneError::invalid(&path.key("model"), &members["model"], &expected))?;
    let parameters = members
        .iter()
        .filter(|(k, _)| k.as_str() != "model")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(FractureDescription { model, parameters })
}

pub(crate) fn kind_name(kind: BodyKind) -> &'static str {
    match kind {
        BodyKind::Dynamic => "dynamic",
        BodyKind::Static => "static",
        BodyKind::Kinematic => "kinematic",
    }
}

/// `value` when it is finite and positive.
/// `value` when it is finite and at least 0; otherwise an error at `path` saying `expected`.
pub(crate) fn non_negative(path: &JsonPath, value: f64, expected: &str) -> Result<f64, SceneError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(SceneError::invalid(path, value, expected))
    }
}

pub(crate) fn positive(path: &JsonPath, value: f64, expected: &str) -> Result<f64, SceneError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SceneError::invalid(path, value, expected))
    }
}

pub(crate) fn finite_vector(path: &JsonPath, v: [f64; 3], expected: &str) -> Result<DVec3, SceneError> {
    let vector = DVec3::from_array(v);
    if vector.is_finite() {
        Ok(vector)
    } else {
        Err(SceneError::invalid(path, list(&v), expected))
    }
}

pub(crate) fn nonzero_vector(path: &JsonPath, v: [f64; 3], expected: &str) -> Result<DVec3, SceneError> {
    let vector = DVec3::from_array(v);
    let length = vector.length();
    if length.is_finite() && length > 0.0 {
        Ok(vector)
    } else {
        Err(SceneError::invalid(path, list(&v), expected))
    }
}
