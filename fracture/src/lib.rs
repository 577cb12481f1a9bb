//! The fracture methods of shatter, over one body store.
//!
//! Each method is a module implementing the engine's `FractureModel`: [`energized`] (breakable
//! constraints whose stored energy returns as motion, Li 2018), [`prescored`] (a fracture
//! pattern aligned at each impact, Su 2009), [`modes`] (fracture modes precomputed on a tet
//! mesh, an impact projected onto them, Sellan 2023) and [`sph`] (SPH stress on tet-bound
//! particles, Rankine cracks that cut their links, 1-to-12 subdivision, Chen 2014). [`bem`]
//! holds the boundary-element stress solver of Zhu 2015; its crack tracking and its
//! `FractureModel` are still to come.
//!
//! Shared by the methods: [`fragments`] (the one place a piece of geometry becomes a body),
//! [`prescore`] (pieces of a tet mesh, and the anchors where they meet), [`impacts`] (the
//! strongest hit of a step, and replaying it) and [`error`]. Random
//! choices come from the integrators' seeded `SplitMix64`.
//!
//! What this crate is not: it never reaches into the solver or the broad phase; it sees a step
//! only through the engine's `FractureContext` and changes the world only through it (or, when
//! a scene is built, through the `World`'s public calls).

pub mod bem;
pub mod energized;
pub mod error;
pub mod fragments;
pub mod impacts;
pub mod modes;
pub mod prescore;
pub mod prescored;
pub mod sph;
pub(crate) mod sums;

pub use error::FractureError;
