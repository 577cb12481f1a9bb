//! Energized breakable-constraint fracture (Li, Andrews, Jones and Bargteil 2018).
//!
//! An object is prescored into pieces (see [`crate::prescore`]), each piece a rigid body, held
//! together by soft fixed joints. Each row of a joint is a spring (its ERP and CFM, Li eq. 3); when
//! the impulse of any row of a joint exceeds the joint's threshold `epsilon` in a step (section
//! 3.5), the joint breaks, and the elastic energy its springs held (`E`, [`energy`]) comes back as
//! kinetic energy: `alpha E`, by impulses at the joint ([`impulse`]; `alpha` 0 is plain deletion,
//! 1 all of it, above 1 for art direction). Optionally the breaks of a group of joints are
//! rate-limited (at most one per group per `T` s of simulated time, the paper's chain), which also
//! keeps a uniformly loaded chain from breaking at every link at once.
//!
//! [`EnergizedFracture`] is the engine's fracture model: register joints with
//! [`EnergizedFracture::add_joint`], add the model to the world, step. It breaks joints in the
//! step's fracture stage, after the solve that produced the impulses and before integration, so
//! the pieces fly apart in the same step. What it did is in [`EnergizedFracture::breaks`] (the
//! last step) and the step's `StepReport` (`broken_joints`, `energy_injected_by_fracture`).
//!
//! The joints it watches must not also carry the engine's own `breaking_impulse` (the engine
//! would delete them in the solve stage, before the model sees their impulses): the prescoring
//! helpers make them unbreakable to the engine.

pub mod energy;
mod glue;
pub mod impulse;
mod rate;
pub mod scenes;

use glam::{DMat3, DVec3};
use hashbrown::HashMap;
use shatter_engine::{BodyId, FractureContext, FractureModel, JointId, SolvedJoint};
use shatter_integrators::{BodyKind, SplitMix64};
use smallvec::SmallVec;

pub use energy::{joint_energy, row_energy, row_stiffness};
pub use glue::{Glue, glue};
pub use impulse::{Kick, Kicks, PivotBody, Reinjection, TENSION_ONLY_ARM};

use crate::error::FractureError;
use rate::{Candidate, choose};

/// How a model gives stored energy back, and how often a group may break.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergizedSettings {
    /// Fraction of a broken joint's stored energy given back as kinetic energy, >= 0: 0 deletes
    /// the joint and nothing else, 1 gives all of it back (the physical range is [0, 1]; more is
    /// allowed for art direction).
    pub alpha: f64,
    /// The impulses that carry it.
    pub reinjection: Reinjection,
    /// Shortest time between two breaks of one joint group, s (>= 0; 0: no limit). The paper's
    /// chain breaks at most once per 0.3 s.
    pub group_interval: f64,
    /// Seed of the directions drawn where the physics leaves them free (pure tension).
    pub seed: u64,
}

impl Default for EnergizedSettings {
    fn default() -> Self {
        Self {
            alpha: 1.0,
            reinjection: Reinjection::PerBody,
            group_interval: 0.0,
            seed: 0,
        }
    }
}

impl EnergizedSettings {
    /// Checks the settings; errors name the bad value.
    pub fn validate(&self) -> Result<(), FractureError> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(FractureError::invalid("alpha", self.alpha, "a finite number >= 0"));
        }
        if !(self.group_interval.is_finite() && self.group_interval >= 0.0) {
            return Err(FractureError::invalid(
                "group interval (s)",
                self.group_interval,
                "a finite time >= 0",
            ));
        }
        Ok(())
    }
}

/// How one watched joint breaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breakable {
    /// The threshold `epsilon`: the joint breaks when any of its rows carries an impulse of larger
    /// magnitude in one step, N s (N m s for angular rows). > 0.
    pub threshold: f64,
    /// The joint's group for the rate limit, if any.
    pub group: Option<u32>,
}

impl Breakable {
    /// A joint breaking above `threshold` (N s), in no group.
    pub fn new(threshold: f64) -> Self {
        Self { threshold, group: None }
    }

    /// The same, in rate-limit group `group`.
    pub fn in_group(mut self, group: u32) -> Self {
        self.group = Some(group);
        self
    }

    fn validate(&self) -> Result<(), FractureError> {
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            return Err(FractureError::invalid(
                "breaking threshold (N s)",
                self.threshold,
                "a positive finite impulse",
            ));
        }
        Ok(())
    }
}

/// One impulse a break applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakImpulse {
    /// The body it pushed.
    pub body: BodyId,
    /// The impulse, N s, world frame.
    pub impulse: DVec3,
    /// Where it acted, world frame, m.
    pub point: DVec3,
    /// The force the joint had applied to this body over the step, `J^T lambda / h`, N.
    pub joint_force: DVec3,
    /// The torque the joint had applied about the body's centre of mass, N m.
    pub joint_torque: DVec3,
}

/// One joint the model broke.
#[derive(Clone, Debug, PartialEq)]
pub struct EnergizedBreak {
    /// The joint (now stale).
    pub joint: JointId,
    /// Its bodies (`None`: the world).
    pub bodies: (BodyId, Option<BodyId>),
    /// Simulated time at the start of the step it broke in, s.
    pub time: f64,
    /// Largest row impulse magnitude over the threshold (> 1).
    pub overload: f64,
    /// Energy its springs held, `E`, J.
    pub stored_energy: f64,
    /// Energy the impulses gave back, `1/2 dv^T M dv`, J: `alpha E` unless no side could move.
    pub injected_energy: f64,
    /// The cross term `v^T M dv` the paper leaves out, J: the kinetic energy changed by this much
    /// more because the bodies were already moving.
    pub cross_term: f64,
    /// Whether a direction was drawn from the seeded stream (pure tension or compression).
    pub drawn_direction: bool,
    /// The impulses, one per dynamic body.
    pub impulses: SmallVec<[BreakImpulse; 2]>,
}

/// The energized fracture model. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct EnergizedFracture {
    settings: EnergizedSettings,
    joints: HashMap<JointId, Breakable>,
    /// Start time of the step of each group's last break, s.
    last_break: HashMap<u32, f64>,
    breaks: Vec<EnergizedBreak>,
}

impl EnergizedFracture {
    /// A model with `settings`, watching no joint yet; fails naming a bad setting.
    pub fn try_new(settings: EnergizedSettings) -> Result<Self, FractureError> {
        settings.validate()?;
        Ok(Self {
            settings,
            ..Self::default()
        })
    }

    /// The settings.
    pub fn settings(&self) -> &EnergizedSettings {
        &self.settings
    }

    /// Changes the settings (between steps); fails, changing nothing, naming a bad one.
    pub fn set_settings(&mut self, settings: EnergizedSettings) -> Result<(), FractureError> {
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// Watches `joint`: it breaks as `breakable` says. Watching it again replaces the old rule.
    /// Fails, changing nothing, on a threshold that is not positive and finite.
    pub fn add_joint(&mut self, joint: JointId, breakable: Breakable) -> Result<(), FractureError> {
        breakable.validate()?;
        self.joints.insert(joint, breakable);
        Ok(())
    }

    /// Changes the threshold of a watched joint, N s; fails, changing nothing, on an unwatched
    /// joint or a bad threshold.
    pub fn set_threshold(&mut self, joint: JointId, threshold: f64) -> Result<(), FractureError> {
        let Some(rule) = self.joints.get_mut(&joint) else {
            return Err(FractureError::input(format!(
                "{joint} is not watched by the energized model"
            )));
        };
        let changed = Breakable { threshold, ..*rule };
        changed.validate()?;
        *rule = changed;
        Ok(())
    }

    /// The rule of `joint`, if watched.
    pub fn joint(&self, joint: JointId) -> Option<&Breakable> {
        self.joints.get(&joint)
    }

    /// Number of watched joints (broken ones are forgotten).
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }

    /// The joints broken in the last step, in joint-store order.
    pub fn breaks(&self) -> &[EnergizedBreak] {
        &self.breaks
    }

    /// What the model sees of one side of `joint` (`side` 0 for A, 1 for B): mass, pivot, and the
    /// force and torque the joint applied over the step.
    fn side(context: &FractureContext<'_>, joint: &SolvedJoint, side: usize) -> Result<PivotBody, String> {
        let (body, pivot) = match side {
            0 => (Some(joint.body_a), joint.anchor_a),
            _ => (joint.body_b, joint.anchor_b),
        };
        let (linear, angular) = joint.rows.iter().fold((DVec3::ZERO, DVec3::ZERO), |(l, a), row| {
            (
                l + row.jacobian[2 * side] * row.lambda,
                a + row.jacobian[2 * side + 1] * row.lambda,
            )
        });
        let mut pivot_body = PivotBody {
            inverse_mass: 0.0,
            inverse_inertia: DMat3::ZERO,
            centre: pivot,
            pivot,
            force: linear / context.dt(),
            torque: angular / context.dt(),
            linear_velocity: DVec3::ZERO,
            angular_velocity: DVec3::ZERO,
        };
        if let Some(id) = body {
            let view = context.body(id).map_err(|e| e.to_string())?;
            pivot_body.centre = view.state.position;
            if view.kind == BodyKind::Dynamic && !view.mass.is_infinite() {
                pivot_body.inverse_mass = view.mass.inverse_mass();
                pivot_body.inverse_inertia = view.mass.inverse_inertia_world(view.state.orientation);
                pivot_body.linear_velocity = view.state.linear_velocity;
                pivot_body.angular_velocity = view.state.angular_velocity();
            }
        }
        Ok(pivot_body)
    }
}

impl FractureModel for EnergizedFracture {
    fn name(&self) -> &str {
        "energized"
    }

    fn fracture(&mut self, context: &mut FractureContext<'_>) -> Result<(), String> {
        self.breaks.clear();
        // Joints removed by anyone (a despawned piece, the user) are forgotten.
        let store = context.joint_store();
        self.joints.retain(|id, _| store.get(*id).is_some());
        let candidates: Vec<Candidate> = context
            .joints()
            .iter()
            .enumerate()
            .filter_map(|(index, joint)| {
                let rule = self.joints.get(&joint.id)?;
                let largest = joint.rows.iter().map(|row| row.lambda.abs()).fold(0.0, f64::max);
                let overload = largest / rule.threshold;
                (overload > 1.0).then_some(Candidate {
                    index,
                    overload,
                    group: rule.group,
                })
            })
            .collect();
        let time = context.time();
        let chosen = choose(&candidates, &mut self.last_break, time, self.settings.group_interval);
        let dt = context.dt();
        for candidate in chosen {
            let joint = context.joints()[candidate.index].clone();
            let stored_energy = joint_energy(&joint.rows, dt);
            let sides = [Self::side(context, &joint, 0)?, Self::side(context, &joint, 1)?];
            let mut random = SplitMix64::stream(
                self.settings.seed,
                &[
                    u64::from(joint.id.index) << 32 | u64::from(joint.id.generation),
                    time.to_bits(),
                ],
            );
            // alpha = 0 is plain deletion: no impulse at all, not even a zero one.
            let kicks = if self.settings.alpha > 0.0 {
                impulse::kicks(
                    [&sides[0], &sides[1]],
                    self.settings.alpha * stored_energy,
                    self.settings.reinjection,
                    &mut random,
                )
            } else {
                Kicks::default()
            };
            context.break_joint(joint.id).map_err(|e| e.to_string())?;
            let mut impulses = SmallVec::new();
            for kick in &kicks.kicks {
                let body = if kick.side == 0 {
                    Some(joint.body_a)
                } else {
                    joint.body_b
                };
                let Some(body) = body else { continue };
                context
                    .apply_impulse(body, kick.impulse(), kick.point)
                    .map_err(|e| e.to_string())?;
                impulses.push(BreakImpulse {
                    body,
                    impulse: kick.impulse(),
                    point: kick.point,
                    joint_force: sides[kick.side].force,
                    joint_torque: sides[kick.side].torque,
                });
            }
            self.joints.remove(&joint.id);
            self.breaks.push(EnergizedBreak {
                joint: joint.id,
                bodies: (joint.body_a, joint.body_b),
                time,
                overload: candidate.overload,
                stored_energy,
                injected_energy: kicks.energy,
                cross_term: kicks.cross_term,
                drawn_direction: kicks.drawn,
                impulses,
            });
        }
        Ok(())
    }
}
