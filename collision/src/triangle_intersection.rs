//! Exact intersection tests between segments and triangles, and between the triangles of one
//! mesh, built on the exact orientation predicates of [`crate::predicates`].
//!
//! All tests treat segments and triangles as closed sets: touching counts as intersecting. Two
//! triangles of a mesh that share vertices are allowed to meet in exactly what they share (the
//! shared vertex or edge); anything more is an intersection ([`mesh_triangles_intersect`]).
//!
//! The reasoning behind the shared-vertex test: if two triangles share only the vertex `s` and
//! are not coplanar, each meets the line where their planes cross in a segment starting at `s`.
//! When those segments overlap beyond `s`, the end of the shorter one lies on the other
//! triangle's edge opposite `s` and inside the first triangle, so testing both opposite edges
//! finds every improper intersection. Coplanar pairs are decided in 2D.

use glam::{DVec2, DVec3};
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::predicates::{orient2d, orient3d};
use crate::trimesh::TriMesh;

/// Whether the closed segment `p q` meets the closed triangle `a b c`.
pub fn segment_meets_triangle(p: DVec3, q: DVec3, [a, b, c]: [DVec3; 3]) -> bool {
    let sp = orient3d(a, b, c, p);
    let sq = orient3d(a, b, c, q);
    if sp == sq && sp != 0 {
        return false;
    }
    if sp == 0 && sq == 0 {
        let axis = projection_axis(&[a, b, c, p, q]);
        let [a, b, c, p, q] = [a, b, c, p, q].map(|x| project(x, axis));
        return segment_meets_triangle_2d(p, q, [a, b, c]);
    }
    // The segment reaches the plane; it meets the triangle when the line p q passes on the same
    // side of (or through) all three edges.
    let s = [orient3d(p, q, a, b), orient3d(p, q, b, c), orient3d(p, q, c, a)];
    !(s.contains(&1) && s.contains(&-1))
}

/// Whether two closed triangles with no shared vertex meet.
pub fn triangles_meet(t: [DVec3; 3], u: [DVec3; 3]) -> bool {
    (0..3).any(|i| segment_meets_triangle(t[i], t[(i + 1) % 3], u))
        || (0..3).any(|i| segment_meets_triangle(u[i], u[(i + 1) % 3], t))
}

/// Whether triangles `t` and `u` of one mesh (vertex indices into `positions`) meet anywhere
/// other than in the vertices and edge they share. A repeated triangle, or a zero-area one
/// folded onto its neighbour, counts as an intersection.
///
/// A floating-point test with a wide margin first answers the pairs that are clearly apart (a
/// separating plane that beats rounding a million times over: most neighbours in a flat region,
/// where the exact predicates would take their slow path); the exact predicates decide the rest.
pub fn mesh_triangles_intersect(positions: &[DVec3], t: [u32; 3], u: [u32; 3]) -> bool {
    !clearly_apart(positions, t, u) && exact_mesh_triangles_intersect(positions, t, u)
}

/// The first pair of triangles of `mesh` (lowest index first, then the lowest partner) that
/// meet anywhere other than in what they share ([`mesh_triangles_intersect`]), or `None` when
/// the surface does not touch itself.
pub fn first_self_intersection(mesh: &TriMesh) -> Option<[u32; 2]> {
    let triangles: Vec<(u32, [u32; 3])> = mesh
        .triangles()
        .iter()
        .enumerate()
        .map(|(t, v)| (t as u32, *v))
        .collect();
    first_meeting_pair(mesh.vertices(), &triangles)
}

/// The first pair of `triangles` (each an id with its vertex indices into `positions`; lowest
/// id first, then the lowest partner) that meet anywhere other than in what they share, or
/// `None`. Candidate pairs come from a sweep over bounding boxes sorted along x; the answer
/// does not depend on the thread count. For meshes whose triangles live in slots with gaps
/// (a mesh being edited) as well as for [`TriMesh`]es.
pub fn first_meeting_pair(positions: &[DVec3], triangles: &[(u32, [u32; 3])]) -> Option<[u32; 2]> {
    let mut boxes: Vec<(Aabb, u32, [u32; 3])> = triangles
        .iter()
        .map(|&(t, v)| (Aabb::from_points(v.map(|i| positions[i as usize])), t, v))
        .collect();
    boxes.sort_by(|a, b| a.0.min.x.total_cmp(&b.0.min.x).then(a.1.cmp(&b.1)));
    (0..boxes.len())
        .into_par_iter()
        .filter_map(|i| {
            let (bounds, t, tv) = boxes[i];
            boxes[i + 1..]
                .iter()
                .take_while(|(other, _, _)| other.min.x <= bounds.max.x)
                .filter(|(other, _, uv)| bounds.overlaps(other) && mesh_triangles_intersect(positions, tv, *uv))
                .map(|(_, u, _)| [t.min(*u), t.max(*u)])
                .min()
        })
        .min()
}

/// Separation in floating point must beat rounding by this factor of the coordinates' scale:
/// a dot product of an axis with a point has a rounding error near 1e-16 of their lengths.
const MARGIN: f64 = 1e-10;

/// Whether triangles `t` and `u` of one mesh are certainly apart beyond what they share, by a
/// plane found in floating point that separates them with a margin far above rounding. Nearly
/// coplanar neighbours (a flat region of a mesh) make the exact predicates take their slow
/// path; most of them are told apart here. `false` means "not known", never "they meet".
///
/// - No shared vertex: a separating axis among the two normals and the six in-plane edge
///   normals (the projections' intervals disjoint by the margin).
/// - One shared vertex `s`: a plane through `s` leaving the other two corners of `t` strictly on
///   one side and those of `u` strictly on the other, its normal across the bisector of one
///   edge of each at `s` (the line between two triangles of a flat fan).
/// - A shared edge: the free corners strictly on opposite sides of the edge's line, so the two
///   cannot be folded onto each other (the only way triangles sharing an edge meet beyond it).
fn clearly_apart(positions: &[DVec3], t: [u32; 3], u: [u32; 3]) -> bool {
    let p = |i: u32| positions[i as usize];
    let shared = t.iter().filter(|i| u.contains(i)).count();
    let (tp, up) = (t.map(p), u.map(p));
    let scale = tp
        .iter()
        .chain(&up)
        .fold(0.0_f64, |m, x| m.max(x.abs().max_element()))
        .max(f64::MIN_POSITIVE);
    match shared {
        0 => {
            let (nt, nu) = (normal(tp), normal(up));
            let edge_normals =
                (0..3).flat_map(|k| [nt.cross(tp[(k + 1) % 3] - tp[k]), nu.cross(up[(k + 1) % 3] - up[k])]);
            [nt, nu].into_iter().chain(edge_normals).any(|axis| {
                let range = |tri: [DVec3; 3]| {
                    let d = tri.map(|x| axis.dot(x));
                    (d[0].min(d[1]).min(d[2]), d[0].max(d[1]).max(d[2]))
                };
                let ((t0, t1), (u0, u1)) = (range(tp), range(up));
                let margin = MARGIN * scale * axis.length();
                t1 + margin < u0 || u1 + margin < t0
            })
        }
        1 => {
            let s = *t.iter().find(|i| u.contains(i)).unwrap_or(&t[0]);
            let others = |tri: [u32; 3]| {
                let k = tri.iter().position(|&i| i == s).unwrap_or(0);
                [p(tri[(k + 1) % 3]) - p(s), p(tri[(k + 2) % 3]) - p(s)]
            };
            let (a, b) = (others(t), others(u));
            let n = (normal(tp).normalize_or_zero() + normal(up).normalize_or_zero()).normalize_or_zero();
            a.iter().any(|x| {
                b.iter().any(|y| {
                    let m = n.cross(x.normalize_or_zero() + y.normalize_or_zero());
                    let margin = MARGIN * scale * m.length();
                    let (da, db) = (a.map(|v| m.dot(v)), b.map(|v| m.dot(v)));
                    let side = |d: [f64; 2], sign: f64| d.iter().all(|v| sign * v > margin);
                    (side(da, 1.0) && side(db, -1.0)) || (side(da, -1.0) && side(db, 1.0))
                })
            })
        }
        2 => {
            let edge: Vec<u32> = t.iter().copied().filter(|i| u.contains(i)).collect();
            let free = |tri: [u32; 3]| tri.iter().copied().find(|i| !edge.contains(i)).unwrap_or(tri[0]);
            let (s0, s1) = (p(edge[0]), p(edge[1]));
            let e = (s1 - s0).normalize_or_zero();
            let across = |x: DVec3| {
                let d = x - s0;
                d - e * e.dot(d)
            };
            let (pt, pu) = (across(p(free(t))), across(p(free(u))));
            e != DVec3::ZERO && pt.dot(pu) < -1e-6 * pt.length() * pu.length()
        }
        _ => false,
    }
}

/// The (unnormalised) right-handed normal of a triangle.
fn normal([a, b, c]: [DVec3; 3]) -> DVec3 {
    (b - a).cross(c - a)
}

/// [`mesh_triangles_intersect`] by the exact predicates alone.
fn exact_mesh_triangles_intersect(positions: &[DVec3], t: [u32; 3], u: [u32; 3]) -> bool {
    let p = |i: u32| positions[i as usize];
    let shared: Vec<u32> = t.iter().copied().filter(|i| u.contains(i)).collect();
    match shared.len() {
        0 => triangles_meet(t.map(p), u.map(p)),
        1 => {
            let s = shared[0];
            let opposite = |tri: [u32; 3]| {
                let k = tri.iter().position(|&i| i == s).unwrap_or(0);
                (p(tri[(k + 1) % 3]), p(tri[(k + 2) % 3]))
            };
            let (t1, t2) = opposite(t);
            let (u1, u2) = opposite(u);
            if segment_meets_triangle(t1, t2, u.map(p)) || segment_meets_triangle(u1, u2, t.map(p)) {
                return true;
            }
            let coplanar = orient3d(p(t[0]), p(t[1]), p(t[2]), u1) == 0 && orient3d(p(t[0]), p(t[1]), p(t[2]), u2) == 0;
            coplanar && coplanar_wedges_overlap(p(s), [t1, t2], [u1, u2])
        }
        2 => {
            let other = |tri: [u32; 3]| tri.iter().copied().find(|i| !shared.contains(i)).unwrap_or(tri[0]);
            let (s0, s1) = (p(shared[0]), p(shared[1]));
            let (ot, ou) = (p(other(t)), p(other(u)));
            if orient3d(s0, s1, ot, ou) != 0 {
                return false;
            }
            // Coplanar: folded onto each other unless the free vertices lie strictly on opposite
            // sides of the shared edge.
            let axis = projection_axis(&[s0, s1, ot, ou]);
            let [s0, s1, ot, ou] = [s0, s1, ot, ou].map(|x| project(x, axis));
            orient2d(s0, s1, ot) * orient2d(s0, s1, ou) >= 0
        }
        _ => true,
    }
}

/// Whether two coplanar triangles `s t1 t2` and `s u1 u2` overlap near their shared corner `s`:
/// an edge of one leaves `s` inside (or along the boundary of) the other's corner wedge.
fn coplanar_wedges_overlap(s: DVec3, t: [DVec3; 2], u: [DVec3; 2]) -> bool {
    let axis = projection_axis(&[s, t[0], t[1], u[0], u[1]]);
    let s = project(s, axis);
    let t = t.map(|x| project(x, axis));
    let u = u.map(|x| project(x, axis));
    let in_wedge = |w: [DVec2; 2], x: DVec2| {
        let turn = orient2d(s, w[0], w[1]);
        turn != 0 && orient2d(s, w[0], x) * turn >= 0 && orient2d(s, x, w[1]) * turn >= 0
    };
    u.iter().any(|&x| in_wedge(t, x)) || t.iter().any(|&x| in_wedge(u, x))
}

/// Whether the closed 2D segment `p q` meets the closed 2D triangle `a b c`.
fn segment_meets_triangle_2d(p: DVec2, q: DVec2, [a, b, c]: [DVec2; 3]) -> bool {
    let turn = orient2d(a, b, c);
    let inside = |x: DVec2| {
        turn != 0 && orient2d(a, b, x) * turn >= 0 && orient2d(b, c, x) * turn >= 0 && orient2d(c, a, x) * turn >= 0
    };
    inside(p)
        || inside(q)
        || segments_meet_2d(p, q, a, b)
        || segments_meet_2d(p, q, b, c)
        || segments_meet_2d(p, q, c, a)
}

/// Whether the closed 2D segments `p q` and `r s` meet.
fn segments_meet_2d(p: DVec2, q: DVec2, r: DVec2, s: DVec2) -> bool {
    let (o1, o2) = (orient2d(p, q, r), orient2d(p, q, s));
    let (o3, o4) = (orient2d(r, s, p), orient2d(r, s, q));
    if o1 * o2 < 0 && o3 * o4 < 0 {
        return true;
    }
    let on = |a: DVec2, b: DVec2, x: DVec2| x.cmpge(a.min(b)).all() && x.cmple(a.max(b)).all();
    (o1 == 0 && on(p, q, r)) || (o2 == 0 && on(p, q, s)) || (o3 == 0 && on(r, s, p)) || (o4 == 0 && on(r, s, q))
}

/// The coordinate axis to drop so that coplanar points project without degenerating: the
/// largest component of the plane's normal, estimated from the points.
fn projection_axis(points: &[DVec3]) -> usize {
    let origin = points[0];
    let mut normal = DVec3::ZERO;
    for i in 1..points.len() {
        for j in i + 1..points.len() {
            let n = (points[i] - origin).cross(points[j] - origin);
            if n.length_squared() > normal.length_squared() {
                normal = n;
            }
        }
    }
    let n = normal.abs();
    if n.x >= n.y && n.x >= n.z {
        0
    } else if n.y >= n.z {
        1
    } else {
        2
    }
}

fn project(x: DVec3, drop_axis: usize) -> DVec2 {
    match drop_axis {
        0 => DVec2::new(x.y, x.z),
        1 => DVec2::new(x.z, x.x),
        _ => DVec2::new(x.x, x.y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> [DVec3; 3] {
        [DVec3::from(a), DVec3::from(b), DVec3::from(c)]
    }

    #[test]
    fn triangle_intersection_crossing_touching_and_apart() {
        let base = tri([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        // Pierces the base.
        assert!(triangles_meet(
            base,
            tri([0.2, 0.2, -1.0], [0.2, 0.2, 1.0], [0.3, 0.3, 1.0])
        ));
        // Touches it at one point (its vertex on the base's interior).
        assert!(triangles_meet(
            base,
            tri([0.2, 0.2, 0.0], [0.2, 0.2, 1.0], [0.3, 0.4, 1.0])
        ));
        // Lifted by the smallest representable step above it.
        let up = 1e-300;
        assert!(!triangles_meet(
            base,
            tri([0.2, 0.2, up], [0.2, 0.2, 1.0], [0.3, 0.4, 1.0])
        ));
        // Coplanar and overlapping, coplanar and apart.
        assert!(triangles_meet(
            base,
            tri([0.1, 0.1, 0.0], [0.2, 0.1, 0.0], [0.1, 0.2, 0.0])
        ));
        assert!(!triangles_meet(
            base,
            tri([0.6, 0.6, 0.0], [1.6, 0.6, 0.0], [0.6, 1.6, 0.0])
        ));
        // Coplanar, touching along an edge segment.
        assert!(triangles_meet(
            base,
            tri([0.5, 0.5, 0.0], [1.0, 1.0, 0.0], [0.0, 2.0, 0.0])
        ));
    }

    #[test]
    fn triangle_intersection_finds_the_first_pair_where_a_surface_meets_itself() {
        let sphere = TriMesh::icosphere(1.0, 2);
        assert_eq!(first_self_intersection(&sphere), None);
        // Two overlapping spheres in one mesh: the first pair agrees with a brute-force search.
        let (mut vertices, mut triangles) = sphere.clone().into_parts();
        let n = vertices.len() as u32;
        vertices.extend(sphere.vertices().iter().map(|v| *v + DVec3::new(0.9, 0.1, 0.05)));
        triangles.extend(sphere.triangles().iter().map(|t| t.map(|i| i + n)));
        let two = TriMesh::try_new(vertices, triangles).unwrap();
        let brute = (0..two.triangles().len() as u32)
            .flat_map(|t| (t + 1..two.triangles().len() as u32).map(move |u| [t, u]))
            .find(|&[t, u]| {
                mesh_triangles_intersect(two.vertices(), two.triangles()[t as usize], two.triangles()[u as usize])
            });
        assert!(brute.is_some());
        assert_eq!(first_self_intersection(&two), brute);
    }

    #[test]
    fn triangle_intersection_in_a_mesh_ignores_what_neighbours_share() {
        let positions = [
            DVec3::ZERO,
            DVec3::X,
            DVec3::Y,
            DVec3::new(0.0, -1.0, 0.0),
            DVec3::new(0.3, 0.3, 0.0),
            DVec3::new(0.2, 0.2, 1.0),
            DVec3::new(0.2, 0.2, -1.0),
        ];
        // Edge neighbours on opposite sides of their shared edge: fine.
        assert!(!mesh_triangles_intersect(&positions, [0, 1, 2], [1, 0, 3]));
        // Folded onto each other (free vertices on the same side): an intersection.
        assert!(mesh_triangles_intersect(&positions, [0, 1, 2], [1, 0, 4]));
        // Sharing vertex 0 and piercing: an intersection; sharing it and leaning away: none.
        assert!(mesh_triangles_intersect(&positions, [0, 1, 2], [0, 5, 6]));
        assert!(!mesh_triangles_intersect(&positions, [0, 1, 2], [0, 3, 6]));
        // Coplanar corner wedges, one inside the other.
        assert!(mesh_triangles_intersect(&positions, [0, 1, 2], [0, 4, 2]));
        // Repeated triangle.
        assert!(mesh_triangles_intersect(&positions, [0, 1, 2], [1, 2, 0]));
    }

    /// The floating-point shortcut never calls a meeting pair apart, and it answers nine in ten
    /// pairs of a flat mesh's neighbours that are apart (the case it is for; 96 percent when
    /// written): corners on a small lattice in a tilted plane, jittered off it or not, sharing
    /// none, one or two corners. "Apart" is decided on the same lattice in the plane z = 0,
    /// where coplanarity is exact.
    #[test]
    fn triangle_intersection_shortcut_agrees_with_the_exact_test() {
        let mut rng = shatter_integrators::SplitMix64::new(7);
        let mut next = move || rng.next_u64();
        let (u, v) = (DVec3::new(0.8, 0.36, 0.48), DVec3::new(-0.6, 0.48, 0.64));
        let (mut flat_apart, mut flat_told, mut checked) = (0, 0, 0);
        for case in 0..40_000 {
            let jitter = [0.0, 1e-13, 1e-3][case % 3];
            let lattice: Vec<(f64, f64, f64)> = (0..6)
                .map(|_| {
                    let (i, j) = ((next() % 5) as f64, (next() % 5) as f64);
                    (i, j, (next() % 2001) as f64 / 1000.0 - 1.0)
                })
                .collect();
            let positions: Vec<DVec3> = lattice
                .iter()
                .map(|&(i, j, off)| {
                    DVec3::new(0.1, -0.2, 0.3) + u * (0.25 * i) + v * (0.25 * j) + u.cross(v) * (jitter * off)
                })
                .collect();
            // The same triangles in the plane z = 0, where coplanarity is exact.
            let flat: Vec<DVec3> = lattice.iter().map(|&(i, j, _)| DVec3::new(i, j, 0.0)).collect();
            let t = [0, 1, 2];
            let shared = case % 4;
            let w = match shared {
                0 => [3, 4, 5],
                1 => [0, 4, 5],
                2 => [1, 0, 5],
                _ => [3, 0, 5],
            };
            let (d1, d2) = (positions[t[1]] - positions[t[0]], positions[t[2]] - positions[t[0]]);
            let e = positions[w[1]] - positions[w[0]];
            if d1.cross(d2).length() < 1e-6 || e.cross(positions[w[2]] - positions[w[0]]).length() < 1e-6 {
                continue;
            }
            let (t, w) = (t.map(|i| i as u32), w.map(|i| i as u32));
            let exact = exact_mesh_triangles_intersect(&positions, t, w);
            let apart = clearly_apart(&positions, t, w);
            assert!(!(apart && exact), "case {case}: {positions:?} {t:?} {w:?}");
            checked += 1;
            if jitter == 0.0 && !exact_mesh_triangles_intersect(&flat, t, w) {
                flat_apart += 1;
                flat_told += usize::from(apart);
            }
        }
        assert!(checked > 20_000, "{checked} pairs checked");
        assert!(
            flat_told * 10 > flat_apart * 9,
            "the shortcut told {flat_told} of {flat_apart} coplanar pairs apart"
        );
    }
}
