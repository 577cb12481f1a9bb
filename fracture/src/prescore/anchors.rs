//! Where two pieces of a tet mesh meet: the vertices of the faces they share (Li 2018 section 4:
//! "constraints were placed at the vertices of faces incident to two pieces").

use glam::DVec3;
use shatter_collision::{Pose, TetMesh};

use super::TetPieces;

/// A point where two pieces are to be joined.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieceAnchor {
    /// The two pieces, lower first.
    pub pieces: [u32; 2],
    /// The point, in the frame of the mesh the pieces came from (see
    /// [`PieceAnchor::transformed`]), m.
    pub point: DVec3,
}

impl PieceAnchor {
    /// The anchor with its point moved by `pose` (the mesh frame placed in the world).
    pub fn transformed(self, pose: &Pose) -> Self {
        Self {
            point: pose.transform_point(self.point),
            ..self
        }
    }
}

impl TetPieces {
    /// One anchor per vertex of every face shared by tets of two different pieces, once per
    /// (pair of pieces, vertex), sorted by pair then vertex index: a reproducible list.
    pub fn shared_face_anchors(&self, mesh: &TetMesh) -> Vec<PieceAnchor> {
        let mut keyed: Vec<([u32; 2], u32)> = Vec::new();
        for face in mesh.interior_faces() {
            let [a, b] = face.tets.map(|t| self.piece_of_tet()[t as usize]);
            if a != b {
                keyed.extend(face.vertices.iter().map(|&v| ([a.min(b), a.max(b)], v)));
            }
        }
        keyed.sort_unstable();
        keyed.dedup();
        keyed
            .into_iter()
            .map(|(pieces, vertex)| PieceAnchor {
                pieces,
                point: mesh.vertices()[vertex as usize],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::cube_lattice;
    use super::*;
    use glam::DQuat;

    #[test]
    fn prescore_anchors_are_the_vertices_of_faces_between_two_pieces() {
        // Four cubes in a row, split in the middle: the two pieces share one square face at
        // x = 0.2 (two triangles), whose four corners are the anchors.
        let mesh = cube_lattice([4, 1, 1], 0.1);
        let halves: Vec<u32> = (0..mesh.tets().len())
            .map(|t| u32::from(mesh.centroids()[t].x > 0.2))
            .collect();
        let pieces = TetPieces::try_new(&mesh, halves).unwrap();
        let anchors = pieces.shared_face_anchors(&mesh);
        assert_eq!(anchors.len(), 4, "{anchors:?}");
        for anchor in &anchors {
            assert_eq!(anchor.pieces, [0, 1]);
            assert!((anchor.point.x - 0.2).abs() < 1e-15);
        }
        // One piece: nothing to join.
        let whole = TetPieces::try_new(&mesh, vec![0; mesh.tets().len()]).unwrap();
        assert!(whole.shared_face_anchors(&mesh).is_empty());
        let pose = Pose::new(DVec3::new(1.0, 2.0, 3.0), DQuat::from_rotation_z(0.5));
        let moved = anchors[0].transformed(&pose);
        assert_eq!(moved.pieces, [0, 1]);
        assert!((moved.point - pose.transform_point(anchors[0].point)).length() < 1e-15);
    }
}
