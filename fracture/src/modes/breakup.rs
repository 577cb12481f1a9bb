//! Fragments of an impact as bodies: each fragment's tets give its exact mass properties and its
//! closed surface, and [`crate::fragments`] makes the body, moving so that the fragments together
//! carry the parent's linear and angular momentum.

use shatter_collision::{Pose, TetMesh};
use shatter_engine::BodyDesc;

use crate::error::FractureError;
use crate::fragments::{FragmentResolution, ParentMomentum, assembly_motion, fragment_desc};
use crate::prescore::TetPieces;

/// A body about to break along its modes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModesParent {
    /// Where the frame of its tet mesh sits in the world.
    pub mesh_pose: Pose,
    /// Its momentum, world frame.
    pub momentum: ParentMomentum,
    /// Its density, kg/m^3.
    pub density: f64,
}

/// A dynamic body per fragment of `fragments` (a partition of `mesh`'s tets), in fragment order,
/// placed where it sits in the parent and moving so that together they carry the parent's
/// momentum ([`assembly_motion`]). Fails naming a bad density or a fragment the level set refuses.
pub fn fragment_bodies(
    mesh: &TetMesh,
    fragments: &TetPieces,
    parent: &ModesParent,
    resolution: FragmentResolution,
) -> Result<Vec<BodyDesc>, FractureError> {
    let props = (0..fragments.count())
        .map(|f| fragments.mass_properties(mesh, f, parent.density))
        .collect::<Result<Vec<_>, _>>()?;
    let motion = assembly_motion(&props, &parent.mesh_pose, &parent.momentum)?;
    (0..fragments.count())
        .map(|f| {
            fragment_desc(
                &fragments.surface(mesh, f),
                fragments.integrals(mesh, f),
                parent.density,
                &parent.mesh_pose,
                resolution,
                Some(&motion),
            )
        })
        .collect()
}
