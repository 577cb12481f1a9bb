//! Particle solids of simple shapes, for scenes, tests and examples.

use glam::DVec3;
use shatter_collision::TetMesh;

use super::solid::ParticleSolid;
use crate::error::FractureError;
use crate::modes::scenes::voxel_solid;

/// The tets of the box with `half_extents` (m) centred at the origin: a lattice of boxes,
/// `cells` along the longest side and as many along the others as keeps them nearest to cubes
/// (at least one), each cut into six tets. Fails naming a bad size or cell count.
pub fn box_tets(half_extents: DVec3, cells: usize) -> Result<TetMesh, FractureError> {
    if !(half_extents.is_finite() && half_extents.min_element() > 0.0) {
        return Err(FractureError::invalid(
            "box half extents (m)",
            half_extents,
            "positive and finite",
        ));
    }
    if !(1..=256).contains(&cells) {
        return Err(FractureError::invalid("cells along the longest side", cells, "1..=256"));
    }
    let size = 2.0 * half_extents;
    let side = size.max_element() / cells as f64;
    let n = size.to_array().map(|s| ((s / side).round() as usize).max(1));
    let lattice = voxel_solid(n, 1.0, |_, _, _| true);
    let step = size / DVec3::new(n[0] as f64, n[1] as f64, n[2] as f64);
    let (vertices, tets) = lattice.into_parts();
    let vertices = vertices.into_iter().map(|v| v * step - half_extents).collect();
    Ok(TetMesh::try_new(vertices, tets)?)
}

/// The particle solid of [`box_tets`].
pub fn box_solid(half_extents: DVec3, cells: usize) -> Result<ParticleSolid, FractureError> {
    ParticleSolid::from_tet_mesh(&box_tets(half_extents, cells)?)
}
