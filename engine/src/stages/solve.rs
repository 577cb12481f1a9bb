//! Stage `solve_constraints`: contacts and joints as one LCP through the solver crate.
//!
//! Until the projected Gauss-Seidel solver is wired in, this stage reports every joint with its
//! world anchors and no rows, and leaves velocities alone.

use glam::DVec3;

use crate::contacts::PairContacts;
use crate::handle::BodyId;
use crate::joints::SolvedJoint;
use crate::world::World;

/// What the solve did.
#[derive(Clone, Debug, Default)]
pub(crate) struct SolveOutcome {
    /// Rows solved.
    pub(crate) rows: usize,
    /// Iterations run.
    pub(crate) iterations: usize,
    /// Kinetic energy kept out by clamping, J.
    pub(crate) energy_removed: f64,
    /// Every joint with its row impulses.
    pub(crate) joints: Vec<SolvedJoint>,
    /// Pseudo velocities per body (linear m/s, angular rad/s, world frame), for positions only.
    pub(crate) split: Vec<(BodyId, DVec3, DVec3)>,
}

/// Solves the step's contacts and joints.
pub(crate) fn run(world: &mut World, _contacts: &mut [PairContacts], _dt: f64) -> SolveOutcome {
    let joints = world
        .joints
        .joints()
        .iter()
        .map(|joint| {
            let anchor = |body: Option<BodyId>, local: DVec3| match body.and_then(|b| world.bodies.get(b).ok()) {
                Some(view) => view.pose().transform_point(local),
                None => local,
            };
            SolvedJoint {
                id: joint.id,
                body_a: joint.body_a,
                body_b: joint.body_b,
                anchor_a: anchor(Some(joint.body_a), joint.local_anchor_a),
                anchor_b: anchor(joint.body_b, joint.local_anchor_b),
                rows: Default::default(),
            }
        })
        .collect();
    SolveOutcome {
        joints,
        ..SolveOutcome::default()
    }
}
