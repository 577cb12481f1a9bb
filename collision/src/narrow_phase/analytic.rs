//! Closed-form contacts for the pairs that have them: sphere-sphere, box-box (see [`box_box`]),
//! sphere-box and sphere-capsule (see [`ball`]), capsule-box and capsule-capsule (see
//! [`capsule`]), and sphere, capsule and box against a half-space. Exact depths and normals, no
//! particles.

use glam::DVec3;
use smallvec::SmallVec;

use super::ball::{self, BallResult};
use super::capsule::{self, CapsuleResult};
use super::{Collider, Contact, ContactManifold, FeatureId, box_box, reduce, shape_of};
use crate::pose::Pose;
use crate::shapes::{HalfSpace, Shape};

/// Writes the exact manifold into `manifold` (empty on entry) when the pair has a closed form, and
/// returns whether it has.
pub(super) fn collide(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    margin: f64,
    manifold: &mut ContactManifold,
) -> bool {
    let (Some(shape_a), Some(shape_b)) = (shape_of(a), shape_of(b)) else {
        return false;
    };
    let contacts: SmallVec<[Contact; 8]> = match (shape_a, shape_b) {
        (Shape::Sphere(sa), Shape::Sphere(sb)) => {
            let (ca, cb) = (pose_a.position, pose_b.position);
            let offset = ca - cb;
            let distance = offset.length();
            let depth = sa.radius() + sb.radius() - distance;
            if depth <= -margin {
                manifold.separation = -depth;
                return true;
            }
            // Concentric balls: any direction separates them; +y is the fixed choice.
            let normal = if distance > 0.0 { offset / distance } else { DVec3::Y };
            // Midway between B's surface point and A's surface point along the normal.
            let point = cb + normal * (sb.radius() - 0.5 * depth);
            smallvec::smallvec![Contact {
                point,
                normal,
                depth,
                feature: FeatureId::of_a(0),
            }]
        }
        (Shape::Sphere(ball), other @ (Shape::Cuboid(_) | Shape::Capsule(_))) => {
            match ball_against(pose_a.position, ball.radius(), other, pose_b, margin) {
                Some(BallResult::Touching(contact)) => smallvec::smallvec![contact],
                Some(BallResult::Apart(gap)) => {
                    manifold.separation = gap;
                    return true;
                }
                None => return false,
            }
        }
        (other @ (Shape::Cuboid(_) | Shape::Capsule(_)), Shape::Sphere(ball)) => {
            match ball_against(pose_b.position, ball.radius(), other, pose_a, margin) {
                // The ball is body B: the normal turns round to point from B to A.
                Some(BallResult::Touching(contact)) => smallvec::smallvec![swap_sides(contact)],
                Some(BallResult::Apart(gap)) => {
                    manifold.separation = gap;
                    return true;
                }
                None => return false,
            }
        }
        (Shape::Capsule(ca), Shape::Cuboid(cb)) => match capsule::against_cuboid(ca, pose_a, cb, pose_b, margin) {
            CapsuleResult::Touching(contacts) => contacts.into_iter().collect(),
            CapsuleResult::Apart(gap) => {
                manifold.separation = gap;
                return true;
            }
        },
        (Shape::Cuboid(ca), Shape::Capsule(cb)) => match capsule::against_cuboid(cb, pose_b, ca, pose_a, margin) {
            CapsuleResult::Touching(contacts) => contacts.into_iter().map(swap_sides).collect(),
            CapsuleResult::Apart(gap) => {
                manifold.separation = gap;
                return true;
            }
        },
        (Shape::Capsule(ca), Shape::Capsule(cb)) => match capsule::against_capsule(ca, pose_a, cb, pose_b, margin) {
            CapsuleResult::Touching(contacts) => contacts.into_iter().collect(),
            CapsuleResult::Apart(gap) => {
                manifold.separation = gap;
                return true;
            }
        },
        // Reduced already, in the reference face's plane.
        (Shape::Cuboid(ca), Shape::Cuboid(cb)) => {
            box_box::collide(ca, pose_a, cb, pose_b, margin, manifold);
            return true;
        }
        (_, Shape::HalfSpace(plane)) => match against_plane(shape_a, pose_a, plane, pose_b, margin, false) {
            Some((contacts, gap)) => {
                manifold.separation = gap;
                contacts
            }
            None => return false,
        },
        (Shape::HalfSpace(plane), _) => match against_plane(shape_b, pose_b, plane, pose_a, margin, true) {
            Some((contacts, gap)) => {
                manifold.separation = gap;
                contacts
            }
            None => return false,
        },
    };
    reduce::reduce_into(&contacts, manifold);
    true
}

/// A contact computed with the bodies' roles swapped, turned back: the normal points from B to A
/// again and the feature is body B's.
fn swap_sides(contact: Contact) -> Contact {
    Contact {
        normal: -contact.normal,
        feature: FeatureId::of_b(contact.feature.index()),
        ..contact
    }
}

/// A ball of `radius` m centred at `center` against `shape` (a box or a capsule) at `pose`.
/// `None` for other shapes.
fn ball_against(center: DVec3, radius: f64, shape: &Shape, pose: &Pose, margin: f64) -> Option<BallResult> {
    match shape {
        Shape::Cuboid(cuboid) => Some(ball::against_cuboid(center, radius, cuboid, pose, margin)),
        Shape::Capsule(capsule) => Some(ball::against_capsule(center, radius, capsule, pose, margin)),
        Shape::Sphere(_) | Shape::HalfSpace(_) => None,
    }
}

/// Contacts of `shape` against the half-space `plane`, and the shape's distance above the plane
/// when that is the margin or more (else zero); `None` for shapes without a closed form here.
/// `swapped` says the shape is body B.
fn against_plane(
    shape: &Shape,
    shape_pose: &Pose,
    plane: &HalfSpace,
    plane_pose: &Pose,
    margin: f64,
    swapped: bool,
) -> Option<(SmallVec<[Contact; 8]>, f64)> {
    let normal = plane_pose.orientation * plane.normal();
    let offset = normal.dot(plane_pose.position) + plane.offset();
    // Points of the shape (world), each with the radius of the ball around it that is the shape's
    // local piece: corners have radius 0, sphere and capsule centres their radius.
    let features: SmallVec<[(DVec3, f64); 8]> = match shape {
        Shape::Sphere(s) => smallvec::smallvec![(shape_pose.position, s.radius())],
        Shape::Capsule(c) => c
            .segment()
            .iter()
            .map(|p| (shape_pose.transform_point(*p), c.radius()))
            .collect(),
        Shape::Cuboid(c) => c
            .corners()
            .iter()
            .map(|p| (shape_pose.transform_point(*p), 0.0))
            .collect(),
        Shape::HalfSpace(_) => return Some((SmallVec::new(), 0.0)),
    };
    let mut contacts = SmallVec::new();
    // The least separation of the features: the shape's exact distance above the plane.
    let mut gap = f64::INFINITY;
    for (index, (center, radius)) in features.into_iter().enumerate() {
        let separation = normal.dot(center) - offset - radius;
        gap = gap.min(separation);
        if separation >= margin {
            continue;
        }
        let depth = -separation;
        // The shape's deepest point is `center - normal * radius`; the plane is `depth` above it.
        let point = center - normal * (radius - 0.5 * depth);
        let (n, feature) = if swapped {
            (-normal, FeatureId::of_b(index))
        } else {
            (normal, FeatureId::of_a(index))
        };
        contacts.push(Contact {
            point,
            normal: n,
            depth,
            feature,
        });
    }
    // The gap is reported only for a shape wholly beyond the margin (no contacts).
    Some((contacts, if gap >= margin { gap } else { 0.0 }))
}
