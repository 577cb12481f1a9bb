//! Box-box face contacts: the incident face clipped against the reference face, then reduced to
//! four points (see `box_box.rs` for the axis test that picks the faces).
//!
//! The face of the reference box along the contact axis is the reference face; the face of the
//! other box most anti-parallel to it is the incident face. The incident quadrilateral is clipped
//! against the reference face's four side planes (Sutherland and Hodgman 1974); every clipped
//! point below the reference face (or less than `margin` above it) is a contact. The work is done
//! in the reference face's frame (two axes in the face, the outward normal), where the side
//! planes are `|u| <= half_u`, `|v| <= half_v` and the depth is the face's height minus the
//! point's: a clipped octagon costs a few additions, and only the kept points are taken back to
//! world coordinates.
//!
//! Feature ids: a face contact's index is `(reference_face * 6 + incident_face) * 64 + point`,
//! faces numbered `2 * axis + (0 for +, 1 for -)` in the owning box's frame, and `point` names
//! the clipped point by topology, not position: 0..4 an incident-face vertex, `4 + 4 * edge +
//! side` where incident edge `edge` crosses side plane `side`, `20 + 4 * s + t` (`s < t`) where
//! side planes `s` and `t` meet (a reference-face corner). An incident vertex within a small
//! relative tolerance outside a side plane is slid along its incident edge onto the plane and
//! keeps its vertex id, so two equal boxes stacked flush keep their ids while they drift.
//! More than four points are reduced as `reduce.rs` describes, with the same tolerance, so the
//! kept ids stay put under motions smaller than it too.

use glam::{DVec2, DVec3};
use smallvec::SmallVec;

use super::box_box::Obb;
use super::reduce::{Candidate, select};
use super::{Contact, ContactManifold, FeatureId};

/// Most vertices a clipped polygon holds. Clipping a convex quadrilateral by four planes gives at
/// most eight; rounding can make a pass see a vertex within a hair of its plane on the wrong side
/// and add a few more, all on that plane: past this many, they are dropped (each is within
/// rounding of a point that is kept).
const MAX_VERTICES: usize = 16;

/// A polygon in the reference frame being clipped: each vertex with its point code and the id of
/// the edge from it to the next vertex (incident edge `e` is `e`, side plane `s` is `4 + s`).
#[derive(Clone, Copy)]
struct Polygon {
    len: usize,
    points: [DVec3; MAX_VERTICES],
    codes: [u8; MAX_VERTICES],
    edges: [u8; MAX_VERTICES],
}

impl Polygon {
    const EMPTY: Self = Self {
        len: 0,
        points: [DVec3::ZERO; MAX_VERTICES],
        codes: [0; MAX_VERTICES],
        edges: [0; MAX_VERTICES],
    };

    fn push(&mut self, point: DVec3, code: usize, edge: usize) {
        if self.len < MAX_VERTICES {
            self.points[self.len] = point;
            self.codes[self.len] = code as u8;
            self.edges[self.len] = edge as u8;
            self.len += 1;
        }
    }
}

/// Face number `2 * axis + (0 for the + face, 1 for the - face)` of the face with outward normal
/// `normal` along `axis` of `box_`.
fn face_number(box_: &Obb, axis: usize, normal: DVec3) -> usize {
    2 * axis + usize::from(box_.axes[axis].dot(normal) < 0.0)
}

/// How far `x` (reference frame) lies outside side plane `s` of a face of half sizes `half`:
/// side 0 is `+u`, 1 is `+v`, 2 is `-u`, 3 is `-v`.
fn outside(x: DVec3, half: [f64; 2], s: usize) -> f64 {
    match s {
        0 => x.x - half[0],
        1 => x.y - half[1],
        2 => -x.x - half[0],
        _ => -x.y - half[1],
    }
}

/// The reference face of a face contact.
pub(super) struct ReferenceFace {
    /// The reference box's axis the face is normal to.
    pub(super) axis: usize,
    /// Its outward unit normal, world frame, pointing at the other box.
    pub(super) normal: DVec3,
    /// Whether the reference box is body B.
    pub(super) of_b: bool,
}

/// Contacts (reduced to four, sorted by feature id) of `reference`'s face `face` against
/// `incident`'s most anti-parallel face, written into `manifold` (empty on entry). `tolerance`
/// (m) is the snapping and reduction tolerance.
pub(super) fn face_contacts(
    reference: &Obb,
    incident: &Obb,
    face: ReferenceFace,
    margin: f64,
    tolerance: f64,
    manifold: &mut ContactManifold,
) {
    let ReferenceFace { axis, normal, of_b } = face;
    // The incident face: most anti-parallel to the reference normal; ties to the lowest axis.
    let cosines = incident.axes.map(|x| x.dot(normal));
    let m = (0..3).fold(0, |m, k| if cosines[k].abs() > cosines[m].abs() { k } else { m });
    let incident_normal = if cosines[m] > 0.0 {
        -incident.axes[m]
    } else {
        incident.axes[m]
    };
    let (p, q) = ((m + 1) % 3, (m + 2) % 3);
    // The reference frame: the face's two axes and its outward normal, origin at the box centre.
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let frame = [reference.axes[u], reference.axes[v], normal];
    let local = |x: DVec3| DVec3::new(x.dot(frame[0]), x.dot(frame[1]), x.dot(frame[2]));
    let face_center = local(incident.center - reference.center + incident_normal * incident.half[m]);
    let (hp, hq) = (
        local(incident.axes[p] * incident.half[p]),
        local(incident.axes[q] * incident.half[q]),
    );
    // Counter-clockwise around the face in (p, q); edge `e` joins vertex `e` to `e + 1`.
    let mut quad = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)].map(|(sp, sq)| face_center + hp * sp + hq * sq);
    let half = [reference.half[u], reference.half[v]];
    snap_vertices(&mut quad, half, tolerance);
    // Two buffers, clipped from one into the other and back.
    let mut polygons = [Polygon::EMPTY; 2];
    for (code, x) in quad.iter().enumerate() {
        polygons[0].push(*x, code, code);
    }
    for s in 0..4 {
        let [even, odd] = &mut polygons;
        if s % 2 == 0 {
            clip(even, odd, half, s);
        } else {
            clip(odd, even, half, s);
        }
    }
    let polygon = &polygons[0];
    let height = reference.half[axis];
    let reference_face = face_number(reference, axis, normal);
    let incident_face = face_number(incident, m, incident_normal);
    let base = (reference_face * 6 + incident_face) * 64;
    let feature = |code: u8| {
        let index = base + usize::from(code);
        if of_b {
            FeatureId::of_b(index)
        } else {
            FeatureId::of_a(index)
        }
    };
    let mut candidates: SmallVec<[Candidate; MAX_VERTICES]> = SmallVec::new();
    for (x, code) in polygon.points[..polygon.len].iter().zip(&polygon.codes) {
        let depth = height - x.z;
        if depth > -margin {
            candidates.push(Candidate {
                plane: DVec2::new(x.x, x.y),
                depth,
                feature: feature(*code),
            });
        }
    }
    // The contact normal points from B towards A.
    let contact_normal = if of_b { normal } else { -normal };
    for &i in select(&candidates, tolerance).as_slice() {
        let c = &candidates[i];
        // The incident point is on the incident surface; the reference face is `depth` further
        // along the reference normal: the contact is midway.
        let up = height - 0.5 * c.depth;
        manifold.contacts.push(Contact {
            point: reference.center + frame[0] * c.plane.x + frame[1] * c.plane.y + normal * up,
            normal: contact_normal,
            depth: c.depth,
            feature: c.feature,
        });
    }
    manifold.contacts.sort_by_key(|c| c.feature);
}

/// Slides each incident vertex that lies outside a side plane by less than `tolerance` along its
/// incident edge onto the plane (the edge whose other end is inside, the nearer crossing if both
/// are), so that faces flush with each other clip to their own vertices, whose ids stay put while
/// the boxes drift by less than the tolerance.
fn snap_vertices(quad: &mut [DVec3; 4], half: [f64; 2], tolerance: f64) {
    for s in 0..4 {
        let out = quad.map(|x| outside(x, half, s));
        let near = |i: usize| out[i] > 0.0 && out[i] < tolerance;
        if !(near(0) || near(1) || near(2) || near(3)) {
            continue;
        }
        // All four are decided from the positions before this side moved any.
        let before = *quad;
        for i in (0..4).filter(|&i| near(i)) {
            let mut best: Option<DVec3> = None;
            for n in [(i + 1) % 4, (i + 3) % 4] {
                if out[n] < 0.0 {
                    let f = out[i] / (out[i] - out[n]);
                    let crossing = before[i] + (before[n] - before[i]) * f;
                    let nearer =
                        best.is_none_or(|b| (crossing - before[i]).length_squared() < (b - before[i]).length_squared());
                    if nearer {
                        best = Some(crossing);
                    }
                }
            }
            if let Some(position) = best {
                quad[i] = position;
            }
        }
    }
}

/// One Sutherland-Hodgman pass: the part of `polygon` inside side plane `s`, written into `out`.
fn clip(polygon: &Polygon, out: &mut Polygon, half: [f64; 2], s: usize) {
    out.len = 0;
    let n = polygon.len;
    for i in 0..n {
        let next = if i + 1 == n { 0 } else { i + 1 };
        let (p, q) = (polygon.points[i], polygon.points[next]);
        let (dp, dq) = (outside(p, half, s), outside(q, half, s));
        let edge = usize::from(polygon.edges[i]);
        // The point where edge `edge` crosses side `s`, named by the pair.
        let crossing = || {
            let code = if edge < 4 {
                4 + 4 * edge + s
            } else {
                20 + 4 * (edge - 4).min(s) + (edge - 4).max(s)
            };
            (p + (q - p) * (dp / (dp - dq)), code)
        };
        match (dp <= 0.0, dq <= 0.0) {
            (true, true) => out.push(p, usize::from(polygon.codes[i]), edge),
            (true, false) => {
                out.push(p, usize::from(polygon.codes[i]), edge);
                let (x, code) = crossing();
                out.push(x, code, 4 + s);
            }
            (false, true) => {
                let (x, code) = crossing();
                out.push(x, code, edge);
            }
            (false, false) => {}
        }
    }
}
