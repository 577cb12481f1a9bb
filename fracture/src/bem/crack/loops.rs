//! Crack loops (Zhu 2015 Fig. 12, "crack circle"): a line whose two ends have run round the
//! body until they meet closes into a loop, and a loop whose ligament is thin enough is cut
//! through.
//!
//! Closing. The ends `a` and `b` of an open line are neighbours over an edge of the body's
//! surface, or share a neighbour `w` free of cracks near the crack plane; in the second case
//! the moving end first extends to `w`, which becomes the moving end. The moving end `a` is
//! slotted with `b` as its crossing, exactly as an end extends (`extend`): `a` becomes two lips
//! and a front node `g` goes in below it, walled to `a`'s line neighbour and to `b`. Then `b`,
//! which now has a slot on either side of it, is slotted between its line neighbour and `g`: it
//! becomes two lips and a front node `h`. The mouth is one strip round the body, the front the
//! closed line `... g h ...` (or `... h g ...`) through every node, and the ends are gone. Each
//! slot is checked as any opening is; if one is refused the mesh goes back to what it was, so a
//! refused closing leaves the open line.
//!
//! Known limit: an end whose extension was refused stops for good, while the front beside it
//! may run on under the surface; the other end, coming round, then meets that front under the
//! surface rather than the end, and the closing is refused.
//!
//! Cutting through. A loop has no far surface to reach: the ligament it encircles is cut as it
//! stands once every node has stopped and the ligament is no wider than the reach (its width
//! taken as four times the area the loop encloses over its perimeter: the diameter of a disc,
//! the side of a square, twice the width of a long strip, so a long narrow ligament waits until
//! it is half as wide). Each front node goes onto the mid-plane of its two walls (a node that
//! wandered off its crack's plane would otherwise put a copy beyond the other side's wall) and
//! is doubled there, each copy half the crack thickness along the crack-plane normal to its
//! side; each side's hole is closed by a fan of triangles from the nodes' centroid, moved the
//! same way: a cap in the crack plane. The two sides are told apart by flooding the triangles
//! without crossing the front, as `through` does; if the front does not separate them (a loop
//! round a handle, say) the cut is refused. A loop whose front met an inner surface all round (a
//! ring round a hollow shell) is not cut here.
//!
//! Volume: the caps leave a disc of the crack thickness over the ligament, within the thickness
//! times the crack area.

use glam::DVec3;
use hashbrown::{HashMap, HashSet};

use super::extend::{End, check_slot, crack_at};
use super::mesh::CrackMesh;
use super::open::{Refusal, Slot, slot};
use super::through::{Sides, commit_cut, cut_line, edge_key};
use super::validate::AngleBounds;

/// Interior front nodes a line needs before its ends may close it into a loop: fewer, and the
/// two ends are neighbours because the crack is young, not because it has gone round anything.
pub const LOOP_FRONT_NODES: usize = 3;

/// How the two ends of a line meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Meeting {
    /// Over an edge of the body's surface.
    Adjacent,
    /// Through this surface vertex, a neighbour of both, free of cracks.
    Via(u32),
}

/// How the ends of open line `line` meet, if they may close it into a loop (see
/// [`ends_meet`]); `e` is the crack-plane normal.
fn meeting(mesh: &CrackMesh, line: usize, e: DVec3) -> Option<Meeting> {
    let crack = mesh.lines().get(line)?;
    if crack.closed || crack.through || crack.nodes.len() < LOOP_FRONT_NODES + 2 {
        return None;
    }
    let (a, b) = (crack.nodes[0], crack.nodes[crack.nodes.len() - 1]);
    let pos = |v: u32| mesh.positions()[v as usize];
    let length: f64 = crack.nodes.windows(2).map(|w| pos(w[0]).distance(pos(w[1]))).sum();
    if length < 3.0 * pos(a).distance(pos(b)) {
        return None;
    }
    let surface_edge = |u: u32, v: u32| {
        let pair = mesh.edge_triangles(u, v);
        pair.len() == 2 && pair.iter().all(|&t| !mesh.is_wall(t))
    };
    if surface_edge(a, b) {
        return Some(Meeting::Adjacent);
    }
    // Through a common neighbour near the crack plane, the one nearest the ends' midpoint.
    let (ring_a, ring_b) = (mesh.ring(a)?, mesh.ring(b)?);
    let near_plane = |u: u32, w: u32| {
        let d = pos(w) - pos(u);
        e.dot(d).abs() <= MEET_PLANE_SIN * d.length()
    };
    let middle = pos(a).lerp(pos(b), 0.5);
    ring_a
        .iter()
        .copied()
        .filter(|&w| ring_b.contains(&w) && crack_at(mesh, w).is_none())
        .filter(|&w| surface_edge(a, w) && surface_edge(w, b) && near_plane(a, w) && near_plane(b, w))
        .min_by(|&v, &w| {
            pos(v)
                .distance_squared(middle)
                .total_cmp(&pos(w).distance_squared(middle))
                .then(v.cmp(&w))
        })
        .map(Meeting::Via)
}

/// How far off the crack plane (sine of the angle seen from an end) the vertex two meeting
/// ends close through may lie.
const MEET_PLANE_SIN: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Whether the two ends of open line `line` may close it into a loop across the plane of normal
/// `plane_normal`: the line has at least [`LOOP_FRONT_NODES`] interior nodes, its mouth is at
/// least three times as long as the ends are apart, and the ends are neighbours over an edge of
/// the body's surface (no crack wall on it) or share such a neighbour, free of cracks and
/// within 45 degrees of the crack plane from both.
pub fn ends_meet(mesh: &CrackMesh, line: usize, plane_normal: DVec3) -> bool {
    meeting(mesh, line, plane_normal.normalize_or_zero()).is_some()
}

/// Closes open line `line`, whose ends meet ([`ends_meet`]), into a loop, moving end `end` onto
/// the other (see the module docs); the slots are cut across the plane of unit normal
/// `plane_normal`, `thickness` (m) wide at the mouth, their new front nodes `depth` (m) inside.
/// Ends that meet through a common neighbour close through it: the moving end first extends to
/// it. Refuses, changing nothing, when the ends do not meet or a slot is refused.
pub fn close_loop(
    mesh: &mut CrackMesh,
    line: usize,
    end: End,
    plane_normal: DVec3,
    thickness: f64,
    depth: f64,
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    if line >= mesh.lines().len() {
        return Err(Refusal::BadInput("crack line (not in the mesh)"));
    }
    check_slot(plane_normal, thickness, depth)?;
    let e = plane_normal.normalize_or_zero();
    let Some(meeting) = meeting(mesh, line, e) else {
        return Err(Refusal::Crossings);
    };
    let nodes = mesh.lines()[line].nodes.clone();
    let n = nodes.len();
    // The moving end and its line neighbour, the other end and its neighbour.
    let (a, n1, b, m1) = match end {
        End::Start => (nodes[0], nodes[1], nodes[n - 1], nodes[n - 2]),
        End::Finish => (nodes[n - 1], nodes[n - 2], nodes[0], nodes[1]),
    };
    let saved = mesh.clone();
    let slots = |mesh: &mut CrackMesh| -> Result<(Option<u32>, u32, u32), Refusal> {
        // Through a common neighbour, the moving end first extends to it.
        let (a, n1, first) = match meeting {
            Meeting::Adjacent => (a, n1, None),
            Meeting::Via(w) => {
                let g0 = slot_between(mesh, a, n1, w, e, thickness, depth, line, bounds)?;
                (w, g0, Some(g0))
            }
        };
        let g = slot_between(mesh, a, n1, b, e, thickness, depth, line, bounds)?;
        let h = slot_between(mesh, b, m1, g, e, thickness, depth, line, bounds)?;
        Ok((first, g, h))
    };
    let (first, g, h) = match slots(mesh) {
        Ok(made) => made,
        Err(refusal) => {
            *mesh = saved;
            return Err(refusal);
        }
    };
    // The loop: the old interior nodes, then the new front nodes in order along it.
    let mut looped: Vec<u32> = Vec::with_capacity(n + 1);
    match end {
        End::Start => {
            looped.extend(first);
            looped.extend_from_slice(&nodes[1..n - 1]);
            looped.extend([h, g]);
        }
        End::Finish => {
            looped.extend_from_slice(&nodes[1..n - 1]);
            looped.extend(first);
            looped.extend([g, h]);
        }
    }
    for v in [a, b] {
        mesh.set_crack_node(v, false);
    }
    for v in first.into_iter().chain([g, h]) {
        mesh.set_crack_node(v, true);
        mesh.set_active(v, true);
    }
    let crack = &mut mesh.lines_mut()[line];
    crack.nodes = looped;
    crack.closed = true;
    crack.blocked = [true; 2];
    Ok(())
}

/// Slots surface vertex `v` between its ring neighbours `inner` (a front node, whose slot's
/// lips flank it in the ring) and `other`, as an end extends; returns the new front node.
#[allow(clippy::too_many_arguments)]
fn slot_between(
    mesh: &mut CrackMesh,
    v: u32,
    inner: u32,
    other: u32,
    e: DVec3,
    thickness: f64,
    depth: f64,
    line: usize,
    bounds: AngleBounds,
) -> Result<u32, Refusal> {
    let ring = mesh.ring(v).ok_or(Refusal::Geometry)?;
    let m = ring.len();
    let i = ring.iter().position(|&r| r == inner).ok_or(Refusal::Geometry)?;
    if !ring.contains(&other) {
        return Err(Refusal::Geometry);
    }
    // The lips either side of `inner` lie half a thickness either side of the crack: the arc
    // counter-clockwise from `inner` starts with the first.
    let pos = |u: u32| mesh.positions()[u as usize];
    let (lip1, lip2) = (ring[(i + 1) % m], ring[(i + m - 1) % m]);
    slot(
        mesh,
        Slot {
            vertex: v,
            first: inner,
            second: other,
            first_arc_positive: e.dot(pos(lip1) - pos(lip2)) > 0.0,
            plane_normal: e,
            thickness,
            depth,
            line,
            toward: None,
        },
        bounds,
    )
}

/// The width of the ligament closed loop `line` encircles (m): four times the area its nodes
/// enclose (the length of their vector area) over their perimeter (see the module docs).
/// `None` for a line that is not a closed loop with nodes.
pub fn loop_width(mesh: &CrackMesh, line: usize) -> Option<f64> {
    let crack = mesh.lines().get(line)?;
    if !crack.closed || crack.through || crack.nodes.len() < 3 {
        return None;
    }
    let points: Vec<DVec3> = crack.nodes.iter().map(|&v| mesh.positions()[v as usize]).collect();
    let centre = points.iter().sum::<DVec3>() / points.len() as f64;
    let (mut area, mut perimeter) = (DVec3::ZERO, 0.0);
    for (k, &p) in points.iter().enumerate() {
        let q = points[(k + 1) % points.len()];
        area += 0.5 * (p - centre).cross(q - centre);
        perimeter += p.distance(q);
    }
    (perimeter > 0.0).then(|| 4.0 * area.length() / perimeter)
}

/// Whether closed loop `line` has stopped (no node active) round a ligament no wider than
/// `reach` (m), see [`loop_width`].
pub fn loop_within(mesh: &CrackMesh, line: usize, reach: f64) -> bool {
    let Some(width) = loop_width(mesh, line) else {
        return false;
    };
    width <= reach && mesh.lines()[line].nodes.iter().all(|&v| !mesh.is_active(v))
}

/// Cuts closed loop `line` through its ligament (see the module docs): `reach` (m) is the widest
/// ligament cut, `thickness` (m) the gap left between the two caps.
pub fn cut_loop(
    mesh: &mut CrackMesh,
    line: usize,
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    let crack = cut_line(mesh, line, reach, thickness)?;
    if !crack.closed || crack.through || !loop_within(mesh, line, reach) {
        return Err(Refusal::NotThrough);
    }
    let nodes = crack.nodes.clone();
    let e = crack.plane_normal;
    let n = nodes.len();
    let barrier: HashSet<(u32, u32)> = (0..n).map(|k| edge_key(nodes[k], nodes[(k + 1) % n])).collect();
    let sides = Sides::of(mesh, &barrier, (nodes[0], nodes[1]), e)?;
    let half = e * (0.5 * thickness);
    // Each node goes onto the mid-plane of its two walls (a node that wandered off its crack's
    // plane would otherwise put a copy beyond the other side's wall), then half the thickness
    // to each side.
    let slots = mesh.triangle_slots();
    let is_node: HashSet<u32> = nodes.iter().copied().collect();
    let mut on_plane: Vec<DVec3> = Vec::with_capacity(n);
    for &v in &nodes {
        let x = mesh.positions()[v as usize];
        let mut sums = [(0.0, 0usize); 2];
        for &t in mesh.incident(v) {
            let sum = &mut sums[usize::from(!sides.is_plus(t))];
            for w in slots[t as usize].into_iter().filter(|w| !is_node.contains(w)) {
                sum.0 += e.dot(mesh.positions()[w as usize]);
                sum.1 += 1;
            }
        }
        let mid = match sums {
            [(p, np), (m, nm)] if np > 0 && nm > 0 => 0.5 * (p / np as f64 + m / nm as f64),
            _ => e.dot(x),
        };
        on_plane.push(x - e * (e.dot(x) - mid));
    }
    let centre = on_plane.iter().sum::<DVec3>() / n as f64;
    let mut copies: HashMap<u32, [u32; 2]> = HashMap::with_capacity(n);
    for (&v, &on) in nodes.iter().zip(&on_plane) {
        copies.insert(v, [mesh.add_vertex(on + half), mesh.add_vertex(on - half)]);
    }
    let caps = [mesh.add_vertex(centre + half), mesh.add_vertex(centre - half)];
    let copy = |v: u32, on_plus: bool| copies.get(&v).map_or(v, |c| c[usize::from(!on_plus)]);
    let mut removed: Vec<u32> = nodes.iter().flat_map(|&v| mesh.incident(v).iter().copied()).collect();
    removed.sort_unstable();
    removed.dedup();
    let slots = mesh.triangle_slots();
    let mut added: Vec<[u32; 3]> = Vec::with_capacity(removed.len() + 2 * n);
    let mut walls: Vec<Option<usize>> = Vec::with_capacity(removed.len() + 2 * n);
    for &t in &removed {
        let on_plus = sides.is_plus(t);
        added.push(slots[t as usize].map(|v| copy(v, on_plus)));
        walls.push(mesh.wall_of(t));
    }
    // Each side's cap runs each front segment the other way round from that side's wall.
    for k in 0..n {
        let (u, v) = (nodes[k], nodes[(k + 1) % n]);
        for (t, on_plus) in mesh.edge_triangles(u, v).into_iter().map(|t| (t, sides.is_plus(t))) {
            let forward = mesh.directed_edge_triangle(u, v) == Some(t);
            let (p, q) = (copy(u, on_plus), copy(v, on_plus));
            let centre = caps[usize::from(!on_plus)];
            added.push(if forward { [q, p, centre] } else { [p, q, centre] });
            walls.push(Some(line));
        }
    }
    commit_cut(mesh, line, &removed, &added, &walls, bounds)
}
