//! Closed-form contacts of a capsule against a box and against another capsule.
//!
//! A capsule is the set of points within its radius of a segment, so every contact is a ball of
//! that radius centred on the segment touching the other shape (ball.rs). What remains is which
//! segment points to use:
//! - the deepest one: the segment point nearest the other shape (for a box, the minimum of the
//!   box's signed distance along the segment, a convex function of the segment parameter, found by
//!   golden-section search; for a capsule, the closest points of the two segments in closed form);
//! - and, so that a capsule lying on a face or along another capsule rests on two points and does
//!   not rock, the ends of the part of the segment that lies over the same face (the segment
//!   clipped to the face's rectangle) or alongside the other segment (each segment's end points
//!   projected onto the other), when they are within the margin too.
//!
//! Each contact's feature names the point: 0 and 1 the ends of the clipped or projected segment
//! (lower segment parameter first), 2 the deepest point when it is used alone.

use glam::DVec3;
use smallvec::SmallVec;

use super::ball::{self, BallResult};
use super::{Contact, FeatureId};
use crate::pose::Pose;
use crate::shapes::{Capsule, Cuboid, SignedDistance};

/// Golden-section iterations of the search for the deepest segment point against a box: the
/// bracket shrinks by 0.618 each time, so 80 leave 1e-17 of the segment (below round-off).
const GOLDEN_ITERATIONS: usize = 80;

/// Cosine above which two contact normals count as the same face (about 0.8 degrees).
const SAME_NORMAL: f64 = 0.9999;

/// The capsule's contacts, normals from the other shape toward the capsule, features the
/// capsule's; or the gap between the surfaces when it is the margin or more.
pub(super) enum CapsuleResult {
    /// One or two contacts.
    Touching(SmallVec<[Contact; 2]>),
    /// The surfaces are this far apart, m (at least the margin).
    Apart(f64),
}

/// The capsule `capsule` at `pose` against the box `cuboid` at `box_pose`.
pub(super) fn against_cuboid(
    capsule: &Capsule,
    pose: &Pose,
    cuboid: &Cuboid,
    box_pose: &Pose,
    margin: f64,
) -> CapsuleResult {
    let [p, q] = capsule.segment().map(|end| pose.transform_point(end));
    let radius = capsule.radius();
    let half = cuboid.half_extents();
    let distance = |t: f64| cuboid.distance(box_pose.inverse_transform_point(p.lerp(q, t)));
    let t = deepest_parameter(distance);
    let deepest = match ball::against_cuboid(p.lerp(q, t), radius, cuboid, box_pose, margin) {
        BallResult::Touching(contact) => contact,
        BallResult::Apart(gap) => return CapsuleResult::Apart(gap),
    };
    // Is the deepest point's nearest feature a face of the box? Then clip the segment to it.
    let axes = [DVec3::X, DVec3::Y, DVec3::Z].map(|axis| box_pose.orientation * axis);
    let face = axes
        .iter()
        .enumerate()
        .find(|(_, axis)| deepest.normal.dot(**axis).abs() > SAME_NORMAL)
        .map(|(index, _)| index);
    let mut contacts: SmallVec<[Contact; 2]> = SmallVec::new();
    if let Some(axis) = face {
        let normal = axes[axis] * deepest.normal.dot(axes[axis]).signum();
        let plane_offset = normal.dot(box_pose.position) + half[axis];
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let local = [p, q].map(|end| box_pose.inverse_transform_point(end));
        if let Some((t0, t1)) = clip_to_rectangle(local, [u, v], [half[u], half[v]]) {
            for (feature, t) in [(0, t0), (1, t1)] {
                let centre = p.lerp(q, t);
                let depth = radius - (normal.dot(centre) - plane_offset);
                if depth > -margin {
                    contacts.push(Contact {
                        point: centre - normal * (radius - 0.5 * depth),
                        normal,
                        depth,
                        feature: FeatureId::of_a(feature),
                    });
                }
            }
        }
    }
    finish(contacts, deepest, radius)
}

/// Capsule `a` at `pose_a` against capsule `b` at `pose_b`; contacts' features are `a`'s.
pub(super) fn against_capsule(a: &Capsule, pose_a: &Pose, b: &Capsule, pose_b: &Pose, margin: f64) -> CapsuleResult {
    let [p, q] = a.segment().map(|end| pose_a.transform_point(end));
    let [r, s] = b.segment().map(|end| pose_b.transform_point(end));
    let (t, _) = closest_segment_parameters(p, q, r, s);
    let deepest = match ball::against_capsule(p.lerp(q, t), a.radius(), b, pose_b, margin) {
        BallResult::Touching(contact) => contact,
        BallResult::Apart(gap) => return CapsuleResult::Apart(gap),
    };
    // The part of each segment alongside the other: a's ends, and b's ends projected onto a.
    let axis = q - p;
    let along = |point: DVec3| ((point - p).dot(axis) / axis.length_squared()).clamp(0.0, 1.0);
    // The overlap of a's parameter range with b's shadow on it.
    let (low, high) = (along(r).min(along(s)), along(r).max(along(s)));
    let mut contacts: SmallVec<[Contact; 2]> = SmallVec::new();
    for (feature, t) in [(0, low), (1, high)] {
        if let BallResult::Touching(contact) = ball::against_capsule(p.lerp(q, t), a.radius(), b, pose_b, margin)
            && contact.normal.dot(deepest.normal) > SAME_NORMAL
        {
            contacts.push(Contact {
                feature: FeatureId::of_a(feature),
                ..contact
            });
        }
    }
    finish(contacts, deepest, a.radius())
}

/// The manifold from the clipped or projected segment's end contacts: both when they are apart
/// (a segment lying along the other shape), one when they coincide (a degenerate overlap), and the
/// deepest point alone when neither end touched.
fn finish(mut contacts: SmallVec<[Contact; 2]>, deepest: Contact, radius: f64) -> CapsuleResult {
    if contacts.len() == 2 && (contacts[0].point - contacts[1].point).length() <= 1e-9 * radius {
        contacts.truncate(1);
    }
    if contacts.is_empty() {
        contacts.push(Contact {
            feature: FeatureId::of_a(2),
            ..deepest
        });
    }
    CapsuleResult::Touching(contacts)
}

/// The parameter in `[0, 1]` where the convex function `f` is least, by golden-section search,
/// the ends checked as well (a minimum at an end is exact).
fn deepest_parameter(f: impl Fn(f64) -> f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut low, mut high) = (0.0, 1.0);
    let mut x1 = high - ratio * (high - low);
    let mut x2 = low + ratio * (high - low);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..GOLDEN_ITERATIONS {
        if f1 <= f2 {
            high = x2;
            x2 = x1;
            f2 = f1;
            x1 = high - ratio * (high - low);
            f1 = f(x1);
        } else {
            low = x1;
            x1 = x2;
            f1 = f2;
            x2 = low + ratio * (high - low);
            f2 = f(x2);
        }
    }
    let middle = 0.5 * (low + high);
    [0.0, 1.0]
        .into_iter()
        .fold((middle, f(middle)), |best, t| {
            let value = f(t);
            if value < best.1 { (t, value) } else { best }
        })
        .0
}

/// The parameters `(t0, t1)` of the segment `ends` (box frame) whose projections onto the
/// coordinate axes `axes` lie within `[-half, half]` on both: the segment clipped to the face's
/// rectangle, seen along the face normal. `None` when no part of it lies over the face.
fn clip_to_rectangle(ends: [DVec3; 2], axes: [usize; 2], half: [f64; 2]) -> Option<(f64, f64)> {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (axis, limit) in axes.into_iter().zip(half) {
        let (start, delta) = (ends[0][axis], ends[1][axis] - ends[0][axis]);
        if delta == 0.0 {
            if start.abs() > limit {
                return None;
            }
            continue;
        }
        let (mut enter, mut leave) = ((-limit - start) / delta, (limit - start) / delta);
        if enter > leave {
            core::mem::swap(&mut enter, &mut leave);
        }
        t0 = t0.max(enter);
        t1 = t1.min(leave);
    }
    (t0 <= t1).then_some((t0, t1))
}

/// Parameters `(s, t)` of the closest points of the segments `p + s (q - p)` and
/// `r + t (u - r)`, both in `[0, 1]` (Ericson, Real-Time Collision Detection, 5.1.9); parallel
/// segments take the point of the first nearest the second's start.
fn closest_segment_parameters(p: DVec3, q: DVec3, r: DVec3, u: DVec3) -> (f64, f64) {
    let (d1, d2, w) = (q - p, u - r, p - r);
    let (a, e, f) = (d1.length_squared(), d2.length_squared(), d2.dot(w));
    let (c, b) = (d1.dot(w), d1.dot(d2));
    let denominator = a * e - b * b;
    let mut s = if denominator > 1e-12 * a * e {
        ((b * f - c * e) / denominator).clamp(0.0, 1.0)
    } else {
        (-c / a).clamp(0.0, 1.0)
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (s, t)
}
