//! Which way a particle contact pushes when a surface is sharp where it touches.
//!
//! A particle contact's normal is the target's distance gradient at the particle (Su 2009
//! section 4.1). That is the contact normal wherever the target's surface is smooth near the
//! particle, and no normal at all at the target's edges and corners: there the gradient turns
//! through the wedge between the faces (a level set's over about one cell, an exact box's at once),
//! and any direction in it is as good as the next. Pieces that fit together meet exactly there:
//! a cube resting flush on another has its bottom face's corners on the lower cube's top corners,
//! where the gradient is the corner's diagonal (0.58, 0.58, 0.58), and the reduced manifold keeps
//! those corners (they spread it most); four contacts tilted 55 degrees off the face's normal,
//! pulling the cube sideways, bring down a wall of such pieces.
//!
//! The source particle's own surface answers when the target cannot: a particle on a smooth part
//! of the source touching the target's edge touches it with the source's face, whose inward normal
//! is the contact normal (the classic case: an edge pressed into a face). Where both are sharp
//! (edges and corners meeting, as flush pieces' do) the pair settles it ([`settle_sharp`]): the
//! face its touching contacts share, or no contact for features side by side with no face between
//! them, or the bisector of the target's outward and the source's inward directions. A target
//! smooth at the particle keeps its gradient, as before: the source's corner on the target's face.
//!
//! What counts as sharp: a level set's gradient (central differences blended over the cell)
//! has unit length where the distance is linear over the neighbouring samples, a face's interior,
//! and shrinks where the stencil straddles an edge or a corner's kink (to 0.71 on the edge of a
//! cube). Below [`SMOOTH_GRADIENT`] the surface is sharp if its normal also turns by more than
//! 26 degrees a cell away along it (`no_crease`): plates under four cells thick (whose stencils
//! straddle their middle) and small curved bodies shorten the gradient too, but keep its
//! direction, and a contact there must keep the gradient (flat shards lying on each other fell
//! through one step's free fall when their faces counted as sharp). An exact box is sharp
//! within a small band of its edges (`cuboid_normal`); balls, capsules and half-spaces are
//! smooth everywhere.

use glam::DVec3;
use smallvec::SmallVec;

use super::box_box::RELATIVE_TOLERANCE;
use super::{Closing, Collider, Contact, Geometry};
use crate::shapes::{Cuboid, Shape, SignedDistance};

/// A level set's gradient at least this long marks a smooth surface (see the module docs).
pub const SMOOTH_GRADIENT: f64 = 0.97;

/// A surface's outward unit normal near a point, body frame, and whether the surface is smooth
/// there (a face's interior) or sharp (an edge or a corner, where the normal is only one of many).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceNormal {
    /// Outward unit normal (the distance's gradient direction; for an exact box's edge, the
    /// bisector of its faces). Zero where the gradient vanishes.
    pub direction: DVec3,
    /// Whether `direction` is the surface's only normal there.
    pub smooth: bool,
}

impl SurfaceNormal {
    /// The normal of `collider` at a point of its geometry's own frame
    /// ([`Collider::to_geometry_frame`]), turned into its body frame.
    #[inline]
    pub fn of_collider(collider: &Collider, point: DVec3) -> Self {
        match collider.geometry() {
            Geometry::Shape(Shape::Cuboid(cuboid)) => cuboid_normal(cuboid, point),
            Geometry::Shape(shape) => Self {
                direction: shape.distance_and_gradient(point).1,
                smooth: true,
            },
            Geometry::LevelSet(grid) => {
                let gradient = collider.gradient_at_geometry_point(point);
                let length = gradient.length();
                if !(length > 0.0) {
                    return Self {
                        direction: DVec3::ZERO,
                        smooth: false,
                    };
                }
                let direction = gradient / length;
                Self {
                    direction,
                    smooth: length >= SMOOTH_GRADIENT || no_crease(collider, point, direction, grid.spec().spacing),
                }
            }
        }
    }
}

/// Whether a level set's normal `direction` (body frame) at `point` (geometry frame) holds a
/// cell `spacing` away along the surface, both ways along two tangents: a shortened gradient with no crease
/// under it is a thin plate's (its stencil straddles the middle, the direction is exact) or a
/// small curved body's (the direction turns by a cell over the radius, less than [`CREASE`]
/// above two cells), where the gradient is the normal, not an edge's or a corner's, where it
/// turns by about 45 degrees either way.
fn no_crease(collider: &Collider, point: DVec3, direction: DVec3, spacing: f64) -> bool {
    let (u, v) = direction.any_orthonormal_pair();
    let (to_geometry, _) = collider.to_geometry_frame();
    [u, -u, v, -v].into_iter().all(|tangent| {
        let probe = collider.gradient_at_geometry_point(point + spacing * (to_geometry * tangent));
        probe.dot(direction) >= CREASE * probe.length()
    })
}

/// Cosine of the turn of a level set's normal one cell along its surface above which the
/// surface counts as creased there (26 degrees).
const CREASE: f64 = 0.9;

/// An exact box's normal at `point` (its frame). With `q = |p| - h` per axis (how far beyond
/// each pair of faces the point is) and `q1` the largest: sharp when another axis comes within
/// the band of `min(q1, 0)` (inside: within the band of being as near a second face; outside:
/// within the band of leaving the first face's slab), with the bisector of those faces' normals;
/// else the face's normal. The band is the box-box narrow phase's tolerance share of the box's
/// least half extent (0.5 mm for a unit cube).
#[inline]
fn cuboid_normal(cuboid: &Cuboid, point: DVec3) -> SurfaceNormal {
    let half = cuboid.half_extents();
    let band = RELATIVE_TOLERANCE * half.min_element();
    let q = point.abs() - half;
    let top = q.max_element();
    let reach = top.min(0.0) - band;
    let sign = DVec3::select(point.cmplt(DVec3::ZERO), DVec3::NEG_ONE, DVec3::ONE);
    // The faces the point is within the band of (the nearest one always among them).
    let near = q.cmpgt(DVec3::splat(reach));
    let faces = DVec3::select(near, sign, DVec3::ZERO);
    if near.bitmask().count_ones() < 2 {
        return SurfaceNormal {
            direction: faces,
            smooth: true,
        };
    }
    // Beyond an edge or a corner the distance's gradient points at it; on or inside it, the
    // bisector of the faces met.
    let direction = if top > 0.0 {
        (q.max(DVec3::ZERO) * sign).normalize()
    } else {
        faces.normalize()
    };
    SurfaceNormal {
        direction,
        smooth: false,
    }
}

/// A particle contact's outward direction (from the target's surface towards the particle), as
/// far as the particle alone settles it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outward {
    /// One of the two surfaces is smooth at the particle: the target's normal where it is, else
    /// the source's inward normal.
    Settled(DVec3),
    /// Both are sharp: the target's outward and the source's inward directions (each the middle of
    /// its feature's wedge of normals), for [`settle_sharp`] to settle with the pair's other
    /// contacts.
    Sharp {
        /// The target's outward direction.
        target: DVec3,
        /// The source's inward direction.
        inward: DVec3,
    },
}

/// The outward direction of a particle contact, both normals in one frame (module docs); the
/// source's normal is looked up only where the target is sharp (rarely: the narrow phase's
/// candidates are mostly on the faces of what they touch).
#[inline]
pub fn particle_outward(target: SurfaceNormal, source: impl FnOnce() -> SurfaceNormal) -> Outward {
    if target.smooth {
        return Outward::Settled(target.direction);
    }
    let source = source();
    if source.smooth {
        Outward::Settled(-source.direction)
    } else {
        Outward::Sharp {
            target: target.direction,
            inward: -source.direction,
        }
    }
}

/// A contact of a pair whose two surfaces are both sharp at it, waiting for [`settle_sharp`].
/// Directions are world-frame and oriented as contact normals (from B towards A).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharpContact {
    /// Index of the contact in the pair's list.
    pub index: usize,
    /// The target's outward direction, oriented from B towards A.
    pub target: DVec3,
    /// The source's inward direction, oriented from B towards A.
    pub inward: DVec3,
    /// The particle, world frame, m.
    pub particle: DVec3,
    /// Whether the target is body B of the pair (so its outward direction is the normal).
    pub target_is_b: bool,
}

/// Settles the normals of a pair's contacts whose surfaces are both sharp (`sharp`, indices
/// ascending into `contacts`), and drops those that get none:
///
/// - the pair's face normal, the normalized sum of the normals of its settled contacts that touch
///   (at most `tolerance` m apart), when there is one and it lies within 90 degrees of both
///   features' directions: flush pieces' edges and corners (a cube's bottom corners on the top
///   corners of the cube it rests on) push along the faces they close, not along their
///   diagonals. Speculative contacts do not count: beside a diagonal neighbour's edge they are
///   its side face's, tilted by the level set's smoothing, and carried the upper course's load;
/// - else, where the two directions lie within 90 degrees of each other (features beside each
///   other, whose wedges share a whole fan of normals: a cube's edge against its diagonal
///   neighbour's, as in a wall of flush cubes) and the particle is at most `tolerance` m deep,
///   no contact, as the box-box narrow phase treats boxes that share only an edge; a diagonal
///   normal there pushed each course sideways into the next column;
/// - else the directions' bisector (for mirrored features, the face they share).
///
/// A contact whose final normal `closing` does not keep is dropped too.
pub fn settle_sharp(contacts: &mut Vec<Contact>, sharp: &[SharpContact], closing: &Closing, tolerance: f64) {
    if sharp.is_empty() {
        return;
    }
    let mut next = 0;
    let mut face = DVec3::ZERO;
    for (index, contact) in contacts.iter().enumerate() {
        if sharp.get(next).is_some_and(|s| s.index == index) {
            next += 1;
        } else if contact.depth >= -tolerance {
            face += contact.normal;
        }
    }
    let face = face.normalize_or_zero();
    let mut dropped: SmallVec<[usize; 16]> = SmallVec::new();
    for s in sharp.iter() {
        let contact = &mut contacts[s.index];
        let normal = if face != DVec3::ZERO && face.dot(s.target) > 0.0 && face.dot(s.inward) > 0.0 {
            Some(face)
        } else if contact.depth <= tolerance && s.target.dot(s.inward) > 0.0 {
            None
        } else {
            Some((s.target + s.inward).try_normalize().unwrap_or(s.target))
        };
        match normal {
            Some(normal) => {
                let outward = if s.target_is_b { normal } else { -normal };
                contact.normal = normal;
                contact.point = s.particle + outward * (0.5 * contact.depth);
                if !closing.keeps_gap(-contact.depth, s.particle, normal) {
                    dropped.push(s.index);
                }
            }
            None => dropped.push(s.index),
        }
    }
    if dropped.is_empty() {
        return;
    }
    let mut index = 0;
    let mut next = 0;
    contacts.retain(|_| {
        let drop = dropped.get(next) == Some(&index);
        next += usize::from(drop);
        index += 1;
        !drop
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trimesh::TriMesh;

    /// A level-set cube's own particles: smooth with the face's exact normal a cell and a half or
    /// more from its edges, sharp within half a cell of them, and a corner's normal its diagonal.
    #[test]
    fn surface_normal_of_a_level_set_cube_is_sharp_only_near_its_edges() {
        let cube = Collider::from_mesh(&TriMesh::cuboid(DVec3::splat(0.5)), 24, 0.1).unwrap();
        let cell = 1.0 / 24.0;
        let (mut smooth, mut sharp) = (0, 0);
        for &p in cube.particles() {
            let normal = SurfaceNormal::of_collider(&cube, p);
            let q = DVec3::splat(0.5) - p.abs();
            let mut depths = [q.x, q.y, q.z];
            depths.sort_by(f64::total_cmp);
            // depths[0] is 0 (the particle's face); depths[1] its distance to the nearest edge.
            if depths[1] > 1.5 * cell {
                assert!(normal.smooth, "{p:?}: {normal:?}");
                let face = DVec3::from(q.to_array().map(|x| if x < 1e-9 { 1.0 } else { 0.0 })) * p.signum();
                assert!((normal.direction - face).length() < 1e-9, "{p:?}: {normal:?}");
                smooth += 1;
            }
            if depths[1] < 0.5 * cell {
                assert!(!normal.smooth, "{p:?}: {normal:?}");
                sharp += 1;
            }
            if depths[2] < 1e-9 {
                let diagonal = p.signum() / 3f64.sqrt();
                assert!((normal.direction - diagonal).length() < 1e-6, "{p:?}: {normal:?}");
            }
        }
        assert!(smooth > 50 && sharp > 20, "{smooth} smooth, {sharp} sharp");
    }

    /// A plate under two cells thick (every face gradient shortened) and balls six to sixteen cells
    /// across (shortened by their curvature) are smooth on their faces, with the gradient's
    /// direction; the plate's rim is sharp.
    #[test]
    fn surface_normal_of_thin_plates_and_small_balls_is_smooth_off_their_edges() {
        use crate::grid::GridSpec;
        use crate::pose::Pose;
        use glam::DQuat;
        // The plate's grid laid out in a turned frame, as a fragment's is: the particles and
        // normals are the body's, the lookups in the grid's frame.
        let mesh = TriMesh::cuboid(DVec3::new(0.5, 0.03, 0.5));
        let spec = GridSpec::with_resolution(mesh.bounds().unwrap(), 24, 3).unwrap();
        let grid = crate::level_set::level_set_from_mesh(&mesh, spec).unwrap();
        let frame = Pose::new(
            DVec3::new(0.2, -0.1, 0.3),
            DQuat::from_rotation_x(1.5) * DQuat::from_rotation_z(0.3),
        );
        let particles = crate::particles::sample_surface(&mesh, 0.05, 0).unwrap();
        let moved = particles.iter().map(|&p| frame.transform_point(p)).collect();
        let plate = Collider::from_level_set_in_frame(std::sync::Arc::new(grid), frame, moved).unwrap();
        let (to_geometry, offset) = plate.to_geometry_frame();
        let (mut face, mut shortened, mut rim) = (0, 0, 0);
        for (&p, &normal) in particles.iter().zip(plate.particle_normals()) {
            let in_grid = to_geometry * frame.transform_point(p) + offset;
            assert_eq!(normal, SurfaceNormal::of_collider(&plate, in_grid));
            let gradient = plate.gradient_at_geometry_point(in_grid).length();
            let from_rim = (0.5 - p.x.abs()).min(0.5 - p.z.abs());
            if (p.y.abs() - 0.03).abs() < 1e-9 && from_rim > 0.1 {
                assert!(normal.smooth, "{p:?}: {normal:?}, |g| {gradient}");
                assert!((normal.direction - frame.orientation * DVec3::Y * p.y.signum()).length() < 1e-9);
                face += 1;
                shortened += usize::from(gradient < SMOOTH_GRADIENT);
            }
            if from_rim < 1e-9 {
                assert!(!normal.smooth, "{p:?}: {normal:?}");
                rim += 1;
            }
        }
        assert!(
            face > 100 && shortened == face && rim > 20,
            "{face} face, {shortened} shortened, {rim} rim"
        );
        for cells in [6, 8, 12, 16] {
            let ball = Collider::from_mesh(&TriMesh::icosphere(0.5, 4), cells, 0.05).unwrap();
            let sharp = ball
                .particles()
                .iter()
                .filter(|&&p| !SurfaceNormal::of_collider(&ball, p).smooth)
                .count();
            assert_eq!(
                sharp,
                0,
                "{cells} cells: {sharp} of {} particles sharp",
                ball.particles().len()
            );
        }
    }

    /// An exact box: sharp within the band of an edge, inside or out, smooth elsewhere, with the
    /// faces' bisector on the edge and the way to the edge beyond it.
    #[test]
    fn surface_normal_of_an_exact_box_bisects_its_edges() {
        let cuboid = Cuboid::try_new(DVec3::new(0.5, 0.3, 0.2)).unwrap();
        let at = |x: f64, y: f64, z: f64| cuboid_normal(&cuboid, DVec3::new(x, y, z));
        let face = at(0.1, 0.3, 0.05);
        assert!(face.smooth && face.direction == DVec3::Y);
        let edge = at(0.5, 0.3, 0.0);
        assert!(!edge.smooth);
        assert!((edge.direction - DVec3::new(1.0, 1.0, 0.0).normalize()).length() < 1e-12);
        let corner = at(-0.5, 0.3, -0.2);
        assert!((corner.direction - DVec3::new(-1.0, 1.0, -1.0).normalize()).length() < 1e-12);
        // 0.1 mm in from the edge, 0.05 mm deep: within the band (0.2 mm) of the side face.
        assert!(!at(0.4999, 0.29995, 0.0).smooth);
        // 1 cm in from the edge, 1 mm deep: the top face, clearly.
        assert!(at(0.49, 0.299, 0.0).smooth);
        // Beyond the edge: towards it.
        let beyond = at(0.51, 0.31, 0.0);
        assert!(!beyond.smooth);
        assert!((beyond.direction - DVec3::new(1.0, 1.0, 0.0).normalize()).length() < 1e-12);
        // Above the face, 1 cm in from the edge's slab: smooth.
        assert!(at(0.49, 0.31, 0.0).smooth);
    }

    #[test]
    fn surface_normal_particle_outward_prefers_the_smooth_side() {
        let corner = DVec3::new(1.0, -1.0, 1.0).normalize();
        let edge = DVec3::new(1.0, 1.0, 0.0).normalize();
        // The target's face, whatever the source's corner says.
        assert_eq!(
            particle_outward(smooth(DVec3::Y), || sharp(corner)),
            Outward::Settled(DVec3::Y)
        );
        // The target's edge against the source's face: the face's inward normal.
        assert_eq!(
            particle_outward(sharp(edge), || smooth(-DVec3::Y)),
            Outward::Settled(DVec3::Y)
        );
        // Both sharp: left to the pair.
        let (edge, corner) = (sharp(edge), sharp(corner));
        assert_eq!(
            particle_outward(edge, || corner),
            Outward::Sharp {
                target: edge.direction,
                inward: -corner.direction
            }
        );
    }

    fn smooth(direction: DVec3) -> SurfaceNormal {
        SurfaceNormal {
            direction,
            smooth: true,
        }
    }

    fn sharp(direction: DVec3) -> SurfaceNormal {
        SurfaceNormal {
            direction: direction.normalize(),
            smooth: false,
        }
    }

    /// A pair's contacts: settled ones with `normals`, then sharp ones (target outward, source
    /// inward, depth) at the origin; the normals [`settle_sharp`] leaves, in order.
    fn settled(normals: &[DVec3], sharp: &[(DVec3, DVec3, f64)]) -> Vec<DVec3> {
        let contact = |normal, depth| Contact {
            point: DVec3::ZERO,
            normal,
            depth,
            feature: super::super::FeatureId::of_a(0),
        };
        let mut contacts: Vec<Contact> = normals.iter().map(|&n| contact(n, 0.0)).collect();
        let waiting: Vec<SharpContact> = sharp
            .iter()
            .map(|&(target, inward, depth)| {
                contacts.push(contact(target, depth));
                SharpContact {
                    index: contacts.len() - 1,
                    target: target.normalize(),
                    inward: inward.normalize(),
                    particle: DVec3::ZERO,
                    target_is_b: true,
                }
            })
            .collect();
        settle_sharp(&mut contacts, &waiting, &Closing::at_rest(0.01), 1e-4);
        contacts.iter().map(|c| c.normal).collect()
    }

    #[test]
    fn surface_normal_settle_sharp_takes_the_face_normal_or_drops_features_side_by_side() {
        let near = |a: DVec3, b: DVec3| (a - b).length() < 1e-12;
        // A cube's corner on the corner of the cube it rests on: the face's normal, as the face's
        // other contacts have it.
        let corner_on_corner = (DVec3::new(1.0, 1.0, 1.0), DVec3::new(-1.0, 1.0, -1.0), 0.0);
        let flush = settled(&[DVec3::Y, DVec3::Y], &[corner_on_corner]);
        assert_eq!(flush.len(), 3);
        assert!(near(flush[2], DVec3::Y), "{flush:?}");
        // With no other contact, the bisector: for mirrored corners, the face they share.
        let alone = settled(&[], &[corner_on_corner]);
        assert!(near(alone[0], DVec3::Y), "{alone:?}");
        // Parallel edges side by side (a cube's edge against its diagonal neighbour's), or
        // corners sharing an edge: no contact while apart, touching or within the tolerance.
        let side_by_side = [
            (DVec3::new(1.0, 1.0, 0.0), DVec3::new(1.0, 1.0, 0.0)),
            (DVec3::new(1.0, 1.0, -1.0), DVec3::new(1.0, 1.0, 1.0)),
        ];
        for (target, inward) in side_by_side {
            for depth in [-0.01, 0.0, 1e-4] {
                assert!(settled(&[], &[(target, inward, depth)]).is_empty(), "{target} {depth}");
            }
            // Pressed into each other beyond it: the bisector.
            let pressed = settled(&[], &[(target, inward, 2e-4)]);
            assert!(near(pressed[0], (target.normalize() + inward.normalize()).normalize()));
        }
        // A face normal outside a feature's wedge does not settle it.
        let across = settled(
            &[DVec3::X],
            &[(DVec3::new(-1.0, 1.0, 0.0), DVec3::new(1.0, 1.0, 0.0), 0.0)],
        );
        assert!(near(across[1], DVec3::Y), "{across:?}");
    }
}
