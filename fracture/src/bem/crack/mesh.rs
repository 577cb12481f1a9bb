//! The editable surface a crack is tracked on: a closed triangle mesh in the body's material
//! frame (m), with per-vertex incidence for local operations and the crack lines drawn on it.
//!
//! A crack is a thin slot cut into the body from its surface (Zhu 2015 section 6.3). Its mouth is
//! a loop on the surface; its two walls run from the mouth down to the crack front, the line of
//! "crack nodes" where the walls meet inside the material. Front nodes that still move are
//! *active*; the two ends of an open line sit on the surface and are inactive until the line
//! extends. The mesh stays a closed, oriented 2-manifold throughout, so the boundary-element
//! solve and the validator see an ordinary surface.
//!
//! Storage: triangles and vertices are never renumbered while a crack grows; removed triangles
//! are marked dead and a removed vertex has no incident triangle. [`CrackMesh::to_trimesh`]
//! compacts. Every operation runs in index order, so results do not depend on thread count.

use glam::DVec3;
use hashbrown::HashSet;
use shatter_collision::TriMesh;
use smallvec::SmallVec;

use super::grid::TriangleGrid;
use crate::error::FractureError;

/// The triangles incident to one vertex.
pub type Incidence = SmallVec<[u32; 8]>;

/// A crack line: the front of one crack, as an ordered list of vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct CrackLine {
    /// Vertices from one end to the other (for a closed loop, around the loop).
    pub nodes: Vec<u32>,
    /// Whether the line has closed into a loop (Zhu Fig. 12, "crack circle").
    pub closed: bool,
    /// Unit normal of the crack plane (the principal direction it opened across).
    pub plane_normal: DVec3,
    /// A point of the crack plane (m): where the crack opened.
    pub plane_point: DVec3,
    /// Whether each end (first, last) can no longer extend: its crossing met another crack, or
    /// the surface around it refused the cut.
    pub blocked: [bool; 2],
    /// Whether the crack has cut through to the far surface (see `through`): it then has no
    /// front and no nodes, only its walls.
    pub through: bool,
    /// Whether part of its front broke out through the far surface (`breakout`): the line runs
    /// through a wall, its ends on the wall's two faces.
    pub broken_out: bool,
}

/// A closed triangle mesh under crack tracking.
///
/// # Panics
/// Methods that edit or read one element by index (`set_position`, `set_active`, `corners`,
/// `others_ccw`, `triangle_normal`, `add_triangle`, `replace_triangle`, `remove_triangle`,
/// `is_alive`, `is_wall`) panic on a vertex or triangle index the mesh does not have: a
/// programmer error, never data. Queries of a vertex's neighbourhood and flags (`incident`,
/// `ring`, `edge_triangles`, `vertex_in_use`, `is_crack_node`, `is_active`) answer empty or false.
#[derive(Clone, Debug)]
pub struct CrackMesh {
    positions: Vec<DVec3>,
    triangles: Vec<[u32; 3]>,
    alive: Vec<bool>,
    /// Per triangle slot, the crack line whose wall it is (`u32::MAX`: the body's surface).
    wall: Vec<u32>,
    incidence: Vec<Incidence>,
    active: Vec<bool>,
    on_line: Vec<bool>,
    /// Per vertex, how many sub-steps in a row its front move was refused.
    stalls: Vec<u8>,
    /// Runs of front nodes (first and last node) whose break-out was refused (`breakout`).
    refused_runs: HashSet<(u32, u32)>,
    lines: Vec<CrackLine>,
    /// Per line, the largest wall area it has had (m^2) and how many sub-steps in a row it has
    /// not grown past it.
    growth: Vec<(f64, u8)>,
    /// The live triangles by grid cell, cells a mean input edge wide.
    grid: TriangleGrid,
}

impl CrackMesh {
    /// Starts tracking on `mesh`, which must bound a solid (closed, manifold, consistently
    /// oriented with outward normals, positive volume).
    pub fn try_new(mesh: &TriMesh) -> Result<Self, FractureError> {
        shatter_collision::topology::require_solid(mesh)?;
        let mut out = Self {
            positions: mesh.vertices().to_vec(),
            triangles: Vec::with_capacity(mesh.triangles().len()),
            alive: Vec::with_capacity(mesh.triangles().len()),
            wall: Vec::with_capacity(mesh.triangles().len()),
            incidence: vec![Incidence::new(); mesh.vertices().len()],
            active: vec![false; mesh.vertices().len()],
            on_line: vec![false; mesh.vertices().len()],
            stalls: vec![0; mesh.vertices().len()],
            refused_runs: HashSet::new(),
            lines: Vec::new(),
            growth: Vec::new(),
            grid: TriangleGrid::new(mean_edge(mesh)),
        };
        for &t in mesh.triangles() {
            out.add_triangle(t);
        }
        Ok(out)
    }

    /// Vertex positions (m, material frame), including removed vertices.
    pub fn positions(&self) -> &[DVec3] {
        &self.positions
    }

    /// Moves vertex `v` to `x` (m). The caller checks that the move keeps the mesh valid.
    pub fn set_position(&mut self, v: u32, x: DVec3) {
        self.positions[v as usize] = x;
        for i in 0..self.incidence[v as usize].len() {
            let t = self.incidence[v as usize][i];
            self.grid.update(t, self.corners(t));
        }
    }

    /// Every triangle slot, live or dead; see [`Self::is_alive`].
    pub fn triangle_slots(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// Whether triangle slot `t` holds a live triangle.
    pub fn is_alive(&self, t: u32) -> bool {
        self.alive[t as usize]
    }

    /// Indices of the live triangles, ascending.
    pub fn live_triangles(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.triangles.len() as u32).filter(|&t| self.alive[t as usize])
    }

    /// The live triangles whose bounding boxes may overlap the box `lo`..`hi` (m), ascending:
    /// those in the grid cells it touches (every live triangle when it touches too many).
    pub fn triangles_near(&self, lo: DVec3, hi: DVec3) -> Vec<u32> {
        self.grid
            .near(lo, hi)
            .unwrap_or_else(|| self.live_triangles().collect())
    }

    /// The box holding every vertex (m): smallest and largest corner.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.positions
            .iter()
            .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            })
    }

    /// Number of live triangles.
    pub fn triangle_count(&self) -> usize {
        self.alive.iter().filter(|a| **a).count()
    }

    /// The corners of triangle `t` (m).
    pub fn corners(&self, t: u32) -> [DVec3; 3] {
        self.triangles[t as usize].map(|v| self.positions[v as usize])
    }

    /// The live triangles incident to vertex `v`.
    pub fn incident(&self, v: u32) -> &[u32] {
        self.incidence.get(v as usize).map_or(&[], |fan| fan.as_slice())
    }

    /// Whether vertex `v` is still part of the surface.
    pub fn vertex_in_use(&self, v: u32) -> bool {
        !self.incident(v).is_empty()
    }

    /// Whether vertex `v` is a crack node (on some crack line).
    pub fn is_crack_node(&self, v: u32) -> bool {
        self.on_line.get(v as usize) == Some(&true)
    }

    /// Whether crack node `v` still moves into the material.
    pub fn is_active(&self, v: u32) -> bool {
        self.active.get(v as usize) == Some(&true)
    }

    /// Marks crack node `v` active or inactive.
    pub fn set_active(&mut self, v: u32, active: bool) {
        self.active[v as usize] = active && self.on_line[v as usize];
    }

    /// The crack lines.
    pub fn lines(&self) -> &[CrackLine] {
        &self.lines
    }

    /// Adds a crack line and marks its nodes as crack nodes.
    pub fn add_line(&mut self, line: CrackLine) {
        for &v in &line.nodes {
            self.on_line[v as usize] = true;
        }
        self.lines.push(line);
        self.growth.push((0.0, 0));
    }

    /// The live triangles on the edge `a b` (two on a closed manifold).
    pub fn edge_triangles(&self, a: u32, b: u32) -> SmallVec<[u32; 2]> {
        self.incident(a)
            .iter()
            .copied()
            .filter(|&t| self.triangles[t as usize].contains(&b))
            .collect()
    }

    /// The live triangle that traverses the directed edge `a -> b`, if any.
    pub fn directed_edge_triangle(&self, a: u32, b: u32) -> Option<u32> {
        self.incident(a).iter().copied().find(|&t| {
            let tri = self.triangles[t as usize];
            (0..3).any(|k| tri[k] == a && tri[(k + 1) % 3] == b)
        })
    }

    /// The neighbours of `v` in counter-clockwise order seen from outside (its link), when the
    /// triangles around `v` form one closed fan; `None` when `v` is pinched or on a hole.
    pub fn ring(&self, v: u32) -> Option<SmallVec<[u32; 8]>> {
        let fan = self.incident(v);
        let first = *fan.first()?;
        let mut ring = SmallVec::new();
        let mut t = first;
        for _ in 0..fan.len() {
            let [a, b] = self.others_ccw(t, v);
            ring.push(a);
            // t traverses b -> v; the next triangle around v traverses v -> b.
            let next = self.directed_edge_triangle(v, b)?;
            t = next;
            if t == first {
                return (ring.len() == fan.len()).then_some(ring);
            }
        }
        None
    }

    /// The two other corners of triangle `t` after `v`, in the triangle's winding order.
    pub fn others_ccw(&self, t: u32, v: u32) -> [u32; 2] {
        let tri = self.triangles[t as usize];
        let k = tri.iter().position(|&x| x == v).unwrap_or(0);
        [tri[(k + 1) % 3], tri[(k + 2) % 3]]
    }

    /// Unit normal of triangle `t` (outward), or zero for a degenerate triangle.
    pub fn triangle_normal(&self, t: u32) -> DVec3 {
        let [a, b, c] = self.corners(t);
        (b - a).cross(c - a).normalize_or_zero()
    }

    /// Outward unit normal at `v`: the angle-weighted mean of its triangles' normals.
    pub fn vertex_normal(&self, v: u32) -> DVec3 {
        self.normal_over(v, |_| true)
    }

    /// Outward unit normal at `v` from its triangles on the body's surface, crack walls left out
    /// (all its triangles when it has no other): the normal of the surface a crack cuts into.
    pub fn surface_normal(&self, v: u32) -> DVec3 {
        let n = self.normal_over(v, |t| !self.is_wall(t));
        if n == DVec3::ZERO { self.vertex_normal(v) } else { n }
    }

    /// The angle-weighted mean of the normals of `v`'s triangles that `keep` accepts, normalised
    /// (zero when none is kept).
    fn normal_over(&self, v: u32, keep: impl Fn(u32) -> bool) -> DVec3 {
        let x = self.positions[v as usize];
        let mut n = DVec3::ZERO;
        for &t in self.incident(v).iter().filter(|&&t| keep(t)) {
            let [a, b] = self.others_ccw(t, v).map(|i| self.positions[i as usize]);
            let angle = (a - x).angle_between(b - x);
            n += self.triangle_normal(t) * if angle.is_finite() { angle } else { 0.0 };
        }
        n.normalize_or_zero()
    }

    /// Appends a vertex with the given position and returns its index.
    pub fn add_vertex(&mut self, x: DVec3) -> u32 {
        self.positions.push(x);
        self.incidence.push(Incidence::new());
        self.active.push(false);
        self.on_line.push(false);
        self.stalls.push(0);
        (self.positions.len() - 1) as u32
    }

    /// Whether triangle slot `t` is part of a crack wall (created by opening or growing a
    /// crack) rather than of the body's original surface.
    pub fn is_wall(&self, t: u32) -> bool {
        self.wall[t as usize] != u32::MAX
    }

    /// The crack line whose wall triangle slot `t` is, if it is one.
    pub fn wall_of(&self, t: u32) -> Option<usize> {
        (self.wall[t as usize] != u32::MAX).then_some(self.wall[t as usize] as usize)
    }

    /// The crack walls' triangles (corners counter-clockwise seen from outside the body, m):
    /// both faces of every crack, as the surface has them.
    pub fn wall_triangles(&self) -> Vec<[DVec3; 3]> {
        self.live_triangles()
            .filter(|&t| self.is_wall(t))
            .map(|t| self.corners(t))
            .collect()
    }

    /// Half the area of the crack walls (m^2): the area of the crack surface, each crack having
    /// two walls.
    pub fn crack_area(&self) -> f64 {
        self.live_triangles()
            .filter(|&t| self.is_wall(t))
            .map(|t| {
                let [a, b, c] = self.corners(t);
                0.25 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// Appends a live triangle of the body's surface (`wall` `None`) or of the wall of crack
    /// line `wall`, and returns its index.
    pub fn add_triangle_on(&mut self, t: [u32; 3], wall: Option<usize>) -> u32 {
        let index = self.add_triangle(t);
        self.wall[index as usize] = wall.map_or(u32::MAX, |l| l as u32);
        index
    }

    /// Appends a live triangle (not a wall) and returns its index.
    pub fn add_triangle(&mut self, t: [u32; 3]) -> u32 {
        let index = self.triangles.len() as u32;
        self.triangles.push(t);
        self.alive.push(true);
        self.wall.push(u32::MAX);
        for v in t {
            self.incidence[v as usize].push(index);
        }
        self.grid.insert(index, self.corners(index));
        index
    }

    /// Removes triangle `t` from the surface.
    pub fn remove_triangle(&mut self, t: u32) {
        if !std::mem::replace(&mut self.alive[t as usize], false) {
            return;
        }
        for v in self.triangles[t as usize] {
            self.incidence[v as usize].retain(|x| *x != t);
        }
        self.grid.remove(t);
    }

    /// Replaces the corners of live triangle `t`.
    pub fn replace_triangle(&mut self, t: u32, corners: [u32; 3]) {
        self.remove_triangle(t);
        self.triangles[t as usize] = corners;
        self.alive[t as usize] = true;
        for v in corners {
            self.incidence[v as usize].push(t);
        }
        self.grid.insert(t, self.corners(t));
    }

    /// Mutable access to the crack lines, for operations that insert or remove nodes.
    pub(crate) fn lines_mut(&mut self) -> &mut Vec<CrackLine> {
        &mut self.lines
    }

    /// Counts one more refused front move of vertex `v` in a row and returns the count.
    pub(crate) fn stall(&mut self, v: u32) -> u8 {
        let count = &mut self.stalls[v as usize];
        *count = count.saturating_add(1);
        *count
    }

    /// Records line `l`'s wall area `area` (m^2) after a sub-step and returns how many sub-steps
    /// in a row it has not grown by more than `least` (m^2) past the largest area it has had
    /// (remeshing changes the area a little either way without the crack growing).
    pub(crate) fn note_growth(&mut self, l: usize, area: f64, least: f64) -> u8 {
        let (best, count) = &mut self.growth[l];
        if area > *best + least {
            (*best, *count) = (area, 0);
        } else {
            *count = count.saturating_add(1);
        }
        *count
    }

    /// Starts line `l`'s growth record afresh from its present wall area: after its walls were
    /// shared with a line split off it, its old largest area no longer says whether it grows.
    pub(crate) fn restart_growth(&mut self, l: usize) {
        self.growth[l] = (self.wall_area(l), 0);
    }

    /// The area of line `l`'s walls (m^2, both faces).
    pub fn wall_area(&self, l: usize) -> f64 {
        self.live_triangles()
            .filter(|&t| self.wall_of(t) == Some(l))
            .map(|t| {
                let [a, b, c] = self.corners(t);
                0.5 * (b - a).cross(c - a).length()
            })
            .sum()
    }

    /// Forgets vertex `v`'s refused moves (it moved).
    pub(crate) fn unstall(&mut self, v: u32) {
        self.stalls[v as usize] = 0;
    }

    /// Puts live triangle `t` on the wall of crack line `wall`, or on the body's surface.
    pub(crate) fn set_wall(&mut self, t: u32, wall: Option<usize>) {
        self.wall[t as usize] = wall.map_or(u32::MAX, |l| l as u32);
    }

    /// Records that the run of front nodes from `first` to `last` could not break out.
    pub(crate) fn refuse_run(&mut self, first: u32, last: u32) {
        self.refused_runs.insert((first, last));
    }

    /// Whether the run of front nodes from `first` to `last` was refused a break-out before.
    pub(crate) fn run_refused(&self, first: u32, last: u32) -> bool {
        self.refused_runs.contains(&(first, last))
    }

    /// Marks or unmarks `v` as a crack node.
    pub(crate) fn set_crack_node(&mut self, v: u32, on_line: bool) {
        self.on_line[v as usize] = on_line;
        if !on_line {
            self.active[v as usize] = false;
        }
    }

    /// Enclosed volume (m^3) by the divergence theorem over the live triangles.
    pub fn volume(&self) -> f64 {
        self.live_triangles()
            .map(|t| {
                let [a, b, c] = self.corners(t);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }

    /// The live surface as a compact triangle mesh, and for each of its vertices the index it
    /// has here.
    pub fn to_trimesh(&self) -> Result<(TriMesh, Vec<u32>), FractureError> {
        let mut new_index = vec![u32::MAX; self.positions.len()];
        let mut old_index = Vec::new();
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        for t in self.live_triangles() {
            let tri = self.triangles[t as usize].map(|v| {
                if new_index[v as usize] == u32::MAX {
                    new_index[v as usize] = vertices.len() as u32;
                    vertices.push(self.positions[v as usize]);
                    old_index.push(v);
                }
                new_index[v as usize]
            });
            triangles.push(tri);
        }
        Ok((TriMesh::try_new(vertices, triangles)?, old_index))
    }
}

/// Mean edge length of `mesh` (m), each triangle's three edges counted: the grid's cell.
pub(crate) fn mean_edge(mesh: &TriMesh) -> f64 {
    let v = mesh.vertices();
    let (sum, count) = mesh.triangles().iter().fold((0.0, 0usize), |(sum, count), t| {
        let [a, b, c] = t.map(|i| v[i as usize]);
        (sum + a.distance(b) + b.distance(c) + c.distance(a), count + 3)
    });
    sum / count.max(1) as f64
}
