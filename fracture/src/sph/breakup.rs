//! The pieces of a cracked SPH solid as bodies (Chen 2014 section 7): each connected component
//! of the link graph is a fragment, its tets give its exact mass properties, its uncovered
//! faces (outer surface and crack faces) its closed surface, and [`crate::fragments`] makes the
//! body, moving so the fragments together carry the parent's momentum.

use hashbrown::HashMap;
use shatter_collision::TriMesh;
use shatter_engine::BodyDesc;

use super::solid::ParticleSolid;
use crate::error::FractureError;
use crate::fragments::{BreakingParent, FragmentResolution, piece_bodies};

/// A body about to break into the components of its particle solid.
pub type SphParent = BreakingParent;

/// A fragment: its body and its own particle solid (in the parent's particle frame, which the
/// body sits in as `mesh_pose` did), so it can crack again.
#[derive(Clone, Debug)]
pub struct SphFragment {
    /// The body to spawn.
    pub desc: BodyDesc,
    /// Its particles and links.
    pub solid: ParticleSolid,
}

/// The closed surface of particles `members` of `solid`: their faces no link covers, with
/// coincident vertices merged. Fails on an empty set.
pub fn surface_mesh(solid: &ParticleSolid, members: &[usize]) -> Result<TriMesh, FractureError> {
    let mut index: HashMap<[u64; 3], u32> = HashMap::new();
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for &i in members {
        for triangle in solid.surface_triangles(i) {
            triangles.push(triangle.map(|p| {
                *index.entry(p.to_array().map(f64::to_bits)).or_insert_with(|| {
                    vertices.push(p);
                    (vertices.len() - 1) as u32
                })
            }));
        }
    }
    if triangles.is_empty() {
        return Err(FractureError::input("a set of particles with no surface"));
    }
    Ok(TriMesh::try_new(vertices, triangles)?)
}

/// The components of `solid`'s link graph, each as its particles in ascending order.
pub fn pieces(solid: &ParticleSolid) -> Vec<Vec<usize>> {
    let (label, count) = solid.components();
    let mut pieces = vec![Vec::new(); count];
    for (i, l) in label.iter().enumerate() {
        pieces[*l as usize].push(i);
    }
    pieces
}

/// A dynamic body per connected component of `solid`, in component order, placed where it
/// sits in the parent and moving so that together they carry the parent's momentum. Fails
/// naming a bad density or a piece the level set refuses.
pub fn fragment_bodies(
    solid: &ParticleSolid,
    parent: &SphParent,
    resolution: FragmentResolution,
) -> Result<Vec<SphFragment>, FractureError> {
    let pieces = pieces(solid);
    let surfaces = pieces
        .iter()
        .map(|members| Ok((surface_mesh(solid, members)?, solid.integrals(members))))
        .collect::<Result<Vec<_>, FractureError>>()?;
    let descs = piece_bodies(&surfaces, parent, resolution)?;
    Ok(descs
        .into_iter()
        .zip(&pieces)
        .map(|(desc, members)| SphFragment {
            desc,
            solid: solid.subset(members),
        })
        .collect())
}
