//! The shatter world.
//!
//! What this crate is for: the [`World`] that owns every store (bodies behind generational
//! [`BodyId`]s, joints, the contact cache, fracture models, the command buffer) and advances them
//! by one [`World::step`]: broad phase, collision, forces, constraint solve, fracture,
//! integration, sleep (the [`Stage`]s, in that order), reporting what happened in a
//! [`StepReport`]. Fracture methods plug in through the [`FractureModel`] trait: they read the
//! step's contacts and joint impulses, apply impulses, break joints and queue spawns and despawns
//! (see [`fracture`] for exactly what a hook may touch).
//!
//! What it is not: it holds no geometry code (the collision crate), no solver numerics (the solver
//! crate), no time-integration formulas (the integrators crate) and names no fracture method.
//!
//! Units are SI, vectors world frame unless a name says otherwise, Y up.

mod awake_pool;
pub mod build;
pub mod commands;
pub mod contact_cache;
pub mod contacts;
pub mod desc;
pub mod error;
pub mod fracture;
pub mod handle;
pub mod islands;
pub mod joints;
mod manifold_cache;
pub mod pool_use;
mod quarantine;
pub mod report;
pub mod settings;
pub mod snapshot;
mod stages;
pub mod step;
pub mod store;
pub mod world;

pub use commands::{Command, CommandBuffer, SpawnTicket, Spawned};
pub use contact_cache::{CachedContact, ContactCache, PairCache, WarmStart};
pub use contacts::{ContactPoint, PairContacts, tangent_basis};
pub use desc::{BodyDesc, BodyGeometry, DEFAULT_DENSITY, MassSource, Material};
pub use error::EngineError;
pub use fracture::{FractureContext, FractureModel};
pub use handle::{BodyId, JointId};
pub use joints::{Joint, JointDesc, JointKind, JointRowImpulse, JointStore, SolvedJoint};
pub use pool_use::PoolUse;
pub use report::{FractureFailure, Quarantine, StageReport, StepReport};
pub use settings::{MAX_TIME_STEP, SleepSettings, WorldSettings};
pub use snapshot::fnv1a;
pub use step::Stage;
pub use store::{BodyMotion, BodyRecord, BodyStore, BodyView};
pub use world::World;
