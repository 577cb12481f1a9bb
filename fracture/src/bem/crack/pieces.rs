//! The topology update at the end of crack tracking (Zhu 2015 Algorithm 3, last step): every
//! closed piece the surface has fallen into becomes a fragment.
//!
//! A piece is an edge-connected component of positive volume together with the cavities (the
//! components of negative volume, wound inwards) that lie inside it: a hollow sphere cut in two
//! gives two pieces, each holding its part of the inner surface. Each cavity goes to the smallest
//! piece whose winding number at it is one. Mass properties come from the piece's closed surface
//! by the divergence theorem, so the fragments' masses add up to the cracked body's exactly.

use shatter_collision::mass_properties::{VolumeIntegrals, mesh_integrals};
use shatter_collision::{TriMesh, topology::require_solid};
use shatter_engine::BodyDesc;

use super::mesh::CrackMesh;
use super::validate::{components, winding_number};
use crate::error::FractureError;
use crate::fragments::{BreakingParent, FragmentResolution, piece_bodies};

/// The closed pieces of `mesh` (see the module docs), each as a compact mesh with its volume
/// integrals (material frame), in order of their lowest triangle slot. Fails if a piece does not
/// bound a solid (a mesh the validator would refuse).
pub fn pieces(mesh: &CrackMesh) -> Result<Vec<(TriMesh, VolumeIntegrals)>, FractureError> {
    let (label, count) = components(mesh);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for t in mesh.live_triangles() {
        members[label[t as usize] as usize].push(t);
    }
    let volume: Vec<f64> = members
        .iter()
        .map(|ts| {
            ts.iter()
                .map(|&t| {
                    let [a, b, c] = mesh.corners(t);
                    a.dot(b.cross(c)) / 6.0
                })
                .sum()
        })
        .collect();
    // Each component's piece: itself when solid, else the smallest solid around it.
    let mut owner: Vec<usize> = (0..count).collect();
    for c in (0..count).filter(|&c| volume[c] < 0.0) {
        let probe = mesh.corners(members[c][0])[0];
        owner[c] = (0..count)
            .filter(|&o| volume[o] > 0.0 && winding_number(mesh, members[o].iter().copied(), probe) > 0.5)
            .min_by(|&x, &y| volume[x].total_cmp(&volume[y]).then(x.cmp(&y)))
            .ok_or_else(|| FractureError::input("a crack mesh whose inward-wound sheets lie inside a solid"))?;
    }
    let mut out = Vec::new();
    for solid in (0..count).filter(|&c| volume[c] > 0.0) {
        let mut vertices = Vec::new();
        let mut index = hashbrown::HashMap::new();
        let mut triangles = Vec::new();
        for c in (0..count).filter(|&c| owner[c] == solid) {
            for &t in &members[c] {
                triangles.push(mesh.triangle_slots()[t as usize].map(|v| {
                    *index.entry(v).or_insert_with(|| {
                        vertices.push(mesh.positions()[v as usize]);
                        (vertices.len() - 1) as u32
                    })
                }));
            }
        }
        let piece = TriMesh::try_new(vertices, triangles)?;
        require_solid(&piece)?;
        let integrals = mesh_integrals(&piece);
        out.push((piece, integrals));
    }
    Ok(out)
}

/// A dynamic body per piece of `mesh` (the body's surface after crack tracking, material
/// frame), placed where it sits in `parent` and moving so that together they carry the parent's
/// momentum. Fails naming a bad density or a piece that is not a solid.
pub fn fragment_bodies(
    mesh: &CrackMesh,
    parent: &BreakingParent,
    resolution: FragmentResolution,
) -> Result<Vec<BodyDesc>, FractureError> {
    piece_bodies(&pieces(mesh)?, parent, resolution)
}
