//! Joint rows: ball (3 rows), hinge (5 rows) and fixed (6 rows) joints, velocity-level Baumgarte.
//!
//! Each body carries a joint frame, given in its body frame (origin at the centre of mass, axes along
//! the principal axes). With world poses `(x_a, q_a)`, `(x_b, q_b)` the frames' world origins are
//! `p_a = x_a + r_a`, `r_a = q_a * anchor_a` (likewise B), and their world rotations are
//! `F_a = q_a * frame_a`, `F_b = q_b * frame_b`.
//!
//! - Point rows (ball, hinge, fixed): for each world axis `e`, `phi = e . (p_a - p_b)` and
//!   `J = (e, r_a x e, -e, -(r_b x e))`, since `d/dt p_a = v_a + w_a x r_a` and
//!   `e . (w x r) = w . (r x e)`.
//! - Fixed angular rows: the error rotation `q_e = F_a F_b^-1` (taken with `w >= 0`) as a rotation
//!   vector `theta`; for each world axis `e`, `phi = e . theta` and `J = (0, e, 0, -e)`, because
//!   turning A by `delta` about `e` changes `theta` by `delta e` to first order.
//! - Hinge angular rows: the hinge axis is the joint frame's x axis ([`HINGE_AXIS`]); with world axes
//!   `a_a = F_a x`, `a_b = F_b x` and `(p, q)` perpendicular to `a_a`, `phi = p . (a_b x a_a)` and
//!   `J = (0, p, 0, -p)` (turning A by `delta` about `p` changes `a_b x a_a` by `delta p` when the
//!   axes are aligned), likewise for `q`. Rotation about `a_a` is free.
//!
//! Every row is bilateral (`(-inf, inf)` bounds) with [`BiasMode::Velocity`]: the velocity solve aims
//! at `J v = -ERP phi / h`. That makes a soft joint the implicit spring of softness.rs, whose
//! impulse and ERP/CFM the energized fracture of Li 2018 reads back; split correction is for
//! contacts. The Jacobians are exact at zero error and first-order approximations away from it,
//! which Baumgarte tolerates (the errors they drive are small).

use glam::{DQuat, DVec3};
use smallvec::SmallVec;

use crate::body::{NO_BODY, SolverBody};
use crate::contact::tangent_basis;
use crate::error::SolverError;
use crate::row::{BiasMode, Jacobian, Row, inverse_effective_mass, row_group_broken};
use crate::softness::Softness;

/// The joint-frame axis a hinge rotates about.
pub const HINGE_AXIS: DVec3 = DVec3::X;

/// How far a quaternion's norm may be from 1.
const UNIT_TOLERANCE: f64 = 1e-6;

/// A position and a rotation: a body's world pose, or a joint frame in a body's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointPose {
    /// Position, m: of the centre of mass in world frame, or of the joint anchor in body frame.
    pub position: DVec3,
    /// Rotation: body frame to world frame, or joint frame to body frame; a unit quaternion.
    pub orientation: DQuat,
}

impl JointPose {
    /// The identity: the world's own pose, or a joint frame at the centre of mass along the body axes.
    pub const IDENTITY: Self = Self {
        position: DVec3::ZERO,
        orientation: DQuat::IDENTITY,
    };

    /// A pose at `position` (m) with `orientation`.
    pub fn new(position: DVec3, orientation: DQuat) -> Self {
        Self { position, orientation }
    }
}

/// One side of a joint: which body, where it is, and where the joint frame sits on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointAnchor {
    /// Index of the body in the solver's body slice, or [`NO_BODY`] for the world.
    pub body: u32,
    /// World pose of the body (centre of mass, principal axes); [`JointPose::IDENTITY`] for the world.
    pub pose: JointPose,
    /// The joint frame in the body frame: anchor point (m) and axes (the hinge turns about its x).
    pub frame: JointPose,
}

/// A joint between two anchors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSpec {
    /// Body A's side.
    pub a: JointAnchor,
    /// Body B's side.
    pub b: JointAnchor,
    /// Softness of the point rows (N/m for a spring).
    pub softness: Softness,
    /// Softness of the angular rows (N m/rad for a spring); unused by ball joints.
    pub angular_softness: Softness,
    /// Impulse above which the joint breaks, N s (see [`row_group_broken`]); `None` for unbreakable.
    pub breaking_impulse: Option<f64>,
}

/// The rows of one joint and its breaking threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct JointRows {
    /// The rows, point rows first (along world x, y, z), then angular rows. Their `lambda` is 0: copy
    /// last step's impulses in to warm-start.
    pub rows: SmallVec<[Row; 6]>,
    /// Impulse above which the joint breaks, N s.
    pub breaking_impulse: Option<f64>,
}

impl JointRows {
    /// Whether `solved` (this joint's rows after a solve, in the same order) carried more than the
    /// breaking impulse; always false for an unbreakable joint.
    pub fn is_broken(&self, solved: &[Row]) -> bool {
        self.breaking_impulse
            .is_some_and(|threshold| row_group_broken(solved, threshold))
    }
}

/// The 3 rows of a ball (point-to-point) joint: the anchors coincide, rotation is free.
pub fn ball_joint_rows(bodies: &[SolverBody], spec: &JointSpec, dt: f64) -> Result<JointRows, SolverError> {
    let mut joint = start(bodies, spec)?;
    push_point_rows(&mut joint, bodies, spec, dt)?;
    Ok(joint)
}

/// The 5 rows of a hinge: the anchors coincide and the joint frames' x axes stay parallel; rotation
/// about that axis is free.
pub fn hinge_joint_rows(bodies: &[SolverBody], spec: &JointSpec, dt: f64) -> Result<JointRows, SolverError> {
    let mut joint = start(bodies, spec)?;
    push_point_rows(&mut joint, bodies, spec, dt)?;
    let axis_a = spec.a.pose.orientation * spec.a.frame.orientation * HINGE_AXIS;
    let axis_b = spec.b.pose.orientation * spec.b.frame.orientation * HINGE_AXIS;
    let misalignment = axis_b.cross(axis_a);
    let (p, q) = tangent_basis(axis_a.normalize());
    for direction in [p, q] {
        push_angular_row(&mut joint, bodies, spec, dt, direction, direction.dot(misalignment))?;
    }
    Ok(joint)
}

/// The 6 rows of a fixed (weld) joint: the joint frames coincide in position and rotation.
pub fn fixed_joint_rows(bodies: &[SolverBody], spec: &JointSpec, dt: f64) -> Result<JointRows, SolverError> {
    let mut joint = start(bodies, spec)?;
    push_point_rows(&mut joint, bodies, spec, dt)?;
    let frame_a = spec.a.pose.orientation * spec.a.frame.orientation;
    let frame_b = spec.b.pose.orientation * spec.b.frame.orientation;
    let mut error = frame_a * frame_b.inverse();
    if error.w < 0.0 {
        error = -error;
    }
    let theta = error.normalize().to_scaled_axis();
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        push_angular_row(&mut joint, bodies, spec, dt, axis, axis.dot(theta))?;
    }
    Ok(joint)
}

/// Validates the spec and returns an empty joint.
fn start(bodies: &[SolverBody], spec: &JointSpec) -> Result<JointRows, SolverError> {
    for (side, anchor) in [("joint body a", &spec.a), ("joint body b", &spec.b)] {
        if anchor.body != NO_BODY && anchor.body as usize >= bodies.len() {
            return Err(SolverError::invalid(
                side,
                anchor.body,
                "an index into the body slice, or NO_BODY",
            ));
        }
        for (name, pose) in [("joint body pose", anchor.pose), ("joint frame", anchor.frame)] {
            let unit = (pose.orientation.length() - 1.0).abs() <= UNIT_TOLERANCE;
            if !(pose.position.is_finite() && pose.orientation.is_finite() && unit) {
                return Err(SolverError::invalid(
                    name,
                    pose,
                    "a finite position and a unit quaternion",
                ));
            }
        }
    }
    if spec.a.body == spec.b.body {
        return Err(SolverError::invalid(
            "joint bodies (a, b)",
            (spec.a.body, spec.b.body),
            "two different bodies, at most one of them NO_BODY",
        ));
    }
    if let Some(threshold) = spec.breaking_impulse
        && !(threshold.is_finite() && threshold >= 0.0)
    {
        return Err(SolverError::invalid(
            "breaking impulse (N s)",
            threshold,
            "a finite number >= 0, or None for an unbreakable joint",
        ));
    }
    Ok(JointRows {
        rows: SmallVec::new(),
        breaking_impulse: spec.breaking_impulse,
    })
}

/// The world arm from a body's centre of mass to its anchor, and the anchor's world position.
fn world_anchor(anchor: &JointAnchor) -> (DVec3, DVec3) {
    let arm = anchor.pose.orientation * anchor.frame.position;
    (arm, anchor.pose.position + arm)
}

/// Pushes the three point rows along world x, y, z.
fn push_point_rows(joint: &mut JointRows, bodies: &[SolverBody], spec: &JointSpec, dt: f64) -> Result<(), SolverError> {
    let (arm_a, point_a) = world_anchor(&spec.a);
    let (arm_b, point_b) = world_anchor(&spec.b);
    let separation = point_a - point_b;
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        let row = Row::new(spec.a.body, spec.b.body, Jacobian::linear(axis, arm_a, arm_b));
        push_row(joint, bodies, dt, row, spec.softness, axis.dot(separation))?;
    }
    Ok(())
}

/// Pushes one angular row about the world `axis` with error `phi` (rad).
fn push_angular_row(
    joint: &mut JointRows,
    bodies: &[SolverBody],
    spec: &JointSpec,
    dt: f64,
    axis: DVec3,
    phi: f64,
) -> Result<(), SolverError> {
    let row = Row::new(spec.a.body, spec.b.body, Jacobian::angular(axis));
    push_row(joint, bodies, dt, row, spec.angular_softness, phi)
}

/// Finishes a row (error, Baumgarte mode, softness at its own effective mass) and pushes it.
fn push_row(
    joint: &mut JointRows,
    bodies: &[SolverBody],
    dt: f64,
    mut row: Row,
    softness: Softness,
    phi: f64,
) -> Result<(), SolverError> {
    row.position_error = phi;
    row.bias_mode = BiasMode::Velocity;
    let effective_mass = 1.0 / inverse_effective_mass(bodies, &row);
    joint
        .rows
        .push(row.with_softness(softness.erp_cfm(dt, effective_mass)?));
    Ok(())
}
