//! Triangle meshes: the surface representation that files, rendering and the boundary-element
//! method use.
//!
//! Triangles wind counter-clockwise seen from outside, so `(b - a) x (c - a)` points out of the
//! solid and a closed mesh has positive signed volume. Readers, writers and topology checks live
//! in their own modules; this one holds the data and the geometry every user needs.

use glam::{DAffine3, DVec3};

use crate::aabb::Aabb;
use crate::error::GeometryError;

/// An indexed triangle mesh with finite vertices and in-range indices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    vertices: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// A mesh from vertex positions and triangles (vertex index triples).
    ///
    /// Fails, naming the first offender, on a non-finite vertex or an index out of range. Nothing
    /// else is checked: open, inverted or degenerate meshes are allowed here; see the topology
    /// checks for solids.
    pub fn try_new(vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> Result<Self, GeometryError> {
        check_indexed(&vertices, &triangles)?;
        Ok(Self { vertices, triangles })
    }

    /// Vertex positions.
    pub fn vertices(&self) -> &[DVec3] {
        &self.vertices
    }

    /// Triangles as vertex index triples, counter-clockwise seen from outside.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The corners of triangle `index`.
    pub fn triangle(&self, index: usize) -> [DVec3; 3] {
        let [a, b, c] = self.triangles[index];
        [
            self.vertices[a as usize],
            self.vertices[b as usize],
            self.vertices[c as usize],
        ]
    }

    /// The vertex and triangle arrays.
    pub fn into_parts(self) -> (Vec<DVec3>, Vec<[u32; 3]>) {
        (self.vertices, self.triangles)
    }

    /// Whether the mesh has no triangle.
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Signed volume enclosed, by the divergence theorem: positive for a closed mesh wound
    /// counter-clockwise seen from outside. Meaningless for an open mesh.
    pub fn signed_volume(&self) -> f64 {
        // Sum of tetrahedra from the origin; centred on the first vertex to keep round-off
        // independent of where the mesh sits.
        let origin = self.vertices.first().copied().unwrap_or(DVec3::ZERO);
        (0..self.triangles.len())
            .map(|i| {
                let [a, b, c] = self.triangle(i).map(|p| p - origin);
                a.dot(b.cross(c))
            })
            .sum::<f64>()
            / 6.0
    }

    /// Total triangle area.
    pub fn surface_area(&self) -> f64 {
        (0..self.triangles.len())
            .map(|i| {
                let [a, b, c] = self.triangle(i);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// Bounding box of the vertices used by triangles; `None` for an empty mesh.
    pub fn bounds(&self) -> Option<Aabb> {
        if self.triangles.is_empty() {
            return None;
        }
        Some(Aabb::from_points(
            self.triangles.iter().flatten().map(|i| self.vertices[*i as usize]),
        ))
    }

    /// The mesh moved by `transform`. A reflecting transform (negative determinant) also reverses
    /// every triangle so the mesh stays outward wound.
    pub fn transformed(&self, transform: DAffine3) -> Self {
        let vertices = self.vertices.iter().map(|v| transform.transform_point3(*v)).collect();
        let triangles = if transform.matrix3.determinant() < 0.0 {
            self.triangles.iter().map(|[a, b, c]| [*a, *c, *b]).collect()
        } else {
            self.triangles.clone()
        };
        Self { vertices, triangles }
    }

    /// A closed box centred at the origin with `half_extents` (m): 8 vertices, 12 triangles.
    pub fn cuboid(half_extents: DVec3) -> Self {
        let h = half_extents;
        let vertices = (0..8)
            .map(|i| DVec3::new(sign(i & 1) * h.x, sign(i & 2) * h.y, sign(i & 4) * h.z))
            .collect();
        // Corner i has bit 0 = +x, bit 1 = +y, bit 2 = +z. Two triangles per face, outward.
        let triangles = vec![
            [0, 4, 6],
            [0, 6, 2], // -x
            [1, 3, 7],
            [1, 7, 5], // +x
            [0, 1, 5],
            [0, 5, 4], // -y
            [2, 6, 7],
            [2, 7, 3], // +y
            [0, 2, 3],
            [0, 3, 1], // -z
            [4, 5, 7],
            [4, 7, 6], // +z
        ];
        Self { vertices, triangles }
    }

    /// A closed sphere of `radius` centred at the origin: an icosahedron subdivided `subdivisions`
    /// times (20 * 4^subdivisions triangles) with every vertex on the sphere.
    pub fn icosphere(radius: f64, subdivisions: u32) -> Self {
        let t = (1.0 + 5f64.sqrt()) / 2.0;
        let mut vertices: Vec<DVec3> = [
            (-1.0, t, 0.0),
            (1.0, t, 0.0),
            (-1.0, -t, 0.0),
            (1.0, -t, 0.0),
            (0.0, -1.0, t),
            (0.0, 1.0, t),
            (0.0, -1.0, -t),
            (0.0, 1.0, -t),
            (t, 0.0, -1.0),
            (t, 0.0, 1.0),
            (-t, 0.0, -1.0),
            (-t, 0.0, 1.0),
        ]
        .into_iter()
        .map(|(x, y, z)| DVec3::new(x, y, z).normalize())
        .collect();
        let mut triangles: Vec<[u32; 3]> = vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ];
        for _ in 0..subdivisions {
            let mut midpoints = hashbrown::HashMap::new();
            let mut midpoint = |a: u32, b: u32, vertices: &mut Vec<DVec3>| {
                *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    let m = (vertices[a as usize] + vertices[b as usize]).normalize();
                    vertices.push(m);
                    (vertices.len() - 1) as u32
                })
            };
            let mut next = Vec::with_capacity(triangles.len() * 4);
            for [a, b, c] in triangles {
                let ab = midpoint(a, b, &mut vertices);
                let bc = midpoint(b, c, &mut vertices);
                let ca = midpoint(c, a, &mut vertices);
                next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
            }
            triangles = next;
        }
        for v in &mut vertices {
            *v *= radius;
        }
        Self { vertices, triangles }
    }
}

/// Checks an indexed element list (triangles, tets): every vertex finite and every index in range,
/// naming the first offender.
pub(crate) fn check_indexed<const K: usize>(vertices: &[DVec3], elements: &[[u32; K]]) -> Result<(), GeometryError> {
    if let Some((index, v)) = vertices.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(GeometryError::NotFinite {
            what: "vertex",
            index,
            value: format!("{v:?}"),
        });
    }
    let count = vertices.len();
    for (element, corners) in elements.iter().enumerate() {
        if let Some(index) = corners.iter().find(|i| **i as usize >= count) {
            return Err(GeometryError::IndexOutOfRange {
                element,
                index: i64::from(*index),
                vertex_count: count,
            });
        }
    }
    Ok(())
}

fn sign(bit: usize) -> f64 {
    if bit != 0 { 1.0 } else { -1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimesh_cuboid_volume_area_and_orientation() {
        let mesh = TriMesh::cuboid(DVec3::new(1.0, 2.0, 3.0));
        assert!((mesh.signed_volume() - 48.0).abs() < 1e-12);
        assert!((mesh.surface_area() - 2.0 * (8.0 + 24.0 + 12.0)).abs() < 1e-12);
        for i in 0..12 {
            let [a, b, c] = mesh.triangle(i);
            let normal = (b - a).cross(c - a);
            let centroid = (a + b + c) / 3.0;
            assert!(normal.dot(centroid) > 0.0, "triangle {i} faces inwards");
        }
        let flipped = mesh.transformed(DAffine3::from_scale(DVec3::new(-1.0, 1.0, 1.0)));
        assert!((flipped.signed_volume() - 48.0).abs() < 1e-12);
    }

    #[test]
    fn trimesh_icosphere_converges_to_the_sphere() {
        let mesh = TriMesh::icosphere(2.0, 5);
        assert_eq!(mesh.triangles().len(), 20 * 4usize.pow(5));
        let exact = 4.0 / 3.0 * std::f64::consts::PI * 8.0;
        assert!((mesh.signed_volume() / exact - 1.0).abs() < 2e-3);
        assert!(mesh.vertices().iter().all(|v| (v.length() - 2.0).abs() < 1e-14));
    }

    #[test]
    fn trimesh_rejects_bad_vertices_and_indices_by_name() {
        let err = TriMesh::try_new(vec![DVec3::ZERO, DVec3::new(f64::NAN, 0.0, 0.0)], vec![]).unwrap_err();
        assert_eq!(err.to_string(), "vertex 1 is not finite: DVec3(NaN, 0.0, 0.0)");
        let err = TriMesh::try_new(vec![DVec3::ZERO; 3], vec![[0, 1, 2], [0, 1, 3]]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "element 1 uses vertex 3, but there are only 3 vertices"
        );
    }
}
