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
//! would break the mesh's angle bounds, make it intersect itself, leave the material or cross
//! the crack already cut is halved, then quartered; if those are refused too the node waits for
//! the remeshing of the sub-step and its neighbours, and stops after [`MAX_STALLS`] refusals in
//! a row, so every crack stops in finitely many sub-steps. A node counts as having reached the
//! surface only when its whole step (to `gap` short of it) was taken.
//!
//! Which way is ahead comes from the crack's cut region in its plane ([`super::region`]), one
//! orientation for the whole line; a target inside that region (back over crack already cut) is
//! refused. Per-node orientation from the walls' normals let nodes on folds disagree, and the
//! front tangled: on 8,000-triangle boxes its node count grew by a quarter per sub-step. With the
//! region, and with the whole walls remeshed (`improve::near_cracks`), a slab on 0.05 m cells
//! (about 2,000 triangles) grows cleanly to its far faces and cuts through; finer meshes have
//! not been measured since.

use glam::DVec3;

use super::check::try_move;
use super::mesh::CrackMesh;
use super::region::CutRegion;
use super::validate::{AngleBounds, winding_number};

/// Sub-steps in a row a front node's move may be refused by the mesh checks before it stops.
pub const MAX_STALLS: u8 = 3;

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
    /// Whether every crack stays in the plane it opened across (the principal direction at
    /// its start), instead of turning with the principal direction at its front. Planar cracks
    /// cut through reliably; a curved crack's walls, a thickness apart at the mouth and meeting
    /// at the front, can be too close to each other near the front for the cut's band of
    /// triangles, and the cut is then refused (`through`).
    pub planar: bool,
    /// How far ahead of a front node its stress is read (m): at the node itself a surface
    /// stress is singular, so about half an edge into the material, along the direction the
    /// walls' normals leave (the mitigation used for sharp edges, `bem::solution`).
    pub probe: f64,
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
    /// Nodes stopped because their move, even at a quarter of the step, would leave the
    /// material, cross the crack already cut or break the mesh checks, [`MAX_STALLS`]
    /// sub-steps in a row.
    pub refused: usize,
    /// Nodes whose move was refused this sub-step, still active.
    pub stalled: usize,
}

/// Advances every active node of every line once (lines and nodes in order).
pub fn advance_fronts(mesh: &mut CrackMesh, stress: FrontStress<'_>, settings: &FrontSettings) -> FrontStep {
    let mut step = FrontStep::default();
    for l in 0..mesh.lines().len() {
        let line = mesh.lines()[l].clone();
        let region = CutRegion::of_line(mesh, l);
        let n = line.nodes.len();
        for i in 0..n {
            let f = line.nodes[i];
            if !mesh.is_active(f) || (!line.closed && (i == 0 || i + 1 == n)) {
                continue;
            }
            let x = mesh.positions()[f as usize];
            let (sigma, direction) = stress(x - outward(mesh, f).normalize_or_zero() * settings.probe);
            if !(sigma >= settings.threshold) {
                mesh.set_active(f, false);
                step.arrested += 1;
                continue;
            }
            let e = if settings.planar {
                line.plane_normal
            } else if direction.dot(line.plane_normal) < 0.0 {
                -direction
            } else {
                direction
            };
            let (p, q) = (line.nodes[(i + n - 1) % n], line.nodes[(i + 1) % n]);
            let Some(dir) = heading(mesh, f, p, q, e, region.as_ref()) else {
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
            // A front only moves through uncut material: never out through its own slot, never
            // back over the crack it has cut.
            let uncut = |mesh: &CrackMesh, y: DVec3| inside(mesh, y) && !region.as_ref().is_some_and(|r| r.contains(y));
            // The step, or half or a quarter of it, through uncut material only.
            let landed = [1.0, 0.5, 0.25].into_iter().find(|&k| {
                let y = if k == 1.0 { target } else { x.lerp(target, k) };
                uncut(mesh, y) && try_move(mesh, f, y, settings.bounds, None)
            });
            match (landed, reached) {
                (Some(k), reached) => {
                    // Only a whole step is progress: a node held to a half or a quarter step
                    // sub-step after sub-step (two fronts closing on each other, say) stops as
                    // a refused one does, so every crack stops in finitely many sub-steps.
                    if k == 1.0 {
                        mesh.unstall(f);
                    } else if mesh.stall(f) >= MAX_STALLS {
                        mesh.set_active(f, false);
                        step.refused += 1;
                    }
                    step.moved += 1;
                    if let Some(t) = reached.filter(|_| k == 1.0) {
                        mesh.set_active(f, false);
                        step.reached.push((f, t));
                    }
                }
                // A node refused sub-step after sub-step stops, so every crack stops in finitely
                // many sub-steps.
                (None, _) if mesh.stall(f) >= MAX_STALLS => {
                    mesh.set_active(f, false);
                    step.refused += 1;
                }
                // Remeshing, or its neighbours moving on, may clear the way: it tries again.
                (None, _) => step.stalled += 1,
            }
        }
    }
    step
}

/// The unit direction front node `f` (line neighbours `p` before it, `q` after it) moves in,
/// within the plane of normal `e`, or `None` if it cannot tell which way is into the material.
///
/// With the line's cut region, ahead is out of the region across the chord (one orientation for
/// the whole line, see [`super::region`]). Without it, into the material is against the
/// area-weighted normal of `f`'s triangles: at a front the two walls' outward normals nearly
/// cancel, and what is left points back out through the slot.
pub(crate) fn heading(mesh: &CrackMesh, f: u32, p: u32, q: u32, e: DVec3, region: Option<&CutRegion>) -> Option<DVec3> {
    let in_plane = |d: DVec3| (d - e * e.dot(d)).normalize_or_zero();
    let pos = |v: u32| mesh.positions()[v as usize];
    if let Some(region) = region {
        let dir = in_plane(region.ahead(pos(p), pos(q)));
        return (dir != DVec3::ZERO).then_some(dir);
    }
    let inward = in_plane(-outward(mesh, f));
    // The front's normal within the crack plane: across the chord between the neighbours. On a
    // smooth front it is the bisector; on a zig-zag it does not amplify the zig-zag, as the
    // bisector of the two segments would.
    let across = in_plane(e.cross(pos(q) - pos(p)));
    let h = if across.dot(inward) < 0.0 { -across } else { across };
    let dir = if h.dot(inward) > 0.2 { h } else { inward };
    (dir != DVec3::ZERO).then_some(dir)
}

/// The summed area vectors of `f`'s triangles (m^2): at a front node the two walls' normals
/// nearly cancel and what is left points back out through the crack's mouth.
pub(crate) fn outward(mesh: &CrackMesh, f: u32) -> DVec3 {
    mesh.incident(f)
        .iter()
        .map(|&t| {
            let [a, b, c] = mesh.corners(t);
            (b - a).cross(c - a)
        })
        .sum()
}

/// Whether `x` lies inside the material: the winding number of the whole surface there is
/// above one half. It is counted along a ray (see [`ray_winding`]); when the rays tried all
/// graze an edge or a vertex, it is the sum of the triangles' solid angles.
pub(crate) fn inside(mesh: &CrackMesh, x: DVec3) -> bool {
    // Rays near the axes, so each touches one row of grid cells, skewed off them so they do
    // not run along the rows of vertices of meshes built on a grid.
    const RAYS: [DVec3; 3] = [
        DVec3::new(1.0, 0.012_345_7, 0.007_123_9),
        DVec3::new(-0.009_318_3, 1.0, 0.015_731_1),
        DVec3::new(0.013_579_2, -0.006_421_7, -1.0),
    ];
    let (lo, hi) = mesh.bounds();
    RAYS.iter()
        .find_map(|&d| ray_winding(mesh, x, d.normalize(), lo, hi))
        .map_or_else(|| winding_number(mesh, mesh.live_triangles(), x) > 0.5, |w| w > 0)
}

/// The winding number of the closed surface about `x`, as the signed count of its crossings
/// along the ray from `x` along unit `dir` to past the box `lo`..`hi` that holds the surface:
/// +1 where the ray leaves through a triangle (along its outward normal), -1 where it enters.
/// `None` when the ray passes within a relative 1e-9 of a triangle's edge or is nearly parallel
/// to a triangle it meets, or `x` is on a triangle: the count is then not to be trusted.
fn ray_winding(mesh: &CrackMesh, x: DVec3, dir: DVec3, lo: DVec3, hi: DVec3) -> Option<i32> {
    let reach = (hi - lo).length() + (x - lo).length().max((x - hi).length());
    let end = x + dir * reach;
    let mut winding = 0;
    for t in mesh.triangles_near(x.min(end), x.max(end)) {
        let [a, b, c] = mesh.corners(t);
        let (e1, e2) = (b - a, c - a);
        let scale = e1.length() * e2.length();
        let RayHit { det, u, v, distance } = ray_triangle(x, dir, [a, b, c]);
        if det.abs() <= 1e-9 * scale {
            // Parallel: harmless unless the ray runs in the triangle's plane through it.
            if (x - a).dot(e1.cross(e2)).abs() <= 1e-9 * scale * scale.sqrt() {
                return None;
            }
            continue;
        }
        let eps = 1e-9;
        if u < -eps || v < -eps || u + v > 1.0 + eps || distance < -eps * scale.sqrt() {
            continue;
        }
        if u <= eps || v <= eps || u + v >= 1.0 - eps || distance <= eps * scale.sqrt() {
            return None;
        }
        // det = -dir . (e1 x e2): negative where the ray leaves along the outward normal.
        winding += if det < 0.0 { 1 } else { -1 };
    }
    Some(winding)
}

/// The nearest live triangle not incident to `f` that the ray from `x` along unit `dir` meets
/// within `reach` (m): its distance and index (Moller-Trumbore).
pub(crate) fn first_hit(mesh: &CrackMesh, f: u32, x: DVec3, dir: DVec3, reach: f64) -> Option<(f64, u32)> {
    let mut best: Option<(f64, u32)> = None;
    let end = x + dir * reach;
    let (lo, hi) = (x.min(end), x.max(end));
    for t in mesh.triangles_near(lo, hi) {
        if mesh.triangle_slots()[t as usize].contains(&f) {
            continue;
        }
        let [a, b, c] = mesh.corners(t);
        if a.max(b).max(c).cmplt(lo).any() || a.min(b).min(c).cmpgt(hi).any() {
            continue;
        }
        let RayHit { det, u, v, distance } = ray_triangle(x, dir, [a, b, c]);
        if det.abs() < 1e-300 {
            continue;
        }
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

/// Where a ray meets the plane of a triangle (Moller-Trumbore).
struct RayHit {
    /// `e1 . (dir x e2) = -dir . (e1 x e2)` for edges `e1 = b - a`, `e2 = c - a`: near zero when
    /// the ray runs parallel to the triangle, negative when it leaves along the outward normal.
    det: f64,
    /// Barycentric coordinates of the crossing along `e1` and `e2` (not finite when `det` is 0).
    u: f64,
    v: f64,
    /// Distance along the unit direction to the crossing (m).
    distance: f64,
}

/// The ray from `x` along unit `dir` against the plane of triangle `[a, b, c]`.
fn ray_triangle(x: DVec3, dir: DVec3, [a, b, c]: [DVec3; 3]) -> RayHit {
    let (e1, e2) = (b - a, c - a);
    let p = dir.cross(e2);
    let det = e1.dot(p);
    let s = x - a;
    let qv = s.cross(e1);
    RayHit {
        det,
        u: s.dot(p) / det,
        v: dir.dot(qv) / det,
        distance: e2.dot(qv) / det,
    }
}
