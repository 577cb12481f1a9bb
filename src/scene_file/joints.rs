//! Joints in scene files: body names resolved to indices, anchors and axes in world frame, and
//! softness given in exactly one of its three parametrizations.

use std::collections::HashMap;

use super::description::{BodyDescription, Breakable, JointDescription, JointKind, Softness};
use super::error::SceneError;
use super::json_path::JsonPath;
use super::raw::{RawJoint, RawJointKind, RawSoftness};
use super::validate::{finite_vector, non_negative, nonzero_vector, positive};
use crate::integrators::BodyKind;

/// Checks joint `raw` at `path` against the bodies already checked (`names` maps each body's name
/// to its index in `bodies`).
pub(crate) fn joint(
    path: &JsonPath,
    raw: RawJoint,
    names: &HashMap<String, usize>,
    bodies: &[BodyDescription],
) -> Result<JointDescription, SceneError> {
    let mut indices = [0; 2];
    for (k, name) in raw.bodies.iter().enumerate() {
        indices[k] = *names
            .get(name)
            .ok_or_else(|| SceneError::at(&path.key("bodies").index(k), format!("no body is named {name:?}")))?;
    }
    if indices[0] == indices[1] {
        return Err(SceneError::at(
            &path.key("bodies").index(1),
            format!(
                "{:?} is joined to itself: a joint needs two different bodies",
                raw.bodies[1]
            ),
        ));
    }
    if indices.iter().all(|i| bodies[*i].kind != BodyKind::Dynamic) {
        return Err(SceneError::at(
            &path.key("bodies"),
            "neither body is dynamic: a joint between bodies that cannot be pushed does nothing",
        ));
    }
    let anchor = finite_vector(&path.key("anchor"), raw.anchor, "a finite point in metres, world frame")?;
    let kind = match (raw.kind, raw.axis) {
        (RawJointKind::Hinge, Some(axis)) => JointKind::Hinge {
            axis: unit(nonzero_vector(
                &path.key("axis"),
                axis,
                "a non-zero, finite hinge axis",
            )?),
        },
        (RawJointKind::Hinge, None) => {
            return Err(SceneError::at(
                path,
                "missing field `axis`: a hinge needs its axis, world frame",
            ));
        }
        (_, Some(_)) => {
            return Err(SceneError::at(
                &path.key("axis"),
                "only a hinge has an axis: remove it or make the joint \"hinge\"",
            ));
        }
        (RawJointKind::Ball, None) => JointKind::Ball,
        (RawJointKind::Fixed, None) => JointKind::Fixed,
    };
    let softness = match &raw.softness {
        None => None,
        Some(s) => Some(softness(&path.key("softness"), s)?),
    };
    let break_impulse = match raw.break_impulse {
        None => None,
        Some(impulse) => Some(positive(
            &path.key("break_impulse"),
            impulse,
            "a positive impulse in newton seconds",
        )?),
    };
    let breakable = match &raw.breakable {
        None => None,
        Some(_) if break_impulse.is_some() => {
            return Err(SceneError::at(
                &path.key("breakable"),
                "give break_impulse (the engine removes the joint) or breakable (the energized model breaks \
                 it and gives its springs' energy back), not both",
            ));
        }
        Some(rule) => Some(Breakable {
            threshold: positive(
                &path.key("breakable").key("threshold"),
                rule.threshold,
                "a positive impulse in newton seconds",
            )?,
            group: rule.group,
        }),
    };
    Ok(JointDescription {
        name: raw.name,
        kind,
        bodies: indices,
        anchor,
        softness,
        break_impulse,
        breakable,
    })
}

/// `v` scaled to unit length, or `v` itself, bit for bit, when it is unit to round-off already (so
/// writing a scene and reading it back is exact).
fn unit(v: glam::DVec3) -> glam::DVec3 {
    let length = v.length();
    if (length - 1.0).abs() <= 4.0 * f64::EPSILON {
        v
    } else {
        v / length
    }
}

/// The one parametrization `raw` gives, range-checked.
fn softness(path: &JsonPath, raw: &RawSoftness) -> Result<Softness, SceneError> {
    const PAIRS: &str =
        "exactly one pair: {\"erp\", \"cfm\"}, {\"stiffness\", \"damping\"} or {\"hertz\", \"damping_ratio\"}";
    let groups = [
        [("erp", raw.erp), ("cfm", raw.cfm)],
        [("stiffness", raw.stiffness), ("damping", raw.damping)],
        [("hertz", raw.hertz), ("damping_ratio", raw.damping_ratio)],
    ];
    let given: Vec<usize> = (0..3).filter(|g| groups[*g].iter().any(|m| m.1.is_some())).collect();
    let [group] = given[..] else {
        return Err(SceneError::at(path, format!("give {PAIRS}")));
    };
    let [(name_a, a), (name_b, b)] = groups[group];
    let (Some(a), Some(b)) = (a, b) else {
        let (present, missing) = if a.is_some() {
            (name_a, name_b)
        } else {
            (name_b, name_a)
        };
        return Err(SceneError::at(
            path,
            format!("missing field `{missing}`: {present} comes with {missing}"),
        ));
    };
    Ok(match group {
        0 => {
            if !(a > 0.0 && a <= 1.0) {
                return Err(SceneError::invalid(
                    &path.key("erp"),
                    a,
                    "an error reduction parameter in (0, 1]",
                ));
            }
            Softness::ErpCfm {
                erp: a,
                cfm: non_negative(&path.key("cfm"), b, "a non-negative constraint force mixing")?,
            }
        }
        1 => Softness::StiffnessDamping {
            stiffness: positive(&path.key("stiffness"), a, "a positive stiffness in N/m")?,
            damping: non_negative(&path.key("damping"), b, "a non-negative damping in N s/m")?,
        },
        _ => Softness::Frequency {
            hertz: positive(&path.key("hertz"), a, "a positive frequency in Hz")?,
            damping_ratio: non_negative(&path.key("damping_ratio"), b, "a non-negative damping ratio")?,
        },
    })
}
