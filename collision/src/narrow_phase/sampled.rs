//! The general narrow phase: each body's surface particles against the other body's signed
//! distance (Su 2009 section 4.1).

use super::{Collider, Contact, FeatureId};
use crate::pose::Pose;

/// Every particle of either body within `margin` of the other body, as a contact (unreduced).
pub(super) fn collide(a: &Collider, pose_a: &Pose, b: &Collider, pose_b: &Pose, margin: f64) -> Vec<Contact> {
    let mut contacts = Vec::new();
    particles_against(a, pose_a, b, pose_b, margin, false, &mut contacts);
    particles_against(b, pose_b, a, pose_a, margin, true, &mut contacts);
    contacts
}

/// Contacts of `source`'s particles inside `target` (within the margin). `swapped` says that
/// `source` is body B of the pair, which flips the normal so it still points from B to A.
fn particles_against(
    source: &Collider,
    source_pose: &Pose,
    target: &Collider,
    target_pose: &Pose,
    margin: f64,
    swapped: bool,
    out: &mut Vec<Contact>,
) {
    if source.particles().is_empty() {
        return;
    }
    let (rotation, offset) = target_pose.relative_to(source_pose);
    let reach = target.local_bounds().map(|b| b.expanded(margin));
    let target_rotation = target_pose.orientation;
    for (index, particle) in source.particles().iter().enumerate() {
        let local = rotation * *particle + offset;
        if reach.is_some_and(|r| !r.contains_point(local)) {
            continue;
        }
        let distance = target.distance(local);
        if distance >= margin {
            continue;
        }
        let (_, gradient) = target.distance_and_gradient(local);
        let length = gradient.length();
        if !(length > 0.0) {
            continue;
        }
        // Outward from the target; that is from B to A when the target is B.
        let outward = target_rotation * (gradient / length);
        let world = source_pose.transform_point(*particle);
        let depth = -distance;
        // The particle is on the source's surface, `depth` inside the target: the target's surface
        // is `depth` further along the target's outward normal.
        let point = world + outward * (0.5 * depth);
        let (normal, feature) = if swapped {
            (-outward, FeatureId::of_b(index))
        } else {
            (outward, FeatureId::of_a(index))
        };
        out.push(Contact {
            point,
            normal,
            depth,
            feature,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::collide as collide_pair;
    use crate::shapes::{Cuboid, Shape, Sphere};
    use glam::{DQuat, DVec3};

    #[test]
    fn sampled_contacts_point_from_b_to_a_for_both_bodies_particles() {
        let cube = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.5)).unwrap()), 0.1).unwrap();
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).unwrap()), 0.1).unwrap();
        // The ball (A) sits on top of the cube (B), 2 cm deep.
        let pose_cube = Pose::new(DVec3::ZERO, DQuat::IDENTITY);
        let pose_ball = Pose::from_position(DVec3::new(0.0, 0.98, 0.0));
        let contacts = collide(&ball, &pose_ball, &cube, &pose_cube, 0.0);
        assert!(!contacts.is_empty());
        for c in &contacts {
            assert!(c.normal.y > 0.9, "{c:?}");
            assert!(c.depth > 0.0 && c.depth <= 0.02 + 1e-12);
        }
        let manifold = collide_pair(&ball, &pose_ball, &cube, &pose_cube, 0.0).unwrap();
        assert!(manifold.len() <= 4);
        assert!((manifold.max_depth().unwrap() - 0.02).abs() < 2e-3);
    }
}
