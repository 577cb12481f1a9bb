//! The fracture methods of shatter, over one body store.
//!
//! Each method will be a module implementing the engine's `FractureModel`: `energized` (breakable
//! constraints whose stored energy returns as motion, Li 2018), `prescored` (a fracture pattern
//! aligned at the impact, Su 2009), `modes` (precomputed fracture modes, Sellán 2023), `bem`
//! (boundary-element stress with crack tracking, Zhu 2015) and `sph` (SPH stress on tet-bound
//! particles, Chen 2014). Every fragment is made by one module, `fragments`.
//!
//! Not yet implemented: the crate holds only its documentation for now.
