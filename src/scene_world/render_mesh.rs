//! Surfaces to draw bodies with, in each body's frame (origin at the centre of mass, principal
//! axes), so an exporter places them with nothing but the body's pose.
//!
//! These meshes are for viewers only: the engine collides the analytic shapes and level sets, never
//! these triangles. Spheres and capsules are tessellated finely enough that the facets are not
//! what one notices (a sphere's chord error is under 0.5 % of its radius); a half-space, which has
//! no finite surface, is drawn as a thin slab [`HALF_SPACE_RENDER_SIZE`] m square.

use std::f64::consts::{FRAC_PI_2, TAU};

use glam::{DAffine3, DMat3, DQuat, DVec3};

use crate::collision::marching_cubes::contour;
use crate::collision::{Collider, Geometry, GeometryError, Pose, Shape, TriMesh};

/// Side of the square slab drawn for a half-space, m: large enough to fill a viewer's frame
/// around a scene of a few metres, small enough that its far edge does not swamp the view.
pub const HALF_SPACE_RENDER_SIZE: f64 = 40.0;

/// Thickness of the slab drawn for a half-space, m; it lies entirely on the solid side of the
/// plane so bodies resting on the plane rest on the slab's top face.
pub const HALF_SPACE_RENDER_THICKNESS: f64 = 0.1;

/// Subdivisions of the icosahedron drawn for a sphere: 3 gives 1280 triangles, whose vertices lie
/// on the sphere and whose largest chord sags about 0.4 % of the radius inside it.
pub const SPHERE_SUBDIVISIONS: u32 = 3;

/// Segments around a capsule's axis.
pub const CAPSULE_SEGMENTS: usize = 32;

/// Rings of latitude on each of a capsule's hemispherical caps, equator included.
pub const CAPSULE_RINGS: usize = 8;

/// The surface of an analytic shape in its own frame (which is the body frame: every primitive is
/// centred on its centre of mass with principal axes along its own).
pub fn shape_mesh(shape: &Shape) -> TriMesh {
    match shape {
        Shape::Sphere(s) => TriMesh::icosphere(s.radius(), SPHERE_SUBDIVISIONS),
        Shape::Cuboid(c) => TriMesh::cuboid(c.half_extents()),
        Shape::Capsule(c) => capsule_mesh(c.half_height(), c.radius(), CAPSULE_SEGMENTS, CAPSULE_RINGS),
        Shape::HalfSpace(h) => half_space_slab(h.normal(), h.offset()),
    }
}

/// The surface of any collider in its body frame: the analytic shape's mesh, or a level set
/// contoured at zero by marching cubes (fragments spawned mid-run have only a level set).
pub fn collider_mesh(collider: &Collider) -> Result<TriMesh, GeometryError> {
    match collider.geometry() {
        Geometry::Shape(shape) => Ok(shape_mesh(shape)),
        Geometry::LevelSet(grid) => {
            let frame = collider.grid_frame();
            Ok(contour(grid)?.transformed(DAffine3::from_rotation_translation(frame.orientation, frame.position)))
        }
    }
}

/// `mesh`, given in its geometry frame, moved into the body frame that sits at `geometry_frame`
/// in it (as [`crate::engine::World::geometry_frame`] reports): `body = R^T (geometry - c)`.
pub fn in_body_frame(mesh: &TriMesh, geometry_frame: &Pose) -> TriMesh {
    let inverse = geometry_frame.orientation.inverse();
    mesh.transformed(DAffine3::from_mat3_translation(
        DMat3::from_quat(inverse),
        -(inverse * geometry_frame.position),
    ))
}

/// A closed capsule around the segment from `(0, -h, 0)` to `(0, h, 0)` with `radius` r: two
/// hemispheres of `rings` latitude rings (equator included) joined by the cylinder between the
/// equators, `segments` vertices per ring, a vertex at each pole. Triangles wind counter-clockwise
/// seen from outside.
pub fn capsule_mesh(half_height: f64, radius: f64, segments: usize, rings: usize) -> TriMesh {
    let segments = segments.max(3);
    let rings = rings.max(1);
    // Latitudes from the top pole down: the top cap's rings end at its equator (raised by h), the
    // bottom cap's start at its equator (lowered by h); the two equators bound the cylinder.
    let mut latitudes = Vec::with_capacity(2 * rings);
    for k in 1..=rings {
        latitudes.push((FRAC_PI_2 * (1.0 - k as f64 / rings as f64), half_height));
    }
    for k in 0..rings {
        latitudes.push((-FRAC_PI_2 * k as f64 / rings as f64, -half_height));
    }
    let mut vertices = vec![DVec3::new(0.0, half_height + radius, 0.0)];
    for (latitude, centre) in &latitudes {
        let (sin, cos) = latitude.sin_cos();
        for j in 0..segments {
            let (s, c) = (TAU * j as f64 / segments as f64).sin_cos();
            vertices.push(DVec3::new(radius * cos * c, centre + radius * sin, radius * cos * s));
        }
    }
    let bottom = vertices.len() as u32;
    vertices.push(DVec3::new(0.0, -half_height - radius, 0.0));
    let ring = |r: usize, j: usize| (1 + r * segments + j % segments) as u32;
    let mut triangles = Vec::new();
    for j in 0..segments {
        // Seen from outside, increasing angle (x towards z) runs to the left, and going down a
        // ring is going down: (upper, lower-left, lower) is counter-clockwise.
        triangles.push([0, ring(0, j + 1), ring(0, j)]);
        for r in 0..latitudes.len() - 1 {
            triangles.push([ring(r, j), ring(r, j + 1), ring(r + 1, j + 1)]);
            triangles.push([ring(r, j), ring(r + 1, j + 1), ring(r + 1, j)]);
        }
        let last = latitudes.len() - 1;
        triangles.push([bottom, ring(last, j), ring(last, j + 1)]);
    }
    // The construction is closed and consistently wound by design; try_new only checks indices.
    TriMesh::try_new(vertices, triangles).expect("capsule indices are in range")
}

/// A slab [`HALF_SPACE_RENDER_SIZE`] m square and [`HALF_SPACE_RENDER_THICKNESS`] m thick whose
/// top face lies on the plane `normal . x = offset` (normal unit), centred on the plane's point
/// nearest the origin.
pub fn half_space_slab(normal: DVec3, offset: f64) -> TriMesh {
    let half = DVec3::new(
        HALF_SPACE_RENDER_SIZE / 2.0,
        HALF_SPACE_RENDER_THICKNESS / 2.0,
        HALF_SPACE_RENDER_SIZE / 2.0,
    );
    let rotation = DQuat::from_rotation_arc(DVec3::Y, normal);
    let centre = normal * (offset - HALF_SPACE_RENDER_THICKNESS / 2.0);
    TriMesh::cuboid(half).transformed(DAffine3::from_rotation_translation(rotation, centre))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::{Capsule, topology};

    #[test]
    fn scene_world_capsule_mesh_is_a_closed_solid_of_nearly_the_capsule_volume() {
        let (h, r) = (0.7, 0.3);
        let mesh = capsule_mesh(h, r, CAPSULE_SEGMENTS, CAPSULE_RINGS);
        let defects = topology::inspect(&mesh);
        assert!(defects.is_solid(), "{defects}");
        let exact = Capsule::try_new(h, r).unwrap().volume();
        // An inscribed polyhedron: a little smaller than the capsule, by under 2 % at 32 x 8.
        let volume = mesh.signed_volume();
        assert!(volume < exact && volume > 0.98 * exact, "{volume} vs {exact}");
        let bounds = mesh.bounds().unwrap();
        assert!((bounds.max.y - (h + r)).abs() < 1e-12 && (bounds.min.y + h + r).abs() < 1e-12);
    }

    #[test]
    fn scene_world_half_space_slab_top_face_lies_on_the_plane() {
        let normal = DVec3::new(1.0, 2.0, -0.5).normalize();
        let slab = half_space_slab(normal, 0.75);
        let heights: Vec<f64> = slab.vertices().iter().map(|v| normal.dot(*v)).collect();
        let top = heights.iter().copied().fold(f64::MIN, f64::max);
        let low = heights.iter().copied().fold(f64::MAX, f64::min);
        assert!((top - 0.75).abs() < 1e-12, "{top}");
        assert!((top - low - HALF_SPACE_RENDER_THICKNESS).abs() < 1e-12);
        assert!(topology::inspect(&slab).is_solid());
    }

    #[test]
    fn scene_world_mesh_moves_into_the_body_frame() {
        let frame = Pose::new(
            DVec3::new(0.1, -0.2, 0.3),
            DQuat::from_axis_angle(DVec3::new(1.0, 1.0, 0.0).normalize(), 0.8),
        );
        let mesh = TriMesh::cuboid(DVec3::new(0.5, 0.25, 1.0));
        let moved = in_body_frame(&mesh, &frame);
        for (a, b) in mesh.vertices().iter().zip(moved.vertices()) {
            // Placing the body frame back at `frame` must return every vertex.
            assert!((frame.transform_point(*b) - *a).length() < 1e-14);
        }
    }
}
