//! Topology checks: does a triangle mesh bound a solid, and if not, why not.
//!
//! Every undirected edge is counted with the triangles that use it and the direction each one
//! traverses it. A closed, consistently oriented 2-manifold uses every edge exactly twice, once
//! in each direction. Components are found by union-find over shared edges.

use hashbrown::HashMap;

use crate::error::{GeometryError, MeshDefects};
use crate::trimesh::TriMesh;

/// Triangles with area below this fraction of the squared longest edge are degenerate.
const DEGENERATE_AREA_RATIO: f64 = 1e-14;

/// Counts every defect of `mesh` as a solid boundary (see [`MeshDefects`]).
pub fn inspect(mesh: &TriMesh) -> MeshDefects {
    // Per undirected edge (low, high): uses, and uses traversing it low -> high.
    let mut edges: HashMap<(u32, u32), (u32, u32)> = HashMap::with_capacity(mesh.triangles().len() * 3 / 2);
    for triangle in mesh.triangles() {
        for e in 0..3 {
            let (a, b) = (triangle[e], triangle[(e + 1) % 3]);
            let entry = edges.entry((a.min(b), a.max(b))).or_insert((0, 0));
            entry.0 += 1;
            entry.1 += u32::from(a < b);
        }
    }
    let mut defects = MeshDefects::default();
    for (uses, forward) in edges.values() {
        match uses {
            1 => defects.boundary_edges += 1,
            2 if *forward != 1 => defects.inconsistently_oriented_edges += 1,
            2 => {}
            _ => defects.non_manifold_edges += 1,
        }
    }
    defects.degenerate_triangles = (0..mesh.triangles().len())
        .filter(|i| {
            let [a, b, c] = mesh.triangle(*i);
            let twice_area = (b - a).cross(c - a).length();
            let longest = (b - a)
                .length_squared()
                .max((c - b).length_squared())
                .max((a - c).length_squared());
            twice_area <= DEGENERATE_AREA_RATIO * longest || longest == 0.0
        })
        .count();
    defects.components = components(mesh).1;
    defects.signed_volume = mesh.signed_volume();
    defects
}

/// Fails with the full defect count unless `mesh` bounds a solid (closed, manifold, consistently
/// oriented, no degenerate triangles, positive volume).
pub fn require_solid(mesh: &TriMesh) -> Result<(), GeometryError> {
    if mesh.is_empty() {
        return Err(GeometryError::Empty { what: "mesh" });
    }
    let defects = inspect(mesh);
    if defects.is_solid() {
        Ok(())
    } else {
        Err(GeometryError::NotSolid(defects))
    }
}

/// The component of every triangle (triangles sharing an edge are connected) and
/// the number of components. Labels are dense, in order of first appearance.
pub fn components(mesh: &TriMesh) -> (Vec<u32>, usize) {
    let n = mesh.triangles().len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    let mut first_user: HashMap<(u32, u32), u32> = HashMap::with_capacity(n * 3 / 2);
    for (t, triangle) in mesh.triangles().iter().enumerate() {
        for e in 0..3 {
            let (a, b) = (triangle[e], triangle[(e + 1) % 3]);
            let key = (a.min(b), a.max(b));
            match first_user.get(&key) {
                Some(&other) => {
                    let (ra, rb) = (find(&mut parent, t as u32), find(&mut parent, other));
                    if ra != rb {
                        // Union by smaller root keeps the result independent of hash order.
                        let (low, high) = (ra.min(rb), ra.max(rb));
                        parent[high as usize] = low;
                    }
                }
                None => {
                    first_user.insert(key, t as u32);
                }
            }
        }
    }
    let mut labels = vec![u32::MAX; n];
    let mut root_label: HashMap<u32, u32> = HashMap::new();
    for (t, label) in labels.iter_mut().enumerate() {
        let root = find(&mut parent, t as u32);
        let next = root_label.len() as u32;
        *label = *root_label.entry(root).or_insert(next);
    }
    let count = root_label.len();
    (labels, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn topology_closed_meshes_are_solid() {
        for mesh in [TriMesh::cuboid(DVec3::ONE), TriMesh::icosphere(1.0, 3)] {
            let defects = inspect(&mesh);
            assert!(defects.is_solid(), "{defects}");
            assert_eq!(defects.components, 1);
            require_solid(&mesh).unwrap();
        }
    }

    #[test]
    fn topology_counts_holes_flips_and_extra_components() {
        let cube = TriMesh::cuboid(DVec3::ONE);
        let (vertices, mut triangles) = cube.clone().into_parts();
        triangles.pop();
        let open = TriMesh::try_new(vertices.clone(), triangles.clone()).unwrap();
        let defects = inspect(&open);
        assert_eq!(defects.boundary_edges, 3);
        assert!(
            require_solid(&open)
                .unwrap_err()
                .to_string()
                .contains("3 open (boundary) edges")
        );

        let mut flipped = cube.triangles().to_vec();
        flipped[0].swap(1, 2);
        let defects = inspect(&TriMesh::try_new(vertices.clone(), flipped).unwrap());
        assert_eq!(defects.inconsistently_oriented_edges, 3);

        let inside_out: Vec<[u32; 3]> = cube.triangles().iter().map(|[a, b, c]| [*a, *c, *b]).collect();
        let defects = inspect(&TriMesh::try_new(vertices.clone(), inside_out).unwrap());
        assert!(defects.signed_volume < 0.0 && !defects.is_solid());
        assert!(defects.to_string().contains("signed volume -8"), "{defects}");

        // Two cubes side by side: two components, still solid.
        let shifted = cube.transformed(glam::DAffine3::from_translation(DVec3::X * 5.0));
        let mut all = vertices;
        all.extend_from_slice(shifted.vertices());
        let mut tris = cube.triangles().to_vec();
        tris.extend(shifted.triangles().iter().map(|t| t.map(|i| i + 8)));
        let pair = TriMesh::try_new(all, tris).unwrap();
        let defects = inspect(&pair);
        assert_eq!(defects.components, 2);
        assert!(defects.is_solid());
    }

    #[test]
    fn topology_counts_degenerate_and_non_manifold() {
        let v = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z, -DVec3::Z, DVec3::X * 2.0];
        // Three triangles on edge (0, 1) and one sliver with collinear corners.
        let mesh = TriMesh::try_new(v, vec![[0, 1, 2], [1, 0, 3], [0, 1, 4], [0, 1, 5]]).unwrap();
        let defects = inspect(&mesh);
        assert_eq!(defects.non_manifold_edges, 1);
        assert_eq!(defects.degenerate_triangles, 1);
    }
}
