//! The general narrow phase: each body's surface particles against the other body's signed
//! distance (Su 2009 section 4.1).

use glam::{DMat3, DVec3};

use super::box_box::{Obb, gap_beyond};
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

/// The gap between the two bodies' boxes (each in its geometry frame, holding its solid and its
/// particles) when an axis separates them by more than `margin` m, the pair's largest gap: then
/// no particle of either is within `margin` of the other's box, and the particle test would skip
/// every one of them. A pile's candidate pairs are mostly such diagonal neighbours, and this
/// costs one axis test against two bodies' worth of cluster tests; the gap also lets the manifold
/// cache skip the pair while it stays apart.
pub(super) fn boxes_apart(a: &Collider, pose_a: &Pose, b: &Collider, pose_b: &Pose, margin: f64) -> Option<f64> {
    let (box_a, box_b) = (a.geometry_bounds()?, b.geometry_bounds()?);
    let obb_a = Obb::of_bounds(&box_a, &a.grid_frame(), pose_a);
    let obb_b = Obb::of_bounds(&box_b, &b.grid_frame(), pose_b);
    gap_beyond(&obb_a, &obb_b, margin).filter(|&gap| gap > margin)
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
        // A ball (body frame) is clear of the target when it lies beyond the box or the distance
        // at its centre by more than any contact near it may be apart (`Closing::reach_near`,
        // at most the pair's margin, usually far less); otherwise, that farthest contact.
        let near = |centre: DVec3, radius: f64| {
            let in_geometry = rotation_g * centre + offset_g;
            let world_centre = source_pose.position + source_rotation * centre;
            let limit = self.closing.reach_near(world_centre, radius).min(self.margin);
            let clear = limit + radius;
            let apart = bounds.is_some_and(|b| b.distance_squared(in_geometry) > clear * clear)
                || target.distance_in_geometry_frame(in_geometry) - lipschitz * radius >= limit;
            (!apart).then_some(limit)
        };
        let clusters = source.clusters();
        for group in clusters.groups() {
            if near(group.centre, group.radius).is_none() {
                continue;
            }
            for cluster in clusters.group_clusters(group) {
                let Some(limit) = near(cluster.centre, cluster.radius) else {
                    continue;
                };
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
                    if !self.closing.keeps_gap(distance, world, normal) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::collide as collide_pair;
    use crate::shapes::{Cuboid, Shape, Sphere};
    use glam::{DQuat, DVec3};

    /// Every particle of `source` tested one by one, the rule spelled out: inside the pair's
    /// largest gap and kept by the pair's motion.
    fn brute_force(
        source: &Collider,
        source_pose: &Pose,
        target: &Collider,
        target_pose: &Pose,
        closing: &Closing,
        margin: f64,
        swapped: bool,
    ) -> Vec<(FeatureId, f64)> {
        let mut found = Vec::new();
        for (index, &particle) in source.particles().iter().enumerate() {
            let world = source_pose.transform_point(particle);
            let local = target_pose.inverse_transform_point(world);
            let (distance, gradient) = target.distance_and_gradient(local);
            let outward = target_pose.orientation * gradient.normalize();
            let normal = if swapped { -outward } else { outward };
            if distance < margin && closing.keeps_gap(distance, world, normal) {
                let feature = if swapped {
                    FeatureId::of_b(index)
                } else {
                    FeatureId::of_a(index)
                };
                found.push((feature, distance));
            }
        }
        found
    }

    /// A level-set box of half extents `half` whose grid lies in a turned frame (as fragments'
    /// do), particles about 4 cm apart, and a ball of 15 cm.
    fn slab_and_ball(half: DVec3) -> (Collider, Collider) {
        use crate::grid::GridSpec;
        use crate::trimesh::TriMesh;
        let mesh = TriMesh::cuboid(half);
        let spec = GridSpec::with_resolution(mesh.bounds().unwrap(), 24, 3).unwrap();
        let grid = crate::level_set::level_set_from_mesh(&mesh, spec).unwrap();
        let particles = crate::particles::sample_surface(&mesh, 0.04, 0).unwrap();
        let frame = Pose::new(DVec3::new(0.01, -0.02, 0.0), DQuat::from_rotation_z(0.3));
        let moved: Vec<DVec3> = particles.iter().map(|&p| frame.transform_point(p)).collect();
        let slab = Collider::from_level_set_in_frame(std::sync::Arc::new(grid), frame, moved).unwrap();
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.15).unwrap()), 0.03).unwrap();
        (slab, ball)
    }

    /// Skipping clusters changes nothing: over random poses and motions of a level-set slab
    /// (its grid in a turned frame, as fragments have) and a ball, the sampled contacts are the
    /// particles a one-by-one test keeps, with the same depths.
    #[test]
    fn sampled_clusters_find_what_testing_every_particle_finds() {
        use shatter_integrators::SplitMix64;
        let (slab, ball) = slab_and_ball(DVec3::new(0.3, 0.1, 0.2));
        let mut rng = SplitMix64::new(11);
        let mut v = |scale: f64| DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)) * scale;
        let mut compared = 0;
        for _ in 0..300 {
            let pose_a = Pose::new(v(0.1), DQuat::from_scaled_axis(v(1.5)).normalize());
            let pose_b = Pose::new(pose_a.position + v(0.35), DQuat::from_scaled_axis(v(1.5)).normalize());
            let closing = Closing::of_bodies(
                0.01,
                1.0 / 30.0,
                [pose_a.position, v(3.0), v(8.0)],
                [pose_b.position, v(3.0), v(8.0)],
            );
            for (a, b) in [(&slab, &ball), (&ball, &slab), (&slab, &slab)] {
                let margin = super::super::pair_margin(&closing, a, &pose_a, b, &pose_b);
                let mut fast: Vec<(FeatureId, f64)> = collide(a, &pose_a, b, &pose_b, &closing, margin)
                    .iter()
                    .map(|c| (c.feature, -c.depth))
                    .collect();
                let mut slow = brute_force(a, &pose_a, b, &pose_b, &closing, margin, false);
                slow.extend(brute_force(b, &pose_b, a, &pose_a, &closing, margin, true));
                fast.sort_by_key(|c| c.0);
                slow.sort_by_key(|c| c.0);
                assert_eq!(fast.len(), slow.len(), "{fast:?}\n{slow:?}");
                for (f, s) in fast.iter().zip(&slow) {
                    assert_eq!(f.0, s.0);
                    assert!((f.1 - s.1).abs() < 1e-9, "{f:?} {s:?}");
                }
                compared += fast.len();
            }
        }
        assert!(compared > 500, "only {compared} contacts compared");
    }

    /// The box test skips only pairs without contacts, and its gap is a true lower bound: over
    /// random poses of a turned level-set slab and a ball, whenever it finds the boxes apart the
    /// particle-by-particle test finds no contact and no particle of one body is nearer than the
    /// gap to any particle of the other.
    #[test]
    fn sampled_boxes_apart_only_where_no_particle_is_near() {
        use shatter_integrators::SplitMix64;
        let (slab, ball) = slab_and_ball(DVec3::new(0.3, 0.05, 0.2));
        let mut rng = SplitMix64::new(5);
        let mut v = |scale: f64| DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)) * scale;
        let (mut apart, mut touching) = (0, 0);
        for _ in 0..400 {
            let pose_a = Pose::new(v(0.1), DQuat::from_scaled_axis(v(1.5)).normalize());
            let pose_b = Pose::new(pose_a.position + v(0.5), DQuat::from_scaled_axis(v(1.5)).normalize());
            let closing = Closing::of_bodies(
                0.01,
                1.0 / 30.0,
                [pose_a.position, v(1.0), v(3.0)],
                [pose_b.position, v(1.0), v(3.0)],
            );
            for (a, b) in [(&slab, &ball), (&slab, &slab)] {
                let margin = super::super::pair_margin(&closing, a, &pose_a, b, &pose_b);
                let mut found = brute_force(a, &pose_a, b, &pose_b, &closing, margin, false);
                found.extend(brute_force(b, &pose_b, a, &pose_a, &closing, margin, true));
                let Some(gap) = boxes_apart(a, &pose_a, b, &pose_b, margin) else {
                    touching += usize::from(!found.is_empty());
                    continue;
                };
                apart += 1;
                assert!(
                    gap > margin && found.is_empty(),
                    "gap {gap}, margin {margin}: {found:?}"
                );
                for p in a.particles() {
                    for q in b.particles() {
                        let distance = pose_a.transform_point(*p).distance(pose_b.transform_point(*q));
                        assert!(distance >= gap - 1e-12, "particles {distance} m apart, gap {gap}");
                    }
                }
            }
        }
        assert!(apart > 100 && touching > 50, "{apart} pairs apart, {touching} touching");
    }

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
