//! Welding: merging vertices that sit at the same place, so that triangles which meet in space
//! also share vertices and the topology checks see the surface that was meant.
//!
//! Files repeat vertices: OBJ at texture seams (one copy per UV), STL at every triangle corner.
//! [`weld_exact`] merges vertices with bit-equal positions (after mapping -0.0 to +0.0, which
//! compare equal), the default for loading because it can never merge two points that differ.
//! [`weld_within`] merges vertices closer than a tolerance, for scans whose seams were written
//! with round-off, using a spatial hash.
//!
//! Both are deterministic and keep the first occurrence: a merged vertex takes the index and the
//! position of the earliest vertex of its group. The result is then compacted ([`compact`]): only
//! vertices used by some triangle remain, in their original relative order.

use glam::DVec3;
use hashbrown::HashMap;
use smallvec::SmallVec;

use crate::error::GeometryError;
use crate::trimesh::TriMesh;

/// `tolerance` may not be smaller than this fraction of the largest coordinate: below it the
/// spatial hash's cell coordinates lose the precision that guarantees neighbours are found, and
/// the tolerance is within a few units in the last place of the coordinates anyway.
const SMALLEST_RELATIVE_TOLERANCE: f64 = 1.0 / (1u64 << 50) as f64;

/// `mesh` with vertices at bit-equal positions merged (the first occurrence keeps its position),
/// then compacted. Triangles are kept even if two of their corners merge (they were degenerate in
/// the input already; [`crate::topology::inspect`] reports them).
pub fn weld_exact(mesh: &TriMesh) -> TriMesh {
    let (vertices, triangles) = weld_exact_parts(mesh.vertices(), mesh.triangles());
    TriMesh::try_new(vertices, triangles).expect("welding keeps vertices finite and indices in range")
}

/// `mesh` with unused vertices dropped; the others keep their relative order.
pub fn compact(mesh: &TriMesh) -> TriMesh {
    let identity: Vec<u32> = (0..mesh.vertices().len() as u32).collect();
    let (vertices, triangles) = rebuild(mesh.vertices(), mesh.triangles(), &identity, false);
    TriMesh::try_new(vertices, triangles).expect("compacting keeps vertices finite and indices in range")
}

/// `mesh` with every vertex within `tolerance` (Euclidean distance, mesh units) of an earlier kept
/// vertex merged into the earliest such one, then compacted. Greedy in vertex order: kept vertices
/// are more than `tolerance` apart, and every vertex lies within `tolerance` of the one it merged
/// into (chains do not merge transitively). Triangles with two corners merged are dropped: they
/// collapsed below the tolerance. A tolerance of 0 welds bit-equal positions.
///
/// Fails when `tolerance` is negative, not finite, or below 2^-50 of the largest coordinate
/// (use [`weld_exact`] for that).
pub fn weld_within(mesh: &TriMesh, tolerance: f64) -> Result<TriMesh, GeometryError> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(GeometryError::invalid(
            "weld tolerance",
            tolerance,
            "a finite distance >= 0",
        ));
    }
    let vertices = mesh.vertices();
    let representative = if tolerance == 0.0 {
        exact_representatives(vertices)
    } else {
        let largest = vertices.iter().map(|v| v.abs().max_element()).fold(0.0, f64::max);
        if tolerance < largest * SMALLEST_RELATIVE_TOLERANCE {
            return Err(GeometryError::invalid(
                "weld tolerance",
                tolerance,
                "at least 2^-50 of the largest coordinate (use weld_exact for bit-equal welding)",
            ));
        }
        near_representatives(vertices, tolerance)
    };
    let (vertices, triangles) = rebuild(vertices, mesh.triangles(), &representative, true);
    Ok(TriMesh::try_new(vertices, triangles).expect("welding keeps vertices finite and indices in range"))
}

/// [`weld_exact`] on raw arrays (indices must be in range), for the readers.
pub(super) fn weld_exact_parts(vertices: &[DVec3], triangles: &[[u32; 3]]) -> (Vec<DVec3>, Vec<[u32; 3]>) {
    rebuild(vertices, triangles, &exact_representatives(vertices), false)
}

/// For every vertex, the index of the first vertex with the same position.
fn exact_representatives(vertices: &[DVec3]) -> Vec<u32> {
    // Adding +0.0 maps -0.0 to +0.0 and leaves every other value unchanged, so equal positions
    // get equal bits. The map is only queried, never iterated: its order cannot leak.
    let key = |v: DVec3| [v.x, v.y, v.z].map(|c| (c + 0.0).to_bits());
    let mut first: HashMap<[u64; 3], u32> = HashMap::with_capacity(vertices.len());
    vertices
        .iter()
        .enumerate()
        .map(|(i, v)| *first.entry(key(*v)).or_insert(i as u32))
        .collect()
}

/// For every vertex, the earliest kept vertex within `tolerance`, or itself when there is none
/// (it is then kept). Kept vertices are hashed into cubic cells of side `2 * tolerance`: two
/// points within `tolerance` differ by at most half a cell along each axis, so their cells are
/// neighbours, and the 27 cells around a vertex hold every candidate.
fn near_representatives(vertices: &[DVec3], tolerance: f64) -> Vec<u32> {
    let side = 2.0 * tolerance;
    // `as` saturates on overflow; a saturated cell only gathers more candidates to test.
    let cell = |v: DVec3| [v.x, v.y, v.z].map(|c| (c / side).floor() as i64);
    let mut kept: HashMap<[i64; 3], SmallVec<[u32; 4]>> = HashMap::new();
    let mut representative = Vec::with_capacity(vertices.len());
    for (i, v) in vertices.iter().enumerate() {
        let [x, y, z] = cell(*v);
        let mut best: Option<u32> = None;
        for dz in -1..=1i64 {
            for dy in -1..=1i64 {
                for dx in -1..=1i64 {
                    let key = [x.saturating_add(dx), y.saturating_add(dy), z.saturating_add(dz)];
                    // Each cell lists its kept vertices in increasing order: the first within
                    // reach is the cell's earliest.
                    let found = kept.get(&key).and_then(|list| {
                        list.iter()
                            .copied()
                            .find(|k| vertices[*k as usize].distance(*v) <= tolerance)
                    });
                    best = match (best, found) {
                        (Some(b), Some(f)) => Some(b.min(f)),
                        (b, f) => b.or(f),
                    };
                }
            }
        }
        representative.push(best.unwrap_or_else(|| {
            kept.entry([x, y, z]).or_default().push(i as u32);
            i as u32
        }));
    }
    representative
}

/// Triangles with every index replaced by its representative (dropping those with repeated
/// corners when `drop_collapsed`), over the used representatives only, in original order.
fn rebuild(
    vertices: &[DVec3],
    triangles: &[[u32; 3]],
    representative: &[u32],
    drop_collapsed: bool,
) -> (Vec<DVec3>, Vec<[u32; 3]>) {
    let mut merged: Vec<[u32; 3]> = triangles
        .iter()
        .map(|t| t.map(|i| representative[i as usize]))
        .filter(|[a, b, c]| !drop_collapsed || (a != b && b != c && c != a))
        .collect();
    let mut used = vec![false; vertices.len()];
    for i in merged.iter().flatten() {
        used[*i as usize] = true;
    }
    let mut new_index = vec![u32::MAX; vertices.len()];
    let mut kept = Vec::new();
    for (old, index) in new_index.iter_mut().enumerate().filter(|(old, _)| used[*old]) {
        *index = kept.len() as u32;
        kept.push(vertices[old]);
    }
    for triangle in &mut merged {
        *triangle = triangle.map(|i| new_index[i as usize]);
    }
    (kept, merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cube whose 12 triangles each have their own three corners, as in an STL file.
    fn cube_soup() -> TriMesh {
        let cube = TriMesh::cuboid(DVec3::new(1.0, 2.0, 3.0));
        let vertices: Vec<DVec3> = (0..12).flat_map(|t| cube.triangle(t)).collect();
        let triangles = (0..12u32).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
        TriMesh::try_new(vertices, triangles).unwrap()
    }

    #[test]
    fn io_weld_exact_closes_a_triangle_soup() {
        let soup = cube_soup();
        assert!(crate::topology::require_solid(&soup).is_err());
        let welded = weld_exact(&soup);
        assert_eq!(welded.vertices().len(), 8);
        crate::topology::require_solid(&welded).unwrap();
        assert_eq!(welded.signed_volume(), soup.signed_volume());
        // Same corners, in the same triangles.
        for t in 0..12 {
            assert_eq!(welded.triangle(t), soup.triangle(t));
        }
        // First occurrence keeps its index: vertex 0 of the soup is vertex 0 of the result.
        assert_eq!(welded.triangles()[0][0], 0);
    }

    #[test]
    fn io_weld_exact_merges_signed_zeros_and_nothing_else() {
        let vertices = vec![
            DVec3::new(-0.0, 1.0, 0.0),
            DVec3::new(0.0, 1.0, -0.0),
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(1.0 + f64::EPSILON, 0.0, 0.0),
            DVec3::new(9.0, 9.0, 9.0), // unused
        ];
        let mesh = TriMesh::try_new(vertices, vec![[0, 2, 3], [1, 3, 2]]).unwrap();
        let welded = weld_exact(&mesh);
        assert_eq!(welded.triangles(), &[[0, 1, 2], [0, 2, 1]]);
        // The first occurrence's bits survive, sign of zero included.
        assert!(welded.vertices()[0].x.is_sign_negative());
        assert_eq!(welded.vertices().len(), 3);
        assert_eq!(compact(&mesh).vertices().len(), 4);
    }

    #[test]
    fn io_weld_within_rejects_bad_tolerances() {
        let mesh = TriMesh::cuboid(DVec3::splat(1e6));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e-12] {
            let err = weld_within(&mesh, bad).unwrap_err();
            assert!(err.to_string().starts_with("weld tolerance"), "{err}");
        }
        assert_eq!(weld_within(&cube_soup(), 0.0).unwrap(), weld_exact(&cube_soup()));
    }

    /// The definition, by brute force: each vertex merges into the earliest kept vertex in reach.
    fn brute_force(vertices: &[DVec3], tolerance: f64) -> Vec<u32> {
        let mut kept: Vec<u32> = Vec::new();
        vertices
            .iter()
            .enumerate()
            .map(
                |(i, v)| match kept.iter().find(|k| vertices[**k as usize].distance(*v) <= tolerance) {
                    Some(k) => *k,
                    None => {
                        kept.push(i as u32);
                        i as u32
                    }
                },
            )
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn io_weld_within_matches_brute_force(
            points in prop::collection::vec(prop::array::uniform3(-4i32..4), 1..120),
            jitter in prop::collection::vec(prop::array::uniform3(-1.0..1.0f64), 120),
            tolerance in 0.01..1.5f64,
        ) {
            // Lattice points plus small jitter: many near-coincident clusters and boundary cases.
            let vertices: Vec<DVec3> = points
                .iter()
                .zip(&jitter)
                .map(|(p, j)| DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64) * 0.5 + DVec3::from(*j) * 0.05)
                .collect();
            let fast = near_representatives(&vertices, tolerance);
            prop_assert_eq!(&fast, &brute_force(&vertices, tolerance));
            for (i, r) in fast.iter().enumerate() {
                prop_assert!(vertices[*r as usize].distance(vertices[i]) <= tolerance);
            }
            // Through a mesh: kept vertices are more than the tolerance apart.
            let n = vertices.len() as u32;
            let triangles: Vec<[u32; 3]> = (0..n).map(|i| [i, (i + 1) % n, (i + 2) % n]).collect();
            let welded = weld_within(&TriMesh::try_new(vertices, triangles).unwrap(), tolerance).unwrap();
            for (i, a) in welded.vertices().iter().enumerate() {
                for b in &welded.vertices()[i + 1..] {
                    prop_assert!(a.distance(*b) > tolerance);
                }
            }
        }
    }
}
