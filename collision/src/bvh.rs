//! A bounding volume hierarchy over the triangles of a mesh, for closest-point queries (exact
//! unsigned distance) and, with [`crate::winding`], generalized winding numbers.
//!
//! Built once, top-down, splitting each node at the best of 16 binned surface-area-heuristic
//! planes along the axis of largest centroid spread (Wald 2007); leaves hold up to
//! [`LEAF_SIZE`] triangles, stored contiguously in leaf order so a leaf's triangles are
//! adjacent in memory. Construction is sequential and deterministic.

use glam::DVec3;

use crate::aabb::{Aabb, best_binned_split};
use crate::trimesh::TriMesh;

/// Most triangles in a leaf.
pub const LEAF_SIZE: usize = 4;
/// Candidate split planes per node.
const BINS: usize = 16;

/// One node: an interior node's children are `first` and `first + 1`; a leaf holds triangles
/// `first .. first + count` of [`TriangleBvh::triangles`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) bounds: Aabb,
    pub(crate) first: u32,
    /// Number of triangles; zero for an interior node.
    pub(crate) count: u32,
}

/// The hierarchy, with the triangles' corners copied in leaf order.
#[derive(Clone, Debug)]
pub struct TriangleBvh {
    pub(crate) nodes: Vec<Node>,
    /// Triangle corners in leaf order.
    pub(crate) triangles: Vec<[DVec3; 3]>,
    /// Index in the source mesh of each triangle in leaf order.
    pub(crate) source: Vec<u32>,
}

/// The result of a closest-point query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoint {
    /// The closest point on the mesh.
    pub point: DVec3,
    /// Squared distance from the query to it.
    pub distance_squared: f64,
    /// Index in the source mesh of the triangle it lies on (the first such triangle in leaf order
    /// when several tie).
    pub triangle: u32,
}

impl TriangleBvh {
    /// Builds the hierarchy over every triangle of `mesh` (an empty mesh gives an empty tree whose
    /// queries find nothing).
    pub fn build(mesh: &TriMesh) -> Self {
        let count = mesh.triangles().len();
        let corners: Vec<[DVec3; 3]> = (0..count).map(|i| mesh.triangle(i)).collect();
        let centroids: Vec<DVec3> = corners.iter().map(|[a, b, c]| (*a + *b + *c) / 3.0).collect();
        let mut order: Vec<u32> = (0..count as u32).collect();
        let mut nodes = Vec::with_capacity(2 * count / LEAF_SIZE + 1);
        if count > 0 {
            nodes.push(Node {
                bounds: Aabb::EMPTY,
                first: 0,
                count: 0,
            });
            let mut builder = Builder {
                corners: &corners,
                centroids: &centroids,
                order: &mut order,
                nodes: &mut nodes,
            };
            builder.split(0, 0, count);
        }
        let triangles = order.iter().map(|i| corners[*i as usize]).collect();
        Self {
            nodes,
            triangles,
            source: order,
        }
    }

    /// Number of triangles.
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    /// Whether there is no triangle.
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// The closest point of the mesh to `query` among those at squared distance below
    /// `bound_squared` (pass `f64::INFINITY` for no bound); `None` if there is none. A good bound
    /// (for example a neighbouring query's distance plus their separation) prunes most of the
    /// tree.
    pub fn closest_point(&self, query: DVec3, bound_squared: f64) -> Option<ClosestPoint> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut best: Option<ClosestPoint> = None;
        let mut best_squared = bound_squared;
        let mut stack: smallvec::SmallVec<[u32; 64]> = smallvec::smallvec![0];
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if node.bounds.distance_squared(query) >= best_squared {
                continue;
            }
            if node.count > 0 {
                for t in node.first..node.first + node.count {
                    let [a, b, c] = self.triangles[t as usize];
                    let point = closest_point_on_triangle(query, a, b, c);
                    let d2 = (point - query).length_squared();
                    if d2 < best_squared {
                        best_squared = d2;
                        best = Some(ClosestPoint {
                            point,
                            distance_squared: d2,
                            triangle: self.source[t as usize],
                        });
                    }
                }
                continue;
            }
            // Visit the nearer child first: push it last.
            let (left, right) = (node.first, node.first + 1);
            let dl = self.nodes[left as usize].bounds.distance_squared(query);
            let dr = self.nodes[right as usize].bounds.distance_squared(query);
            if dl <= dr {
                stack.push(right);
                stack.push(left);
            } else {
                stack.push(left);
                stack.push(right);
            }
        }
        best
    }
}

struct Builder<'a> {
    corners: &'a [[DVec3; 3]],
    centroids: &'a [DVec3],
    order: &'a mut [u32],
    nodes: &'a mut Vec<Node>,
}

impl Builder<'_> {
    /// Makes node `index` cover `order[start..end]`, splitting it recursively.
    fn split(&mut self, index: usize, start: usize, end: usize) {
        let bounds = self.order[start..end].iter().fold(Aabb::EMPTY, |b, t| {
            let [p, q, r] = self.corners[*t as usize];
            b.including(p).including(q).including(r)
        });
        let count = end - start;
        let make_leaf = |nodes: &mut Vec<Node>| {
            nodes[index] = Node {
                bounds,
                first: start as u32,
                count: count as u32,
            };
        };
        if count <= LEAF_SIZE {
            make_leaf(self.nodes);
            return;
        }
        let Some(mid) = self.partition(start, end, &bounds) else {
            make_leaf(self.nodes);
            return;
        };
        let left = self.nodes.len();
        self.nodes.push(Node {
            bounds: Aabb::EMPTY,
            first: 0,
            count: 0,
        });
        self.nodes.push(Node {
            bounds: Aabb::EMPTY,
            first: 0,
            count: 0,
        });
        self.nodes[index] = Node {
            bounds,
            first: left as u32,
            count: 0,
        };
        self.split(left, start, mid);
        self.split(left + 1, mid, end);
    }

    /// Reorders `order[start..end]` around the cheapest binned SAH plane and returns the split
    /// point; `None` when no plane beats a leaf and the range is small enough to be one. When all
    /// centroids coincide the range is halved.
    fn partition(&mut self, start: usize, end: usize, bounds: &Aabb) -> Option<usize> {
        let centroid_bounds = Aabb::from_points(self.order[start..end].iter().map(|t| self.centroids[*t as usize]));
        let extent = centroid_bounds.size();
        let axis = if extent.x >= extent.y && extent.x >= extent.z {
            0
        } else if extent.y >= extent.z {
            1
        } else {
            2
        };
        let (low, width) = (centroid_bounds.min[axis], extent[axis]);
        if !(width > 0.0) {
            // Coincident centroids: any order is as good as another; split the range in half.
            return Some(start + (end - start) / 2);
        }
        let bin_of = |c: DVec3| (((c[axis] - low) / width * BINS as f64) as usize).min(BINS - 1);
        let mut bin_bounds = [Aabb::EMPTY; BINS];
        let mut bin_counts = [0usize; BINS];
        for t in &self.order[start..end] {
            let bin = bin_of(self.centroids[*t as usize]);
            let [p, q, r] = self.corners[*t as usize];
            bin_bounds[bin] = bin_bounds[bin].including(p).including(q).including(r);
            bin_counts[bin] += 1;
        }
        let (cost, split_bin) = best_binned_split(&bin_bounds, &bin_counts)?;
        let leaf_cost = bounds.surface_area() * (end - start) as f64;
        if cost >= leaf_cost && end - start <= 4 * LEAF_SIZE {
            return None;
        }
        // Stable partition keeps the build deterministic and the leaf order reproducible.
        let (mut left, mut right): (Vec<u32>, Vec<u32>) = self.order[start..end]
            .iter()
            .partition(|t| bin_of(self.centroids[**t as usize]) <= split_bin);
        let mid = start + left.len();
        left.append(&mut right);
        self.order[start..end].copy_from_slice(&left);
        Some(mid)
    }
}

/// The point of triangle `abc` closest to `p` (Ericson, Real-Time Collision Detection, 5.1.5):
/// exact region classification by barycentric tests, no square roots.
pub fn closest_point_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denominator = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denominator, vc * denominator);
    if !(v.is_finite() && w.is_finite()) {
        // A degenerate (zero-area) triangle: its closest point is on one of its edges.
        return [(a, b), (b, c), (c, a)]
            .into_iter()
            .map(|(s, e)| closest_point_on_segment(p, s, e))
            .min_by(|x, y| (*x - p).length_squared().total_cmp(&(*y - p).length_squared()))
            .unwrap_or(a);
    }
    a + ab * v + ac * w
}

/// The point of segment `se` closest to `p`.
pub fn closest_point_on_segment(p: DVec3, s: DVec3, e: DVec3) -> DVec3 {
    let d = e - s;
    let length_squared = d.length_squared();
    if length_squared == 0.0 {
        return s;
    }
    s + d * ((p - s).dot(d) / length_squared).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_force(mesh: &TriMesh, p: DVec3) -> f64 {
        (0..mesh.triangles().len())
            .map(|i| {
                let [a, b, c] = mesh.triangle(i);
                (closest_point_on_triangle(p, a, b, c) - p).length_squared()
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn bvh_closest_point_on_triangle_regions() {
        let (a, b, c) = (DVec3::ZERO, DVec3::X, DVec3::Y);
        let inside = closest_point_on_triangle(DVec3::new(0.2, 0.2, 5.0), a, b, c);
        assert!((inside - DVec3::new(0.2, 0.2, 0.0)).length() < 1e-15);
        assert_eq!(closest_point_on_triangle(DVec3::new(-1.0, -1.0, 0.0), a, b, c), a);
        assert_eq!(closest_point_on_triangle(DVec3::new(2.0, -0.5, 1.0), a, b, c), b);
        assert_eq!(
            closest_point_on_triangle(DVec3::new(0.5, -3.0, 0.0), a, b, c),
            DVec3::new(0.5, 0.0, 0.0)
        );
        assert_eq!(
            closest_point_on_triangle(DVec3::new(1.0, 1.0, 0.0), a, b, c),
            DVec3::new(0.5, 0.5, 0.0)
        );
        // Degenerate triangle: a segment.
        let p = closest_point_on_triangle(DVec3::new(0.5, 1.0, 0.0), a, b, DVec3::X * 0.5);
        assert!((p - DVec3::new(0.5, 0.0, 0.0)).length() < 1e-15);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn bvh_closest_point_matches_brute_force(points in prop::collection::vec(prop::array::uniform3(-3.0..3.0f64), 16)) {
            let mesh = TriMesh::icosphere(1.0, 3).transformed(glam::DAffine3::from_scale(DVec3::new(1.0, 0.5, 2.0)));
            let bvh = TriangleBvh::build(&mesh);
            for p in points {
                let p = DVec3::from(p);
                let found = bvh.closest_point(p, f64::INFINITY).unwrap();
                let exact = brute_force(&mesh, p);
                prop_assert!((found.distance_squared - exact).abs() <= 1e-12 * (1.0 + exact));
                let [a, b, c] = mesh.triangle(found.triangle as usize);
                prop_assert!((closest_point_on_triangle(p, a, b, c) - found.point).length() < 1e-12);
            }
        }
    }

    #[test]
    fn bvh_bound_prunes_and_empty_mesh_finds_nothing() {
        let bvh = TriangleBvh::build(&TriMesh::cuboid(DVec3::ONE));
        assert!(bvh.closest_point(DVec3::new(5.0, 0.0, 0.0), 15.9).is_none());
        assert_eq!(
            bvh.closest_point(DVec3::new(5.0, 0.0, 0.0), 16.1)
                .unwrap()
                .distance_squared,
            16.0
        );
        assert!(
            TriangleBvh::build(&TriMesh::default())
                .closest_point(DVec3::ZERO, f64::INFINITY)
                .is_none()
        );
    }
}
