//! The stages of the step, one file each, in the order [`crate::Stage::ALL`] runs them. Each is
//! a function over the stores it needs; `step.rs` calls them in order.

pub(crate) mod broad_phase;
pub(crate) mod collide;
pub(crate) mod collision_pass;
pub(crate) mod forces;
pub(crate) mod fracture;
pub(crate) mod integrate;
pub(crate) mod island_rows;
pub(crate) mod joint_positions;
pub(crate) mod patches;
pub(crate) mod sleep;
pub(crate) mod solve;
pub(crate) mod solve_islands;
pub(crate) mod tension;
pub(crate) mod wake;
