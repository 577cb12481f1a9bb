//! "Prescoring all of space" (Su, Schroeder and Fedkiw 2009, section 4): one fracture pattern,
//! made once, aligned at run time on the point and direction of each impact, scaled to enclose
//! the body, and intersected with the body's level set; every connected piece of every region
//! becomes a fragment.
//!
//! - [`FracturePattern`]: regions of the unit box, each with a level set; generators
//!   ([`FracturePattern::radial`], [`FracturePattern::spiral`], [`FracturePattern::uniform`],
//!   [`FracturePattern::slices`], [`FracturePattern::from_meshes`]) and a file format ([`FracturePattern::save`]).
//! - [`Placement`] and [`Alignment`]: the pattern on an impact, the paper's no-interpolation
//!   overlay by default.
//! - [`shatter`]: one fracture event on a level-set body, returning fragment bodies that carry
//!   the parent's mass and momentum (through `crate::fragments`).
//! - [`PrescoredFracture`]: the world's fracture model, with per-body thresholds.

mod candidates;
mod cutter;
mod file;
mod generators;
mod intersect;
mod model;
mod pattern;
mod placement;
mod power;
pub mod scenes;
mod shatter;

pub use generators::{BOX_CENTRE, RadialPattern, SpiralPattern, SpokeLayout};
pub use intersect::{Debris, lattice_integrals};
pub use model::{FractureEvent, PrescoredFracture, PrescoredSettings, shape_lattice};
pub use pattern::FracturePattern;
pub use placement::{Alignment, Placement};
pub use shatter::{Parent, ShatterSettings, Shattered, shatter};
