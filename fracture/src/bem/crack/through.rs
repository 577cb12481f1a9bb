//! Cutting through (Zhu 2015 section 6.3, Fig. 13): once a crack's front has reached the far
//! surface all along, the thin ligament left between them is cut and the crack becomes a slot
//! through the body. When the crack spans the body, the surface falls into two closed pieces.
//!
//! The paper cuts pair by pair of neighbouring inactive front nodes: it cuts the far surface
//! along an interpolated crack plane, opens that path, deletes the two wall triangles on the
//! front edge and stitches the hanging vertices. Here the same steps run once for the whole line,
//! as one change that is checked before anything moves, so a refused cut leaves the uncut crack:
//! 1. Every interior front node must be inactive and have a point of the far surface within the
//!    reach, ahead of it (on the side away from the crack's mouth). Those points are the guides.
//! 2. A path of surface edges is traced from one end of the line through the guides to the
//!    other: from each vertex the plane through it and the next guide, as close as it can be to
//!    the crack plane, crosses the vertex's fan; the path steps to the crossing, splitting the
//!    edge there (or to a neighbour within the snap angle of the plane) while that brings it
//!    closer to the guide. Splits change no geometry: a refusal after them leaves a valid mesh.
//! 3. The front line and the path together bound the crack. Triangles are flooded without
//!    crossing either: the side holding the positive wall (the wall whose outward normals point
//!    against the crack-plane normal `e`) is `+`, the other `-`. If some edge of the front or the
//!    path has the same side on both triangles, the crack does not separate anything there (a
//!    body with a hole, say) and the cut is refused.
//! 4. Each path vertex, the ends included, becomes two vertices `p +- m`, `|m|` half the crack
//!    thickness along the surface (as the lips of an opening are placed), its triangles taking
//!    the copy of their side. The wall triangles at the front nodes are removed; on each side the
//!    hole left between the wall and the path is a polygon from one end to the other and back,
//!    closed by a band of triangles that always takes the shorter diagonal.
//!
//! The line is then marked cut through: it has no nodes left, and its walls (the band included)
//! keep its index. Volume: the slot now runs through with width `t` at the far surface too, so the
//! volume removed stays within the thickness times the crack area.

use glam::DVec3;
use hashbrown::{HashMap, HashSet};
use shatter_collision::bvh::closest_point_on_triangle;
use smallvec::SmallVec;

use super::check::acceptable;
use super::extend::crack_at;
use super::mesh::CrackMesh;
use super::open::{Refusal, SNAP_DEGREES, lip_offset};
use super::ops::split_edge;
use super::validate::AngleBounds;

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
    let Some(crack) = mesh.lines().get(line) else {
        return Err(Refusal::BadInput("crack line (not in the mesh)"));
    };
    if !(reach.is_finite() && reach > 0.0 && thickness.is_finite() && thickness > 0.0) {
        return Err(Refusal::BadInput("reach or crack thickness (must be finite and > 0 m)"));
    }
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
    let mut guides = Vec::with_capacity(front.len() + 1);
    for &f in front {
        guides.push(far_point(mesh, f, reach).ok_or(Refusal::NotThrough)?);
    }
    guides.push(mesh.positions()[b as usize]);
    let path = trace(mesh, a, b, &guides, e, bounds)?;

    // Which side of the crack each triangle is on.
    let mut barrier: HashSet<(u32, u32)> = HashSet::new();
    for pair in nodes.windows(2).chain(path.windows(2)) {
        barrier.insert(key(pair[0], pair[1]));
    }
    let side = flood(mesh, &barrier);
    let plus = {
        let pair = mesh.edge_triangles(nodes[0], nodes[1]);
        if pair.len() != 2 {
            return Err(Refusal::Geometry);
        }
        let along = |t: u32| mesh.triangle_normal(t).dot(e);
        if along(pair[0]) < along(pair[1]) {
            side[pair[0] as usize]
        } else {
            side[pair[1] as usize]
        }
    };
    for &(u, v) in &barrier {
        let pair = mesh.edge_triangles(u, v);
        if pair.len() != 2 || (side[pair[0] as usize] == plus) == (side[pair[1] as usize] == plus) {
            return Err(Refusal::Geometry);
        }
    }
    let is_plus = |t: u32| side[t as usize] == plus;

    // The two copies of every path vertex.
    let mut offsets = Vec::with_capacity(path.len());
    for &p in &path {
        let normal = mesh.surface_normal(p);
        offsets.push(lip_offset(mesh, p, normal, e, thickness).ok_or(Refusal::Geometry)?);
    }
    let mut copies: HashMap<u32, [u32; 2]> = HashMap::new();
    for (&p, &m) in path.iter().zip(&offsets) {
        let x = mesh.positions()[p as usize];
        copies.insert(p, [mesh.add_vertex(x + m), mesh.add_vertex(x - m)]);
    }
    let copy = |v: u32, plus_side: bool| copies.get(&v).map_or(v, |c| c[usize::from(!plus_side)]);

    // Removed: the walls at the front nodes. Re-cornered: everything else at a path vertex.
    let mut cut: Vec<u32> = front.iter().flat_map(|&f| mesh.incident(f).iter().copied()).collect();
    cut.sort_unstable();
    cut.dedup();
    let mut recornered: Vec<u32> = path
        .iter()
        .flat_map(|&p| mesh.incident(p).iter().copied())
        .filter(|t| cut.binary_search(t).is_err())
        .collect();
    recornered.sort_unstable();
    recornered.dedup();
    let slots = mesh.triangle_slots();
    let new_corners: Vec<[u32; 3]> = recornered
        .iter()
        .map(|&t| slots[t as usize].map(|v| copy(v, is_plus(t))))
        .collect();

    // The holes: every edge of a removed triangle whose other triangle stays, and every path
    // edge, as the new triangles must traverse it (against the triangle that stays).
    let mut hole: [HashMap<u32, u32>; 2] = [HashMap::new(), HashMap::new()];
    let mut add_hole_edge = |t: u32, from: u32, to: u32| -> Result<(), Refusal> {
        let s = is_plus(t);
        let (from, to) = (copy(from, s), copy(to, s));
        match hole[usize::from(!s)].insert(to, from) {
            None => Ok(()),
            Some(_) => Err(Refusal::Geometry),
        }
    };
    for &t in &cut {
        let tri = slots[t as usize];
        for k in 0..3 {
            let (u, v) = (tri[k], tri[(k + 1) % 3]);
            let other = mesh.edge_triangles(u, v).into_iter().find(|&o| o != t);
            match other {
                // `other` stays and traverses v -> u.
                Some(other) if cut.binary_search(&other).is_err() => add_hole_edge(other, v, u)?,
                _ => {}
            }
        }
    }
    for pair in path.windows(2) {
        for &t in &mesh.edge_triangles(pair[0], pair[1]) {
            let [x, y] = if mesh.directed_edge_triangle(pair[0], pair[1]) == Some(t) {
                [pair[0], pair[1]]
            } else {
                [pair[1], pair[0]]
            };
            add_hole_edge(t, x, y)?;
        }
    }
    let mut band = Vec::new();
    for (k, edges) in hole.iter().enumerate() {
        let start = copy(a, k == 0);
        band.extend(close_polygon(mesh, &cycle(edges, start)?));
    }

    let mut removed = cut.clone();
    removed.extend_from_slice(&recornered);
    let mut added = new_corners.clone();
    added.extend_from_slice(&band);
    if !acceptable(mesh, &removed, &added, bounds, None) {
        return Err(Refusal::Geometry);
    }
    for &t in &cut {
        mesh.remove_triangle(t);
    }
    for (&t, &corners) in recornered.iter().zip(&new_corners) {
        mesh.replace_triangle(t, corners);
    }
    for &tri in &band {
        mesh.add_triangle_on(tri, Some(line));
    }
    for &v in &nodes {
        mesh.set_crack_node(v, false);
    }
    let crack = &mut mesh.lines_mut()[line];
    crack.nodes.clear();
    crack.through = true;
    crack.blocked = [true; 2];
    Ok(())
}

/// An unordered edge.
fn key(u: u32, v: u32) -> (u32, u32) {
    (u.min(v), u.max(v))
}

/// The point of the body's surface (no crack wall, no triangle of `f`) nearest front node `f`,
/// if it is within `reach` and ahead of the front: against the summed normals of `f`'s
/// triangles, which point back out through the crack's mouth.
fn far_point(mesh: &CrackMesh, f: u32, reach: f64) -> Option<DVec3> {
    let x = mesh.positions()[f as usize];
    let back: DVec3 = mesh
        .incident(f)
        .iter()
        .map(|&t| {
            let [a, b, c] = mesh.corners(t);
            (b - a).cross(c - a)
        })
        .sum();
    let mut best: Option<(f64, DVec3)> = None;
    for t in mesh.live_triangles() {
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

/// A path of surface edges from `a` through the neighbourhoods of `guides` (the last of which
/// is `b`'s position) to `b`, splitting edges where it crosses them; see the module docs.
fn trace(
    mesh: &mut CrackMesh,
    a: u32,
    b: u32,
    guides: &[DVec3],
    e: DVec3,
    bounds: AngleBounds,
) -> Result<Vec<u32>, Refusal> {
    let mut path = vec![a];
    let mut budget = 64 + 16 * guides.len();
    for (g, &q) in guides.iter().enumerate() {
        let last = g + 1 == guides.len();
        loop {
            let u = *path.last().unwrap_or(&a);
            if last && u == b {
                return Ok(path);
            }
            if budget == 0 {
                return Err(Refusal::Crossings);
            }
            budget -= 1;
            let step = if last && is_surface_edge(mesh, u, b) {
                Some(Step::Vertex(b))
            } else {
                next_step(mesh, u, q, e)?
            };
            let next = match step {
                None if last => return Err(Refusal::Crossings),
                None => break,
                Some(Step::Vertex(v)) => v,
                Some(Step::Split(p, r, x)) => split_edge(mesh, p, r, x, bounds).ok_or(Refusal::Geometry)?,
            };
            if path.contains(&next) {
                return Err(Refusal::Crossings);
            }
            path.push(next);
        }
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

/// The step from `u` towards `q` within the plane through both that is nearest the crack plane
/// (normal `e`), over `u`'s surface triangles, if one brings the path closer to `q`.
fn next_step(mesh: &CrackMesh, u: u32, q: DVec3, e: DVec3) -> Result<Option<Step>, Refusal> {
    let x = mesh.positions()[u as usize];
    let d = q - x;
    let m = (e - d * (e.dot(d) / d.length_squared().max(f64::MIN_POSITIVE))).normalize_or_zero();
    if m == DVec3::ZERO || !d.is_finite() {
        return Err(Refusal::Crossings);
    }
    let snap = SNAP_DEGREES.to_radians().sin();
    let pos = |v: u32| mesh.positions()[v as usize];
    let mut best: Option<(f64, Step)> = None;
    let mut consider = |at: DVec3, step: Step| {
        let toward = (at - x).normalize_or_zero().dot(d);
        if at.distance(q) < d.length() && best.as_ref().is_none_or(|(b, _)| toward > *b) {
            best = Some((toward, step));
        }
    };
    let fan: SmallVec<[u32; 8]> = mesh.incident(u).iter().copied().filter(|&t| !mesh.is_wall(t)).collect();
    for t in fan {
        let [r0, r1] = mesh.others_ccw(t, u);
        let (s0, s1) = (m.dot(pos(r0) - x), m.dot(pos(r1) - x));
        let on0 = s0.abs() <= snap * pos(r0).distance(x);
        let on1 = s1.abs() <= snap * pos(r1).distance(x);
        for (r, on) in [(r0, on0), (r1, on1)] {
            if on && uncracked(mesh, r) && is_surface_edge(mesh, u, r) {
                consider(pos(r), Step::Vertex(r));
            }
        }
        if !on0 && !on1 && s0 * s1 < 0.0 && uncracked(mesh, r0) && uncracked(mesh, r1) && is_surface_edge(mesh, r0, r1)
        {
            let at = pos(r0).lerp(pos(r1), s0 / (s0 - s1));
            consider(at, Step::Split(r0, r1, at));
        }
    }
    Ok(best.map(|(_, step)| step))
}

/// Labels the live triangles by flooding across every edge but those in `barrier`: a label
/// per triangle slot (`u32::MAX` for dead slots).
fn flood(mesh: &CrackMesh, barrier: &HashSet<(u32, u32)>) -> Vec<u32> {
    let slots = mesh.triangle_slots();
    let mut label = vec![u32::MAX; slots.len()];
    let mut count = 0;
    let mut stack = Vec::new();
    for seed in mesh.live_triangles() {
        if label[seed as usize] != u32::MAX {
            continue;
        }
        label[seed as usize] = count;
        stack.push(seed);
        while let Some(t) = stack.pop() {
            let tri = slots[t as usize];
            for k in 0..3 {
                let (u, v) = (tri[k], tri[(k + 1) % 3]);
                if barrier.contains(&key(u, v)) {
                    continue;
                }
                for o in mesh.edge_triangles(u, v) {
                    if label[o as usize] == u32::MAX {
                        label[o as usize] = count;
                        stack.push(o);
                    }
                }
            }
        }
        count += 1;
    }
    label
}

/// The hole polygon from the directed edges `next` (each vertex to the one after it), starting
/// at `start`; fails unless they form one simple cycle through `start`.
fn cycle(next: &HashMap<u32, u32>, start: u32) -> Result<Vec<u32>, Refusal> {
    let mut polygon = vec![start];
    let mut v = start;
    loop {
        v = *next.get(&v).ok_or(Refusal::Geometry)?;
        if v == start {
            break;
        }
        if polygon.len() > next.len() {
            return Err(Refusal::Geometry);
        }
        polygon.push(v);
    }
    if polygon.len() != next.len() || polygon.len() < 3 {
        return Err(Refusal::Geometry);
    }
    Ok(polygon)
}

/// Triangles closing the polygon `c` (traversed in the order the new triangles must follow):
/// a band zipped from `c[0]` along both sides, each step taking the shorter new diagonal.
fn close_polygon(mesh: &CrackMesh, c: &[u32]) -> Vec<[u32; 3]> {
    let m = c.len();
    let pos = |v: u32| mesh.positions()[v as usize];
    let mut out = vec![[c[m - 1], c[0], c[1]]];
    let (mut i, mut j) = (1, m - 1);
    while i + 1 < j {
        let forward = pos(c[i + 1]).distance(pos(c[j]));
        let backward = pos(c[i]).distance(pos(c[j - 1]));
        if forward <= backward {
            out.push([c[j], c[i], c[i + 1]]);
            i += 1;
        } else {
            out.push([c[j - 1], c[j], c[i]]);
            j -= 1;
        }
    }
    out
}
