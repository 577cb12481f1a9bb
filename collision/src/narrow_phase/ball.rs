//! Closed-form contacts of a ball against a box and against a capsule: one contact at the point of
//! the other shape nearest the ball's centre, with the exact depth and normal.
//!
//! Both reduce to "a ball against a point set": find the point `q` of the other shape nearest the
//! ball's centre `c`, with the outward normal there. Outside the shape the normal is
//! `(c - q) / |c - q|` and the surfaces are `|c - q| - r` apart; a centre inside a box is pushed
//! out through the nearest face.

use glam::DVec3;

use super::{Contact, FeatureId};
use crate::pose::Pose;
use crate::shapes::{Capsule, Cuboid, SignedDistance};

/// The nearest point of a shape's surface to a ball's centre, world frame.
struct Nearest {
    /// The surface point, m.
    point: DVec3,
    /// Unit outward normal of the shape at `point`, pointing toward the ball's centre.
    normal: DVec3,
    /// Signed distance of the ball's centre from the surface along `normal`, m (negative inside).
    distance: f64,
}

/// What a ball-against-shape test found: a contact (touching, or within the margin) or the gap
/// between the surfaces when it is the margin or more.
pub(super) enum BallResult {
    /// The contact, its normal from the shape toward the ball, its feature the ball's.
    Touching(Contact),
    /// The surfaces are this far apart, m (at least the margin).
    Apart(f64),
}

/// A ball of `radius` m centred at `center` (world) against the box `cuboid` at `pose`.
pub(super) fn against_cuboid(center: DVec3, radius: f64, cuboid: &Cuboid, pose: &Pose, margin: f64) -> BallResult {
    // The box's own signed distance: outside, its gradient points from the nearest surface point
    // to the centre; inside, out through the nearest face (ties to the lowest axis).
    let local = pose.inverse_transform_point(center);
    let (distance, normal) = cuboid.distance_and_gradient(local);
    let nearest = Nearest {
        point: local - normal * distance,
        normal,
        distance,
    };
    contact(
        radius,
        Nearest {
            point: pose.transform_point(nearest.point),
            normal: pose.orientation * nearest.normal,
            distance: nearest.distance,
        },
        margin,
    )
}

/// A ball of `radius` m centred at `center` (world) against `capsule` at `pose`.
pub(super) fn against_capsule(center: DVec3, radius: f64, capsule: &Capsule, pose: &Pose, margin: f64) -> BallResult {
    let [p, q] = capsule.segment().map(|end| pose.transform_point(end));
    let axis = q - p;
    let t = ((center - p).dot(axis) / axis.length_squared()).clamp(0.0, 1.0);
    let core = p + axis * t;
    let offset = center - core;
    let length = offset.length();
    // A centre on the capsule's axis: any direction perpendicular to it separates; the capsule's
    // own x axis is the fixed choice.
    let normal = if length > 0.0 {
        offset / length
    } else {
        pose.orientation * DVec3::X
    };
    contact(
        radius,
        Nearest {
            point: core + normal * capsule.radius(),
            normal,
            distance: length - capsule.radius(),
        },
        margin,
    )
}

/// The contact of a ball with the surface whose nearest point to its centre is `nearest`: the
/// point midway between the two surfaces along the normal.
fn contact(radius: f64, nearest: Nearest, margin: f64) -> BallResult {
    let depth = radius - nearest.distance;
    if depth <= -margin {
        return BallResult::Apart(-depth);
    }
    BallResult::Touching(Contact {
        point: nearest.point - nearest.normal * (0.5 * depth),
        normal: nearest.normal,
        depth,
        feature: FeatureId::of_a(0),
    })
}
