//! The narrow phase: turns a pair of posed colliders into a small contact manifold.
//!
//! The general path is the one of Su 2009 section 4.1 (after Guendelman, Bridson and Fedkiw
//! 2003): every surface particle of each body is looked up in the other body's signed distance,
//! and each particle within the margin becomes a contact whose normal is the other body's distance
//! gradient (where that body has an edge or a corner at the particle, the particle's own surface
//! decides: surface_normal.rs); a ball against a level set is looked up at its deepest point instead of its particles
//! (sampled.rs). Pairs with a closed-form answer (sphere-sphere, box-box, sphere, capsule and box
//! against a half-space) take exact paths instead. Either way the manifold is then
//! reduced to at most four points (see [`reduce`]).
//!
//! Conventions: the normal is a world-frame unit vector pointing from body B towards body A (the
//! direction in which B pushes A); `depth` is the penetration along it (negative for a speculative
//! contact up to `margin` apart); `point` is midway between the two surfaces, world frame.

mod analytic;
mod ball;
mod box_box;
mod box_face;
mod capsule;
mod closing;
pub mod clusters;
mod collider;
pub mod reduce;
mod sampled;
pub mod surface_normal;

pub use closing::{Closing, NearReach};
pub use collider::{Collider, Geometry};

use std::borrow::Cow;

use glam::DVec3;
use smallvec::SmallVec;

use crate::error::GeometryError;
use crate::pose::Pose;
use crate::shapes::Shape;

/// Most contacts a manifold keeps.
pub const MAX_CONTACTS: usize = 4;

/// Which feature produced a contact, stable from step to step so the solver can warm-start.
///
/// The top bit says whose feature it is (0: body A's, 1: body B's); the rest is that body's
/// particle index, or for analytic pairs the corner or end index. Box-box contacts name the
/// reference face, the incident face and the clipped point, or the two edges of an edge-edge
/// contact (see the `box_box` module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureId(pub u32);

impl FeatureId {
    const B_BIT: u32 = 1 << 31;

    /// Feature `index` of body A.
    pub fn of_a(index: usize) -> Self {
        Self(index as u32 & !Self::B_BIT)
    }

    /// Feature `index` of body B.
    pub fn of_b(index: usize) -> Self {
        Self(index as u32 | Self::B_BIT)
    }

    /// Whether the feature belongs to body B.
    pub fn is_b(&self) -> bool {
        self.0 & Self::B_BIT != 0
    }

    /// The feature's index on its body.
    pub fn index(&self) -> usize {
        (self.0 & !Self::B_BIT) as usize
    }
}

/// One contact point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Midway between the two surfaces, world frame, m.
    pub point: DVec3,
    /// Unit normal from body B towards body A, world frame.
    pub normal: DVec3,
    /// Penetration along the normal, m; negative for a speculative contact within the margin.
    pub depth: f64,
    /// What produced it.
    pub feature: FeatureId,
}

/// The contacts of one pair, at most [`MAX_CONTACTS`], sorted by feature id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactManifold {
    /// The contacts.
    pub contacts: SmallVec<[Contact; MAX_CONTACTS]>,
    /// Without contacts: a distance the two surfaces are known to be apart by, m, from the
    /// separating axis or the closest feature that ended the test (for particle pairs, an axis
    /// separating the bodies' boxes, or else how far any particle must move relative to the
    /// other body to reach its surface); zero when the test measured none or found contacts. A
    /// caller may skip testing the pair again while no point of one body moves by more than this
    /// minus the margin relative to the other (for particle pairs, counting the other body's
    /// particles near the first as its points): no projection gap closes faster than the bodies
    /// move.
    pub separation: f64,
}

impl ContactManifold {
    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// The deepest penetration, m (`None` without contacts).
    pub fn max_depth(&self) -> Option<f64> {
        self.contacts.iter().map(|c| c.depth).reduce(f64::max)
    }
}

/// Contacts between collider `a` at `pose_a` and collider `b` at `pose_b`, including speculative
/// ones whose surfaces are less than `margin` m apart.
///
/// Fails on a non-finite or non-unit pose, or a negative or non-finite margin, naming it.
pub fn collide(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    margin: f64,
) -> Result<ContactManifold, GeometryError> {
    let mut manifold = ContactManifold::default();
    collide_into(a, pose_a, b, pose_b, margin, &mut manifold)?;
    Ok(manifold)
}

/// [`collide`] writing into `manifold` (its contacts replaced), for callers that test many pairs
/// and keep one manifold to write into: a manifold is a few hundred bytes, which returning by
/// value copies at every level. On failure `manifold` is left empty.
pub fn collide_into(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    margin: f64,
    manifold: &mut ContactManifold,
) -> Result<(), GeometryError> {
    collide_closing_into(a, pose_a, b, pose_b, &Closing::at_rest(margin), manifold)
}

/// [`collide_into`] for moving bodies: speculative contacts are kept as far apart as the pair's
/// motion `closing` can close within its step along each contact's normal (see [`Closing`]).
pub fn collide_closing_into(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    closing: &Closing,
    manifold: &mut ContactManifold,
) -> Result<(), GeometryError> {
    let margin = pair_margin(closing, a, pose_a, b, pose_b);
    collide_within_margin_into(a, pose_a, b, pose_b, closing, margin, manifold)
}

/// [`collide_closing_into`] for a caller that has the pair's margin at hand already (its
/// [`pair_margin`] under `closing`, which it needed to decide whether to test the pair at all):
/// a heap of debris tests tens of thousands of pairs a step, and the margin takes two roots and
/// the pair's motion at two points to work out.
pub fn collide_within_margin_into(
    a: &Collider,
    pose_a: &Pose,
    b: &Collider,
    pose_b: &Pose,
    closing: &Closing,
    margin: f64,
    manifold: &mut ContactManifold,
) -> Result<(), GeometryError> {
    manifold.contacts.clear();
    manifold.separation = 0.0;
    check_motion(pose_a, pose_b, closing)?;
    if !(margin.is_finite() && margin >= closing.margin) {
        return Err(GeometryError::invalid(
            "pair margin",
            margin,
            "the pair's margin under its motion (narrow_phase::pair_margin)",
        ));
    }
    debug_assert_eq!(margin.to_bits(), pair_margin(closing, a, pose_a, b, pose_b).to_bits());
    let closing = &*bound_for(closing, a, b);
    if analytic::collide(a, pose_a, b, pose_b, margin, manifold) {
        manifold.contacts.retain(|c| closing.keeps(c));
    } else if let Some(gap) = sampled::boxes_apart(a, pose_a, b, pose_b, margin) {
        manifold.separation = gap;
    } else {
        // The candidates (a few to dozens a pair, tens of thousands of pairs a step in a heap of
        // debris) go into one buffer per thread rather than a new vector per pair.
        let separation = CANDIDATES.with_borrow_mut(|candidates| {
            let separation = sampled::collide(a, pose_a, b, pose_b, closing, margin, candidates);
            reduce::reduce_into(candidates, manifold);
            separation
        });
        if manifold.contacts.is_empty() && separation.is_finite() && separation > 0.0 {
            manifold.separation = separation;
        }
    }
    Ok(())
}

/// Fails on a pose that is not finite and unit, or a motion (margin, step, centres, velocities)
/// that is not finite.
fn check_motion(pose_a: &Pose, pose_b: &Pose, closing: &Closing) -> Result<(), GeometryError> {
    for (name, pose) in [("pose of body A", pose_a), ("pose of body B", pose_b)] {
        if !pose.is_valid() {
            return Err(GeometryError::invalid(
                name,
                pose,
                "a finite position and a unit orientation",
            ));
        }
    }
    if !(closing.margin.is_finite() && closing.margin >= 0.0) {
        return Err(GeometryError::invalid(
            "contact margin",
            closing.margin,
            "a non-negative finite distance in metres",
        ));
    }
    let ([spin_a, spin_b], [own_a, own_b]) = (closing.spins, closing.own.unwrap_or_default());
    let vectors = [
        closing.anchor,
        closing.linear,
        closing.angular,
        closing.centre_b,
        spin_a,
        spin_b,
        own_a,
        own_b,
    ];
    if !(closing.dt.is_finite() && closing.dt >= 0.0 && vectors.iter().all(|v| v.is_finite())) {
        return Err(GeometryError::invalid(
            "relative motion of the pair",
            format!("{closing:?}"),
            "a finite step >= 0 and finite centres and velocities",
        ));
    }
    Ok(())
}

thread_local! {
    /// The unreduced contacts of the sampled pair this thread is testing.
    static CANDIDATES: core::cell::RefCell<Vec<Contact>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// The largest gap any contact of the pair can have under `closing` ([`Closing::pair_margin`]),
/// m, measured from the body of smaller reach (a bounded one; the margin alone when neither is).
pub fn pair_margin(closing: &Closing, a: &Collider, pose_a: &Pose, b: &Collider, pose_b: &Pose) -> f64 {
    let closing = &*bound_for(closing, a, b);
    match (a.reach(), b.reach()) {
        (Some(ra), Some(rb)) if rb < ra => closing.pair_margin(pose_b.position, rb),
        (Some(ra), _) => closing.pair_margin(pose_a.position, ra),
        (None, Some(rb)) => closing.pair_margin(pose_b.position, rb),
        (None, None) => closing.margin,
    }
}

/// The motion `closing` as the pair's gaps are bounded by: in full for two exact shapes, by the
/// relative motion alone ([`Closing::relative_only`]) when either is a level set (closing.rs).
/// Borrowed in the first case: a motion is a couple of hundred bytes, and this runs for every pair
/// twice a step.
fn bound_for<'a>(closing: &'a Closing, a: &Collider, b: &Collider) -> Cow<'a, Closing> {
    if shape_of(a).is_some() && shape_of(b).is_some() {
        Cow::Borrowed(closing)
    } else {
        Cow::Owned(closing.relative_only())
    }
}

/// The shape of a collider, if it is analytic.
fn shape_of(collider: &Collider) -> Option<&Shape> {
    match collider.geometry() {
        Geometry::Shape(shape) => Some(shape),
        Geometry::LevelSet(_) => None,
    }
}
