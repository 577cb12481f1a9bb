//! Where cracks start (Zhu 2015 section 6.3, Algorithm 2): surface vertices whose largest
//! principal stress exceeds the initiation threshold and is the largest of their 1-ring become
//! candidates; they are taken in descending order of stress, skipping any that lies in the
//! 1-ring of a crack line, and each opens a crack across its principal direction.
//!
//! The stress at a vertex is the caller's: the boundary-element surface recovery is unreliable
//! at sharp edges and corners (see `bem::solution`), so the recommended input is
//! `Solution::inset_vertex_stresses`, which evaluates one triangle inside the body.
//!
//! Two thresholds (Zhu section 7, after Smith et al. 2001): starting a crack takes more than
//! lengthening one, so [`Rankine::initiate`] is above [`Rankine::propagate`]. Both may vary over
//! the body: thresholds are read per point.

use glam::{DMat3, DVec3};

use super::extend::crack_at;
use super::mesh::CrackMesh;
use super::open::{Opening, open_crack};
use super::validate::AngleBounds;
use crate::bem::principal::principal_stress;
use crate::error::FractureError;

/// The Rankine thresholds of a material (Pa): the largest principal stress that starts a crack
/// and the one that keeps it growing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rankine {
    /// Largest principal stress that starts a crack (Pa).
    pub initiate: f64,
    /// Largest principal stress at a crack front that keeps it growing (Pa), at most `initiate`.
    pub propagate: f64,
}

impl Rankine {
    /// Checks that both thresholds are positive and finite and that propagating takes no more
    /// than initiating.
    pub fn try_new(initiate: f64, propagate: f64) -> Result<Self, FractureError> {
        if !(initiate.is_finite() && initiate > 0.0) {
            return Err(FractureError::input(format!(
                "initiation threshold {initiate} Pa must be positive and finite"
            )));
        }
        if !(propagate.is_finite() && propagate > 0.0 && propagate <= initiate) {
            return Err(FractureError::input(format!(
                "propagation threshold {propagate} Pa must be positive and at most the initiation threshold {initiate} Pa"
            )));
        }
        Ok(Self { initiate, propagate })
    }
}

/// A vertex where a crack may start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The surface vertex.
    pub vertex: u32,
    /// Its largest principal stress (Pa).
    pub stress: f64,
    /// The unit principal direction of that stress: the normal of the crack plane.
    pub direction: DVec3,
}

/// The candidates of Algorithm 2, strongest first (ties by vertex index): vertices off every
/// crack line whose largest principal stress exceeds `threshold` at their position and is at
/// least that of every 1-ring neighbour (a tie goes to the lower index). `stresses` holds the
/// Cauchy stress (Pa) per vertex of `mesh`; removed vertices are skipped.
pub fn candidates(
    mesh: &CrackMesh,
    stresses: &[DMat3],
    threshold: &dyn Fn(DVec3) -> f64,
) -> Result<Vec<Candidate>, FractureError> {
    if stresses.len() != mesh.positions().len() {
        return Err(FractureError::input(format!(
            "{} vertex stresses for a mesh of {} vertices",
            stresses.len(),
            mesh.positions().len()
        )));
    }
    let mut largest = vec![(f64::NEG_INFINITY, DVec3::ZERO); stresses.len()];
    for (v, sigma) in stresses.iter().enumerate() {
        if mesh.vertex_in_use(v as u32) {
            let p = principal_stress(*sigma).map_err(|e| FractureError::input(format!("stress at vertex {v}: {e}")))?;
            largest[v] = (p.values[0], p.directions[0]);
        }
    }
    let mut out = Vec::new();
    for v in 0..stresses.len() as u32 {
        let (stress, direction) = largest[v as usize];
        if !mesh.vertex_in_use(v) || mesh.is_crack_node(v) || !(stress > threshold(mesh.positions()[v as usize])) {
            continue;
        }
        let Some(ring) = mesh.ring(v) else { continue };
        let beats = |u: &u32| {
            let other = largest[*u as usize].0;
            stress > other || (stress == other && v < *u)
        };
        if ring.iter().all(beats) {
            out.push(Candidate {
                vertex: v,
                stress,
                direction,
            });
        }
    }
    out.sort_by(|a, b| b.stress.total_cmp(&a.stress).then(a.vertex.cmp(&b.vertex)));
    Ok(out)
}

/// Algorithm 2: opens a crack at each candidate in turn, skipping candidates in the 1-ring of a
/// crack line or its walls (any line, including those opened here) and those whose opening is
/// refused.
/// `thickness` (m) is the crack thickness, `depth` (m) how deep each new front starts. Returns
/// the indices of the lines opened.
pub fn initiate(
    mesh: &mut CrackMesh,
    candidates: &[Candidate],
    thickness: f64,
    depth: f64,
    bounds: AngleBounds,
) -> Vec<usize> {
    let mut opened = Vec::new();
    for c in candidates {
        if !mesh.vertex_in_use(c.vertex) || mesh.is_crack_node(c.vertex) {
            continue;
        }
        let near_line = mesh.ring(c.vertex).is_none_or(|ring| {
            std::iter::once(c.vertex)
                .chain(ring.iter().copied())
                .any(|u| crack_at(mesh, u).is_some())
        });
        if near_line {
            continue;
        }
        let opening = Opening {
            vertex: c.vertex,
            plane_normal: c.direction,
            thickness,
            depth,
        };
        if let Ok(line) = open_crack(mesh, opening, bounds) {
            opened.push(line);
        }
    }
    opened
}
