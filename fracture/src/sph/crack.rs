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

/// Opens the crack `start` in `solid`: splits the particles its links touch (when the material
/// subdivides), then cuts the links crossing it.
pub fn open_crack(solid: &mut ParticleSolid, start: &CrackStart, material: &SphMaterial) -> CrackCut {
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
        result.cut += usize::from(solid.cut(i, j));
    }
    result
}
