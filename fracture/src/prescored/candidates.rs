//! Which regions may own the points of each cell of a coarse lattice over the pattern's box, so
//! that finding the region of a point tests a handful of regions instead of all of them.

use glam::DVec3;
use rayon::prelude::*;

/// Cells per axis of the lattice over the unit box.
pub(crate) const LATTICE_CELLS: usize = 32;

/// Per lattice cell, a superset of the regions that own some point of it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CandidateLattice {
    /// Cell `c`'s candidates are `list[starts[c]..starts[c + 1]]`, ascending.
    starts: Vec<u32>,
    list: Vec<u32>,
}

impl CandidateLattice {
    /// The lattice whose cell with centre `c` and half-diagonal `r` lists `candidates(c, r)`.
    pub fn build(candidates: impl Fn(DVec3, f64) -> Vec<u32> + Sync) -> Self {
        let n = LATTICE_CELLS;
        let size = 1.0 / n as f64;
        let half_diagonal = 0.5 * size * 3f64.sqrt();
        let lists: Vec<Vec<u32>> = (0..n * n * n)
            .into_par_iter()
            .map(|c| {
                let centre = DVec3::new(
                    (c % n) as f64 + 0.5,
                    ((c / n) % n) as f64 + 0.5,
                    (c / (n * n)) as f64 + 0.5,
                );
                let mut list = candidates(centre * size, half_diagonal);
                list.sort_unstable();
                list.dedup();
                list
            })
            .collect();
        let mut starts = Vec::with_capacity(lists.len() + 1);
        let mut list = Vec::new();
        starts.push(0);
        for cell in lists {
            list.extend(cell);
            starts.push(list.len() as u32);
        }
        Self { starts, list }
    }

    /// The candidates of the cell holding `point` (pattern space; clamped into the unit box).
    #[inline]
    pub fn at(&self, point: DVec3) -> &[u32] {
        let n = LATTICE_CELLS;
        let cell = |x: f64| ((x * n as f64).floor().max(0.0) as usize).min(n - 1);
        let c = cell(point.x) + n * (cell(point.y) + n * cell(point.z));
        &self.list[self.starts[c] as usize..self.starts[c + 1] as usize]
    }

    /// Every `(i, j)` with `i < j` listed together in some cell: a superset of the pairs of
    /// regions that touch inside the box.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        for c in 0..self.starts.len() - 1 {
            let cell = &self.list[self.starts[c] as usize..self.starts[c + 1] as usize];
            for (a, &i) in cell.iter().enumerate() {
                for &j in &cell[a + 1..] {
                    pairs.push((i, j));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }
}
