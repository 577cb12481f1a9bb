//! Breaking out through the far surface pair by pair (Zhu 2015 section 6.3, Fig. 13): where two
//! or more neighbouring front nodes of an open line have stopped within reach of the body's
//! surface ahead of them, the ligament between that run of the front and the surface is cut,
//! while the rest of the front runs on. A crack through a thin wall reaches the far face in the
//! middle of its front long before its ends; cut there, it becomes a crack through the wall
//! whose two fronts run on sideways, each from one face to the other, until they are cut
//! through at the wall's edge ([`super::through`]) and the wall falls apart.
//!
//! For the run `f_i .. f_j` of line `[a, .., f_i, .., f_j, .., b]` (every node of the run
//! inactive and within reach of the surface):
//! 1. A surface vertex `s_i` is made at the far point of `f_i` (its nearest point on the body's
//!    surface ahead of it): a free corner of that triangle within a quarter of an edge, else a
//!    split of the triangle's edge nearest to it, slid onto the crack plane through `f_i`. The
//!    same for `s_j`. A run beside an end of the line whose far point is within
//!    `END_REACH` reaches of that end, or whose new end would be the line's end or its
//!    neighbour over an edge of the surface, takes the end in instead: the end lies on the
//!    surface the run reached, and the cut carries the mouth on along it (a new end beside the
//!    old one would make the surface edge between them a front segment too).
//! 2. The ligament between the run and the surface is cut along a path from `s_i` to `s_j`
//!    ([`super::through`], whose module docs give the path, the sides and the copies): every
//!    path vertex between `s_i` and `s_j` opens into two lips, while `s_i` and `s_j` stay single,
//!    the new ends where the mouth on the far surface closes.
//! 3. The line splits in two: `[a, .., f_i-1, s_i]` keeps its index and `[s_j, f_j+1, .., b]`
//!    is new, in the same plane; each wall triangle goes to the line whose nodes it is nearer
//!    across the walls (a breadth-first flood from both lines' nodes at once), and both lines'
//!    growth records start afresh. A run that took an end in leaves one line, with a new end;
//!    a run from end to end is the whole line's cut. A run that starts at the first interior
//!    node leaves `[a, s_i]`: a line of two ends whose front is the chord between them, through
//!    the wall, which runs on as its ends extend (`extend`) and is cut through as any line is
//!    (`through`).
//!
//! The whole change is checked before anything moves; a refusal leaves the crack as it was
//! (the path's edge splits and slides excepted, which change no shape), and a refused run is not
//! tried again while it is the same run. Volume: the new mouth on the far surface is a
//! thickness wide over the ligament cut, as the whole line's cut is.

use std::collections::VecDeque;

use glam::DVec3;
use hashbrown::HashMap;
use smallvec::SmallVec;

use super::mesh::{CrackLine, CrackMesh};
use super::open::Refusal;
use super::ops::split_edge;
use super::through::{
    cut_ligament, cut_line, cut_through_locally, far_hit, far_point, is_surface_edge, local_normal, settle, uncracked,
};
use super::validate::AngleBounds;

/// A corner of the far point's triangle closer to it than this fraction of the triangle's mean
/// edge is the new end, rather than a split of an edge.
const CORNER_FRACTION: f64 = 0.25;

/// How near an end of the line (in reaches) the far point of the run's node beside it must be
/// for the run to take the end in.
const END_REACH: f64 = 3.0;

/// Where a split of an edge for a new end may fall along it (fraction from either end).
const SPLIT_MARGIN: f64 = 0.15;

/// The first run of two or more neighbouring interior front nodes of open line `line` that have
/// all stopped with the body's surface within `reach` (m) ahead of them, and that has not been
/// refused before: the indices of its first and last node in the line. A run that starts (or
/// ends) next to an end of the line takes the end in when the run's first far point is within
/// `END_REACH` reaches of it: the end is on the surface the run reached, and the cut carries
/// the mouth on along that surface (a new end beside the old one would leave an edge of the
/// surface between them that is also a front segment).
pub fn reached_run(mesh: &CrackMesh, line: usize, reach: f64) -> Option<(usize, usize)> {
    let crack = mesh.lines().get(line)?;
    if crack.closed || crack.through || crack.nodes.len() < 4 {
        return None;
    }
    let n = crack.nodes.len();
    let reached = |k: usize| {
        let f = crack.nodes[k];
        !mesh.is_active(f) && far_point(mesh, f, reach).is_some()
    };
    let mut k = 1;
    while k < n - 1 {
        if !reached(k) {
            k += 1;
            continue;
        }
        let start = k;
        while k + 1 < n - 1 && reached(k + 1) {
            k += 1;
        }
        let near_end = |node: usize, end: usize| {
            far_point(mesh, crack.nodes[node], reach)
                .is_some_and(|q| q.distance(mesh.positions()[crack.nodes[end] as usize]) <= END_REACH * reach)
        };
        let first = if start == 1 && near_end(1, 0) { 0 } else { start };
        let last = if k == n - 2 && near_end(n - 2, n - 1) { n - 1 } else { k };
        if k > start && !mesh.run_refused(crack.nodes[first], crack.nodes[last]) {
            return Some((first, last));
        }
        k += 1;
    }
    None
}

/// Breaks line `line` out through the far surface over its run of front nodes `run` (first
/// and last index in the line, at least two interior nodes, an end only where it lies on the
/// surface the run reached; see the module docs), with a mouth `thickness` (m) wide, every
/// interior node of the run within `reach` (m) of the surface. Returns the index of the line
/// holding the front after the run: a new one when the run had fronts on both sides, else
/// `line`. A run from end to end is the whole line's cut ([`cut_through_locally`]). A refused run is
/// remembered.
pub fn break_out(
    mesh: &mut CrackMesh,
    line: usize,
    run: (usize, usize),
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<usize, Refusal> {
    let crack = cut_line(mesh, line, reach, thickness)?;
    let (i, j) = run;
    let n = crack.nodes.len();
    if crack.closed || crack.through || !(i < j && j < n && j - i >= 1 + usize::from(i == 0) + usize::from(j == n - 1))
    {
        return Err(Refusal::NotThrough);
    }
    let (first, last) = (crack.nodes[i], crack.nodes[j]);
    let result = if i == 0 && j == n - 1 {
        cut_through_locally(mesh, line, reach, thickness, bounds).map(|()| line)
    } else {
        cut_run(mesh, line, run, reach, thickness, bounds)
    };
    if result.is_err() {
        mesh.refuse_run(first, last);
    }
    result
}

/// The cut of [`break_out`] for a run that is not the whole line: its new ends made, the
/// ligament cut and the line split.
fn cut_run(
    mesh: &mut CrackMesh,
    line: usize,
    (mut i, mut j): (usize, usize),
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<usize, Refusal> {
    let crack = &mesh.lines()[line];
    let n = crack.nodes.len();
    let inner = &crack.nodes[i.max(1)..=j.min(n - 2)];
    let e = local_normal(mesh, inner, crack.plane_normal);
    let (a, b) = (crack.nodes[0], crack.nodes[n - 1]);
    let (first, last) = (crack.nodes[i], crack.nodes[j]);
    // A new end on the line's own end, or beside it over an edge of the surface, would make
    // that edge a front segment too: the run takes the end in instead.
    let beside = |mesh: &CrackMesh, s: u32, end: u32| s == end || is_surface_edge(mesh, s, end);
    let s_i = if i == 0 {
        first
    } else {
        let s = far_vertex(mesh, first, reach, e, bounds).ok_or(Refusal::Geometry)?;
        if i == 1 && beside(mesh, s, a) {
            i = 0;
            a
        } else {
            s
        }
    };
    let s_j = if j == n - 1 {
        last
    } else {
        let s = far_vertex(mesh, last, reach, e, bounds).ok_or(Refusal::Geometry)?;
        if j == n - 2 && beside(mesh, s, b) {
            j = n - 1;
            b
        } else {
            s
        }
    };
    if i == 0 && j == n - 1 {
        return cut_through_locally(mesh, line, reach, thickness, bounds).map(|()| line);
    }
    cut_ligament(mesh, line, (i, j), (s_i, s_j), reach, thickness, bounds)?;
    Ok(split_line(mesh, line, (i, j), s_i, s_j))
}

/// A surface vertex at front node `f`'s far point (within `reach`, m): a free corner of the
/// surface triangle it lies on within [`CORNER_FRACTION`] of an edge, else a split of that
/// triangle's edge nearest it, else its nearest free corner; slid onto the crack plane of unit
/// normal `e` through `f`. `None` when there is none free of cracks.
fn far_vertex(mesh: &mut CrackMesh, f: u32, reach: f64, e: DVec3, bounds: AngleBounds) -> Option<u32> {
    let (q, t) = far_hit(mesh, f, reach)?;
    let tri = mesh.triangle_slots()[t as usize];
    let pos = |mesh: &CrackMesh, v: u32| mesh.positions()[v as usize];
    let edge = (0..3)
        .map(|k| pos(mesh, tri[k]).distance(pos(mesh, tri[(k + 1) % 3])))
        .sum::<f64>()
        / 3.0;
    let nearest = tri.iter().copied().filter(|&v| uncracked(mesh, v)).min_by(|&a, &b| {
        pos(mesh, a)
            .distance(q)
            .total_cmp(&pos(mesh, b).distance(q))
            .then(a.cmp(&b))
    });
    let v = match nearest {
        Some(c) if pos(mesh, c).distance(q) <= CORNER_FRACTION * edge => c,
        _ => {
            let mut sides: SmallVec<[(f64, u32, u32, f64); 3]> = (0..3)
                .map(|k| {
                    let (a, b) = (tri[k], tri[(k + 1) % 3]);
                    let (xa, xb) = (pos(mesh, a), pos(mesh, b));
                    let l =
                        ((q - xa).dot(xb - xa) / (xb - xa).length_squared()).clamp(SPLIT_MARGIN, 1.0 - SPLIT_MARGIN);
                    (xa.lerp(xb, l).distance(q), a, b, l)
                })
                .collect();
            sides.sort_by(|x, y| x.0.total_cmp(&y.0));
            let (_, a, b, l) = sides[0];
            let split = (is_surface_edge(mesh, a, b) && uncracked(mesh, a) && uncracked(mesh, b))
                .then(|| {
                    let at = pos(mesh, a).lerp(pos(mesh, b), l);
                    split_edge(mesh, a, b, at, bounds)
                })
                .flatten();
            split.or(nearest)?
        }
    };
    let on = pos(mesh, f);
    settle(mesh, v, on, e, bounds);
    Some(v)
}

/// Splits line `line` after its run `(i, j)` was cut: `[.., f_i-1, s_i]` keeps the index,
/// `[s_j, f_j+1, ..]` becomes a new line in the same plane, and each of the line's wall
/// triangles goes to the nearer of the two across the walls. Returns the new line's index.
fn split_line(mesh: &mut CrackMesh, line: usize, (i, j): (usize, usize), s_i: u32, s_j: u32) -> usize {
    let crack = mesh.lines()[line].clone();
    let n = crack.nodes.len();
    for &f in &crack.nodes[i..=j] {
        mesh.set_crack_node(f, false);
    }
    if i == 0 || j == n - 1 {
        // The mouth ran on along the surface from an end: one line, with a new end.
        let kept = &mut mesh.lines_mut()[line];
        kept.broken_out = true;
        if i == 0 {
            kept.nodes.drain(..=j);
            kept.nodes.insert(0, s_j);
            kept.blocked[0] = false;
        } else {
            kept.nodes.truncate(i);
            kept.nodes.push(s_i);
            kept.blocked[1] = false;
        }
        let end = if i == 0 { s_j } else { s_i };
        mesh.set_crack_node(end, true);
        return line;
    }
    let mut before: Vec<u32> = crack.nodes[..i].to_vec();
    before.push(s_i);
    let mut after = vec![s_j];
    after.extend_from_slice(&crack.nodes[j + 1..]);
    let new = mesh.lines().len();
    mesh.add_line(CrackLine {
        nodes: after,
        closed: false,
        blocked: [false, crack.blocked[1]],
        broken_out: true,
        ..crack.clone()
    });
    mesh.set_crack_node(s_i, true);
    let kept = &mut mesh.lines_mut()[line];
    kept.nodes = before;
    kept.blocked = [crack.blocked[0], false];
    kept.broken_out = true;
    share_walls(mesh, line, new);
    mesh.restart_growth(line);
    mesh.restart_growth(new);
    new
}

/// Gives each wall triangle of line `line` to `line` or to `other`, whichever's nodes it is
/// nearer across the walls: a breadth-first flood over shared edges from the triangles at each
/// line's nodes, `line`'s first at equal distance.
fn share_walls(mesh: &mut CrackMesh, line: usize, other: usize) {
    let walls: Vec<u32> = mesh
        .live_triangles()
        .filter(|&t| mesh.wall_of(t) == Some(line))
        .collect();
    let mut owner: HashMap<u32, usize> = HashMap::new();
    let mut queue = VecDeque::new();
    for l in [line, other] {
        let mut seeds: Vec<u32> = mesh.lines()[l]
            .nodes
            .iter()
            .flat_map(|&v| mesh.incident(v).iter().copied())
            .filter(|&t| mesh.wall_of(t) == Some(line))
            .collect();
        seeds.sort_unstable();
        for t in seeds {
            if !owner.contains_key(&t) {
                owner.insert(t, l);
                queue.push_back(t);
            }
        }
    }
    while let Some(t) = queue.pop_front() {
        let l = owner[&t];
        let tri = mesh.triangle_slots()[t as usize];
        for k in 0..3 {
            for o in mesh.edge_triangles(tri[k], tri[(k + 1) % 3]) {
                if mesh.wall_of(o) == Some(line) && !owner.contains_key(&o) {
                    owner.insert(o, l);
                    queue.push_back(o);
                }
            }
        }
    }
    for t in walls {
        if owner.get(&t) == Some(&other) {
            mesh.set_wall(t, Some(other));
        }
    }
}
