//! The particle solid of Chen 2014 section 1: one particle per tet at its centroid, with the
//! radius of the sphere of the tet's volume, its four vertices, and links to the particles of
//! face-adjacent tets.
//!
//! Links are what hold the solid together: a crack removes links, and the solid's pieces are the
//! connected components of what remains. Each link records which face of each particle's tet it
//! crosses. After a 1-to-12 split ([`super::subdivide()`]) a face of an unsplit tet meets the four
//! quarter faces of its split neighbour, so a face can carry up to four links (more after a
//! second split); a region of a face that no link covers is surface. The faces of all split
//! tets come from repeated midpoint splits of the mesh's own faces, so two faces on one plane
//! are either nested or disjoint: the overlap tests below rely on that.

use glam::DVec3;
use shatter_collision::TetMesh;
use shatter_collision::mass_properties::VolumeIntegrals;
use shatter_collision::tet_mesh::{FACE_VERTICES, NO_NEIGHBOR};
use shatter_engine::islands::UnionFind;
use smallvec::SmallVec;

use crate::error::FractureError;
use crate::modes::pieces::dense_labels;

/// One particle: a tet of the solid, material frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// The tet's vertices, positively oriented, m.
    pub tet: [DVec3; 4],
    /// The tet's centroid, where the particle sits, m.
    pub centroid: DVec3,
    /// The tet's volume, m^3.
    pub volume: f64,
    /// Radius of the sphere of the tet's volume, `cbrt(3 V / 4 pi)`, m.
    pub radius: f64,
    /// How many 1-to-12 splits made it (0 for a tet of the mesh).
    pub level: u8,
}

impl Particle {
    /// The particle of tet `tet` (positively oriented) at split level `level`.
    pub fn of_tet(tet: [DVec3; 4], level: u8) -> Self {
        let [a, b, c, d] = tet;
        let volume = (b - a).dot((c - a).cross(d - a)) / 6.0;
        Self {
            tet,
            centroid: (a + b + c + d) * 0.25,
            volume,
            radius: (3.0 * volume / (4.0 * std::f64::consts::PI)).cbrt(),
            level,
        }
    }

    /// Face `k` (opposite vertex `k`), counter-clockwise seen from outside, m.
    pub fn face(&self, k: usize) -> [DVec3; 3] {
        FACE_VERTICES[k].map(|v| self.tet[v])
    }
}

/// A link between two particles: the other particle and the face of this particle's tet it
/// crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The linked particle.
    pub other: u32,
    /// The face (local index of the opposite vertex) of this particle's tet.
    pub face: u8,
    /// The face of the other particle's tet.
    pub other_face: u8,
}

/// Particles and the links between them, material frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleSolid {
    particles: Vec<Particle>,
    links: Vec<SmallVec<[Link; 6]>>,
}

impl ParticleSolid {
    /// The solid of `mesh`: a particle per tet and a link per interior face. Fails on a mesh
    /// with no tets.
    pub fn from_tet_mesh(mesh: &TetMesh) -> Result<Self, FractureError> {
        if mesh.tets().is_empty() {
            return Err(FractureError::input("an SPH solid needs at least one tet"));
        }
        let particles: Vec<Particle> = (0..mesh.tets().len())
            .map(|t| Particle::of_tet(mesh.tet(t), 0))
            .collect();
        let links = (0..mesh.tets().len())
            .map(|t| {
                let mut own = SmallVec::new();
                for (face, &other) in mesh.face_neighbors()[t].iter().enumerate() {
                    if other == NO_NEIGHBOR {
                        continue;
                    }
                    let back = mesh.face_neighbors()[other as usize]
                        .iter()
                        .position(|&n| n as usize == t)
                        .expect("face adjacency is symmetric");
                    own.push(Link {
                        other,
                        face: face as u8,
                        other_face: back as u8,
                    });
                }
                own
            })
            .collect();
        Ok(Self { particles, links })
    }

    /// The particles.
    pub fn particles(&self) -> &[Particle] {
        &self.particles
    }

    /// How many particles.
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    /// Whether there are no particles (never, for a solid that was made).
    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// The links of particle `i`.
    pub fn links(&self, i: usize) -> &[Link] {
        &self.links[i]
    }

    /// How many links, each counted once.
    pub fn link_count(&self) -> usize {
        self.links.iter().map(|l| l.len()).sum::<usize>() / 2
    }

    /// Whether `i` and `j` are linked.
    pub fn is_linked(&self, i: usize, j: usize) -> bool {
        self.links[i].iter().any(|l| l.other as usize == j)
    }

    /// Removes the link between `i` and `j` (a crack crossing it); `false` when there was none.
    pub fn cut(&mut self, i: usize, j: usize) -> bool {
        let before = self.links[i].len();
        self.links[i].retain(|l| l.other as usize != j);
        self.links[j].retain(|l| l.other as usize != i);
        before != self.links[i].len()
    }

    /// Total volume, m^3.
    pub fn volume(&self) -> f64 {
        self.particles.iter().map(|p| p.volume).sum()
    }

    /// The volume integrals of particles `set` (exact: a sum over their tets).
    pub fn integrals(&self, set: &[usize]) -> VolumeIntegrals {
        set.iter().fold(VolumeIntegrals::default(), |sum, &i| {
            let [a, b, c, d] = self.particles[i].tet;
            sum.plus(VolumeIntegrals::tetrahedron(a, b, c, d))
        })
    }

    /// The connected components of the link graph: a label per particle (components numbered
    /// in order of their lowest particle) and their count.
    pub fn components(&self) -> (Vec<u32>, usize) {
        let mut sets = UnionFind::new(self.len());
        for (i, links) in self.links.iter().enumerate() {
            for link in links {
                sets.union(i, link.other as usize);
            }
        }
        let label = dense_labels(&mut sets);
        let count = label.iter().max().map_or(0, |m| *m as usize + 1);
        (label, count)
    }

    /// The solid of particles `set` (in that order) and the links among them.
    pub fn subset(&self, set: &[usize]) -> Self {
        let mut index = vec![u32::MAX; self.len()];
        for (new, &old) in set.iter().enumerate() {
            index[old] = new as u32;
        }
        let links = set
            .iter()
            .map(|&old| {
                self.links[old]
                    .iter()
                    .filter(|l| index[l.other as usize] != u32::MAX)
                    .map(|l| Link {
                        other: index[l.other as usize],
                        ..*l
                    })
                    .collect()
            })
            .collect();
        Self {
            particles: set.iter().map(|&i| self.particles[i]).collect(),
            links,
        }
    }

    /// The parts of particle `i`'s faces no link covers, counter-clockwise seen from outside:
    /// the surface around it (its faces on the solid's boundary and on cracks).
    pub fn surface_triangles(&self, i: usize) -> Vec<[DVec3; 3]> {
        let mut out = Vec::new();
        for k in 0..4 {
            let across: SmallVec<[[DVec3; 3]; 4]> = self.links[i]
                .iter()
                .filter(|l| l.face as usize == k)
                .map(|l| self.particles[l.other as usize].face(l.other_face as usize))
                .collect();
            uncovered(self.particles[i].face(k), &across, 0, &mut out);
        }
        out
    }

    /// Whether particle `i` has surface (Chen 2014: a surface particle carries collision).
    pub fn is_surface(&self, i: usize) -> bool {
        !self.surface_triangles(i).is_empty()
    }

    /// Replaces particle `i` by `children` (the first takes its index, the others are
    /// appended) with `inner` links among them and `outer` links to former neighbours of `i`
    /// (child, face of the child, neighbour, face of the neighbour). Returns the children's
    /// indices.
    pub(crate) fn replace(
        &mut self,
        i: usize,
        children: &[Particle],
        inner: &[(usize, u8, usize, u8)],
        outer: &[(usize, u8, usize, u8)],
    ) -> Vec<usize> {
        for link in std::mem::take(&mut self.links[i]) {
            self.links[link.other as usize].retain(|l| l.other as usize != i);
        }
        let first_new = self.len();
        let index: Vec<usize> = (0..children.len())
            .map(|c| if c == 0 { i } else { first_new + c - 1 })
            .collect();
        self.particles[i] = children[0];
        for child in &children[1..] {
            self.particles.push(*child);
            self.links.push(SmallVec::new());
        }
        for &(a, fa, b, fb) in inner {
            self.add_link(index[a], fa, index[b], fb);
        }
        for &(a, fa, other, fb) in outer {
            self.add_link(index[a], fa, other, fb);
        }
        index
    }

    /// Links `a` (across its face `fa`) and `b` (across its face `fb`), unless they are linked.
    pub(crate) fn link(&mut self, a: usize, fa: u8, b: usize, fb: u8) {
        if !self.is_linked(a, b) {
            self.add_link(a, fa, b, fb);
        }
    }

    fn add_link(&mut self, a: usize, fa: u8, b: usize, fb: u8) {
        self.links[a].push(Link {
            other: b as u32,
            face: fa,
            other_face: fb,
        });
        self.links[b].push(Link {
            other: a as u32,
            face: fb,
            other_face: fa,
        });
    }
}

/// How two coplanar faces of the split hierarchy overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// Their interiors are disjoint.
    None,
    /// The first contains the second (or they are the same triangle).
    Contains,
    /// The first lies inside the second, which is larger.
    Within,
}

/// The overlap of coplanar faces `a` and `b` (nested or disjoint, as split faces are): the
/// smaller one's centroid inside the larger one decides.
pub(crate) fn overlap(a: &[DVec3; 3], b: &[DVec3; 3]) -> Overlap {
    let area = |t: &[DVec3; 3]| (t[1] - t[0]).cross(t[2] - t[0]).length();
    let centroid = |t: &[DVec3; 3]| (t[0] + t[1] + t[2]) / 3.0;
    let (area_a, area_b) = (area(a), area(b));
    if area_a >= area_b * (1.0 - 1e-9) {
        if inside(a, centroid(b)) {
            Overlap::Contains
        } else {
            Overlap::None
        }
    } else if inside(b, centroid(a)) {
        Overlap::Within
    } else {
        Overlap::None
    }
}

/// Whether `p` (on or near the plane of `t`) lies inside triangle `t`, with a margin of 1e-9 in
/// barycentric coordinates.
fn inside(t: &[DVec3; 3], p: DVec3) -> bool {
    let n = (t[1] - t[0]).cross(t[2] - t[0]);
    let n2 = n.length_squared();
    (0..3).all(|k| {
        let (b, c) = (t[(k + 1) % 3], t[(k + 2) % 3]);
        (b - p).cross(c - p).dot(n) / n2 > 1e-9
    })
}

/// Appends the parts of `face` that no triangle of `across` covers, splitting `face` at its
/// edges' midpoints where a smaller triangle covers part of it.
fn uncovered(face: [DVec3; 3], across: &[[DVec3; 3]], depth: u32, out: &mut Vec<[DVec3; 3]>) {
    let mut partly = false;
    for other in across {
        match overlap(&face, other) {
            Overlap::Within => return,
            Overlap::Contains => {
                let area = |t: &[DVec3; 3]| (t[1] - t[0]).cross(t[2] - t[0]).length();
                if area(other) >= area(&face) * (1.0 - 1e-9) {
                    return;
                }
                partly = true;
            }
            Overlap::None => {}
        }
    }
    if !partly || depth >= 8 {
        out.push(face);
        return;
    }
    let [a, b, c] = face;
    let (ab, bc, ca) = ((a + b) * 0.5, (b + c) * 0.5, (c + a) * 0.5);
    for part in [[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]] {
        uncovered(part, across, depth + 1, out);
    }
}
