//! The general narrow phase: each body's surface particles against the other body's signed
//! distance (Su 2009 section 4.1).
//!
//! A ball against a level set is the one exception on the ball's side: it has no particles to
//! test there, but its deepest point along the level set's normal at its centre, as one contact
//! (see [`Pair::ball_against`]). The level set's particles are still tested against the ball's
//! exact distance, so edges and corners of the level set's body are found by its own particles.
//!
//! Why: a ball's particles are a few centimetres apart (the world's particle spacing), so a ball
//! resting on a face is held by the nearest few, up to half a spacing from the point that touches,
//! and sinks by `r - sqrt(r^2 - (s/2)^2)` (2 mm for a 5 cm ball at 3 cm spacing), and a rolling
//! ball bobs as its particles pass under it. The deepest point follows the face exactly, and it is
//! one lookup where the particles were dozens: in Su's Fig. 8, a thousand small balls in a heap of
//! debris, the balls' particles were a sixth of the narrow phase. Rejected: the ball's centre
//! alone (depth `r - phi(c)`), which needs the level set to be a distance `r` away from its
//! surface; a fragment's level set is the maximum of two distances (the body's and its pattern
//! region's), which falls short of the distance beyond its edges, and would hold a ball off them.

use glam::{DMat3, DVec3};

use super::box_box::{Obb, RELATIVE_TOLERANCE, gap_beyond};
use super::surface_normal::{Outward, SharpContact, SurfaceNormal, particle_outward, settle_sharp};
use super::{Closing, Collider, Contact, FeatureId, Geometry};
use crate::pose::Pose;
use crate::shapes::Shape;

/// Every particle of either body (a ball's deepest point instead of its particles, against a
/// level set: module docs) that `closing` keeps (and within `margin`, the pair's largest
/// gap, [`super::pair_margin`]), as a contact (unreduced) into `contacts` (cleared first), and
/// returns a separation of the pair (see [`Pair::particles_against`]): while no point of one body
/// moves by more than it minus the margin relative to the other, the test finds no contact.
pub(super) fn collide(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    closing: &Closing,
    margin: f64,
    contacts: &mut Vec<Contact>,
) -> f64 {
    contacts.clear();
    let pair = Pair {
        closing,
        margin,
        tolerance: touching_tolerance(a, b),
    };
    let (body_a, body_b) = (
        Body {
            collider: a,
            pose: pose_a,
        },
        Body {
            collider: b,
            pose: pose_b,
        },
    );
    SHARP.with_borrow_mut(|sharp| {
        sharp.clear();
        let of_a = pair.surface_against(body_a, body_b, false, contacts, sharp);
        let of_b = pair.surface_against(body_b, body_a, true, contacts, sharp);
        settle_sharp(contacts, sharp, closing, pair.tolerance);
        of_a.min(of_b)
    })
}

thread_local! {
    /// The contacts of the pair this thread is testing whose surfaces are both sharp.
    static SHARP: core::cell::RefCell<Vec<SharpContact>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// One body of a pair: its collider and pose.
#[derive(Clone, Copy)]
struct Body<'a> {
    collider: &'a Collider,
    pose: &'a Pose,
}

/// The radius of `source` when it is a ball and `target` a level set: the pairs whose ball side
/// is tested by its deepest point (module docs).
fn ball_on_level_set(source: &Collider, target: &Collider) -> Option<f64> {
    match (super::shape_of(source), target.geometry()) {
        (Some(Shape::Sphere(ball)), Geometry::LevelSet(_)) => Some(ball.radius()),
        _ => None,
    }
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

/// How deep sharp features facing each other may be without a contact, m: the box-box narrow
/// phase's [`RELATIVE_TOLERANCE`] of the smaller bounded body's least half extent (zero when
/// neither is bounded).
fn touching_tolerance(a: &Collider, b: &Collider) -> f64 {
    let least = |c: &Collider| {
        c.geometry_bounds()
            .map_or(f64::INFINITY, |b| 0.5 * (b.max - b.min).min_element())
    };
    let least = least(a).min(least(b));
    if least.is_finite() {
        RELATIVE_TOLERANCE * least
    } else {
        0.0
    }
}

/// The pair's motion, largest gap and touching tolerance ([`touching_tolerance`]).
struct Pair<'a> {
    closing: &'a Closing,
    margin: f64,
    tolerance: f64,
}

impl Pair<'_> {
    /// Contacts of `source`'s surface inside `target` or near enough to it: its deepest point when
    /// it is a ball against a level set ([`Pair::ball_against`]), else its particles
    /// ([`Pair::particles_against`]). Returns a separation as they do.
    fn surface_against(
        &self,
        source: Body<'_>,
        target: Body<'_>,
        swapped: bool,
        out: &mut Vec<Contact>,
        sharp: &mut Vec<SharpContact>,
    ) -> f64 {
        match ball_on_level_set(source.collider, target.collider) {
            Some(radius) => self.ball_against(radius, source.pose, target, swapped, out),
            None => self.particles_against(source, target, swapped, out, sharp),
        }
    }

    /// The contact of a ball of `radius` m (centred on its body's origin, at `ball_pose`) with the
    /// level set `target`: the ball's point deepest along the level set's normal at the ball's
    /// centre, `q = c - r n(c)`, when the level set there is within the pair's reach, with the
    /// level set's distance and normal at `q` (as a particle there would have). Its feature is
    /// the ball's feature 0, so warm starting follows it as the ball rolls. `swapped` says that
    /// the ball is body B.
    ///
    /// Returns a separation as [`Pair::particles_against`] does, for every point of the ball's
    /// surface (each within `r` of `c`): the box distance of the centre less `r`, or the level
    /// set's distance at the centre less `L r`, over `L`, whichever is larger.
    fn ball_against(
        &self,
        radius: f64,
        ball_pose: &Pose,
        Body {
            collider: target,
            pose: target_pose,
        }: Body<'_>,
        swapped: bool,
        out: &mut Vec<Contact>,
    ) -> f64 {
        let (to_geometry, geometry_offset) = target.to_geometry_frame();
        let centre = to_geometry * target_pose.inverse_transform_point(ball_pose.position) + geometry_offset;
        let limit = self.closing.reach_near(ball_pose.position, radius).min(self.margin);
        let boxed = target.geometry_bounds().map(|b| b.distance_squared(centre));
        if let Some(squared) = boxed
            && squared > (limit + radius) * (limit + radius)
        {
            return squared.sqrt() - radius;
        }
        let lipschitz = target.distance_lipschitz();
        let at_centre = target.distance_in_geometry_frame(centre);
        let separation =
            ((at_centre - lipschitz * radius) / lipschitz).max(boxed.map_or(f64::NEG_INFINITY, |s| s.sqrt() - radius));
        if at_centre - lipschitz * radius >= limit {
            return separation;
        }
        let gradient = target.gradient_at_geometry_point(centre);
        let length = gradient.length();
        if !(length > 0.0) {
            return separation.min(0.0);
        }
        // The deepest point, against the level set's outward normal at the centre (body frame):
        // in the geometry frame and in the world.
        let away = gradient / length;
        let deepest = centre - to_geometry * away * radius;
        let world = ball_pose.position - target_pose.orientation * away * radius;
        let distance = target.distance_in_geometry_frame(deepest);
        if distance >= limit {
            return separation;
        }
        let gradient = target.gradient_at_geometry_point(deepest);
        let length = gradient.length();
        if !(length > 0.0) {
            return separation.min(0.0);
        }
        let outward = target_pose.orientation * (gradient / length);
        let normal = if swapped { -outward } else { outward };
        if self.closing.keeps_gap(distance, world, normal) {
            let depth = -distance;
            out.push(Contact {
                point: world + outward * (0.5 * depth),
                normal,
                depth,
                feature: if swapped {
                    FeatureId::of_b(0)
                } else {
                    FeatureId::of_a(0)
                },
            });
        }
        separation.min(distance / lipschitz)
    }

    /// Contacts of `source`'s particles inside `target` or near enough to it. `swapped` says
    /// that `source` is body B of the pair, which flips the normal so it still points from B to
    /// A. Particles go cluster by cluster (clusters.rs): a cluster's ball is skipped when it is
    /// farther from the target than any of its points can close, by the target's box or by its
    /// distance at the ball's centre.
    ///
    /// Returns a separation, m: the least bound, over the particles, of how far a particle must
    /// move relative to the target before it can reach the target's surface. A bound from the
    /// target's box is the box distance (it changes no faster than the point moves); one from the
    /// target's distance is that distance over its Lipschitz bound (a level set's interpolated
    /// distance may change up to `sqrt(3) + 1` times faster than the point moves).
    fn particles_against(
        &self,
        source: Body<'_>,
        target: Body<'_>,
        swapped: bool,
        out: &mut Vec<Contact>,
        sharp: &mut Vec<SharpContact>,
    ) -> f64 {
        let Body {
            collider: source,
            pose: source_pose,
        } = source;
        let Body {
            collider: target,
            pose: target_pose,
        } = target;
        let (rotation, offset) = target_pose.relative_to(source_pose);
        // Particles are tested in the target's geometry (grid) frame, straight from the
        // source's frame: one transform each, against the tighter box of that frame.
        let (to_geometry, geometry_offset) = target.to_geometry_frame();
        let (rotation_g, offset_g) = (to_geometry * rotation, to_geometry * offset + geometry_offset);
        let bounds = target.geometry_bounds();
        let target_rotation = target_pose.orientation;
        let source_rotation = DMat3::from_quat(source_pose.orientation);
        let lipschitz = target.distance_lipschitz();
        let reach = self.closing.near_reach();
        // A ball (body frame) is clear of the target when it lies beyond the box or the distance
        // at its centre by more than any contact near it may be apart (`Closing::reach_near`,
        // at most the pair's margin, usually far less): then `Err` with the separation its points
        // have at least; otherwise `Ok` with that farthest contact.
        let near = |centre: DVec3, radius: f64| -> Result<f64, f64> {
            let in_geometry = rotation_g * centre + offset_g;
            let world_centre = source_pose.position + source_rotation * centre;
            let limit = reach.reach_near(world_centre, radius).min(self.margin);
            let clear = limit + radius;
            if let Some(squared) = bounds.map(|b| b.distance_squared(in_geometry))
                && squared > clear * clear
            {
                return Err(squared.sqrt() - radius);
            }
            let below = target.distance_in_geometry_frame(in_geometry) - lipschitz * radius;
            if below >= limit {
                return Err(below / lipschitz);
            }
            Ok(limit)
        };
        // The separation so far, and the least squared box distance of the particles the box
        // skipped (one root at the end).
        let mut separation = f64::INFINITY;
        let mut boxed = f64::INFINITY;
        let clusters = source.clusters();
        for group in clusters.groups() {
            if let Err(apart) = near(group.centre, group.radius) {
                separation = separation.min(apart);
                continue;
            }
            for cluster in clusters.group_clusters(group) {
                let limit = match near(cluster.centre, cluster.radius) {
                    Ok(limit) => limit,
                    Err(apart) => {
                        separation = separation.min(apart);
                        continue;
                    }
                };
                for &(particle, index) in clusters.members(cluster) {
                    let in_geometry = rotation_g * particle + offset_g;
                    if let Some(squared) = bounds.map(|b| b.distance_squared(in_geometry))
                        && squared > limit * limit
                    {
                        boxed = boxed.min(squared);
                        continue;
                    }
                    let distance = target.distance_in_geometry_frame(in_geometry);
                    separation = separation.min(distance / lipschitz);
                    if distance >= limit {
                        continue;
                    }
                    let at_target = SurfaceNormal::of_collider(target, in_geometry);
                    if at_target.direction == DVec3::ZERO {
                        continue;
                    }
                    // Outward from the target (that is from B to A when the target is B), in the
                    // target's body frame: its normal, or the particle's where the target is sharp,
                    // or for the pair to settle where both are (surface_normal.rs).
                    let in_target = || {
                        let at_particle = source.particle_normals()[index as usize];
                        SurfaceNormal {
                            direction: rotation * at_particle.direction,
                            ..at_particle
                        }
                    };
                    let oriented = |direction: DVec3| {
                        let world = target_rotation * direction;
                        if swapped { -world } else { world }
                    };
                    let world = source_pose.position + source_rotation * particle;
                    let normal = match particle_outward(at_target, in_target) {
                        Outward::Settled(outward) => {
                            let normal = oriented(outward);
                            if !self.closing.keeps_gap(distance, world, normal) {
                                continue;
                            }
                            normal
                        }
                        Outward::Sharp { target, inward } => {
                            // Settled, its gap checked too, with the pair's other contacts.
                            sharp.push(SharpContact {
                                index: out.len(),
                                target: oriented(target),
                                inward: oriented(inward),
                                particle: world,
                                target_is_b: !swapped,
                            });
                            oriented(target)
                        }
                    };
                    let outward = if swapped { -normal } else { normal };
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
        separation.min(boxed.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow_phase::collide as collide_pair;
    use crate::shapes::{Cuboid, Shape, Sphere};
    use glam::{DQuat, DVec3};

    /// Every particle of each body tested one by one against the other (or a ball's deepest point
    /// on a level set), the rule spelled out: inside the pair's largest gap and kept by the pair's
    /// motion, normals of two sharp surfaces settled by the pair; with its feature, distance and
    /// normal (from B to A).
    fn brute_force(
        a: &Collider,
        pose_a: &Pose,
        b: &Collider,
        pose_b: &Pose,
        closing: &Closing,
        margin: f64,
    ) -> Vec<(FeatureId, f64, DVec3)> {
        let (mut contacts, mut sharp) = (Vec::new(), Vec::new());
        let mut side = |source, source_pose, target, target_pose, swapped| {
            brute_force_side(
                source,
                source_pose,
                target,
                target_pose,
                closing,
                margin,
                swapped,
                &mut contacts,
                &mut sharp,
            )
        };
        side(a, pose_a, b, pose_b, false);
        side(b, pose_b, a, pose_a, true);
        settle_sharp(&mut contacts, &sharp, closing, touching_tolerance(a, b));
        contacts.iter().map(|c| (c.feature, -c.depth, c.normal)).collect()
    }

    /// One side of [`brute_force`]: `source`'s particles (or a ball's deepest point) against
    /// `target`, into `contacts`, those of two sharp surfaces also into `sharp`.
    #[allow(clippy::too_many_arguments)]
    fn brute_force_side(
        source: &Collider,
        source_pose: &Pose,
        target: &Collider,
        target_pose: &Pose,
        closing: &Closing,
        margin: f64,
        swapped: bool,
        contacts: &mut Vec<Contact>,
        sharp: &mut Vec<SharpContact>,
    ) {
        let feature = |index| {
            if swapped {
                FeatureId::of_b(index)
            } else {
                FeatureId::of_a(index)
            }
        };
        let contact = |feature, distance: f64, normal| Contact {
            point: DVec3::ZERO,
            normal,
            depth: -distance,
            feature,
        };
        // A ball on a level set: its deepest point along the normal at its centre, as feature 0.
        if let Some(radius) = ball_on_level_set(source, target) {
            let centre = target_pose.inverse_transform_point(source_pose.position);
            let away = target.distance_and_gradient(centre).1.normalize();
            let deepest = centre - away * radius;
            let (distance, gradient) = target.distance_and_gradient(deepest);
            let world = target_pose.transform_point(deepest);
            let outward = target_pose.orientation * gradient.normalize();
            let normal = if swapped { -outward } else { outward };
            if distance < margin && closing.keeps_gap(distance, world, normal) {
                contacts.push(contact(feature(0), distance, normal));
            }
            return;
        }
        for (index, &particle) in source.particles().iter().enumerate() {
            let world = source_pose.transform_point(particle);
            let local = target_pose.inverse_transform_point(world);
            let distance = target.distance(local);
            if distance >= margin {
                continue;
            }
            // The rule of surface_normal.rs, in the world frame.
            let (to_geometry, offset) = target.to_geometry_frame();
            let at_target = SurfaceNormal::of_collider(target, to_geometry * local + offset);
            let at_particle = source.particle_normals()[index];
            let oriented = |direction: DVec3| {
                let world = target_pose.orientation * direction;
                if swapped { -world } else { world }
            };
            let in_target = || SurfaceNormal {
                direction: target_pose.orientation.inverse() * (source_pose.orientation * at_particle.direction),
                ..at_particle
            };
            match particle_outward(at_target, in_target) {
                Outward::Settled(outward) => {
                    let normal = oriented(outward);
                    if closing.keeps_gap(distance, world, normal) {
                        contacts.push(contact(feature(index), distance, normal));
                    }
                }
                Outward::Sharp { target, inward } => {
                    sharp.push(SharpContact {
                        index: contacts.len(),
                        target: oriented(target),
                        inward: oriented(inward),
                        particle: world,
                        target_is_b: !swapped,
                    });
                    contacts.push(contact(feature(index), distance, oriented(target)));
                }
            }
        }
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
    /// particles a one-by-one test keeps, with the same depths and normals (the sampled test
    /// takes its gradients in the grid's frame, the one-by-one test in the body's).
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
                // A stale contact from an earlier pair: `collide` must clear the list first.
                let mut found = vec![Contact {
                    point: DVec3::NAN,
                    normal: DVec3::NAN,
                    depth: f64::NAN,
                    feature: FeatureId::of_a(7),
                }];
                collide(a, &pose_a, b, &pose_b, &closing, margin, &mut found);
                let mut fast: Vec<(FeatureId, f64, DVec3)> =
                    found.iter().map(|c| (c.feature, -c.depth, c.normal)).collect();
                let mut slow = brute_force(a, &pose_a, b, &pose_b, &closing, margin);
                fast.sort_by_key(|c| c.0);
                slow.sort_by_key(|c| c.0);
                assert_eq!(fast.len(), slow.len(), "{fast:?}\n{slow:?}");
                for (f, s) in fast.iter().zip(&slow) {
                    assert_eq!(f.0, s.0);
                    assert!((f.1 - s.1).abs() < 1e-9, "{f:?} {s:?}");
                    assert!((f.2 - s.2).length() < 1e-9, "{f:?} {s:?}");
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
                let found = brute_force(a, &pose_a, b, &pose_b, &closing, margin);
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

    /// A particle pair's separation is a bound and it holds: over random poses of a turned
    /// level-set slab and a ball (and two slabs) that the test finds apart, no particle is nearer
    /// the other body than the separation by its own bound (its box distance, or its distance
    /// over the Lipschitz bound), and moving the body of smaller reach towards the other by up to
    /// the separation minus the margin (its centre's translation `t` plus the chord of its turn at
    /// an arm of its reach plus the margin plus `|t|`, the manifold cache's rule), the
    /// particle-by-particle test still finds no contact.
    #[test]
    fn sampled_separation_holds_while_the_bodies_move_less_than_it() {
        use crate::narrow_phase::{ContactManifold, collide_closing_into};
        use shatter_integrators::SplitMix64;
        let (slab, ball) = slab_and_ball(DVec3::new(0.3, 0.05, 0.2));
        let mut rng = SplitMix64::new(17);
        let margin = 0.01;
        let closing = Closing::at_rest(margin);
        let (mut moved, mut unit_moves) = (0, 0);
        for _ in 0..400 {
            let v = |rng: &mut SplitMix64, scale: f64| {
                DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)) * scale
            };
            let pose_a = Pose::new(v(&mut rng, 0.1), DQuat::from_scaled_axis(v(&mut rng, 1.5)).normalize());
            let pose_b = Pose::new(
                pose_a.position + v(&mut rng, 0.45),
                DQuat::from_scaled_axis(v(&mut rng, 1.5)).normalize(),
            );
            for (a, b) in [(&slab, &ball), (&slab, &slab)] {
                let mut manifold = ContactManifold::default();
                collide_closing_into(a, &pose_a, b, &pose_b, &closing, &mut manifold).unwrap();
                let separation = manifold.separation;
                if !manifold.is_empty() || separation <= margin {
                    continue;
                }
                // No particle is nearer than its bound: its box distance, or its distance over
                // the target's Lipschitz bound.
                let bound = |source: &Collider, source_pose: &Pose, target: &Collider, target_pose: &Pose| {
                    let (to_geometry, offset) = target.to_geometry_frame();
                    let bounds = target.geometry_bounds().unwrap();
                    let lipschitz = target.distance_lipschitz();
                    source.particles().iter().fold(f64::INFINITY, |least, &p| {
                        let local = target_pose.inverse_transform_point(source_pose.transform_point(p));
                        let in_geometry = to_geometry * local + offset;
                        let boxed = bounds.distance_squared(in_geometry).sqrt();
                        least.min(boxed.max(target.distance_in_geometry_frame(in_geometry) / lipschitz))
                    })
                };
                let least = bound(a, &pose_a, b, &pose_b).min(bound(b, &pose_b, a, &pose_a));
                assert!(
                    separation <= least + 1e-12,
                    "separation {separation} above the bound {least}"
                );
                // B moves when its reach is the smaller (as the cache picks), else A.
                let b_moves = b.reach().unwrap() <= a.reach().unwrap();
                let reach = if b_moves { b.reach() } else { a.reach() }.unwrap();
                // Towards the other body, along or across, and turning about axes across the way.
                let (mover, other) = if b_moves {
                    (&pose_b, &pose_a)
                } else {
                    (&pose_a, &pose_b)
                };
                let towards = (other.position - mover.position).normalize();
                for k in 0..20 {
                    let direction = (towards + v(&mut rng, 0.5 * (k % 2) as f64)).normalize();
                    let axis = towards.cross(v(&mut rng, 1.0)).normalize();
                    let share = if k < 10 { 1.0 } else { rng.range(0.0, 1.0) };
                    let room = (separation - margin) * rng.range(0.5, 0.999);
                    let t = room * share;
                    // Solve t + 2 sin(angle / 2) (reach + margin + t) = room for the angle.
                    let chord = (room - t) / (reach + margin + t);
                    let angle = 2.0 * (0.5 * chord).min(1.0).asin();
                    let turn = |pose: &Pose| {
                        Pose::new(
                            pose.position + direction * t,
                            (pose.orientation * DQuat::from_axis_angle(axis, angle)).normalize(),
                        )
                    };
                    let (new_a, new_b) = if b_moves {
                        (pose_a, turn(&pose_b))
                    } else {
                        (turn(&pose_a), pose_b)
                    };
                    let found = brute_force(a, &new_a, b, &new_b, &closing, margin);
                    assert!(
                        found.is_empty(),
                        "separation {separation}, moved {t} and turned {angle}: {found:?}"
                    );
                    unit_moves += 1;
                }
                moved += 1;
            }
        }
        assert!(
            moved > 50 && unit_moves > 1000,
            "{moved} pairs apart, {unit_moves} moves"
        );
    }

    /// A ball pressed 1 mm into the top face of a level-set slab (its grid in a turned frame), at
    /// positions across the slab: its one contact is its
    /// lowest point, 1 mm deep along the face's normal wherever it is (a linear distance is
    /// interpolated exactly), so a ball rolling over the face neither sinks nor bobs. Its own
    /// particles, 3 cm apart, would hold it only where one of them reaches the face: at up to
    /// 1.5 cm from the lowest point, 0.75 mm higher on this 15 cm ball.
    #[test]
    fn sampled_ball_on_a_level_set_face_touches_at_its_lowest_point() {
        let (slab, ball) = slab_and_ball(DVec3::new(0.3, 0.05, 0.2));
        // The slab's top face, body frame: the box's +y face in the turned grid frame.
        let frame = slab.grid_frame();
        let up = frame.orientation * DVec3::Y;
        let (radius, depth) = (0.15, 1e-3);
        let closing = Closing::at_rest(0.005);
        for k in 0..40 {
            let across = frame.orientation * DVec3::new(-0.12 + 0.006 * k as f64, 0.0, 0.03 * ((k % 5) as f64 - 2.0));
            let on_face = frame.position + frame.orientation * DVec3::new(0.0, 0.05, 0.0) + across;
            let pose_ball = Pose::from_position(on_face + up * (radius - depth));
            for (swapped, (a, pose_a, b, pose_b)) in [
                (false, (&ball, &pose_ball, &slab, &Pose::IDENTITY)),
                (true, (&slab, &Pose::IDENTITY, &ball, &pose_ball)),
            ] {
                let mut found = Vec::new();
                collide(a, pose_a, b, pose_b, &closing, 0.005, &mut found);
                let of_ball = if swapped {
                    FeatureId::of_b(0)
                } else {
                    FeatureId::of_a(0)
                };
                let contacts: Vec<&Contact> = found.iter().filter(|c| c.feature == of_ball).collect();
                assert_eq!(contacts.len(), 1, "{found:?}");
                let contact = contacts[0];
                let normal = if swapped { -up } else { up };
                assert!((contact.depth - depth).abs() < 1e-9, "depth {} at {k}", contact.depth);
                assert!((contact.normal - normal).length() < 1e-9, "{:?}", contact.normal);
                let lowest = pose_ball.position - up * radius;
                assert!((contact.point - (lowest + up * (0.5 * depth))).length() < 1e-9);
            }
        }
    }

    #[test]
    fn sampled_contacts_point_from_b_to_a_for_both_bodies_particles() {
        let cube = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(0.5)).unwrap()), 0.1).unwrap();
        let ball = Collider::from_shape(Shape::Sphere(Sphere::try_new(0.5).unwrap()), 0.1).unwrap();
        // The ball (A) sits on top of the cube (B), 2 cm deep.
        let pose_cube = Pose::new(DVec3::ZERO, DQuat::IDENTITY);
        let pose_ball = Pose::from_position(DVec3::new(0.0, 0.98, 0.0));
        let mut contacts = Vec::new();
        collide(
            &ball,
            &pose_ball,
            &cube,
            &pose_cube,
            &Closing::at_rest(0.0),
            0.0,
            &mut contacts,
        );
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
