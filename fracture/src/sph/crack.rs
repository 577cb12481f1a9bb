//! Rankine cracks that cut links (Chen 2014 sections 5 and 6).
//!
//! Where the largest principal stress exceeds the tensile strength a crack starts, its plane
//! through the particle and normal to that principal direction. Every link that crosses the
//! plane within the crack radius of the origin (the point where the segment between the two
//! centroids meets the plane) is cut. With subdivision on, every particle such a link touches
//! is first split 1-to-12 (up to the material's level), the links rebuilt, and the cut then made
//! among the finer particles, so the crack surface follows the plane more closely.

use glam::DVec3;

use super::material::SphMaterial;
use super::solid::ParticleSolid;
use super::subdivide::subdivide;
use crate::bem::principal::PrincipalStress;

/// Where a crack starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrackStart {
    /// The particle whose stress started it.
    pub particle: usize,
    /// Its origin (the particle's centroid), material frame, m.
    pub origin: DVec3,
    /// Unit normal of the crack plane (the largest principal direction).
    pub normal: DVec3,
    /// The largest principal stress there, Pa.
    pub stress: f64,
}

/// What opening one crack did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrackCut {
    /// Particles split 1-to-12 first.
    pub split: usize,
    /// Links cut.
    pub cut: usize,
}

/// The cracks the stresses start: particles above the tensile strength, most stressed first,
/// each at least a crack radius from every crack before it, at most `max_cracks`.
pub fn rankine_starts(
    solid: &ParticleSolid,
    principal: &[PrincipalStress],
    material: &SphMaterial,
    max_cracks: usize,
) -> Vec<CrackStart> {
    let mut over: Vec<usize> = (0..principal.len())
        .filter(|&i| principal[i].values[0] > material.tensile_strength)
        .collect();
    over.sort_by(|&a, &b| {
        principal[b].values[0]
            .total_cmp(&principal[a].values[0])
            .then(a.cmp(&b))
    });
    let mut starts: Vec<CrackStart> = Vec::new();
    for i in over {
        if starts.len() >= max_cracks {
            break;
        }
        let origin = solid.particles()[i].centroid;
        if starts
            .iter()
            .any(|s| (s.origin - origin).length() < material.crack_radius)
        {
            continue;
        }
        starts.push(CrackStart {
            particle: i,
            origin,
            normal: principal[i].directions[0],
            stress: principal[i].values[0],
        });
    }
    starts
}

/// The links (lower index first) crossing the plane through `origin` with unit `normal`
/// within `radius` of the origin.
pub fn crossing_links(solid: &ParticleSolid, origin: DVec3, normal: DVec3, radius: f64) -> Vec<(usize, usize)> {
    let particles = solid.particles();
    let mut crossing = Vec::new();
    for i in 0..solid.len() {
        let xi = particles[i].centroid;
        let si = (xi - origin).dot(normal);
        for link in solid.links(i) {
            let j = link.other as usize;
            if j <= i {
                continue;
            }
            let xj = particles[j].centroid;
            let sj = (xj - origin).dot(normal);
            if (si < 0.0) == (sj < 0.0) {
                continue;
            }
            let at = xi + (xj - xi) * (si / (si - sj));
            if (at - origin).length() <= radius {
                crossing.push((i, j));
            }
        }
    }
    crossing
}

/// A cut link, by the tets at its ends (which survive later splits of other particles, where
/// indices would not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CutLink {
    /// The tets at its ends.
    pub tets: [[DVec3; 4]; 2],
    /// The face of each tet it crossed.
    pub faces: [u8; 2],
}

/// Opens the crack `start` in `solid`: splits the particles its links touch (when the material
/// subdivides), then cuts the links crossing it, appending them to `cuts`.
pub fn open_crack(
    solid: &mut ParticleSolid,
    start: &CrackStart,
    material: &SphMaterial,
    cuts: &mut Vec<CutLink>,
) -> CrackCut {
    let mut result = CrackCut::default();
    if material.subdivision {
        let mut touched: Vec<usize> = crossing_links(solid, start.origin, start.normal, material.crack_radius)
            .into_iter()
            .flat_map(|(i, j)| [i, j])
            .filter(|&i| solid.particles()[i].level < material.max_level)
            .collect();
        touched.sort_unstable();
        touched.dedup();
        for i in touched {
            subdivide(solid, i);
            result.split += 1;
        }
    }
    for (i, j) in crossing_links(solid, start.origin, start.normal, material.crack_radius) {
        let link = *solid
            .links(i)
            .iter()
            .find(|l| l.other as usize == j)
            .expect("a crossing link");
        if solid.cut(i, j) {
            result.cut += 1;
            cuts.push(CutLink {
                tets: [solid.particles()[i].tet, solid.particles()[j].tet],
                faces: [link.face, link.other_face],
            });
        }
    }
    result
}

/// Gives back cut links of every piece of `solid` smaller than `min_volume` (m^3), smallest
/// first, until none is left that its cuts can rejoin: a crack does not chip off a piece too
/// small to be a body of its own; the piece stays with the neighbouring piece it shares the
/// most cut links with (only those links are restored, so a sliver between two cracks does not
/// bridge them). Returns how many links were restored.
pub fn rejoin_small_pieces(solid: &mut ParticleSolid, cuts: &[CutLink], min_volume: f64) -> usize {
    let key = |tet: &[DVec3; 4]| tet.map(|v| v.to_array().map(f64::to_bits));
    let index: hashbrown::HashMap<_, usize> = solid
        .particles()
        .iter()
        .enumerate()
        .map(|(i, p)| (key(&p.tet), i))
        .collect();
    let ends: Vec<Option<(usize, usize)>> = cuts
        .iter()
        .map(|c| Some((*index.get(&key(&c.tets[0]))?, *index.get(&key(&c.tets[1]))?)))
        .collect();
    let mut used = vec![false; cuts.len()];
    let mut restored = 0;
    loop {
        let (label, count) = solid.components();
        let mut volume = vec![0.0; count];
        for (i, p) in solid.particles().iter().enumerate() {
            volume[label[i] as usize] += p.volume;
        }
        let mut small: Vec<usize> = (0..count).filter(|&c| volume[c] < min_volume).collect();
        small.sort_by(|&a, &b| volume[a].total_cmp(&volume[b]).then(a.cmp(&b)));
        let mut progress = false;
        for piece in small {
            // The neighbouring piece it shares the most cut links with takes it back; its cuts
            // towards any other piece stay (a sliver between two cracks must not bridge them).
            let across = |k: usize| -> Option<usize> {
                let (i, j) = ends[k]?;
                let (a, b) = (label[i] as usize, label[j] as usize);
                match (a == piece, b == piece) {
                    (true, false) => Some(b),
                    (false, true) => Some(a),
                    _ => None,
                }
            };
            let mut shared: Vec<(usize, usize)> = Vec::new();
            for k in (0..cuts.len()).filter(|&k| !used[k]) {
                if let Some(other) = across(k) {
                    match shared.iter_mut().find(|(o, _)| *o == other) {
                        Some((_, n)) => *n += 1,
                        None => shared.push((other, 1)),
                    }
                }
            }
            let Some(&(neighbour, _)) = shared.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))) else {
                continue;
            };
            for k in 0..cuts.len() {
                if !used[k] && across(k) == Some(neighbour) {
                    let (i, j) = ends[k].expect("a link between two pieces");
                    used[k] = true;
                    solid.link(i, cuts[k].faces[0], j, cuts[k].faces[1]);
                    restored += 1;
                }
            }
            progress = true;
            break;
        }
        if !progress {
            return restored;
        }
    }
}
