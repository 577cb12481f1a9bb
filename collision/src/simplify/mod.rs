//! Simplification of a closed triangle mesh towards a target edge length, within a bound on how
//! far the surface may move: for the dense, sliver-rich surfaces that marching cubes makes.
//!
//! A contoured surface has an edge per crossed lattice edge, many of them a small fraction of
//! the spacing, and triangles with angles near zero; a body that carries it pays for every
//! triangle in its stress solves and collision. Here the short edges are collapsed, cheapest
//! first by the quadric error metric (Garland and Heckbert 1997: the area-weighted squared
//! distance from the merged point to the original triangles' planes), in the length band of
//! isotropic remeshing (Botsch and Kobbelt 2004: collapse below `4/5 L`, never make an edge
//! above `4/3 L`). Then nearly coplanar pairs are flipped towards the Delaunay triangulation,
//! and the collapses run once more on what the flips freed. Rejected alternatives: shortest
//! edge first (moves ridges and corners that a quadric keeps, for the same triangle count) and
//! vertex clustering (no control of topology).
//!
//! What holds: the result is a closed, consistently oriented 2-manifold with the input's
//! components (the local checks of each edit); every merged point lies within
//! [`Simplification::max_deviation`] of the planes of the triangles it replaced and within that
//! distance, as a weighted root mean square, of every original plane merged into it; no edit
//! makes two triangles meet beyond what they share (checked against the triangles near it), so
//! thin parts keep their sheets apart. The result is checked once more as a whole; should it
//! fail (an input whose own triangles meet) the input comes back unchanged. Deterministic: one
//! thread, ties broken by vertex index.

mod cells;
mod quadric;
mod surface;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::error::GeometryError;
use crate::topology::require_solid;
use crate::triangle_intersection::first_self_intersection;
use crate::trimesh::TriMesh;
use surface::{Limits, Surface};

/// How a mesh is simplified.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Simplification {
    /// Edge length the result aims at, `L` (m): edges under `4/5 L` are collapsed and no
    /// collapse makes an edge over `4/3 L`.
    pub target_edge: f64,
    /// Farthest a collapse may move the surface (m): see the module docs.
    pub max_deviation: f64,
    /// Smallest triangle angle an edit may make (degrees), unless a triangle it replaces was
    /// already worse.
    pub min_angle_degrees: f64,
    /// Largest turn of a triangle's normal in a collapse (degrees); a fifth of it is the
    /// largest dihedral angle across an edge that may be flipped.
    pub max_turn_degrees: f64,
}

impl Simplification {
    /// Target edge `target_edge` (m) within `max_deviation` (m); new angles of at least 15
    /// degrees, normals turning at most 45 degrees (flips across at most 9).
    pub fn new(target_edge: f64, max_deviation: f64) -> Self {
        Self {
            target_edge,
            max_deviation,
            min_angle_degrees: 15.0,
            max_turn_degrees: 45.0,
        }
    }

    /// Checks every setting, naming the first bad one.
    pub fn validate(&self) -> Result<(), GeometryError> {
        if !(self.target_edge.is_finite() && self.target_edge > 0.0) {
            return Err(GeometryError::invalid(
                "target edge (m)",
                self.target_edge,
                "finite and > 0",
            ));
        }
        if !(self.max_deviation.is_finite() && self.max_deviation >= 0.0) {
            return Err(GeometryError::invalid(
                "largest deviation (m)",
                self.max_deviation,
                "finite and >= 0",
            ));
        }
        if !(0.0..60.0).contains(&self.min_angle_degrees) {
            return Err(GeometryError::invalid(
                "smallest angle (degrees)",
                self.min_angle_degrees,
                "in [0, 60)",
            ));
        }
        if !(self.max_turn_degrees > 0.0 && self.max_turn_degrees < 90.0) {
            return Err(GeometryError::invalid(
                "largest normal turn (degrees)",
                self.max_turn_degrees,
                "in (0, 90)",
            ));
        }
        Ok(())
    }

    fn limits(&self) -> Limits {
        Limits {
            longest: 4.0 / 3.0 * self.target_edge,
            deviation: self.max_deviation,
            angle: self.min_angle_degrees.to_radians(),
            turn_cos: self.max_turn_degrees.to_radians().cos(),
            flat_cos: (0.2 * self.max_turn_degrees).to_radians().cos(),
        }
    }
}

/// What a simplification did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimplifyReport {
    /// Triangles in.
    pub triangles_before: usize,
    /// Triangles out.
    pub triangles_after: usize,
    /// Edges collapsed.
    pub collapses: usize,
    /// Edges flipped.
    pub flips: usize,
    /// Vertices moved by tangential relaxation.
    pub moves: usize,
    /// Whether the input came back unchanged: the result was not a solid free of
    /// self-intersections (only when the input itself was not).
    pub unchanged: bool,
}

/// `mesh` simplified towards `settings.target_edge` (see the module docs). Fails on bad
/// settings (named) or an input that does not bound a solid.
pub fn simplify(mesh: &TriMesh, settings: &Simplification) -> Result<(TriMesh, SimplifyReport), GeometryError> {
    settings.validate()?;
    require_solid(mesh)?;
    let mut report = SimplifyReport {
        triangles_before: mesh.triangles().len(),
        ..SimplifyReport::default()
    };
    let limits = settings.limits();
    // Cells of half the longest edge: a triangle of the input (a fraction of the target edge)
    // sits in a cell or two, and an edit's few triangles meet tens of others there.
    let mut surface = Surface::new(mesh, 0.5 * limits.longest);
    for _ in 0..ROUNDS {
        report.collapses += collapse_short_edges(&mut surface, settings.target_edge, &limits);
        report.flips += flip_towards_delaunay(&mut surface, &limits);
        report.moves += relax(&mut surface, &limits);
    }
    report.collapses += collapse_short_edges(&mut surface, settings.target_edge, &limits);
    report.flips += flip_towards_delaunay(&mut surface, &limits);
    let (positions, triangles) = surface.to_mesh();
    let simplified = TriMesh::try_new(positions, triangles)?;
    // Every edit was checked against its neighbours; this catches what a self-touching input
    // (whose own triangles meet) lets through.
    if require_solid(&simplified).is_err() || first_self_intersection(&simplified).is_some() {
        report.unchanged = true;
        report.triangles_after = report.triangles_before;
        return Ok((mesh.clone(), report));
    }
    report.triangles_after = simplified.triangles().len();
    Ok((simplified, report))
}

/// A candidate collapse in the queue: cheapest first, then by vertex indices.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    error: f64,
    a: u32,
    b: u32,
    /// Edits of `a` and `b` when queued: a stale candidate is skipped.
    stamps: (u32, u32),
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    // Reversed: `BinaryHeap` pops its greatest, the queue wants the cheapest.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .error
            .total_cmp(&self.error)
            .then_with(|| (other.a, other.b).cmp(&(self.a, self.b)))
    }
}

/// Collapses every edge under `4/5 target` that passes the checks, cheapest first; returns the
/// count.
fn collapse_short_edges(surface: &mut Surface, target: f64, limits: &Limits) -> usize {
    let shortest_kept = 0.8 * target;
    let mut stamps = vec![0u32; surface.positions.len()];
    let mut queue = BinaryHeap::new();
    let push = |queue: &mut BinaryHeap<Candidate>, surface: &Surface, stamps: &[u32], a: u32, b: u32| {
        let (pa, pb) = (surface.positions[a as usize], surface.positions[b as usize]);
        if (pb - pa).length() < shortest_kept {
            let (_, error) = surface.collapse_point(a, b);
            queue.push(Candidate {
                error,
                a,
                b,
                stamps: (stamps[a as usize], stamps[b as usize]),
            });
        }
    };
    for (tri, _) in surface
        .triangles
        .iter()
        .zip(&surface.alive)
        .filter(|(_, alive)| **alive)
    {
        for e in 0..3 {
            let (a, b) = (tri[e], tri[(e + 1) % 3]);
            if a < b {
                push(&mut queue, surface, &stamps, a, b);
            }
        }
    }
    let mut count = 0;
    while let Some(c) = queue.pop() {
        if (stamps[c.a as usize], stamps[c.b as usize]) != c.stamps || surface.fans[c.a as usize].is_empty() {
            continue;
        }
        let (p, error) = surface.collapse_point(c.a, c.b);
        if !surface.try_collapse(c.a, c.b, p, error, limits) {
            continue;
        }
        count += 1;
        stamps[c.a as usize] += 1;
        stamps[c.b as usize] += 1;
        let mut around: Vec<u32> = surface.fans[c.b as usize]
            .iter()
            .flat_map(|&t| surface.triangles[t as usize])
            .filter(|&v| v != c.b)
            .collect();
        around.sort_unstable();
        around.dedup();
        for v in around {
            push(&mut queue, surface, &stamps, v.min(c.b), v.max(c.b));
        }
    }
    count
}

/// Rounds of collapses, flips and relaxation; each frees edits the others refused.
const ROUNDS: usize = 3;

/// One relaxation sweep over the vertices in index order ([`Surface::try_relax`]); returns the
/// count moved.
fn relax(surface: &mut Surface, limits: &Limits) -> usize {
    let mut moved = 0;
    for v in 0..surface.positions.len() as u32 {
        if !surface.fans[v as usize].is_empty() && surface.try_relax(v, limits) {
            moved += 1;
        }
    }
    moved
}

/// Sweeps the live triangles' edges in index order, flipping where [`Surface::try_flip`]
/// allows, until a sweep flips nothing (at most ten sweeps); returns the count.
fn flip_towards_delaunay(surface: &mut Surface, limits: &Limits) -> usize {
    let mut count = 0;
    for _ in 0..10 {
        let mut flipped = 0;
        for t in 0..surface.triangles.len() as u32 {
            for e in 0..3 {
                if !surface.alive[t as usize] {
                    break;
                }
                let tri = surface.triangles[t as usize];
                let (a, b) = (tri[e], tri[(e + 1) % 3]);
                if a < b && surface.try_flip(t, a, b, limits) {
                    flipped += 1;
                }
            }
        }
        count += flipped;
        if flipped == 0 {
            break;
        }
    }
    count
}

#[cfg(test)]
mod tests;
