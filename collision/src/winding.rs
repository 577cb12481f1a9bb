//! Generalized winding numbers of triangle meshes (Jacobson, Kavan and Sorkine-Hornung 2013), fast
//! (Barill, Dickson, Schmidt, Levin and Jacobson 2018).
//!
//! The winding number of a closed, outward-wound mesh is 1 inside and 0 outside; for an open mesh
//! (a scan with holes, such as the Stanford bunny) it varies smoothly across the holes, and
//! thresholding it at 1/2 still gives a sensible inside. It is the sum over triangles of the
//! signed solid angle each subtends, over 4 pi. Near the query every triangle's solid angle is
//! exact (van Oosterom and Strackee 1983); a subtree whose triangles are all far away is replaced
//! by its first-order (dipole) expansion `(c - q) . N / (4 pi |c - q|^3)`, with `N` the subtree's
//! area vector and `c` its area-weighted centroid. "Far" means `|c - q| > beta r` with `r` the
//! subtree's radius about `c`; the error then decays like `beta^-2`.

use glam::DVec3;

use crate::bvh::TriangleBvh;

/// Default `beta`: subtrees farther than twice their radius use the dipole expansion, as in the
/// fast-winding-number paper.
pub const DEFAULT_ACCURACY: f64 = 2.0;

/// The far-field data of one BVH node.
#[derive(Clone, Copy, Debug)]
struct Dipole {
    /// Area-weighted centroid of the node's triangles.
    center: DVec3,
    /// Sum of triangle area vectors `(b - a) x (c - a) / 2`.
    area_vector: DVec3,
    /// Radius about `center` of a ball holding every triangle of the node.
    radius: f64,
    /// Total triangle area (the weight of `center`).
    area: f64,
}

/// Winding-number queries over a [`TriangleBvh`].
#[derive(Clone, Debug)]
pub struct WindingNumbers<'a> {
    bvh: &'a TriangleBvh,
    dipoles: Vec<Dipole>,
    accuracy: f64,
}

impl<'a> WindingNumbers<'a> {
    /// Precomputes the far-field expansion of every node of `bvh`, for queries with accuracy
    /// parameter `beta` ([`DEFAULT_ACCURACY`]; larger is slower and more accurate).
    pub fn new(bvh: &'a TriangleBvh, beta: f64) -> Self {
        let nodes = &bvh.nodes;
        let mut dipoles = vec![
            Dipole {
                center: DVec3::ZERO,
                area_vector: DVec3::ZERO,
                radius: 0.0,
                area: 0.0,
            };
            nodes.len()
        ];
        // Children are stored after their parent, so a reverse sweep sees children first.
        for index in (0..nodes.len()).rev() {
            let node = nodes[index];
            dipoles[index] = if node.count > 0 {
                let triangles = &bvh.triangles[node.first as usize..(node.first + node.count) as usize];
                let mut area_vector = DVec3::ZERO;
                let (mut weighted, mut area_sum, mut plain) = (DVec3::ZERO, 0.0, DVec3::ZERO);
                for [a, b, c] in triangles {
                    let n = 0.5 * (*b - *a).cross(*c - *a);
                    let area = n.length();
                    area_vector += n;
                    weighted += (*a + *b + *c) / 3.0 * area;
                    area_sum += area;
                    plain += (*a + *b + *c) / 3.0;
                }
                let center = if area_sum > 0.0 {
                    weighted / area_sum
                } else {
                    plain / triangles.len() as f64
                };
                let radius = triangles
                    .iter()
                    .flatten()
                    .map(|v| (*v - center).length())
                    .fold(0.0, f64::max);
                Dipole {
                    center,
                    area_vector,
                    radius,
                    area: area_sum,
                }
            } else {
                let (left, right) = (dipoles[node.first as usize], dipoles[node.first as usize + 1]);
                let area = left.area + right.area;
                let center = if area > 0.0 {
                    (left.center * left.area + right.center * right.area) / area
                } else {
                    node.bounds.center()
                };
                // A ball about the area-weighted centre covering both children's balls.
                let radius = ((left.center - center).length() + left.radius)
                    .max((right.center - center).length() + right.radius);
                Dipole {
                    center,
                    area_vector: left.area_vector + right.area_vector,
                    radius,
                    area,
                }
            };
        }
        Self {
            bvh,
            dipoles,
            accuracy: beta,
        }
    }

    /// The winding number of the mesh at `query`: 1 inside a closed outward-wound mesh, 0 outside.
    pub fn winding_number(&self, query: DVec3) -> f64 {
        let nodes = &self.bvh.nodes;
        if nodes.is_empty() {
            return 0.0;
        }
        let mut total = 0.0;
        let mut stack: smallvec::SmallVec<[u32; 64]> = smallvec::smallvec![0];
        while let Some(index) = stack.pop() {
            let node = nodes[index as usize];
            let dipole = self.dipoles[index as usize];
            let offset = dipole.center - query;
            let distance = offset.length();
            if distance > self.accuracy * dipole.radius {
                total += offset.dot(dipole.area_vector) / (distance * distance * distance);
                continue;
            }
            if node.count > 0 {
                for t in node.first..node.first + node.count {
                    let [a, b, c] = self.bvh.triangles[t as usize];
                    total += solid_angle(a - query, b - query, c - query);
                }
            } else {
                stack.push(node.first);
                stack.push(node.first + 1);
            }
        }
        total / (4.0 * std::f64::consts::PI)
    }
}

/// Signed solid angle subtended at the origin by triangle `abc` (van Oosterom and Strackee 1983):
/// positive when the origin is behind the triangle (on the side its normal points away from).
pub fn solid_angle(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let numerator = a.dot(b.cross(c));
    let denominator = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    2.0 * numerator.atan2(denominator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trimesh::TriMesh;
    use proptest::prelude::*;

    fn exact(mesh: &TriMesh, q: DVec3) -> f64 {
        (0..mesh.triangles().len())
            .map(|i| {
                let [a, b, c] = mesh.triangle(i);
                solid_angle(a - q, b - q, c - q)
            })
            .sum::<f64>()
            / (4.0 * std::f64::consts::PI)
    }

    #[test]
    fn winding_solid_angle_of_an_octant_triangle() {
        // The triangle (X, Y, Z) seen from the origin covers one octant of the sphere: 4 pi / 8.
        let omega = solid_angle(DVec3::X, DVec3::Y, DVec3::Z);
        assert!((omega - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        assert!((solid_angle(DVec3::X, DVec3::Z, DVec3::Y) + std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn winding_fast_matches_exact_and_classifies(p in prop::array::uniform3(-2.0..2.0f64)) {
            let mesh = TriMesh::icosphere(1.0, 3).transformed(glam::DAffine3::from_scale(DVec3::new(1.5, 0.7, 1.0)));
            let bvh = TriangleBvh::build(&mesh);
            let q = DVec3::from(p);
            let e = exact(&mesh, q);
            // First-order far field: errors fall like beta^-2.
            for (beta, tolerance) in [(DEFAULT_ACCURACY, 5e-2), (4.0, 1.5e-2)] {
                let w = WindingNumbers::new(&bvh, beta).winding_number(q);
                prop_assert!((w - e).abs() < tolerance, "beta {beta}: fast {w} vs exact {e}");
            }
            let inside = (q / DVec3::new(1.5, 0.7, 1.0)).length() < 0.98;
            let outside = (q / DVec3::new(1.5, 0.7, 1.0)).length() > 1.02;
            if inside { prop_assert!((e - 1.0).abs() < 1e-10); }
            if outside { prop_assert!(e.abs() < 1e-10); }
        }
    }

    #[test]
    fn winding_open_mesh_is_half_at_the_hole() {
        // A cube without its top face: at the hole's centre the winding number is one half.
        let (vertices, mut triangles) = TriMesh::cuboid(DVec3::ONE).into_parts();
        triangles.retain(|t| !t.iter().all(|i| i & 2 != 0));
        let open = TriMesh::try_new(vertices, triangles).unwrap();
        let bvh = TriangleBvh::build(&open);
        let fast = WindingNumbers::new(&bvh, DEFAULT_ACCURACY);
        assert!((exact(&open, DVec3::new(0.0, 1.0, 0.0)) - 0.5).abs() < 1e-12);
        assert!(fast.winding_number(DVec3::new(0.0, -0.5, 0.0)) > 0.5);
        assert!(fast.winding_number(DVec3::new(0.0, 1.5, 0.0)) < 0.5);
    }
}
