//! Stage `broad_phase`: candidate body pairs from swept boxes.
//!
//! Each body's box is the union of its world box at the start of the step and at the end the
//! body would reach with its current velocities (`x + h v`, `exp(h w) R`), grown by the contact
//! margin, so that a pair that could meet within the step is not missed (the swept box of Box2D's
//! `b2FinalizeBodies`). A sort-and-sweep along x then lists the overlapping pairs; its cost is
//! `O(n log n)` per step plus the overlaps.
//!
//! Unbounded bodies (half-spaces) have no box: they are tested against every box by the exact
//! distance of the box's lowest corner below the plane.
//!
//! A pair is kept only when something in it can change: at least one awake dynamic body, or a
//! sleeping dynamic body against a kinematic body that moves (which must wake it). Pairs come out
//! as dense indices ordered by body handle, low handle first, and sorted: the same store gives the
//! same list whatever the thread count.

use glam::{DMat3, DQuat, DVec3};
use shatter_collision::{Aabb, Geometry, Pose, Shape};
use shatter_integrators::{BodyKind, RigidState};

use crate::store::BodyStore;

/// A body's role in pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Awake dynamic: pairs with everything.
    Awake,
    /// Sleeping dynamic: pairs with awake bodies and moving kinematic ones.
    Asleep,
    /// A kinematic body with a non-zero velocity: pairs with dynamic bodies.
    Mover,
    /// Static, or kinematic at rest, or quarantined: pairs only with awake bodies.
    Fixed,
}

fn role(bodies: &BodyStore, dense: usize) -> Role {
    let view = bodies.view(dense);
    if view.motion.is_quarantined() {
        return Role::Fixed;
    }
    match view.kind {
        BodyKind::Dynamic if view.motion.is_awake() => Role::Awake,
        BodyKind::Dynamic => Role::Asleep,
        BodyKind::Kinematic
            if view.state.linear_velocity != DVec3::ZERO || view.state.body_angular_velocity != DVec3::ZERO =>
        {
            Role::Mover
        }
        _ => Role::Fixed,
    }
}

fn wanted(a: Role, b: Role) -> bool {
    matches!(
        (a, b),
        (Role::Awake, _) | (_, Role::Awake) | (Role::Asleep, Role::Mover) | (Role::Mover, Role::Asleep)
    )
}

/// The world box of a body-frame box `local` at `pose`.
pub(crate) fn world_box(local: &Aabb, pose: &Pose) -> Aabb {
    let rotation = DMat3::from_quat(pose.orientation);
    let abs = DMat3::from_cols(rotation.x_axis.abs(), rotation.y_axis.abs(), rotation.z_axis.abs());
    let center = pose.transform_point(local.center());
    Aabb::from_center(center, abs * (0.5 * local.size()))
}

/// The box a body sweeps over the step, grown by `margin`.
fn swept_box(local: &Aabb, state: &RigidState, kind: BodyKind, dt: f64, margin: f64) -> Aabb {
    let start = world_box(local, &Pose::new(state.position, state.orientation));
    if kind == BodyKind::Static {
        return start.expanded(margin);
    }
    let turn = DQuat::from_scaled_axis(state.angular_velocity() * dt);
    let end_pose = Pose::new(
        state.position + state.linear_velocity * dt,
        (turn * state.orientation).normalize(),
    );
    start.union(world_box(local, &end_pose)).expanded(margin)
}

/// Candidate pairs of the store's bodies for a step of `dt` seconds with contact margin `margin`
/// m, written into `pairs` as `[low, high]` dense indices sorted by body handle.
pub(crate) fn find_pairs(bodies: &BodyStore, dt: f64, margin: f64, pairs: &mut Vec<[u32; 2]>) {
    pairs.clear();
    let n = bodies.len();
    let roles: Vec<Role> = (0..n).map(|i| role(bodies, i)).collect();
    let mut boxes: Vec<(Aabb, u32)> = Vec::with_capacity(n);
    let mut planes: Vec<u32> = Vec::new();
    for dense in 0..n {
        let view = bodies.view(dense);
        match view.record.collider.local_bounds() {
            Some(local) => boxes.push((swept_box(&local, view.state, view.kind, dt, margin), dense as u32)),
            None => planes.push(dense as u32),
        }
    }
    // Sort by the low x edge, ties by dense index, so the sweep order is fixed.
    boxes.sort_unstable_by(|(a, i), (b, j)| a.min.x.total_cmp(&b.min.x).then(i.cmp(j)));
    let mut push = |i: u32, j: u32| {
        if wanted(roles[i as usize], roles[j as usize]) {
            pairs.push([i, j]);
        }
    };
    for (k, (a, i)) in boxes.iter().enumerate() {
        for (b, j) in &boxes[k + 1..] {
            if b.min.x > a.max.x {
                break;
            }
            if a.overlaps(b) {
                push(*i, *j);
            }
        }
    }
    for &plane in &planes {
        let view = bodies.view(plane as usize);
        let Geometry::Shape(Shape::HalfSpace(half_space)) = view.record.collider.geometry() else {
            continue;
        };
        let normal = view.state.orientation * half_space.normal();
        let offset = normal.dot(view.state.position) + half_space.offset();
        for (b, j) in &boxes {
            // Height above the plane of the box's lowest corner along the normal.
            let lowest = normal.dot(b.center()) - normal.abs().dot(0.5 * b.size());
            if lowest - offset <= 0.0 {
                push(plane, *j);
            }
        }
    }
    let records = bodies.records();
    for pair in pairs.iter_mut() {
        if records[pair[1] as usize].id < records[pair[0] as usize].id {
            pair.swap(0, 1);
        }
    }
    pairs.sort_unstable_by_key(|[a, b]| (records[*a as usize].id, records[*b as usize].id));
    pairs.dedup();
}
