//! Prescoring: an object cut ahead of time into pieces that become rigid bodies, and the places
//! where the pieces meet, for the methods that glue pieces together (Li 2018's energized joints).
//!
//! From a tet mesh of the object (collision's `tetrahedralize`, optionally [`hollow`]ed, as in
//! Li's bunny; [`prescore_mesh`] does all of it from a triangle mesh): [`flood_fill`] grows `N`
//! pieces from seed tets drawn with a fixed seed, one tet per piece per round over face adjacency
//! (Li 2018 section 4's round-robin fill), so pieces come out of similar size and face-connected. [`TetPieces`] then gives each piece's closed surface, mass
//! properties and body description, and the anchors where two pieces meet: the vertices of the
//! faces they share ([`TetPieces::shared_face_anchors`]).

mod anchors;
pub(crate) mod pipeline;
mod shell;
mod surface;

use std::collections::VecDeque;

use shatter_collision::TetMesh;
use shatter_collision::tet_mesh::NO_NEIGHBOR;

pub use anchors::PieceAnchor;
pub use pipeline::{PrescoreSettings, Prescored, prescore_mesh};
pub use shell::hollow;

use crate::error::FractureError;
use shatter_integrators::SplitMix64;

/// A partition of a tet mesh's tets into pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TetPieces {
    piece_of_tet: Vec<u32>,
    count: usize,
}

impl TetPieces {
    /// A partition from a piece index per tet (pieces numbered `0..count`, each used); fails
    /// naming the first tet with a bad piece, or a length that is not the mesh's tet count.
    pub fn try_new(mesh: &TetMesh, piece_of_tet: Vec<u32>) -> Result<Self, FractureError> {
        if piece_of_tet.len() != mesh.tets().len() {
            return Err(FractureError::input(format!(
                "a partition needs one piece per tet: {} given for {} tets",
                piece_of_tet.len(),
                mesh.tets().len()
            )));
        }
        let count = piece_of_tet.iter().max().map_or(0, |&max| max as usize + 1);
        let mut used = vec![false; count];
        for &piece in &piece_of_tet {
            used[piece as usize] = true;
        }
        if let Some(missing) = used.iter().position(|&u| !u) {
            return Err(FractureError::input(format!(
                "piece {missing} of 0..{count} has no tet; number pieces densely"
            )));
        }
        Ok(Self { piece_of_tet, count })
    }

    /// A partition from labels numbered densely from 0 (every label below the largest is used),
    /// as union-find labelling makes them.
    pub(crate) fn from_dense_labels(piece_of_tet: Vec<u32>) -> Self {
        let count = piece_of_tet.iter().max().map_or(0, |&max| max as usize + 1);
        Self { piece_of_tet, count }
    }

    /// The piece of every tet.
    pub fn piece_of_tet(&self) -> &[u32] {
        &self.piece_of_tet
    }

    /// Number of pieces.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The tets of `piece`, ascending.
    pub fn tets_of(&self, piece: usize) -> impl Iterator<Item = usize> + '_ {
        self.piece_of_tet
            .iter()
            .enumerate()
            .filter(move |(_, p)| **p as usize == piece)
            .map(|(t, _)| t)
    }
}

/// Splits `mesh` into `pieces` face-connected pieces by a round-robin flood fill from `pieces`
/// distinct seed tets drawn with `seed` (Li 2018 section 4). Each round every piece in turn claims
/// one unclaimed tet sharing a face with it (breadth first), until no piece can grow. Tets the
/// seeds cannot reach (a part of the mesh not face-connected to any seed) become extra pieces, one
/// per such part, so the result may have more than `pieces` pieces; never fewer.
///
/// Fails naming the value on `pieces` = 0 or more pieces than tets.
pub fn flood_fill(mesh: &TetMesh, pieces: usize, seed: u64) -> Result<TetPieces, FractureError> {
    let tets = mesh.tets().len();
    if pieces == 0 || pieces > tets {
        return Err(FractureError::InvalidValue {
            what: "piece count",
            value: pieces.to_string(),
            expected: "at least 1 and at most the mesh's tet count",
        });
    }
    const FREE: u32 = u32::MAX;
    let mut piece_of_tet = vec![FREE; tets];
    let mut random = SplitMix64::new(seed);
    let mut fronts: Vec<VecDeque<u32>> = Vec::with_capacity(pieces);
    while fronts.len() < pieces {
        let tet = random.below(tets as u64) as usize;
        if piece_of_tet[tet] == FREE {
            piece_of_tet[tet] = fronts.len() as u32;
            fronts.push(VecDeque::from([tet as u32]));
        }
    }
    let neighbors = mesh.face_neighbors();
    let grow = |fronts: &mut Vec<VecDeque<u32>>, piece_of_tet: &mut Vec<u32>| loop {
        let mut grew = false;
        for (piece, front) in fronts.iter_mut().enumerate() {
            // Claim the first free neighbour of the oldest tet that still has one.
            while let Some(&tet) = front.front() {
                let free = neighbors[tet as usize]
                    .iter()
                    .find(|&&n| n != NO_NEIGHBOR && piece_of_tet[n as usize] == FREE);
                match free {
                    Some(&n) => {
                        piece_of_tet[n as usize] = piece as u32;
                        front.push_back(n);
                        grew = true;
                        break;
                    }
                    None => {
                        front.pop_front();
                    }
                }
            }
        }
        if !grew {
            break;
        }
    };
    grow(&mut fronts, &mut piece_of_tet);
    // Parts no seed reached: each its own piece, seeded at its lowest tet.
    while let Some(tet) = piece_of_tet.iter().position(|&p| p == FREE) {
        piece_of_tet[tet] = fronts.len() as u32;
        fronts.push(VecDeque::from([tet as u32]));
        grow(&mut fronts, &mut piece_of_tet);
    }
    let count = fronts.len();
    Ok(TetPieces { piece_of_tet, count })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use glam::DVec3;

    /// A box of `n` cubes of side `size` along x, y and z, each cut into six tets around its main
    /// diagonal (Kuhn's split: conforming across cubes), corner at the origin.
    pub(crate) fn cube_lattice(n: [usize; 3], size: f64) -> TetMesh {
        let index = |i: usize, j: usize, k: usize| (i + (n[0] + 1) * (j + (n[1] + 1) * k)) as u32;
        let mut vertices = Vec::new();
        for k in 0..=n[2] {
            for j in 0..=n[1] {
                for i in 0..=n[0] {
                    vertices.push(DVec3::new(i as f64, j as f64, k as f64) * size);
                }
            }
        }
        let mut tets = Vec::new();
        // The six monotone paths from corner (0,0,0) to (1,1,1), one per axis order.
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for k in 0..n[2] {
            for j in 0..n[1] {
                for i in 0..n[0] {
                    for order in orders {
                        let mut corner = [i, j, k];
                        let mut tet = [index(i, j, k); 4];
                        for (step, axis) in order.into_iter().enumerate() {
                            corner[axis] += 1;
                            tet[step + 1] = index(corner[0], corner[1], corner[2]);
                        }
                        let p = tet.map(|v| vertices[v as usize]);
                        if (p[1] - p[0]).dot((p[2] - p[0]).cross(p[3] - p[0])) < 0.0 {
                            tet.swap(2, 3);
                        }
                        tets.push(tet);
                    }
                }
            }
        }
        TetMesh::try_new(vertices, tets).unwrap()
    }

    /// Whether the tets of `piece` are connected through shared faces.
    fn face_connected(mesh: &TetMesh, pieces: &TetPieces, piece: usize) -> bool {
        let own: Vec<usize> = pieces.tets_of(piece).collect();
        let mut seen = vec![false; mesh.tets().len()];
        let mut stack = vec![own[0]];
        seen[own[0]] = true;
        let mut reached = 0;
        while let Some(t) = stack.pop() {
            reached += 1;
            for &n in &mesh.face_neighbors()[t] {
                if n != NO_NEIGHBOR && !seen[n as usize] && pieces.piece_of_tet()[n as usize] as usize == piece {
                    seen[n as usize] = true;
                    stack.push(n as usize);
                }
            }
        }
        reached == own.len()
    }

    #[test]
    fn prescore_flood_fill_makes_face_connected_pieces_of_similar_size() {
        let mesh = cube_lattice([6, 4, 3], 0.1);
        let pieces = flood_fill(&mesh, 10, 7).unwrap();
        assert_eq!(pieces.count(), 10);
        let sizes: Vec<usize> = (0..10).map(|p| pieces.tets_of(p).count()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), mesh.tets().len());
        for piece in 0..10 {
            assert!(face_connected(&mesh, &pieces, piece), "piece {piece} is split");
        }
        // Round robin: no piece starves while another takes the mesh (432 tets, 43 on average).
        assert!(sizes.iter().all(|&s| s >= 5), "{sizes:?}");
        // Reproducible from the seed, and the seed matters.
        assert_eq!(flood_fill(&mesh, 10, 7).unwrap(), pieces);
        assert_ne!(flood_fill(&mesh, 10, 8).unwrap(), pieces);
    }

    #[test]
    fn prescore_flood_fill_gives_unreached_parts_their_own_pieces_and_refuses_bad_counts() {
        // Two boxes side by side with a gap: one seed cannot reach the other box.
        let a = cube_lattice([2, 2, 2], 0.1);
        let (mut vertices, mut tets) = a.clone().into_parts();
        let offset = vertices.len() as u32;
        let (b_vertices, b_tets) = a.into_parts();
        vertices.extend(b_vertices.iter().map(|v| *v + DVec3::X));
        tets.extend(b_tets.iter().map(|t| t.map(|v| v + offset)));
        let mesh = TetMesh::try_new(vertices, tets).unwrap();
        let pieces = flood_fill(&mesh, 1, 3).unwrap();
        assert_eq!(pieces.count(), 2);
        for piece in 0..2 {
            assert!(face_connected(&mesh, &pieces, piece));
        }
        let error = flood_fill(&mesh, 0, 3).unwrap_err().to_string();
        assert!(error.contains("piece count"), "{error}");
        assert!(flood_fill(&mesh, mesh.tets().len() + 1, 3).is_err());
        assert!(TetPieces::try_new(&mesh, vec![0; 3]).is_err());
        let mut gap = vec![0; mesh.tets().len()];
        gap[0] = 2;
        assert!(
            TetPieces::try_new(&mesh, gap)
                .unwrap_err()
                .to_string()
                .contains("piece 1")
        );
    }
}
