//! Tetrahedral meshes: the volume representation that the fracture-modes method (Sellán 2023:
//! per-tet displacements, jumps across interior faces, a Laplacian on vertices) and the SPH method
//! (Chen 2014: one particle per tet, links between face-adjacent tets) share.
//!
//! Tets are vertex index quadruples `[a, b, c, d]`, positively oriented:
//! `(b - a) . ((c - a) x (d - a)) > 0`. Local face `i` is the face opposite local vertex `i`,
//! wound counter-clockwise seen from outside the tet ([`FACE_VERTICES`]), so the boundary faces of
//! a solid tet mesh form a closed, outward-wound [`TriMesh`].
//!
//! Everything derived (volumes, centroids, face adjacency, interior and boundary face lists) is
//! computed once, in [`TetMesh::try_new`], and is a pure function of the vertex and tet arrays:
//! the face map is a hash map, but it is only looked up, never iterated, and every list comes out
//! in tet order, then local face order.

use glam::DVec3;
use hashbrown::HashMap;
use hashbrown::hash_map::Entry;
use rayon::prelude::*;

use crate::aabb::Aabb;
use crate::error::GeometryError;
use crate::trimesh::{TriMesh, check_indexed};

/// A tet whose volume is at most this fraction of the cube of its longest edge is refused as
/// degenerate. Scale-free, so it means the same for a millimetre chip and a boulder; a regular tet
/// has `V / l^3 = 0.118`, so the threshold only rejects tets flat to round-off.
pub const DEGENERATE_VOLUME_RATIO: f64 = 1e-12;

/// Local vertices of face `i` (opposite vertex `i`), counter-clockwise seen from outside a
/// positively oriented tet.
pub const FACE_VERTICES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// Marks a tet face on the boundary in [`TetMesh::face_neighbors`].
pub const NO_NEIGHBOR: u32 = u32::MAX;

/// A triangle shared by two tets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InteriorFace {
    /// The two tets, lower index first.
    pub tets: [u32; 2],
    /// The triangle, wound counter-clockwise seen from `tets[0]`'s outside: its normal points
    /// from `tets[0]` into `tets[1]`.
    pub vertices: [u32; 3],
    /// Area of the triangle, m^2.
    pub area: f64,
}

/// A tet face that no other tet shares: part of the solid's surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundaryFace {
    /// The tet it belongs to.
    pub tet: u32,
    /// Which of its faces (the local index of the opposite vertex).
    pub face: u8,
    /// The triangle, wound counter-clockwise seen from outside the solid.
    pub vertices: [u32; 3],
}

/// A conforming tetrahedral mesh in the body frame, with its face adjacency.
#[derive(Clone, Debug, PartialEq)]
pub struct TetMesh {
    vertices: Vec<DVec3>,
    tets: Vec<[u32; 4]>,
    volumes: Vec<f64>,
    centroids: Vec<DVec3>,
    neighbors: Vec<[u32; 4]>,
    interior_faces: Vec<InteriorFace>,
    boundary_faces: Vec<BoundaryFace>,
}

impl TetMesh {
    /// A tet mesh from vertex positions (m, body frame) and tets, with its derived data.
    ///
    /// Fails, naming the first offender, on: no tet; a non-finite vertex; a tet index out of
    /// range; a tet using a vertex twice; an inverted or flat tet (volume at most
    /// [`DEGENERATE_VOLUME_RATIO`] times its longest edge cubed, with its signed volume); a face
    /// shared by more than two tets, or by two tets on the same side of it (duplicated or
    /// overlapping tets). Vertices no tet uses are allowed and kept.
    pub fn try_new(vertices: Vec<DVec3>, tets: Vec<[u32; 4]>) -> Result<Self, GeometryError> {
        if tets.is_empty() {
            return Err(GeometryError::Empty { what: "tet mesh" });
        }
        check_indexed(&vertices, &tets)?;
        for (element, tet) in tets.iter().enumerate() {
            if (0..4).any(|i| (i + 1..4).any(|j| tet[i] == tet[j])) {
                return Err(GeometryError::invalid("tet", (element, tet), "four distinct vertices"));
            }
        }
        let corners = |tet: &[u32; 4]| tet.map(|i| vertices[i as usize]);
        let volumes: Vec<f64> = tets.par_iter().map(|t| signed_volume(corners(t))).collect();
        for (index, tet) in tets.iter().enumerate() {
            let p = corners(tet);
            let longest = (0..4)
                .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
                .map(|(i, j)| p[i].distance(p[j]))
                .fold(0.0, f64::max);
            if !(volumes[index] > DEGENERATE_VOLUME_RATIO * longest.powi(3)) {
                return Err(GeometryError::InvalidParameter {
                    name: "tet",
                    value: format!("{index} {tet:?} with signed volume {:e}", volumes[index]),
                    expected: "a positive volume above 1e-12 times its longest edge cubed \
                               (order the vertices so that (b - a) . ((c - a) x (d - a)) > 0)",
                });
            }
        }
        let centroids = tets
            .par_iter()
            .map(|t| corners(t).iter().sum::<DVec3>() / 4.0)
            .collect();
        let neighbors = face_adjacency(&tets)?;
        let mut mesh = Self {
            vertices,
            tets,
            volumes,
            centroids,
            neighbors,
            interior_faces: Vec::new(),
            boundary_faces: Vec::new(),
        };
        mesh.list_faces();
        Ok(mesh)
    }

    /// Fills the interior and boundary face lists, in tet order then local face order.
    fn list_faces(&mut self) {
        for (t, tet) in self.tets.iter().enumerate() {
            for (face, local) in FACE_VERTICES.iter().enumerate() {
                let triangle = local.map(|i| tet[i]);
                let other = self.neighbors[t][face];
                if other == NO_NEIGHBOR {
                    self.boundary_faces.push(BoundaryFace {
                        tet: t as u32,
                        face: face as u8,
                        vertices: triangle,
                    });
                } else if other as usize > t {
                    let [a, b, c] = triangle.map(|i| self.vertices[i as usize]);
                    self.interior_faces.push(InteriorFace {
                        tets: [t as u32, other],
                        vertices: triangle,
                        area: 0.5 * (b - a).cross(c - a).length(),
                    });
                }
            }
        }
    }

    /// Vertex positions, m, body frame.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// Tets as positively oriented vertex index quadruples.
    pub fn tets(&self) -> &[[u32; 4]] {
        &self.tets
    }

    /// The corners of tet `index`, m.
    pub fn tet(&self, index: usize) -> [DVec3; 4] {
        self.tets[index].map(|i| self.vertices[i as usize])
    }

    /// Volume of every tet, m^3 (all positive).
    pub fn volumes(&self) -> &[f64] {
        &self.volumes
    }

    /// Total volume, m^3, summed in tet order.
    pub fn volume(&self) -> f64 {
        self.volumes.iter().sum()
    }

    /// Centroid of every tet (the mean of its corners), m: where the SPH method puts a tet's
    /// particle.
    pub fn centroids(&self) -> &[DVec3] {
        &self.centroids
    }

    /// For every tet and each local face `i` (opposite vertex `i`), the tet across that face, or
    /// [`NO_NEIGHBOR`] on the boundary.
    pub fn face_neighbors(&self) -> &[[u32; 4]] {
        &self.neighbors
    }

    /// The tet across local face `face` of tet `tet`; `None` on the boundary.
    pub fn neighbor(&self, tet: usize, face: usize) -> Option<u32> {
        Some(self.neighbors[tet][face]).filter(|n| *n != NO_NEIGHBOR)
    }

    /// Every face shared by two tets, once, ordered by its lower tet then that tet's local face.
    pub fn interior_faces(&self) -> &[InteriorFace] {
        &self.interior_faces
    }

    /// Every face on the solid's surface, ordered by tet then local face.
    pub fn boundary_faces(&self) -> &[BoundaryFace] {
        &self.boundary_faces
    }

    /// The solid's surface as a triangle mesh over the same vertex array (vertex `i` of the
    /// surface is vertex `i` of the tet mesh; interior vertices are simply unused), wound
    /// counter-clockwise seen from outside.
    pub fn boundary_surface(&self) -> TriMesh {
        let triangles = self.boundary_faces.iter().map(|f| f.vertices).collect();
        TriMesh::try_new(self.vertices.clone(), triangles).expect("indices were validated")
    }

    /// Bounding box of the vertices the tets use.
    pub fn bounds(&self) -> Aabb {
        Aabb::from_points(self.tets.iter().flatten().map(|i| self.vertices[*i as usize]))
    }

    /// The vertex and tet arrays.
    pub fn into_parts(self) -> (Vec<DVec3>, Vec<[u32; 4]>) {
        (self.vertices, self.tets)
    }
}

/// Signed volume of the tet `[a, b, c, d]`: positive when `(b - a) . ((c - a) x (d - a)) > 0`.
pub fn signed_volume([a, b, c, d]: [DVec3; 4]) -> f64 {
    (b - a).dot((c - a).cross(d - a)) / 6.0
}

/// The tet across every face, from a map keyed by the face's sorted vertices. Fails on a face
/// used three times, or twice from the same side.
fn face_adjacency(tets: &[[u32; 4]]) -> Result<Vec<[u32; 4]>, GeometryError> {
    let mut neighbors = vec![[NO_NEIGHBOR; 4]; tets.len()];
    // Per face: the first user (tet, local face) and the second user's tet, if any.
    let mut faces: HashMap<[u32; 3], ((u32, u8), u32)> = HashMap::with_capacity(tets.len() * 2 + 4);
    for (t, tet) in tets.iter().enumerate() {
        for (face, local) in FACE_VERTICES.iter().enumerate() {
            let triangle = local.map(|i| tet[i]);
            let (key, parity) = sorted_with_parity(triangle);
            match faces.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(((t as u32, face as u8), NO_NEIGHBOR));
                }
                Entry::Occupied(mut slot) => {
                    let ((first, first_face), second) = *slot.get();
                    if second != NO_NEIGHBOR {
                        return Err(GeometryError::InvalidParameter {
                            name: "tet face",
                            value: format!("{key:?} (used by tets {first}, {second} and {t})"),
                            expected: "at most two tets per face (a manifold tet mesh)",
                        });
                    }
                    let first_triangle = FACE_VERTICES[first_face as usize].map(|i| tets[first as usize][i]);
                    // Two tets on opposite sides wind the shared face in opposite directions.
                    if sorted_with_parity(first_triangle).1 == parity {
                        return Err(GeometryError::InvalidParameter {
                            name: "tet face",
                            value: format!("{key:?} (tets {first} and {t} lie on the same side of it)"),
                            expected: "tets sharing a face to lie on opposite sides (no duplicated \
                                       or overlapping tets)",
                        });
                    }
                    slot.get_mut().1 = t as u32;
                    neighbors[first as usize][first_face as usize] = t as u32;
                    neighbors[t][face] = first;
                }
            }
        }
    }
    Ok(neighbors)
}

/// The three indices sorted, and whether sorting them took an odd number of swaps (the winding
/// of the triangle relative to its sorted order).
fn sorted_with_parity(mut v: [u32; 3]) -> ([u32; 3], bool) {
    let mut odd = false;
    for (i, j) in [(0, 1), (1, 2), (0, 1)] {
        if v[i] > v[j] {
            v.swap(i, j);
            odd = !odd;
        }
    }
    (v, odd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{inspect, require_solid};

    /// `n^3` unit cubes of side `h`, each split into the six Kuhn tets around its main diagonal.
    fn kuhn_block(n: usize, h: f64) -> TetMesh {
        let id = |i: usize, j: usize, k: usize| (i + (n + 1) * (j + (n + 1) * k)) as u32;
        let mut vertices = Vec::new();
        for k in 0..=n {
            for j in 0..=n {
                for i in 0..=n {
                    vertices.push(DVec3::new(i as f64, j as f64, k as f64) * h);
                }
            }
        }
        let mut tets = Vec::new();
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    // One tet per axis order: a monotone path from corner (0,0,0) to (1,1,1).
                    for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
                        let mut step = [0usize; 3];
                        let mut path = [id(i, j, k); 4];
                        for (s, axis) in order.iter().enumerate() {
                            step[*axis] = 1;
                            path[s + 1] = id(i + step[0], j + step[1], k + step[2]);
                        }
                        let corners = path.map(|v| vertices[v as usize]);
                        if signed_volume(corners) < 0.0 {
                            path.swap(2, 3);
                        }
                        tets.push(path);
                    }
                }
            }
        }
        TetMesh::try_new(vertices, tets).unwrap()
    }

    #[test]
    fn tet_mesh_kuhn_block_has_exact_volumes_faces_and_adjacency() {
        let (n, h) = (3, 0.25);
        let mesh = kuhn_block(n, h);
        let tets = 6 * n * n * n;
        assert_eq!(mesh.tets().len(), tets);
        assert!(mesh.volumes().iter().all(|v| (v - h * h * h / 6.0).abs() < 1e-17));
        assert!((mesh.volume() - (n as f64 * h).powi(3)).abs() < 1e-15);
        // Two triangles per boundary square; every other face twice.
        assert_eq!(mesh.boundary_faces().len(), 12 * n * n);
        assert_eq!(mesh.interior_faces().len(), (4 * tets - 12 * n * n) / 2);
        for (t, neighbors) in mesh.face_neighbors().iter().enumerate() {
            for (face, other) in neighbors.iter().enumerate() {
                if *other != NO_NEIGHBOR {
                    assert_eq!(
                        mesh.neighbor(
                            *other as usize,
                            mesh.face_neighbors()[*other as usize]
                                .iter()
                                .position(|x| *x as usize == t)
                                .unwrap()
                        ),
                        Some(t as u32)
                    );
                } else {
                    assert_eq!(mesh.neighbor(t, face), None);
                }
            }
        }
        // Interior faces: the normal points from the first tet into the second, and the areas
        // are the half squares (h^2 / 2) and the diagonal triangles (sqrt(2) h^2 / 2).
        for face in mesh.interior_faces() {
            let [a, b, c] = face.vertices.map(|v| mesh.vertices()[v as usize]);
            let normal = (b - a).cross(c - a);
            let [first, second] = face.tets.map(|t| mesh.centroids()[t as usize]);
            assert!(face.tets[0] < face.tets[1]);
            assert!(normal.dot(second - first) > 0.0, "{face:?}");
            assert!((face.area - 0.5 * normal.length()).abs() < 1e-15);
            let half_square = 0.5 * h * h;
            assert!(
                (face.area - half_square).abs() < 1e-15 || (face.area - half_square * 2f64.sqrt()).abs() < 1e-15,
                "{}",
                face.area
            );
        }
        // Centroids are the corner means; the boundary is a closed, outward cube.
        let first = mesh.tet(0);
        assert!((mesh.centroids()[0] - (first[0] + first[1] + first[2] + first[3]) / 4.0).length() < 1e-16);
        let surface = mesh.boundary_surface();
        require_solid(&surface).unwrap();
        assert_eq!(inspect(&surface).components, 1);
        assert!((surface.signed_volume() - mesh.volume()).abs() < 1e-14);
        assert_eq!(mesh.bounds().max, DVec3::splat(n as f64 * h));
    }

    #[test]
    fn tet_mesh_rejects_bad_vertices_indices_and_tets_by_name() {
        let corner = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
        let err = TetMesh::try_new(corner.clone(), vec![]).unwrap_err();
        assert_eq!(err.to_string(), "the tet mesh is empty");
        let mut nan = corner.clone();
        nan[2].y = f64::NAN;
        let err = TetMesh::try_new(nan, vec![[0, 1, 2, 3]]).unwrap_err();
        assert_eq!(err.to_string(), "vertex 2 is not finite: DVec3(0.0, NaN, 0.0)");
        let err = TetMesh::try_new(corner.clone(), vec![[0, 1, 2, 3], [0, 1, 2, 4]]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "element 1 uses vertex 4, but there are only 4 vertices"
        );
        let err = TetMesh::try_new(corner.clone(), vec![[0, 1, 1, 3]]).unwrap_err();
        assert!(err.to_string().contains("tet = (0, [0, 1, 1, 3])"), "{err}");
        assert!(err.to_string().contains("four distinct vertices"), "{err}");
        // The mirror ordering is inverted: its signed volume is -1/6.
        let err = TetMesh::try_new(corner.clone(), vec![[0, 2, 1, 3]]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("tet = 0 [0, 2, 1, 3] with signed volume -1.6666666666666666e-1 is invalid"),
            "{err}"
        );
        // Flat to round-off: the fourth corner 1e-13 above the plane of the other three.
        let flat = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::new(0.3, 0.3, 1e-13)];
        let err = TetMesh::try_new(flat, vec![[0, 1, 2, 3]]).unwrap_err();
        assert!(err.to_string().contains("with signed volume 1.6"), "{err}");
        // A just-valid thin tet passes.
        let thin = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::new(0.3, 0.3, 1e-9)];
        TetMesh::try_new(thin, vec![[0, 1, 2, 3]]).unwrap();
    }

    #[test]
    fn tet_mesh_rejects_faces_shared_by_three_tets_or_from_one_side() {
        // Three tets fanned around the triangle (0, 1, 2): apexes above, below, and above again.
        let vertices = vec![
            DVec3::ZERO,
            DVec3::X,
            DVec3::Y,
            DVec3::Z,
            -DVec3::Z,
            DVec3::new(0.2, 0.2, 2.0),
        ];
        let err = TetMesh::try_new(vertices.clone(), vec![[0, 1, 2, 3], [0, 2, 1, 4], [0, 1, 2, 5]]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tet face = [0, 1, 2] (used by tets 0, 1 and 2) is invalid: expected at most two tets per face \
             (a manifold tet mesh)"
        );
        // Two overlapping tets on the same side of the face: not a valid mesh either.
        let err = TetMesh::try_new(vertices.clone(), vec![[0, 1, 2, 3], [0, 1, 2, 5]]).unwrap_err();
        assert!(
            err.to_string()
                .contains("[0, 1, 2] (tets 0 and 1 lie on the same side of it)"),
            "{err}"
        );
        // Above and below is fine: one interior face, six boundary faces.
        let mesh = TetMesh::try_new(vertices, vec![[0, 1, 2, 3], [0, 2, 1, 4]]).unwrap();
        assert_eq!(mesh.interior_faces().len(), 1);
        assert!((mesh.interior_faces()[0].area - 0.5).abs() < 1e-15);
        assert_eq!(mesh.boundary_faces().len(), 6);
        require_solid(&mesh.boundary_surface()).unwrap();
    }
}
