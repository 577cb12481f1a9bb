//! The body store: every body of a world, behind generational handles, in dense arrays.
//!
//! Data comes in tiers (Box2D v3 body.h, Avian's solver bodies), each a dense array indexed by
//! the body's *dense index* (its place in the arrays; it changes when another body is removed,
//! which is why users hold [`BodyId`]s, never indices):
//! - the stable record ([`BodyRecord`]): handle, user data, collider, material, geometry frame;
//!   cold, read by the narrow phase and the user;
//! - simulation data: [`RigidState`], [`MassProperties`], [`BodyKind`] and [`BodyMotion`] (sleep
//!   bookkeeping); hot, plain data (`Pod` except the kind), snapshotted as bytes;
//! - per-awake-body solver data, built by the step each time in its own dense arrays over the
//!   awake bodies only (see the solve stage), so sleeping bodies cost nothing there.
//!
//! The store also keeps the list of *moving* bodies ([`BodyStore::moving`]: awake dynamic bodies
//! and kinematic ones, not quarantined) in dense order, so that the step's per-body passes cost
//! O(moving) and a world at rest costs next to nothing; and the mass moment `sum m x` of the
//! dynamic bodies that do not move, whose potential energy is therefore fixed until one of them
//! moves. Both are renewed whenever a body is added or removed or a flag changes: flags change
//! only through `BodyStore::update_motion`.
//!
//! Removal is a swap-remove: the last body moves into the hole and its slot is re-pointed, so the
//! arrays stay dense and the order depends only on the sequence of inserts and removes.

use core::sync::atomic::{AtomicU64, Ordering};

use bytemuck::{Pod, Zeroable};
use glam::DVec3;
use shatter_collision::{Collider, Pose, ProxyId};
use shatter_integrators::{BodyKind, MassProperties, RigidState};

use crate::build::ResolvedBody;
use crate::desc::Material;
use crate::error::EngineError;
use crate::handle::{BodyId, SlotTable};

/// The stable, cold part of a body.
#[derive(Clone, Debug)]
pub struct BodyRecord {
    /// The body's handle.
    pub id: BodyId,
    /// The user's number, stored untouched.
    pub user_data: u64,
    /// Collision geometry in the body frame.
    pub collider: Collider,
    /// Surface properties.
    pub material: Material,
    /// Where the body frame (centre of mass, principal axes) sits in the geometry frame the body
    /// was described in; identity for colliders given in body frame.
    pub geometry_frame: Pose,
    /// The body's box in the broad phase; `None` for unbounded bodies.
    pub(crate) proxy: Option<ProxyId>,
}

/// Sleep bookkeeping and flags of a body: plain data, part of a snapshot.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BodyMotion {
    /// How long the body has stayed below the sleep velocity thresholds, s.
    pub resting_time: f64,
    /// While asleep: the slot index of the lowest body of the island it fell asleep with; the
    /// island wakes as a whole.
    pub island: u32,
    /// Bit set of `BodyMotion::AWAKE`, `BodyMotion::QUARANTINED`.
    pub flags: u32,
}

impl BodyMotion {
    /// The body takes part in the step (dynamic bodies only; kinematic bodies always move and
    /// static bodies never do).
    pub const AWAKE: u32 = 1;
    /// The body's state went non-finite in a step; it was put back where the step began and is
    /// held still until the user sets its pose or velocity.
    pub const QUARANTINED: u32 = 2;

    /// Whether the body is awake.
    pub fn is_awake(&self) -> bool {
        self.flags & Self::AWAKE != 0
    }

    /// Whether the body is quarantined.
    pub fn is_quarantined(&self) -> bool {
        self.flags & Self::QUARANTINED != 0
    }
}

/// A read-only view of one body, every tier at once.
#[derive(Clone, Copy, Debug)]
pub struct BodyView<'a> {
    /// Stable record.
    pub record: &'a BodyRecord,
    /// Pose and velocities.
    pub state: &'a RigidState,
    /// Mass properties (infinite for static and kinematic bodies).
    pub mass: &'a MassProperties,
    /// How it moves.
    pub kind: BodyKind,
    /// Sleep bookkeeping and flags.
    pub motion: &'a BodyMotion,
}

impl BodyView<'_> {
    /// The body's pose (centre of mass and principal frame), world frame.
    pub fn pose(&self) -> Pose {
        Pose::new(self.state.position, self.state.orientation)
    }
}

/// The moving bodies as one run of the store's arrays ([`BodyStore::moving_run_mut`]): the run's
/// first dense index, and its states, masses and kinds.
pub(crate) type MovingRun<'a> = (usize, &'a mut [RigidState], &'a [MassProperties], &'a [BodyKind]);

/// Every body of a world. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct BodyStore {
    slots: SlotTable,
    records: Vec<BodyRecord>,
    states: Vec<RigidState>,
    masses: Vec<MassProperties>,
    kinds: Vec<BodyKind>,
    motion: Vec<BodyMotion>,
    /// Dense indices of the moving bodies, ascending.
    moving: Vec<u32>,
    /// `sum m x` over the dynamic bodies that do not move, kg m.
    resting_moment: DVec3,
    /// Whether a body was added or removed, a flag changed, or the user edited a state since
    /// [`BodyStore::take_edited`] was last called: then bodies outside the moving list may
    /// have changed too.
    edited: bool,
    /// Names which body sits at which dense index ([`BodyStore::layout`]).
    layout: u64,
}

/// A layout stamp no store of this process has used ([`BodyStore::layout`]); 0, the empty
/// store's, is never drawn.
fn fresh_layout() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl BodyStore {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there is no body.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Whether `id` names a live body.
    pub fn contains(&self, id: BodyId) -> bool {
        self.slots.dense(id.index, id.generation).is_some()
    }

    /// The dense index of body `id`, or [`EngineError::StaleBody`] naming it.
    pub fn dense_index(&self, id: BodyId) -> Result<usize, EngineError> {
        self.slots
            .dense(id.index, id.generation)
            .ok_or(EngineError::StaleBody { id })
    }

    /// The dense index of body `id`, `None` when it is stale (for hot loops: no error is made).
    pub(crate) fn dense_of(&self, id: BodyId) -> Option<usize> {
        self.slots.dense(id.index, id.generation)
    }

    /// Every body's handle, in dense order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = BodyId> + '_ {
        self.records.iter().map(|record| record.id)
    }

    /// A view of body `id`.
    pub fn get(&self, id: BodyId) -> Result<BodyView<'_>, EngineError> {
        Ok(self.view(self.dense_index(id)?))
    }

    /// A view of the body at dense index `dense`.
    ///
    /// # Panics
    ///
    /// If `dense >= self.len()` (a programming error: dense indices come from this store).
    pub fn view(&self, dense: usize) -> BodyView<'_> {
        BodyView {
            record: &self.records[dense],
            state: &self.states[dense],
            mass: &self.masses[dense],
            kind: self.kinds[dense],
            motion: &self.motion[dense],
        }
    }

    /// Stable records, dense order.
    pub fn records(&self) -> &[BodyRecord] {
        &self.records
    }

    /// States, dense order.
    pub fn states(&self) -> &[RigidState] {
        &self.states
    }

    /// Mass properties, dense order.
    pub fn masses(&self) -> &[MassProperties] {
        &self.masses
    }

    /// Kinds, dense order.
    pub fn kinds(&self) -> &[BodyKind] {
        &self.kinds
    }

    /// Sleep bookkeeping and flags, dense order.
    pub fn motion(&self) -> &[BodyMotion] {
        &self.motion
    }

    /// Whether the body at `dense` moves this step: an awake dynamic body or a kinematic one,
    /// not quarantined.
    pub fn is_moving(&self, dense: usize) -> bool {
        let motion = &self.motion[dense];
        !motion.is_quarantined()
            && match self.kinds[dense] {
                BodyKind::Dynamic => motion.is_awake(),
                BodyKind::Kinematic => true,
                BodyKind::Static => false,
            }
    }

    /// Whether the body at `dense` is an awake, non-quarantined dynamic body.
    pub fn is_awake_dynamic(&self, dense: usize) -> bool {
        self.kinds[dense] == BodyKind::Dynamic && self.is_moving(dense)
    }

    /// Dense indices of the bodies that move this step ([`BodyStore::is_moving`]), ascending.
    pub fn moving(&self) -> &[u32] {
        &self.moving
    }

    /// `sum m x` over the dynamic bodies that do not move this step (asleep or quarantined),
    /// kg m: their part of the potential energy is `-g . (sum m x)`.
    pub fn resting_mass_moment(&self) -> DVec3 {
        self.resting_moment
    }

    /// Renews the moving list and the resting mass moment from the flags (one pass over the
    /// bodies; called whenever a flag or the set of bodies changes).
    fn renew_moving(&mut self) {
        self.edited = true;
        self.moving.clear();
        let mut moment = DVec3::ZERO;
        for dense in 0..self.records.len() {
            if self.is_moving(dense) {
                self.moving.push(dense as u32);
            } else if self.kinds[dense] == BodyKind::Dynamic {
                moment += self.masses[dense].mass() * self.states[dense].position;
            }
        }
        self.resting_moment = moment;
    }

    /// Runs `change` on the sleep records and flags, then renews what depends on the flags.
    pub(crate) fn update_motion<R>(&mut self, change: impl FnOnce(&mut [BodyMotion]) -> R) -> R {
        let result = change(&mut self.motion);
        self.renew_moving();
        result
    }

    /// Gives each moving body the resting time (s) `next(dense index, resting time)` (flags
    /// untouched).
    pub(crate) fn update_resting_times(&mut self, mut next: impl FnMut(usize, f64) -> f64) {
        for &dense in &self.moving {
            let record = &mut self.motion[dense as usize];
            record.resting_time = next(dense as usize, record.resting_time);
        }
    }

    /// States to change, for the stages, which change only moving bodies' states (a user's edit
    /// goes through [`BodyStore::edit_state`]).
    pub(crate) fn states_mut(&mut self) -> &mut [RigidState] {
        &mut self.states
    }

    /// The state of the body at `dense`, to be changed by the user.
    pub(crate) fn edit_state(&mut self, dense: usize) -> &mut RigidState {
        self.edited = true;
        &mut self.states[dense]
    }

    /// Whether anything outside the moving list may have changed since the last call (see the
    /// field); clears the mark.
    pub(crate) fn take_edited(&mut self) -> bool {
        core::mem::take(&mut self.edited)
    }

    /// States, masses and kinds at once, the first mutable (for the integrator and impulses).
    pub(crate) fn dynamics_mut(&mut self) -> (&mut [RigidState], &[MassProperties], &[BodyKind]) {
        (&mut self.states, &self.masses, &self.kinds)
    }

    /// The states (mutable), masses and kinds of the moving bodies when they are one run of
    /// dense indices (every body but those at the ends, as a world without sleepers has them),
    /// with the run's first index; `None` otherwise. Passes over the moving bodies then work on the
    /// store's own arrays instead of copies.
    pub(crate) fn moving_run_mut(&mut self) -> Option<MovingRun<'_>> {
        let (&first, &last) = (self.moving.first()?, self.moving.last()?);
        // Ascending and distinct, so the list is the whole run exactly when it is as long.
        let run = first as usize..last as usize + 1;
        (run.len() == self.moving.len()).then(|| {
            (
                run.start,
                &mut self.states[run.clone()],
                &self.masses[run.clone()],
                &self.kinds[run],
            )
        })
    }

    /// The moving list with the states (mutable) and kinds, for passes over the moving bodies.
    pub(crate) fn moving_states_mut(&mut self) -> (&[u32], &mut [RigidState], &[BodyKind]) {
        (&self.moving, &mut self.states, &self.kinds)
    }

    pub(crate) fn record_mut(&mut self, dense: usize) -> &mut BodyRecord {
        &mut self.records[dense]
    }

    /// Adds a validated body; dynamic bodies start awake (so a new body moves unless it is static,
    /// and its index, the largest, goes to the end of the moving list).
    pub(crate) fn insert(&mut self, body: ResolvedBody) -> BodyId {
        let dense = self.records.len();
        let (index, generation) = self.slots.allocate(dense);
        let id = BodyId::new(index, generation);
        self.records.push(BodyRecord {
            id,
            user_data: body.user_data,
            collider: body.collider,
            material: body.material,
            geometry_frame: body.geometry_frame,
            proxy: None,
        });
        self.states.push(body.state);
        self.masses.push(body.mass);
        self.kinds.push(body.kind);
        self.motion.push(BodyMotion {
            resting_time: 0.0,
            island: index,
            flags: BodyMotion::AWAKE,
        });
        if self.is_moving(dense) {
            self.moving.push(dense as u32);
        }
        self.edited = true;
        self.layout = fresh_layout();
        id
    }

    /// Removes body `id` and returns its record; fails naming `id` when it is stale.
    pub(crate) fn remove(&mut self, id: BodyId) -> Result<BodyRecord, EngineError> {
        let dense = self.dense_index(id)?;
        let record = self.records.swap_remove(dense);
        self.states.swap_remove(dense);
        self.masses.swap_remove(dense);
        self.kinds.swap_remove(dense);
        self.motion.swap_remove(dense);
        self.slots.release(id.index);
        if let Some(moved) = self.records.get(dense) {
            self.slots.relocate(moved.id.index, dense);
        }
        self.layout = fresh_layout();
        self.renew_moving();
        Ok(record)
    }

    /// Names which body sits at which dense index: a number drawn afresh, never used before in
    /// this process, each time a body is added or removed (a clone keeps its original's; a new
    /// store's is 0). A table by dense index built under one layout holds for as long as
    /// the store's layout is that one.
    pub(crate) fn layout(&self) -> u64 {
        self.layout
    }

    /// Structural self-check (handles and dense arrays agree); for tests and debugging.
    pub fn check_consistency(&self) -> Result<(), String> {
        let n = self.records.len();
        if [
            self.states.len(),
            self.masses.len(),
            self.kinds.len(),
            self.motion.len(),
        ] != [n; 4]
        {
            return Err("dense arrays differ in length".into());
        }
        for (dense, record) in self.records.iter().enumerate() {
            if self.slots.dense(record.id.index, record.id.generation) != Some(dense) {
                return Err(format!("{} does not map to dense index {dense}", record.id));
            }
        }
        let moving: Vec<u32> = (0..n).filter(|&i| self.is_moving(i)).map(|i| i as u32).collect();
        if moving != self.moving {
            return Err(format!(
                "moving list {:?} differs from the flags' {moving:?}",
                self.moving
            ));
        }
        Ok(())
    }
}
