//! The working surface of a simplification: triangles with the triangles round every vertex,
//! and the three local edits, an edge collapse, an edge flip and a vertex's tangential move,
//! each checked before it is made.
//!
//! Every check is local. A collapse of edge `a b` into a point `p` keeps the mesh a closed
//! 2-manifold when the link condition holds (the vertices next to both `a` and `b` are exactly
//! the two opposite the edge) and neither opposite vertex is left with two triangles; it keeps
//! the shape when `p` lies within the deviation bound of every plane round the edge, no
//! triangle's normal turns more than the bound, no new edge is longer than the band allows and
//! no new triangle has an angle below the bound (unless one it replaces was already worse); an
//! edge a millionth of the longest edge long moves nothing and skips the shape checks. Flips
//! and moves keep to nearly flat places and must raise the smallest angle. And no edit makes a triangle meet another beyond what they share: the triangles near the
//! edit are found in a hash grid of bounding boxes kept up to date, and tested with the exact
//! predicates (a fold within a fan at a ridge, or one sheet of a thin part pushed into the
//! other, would pass every other check).

use glam::DVec3;
use smallvec::SmallVec;

use super::cells::TriangleCells;
use super::quadric::Quadric;
use crate::aabb::Aabb;
use crate::triangle_intersection::mesh_triangles_intersect;
use crate::trimesh::TriMesh;

/// Triangles round one vertex.
type Fan = SmallVec<[u32; 10]>;

/// Smallest angle (radians) of triangle `a b c`; zero for a degenerate one.
pub(super) fn smallest_angle([a, b, c]: [DVec3; 3]) -> f64 {
    let angle = |p: DVec3, q: DVec3, r: DVec3| {
        let (u, v) = (q - p, r - p);
        u.cross(v).length().atan2(u.dot(v))
    };
    angle(a, b, c).min(angle(b, c, a)).min(angle(c, a, b))
}

/// Smallest angle (radians, about one degree) of a triangle whose normal is trusted.
const RELIABLE_NORMAL_ANGLE: f64 = 0.0175;

/// The limits every edit keeps (see [`super::Simplification`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Longest edge a collapse may make (m).
    pub longest: f64,
    /// Farthest a collapse may move the surface (m).
    pub deviation: f64,
    /// Smallest angle (radians) an edit may make.
    pub angle: f64,
    /// Cosine of the largest normal turn in a collapse.
    pub turn_cos: f64,
    /// Cosine of the largest dihedral angle across a flipped edge.
    pub flat_cos: f64,
}

/// A closed triangle mesh being simplified.
pub(super) struct Surface {
    /// Vertex positions (m); a collapsed vertex keeps its last one, unused.
    pub positions: Vec<DVec3>,
    /// Triangles by slot, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// Whether each slot still holds a triangle.
    pub alive: Vec<bool>,
    /// Live triangles round each vertex.
    pub fans: Vec<Fan>,
    /// Each vertex's planes: those of the original triangles merged into it.
    pub quadrics: Vec<Quadric>,
    /// The live triangles by place.
    cells: TriangleCells,
}

impl Surface {
    /// The surface of `mesh`, its triangles filed in cells `cell` (m) across.
    pub(super) fn new(mesh: &TriMesh, cell: f64) -> Self {
        let positions = mesh.vertices().to_vec();
        let triangles = mesh.triangles().to_vec();
        let mut fans = vec![Fan::new(); positions.len()];
        let mut quadrics = vec![Quadric::default(); positions.len()];
        for (t, tri) in triangles.iter().enumerate() {
            let [a, b, c] = tri.map(|v| positions[v as usize]);
            let cross = (b - a).cross(c - a);
            let area = 0.5 * cross.length();
            let plane = Quadric::plane(cross.normalize_or_zero(), a, area);
            for &v in tri {
                fans[v as usize].push(t as u32);
                quadrics[v as usize] = quadrics[v as usize].merged(&plane);
            }
        }
        let mut cells = TriangleCells::new(cell, triangles.len());
        for (t, tri) in triangles.iter().enumerate() {
            cells.file(t as u32, tri.map(|v| positions[v as usize]));
        }
        Self {
            positions,
            alive: vec![true; triangles.len()],
            triangles,
            fans,
            quadrics,
            cells,
        }
    }

    /// Whether the edit that gives the triangles of `changed` (slot, new vertices) their new
    /// vertices, moves vertex `moved` (if any) and removes the triangles `gone` would make a
    /// changed triangle meet another beyond what they share.
    fn edit_meets(&mut self, changed: &[(u32, [u32; 3])], gone: &[u32], moved: Option<(u32, DVec3)>) -> bool {
        let saved = moved.map(|(v, p)| (v, std::mem::replace(&mut self.positions[v as usize], p)));
        let vertices_of = |u: u32| {
            changed
                .iter()
                .find(|(t, _)| *t == u)
                .map_or(self.triangles[u as usize], |(_, tri)| *tri)
        };
        let meets = changed.iter().any(|&(t, tri)| {
            let bounds = Aabb::from_points(tri.map(|v| self.positions[v as usize]));
            self.cells.any_near(&bounds, |u| {
                let other = vertices_of(u);
                u != t
                    && self.alive[u as usize]
                    && !gone.contains(&u)
                    && bounds.overlaps(&Aabb::from_points(other.map(|v| self.positions[v as usize])))
                    && mesh_triangles_intersect(&self.positions, tri, other)
            })
        });
        if let Some((v, p)) = saved {
            self.positions[v as usize] = p;
        }
        meets
    }

    /// Files the triangles `changed` again after an edit.
    fn refile(&mut self, changed: &[u32]) {
        for &t in changed {
            let corners = self.corners(t);
            self.cells.file(t, corners);
        }
    }

    pub(super) fn corners(&self, t: u32) -> [DVec3; 3] {
        self.triangles[t as usize].map(|v| self.positions[v as usize])
    }

    /// The vertices next to `v`, in fan order.
    fn neighbours(&self, v: u32) -> SmallVec<[u32; 12]> {
        let mut out = SmallVec::new();
        for &t in &self.fans[v as usize] {
            for w in self.triangles[t as usize] {
                if w != v && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        out
    }

    /// The triangles that hold edge `a b`.
    fn edge_triangles(&self, a: u32, b: u32) -> SmallVec<[u32; 2]> {
        self.fans[a as usize]
            .iter()
            .copied()
            .filter(|&t| self.triangles[t as usize].contains(&b))
            .collect()
    }

    /// The point edge `a b` collapses to: the minimiser of both vertices' planes when it pins
    /// a corner down near the edge, else whichever of the midpoint and the two ends lies
    /// nearest the planes (the midpoint first, so a flat region keeps its spacing even), with
    /// its mean squared distance (m^2).
    pub(super) fn collapse_point(&self, a: u32, b: u32) -> (DVec3, f64) {
        let (pa, pb) = (self.positions[a as usize], self.positions[b as usize]);
        let q = self.quadrics[a as usize].merged(&self.quadrics[b as usize]);
        let mid = 0.5 * (pa + pb);
        let mut best = (mid, q.mean_squared_distance(mid));
        let corner = q
            .minimiser()
            .filter(|p| (*p - mid).length() <= 0.5 * (pb - pa).length());
        for p in [pa, pb].into_iter().chain(corner) {
            let error = q.mean_squared_distance(p);
            if error < best.1 {
                best = (p, error);
            }
        }
        best
    }

    /// Collapses edge `a b` into `b`, moved to `p`, when every check of the module docs holds;
    /// `false` (nothing changed) otherwise.
    pub(super) fn try_collapse(&mut self, a: u32, b: u32, p: DVec3, error: f64, limits: &Limits) -> bool {
        if error > limits.deviation * limits.deviation {
            return false;
        }
        let shared = self.edge_triangles(a, b);
        if shared.len() != 2 {
            return false;
        }
        let opposite: SmallVec<[u32; 2]> = shared
            .iter()
            .map(|&t| {
                self.triangles[t as usize]
                    .into_iter()
                    .find(|&v| v != a && v != b)
                    .unwrap_or(a)
            })
            .collect();
        if opposite[0] == opposite[1] || opposite.iter().any(|&o| self.fans[o as usize].len() <= 3) {
            return false;
        }
        let near_b = self.neighbours(b);
        let common = self.neighbours(a).into_iter().filter(|v| near_b.contains(v)).count();
        if common != 2 {
            return false;
        }
        // An edge a millionth of the target long (two crossings a contour clamped onto one
        // sample) moves nothing when it goes: its fan's normals and angles are noise.
        let negligible = (self.positions[a as usize] - self.positions[b as usize]).length() < 1e-6 * limits.longest;
        let fan: SmallVec<[u32; 20]> = self.fans[a as usize]
            .iter()
            .chain(&self.fans[b as usize])
            .copied()
            .filter(|t| !shared.contains(t))
            .collect();
        let worst_before = self.fans[a as usize]
            .iter()
            .chain(&self.fans[b as usize])
            .map(|&t| smallest_angle(self.corners(t)))
            .fold(f64::INFINITY, f64::min);
        let angle = limits.angle.min(worst_before);
        // A sliver's own normal is noise: its turn is measured against the fan's mean normal.
        let mean_normal = self.fans[a as usize]
            .iter()
            .chain(&self.fans[b as usize])
            .map(|&t| {
                let [x, y, z] = self.corners(t);
                (y - x).cross(z - x)
            })
            .sum::<DVec3>();
        for &t in self.fans[a as usize].iter().chain(&self.fans[b as usize]) {
            let [x, y, z] = self.corners(t);
            let normal = (y - x).cross(z - x).normalize_or_zero();
            if normal.dot(p - x).abs() > limits.deviation {
                return false;
            }
        }
        for &t in fan.iter().filter(|_| !negligible) {
            let old = self.corners(t);
            let new = self.triangles[t as usize].map(|v| {
                if v == a || v == b {
                    p
                } else {
                    self.positions[v as usize]
                }
            });
            let n0 = if smallest_angle(old) >= RELIABLE_NORMAL_ANGLE {
                (old[1] - old[0]).cross(old[2] - old[0])
            } else {
                mean_normal
            };
            let n1 = (new[1] - new[0]).cross(new[2] - new[0]);
            if n1.dot(n0) <= limits.turn_cos * n1.length() * n0.length() || smallest_angle(new) < angle {
                return false;
            }
            if new.iter().any(|&q| q != p && (q - p).length() > limits.longest) {
                return false;
            }
        }
        let changed: SmallVec<[(u32, [u32; 3]); 20]> = fan
            .iter()
            .map(|&t| (t, self.triangles[t as usize].map(|v| if v == a { b } else { v })))
            .collect();
        if self.edit_meets(&changed, &shared, Some((b, p))) {
            return false;
        }
        for &t in &shared {
            self.cells.remove(t);
            self.alive[t as usize] = false;
            for v in self.triangles[t as usize] {
                self.fans[v as usize].retain(|u| *u != t);
            }
        }
        let moved = std::mem::take(&mut self.fans[a as usize]);
        for &t in &moved {
            for v in &mut self.triangles[t as usize] {
                if *v == a {
                    *v = b;
                }
            }
            self.fans[b as usize].push(t);
        }
        self.positions[b as usize] = p;
        self.quadrics[b as usize] = self.quadrics[b as usize].merged(&self.quadrics[a as usize]);
        let refiled = self.fans[b as usize].clone();
        self.refile(&refiled);
        true
    }

    /// Flips the edge `a -> b` of live triangle `t` when the two triangles on it are nearly
    /// coplanar, the other diagonal is not an edge already, both ends keep at least three
    /// triangles, and the flip raises the pair's smallest angle (towards the Delaunay
    /// triangulation). `true` when flipped.
    pub(super) fn try_flip(&mut self, t: u32, a: u32, b: u32, limits: &Limits) -> bool {
        let shared = self.edge_triangles(a, b);
        let Some(&u) = shared.iter().find(|&&u| u != t) else {
            return false;
        };
        if shared.len() != 2 || self.fans[a as usize].len() <= 3 || self.fans[b as usize].len() <= 3 {
            return false;
        }
        let third = |tri: [u32; 3]| tri.into_iter().find(|&v| v != a && v != b);
        let (Some(c), Some(d)) = (third(self.triangles[t as usize]), third(self.triangles[u as usize])) else {
            return false;
        };
        if c == d || self.neighbours(c).contains(&d) {
            return false;
        }
        let pos = |v: u32| self.positions[v as usize];
        let (n_t, n_u) = (self.normal(t), self.normal(u));
        if n_t.dot(n_u) < limits.flat_cos {
            return false;
        }
        // t = (a, b, c) and u = (b, a, d) in winding order; the flip makes (c, a, d), (d, b, c).
        let first = [c, a, d];
        let second = [d, b, c];
        let before = smallest_angle(self.corners(t)).min(smallest_angle(self.corners(u)));
        let after = smallest_angle(first.map(pos)).min(smallest_angle(second.map(pos)));
        if after <= before * (1.0 + 1e-9) {
            return false;
        }
        let mean = (n_t + n_u).normalize_or_zero();
        for tri in [first, second] {
            let [x, y, z] = tri.map(pos);
            let n = (y - x).cross(z - x).normalize_or_zero();
            if n.dot(mean) < limits.flat_cos {
                return false;
            }
        }
        // The old diagonal lies within the deviation bound of the new triangles' planes.
        let [x, y, z] = first.map(pos);
        let n = (y - x).cross(z - x).normalize_or_zero();
        if n.dot(0.5 * (pos(a) + pos(b)) - x).abs() > limits.deviation {
            return false;
        }
        if self.edit_meets(&[(t, first), (u, second)], &[], None) {
            return false;
        }
        self.triangles[t as usize] = first;
        self.triangles[u as usize] = second;
        self.refile(&[t, u]);
        self.fans[b as usize].retain(|w| *w != t);
        self.fans[a as usize].retain(|w| *w != u);
        self.fans[d as usize].push(t);
        self.fans[c as usize].push(u);
        true
    }

    /// Moves vertex `v` towards the centre of its neighbours within its tangent plane (the
    /// tangential relaxation of isotropic remeshing) where its fan is nearly flat, when the move
    /// keeps it within the deviation bound of its planes and raises the fan's smallest angle.
    /// `true` when moved.
    pub(super) fn try_relax(&mut self, v: u32, limits: &Limits) -> bool {
        let fan = &self.fans[v as usize];
        let normals: SmallVec<[DVec3; 10]> = fan.iter().map(|&t| self.normal(t)).collect();
        let mean = normals.iter().sum::<DVec3>().normalize_or_zero();
        if mean == DVec3::ZERO || normals.iter().any(|n| n.dot(mean) < limits.flat_cos) {
            return false;
        }
        let near = self.neighbours(v);
        let here = self.positions[v as usize];
        let centre = near.iter().map(|&w| self.positions[w as usize]).sum::<DVec3>() / near.len() as f64;
        let shift = centre - here;
        let p = here + 0.5 * (shift - mean * mean.dot(shift));
        if self.quadrics[v as usize].mean_squared_distance(p) > limits.deviation * limits.deviation {
            return false;
        }
        let before = fan
            .iter()
            .map(|&t| smallest_angle(self.corners(t)))
            .fold(f64::INFINITY, f64::min);
        let mut after = f64::INFINITY;
        for (&t, n) in fan.iter().zip(&normals) {
            let new = self.triangles[t as usize].map(|w| if w == v { p } else { self.positions[w as usize] });
            let moved = (new[1] - new[0]).cross(new[2] - new[0]).normalize_or_zero();
            if moved.dot(*n) < limits.flat_cos || n.dot(p - new[0]).abs() > limits.deviation {
                return false;
            }
            after = after.min(smallest_angle(new));
        }
        if after <= before * (1.0 + 1e-9) {
            return false;
        }
        let changed: SmallVec<[(u32, [u32; 3]); 10]> = fan.iter().map(|&t| (t, self.triangles[t as usize])).collect();
        if self.edit_meets(&changed, &[], Some((v, p))) {
            return false;
        }
        self.positions[v as usize] = p;
        let refiled = self.fans[v as usize].clone();
        self.refile(&refiled);
        true
    }

    fn normal(&self, t: u32) -> DVec3 {
        let [x, y, z] = self.corners(t);
        (y - x).cross(z - x).normalize_or_zero()
    }

    /// The live triangles over the vertices they use, renumbered in order of first use.
    pub(super) fn to_mesh(&self) -> (Vec<DVec3>, Vec<[u32; 3]>) {
        let mut index = vec![u32::MAX; self.positions.len()];
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        for (tri, _) in self.triangles.iter().zip(&self.alive).filter(|(_, alive)| **alive) {
            triangles.push(tri.map(|v| {
                if index[v as usize] == u32::MAX {
                    index[v as usize] = positions.len() as u32;
                    positions.push(self.positions[v as usize]);
                }
                index[v as usize]
            }));
        }
        (positions, triangles)
    }
}
