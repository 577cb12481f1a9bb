//! The velocity-level constraint solver of shatter.
//!
//! What this crate is for: given the velocities and inverse masses of one island's bodies
//! ([`SolverBody`]) and scalar constraint rows ([`Row`]: Jacobian, impulse bounds, position error,
//! ERP and CFM), [`solve`] runs projected Gauss-Seidel on the velocity-level LCP of Li et al. 2018
//! eq. 1-2 and returns the new velocities, each row's accumulated impulse and the split (pseudo)
//! velocities that correct penetration without adding kinetic energy:
//! - softness in physical terms converted to ERP and CFM in one place ([`Softness`], softness.rs);
//! - warm starting, accumulated-impulse clamping, pyramid friction bounded by the normal impulse
//!   (pgs.rs, which derives the CFM scaling);
//! - the energy clamp of Su, Schroeder and Fedkiw 2009 section 3.2 on every increment of a contact
//!   row (clamp.rs);
//! - split impulses for contacts (split.rs);
//! - the geometric stiffness of joint anchors under tension, and the rotational inertia that keeps
//!   the stiff turning it drives stable at the time step (geometric.rs);
//! - row builders for contacts ([`contact_rows`]) and ball, hinge and fixed joints
//!   ([`ball_joint_rows`], [`hinge_joint_rows`], [`fixed_joint_rows`]), with breaking thresholds
//!   ([`row_group_broken`]) and the stored energy the energized fracture reads ([`Row::stored_energy`]).
//!
//! What it is not: it knows no geometry, no poses beyond what joint builders are handed, and no
//! world. One call solves one island ([`solve_with`]), or several independent islands of one make
//! ([`solve_together`], each getting the bits it gets alone); the engine parallelises across calls.
//! Inside a call the caller's rayon pool is used only where the result cannot depend on it (pgs.rs
//! says where), so results are bit-identical run to run, whatever the thread count and whether the
//! processor has AVX2 (the sweeps run four lanes wide, lanes.rs and wide.rs). Units are SI, vectors
//! world frame.

pub mod body;
mod body_block;
pub mod clamp;
pub mod contact;
pub mod error;
mod free_rows;
pub mod geometric;
mod head;
pub mod joint_block;
pub mod joints;
mod lanes;
mod loads;
pub mod patch;
pub mod pgs;
mod phases;
mod profile;
pub mod row;
pub mod settings;
pub mod shock;
mod shock_block;
mod shock_state;
pub mod softness;
pub mod split;
mod structure;
#[cfg(test)]
mod test_scenes;
pub mod together;
mod twist;
mod warm_choice;
pub mod warm_start;
mod wide;
pub mod workspace;

pub use body::{NO_BODY, SolverBody, SplitVelocity};
pub use clamp::clamp_row_increment;
pub use contact::{ContactPoint, DEFAULT_CONTACT_ERP, contact_rows, push_contact_rows, tangent_basis};
pub use error::SolverError;
pub use geometric::{MAX_STEP_STIFFNESS, anchor_geometric_stiffness, stabilizing_inertia};
pub use joints::{
    HINGE_AXIS, JointAnchor, JointPose, JointRows, JointSpec, ball_joint_rows, fixed_joint_rows, hinge_joint_rows,
};
pub use patch::{ContactPatch, PatchPoint, PatchRows, push_patch_rows};
pub use pgs::{solve, solve_with};
pub use row::{
    BiasMode, Friction, GroupImpulse, Jacobian, Row, group_impulse, inverse_effective_mass, row_group_broken,
};
pub use settings::{SolveReport, SolverSettings};
pub use softness::{RowSoftness, Softness};
pub use together::{IslandSolve, solve_together};
pub use workspace::SolverWorkspace;
