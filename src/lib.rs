//! shatter: a rigid-body physics engine in which fracture is first-class.
//!
//! This facade re-exports the engine crates, holds the scene library shared by tests, benches,
//! examples and the `shatter` command-line tool, and the reports the tool writes.

pub use shatter_collision as collision;
pub use shatter_engine as engine;
pub use shatter_fracture as fracture;
pub use shatter_integrators as integrators;
pub use shatter_solver as solver;

pub mod export;
pub mod recorder;
pub mod scene_file;
pub mod scene_world;
pub mod scenes;
pub mod spin_drift;
