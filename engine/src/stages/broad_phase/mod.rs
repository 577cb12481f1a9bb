//! Stage `broad_phase`: candidate body pairs from swept boxes.
//!
//! Each body's box is the union of its world box at the start of the step and at the end the
//! body would reach with its current velocities (`x + h v`, `exp(h w) R`), grown by half the
//! contact margin, so that a pair that could meet within the step is not missed (the swept box
//! of Box2D's `b2FinalizeBodies`). Two boxes grown by half the margin each overlap exactly when
//! they are within the margin of each other along every axis; growing each by the whole margin
//! paired bodies up to twice the margin apart, which the narrow phase then only found apart (a
//! seventh of the pairs of the shattered table scene). Every bounded body is a proxy of the collision crate's [`BroadPhase`]
//! (static bodies in its static tree), keyed by its handle; each step gives every proxy its swept
//! box and the displacement `h v`, and the broad phase reports the pairs of overlapping fat boxes,
//! doing work only for the proxies whose fat box had to change.
//!
//! Fat boxes depend on history (when each was last renewed), so the reported pairs are filtered
//! down to those whose swept boxes themselves overlap: the pair list is then a function of the
//! current state alone, and a world restored from a snapshot pairs exactly as the original did.
//! Three ways find that list, by how many bodies move: a query of the broad phase per moving
//! body when few do among many at rest; the broad phase's whole pair list, filtered; and, when
//! at least a quarter of the bodies move and they are small against the fat boxes' margin (a heap
//! of debris), a sort and sweep of the swept boxes themselves (sweep.rs), which does not read the
//! fat boxes' pairs at all.
//!
//! Unbounded bodies (half-spaces) have no box and no proxy: they are tested against every box by
//! the exact distance of the box's lowest corner below the plane.
//!
//! A pair is kept only when something in it can change: at least one awake dynamic body, or a
//! sleeping dynamic body against a kinematic body that moves (which must wake it). Pairs come out
//! as dense indices ordered by body handle, low handle first, and sorted: the same store gives the
//! same list whatever the thread count.

use glam::{DMat3, DQuat, DVec3};
use rayon::prelude::*;
use shatter_collision::{Aabb, BroadPhase, Geometry, Pose, ProxyId, Shape};
use shatter_integrators::{BodyKind, RigidState};

use crate::error::EngineError;
use crate::handle::BodyId;
use crate::store::{BodyStore, BodyView};

mod sweep;

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
    role_of(&bodies.view(dense))
}

/// The role of the body seen through `view`.
fn role_of(view: &BodyView<'_>) -> Role {
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

/// A body's swept box for a step of `dt` seconds with contact margin `margin` (m), or why it has
/// none.
fn bounds_of(view: &BodyView<'_>, dt: f64, margin: f64) -> Bounds {
    match view.record.collider.local_bounds() {
        None => Bounds::Unbounded,
        Some(local) => {
            let swept = swept_box(&local, view.state, view.kind, dt, 0.5 * margin);
            if swept.min.is_finite() && swept.max.is_finite() {
                Bounds::Swept(swept)
            } else {
                Bounds::Overflow(swept)
            }
        }
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

/// The box a body sweeps over the step, grown by `margin` (half the contact margin).
///
/// A body turning by more than a quarter turn in the step is bounded at its end position by the
/// ball its box can turn in, rather than by a box at a predicted orientation (which for absurd
/// spins is not even computable). A body turning so little that its points move by at most
/// [`SLOW_TURN`] of `margin` through the turn is bounded at its end by its start box moved along
/// and grown by that distance (see [`turn_bound`]) instead of the box at the turned orientation:
/// a box looser by at most twice that much, for less work (a rotation, a sine and a cosine
/// fewer), and every body of a resting heap takes this way every step (measured on 1000 resting
/// balls, two threads: their swept records were renewed in 48 us a step instead of 74).
pub(crate) fn swept_box(local: &Aabb, state: &RigidState, kind: BodyKind, dt: f64, margin: f64) -> Aabb {
    let start = world_box(local, &Pose::new(state.position, state.orientation));
    if kind == BodyKind::Static {
        return start.expanded(margin);
    }
    let shift = state.linear_velocity * dt;
    let end_position = state.position + shift;
    let turn = state.body_angular_velocity.length() * dt;
    let reach = local.min.abs().max(local.max.abs()).length();
    if turn * reach <= SLOW_TURN * margin {
        let end = turn_bound(&start, shift, turn * reach);
        return start.union(end).expanded(margin);
    }
    let end = if turn <= core::f64::consts::FRAC_PI_2 {
        let turned = DQuat::from_scaled_axis(state.angular_velocity() * dt) * state.orientation;
        world_box(local, &Pose::new(end_position, turned.normalize()))
    } else {
        Aabb::from_center(end_position, DVec3::splat(reach))
    };
    start.union(end).expanded(margin)
}

/// How far, as a share of the swept box's margin, a body's points may move through its turn in
/// the step for [`swept_box`] to bound its end by [`turn_bound`].
const SLOW_TURN: f64 = 0.125;

/// A box holding a body at the end of a step in which it moves by `shift` (m) and turns about its
/// origin by an angle `turn` (rad), given its world box `start` at the start and `sweep = turn *
/// reach` (m), `reach` the furthest its local box gets from its origin: each point at distance
/// `r` from the origin moves by `2 r sin(turn / 2) <= r turn` through the turn, so the body ends
/// within its start box moved by `shift` and grown by `sweep` on every side.
fn turn_bound(start: &Aabb, shift: DVec3, sweep: f64) -> Aabb {
    Aabb {
        min: start.min + shift - DVec3::splat(sweep),
        max: start.max + shift + DVec3::splat(sweep),
    }
}

/// Where a body's swept box stands this step.
#[derive(Clone, Copy, Debug)]
enum Bounds {
    /// The swept box, world frame, m.
    Swept(Aabb),
    /// No box (half-spaces): paired by the plane test.
    Unbounded,
    /// The swept box is not finite: no pairs, and the body goes to quarantine.
    Overflow(Aabb),
}

/// A body's role and swept box for the step, and what the box was computed from.
#[derive(Clone, Copy, Debug)]
struct Swept {
    role: Role,
    bounds: Bounds,
    /// The body, its state and kind, the step and the margin the box was computed from: a body
    /// whose inputs are bit for bit the same keeps its box (a sleeping or static body, every
    /// step), and its proxy, which has that box already, is left alone.
    from: (BodyId, RigidState, BodyKind, f64, f64),
    /// Whether the box was computed this step.
    renewed: bool,
    /// Whether the box, renewed, needs nothing from the broad phase: the body's proxy keeps its
    /// fat box for it ([`BroadPhase::keeps_fat_box`]), or it has no proxy. Checked beside the
    /// renewal, in parallel, so that only the proxies whose fat boxes change are updated one
    /// after another (a heap at rest: none of a thousand, instead of a thousand every step).
    settled: bool,
}

impl Swept {
    /// Keeps the box if body `dense`'s inputs are those it was computed from, else computes it.
    fn renew(&mut self, bodies: &BodyStore, dense: usize, dt: f64, margin: f64) {
        let view = bodies.view(dense);
        let same = view.record.id == self.from.0
            && bytemuck::bytes_of(view.state) == bytemuck::bytes_of(&self.from.1)
            && view.kind == self.from.2
            && dt.to_bits() == self.from.3.to_bits()
            && margin.to_bits() == self.from.4.to_bits();
        self.renewed = !same;
        self.settled = false;
        self.role = role_of(&view);
        if self.renewed {
            self.bounds = bounds_of(&view, dt, margin);
            self.from = (view.record.id, *view.state, view.kind, dt, margin);
        }
    }

    fn of(bodies: &BodyStore, dense: usize, dt: f64, margin: f64) -> Self {
        let view = bodies.view(dense);
        Self {
            role: role_of(&view),
            bounds: bounds_of(&view, dt, margin),
            from: (view.record.id, *view.state, view.kind, dt, margin),
            renewed: true,
            settled: false,
        }
    }

    fn swept(&self) -> Option<&Aabb> {
        match &self.bounds {
            Bounds::Swept(b) => Some(b),
            _ => None,
        }
    }
}

/// A pair found this step: the two handles, lower first, and their dense indices in that order.
type Found = (BodyId, BodyId, [u32; 2]);

/// The pair of dense bodies `i` and `j` with handles `a` and `b`, lower handle first.
fn ordered(a: BodyId, i: usize, b: BodyId, j: usize) -> Found {
    if b < a {
        (b, a, [j as u32, i as u32])
    } else {
        (a, b, [i as u32, j as u32])
    }
}

/// Reusable buffers of the stage, kept from step to step so that a step allocates nothing here.
#[derive(Clone, Debug, Default)]
pub(crate) struct BroadScratch {
    /// Role and swept box per dense index.
    swept: Vec<Swept>,
    /// Dense indices of unbounded bodies.
    planes: Vec<u32>,
    /// The broad phase's pairs of fat boxes, by user key; the dense indices of each pair's
    /// bodies (`u32::MAX` where one is not in the store); and the broad phase's pair stamp and
    /// the store's layout they were written under ([`BroadPhase::pair_stamp`],
    /// [`BodyStore::layout`]).
    keys: Vec<(u64, u64)>,
    dense_keys: Vec<[u32; 2]>,
    keys_stamps: Option<(u64, u64)>,
    /// The pairs each chunk of a long fat-pair list gave, before they are joined in order.
    key_parts: Vec<Vec<Found>>,
    /// Pairs of the broad phase's proxies, then pairs with half-spaces, each list sorted by
    /// handles (the first comes sorted by key bits, which is the same order unless generations
    /// differ, so it is only checked), then merged.
    proxy_pairs: Vec<Found>,
    plane_pairs: Vec<Found>,
    /// The step length and margin (bits) of the last search.
    last: Option<(u64, u64)>,
    /// Per dense index: what the reads of the broad phase's pair list test of each body, and
    /// its swept box (zero without one).
    traits: Vec<BodyTraits>,
    boxes: Vec<Aabb>,
    /// The swept boxes in the order of their starts along the sweep axis (sweep.rs).
    sweep_order: Vec<sweep::Entry>,
}

/// Candidate pairs of the store's bodies for a step of `dt` seconds with contact margin `margin`
/// m, written into `pairs` as `[low, high]` dense indices sorted by body handle. Gives every proxy
/// of `broad` its swept box first. Pairs listed in `connected` (sorted `(low, high)` handle bits of
/// jointed bodies) are skipped. Bodies whose swept box is not finite (velocities so large the
/// step would overflow) get no box and no pairs; they are returned, dense index and why, for
/// quarantine.
///
/// `edited` says whether bodies outside the store's moving list may have changed since the last
/// search ([`BodyStore::take_edited`]). When none did, and the step and margin are those of the
/// last search, only the moving bodies' boxes are looked at: a world at rest costs next to nothing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_pairs(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    dt: f64,
    margin: f64,
    edited: bool,
    connected: &[(u64, u64)],
    pairs: &mut Vec<[u32; 2]>,
    scratch: &mut BroadScratch,
) -> Result<Vec<(usize, String)>, EngineError> {
    let n = bodies.len();
    let inputs = Some((dt.to_bits(), margin.to_bits()));
    let moving = bodies.moving();
    // With many bodies moving, one parallel pass over all of them costs no more than the list.
    let everything = edited || scratch.swept.len() != n || scratch.last != inputs || 4 * moving.len() >= n;
    scratch.last = inputs;
    let mut overflowed = Vec::new();
    if everything {
        // The swept boxes (a rotation, a sine and a cosine each) of the bodies that moved, in
        // parallel; the proxies of those take them in dense order. Boxes of bodies new to the
        // search are computed once and stay marked as renewed, so their proxies take them too:
        // renewing them again would find them unchanged, and a static body would then keep the
        // box it was inserted with, without the margin, for good.
        let kept = scratch.swept.len().min(n);
        scratch.swept.truncate(n);
        while scratch.swept.len() < n {
            scratch.swept.push(Swept::of(bodies, scratch.swept.len(), dt, margin));
        }
        let fat_boxes: &BroadPhase = broad;
        shatter_integrators::parallel::for_each_mut(&mut scratch.swept[..kept], 64, &|dense, swept| {
            swept.renew(bodies, dense, dt, margin);
            if let (true, Bounds::Swept(b)) = (swept.renewed, &swept.bounds) {
                swept.settled = proxy_move(bodies, dense, dt)
                    .is_none_or(|(proxy, displacement)| fat_boxes.keeps_fat_box(proxy, b, displacement));
            }
        });
        scratch.planes.clear();
        for dense in 0..n {
            if let Bounds::Unbounded = scratch.swept[dense].bounds {
                scratch.planes.push(dense as u32);
            }
            settle_box(bodies, broad, dense, &scratch.swept[dense], dt, &mut overflowed)?;
        }
    } else {
        // Nothing else changed: the other boxes, roles and proxies, and the list of planes, stand.
        for &dense in moving {
            let dense = dense as usize;
            scratch.swept[dense].renew(bodies, dense, dt, margin);
            settle_box(bodies, broad, dense, &scratch.swept[dense], dt, &mut overflowed)?;
        }
    }
    collect_pairs(bodies, broad, connected, margin, pairs, scratch);
    Ok(overflowed)
}

/// Hands body `dense`'s swept box, if it was renewed, to its proxy, or files it in `overflowed`
/// when it is not finite.
fn settle_box(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    dense: usize,
    swept: &Swept,
    dt: f64,
    overflowed: &mut Vec<(usize, String)>,
) -> Result<(), EngineError> {
    match swept.bounds {
        Bounds::Overflow(b) => overflowed.push((dense, format!("swept box {b:?} over the step is not finite"))),
        Bounds::Swept(b) if swept.renewed && !swept.settled => update_proxy(bodies, broad, dense, b, dt)?,
        Bounds::Swept(_) | Bounds::Unbounded => {}
    }
    Ok(())
}

/// The pairs that bodies woken within the step bring, after [`find_pairs`] ran: states have not
/// changed since the step's first search, only who is awake, so the swept boxes are kept and only
/// the roles are renewed (and the boxes of bodies that overflowed, which quarantine has since put
/// back). A pair that waking makes wanted has a body whose role changed, that is a body in
/// `woken` (dense indices) or one given its box again; so only those bodies are looked up, one
/// query each, instead of the whole search again (a heap of debris has tens of thousands of
/// pairs, and one sphere waking among them cost the step three passes over all of them).
/// Writes into `fresh` every wanted pair with such a body, sorted by handles: a superset of the
/// new pairs, the same pairs the whole search gives with them (checked in test builds).
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_pairs_after_waking(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    dt: f64,
    margin: f64,
    connected: &[(u64, u64)],
    woken: &[usize],
    fresh: &mut Vec<[u32; 2]>,
    scratch: &mut BroadScratch,
) -> Result<(), EngineError> {
    debug_assert_eq!(scratch.swept.len(), bodies.len(), "find_pairs ran first this step");
    let mut changed: Vec<u32> = woken.iter().map(|&dense| dense as u32).collect();
    for dense in 0..bodies.len() {
        let swept = &mut scratch.swept[dense];
        if let Bounds::Overflow(_) = swept.bounds {
            *swept = Swept::of(bodies, dense, dt, margin);
            if let Bounds::Swept(b) = swept.bounds {
                update_proxy(bodies, broad, dense, b, dt)?;
                changed.push(dense as u32);
            }
        } else {
            swept.role = role(bodies, dense);
        }
    }
    changed.sort_unstable();
    changed.dedup();
    let unbounded = |&dense: &u32| matches!(scratch.swept[dense as usize].bounds, Bounds::Unbounded);
    if changed.iter().any(unbounded) {
        // A half-space that woke pairs with every box: the whole search it is.
        collect_pairs(bodies, broad, connected, margin, fresh, scratch);
        return Ok(());
    }
    pairs_by_query(bodies, broad, connected, &changed, scratch);
    plane_pairs(bodies, margin, &changed, false, scratch);
    merge(&scratch.proxy_pairs, &scratch.plane_pairs, fresh);
    if cfg!(debug_assertions) {
        let mut whole = Vec::new();
        collect_pairs(bodies, broad, connected, margin, &mut whole, scratch);
        whole.retain(|pair| pair.iter().any(|dense| changed.binary_search(dense).is_ok()));
        assert_eq!(
            &whole, fresh,
            "the pairs of woken bodies differ from the whole search's"
        );
    }
    Ok(())
}

/// Gives body `dense`'s proxy (if it has one) its swept box `swept` and the step's displacement.
fn update_proxy(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    dense: usize,
    swept: Aabb,
    dt: f64,
) -> Result<(), EngineError> {
    let Some((proxy, displacement)) = proxy_move(bodies, dense, dt) else {
        return Ok(());
    };
    broad
        .update_with_displacement(proxy, swept, displacement)
        .map_err(EngineError::geometry("broad phase update"))?;
    Ok(())
}

/// Body `dense`'s proxy, if it has one, and the displacement its fat box is stretched along: the
/// step's `h v` (none for a static body), m.
fn proxy_move(bodies: &BodyStore, dense: usize, dt: f64) -> Option<(ProxyId, DVec3)> {
    let view = bodies.view(dense);
    let displacement = match view.kind {
        BodyKind::Static => DVec3::ZERO,
        _ => view.state.linear_velocity * dt,
    };
    Some((view.record.proxy?, displacement))
}

/// The pairs of the broad phase whose swept boxes overlap, and the pairs with half-spaces, each
/// filtered by role and joints, merged into `pairs` in handle order.
fn collect_pairs(
    bodies: &BodyStore,
    broad: &mut BroadPhase,
    connected: &[(u64, u64)],
    margin: f64,
    pairs: &mut Vec<[u32; 2]>,
    scratch: &mut BroadScratch,
) {
    scratch.proxy_pairs.clear();
    scratch.plane_pairs.clear();
    // Every pair wants an awake body or a moving kinematic one (both on the moving list): with
    // none (a world asleep), there is nothing to look at, and the broad phase keeps its moves for
    // the next search.
    let moving = bodies.moving();
    if !moving
        .iter()
        .any(|&i| matches!(scratch.swept[i as usize].role, Role::Awake | Role::Mover))
    {
        pairs.clear();
        return;
    }
    if 4 * moving.len() < bodies.len() && broad.pending_moves() <= 4 * moving.len() + PENDING_MOVES {
        pairs_by_query(bodies, broad, connected, bodies.moving(), scratch);
        if cfg!(debug_assertions) {
            // The pairs must be those of the whole pair list; test builds check every time.
            let found = core::mem::take(&mut scratch.proxy_pairs);
            pairs_from_list(bodies, broad, connected, scratch);
            scratch.proxy_pairs.sort_unstable_by_key(|f| (f.0, f.1));
            assert_eq!(found, scratch.proxy_pairs, "the broad phase's two paths disagree");
        }
    } else if 4 * moving.len() >= bodies.len() && sweep::bodies_are_small(&scratch.swept, broad.settings().margin) {
        sweep::pairs_by_sweep(bodies, connected, scratch);
        if cfg!(debug_assertions) {
            let found = core::mem::take(&mut scratch.proxy_pairs);
            pairs_from_list(bodies, broad, connected, scratch);
            scratch.proxy_pairs.sort_unstable_by_key(|f| (f.0, f.1));
            assert_eq!(
                found, scratch.proxy_pairs,
                "the sweep and the broad phase's pairs disagree"
            );
        }
    } else {
        pairs_from_list(bodies, broad, connected, scratch);
    }
    plane_pairs(bodies, margin, moving, true, scratch);
    if !scratch.proxy_pairs.is_sorted_by_key(|f| (f.0, f.1)) {
        scratch.proxy_pairs.sort_unstable_by_key(|f| (f.0, f.1));
    }
    merge(&scratch.proxy_pairs, &scratch.plane_pairs, pairs);
}

/// The pairs of every half-space with the bodies of `with` (dense indices) into
/// `scratch.plane_pairs`, filtered by role; with `whole`, a half-space that moves pairs with every
/// body instead (the whole search, `with` being the moving list).
fn plane_pairs(bodies: &BodyStore, margin: f64, with: &[u32], whole: bool, scratch: &mut BroadScratch) {
    scratch.plane_pairs.clear();
    let (records, swept) = (bodies.records(), &scratch.swept);
    for &plane in &scratch.planes {
        let plane = plane as usize;
        let view = bodies.view(plane);
        let Geometry::Shape(Shape::HalfSpace(half_space)) = view.record.collider.geometry() else {
            continue;
        };
        let normal = view.state.orientation * half_space.normal();
        let offset = normal.dot(view.state.position) + half_space.offset();
        let mut test = |j: usize| {
            let body = &swept[j];
            let Some(b) = body.swept() else { return };
            // Height above the plane of the box's lowest corner along the normal.
            let lowest = normal.dot(b.center()) - normal.abs().dot(0.5 * b.size());
            // The box is grown by half the margin; the plane by the other half.
            if lowest - offset <= 0.5 * margin && wanted(swept[plane].role, body.role) {
                scratch
                    .plane_pairs
                    .push(ordered(records[plane].id, plane, records[j].id, j));
            }
        };
        // A fixed or sleeping plane pairs only with awake bodies and moving kinematic ones.
        match swept[plane].role {
            Role::Awake | Role::Mover if whole => (0..swept.len()).for_each(test),
            _ => with.iter().for_each(|&j| test(j as usize)),
        }
    }
    if !scratch.plane_pairs.is_sorted_by_key(|f| (f.0, f.1)) {
        scratch.plane_pairs.sort_unstable_by_key(|f| (f.0, f.1));
    }
}

/// Moved proxies the broad phase may hold unapplied, beyond four per moving body, before a search
/// brings its pair list up to date again (each query checks them one by one).
const PENDING_MOVES: usize = 64;

/// The proxy pairs of the search into `scratch.proxy_pairs`, from the broad phase's whole pair
/// list (brought up to date), in key order: the way when many bodies move.
///
/// A heap at rest holds several times more fat pairs than pairs (1000 balls resting in columns
/// 0.1 m apart, the fat boxes' margin: 15 fat pairs a ball for one pair a ball), every one read
/// each step, so the read is made cheap. The list and the dense indices of each fat pair's bodies
/// are kept from step to step for as long as neither the broad phase's pairs nor the store's
/// layout change (a heap at rest keeps its fat boxes); each step copies what the pair tests read
/// of the bodies (role, whether on the moving list, swept box) into tables by dense index, 4 and
/// 48 bytes an entry, which a heap of a few thousand bodies keeps in cache, and reads the fat
/// pairs against them. Measured on those balls, one thread: 45 us a step for the search instead
/// of 80 (the list's copy and the lookups of each pair's bodies in the store). A long list is
/// read in fixed chunks side by side, the pairs kept in key order (on two threads, the balls'
/// read 71 -> 44 us).
fn pairs_from_list(bodies: &BodyStore, broad: &mut BroadPhase, connected: &[(u64, u64)], scratch: &mut BroadScratch) {
    scratch.proxy_pairs.clear();
    let stamps = Some((broad.pair_stamp(), bodies.layout()));
    if broad.has_pending_changes() || scratch.keys_stamps != stamps {
        broad.update_pairs(&mut scratch.keys);
        scratch.dense_keys.clear();
        // Two store lookups a pair: a heap whose fat boxes change every step (the random pile's
        // 10 000 pairs) reads them on the pool, in key order all the same.
        let dense = |&key: &(u64, u64)| dense_pair(bodies, key);
        if scratch.keys.len() >= 2 * KEYS_PER_TASK {
            (scratch.dense_keys).par_extend(scratch.keys.par_iter().with_min_len(KEYS_PER_TASK).map(dense));
        } else {
            (scratch.dense_keys).extend(scratch.keys.iter().map(dense));
        }
        scratch.keys_stamps = Some((broad.pair_stamp(), bodies.layout()));
    } else if cfg!(debug_assertions) {
        // The kept list must be the one the broad phase and the store give now; test builds
        // check every time.
        assert_eq!(broad.pairs(), scratch.keys, "the kept fat pairs are stale");
        let fresh: Vec<[u32; 2]> = scratch.keys.iter().map(|&key| dense_pair(bodies, key)).collect();
        assert_eq!(fresh, scratch.dense_keys, "the kept dense indices are stale");
    }
    let swept = &scratch.swept;
    let (traits, boxes) = (&mut scratch.traits, &mut scratch.boxes);
    traits.clear();
    traits.extend(swept.iter().enumerate().map(|(dense, body)| BodyTraits {
        role: body.role,
        // A pair is wanted only with a body on the moving list (see `wanted`), so a pair of two
        // other bodies (a sleeping pile) is passed over by two flag tests.
        listed: bodies.is_moving(dense),
        boxed: body.swept().is_some(),
    }));
    boxes.clear();
    boxes.extend(swept.iter().map(|body| {
        body.swept().copied().unwrap_or(Aabb {
            min: DVec3::ZERO,
            max: DVec3::ZERO,
        })
    }));
    let pair = |(&(low, high), &[i, j]): (&(u64, u64), &[u32; 2])| {
        let (first, second) = (traits.get(i as usize)?, traits.get(j as usize)?);
        if !(first.listed || second.listed) || !(first.boxed && second.boxed) {
            return None;
        }
        let (i, j) = (i as usize, j as usize);
        (boxes[i].overlaps(&boxes[j])
            && wanted(first.role, second.role)
            && connected.binary_search(&(low, high)).is_err())
        .then(|| ordered(BodyId::from_bits(low), i, BodyId::from_bits(high), j))
    };
    let (keys, dense_keys) = (&scratch.keys, &scratch.dense_keys);
    if keys.len() >= 2 * KEYS_PER_TASK {
        // Each chunk's pairs into a list of its own (kept from step to step), then joined in
        // chunk order: in key order, as one pass would give them.
        let parts = &mut scratch.key_parts;
        parts.resize_with(keys.len().div_ceil(KEYS_PER_TASK), Vec::new);
        shatter_integrators::parallel::for_each_mut(parts, 1, &|c, part| {
            let range = c * KEYS_PER_TASK..((c + 1) * KEYS_PER_TASK).min(keys.len());
            part.clear();
            part.extend(keys[range.clone()].iter().zip(&dense_keys[range]).filter_map(pair));
        });
        for part in parts.iter() {
            scratch.proxy_pairs.extend_from_slice(part);
        }
    } else {
        scratch.proxy_pairs.extend(keys.iter().zip(dense_keys).filter_map(pair));
    }
}

/// Fat pairs read per parallel task: fixed, so the tasks do not depend on the thread count.
///
/// It was 4096: the 1000-cube piles hold about 10 000 fat pairs, which made three tasks, two of
/// them on one thread of two. With 1024 (ten tasks), and the dense indices of a renewed list
/// looked up on the pool as well, the broad phase stage's median on two threads went from 0.362
/// to 0.239 ms for the random 1000-cube pile at 30 Hz, 0.096 -> 0.078 ms for the aligned one at
/// 60 Hz, 0.107 -> 0.081 at 30 Hz and 0.099 -> 0.086 ms for the 1000 spheres on the table
/// (`cargo run --release -p shatter-peers --example stage_times -- --scene NAME --threads 2
/// --runs 3 --pool-use shared`); 512 was no faster than 1024.
const KEYS_PER_TASK: usize = 1024;

/// The dense indices of the bodies with the handle bits of fat pair `(low, high)`, `u32::MAX`
/// twice when one is not in the store.
fn dense_pair(bodies: &BodyStore, (low, high): (u64, u64)) -> [u32; 2] {
    match (
        bodies.dense_of(BodyId::from_bits(low)),
        bodies.dense_of(BodyId::from_bits(high)),
    ) {
        (Some(i), Some(j)) => [i as u32, j as u32],
        _ => [u32::MAX; 2],
    }
}

/// What [`pairs_from_list`] reads of a body besides its swept box.
#[derive(Clone, Copy, Debug)]
struct BodyTraits {
    role: Role,
    /// Whether the body is on the store's moving list.
    listed: bool,
    /// Whether the body has a finite swept box.
    boxed: bool,
}

/// The proxy pairs with a body of `with` (dense indices) into `scratch.proxy_pairs`, sorted by
/// handles, from one query of the broad phase per body. With the moving bodies, the way when few
/// bodies move among many at rest, whose pairs with each other the whole list would hold: every
/// wanted pair has a moving body, and a pair's swept boxes overlap only where their fat boxes do
/// (each fat box holds its swept box), so the pairs are those the whole list gives.
fn pairs_by_query(
    bodies: &BodyStore,
    broad: &BroadPhase,
    connected: &[(u64, u64)],
    with: &[u32],
    scratch: &mut BroadScratch,
) {
    scratch.proxy_pairs.clear();
    let (records, swept) = (bodies.records(), &scratch.swept);
    for &j in with {
        let j = j as usize;
        let Some(box_j) = swept[j].swept() else {
            continue;
        };
        let b = records[j].id;
        // A swept box is finite, so the query cannot fail.
        let _ = broad.query(box_j, |_, key| {
            let a = BodyId::from_bits(key);
            let Some(i) = bodies.dense_of(a) else {
                return;
            };
            let overlap = i != j && swept[i].swept().is_some_and(|box_i| box_i.overlaps(box_j));
            let bits = (key.min(b.to_bits()), key.max(b.to_bits()));
            if overlap && wanted(swept[i].role, swept[j].role) && connected.binary_search(&bits).is_err() {
                scratch.proxy_pairs.push(ordered(a, i, b, j));
            }
        });
    }
    // A pair of two moving bodies, or of bodies with several proxies, is found more than once.
    scratch.proxy_pairs.sort_unstable_by_key(|f| (f.0, f.1));
    scratch.proxy_pairs.dedup_by_key(|f| (f.0, f.1));
}

/// Merges two lists sorted by handles into `pairs` (cleared first), each pair once.
fn merge(x: &[Found], y: &[Found], pairs: &mut Vec<[u32; 2]>) {
    pairs.clear();
    pairs.reserve(x.len() + y.len());
    let (mut i, mut j) = (0, 0);
    let mut last: Option<(BodyId, BodyId)> = None;
    while i < x.len() || j < y.len() {
        let take_x = j == y.len() || (i < x.len() && (x[i].0, x[i].1) <= (y[j].0, y[j].1));
        let next = if take_x {
            i += 1;
            x[i - 1]
        } else {
            j += 1;
            y[j - 1]
        };
        if last != Some((next.0, next.1)) {
            pairs.push(next.2);
            last = Some((next.0, next.1));
        }
    }
}

#[cfg(test)]
mod tests {
    use shatter_integrators::SplitMix64;

    use super::*;

    /// The swept box of a body that turns slowly through the step (bounded by the turn, not the
    /// turned box) holds the body's box at the start and every corner of its box at the end pose
    /// the velocities predict, and is looser than the box at the predicted orientation by at most
    /// twice the distance the turn moves the body's points (the turned box's sides may move in by
    /// that much, where the bound moves them out by it). Bodies turning faster keep the exact box.
    #[test]
    fn broad_phase_swept_box_of_a_slowly_turning_body_holds_its_end_and_is_nearly_tight() {
        let mut random = SplitMix64::new(7);
        let mut unit = || 2.0 * random.next_f64() - 1.0;
        let (dt, margin) = (1.0 / 30.0, 0.01);
        let (mut slow, mut fast) = (0, 0);
        for _ in 0..2000 {
            let half = DVec3::new(0.1 + unit().abs(), 0.1 + unit().abs(), 0.1 + unit().abs());
            let offset = DVec3::new(unit(), unit(), unit()) * 0.3;
            let local = Aabb::from_center(offset, half);
            let axis = DVec3::new(unit(), unit(), unit()).normalize_or(DVec3::X);
            let orientation = DQuat::from_axis_angle(axis, 3.0 * unit());
            let position = DVec3::new(unit(), unit(), unit()) * 5.0;
            let linear_velocity = DVec3::new(unit(), unit(), unit()) * 3.0;
            // From a ten-thousandth of a turn through the step (a body at rest in a heap) to a
            // tenth (past the cut between the two ways for these sizes and margin).
            let spin = 10f64.powf(-4.0 + 3.0 * unit().abs()) / dt;
            let world_spin = DVec3::new(unit(), unit(), unit()).normalize_or(DVec3::Y) * spin;
            let state = RigidState {
                position,
                orientation,
                linear_velocity,
                body_angular_velocity: orientation.inverse() * world_spin,
            };
            let swept = swept_box(&local, &state, BodyKind::Dynamic, dt, margin);
            let turned = DQuat::from_scaled_axis(state.angular_velocity() * dt) * orientation;
            let end = Pose::new(position + linear_velocity * dt, turned.normalize());
            let start = Pose::new(position, orientation);
            for pose in [start, end] {
                for corner in 0..8 {
                    let pick = |bit: usize, low: f64, high: f64| if corner >> bit & 1 == 0 { low } else { high };
                    let point = DVec3::new(
                        pick(0, local.min.x, local.max.x),
                        pick(1, local.min.y, local.max.y),
                        pick(2, local.min.z, local.max.z),
                    );
                    let world = pose.transform_point(point);
                    assert!(
                        swept.expanded(-margin + 1e-12).contains_point(world),
                        "{world} outside {swept:?} (spin {spin} rad/s)"
                    );
                }
            }
            let exact = world_box(&local, &start)
                .union(world_box(&local, &end))
                .expanded(margin);
            let reach = local.min.abs().max(local.max.abs()).length();
            let sweep = spin * dt * reach;
            if sweep <= SLOW_TURN * margin {
                slow += 1;
                assert!(swept.contains(&exact), "{swept:?} against {exact:?}");
                let looser = (exact.min - swept.min).max(swept.max - exact.max).max_element();
                assert!(
                    looser <= 2.0 * sweep + 1e-12,
                    "looser by {looser} m for a sweep of {sweep} m"
                );
            } else {
                fast += 1;
                assert_eq!(swept, exact);
            }
        }
        assert!(slow > 500 && fast > 500, "{slow} slow and {fast} fast bodies");
    }
}
