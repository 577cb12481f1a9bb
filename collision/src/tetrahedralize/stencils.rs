//! The part of one lattice tet inside the surface, as tets.
//!
//! After snapping, each lattice vertex is inside (negative), on the surface (zero) or outside
//! (positive), and every edge from an inside to an outside vertex has a cut point. The inside
//! part is the convex hull of the inside and zero vertices and the cut points: a tet, a pyramid
//! over a quadrilateral, or a triangular prism. Quadrilaterals are split by the diagonal through
//! their lowest-numbered vertex, and prisms by the rule of Dompierre, Labbé, Vallet and Camarero
//! (1999, "How to subdivide pyramids, prisms and hexahedra into tetrahedra"), which follows the
//! same rule on all three of their quadrilaterals. Two lattice tets sharing a face see the same
//! vertices, signs and cut points on it, so they split it the same way and the mesh conforms.

use glam::DVec3;
use smallvec::SmallVec;

use crate::tet_mesh::signed_volume;

/// The six edges of a tet, as local vertex pairs.
pub(super) const EDGES: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];

/// The tets of one lattice tet's inside part (at most three).
pub(super) type Pieces = SmallVec<[[u32; 4]; 3]>;

/// The inside part of the positively oriented lattice tet `tet`, as positively oriented tets.
/// `phi` holds each lattice vertex's value after snapping, `cut(a, b)` the vertex id of the cut
/// point on edge `a, b`, and `positions` every vertex's position by id.
pub(super) fn inside_part(tet: &[u32; 4], phi: &[f64], cut: &impl Fn(u32, u32) -> u32, positions: &[DVec3]) -> Pieces {
    let (mut inside, mut zero, mut outside) = (
        SmallVec::<[u32; 4]>::new(),
        SmallVec::<[u32; 4]>::new(),
        SmallVec::<[u32; 4]>::new(),
    );
    for v in tet {
        let value = phi[*v as usize];
        if value < 0.0 {
            inside.push(*v);
        } else if value > 0.0 {
            outside.push(*v);
        } else {
            zero.push(*v);
        }
    }
    let mut pieces = Pieces::new();
    match (inside.as_slice(), zero.as_slice(), outside.as_slice()) {
        ([], _, _) => return pieces,
        (_, _, []) => {
            pieces.push(*tet);
            return pieces;
        }
        (&[a], [], &[p, q, r]) => pieces.push([a, cut(a, p), cut(a, q), cut(a, r)]),
        (&[a], &[z], &[p, q]) => pieces.push([a, z, cut(a, p), cut(a, q)]),
        (&[a], &[y, z], &[p]) => pieces.push([a, y, z, cut(a, p)]),
        (&[a, b], [], &[p, q]) => prism(&mut pieces, [a, cut(a, p), cut(a, q)], [b, cut(b, p), cut(b, q)]),
        (&[a, b], &[z], &[p]) => {
            for triangle in split_quad([a, b, cut(b, p), cut(a, p)]) {
                pieces.push([z, triangle[0], triangle[1], triangle[2]]);
            }
        }
        (&[a, b, c], [], &[p]) => prism(&mut pieces, [a, b, c], [cut(a, p), cut(b, p), cut(c, p)]),
        _ => unreachable!("the sign counts of a tet sum to four"),
    }
    for piece in &mut pieces {
        if signed_volume(piece.map(|v| positions[v as usize])) < 0.0 {
            piece.swap(2, 3);
        }
    }
    pieces
}

/// The two triangles of the quadrilateral `q` (cyclic order), split by the diagonal through its
/// lowest-numbered vertex.
fn split_quad(q: [u32; 4]) -> [[u32; 3]; 2] {
    if q[0].min(q[2]) < q[1].min(q[3]) {
        [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]
    } else {
        [[q[0], q[1], q[3]], [q[1], q[2], q[3]]]
    }
}

/// The three tets of the prism with triangles `p` and `q` and lateral edges `p[i], q[i]`
/// (Dompierre et al. 1999, table 2): a cone from the lowest-numbered vertex over the two faces
/// away from it, so every quadrilateral is split through its lowest-numbered vertex.
fn prism(pieces: &mut Pieces, p: [u32; 3], q: [u32; 3]) {
    let lowest = p.iter().chain(&q).copied().min().expect("six vertices");
    let (p, q) = if q.contains(&lowest) { (q, p) } else { (p, q) };
    let r = p.iter().position(|v| *v == lowest).expect("lowest vertex is in p");
    let (p0, p1, p2) = (p[r], p[(r + 1) % 3], p[(r + 2) % 3]);
    let (q0, q1, q2) = (q[r], q[(r + 1) % 3], q[(r + 2) % 3]);
    if p1.min(q2) < p2.min(q1) {
        pieces.extend([[p0, p1, p2, q2], [p0, p1, q2, q1], [p0, q1, q2, q0]]);
    } else {
        pieces.extend([[p0, p1, p2, q1], [p0, q1, p2, q2], [p0, q1, q2, q0]]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    /// Fraction of a tet where the linear function with vertex values `f` is not positive:
    /// `1 - sum_{f_i > 0} f_i^3 / prod_{j != i} (f_i - f_j)`, the divided-difference formula for
    /// the distribution of a linear function of a uniform point in a simplex (the positive
    /// values must be distinct from all others).
    fn exact_inside_fraction(f: [f64; 4]) -> f64 {
        let outside: f64 = (0..4)
            .filter(|i| f[*i] > 0.0)
            .map(|i| f[i].powi(3) / (0..4).filter(|j| *j != i).map(|j| f[i] - f[j]).product::<f64>())
            .sum();
        1.0 - outside
    }

    #[test]
    fn tetrahedralize_stencils_fill_exactly_the_inside_of_a_linear_field() {
        let mut rng = SplitMix64::new(7);
        let mut cases = 0;
        for pattern in 0..81usize {
            // Sign of each vertex: 0 inside, 1 on the surface, 2 outside.
            let signs: [usize; 4] = std::array::from_fn(|i| pattern / 3usize.pow(i as u32) % 3);
            if signs == [1; 4] {
                // Every vertex on the surface: flat as far as the values tell, so dropped (a
                // neighbour with an inside vertex keeps the space).
                let positions = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
                assert!(inside_part(&[0, 1, 2, 3], &[0.0; 4], &|_, _| unreachable!(), &positions).is_empty());
                continue;
            }
            for _ in 0..20 {
                // A perturbed corner tet: well shaped, positively oriented.
                let base = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
                let corners = base.map(|c| c + rng.unit_vector() * rng.range(0.0, 0.2));
                let volume = signed_volume(corners);
                assert!(volume > 0.0);
                let f: [f64; 4] = signs.map(|s| [-rng.range(0.1, 1.0), 0.0, rng.range(0.1, 1.0)][s]);
                // Random ids for the four corners and six cut points, so every quadrilateral
                // diagonal and every prism rotation gets exercised.
                let mut ids: Vec<u32> = (0..10).collect();
                for i in (1..10).rev() {
                    ids.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
                }
                let mut positions = vec![DVec3::ZERO; 10];
                let mut phi = vec![0.0; 10];
                for i in 0..4 {
                    positions[ids[i] as usize] = corners[i];
                    phi[ids[i] as usize] = f[i];
                }
                for (e, (i, j)) in EDGES.into_iter().enumerate() {
                    if f[i] * f[j] < 0.0 {
                        positions[ids[4 + e] as usize] = corners[i].lerp(corners[j], f[i] / (f[i] - f[j]));
                    }
                }
                let local = |v: u32| ids.iter().position(|id| *id == v).unwrap();
                let cut = |a: u32, b: u32| {
                    let (i, j) = (local(a).min(local(b)), local(a).max(local(b)));
                    ids[4 + EDGES.iter().position(|e| *e == (i, j)).unwrap()]
                };
                let tet = [0, 1, 2, 3].map(|i| ids[i]);
                let pieces = inside_part(&tet, &phi, &cut, &positions);
                let volumes: Vec<f64> = pieces
                    .iter()
                    .map(|p| signed_volume(p.map(|v| positions[v as usize])))
                    .collect();
                assert!(volumes.iter().all(|v| *v > 1e-6), "{signs:?}: {volumes:?}");
                let expected = volume * exact_inside_fraction(f);
                let total: f64 = volumes.iter().sum();
                assert!((total - expected).abs() < 1e-12, "{signs:?}: {total} vs {expected}");
                cases += 1;
            }
        }
        assert_eq!(cases, 80 * 20);
    }
}
