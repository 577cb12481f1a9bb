//! The vertices of the particles' tets as shared nodes of a finite-element mesh.
//!
//! Two tets share a vertex where they are linked (directly or around the vertex through
//! linked tets) and the vertex sits at the same point; across a cut link they do not, so a
//! crack splits the nodes along it. Vertex positions are compared bit for bit: a mesh vertex is
//! copied unchanged into every tet, and every split computes an edge's midpoint as `(a + b) / 2`
//! from the same two points on either side (IEEE addition commutes).
//!
//! A split tet's vertex that lies inside an unsplit neighbour's face (an edge midpoint of that
//! face, or deeper points after a second split) is a hanging node: it is tied to the linear
//! interpolation of the coarse face's nodes, so the mesh stays conforming.

use glam::DVec3;
use shatter_collision::tet_mesh::FACE_VERTICES;

use shatter_engine::islands::UnionFind;

use super::solid::{Overlap, ParticleSolid, overlap};
use crate::modes::pieces::dense_labels;

/// A hanging node's tie: its value is `sum_k weights[k] * value(masters[k])`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tie {
    /// The hanging node.
    pub node: usize,
    /// Nodes it follows (none of them hanging).
    pub masters: Vec<usize>,
    /// Their weights (sum to one).
    pub weights: Vec<f64>,
}

/// The node of every tet vertex, and the ties of hanging nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Nodes {
    /// Node of vertex `v` of particle `i` at `4 i + v`.
    pub of_vertex: Vec<usize>,
    /// Position of every node, m.
    pub positions: Vec<DVec3>,
    /// Ties of the hanging nodes, in node order.
    pub ties: Vec<Tie>,
}

impl Nodes {
    /// The nodes of `solid`.
    pub fn new(solid: &ParticleSolid) -> Self {
        let particles = solid.particles();
        let mut sets = UnionFind::new(4 * solid.len());
        for (i, p) in particles.iter().enumerate() {
            for link in solid.links(i) {
                let j = link.other as usize;
                if j < i {
                    continue;
                }
                for &v in &FACE_VERTICES[link.face as usize] {
                    for &w in &FACE_VERTICES[link.other_face as usize] {
                        if p.tet[v] == particles[j].tet[w] {
                            sets.union(4 * i + v, 4 * j + w);
                        }
                    }
                }
            }
        }
        let of_vertex: Vec<usize> = dense_labels(&mut sets).into_iter().map(|l| l as usize).collect();
        let mut positions = vec![DVec3::ZERO; of_vertex.iter().max().map_or(0, |m| m + 1)];
        for (slot, node) in of_vertex.iter().enumerate() {
            positions[*node] = particles[slot / 4].tet[slot % 4];
        }
        // Hanging nodes: vertices of a smaller face that are not vertices of the larger face
        // across a link.
        let mut tie_of: Vec<Option<Tie>> = vec![None; positions.len()];
        for (i, p) in particles.iter().enumerate() {
            for link in solid.links(i) {
                let j = link.other as usize;
                let coarse = particles[j].face(link.other_face as usize);
                if overlap(&p.face(link.face as usize), &coarse) != Overlap::Within {
                    continue;
                }
                let coarse_nodes = FACE_VERTICES[link.other_face as usize].map(|w| of_vertex[4 * j + w]);
                for &v in &FACE_VERTICES[link.face as usize] {
                    let node = of_vertex[4 * i + v];
                    if coarse_nodes.contains(&node) || tie_of[node].is_some() {
                        continue;
                    }
                    tie_of[node] = Some(Tie {
                        node,
                        masters: coarse_nodes.to_vec(),
                        weights: barycentric(&coarse, p.tet[v]).to_vec(),
                    });
                }
            }
        }
        // A master may hang itself (a twice-split tet beside a once-split one): substitute
        // until every master is free (each substitution moves to a coarser face, so this ends).
        for _ in 0..8 {
            let mut changed = false;
            for node in 0..tie_of.len() {
                let Some(tie) = tie_of[node].clone() else { continue };
                if !tie.masters.iter().any(|m| tie_of[*m].is_some()) {
                    continue;
                }
                let mut expanded = Tie {
                    node,
                    masters: Vec::new(),
                    weights: Vec::new(),
                };
                for (m, w) in tie.masters.iter().zip(&tie.weights) {
                    match &tie_of[*m] {
                        Some(inner) if inner.node != node => {
                            for (mm, ww) in inner.masters.iter().zip(&inner.weights) {
                                add_master(&mut expanded, *mm, w * ww);
                            }
                        }
                        _ => add_master(&mut expanded, *m, *w),
                    }
                }
                tie_of[node] = Some(expanded);
                changed = true;
            }
            if !changed {
                break;
            }
        }
        Self {
            of_vertex,
            positions,
            ties: tie_of.into_iter().flatten().collect(),
        }
    }

    /// How many nodes.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Sets every hanging node of `u` from its masters.
    pub fn interpolate(&self, u: &mut [DVec3]) {
        for tie in &self.ties {
            u[tie.node] = tie.masters.iter().zip(&tie.weights).map(|(m, w)| u[*m] * *w).sum();
        }
    }

    /// Moves every hanging node's share of `f` to its masters (the transpose of
    /// [`Nodes::interpolate`]), leaving zero at the hanging node.
    pub fn gather(&self, f: &mut [DVec3]) {
        for tie in self.ties.iter().rev() {
            let share = std::mem::take(&mut f[tie.node]);
            for (m, w) in tie.masters.iter().zip(&tie.weights) {
                f[*m] += share * *w;
            }
        }
    }
}

fn add_master(tie: &mut Tie, master: usize, weight: f64) {
    match tie.masters.iter().position(|m| *m == master) {
        Some(k) => tie.weights[k] += weight,
        None => {
            tie.masters.push(master);
            tie.weights.push(weight);
        }
    }
}

/// Barycentric coordinates of `p` (on its plane) in triangle `t`.
fn barycentric(t: &[DVec3; 3], p: DVec3) -> [f64; 3] {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    let n2 = n.length_squared();
    std::array::from_fn(|k| (t[(k + 1) % 3] - p).cross(t[(k + 2) % 3] - p).dot(n) / n2)
}
