//! The sheets a cracked body cannot be crossed through, for finding its pieces on a grid
//! ([`super::separate()`]): every crack wall, and a bridge over every ligament thin enough to
//! break.
//!
//! A crack's walls are the two faces of its slot; they run from its mouth on the surface to its
//! front inside the body, where they meet. Between a front that has stopped and the surface
//! ahead of it lies a ligament of uncracked material. A ligament no thicker than the reach
//! ([`super::event::EventSettings::ligament`], two target edges by default) is below what the
//! stress solve resolves, and the event breaks it (`event`, `finish_ligaments`): here it is
//! bridged (see `bridges`), so a front that has (nearly) reached the surface, or another crack,
//! separates what lies on either side of it.
//!
//! The triangles are static while the grid is flooded, and there are hundreds of thousands of
//! segment queries, so they are kept in buckets by the sample grid's own cells, in one flat
//! array (a segment between two neighbouring samples lies on the four cells that share it; no
//! query allocates), rather than in the crack mesh's editable `grid::TriangleGrid`.

use glam::DVec3;
use shatter_collision::GridSpec;
use shatter_collision::bvh::closest_point_on_triangle;
use shatter_collision::triangle_intersection::segment_meets_triangle;
use smallvec::SmallVec;

use super::mesh::CrackMesh;
use super::propagate::{first_hit, heading};
use super::region::CutRegion;
use super::through::nearest_hit;
use super::tip::local_normal;

/// Crack walls and ligament bridges, bucketed by grid cell.
#[derive(Clone, Debug)]
pub struct Barrier {
    triangles: Vec<[DVec3; 3]>,
    /// Number of crack-wall triangles: `triangles[..walls]` are walls, the rest bridges.
    walls: usize,
    spec: GridSpec,
    /// Start of each cell's run in `members` (cells in the grid's index order, x fastest), one
    /// past the end for the last.
    starts: Vec<u32>,
    members: Vec<u32>,
}

impl Barrier {
    /// The walls of every crack of `mesh` and the bridges over its ligaments no thicker than
    /// `reach` (m), bucketed for the grid `spec`.
    pub fn new(mesh: &CrackMesh, reach: f64, spec: GridSpec) -> Self {
        let mut triangles = mesh.wall_triangles();
        let walls = triangles.len();
        if reach > 0.0 {
            triangles.extend(bridges(mesh, reach));
        }
        let cells = spec.dims.map(|d| d.saturating_sub(1).max(1));
        let cell_count = cells[0] * cells[1] * cells[2];
        let cell_range = |t: &[DVec3; 3]| {
            let lo = t[0].min(t[1]).min(t[2]);
            let hi = t[0].max(t[1]).max(t[2]);
            let to_cell = |x: DVec3| {
                let c = ((x - spec.origin) / spec.spacing).floor().to_array();
                [0, 1, 2].map(|a| (c[a] as i64).clamp(0, cells[a] as i64 - 1) as usize)
            };
            (to_cell(lo), to_cell(hi))
        };
        let cell_index = |c: [usize; 3]| c[0] + cells[0] * (c[1] + cells[1] * c[2]);
        let mut counts = vec![0u32; cell_count + 1];
        let each_cell = |t: &[DVec3; 3], f: &mut dyn FnMut(usize)| {
            let (lo, hi) = cell_range(t);
            for k in lo[2]..=hi[2] {
                for j in lo[1]..=hi[1] {
                    for i in lo[0]..=hi[0] {
                        f(cell_index([i, j, k]));
                    }
                }
            }
        };
        for t in &triangles {
            each_cell(t, &mut |c| counts[c + 1] += 1);
        }
        for c in 0..cell_count {
            counts[c + 1] += counts[c];
        }
        let mut fill = counts.clone();
        let mut members = vec![0u32; counts[cell_count] as usize];
        for (index, t) in triangles.iter().enumerate() {
            each_cell(t, &mut |c| {
                members[fill[c] as usize] = index as u32;
                fill[c] += 1;
            });
        }
        Self {
            triangles,
            walls,
            spec,
            starts: counts,
            members,
        }
    }

    /// Crack-wall triangles in the barrier.
    pub fn wall_count(&self) -> usize {
        self.walls
    }

    /// The triangles of cell `(i, j, k)` (cells out of the grid have none).
    fn cell(&self, i: i64, j: i64, k: i64) -> &[u32] {
        let cells = self.spec.dims.map(|d| d.saturating_sub(1).max(1) as i64);
        if i < 0 || j < 0 || k < 0 || i >= cells[0] || j >= cells[1] || k >= cells[2] {
            return &[];
        }
        let c = (i + cells[0] * (j + cells[1] * k)) as usize;
        &self.members[self.starts[c] as usize..self.starts[c + 1] as usize]
    }

    /// Whether the segment from sample `(i, j, k)` to its next sample along `axis` (0, 1, 2)
    /// meets the barrier: exact segment/triangle tests against the triangles of the four cells
    /// that share the segment.
    pub fn blocks(&self, [i, j, k]: [usize; 3], axis: usize) -> bool {
        let (i, j, k) = (i as i64, j as i64, k as i64);
        let p = self.spec.position(i as usize, j as usize, k as usize);
        let mut step = [0usize; 3];
        step[axis] = 1;
        let q = self
            .spec
            .position(i as usize + step[0], j as usize + step[1], k as usize + step[2]);
        // The four cells around the segment: offsets 0 and -1 across the two other axes.
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for du in [-1i64, 0] {
            for dv in [-1i64, 0] {
                let mut c = [i, j, k];
                c[u] += du;
                c[v] += dv;
                if self
                    .cell(c[0], c[1], c[2])
                    .iter()
                    .any(|&t| segment_meets_triangle(p, q, self.triangles[t as usize]))
                {
                    return true;
                }
            }
        }
        false
    }

    /// Distance (m) from sample `(i, j, k)` to the nearest barrier triangle in the eight cells
    /// around it, at most `cap`.
    pub fn distance(&self, [i, j, k]: [usize; 3], cap: f64) -> f64 {
        let x = self.spec.position(i, j, k);
        let (i, j, k) = (i as i64, j as i64, k as i64);
        let mut best = cap;
        for dk in [-1i64, 0] {
            for dj in [-1i64, 0] {
                for di in [-1i64, 0] {
                    for &t in self.cell(i + di, j + dj, k + dk) {
                        let [a, b, c] = self.triangles[t as usize];
                        best = best.min(closest_point_on_triangle(x, a, b, c).distance(x));
                    }
                }
            }
        }
        best
    }
}

/// The bridges over every ligament no thicker than `reach` (see the module docs), per pair of
/// neighbouring nodes of a line that is not cut through:
/// - the triangles from the pair to the points the two nodes reach. A front node reaches the
///   point where the ray along its heading first meets the surface or another crack, or else
///   the nearest such point ahead of it; a line's end lies on the surface, and reaches the
///   nearest point of another crack's walls when one is within `reach` (two cracks whose ends
///   stopped short of each other), else is its own point;
/// - where both nodes of the pair reach a point, the crack's own plane carried `reach` ahead of
///   the pair, each node along its heading: the points reached may lie on two faces of the
///   body, either side of an edge or a corner that the triangles to them would leave open.
///   Carried past the surface it leaves the material and blocks nothing.
fn bridges(mesh: &CrackMesh, reach: f64) -> Vec<[DVec3; 3]> {
    let mut out = Vec::new();
    for (l, line) in mesh.lines().iter().enumerate() {
        let n = line.nodes.len();
        if line.through || n < 2 {
            continue;
        }
        let region = CutRegion::of_line(mesh, l);
        let is_end = |i: usize| !line.closed && (i == 0 || i + 1 == n);
        let ahead: Vec<Ahead> = (0..n)
            .map(|i| {
                let f = line.nodes[i];
                if is_end(i) {
                    let own = mesh.positions()[f as usize];
                    let other_wall = |t| mesh.wall_of(t).is_some_and(|w| w != l);
                    let reached = nearest_hit(mesh, f, reach, other_wall, false).map_or(own, |(q, _)| q);
                    Ahead {
                        reached: Some(reached),
                        heading: None,
                    }
                } else {
                    let (p, q) = (line.nodes[(i + n - 1) % n], line.nodes[(i + 1) % n]);
                    let e = local_normal(mesh, f, line.plane_normal);
                    let heading = heading(mesh, f, p, q, e, region.as_ref());
                    Ahead {
                        reached: reached_point(mesh, l, f, heading, reach),
                        heading,
                    }
                }
            })
            .collect();
        let pairs = if line.closed { n } else { n - 1 };
        for i in 0..pairs {
            let j = (i + 1) % n;
            let a = mesh.positions()[line.nodes[i] as usize];
            let b = mesh.positions()[line.nodes[j] as usize];
            let mut pair: SmallVec<[[DVec3; 3]; 4]> = match (ahead[i].reached, ahead[j].reached) {
                (Some(qa), Some(qb)) => [[a, b, qb], [a, qb, qa]].into_iter().collect(),
                (Some(qa), None) => [[a, b, qa]].into_iter().collect(),
                (None, Some(qb)) => [[a, b, qb]].into_iter().collect(),
                (None, None) => SmallVec::new(),
            };
            if let (Some(da), Some(db)) = (carried(&ahead, i, j), carried(&ahead, j, i)) {
                let (fa, fb) = (a + da * reach, b + db * reach);
                pair.extend([[a, b, fb], [a, fb, fa]]);
            }
            out.extend(
                pair.into_iter()
                    .filter(|t| (t[1] - t[0]).cross(t[2] - t[0]).length_squared() > 0.0),
            );
        }
    }
    out
}

/// What lies ahead of one node of a line (see [`bridges`]).
#[derive(Clone, Copy, Debug)]
struct Ahead {
    /// The point it reaches within the reach, if any.
    reached: Option<DVec3>,
    /// The way a front node heads (unit); `None` for a line's end.
    heading: Option<DVec3>,
}

/// The way node `i` of the pair with node `k` carries the crack's plane ahead (unit), when both
/// reach a point (see [`bridges`]): a front node's own heading, and for a line's end (on the
/// surface, with no heading of its own) its front neighbour's, so the plane goes on along the
/// surface the end would extend over. Each node carries it one way for both pairs it is in, so
/// neighbouring pairs' planes meet along it, without wedges between them.
fn carried(ahead: &[Ahead], i: usize, k: usize) -> Option<DVec3> {
    if ahead[i].reached.is_none() || ahead[k].reached.is_none() {
        return None;
    }
    ahead[i].heading.or(ahead[k].heading)
}

/// The point front node `f` of line `l` reaches within `reach` (m): where the ray along its
/// heading `dir` (the way the front moves on, `propagate`) first meets the body's surface or
/// another crack's walls, else the nearest such point ahead of it.
fn reached_point(mesh: &CrackMesh, l: usize, f: u32, dir: Option<DVec3>, reach: f64) -> Option<DVec3> {
    let x = mesh.positions()[f as usize];
    let along = dir
        .and_then(|dir| first_hit(mesh, f, x, dir, reach).map(|(d, t)| (dir, d, t)))
        .filter(|&(_, _, t)| mesh.wall_of(t) != Some(l))
        .map(|(dir, d, _)| x + dir * d);
    along.or_else(|| nearest_hit(mesh, f, reach, |t| mesh.wall_of(t) != Some(l), true).map(|(q, _)| q))
}
