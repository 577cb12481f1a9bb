//! SPH brittle fracture on tet-bound particles with 1-to-12 subdivision (Chen, Xie and Ran
//! 2014).

pub mod kernel;
pub mod material;
pub mod model;
pub mod scenes;
pub mod solid;
pub mod subdivide;

pub use breakup::{SphFragment, SphParent, fragment_bodies, surface_mesh};
pub use event::{CrackReport, CrackSettings, StressField, crack_solid, stress_field};
pub use load::ContactLoad;
pub use material::SphMaterial;
pub use model::{SphFracture, SphFractureEvent, SphFractureSettings, sph_body_desc};
pub use solid::{Link, Particle, ParticleSolid};
pub use stencil::Stencil;
pub use subdivide::{split_tet, subdivide};
pub mod breakup;
pub mod crack;
pub mod elastic;
pub mod event;
pub mod load;
pub mod nodes;
pub mod stencil;
pub mod stress;

#[cfg(test)]
mod tests;
