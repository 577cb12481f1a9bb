//! Precomputing a shape's fracture modes (Sellan 2023, `fracture::modes`) from a mesh file: the
//! offline half of the method, which `shatter modes precompute` runs and scene files load.
//!
//! The tet mesh is rebuilt from the surface by the same deterministic code wherever it is
//! needed (here, and when a scene loads the asset), so the asset stores the modes and their
//! runtime matrices but not the tets; the asset's mesh fingerprint ties it to the tets it was
//! computed on, and a different surface, scale or resolution is refused by name.

use std::path::Path;

use glam::{DAffine3, DVec3};

use crate::collision::{TetMesh, TriMesh};
use crate::fracture::FractureError;
use crate::fracture::modes::{
    Dimension, ImpactProjector, ModeSettings, ModesAsset, ProjectionSettings, compute_modes, solid_tets,
};

/// Default level-set cells along the mesh's longest side.
pub const DEFAULT_LEVEL_SET_CELLS: usize = 64;
/// Default tet lattice cubes along the longest side: about 10,000 tets for a compact shape.
pub const DEFAULT_TET_CELLS: usize = 18;

/// How a shape's tets are made from its surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TetResolution {
    /// Level-set cells along the longest side (>= 4).
    pub level_set_cells: usize,
    /// Tet lattice cubes along the longest side (>= 1).
    pub tet_cells: usize,
}

impl Default for TetResolution {
    fn default() -> Self {
        Self {
            level_set_cells: DEFAULT_LEVEL_SET_CELLS,
            tet_cells: DEFAULT_TET_CELLS,
        }
    }
}

/// The tets of the solid `mesh` (already scaled) at `resolution`.
pub fn shape_tets(mesh: &TriMesh, resolution: TetResolution) -> Result<TetMesh, FractureError> {
    solid_tets(mesh, resolution.level_set_cells, resolution.tet_cells)
}

/// The modes of the solid in `path` (OBJ, STL or PLY, scaled by `scale`) and their runtime, with
/// the tets they belong to; `progress(k)` is called after mode `k`.
pub fn precompute(
    path: &Path,
    scale: f64,
    resolution: TetResolution,
    modes: usize,
    dimension: Dimension,
    progress: impl FnMut(usize),
) -> Result<(TetMesh, ModesAsset), FractureError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(FractureError::invalid("mesh scale", scale, "a positive scale factor"));
    }
    let surface = TriMesh::load(path)
        .map_err(|e| FractureError::input(format!("{}: {e}", path.display())))?
        .transformed(DAffine3::from_scale(DVec3::splat(scale)));
    let tets = shape_tets(&surface, resolution)?;
    let settings = ModeSettings {
        modes,
        dimension,
        ..ModeSettings::default()
    };
    let modes = compute_modes(&tets, &settings, None, progress)?;
    let projector = ImpactProjector::new(&tets, &modes, &ProjectionSettings::default())?;
    Ok((tets, ModesAsset { modes, projector }))
}
