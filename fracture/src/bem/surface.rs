//! The boundary of a solid as the boundary-element method sees it: flat triangles with one
//! collocation point (the centroid) each, their outward normals and areas, and the components of
//! the boundary (an outer surface and any cavities).

use glam::DVec3;
use shatter_collision::mass_properties::mesh_integrals;
use shatter_collision::topology::{components, require_solid};
use shatter_collision::{TriMesh, VolumeIntegrals};

use super::quadrature::{diameter, triangle_area};
use crate::error::FractureError;

/// One closed sheet of the boundary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Component {
    /// Triangles of the sheet.
    pub triangles: usize,
    /// Signed volume the sheet encloses with the mesh's winding, m^3: positive for an outer
    /// surface (normals out of the material and out of the sheet), negative for a cavity
    /// (normals out of the material, into the void the sheet encloses).
    pub signed_volume: f64,
}

impl Component {
    /// Whether the sheet bounds a void inside the material.
    pub fn is_cavity(&self) -> bool {
        self.signed_volume < 0.0
    }
}

/// A closed, consistently oriented triangle mesh prepared for collocation.
#[derive(Clone, Debug)]
pub struct Surface {
    mesh: TriMesh,
    centroids: Vec<DVec3>,
    normals: Vec<DVec3>,
    areas: Vec<f64>,
    diameters: Vec<f64>,
    /// Component of each triangle.
    component_of: Vec<u32>,
    components: Vec<Component>,
    integrals: VolumeIntegrals,
    /// Per vertex, the triangles that use it.
    vertex_triangles: Vec<Vec<u32>>,
}

impl Surface {
    /// Prepares `mesh`, which must bound a solid (closed, manifold, consistently oriented with
    /// normals out of the material, no degenerate triangles, positive volume); fails with the
    /// defects found otherwise. Cavities are inner sheets wound inward (their normals point into
    /// the void).
    pub fn try_new(mesh: TriMesh) -> Result<Self, FractureError> {
        require_solid(&mesh)?;
        let n = mesh.triangles().len();
        let mut centroids = Vec::with_capacity(n);
        let mut normals = Vec::with_capacity(n);
        let mut areas = Vec::with_capacity(n);
        let mut diameters = Vec::with_capacity(n);
        for i in 0..n {
            let t = mesh.triangle(i);
            centroids.push((t[0] + t[1] + t[2]) / 3.0);
            normals.push((t[1] - t[0]).cross(t[2] - t[0]).normalize());
            areas.push(triangle_area(&t));
            diameters.push(diameter(&t));
        }
        let (component_of, count) = components(&mesh);
        let mut sheets = vec![
            Component {
                triangles: 0,
                signed_volume: 0.0
            };
            count
        ];
        for (i, &c) in component_of.iter().enumerate() {
            let t = mesh.triangle(i);
            let sheet = &mut sheets[c as usize];
            sheet.triangles += 1;
            sheet.signed_volume += t[0].dot(t[1].cross(t[2])) / 6.0;
        }
        let mut vertex_triangles = vec![Vec::new(); mesh.vertices().len()];
        for (i, tri) in mesh.triangles().iter().enumerate() {
            for &v in tri {
                vertex_triangles[v as usize].push(i as u32);
            }
        }
        let integrals = mesh_integrals(&mesh);
        Ok(Self {
            mesh,
            centroids,
            normals,
            areas,
            diameters,
            component_of,
            components: sheets,
            integrals,
            vertex_triangles,
        })
    }

    /// The mesh, m.
    pub fn mesh(&self) -> &TriMesh {
        &self.mesh
    }

    /// Number of triangles (collocation points).
    pub fn len(&self) -> usize {
        self.centroids.len()
    }

    /// Whether there are no triangles (never, for a surface that was built).
    pub fn is_empty(&self) -> bool {
        self.centroids.is_empty()
    }

    /// The corners of triangle `i`, m.
    pub fn triangle(&self, i: usize) -> [DVec3; 3] {
        self.mesh.triangle(i)
    }

    /// Collocation points: the triangles' centroids, m.
    pub fn centroids(&self) -> &[DVec3] {
        &self.centroids
    }

    /// Unit normals, out of the material.
    pub fn normals(&self) -> &[DVec3] {
        &self.normals
    }

    /// Triangle areas, m^2.
    pub fn areas(&self) -> &[f64] {
        &self.areas
    }

    /// Longest edge of each triangle, m.
    pub fn diameters(&self) -> &[f64] {
        &self.diameters
    }

    /// Component of each triangle, indexing [`Surface::components`].
    pub fn component_of(&self) -> &[u32] {
        &self.component_of
    }

    /// The sheets of the boundary.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// Per vertex of the mesh, the triangles that use it.
    pub fn vertex_triangles(&self) -> &[Vec<u32>] {
        &self.vertex_triangles
    }

    /// Volume integrals of the solid (volume, first and second moments about the mesh origin).
    pub fn integrals(&self) -> VolumeIntegrals {
        self.integrals
    }

    /// Volume of the solid, m^3.
    pub fn volume(&self) -> f64 {
        self.integrals.volume
    }

    /// Centroid of the solid (its centre of mass at uniform density), m.
    pub fn center(&self) -> DVec3 {
        self.integrals.first / self.integrals.volume
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bem_surface_refuses_an_open_mesh() {
        let mut mesh = TriMesh::cuboid(DVec3::ONE);
        let (v, mut t) = mesh.clone().into_parts();
        t.pop();
        mesh = TriMesh::try_new(v, t).unwrap();
        let error = Surface::try_new(mesh).unwrap_err().to_string();
        assert!(error.contains("boundary"), "{error}");
    }

    #[test]
    fn bem_surface_finds_a_cavity() {
        let outer = TriMesh::icosphere(1.0, 2);
        let inner = TriMesh::icosphere(0.5, 2);
        let (mut v, mut t) = outer.into_parts();
        let offset = v.len() as u32;
        let (iv, it) = inner.into_parts();
        v.extend(iv);
        t.extend(it.iter().map(|f| [f[0] + offset, f[2] + offset, f[1] + offset]));
        let surface = Surface::try_new(TriMesh::try_new(v, t).unwrap()).unwrap();
        let sheets = surface.components();
        assert_eq!(sheets.len(), 2);
        assert!(!sheets[0].is_cavity() && sheets[1].is_cavity());
        let expected = 4.0 / 3.0 * core::f64::consts::PI * (1.0 - 0.125);
        assert!((surface.volume() - expected).abs() < 0.05 * expected);
    }
}
