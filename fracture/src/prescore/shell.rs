//! Hollowing a tet mesh: only a shell under the surface is kept (Li 2018's bunny: "we began with a
//! coarse volumetric tetrahedralization of the bunny and removed tetrahedra from the interior").

use shatter_collision::{SdfGrid, TetMesh};

use crate::error::FractureError;

/// The tets of `mesh` with at least one vertex less than `thickness` (m) inside the surface, where
/// `grid` is the object's signed distance (negative inside): a shell about `thickness` deep plus
/// up to one tet. Fails naming a thickness that is not positive and finite, or one that keeps no
/// tet.
pub fn hollow(mesh: &TetMesh, grid: &SdfGrid, thickness: f64) -> Result<TetMesh, FractureError> {
    if !(thickness.is_finite() && thickness > 0.0) {
        return Err(FractureError::invalid(
            "shell thickness (m)",
            thickness,
            "a positive finite length",
        ));
    }
    let depth: Vec<f64> = mesh.vertices().iter().map(|v| grid.value(*v)).collect();
    let kept: Vec<[u32; 4]> = mesh
        .tets()
        .iter()
        .filter(|tet| tet.iter().any(|&v| depth[v as usize] > -thickness))
        .copied()
        .collect();
    if kept.is_empty() {
        return Err(FractureError::invalid(
            "shell thickness (m)",
            thickness,
            "a thickness that keeps some tet (the mesh has none that close to the surface)",
        ));
    }
    Ok(TetMesh::try_new(mesh.vertices().to_vec(), kept)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;
    use shatter_collision::{Aabb, GridSpec, LatticeResolution, Shape, SignedDistance, Sphere, tetrahedralize};

    #[test]
    fn prescore_hollow_keeps_a_shell_of_the_asked_depth() {
        let sphere = Shape::Sphere(Sphere::try_new(1.0).unwrap());
        let spec = GridSpec::with_resolution(Aabb::new(DVec3::splat(-1.0), DVec3::splat(1.0)), 40, 3).unwrap();
        let grid = SdfGrid::from_fn(spec, |p| sphere.distance(p)).unwrap();
        let solid = tetrahedralize(&grid, LatticeResolution::CellsAcross(12)).unwrap();
        let shell = hollow(&solid, &grid, 0.25).unwrap();
        // A shell from r ~ 0.75 - (one tet) to 1: well under the ball's volume, well over a skin.
        let (ball, kept) = (solid.volume(), shell.volume());
        assert!(
            kept < 0.8 * ball && kept > (1.0 - 0.75f64.powi(3)) * ball,
            "{kept} of {ball}"
        );
        for tet in 0..shell.tets().len() {
            let nearest = shell.tet(tet).iter().map(|v| grid.value(*v)).fold(f64::MIN, f64::max);
            assert!(nearest > -0.25);
        }
        assert!(
            hollow(&solid, &grid, 0.0)
                .unwrap_err()
                .to_string()
                .contains("thickness")
        );
        assert!(hollow(&solid, &grid, f64::NAN).is_err());
    }
}
