//! Exact box-box contacts: the separating axis test over the fifteen candidate axes, then either
//! a clipped face manifold (`box_face.rs`) or a single edge-edge contact.
//!
//! The method is Gottschalk, Lin and Manocha 1996 (OBBTree, section 4) for the axis test and
//! Dickinson's / ODE's `dBoxBox` (as in Box2D-lite's `Collide`, Catto 2006) for the manifold:
//!
//! * Axes: the three face normals of each box and the nine cross products of an edge of A with
//!   an edge of B. Along a unit axis `L` the boxes' projections overlap by
//!   `ra + rb - |t . L|` (`ra`, `rb` the projected half widths, `t` the centre offset). If an axis
//!   separates them by `margin` or more there is no contact, and the test stops there (most
//!   candidate pairs of a pile are neighbours whose boxes overlap diagonally, and a face axis
//!   separates them); otherwise the axis of least overlap is the contact normal.
//! * Every projection is written with the nine cosines `R_ij = a_i . b_j` and the centre offset in
//!   A's frame, as Gottschalk does: the edge axis `a_i x b_j` has, in A's frame, the components
//!   `R_i1j`, `R_i2j` (`i1`, `i2` the two other axes), so its length is
//!   `sqrt(R_i1j^2 + R_i2j^2)` (a sum of squares: no cancellation for nearly parallel edges), and
//!   its projected half widths and centre distance are a few products of those cosines.
//! * Near-ties: a face axis of B must beat A's best face by a relative tolerance, and an edge axis
//!   must beat the best face axis by one too, so a resting stack keeps one reference face from
//!   step to step instead of flickering between equal faces or a face and a parallel edge pair
//!   (the alternative, taking the strict minimum, flips the manifold on rounding noise). The
//!   chosen axis overlaps by at most that tolerance more than the true minimum.
//! * Face contact: see `box_face.rs` (the incident face clipped against the reference face, then
//!   reduced to four points).
//! * Edge-edge contact: the two supporting edges along the axis; one contact midway between
//!   their closest points (Ericson 2005, section 5.1.9), depth the axis overlap.
//! * Boxes that touch only along an edge or at a corner get no contact. Such boxes overlap by no
//!   more than the tolerance along two or three face axes of one box and are apart by no more
//!   than it along every axis: what they share is a line or a point, and no direction in the
//!   wedge between their faces is the contact normal more than another. The test would take the
//!   first face axis of the tie, and its face contact is a strip of no width at the border of
//!   both faces. In a wall of aligned boxes every box has two such neighbours, diagonally below
//!   (and above): the first axis made them side contacts, whose rows took part of the load (any
//!   split of it among redundant rows solves the complementarity problem) and whose friction,
//!   vertical, tied each column to the next, and the sweeps did not settle: a 10 x 10 wall of
//!   unit cubes built at rest moved at 7 cm/s after its first step at 30 Hz and at up to 17 cm/s
//!   for seconds (sleeping off; with it on, the wall was still awake after 6 s), and a wall of
//!   12 courses of 8 bricks (0.4 x 0.2 x 0.2 m) fell down, sleeping on or off. Without those
//!   contacts no body of either is faster than 2e-8 m/s in 20 s (`cargo test --release --test
//!   stability_stacks -- aligned`). Boxes pressed into each other there overlap by more than the
//!   tolerance along one of the axes within a step and are given a contact then.
//!
//! Feature ids (for warm starting; the [`FeatureId`] owner bit says whose face is the reference,
//! or A for edge-edge): face contacts as `box_face.rs` documents; an edge-edge contact's index is
//! [`EDGE_EDGE`]` + 12 * edge_a + edge_b`, an edge numbered `4 * axis + (bit 0: + on the next
//! axis, bit 1: + on the one after)`.

use glam::{DMat3, DVec3};

use super::box_face::{ReferenceFace, face_contacts};
use super::{Contact, ContactManifold, FeatureId};
use crate::aabb::Aabb;
use crate::pose::Pose;
use crate::shapes::Cuboid;

/// Flag bit of an edge-edge contact's feature index.
pub(super) const EDGE_EDGE: usize = 1 << 30;

/// Relative tolerance of the axis preference, the vertex snapping and the contact reduction,
/// times the smallest half extent of the two boxes: 0.5 mm for boxes of 1 m. The particle path
/// uses the same share for sharp features that touch without overlapping (sampled.rs) and for
/// the band of an exact box's edges (surface_normal.rs), so boxes and meshes agree on touching.
pub(super) const RELATIVE_TOLERANCE: f64 = 1e-3;

/// Cross products shorter than this come from (nearly) parallel edges, whose axis is one of the
/// face axes already tested; normalizing them would only amplify rounding.
const PARALLEL_EDGES: f64 = 1e-6;

/// A posed box: centre, unit axes (world frame) and half extents, m.
pub(super) struct Obb {
    pub(super) center: DVec3,
    pub(super) axes: [DVec3; 3],
    pub(super) half: [f64; 3],
}

impl Obb {
    fn new(cuboid: &Cuboid, pose: &Pose) -> Self {
        let m = DMat3::from_quat(pose.orientation);
        Self {
            center: pose.position,
            axes: [m.x_axis, m.y_axis, m.z_axis],
            half: cuboid.half_extents().to_array(),
        }
    }

    /// `bounds` (a box in a frame at `frame` in the body frame: `x_body = frame * x`) of a body
    /// at `pose`.
    pub(super) fn of_bounds(bounds: &Aabb, frame: &Pose, pose: &Pose) -> Self {
        let orientation = pose.orientation * frame.orientation;
        let m = DMat3::from_quat(orientation);
        Self {
            center: pose.transform_point(frame.transform_point(bounds.center())),
            axes: [m.x_axis, m.y_axis, m.z_axis],
            half: (0.5 * bounds.size()).to_array(),
        }
    }

    fn smallest_half(&self) -> f64 {
        self.half[0].min(self.half[1]).min(self.half[2])
    }
}

/// What the axis test found for two boxes within the margin of each other.
#[derive(Clone, Copy)]
enum Overlap {
    /// The overlap along the chosen axis (m; negative: apart) and the axis.
    Along(f64, Axis),
    /// The boxes touch only along an edge or at a corner (module docs).
    EdgeOrCorner,
}

/// The candidate axis of least overlap.
#[derive(Clone, Copy)]
enum Axis {
    /// Face normal `axis` of box A (`of_b == false`) or B.
    Face { of_b: bool, axis: usize },
    /// Edge `i` of A crossed with edge `j` of B.
    Edges { i: usize, j: usize },
}

/// Box-box contacts written into `manifold` (empty on entry), reduced to at most four and sorted
/// by feature id, conventions of the module: normals from B towards A, depth the penetration
/// along it, points midway between the surfaces; none beyond `margin`.
pub(super) fn collide(
    ca: &Cuboid,
    pose_a: &Pose,
    cb: &Cuboid,
    pose_b: &Pose,
    margin: f64,
    manifold: &mut ContactManifold,
) {
    let (a, b) = (Obb::new(ca, pose_a), Obb::new(cb, pose_b));
    let tolerance = RELATIVE_TOLERANCE * a.smallest_half().min(b.smallest_half());
    let (depth, axis) = match least_overlap(&a, &b, margin, tolerance) {
        Ok(Overlap::Along(depth, axis)) => (depth, axis),
        // Touching along an edge or at a corner (module docs): no contact, no known gap.
        Ok(Overlap::EdgeOrCorner) => return,
        Err(gap) => {
            manifold.separation = gap;
            return;
        }
    };
    let t = b.center - a.center;
    // Orients a unit axis from B towards A.
    let towards_a = |l: DVec3| if t.dot(l) > 0.0 { -l } else { l };
    match axis {
        Axis::Face { of_b: true, axis } => {
            // B's face is the reference; its outward normal points towards A.
            let normal = towards_a(b.axes[axis]);
            let face = ReferenceFace {
                axis,
                normal,
                of_b: true,
            };
            face_contacts(&b, &a, face, margin, tolerance, manifold);
        }
        Axis::Face { of_b: false, axis } => {
            let normal = -towards_a(a.axes[axis]);
            let face = ReferenceFace {
                axis,
                normal,
                of_b: false,
            };
            face_contacts(&a, &b, face, margin, tolerance, manifold);
        }
        Axis::Edges { i, j } => {
            let normal = towards_a(a.axes[i].cross(b.axes[j]).normalize());
            manifold.contacts.push(edge_contact(&a, &b, i, j, normal, depth));
        }
    }
}

/// The gap between boxes `a` and `b` along an axis that separates them by `margin` m or more,
/// m, if there is one: a lower bound of the distance between any point of one and any of the
/// other.
pub(super) fn gap_beyond(a: &Obb, b: &Obb, margin: f64) -> Option<f64> {
    least_overlap(a, b, margin, 0.0).err()
}

/// The overlap along the chosen axis and the axis (with the preferences of the module docs,
/// `tolerance` m), or that the boxes touch only along an edge or at a corner, or, as soon as an
/// axis separates the boxes by `margin` or more, the gap along it, m.
fn least_overlap(a: &Obb, b: &Obb, margin: f64, tolerance: f64) -> Result<Overlap, f64> {
    let t = b.center - a.center;
    let (ha, hb) = (a.half, b.half);
    // r[i][j] = a_i . b_j; ta, tb: the centre offset in A's and B's frames.
    let r: [[f64; 3]; 3] = core::array::from_fn(|i| core::array::from_fn(|j| a.axes[i].dot(b.axes[j])));
    let abs: [[f64; 3]; 3] = r.map(|row| row.map(f64::abs));
    let ta: [f64; 3] = core::array::from_fn(|i| t.dot(a.axes[i]));
    let tb: [f64; 3] = core::array::from_fn(|j| t.dot(b.axes[j]));
    // Least overlap per family; ties keep the first axis. Each box's face axes along which the
    // boxes touch, overlapping or apart by at most the tolerance, are counted.
    let touches = |overlap: f64| usize::from(overlap.abs() <= tolerance);
    let mut face_a = (f64::INFINITY, 0);
    let mut touching_a = 0;
    for i in 0..3 {
        let overlap = ha[i] + hb[0] * abs[i][0] + hb[1] * abs[i][1] + hb[2] * abs[i][2] - ta[i].abs();
        if -overlap >= margin {
            return Err(-overlap);
        }
        if overlap < face_a.0 {
            face_a = (overlap, i);
        }
        touching_a += touches(overlap);
    }
    let mut face_b = (f64::INFINITY, 0);
    let mut touching_b = 0;
    for j in 0..3 {
        let overlap = hb[j] + ha[0] * abs[0][j] + ha[1] * abs[1][j] + ha[2] * abs[2][j] - tb[j].abs();
        if -overlap >= margin {
            return Err(-overlap);
        }
        if overlap < face_b.0 {
            face_b = (overlap, j);
        }
        touching_b += touches(overlap);
    }
    let mut edges = (f64::INFINITY, 0, 0);
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        for j in 0..3 {
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            // a_i x b_j in A's frame is R_i1j e_i2 - R_i2j e_i1.
            let length = (r[i1][j] * r[i1][j] + r[i2][j] * r[i2][j]).sqrt();
            if !(length > PARALLEL_EDGES) {
                continue;
            }
            let distance = (r[i1][j] * ta[i2] - r[i2][j] * ta[i1]).abs();
            let radius_a = ha[i1] * abs[i2][j] + ha[i2] * abs[i1][j];
            let radius_b = hb[j1] * abs[i][j2] + hb[j2] * abs[i][j1];
            let overlap = (radius_a + radius_b - distance) / length;
            if -overlap >= margin {
                return Err(-overlap);
            }
            if overlap < edges.0 {
                edges = (overlap, i, j);
            }
        }
    }
    let mut chosen = if face_b.0 < face_a.0 - tolerance {
        (
            face_b.0,
            Axis::Face {
                of_b: true,
                axis: face_b.1,
            },
        )
    } else {
        (
            face_a.0,
            Axis::Face {
                of_b: false,
                axis: face_a.1,
            },
        )
    };
    if edges.0 < chosen.0 - tolerance {
        chosen = (edges.0, Axis::Edges { i: edges.1, j: edges.2 });
    }
    // Apart by no more than the tolerance along every axis, and touching along two or three face
    // axes of one box: what the boxes share is a line or a point.
    let least = face_a.0.min(face_b.0).min(edges.0);
    if (touching_a >= 2 || touching_b >= 2) && least >= -tolerance {
        return Ok(Overlap::EdgeOrCorner);
    }
    Ok(Overlap::Along(chosen.0, chosen.1))
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
