//! Extending a crack line at one of its ends (Zhu 2015 section 6.3, Fig. 10): the mouth grows
//! along the surface, the old end sinks into the material as a front node.
//!
//! The end `a` sits on the surface where the two lips of the mouth meet; its line neighbour `n1`
//! is a front node inside. The crack plane through `a` cuts the surface part of `a`'s ring (the
//! arc from one lip round to the other, away from the slot) at a point `c`: a neighbour within
//! the snap angle, or a split link edge. Then `a` is slotted exactly as a new crack opens, with
//! `c` and `n1` as the two crossings: `a` becomes two lip vertices, a new front node `g` goes in
//! below it, and the line becomes `[c, g, n1, ...]` with `c` the new, inactive end and `g` active.
//! Of several crossings the one making the largest angle with the line (`a` to `n1`) is taken,
//! so the crack does not turn back on itself ("we choose the one which spans a larger angle with
//! the crack line to avoid an inverting crack").
//!
//! At the end of a line that broke out through a wall (`breakout`) the line leaves `a` across the
//! wall, its front running from one face to the other, and a front node straight below `a` lies on
//! the segment to `n1` (when `n1` is nearly straight below: the slot's wall triangles are flat, and
//! it is refused) or behind the front, in the slot already cut (when the front leans forward from
//! the face, `n1` ahead of `a`). There the front node goes in halfway between the line and `c`
//! instead, into the wedge of material between the face and the front; where that wedge is thinner
//! than [`LEAST_DIP`] (a sliver the next sub-step could not cut) the end does not extend. On the
//! hollow sphere of `examples/bem_plate_and_shell.rs` the fronts through the wall lean forward from
//! the faces (`n1` within 40 degrees of the direction to `c` at half the ends); with the halfway
//! node only for `n1` within 30 degrees of straight below, 51 such ends stopped for good and the
//! shell lost only chips or held at 5, 6 and 7 m/s; with it, it breaks into two or three large
//! pieces at each (50 and 47 %, 56 and 38 %, 74, 11 and 8 % of its volume). (Tried for every line,
//! it let the ends of the cracks across a notched bar and a pressed block extend round the
//! section's sides where they had stopped, and the cut through at the end was then refused:
//! measured, `tests/bem_crack.rs`.) An end of such a line that reached a sharp edge of the body,
//! the wall's rim, stops there ([`Refusal::AtRim`]): turning round the rim would fold the front
//! back over the rim's face, and the line is cut through along its front instead (`through`).
//!
//! The side of each arc is read from the lips, which lie half a thickness either side of the
//! crack: the plane through `a` may miss the plane the slot was cut along by more than that.
//!
//! An end whose crossing belongs to a crack (a node or a wall vertex, this line's or another's)
//! is refused with [`Refusal::MetCrack`]: the caller decides (see `track`: that end stops there
//! while both cracks run on, and the pieces they cut off together are found by `separate`).

use glam::DVec3;
use smallvec::SmallVec;

use super::mesh::CrackMesh;
use super::open::{Refusal, SNAP_DEGREES, Slot, slot};
use super::ops::{FEATURE_DEGREES, sharp_neighbours, split_edge};
use super::validate::AngleBounds;

/// Which end of an open crack line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The line's first node.
    Start,
    /// The line's last node.
    Finish,
}

/// Extends line `line` at `end` across the plane of normal `plane_normal` (unit), with mouth
/// width `thickness` and the new front node `depth` (m) inside. Returns the new end vertex.
pub fn extend_end(
    mesh: &mut CrackMesh,
    line: usize,
    end: End,
    plane_normal: DVec3,
    thickness: f64,
    depth: f64,
    bounds: AngleBounds,
) -> Result<u32, Refusal> {
    let Some(crack_line) = mesh.lines().get(line) else {
        return Err(Refusal::BadInput("crack line (not in the mesh)"));
    };
    check_slot(plane_normal, thickness, depth)?;
    let broken_out = crack_line.broken_out;
    let nodes = &crack_line.nodes;
    if crack_line.closed || nodes.len() < 2 {
        return Err(Refusal::NotASurfaceVertex);
    }
    let (a, n1) = match end {
        End::Start => (nodes[0], nodes[1]),
        End::Finish => (nodes[nodes.len() - 1], nodes[nodes.len() - 2]),
    };
    if broken_out && !sharp_neighbours(mesh, a, FEATURE_DEGREES, true).is_empty() {
        return Err(Refusal::AtRim);
    }
    let e = plane_normal.normalize_or_zero();
    let ring = mesh.ring(a).ok_or(Refusal::Geometry)?;
    let i1 = ring.iter().position(|&r| r == n1).ok_or(Refusal::Geometry)?;
    let arc = surface_arc(mesh, a, &ring, i1).ok_or(Refusal::Geometry)?;
    let (lip1, lip2) = (arc[0], arc[arc.len() - 1]);
    let x = mesh.positions()[a as usize];
    let pos = |v: u32| mesh.positions()[v as usize];
    let lip1_positive = e.dot(pos(lip1) - pos(lip2)) > 0.0;
    let snap = SNAP_DEGREES.to_radians().sin();
    let side = |k: usize| -> i32 {
        if k == 0 {
            return if lip1_positive { 1 } else { -1 };
        }
        if k == arc.len() - 1 {
            return if lip1_positive { -1 } else { 1 };
        }
        let d = pos(arc[k]) - x;
        let s = e.dot(d);
        if s.abs() <= snap * d.length() {
            0
        } else if s > 0.0 {
            1
        } else {
            -1
        }
    };
    // Crossings along the arc: vertices on the plane, or edges between the two sides.
    let back = (pos(n1) - x).normalize_or_zero();
    let mut best: Option<(f64, usize, Option<f64>)> = None;
    for k in 0..arc.len() - 1 {
        let (s0, s1) = (side(k), side(k + 1));
        let crossing = if s0 == 0 {
            Some((pos(arc[k]), None))
        } else if s0 * s1 < 0 {
            let (d0, d1) = (e.dot(pos(arc[k]) - x), e.dot(pos(arc[k + 1]) - x));
            let l = if k == 0 || k + 1 == arc.len() - 1 {
                0.5
            } else {
                (d0 / (d0 - d1)).clamp(0.0, 1.0)
            };
            Some((pos(arc[k]).lerp(pos(arc[k + 1]), l), Some(l)))
        } else {
            None
        };
        if let Some((at, lambda)) = crossing {
            let turn = back.dot((at - x).normalize_or_zero());
            if best.is_none_or(|(b, _, _)| turn < b) {
                best = Some((turn, k, lambda));
            }
        }
    }
    let (_, k, lambda) = best.ok_or(Refusal::Crossings)?;
    let c = match lambda {
        None => arc[k],
        Some(l) => {
            let at = pos(arc[k]).lerp(pos(arc[k + 1]), l);
            split_edge(mesh, arc[k], arc[k + 1], at, bounds).ok_or(Refusal::Geometry)?
        }
    };
    if let Some(met) = crack_at(mesh, c) {
        return Err(Refusal::MetCrack(met));
    }
    // The arc from n1 counter-clockwise to c starts with lip1.
    let cut = |toward: Option<DVec3>| Slot {
        vertex: a,
        first: n1,
        second: c,
        first_arc_positive: lip1_positive,
        plane_normal: e,
        thickness,
        depth,
        line,
        toward,
    };
    let g = match slot(mesh, cut(None), bounds) {
        Err(Refusal::Geometry) if broken_out => {
            // A crack through a wall, whose front runs from one face to the other: the node
            // below the end lies on the segment to n1 or behind the front. It goes in halfway
            // between the line and the crossing instead, ahead of the front.
            let toward = halfway_in(mesh, a, n1, c, e).ok_or(Refusal::Geometry)?;
            slot(mesh, cut(Some(toward)), bounds)?
        }
        other => other?,
    };
    let line_nodes = &mut mesh.lines_mut()[line].nodes;
    match end {
        End::Start => {
            line_nodes[0] = g;
            line_nodes.insert(0, c);
        }
        End::Finish => {
            let last = line_nodes.len() - 1;
            line_nodes[last] = g;
            line_nodes.push(c);
        }
    }
    mesh.set_crack_node(a, false);
    mesh.set_crack_node(g, true);
    mesh.set_crack_node(c, true);
    mesh.set_active(g, true);
    Ok(c)
}

/// The unit direction, in the plane of unit normal `e`, halving the angle at end `a` between
/// its line neighbour `n1` and the crossing `c`, where it dips at least [`LEAST_DIP`] into the
/// material; else `None`.
fn halfway_in(mesh: &CrackMesh, a: u32, n1: u32, c: u32, e: DVec3) -> Option<DVec3> {
    let pos = |v: u32| mesh.positions()[v as usize];
    let normal = mesh.surface_normal(a);
    let half = (pos(n1) - pos(a)).normalize_or_zero() + (pos(c) - pos(a)).normalize_or_zero();
    let toward = (half - e * e.dot(half)).normalize_or_zero();
    (-toward.dot(normal) >= LEAST_DIP).then_some(toward)
}

/// The sine of the least angle (about 6 degrees) below the surface's tangent plane at which the
/// halfway front node of an extension goes in. A thinner wedge between the face and the front
/// is a sliver over the crack: measured on the plate of `tests/breakout.rs`, a node 0.2 mm under
/// the face (n1 7 degrees below it) left front nodes stranded there, and the line folded.
pub const LEAST_DIP: f64 = 0.1;

/// The surface arc of end `a`'s ring (`ring`, `n1` at index `i1`): the neighbours from the lip
/// after `n1` round to the lip before it, over `a`'s triangles of the body's surface. At an end
/// an opening or an extension made, one wall triangle lies either side of `n1`; at an end a
/// break-out made (`breakout`), a whole fan of each wall. `None` unless the surface triangles
/// run as one arc with walls either side.
fn surface_arc(mesh: &CrackMesh, a: u32, ring: &[u32], i1: usize) -> Option<SmallVec<[u32; 8]>> {
    let m = ring.len();
    // Triangle k of the ring is (a, ring[k], ring[k + 1]).
    let wall = |k: usize| {
        mesh.directed_edge_triangle(a, ring[k % m])
            .is_none_or(|t| mesh.is_wall(t))
    };
    if !wall(i1) || !wall(i1 + m - 1) {
        return None;
    }
    let start = (1..m).find(|&k| !wall(i1 + k))?;
    let end = (start..m).take_while(|&k| !wall(i1 + k)).last()?;
    if (end + 1..m).any(|k| !wall(i1 + k)) {
        return None;
    }
    let arc: SmallVec<[u32; 8]> = (start..=end + 1).map(|k| ring[(i1 + k) % m]).collect();
    (arc.len() >= 2).then_some(arc)
}

/// Refuses, naming it, a crack-plane normal that is not finite and non-zero, or a mouth width
/// `thickness` or front depth `depth` that is not finite and positive (m): what every slot cut
/// at an end takes.
pub(crate) fn check_slot(plane_normal: DVec3, thickness: f64, depth: f64) -> Result<(), Refusal> {
    if !(plane_normal.is_finite() && plane_normal.length_squared() > 0.0) {
        return Err(Refusal::BadInput("crack plane normal (must be finite and non-zero)"));
    }
    if !(thickness.is_finite() && thickness > 0.0 && depth.is_finite() && depth > 0.0) {
        return Err(Refusal::BadInput(
            "crack thickness or front depth (must be finite and > 0 m)",
        ));
    }
    Ok(())
}

/// The crack line vertex `v` belongs to, as one of its nodes or as a vertex of its walls (its
/// mouth included), if any.
pub fn crack_at(mesh: &CrackMesh, v: u32) -> Option<usize> {
    if mesh.is_crack_node(v) {
        return mesh.lines().iter().position(|l| l.nodes.contains(&v));
    }
    mesh.incident(v).iter().find_map(|&t| mesh.wall_of(t))
}
