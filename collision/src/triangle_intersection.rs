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

use crate::predicates::{orient2d, orient3d};

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
pub fn mesh_triangles_intersect(positions: &[DVec3], t: [u32; 3], u: [u32; 3]) -> bool {
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
}
