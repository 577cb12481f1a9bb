//! The fracture interface: the [`FractureModel`] trait that fracture methods implement, and the
//! [`FractureContext`] through which they see and change one step.
//!
//! The engine never names a fracture method (DESIGN.md). It calls every registered model once per
//! step, in registration order, in the `fracture` stage: after the constraint solve (so contact
//! and joint impulses are known) and before integration (so anything a model changes moves in the
//! same step).
//!
//! # What a hook may touch
//!
//! - **Read**, through the context: every body (records, states, mass properties, kinds, sleep
//!   flags) as they stand after the solve, i.e. with this step's end velocities and start poses;
//!   every contact pair of the step with its points, normals, depths, feature ids and the impulses
//!   of the collision pass and of the solve ([`PairContacts`]); every joint with the impulses,
//!   Jacobians, ERP and CFM of its rows ([`SolvedJoint`]); the step's `dt`, time and gravity.
//! - **Apply impulses** to bodies ([`FractureContext::apply_impulse`],
//!   [`FractureContext::apply_angular_impulse`]) and **break joints**
//!   ([`FractureContext::break_joint`]). These are queued and applied, in the order asked, when
//!   the hook returns `Ok`; so a hook reads one consistent state throughout, and the next model
//!   sees what the previous ones did. An impulse on a sleeping body wakes it.
//! - **Queue structural changes** (spawn a body from a [`BodyDesc`], despawn a body) in the
//!   step's [`CommandBuffer`] ([`FractureContext::spawn`], [`FractureContext::despawn`]). They are
//!   applied after every model has run, before the integrate stage: a body spawned by a hook does
//!   not exist during any hook of this step, and a despawned one still does. The spawned bodies'
//!   handles come back through [`FractureModel::spawned`].
//! - **Nothing else**: no access to the broad phase, the solver, the contact cache or other
//!   models; no poses are set (a fragment is placed by its spawn description).
//!
//! A hook that returns `Err` has everything it queued in this call discarded (impulses, joint
//! breaks, commands); the step goes on and lists the failure in its report.
//!
//! Side data a method keeps per body (a fracture pattern, modes, a boundary mesh) lives in the
//! model itself, keyed by [`BodyId`], not in the body store.

use std::any::Any;

use glam::DVec3;

use crate::commands::{CommandBuffer, SpawnTicket, Spawned};
use crate::contacts::PairContacts;
use crate::desc::BodyDesc;
use crate::error::{EngineError, check_finite3};
use crate::handle::{BodyId, JointId};
use crate::joints::{JointStore, SolvedJoint};
use crate::store::{BodyStore, BodyView};

/// A fracture method as the step sees it. See the [module docs](self) for what a hook may touch.
///
/// A model is `'static` ([`Any`]) so that the world can hand it back by type
/// ([`crate::World::fracture_model`]) for its owner to read what it did.
pub trait FractureModel: Any + Send {
    /// A short name for reports and errors.
    fn name(&self) -> &str;

    /// Inspects the step and asks for impulses, joint breaks and structural changes.
    ///
    /// Returns `Err` with a message to have everything asked in this call discarded.
    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String>;

    /// Told, after the command buffer was applied, which bodies this model's spawns became, in
    /// the order it queued them (spawns that failed are missing). The default does nothing.
    fn spawned(&mut self, _spawned: &[Spawned]) {}
}

/// Something a hook asked for, applied when it returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Action {
    /// A linear impulse (N s) at a world point, plus a pure angular impulse (N m s).
    Impulse {
        id: BodyId,
        linear: DVec3,
        point: DVec3,
        angular: DVec3,
    },
    /// Remove a joint.
    BreakJoint(JointId),
}

/// What a [`FractureModel`] sees of one step and how it asks for changes.
pub struct FractureContext<'a> {
    pub(crate) dt: f64,
    pub(crate) time: f64,
    pub(crate) gravity: DVec3,
    pub(crate) bodies: &'a BodyStore,
    pub(crate) contacts: &'a [PairContacts],
    pub(crate) joints: &'a JointStore,
    pub(crate) solved_joints: &'a [SolvedJoint],
    pub(crate) actions: Vec<Action>,
    pub(crate) commands: &'a mut CommandBuffer,
}

impl FractureContext<'_> {
    /// The step's time step, s.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Simulated time at the start of the step, s.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Gravity, m/s^2.
    pub fn gravity(&self) -> DVec3 {
        self.gravity
    }

    /// Every body, read only.
    pub fn bodies(&self) -> &BodyStore {
        self.bodies
    }

    /// Body `id`, read only; fails naming a stale handle.
    pub fn body(&self, id: BodyId) -> Result<BodyView<'_>, EngineError> {
        self.bodies.get(id)
    }

    /// The step's contact pairs with their impulses, sorted by body pair.
    pub fn contacts(&self) -> &[PairContacts] {
        self.contacts
    }

    /// The contact pairs that involve body `id`.
    pub fn contacts_of(&self, id: BodyId) -> impl Iterator<Item = &PairContacts> + '_ {
        self.contacts
            .iter()
            .filter(move |pair| pair.body_a == id || pair.body_b == id)
    }

    /// The joints as stored (body-frame anchors and axes).
    pub fn joint_store(&self) -> &JointStore {
        self.joints
    }

    /// Every joint with the impulses of its rows this step, in joint-store order.
    pub fn joints(&self) -> &[SolvedJoint] {
        self.solved_joints
    }

    /// Asks for a linear impulse `linear` (N s) on body `id` at world point `point` (m).
    /// Static and kinematic bodies do not move. Fails, queueing nothing, on a stale handle or a
    /// non-finite value.
    pub fn apply_impulse(&mut self, id: BodyId, linear: DVec3, point: DVec3) -> Result<(), EngineError> {
        self.bodies.dense_index(id)?;
        check_finite3("impulse (N s)", linear)?;
        check_finite3("impulse point (m)", point)?;
        self.actions.push(Action::Impulse {
            id,
            linear,
            point,
            angular: DVec3::ZERO,
        });
        Ok(())
    }

    /// Asks for a pure angular impulse `angular` (N m s, world frame) on body `id`.
    pub fn apply_angular_impulse(&mut self, id: BodyId, angular: DVec3) -> Result<(), EngineError> {
        let point = self.bodies.get(id)?.state.position;
        check_finite3("angular impulse (N m s)", angular)?;
        self.actions.push(Action::Impulse {
            id,
            linear: DVec3::ZERO,
            point,
            angular,
        });
        Ok(())
    }

    /// Asks for joint `id` to break (be removed). Fails on a stale handle.
    pub fn break_joint(&mut self, id: JointId) -> Result<(), EngineError> {
        if self.joints.get(id).is_none() {
            return Err(EngineError::StaleJoint { id });
        }
        self.actions.push(Action::BreakJoint(id));
        Ok(())
    }

    /// Queues a new body; it exists once the command buffer is applied, after every hook.
    pub fn spawn(&mut self, desc: BodyDesc) -> SpawnTicket {
        self.commands.spawn(desc)
    }

    /// Queues the removal of body `id` (with its joints) after every hook. Fails on a stale handle.
    pub fn despawn(&mut self, id: BodyId) -> Result<(), EngineError> {
        self.bodies.dense_index(id)?;
        self.commands.despawn(id);
        Ok(())
    }
}
