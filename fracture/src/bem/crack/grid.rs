//! A uniform grid of cubic cells over the triangles of a crack mesh, kept up to date as the mesh
//! changes, so the checks of every local change (`check`) and the ray casts of the fronts
//! (`propagate`) look at the triangles near them instead of the whole surface.
//!
//! Each triangle is registered in every cell its bounding box touches. A triangle spanning more
//! than [`MAX_CELLS`] cells (a coarse input mesh under a fine crack, or a non-finite corner) is
//! kept in a short list that every query returns. A query answers the triangles registered in
//! the cells a box touches: a superset of those whose bounding boxes overlap it, in ascending
//! order whatever the order of the edits, so results do not depend on the grid.

use glam::DVec3;
use hashbrown::HashMap;
use smallvec::SmallVec;

/// Most cells one triangle is registered in; a larger one goes to the list every query returns.
pub const MAX_CELLS: i64 = 64;

/// Most cells one query looks in: a long thin box (a ray along an axis) touches a row of them.
pub const MAX_QUERY_CELLS: i64 = 4096;

/// A range of cells, corners included.
type Span = ([i32; 3], [i32; 3]);

/// Triangles by grid cell.
#[derive(Clone, Debug)]
pub struct TriangleGrid {
    /// Edge of a cell (m).
    cell: f64,
    cells: HashMap<[i32; 3], SmallVec<[u32; 8]>>,
    /// Per triangle slot, the cells it is registered in (`None`: not in the grid).
    spans: Vec<Option<Span>>,
    /// Triangles too large for the cells, or with a non-finite corner, ascending.
    oversize: Vec<u32>,
}

impl TriangleGrid {
    /// An empty grid of cells `cell` metres wide (made at least 1e-9 m).
    pub fn new(cell: f64) -> Self {
        Self {
            cell: if cell.is_finite() { cell.max(1e-9) } else { 1.0 },
            cells: HashMap::new(),
            spans: Vec::new(),
            oversize: Vec::new(),
        }
    }

    fn index(&self, x: DVec3) -> [i32; 3] {
        // `as` saturates: far points land in the outermost cells, still a valid range.
        [x.x, x.y, x.z].map(|c| (c / self.cell).floor() as i32)
    }

    /// The cells of the box `lo`..`hi`, or `None` when it spans more than `limit` cells or a
    /// corner is not finite.
    fn span(&self, lo: DVec3, hi: DVec3, limit: i64) -> Option<Span> {
        if !(lo.is_finite() && hi.is_finite()) {
            return None;
        }
        let (a, b) = (self.index(lo), self.index(hi));
        let count: i64 = (0..3).map(|k| i64::from(b[k]) - i64::from(a[k]) + 1).product();
        (count <= limit).then_some((a, b))
    }

    fn cells_of(span: Span) -> impl Iterator<Item = [i32; 3]> {
        let (a, b) = span;
        (a[0]..=b[0]).flat_map(move |i| (a[1]..=b[1]).flat_map(move |j| (a[2]..=b[2]).map(move |k| [i, j, k])))
    }

    /// Registers triangle slot `t` with corners `corners` (m), replacing any earlier entry.
    pub fn insert(&mut self, t: u32, corners: [DVec3; 3]) {
        self.remove(t);
        if self.spans.len() <= t as usize {
            self.spans.resize(t as usize + 1, None);
        }
        let [a, b, c] = corners;
        match self.span(a.min(b).min(c), a.max(b).max(c), MAX_CELLS) {
            Some(span) => {
                for key in Self::cells_of(span) {
                    self.cells.entry(key).or_default().push(t);
                }
                self.spans[t as usize] = Some(span);
            }
            None => {
                let at = self.oversize.partition_point(|&u| u < t);
                self.oversize.insert(at, t);
            }
        }
    }

    /// Forgets triangle slot `t`.
    pub fn remove(&mut self, t: u32) {
        if let Some(span) = self.spans.get_mut(t as usize).and_then(Option::take) {
            for key in Self::cells_of(span) {
                if let Some(list) = self.cells.get_mut(&key) {
                    list.retain(|u| *u != t);
                    if list.is_empty() {
                        self.cells.remove(&key);
                    }
                }
            }
        } else if let Ok(at) = self.oversize.binary_search(&t) {
            self.oversize.remove(at);
        }
    }

    /// Re-registers triangle slot `t` after its corners moved to `corners` (m), when its cells
    /// changed.
    pub fn update(&mut self, t: u32, corners: [DVec3; 3]) {
        let [a, b, c] = corners;
        let now = self.span(a.min(b).min(c), a.max(b).max(c), MAX_CELLS);
        let was = self.spans.get(t as usize).copied().flatten();
        if now.is_none() || now != was {
            self.insert(t, corners);
        }
    }

    /// The triangles registered in the cells the box `lo`..`hi` (m) touches, and every
    /// oversize one, ascending and without repeats. A box over more than [`MAX_QUERY_CELLS`]
    /// cells answers `None`: the caller looks at every triangle.
    pub fn near(&self, lo: DVec3, hi: DVec3) -> Option<Vec<u32>> {
        let span = self.span(lo, hi, MAX_QUERY_CELLS)?;
        let mut out = self.oversize.clone();
        for key in Self::cells_of(span) {
            if let Some(list) = self.cells.get(&key) {
                out.extend_from_slice(list);
            }
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(x: f64) -> [DVec3; 3] {
        [
            DVec3::new(x, 0.0, 0.0),
            DVec3::new(x + 0.1, 0.0, 0.0),
            DVec3::new(x, 0.1, 0.0),
        ]
    }

    #[test]
    fn crack_grid_finds_what_overlaps_and_follows_moves() {
        let mut grid = TriangleGrid::new(0.25);
        for (t, x) in [(0, 0.0), (1, 1.0), (2, 2.0)] {
            grid.insert(t, tri(x));
        }
        let near = |g: &TriangleGrid, x: f64| {
            g.near(DVec3::new(x, 0.0, 0.0), DVec3::new(x + 0.05, 0.05, 0.0))
                .unwrap()
        };
        assert_eq!(near(&grid, 0.0), vec![0]);
        assert_eq!(near(&grid, 1.0), vec![1]);
        grid.update(1, tri(2.0));
        assert!(near(&grid, 1.0).is_empty(), "a moved triangle leaves its old cells");
        assert_eq!(
            near(&grid, 2.0),
            vec![1, 2],
            "ascending, whatever the order of insertion"
        );
        grid.remove(2);
        assert_eq!(near(&grid, 2.0), vec![1]);
        // A triangle over many cells is answered by every query.
        grid.insert(3, [DVec3::ZERO, DVec3::new(50.0, 0.0, 0.0), DVec3::new(0.0, 50.0, 0.0)]);
        assert_eq!(near(&grid, 1.0), vec![3]);
        grid.insert(4, [DVec3::NAN, DVec3::ZERO, DVec3::X]);
        assert_eq!(near(&grid, 1.0), vec![3, 4], "a non-finite corner is never lost");
        grid.remove(3);
        assert_eq!(near(&grid, 1.0), vec![4]);
        assert!(grid.near(DVec3::ZERO, DVec3::splat(1.0e3)).is_none(), "too large a box");
    }
}
