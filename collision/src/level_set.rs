//! Level sets from triangle meshes: exact unsigned distance, sign from the generalized winding
//! number, so that open scans (the Stanford bunny's holed base) still get a sensible inside.
//!
//! The distance at every sample is exact: the closest triangle by a BVH query whose search radius
//! starts from the previous sample's distance plus one spacing (distance is 1-Lipschitz), which
//! prunes almost the whole tree. The sign needs the winding number, which is costly near the
//! surface, so it is evaluated on a lattice four times coarser first; a sample takes the sign of
//! its coarse cell when all eight coarse corners agree by a margin and no surface can cross the
//! cell (the sample is farther from the mesh than the cell's diagonal, so the winding number is
//! harmonic and free of jumps there). Every other sample gets its own winding number.

use rayon::prelude::*;

use crate::bvh::TriangleBvh;
use crate::error::GeometryError;
use crate::grid::{GridSpec, SdfGrid};
use crate::trimesh::TriMesh;
use crate::winding::{DEFAULT_ACCURACY, WindingNumbers};

/// Coarse lattice stride for the winding number.
const COARSE_STRIDE: usize = 4;
/// A coarse cell decides its samples' sign only when every corner's winding number is at least
/// this far from the 1/2 threshold.
const COARSE_MARGIN: f64 = 0.25;

/// Signed distance to `mesh` at every sample of `spec`: exact distance, negative where the
/// generalized winding number exceeds 1/2.
///
/// Works for open and self-intersecting meshes too (the winding number decides inside); fails
/// only for an empty mesh.
pub fn level_set_from_mesh(mesh: &TriMesh, spec: GridSpec) -> Result<SdfGrid, GeometryError> {
    if mesh.is_empty() {
        return Err(GeometryError::Empty { what: "mesh" });
    }
    let bvh = TriangleBvh::build(mesh);
    let winding = WindingNumbers::new(&bvh, DEFAULT_ACCURACY);
    let distances = unsigned_distances(&bvh, &spec);
    let coarse = CoarseWinding::evaluate(&winding, &spec);
    let diagonal = coarse.cell_diagonal(&spec);
    let values: Vec<f64> = distances
        .par_iter()
        .enumerate()
        .map(|(index, distance)| {
            let [i, j, k] = spec.coordinates(index);
            let inside = match coarse.decided(i, j, k) {
                Some(inside) if *distance > diagonal => inside,
                _ => winding.winding_number(spec.position(i, j, k)) > 0.5,
            };
            if inside { -distance } else { *distance }
        })
        .collect();
    SdfGrid::try_from_values(spec, values)
}

/// Exact unsigned distance at every sample, row by row in parallel.
fn unsigned_distances(bvh: &TriangleBvh, spec: &GridSpec) -> Vec<f64> {
    let [nx, ny, nz] = spec.dims;
    let mut distances = vec![0.0; spec.sample_count()];
    distances.par_chunks_mut(nx).enumerate().for_each(|(row, out)| {
        let (j, k) = (row % ny, row / ny);
        debug_assert!(k < nz);
        let mut previous = f64::INFINITY;
        for (i, value) in out.iter_mut().enumerate() {
            let query = spec.position(i, j, k);
            // The neighbour's distance plus the step bounds this one (1-Lipschitz); the slack
            // keeps round-off from excluding the true closest point.
            let bound = previous + spec.spacing * (1.0 + 1e-9) + 1e-12;
            let found = bvh
                .closest_point(query, bound * bound)
                .or_else(|| bvh.closest_point(query, f64::INFINITY));
            previous = found.map_or(f64::INFINITY, |c| c.distance_squared.sqrt());
            *value = previous;
        }
    });
    distances
}

/// Winding numbers on a lattice `COARSE_STRIDE` times coarser (plus the last sample on every
/// axis).
struct CoarseWinding {
    /// Fine sample index of each coarse sample, per axis.
    axes: [Vec<usize>; 3],
    /// Winding numbers, x fastest.
    values: Vec<f64>,
}

impl CoarseWinding {
    fn evaluate(winding: &WindingNumbers<'_>, spec: &GridSpec) -> Self {
        let axes = spec.dims.map(|n| {
            let mut axis: Vec<usize> = (0..n).step_by(COARSE_STRIDE).collect();
            if axis.last() != Some(&(n - 1)) {
                axis.push(n - 1);
            }
            axis
        });
        let (cx, cy) = (axes[0].len(), axes[1].len());
        let count = cx * cy * axes[2].len();
        let values = (0..count)
            .into_par_iter()
            .map(|c| {
                let (a, b, d) = (c % cx, (c / cx) % cy, c / (cx * cy));
                winding.winding_number(spec.position(axes[0][a], axes[1][b], axes[2][d]))
            })
            .collect();
        Self { axes, values }
    }

    /// Longest diagonal of a coarse cell, m.
    fn cell_diagonal(&self, spec: &GridSpec) -> f64 {
        (3f64).sqrt() * (COARSE_STRIDE as f64) * spec.spacing
    }

    /// The sign the coarse cell around fine sample `(i, j, k)` decides: `Some(inside)` when every
    /// corner is on the same side of 1/2 by the margin.
    fn decided(&self, i: usize, j: usize, k: usize) -> Option<bool> {
        let cell = |axis: &[usize], f: usize| {
            let c = (f / COARSE_STRIDE).min(axis.len() - 2);
            (c, c + 1)
        };
        let (x0, x1) = cell(&self.axes[0], i);
        let (y0, y1) = cell(&self.axes[1], j);
        let (z0, z1) = cell(&self.axes[2], k);
        let (cx, cy) = (self.axes[0].len(), self.axes[1].len());
        let (mut all_inside, mut all_outside) = (true, true);
        for (x, y, z) in [
            (x0, y0, z0),
            (x1, y0, z0),
            (x0, y1, z0),
            (x1, y1, z0),
            (x0, y0, z1),
            (x1, y0, z1),
            (x0, y1, z1),
            (x1, y1, z1),
        ] {
            let w = self.values[x + cx * (y + cy * z)];
            all_inside &= w > 0.5 + COARSE_MARGIN;
            all_outside &= w < 0.5 - COARSE_MARGIN;
        }
        if all_inside {
            Some(true)
        } else if all_outside {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aabb::Aabb;
    use glam::DVec3;

    #[test]
    fn level_set_of_a_sphere_mesh_is_within_half_a_cell_of_the_sphere() {
        let mesh = TriMesh::icosphere(1.0, 5);
        let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 64, 4).unwrap();
        let grid = level_set_from_mesh(&mesh, spec).unwrap();
        let half_cell = 0.5 * spec.spacing;
        let mut worst = 0.0f64;
        for (index, value) in grid.values().iter().enumerate() {
            let [i, j, k] = spec.coordinates(index);
            let exact = spec.position(i, j, k).length() - 1.0;
            worst = worst.max((value - exact).abs());
        }
        assert!(
            worst <= half_cell,
            "worst error {worst} against half a cell {half_cell}"
        );
    }

    #[test]
    fn level_set_of_an_open_box_keeps_its_inside() {
        // A unit cube with its top face missing: the winding number is 1 deep inside and falls
        // through 1/2 across the hole.
        let (vertices, mut triangles) = TriMesh::cuboid(DVec3::ONE).into_parts();
        triangles.retain(|t| !t.iter().all(|i| i & 2 != 0));
        let open = TriMesh::try_new(vertices, triangles).unwrap();
        let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 32, 3).unwrap();
        let grid = level_set_from_mesh(&open, spec).unwrap();
        assert!(grid.value(DVec3::new(0.0, -0.5, 0.0)) < -0.4);
        assert!(grid.value(DVec3::new(0.3, 0.2, -0.1)) < 0.0);
        assert!(grid.value(DVec3::new(0.0, 1.6, 0.0)) > 0.5);
        assert!(grid.value(DVec3::new(1.7, 0.0, 0.0)) > 0.6);
    }

    #[test]
    fn level_set_refuses_an_empty_mesh() {
        let spec = GridSpec::try_new(DVec3::ZERO, 1.0, [4, 4, 4]).unwrap();
        assert_eq!(
            level_set_from_mesh(&TriMesh::default(), spec).unwrap_err(),
            GeometryError::Empty { what: "mesh" }
        );
    }
}
