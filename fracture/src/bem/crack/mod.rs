//! Explicit crack tracking on the surface mesh (Zhu 2015 section 6): cracks open at surface
//! vertices where the Rankine criterion holds and grow into the material as thin slots whose
//! fronts move with the stress, while the surface stays a closed, valid triangle mesh.
//!
//! - [`mesh`]: the editable surface, its crack lines and node flags;
//! - [`validate`](mod@validate): everything a valid crack mesh satisfies, checked with exact predicates;
//! - [`check`]: the test each local change passes before it is committed;
//! - [`grid`]: the triangles by grid cell, so those checks look only near the change;
//! - [`ops`] and [`improve`](mod@improve): split, collapse and flip with the crack-node rules of section 6.4,
//!   and feature-preserving smoothing;
//! - [`initiate`](mod@initiate): where cracks start (Algorithm 2) under two Rankine thresholds;
//! - [`open`]: opening a crack at a vertex (Fig. 9 A1);
//! - [`propagate`]: moving the fronts (Algorithm 3, eq. 9), out of the [`region`] each crack
//!   has cut in its plane;
//! - [`extend`]: growing a line at its ends (Fig. 10);
//! - [`through`](mod@through): cutting the ligament once a front has reached the far surface
//!   (Fig. 13);
//! - [`breakout`]: cutting it over a run of the front that has reached the surface while the
//!   rest runs on (Fig. 13, pair by pair);
//! - [`loops`]: a line whose ends meet round the body closing into a loop (Fig. 12), and a
//!   loop cut through the ligament it encircles;
//! - [`tip`]: the stress a crack's own tip adds ahead of its front, by superposition on the
//!   uncracked body's stress;
//! - [`track`]: one sub-step of all of it;
//! - [`widen`]: the surface the cracked body's stress is solved on, slots widened;
//! - [`event`]: a whole fracture event, from the stress solve to the pieces;
//! - [`pieces`](mod@pieces): the closed pieces the surface has fallen into, as fragments;
//! - [`barrier`] and [`separate`](mod@separate): the pieces the cracks cut the body into, found on
//!   a grid of its material when the surface's own cuts leave it whole.
//!
//! Everything is in the body's material frame, in metres.

pub mod barrier;
pub mod breakout;
pub mod check;
pub mod event;
pub mod extend;
pub mod grid;
pub mod improve;
pub mod initiate;
pub mod loops;
pub mod mesh;
pub mod open;
pub mod ops;
pub mod pieces;
pub mod propagate;
pub mod region;
pub mod separate;
pub mod through;
pub mod tip;
pub mod track;
pub mod validate;
pub mod widen;

#[cfg(test)]
mod tests;

pub use event::{EventOutcome, EventReport, EventSettings, LoadsOn, fracture_event};
pub use improve::{RemeshCounts, RemeshSettings, improve, near_cracks};
pub use initiate::{Candidate, Rankine, candidates, initiate};
pub use loops::{close_loop, cut_loop, ends_meet, loop_width};
pub use mesh::{CrackLine, CrackMesh};
pub use open::{Opening, Refusal, open_crack};
pub use pieces::{fragment_bodies, pieces};
pub use propagate::{FrontSettings, FrontStep, advance_fronts};
pub use separate::{Separation, separate};
pub use through::cut_through;
pub use tip::{TipField, TipNode};
pub use track::{SubStep, TrackSettings, any_active, substep};
pub use validate::{AngleBounds, MeshCheck, MeshFault, validate};
pub use widen::widened_surface;
