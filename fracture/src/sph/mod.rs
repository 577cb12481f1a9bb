//! SPH brittle fracture on tet-bound particles with 1-to-12 subdivision (Chen, Xie and Ran
//! 2014).
//!
//! A body is a [`ParticleSolid`]: one particle per tet of its mesh, at the tet's centroid, with
//! the tet's vertices and links to the particles of face-adjacent tets ([`solid`]). An event
//! ([`event`]) turns the contacts of a hard enough hit into stress and the stress into cracks:
//!
//! 1. Load ([`load`]): each contact pushes the surface particles near it into the body, by a
//!    virtual displacement whose size is set by energy (its elastic energy is the kinetic energy
//!    the contacts took out of the impact), not by the rigid solver's penetration.
//! 2. Equilibrium ([`elastic`]): the rest of the body settles where its elastic energy is least,
//!    its tets as linear elements on shared nodes ([`nodes`]: split along cracks, hanging nodes
//!    of split tets tied to their coarse face), held by its own inertia (d'Alembert).
//! 3. Stress ([`stencil`], [`stress`]): the SPH displacement gradient of the paper, corrected so
//!    a linear field's gradient is exact at every particle (the kernel is Wendland's C2,
//!    [`kernel`]), Green's strain and isotropic linear stress.
//! 4. Cracks ([`crack`]): where the largest principal stress exceeds the tensile strength, a
//!    plane normal to it; the particles its crossing links touch are split 1-to-12 first
//!    ([`subdivide()`]), then every link crossing it within the crack radius is cut. A few passes
//!    let cracks grow from their fronts; a piece too small to stand rejoins its neighbour.
//!
//! The components of the link graph are the fragments ([`breakup`]), made bodies through
//! `crate::fragments` with momentum kept; [`SphFracture`] does all of it in a world's step, and
//! fragments can crack again.

pub mod kernel;
pub mod material;
pub mod model;
pub mod scenes;
pub mod solid;
pub mod subdivide;

pub use breakup::{SphFragment, SphParent, fragment_bodies, surface_mesh};
pub use event::{CrackReport, CrackSettings, StressField, crack_solid, stress_field};
pub use load::{ContactLoad, VirtualDepth};
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
