//! A crack seen in its own plane: the region it has cut, as a polygon in 2D coordinates of the
//! crack plane, bounded by the front (from one end of the line to the other) and by the mouth
//! on the surface (back from the last end to the first).
//!
//! Fronts advance out of this region. Which side of the front is "ahead" is read from the
//! polygon's orientation, one answer for the whole line, not from each node's triangles: where
//! the crack surface curves or the front folds, the walls' normals around a node can point
//! anywhere, and nodes that disagree about which way is ahead tangle the front (the marker
//! instability the `propagate` docs measure). A move whose target falls inside the region would
//! take a node back over crack it has already cut, and is refused.

use glam::{DVec2, DVec3};
use hashbrown::HashMap;

use super::mesh::CrackMesh;

/// The cut region of one open crack line, in its plane.
#[derive(Clone, Debug)]
pub struct CutRegion {
    origin: DVec3,
    u: DVec3,
    v: DVec3,
    polygon: Vec<DVec2>,
    /// The polygon's first `front` points are the line's nodes, end to end; the rest the mouth.
    front: usize,
    /// +1 when the polygon runs counter-clockwise in `(u, v)`, -1 otherwise.
    orientation: f64,
}

impl CutRegion {
    /// The region of open line `line`, or `None` when it has no simple outline: a closed or
    /// cut-through line, or a mouth that does not run as one loop through both ends.
    pub fn of_line(mesh: &CrackMesh, line: usize) -> Option<Self> {
        let crack = mesh.lines().get(line)?;
        if crack.closed || crack.through || crack.nodes.len() < 3 {
            return None;
        }
        let (a, b) = (crack.nodes[0], crack.nodes[crack.nodes.len() - 1]);
        // The mouth: edges of the line's walls whose other triangle is not one of its walls, in
        // the walls' own direction.
        let mut next: HashMap<u32, u32> = HashMap::new();
        let slots = mesh.triangle_slots();
        for t in mesh.live_triangles().filter(|&t| mesh.wall_of(t) == Some(line)) {
            let tri = slots[t as usize];
            for k in 0..3 {
                let (x, y) = (tri[k], tri[(k + 1) % 3]);
                let outer = mesh
                    .edge_triangles(x, y)
                    .iter()
                    .all(|&o| o == t || mesh.wall_of(o) != Some(line));
                if outer && next.insert(x, y).is_some() {
                    return None;
                }
            }
        }
        // Follow the loop from a; past b it runs back to a along the other lip.
        let mut mouth = Vec::new();
        let mut passed_b = false;
        let mut x = a;
        for _ in 0..=next.len() {
            x = *next.get(&x)?;
            if x == a {
                break;
            }
            if passed_b {
                mouth.push(x);
            }
            passed_b |= x == b;
        }
        if x != a || !passed_b {
            return None;
        }
        let e = crack.plane_normal;
        let u = e.any_orthonormal_vector();
        let v = e.cross(u);
        let origin = mesh.positions()[a as usize];
        let project = |p: DVec3| DVec2::new((p - origin).dot(u), (p - origin).dot(v));
        let polygon: Vec<DVec2> = crack
            .nodes
            .iter()
            .chain(&mouth)
            .map(|&w| project(mesh.positions()[w as usize]))
            .collect();
        let twice_area: f64 = (0..polygon.len())
            .map(|i| polygon[i].perp_dot(polygon[(i + 1) % polygon.len()]))
            .sum();
        Some(Self {
            origin,
            u,
            v,
            polygon,
            front: crack.nodes.len(),
            orientation: if twice_area >= 0.0 { 1.0 } else { -1.0 },
        })
    }

    /// `x` in the plane's coordinates (m).
    pub fn project(&self, x: DVec3) -> DVec2 {
        DVec2::new((x - self.origin).dot(self.u), (x - self.origin).dot(self.v))
    }

    /// The unit direction, in the crack plane, out of the region across the front's chord from
    /// `p` to `q` (two front points in line order).
    pub fn ahead(&self, p: DVec3, q: DVec3) -> DVec3 {
        let d = self.project(q) - self.project(p);
        let out = DVec2::new(d.y, -d.x) * self.orientation;
        (self.u * out.x + self.v * out.y).normalize_or_zero()
    }

    /// How far (m) the region reaches behind front point `x` against the in-plane direction
    /// `ahead`: the distance from `x` back along `-ahead` (both projected on the plane) to the
    /// nearest crossing of the mouth, the part of the outline on the body's surface. `None` when
    /// the ray back meets no part of the mouth (a front folded back over itself, or a
    /// degenerate outline).
    pub fn depth_behind(&self, x: DVec3, ahead: DVec3) -> Option<f64> {
        let p = self.project(x);
        let d = -DVec2::new(ahead.dot(self.u), ahead.dot(self.v)).normalize_or_zero();
        if d == DVec2::ZERO {
            return None;
        }
        let n = self.polygon.len();
        // The mouth's edges: from the last node round the mouth back to the first node.
        (self.front - 1..n)
            .filter_map(|i| {
                let (a, b) = (self.polygon[i], self.polygon[(i + 1) % n]);
                let e = b - a;
                let denominator = d.perp_dot(e);
                if denominator.abs() <= 1e-12 * e.length() {
                    return None;
                }
                // p + t d = a + s e.
                let t = (a - p).perp_dot(e) / denominator;
                let s = (a - p).perp_dot(d) / denominator;
                (t > 0.0 && (0.0..=1.0).contains(&s)).then_some(t)
            })
            .min_by(f64::total_cmp)
    }

    /// Whether `x`, projected on the plane, lies inside the region (non-zero winding number).
    pub fn contains(&self, x: DVec3) -> bool {
        let p = self.project(x);
        let n = self.polygon.len();
        let mut winding = 0i32;
        for i in 0..n {
            let (a, b) = (self.polygon[i], self.polygon[(i + 1) % n]);
            let side = (b - a).perp_dot(p - a);
            if a.y <= p.y {
                if b.y > p.y && side > 0.0 {
                    winding += 1;
                }
            } else if b.y <= p.y && side < 0.0 {
                winding -= 1;
            }
        }
        winding != 0
    }
}
