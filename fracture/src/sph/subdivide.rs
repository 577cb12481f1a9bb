//! The 1-to-12 split of a particle (Chen 2014 section 6): its tet is cut at its edges'
//! midpoints into four corner tets (each half the size of the parent, a copy of it) and a
//! central octahedron, and the octahedron into eight tets around its centroid, so no diagonal
//! has to be chosen. Corner tets hold 1/8 of the volume each and the octahedron's tets 1/16
//! each (an affine image of the regular case, where symmetry makes them equal).
//!
//! Links are rebuilt among the twelve children by their shared faces, and between the children
//! and the parent's linked neighbours by which quarter of the parent's face each child's face
//! is (a neighbour's face may itself be a quarter, or the whole face).

use glam::DVec3;
use shatter_collision::tet_mesh::FACE_VERTICES;

use super::solid::{Overlap, Particle, ParticleSolid, overlap};

/// Corner tets, as indices into the parent's points: vertices 0..4, then the midpoints of edges
/// 01, 02, 03, 12, 13, 23 (4..10), then the centroid (10).
const CORNERS: [[usize; 4]; 4] = [[0, 4, 5, 6], [4, 1, 7, 8], [5, 7, 2, 9], [6, 8, 9, 3]];

/// The octahedron's faces: four shared with the corner tets, four on the parent's faces.
const OCTAHEDRON: [[usize; 3]; 8] = [
    [4, 5, 6],
    [4, 7, 8],
    [5, 7, 9],
    [6, 8, 9],
    [4, 7, 5],
    [4, 8, 6],
    [5, 9, 6],
    [7, 9, 8],
];

/// Which point indices lie on the parent's face `f` (opposite vertex `f`).
fn on_parent_face(f: usize, point: usize) -> bool {
    const MIDPOINT_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];
    match point {
        0..4 => point != f,
        4..10 => !MIDPOINT_EDGES[point - 4].contains(&f),
        _ => false,
    }
}

/// The twelve children of `parent` as tets, positively oriented, with their point indices.
pub fn split_tet(parent: &Particle) -> [([usize; 4], Particle); 12] {
    let [a, b, c, d] = parent.tet;
    let points = [
        a,
        b,
        c,
        d,
        (a + b) * 0.5,
        (a + c) * 0.5,
        (a + d) * 0.5,
        (b + c) * 0.5,
        (b + d) * 0.5,
        (c + d) * 0.5,
        (a + b + c + d) * 0.25,
    ];
    let level = parent.level + 1;
    std::array::from_fn(|k| {
        let mut quad = if k < 4 {
            CORNERS[k]
        } else {
            let [p, q, r] = OCTAHEDRON[k - 4];
            [p, q, r, 10]
        };
        let tet = |quad: [usize; 4]| quad.map(|i| points[i]);
        let volume = |[p, q, r, s]: [DVec3; 4]| (q - p).dot((r - p).cross(s - p));
        if volume(tet(quad)) < 0.0 {
            quad.swap(1, 2);
        }
        (quad, Particle::of_tet(tet(quad), level))
    })
}

/// Splits particle `i` of `solid` into twelve; returns the children's indices (the first takes
/// `i`'s).
pub fn subdivide(solid: &mut ParticleSolid, i: usize) -> Vec<usize> {
    let parent = solid.particles()[i];
    let children = split_tet(&parent);
    let face_key = |quad: &[usize; 4], k: usize| {
        let mut key = FACE_VERTICES[k].map(|v| quad[v]);
        key.sort_unstable();
        key
    };
    let mut inner = Vec::new();
    for (a, (quad_a, _)) in children.iter().enumerate() {
        for (b, (quad_b, _)) in children.iter().enumerate().skip(a + 1) {
            for fa in 0..4 {
                for fb in 0..4 {
                    if face_key(quad_a, fa) == face_key(quad_b, fb) {
                        inner.push((a, fa as u8, b, fb as u8));
                    }
                }
            }
        }
    }
    let mut outer = Vec::new();
    for link in solid.links(i) {
        let f = link.face as usize;
        let theirs = solid.particles()[link.other as usize].face(link.other_face as usize);
        for (c, (quad, child)) in children.iter().enumerate() {
            for (k, face) in FACE_VERTICES.iter().enumerate() {
                let on_face = face.iter().all(|&v| on_parent_face(f, quad[v]));
                if on_face && overlap(&child.face(k), &theirs) != Overlap::None {
                    outer.push((c, k as u8, link.other as usize, link.other_face));
                }
            }
        }
    }
    let particles: Vec<Particle> = children.iter().map(|(_, p)| *p).collect();
    solid.replace(i, &particles, &inner, &outer)
}
