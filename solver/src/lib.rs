//! The velocity-level constraint solver of shatter.
//!
//! This crate will hold constraint rows with Jacobians, bounds and per-row softness (CFM and ERP,
//! with the Baumgarte bias), the projected Gauss-Seidel LCP solver with warm starting, contacts with
//! Coulomb friction and joints. It knows nothing of geometry or of the world that owns the bodies.
//!
//! Not yet implemented: the crate holds only its documentation for now.
