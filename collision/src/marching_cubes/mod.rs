//! Contouring: the zero level set of an [`SdfGrid`] back to a closed triangle mesh, for rendering
//! fragments and for export.
//!
//! # Method: marching tetrahedra on the Freudenthal lattice
//!
//! Classic marching cubes (Lorensen and Cline 1987) looks each cube up in a 256-case table, but a
//! cube face with two inside corners on one diagonal and two outside on the other is ambiguous:
//! the two cubes sharing it may resolve it differently and leave a hole. Repairs exist (the
//! asymptotic decider of Nielson and Hamann 1991 on faces, Chernyaev's marching cubes 33 inside
//! the cube), at the price of larger tables and case analysis that is easy to get subtly wrong.
//! This module instead splits every cube into the six tetrahedra of the Kuhn (Freudenthal)
//! triangulation (Doi and Koide 1991 call the method marching tetrahedra) and contours the
//! piecewise-linear interpolant, which is linear in each tetrahedron. That is watertight and
//! manifold by construction:
//! - every tetrahedron's surface is one flat polygon (a triangle around a lone corner, a
//!   quadrilateral between two and two), so there is nothing ambiguous to decide;
//! - every cube face is cut by its diagonal through its lowest corner, the same for both cubes
//!   that share it, so the tetrahedra form one conforming triangulation of the padded grid. A
//!   surface edge lies in exactly one lattice triangle, never on the padded grid's boundary
//!   (whose samples are all outside); an interior lattice triangle belongs to exactly two
//!   tetrahedra, each of which puts exactly one polygon edge across it; so every
//!   surface edge is used exactly twice, in opposite directions (each polygon winds
//!   counter-clockwise seen from its outside corners, by a case table checked geometrically);
//! - the surface is the level set of a piecewise-linear function with no sample on the level
//!   (ties are broken below), a 2-manifold; and because each polygon lies inside its own
//!   tetrahedron, any vertex positions strictly inside the crossed edges give an embedded surface.
//!
//! The price is about twice the triangles of marching cubes; fragments are meshed once, so
//! simplicity wins.
//!
//! # Vertices, ties and slivers
//!
//! A sample is inside when its value is strictly below the iso value; a sample exactly on it
//! counts as outside, as if the level were raised by an infinitesimal (the simulation of
//! simplicity of Edelsbrunner and Mucke 1990), so no vertex lands on a sample by classification.
//! Each crossed lattice edge carries one vertex, at the linear zero crossing, shared by every
//! tetrahedron around the edge; vertices are numbered in lattice order, so the mesh is welded and
//! its numbering is fixed. The crossing parameter is clamped to
//! `[CROSSING_CLAMP, 1 - CROSSING_CLAMP]` along the edge, which bounds how thin a triangle can be.
//! A triangle's corners lie on three edges of one tetrahedron, and they can only line up when
//! a vertex reaches a tetrahedron corner (parameter 0 or 1); clamped, each stays about
//! `CROSSING_CLAMP` edge lengths off the line through the other two, so twice the area over the
//! squared longest edge stays above `CROSSING_CLAMP` times a shape constant of the Kuhn
//! tetrahedra. `marching_cubes_clamped_triangles_are_far_from_slivers` measures the worst ratio
//! over every case with the extreme parameters and random ones crowding the ends: 0.47
//! `CROSSING_CLAMP` (about 5e-7), seven orders of magnitude above the 1e-14 at which
//! [`topology`](crate::topology) calls a triangle degenerate. The bound is in exact arithmetic;
//! rounding of the vertex coordinates, about 1e-16 of their magnitude, leaves it intact while
//! the grid lies within some 1e8 spacings of the frame's origin. Each quadrilateral is split along
//! whichever diagonal gives the better worse triangle; the diagonal is inside the tetrahedron, so
//! either choice keeps the mesh closed.
//!
//! # Border
//!
//! Samples beyond the grid are outside: the grid is padded with one layer of virtual samples whose
//! value is the iso value plus one grid spacing, so an inside region that touches the border is
//! closed by a cap lying within one cell outside the grid's bounds.

mod lattice;
mod tables;

use crate::error::GeometryError;
use crate::grid::SdfGrid;
use crate::trimesh::TriMesh;
use lattice::Lattice;

/// How close to a sample a surface vertex may come, as a fraction of its lattice edge: crossing
/// parameters are clamped to `[CROSSING_CLAMP, 1 - CROSSING_CLAMP]` so that no triangle is a
/// sliver (see the module docs). A vertex moves by at most this fraction of an edge (at most
/// `sqrt(3) * 1e-6` grid spacings).
pub const CROSSING_CLAMP: f64 = 1e-6;

/// The closed surface where `grid` crosses zero: [`contour_at`] with iso value 0.
pub fn contour(grid: &SdfGrid) -> Result<TriMesh, GeometryError> {
    contour_at(grid, 0.0)
}

/// The closed surface bounding the samples of `grid` below `iso` (same unit as the grid's values),
/// as an indexed, welded triangle mesh in the grid's frame: closed, manifold, consistently wound
/// counter-clockwise seen from outside, free of degenerate triangles, with one vertex per crossed
/// lattice edge (see the module docs). Separate inside regions come out as separate components.
///
/// Fails on a non-finite `iso` (by name), and with [`GeometryError::Empty`] when no sample is
/// below `iso`: there is no surface, and an empty mesh does not bound a solid.
/// The result is bit-identical whatever the number of rayon threads.
pub fn contour_at(grid: &SdfGrid, iso: f64) -> Result<TriMesh, GeometryError> {
    if !iso.is_finite() {
        return Err(GeometryError::invalid("iso value", iso, "a finite value"));
    }
    if !grid.values().iter().any(|v| *v < iso) {
        return Err(GeometryError::Empty {
            what: "level set interior",
        });
    }
    let lattice = Lattice::new(grid, iso);
    let crossings = lattice.crossings();
    if u32::try_from(crossings.positions.len()).is_err() {
        return Err(GeometryError::invalid(
            "grid dimensions",
            grid.spec().dims,
            "a grid whose surface has fewer than 2^32 vertices",
        ));
    }
    let triangles = lattice.triangles(&crossings);
    TriMesh::try_new(crossings.positions, triangles)
}
