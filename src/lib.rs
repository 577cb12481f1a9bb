//! shatter: a rigid-body physics engine in which fracture is first-class.
//!
//! This facade re-exports the engine crates, holds the scene library shared by tests, benches,
//! examples and the `shatter` command-line tool, and the reports the tool writes. Scene files are
//! read by [`scene_file`], built into worlds by [`scene_world`], run and recorded by [`recorder`]
//! and written for viewers by [`export`].
//!
//! # A game loop
//!
//! Build a world, add a ground and a few boxes, and step it at 30 Hz, one step per frame, reading
//! each body's pose (its centre of mass and principal axes, world frame) and what the step did:
//!
//! ```
//! use shatter::collision::{Collider, Cuboid, HalfSpace, Shape};
//! use shatter::engine::{BodyDesc, World};
//! use glam::DVec3;
//!
//! let mut world = World::new(); // gravity 9.81 m/s^2 down the y axis
//! let ground = Collider::from_shape(Shape::HalfSpace(HalfSpace::ground(0.0)?), 1.0)?;
//! world.add_body(BodyDesc::fixed(ground))?;
//! let half_extents = DVec3::new(0.2, 0.1, 0.1); // m
//! let brick = Collider::from_shape(Shape::Cuboid(Cuboid::try_new(half_extents)?), 0.02)?;
//! let boxes: Vec<_> = (0..3)
//!     .map(|i| {
//!         let position = DVec3::new(0.6 * i as f64, 0.5 + 0.2 * i as f64, 0.0);
//!         world.add_body(BodyDesc::dynamic(brick.clone()).with_density(1900.0).with_position(position))
//!     })
//!     .collect::<Result<_, _>>()?;
//! for _frame in 0..60 {
//!     let report = world.step(1.0 / 30.0)?;
//!     for id in &boxes {
//!         let pose = world.pose(*id)?; // draw the box here
//!         assert!(pose.position.y > 0.0, "nothing falls through the ground");
//!     }
//!     // What the step did: contact points found, kinetic + potential energy (J) at its end.
//!     let (_contacts, _energy) = (report.contacts, report.energy_after());
//!     assert!(report.quarantined.is_empty(), "no state went non-finite");
//! }
//! // After 2 s the boxes have landed and rest on the ground, 0.1 m up.
//! for id in &boxes {
//!     assert!((world.pose(*id)?.position.y - 0.1).abs() < 5e-3);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use shatter_collision as collision;
pub use shatter_engine as engine;
pub use shatter_fracture as fracture;
pub use shatter_integrators as integrators;
pub use shatter_solver as solver;

pub mod bem_run;
pub mod energized_run;
pub mod export;
pub mod modes_precompute;
pub mod modes_run;
pub mod prescored_run;
pub mod recorder;
pub mod scene_file;
pub mod scene_world;
pub mod scenes;
pub mod sph_run;
pub mod spin_drift;
