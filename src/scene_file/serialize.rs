//! Writing a [`SceneDescription`] back as a scene file: every member explicit, orientations as
//! quaternions, mesh paths as the file gave them.

use serde_json::Value;

use super::description::{
    BodyDescription, JointDescription, JointKind, MassDescription, Reinjection, SceneDescription, ShapeDescription,
    Softness,
};
use super::raw::{
    RawBody, RawBreakable, RawCapsule, RawCuboid, RawEnergized, RawHalfSpace, RawJoint, RawJointKind, RawKind, RawMesh,
    RawOrientation, RawReinjection, RawScene, RawShape, RawSoftness, RawSphere,
};
use crate::collision::Shape;
use crate::integrators::BodyKind;

impl SceneDescription {
    /// The scene as a JSON value in the scene-file format; reading it back (with the same base
    /// directory for mesh paths) gives this description again.
    pub fn to_json(&self) -> Value {
        let raw = RawScene {
            description: self.description.clone(),
            gravity: self.gravity.to_array(),
            dt: self.dt,
            frames: self.frames as u64,
            bodies: self.bodies.iter().map(raw_body).collect(),
            joints: self.joints.iter().map(|j| raw_joint(self, j)).collect(),
            energized: self.energized.map(|model| RawEnergized {
                alpha: model.alpha,
                reinjection: match model.reinjection {
                    Reinjection::PerBody => RawReinjection::PerBody,
                    Reinjection::MomentumConserving => RawReinjection::MomentumConserving,
                },
                group_interval: model.group_interval,
                seed: model.seed,
            }),
            prescored: self.prescored.clone().map(Value::Object),
        };
        // The raw types hold only strings, numbers, arrays and maps with string keys.
        serde_json::to_value(raw).unwrap_or(Value::Null)
    }

    /// The scene as pretty-printed scene-file text.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default()
    }
}

fn raw_body(body: &BodyDescription) -> RawBody {
    let shape = match &body.shape {
        ShapeDescription::Primitive(Shape::Sphere(s)) => RawShape::Sphere(RawSphere { radius: s.radius() }),
        ShapeDescription::Primitive(Shape::Cuboid(c)) => RawShape::Cuboid(RawCuboid {
            half_extents: c.half_extents().to_array(),
        }),
        ShapeDescription::Primitive(Shape::Capsule(c)) => RawShape::Capsule(RawCapsule {
            half_height: c.half_height(),
            radius: c.radius(),
        }),
        ShapeDescription::Primitive(Shape::HalfSpace(h)) => RawShape::HalfSpace(RawHalfSpace {
            normal: h.normal().to_array(),
            offset: h.offset(),
        }),
        ShapeDescription::Mesh(m) => RawShape::Mesh(RawMesh {
            path: m.source.clone(),
            scale: m.scale,
        }),
    };
    let (density, mass) = match body.mass {
        Some(MassDescription::Density(d)) => (Some(d), None),
        Some(MassDescription::Mass(m)) => (None, Some(m)),
        None => (None, None),
    };
    let fracture = body.fracture.as_ref().map(|f| {
        let mut members = serde_json::Map::new();
        members.insert("model".into(), Value::String(f.model.name().into()));
        members.extend(f.parameters.iter().map(|(k, v)| (k.clone(), v.clone())));
        Value::Object(members)
    });
    RawBody {
        name: body.name.clone(),
        shape,
        kind: match body.kind {
            BodyKind::Dynamic => RawKind::Dynamic,
            BodyKind::Static => RawKind::Static,
            BodyKind::Kinematic => RawKind::Kinematic,
        },
        density,
        mass,
        friction: body.friction,
        restitution: body.restitution,
        position: body.position.to_array(),
        orientation: RawOrientation::Quaternion(body.orientation.to_array()),
        linear_velocity: body.linear_velocity.to_array(),
        angular_velocity: body.angular_velocity.to_array(),
        fracture,
    }
}

fn raw_joint(scene: &SceneDescription, joint: &JointDescription) -> RawJoint {
    let (kind, axis) = match joint.kind {
        JointKind::Ball => (RawJointKind::Ball, None),
        JointKind::Fixed => (RawJointKind::Fixed, None),
        JointKind::Hinge { axis } => (RawJointKind::Hinge, Some(axis.to_array())),
    };
    let softness = joint.softness.map(|s| match s {
        Softness::ErpCfm { erp, cfm } => RawSoftness {
            erp: Some(erp),
            cfm: Some(cfm),
            ..RawSoftness::default()
        },
        Softness::StiffnessDamping { stiffness, damping } => RawSoftness {
            stiffness: Some(stiffness),
            damping: Some(damping),
            ..RawSoftness::default()
        },
        Softness::Frequency { hertz, damping_ratio } => RawSoftness {
            hertz: Some(hertz),
            damping_ratio: Some(damping_ratio),
            ..RawSoftness::default()
        },
    });
    RawJoint {
        name: joint.name.clone(),
        kind,
        bodies: joint.bodies.map(|i| scene.bodies[i].name.clone()),
        anchor: joint.anchor.to_array(),
        axis,
        softness,
        break_impulse: joint.break_impulse,
        breakable: joint.breakable.map(|rule| RawBreakable {
            threshold: rule.threshold,
            group: rule.group,
        }),
    }
}
