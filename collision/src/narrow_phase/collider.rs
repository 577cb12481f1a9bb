//! A body's collision geometry in its body frame: an analytic shape or a level set, and the
//! surface particles the other body's geometry tests.

use std::sync::Arc;

use glam::DVec3;

use crate::aabb::Aabb;
use crate::error::GeometryError;
use crate::grid::{GridSpec, SdfGrid};
use crate::level_set::level_set_from_mesh;
use crate::particles::{project_to_surface, sample_level_set, sample_surface};
use crate::shapes::{Capsule, Shape, SignedDistance};
use crate::trimesh::TriMesh;

/// What answers "how deep is this point" for a collider.
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// An analytic shape, exact everywhere.
    Shape(Shape),
    /// A signed-distance grid, shared between clones.
    LevelSet(Arc<SdfGrid>),
}

/// Collision geometry of one body, in its body frame (origin at the centre of mass).
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    geometry: Geometry,
    /// Surface particles, body frame; shared between clones.
    particles: Arc<[DVec3]>,
    /// Box around the solid (not the grid's padding); `None` for unbounded shapes.
    bounds: Option<Aabb>,
}

impl Collider {
    /// An analytic shape with surface particles about `particle_spacing` m apart (the shape's own
    /// corners included; none for a half-space, which only ever meets other bodies' particles).
    pub fn from_shape(shape: Shape, particle_spacing: f64) -> Result<Self, GeometryError> {
        let particles = match shape {
            Shape::HalfSpace(_) => Vec::new(),
            Shape::Cuboid(c) => sample_surface(&TriMesh::cuboid(c.half_extents()), particle_spacing, 0)?,
            Shape::Sphere(s) => {
                let mut points = sample_surface(&sphere_mesh(s.radius(), particle_spacing), particle_spacing, 0)?;
                project_to_surface(&mut points, |p| s.distance_and_gradient(p), 4, 1e-15 * s.radius());
                points
            }
            Shape::Capsule(c) => capsule_particles(&c, particle_spacing)?,
        };
        Ok(Self {
            geometry: Geometry::Shape(shape),
            particles: particles.into(),
            bounds: shape.bounds(),
        })
    }

    /// A level set with its surface particles (body frame). Fails on a non-finite particle or a
    /// grid with no inside.
    pub fn from_level_set(grid: SdfGrid, particles: Vec<DVec3>) -> Result<Self, GeometryError> {
        if let Some((index, p)) = particles.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(GeometryError::NotFinite {
                what: "particle",
                index,
                value: format!("{p:?}"),
            });
        }
        let bounds = inside_bounds(&grid).ok_or(GeometryError::Empty {
            what: "level set (no negative sample)",
        })?;
        Ok(Self {
            geometry: Geometry::LevelSet(Arc::new(grid)),
            particles: particles.into(),
            bounds: Some(bounds),
        })
    }

    /// A level set with particles about `particle_spacing` m apart sampled on its own zero set
    /// ([`crate::particles::sample_level_set`]): for bodies known only by a grid, such as
    /// fragments cut from a level set.
    pub fn from_grid(grid: SdfGrid, particle_spacing: f64) -> Result<Self, GeometryError> {
        let particles = sample_level_set(&grid, particle_spacing, 0)?;
        Self::from_level_set(grid, particles)
    }

    /// A level set of `mesh` (body frame) with `cells` cells along its longest side and three
    /// cells of padding, and particles `particle_spacing` m apart on the mesh (its vertices
    /// included). Open meshes are accepted: the winding number decides the inside.
    pub fn from_mesh(mesh: &TriMesh, cells: usize, particle_spacing: f64) -> Result<Self, GeometryError> {
        let bounds = mesh.bounds().ok_or(GeometryError::Empty { what: "mesh" })?;
        let grid = level_set_from_mesh(mesh, GridSpec::with_resolution(bounds, cells, 3)?)?;
        Self::from_level_set(grid, sample_surface(mesh, particle_spacing, 0)?)
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Surface particles, body frame.
    pub fn particles(&self) -> &[DVec3] {
        &self.particles
    }

    /// Box around the solid in body frame; `None` for a half-space.
    pub fn local_bounds(&self) -> Option<Aabb> {
        self.bounds
    }

    /// Signed distance (negative inside, m) at a body-frame point and its gradient (unit for
    /// shapes; nearly unit for level sets).
    pub fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        match &self.geometry {
            Geometry::Shape(shape) => shape.distance_and_gradient(point),
            Geometry::LevelSet(grid) => grid.value_and_gradient(point),
        }
    }

    /// Signed distance (negative inside, m) at a body-frame point; cheaper than with the gradient
    /// for level sets.
    pub fn distance(&self, point: DVec3) -> f64 {
        match &self.geometry {
            Geometry::Shape(shape) => shape.distance(point),
            Geometry::LevelSet(grid) => grid.value(point),
        }
    }
}

/// The box of a level set's negative samples, grown by one spacing (the surface lies within a
/// cell of them).
fn inside_bounds(grid: &SdfGrid) -> Option<Aabb> {
    let spec = grid.spec();
    let bounds = grid
        .values()
        .iter()
        .enumerate()
        .filter(|(_, v)| **v < 0.0)
        .fold(Aabb::EMPTY, |b, (index, _)| {
            let [i, j, k] = spec.coordinates(index);
            b.including(spec.position(i, j, k))
        });
    (!bounds.is_empty()).then(|| bounds.expanded(spec.spacing))
}

/// An icosphere fine enough that its edges are shorter than `spacing`.
fn sphere_mesh(radius: f64, spacing: f64) -> TriMesh {
    // The icosahedron's edge is 1.05 r; each subdivision halves it.
    let mut subdivisions = 0;
    while subdivisions < 7 && 1.05 * radius / f64::from(1u32 << subdivisions) > spacing {
        subdivisions += 1;
    }
    TriMesh::icosphere(radius, subdivisions)
}

/// Particles on a capsule: a sphere mesh split at its equator and pulled apart to the caps'
/// centres (its equatorial band stretched over the cylinder), sampled, then projected onto the
/// exact surface.
fn capsule_particles(capsule: &Capsule, spacing: f64) -> Result<Vec<DVec3>, GeometryError> {
    let sphere = sphere_mesh(capsule.radius(), spacing);
    let h = capsule.half_height();
    let (vertices, triangles) = sphere.into_parts();
    let stretched: Vec<DVec3> = vertices
        .iter()
        .map(|v| *v + DVec3::Y * if v.y >= 0.0 { h } else { -h })
        .collect();
    let mesh = TriMesh::try_new(stretched, triangles)?;
    let mut points = sample_surface(&mesh, spacing, 0)?;
    project_to_surface(
        &mut points,
        |p| capsule.distance_and_gradient(p),
        4,
        1e-15 * capsule.radius(),
    );
    Ok(points)
}
