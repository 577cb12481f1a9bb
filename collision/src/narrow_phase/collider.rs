//! A body's collision geometry in its body frame: an analytic shape or a level set, and the
//! surface particles the other body's geometry tests.

use std::sync::Arc;

use glam::{DMat3, DVec3};

use super::clusters::ParticleClusters;
use super::surface_normal::SurfaceNormal;
use crate::aabb::Aabb;
use crate::error::GeometryError;
use crate::grid::{GridSpec, SdfGrid};
use crate::level_set::level_set_from_mesh;
use crate::particles::{project_to_surface, sample_level_set, sample_surface};
use crate::pose::Pose;
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
    /// The particles in small balls for the narrow phase; shared between clones.
    clusters: Arc<ParticleClusters>,
    /// The surface's normal at each particle, body frame (surface_normal.rs); shared.
    particle_normals: Arc<[SurfaceNormal]>,
    /// Box around the solid (not the grid's padding); `None` for unbounded shapes.
    bounds: Option<Aabb>,
    /// The same in the geometry's own frame (a level set's grid frame), where it is tighter.
    geometry_bounds: Option<Aabb>,
    /// Where a level set's grid frame sits in the body frame (`x_body = frame * x_grid`);
    /// `None` when the grid is given in the body frame itself.
    grid_frame: Option<Pose>,
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
            clusters: Arc::new(ParticleClusters::new(&particles)),
            particles: particles.into(),
            particle_normals: Arc::from([]),
            bounds: shape.bounds(),
            geometry_bounds: shape.bounds(),
            grid_frame: None,
        }
        .with_particle_normals())
    }

    /// A level set with its surface particles (body frame). Fails on a non-finite particle or a
    /// grid with no inside.
    pub fn from_level_set(grid: SdfGrid, particles: Vec<DVec3>) -> Result<Self, GeometryError> {
        Self::from_level_set_in_frame(Arc::new(grid), Pose::IDENTITY, particles)
    }

    /// A level set whose grid is laid out in its own frame, which sits at `frame` in the body
    /// frame (`x_body = frame * x_grid`), with surface particles in the body frame. This keeps a
    /// fragment on its parent's lattice while its body frame turns to its principal axes (Su 2009
    /// section 4.2 stores "this same transform along with the level set"), so nothing is
    /// resampled. Fails on a non-finite particle or pose, or a grid with no inside.
    pub fn from_level_set_in_frame(
        grid: Arc<SdfGrid>,
        frame: Pose,
        particles: Vec<DVec3>,
    ) -> Result<Self, GeometryError> {
        if let Some((index, p)) = particles.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(GeometryError::NotFinite {
                what: "particle",
                index,
                value: format!("{p:?}"),
            });
        }
        if !frame.is_valid() {
            return Err(GeometryError::invalid(
                "level-set frame",
                frame,
                "a finite pose with a unit rotation",
            ));
        }
        let inside = inside_bounds(&grid).ok_or(GeometryError::Empty {
            what: "level set (no negative sample)",
        })?;
        // The box holds the particles too, so that a body whose box is apart from another's has
        // no particle near it (the narrow phase skips such pairs whole).
        let local = particles
            .iter()
            .fold(inside, |b, p| b.including(frame.inverse_transform_point(*p)));
        let identity = frame == Pose::IDENTITY;
        let bounds = if identity {
            local
        } else {
            Aabb::from_points((0..8).map(|c| {
                frame.transform_point(DVec3::new(
                    if c & 1 == 0 { local.min.x } else { local.max.x },
                    if c & 2 == 0 { local.min.y } else { local.max.y },
                    if c & 4 == 0 { local.min.z } else { local.max.z },
                ))
            }))
        };
        Ok(Self {
            geometry: Geometry::LevelSet(grid),
            clusters: Arc::new(ParticleClusters::new(&particles)),
            particles: particles.into(),
            particle_normals: Arc::from([]),
            bounds: Some(bounds),
            geometry_bounds: Some(local),
            grid_frame: (!identity).then_some(frame),
        }
        .with_particle_normals())
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

    /// Where a level set's grid frame sits in the body frame (`x_body = frame * x_grid`); the
    /// identity for shapes and for grids laid out in the body frame.
    pub fn grid_frame(&self) -> Pose {
        self.grid_frame.unwrap_or(Pose::IDENTITY)
    }

    /// Surface particles, body frame.
    pub fn particles(&self) -> &[DVec3] {
        &self.particles
    }

    /// The surface's normal at each particle (same order as [`Collider::particles`]), body frame,
    /// and whether the surface is smooth there: the source side of a particle contact's normal
    /// (surface_normal.rs).
    pub fn particle_normals(&self) -> &[SurfaceNormal] {
        &self.particle_normals
    }

    /// Fills [`Collider::particle_normals`] from the geometry, once the rest is built.
    fn with_particle_normals(mut self) -> Self {
        let (to_geometry, offset) = self.to_geometry_frame();
        self.particle_normals = self
            .particles
            .iter()
            .map(|&p| SurfaceNormal::of_collider(&self, to_geometry * p + offset))
            .collect();
        self
    }

    /// The surface particles in clusters (clusters.rs).
    pub fn clusters(&self) -> &ParticleClusters {
        &self.clusters
    }

    /// How fast [`Collider::distance`] can change with the point: `|d(p) - d(q)| <= L |p - q|`.
    /// One for analytic shapes (exact distances). For a level set, the trilinear interpolant of
    /// samples of a distance changes by at most one per unit along each axis (each partial
    /// derivative blends differences of neighbouring samples, each at most the spacing), so
    /// `sqrt(3)` inside the grid, and the distance outside it adds at most one more.
    pub fn distance_lipschitz(&self) -> f64 {
        match self.geometry {
            Geometry::Shape(_) => 1.0,
            Geometry::LevelSet(_) => 3f64.sqrt() + 1.0,
        }
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
            Geometry::LevelSet(grid) => {
                let in_grid = self.in_grid_frame(point);
                (grid.value(in_grid), self.gradient_at_geometry_point(in_grid))
            }
        }
    }

    /// A body-frame point in a level set's grid frame (the point itself without one).
    fn in_grid_frame(&self, point: DVec3) -> DVec3 {
        self.grid_frame
            .as_ref()
            .map_or(point, |frame| frame.inverse_transform_point(point))
    }

    /// The distance's gradient in body frame (unit for shapes; nearly unit for level sets) at a
    /// point given in the geometry's own frame ([`Collider::to_geometry_frame`]): for callers that
    /// already hold the point there, one transform fewer than
    /// [`Collider::distance_and_gradient`] and no second distance lookup.
    pub fn gradient_at_geometry_point(&self, point: DVec3) -> DVec3 {
        match &self.geometry {
            Geometry::Shape(shape) => shape.distance_and_gradient(point).1,
            Geometry::LevelSet(grid) => match &self.grid_frame {
                None => grid.gradient(point),
                Some(frame) => frame.orientation * grid.gradient(point),
            },
        }
    }

    /// The rigid map from body frame to the geometry's own frame (the grid frame of a level set
    /// laid out in one, else the identity), as a rotation matrix and offset: for callers that
    /// look up many points of one pose with [`Collider::distance_in_geometry_frame`].
    pub fn to_geometry_frame(&self) -> (DMat3, DVec3) {
        match &self.grid_frame {
            None => (DMat3::IDENTITY, DVec3::ZERO),
            Some(frame) => {
                let inverse = DMat3::from_quat(frame.orientation.inverse());
                (inverse, -(inverse * frame.position))
            }
        }
    }

    /// The farthest the solid reaches from the body's origin (its centre of mass), m: the length
    /// of the bounds' farthest corner; `None` for a half-space.
    pub fn reach(&self) -> Option<f64> {
        self.bounds.map(|b| b.min.abs().max(b.max.abs()).length())
    }

    /// [`Collider::local_bounds`] in the geometry's own frame ([`Collider::to_geometry_frame`]).
    pub fn geometry_bounds(&self) -> Option<Aabb> {
        self.geometry_bounds
    }

    /// [`Collider::distance`] at a point already in the geometry's own frame
    /// ([`Collider::to_geometry_frame`]).
    pub fn distance_in_geometry_frame(&self, point: DVec3) -> f64 {
        match &self.geometry {
            Geometry::Shape(shape) => shape.distance(point),
            Geometry::LevelSet(grid) => grid.value(point),
        }
    }

    /// Signed distance (negative inside, m) at a body-frame point; cheaper than with the gradient
    /// for level sets.
    pub fn distance(&self, point: DVec3) -> f64 {
        match &self.geometry {
            Geometry::Shape(shape) => shape.distance(point),
            Geometry::LevelSet(grid) => grid.value(self.in_grid_frame(point)),
        }
    }
}

/// The box of a level set's negative samples, grown by one spacing (the surface lies within a
/// cell of them).
fn inside_bounds(grid: &SdfGrid) -> Option<Aabb> {
    grid.inside_samples_box().map(|b| b.expanded(grid.spec().spacing))
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
