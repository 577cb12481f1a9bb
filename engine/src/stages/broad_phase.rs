//! Stage `broad_phase`: candidate body pairs from swept boxes.
//!
//! Each body's box is the union of its world box at the start of the step and at the end the
//! body would reach with its current velocities (`x + h v`, `exp(h w) R`), grown by the contact
//! margin, so that a pair that could meet within the step is not missed (the swept box of Box2D's
//! `b2FinalizeBodies`). Every bounded body is a proxy of the collision crate's [`BroadPhase`]
//! (static bodies in its static tree), keyed by its handle; each step gives every proxy its swept
//! box and the displacement `h v`, and the broad phase reports the pairs of overlapping fat boxes,
//! doing work only for the proxies whose fat box had to change.
//!
//! Fat boxes depend on history (when each was last renewed), so the reported pairs are filtered
//! down to those whose swept boxes themselves overlap: the pair list is then a function of the
//! current state alone, and a world restored from a snapshot pairs exactly as the original did.
//!
//! Unbounded bodies (half-spaces) have no box and no proxy: they are tested against every box by
//! the exact distance of the box's lowest corner below the plane.
//!
//! A pair is kept only when something in it can change: at least one awake dynamic body, or a
//! sleeping dynamic body against a kinematic body that moves (which must wake it). Pairs come out
//! as dense indices ordered by body handle, low handle first, and sorted: the same store gives the
//! same list whatever the thread count.

use glam::{DMat3, DQuat, DVec3};
use shatter_collision::{Aabb, BroadPhase, Geometry, Pose, Shape};
use shatter_integrators::{BodyKind, RigidState};

use crate::error::EngineError;
use crate::handle::BodyId;
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
///
/// A body turning by more than a quarter turn in the step is bounded at its end position by the
/// ball its box can turn in, rather than by a box at a predicted orientation (which for absurd
/// spins is not even computable).
pub(crate) fn swept_box(local: &Aabb, state: &RigidState, kind: BodyKind, dt: f64, margin: f64) -> Aabb {
    let start = world_box(local, &Pose::new(state.position, state.orientation));
    if kind == BodyKind::Static {
        return start.expanded(margin);
    }
    let end_position = state.position + state.linear_velocity * dt;
    let turn = state.body_angular_velocity.length() * dt;
    let end = if turn <= core::f64::consts::FRAC_PI_2 {
        let turned = DQuat::from_scaled_axis(state.angular_velocity() * dt) * state.orientation;
        world_box(local, &Pose::new(end_position, turned.normalize()))
    } else {
        let reach = local.min.abs().max(local.max.abs()).length();
        Aabb::from_center(end_position, DVec3::splat(reach))
    };
    start.union(end).expanded(margin)
}

/// Reusable buffers of the stage.
#[derive(Clone, Debug, Default)]
pub(crate) struct BroadScratch {
    /// Swept box per dense index (`None` for unbounded bodies).
    boxes: Vec<Option<Aabb>>,
    keys: Vec<(u64, u64)>,
}

/// Candidate pairs of the store's bodies for a step of `dt` seconds with contact margin `margin`
/// m, written into `pairs` as `[low, high]` dense indices sorted by body handle. Gives every proxy
/// of `broad` its swept box first. Pairs listed in `connected` (sorted `(low, high)` handle bits of
/// jointed bodies) are skipped. Bodies whose swept box is not finite (velocities so large the
/// step would overflow) get no box and no pairs; they are returned, dense index and why, for
/// quarantine.
pub(crate) fn find_pairs(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    dt: f64,
    margin: f64,
    connected: &[(u64, u64)],
    pairs: &mut Vec<[u32; 2]>,
    scratch: &mut BroadScratch,
) -> Result<Vec<(usize, String)>, EngineError> {
    pairs.clear();
    let mut overflowed = Vec::new();
    let n = bodies.len();
    let roles: Vec<Role> = (0..n).map(|i| role(bodies, i)).collect();
    scratch.boxes.clear();
    let mut planes: Vec<u32> = Vec::new();
    for dense in 0..n {
        let view = bodies.view(dense);
        let Some(local) = view.record.collider.local_bounds() else {
            scratch.boxes.push(None);
            planes.push(dense as u32);
            continue;
        };
        let swept = swept_box(&local, view.state, view.kind, dt, margin);
        if !(swept.min.is_finite() && swept.max.is_finite()) {
            overflowed.push((dense, format!("swept box {swept:?} over the step is not finite")));
            scratch.boxes.push(None);
            continue;
        }
        scratch.boxes.push(Some(swept));
        if let Some(proxy) = view.record.proxy {
            let displacement = match view.kind {
                BodyKind::Static => DVec3::ZERO,
                _ => view.state.linear_velocity * dt,
            };
            broad
                .update_with_displacement(proxy, swept, displacement)
                .map_err(EngineError::geometry("broad phase update"))?;
        }
    }
    broad.update_pairs(&mut scratch.keys);
    let boxes = &scratch.boxes;
    for &(low, high) in &scratch.keys {
        let (Ok(i), Ok(j)) = (
            bodies.dense_index(BodyId::from_bits(low)),
            bodies.dense_index(BodyId::from_bits(high)),
        ) else {
            continue;
        };
        let overlap = match (&boxes[i], &boxes[j]) {
            (Some(a), Some(b)) => a.overlaps(b),
            _ => false,
        };
        if overlap && wanted(roles[i], roles[j]) && connected.binary_search(&(low, high)).is_err() {
            pairs.push([i as u32, j as u32]);
        }
    }
    for &plane in &planes {
        let view = bodies.view(plane as usize);
        let Geometry::Shape(Shape::HalfSpace(half_space)) = view.record.collider.geometry() else {
            continue;
        };
        let normal = view.state.orientation * half_space.normal();
        let offset = normal.dot(view.state.position) + half_space.offset();
        for (j, b) in boxes.iter().enumerate() {
            let Some(b) = b else { continue };
            // Height above the plane of the box's lowest corner along the normal.
            let lowest = normal.dot(b.center()) - normal.abs().dot(0.5 * b.size());
            if lowest - offset <= 0.0 && wanted(roles[plane as usize], roles[j]) {
                pairs.push([plane, j as u32]);
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
    Ok(overflowed)
}
