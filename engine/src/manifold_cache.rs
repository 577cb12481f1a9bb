//! The manifold cache: each touching pair's contact manifold, kept in the bodies' own frames, so
//! that a pair whose bodies have hardly moved relative to each other since its manifold was made
//! reuses it instead of running the narrow phase again (Jolt's body pair cache,
//! `PhysicsSettings::mBodyPairCacheMaxDeltaPositionSq`).
//!
//! A resting pile is almost all such pairs: each box creeps by far less than a millimetre per
//! step, and the exact box-box test (an axis test, a clip, a reduction) is the bulk of the collide
//! stage. A reused manifold keeps its feature ids (so warm starting finds every contact) and
//! follows the bodies: each contact is stored as the point on A's surface in A's frame, the point
//! on B's surface in B's frame and the normal in the frame of the larger body (whose face it
//! usually is: the ground's, the lower box's); at the current poses the two points give the
//! contact point (midway) and the depth `(p_B - p_A) . n`, exact for any rigid motion of a corner
//! over a face. What it does not follow is the features themselves: a clipped point that
//! should slide along an edge, or a contact that a fresh test would add or drop. So reuse is
//! bounded by how far any point of one body can have moved relative to the other since the
//! manifold was made: the change of the relative translation plus the chord `2 |sin(theta/2)| r`
//! swept at the body's reach `r` by the change of relative rotation, below
//! [`WorldSettings::contact_reuse_distance`](crate::WorldSettings::contact_reuse_distance) and
//! below [`REACH_FRACTION`] of the smaller body's reach (so small fragments stay exact). The
//! reference poses are those at which the manifold was made, not last step's: slow drift adds up
//! and forces a fresh test. A pair whose margin grew by more than that distance (it sped up) is
//! tested afresh too.
//!
//! Pairs without contacts are kept too when the test measured how far apart they were (the gap
//! along the separating axis, above a plane, between the boxes of two particle bodies, or how far
//! any particle of a particle pair must move to reach the other body;
//! `ContactManifold::separation`): no projection gap closes faster than the bodies move, so
//! while every point has moved by less than the gap minus the margin the pair is still without
//! contacts, exactly as a fresh test would find. For a particle pair, the points that count are
//! also the frame body's particles near the mover, which turn about the mover's centre at up to
//! its reach plus the margin plus its translation, so that is the arm of the rotation's chord. In
//! a pile these are the diagonal neighbours, as many as the touching pairs; in a heap of debris,
//! the neighbours a few millimetres apart.
//!
//! An entry is made only for a pair that could still reuse it at the next step if it went on
//! moving as it does: its bodies' velocities (a bound on how far any point concerned moves
//! relative to the other body in one step) against the same limits. A heap of debris flying
//! apart otherwise made tens of thousands of entries per step, a few hundred bytes each, that no
//! step reused (the shattered table of Su 2009 Fig. 8: a tenth of its narrow phase, measured by
//! turning the cache off). Whether an entry exists never changes what a step finds, only whether
//! the next step tests the pair afresh.
//!
//! Rejected: Bullet's persistent manifolds, which refresh last step's points the same way but
//! still run the narrow phase every step to add new ones: that is the cost this cache removes.
//!
//! The cache is part of a world snapshot (the step depends on it), kept sorted by pair so its
//! bytes have one order whatever the thread count.

use bytemuck::{Pod, Zeroable};
use glam::{DMat3, DQuat, DVec3};
use shatter_collision::narrow_phase::MAX_CONTACTS;
use shatter_collision::{Contact, ContactManifold, FeatureId, Pose};

use crate::handle::BodyId;

/// A manifold is reused only while every point of the pair has moved by less than this fraction
/// of the smaller body's reach relative to the other body (besides the world's absolute distance).
pub const REACH_FRACTION: f64 = 0.01;

/// One cached contact: its two surface points and its normal in the bodies' frames.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CachedPoint {
    /// The contact's point on A's surface, A's body frame, m.
    pub on_a: [f64; 3],
    /// The contact's point on B's surface, B's body frame, m.
    pub on_b: [f64; 3],
    /// The unit normal from B towards A, in the frame of the pair's frame body (see
    /// [`Relative`]: the unbounded or larger of the two, whose face the normal usually is).
    pub normal: [f64; 3],
    /// The contact's feature id.
    pub feature: u32,
    /// Padding, zero.
    pub padding: u32,
}

/// One pair's cached manifold and the relative pose it was made at.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CachedManifold {
    /// Lower body of the pair.
    pub body_a: BodyId,
    /// Higher body of the pair.
    pub body_b: BodyId,
    /// Where the pair's mover (see [`Relative`]) was in the other body's frame, m.
    pub position: [f64; 3],
    /// The mover's orientation in the other body's frame, quaternion `[x, y, z, w]`.
    pub orientation: [f64; 4],
    /// The contact margin the manifold was made with, m.
    pub margin: f64,
    /// For a pair without contacts: how far apart the two surfaces were, m (see
    /// `ContactManifold::separation`); zero otherwise.
    pub separation: f64,
    /// How many of `points` are used.
    pub count: u32,
    /// Padding, zero.
    pub padding: u32,
    /// The contacts.
    pub points: [CachedPoint; MAX_CONTACTS],
}

/// How a pair sits now, in the terms the cache compares: the pose of its *mover* (the bounded
/// body of smaller reach; B on a tie) in the frame of the other body, and the mover's reach.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Relative {
    position: DVec3,
    orientation: DQuat,
    reach: f64,
    /// Whether B is the mover (A the frame body).
    b_moves: bool,
}

impl Relative {
    /// The relative pose of bodies at `pose_a` and `pose_b` with reaches `reach_a`, `reach_b`
    /// (m; zero for an unbounded body, which is never the mover).
    pub(crate) fn of(pose_a: &Pose, reach_a: f64, pose_b: &Pose, reach_b: f64) -> Self {
        let b_moves = reach_b > 0.0 && (reach_a == 0.0 || reach_b <= reach_a);
        let (frame, mover, reach) = if b_moves {
            (pose_a, pose_b, reach_b)
        } else {
            (pose_b, pose_a, reach_a)
        };
        let inverse = frame.orientation.inverse();
        Self {
            position: inverse * (mover.position - frame.position),
            orientation: inverse * mover.orientation,
            reach,
            b_moves,
        }
    }

    /// A bound on how far any point of the mover, or any point of the frame body within the
    /// mover's reach plus `margin` m, moves relative to the other body in `dt` s, m, when the
    /// bodies move as `motions` say (A's and B's centre, velocity and angular velocity; world
    /// frame, m, m/s, rad/s): the relative velocity of the centres plus each body's spin times
    /// an arm reaching from its centre past the mover's far side.
    pub(crate) fn motion_bound(&self, [a, b]: [[DVec3; 3]; 2], margin: f64, dt: f64) -> f64 {
        let [(centre_a, velocity_a, spin_a), (centre_b, velocity_b, spin_b)] = [a, b].map(|[x, v, w]| (x, v, w));
        let arm = centre_a.distance(centre_b) + self.reach + margin;
        dt * ((velocity_a - velocity_b).length() + (spin_a.length() + spin_b.length()) * arm)
    }

    /// The pose of the frame body among `poses` (A's and B's).
    fn frame<'a>(&self, [pose_a, pose_b]: [&'a Pose; 2]) -> &'a Pose {
        if self.b_moves { pose_a } else { pose_b }
    }
}

impl CachedManifold {
    /// The cache entry of `manifold` (its contacts, or its separation when it has none) between
    /// `body_a` at `pose_a` and `body_b` at `pose_b`, made with margin `margin` at relative pose
    /// `relative`.
    pub(crate) fn new(
        [body_a, body_b]: [BodyId; 2],
        [pose_a, pose_b]: [&Pose; 2],
        relative: &Relative,
        margin: f64,
        manifold: &ContactManifold,
    ) -> Self {
        let contacts = &manifold.contacts;
        let (to_a, to_b) = (pose_a.orientation.inverse(), pose_b.orientation.inverse());
        let to_frame = relative.frame([pose_a, pose_b]).orientation.inverse();
        let mut points = [CachedPoint::zeroed(); MAX_CONTACTS];
        for (cached, c) in points.iter_mut().zip(contacts) {
            // The contact point is midway: A's surface is half the depth against the normal.
            let (on_a, on_b) = (
                c.point - c.normal * (0.5 * c.depth),
                c.point + c.normal * (0.5 * c.depth),
            );
            *cached = CachedPoint {
                on_a: (to_a * (on_a - pose_a.position)).to_array(),
                on_b: (to_b * (on_b - pose_b.position)).to_array(),
                normal: (to_frame * c.normal).to_array(),
                feature: c.feature.0,
                padding: 0,
            };
        }
        Self {
            body_a,
            body_b,
            position: relative.position.to_array(),
            orientation: relative.orientation.to_array(),
            margin,
            separation: if contacts.is_empty() { manifold.separation } else { 0.0 },
            count: contacts.len() as u32,
            padding: 0,
            points,
        }
    }

    /// Whether a fresh `manifold`, made at `relative` with margin `margin`, is worth an entry:
    /// whether the pair may still reuse it at the next step, were it to go on moving as it does
    /// now. `moving` bounds how far any point of the mover moves relative to the other body over
    /// the step, m ([`Relative::motion_bound`]); the bound it must stay under is the one
    /// [`CachedManifold::reusable`] applies (the reuse distance and [`REACH_FRACTION`] of the
    /// reach with contacts, the separation minus the margin without). A heap of debris flying
    /// apart makes tens of thousands of manifolds per step, each a few hundred bytes, that no
    /// later step could reuse; a resting pile's pairs, moving by micrometres, all get theirs.
    /// A pair stopped by this step's solve (a box landing) is only tested afresh once more.
    pub(crate) fn worth_making(
        manifold: &ContactManifold,
        relative: &Relative,
        margin: f64,
        distance: f64,
        moving: f64,
    ) -> bool {
        if !(distance > 0.0) {
            return false;
        }
        if manifold.contacts.is_empty() {
            manifold.separation > margin && moving < manifold.separation - margin
        } else {
            moving < distance.min(REACH_FRACTION * relative.reach)
        }
    }

    /// Whether the pair, now at `relative` with margin `margin`, may reuse this entry. With
    /// contacts: every point of the mover has moved by less than `distance` m relative to the
    /// other body (and [`REACH_FRACTION`] of its reach), and the margin has not grown by more
    /// than that. Without: the surfaces cannot have closed to within the margin, as every point
    /// moved by less than their separation minus the margin, the turn's chord taken at the
    /// mover's reach plus the margin plus its translation (module docs; this one is exact: a
    /// fresh test would find no contact either).
    pub(crate) fn reusable(&self, relative: &Relative, margin: f64, distance: f64) -> bool {
        if !(distance > 0.0) {
            return false;
        }
        // How far any point of the mover can have moved relative to the other body: the
        // translation, plus the chord 2 sin(theta / 2) r of the rotation at the reach (|(x, y, z)|
        // of a unit quaternion is sin(theta / 2), whatever its sign).
        let turn = DQuat::from_array(self.orientation).inverse() * relative.orientation;
        let chord_per_metre = 2.0 * turn.xyz().length();
        let translation = (relative.position - DVec3::from_array(self.position)).length();
        if self.count == 0 {
            // A particle pair's separation also bounds the other body's particles against the
            // mover's level set: those that could come within the margin lie within the mover's
            // reach plus the margin plus its centre's translation, and seen from the mover they
            // turn about its centre at that arm.
            let arm = relative.reach + margin + translation;
            return translation + chord_per_metre * arm < self.separation - margin;
        }
        let moved = translation + chord_per_metre * relative.reach;
        let limit = distance.min(REACH_FRACTION * relative.reach);
        moved < limit && margin <= self.margin + limit
    }

    /// The cached contacts at the bodies' current poses (`relative` is the pair's [`Relative`]
    /// there), those less than `margin` m apart, into `out`: each point midway between its two
    /// surface points, depth their distance along the normal.
    pub(crate) fn contacts_at(&self, poses: [&Pose; 2], relative: &Relative, margin: f64, out: &mut Vec<Contact>) {
        let [pose_a, pose_b] = poses;
        // Rotation matrices: three rotations a contact, each cheaper by matrix than by quaternion.
        let (ra, rb) = (
            DMat3::from_quat(pose_a.orientation),
            DMat3::from_quat(pose_b.orientation),
        );
        let rn = if relative.b_moves { ra } else { rb };
        for p in &self.points[..self.count as usize] {
            let on_a = pose_a.position + ra * DVec3::from_array(p.on_a);
            let on_b = pose_b.position + rb * DVec3::from_array(p.on_b);
            let normal = rn * DVec3::from_array(p.normal);
            let depth = (on_b - on_a).dot(normal);
            if depth > -margin {
                out.push(Contact {
                    point: 0.5 * (on_a + on_b),
                    normal,
                    depth,
                    feature: FeatureId(p.feature),
                });
            }
        }
    }

    pub(crate) fn key(&self) -> (BodyId, BodyId) {
        (self.body_a, self.body_b)
    }

    /// Whether every number is finite and the count fits (a snapshot check).
    fn is_valid(&self) -> bool {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        self.count as usize <= MAX_CONTACTS
            && finite(&self.position)
            && finite(&self.orientation)
            && self.margin.is_finite()
            && self.separation.is_finite()
            && self
                .points
                .iter()
                .all(|p| finite(&p.on_a) && finite(&p.on_b) && finite(&p.normal))
    }
}

/// Every touching pair's manifold, sorted by pair. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ManifoldCache {
    entries: Vec<CachedManifold>,
}

impl ManifoldCache {
    /// The entries, sorted by pair.
    pub(crate) fn entries(&self) -> &[CachedManifold] {
        &self.entries
    }

    /// Replaces the entries with `entries`, which must be sorted by pair (the narrow phase writes
    /// them in pair order), handing back the old list, whose entries the next step writes over
    /// (collide.rs).
    /// Checking the order here was a millisecond a step for a heap of debris, on one thread: a
    /// pass over tens of thousands of entries of a few hundred bytes each.
    pub(crate) fn swap(&mut self, entries: &mut Vec<CachedManifold>) {
        debug_assert!(
            entries.is_sorted_by_key(CachedManifold::key),
            "unsorted manifold entries"
        );
        std::mem::swap(&mut self.entries, entries);
    }

    /// Replaces the entries wholesale (snapshot restore); fails unless they are sorted by pair,
    /// each pair once, with finite numbers.
    pub(crate) fn replace(&mut self, entries: Vec<CachedManifold>) -> Result<(), String> {
        if !entries.windows(2).all(|w| w[0].key() < w[1].key()) {
            return Err("manifold cache entries are not sorted by pair".into());
        }
        if let Some(bad) = entries.iter().find(|e| !e.is_valid()) {
            return Err(format!("manifold cache entry {bad:?} is not valid"));
        }
        self.entries = entries;
        Ok(())
    }

    /// Forgets every manifold of body `id` (it was removed).
    pub(crate) fn forget_body(&mut self, id: BodyId) {
        self.entries.retain(|e| e.body_a != id && e.body_b != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_collision::{Collider, ContactManifold, Cuboid, HalfSpace, Shape, collide};

    fn cube(half: f64) -> Collider {
        Collider::from_shape(Shape::Cuboid(Cuboid::try_new(DVec3::splat(half)).unwrap()), 1.0).unwrap()
    }

    fn ground() -> Collider {
        Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0).unwrap()), 1.0).unwrap()
    }

    /// The reach of a cube of half extent `half`: its half diagonal.
    fn reach(half: f64) -> f64 {
        half * 3f64.sqrt()
    }

    /// A cube of half extent `half` resting 1% of its size deep on the ground (A), turned a little
    /// so its corners are not equally deep; the cache entry of its manifold and the relative pose.
    fn resting(half: f64) -> (Pose, Pose, CachedManifold, f64) {
        let ground_pose = Pose::IDENTITY;
        let box_pose = Pose::new(
            DVec3::new(0.3, half * 0.99, -0.2),
            DQuat::from_rotation_y(0.4) * DQuat::from_rotation_x(0.002),
        );
        let margin = 0.02 * half;
        let manifold = collide(&ground(), &ground_pose, &cube(half), &box_pose, margin).unwrap();
        assert_eq!(manifold.len(), 4);
        let relative = Relative::of(&ground_pose, 0.0, &box_pose, reach(half));
        let ids = [BodyId::new(0, 0), BodyId::new(1, 0)];
        let entry = CachedManifold::new(ids, [&ground_pose, &box_pose], &relative, margin, &manifold);
        (ground_pose, box_pose, entry, margin)
    }

    #[test]
    fn manifold_cache_carries_contacts_with_the_bodies_and_keeps_depths_exact() {
        let (ground_pose, box_pose, entry, margin) = resting(0.5);
        // The cube slides 0.2 mm, sinks 0.1 mm and turns 0.2 mrad about y: within a millimetre.
        let moved = Pose::new(
            box_pose.position + DVec3::new(2e-4, -1e-4, 0.0),
            DQuat::from_rotation_y(2e-4) * box_pose.orientation,
        );
        let relative = Relative::of(&ground_pose, 0.0, &moved, reach(0.5));
        assert!(entry.reusable(&relative, margin, 1e-3));
        let mut carried = Vec::new();
        entry.contacts_at([&ground_pose, &moved], &relative, margin, &mut carried);
        let fresh = collide(&ground(), &ground_pose, &cube(0.5), &moved, margin).unwrap();
        assert_eq!(carried.len(), fresh.len());
        for (c, f) in carried.iter().zip(&fresh.contacts) {
            // The same corners, exactly as deep (the ground is flat), the normal unchanged; the
            // points differ by half the corner's sideways move (the ground's point stayed put).
            assert_eq!(c.feature, f.feature);
            assert!((c.depth - f.depth).abs() < 1e-12, "{c:?} vs {f:?}");
            assert!((c.normal - f.normal).length() < 1e-12);
            let sideways = 2e-4 + 2e-4 * reach(0.5);
            assert!((c.point - f.point).length() < 0.5 * sideways + 1e-12, "{c:?} vs {f:?}");
        }
    }

    #[test]
    fn manifold_cache_refuses_motions_past_its_distance_and_grown_margins() {
        let (ground_pose, box_pose, entry, margin) = resting(0.5);
        let at = |position: DVec3, turn: f64| {
            let pose = Pose::new(
                box_pose.position + position,
                DQuat::from_rotation_z(turn) * box_pose.orientation,
            );
            Relative::of(&ground_pose, 0.0, &pose, reach(0.5))
        };
        // 1.2 mm of slide; a turn of 1.2 mrad, whose chord at the cube's 0.87 m reach is 1 mm.
        assert!(entry.reusable(&at(DVec3::new(9e-4, 0.0, 0.0), 0.0), margin, 1e-3));
        assert!(!entry.reusable(&at(DVec3::new(1.2e-3, 0.0, 0.0), 0.0), margin, 1e-3));
        assert!(entry.reusable(&at(DVec3::ZERO, 1.0e-3), margin, 1e-3));
        assert!(!entry.reusable(&at(DVec3::ZERO, 1.2e-3), margin, 1e-3));
        // Zero distance: never.
        assert!(!entry.reusable(&at(DVec3::ZERO, 0.0), margin, 0.0));
        // The margin may grow by less than the distance only.
        assert!(entry.reusable(&at(DVec3::ZERO, 0.0), margin + 0.9e-3, 1e-3));
        assert!(!entry.reusable(&at(DVec3::ZERO, 0.0), margin + 1.1e-3, 1e-3));
        // A 1 cm cube may move 1% of its reach (0.087 mm), not the world's millimetre.
        let (ground_pose, small_pose, small, margin) = resting(0.005);
        let nudge = |d: f64| {
            let pose = Pose::new(small_pose.position + DVec3::X * d, small_pose.orientation);
            Relative::of(&ground_pose, 0.0, &pose, reach(0.005))
        };
        assert!(small.reusable(&nudge(8e-5), margin, 1e-3));
        assert!(!small.reusable(&nudge(1e-4), margin, 1e-3));
    }

    /// A pair without contacts, 5 cm apart with a 1 cm margin, is kept while the mover (a cube of
    /// 0.87 m reach) moves less than 4 cm: its translation plus the chord of its turn at its reach
    /// plus the margin plus that translation. Each refused case below is one an arm of the reach
    /// alone would have let through.
    #[test]
    fn manifold_cache_keeps_a_pair_apart_while_it_moves_less_than_its_separation() {
        let (frame_pose, mover_pose) = (Pose::IDENTITY, Pose::from_position(DVec3::new(0.0, 2.0, 0.0)));
        let apart = ContactManifold {
            contacts: Default::default(),
            separation: 0.05,
        };
        let margin = 0.01;
        let relative = Relative::of(&frame_pose, 10.0, &mover_pose, reach(0.5));
        let ids = [BodyId::new(0, 0), BodyId::new(1, 0)];
        let entry = CachedManifold::new(ids, [&frame_pose, &mover_pose], &relative, margin, &apart);
        // Moved by `translation` along x and turned about z so that the chord per metre is `chord`.
        let at = |translation: f64, chord: f64| {
            let turn = 2.0 * (0.5 * chord).asin();
            let pose = Pose::new(
                mover_pose.position + DVec3::X * translation,
                DQuat::from_rotation_z(turn) * mover_pose.orientation,
            );
            Relative::of(&frame_pose, 10.0, &pose, reach(0.5))
        };
        assert!(entry.reusable(&at(0.039, 0.0), margin, 1e-3));
        assert!(!entry.reusable(&at(0.041, 0.0), margin, 1e-3));
        // Turning alone: allowed below a chord of 0.04 / 0.876 = 0.0457 per metre.
        assert!(entry.reusable(&at(0.0, 0.045), margin, 1e-3));
        assert!(!entry.reusable(&at(0.0, 0.046), margin, 1e-3));
        // Both: 0.02 + chord (0.866 + 0.01 + 0.02) < 0.04 below a chord of 0.0223 per metre.
        assert!(entry.reusable(&at(0.02, 0.0222), margin, 1e-3));
        assert!(!entry.reusable(&at(0.02, 0.0225), margin, 1e-3));
    }

    /// The motion bound holds for every point it speaks for: points of the mover within its
    /// reach, and points of the frame body within the mover's reach plus the margin of the
    /// mover's centre, seen from the other body, as the two bodies move at random velocities over
    /// a short step (where the motion is its rate times the step).
    #[test]
    fn manifold_cache_motion_bound_holds_for_every_point_of_the_pair() {
        let mut rng = shatter_integrators::SplitMix64::new(11);
        let dt = 1e-6;
        for _ in 0..200 {
            let mut vector = |scale: f64| rng.unit_vector() * rng.range(0.0, scale);
            let [xa, xb] = [vector(3.0), vector(3.0)];
            let [va, vb, wa, wb] = [vector(5.0), vector(5.0), vector(8.0), vector(8.0)];
            let (qa, qb) = (
                DQuat::from_scaled_axis(vector(3.0)),
                DQuat::from_scaled_axis(vector(3.0)),
            );
            let (reach_a, reach_b, margin) = (0.4, 0.7, 0.05);
            let pose = |x: DVec3, q: DQuat| Pose::new(x, q);
            let moved = |x: DVec3, q: DQuat, v: DVec3, w: DVec3| pose(x + v * dt, DQuat::from_scaled_axis(w * dt) * q);
            let (a0, b0) = (pose(xa, qa), pose(xb, qb));
            let (a1, b1) = (moved(xa, qa, va, wa), moved(xb, qb, vb, wb));
            let relative = Relative::of(&a0, reach_a, &b0, reach_b);
            let bound = relative.motion_bound([[xa, va, wa], [xb, vb, wb]], margin, dt);
            // The body of smaller reach (A here) is the mover.
            let (mover, frame) = if relative.b_moves {
                ((b0, b1), (a0, a1))
            } else {
                ((a0, a1), (b0, b1))
            };
            let seen = |frame: &Pose, world: DVec3| frame.inverse_transform_point(world);
            for _ in 0..20 {
                let r = rng.unit_vector() * rng.range(0.0, relative.reach);
                // A point of the mover, and a point of the frame body as far from the mover's centre.
                let of_mover = (mover.0.transform_point(r), mover.1.transform_point(r));
                let near = mover.0.position + rng.unit_vector() * rng.range(0.0, relative.reach + margin);
                let local = frame.0.inverse_transform_point(near);
                let of_frame = (near, frame.1.transform_point(local));
                for (start, end) in [of_mover, of_frame] {
                    // Each point followed in the other body's frame from the start of the step
                    // to its end.
                    let from = |pose: (Pose, Pose)| seen(&pose.1, end).distance(seen(&pose.0, start));
                    let moved = if (start, end) == of_mover {
                        from(frame)
                    } else {
                        from(mover)
                    };
                    assert!(moved <= bound * (1.0 + 1e-4), "{moved} > {bound}");
                }
            }
        }
    }

    /// A pair at rest gets its entry, contacts or gap; one whose bodies move apart faster than
    /// its gap (or, touching, than the reuse distance) per step does not, since no later step
    /// could reuse it.
    #[test]
    fn manifold_cache_makes_entries_only_for_pairs_that_may_reuse_them() {
        let (ground_pose, box_pose, _, margin) = resting(0.5);
        let touching = collide(&ground(), &ground_pose, &cube(0.5), &box_pose, margin).unwrap();
        let relative = Relative::of(&ground_pose, 0.0, &box_pose, reach(0.5));
        let dt = 1.0 / 30.0;
        let still = [DVec3::ZERO, DVec3::ZERO, DVec3::ZERO];
        let motion = |v: f64, w: f64| [box_pose.position, DVec3::X * v, DVec3::Y * w];
        let worth = |manifold: &ContactManifold, v: f64, w: f64, distance: f64| {
            let moving = relative.motion_bound([still, motion(v, w)], margin, dt);
            CachedManifold::worth_making(manifold, &relative, margin, distance, moving)
        };
        // Creeping by micrometres per step: kept; sliding at 3 cm/s (1 mm per step) or turning
        // fast enough to sweep a millimetre: not; no reuse distance: never.
        assert!(worth(&touching, 1e-4, 1e-5, 1e-3));
        assert!(!worth(&touching, 0.031, 0.0, 1e-3));
        assert!(!worth(&touching, 0.0, 0.03, 1e-3));
        assert!(!worth(&touching, 0.0, 0.0, 0.0));
        // Apart by 5 cm with the 1 cm margin: kept while the step moves it less than 4 cm.
        let apart = ContactManifold {
            contacts: Default::default(),
            separation: margin + 0.04,
        };
        assert!(worth(&apart, 1.1, 0.0, 1e-3));
        assert!(!worth(&apart, 1.3, 0.0, 1e-3));
        let touching_gap = ContactManifold {
            contacts: Default::default(),
            separation: 0.5 * margin,
        };
        assert!(!worth(&touching_gap, 0.0, 0.0, 1e-3));
    }
}
