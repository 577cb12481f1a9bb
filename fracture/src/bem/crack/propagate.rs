//! Moving crack fronts into the material (Zhu 2015 Algorithm 3, eq. 9).
//!
//! Each active front node `f` moves with velocity `v = alpha * unit(h - proj_e(h))`:
//! - `h` is the unit bisector at `f` pointing away from its two line neighbours (the front
//!   advances where it is convex and straightens where it is not);
//! - `e` is the largest principal direction of the stress at `f`, so the node moves within the
//!   plane the Rankine criterion opens;
//! - `alpha` is the paper's "principal eigenvalue times a resolution control times a user
//!   factor (0.5)": here one sub-step moves `speed * L * min(sigma_1 / sigma_p, 2)`, with `L`
//!   the target edge length and `sigma_p` the propagation threshold.
//!
//! "We also check the direction ... to enforce movement into the material": the reference for
//! "into" is the direction from the mean of `f`'s wall neighbours (the slot behind the front) to
//! `f`; `h` is used only when it agrees with it, and replaces it when the front is straight.
//!
//! A node whose principal stress has fallen below `sigma_p` stops (the crack arrests there). A
//! node whose step would reach the surface stops `gap` short of it and is marked inactive, with
//! the triangle it reached recorded for the cut-through that follows (Zhu Fig. 13). A move that
//! would break the mesh's angle bounds or make it intersect itself is halved once, then skipped.

use glam::DVec3;

use super::check::try_move;
use super::mesh::CrackMesh;
use super::validate::AngleBounds;

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
    /// Moves refused by the mesh checks.
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
                step.refused += 1;
                continue;
            };
            let length = settings.speed * settings.target_edge * (sigma / settings.threshold).min(2.0);
            let hit = first_hit(mesh, f, x, dir, length + settings.gap);
            let (target, reached) = match hit {
                Some((distance, t)) => (x + dir * (distance - settings.gap).max(0.0), Some(t)),
                None => (x + dir * length, None),
            };
            let moved = try_move(mesh, f, target, settings.bounds, None)
                || try_move(mesh, f, x.lerp(target, 0.5), settings.bounds, None);
            if moved {
                step.moved += 1;
            } else {
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
fn heading(mesh: &CrackMesh, f: u32, p: u32, q: u32, e: DVec3) -> Option<DVec3> {
    let x = mesh.positions()[f as usize];
    let in_plane = |d: DVec3| (d - e * e.dot(d)).normalize_or_zero();
    // Into the material: away from the slot behind the front (f's neighbours off the line).
    let ring = mesh.ring(f)?;
    let behind: Vec<DVec3> = ring
        .iter()
        .filter(|&&r| r != p && r != q)
        .map(|&r| mesh.positions()[r as usize])
        .collect();
    if behind.is_empty() {
        return None;
    }
    let mean = behind.iter().sum::<DVec3>() / behind.len() as f64;
    let inward = in_plane(x - mean);
    let pos = |v: u32| mesh.positions()[v as usize];
    let h = in_plane(-((pos(p) - x).normalize_or_zero() + (pos(q) - x).normalize_or_zero()));
    let dir = if h.dot(inward) > 0.2 { h } else { inward };
    (dir != DVec3::ZERO).then_some(dir)
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
