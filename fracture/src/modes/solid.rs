//! Any closed triangle mesh as a tet mesh for fracture modes: a signed distance level set of the
//! surface (inside by the generalized winding number, so small holes do not flip it) filled by
//! isosurface stuffing, the paper's "simple cage" idea with a lattice for the cage.

use shatter_collision::{TetMesh, TriMesh};

use crate::error::FractureError;
use crate::prescore::pipeline::fill_with_tets;

/// A tet mesh of the solid `mesh` bounds, in its frame, from a level set with
/// `level_set_cells` cells along the longest side (>= 4) filled by a lattice of `tet_cells`
/// cubes along it (>= 1; about `12 * tet_cells^3 * fill` tets, `fill` the fraction of the box
/// inside). Fails naming a resolution out of range or an empty mesh.
pub fn solid_tets(mesh: &TriMesh, level_set_cells: usize, tet_cells: usize) -> Result<TetMesh, FractureError> {
    fill_with_tets(mesh, level_set_cells, tet_cells).map(|(tets, _)| tets)
}
