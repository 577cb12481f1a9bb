//! The [`World`]: the one owner of every store (bodies, joints, the contact cache, fracture
//! models, the command buffer) and the body and joint API. The step itself is in `step.rs`,
//! snapshots in `snapshot.rs`.
//!
//! Every call that takes user data checks it and, on error, names the bad value and leaves the
//! world exactly as it was. Calls that change how a body moves (pose, velocity, impulse) wake its
//! island and lift a quarantine.

use core::any::Any;
use core::fmt;

use glam::DVec3;
use shatter_collision::{BroadPhase, Pose, ProxyKind};
use shatter_integrators::{BodyKind, RigidState};

use crate::build::{check_pose, resolve};
use crate::commands::CommandBuffer;
use crate::contact_cache::ContactCache;
use crate::contacts::PairContacts;
use crate::desc::BodyDesc;
use crate::error::{EngineError, check_finite3};
use crate::fracture::FractureModel;
use crate::handle::BodyId;
use crate::joints::JointStore;
use crate::manifold_cache::ManifoldCache;
use crate::pool_use::PoolChoice;
use crate::report::{kinetic_energy, potential_energy};
use crate::settings::WorldSettings;
use crate::stages::broad_phase::world_box;
use crate::stages::sleep::wake_island;
use crate::step::StepScratch;
use crate::store::{BodyMotion, BodyStore, BodyView};

/// A simulated world. See the [crate docs](crate) for the step.
pub struct World {
    pub(crate) settings: WorldSettings,
    pub(crate) bodies: BodyStore,
    pub(crate) broad_phase: BroadPhase,
    pub(crate) joints: JointStore,
    pub(crate) contact_cache: ContactCache,
    pub(crate) manifold_cache: ManifoldCache,
    pub(crate) fracture_models: Vec<Box<dyn FractureModel>>,
    pub(crate) commands: CommandBuffer,
    /// The last step's contacts, for the user to read.
    pub(crate) contacts: Vec<PairContacts>,
    pub(crate) time: f64,
    pub(crate) steps: u64,
    pub(crate) scratch: StepScratch,
    /// How steps use the rayon pool, and what it measured of each way (pool_use.rs).
    pub(crate) pool_choice: PoolChoice,
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("bodies", &self.bodies.len())
            .field("joints", &self.joints.len())
            .field("fracture_models", &self.fracture_models.len())
            .field("time", &self.time)
            .field("steps", &self.steps)
            .finish()
    }
}

impl World {
    /// An empty world with the default settings (gravity 9.81 m/s^2 down the y axis).
    pub fn new() -> Self {
        Self {
            settings: WorldSettings::default(),
            bodies: BodyStore::default(),
            broad_phase: BroadPhase::new(),
            joints: JointStore::default(),
            contact_cache: ContactCache::default(),
            manifold_cache: ManifoldCache::default(),
            fracture_models: Vec::new(),
            commands: CommandBuffer::default(),
            contacts: Vec::new(),
            time: 0.0,
            steps: 0,
            scratch: StepScratch::default(),
            pool_choice: PoolChoice::default(),
        }
    }

    /// An empty world with `settings`; fails naming the first bad setting.
    pub fn try_with_settings(settings: WorldSettings) -> Result<Self, EngineError> {
        settings.validate()?;
        Ok(Self {
            settings,
            ..Self::new()
        })
    }

    /// The settings.
    pub fn settings(&self) -> &WorldSettings {
        &self.settings
    }

    /// Replaces the settings; fails, changing nothing, naming the first bad one.
    pub fn set_settings(&mut self, settings: WorldSettings) -> Result<(), EngineError> {
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// Gravity, m/s^2.
    pub fn gravity(&self) -> DVec3 {
        self.settings.gravity
    }

    /// Sets gravity (m/s^2); fails on a non-finite vector.
    pub fn set_gravity(&mut self, gravity: DVec3) -> Result<(), EngineError> {
        check_finite3("gravity (m/s^2)", gravity)?;
        self.settings.gravity = gravity;
        Ok(())
    }

    /// Simulated time, s: the sum of the time steps taken.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Number of steps taken.
    pub fn step_count(&self) -> u64 {
        self.steps
    }

    /// Every body, read only.
    pub fn bodies(&self) -> &BodyStore {
        &self.bodies
    }

    /// Every joint, read only.
    pub fn joints(&self) -> &JointStore {
        &self.joints
    }

    /// The contact pairs of the last step with their impulses, sorted by body pair.
    pub fn contacts(&self) -> &[PairContacts] {
        &self.contacts
    }

    /// The contact cache (last step's impulses by pair and feature).
    pub fn contact_cache(&self) -> &ContactCache {
        &self.contact_cache
    }

    /// Adds a body; fails, changing nothing, on a description that cannot be simulated (NaN pose
    /// or velocity, non-unit orientation, bad mass or density, bad geometry), naming the value.
    pub fn add_body(&mut self, desc: BodyDesc) -> Result<BodyId, EngineError> {
        let body = resolve(desc)?;
        let pose = Pose::new(body.state.position, body.state.orientation);
        let tight = body.collider.local_bounds().map(|local| world_box(&local, &pose));
        if let Some(tight) = tight {
            // The broad phase grows boxes by margins and predicted motion; a body so far out that
            // this overflows cannot be simulated in f64 anyway.
            let grown = tight.expanded(1e6);
            if !(grown.min.is_finite() && grown.max.is_finite()) {
                return Err(EngineError::invalid(
                    "body position (m)",
                    pose.position,
                    "a position whose bounding box stays finite (well inside 1e300 m)",
                ));
            }
        }
        let kind = body.kind;
        let id = self.bodies.insert(body);
        if let Some(tight) = tight {
            let proxy_kind = match kind {
                BodyKind::Static => ProxyKind::Static,
                _ => ProxyKind::Dynamic,
            };
            match self.broad_phase.insert_with_kind(tight, id.to_bits(), proxy_kind) {
                Ok(proxy) => {
                    let dense = self.bodies.dense_index(id)?;
                    self.bodies.record_mut(dense).proxy = Some(proxy);
                }
                Err(error) => {
                    self.bodies.remove(id)?;
                    return Err(EngineError::Geometry {
                        context: "broad phase",
                        error,
                    });
                }
            }
        }
        Ok(id)
    }

    /// Removes body `id` with its joints and cached contacts; fails naming a stale handle.
    /// Returns how many joints went with it.
    ///
    /// What rested on the body or hung from it must not stay asleep in mid-air: the body's island
    /// (if it slept) and every body it touched in the last step or was jointed to are woken.
    pub fn remove_body(&mut self, id: BodyId) -> Result<usize, EngineError> {
        let dense = self.bodies.dense_index(id)?;
        let mut neighbours: Vec<BodyId> = self
            .contacts
            .iter()
            .filter(|pair| pair.body_a == id || pair.body_b == id)
            .map(|pair| if pair.body_a == id { pair.body_b } else { pair.body_a })
            .collect();
        let joints = self.joints.attached_to(id);
        for joint in &joints {
            if let Some(joint) = self.joints.remove(*joint) {
                neighbours.extend([Some(joint.body_a), joint.body_b].into_iter().flatten());
            }
        }
        let motion = self.bodies.motion()[dense];
        if self.bodies.kinds()[dense] == BodyKind::Dynamic && !motion.is_awake() && !motion.is_quarantined() {
            let woken = wake_island(&mut self.bodies, motion.island);
            self.remember_woken(&woken);
        }
        let record = self.bodies.remove(id)?;
        if let Some(proxy) = record.proxy {
            // The proxy was made with the body and lives as long as it does.
            let _ = self.broad_phase.remove(proxy);
        }
        for neighbour in neighbours {
            if let Ok(dense) = self.bodies.dense_index(neighbour) {
                self.touch_sleeper(dense);
            }
        }
        self.contact_cache.forget_body(id);
        self.manifold_cache.forget_body(id);
        self.contacts.retain(|pair| pair.body_a != id && pair.body_b != id);
        Ok(joints.len())
    }

    /// Whether `id` names a live body.
    pub fn contains(&self, id: BodyId) -> bool {
        self.bodies.contains(id)
    }

    /// A read-only view of body `id`.
    pub fn body(&self, id: BodyId) -> Result<BodyView<'_>, EngineError> {
        self.bodies.get(id)
    }

    /// The state (pose and velocities) of body `id`.
    pub fn state(&self, id: BodyId) -> Result<RigidState, EngineError> {
        Ok(*self.bodies.get(id)?.state)
    }

    /// The pose of body `id`: its centre of mass and principal frame, world frame.
    pub fn pose(&self, id: BodyId) -> Result<Pose, EngineError> {
        Ok(self.bodies.get(id)?.pose())
    }

    /// Where body `id`'s frame sits in the geometry frame it was described in (identity unless
    /// it was built from a mesh); the geometry frame's pose is `pose * geometry_frame^-1`.
    pub fn geometry_frame(&self, id: BodyId) -> Result<Pose, EngineError> {
        Ok(self.bodies.get(id)?.record.geometry_frame)
    }

    /// Velocity of body `id`'s centre of mass, world frame, m/s.
    pub fn linear_velocity(&self, id: BodyId) -> Result<DVec3, EngineError> {
        Ok(self.bodies.get(id)?.state.linear_velocity)
    }

    /// Angular velocity of body `id`, world frame, rad/s.
    pub fn angular_velocity(&self, id: BodyId) -> Result<DVec3, EngineError> {
        Ok(self.bodies.get(id)?.state.angular_velocity())
    }

    /// Whether body `id` is awake (static bodies never are; kinematic bodies always are).
    pub fn is_awake(&self, id: BodyId) -> Result<bool, EngineError> {
        let dense = self.bodies.dense_index(id)?;
        Ok(self.bodies.is_moving(dense))
    }

    /// The user's number of body `id`.
    pub fn user_data(&self, id: BodyId) -> Result<u64, EngineError> {
        Ok(self.bodies.get(id)?.record.user_data)
    }

    /// Sets the user's number of body `id`.
    pub fn set_user_data(&mut self, id: BodyId, user_data: u64) -> Result<(), EngineError> {
        let dense = self.bodies.dense_index(id)?;
        self.bodies.record_mut(dense).user_data = user_data;
        Ok(())
    }

    /// Moves body `id` (its centre of mass and principal frame) to `pose`; wakes it. Fails,
    /// changing nothing, on a stale handle or a non-finite or non-unit pose.
    pub fn set_pose(&mut self, id: BodyId, pose: Pose) -> Result<(), EngineError> {
        let dense = self.bodies.dense_index(id)?;
        check_pose("body pose", &pose)?;
        let state = self.bodies.edit_state(dense);
        let angular = state.angular_velocity();
        state.position = pose.position;
        state.orientation = pose.orientation;
        state.set_angular_velocity(angular);
        self.touch(dense);
        Ok(())
    }

    /// Sets the velocities of body `id`: centre of mass `linear` (m/s) and `angular` (rad/s),
    /// world frame; wakes it. Static bodies refuse (they never move).
    pub fn set_velocity(&mut self, id: BodyId, linear: DVec3, angular: DVec3) -> Result<(), EngineError> {
        let dense = self.bodies.dense_index(id)?;
        check_finite3("linear velocity (m/s)", linear)?;
        check_finite3("angular velocity (rad/s)", angular)?;
        if self.bodies.kinds()[dense] == BodyKind::Static {
            return Err(EngineError::description(format!(
                "{id} is static and cannot be given a velocity; make it kinematic to move it"
            )));
        }
        let state = self.bodies.edit_state(dense);
        state.linear_velocity = linear;
        state.set_angular_velocity(angular);
        self.touch(dense);
        Ok(())
    }

    /// Applies a linear impulse `linear` (N s) at world point `point` (m) to body `id` and wakes
    /// it; static and kinematic bodies do not move. Fails, changing nothing, on a stale handle or
    /// a non-finite value.
    pub fn apply_impulse(&mut self, id: BodyId, linear: DVec3, point: DVec3) -> Result<(), EngineError> {
        self.apply_impulse_at(id, linear, point, DVec3::ZERO)
    }

    /// Applies linear impulse `linear` (N s) at world `point` (m) and pure angular impulse
    /// `angular` (N m s) to body `id`, waking it.
    pub(crate) fn apply_impulse_at(
        &mut self,
        id: BodyId,
        linear: DVec3,
        point: DVec3,
        angular: DVec3,
    ) -> Result<(), EngineError> {
        let dense = self.bodies.dense_index(id)?;
        check_finite3("impulse (N s)", linear)?;
        check_finite3("impulse point (m)", point)?;
        check_finite3("angular impulse (N m s)", angular)?;
        let (states, masses, kinds) = self.bodies.dynamics_mut();
        let state = &mut states[dense];
        let arm = point - state.position;
        shatter_integrators::apply_impulse(state, &masses[dense], kinds[dense], linear, arm, angular)
            .map_err(EngineError::integrator("impulse"))?;
        if kinds[dense] == BodyKind::Dynamic {
            self.touch(dense);
        }
        Ok(())
    }

    /// Wakes body `id` and its island.
    pub fn wake(&mut self, id: BodyId) -> Result<(), EngineError> {
        let dense = self.bodies.dense_index(id)?;
        self.touch(dense);
        Ok(())
    }

    /// Registers a fracture model; it is called every step after those registered before it.
    pub fn add_fracture_model(&mut self, model: Box<dyn FractureModel>) {
        self.fracture_models.push(model);
    }

    /// Number of registered fracture models.
    pub fn fracture_model_count(&self) -> usize {
        self.fracture_models.len()
    }

    /// The first registered fracture model of type `T`, to read what it recorded (the joints an
    /// energized model broke, say); `None` when none of that type is registered.
    pub fn fracture_model<T: FractureModel>(&self) -> Option<&T> {
        self.fracture_models
            .iter()
            .find_map(|model| (model.as_ref() as &dyn Any).downcast_ref::<T>())
    }

    /// The first registered fracture model of type `T`, to change its settings between steps;
    /// `None` when none of that type is registered.
    pub fn fracture_model_mut<T: FractureModel>(&mut self) -> Option<&mut T> {
        self.fracture_models
            .iter_mut()
            .find_map(|model| (model.as_mut() as &mut dyn Any).downcast_mut::<T>())
    }

    /// Total kinetic energy of the dynamic bodies, J.
    pub fn kinetic_energy(&self) -> f64 {
        kinetic_energy(&self.bodies)
    }

    /// Total gravitational potential energy of the dynamic bodies, `-sum m g . x`, J.
    pub fn potential_energy(&self) -> f64 {
        potential_energy(&self.bodies, self.settings.gravity)
    }

    /// Wakes the body at `dense` with its island if it sleeps (a quarantine stays).
    fn touch_sleeper(&mut self, dense: usize) {
        let motion = self.bodies.motion()[dense];
        if self.bodies.kinds()[dense] == BodyKind::Dynamic && !motion.is_awake() && !motion.is_quarantined() {
            let woken = wake_island(&mut self.bodies, motion.island);
            self.remember_woken(&woken);
        }
    }

    /// Wakes the body at `dense` (with its island, if it slept) and lifts a quarantine.
    fn touch(&mut self, dense: usize) {
        if self.bodies.kinds()[dense] != BodyKind::Dynamic {
            return;
        }
        let motion = self.bodies.motion()[dense];
        if !motion.is_awake() && !motion.is_quarantined() {
            let woken = wake_island(&mut self.bodies, motion.island);
            self.remember_woken(&woken);
        }
        self.bodies.update_motion(|motion| {
            motion[dense].flags = BodyMotion::AWAKE;
            motion[dense].resting_time = 0.0;
        });
        // A body woken or released within a step (a fracture model's impulse) can be put back
        // where it was woken, should it go non-finite.
        self.remember_woken(&[dense]);
    }
}
