//! Exact box-box contacts: the separating axis test over the fifteen candidate axes, then either
//! a clipped face manifold or a single edge-edge contact.
//!
//! The method is Gottschalk, Lin and Manocha 1996 (OBBTree, section 4) for the axis test and
//! Dickinson's / ODE's `dBoxBox` (as in Box2D-lite's `Collide`, Catto 2006) for the manifold:
//!
//! * Axes: the three face normals of each box and the nine cross products of an edge of A with
//!   an edge of B. Along a unit axis `L` the boxes' projections overlap by
//!   `ra + rb - |t . L|` (`ra`, `rb` the projected half widths, `t` the centre offset). If an axis
//!   separates them by `margin` or more there is no contact; otherwise the axis of least overlap
//!   is the contact normal.
//! * Near-ties: a face axis of B must beat A's best face by a relative tolerance, and an edge axis
//!   must beat the best face axis by one too, so a resting stack keeps one reference face from
//!   step to step instead of flickering between equal faces or a face and a parallel edge pair
//!   (the alternative, taking the strict minimum, flips the manifold on rounding noise). The
//!   chosen axis overlaps by at most that tolerance more than the true minimum.
//! * Face contact: the face of the chosen box along the axis is the reference face; the face of
//!   the other box most anti-parallel to it is the incident face. The incident quadrilateral is
//!   clipped against the reference face's four side planes (Sutherland and Hodgman 1974); every
//!   clipped point below the reference face (or less than `margin` above it) is a contact.
//! * Edge-edge contact: the two supporting edges along the axis; one contact midway between
//!   their closest points (Ericson 2005, section 5.1.9), depth the axis overlap.
//!
//! Feature ids (for warm starting; the [`FeatureId`] owner bit says whose face is the reference,
//! or A for edge-edge). A face contact's index is `(reference_face * 6 + incident_face) * 64 +
//! point`, faces numbered `2 * axis + (0 for +, 1 for -)` in the owning box's frame, and `point`
//! names the clipped point by topology, not position: 0..4 an incident-face vertex, `4 + 4 * edge
//! + side` where incident edge `edge` crosses side plane `side`, `20 + 4 * s + t` (`s < t`)
//! where side planes `s` and `t` meet (a reference-face corner). An incident vertex within a
//! small relative tolerance outside a side plane is slid along its incident edge onto the plane
//! and keeps its vertex id, so two equal boxes stacked flush keep their ids while they drift.
//! An edge-edge contact's index is [`EDGE_EDGE`]` + 12 * edge_a + edge_b`, an edge numbered
//! `4 * axis + (bit 0: + on the next axis, bit 1: + on the one after)`.

use glam::{DMat3, DVec3};
use smallvec::SmallVec;

use super::{Contact, FeatureId};
use crate::pose::Pose;
use crate::shapes::Cuboid;

/// Flag bit of an edge-edge contact's feature index.
pub(super) const EDGE_EDGE: usize = 1 << 30;

/// Relative tolerance of the axis preference and the vertex snapping, times the smallest half
/// extent of the two boxes: 1 mm for boxes of 1 m.
const RELATIVE_TOLERANCE: f64 = 1e-3;

/// Cross products shorter than this come from (nearly) parallel edges, whose axis is one of the
/// face axes already tested; normalizing them would only amplify rounding.
const PARALLEL_EDGES: f64 = 1e-6;

/// A posed box: centre, unit axes (world frame) and half extents, m.
struct Obb {
    center: DVec3,
    axes: [DVec3; 3],
    half: DVec3,
}

impl Obb {
    fn new(cuboid: &Cuboid, pose: &Pose) -> Self {
        let m = DMat3::from_quat(pose.orientation);
        Self {
            center: pose.position,
            axes: [m.x_axis, m.y_axis, m.z_axis],
            half: cuboid.half_extents(),
        }
    }

    /// Half width of the box's projection on unit axis `l`.
    fn radius(&self, l: DVec3) -> f64 {
        (0..3).map(|k| self.half[k] * self.axes[k].dot(l).abs()).sum()
    }
}

/// The candidate axis of least overlap, oriented from B towards A.
enum Axis {
    /// Face `axis` of box A (`b == false`) or B, normal `normal` (from B towards A).
    Face { of_b: bool, axis: usize, normal: DVec3 },
    /// Edge `i` of A crossed with edge `j` of B.
    Edges { i: usize, j: usize, normal: DVec3 },
}

/// Box-box contacts (unreduced), conventions of the module: normals from B towards A, depth the
/// penetration along it, points midway between the surfaces; none beyond `margin`.
pub(super) fn collide(ca: &Cuboid, pose_a: &Pose, cb: &Cuboid, pose_b: &Pose, margin: f64) -> Vec<Contact> {
    let (a, b) = (Obb::new(ca, pose_a), Obb::new(cb, pose_b));
    let t = b.center - a.center;
    let overlap = |l: DVec3| a.radius(l) + b.radius(l) - t.dot(l).abs();
    // Orients a unit axis from B towards A.
    let towards_a = |l: DVec3| if t.dot(l) > 0.0 { -l } else { l };
    let best = |candidates: &mut dyn Iterator<Item = (f64, Axis)>| {
        candidates.fold(None, |best: Option<(f64, Axis)>, (o, axis)| match best {
            Some((b, _)) if b <= o => best,
            _ => Some((o, axis)),
        })
    };
    let face_axis = |box_: &Obb, of_b: bool, axis: usize| {
        let l = box_.axes[axis];
        (
            overlap(l),
            Axis::Face {
                of_b,
                axis,
                normal: towards_a(l),
            },
        )
    };
    let (face_a, axis_a) = best(&mut (0..3).map(|k| face_axis(&a, false, k))).expect("three axes");
    let (face_b, axis_b) = best(&mut (0..3).map(|k| face_axis(&b, true, k))).expect("three axes");
    let edges = best(&mut (0..9).filter_map(|n| {
        let (i, j) = (n / 3, n % 3);
        let l = a.axes[i].cross(b.axes[j]);
        let length = l.length();
        (length > PARALLEL_EDGES).then(|| {
            let l = l / length;
            (
                overlap(l),
                Axis::Edges {
                    i,
                    j,
                    normal: towards_a(l),
                },
            )
        })
    }));
    let least = edges.as_ref().map_or(f64::INFINITY, |e| e.0).min(face_a).min(face_b);
    if -least >= margin {
        return Vec::new();
    }
    let tolerance = RELATIVE_TOLERANCE * a.half.min_element().min(b.half.min_element());
    let (mut depth, mut axis) = if face_b < face_a - tolerance {
        (face_b, axis_b)
    } else {
        (face_a, axis_a)
    };
    if let Some((edge_depth, edge_axis)) = edges {
        if edge_depth < depth - tolerance {
            (depth, axis) = (edge_depth, edge_axis);
        }
    }
    match axis {
        Axis::Face { of_b, axis, normal } => {
            if of_b {
                // B's face is the reference; its outward normal points towards A.
                face_contacts(&b, &a, axis, normal, margin, tolerance, true)
            } else {
                face_contacts(&a, &b, axis, -normal, margin, tolerance, false)
            }
        }
        Axis::Edges { i, j, normal } => vec![edge_contact(&a, &b, i, j, normal, depth)],
    }
}

/// Face number `2 * axis + (0 for the + face, 1 for the - face)` of the face with outward normal
/// `normal` along `axis` of `box_`.
fn face_number(box_: &Obb, axis: usize, normal: DVec3) -> usize {
    2 * axis + usize::from(box_.axes[axis].dot(normal) < 0.0)
}

/// Contacts of `reference`'s face along `axis` (outward normal `normal`, pointing at the other
/// box) against `incident`'s most anti-parallel face. `b_is_reference` says the reference box is
/// body B.
fn face_contacts(
    reference: &Obb,
    incident: &Obb,
    axis: usize,
    normal: DVec3,
    margin: f64,
    tolerance: f64,
    b_is_reference: bool,
) -> Vec<Contact> {
    // The incident face: most anti-parallel to the reference normal; ties to the lowest axis.
    let m = (0..3).fold(0, |m, k| {
        if incident.axes[k].dot(normal).abs() > incident.axes[m].dot(normal).abs() {
            k
        } else {
            m
        }
    });
    let incident_normal = if incident.axes[m].dot(normal) > 0.0 {
        -incident.axes[m]
    } else {
        incident.axes[m]
    };
    let (p, q) = ((m + 1) % 3, (m + 2) % 3);
    let face_center = incident.center + incident_normal * incident.half[m];
    let (hp, hq) = (incident.axes[p] * incident.half[p], incident.axes[q] * incident.half[q]);
    // Counter-clockwise around the face in (p, q); edge `e` joins vertex `e` to `e + 1`.
    let mut polygon: SmallVec<[(DVec3, usize); 8]> = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .iter()
        .enumerate()
        .map(|(code, (sp, sq))| (face_center + hp * *sp + hq * *sq, code))
        .collect();
    // Side planes of the reference face: `side . x <= offset`.
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let sides: [(DVec3, f64); 4] = [
        (reference.axes[u], reference.half[u]),
        (reference.axes[v], reference.half[v]),
        (-reference.axes[u], reference.half[u]),
        (-reference.axes[v], reference.half[v]),
    ]
    .map(|(n, h)| (n, n.dot(reference.center) + h));
    snap_vertices(&mut polygon, &sides, tolerance);
    // Edge ids of the polygon as it is clipped: incident edge `e` is `e`, side plane `s` is 4 + s.
    let mut edges: SmallVec<[usize; 8]> = (0..4).collect();
    for (s, (side, offset)) in sides.iter().enumerate() {
        let (clipped, clipped_edges) = clip(&polygon, &edges, *side, *offset, s);
        (polygon, edges) = (clipped, clipped_edges);
    }
    let plane = normal.dot(reference.center) + reference.half[axis];
    let reference_face = face_number(reference, axis, normal);
    let incident_face = face_number(incident, m, incident_normal);
    let base = (reference_face * 6 + incident_face) * 64;
    // The contact normal points from B towards A.
    let contact_normal = if b_is_reference { normal } else { -normal };
    polygon
        .iter()
        .filter_map(|(x, code)| {
            let depth = plane - normal.dot(*x);
            (depth > -margin).then(|| Contact {
                // The incident point is on the incident surface; the reference face is `depth`
                // further along the reference normal.
                point: *x + normal * (0.5 * depth),
                normal: contact_normal,
                depth,
                feature: if b_is_reference {
                    FeatureId::of_b(base + code)
                } else {
                    FeatureId::of_a(base + code)
                },
            })
        })
        .collect()
}

/// Slides each incident vertex that lies outside a side plane by less than `tolerance` along its
/// incident edge onto the plane (the edge whose other end is inside, the nearer crossing if both
/// are), so that faces flush with each other clip to their own vertices, whose ids stay put while
/// the boxes drift by less than the tolerance.
fn snap_vertices(polygon: &mut [(DVec3, usize)], sides: &[(DVec3, f64); 4], tolerance: f64) {
    for (side, offset) in sides {
        let outside: [f64; 4] = core::array::from_fn(|i| side.dot(polygon[i].0) - offset);
        let moved: [Option<DVec3>; 4] = core::array::from_fn(|i| {
            if !(outside[i] > 0.0 && outside[i] < tolerance) {
                return None;
            }
            [(i + 1) % 4, (i + 3) % 4]
                .iter()
                .filter(|n| outside[**n] < 0.0)
                .map(|n| {
                    let f = outside[i] / (outside[i] - outside[*n]);
                    polygon[i].0 + (polygon[*n].0 - polygon[i].0) * f
                })
                .min_by(|x, y| {
                    (*x - polygon[i].0)
                        .length_squared()
                        .total_cmp(&(*y - polygon[i].0).length_squared())
                })
        });
        for (vertex, position) in polygon.iter_mut().zip(moved) {
            if let Some(position) = position {
                vertex.0 = position;
            }
        }
    }
}

/// One Sutherland-Hodgman pass: the part of `polygon` (vertices with their point codes, `edges[i]`
/// the id of the edge from vertex `i` to the next) with `side . x <= offset`; `s` is the side's
/// number. Returns the clipped polygon and its edge ids.
#[allow(clippy::type_complexity)]
fn clip(
    polygon: &[(DVec3, usize)],
    edges: &[usize],
    side: DVec3,
    offset: f64,
    s: usize,
) -> (SmallVec<[(DVec3, usize); 8]>, SmallVec<[usize; 8]>) {
    let mut out = SmallVec::new();
    let mut out_edges = SmallVec::new();
    let n = polygon.len();
    for i in 0..n {
        let ((p, p_code), (q, _)) = (polygon[i], polygon[(i + 1) % n]);
        let (dp, dq) = (side.dot(p) - offset, side.dot(q) - offset);
        let edge = edges[i];
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
            (true, true) => {
                out.push((p, p_code));
                out_edges.push(edge);
            }
            (true, false) => {
                out.push((p, p_code));
                out_edges.push(edge);
                out.push(crossing());
                out_edges.push(4 + s);
            }
            (false, true) => {
                out.push(crossing());
                out_edges.push(edge);
            }
            (false, false) => {}
        }
    }
    (out, out_edges)
}

/// The contact of A's edge along axis `i` with B's edge along axis `j`, the supporting edges
/// along `normal` (from B towards A); `depth` is the axis overlap.
fn edge_contact(a: &Obb, b: &Obb, i: usize, j: usize, normal: DVec3, depth: f64) -> Contact {
    // A's edge is the one furthest towards B (along -normal), B's the one furthest towards A.
    let (start_a, number_a) = supporting_edge(a, i, -normal);
    let (start_b, number_b) = supporting_edge(b, j, normal);
    let (da, db) = (a.axes[i], b.axes[j]);
    let (ha, hb) = (a.half[i], b.half[j]);
    // Closest points of the segments start + s d, |s| <= h (Ericson 2005, section 5.1.9, with
    // unit directions so the quadratic's leading coefficients are 1).
    let r = start_a - start_b;
    let (cos, c, f) = (da.dot(db), da.dot(r), db.dot(r));
    let denominator = 1.0 - cos * cos;
    let mut s = if denominator > 0.0 {
        ((cos * f - c) / denominator).clamp(-ha, ha)
    } else {
        0.0
    };
    let t = (cos * s + f).clamp(-hb, hb);
    s = (cos * t - c).clamp(-ha, ha);
    let (pa, pb) = (start_a + da * s, start_b + db * t);
    Contact {
        point: 0.5 * (pa + pb),
        normal,
        depth,
        feature: FeatureId::of_a(EDGE_EDGE + 12 * number_a + number_b),
    }
}

/// The midpoint and number of `box_`'s edge along `axis` that reaches furthest along `direction`.
fn supporting_edge(box_: &Obb, axis: usize, direction: DVec3) -> (DVec3, usize) {
    let mut midpoint = box_.center;
    let mut number = 4 * axis;
    for (bit, k) in [(axis + 1) % 3, (axis + 2) % 3].into_iter().enumerate() {
        if box_.axes[k].dot(direction) >= 0.0 {
            midpoint += box_.axes[k] * box_.half[k];
            number |= 1 << bit;
        } else {
            midpoint -= box_.axes[k] * box_.half[k];
        }
    }
    (midpoint, number)
}
