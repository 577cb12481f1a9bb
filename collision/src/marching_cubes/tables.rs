//! The fixed tables of marching tetrahedra: how every cube splits into six tetrahedra, and which
//! surface polygon each inside/outside pattern of a tetrahedron's corners produces.
//!
//! Cube corners are numbered by bits: bit 0 is `+x`, bit 1 `+y`, bit 2 `+z` (the numbering of
//! [`Cuboid::corners`](crate::Cuboid::corners)).

/// The Kuhn (Freudenthal) split of the unit cube: one tetrahedron per order of the axes, each the
/// path `0 -> e_first -> e_first + e_second -> 7` (Kuhn 1960; Freudenthal 1942). Every tetrahedron
/// edge joins a corner to a corner with strictly more bits, so every edge runs along one of the
/// seven "forward" directions `+x, +y, +x+y, +z, +x+z, +y+z, +x+y+z`: each cube face is cut by its
/// diagonal through its lowest corner, the same diagonal for the two cubes that share the face,
/// which is what makes the triangulation of the whole grid conforming.
///
/// The corners are listed so that every tetrahedron is positively oriented
/// (`det(c1 - c0, c2 - c0, c3 - c0) > 0`; for odd axis orders the last two are swapped).
pub(super) const KUHN_TETRAHEDRA: [[u8; 4]; 6] = [
    [0, 1, 3, 7], // x, y, z (even)
    [0, 1, 7, 5], // x, z, y (odd)
    [0, 2, 7, 3], // y, x, z (odd)
    [0, 2, 6, 7], // y, z, x (even)
    [0, 4, 5, 7], // z, x, y (even)
    [0, 4, 7, 6], // z, y, x (odd)
];

/// For every inside pattern of a positively oriented tetrahedron's four corners (bit `s` set when
/// corner slot `s` is inside), the surface polygon as a cycle of tetrahedron edges (pairs of corner
/// slots), wound counter-clockwise seen from the outside corners. Empty when all four corners
/// agree, a triangle around a lone corner, a quadrilateral separating two from two.
///
/// Derivation: in the positive tetrahedron `(a, b, c, d)` the triangle `(ab, ac, ad)` around an
/// inside `a` is parallel to the face `(b, c, d)`, whose normal points away from `a`, i.e.
/// outwards; with `a, b` inside, the quad `(ac, ad, bd, bc)` has its normal towards `c, d`. Every
/// other case is one of these under an even permutation of the corners (which keeps the
/// orientation), or its reverse when inside and outside swap. `marching_cubes_case_table_*`
/// checks each case geometrically.
pub(super) const CASES: [&[[u8; 2]]; 16] = [
    &[],
    &[[0, 1], [0, 2], [0, 3]],         // a
    &[[1, 0], [1, 3], [1, 2]],         // b
    &[[0, 2], [0, 3], [1, 3], [1, 2]], // a b
    &[[2, 0], [2, 1], [2, 3]],         // c
    &[[0, 3], [0, 1], [2, 1], [2, 3]], // a c
    &[[1, 0], [1, 3], [2, 3], [2, 0]], // b c
    &[[3, 0], [3, 1], [3, 2]],         // a b c (d outside)
    &[[3, 0], [3, 2], [3, 1]],         // d
    &[[0, 1], [0, 2], [3, 2], [3, 1]], // a d
    &[[1, 2], [1, 0], [3, 0], [3, 2]], // b d
    &[[2, 0], [2, 3], [2, 1]],         // a b d (c outside)
    &[[2, 0], [2, 1], [3, 1], [3, 0]], // c d
    &[[1, 0], [1, 2], [1, 3]],         // a c d (b outside)
    &[[0, 1], [0, 3], [0, 2]],         // b c d (a outside)
    &[],
];

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn corner(bits: u8) -> DVec3 {
        DVec3::new(
            f64::from(bits & 1),
            f64::from((bits >> 1) & 1),
            f64::from((bits >> 2) & 1),
        )
    }

    #[test]
    fn marching_cubes_kuhn_split_is_positive_and_fills_the_cube() {
        let mut volume = 0.0;
        for tet in KUHN_TETRAHEDRA {
            let [a, b, c, d] = tet.map(corner);
            let det = (b - a).dot((c - a).cross(d - a));
            assert_eq!(det, 1.0, "{tet:?}");
            volume += det / 6.0;
            // Every edge joins a corner to a superset of its bits: a forward lattice direction.
            for (i, u) in tet.iter().enumerate() {
                for v in &tet[i + 1..] {
                    assert!(u & v == *u.min(v) && u != v, "edge {u}-{v} of {tet:?}");
                }
            }
        }
        assert!((volume - 1.0f64).abs() < 1e-15);
        // The six face diagonals used are the ones through each face's lowest corner.
        let mut diagonals: Vec<(u8, u8)> = KUHN_TETRAHEDRA
            .iter()
            .flat_map(|t| (0..4).flat_map(move |i| (i + 1..4).map(move |j| (t[i].min(t[j]), t[i].max(t[j])))))
            .filter(|(u, v)| (u ^ v).count_ones() == 2)
            .collect();
        diagonals.sort_unstable();
        diagonals.dedup();
        assert_eq!(diagonals, [(0, 3), (0, 5), (0, 6), (1, 7), (2, 7), (4, 7)]);
    }

    #[test]
    fn marching_cubes_case_table_cuts_every_crossing_edge_once_facing_outwards() {
        for tet in KUHN_TETRAHEDRA {
            let points = tet.map(corner);
            for (mask, polygon) in CASES.iter().enumerate() {
                let inside = |s: u8| mask & (1 << s) != 0;
                let mut crossing: Vec<(u8, u8)> = (0..4u8)
                    .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
                    .filter(|(i, j)| inside(*i) != inside(*j))
                    .collect();
                let mut used: Vec<(u8, u8)> = polygon.iter().map(|[i, j]| (*i.min(j), *i.max(j))).collect();
                crossing.sort_unstable();
                used.sort_unstable();
                assert_eq!(crossing, used, "case {mask:04b}");
                if polygon.is_empty() {
                    continue;
                }
                // Vertices at edge midpoints; Newell's normal of the polygon must point from the
                // inside corners towards the outside ones.
                let vertices: Vec<DVec3> = polygon
                    .iter()
                    .map(|[i, j]| 0.5 * (points[*i as usize] + points[*j as usize]))
                    .collect();
                let normal: DVec3 = (0..vertices.len())
                    .map(|k| vertices[k].cross(vertices[(k + 1) % vertices.len()]))
                    .sum();
                let centre = |want: bool| {
                    let chosen: Vec<DVec3> = (0..4u8)
                        .filter(|s| inside(*s) == want)
                        .map(|s| points[s as usize])
                        .collect();
                    chosen.iter().sum::<DVec3>() / chosen.len() as f64
                };
                let outward = centre(false) - centre(true);
                let cosine = normal.normalize().dot(outward.normalize());
                assert!(cosine > 0.3, "case {mask:04b} of {tet:?}: cosine {cosine}");
            }
        }
    }
}
