//! Geometry and contact generation for shatter.
//!
//! This crate will hold every geometric thing the engine and the fracture methods need: analytic
//! shapes, triangle and tet meshes with their readers and validation, signed-distance level sets,
//! surface particles, marching cubes, mass properties from geometry, the broad phase and the narrow
//! phase. It knows nothing of the solver or the world.
//!
//! Not yet implemented: the crate holds only its documentation for now.
