//! The general narrow phase: each body's surface particles against the other body's signed
//! distance (Su 2009 section 4.1).

use glam::DMat3;

use super::{Closing, Collider, Contact, FeatureId};
use crate::pose::Pose;

/// Every particle of either body that `closing` keeps (and within `margin`, the pair's largest
/// gap, [`super::pair_margin`]), as a contact (unreduced).
pub(super) fn collide(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    closing: &Closing,
    margin: f64,
) -> Vec<Contact> {
    let mut contacts = Vec::new();
    let pair = Pair { closing, margin };
    pair.particles_against(a, pose_a, b, pose_b, false, &mut contacts);
    pair.particles_against(b, pose_b, a, pose_a, true, &mut contacts);
    contacts
}

/// The pair's motion and largest gap.
struct Pair<'a> {
    closing: &'a Closing,
    margin: f64,
}

impl Pair<'_> {
    /// Contacts of `source`'s particles inside `target` or near enough to it. `swapped` says
    /// that `source` is body B of the pair, which flips the normal so it still points from B to
    /// A. Particles go cluster by cluster (clusters.rs): a cluster's ball is skipped when it is
    /// farther from the target than any of its points can close, by the target's box or by its
    /// distance at the ball's centre.
    fn particles_against(
        &self,
        source: &Collider,
        source_pose: &Pose,
        target: &Collider,
        target_pose: &Pose,
        swapped: bool,
        out: &mut Vec<Contact>,
    ) {
        let (rotation, offset) = target_pose.relative_to(source_pose);
        // Particles are tested in the target's geometry (grid) frame, straight from the
        // source's frame: one transform each, against the tighter box of that frame.
        let (to_geometry, geometry_offset) = target.to_geometry_frame();
        let (rotation_g, offset_g) = (to_geometry * rotation, to_geometry * offset + geometry_offset);
        let bounds = target.geometry_bounds();
        let target_rotation = target_pose.orientation;
        let source_rotation = DMat3::from_quat(source_pose.orientation);
        let lipschitz = target.distance_lipschitz();
        let clusters = source.clusters();
        for cluster in clusters.clusters() {
            let centre = rotation_g * cluster.centre + offset_g;
            // The farthest any contact of the ball may be: at most the pair's, usually far less
            // (`Closing::reach_near`).
            let world_centre = source_pose.position + source_rotation * cluster.centre;
            let limit = self.closing.reach_near(world_centre, cluster.radius).min(self.margin);
            let clear = limit + cluster.radius;
            if bounds.is_some_and(|b| b.distance_squared(centre) > clear * clear)
                || target.distance_in_geometry_frame(centre) - lipschitz * cluster.radius >= limit
            {
                continue;
            }
            for &(particle, index) in clusters.members(cluster) {
                let in_geometry = rotation_g * particle + offset_g;
                if bounds.is_some_and(|b| b.distance_squared(in_geometry) > limit * limit) {
                    continue;
                }
                let distance = target.distance_in_geometry_frame(in_geometry);
                if distance >= limit {
                    continue;
                }
                let local = rotation * particle + offset;
                let (_, gradient) = target.distance_and_gradient(local);
                let length = gradient.length();
                if !(length > 0.0) {
                    continue;
                }
                // Outward from the target; that is from B to A when the target is B.
                let outward = target_rotation * (gradient / length);
                let normal = if swapped { -outward } else { outward };
                let world = source_pose.position + source_rotation * particle;
                if distance > self.closing.margin && distance > self.closing.reach_along(world, normal) {
                    continue;
                }
                let depth = -distance;
                // The particle is on the source's surface, `depth` inside the target: the target's
                // surface is `depth` further along the target's outward normal.
                let index = index as usize;
                out.push(Contact {
                    point: world + outward * (0.5 * depth),
                    normal,
                    depth,
                    feature: if swapped {
                        FeatureId::of_b(index)
                    } else {
                        FeatureId::of_a(index)
                    },
                });
            }
        }
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
        let contacts = collide(&ball, &pose_ball, &cube, &pose_cube, &Closing::at_rest(0.0), 0.0);
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
