//! Moving crack fronts into the material (Zhu 2015 Algorithm 3, eq. 9).
//!
//! Each active front node `f` moves with velocity `v = alpha * unit(h - proj_e(h))`:
//! - `h` is the front's normal at `f` within the crack plane, taken across the chord between its
//!   two line neighbours `p` and `q` (`e x (q - p)`, signed into the material). On a smooth front
//!   this is the paper's bisector; on a zig-zag of nodes the bisector points the dents backwards
//!   and the tips forwards and grows the zig-zag, while the chord normal moves them together;
//! - `e` is the largest principal direction of the stress at `f`, so the node moves within the
//!   plane the Rankine criterion opens;
//! - `alpha` is the paper's "principal eigenvalue times a resolution control times a user
//!   factor (0.5)": here one sub-step moves `speed * L * min(sigma_1 / sigma_p, 2)`, with `L`
//!   the target edge length and `sigma_p` the propagation threshold.
//!
//! "We also check the direction ... to enforce movement into the material": the reference for
//! "into" is against the summed normals of `f`'s triangles (the two walls' normals nearly cancel
//! and what is left points out through the slot); `h` is used only when it agrees with it. A
//! target outside the material (winding number of the surface below one half) is refused, so a
//! node near the mouth never escapes through its own slot.
//!
//! A node whose principal stress has fallen below `sigma_p` stops (the crack arrests there). A
//! node whose step would reach the surface stops `gap` short of it and is marked inactive, with
//! the triangle it reached recorded for the cut-through that follows (Zhu Fig. 13). A move that
//! would break the mesh's angle bounds or make it intersect itself is halved once; if that is
//! refused too the node stops, so every crack stops in finitely many sub-steps.
//!
//! Known limit: on fine meshes (cells under about a fiftieth of the body) the front made of
//! these markers grows unstable after some ten sub-steps: its length, and the number of active
//! nodes, grow by about a quarter per sub-step while the mesh stays valid. Coarse fronts (the
//! tests) end cleanly. A front advanced as a curve in the crack plane, reparametrised by arc
//! length each sub-step, is the planned cure.

use glam::DVec3;

use super::check::try_move;
use super::mesh::CrackMesh;
use super::validate::{AngleBounds, winding_number};

/// How crack fronts advance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrontSettings {
    /// Target edge length `L` (m): the scale of one sub-step.
    pub target_edge: f64,
    /// Fraction of `L` a node at the propagation threshold moves per sub-step (Zhu: 0.5).
    pub speed: f64,
    /// Propagation threshold `sigma_p` (Pa): below it a front node arrests.
    pub threshold: f64,
    /// Distance (m) a node stops short of the surface it reaches.
    pub gap: f64,
    /// Angles every move keeps.
    pub bounds: AngleBounds,
}

/// The stress at the front: the largest principal stress (Pa) and its unit direction at a
/// material point (m, material frame).
pub type FrontStress<'a> = &'a dyn Fn(DVec3) -> (f64, DVec3);

/// What one sub-step did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrontStep {
    /// Nodes that moved.
    pub moved: usize,
    /// Nodes that stopped because the stress fell below the threshold.
    pub arrested: usize,
    /// Nodes that reached the surface, with the triangle each reached.
    pub reached: Vec<(u32, u32)>,
    /// Nodes stopped because their move was refused by the mesh checks (or left the
    /// material), even at half the step.
    pub refused: usize,
}

/// Advances every active node of every line once (lines and nodes in order).
pub fn advance_fronts(mesh: &mut CrackMesh, stress: FrontStress<'_>, settings: &FrontSettings) -> FrontStep {
    let mut step = FrontStep::default();
    for l in 0..mesh.lines().len() {
        let line = mesh.lines()[l].clone();
        let n = line.nodes.len();
        for i in 0..n {
            let f = line.nodes[i];
            if !mesh.is_active(f) || (!line.closed && (i == 0 || i + 1 == n)) {
                continue;
            }
            let x = mesh.positions()[f as usize];
            let (sigma, direction) = stress(x);
            if !(sigma >= settings.threshold) {
                mesh.set_active(f, false);
                step.arrested += 1;
                continue;
            }
            let e = if direction.dot(line.plane_normal) < 0.0 {
                -direction
            } else {
                direction
            };
            let (p, q) = (line.nodes[(i + n - 1) % n], line.nodes[(i + 1) % n]);
            let Some(dir) = heading(mesh, f, p, q, e) else {
                mesh.set_active(f, false);
                step.refused += 1;
                continue;
            };
            let length = settings.speed * settings.target_edge * (sigma / settings.threshold).min(2.0);
            let hit = first_hit(mesh, f, x, dir, length + settings.gap);
            let (target, reached) = match hit {
                Some((distance, t)) => (x + dir * (distance - settings.gap).max(0.0), Some(t)),
                None => (x + dir * length, None),
            };
            // A front only moves through material: never out through its own slot.
            let moved = (inside(mesh, target) && try_move(mesh, f, target, settings.bounds, None))
                || (inside(mesh, x.lerp(target, 0.5)) && try_move(mesh, f, x.lerp(target, 0.5), settings.bounds, None));
            if moved {
                step.moved += 1;
            } else {
                // A node that can move neither its step nor half of it stops, so every crack
                // stops in finitely many sub-steps.
                mesh.set_active(f, false);
                step.refused += 1;
            }
            if let Some(t) = reached {
                if moved {
                    mesh.set_active(f, false);
                    step.reached.push((f, t));
                }
            }
        }
    }
    step
}

/// The unit direction front node `f` (line neighbours `p`, `q`) moves in, within the plane of
/// normal `e`, or `None` if it cannot tell which way is into the material.
///
/// Into the material is against the area-weighted normal of `f`'s triangles: at a front the two
/// walls' outward normals nearly cancel, and what is left points back out through the slot.
fn heading(mesh: &CrackMesh, f: u32, p: u32, q: u32, e: DVec3) -> Option<DVec3> {
    let in_plane = |d: DVec3| (d - e * e.dot(d)).normalize_or_zero();
    let outward: DVec3 = mesh
        .incident(f)
        .iter()
        .map(|&t| {
            let [a, b, c] = mesh.corners(t);
            (b - a).cross(c - a)
        })
        .sum();
    let inward = in_plane(-outward);
    let pos = |v: u32| mesh.positions()[v as usize];
    // The front's normal within the crack plane: across the chord between the neighbours. On a
    // smooth front it is the bisector; on a zig-zag it does not amplify the zig-zag, as the
    // bisector of the two segments would.
    let across = in_plane(e.cross(pos(q) - pos(p)));
    let h = if across.dot(inward) < 0.0 { -across } else { across };
    let dir = if h.dot(inward) > 0.2 { h } else { inward };
    (dir != DVec3::ZERO).then_some(dir)
}

/// Whether `x` lies inside the material: the winding number of the whole surface there is
/// above one half.
fn inside(mesh: &CrackMesh, x: DVec3) -> bool {
    winding_number(mesh, mesh.live_triangles(), x) > 0.5
}

/// The nearest live triangle not incident to `f` that the ray from `x` along unit `dir` meets
/// within `reach` (m): its distance and index (Moller-Trumbore).
fn first_hit(mesh: &CrackMesh, f: u32, x: DVec3, dir: DVec3, reach: f64) -> Option<(f64, u32)> {
    let mut best: Option<(f64, u32)> = None;
    let end = x + dir * reach;
    let (lo, hi) = (x.min(end), x.max(end));
    for t in mesh.live_triangles() {
        if mesh.triangle_slots()[t as usize].contains(&f) {
            continue;
        }
        let [a, b, c] = mesh.corners(t);
        if a.max(b).max(c).cmplt(lo).any() || a.min(b).min(c).cmpgt(hi).any() {
            continue;
        }
        let (e1, e2) = (b - a, c - a);
        let p = dir.cross(e2);
        let det = e1.dot(p);
        if det.abs() < 1e-300 {
            continue;
        }
        let s = x - a;
        let u = s.dot(p) / det;
        let qv = s.cross(e1);
        let v = dir.dot(qv) / det;
        let distance = e2.dot(qv) / det;
        if u >= 0.0
            && v >= 0.0
            && u + v <= 1.0
            && distance >= 0.0
            && distance <= reach
            && best.is_none_or(|(d, _)| distance < d)
        {
            best = Some((distance, t));
        }
    }
    best
}
