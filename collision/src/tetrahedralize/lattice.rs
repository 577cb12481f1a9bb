//! The body-centred cubic lattice that isosurface stuffing starts from, and the points where the
//! level set cuts its edges.

use glam::DVec3;
use hashbrown::HashMap;
use rayon::prelude::*;

use super::{LatticeResolution, MAX_LATTICE_TETS, MIN_CUT_FRACTION, stencils};
use crate::aabb::Aabb;
use crate::error::GeometryError;
use crate::grid::SdfGrid;
use crate::tet_mesh::signed_volume;

/// Regula falsi iterations for a cut point (it converges superlinearly; this is a safety cap).
const ROOT_ITERATIONS: usize = 40;

/// A BCC lattice: cube corners `(i, j, k)` for `0 <= i <= cubes[0]` (and so on) and cube centres,
/// `spacing` apart. Vertex ids: corners first (x fastest), then centres.
pub(super) struct BccLattice {
    origin: DVec3,
    pub(super) spacing: f64,
    cubes: [usize; 3],
}

impl BccLattice {
    /// The lattice whose cubes cover `region` with one spare cube on every side, centred on it.
    pub(super) fn covering(region: Aabb, resolution: LatticeResolution) -> Result<Self, GeometryError> {
        let size = region.size();
        let spacing = match resolution {
            LatticeResolution::Spacing(h) => h,
            LatticeResolution::CellsAcross(n) if n > 0 => size.max_element() / n as f64,
            LatticeResolution::CellsAcross(_) => f64::NAN,
        };
        if !(spacing.is_finite() && spacing > 0.0) {
            return Err(GeometryError::invalid(
                "lattice resolution",
                resolution,
                "a positive finite spacing (m) or at least one cell across",
            ));
        }
        let cells = (size / spacing).ceil().max(DVec3::ONE);
        let cubes = cells + 2.0;
        if !(12.0 * cubes.element_product() <= MAX_LATTICE_TETS as f64) {
            return Err(GeometryError::invalid(
                "lattice resolution",
                resolution,
                "at most 2^24 lattice tets over the shape (a coarser spacing)",
            ));
        }
        let slack = (cells * spacing - size) * 0.5;
        Ok(Self {
            origin: region.min - slack - DVec3::splat(spacing),
            spacing,
            cubes: cubes.to_array().map(|c| c as usize),
        })
    }

    fn corner_count(&self) -> usize {
        self.cubes.iter().map(|n| n + 1).product()
    }

    pub(super) fn vertex_count(&self) -> usize {
        self.corner_count() + self.cubes.iter().product::<usize>()
    }

    fn corner(&self, [i, j, k]: [usize; 3]) -> u32 {
        let [nx, ny, _] = self.cubes;
        (i + (nx + 1) * (j + (ny + 1) * k)) as u32
    }

    fn center(&self, [i, j, k]: [usize; 3]) -> u32 {
        let [nx, ny, _] = self.cubes;
        (self.corner_count() + i + nx * (j + ny * k)) as u32
    }

    pub(super) fn position(&self, vertex: usize) -> DVec3 {
        let corners = self.corner_count();
        let (index, dims, offset) = if vertex < corners {
            (vertex, self.cubes.map(|n| n + 1), 0.0)
        } else {
            (vertex - corners, self.cubes, 0.5)
        };
        let [nx, ny, _] = dims;
        let ijk = DVec3::new(
            (index % nx) as f64,
            ((index / nx) % ny) as f64,
            (index / (nx * ny)) as f64,
        );
        self.origin + (ijk + offset) * self.spacing
    }

    /// Whether an edge is axis-aligned (both ends corners or both centres) rather than diagonal.
    pub(super) fn is_long_edge(&self, a: u32, b: u32) -> bool {
        let corners = self.corner_count() as u32;
        (a < corners) == (b < corners)
    }

    /// Every lattice tet with a negative vertex, positively oriented, in lattice order. Each
    /// pair of face-neighbouring cube centres and one edge of their shared square make a tet.
    pub(super) fn tets_touching_inside(&self, phi: &[f64]) -> Vec<[u32; 4]> {
        let [nx, ny, nz] = self.cubes;
        (0..nz)
            .into_par_iter()
            .flat_map_iter(|k| {
                let mut tets = Vec::new();
                for j in 0..ny {
                    for i in 0..nx {
                        let cell = [i, j, k];
                        for axis in 0..3 {
                            let mut next = cell;
                            next[axis] += 1;
                            if next[axis] == self.cubes[axis] {
                                continue;
                            }
                            let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
                            // The shared square's corners, in cyclic order.
                            let square = [(0, 0), (1, 0), (1, 1), (0, 1)].map(|(db, dc)| {
                                let mut corner = next;
                                corner[b] += db;
                                corner[c] += dc;
                                self.corner(corner)
                            });
                            let centers = [self.center(cell), self.center(next)];
                            for e in 0..4 {
                                let tet = [centers[0], centers[1], square[e], square[(e + 1) % 4]];
                                if tet.iter().any(|v| phi[*v as usize] < 0.0) {
                                    tets.push(self.oriented(tet));
                                }
                            }
                        }
                    }
                }
                tets
            })
            .collect()
    }

    fn oriented(&self, [a, b, c, d]: [u32; 4]) -> [u32; 4] {
        let p = [a, b, c, d].map(|v| self.position(v as usize));
        if signed_volume(p) > 0.0 {
            [a, b, c, d]
        } else {
            [a, b, d, c]
        }
    }
}

/// Lattice edges whose ends have strictly opposite signs, sorted, with where the level set
/// crosses them.
pub(super) struct CutEdges {
    /// `(low, high)` vertex ids, sorted.
    pub(super) edges: Vec<(u32, u32)>,
    /// Where the zero lies, as a fraction of the way from `low` to `high`.
    pub(super) fractions: Vec<f64>,
    /// Edge to its index in `edges`.
    pub(super) lookup: HashMap<(u32, u32), u32>,
}

impl CutEdges {
    pub(super) fn find(grid: &SdfGrid, positions: &[DVec3], phi: &[f64], tets: &[[u32; 4]]) -> Self {
        let mut edges: Vec<(u32, u32)> = tets
            .par_iter()
            .flat_map_iter(|tet| {
                stencils::EDGES.into_iter().filter_map(move |(i, j)| {
                    let (a, b) = (tet[i].min(tet[j]), tet[i].max(tet[j]));
                    let (fa, fb) = (phi[a as usize], phi[b as usize]);
                    ((fa < 0.0 && fb > 0.0) || (fa > 0.0 && fb < 0.0)).then_some((a, b))
                })
            })
            .collect();
        edges.par_sort_unstable();
        edges.dedup();
        let fractions = edges
            .par_iter()
            .map(|&(a, b)| {
                let (a, b) = (a as usize, b as usize);
                edge_root(grid, positions[a], positions[b], phi[a], phi[b])
            })
            .collect();
        let lookup = edges.iter().enumerate().map(|(i, e)| (*e, i as u32)).collect();
        Self {
            edges,
            fractions,
            lookup,
        }
    }

    /// The cut point of every edge on the unmoved lattice (`positions` of edges still cut are
    /// unmoved), kept [`MIN_CUT_FRACTION`] from the ends.
    pub(super) fn points<'a>(&'a self, positions: &'a [DVec3]) -> impl Iterator<Item = DVec3> + 'a {
        self.edges.iter().zip(&self.fractions).map(|(&(a, b), t)| {
            let t = t.clamp(MIN_CUT_FRACTION, 1.0 - MIN_CUT_FRACTION);
            positions[a as usize].lerp(positions[b as usize], t)
        })
    }
}

/// The zero of the level set on the segment from `a` (value `fa`) to `b` (value `fb`, opposite
/// sign), as a fraction of the way, by the Illinois variant of regula falsi, which keeps the
/// root bracketed and converges superlinearly.
fn edge_root(grid: &SdfGrid, a: DVec3, b: DVec3, fa: f64, fb: f64) -> f64 {
    let tolerance = 1e-12 * a.distance(b);
    let (mut lo, mut f_lo, mut hi, mut f_hi) = (0.0, fa, 1.0, fb);
    let mut last_side = 0;
    let mut s = 0.5;
    for _ in 0..ROOT_ITERATIONS {
        s = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        let f = grid.value(a.lerp(b, s));
        if f.abs() <= tolerance || hi - lo <= 1e-14 {
            break;
        }
        if (f < 0.0) == (f_lo < 0.0) {
            (lo, f_lo) = (s, f);
            if last_side == -1 {
                f_hi *= 0.5;
            }
            last_side = -1;
        } else {
            (hi, f_hi) = (s, f);
            if last_side == 1 {
                f_lo *= 0.5;
            }
            last_side = 1;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridSpec;
    use crate::tet_mesh::TetMesh;
    use crate::topology::require_solid;

    #[test]
    fn tetrahedralize_bcc_lattice_tiles_space_without_gaps_or_overlaps() {
        let region = Aabb::new(DVec3::new(-0.3, 0.1, 2.0), DVec3::new(0.5, 0.4, 2.35));
        let lattice = BccLattice::covering(region, LatticeResolution::CellsAcross(4)).unwrap();
        assert_eq!(lattice.spacing, 0.2);
        let [nx, ny, nz] = lattice.cubes;
        assert_eq!(lattice.cubes, [6, 4, 4]);
        // The cubes cover the region with a spare cube on every side, centred.
        let low = lattice.position(0);
        let high = lattice.position(lattice.corner_count() - 1);
        assert!((low + high - region.min - region.max).length() < 1e-14);
        assert!(low.cmple(region.min - 0.2 + 1e-12).all() && high.cmpge(region.max + 0.2 - 1e-12).all());
        // With everything inside, every lattice tet: four per pair of face-adjacent centres.
        let positions: Vec<DVec3> = (0..lattice.vertex_count()).map(|v| lattice.position(v)).collect();
        let tets = lattice.tets_touching_inside(&vec![-1.0; positions.len()]);
        let pairs = (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1);
        assert_eq!(tets.len(), 4 * pairs);
        // A valid tet mesh (conforming, no overlaps) of congruent tets of volume h^3 / 12 whose
        // surface is closed.
        let mesh = TetMesh::try_new(positions, tets).unwrap();
        let h3 = 0.2f64.powi(3);
        assert!(mesh.volumes().iter().all(|v| (v - h3 / 12.0).abs() < 1e-15));
        require_solid(&mesh.boundary_surface()).unwrap();
        // Long edges join corners to corners or centres to centres.
        assert!(lattice.is_long_edge(0, 1) && !lattice.is_long_edge(0, lattice.center([0, 0, 0])));
    }

    #[test]
    fn tetrahedralize_cut_points_lie_on_the_trilinear_zero_set() {
        let spec = GridSpec::with_resolution(Aabb::from_center(DVec3::ZERO, DVec3::ONE), 16, 2).unwrap();
        let grid = SdfGrid::from_fn(spec, |p| p.length() - 0.8).unwrap();
        let (a, b) = (DVec3::new(0.1, 0.2, 0.3), DVec3::new(0.9, 0.6, -0.2));
        let t = edge_root(&grid, a, b, grid.value(a), grid.value(b));
        assert!(grid.value(a.lerp(b, t)).abs() < 1e-12, "{}", grid.value(a.lerp(b, t)));
        // From the other end: the same point.
        let s = edge_root(&grid, b, a, grid.value(b), grid.value(a));
        assert!((a.lerp(b, t) - b.lerp(a, s)).length() < 1e-12);
    }

    #[test]
    fn tetrahedralize_lattice_refuses_bad_resolutions_by_name() {
        let region = Aabb::from_center(DVec3::ZERO, DVec3::ONE);
        for (resolution, shown) in [
            (LatticeResolution::Spacing(0.0), "Spacing(0.0)"),
            (LatticeResolution::Spacing(-1.0), "Spacing(-1.0)"),
            (LatticeResolution::Spacing(f64::NAN), "Spacing(NaN)"),
            (LatticeResolution::Spacing(f64::INFINITY), "Spacing(inf)"),
            (LatticeResolution::CellsAcross(0), "CellsAcross(0)"),
        ] {
            let err = BccLattice::covering(region, resolution).err().unwrap().to_string();
            assert_eq!(
                err,
                format!(
                    "lattice resolution = {shown} is invalid: expected a positive finite spacing (m) or at least one \
                     cell across"
                )
            );
        }
        // 2^24 lattice tets is 111.8 cubes a side: 109 cells plus the two spare ones pass, 110 do
        // not.
        assert!(BccLattice::covering(region, LatticeResolution::CellsAcross(109)).is_ok());
        for resolution in [LatticeResolution::CellsAcross(110), LatticeResolution::Spacing(1e-300)] {
            let err = BccLattice::covering(region, resolution).err().unwrap().to_string();
            assert!(
                err.contains(&format!("{resolution:?}")) && err.contains("2^24"),
                "{err}"
            );
        }
    }
}
