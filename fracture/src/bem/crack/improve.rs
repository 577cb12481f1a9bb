//! Mesh improvement around the cracks (Zhu 2015 section 6.4, after Brochu and Bridson 2009):
//! split long edges, collapse short ones, flip towards the Delaunay triangulation, then relax
//! vertex positions without changing the shape.
//!
//! Only a region is improved (the vertices near crack nodes, see [`near_cracks`]): the rest of
//! the surface is the boundary-element mesh the stress was solved on, and remeshing it would
//! change the discretisation for no gain. Edge lengths aim at a target length `L` with the
//! isotropic-remeshing band of Botsch and Kobbelt 2004: split above `4/3 L`, collapse below
//! `4/5 L` (the band is wide enough that a split never creates a collapsible edge).
//!
//! Smoothing moves a smooth vertex towards the mean of its neighbours within its tangent plane,
//! a ridge vertex along its ridge, and never a corner: ridges and corners keep the body's shape
//! ("feature-preserving smoothing"). Crack-line smoothing moves an active front node towards the
//! mean of its two line neighbours within the crack plane, evening out the spacing and damping
//! zig-zags across the front; the line's ends and stopped nodes stay.

use glam::DVec3;

use super::check::{MAX_NORMAL_TURN_COS, try_move};
use super::mesh::CrackMesh;
use super::ops::{FEATURE_DEGREES, Slide, collapse_edge, flip_edge, sharp_neighbours, slide, split_edge};
use super::validate::{AngleBounds, triangle_angles};

/// How the surface around a crack is remeshed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemeshSettings {
    /// Target edge length `L` (m).
    pub target_edge: f64,
    /// Angles every accepted operation keeps.
    pub bounds: AngleBounds,
    /// Dihedral angle (degrees) above which an edge is sharp: a ridge or a crack lip.
    pub feature_degrees: f64,
    /// Fraction of the way to the smoothing target each relaxation moves a vertex, in (0, 1].
    pub smoothing: f64,
    /// How far (m) a collapse may move a bent crack wall: the removed vertex's distance from
    /// the triangles that replace its fan. Walls are the tracker's own surface, and a curved
    /// crack's walls are never flat, so without this their slivers could never be collapsed;
    /// about a quarter of the crack thickness keeps the slot's width and the volume bound.
    /// Zero: walls are as fixed as the body's curved surface.
    pub wall_tolerance: f64,
}

impl RemeshSettings {
    /// Settings for target edge length `target_edge` (m): default angle bounds, 35-degree
    /// features, half-way smoothing, fixed walls.
    pub fn for_edge(target_edge: f64) -> Self {
        Self {
            target_edge,
            bounds: AngleBounds::default(),
            feature_degrees: FEATURE_DEGREES,
            smoothing: 0.5,
            wall_tolerance: 0.0,
        }
    }
}

/// What one improvement pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemeshCounts {
    /// Edges split.
    pub splits: usize,
    /// Edges collapsed.
    pub collapses: usize,
    /// Edges flipped.
    pub flips: usize,
    /// Vertices moved by smoothing.
    pub moves: usize,
}

/// Marks the vertices of every crack wall and those within `radius` (m) of any crack node. The
/// walls are included whole: as a front moves on, the triangles between it and wall vertices it
/// has left behind stretch, and must still be split.
pub fn near_cracks(mesh: &CrackMesh, radius: f64) -> Vec<bool> {
    let mut region = near_nodes(mesh, radius);
    for t in mesh.live_triangles().filter(|&t| mesh.is_wall(t)) {
        for v in mesh.triangle_slots()[t as usize] {
            region[v as usize] = true;
        }
    }
    region
}

/// Marks the vertices within `radius` (m) of any crack node.
fn near_nodes(mesh: &CrackMesh, radius: f64) -> Vec<bool> {
    let nodes: Vec<DVec3> = mesh
        .lines()
        .iter()
        .flat_map(|l| l.nodes.iter().map(|&v| mesh.positions()[v as usize]))
        .collect();
    let r2 = radius * radius;
    mesh.positions()
        .iter()
        .enumerate()
        .map(|(v, x)| mesh.vertex_in_use(v as u32) && nodes.iter().any(|n| n.distance_squared(*x) <= r2))
        .collect()
}

/// The edges `(a, b)`, `a < b`, with both ends in `region`, ascending.
fn region_edges(mesh: &CrackMesh, region: &[bool]) -> Vec<(u32, u32)> {
    let mut edges = Vec::new();
    for t in mesh.live_triangles() {
        let tri = mesh.triangle_slots()[t as usize];
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            if a < b && region.get(a as usize) == Some(&true) && region.get(b as usize) == Some(&true) {
                edges.push((a, b));
            }
        }
    }
    edges.sort_unstable();
    edges
}

fn length(mesh: &CrackMesh, a: u32, b: u32) -> f64 {
    mesh.positions()[a as usize].distance(mesh.positions()[b as usize])
}

fn edge_exists(mesh: &CrackMesh, a: u32, b: u32) -> bool {
    mesh.edge_triangles(a, b).len() == 2
}

/// One improvement pass over `region` (grown to include vertices the pass creates).
pub fn improve(mesh: &mut CrackMesh, settings: &RemeshSettings, region: &mut Vec<bool>) -> RemeshCounts {
    let mut counts = RemeshCounts::default();
    let long = settings.target_edge * 4.0 / 3.0;
    let short = settings.target_edge * 4.0 / 5.0;

    let mut edges: Vec<(f64, u32, u32)> = region_edges(mesh, region)
        .into_iter()
        .map(|(a, b)| (length(mesh, a, b), a, b))
        .filter(|e| e.0 > long)
        .collect();
    edges.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    for (_, a, b) in edges {
        if edge_exists(mesh, a, b) && length(mesh, a, b) > long {
            let x = (mesh.positions()[a as usize] + mesh.positions()[b as usize]) * 0.5;
            if split_edge(mesh, a, b, x, settings.bounds).is_some() {
                counts.splits += 1;
                region.resize(mesh.positions().len(), true);
            }
        }
    }

    let mut edges: Vec<(f64, u32, u32)> = region_edges(mesh, region)
        .into_iter()
        .map(|(a, b)| (length(mesh, a, b), a, b))
        .filter(|e| e.0 < short)
        .collect();
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then((x.1, x.2).cmp(&(y.1, y.2))));
    for (_, a, b) in edges {
        if edge_exists(mesh, a, b) && length(mesh, a, b) < short && collapse_edge(mesh, a, b, settings).is_some() {
            counts.collapses += 1;
        }
    }

    for (a, b) in region_edges(mesh, region) {
        if edge_exists(mesh, a, b)
            && !delaunay(mesh, a, b)
            && flip_edge(mesh, a, b, settings.bounds, settings.feature_degrees)
        {
            counts.flips += 1;
        }
    }

    counts.moves = smooth(mesh, settings, region);
    counts
}

/// Whether edge `a b` is locally Delaunay: the angles opposite it sum to at most 180 degrees.
fn delaunay(mesh: &CrackMesh, a: u32, b: u32) -> bool {
    let sum: f64 = mesh
        .edge_triangles(a, b)
        .iter()
        .map(|&t| {
            let tri = mesh.triangle_slots()[t as usize];
            let k = tri.iter().position(|v| *v != a && *v != b).unwrap_or(0);
            triangle_angles(mesh.corners(t))[k]
        })
        .sum();
    sum <= 180.0 + 1e-9
}

/// Relaxes every non-crack vertex of `region` once (feature-preserving), then every interior
/// crack-front node; returns how many moved.
pub fn smooth(mesh: &mut CrackMesh, settings: &RemeshSettings, region: &[bool]) -> usize {
    let mut moves = 0;
    for v in 0..mesh.positions().len() as u32 {
        if region.get(v as usize) != Some(&true) || !mesh.vertex_in_use(v) || mesh.is_crack_node(v) {
            continue;
        }
        let Some(ring) = mesh.ring(v) else { continue };
        let x = mesh.positions()[v as usize];
        let step = match slide(mesh, v, settings.feature_degrees) {
            Slide::Fixed => continue,
            Slide::Plane(n) => {
                let mean = ring.iter().map(|&u| mesh.positions()[u as usize]).sum::<DVec3>() / ring.len() as f64;
                let d = mean - x;
                d - n * n.dot(d)
            }
            // Towards the middle of its two ridge neighbours, along the ridge.
            Slide::Line(along) => {
                let s = sharp_neighbours(mesh, v, settings.feature_degrees, false);
                let d = (mesh.positions()[s[0] as usize] + mesh.positions()[s[1] as usize]) * 0.5 - x;
                along * along.dot(d)
            }
        };
        if step.length_squared() > 0.0
            && try_move(
                mesh,
                v,
                x + step * settings.smoothing,
                settings.bounds,
                Some(MAX_NORMAL_TURN_COS),
            )
        {
            moves += 1;
        }
    }
    moves + smooth_lines(mesh, settings)
}

/// Crack-line smoothing: active interior nodes move towards the mean of their line neighbours
/// within the crack plane (arrested and stopped nodes stay where they stopped).
fn smooth_lines(mesh: &mut CrackMesh, settings: &RemeshSettings) -> usize {
    let mut moves = 0;
    for l in 0..mesh.lines().len() {
        let line = mesh.lines()[l].clone();
        let n = line.nodes.len();
        let range = if line.closed { 0..n } else { 1..n.saturating_sub(1) };
        for i in range {
            let v = line.nodes[i];
            if !mesh.is_active(v) {
                continue;
            }
            let (p, q) = (line.nodes[(i + n - 1) % n], line.nodes[(i + 1) % n]);
            let x = mesh.positions()[v as usize];
            let (xp, xq) = (mesh.positions()[p as usize], mesh.positions()[q as usize]);
            // Towards the neighbours' mean within the crack plane: this evens out the spacing
            // and, across the front, damps zig-zags that front motion would otherwise grow into
            // a crumpled front (it pulls convex bumps back a little, which the next advance
            // makes up).
            let d = (xp + xq) * 0.5 - x;
            let d = d - line.plane_normal * line.plane_normal.dot(d);
            if d.length_squared() > 0.0 && try_move(mesh, v, x + d * (0.5 * settings.smoothing), settings.bounds, None)
            {
                moves += 1;
            }
        }
    }
    moves
}
