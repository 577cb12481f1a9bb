//! Cutting through (Zhu 2015 section 6.3, Fig. 13): once a crack's front has reached the far
//! surface, the thin ligament left between them is cut. Cut over the whole line, the crack
//! becomes a slot through the body, and when it spans the body the surface falls into two closed
//! pieces; cut over a run of the front ([`super::breakout`]), the rest of the front runs on.
//!
//! The paper cuts pair by pair of neighbouring inactive front nodes: it cuts the far surface
//! along an interpolated crack plane, opens that path, deletes the two wall triangles on the
//! front edge and stitches the hanging vertices. Here the same steps run once for a whole run of
//! nodes (`cut_ligament`), as one change that is checked before anything moves, so a refused
//! cut leaves the uncut crack:
//! 1. Every interior node of the run must be inactive and have a point of the far surface
//!    within the reach, ahead of it (on the side away from the crack's mouth): the guides.
//! 2. A path of surface edges is traced from one end of the run to the other (the line's own
//!    end where the run starts or stops at one, else a surface vertex at the node's far point):
//!    it leaves the first end towards the first guide and walks on along the surface's
//!    intersection with the plane through the current vertex parallel to the crack, never back,
//!    stepping to the crossing ahead and splitting the edge there (or to the edge's end when the
//!    crossing is within a tenth of the edge of it, or when the angle bounds refuse the split),
//!    until the other end is a neighbour. Each new path vertex slides within its face, or along
//!    its ridge, onto the crack plane through the nearest node of the run; a step shorter than
//!    a quarter of the edges around it is collapsed, and so is a step that rounds a corner of
//!    one triangle (three consecutive path vertices on one triangle). Every path vertex must lie within two
//!    reaches of the front (a path round the body to the other end would cut material the front
//!    never reached). Splits, collapses and slides keep the shape: a refusal after them leaves a
//!    valid mesh.
//! 3. Sides come from the order of each vertex's ring: a node's triangles lie left or right of
//!    the front walked back along the run, a path vertex's left or right of the path (seen from
//!    outside). Front and path run round the ligament the same way, so "left" is one side of the
//!    crack everywhere. The positive side is the one whose wall's outward normals point against
//!    the crack-plane normal `e` (summed over the run's walls), and must be where the path's
//!    left triangles lie. Sides read this way need nothing beyond the run: a crack already
//!    through the body elsewhere is cut as any other. Fracture events and break-outs cut this
//!    way ([`cut_through_locally`]). [`cut_through`] floods the whole surface instead, across
//!    the front and the path (the side holding the positive wall is `+`), and refuses a cut that
//!    separates nothing (a loop round a handle, or a crack through the body elsewhere): a check
//!    of the ring-read sides, which must agree with it wherever it cuts.
//! 4. Each path vertex that opens (all but the new ends a run makes, which close the new mouth)
//!    becomes two vertices `p +- m`, `|m|` half the crack thickness along the surface, as the
//!    lips of an opening are placed (on a ridge the plane crosses at a glancing angle, along the
//!    ridge, the mouth narrower there; at a corner or a mouth's end on a ridge, along the crack
//!    normal made tangent to the surface), either side of the crack plane through the nearest
//!    interior node, and its triangles take the copy of their side. Each node of the run goes to
//!    a path vertex (the nearest one not before the previous node's, the run's ends to the
//!    path's), and its wall triangles to that vertex's copy on their side. A wall triangle on a
//!    segment of the run whose two nodes went to path vertices apart becomes a fan from its
//!    third corner over the path between them; one whose nodes went to the same vertex goes. A
//!    triangle left flat (a lip, an end's copy and the path vertex after it, on one line of the
//!    far surface) goes, and the triangle across its long edge is split at its middle vertex.
//!    Both walls are mapped onto the same path, so the two sides stay matched and a thickness
//!    apart at the far surface.
//!
//! A line of only two ends (what a break-out leaves beside an end: its front is the chord
//! between them, across one of the body's edges) is cut the same way, the path heading from one
//! end for the other. A line cut over its whole length is then marked cut through: it has no nodes left, and its
//! walls keep its index. Volume: the slot now runs through with width `t` at the far surface
//! too, so the volume removed stays within the thickness times the crack area.

use glam::DVec3;
use hashbrown::{HashMap, HashSet};
use shatter_collision::bvh::{closest_point_on_segment, closest_point_on_triangle};
use smallvec::SmallVec;

use super::check::{MAX_NORMAL_TURN_COS, acceptable, try_move};
use super::extend::crack_at;
use super::improve::RemeshSettings;
use super::mesh::{CrackLine, CrackMesh};
use super::open::{Refusal, lip_offset, ridge_offset, tangent_offset};
use super::ops::{FEATURE_DEGREES, Slide, collapse_edge, slide, split_edge};
use super::propagate::outward;
use super::validate::{AngleBounds, components_apart, triangle_angles};

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
    let crack = whole_line(mesh, line, reach, thickness)?;
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
    let to_path = path_indices(mesh, &nodes, &path);

    // Which side of the crack each triangle is on.
    let mut barrier: HashSet<(u32, u32)> = HashSet::new();
    for pair in nodes.windows(2).chain(path.windows(2)) {
        barrier.insert(edge_key(pair[0], pair[1]));
    }
    let sides = Sides::of(mesh, &barrier, (nodes[0], nodes[1]), e)?;
    let is_plus = |t: u32| sides.is_plus(t);

    // The two copies of every path vertex.
    let copies = open_copies(mesh, &path, e, thickness, &[])?;
    let (removed, added, walls) = remap(mesh, &nodes, &path, &to_path, &copies, is_plus);
    commit_cut(mesh, line, &removed, &added, &walls, bounds)
}

/// Cuts crack line `line` through as [`cut_through`] does, with the sides of the cut read
/// locally from the ring order of the front's and the path's vertices (`cut_ligament`) rather
/// than by flooding the whole surface: the cut fracture events make, which also cuts a crack
/// that is already through the body elsewhere (two through-wall fronts of one crack,
/// `breakout`), where the flood refuses as separating nothing.
pub fn cut_through_locally(
    mesh: &mut CrackMesh,
    line: usize,
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    let crack = whole_line(mesh, line, reach, thickness)?;
    let n = crack.nodes.len();
    let ends = (crack.nodes[0], crack.nodes[n - 1]);
    cut_ligament(mesh, line, (0, n - 1), ends, reach, thickness, bounds)?;
    mark_through(mesh, line);
    Ok(())
}

/// Cuts the ligament between the run of line `line`'s nodes from index `i` to `j` and the
/// body's surface (see the module docs): a path of surface edges from `ends.0` to `ends.1`
/// (the line's own end where the run starts or stops at one, else a surface vertex made at the
/// first or last node's far point) is opened into a mouth `thickness` (m) wide, and the run's
/// walls are carried onto it. The line's node list is left for the caller to update. Refuses,
/// changing no triangle, when an interior node of the run is active or has no surface within
/// `reach` (m) ahead, the path cannot be traced, the sides cannot be told, or the new triangles
/// would break the mesh.
pub(crate) fn cut_ligament(
    mesh: &mut CrackMesh,
    line: usize,
    (i, j): (usize, usize),
    (s_i, s_j): (u32, u32),
    reach: f64,
    thickness: f64,
    bounds: AngleBounds,
) -> Result<(), Refusal> {
    let crack = mesh.lines()[line].clone();
    let n = crack.nodes.len();
    let run: Vec<u32> = crack.nodes[i..=j].to_vec();
    // The run's ends that are the line's: on the surface already, they become path vertices.
    let (from_end, to_end) = (i == 0, j == n - 1);
    let interior = &run[usize::from(from_end)..run.len() - usize::from(to_end)];
    if interior.iter().any(|&f| mesh.is_active(f)) {
        return Err(Refusal::NotThrough);
    }
    let e = local_normal(mesh, interior, crack.plane_normal);
    let guides: Vec<DVec3> = interior
        .iter()
        .map(|&f| far_point(mesh, f, reach))
        .collect::<Option<_>>()
        .ok_or(Refusal::NotThrough)?;
    if s_i == s_j {
        return Err(Refusal::Geometry);
    }
    let plane_points: Vec<DVec3> = run.iter().map(|&v| mesh.positions()[v as usize]).collect();
    let path = if is_surface_edge(mesh, s_i, s_j) {
        vec![s_i, s_j]
    } else {
        let toward = match guides.len() {
            // The chord between two ends: the path heads for the other end.
            0 => mesh.positions()[s_j as usize],
            _ if from_end => guides[0],
            k => guides[1.min(k - 1)],
        };
        let traced = trace(mesh, s_i, s_j, toward, &plane_points, e, bounds)?;
        merge_short_and_detour_steps(mesh, traced, &plane_points, e, bounds)
    };
    let pos = |v: u32| mesh.positions()[v as usize];
    // The path must run under the front: a path that found its way round the body to the
    // other end (the plane meets the surface in a loop) would cut material the front never
    // reached.
    let under = |x: DVec3| {
        plane_points
            .windows(2)
            .map(|s| x.distance(closest_point_on_segment(x, s[0], s[1])))
            .fold(f64::INFINITY, f64::min)
            <= PATH_REACH * reach
    };
    if !path.iter().all(|&p| under(pos(p))) {
        return Err(Refusal::NotThrough);
    }
    let to_path = path_indices(mesh, &run, &path);

    // Left or right of the front (walked from f_j back to f_i) and of the path (s_i to s_j).
    let mut left: HashMap<u32, bool> = HashMap::new();
    let mut classify = |v: u32, u: u32, w: u32| -> Result<(), Refusal> {
        let (l, r) = arcs(mesh, v, u, w).ok_or(Refusal::Geometry)?;
        for (tris, is_left) in [(l, true), (r, false)] {
            for t in tris {
                if *left.entry(t).or_insert(is_left) != is_left {
                    return Err(Refusal::Geometry);
                }
            }
        }
        Ok(())
    };
    for k in i.max(1)..=j.min(n - 2) {
        classify(crack.nodes[k], crack.nodes[k + 1], crack.nodes[k - 1])?;
    }
    // The path's vertices that become two: those between its ends, and an end of the line.
    let inner = &path[usize::from(!from_end)..path.len() - usize::from(!to_end)];
    for (m, &p) in path.iter().enumerate() {
        let before = if m == 0 { crack.nodes[1] } else { path[m - 1] };
        let after = if m + 1 == path.len() {
            crack.nodes[n - 2]
        } else {
            path[m + 1]
        };
        if inner.contains(&p) {
            classify(p, before, after)?;
        }
    }
    // The positive wall's outward normals point against e; the path's positive side is where e
    // points.
    let (mut walls_left, mut walls_right) = (0.0, 0.0);
    for (&t, &is_left) in &left {
        if mesh.is_wall(t) {
            let [a, b, c] = mesh.corners(t);
            let along = (b - a).cross(c - a).dot(e);
            if is_left {
                walls_left += along;
            } else {
                walls_right += along;
            }
        }
    }
    let left_plus = walls_left < walls_right;
    let mut path_side = 0.0;
    for &p in inner {
        for &t in mesh.incident(p) {
            let [a, b, c] = mesh.corners(t);
            let offset = e.dot((a + b + c) / 3.0 - mesh.positions()[p as usize]);
            path_side += if left[&t] { offset } else { -offset };
        }
    }
    if !inner.is_empty() && (path_side > 0.0) != left_plus {
        return Err(Refusal::Geometry);
    }
    let is_plus = |t: u32| left.get(&t).is_some_and(|&l| l == left_plus);

    // The two copies of every path vertex that opens (between the new ends, and a line's end),
    // either side of the crack plane through the nearest interior node.
    let centres: Vec<DVec3> = interior.iter().map(|&v| mesh.positions()[v as usize]).collect();
    let copies = open_copies(mesh, inner, e, thickness, &centres)?;
    let (mut removed, mut added, mut walls) = remap(mesh, &run, &path, &to_path, &copies, is_plus);
    if removed.iter().any(|t| !left.contains_key(t)) {
        return Err(Refusal::Geometry);
    }
    mend_slivers(mesh, &mut removed, &mut added, &mut walls, bounds);
    if !manifold_after(mesh, &removed, &added) || !acceptable(mesh, &removed, &added, bounds, None) {
        return Err(Refusal::Geometry);
    }
    replace_triangles(mesh, &removed, &added, &walls);
    Ok(())
}

/// Each of a cut's `nodes` (in line order) as an index into its `path`: the first node's is the
/// path's first vertex, the last node's its last, every other the path vertex nearest it not
/// before the previous node's.
fn path_indices(mesh: &CrackMesh, nodes: &[u32], path: &[u32]) -> Vec<usize> {
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
    to_path
}

/// The two copies (positive side first) each of the path vertices `opening` becomes, half the
/// `thickness` (m) either side of the crack (unit normal `e`) along the surface, as the lips of
/// an opening are placed (`open::lip_offset`, or at a corner the offset made tangent). With
/// `centres` (points of the crack plane), a vertex the path took off the plane first slides
/// onto the plane through the nearest of them along the copies' own direction, so both copies
/// are not on one side (an end snapped to a neighbour within the opening's snap angle lies up
/// to a fifth of an edge off it): only along the surface, a face or a ridge, where the slide
/// keeps the shape, and never by more than the thickness. Refuses where no offset exists.
fn open_copies(
    mesh: &mut CrackMesh,
    opening: &[u32],
    e: DVec3,
    thickness: f64,
    centres: &[DVec3],
) -> Result<HashMap<u32, [u32; 2]>, Refusal> {
    let mut copies: HashMap<u32, [u32; 2]> = HashMap::new();
    for &p in opening {
        let normal = mesh.surface_normal(p);
        let along_surface = lip_offset(mesh, p, normal, e, thickness);
        // Where the plane crosses a ridge at a glancing angle (no lips there), along the ridge
        // all the same: the copies stay on both faces and the mouth is narrower there. The
        // offset made tangent to the averaged normal lifts them off both faces (a copy of a
        // vertex of a glass slab's bottom edge stood 0.64 mm below the slab: measured).
        let offset = along_surface
            .or_else(|| ridge_offset(mesh, p, e, thickness, GLANCING_COS))
            .or_else(|| tangent_offset(normal, e, thickness))
            .ok_or(Refusal::Geometry)?;
        let x = mesh.positions()[p as usize];
        let on = centres
            .iter()
            .copied()
            .min_by(|a, b| a.distance_squared(x).total_cmp(&b.distance_squared(x)));
        let along = e.dot(offset);
        let centre = match on {
            Some(on) if along_surface.is_some() && along > 0.0 => {
                let slide = -offset * (e.dot(x - on) / along);
                if slide.length() <= thickness { x + slide } else { x }
            }
            _ => x,
        };
        copies.insert(p, [mesh.add_vertex(centre + offset), mesh.add_vertex(centre - offset)]);
    }
    Ok(copies)
}

/// Least cosine between the crack-plane normal and a ridge for a cut's copies to go along it.
const GLANCING_COS: f64 = 1e-3;

/// Mends the flat triangles a cut leaves where its new mouth runs straight on from an old one:
/// a wall triangle between an end's lip and the front node beside it goes to the lip, the end's
/// copy and the path vertex after it, three points on one line of the far surface. Such a
/// triangle (an angle past the bounds' largest) is dropped and the triangle across its long
/// edge (added or kept) is split at the middle vertex into two, so the surface stays closed and
/// the middle vertex lies on it.
fn mend_slivers(
    mesh: &CrackMesh,
    removed: &mut Vec<u32>,
    added: &mut Vec<[u32; 3]>,
    walls: &mut Vec<Option<usize>>,
    bounds: AngleBounds,
) {
    let positions = mesh.positions();
    let slots = mesh.triangle_slots();
    let traverses = |tri: [u32; 3], u: u32, v: u32| (0..3).any(|k| tri[k] == u && tri[(k + 1) % 3] == v);
    let mut k = 0;
    // Each mend removes one added triangle and splits one other: at most as many as there are.
    let mut budget = added.len();
    while k < added.len() && budget > 0 {
        let tri = added[k];
        let angles = triangle_angles(tri.map(|v| positions[v as usize]));
        let Some(m) = (0..3).find(|&c| angles[c] > bounds.max_degrees) else {
            k += 1;
            continue;
        };
        budget -= 1;
        let (mid, u, v) = (tri[m], tri[(m + 1) % 3], tri[(m + 2) % 3]);
        // The triangle across the long edge u -> v traverses v -> u.
        let across_added = (0..added.len()).find(|&o| o != k && traverses(added[o], v, u));
        let (other, wall) = match across_added {
            Some(o) => (added[o], walls[o]),
            None => {
                let kept = mesh
                    .incident(u)
                    .iter()
                    .copied()
                    .find(|&t| removed.binary_search(&t).is_err() && traverses(slots[t as usize], v, u));
                let Some(t) = kept else {
                    k += 1;
                    continue;
                };
                removed.insert(removed.partition_point(|&r| r < t), t);
                (slots[t as usize], mesh.wall_of(t))
            }
        };
        let y = other.into_iter().find(|&c| c != u && c != v).unwrap_or(u);
        let halves = [[v, mid, y], [mid, u, y]];
        if let Some(o) = across_added {
            added[o] = halves[0];
            added.push(halves[1]);
            walls.push(wall);
        } else {
            added.extend(halves);
            walls.extend([wall, wall]);
        }
        added.remove(k);
        walls.remove(k);
    }
}

/// Whether the surface stays a closed, oriented 2-manifold along the new triangles when the
/// `removed` slots go and the `added` triangles come: every directed edge of an added triangle
/// is traversed once, and its reverse once, by the triangles kept and added.
fn manifold_after(mesh: &CrackMesh, removed: &[u32], added: &[[u32; 3]]) -> bool {
    let slots = mesh.triangle_slots();
    let count = |u: u32, v: u32| {
        let kept = mesh
            .incident(u)
            .iter()
            .filter(|t| removed.binary_search(t).is_err())
            .filter(|&&t| {
                let tri = slots[t as usize];
                (0..3).any(|k| tri[k] == u && tri[(k + 1) % 3] == v)
            })
            .count();
        let new = added
            .iter()
            .filter(|tri| (0..3).any(|k| tri[k] == u && tri[(k + 1) % 3] == v))
            .count();
        kept + new
    };
    added.iter().all(|tri| {
        tri[0] != tri[1]
            && tri[1] != tri[2]
            && tri[2] != tri[0]
            && (0..3).all(|k| {
                let (u, v) = (tri[k], tri[(k + 1) % 3]);
                count(u, v) == 1 && count(v, u) == 1
            })
    })
}

/// The crack plane's unit normal at a run of front nodes: the summed area vectors of their
/// wall triangles, each turned to agree with the line's `plane_normal` (the two walls face
/// opposite ways), or the line's normal when they give none.
pub(crate) fn local_normal(mesh: &CrackMesh, run: &[u32], plane_normal: DVec3) -> DVec3 {
    let mut tris: Vec<u32> = run.iter().flat_map(|&f| mesh.incident(f).iter().copied()).collect();
    tris.sort_unstable();
    tris.dedup();
    let sum: DVec3 = tris
        .into_iter()
        .filter(|&t| mesh.is_wall(t))
        .map(|t| {
            let [a, b, c] = mesh.corners(t);
            let area = (b - a).cross(c - a);
            if area.dot(plane_normal) < 0.0 { -area } else { area }
        })
        .sum();
    sum.try_normalize().unwrap_or(plane_normal)
}

/// Some of one vertex's triangles.
type Fan = SmallVec<[u32; 8]>;

/// The triangles of `v`'s fan left of the way `u -> v -> w` and those right of it, seen from
/// outside the body; `None` unless `v`'s fan is one closed ring holding both `u` and `w`.
fn arcs(mesh: &CrackMesh, v: u32, u: u32, w: u32) -> Option<(Fan, Fan)> {
    let ring = mesh.ring(v)?;
    let n = ring.len();
    let iu = ring.iter().position(|&r| r == u)?;
    let iw = ring.iter().position(|&r| r == w)?;
    if iu == iw {
        return None;
    }
    // Triangle k of the ring is (v, ring[k], ring[k + 1]): it runs v -> ring[k]. Turning
    // counter-clockwise from w (to the left, facing w) reaches u.
    let triangle = |k: usize| mesh.directed_edge_triangle(v, ring[k]);
    let from = |start: usize, stop: usize| -> Option<Fan> {
        (0..n)
            .map(|k| (start + k) % n)
            .take_while(|&k| k != stop)
            .map(triangle)
            .collect()
    };
    Some((from(iw, iu)?, from(iu, iw)?))
}

/// The change a cut makes: the triangle slots it removes (every one at a node of the cut, in
/// line order in `nodes`, or at a path vertex that opens into the two `copies`, ascending) and
/// the triangles that replace them, with the wall each is on. Each keeps its corners, a node
/// taken to its path vertex (`to_path` gives each node's index in `path`) and every corner then
/// to its copy on the triangle's side (`is_plus`); a triangle on a segment between two of the
/// cut's nodes spans the path from the first one's vertex to the second's: none of it when both
/// went to one vertex, a fan from its third corner when they are apart.
pub(crate) type Change = (Vec<u32>, Vec<[u32; 3]>, Vec<Option<usize>>);

/// See [`Change`].
pub(crate) fn remap(
    mesh: &CrackMesh,
    nodes: &[u32],
    path: &[u32],
    to_path: &[usize],
    copies: &HashMap<u32, [u32; 2]>,
    is_plus: impl Fn(u32) -> bool,
) -> Change {
    let node_index: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    // A corner's new vertex on its triangle's side: a path vertex's copy, or for a node the copy
    // of its path vertex.
    let copy = |v: u32, plus_side: bool| {
        let v = node_index.get(&v).map_or(v, |&i| path[to_path[i]]);
        copies.get(&v).map_or(v, |c| c[usize::from(!plus_side)])
    };
    let mut opening: Vec<u32> = copies.keys().copied().collect();
    opening.sort_unstable();
    let mut removed: Vec<u32> = nodes
        .iter()
        .chain(&opening)
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
    (removed, added, walls)
}

/// Open line `line` to be cut through whole, as [`cut_line`] reads it; refused as not through
/// when it is closed, already through or has no interior node.
fn whole_line(mesh: &CrackMesh, line: usize, reach: f64, thickness: f64) -> Result<&CrackLine, Refusal> {
    let crack = cut_line(mesh, line, reach, thickness)?;
    // A line of two ends is a front along the chord between them (a break-out's remnant,
    // `breakout`): its ligament is cut as any other.
    if crack.closed || crack.through || crack.nodes.len() < 2 {
        return Err(Refusal::NotThrough);
    }
    Ok(crack)
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
    replace_triangles(mesh, removed, added, walls);
    mark_through(mesh, line);
    Ok(())
}

/// Removes the triangle slots `removed` and adds the triangles `added`, each on the wall in
/// `walls` (or the body's surface): a cut's change, once checked.
fn replace_triangles(mesh: &mut CrackMesh, removed: &[u32], added: &[[u32; 3]], walls: &[Option<usize>]) {
    for &t in removed {
        mesh.remove_triangle(t);
    }
    for (&corners, &wall) in added.iter().zip(walls) {
        mesh.add_triangle_on(corners, wall);
    }
}

/// Marks line `line` cut through: its nodes are crack nodes no more, it has none left, and
/// both its ends are blocked.
fn mark_through(mesh: &mut CrackMesh, line: usize) {
    for v in mesh.lines()[line].nodes.clone() {
        mesh.set_crack_node(v, false);
    }
    let crack = &mut mesh.lines_mut()[line];
    crack.nodes.clear();
    crack.through = true;
    crack.blocked = [true; 2];
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
    if crack.closed || crack.through || crack.nodes.len() < 2 {
        return false;
    }
    let front = &crack.nodes[1..crack.nodes.len() - 1];
    front.iter().all(|&f| !mesh.is_active(f)) && front.iter().all(|&f| far_point(mesh, f, reach).is_some())
}

/// The point of the body's surface (no crack wall, no triangle of `f`) nearest front node `f`,
/// if it is within `reach` and ahead of the front: against the summed normals of `f`'s
/// triangles, which point back out through the crack's mouth.
pub(crate) fn far_point(mesh: &CrackMesh, f: u32, reach: f64) -> Option<DVec3> {
    far_hit(mesh, f, reach).map(|(q, _)| q)
}

/// The point [`far_point`] finds and the surface triangle it lies on.
pub(crate) fn far_hit(mesh: &CrackMesh, f: u32, reach: f64) -> Option<(DVec3, u32)> {
    nearest_hit(mesh, f, reach, |t| !mesh.is_wall(t), true)
}

/// The point nearest vertex `f` within `reach` (m) on the live triangles `keep` accepts that do
/// not hold `f`, and its triangle; with `ahead_only`, among the points ahead of `f` only
/// (against the summed normals of its triangles, which at a front node point back out through
/// the crack's mouth).
pub(crate) fn nearest_hit(
    mesh: &CrackMesh,
    f: u32,
    reach: f64,
    keep: impl Fn(u32) -> bool,
    ahead_only: bool,
) -> Option<(DVec3, u32)> {
    let x = mesh.positions()[f as usize];
    let back = if ahead_only { outward(mesh, f) } else { DVec3::ZERO };
    let mut best: Option<(f64, DVec3, u32)> = None;
    for t in mesh.triangles_near(x - DVec3::splat(reach), x + DVec3::splat(reach)) {
        if !keep(t) || mesh.triangle_slots()[t as usize].contains(&f) {
            continue;
        }
        let [a, b, c] = mesh.corners(t);
        let q = closest_point_on_triangle(x, a, b, c);
        let d = q.distance(x);
        let ahead = !ahead_only || (q - x).dot(back) < 0.0;
        if d <= reach && ahead && best.is_none_or(|(bd, _, _)| d < bd) {
            best = Some((d, q, t));
        }
    }
    best.map(|(_, q, t)| (q, t))
}

/// A path of surface edges from `a` to `b` along the crack: it leaves `a` towards `toward` and
/// then walks on along the surface's intersection with the plane of unit normal `e` through the
/// current vertex, never back, splitting edges where it crosses them; each new vertex slides
/// onto the crack plane through the nearest of `plane_points` (the line's nodes). See the
/// module docs.
pub(crate) fn trace(
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
        let step = if is_surface_edge(mesh, u, b) {
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
pub(crate) fn is_surface_edge(mesh: &CrackMesh, u: u32, v: u32) -> bool {
    let pair = mesh.edge_triangles(u, v);
    pair.len() == 2 && pair.iter().all(|&t| !mesh.is_wall(t))
}

/// Whether `v` is free of every crack: no crack node, no wall triangle.
pub(crate) fn uncracked(mesh: &CrackMesh, v: u32) -> bool {
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
pub(crate) fn settle(mesh: &mut CrackMesh, v: u32, on: DVec3, e: DVec3, bounds: AngleBounds) {
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

/// Collapses each edge of a traced `path` between two of its inner vertices that is shorter
/// than [`SHORT_STEP`] of the surface's edges around it, or that ends a detour round a corner of
/// one triangle (the vertex before the edge and the edge's far end are neighbours), and slides
/// the vertex left onto the crack plane (unit normal `e`) through the nearest of
/// `plane_points`.
/// - A crossing split just beside a vertex an earlier cut made leaves a short step; opened, its
///   two lips would be closer to each other than to the other side's, and the walls carried onto
///   them cross.
/// - A detour is left where the path splits an edge and then snaps to a vertex of the same
///   triangle (a crossing within [`SNAP_FRACTION`] of it). That vertex cannot settle onto the
///   plane, as it would flatten the triangle whose other corners already lie there, so it stays
///   up to a tenth of an edge off the crack, more than the crack is thick, and the walls carried
///   onto its lips cross the other side's. (Measured on the notched bar of `tests/bem_crack.rs`:
///   a stress that differed at the level of the solver's tolerance put a snapped vertex 5.5 mm
///   off a 2 mm crack, and the cut was refused.)
fn merge_short_and_detour_steps(
    mesh: &mut CrackMesh,
    mut path: Vec<u32>,
    plane_points: &[DVec3],
    e: DVec3,
    bounds: AngleBounds,
) -> Vec<u32> {
    let mut k = 1;
    while k + 2 < path.len() {
        let (a, b) = (path[k], path[k + 1]);
        let pos = |v: u32| mesh.positions()[v as usize];
        let ring = mesh.ring(a).unwrap_or_default();
        let local = ring.iter().map(|&r| pos(r).distance(pos(a))).sum::<f64>() / ring.len().max(1) as f64;
        // A detour: the path stepped round a corner of one triangle, from the vertex before `a`
        // to `a` to `b`, where it could have gone straight along the third edge.
        let detour = is_surface_edge(mesh, path[k - 1], b);
        if pos(a).distance(pos(b)) >= SHORT_STEP * local && !detour {
            k += 1;
            continue;
        }
        let settings = RemeshSettings {
            bounds,
            ..RemeshSettings::for_edge(local)
        };
        match collapse_edge(mesh, a, b, &settings) {
            Some(kept) => {
                path[k] = kept;
                path.remove(k + 1);
                let x = mesh.positions()[kept as usize];
                let nearest = plane_points
                    .iter()
                    .copied()
                    .min_by(|p, q| p.distance_squared(x).total_cmp(&q.distance_squared(x)))
                    .unwrap_or(x);
                settle(mesh, kept, nearest, e, bounds);
            }
            None => k += 1,
        }
    }
    path
}

/// A traced path's edge shorter than this fraction of the edges around it is collapsed.
const SHORT_STEP: f64 = 0.25;

/// How far from the front (in reaches) a cut's path may run.
const PATH_REACH: f64 = 2.0;

/// A crossing this close to an edge's end (as a fraction of the edge) is taken at the end.
const SNAP_FRACTION: f64 = 0.1;
