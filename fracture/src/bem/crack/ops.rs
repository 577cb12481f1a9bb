//! The three local remeshing operations, edge split, edge collapse and edge flip, with the
//! crack-node rules of Zhu 2015 section 6.4:
//!
//! - split: the new vertex is a crack node only when both ends are crack nodes *and* the edge is
//!   a segment of a crack line (the paper says "both ends"; requiring the line segment keeps an
//!   edge that merely joins two crack nodes across a wall from inventing a node on no line). It
//!   is active when either end is;
//! - collapse: two non-crack nodes merge into a non-crack node; a crack node and a non-crack node
//!   merge into the crack node, which keeps its place; two crack nodes merge only along their
//!   line and never into an end of it (which would pull the front back to the surface); and no
//!   collapse may leave a triangle of three crack nodes, which would close the slot's wall;
//! - flip: allowed only when at least one end of the old edge and one end of the new edge are
//!   non-crack nodes, so a crack line is never flipped away or drawn by a flip.
//!
//! Only changes that keep the shape are made: splits anywhere, collapses, flips and smoothing
//! only where the triangles involved are coplanar. A curved surface re-triangulated would lose
//! or gain volume that no crack explains, and a bent crack wall moved alone would change the
//! slot's width. The one allowance: a collapse of a vertex inside a crack wall may move the wall
//! by [`RemeshSettings::wall_tolerance`] (a fraction of the thickness), since a curved crack's
//! walls are never flat and their slivers must still go.
//!
//! Every operation is proposed first and committed only if [`super::check::acceptable`] passes.
//! Features are protected too: a vertex on a ridge (two sharp edges, [`Feature::Ridge`]) only
//! moves along it, a corner never moves, and a sharp edge is never flipped.

use glam::DVec3;
use smallvec::SmallVec;

use super::check::{MAX_NORMAL_TURN_COS, Turn, acceptable};
use super::improve::RemeshSettings;
use super::mesh::CrackMesh;
use super::validate::AngleBounds;

/// What a vertex is to the surface's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// No sharp edge meets it: free to slide in its tangent plane.
    Smooth,
    /// Exactly two sharp edges meet it: it may slide along them.
    Ridge,
    /// One or three or more sharp edges meet it: it stays where it is.
    Corner,
}

/// How a vertex may move without changing the surface's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Slide {
    /// Within the plane of its flat fan, of this unit normal.
    Plane(DVec3),
    /// Along the straight ridge between two flat sides it lies on, of this unit direction.
    Line(DVec3),
    /// Not at all: a corner, a curved stretch, or a bent ridge.
    Fixed,
}

/// How vertex `v` may slide (see [`Slide`]), with edges sharper than `feature_degrees` as
/// features.
pub fn slide(mesh: &CrackMesh, v: u32, feature_degrees: f64) -> Slide {
    let x = mesh.positions()[v as usize];
    match feature(mesh, v, feature_degrees) {
        Feature::Smooth if is_free(mesh, v) => Slide::Plane(mesh.vertex_normal(v)),
        Feature::Ridge => {
            let s = sharp_neighbours(mesh, v, feature_degrees, false);
            let (p, q) = (mesh.positions()[s[0] as usize], mesh.positions()[s[1] as usize]);
            let straight = (p - x).normalize_or_zero().dot((q - x).normalize_or_zero()) <= -1.0 + 1e-12;
            if straight && in_planes(mesh, v, 2) {
                Slide::Line((q - p).normalize_or_zero())
            } else {
                Slide::Fixed
            }
        }
        Feature::Smooth | Feature::Corner => Slide::Fixed,
    }
}

/// Whether the edge `a b` is sharp: the normals of its two triangles differ by more than
/// `feature_degrees`.
pub fn is_sharp(mesh: &CrackMesh, a: u32, b: u32, feature_degrees: f64) -> bool {
    let t = mesh.edge_triangles(a, b);
    if t.len() != 2 {
        return true;
    }
    let cos = mesh.triangle_normal(t[0]).dot(mesh.triangle_normal(t[1]));
    cos < feature_degrees.to_radians().cos()
}

/// The dihedral angle (degrees) above which an edge is sharp unless settings say otherwise.
pub const FEATURE_DEGREES: f64 = 35.0;

/// The sharp-edge neighbours of `v`, ascending. With `surface_only`, only edges between two
/// triangles of the body's surface count (a crack's lips are sharp too, but are not the body's
/// shape).
pub fn sharp_neighbours(mesh: &CrackMesh, v: u32, feature_degrees: f64, surface_only: bool) -> SmallVec<[u32; 4]> {
    let mut out = SmallVec::new();
    for &t in mesh.incident(v) {
        let [a, _] = mesh.others_ccw(t, v);
        let on_surface = || mesh.edge_triangles(v, a).iter().all(|&u| !mesh.is_wall(u));
        if is_sharp(mesh, v, a, feature_degrees) && (!surface_only || on_surface()) {
            out.push(a);
        }
    }
    out.sort_unstable();
    out
}

/// Classifies `v` by the sharp edges meeting at it.
pub fn feature(mesh: &CrackMesh, v: u32, feature_degrees: f64) -> Feature {
    match sharp_neighbours(mesh, v, feature_degrees, false).len() {
        0 => Feature::Smooth,
        2 => Feature::Ridge,
        _ => Feature::Corner,
    }
}

/// Whether `v` may move without changing the body's shape or opening a crack wider: its
/// triangles are coplanar (unit normals equal to 1e-12). A bent crack wall is as fixed as a
/// curved surface: moving a vertex of one wall alone would change the slot's width.
pub fn is_free(mesh: &CrackMesh, v: u32) -> bool {
    in_planes(mesh, v, 1)
}

/// Whether the triangles around `v` lie in at most `planes` planes (unit normals equal to
/// 1e-12).
pub fn in_planes(mesh: &CrackMesh, v: u32, planes: usize) -> bool {
    let mut seen: SmallVec<[DVec3; 2]> = SmallVec::new();
    for &t in mesh.incident(v) {
        let n = mesh.triangle_normal(t);
        if !seen.iter().any(|p| p.dot(n) > 1.0 - 1e-12) {
            if seen.len() == planes {
                return false;
            }
            seen.push(n);
        }
    }
    true
}

/// Whether `a b` is a segment of some crack line: `(line, index in the line of the first of
/// the two)`.
fn line_segment(mesh: &CrackMesh, a: u32, b: u32) -> Option<(usize, usize)> {
    for (l, line) in mesh.lines().iter().enumerate() {
        let n = line.nodes.len();
        let segments = if line.closed { n } else { n.saturating_sub(1) };
        for i in 0..segments {
            let (p, q) = (line.nodes[i], line.nodes[(i + 1) % n]);
            if (p, q) == (a, b) || (p, q) == (b, a) {
                return Some((l, i));
            }
        }
    }
    None
}

/// The vertices opposite edge `a b` in its two triangles: `(c, d)` with triangles `a b c` and
/// `b a d`, or `None` if the edge is not manifold.
fn opposite(mesh: &CrackMesh, a: u32, b: u32) -> Option<(u32, u32, u32, u32)> {
    let t_ab = mesh.directed_edge_triangle(a, b)?;
    let t_ba = mesh.directed_edge_triangle(b, a)?;
    let [_, c] = mesh.others_ccw(t_ab, a);
    let [_, d] = mesh.others_ccw(t_ba, b);
    Some((t_ab, t_ba, c, d))
}

/// Splits edge `a b` at `x` (m). Returns the new vertex, or `None` when the split would
/// break a bound (it is then not made).
pub fn split_edge(mesh: &mut CrackMesh, a: u32, b: u32, x: DVec3, bounds: AngleBounds) -> Option<u32> {
    let (t_ab, t_ba, c, d) = opposite(mesh, a, b)?;
    let (n_ab, n_ba) = (mesh.triangle_normal(t_ab), mesh.triangle_normal(t_ba));
    let turn = Turn {
        normals: vec![n_ab, n_ab, n_ba, n_ba],
        min_cos: MAX_NORMAL_TURN_COS,
    };
    let m = mesh.add_vertex(x);
    let added = [[a, m, c], [m, b, c], [b, m, d], [m, a, d]];
    if !acceptable(mesh, &[t_ab, t_ba], &added, bounds, Some(&turn)) {
        return None;
    }
    let (wall_ab, wall_ba) = (mesh.wall_of(t_ab), mesh.wall_of(t_ba));
    mesh.replace_triangle(t_ab, added[0]);
    mesh.add_triangle_on(added[1], wall_ab);
    mesh.replace_triangle(t_ba, added[2]);
    mesh.add_triangle_on(added[3], wall_ba);
    if let Some((l, i)) = line_segment(mesh, a, b) {
        mesh.lines_mut()[l].nodes.insert(i + 1, m);
        mesh.set_crack_node(m, true);
        let active = mesh.is_active(a) || mesh.is_active(b);
        mesh.set_active(m, active);
    }
    Some(m)
}

/// Collapses edge `a b` into one vertex, choosing which end survives and where by the rules
/// in the module docs. Returns the surviving vertex, or `None` when the collapse is not allowed.
pub fn collapse_edge(mesh: &mut CrackMesh, a: u32, b: u32, settings: &RemeshSettings) -> Option<u32> {
    let (bounds, feature_degrees) = (settings.bounds, settings.feature_degrees);
    let (t_ab, t_ba, c, d) = opposite(mesh, a, b)?;
    // Link condition: a and b share exactly the neighbours c and d, and both keep three.
    let ring_a = mesh.ring(a)?;
    let ring_b = mesh.ring(b)?;
    let shared = ring_a.iter().filter(|v| ring_b.contains(v)).count();
    if shared != 2 || mesh.incident(c).len() <= 3 || mesh.incident(d).len() <= 3 {
        return None;
    }
    let segment = line_segment(mesh, a, b);
    let (crack_a, crack_b) = (mesh.is_crack_node(a), mesh.is_crack_node(b));
    if crack_a && crack_b && segment.is_none() {
        return None;
    }
    let is_end = |v: u32| {
        mesh.lines()
            .iter()
            .any(|l| !l.closed && (l.nodes.first() == Some(&v) || l.nodes.last() == Some(&v)))
    };
    let (fa, fb) = (feature(mesh, a, feature_degrees), feature(mesh, b, feature_degrees));
    let rank = |crack: bool, end: bool, f: Feature| match (crack, end, f) {
        (true, true, _) => 4,
        (true, false, _) => 3,
        (false, _, Feature::Corner) => 2,
        (false, _, Feature::Ridge) => 1,
        (false, _, Feature::Smooth) => 0,
    };
    let (ra, rb) = (rank(crack_a, is_end(a), fa), rank(crack_b, is_end(b), fb));
    if ra == rb && ra >= 2 && !(ra == 3 && segment.is_some()) {
        // Two corners, or two line ends: neither may move.
        return None;
    }
    if segment.is_some() && ra.max(rb) == 4 {
        // Merging a front node into the line's end would pull the front back to the surface.
        return None;
    }
    if ra == 1 && rb == 1 && !is_sharp(mesh, a, b, feature_degrees) {
        // Two ridge vertices not joined along their ridge.
        return None;
    }
    let (keep, gone) = if rb > ra { (b, a) } else { (a, b) };
    // Moving a vertex of the body's curved surface would change its shape and volume: only
    // flat stretches are free. Crack walls may bend by the wall tolerance (checked below). Two
    // front nodes merging along their line are the exception: the slot is thinnest at its
    // front, so the walls barely move.
    let on_wall = !mesh.is_crack_node(gone) && mesh.incident(gone).iter().all(|&t| mesh.is_wall(t));
    let bent = segment.is_none() && !is_free(mesh, gone);
    if bent && !(on_wall && settings.wall_tolerance > 0.0) {
        return None;
    }
    let x = if ra == rb && ra <= 1 && is_free(mesh, keep) {
        (mesh.positions()[a as usize] + mesh.positions()[b as usize]) * 0.5
    } else {
        mesh.positions()[keep as usize]
    };
    // Every triangle around either end except the two on the edge is re-made: those of `gone`
    // with `keep` in its place, those of `keep` at keep's new position.
    let mut removed: Vec<u32> = Vec::new();
    let mut added: Vec<[u32; 3]> = Vec::new();
    for &t in mesh.incident(gone).iter().chain(mesh.incident(keep)) {
        if t != t_ab && t != t_ba && !removed.contains(&t) {
            removed.push(t);
            added.push(mesh.triangle_slots()[t as usize].map(|v| if v == gone { keep } else { v }));
        }
    }
    // Every wall triangle keeps a vertex off the crack lines: a triangle of three crack nodes
    // would join two front segments with no wall between them, closing the slot on that side.
    let crack_after = |v: u32| v != gone && mesh.is_crack_node(v);
    if added.iter().any(|tri| tri.iter().all(|&v| crack_after(v))) {
        return None;
    }
    let turn = Turn {
        normals: removed.iter().map(|&t| mesh.triangle_normal(t)).collect(),
        min_cos: MAX_NORMAL_TURN_COS,
    };
    let old_keep = mesh.positions()[keep as usize];
    mesh.set_position(keep, x);
    if bent {
        let from = mesh.positions()[gone as usize];
        let moved = added
            .iter()
            .filter(|tri| tri.contains(&keep))
            .map(|tri| {
                let [p, q, r] = tri.map(|v| mesh.positions()[v as usize]);
                (from - p).dot((q - p).cross(r - p).normalize_or_zero()).abs()
            })
            .fold(0.0, f64::max);
        if !(moved <= settings.wall_tolerance) {
            mesh.set_position(keep, old_keep);
            return None;
        }
    }
    removed.extend([t_ab, t_ba]);
    if !acceptable(mesh, &removed, &added, bounds, Some(&turn)) {
        mesh.set_position(keep, old_keep);
        return None;
    }
    mesh.remove_triangle(t_ab);
    mesh.remove_triangle(t_ba);
    for (t, tri) in removed.iter().zip(added) {
        mesh.replace_triangle(*t, tri);
    }
    if let Some((l, i)) = segment {
        let line = &mut mesh.lines_mut()[l];
        let at = if line.nodes[i] == gone {
            i
        } else {
            (i + 1) % line.nodes.len()
        };
        line.nodes.remove(at);
    }
    mesh.set_crack_node(gone, false);
    Some(keep)
}

/// Flips edge `a b` to join the vertices opposite it. Returns whether it flipped.
pub fn flip_edge(mesh: &mut CrackMesh, a: u32, b: u32, bounds: AngleBounds, feature_degrees: f64) -> bool {
    let Some((t_ab, t_ba, c, d)) = opposite(mesh, a, b) else {
        return false;
    };
    let crack = |v: u32| mesh.is_crack_node(v);
    if c == d
        || (crack(a) && crack(b))
        || (crack(c) && crack(d))
        || mesh.incident(a).len() <= 3
        || mesh.incident(b).len() <= 3
        || !mesh.edge_triangles(c, d).is_empty()
        || is_sharp(mesh, a, b, feature_degrees)
        || mesh.wall_of(t_ab) != mesh.wall_of(t_ba)
        || mesh.triangle_normal(t_ab).dot(mesh.triangle_normal(t_ba)) <= 1.0 - 1e-12
    {
        return false;
    }
    let added = [[a, d, c], [d, b, c]];
    let mean = (mesh.triangle_normal(t_ab) + mesh.triangle_normal(t_ba)).normalize_or_zero();
    let turn = Turn {
        normals: vec![mean; 2],
        min_cos: feature_degrees.to_radians().cos(),
    };
    if !acceptable(mesh, &[t_ab, t_ba], &added, bounds, Some(&turn)) {
        return false;
    }
    mesh.replace_triangle(t_ab, added[0]);
    mesh.replace_triangle(t_ba, added[1]);
    true
}
