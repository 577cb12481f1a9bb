//! Fragments of an impact as bodies: each fragment's tets give its exact mass properties and its
//! closed surface, and [`crate::fragments::piece_bodies`] makes the body, moving so that the
//! fragments together carry the parent's linear and angular momentum.

use shatter_collision::TetMesh;
use shatter_engine::BodyDesc;

use crate::error::FractureError;
use crate::fragments::{BreakingParent, FragmentResolution, piece_bodies};
use crate::prescore::TetPieces;

/// A body about to break along its modes.
pub type ModesParent = BreakingParent;

/// A dynamic body per fragment of `fragments` (a partition of `mesh`'s tets), in fragment order,
/// placed where it sits in the parent and moving so that together they carry the parent's
/// momentum. Fails naming a bad density or a fragment the level set refuses.
pub fn fragment_bodies(
    mesh: &TetMesh,
    fragments: &TetPieces,
    parent: &ModesParent,
    resolution: FragmentResolution,
) -> Result<Vec<BodyDesc>, FractureError> {
    let pieces: Vec<_> = (0..fragments.count())
        .map(|f| (fragments.surface(mesh, f), fragments.integrals(mesh, f)))
        .collect();
    piece_bodies(&pieces, parent, resolution)
}
