//! Fracture modes (Sellan, Luong, Mattos Da Silva, Ramakrishnan, Yang and Jacobson 2023,
//! "Breaking Good"): a shape's ways of breaking, computed once, and an impact projected onto them
//! at run time.
//!
//! Offline ([`compute_modes`]): on a tet mesh ([`solid_tets`] fills any closed surface), one
//! displacement per tet (scalar or vector, [`Dimension`]) and the group-sparse discontinuity
//! energy over interior faces ([`JumpProblem`], optionally weighted per face). Each mode starts
//! from a Laplacian eigenvector ([`guesses`]) rounded to its best threshold cut ([`rounding`]) and
//! is found by iterated convexification ([`iccm`]), each convex subproblem by accelerated ADMM
//! ([`admm`]) over one sparse Cholesky factor. The pieces a mode cuts are [`mode_pieces`]; the
//! tets every mode keeps together are the atomic pieces ([`atomic_pieces`]).
//!
//! Run time: [`ImpactProjector`] folds the impact's blur and projection into one matrix, so an
//! impact is a small mat-vec and a union-find over atomic pieces ([`runtime`]);
//! [`fragment_bodies`] makes the fragments bodies, and [`ModesFracture`] does all of it inside a
//! world's step. [`ModesAsset`] stores modes and runtime in a versioned binary file.

pub mod admm;
pub(crate) mod anderson;
pub mod asset;
pub mod breakup;
pub(crate) mod cholesky;
pub(crate) mod dense;
pub(crate) mod drift;
pub(crate) mod face_passes;
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
