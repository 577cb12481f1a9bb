//! Rigid-body state, mass properties and time evolution for shatter.
//!
//! What this crate is for:
//! - the plain-data state of a body ([`RigidState`]: centre-of-mass position, orientation, linear
//!   and angular velocity in world frame) and its mass properties in the principal frame
//!   ([`MassProperties`], with infinite mass for static and kinematic bodies);
//! - kinetic energy and linear and angular momentum in world frame;
//! - the pose update of one step ([`integrate()`], [`integrate_batch`]): a second-order symplectic
//!   orientation update that conserves angular momentum exactly, followed by the energy fix of
//!   Su, Schroeder and Fedkiw 2009 section 2 ([`apply_energy_fix`] on its own), so that a body
//!   spinning at one step per 30 Hz frame keeps both its energy and its angular momentum;
//! - impulses on pairs of bodies and the clamp of Su 2009 section 3.2 ([`clamp_pair_impulse`]) that
//!   keeps collisions and contacts from adding kinetic energy;
//! - [`parallel::join`], the one way the crates above this one put two pieces of a step side by
//!   side on the rayon pool (the thread that waits stays awake).
//!
//! What it is not: it knows no geometry, no contacts and no world. Every function here is a pure
//! function over plain data; the engine calls them from its step.
//!
//! Units are SI throughout; vectors are world frame unless a name says `body`.

pub mod batch;
pub mod energy_fix;
pub mod error;
pub mod free_rotation;
pub mod impulse;
pub mod integrate;
pub mod lanes;
pub mod mass;
pub mod parallel;
pub mod prefetch;
pub mod principal_axes;
pub mod random;
pub mod state;
pub mod trig;

pub use batch::{BatchError, EnergyFixTally, Kernel, integrate_batch, integrate_batch_with};
pub use energy_fix::{EnergyFixOutcome, EnergyFixSettings, FixAxis};
pub use error::IntegratorError;
pub use free_rotation::OrientationScheme;
pub use impulse::{ClampBody, ClampVerdict, ImpulseClamp, PairImpulse, apply_impulse, clamp_pair_impulse};
pub use integrate::{IntegrationSettings, apply_energy_fix, integrate};
pub use mass::MassProperties;
pub use principal_axes::{PrincipalAxes, principal_axes};
pub use random::SplitMix64;
pub use state::{BodyKind, RigidState};
