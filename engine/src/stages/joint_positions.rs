//! Part of stage `integrate`: after the pose update, the anchors of every rigid joint are brought
//! back together on positions only (non-linear Gauss-Seidel, the position pass of Box2D v2's
//! joints; Cline and Pai 2003, "Post-stabilization for rigid body simulation with contact and
//! constraints").
//!
//! # Why
//!
//! The velocity solve holds each joint's point rows exactly, `J v = -ERP phi / h`, but only to
//! first order in the step: the pose update turns an anchor's arm `r` along the arc, not along
//! the tangent `h w x r` the rows see, so each anchor falls back towards its body's centre by about
//! `h^2 w^2 |r| / 2` per step, and a joint opens by that much for both arms. Baumgarte at ERP 0.2
//! takes back a fifth of the error per step, so the gap settles near five times the step's drift:
//! measured, the bottom joint of a hanging chain of capsules (arms 0.15 m) kicked at 1 m/s and 3
//! m/s opened 3.3 mm and 18 mm at 30 Hz. Projecting after the pose update removes the drift where
//! it is made; measured with it, 0.17 mm and 1.2 mm.
//!
//! # One projection
//!
//! For a joint with world anchors `p_a = x_a + r_a`, `p_b = x_b + r_b` and error `C = p_a - p_b`,
//! a position impulse `P` on A (and `-P` on B) moves the anchors apart by `K P` to first order,
//!
//! ```text
//! K = (1/m_a + 1/m_b) 1 - [r_a]x W_a [r_a]x - [r_b]x W_b [r_b]x,
//! ```
//!
//! (`W` the world inverse inertia, `[r]x` the cross-product matrix), the same effective mass the
//! velocity rows have. `P = -K^-1 C`; body A moves by `P / m_a` and turns by `W_a (r_a x P)` (B
//! likewise with `-P`); velocities are left alone, so the pass adds no kinetic energy, and the pair's
//! centre of mass stays where it was. Gauss-Seidel over the joints, [`JOINT_POSITION_ITERATIONS`]
//! sweeps: each projection is exact to first order, and what is left is second order in the
//! correction or passed on to a neighbour.
//!
//! Only rigid joints (ERP with zero CFM) are projected: a soft joint is a spring whose stretch is
//! its state (and what the energized fracture of Li 2018 reads as stored energy). Only the anchor
//! points are projected; the angular rows of hinges and fixed joints are left to their Baumgarte.
//! Awake dynamic bodies move; static, kinematic, sleeping and quarantined ones are the fixed side.
//!
//! Rejected alternative: split impulses for joints (as contacts have, split.rs) correct the error
//! at the start of the step, before the pose update makes the drift, and pay a second solve.

use glam::{DMat3, DVec3};
use shatter_solver::Softness;

use crate::handle::BodyId;
use crate::joints::Joint;
use crate::stages::integrate::displace;
use crate::store::BodyStore;

/// Gauss-Seidel sweeps over the joints per step. Measured on hanging chains of 10 to 40 capsule
/// links kicked at 3 m/s: the worst gap was 18 mm without the pass, 5.4, 3.1 and 1.2 mm with 1, 2
/// and 4 sweeps.
pub(crate) const JOINT_POSITION_ITERATIONS: usize = 4;

/// One side of a joint as the projection sees it.
struct Side {
    /// Dense index of the body when it moves.
    dense: Option<usize>,
    /// The anchor, world frame, m.
    anchor: DVec3,
    /// From the centre of mass to the anchor, world frame, m.
    arm: DVec3,
    /// 1/kg; zero for a side that does not move.
    inverse_mass: f64,
    /// World inverse inertia, 1/(kg m^2); zero for a side that does not move.
    inverse_inertia: DMat3,
}

impl Side {
    /// Body `body`'s side at `local` anchor (body frame), or the world's at `local` (world frame).
    fn of(bodies: &BodyStore, body: Option<BodyId>, local: DVec3) -> Option<Self> {
        let Some(id) = body else {
            return Some(Self::fixed(local, DVec3::ZERO));
        };
        let dense = bodies.dense_index(id).ok()?;
        let state = &bodies.states()[dense];
        let arm = state.orientation * local;
        let anchor = state.position + arm;
        if !bodies.is_awake_dynamic(dense) {
            return Some(Self::fixed(anchor, arm));
        }
        let mass = &bodies.masses()[dense];
        Some(Self {
            dense: Some(dense),
            anchor,
            arm,
            inverse_mass: mass.inverse_mass(),
            inverse_inertia: mass.inverse_inertia_world(state.orientation),
        })
    }

    fn fixed(anchor: DVec3, arm: DVec3) -> Self {
        Self {
            dense: None,
            anchor,
            arm,
            inverse_mass: 0.0,
            inverse_inertia: DMat3::ZERO,
        }
    }

    /// This side's part of `K`: how far its anchor moves per unit position impulse.
    fn compliance(&self) -> DMat3 {
        let cross = cross_matrix(self.arm);
        DMat3::IDENTITY * self.inverse_mass - cross * self.inverse_inertia * cross
    }
}

/// Whether a joint's point rows are rigid (zero CFM), which is when the pass projects them.
fn is_rigid(joint: &Joint) -> bool {
    matches!(joint.softness, Softness::ErpCfm { cfm, .. } if cfm == 0.0)
}

/// Brings the anchors of every rigid joint of `joints` together by moving the awake dynamic
/// `bodies` (positions and orientations only; see the module docs).
pub(crate) fn run(bodies: &mut BodyStore, joints: &[Joint]) {
    if !joints.iter().any(is_rigid) {
        return;
    }
    for _ in 0..JOINT_POSITION_ITERATIONS {
        for joint in joints.iter().filter(|joint| is_rigid(joint)) {
            let (Some(a), Some(b)) = (
                Side::of(bodies, Some(joint.body_a), joint.local_anchor_a),
                Side::of(bodies, joint.body_b, joint.local_anchor_b),
            ) else {
                continue;
            };
            if a.dense.is_none() && b.dense.is_none() {
                continue;
            }
            let compliance = a.compliance() + b.compliance();
            let impulse = -(compliance.inverse() * (a.anchor - b.anchor));
            if !impulse.is_finite() {
                continue;
            }
            let states = bodies.states_mut();
            for (side, impulse) in [(&a, impulse), (&b, -impulse)] {
                let Some(dense) = side.dense else {
                    continue;
                };
                let turn = side.inverse_inertia * side.arm.cross(impulse);
                displace(&mut states[dense], impulse * side.inverse_mass, turn);
            }
        }
    }
}

/// `[r]x`, the matrix with `[r]x v = r x v`.
fn cross_matrix(r: DVec3) -> DMat3 {
    DMat3::from_cols(
        DVec3::new(0.0, r.z, -r.y),
        DVec3::new(-r.z, 0.0, r.x),
        DVec3::new(r.y, -r.x, 0.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BodyDesc, JointDesc, JointKind, World};
    use glam::DQuat;
    use shatter_collision::{Collider, Cuboid, Shape};

    fn cuboid(half_extents: DVec3) -> Collider {
        Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half_extents).unwrap()), 1.0).unwrap()
    }

    fn gap(world: &World, joint: &Joint) -> f64 {
        let a = world.pose(joint.body_a).unwrap();
        let b = world.pose(joint.body_b.unwrap()).unwrap();
        (a.transform_point(joint.local_anchor_a) - b.transform_point(joint.local_anchor_b)).length()
    }

    #[test]
    fn joint_positions_close_a_gap_without_touching_velocities_or_the_centre_of_mass() {
        let mut world = World::new();
        let boxes = [DVec3::new(0.3, 0.1, 0.2), DVec3::new(0.1, 0.4, 0.1)].map(cuboid);
        let a = world
            .add_body(BodyDesc::dynamic(boxes[0].clone()).with_velocity(DVec3::X, DVec3::new(0.0, 1.0, 2.0)))
            .unwrap();
        let b = world
            .add_body(BodyDesc::dynamic(boxes[1].clone()).with_position(DVec3::new(0.5, 0.6, 0.0)))
            .unwrap();
        world
            .add_joint(JointDesc::new(JointKind::Ball, a, Some(b), DVec3::new(0.3, 0.2, 0.0)))
            .unwrap();
        // Pull B 3 cm off and turn it a little: the joint opens.
        let mut pose = world.pose(b).unwrap();
        pose.position += DVec3::new(0.02, -0.015, 0.015);
        pose.orientation = DQuat::from_rotation_z(0.05) * pose.orientation;
        world.set_pose(b, pose).unwrap();
        let joint = world.joints().joints()[0];
        assert!(gap(&world, &joint) > 0.02);
        let [mass_a, mass_b] = [a, b].map(|id| 1.0 / world.body(id).unwrap().mass.inverse_mass());
        let centre = |world: &World| {
            (world.pose(a).unwrap().position * mass_a + world.pose(b).unwrap().position * mass_b) / (mass_a + mass_b)
        };
        let (before, velocities) = (centre(&world), [a, b].map(|id| world.state(id).unwrap()));
        run(&mut world.bodies, world.joints.joints());
        // Second order per sweep: a 3 cm gap is gone to well under a micrometre in four.
        assert!(gap(&world, &joint) < 1e-7, "gap {}", gap(&world, &joint));
        assert!((centre(&world) - before).length() < 1e-12);
        for (id, old) in [a, b].iter().zip(velocities) {
            let state = world.state(*id).unwrap();
            assert_eq!(state.linear_velocity, old.linear_velocity);
            assert!((state.angular_velocity() - old.angular_velocity()).length() < 1e-12);
        }
    }

    #[test]
    fn joint_positions_leave_soft_joints_stretched() {
        let mut world = World::new();
        let a = world.add_body(BodyDesc::dynamic(cuboid(DVec3::splat(0.1)))).unwrap();
        let spring = Softness::SpringDamper {
            stiffness: 100.0,
            damping: 1.0,
        };
        world
            .add_joint(JointDesc::new(JointKind::Ball, a, None, DVec3::Y * 0.1).with_softness(spring, spring))
            .unwrap();
        let mut pose = world.pose(a).unwrap();
        pose.position = DVec3::NEG_Y * 0.05;
        world.set_pose(a, pose).unwrap();
        run(&mut world.bodies, world.joints.joints());
        assert_eq!(world.pose(a).unwrap().position, DVec3::NEG_Y * 0.05);
    }
}
