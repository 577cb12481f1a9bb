//! From a triangle mesh to prescored pieces, as Li 2018 section 4 builds its bunny: a signed
//! distance level set of the surface, a tet mesh of its inside, optionally only a shell under the
//! surface, and a round-robin flood fill into pieces.

use shatter_collision::level_set::level_set_from_mesh;
use shatter_collision::{GridSpec, LatticeResolution, SdfGrid, TetMesh, TriMesh, tetrahedralize};

use super::{TetPieces, flood_fill, hollow};
use crate::error::FractureError;

/// Level-set samples of padding around the mesh's box, so the zero level set never touches the
/// grid's edge.
const GRID_PADDING: usize = 3;

/// How an object is cut ahead of time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrescoreSettings {
    /// Pieces to grow (a part of the object no seed reaches becomes one more).
    pub pieces: usize,
    /// Seed of the seed tets.
    pub seed: u64,
    /// Level-set cells along the longest side of the mesh's box (>= 4): how finely the surface is
    /// resolved before it is filled with tets.
    pub level_set_cells: usize,
    /// Tet lattice cubes along the longest side of the inside (>= 1): how coarse the tet mesh is.
    /// Li's bunny uses a coarse one; a piece is a few dozen tets.
    pub tet_cells: usize,
    /// Keep only the tets with a vertex less than this deep under the surface, m (`None`: the
    /// whole solid).
    pub shell: Option<f64>,
}

impl Default for PrescoreSettings {
    fn default() -> Self {
        Self {
            pieces: 10,
            seed: 0,
            level_set_cells: 48,
            tet_cells: 12,
            shell: None,
        }
    }
}

/// An object cut into pieces: its tet mesh (in the mesh's frame) and which piece each tet is in.
#[derive(Clone, Debug)]
pub struct Prescored {
    /// The tets, m, in the frame of the triangle mesh they came from.
    pub tets: TetMesh,
    /// The partition of `tets`.
    pub pieces: TetPieces,
}

/// Cuts the solid `mesh` bounds (inside by the generalized winding number, so a scan with holes
/// such as the Stanford bunny works) into pieces as `settings` say. Fails naming the value on a
/// resolution or piece count out of range, a shell that keeps nothing, or an empty mesh.
pub fn prescore_mesh(mesh: &TriMesh, settings: &PrescoreSettings) -> Result<Prescored, FractureError> {
    let (mut tets, grid) = fill_with_tets(mesh, settings.level_set_cells, settings.tet_cells)?;
    if let Some(thickness) = settings.shell {
        tets = hollow(&tets, &grid, thickness)?;
    }
    let pieces = flood_fill(&tets, settings.pieces, settings.seed)?;
    Ok(Prescored { tets, pieces })
}

/// A tet mesh of the solid `mesh` bounds, in its frame, and the level set it was cut from: a
/// signed distance grid with `level_set_cells` cells along the longest side (>= 4), filled by a
/// lattice of `tet_cells` cubes along it (>= 1). Fails naming a resolution out of range or an
/// empty mesh.
pub(crate) fn fill_with_tets(
    mesh: &TriMesh,
    level_set_cells: usize,
    tet_cells: usize,
) -> Result<(TetMesh, SdfGrid), FractureError> {
    if level_set_cells < 4 {
        return Err(FractureError::invalid(
            "level-set cells",
            level_set_cells,
            "at least 4 cells along the longest side",
        ));
    }
    if tet_cells == 0 {
        return Err(FractureError::invalid(
            "tet lattice cells",
            tet_cells,
            "at least 1 cell along the longest side",
        ));
    }
    let bounds = mesh
        .bounds()
        .ok_or_else(|| FractureError::input("the mesh to fill with tets is empty"))?;
    let spec = GridSpec::with_resolution(bounds, level_set_cells, GRID_PADDING)?;
    let grid = level_set_from_mesh(mesh, spec)?;
    let tets = tetrahedralize(&grid, LatticeResolution::CellsAcross(tet_cells))?;
    Ok((tets, grid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;
    use shatter_collision::topology::inspect;

    /// A closed, outward-wound box of half extents `half` about the origin.
    fn box_mesh(half: DVec3) -> TriMesh {
        let vertices = (0..8)
            .map(|i| {
                DVec3::new(
                    if i & 1 == 0 { -half.x } else { half.x },
                    if i & 2 == 0 { -half.y } else { half.y },
                    if i & 4 == 0 { -half.z } else { half.z },
                )
            })
            .collect();
        let triangles = vec![
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ];
        TriMesh::try_new(vertices, triangles).unwrap()
    }

    #[test]
    fn prescore_mesh_cuts_a_box_into_closed_pieces_that_fill_it() {
        let half = DVec3::new(0.4, 0.2, 0.3);
        let mesh = box_mesh(half);
        assert!(inspect(&mesh).is_solid());
        let settings = PrescoreSettings {
            pieces: 6,
            seed: 3,
            level_set_cells: 32,
            tet_cells: 10,
            shell: None,
        };
        let cut = prescore_mesh(&mesh, &settings).unwrap();
        assert_eq!(cut.pieces.count(), 6);
        // The tets fill the box up to the stuffing's O(h^2) rounding at edges and corners.
        let whole = 8.0 * half.x * half.y * half.z;
        assert!(
            (cut.tets.volume() - whole).abs() < 0.02 * whole,
            "{}",
            cut.tets.volume()
        );
        let mut volume = 0.0;
        for piece in 0..cut.pieces.count() {
            let surface = cut.pieces.surface(&cut.tets, piece);
            assert_eq!(inspect(&surface).boundary_edges, 0);
            volume += surface.signed_volume();
        }
        assert!((volume - cut.tets.volume()).abs() < 1e-12 * whole);
        // A shell keeps less, and the same settings cut the same way.
        let shell = prescore_mesh(
            &mesh,
            &PrescoreSettings {
                shell: Some(0.08),
                ..settings
            },
        )
        .unwrap();
        assert!(shell.tets.volume() < 0.9 * cut.tets.volume());
        assert_eq!(prescore_mesh(&mesh, &settings).unwrap().pieces, cut.pieces);
        let refused = |s: PrescoreSettings| prescore_mesh(&mesh, &s).unwrap_err().to_string();
        assert!(
            refused(PrescoreSettings {
                level_set_cells: 2,
                ..settings
            })
            .contains("level-set cells")
        );
        assert!(
            refused(PrescoreSettings {
                tet_cells: 0,
                ..settings
            })
            .contains("tet lattice")
        );
        assert!(refused(PrescoreSettings { pieces: 0, ..settings }).contains("piece count"));
        assert!(
            refused(PrescoreSettings {
                shell: Some(-1.0),
                ..settings
            })
            .contains("thickness")
        );
    }
}
