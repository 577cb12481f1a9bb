//! SPH neighbourhoods and the corrected kernel gradient.
//!
//! Neighbours of particle `i`: the particles within its support `h_i = support * r_i` that are
//! reached from `i` through links without leaving the support. A crack (cut links) therefore
//! hides the material beyond it, as it should: stress does not pass through an open crack.
//!
//! Gradient (Chen 2014 eq. 5, corrected): `grad u_i = sum_j (u_j - u_i) w_ij^T` with
//! `w_ij = V_j L_i grad W(x_i - x_j, h_i)` and `L_i = G_i^-T`,
//! `G_i = sum_j V_j (x_j - x_i) grad W_ij^T`. Then `sum_j (x_j - x_i) w_ij^T = I`, so a linear
//! displacement field gives its exact gradient at every particle (interior or surface) whose
//! `G_i` is invertible: the correction of Bonet and Lok 1999 in the difference form (which also
//! removes the constant part, as the paper's `u_j - u_i` does). Where `G_i` is numerically
//! singular (fewer than three independent neighbour directions: a lone particle, a sliver of
//! particles) the gradient falls back to the uncorrected one scaled by `3 / tr G_i`, and the
//! particle is counted in [`Stencil::uncorrected`].

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use super::kernel::kernel_gradient;
use super::solid::ParticleSolid;

/// Condition number of `G_i` above which the correction is not trusted.
const MAX_CONDITION: f64 = 1e10;

/// Every particle's neighbours and gradient weights, in flat arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    start: Vec<usize>,
    neighbours: Vec<u32>,
    weights: Vec<DVec3>,
    uncorrected: usize,
}

impl Stencil {
    /// The stencil of `solid` with supports `support` times each particle's radius.
    pub fn new(solid: &ParticleSolid, support: f64) -> Self {
        let per: Vec<ParticleStencil> = (0..solid.len())
            .into_par_iter()
            .map(|i| particle_stencil(solid, i, support))
            .collect();
        let mut start = Vec::with_capacity(solid.len() + 1);
        let (mut neighbours, mut weights) = (Vec::new(), Vec::new());
        let mut uncorrected = 0;
        for (n, w, corrected) in per {
            start.push(neighbours.len());
            neighbours.extend(n);
            weights.extend(w);
            uncorrected += usize::from(!corrected);
        }
        start.push(neighbours.len());
        Self {
            start,
            neighbours,
            weights,
            uncorrected,
        }
    }

    /// How many particles.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The range of particle `i`'s entries in the flat arrays.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i]..self.start[i + 1]
    }

    /// Neighbour of each flat entry.
    pub fn neighbours(&self) -> &[u32] {
        &self.neighbours
    }

    /// Corrected gradient weight `w_ij` of each flat entry, 1/m.
    pub fn weights(&self) -> &[DVec3] {
        &self.weights
    }

    /// How many particles fell back to the uncorrected gradient.
    pub fn uncorrected(&self) -> usize {
        self.uncorrected
    }

    /// The displacement gradient `grad u_i = sum_j (u_j - u_i) w_ij^T` at particle `i`
    /// (column `c` is the derivative along axis `c`).
    pub fn gradient(&self, i: usize, u: &[DVec3]) -> DMat3 {
        let mut h = DMat3::ZERO;
        for slot in self.range(i) {
            let du = u[self.neighbours[slot] as usize] - u[i];
            let w = self.weights[slot];
            h += DMat3::from_cols(du * w.x, du * w.y, du * w.z);
        }
        h
    }
}

/// One particle's neighbours and weights, and whether its gradient is corrected.
type ParticleStencil = (Vec<u32>, Vec<DVec3>, bool);

/// The stencil of particle `i`.
fn particle_stencil(solid: &ParticleSolid, i: usize, support: f64) -> ParticleStencil {
    let particles = solid.particles();
    let xi = particles[i].centroid;
    let h = support * particles[i].radius;
    let mut found = vec![i as u32];
    let mut next = 0;
    while next < found.len() {
        let k = found[next] as usize;
        next += 1;
        for link in solid.links(k) {
            let j = link.other;
            if (particles[j as usize].centroid - xi).length() < h && !found.contains(&j) {
                found.push(j);
            }
        }
    }
    found.remove(0);
    found.sort_unstable();
    let grads: Vec<DVec3> = found
        .iter()
        .map(|&j| kernel_gradient(xi - particles[j as usize].centroid, h) * particles[j as usize].volume)
        .collect();
    let mut g = DMat3::ZERO;
    for (&j, grad) in found.iter().zip(&grads) {
        let d = particles[j as usize].centroid - xi;
        g += DMat3::from_cols(d * grad.x, d * grad.y, d * grad.z);
    }
    let inverse = g.inverse();
    let norm = |m: DMat3| m.to_cols_array().iter().map(|v| v * v).sum::<f64>().sqrt();
    let corrected = g.determinant() != 0.0 && inverse.is_finite() && norm(g) * norm(inverse) < MAX_CONDITION;
    let map = if corrected {
        inverse.transpose()
    } else {
        let trace = g.x_axis.x + g.y_axis.y + g.z_axis.z;
        DMat3::from_diagonal(DVec3::splat(if trace.abs() > 0.0 { 3.0 / trace } else { 0.0 }))
    };
    let weights = grads.iter().map(|grad| map * *grad).collect();
    (found, weights, corrected)
}
