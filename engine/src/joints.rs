//! Joints: constraints between two bodies (or a body and the world), their store, and the
//! impulses the solve gave their rows, as fracture models read them.
//!
//! A joint is described in world terms at creation ([`JointDesc`]: an anchor point and, for a
//! hinge, an axis, both world frame at the bodies' current poses) and kept in body terms: in each
//! body's frame, the anchor and a joint frame whose x axis is the hinge axis (the solver's
//! convention), so it moves with the bodies. At creation the two joint frames coincide in the
//! world, which is the state a fixed joint holds. Joints live behind generational [`JointId`]s like bodies; removing a body
//! removes its joints.

use glam::{DQuat, DVec3};
use shatter_solver::Softness;
use smallvec::SmallVec;

use crate::handle::{BodyId, JointId, SlotTable};

/// What a joint holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// Ball and socket: the anchor points of the two bodies coincide (3 rows).
    Ball,
    /// Weld: anchors coincide and the relative orientation stays as it was at creation (6 rows).
    Fixed,
    /// Hinge: anchors coincide and the bodies turn only about `axis` (5 rows).
    Hinge {
        /// The hinge axis, world frame at creation; normalized by the world.
        axis: DVec3,
    },
}

/// A joint to add with [`crate::World::add_joint`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointDesc {
    /// The first body; must be live.
    pub body_a: BodyId,
    /// The second body, or `None` to attach body A to the world at the anchor.
    pub body_b: Option<BodyId>,
    /// What the joint holds.
    pub kind: JointKind,
    /// The point where the bodies are joined, world frame, m (at the bodies' current poses).
    pub anchor: DVec3,
    /// Softness of the rows that hold the anchors together (N/m for a spring).
    pub softness: Softness,
    /// Softness of the rows that hold the orientation (N m/rad for a spring; hinge and fixed).
    pub angular_softness: Softness,
    /// Impulse above which the joint breaks, N s: the norm of the linear impulse its rows carried
    /// in one step (the angular impulse, N m s, for a joint without linear rows). `None`:
    /// unbreakable.
    pub breaking_impulse: Option<f64>,
}

/// The default joint softness: rigid, removing a fifth of the error per step (ODE's default ERP).
pub const DEFAULT_JOINT_SOFTNESS: Softness = Softness::rigid(0.2);

impl JointDesc {
    /// A rigid joint of `kind` between `body_a` and `body_b` (or the world) at world point `anchor`,
    /// with [`DEFAULT_JOINT_SOFTNESS`].
    pub fn new(kind: JointKind, body_a: BodyId, body_b: Option<BodyId>, anchor: DVec3) -> Self {
        Self {
            body_a,
            body_b,
            kind,
            anchor,
            softness: DEFAULT_JOINT_SOFTNESS,
            angular_softness: DEFAULT_JOINT_SOFTNESS,
            breaking_impulse: None,
        }
    }

    /// The same joint, breaking when one step's impulse exceeds `impulse` (N s; see
    /// [`JointDesc::breaking_impulse`]).
    pub fn with_breaking_impulse(mut self, impulse: f64) -> Self {
        self.breaking_impulse = Some(impulse);
        self
    }

    /// The same joint with `softness` for its point rows and `angular` for its angular rows.
    pub fn with_softness(mut self, softness: Softness, angular: Softness) -> Self {
        self.softness = softness;
        self.angular_softness = angular;
        self
    }
}

/// A joint as stored: in body terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Joint {
    /// Its handle.
    pub id: JointId,
    /// The first body.
    pub body_a: BodyId,
    /// The second body, `None` for the world.
    pub body_b: Option<BodyId>,
    /// What it holds (a hinge's axis as given, world frame at creation).
    pub kind: JointKind,
    /// Anchor in body A's frame, m.
    pub local_anchor_a: DVec3,
    /// Anchor in body B's frame (world frame for the world), m.
    pub local_anchor_b: DVec3,
    /// Orientation of the joint frame in body A's frame. The joint frame's x axis is the hinge
    /// axis; a fixed joint holds the two joint frames aligned.
    pub frame_a: DQuat,
    /// Orientation of the joint frame in body B's frame (world frame for the world). At creation
    /// both joint frames have the same world orientation: `q_a frame_a = q_b frame_b`.
    pub frame_b: DQuat,
    /// Softness of the point rows.
    pub softness: Softness,
    /// Softness of the angular rows.
    pub angular_softness: Softness,
    /// Where the next solve starts each row: the last solve's impulses before its shock pass
    /// ([`shatter_solver::Row::warm`]), N s or N m s per row. The impulses it applied are in the
    /// step's [`SolvedJoint`] rows.
    pub impulses: [f64; 6],
    /// Impulse above which the joint breaks, N s (see [`JointDesc::breaking_impulse`]).
    pub breaking_impulse: Option<f64>,
}

/// One row of a joint after the solve: what a fracture model needs to judge it (Li 2018 section
/// 3: the impulse `lambda`, and the ERP and CFM from which the row's stiffness and stored energy
/// `E = 1/2 h^-2 lambda^2 C` follow).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointRowImpulse {
    /// Jacobian of the row: linear and angular parts for body A, then for body B, world frame.
    pub jacobian: [DVec3; 4],
    /// The row's impulse this step, N s (N m s for angular rows).
    pub lambda: f64,
    /// Error reduction parameter of the row, in (0, 1].
    pub erp: f64,
    /// Constraint force mixing of the row, >= 0.
    pub cfm: f64,
}

/// A joint as the fracture stage sees it after the solve.
#[derive(Clone, Debug, PartialEq)]
pub struct SolvedJoint {
    /// Its handle.
    pub id: JointId,
    /// The first body.
    pub body_a: BodyId,
    /// The second body, `None` for the world.
    pub body_b: Option<BodyId>,
    /// Body A's anchor this step, world frame, m.
    pub anchor_a: DVec3,
    /// Body B's anchor this step, world frame, m.
    pub anchor_b: DVec3,
    /// Its rows with their impulses.
    pub rows: SmallVec<[JointRowImpulse; 6]>,
}

impl SolvedJoint {
    /// The generalized impulse the joint gave body A this step: linear (N s) and angular about
    /// A's centre of mass (N m s), `J_a^T lambda` summed over rows.
    pub fn impulse_on_a(&self) -> (DVec3, DVec3) {
        self.rows.iter().fold((DVec3::ZERO, DVec3::ZERO), |(l, a), row| {
            (l + row.jacobian[0] * row.lambda, a + row.jacobian[1] * row.lambda)
        })
    }
}

/// Every joint of a world, dense, behind generational handles.
#[derive(Clone, Debug, Default)]
pub struct JointStore {
    slots: SlotTable,
    joints: Vec<Joint>,
}

impl JointStore {
    /// Number of joints.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The joints, dense order.
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    /// The pairs of bodies a joint holds together, as `(low, high)` handle bits, sorted and
    /// without repeats. The broad phase skips them: a joint's bodies meet at the joint by design,
    /// and contacts there fight the joint rows (a hanging chain of 20 capsules gained energy every
    /// step from its links' speculative contacts and flew apart). Connected bodies not colliding
    /// is also the default of ODE and Box2D.
    pub fn connected_pairs(&self) -> Vec<(u64, u64)> {
        let mut pairs: Vec<(u64, u64)> = self
            .joints
            .iter()
            .filter_map(|joint| {
                let (a, b) = (joint.body_a.to_bits(), joint.body_b?.to_bits());
                Some((a.min(b), a.max(b)))
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// Joint `id`, if live.
    pub fn get(&self, id: JointId) -> Option<&Joint> {
        self.slots.dense(id.index, id.generation).map(|i| &self.joints[i])
    }

    pub(crate) fn joints_mut(&mut self) -> &mut [Joint] {
        &mut self.joints
    }

    /// Stores `joint` (its id is overwritten) and returns the id.
    pub(crate) fn insert(&mut self, mut joint: Joint) -> JointId {
        let (index, generation) = self.slots.allocate(self.joints.len());
        joint.id = JointId { index, generation };
        self.joints.push(joint);
        joint.id
    }

    /// Removes joint `id`; `None` when stale.
    pub(crate) fn remove(&mut self, id: JointId) -> Option<Joint> {
        let dense = self.slots.dense(id.index, id.generation)?;
        let joint = self.joints.swap_remove(dense);
        self.slots.release(id.index);
        if let Some(moved) = self.joints.get(dense) {
            self.slots.relocate(moved.id.index, dense);
        }
        Some(joint)
    }

    /// The joints attached to body `body`, in dense order.
    pub(crate) fn attached_to(&self, body: BodyId) -> Vec<JointId> {
        self.joints
            .iter()
            .filter(|j| j.body_a == body || j.body_b == Some(body))
            .map(|j| j.id)
            .collect()
    }
}

impl crate::World {
    /// Adds a joint; fails, changing nothing, on a stale body, a joint of a body with itself, a
    /// joint with no dynamic body, or a non-finite anchor or bad hinge axis. Wakes the bodies.
    pub fn add_joint(&mut self, desc: JointDesc) -> Result<JointId, crate::EngineError> {
        use crate::EngineError;
        use shatter_integrators::BodyKind;
        let dense_a = self.bodies.dense_index(desc.body_a)?;
        let dense_b = desc.body_b.map(|b| self.bodies.dense_index(b)).transpose()?;
        if desc.body_b == Some(desc.body_a) {
            return Err(EngineError::description(format!(
                "a joint needs two different bodies; {} was given twice",
                desc.body_a
            )));
        }
        let dynamic = |dense: Option<usize>| dense.is_some_and(|i| self.bodies.kinds()[i] == BodyKind::Dynamic);
        if !dynamic(Some(dense_a)) && !dynamic(dense_b) {
            return Err(EngineError::description(format!(
                "a joint needs at least one dynamic body; {} and {} cannot move",
                desc.body_a,
                desc.body_b.map_or("the world".to_string(), |b| b.to_string())
            )));
        }
        crate::error::check_finite3("joint anchor (m)", desc.anchor)?;
        if let Some(impulse) = desc.breaking_impulse
            && !(impulse.is_finite() && impulse > 0.0)
        {
            return Err(EngineError::invalid(
                "joint breaking impulse",
                impulse,
                "a positive finite impulse in N s",
            ));
        }
        for softness in [desc.softness, desc.angular_softness] {
            // The effective mass only matters to the frequency form; any positive one checks the rest.
            softness.erp_cfm(1.0 / 60.0, 1.0).map_err(|error| EngineError::Solver {
                message: format!("joint softness: {error}"),
            })?;
        }
        // The joint frame in world frame: x along the hinge axis (identity for other kinds).
        let joint_frame = match desc.kind {
            JointKind::Hinge { axis } => {
                let length = axis.length();
                if !(length.is_finite() && length > 0.0) {
                    return Err(EngineError::invalid("hinge axis", axis, "a non-zero finite vector"));
                }
                DQuat::from_rotation_arc(DVec3::X, axis / length)
            }
            _ => DQuat::IDENTITY,
        };
        let state_a = self.bodies.states()[dense_a];
        let (position_b, orientation_b) = match dense_b {
            Some(i) => (self.bodies.states()[i].position, self.bodies.states()[i].orientation),
            None => (DVec3::ZERO, DQuat::IDENTITY),
        };
        let inverse_a = state_a.orientation.inverse();
        let inverse_b = orientation_b.inverse();
        let joint = Joint {
            id: JointId {
                index: 0,
                generation: 0,
            },
            body_a: desc.body_a,
            body_b: desc.body_b,
            kind: desc.kind,
            local_anchor_a: inverse_a * (desc.anchor - state_a.position),
            local_anchor_b: inverse_b * (desc.anchor - position_b),
            frame_a: (inverse_a * joint_frame).normalize(),
            frame_b: (inverse_b * joint_frame).normalize(),
            softness: desc.softness,
            angular_softness: desc.angular_softness,
            impulses: [0.0; 6],
            breaking_impulse: desc.breaking_impulse,
        };
        let id = self.joints.insert(joint);
        self.wake(desc.body_a)?;
        if let Some(b) = desc.body_b {
            self.wake(b)?;
        }
        Ok(id)
    }

    /// Removes joint `id` and wakes its bodies; fails naming a stale handle.
    pub fn remove_joint(&mut self, id: JointId) -> Result<(), crate::EngineError> {
        let joint = self.joints.remove(id).ok_or(crate::EngineError::StaleJoint { id })?;
        for body in [Some(joint.body_a), joint.body_b].into_iter().flatten() {
            // Bodies of a live joint are live: removing a body removes its joints.
            self.wake(body)?;
        }
        Ok(())
    }

    /// Joint `id`; fails naming a stale handle.
    pub fn joint(&self, id: JointId) -> Result<&Joint, crate::EngineError> {
        self.joints.get(id).ok_or(crate::EngineError::StaleJoint { id })
    }
}
