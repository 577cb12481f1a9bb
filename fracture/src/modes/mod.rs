//! Fracture modes (Sellán, Luong, Mattos Da Silva, Ramakrishnan, Yang and Jacobson 2023).

pub mod admm;
pub mod asset;
pub mod breakup;
pub(crate) mod cholesky;
pub(crate) mod dense;
pub mod guesses;
pub mod iccm;
pub mod model;
pub(crate) mod ordering;
pub mod pieces;
pub mod problem;
pub mod rounding;
pub mod runtime;
pub mod scenes;
pub mod solid;
pub(crate) mod sparse;

pub use asset::{ModesAsset, mesh_fingerprint};
pub use breakup::{ModesParent, fragment_bodies};
pub use iccm::{FractureModes, ModeReport, ModeSettings, compute_modes};
pub use model::{ModesFracture, ModesFractureEvent, ModesFractureSettings, ModesShape};
pub use pieces::{PIECE_THRESHOLD, atomic_pieces, mode_pieces};
pub use problem::{Dimension, JumpProblem};
pub use runtime::{Impact, ImpactProjector, Projection, ProjectionSettings};
pub use solid::solid_tets;
