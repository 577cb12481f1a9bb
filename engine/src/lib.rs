//! The shatter world.
//!
//! This crate will hold the body store with generational handles, the `World` that owns every
//! store, the step pipeline (broad phase, collision, forces, constraint solve, fracture,
//! integration, sleep), its `StepReport`, and the `FractureModel` trait through which fracture
//! methods inspect a step and queue structural changes. It never names a fracture method.
//!
//! Not yet implemented: the crate holds only its documentation for now.
