//! What a piece of a tet mesh is as a body: its closed surface, its mass properties (exact, from
//! its tets) and a body description placing it where it sits in the object (through
//! crate::fragments, the one place geometry becomes a body).

use shatter_collision::mass_properties::{VolumeIntegrals, tet_set_integrals};
use shatter_collision::tet_mesh::{FACE_VERTICES, NO_NEIGHBOR};
use shatter_collision::{BodyMassProperties, Pose, TetMesh, TriMesh};
use shatter_engine::BodyDesc;

use super::TetPieces;
use crate::error::FractureError;
use crate::fragments::{FragmentResolution, fragment_desc};

impl TetPieces {
    /// The surface of `piece`: the faces of its tets that no other tet of the piece shares (the
    /// object's surface and the faces toward other pieces), wound counter-clockwise seen from
    /// outside, over only the vertices it uses (in ascending mesh order). Closed and consistently
    /// oriented; where two of the piece's tets touch along an edge only, that edge has four faces
    /// (the level set and the mass properties below do not mind).
    pub fn surface(&self, mesh: &TetMesh, piece: usize) -> TriMesh {
        let mut triangles: Vec<[u32; 3]> = Vec::new();
        for tet in self.tets_of(piece) {
            for (face, &neighbor) in mesh.face_neighbors()[tet].iter().enumerate() {
                if neighbor == NO_NEIGHBOR || self.piece_of_tet()[neighbor as usize] as usize != piece {
                    triangles.push(FACE_VERTICES[face].map(|local| mesh.tets()[tet][local]));
                }
            }
        }
        let mut used: Vec<u32> = triangles.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        let vertices = used.iter().map(|&v| mesh.vertices()[v as usize]).collect();
        let local = |v: u32| used.binary_search(&v).expect("a used vertex") as u32;
        let triangles = triangles.into_iter().map(|t| t.map(local)).collect();
        TriMesh::try_new(vertices, triangles).expect("indices come from the tet mesh")
    }

    /// Volume integrals of `piece`: the exact integrals of its tets, in the mesh frame.
    pub fn integrals(&self, mesh: &TetMesh, piece: usize) -> VolumeIntegrals {
        let tets: Vec<usize> = self.tets_of(piece).collect();
        tet_set_integrals(mesh, &tets)
    }

    /// Mass properties of `piece` at uniform `density` (kg/m^3), in the mesh frame (centre of mass
    /// and principal frame there). Fails naming a bad density.
    pub fn mass_properties(
        &self,
        mesh: &TetMesh,
        piece: usize,
        density: f64,
    ) -> Result<BodyMassProperties, FractureError> {
        if !(density.is_finite() && density > 0.0) {
            return Err(FractureError::invalid(
                "density (kg/m^3)",
                density,
                "a positive finite number",
            ));
        }
        Ok(BodyMassProperties::from_integrals(
            self.integrals(mesh, piece),
            density,
        )?)
    }

    /// A dynamic body per piece, in piece order, at rest, when the mesh frame sits at `pose` in the
    /// world (made by [`fragment_desc`]: exact mass from the tets, collider from the surface).
    pub fn body_descs(
        &self,
        mesh: &TetMesh,
        pose: &Pose,
        density: f64,
        resolution: FragmentResolution,
    ) -> Result<Vec<BodyDesc>, FractureError> {
        (0..self.count)
            .map(|piece| {
                fragment_desc(
                    &self.surface(mesh, piece),
                    self.integrals(mesh, piece),
                    density,
                    pose,
                    resolution,
                    None,
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::flood_fill;
    use super::super::tests::cube_lattice;
    use super::*;
    use glam::{DQuat, DVec3};
    use shatter_collision::topology::inspect;

    #[test]
    fn prescore_piece_surfaces_are_closed_and_their_volumes_and_masses_add_up() {
        let mesh = cube_lattice([5, 3, 2], 0.2);
        let pieces = flood_fill(&mesh, 6, 11).unwrap();
        let density = 2500.0;
        let (mut volume, mut mass, mut moment) = (0.0, 0.0, DVec3::ZERO);
        for piece in 0..pieces.count() {
            let surface = pieces.surface(&mesh, piece);
            let defects = inspect(&surface);
            assert_eq!(
                (defects.boundary_edges, defects.inconsistently_oriented_edges),
                (0, 0),
                "{defects:?}"
            );
            let tets: f64 = pieces.tets_of(piece).map(|t| mesh.volumes()[t]).sum();
            assert!((surface.signed_volume() - tets).abs() <= 1e-12 * tets);
            let props = pieces.mass_properties(&mesh, piece, density).unwrap();
            assert!((props.mass.mass() - density * tets).abs() <= 1e-9 * density * tets);
            volume += surface.signed_volume();
            mass += props.mass.mass();
            moment += props.center_of_mass * props.mass.mass();
        }
        let whole = 1.0 * 0.6 * 0.4;
        assert!((volume - whole).abs() <= 1e-12 * whole);
        assert!((mass - density * whole).abs() <= 1e-9 * mass);
        // The pieces' centres of mass average to the box's centre.
        assert!((moment / mass - DVec3::new(0.5, 0.3, 0.2)).length() < 1e-12);
        assert!(
            pieces
                .mass_properties(&mesh, 0, -1.0)
                .unwrap_err()
                .to_string()
                .contains("density")
        );
    }

    #[test]
    fn prescore_piece_bodies_sit_where_the_pieces_were() {
        let mesh = cube_lattice([4, 2, 2], 0.25);
        let pieces = flood_fill(&mesh, 3, 5).unwrap();
        let pose = Pose::new(DVec3::new(3.0, 1.0, -2.0), DQuat::from_rotation_y(0.7));
        let resolution = FragmentResolution {
            cells: 16,
            particle_spacing: 0.1,
        };
        let descs = pieces.body_descs(&mesh, &pose, 1000.0, resolution).unwrap();
        assert_eq!(descs.len(), 3);
        for (piece, desc) in descs.iter().enumerate() {
            let props = pieces.mass_properties(&mesh, piece, 1000.0).unwrap();
            let expected = pose.transform_point(props.center_of_mass);
            assert!((desc.pose.position - expected).length() < 1e-12);
            // A surface vertex, taken into the body frame and back out by the body's pose, lands
            // where the mesh vertex is in the world.
            let vertex = pieces.surface(&mesh, piece).vertices()[0];
            let body = props.principal_frame.inverse() * (vertex - props.center_of_mass);
            let world = desc.pose.transform_point(body);
            assert!((world - pose.transform_point(vertex)).length() < 1e-12);
        }
    }
}
