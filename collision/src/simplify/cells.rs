//! A uniform hash grid of triangle bounding boxes, kept up to date through the edits, so that
//! every edit can be checked against the triangles near it for intersections.

use glam::DVec3;
use hashbrown::HashMap;
use smallvec::SmallVec;

use crate::aabb::Aabb;

/// Integer cell coordinates.
type Cell = [i32; 3];

/// Triangles by the cells their bounding boxes overlap.
pub(super) struct TriangleCells {
    /// Cell edge (m).
    size: f64,
    cells: HashMap<Cell, SmallVec<[u32; 8]>>,
    /// Per triangle, the lowest and highest cell it is filed under (`None`: not filed).
    filed: Vec<Option<(Cell, Cell)>>,
}

impl TriangleCells {
    /// An empty grid of cells `size` (m) across for `count` triangles.
    pub(super) fn new(size: f64, count: usize) -> Self {
        Self {
            size,
            cells: HashMap::new(),
            filed: vec![None; count],
        }
    }

    fn range(&self, bounds: &Aabb) -> (Cell, Cell) {
        let cell = |p: DVec3| (p / self.size).floor().as_ivec3().to_array();
        (cell(bounds.min), cell(bounds.max))
    }

    /// Files triangle `t` with corners `corners` (re-filing it if it was filed).
    pub(super) fn file(&mut self, t: u32, corners: [DVec3; 3]) {
        self.remove(t);
        let (lo, hi) = self.range(&Aabb::from_points(corners));
        for_each_cell(lo, hi, |c| self.cells.entry(c).or_default().push(t));
        self.filed[t as usize] = Some((lo, hi));
    }

    /// Takes triangle `t` out of the grid.
    pub(super) fn remove(&mut self, t: u32) {
        if let Some((lo, hi)) = self.filed[t as usize].take() {
            for_each_cell(lo, hi, |c| {
                if let Some(list) = self.cells.get_mut(&c) {
                    list.retain(|u| *u != t);
                }
            });
        }
    }

    /// Whether `test` holds for any filed triangle whose cells overlap those of `bounds` (a
    /// triangle filed in several of them may be tested more than once).
    pub(super) fn any_near(&self, bounds: &Aabb, mut test: impl FnMut(u32) -> bool) -> bool {
        let (lo, hi) = self.range(bounds);
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    if let Some(list) = self.cells.get(&[x, y, z])
                        && list.iter().any(|&t| test(t))
                    {
                        return true;
                    }
                }
            }
        }
        false
    }
}

fn for_each_cell(lo: Cell, hi: Cell, mut visit: impl FnMut(Cell)) {
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                visit([x, y, z]);
            }
        }
    }
}
