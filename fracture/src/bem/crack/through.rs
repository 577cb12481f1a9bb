//! Cutting through (Zhu 2015 section 6.3, Fig. 13): once a crack's front has reached the far
//! surface all along, the thin ligament left between them is cut and the crack becomes a slot
//! through the body. When the crack spans the body, the surface falls into two closed pieces.
//!
//! The paper cuts pair by pair of neighbouring inactive front nodes: it cuts the far surface
//! along an interpolated crack plane, opens that path, deletes the two wall triangles on the
//! front edge and stitches the hanging vertices. Here the same steps run once for the whole line,
//! as one change that is checked before anything moves, so a refused cut leaves the uncut crack:
//! 1. Every interior front node must be inactive and have a point of the far surface within the
//!    reach, ahead of it (on the side away from the crack's mouth): the guides.
//! 2. A path of surface edges is traced from one end of the line to the other: it leaves the
//!    first end towards the first guide and walks on along the surface's intersection with the
//!    plane through the current vertex parallel to the crack, never back, stepping to the
//!    crossing ahead and splitting the edge there (or to the edge's end when the crossing is
//!    within a tenth of the edge of it, or when the angle bounds refuse the split), until the
//!    other end is a neighbour. Each new path vertex slides within its face, or along its ridge,
//!    onto the crack plane through the nearest node of the line, so the path stays under the
//!    front. Splits and slides change no shape: a refusal after them leaves a valid mesh.
//! 3. The front line and the path together bound the crack. Triangles are flooded without
//!    crossing either: the side holding the positive wall (the wall whose outward normals point
//!    against the crack-plane normal `e`) is `+`, the other `-`. If some edge of the front or the
//!    path has the same side on both triangles, the crack does not separate anything there (a
//!    body with a hole, say) and the cut is refused.
//! 4. Each path vertex, the ends included, becomes two vertices `p +- m`, `|m|` half the crack
//!    thickness along the surface, as the lips of an opening are placed (or, at a corner or a
//!    mouth's end on a ridge, along the crack normal made tangent to the surface), and its
//!    triangles take the copy of their side. Each line node goes to a path vertex (the nearest
//!    one not before the previous node's, the ends to themselves), and its wall triangles to
//!    that vertex's copy on their side. A wall triangle on a front segment whose two nodes went
//!    to path vertices apart becomes a fan from its third corner over the path between them; one
//!    whose nodes went to the same vertex goes. Both walls are mapped onto the same path, so
//!    the two sides stay matched and a thickness apart at the far surface.
//!
//! The line is then marked cut through: it has no nodes left, and its walls keep its index.
//! Volume: the slot now runs through with width `t` at the far surface too, so the volume
//! removed stays within the thickness times the crack area.
//!
//! Known limit: where a path vertex cannot be settled onto the crack plane (an existing vertex
//! held by the crack's own walls next to its mouth, as when a crack's end has run up a side face
//! while the front beside it lags a few millimetres inside), its two copies can land on one side
//! of the crack, or a fan degenerate into the path, and the cut is refused. Measured: a
//! 704-triangle bar in three-point bending is refused this way, the same bar at 2816 triangles
//! cuts through (`fracture/tests/bem_crack.rs`).

use glam::DVec3;
use hashbrown::{HashMap, HashSet};
use shatter_collision::bvh::closest_point_on_triangle;
use smallvec::SmallVec;

use super::check::{MAX_NORMAL_TURN_COS, acceptable, try_move};
use super::extend::crack_at;
use super::mesh::{CrackLine, CrackMesh};
use super::open::{Refusal, lip_offset, tangent_offset};
use super::ops::{FEATURE_DEGREES, Slide, slide, split_edge};
use super::propagate::outward;
use super::validate::{AngleBounds, components_apart};

/// Cuts crack line `line` through to the far surface (see the module docs). `reach` (m) is how
/// close every front node must be to the far surface, about one target edge; `thickness` (m) is
/// the crack's width at the far surface.
pub fn cut_through(
    mesh: &mut CrackMesh,
    line: usize,
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    let crack = cut_line(mesh, line, reach, thickness)?;
    if crack.closed || crack.through || crack.nodes.len() < 3 {
        return Err(Refusal::NotThrough);
    }
    let nodes = crack.nodes.clone();
    let e = crack.plane_normal;
    let (a, b) = (nodes[0], nodes[nodes.len() - 1]);
    let front = &nodes[1..nodes.len() - 1];
    if front.iter().any(|&f| mesh.is_active(f)) {
        return Err(Refusal::NotThrough);
    }
    // Every front node must have reached the far surface; the first one's point there is where
    // the path heads from `a`.
    let mut first = None;
    for &f in front {
        let q = far_point(mesh, f, reach).ok_or(Refusal::NotThrough)?;
        first.get_or_insert(q);
    }
    let toward = first.ok_or(Refusal::NotThrough)?;
    let plane_points: Vec<DVec3> = nodes.iter().map(|&v| mesh.positions()[v as usize]).collect();
    let path = trace(mesh, a, b, toward, &plane_points, e, bounds)?;
    // Each line node goes to a path vertex: the nearest one not before the previous node's.
    let pos = |v: u32| mesh.positions()[v as usize];
    let mut to_path = vec![0usize; nodes.len()];
    for (i, &f) in nodes.iter().enumerate().skip(1) {
        let from = to_path[i - 1];
        to_path[i] = if i + 1 == nodes.len() {
            path.len() - 1
        } else {
            (from..path.len())
                .min_by(|&j, &k| {
                    pos(path[j])
                        .distance(pos(f))
                        .total_cmp(&pos(path[k]).distance(pos(f)))
                        .then(j.cmp(&k))
                })
                .unwrap_or(from)
        };
    }

    // Which side of the crack each triangle is on.
    let mut barrier: HashSet<(u32, u32)> = HashSet::new();
    for pair in nodes.windows(2).chain(path.windows(2)) {
        barrier.insert(edge_key(pair[0], pair[1]));
    }
    let sides = Sides::of(mesh, &barrier, (nodes[0], nodes[1]), e)?;
    let is_plus = |t: u32| sides.is_plus(t);

    // The two copies of every path vertex.
    let mut copies: HashMap<u32, [u32; 2]> = HashMap::new();
    for &p in &path {
        let normal = mesh.surface_normal(p);
        let offset = lip_offset(mesh, p, normal, e, thickness)
            .or_else(|| tangent_offset(normal, e, thickness))
            .ok_or(Refusal::Geometry)?;
        let x = mesh.positions()[p as usize];
        copies.insert(p, [mesh.add_vertex(x + offset), mesh.add_vertex(x - offset)]);
    }
    let node_index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    // A corner's new vertex on its triangle's side: a path vertex's copy, or for a line node the
    // copy of its path vertex.
    let copy = |v: u32, plus_side: bool| {
        let v = node_index.get(&v).map_or(v, |&i| path[to_path[i]]);
        copies.get(&v).map_or(v, |c| c[usize::from(!plus_side)])
    };
    let mut removed: Vec<u32> = nodes
        .iter()
        .chain(&path)
        .flat_map(|&v| mesh.incident(v).iter().copied())
        .collect();
    removed.sort_unstable();
    removed.dedup();
    let slots = mesh.triangle_slots();
    let mut added: Vec<[u32; 3]> = Vec::with_capacity(removed.len());
    let mut walls: Vec<Option<usize>> = Vec::with_capacity(removed.len());
    for &t in &removed {
        let tri = slots[t as usize];
        let side = is_plus(t);
        // A triangle on a front segment n_i n_i+1 spans the path from n_i's vertex to n_i+1's:
        // none of it when both go to one vertex, a fan from its third corner when they are apart.
        let segment = (0..3).find_map(|k| {
            let (u, v) = (tri[k], tri[(k + 1) % 3]);
            match (node_index.get(&u), node_index.get(&v)) {
                (Some(&i), Some(&j)) if i.abs_diff(j) == 1 => Some((k, i, j)),
                _ => None,
            }
        });
        match segment {
            Some((k, i, j)) => {
                let w = copy(tri[(k + 2) % 3], side);
                let (pi, pj) = (to_path[i], to_path[j]);
                let steps: Vec<usize> = if pi <= pj {
                    (pi..=pj).collect()
                } else {
                    (pj..=pi).rev().collect()
                };
                for pair in steps.windows(2) {
                    let (x, y) = (copy(path[pair[0]], side), copy(path[pair[1]], side));
                    added.push([x, y, w]);
                }
            }
            None => added.push(tri.map(|v| copy(v, side))),
        }
        walls.resize(added.len(), mesh.wall_of(t));
    }
    commit_cut(mesh, line, &removed, &added, &walls, bounds)
}

/// Line `line` to be cut, refusing (naming it) a line the mesh does not have, or a reach or
/// thickness (m) that is not finite and positive.
pub(crate) fn cut_line(mesh: &CrackMesh, line: usize, reach: f64, thickness: f64) -> Result<&CrackLine, Refusal> {
    let Some(crack) = mesh.lines().get(line) else {
        return Err(Refusal::BadInput("crack line (not in the mesh)"));
    };
    if !(reach.is_finite() && reach > 0.0 && thickness.is_finite() && thickness > 0.0) {
        return Err(Refusal::BadInput("reach or crack thickness (must be finite and > 0 m)"));
    }
    Ok(crack)
}

/// Which side of a cut each triangle is on.
pub(crate) struct Sides {
    label: Vec<u32>,
    plus: u32,
}

impl Sides {
    /// Floods the triangles without crossing the `barrier` edges (unordered, [`edge_key`]): the
    /// side holding the positive wall (the wall whose outward normals point against the
    /// crack-plane normal `e`) at the barrier edge `first` is the positive side. Refused when an
    /// edge of the barrier has the same side on both its triangles: the cut would separate
    /// nothing there (a body with a hole, a loop round a handle).
    pub(crate) fn of(
        mesh: &CrackMesh,
        barrier: &HashSet<(u32, u32)>,
        first: (u32, u32),
        e: DVec3,
    ) -> Result<Self, Refusal> {
        let label = components_apart(mesh, |u, v| barrier.contains(&edge_key(u, v))).0;
        let pair = mesh.edge_triangles(first.0, first.1);
        if pair.len() != 2 {
            return Err(Refusal::Geometry);
        }
        let along = |t: u32| mesh.triangle_normal(t).dot(e);
        let positive = if along(pair[0]) < along(pair[1]) {
            pair[0]
        } else {
            pair[1]
        };
        let sides = Self {
            plus: label[positive as usize],
            label,
        };
        for &(u, v) in barrier {
            let pair = mesh.edge_triangles(u, v);
            if pair.len() != 2 || sides.is_plus(pair[0]) == sides.is_plus(pair[1]) {
                return Err(Refusal::Geometry);
            }
        }
        Ok(sides)
    }

    /// Whether triangle slot `t` is on the positive side.
    pub(crate) fn is_plus(&self, t: u32) -> bool {
        self.label[t as usize] == self.plus
    }
}

/// Makes a cut through line `line`'s ligament: removes the triangle slots `removed` and adds the
/// triangles `added` (each on the wall in `walls`, or the body's surface) if the change keeps
/// the mesh valid; the line then has no nodes and is marked cut through. Refuses, changing no
/// triangle, otherwise.
pub(crate) fn commit_cut(
    mesh: &mut CrackMesh,
    line: usize,
    removed: &[u32],
    added: &[[u32; 3]],
    walls: &[Option<usize>],
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    if !acceptable(mesh, removed, added, bounds, None) {
        return Err(Refusal::Geometry);
    }
    for &t in removed {
        mesh.remove_triangle(t);
    }
    for (&corners, &wall) in added.iter().zip(walls) {
        mesh.add_triangle_on(corners, wall);
    }
    for v in mesh.lines()[line].nodes.clone() {
        mesh.set_crack_node(v, false);
    }
    let crack = &mut mesh.lines_mut()[line];
    crack.nodes.clear();
    crack.through = true;
    crack.blocked = [true; 2];
    Ok(())
}

/// An unordered edge.
pub(crate) fn edge_key(u: u32, v: u32) -> (u32, u32) {
    (u.min(v), u.max(v))
}

/// Whether crack line `line` has stopped (no interior front node active) with every interior
/// front node within `reach` (m) of the far surface ahead of it: the ligament left is no
/// thicker than `reach` anywhere. A line cut through, closed or without interior nodes is not.
pub fn ligament_within(mesh: &CrackMesh, line: usize, reach: f64) -> bool {
    let Some(crack) = mesh.lines().get(line) else {
        return false;
    };
    if crack.closed || crack.through || crack.nodes.len() < 3 {
        return false;
    }
    let front = &crack.nodes[1..crack.nodes.len() - 1];
    front.iter().all(|&f| !mesh.is_active(f)) && front.iter().all(|&f| far_point(mesh, f, reach).is_some())
}

/// The point of the body's surface (no crack wall, no triangle of `f`) nearest front node `f`,
/// if it is within `reach` and ahead of the front: against the summed normals of `f`'s
/// triangles, which point back out through the crack's mouth.
fn far_point(mesh: &CrackMesh, f: u32, reach: f64) -> Option<DVec3> {
    let x = mesh.positions()[f as usize];
    let back = outward(mesh, f);
    let mut best: Option<(f64, DVec3)> = None;
    for t in mesh.triangles_near(x - DVec3::splat(reach), x + DVec3::splat(reach)) {
        if mesh.is_wall(t) || mesh.triangle_slots()[t as usize].contains(&f) {
            continue;
        }
        let [a, b, c] = mesh.corners(t);
        let q = closest_point_on_triangle(x, a, b, c);
        let d = q.distance(x);
        if d <= reach && (q - x).dot(back) < 0.0 && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, q));
        }
    }
    best.map(|(_, q)| q)
}

/// A path of surface edges from `a` to `b` along the crack: it leaves `a` towards `toward` and
/// then walks on along the surface's intersection with the plane of unit normal `e` through the
/// current vertex, never back, splitting edges where it crosses them; each new vertex slides
/// onto the crack plane through the nearest of `plane_points` (the line's nodes). See the
/// module docs.
fn trace(
    mesh: &mut CrackMesh,
    a: u32,
    b: u32,
    toward: DVec3,
    plane_points: &[DVec3],
    e: DVec3,
    bounds: AngleBounds,
) -> Result<Vec<u32>, Refusal> {
    let mut path = vec![a];
    let mut heading = toward - mesh.positions()[a as usize];
    let budget = 64 + 16 * plane_points.len();
    for _ in 0..budget {
        let u = *path.last().unwrap_or(&a);
        if u == b {
            return Ok(path);
        }
        let step = if path.len() > 1 && is_surface_edge(mesh, u, b) {
            Some(Step::Vertex(b))
        } else {
            next_step(mesh, u, heading, e)
        };
        let next = match step {
            None => return Err(Refusal::Crossings),
            Some(Step::Vertex(v)) => v,
            Some(Step::Split(p, r, x)) => match split_edge(mesh, p, r, x, bounds) {
                Some(m) => m,
                // A split that would leave a sliver: the nearer end of the edge instead.
                None => {
                    let near = if x.distance(mesh.positions()[p as usize]) <= x.distance(mesh.positions()[r as usize]) {
                        p
                    } else {
                        r
                    };
                    if !is_surface_edge(mesh, u, near) {
                        return Err(Refusal::Geometry);
                    }
                    near
                }
            },
        };
        if path.contains(&next) {
            return Err(Refusal::Crossings);
        }
        if next != b {
            let x = mesh.positions()[next as usize];
            let nearest = plane_points
                .iter()
                .copied()
                .min_by(|p, q| p.distance_squared(x).total_cmp(&q.distance_squared(x)))
                .unwrap_or(x);
            settle(mesh, next, nearest, e, bounds);
        }
        heading = mesh.positions()[next as usize] - mesh.positions()[u as usize];
        path.push(next);
    }
    Err(Refusal::Crossings)
}

/// Where a surface path steps next.
enum Step {
    /// To a neighbour.
    Vertex(u32),
    /// Across edge `p r`, split at the point.
    Split(u32, u32, DVec3),
}

/// Whether `u v` is an edge with two triangles of the body's surface (no crack wall).
fn is_surface_edge(mesh: &CrackMesh, u: u32, v: u32) -> bool {
    let pair = mesh.edge_triangles(u, v);
    pair.len() == 2 && pair.iter().all(|&t| !mesh.is_wall(t))
}

/// Whether `v` is free of every crack: no crack node, no wall triangle.
fn uncracked(mesh: &CrackMesh, v: u32) -> bool {
    crack_at(mesh, v).is_none()
}

/// The step from `u` onwards along `heading` within the plane of unit normal `e` through `u`,
/// over `u`'s surface triangles: the crossing most nearly along `heading`, to a neighbour the
/// plane passes within a tenth of an edge of (a split there would leave a sliver), else across
/// an edge the plane crosses, split there. `None` when the plane leaves `u`'s surface only
/// backwards (turning by more than 120 degrees) or into a crack.
fn next_step(mesh: &CrackMesh, u: u32, heading: DVec3, e: DVec3) -> Option<Step> {
    let x = mesh.positions()[u as usize];
    let on = x;
    let d = heading.normalize_or_zero();
    let pos = |v: u32| mesh.positions()[v as usize];
    let mut best: Option<(f64, Step)> = None;
    let mut consider = |at: DVec3, step: Step| {
        let along = (at - x).normalize_or_zero().dot(d);
        // Round a ridge the path turns by up to a right angle; back is along -1.
        if along > -0.5 && best.as_ref().is_none_or(|(b, _)| along > *b) {
            best = Some((along, step));
        }
    };
    let fan: SmallVec<[u32; 8]> = mesh.incident(u).iter().copied().filter(|&t| !mesh.is_wall(t)).collect();
    for t in fan {
        let [r0, r1] = mesh.others_ccw(t, u);
        let (s0, s1) = (e.dot(pos(r0) - on), e.dot(pos(r1) - on));
        if s0 * s1 > 0.0 || s0 == s1 || !uncracked(mesh, r0) || !uncracked(mesh, r1) {
            continue;
        }
        let lambda = s0 / (s0 - s1);
        if lambda <= SNAP_FRACTION {
            if is_surface_edge(mesh, u, r0) {
                consider(pos(r0), Step::Vertex(r0));
            }
        } else if lambda >= 1.0 - SNAP_FRACTION {
            if is_surface_edge(mesh, u, r1) {
                consider(pos(r1), Step::Vertex(r1));
            }
        } else if is_surface_edge(mesh, r0, r1) {
            let at = pos(r0).lerp(pos(r1), lambda);
            consider(at, Step::Split(r0, r1, at));
        }
    }
    best.map(|(_, step)| step)
}

/// Slides surface vertex `v` within its face (or along its ridge) onto the crack plane through
/// `on` (unit normal `e`), when that keeps the mesh valid and the surface's shape: a path
/// vertex taken instead of a crossing near it would otherwise leave the path off the crack by up
/// to a tenth of an edge, more than the crack is thick.
fn settle(mesh: &mut CrackMesh, v: u32, on: DVec3, e: DVec3, bounds: AngleBounds) {
    let x = mesh.positions()[v as usize];
    let off = e.dot(x - on);
    let direction = match slide(mesh, v, FEATURE_DEGREES) {
        Slide::Plane(n) => (e - n * n.dot(e)).normalize_or_zero(),
        Slide::Line(d) => d,
        Slide::Fixed => return,
    };
    let along = e.dot(direction);
    if along.abs() < 0.5 || off == 0.0 {
        return;
    }
    try_move(
        mesh,
        v,
        x - direction * (off / along),
        bounds,
        Some(MAX_NORMAL_TURN_COS),
    );
}

/// A crossing this close to an edge's end (as a fraction of the edge) is taken at the end.
const SNAP_FRACTION: f64 = 0.1;
