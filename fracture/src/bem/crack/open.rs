//! Opening a crack at a surface vertex (Zhu 2015 section 6.3, Fig. 9 A1): the crack plane
//! through the vertex cuts its 1-ring; the cut is thickened into a slot of the crack thickness
//! whose walls meet at a new front node just inside the material.
//!
//! Construction, for vertex `v` at `x` with outward normal `N`, crack-plane normal `e` and
//! thickness `t`:
//! 1. The plane `e . (y - x) = 0` crosses the link (the polygon of `v`'s neighbours) at two
//!    points `a` and `b`. A neighbour within [`SNAP_DEGREES`] of the plane is used as the crossing
//!    itself ("if the cutting line is almost aligned with a 1-ring edge, we replace it with the
//!    edge"); otherwise the link edge is split at the crossing. Any other number of crossings
//!    (a saddle, or a vertex on a fold) refuses the opening.
//! 2. `v` is replaced by two surface vertices `v+ = x + m` and `v- = x - m` with `|m| = t/2`,
//!    where `m` is along `e` made tangent to the surface, or along the ridge when `v` is on one
//!    (so both faces keep their planes), pointing to the `e`-positive side; the
//!    triangles on the `e`-positive side of the cut take `v+`, the others `v-`. The mouth of the
//!    slot is the loop `a, v+, b, v-`. Corners, and planes nearly containing a ridge, refuse.
//! 3. A front node `f = x - N' depth` closes the slot with four wall triangles
//!    `(a, v+, f), (v+, b, f), (b, v-, f), (v-, a, f)`, wound so the surface stays a closed,
//!    consistently oriented manifold. `N'` is `N` made parallel to the crack plane, so the front
//!    starts in the plane the fronts then move in: with `f` along `N` itself, a plane tilted
//!    from the normal put the front node a fifth of an edge off it, and the first in-plane moves
//!    of that front removed four times the thickness times the crack area (a random plane
//!    through a sphere in `crack_random_planes_through_spheres_and_boxes_keep_the_mesh_valid`,
//!    its case kept in `fracture/proptest-regressions`).
//!
//! The crack line is `[a, f, b]`: `f` is active, the ends `a` and `b` sit on the surface and are
//! inactive. The opening is made only if every new triangle passes [`super::check::acceptable`];
//! otherwise the mesh keeps its shape and validity (a link edge may have been split, which
//! changes no geometry).
//!
//! Volume: the slot is a wedge of mouth width `t` narrowing to zero at the front, so the volume
//! removed is at most `t` times the crack area (half of it for a straight front).

use glam::DVec3;
use smallvec::SmallVec;

use super::check::acceptable;
use super::mesh::{CrackLine, CrackMesh};
use super::ops::{FEATURE_DEGREES, sharp_neighbours, split_edge};
use super::validate::AngleBounds;

/// A neighbour closer to the crack plane than this angle, seen from the vertex, is taken as the
/// crossing instead of splitting a link edge next to it (degrees).
pub const SNAP_DEGREES: f64 = 12.0;

/// Where and how wide a crack opens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Opening {
    /// The surface vertex the crack starts from.
    pub vertex: u32,
    /// Unit normal of the crack plane: the direction of the largest principal stress.
    pub plane_normal: DVec3,
    /// Crack thickness `t` (m): the mouth width.
    pub thickness: f64,
    /// How deep the front node starts (m), about half an edge length.
    pub depth: f64,
}

/// Why an opening was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The vertex is already a crack node or not on the surface.
    NotASurfaceVertex,
    /// The crack plane does not cross the vertex's 1-ring exactly twice on opposite sides.
    Crossings,
    /// A split or the slot would break the angle bounds or intersect the surface.
    Geometry,
    /// The cut runs into crack line (this index): one of its nodes or its walls.
    MetCrack(usize),
    /// The crack has not cut through: it is a closed loop, has cut through already, or some
    /// front node is still active or has no far surface within reach ahead of it.
    NotThrough,
    /// The end of a crack through a wall lies on a sharp edge of the body (the wall's rim): it
    /// stops there, and the line is cut through along its front (`through`), rather than turn
    /// round the rim onto another face.
    AtRim,
    /// An input out of range: the parameter named, which must be finite and positive (a
    /// thickness or depth), non-zero and finite (a plane normal) or a vertex of the mesh.
    BadInput(&'static str),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotASurfaceVertex => write!(f, "the vertex is not on the surface or is already a crack node"),
            Self::Crossings => write!(f, "the crack plane does not cross the vertex's 1-ring exactly twice"),
            Self::Geometry => write!(
                f,
                "the cut would break the angle bounds or make the surface intersect itself"
            ),
            Self::MetCrack(line) => write!(f, "the cut runs into crack line {line}"),
            Self::AtRim => write!(f, "the end of a crack through a wall lies on the wall's rim"),
            Self::NotThrough => write!(f, "the crack front has not reached the far surface all along"),
            Self::BadInput(what) => write!(f, "bad {what}"),
        }
    }
}

impl std::error::Error for Refusal {}

/// Opens a crack (see the module docs) and returns the index of its new line.
pub fn open_crack(mesh: &mut CrackMesh, opening: Opening, bounds: AngleBounds) -> Result<usize, Refusal> {
    let v = opening.vertex;
    if v as usize >= mesh.positions().len() {
        return Err(Refusal::BadInput("vertex (not in the mesh)"));
    }
    if !(opening.plane_normal.is_finite() && opening.plane_normal.length_squared() > 0.0) {
        return Err(Refusal::BadInput("crack plane normal (must be finite and non-zero)"));
    }
    if !(opening.thickness.is_finite() && opening.thickness > 0.0) {
        return Err(Refusal::BadInput("crack thickness (must be finite and > 0 m)"));
    }
    if !(opening.depth.is_finite() && opening.depth > 0.0) {
        return Err(Refusal::BadInput("front depth (must be finite and > 0 m)"));
    }
    if !mesh.vertex_in_use(v) || mesh.is_crack_node(v) {
        return Err(Refusal::NotASurfaceVertex);
    }
    let e = opening.plane_normal.normalize_or_zero();
    let x = mesh.positions()[v as usize];
    let ring = mesh.ring(v).ok_or(Refusal::NotASurfaceVertex)?;
    let [a, b] = crossings(mesh, v, &ring, e, bounds)?;
    let ab_positive = {
        let ring = mesh.ring(v).ok_or(Refusal::Geometry)?;
        let n = ring.len();
        let ia = ring.iter().position(|&r| r == a).ok_or(Refusal::Geometry)?;
        let ib = ring.iter().position(|&r| r == b).ok_or(Refusal::Geometry)?;
        let side_of = |i: usize| e.dot(mesh.positions()[ring[i % n] as usize] - x);
        let ab_positive = side_of(ia + 1) > 0.0;
        if (side_of(ib + 1) > 0.0) == ab_positive {
            // The plane only touches the ring: both arcs lie on one side.
            return Err(Refusal::Crossings);
        }
        ab_positive
    };
    let f = slot(
        mesh,
        Slot {
            vertex: v,
            first: a,
            second: b,
            first_arc_positive: ab_positive,
            plane_normal: e,
            thickness: opening.thickness,
            depth: opening.depth,
            toward: None,
            line: mesh.lines().len(),
        },
        bounds,
    )?;
    mesh.add_line(CrackLine {
        nodes: vec![a, f, b],
        closed: false,
        plane_normal: e,
        plane_point: x,
        blocked: [false; 2],
        through: false,
        broken_out: false,
    });
    mesh.set_active(f, true);
    Ok(mesh.lines().len() - 1)
}

/// A slot to cut at `vertex` between two of its ring neighbours: the crack plane passes
/// through `vertex`, `first` and `second`.
pub(crate) struct Slot {
    /// The surface vertex replaced by the slot's two lips and its front node.
    pub vertex: u32,
    /// One ring neighbour the cut passes through.
    pub first: u32,
    /// The other.
    pub second: u32,
    /// Whether the ring arc from `first` counter-clockwise to `second` is on the positive side
    /// of the crack plane (the side `plane_normal` points to).
    pub first_arc_positive: bool,
    /// Unit normal of the crack plane.
    pub plane_normal: DVec3,
    /// Mouth width (m).
    pub thickness: f64,
    /// How far inside the new front node goes (m).
    pub depth: f64,
    /// The crack line the slot's walls belong to.
    pub line: usize,
    /// Unit direction, in the crack plane and into the material, in which the front node goes
    /// in; `None`: the inward surface normal made parallel to the plane.
    pub toward: Option<DVec3>,
}

/// Replaces `slot.vertex` with two lip vertices `v+`, `v-` (the triangles of each arc of its
/// ring take the one on their side) and closes the gap with four wall triangles meeting at a new
/// front node below it (see the module docs). Returns the front node; refuses, changing nothing,
/// when a new triangle would break the bounds or intersect the surface.
pub(crate) fn slot(mesh: &mut CrackMesh, slot: Slot, bounds: AngleBounds) -> Result<u32, Refusal> {
    let v = slot.vertex;
    let x = mesh.positions()[v as usize];
    let ring = mesh.ring(v).ok_or(Refusal::Geometry)?;
    let n = ring.len();
    let ia = ring.iter().position(|&r| r == slot.first).ok_or(Refusal::Geometry)?;
    let ib = ring.iter().position(|&r| r == slot.second).ok_or(Refusal::Geometry)?;
    // The arc from first to second (counter-clockwise) holds the triangles (v, r_i, r_i+1) for
    // i from ia up to ib - 1.
    let arc_ab: SmallVec<[usize; 8]> = (0..n).map(|k| (ia + k) % n).take_while(|&i| i != ib).collect();
    if arc_ab.len() < 2 || arc_ab.len() > n - 2 {
        return Err(Refusal::Crossings);
    }
    let normal = mesh.surface_normal(v);
    let e = slot.plane_normal;
    let half = lip_offset(mesh, v, normal, e, slot.thickness).ok_or(Refusal::Crossings)?;
    let vp = mesh.add_vertex(x + half);
    let vm = mesh.add_vertex(x - half);
    // The front node goes in below the vertex within the crack plane: along the inward normal
    // made parallel to the plane (or `toward`), so the walls start in the plane they are cut
    // along.
    let down = slot
        .toward
        .unwrap_or_else(|| -(normal - e * e.dot(normal)).normalize_or(normal));
    let f = mesh.add_vertex(x + down * slot.depth);

    // The fan: each triangle around v, with v replaced by the vertex of its side.
    let mut removed = Vec::with_capacity(n);
    let mut added = Vec::with_capacity(n + 4);
    for i in 0..n {
        let (r0, r1) = (ring[i], ring[(i + 1) % n]);
        let t = mesh
            .incident(v)
            .iter()
            .copied()
            .find(|&t| mesh.others_ccw(t, v) == [r0, r1])
            .ok_or(Refusal::Geometry)?;
        let side = if arc_ab.contains(&i) == slot.first_arc_positive {
            vp
        } else {
            vm
        };
        removed.push(t);
        added.push([side, r0, r1]);
    }
    // The positive fan's open edges are vp -> start and end -> vp; the walls close the loop.
    let (start, end) = if slot.first_arc_positive {
        (slot.first, slot.second)
    } else {
        (slot.second, slot.first)
    };
    added.extend([[start, vp, f], [vp, end, f], [end, vm, f], [vm, start, f]]);
    if !acceptable(mesh, &removed, &added, bounds, None) {
        return Err(Refusal::Geometry);
    }
    for (t, tri) in removed.iter().zip(&added) {
        mesh.replace_triangle(*t, *tri);
    }
    for tri in &added[n..] {
        mesh.add_triangle_on(*tri, Some(slot.line));
    }
    Ok(f)
}

/// Where the lips go: `v +- offset`, half the thickness away along the surface on either side
/// of the crack plane (so the mouth is the thickness wide), moving `v` only in ways that keep
/// the surface's shape to first order. On a smooth stretch the offset is along the crack-plane
/// normal made tangent to the surface. On a ridge (two sharp edges of the body's surface meet
/// at `v`) it runs along the ridge, which keeps `v` on both faces: a tangent offset would lift it
/// off one of them and change the volume by about the thickness times the fan's area. At a
/// corner, or where the plane is within 60 degrees of containing the ridge, there is no such
/// move: `None`.
pub(crate) fn lip_offset(mesh: &CrackMesh, v: u32, normal: DVec3, e: DVec3, thickness: f64) -> Option<DVec3> {
    match sharp_neighbours(mesh, v, FEATURE_DEGREES, true).len() {
        0 => tangent_offset(normal, e, thickness),
        // A plane within 60 degrees of containing the ridge would cut it at a glancing angle.
        2 if normal != DVec3::ZERO => ridge_offset(mesh, v, e, thickness, 0.5),
        _ => None,
    }
}

/// Half the thickness along the ridge through `v` (exactly two sharp edges of the body's
/// surface meet there), to the side the crack-plane normal `e` points to, where the cosine
/// between `e` and the ridge is at least `least_cos` in size: the move that keeps `v` on both
/// faces. `None` off a ridge or where the plane is nearer than that to containing it.
pub(crate) fn ridge_offset(mesh: &CrackMesh, v: u32, e: DVec3, thickness: f64, least_cos: f64) -> Option<DVec3> {
    let sharp = sharp_neighbours(mesh, v, FEATURE_DEGREES, true);
    if sharp.len() != 2 {
        return None;
    }
    let direction = (mesh.positions()[sharp[1] as usize] - mesh.positions()[sharp[0] as usize]).normalize_or_zero();
    let along = e.dot(direction);
    (along.abs() >= least_cos && along != 0.0).then(|| direction * (0.5 * thickness * along.signum()))
}

/// Half the thickness along `e` made tangent to a surface of unit normal `normal`, pointing to
/// the positive side; `None` when the plane of normal `e` meets the surface within 60 degrees of
/// tangent (or the normal is unknown). The lips' offset on a smooth stretch, and at a corner the
/// offset that moves it off its faces by at most that much.
pub(crate) fn tangent_offset(normal: DVec3, e: DVec3, thickness: f64) -> Option<DVec3> {
    let along = (e - normal * normal.dot(e)).normalize_or_zero();
    (normal != DVec3::ZERO && along.dot(e) >= 0.5).then(|| along * (0.5 * thickness))
}

/// The two link vertices the cut passes through, splitting link edges where needed.
fn crossings(mesh: &mut CrackMesh, v: u32, ring: &[u32], e: DVec3, bounds: AngleBounds) -> Result<[u32; 2], Refusal> {
    let x = mesh.positions()[v as usize];
    let snap = SNAP_DEGREES.to_radians().sin();
    // Side of each neighbour: -1, 0 (on the plane, within the snap angle) or +1.
    let side: SmallVec<[i32; 8]> = ring
        .iter()
        .map(|&r| {
            let d = mesh.positions()[r as usize] - x;
            let s = e.dot(d);
            if s.abs() <= snap * d.length() {
                0
            } else if s > 0.0 {
                1
            } else {
                -1
            }
        })
        .collect();
    let n = ring.len();
    // Crossings: neighbours on the plane, and link edges between the two sides.
    let mut found: SmallVec<[(usize, Option<f64>); 4]> = SmallVec::new();
    for i in 0..n {
        let j = (i + 1) % n;
        if side[i] == 0 {
            found.push((i, None));
        } else if side[i] * side[j] < 0 {
            let (si, sj) = (
                e.dot(mesh.positions()[ring[i] as usize] - x),
                e.dot(mesh.positions()[ring[j] as usize] - x),
            );
            found.push((i, Some(si / (si - sj))));
        }
    }
    if found.len() != 2 {
        return Err(Refusal::Crossings);
    }
    let mut out = [0; 2];
    for (k, (i, lambda)) in found.into_iter().enumerate() {
        out[k] = match lambda {
            None => ring[i],
            Some(l) => {
                let (p, q) = (ring[i], ring[(i + 1) % n]);
                let at = mesh.positions()[p as usize].lerp(mesh.positions()[q as usize], l);
                split_edge(mesh, p, q, at, bounds).ok_or(Refusal::Geometry)?
            }
        };
    }
    Ok(out)
}
