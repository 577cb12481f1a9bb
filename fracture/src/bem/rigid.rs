//! The six rigid motions on a surface, and the rank-six completion that removes the traction
//! operator's near-null space.
//!
//! The interior traction operator `1/2 I + K'` has a six-dimensional null space (densities whose
//! interior traction vanishes: their displacement is a rigid motion) and its range is the loads
//! that balance (orthogonal to the rigid motions `r_k`). Discretised, those six singular values
//! are small but not zero, and a Krylov solver spends its iterations on them: BiCGSTAB, without a
//! preconditioner, needed 52 iterations on fandisk.obj. The completed operator
//! `A + 1/2 sum_k r_k <r_k, .>` (Fredholm's standard fix for a Neumann problem) maps the null
//! space onto the rigid motions, outside the range of `A`, so it is well conditioned; for
//! balanced loads its solution has `<r_k, rho> = 0` and the same traction, and a density
//! differing by null vectors gives the same stress.

use glam::DVec3;

use super::surface::Surface;

/// The rigid motions at the centroids, orthonormal in the area-weighted inner product
/// `<a, b> = sum_i A_i a_i . b_i`.
#[derive(Clone, Debug)]
pub struct RigidModes {
    modes: Vec<Vec<DVec3>>,
    areas: Vec<f64>,
}

impl RigidModes {
    /// The three translations and three rotations about the centroid of `surface`,
    /// orthonormalised (Gram-Schmidt, twice).
    pub fn new(surface: &Surface) -> Self {
        let center = surface.center();
        let areas = surface.areas().to_vec();
        let dot =
            |a: &[DVec3], b: &[DVec3]| -> f64 { a.iter().zip(b).zip(&areas).map(|((x, y), w)| x.dot(*y) * w).sum() };
        let mut modes: Vec<Vec<DVec3>> = Vec::with_capacity(6);
        for axis in DVec3::AXES {
            modes.push(vec![axis; surface.len()]);
        }
        for axis in DVec3::AXES {
            modes.push(surface.centroids().iter().map(|c| axis.cross(*c - center)).collect());
        }
        for k in 0..modes.len() {
            for _ in 0..2 {
                for j in 0..k {
                    let projection = dot(&modes[k], &modes[j]);
                    let (head, tail) = modes.split_at_mut(k);
                    tail[0]
                        .iter_mut()
                        .zip(&head[j])
                        .for_each(|(m, r)| *m -= *r * projection);
                }
            }
            let norm = dot(&modes[k], &modes[k]).sqrt();
            modes[k].iter_mut().for_each(|m| *m /= norm);
        }
        Self { modes, areas }
    }

    /// `<r_k, rho>` for each mode.
    pub fn components(&self, rho: &[DVec3]) -> [f64; 6] {
        let mut out = [0.0; 6];
        for (o, mode) in out.iter_mut().zip(&self.modes) {
            *o = mode
                .iter()
                .zip(rho)
                .zip(&self.areas)
                .map(|((m, r), w)| m.dot(*r) * w)
                .sum();
        }
        out
    }

    /// `out += 1/2 sum_k r_k <r_k, rho>`.
    pub fn complete(&self, rho: &[DVec3], out: &mut [DVec3]) {
        let components = self.components(rho);
        for (mode, c) in self.modes.iter().zip(components) {
            out.iter_mut().zip(mode).for_each(|(o, m)| *o += *m * (0.5 * c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_collision::TriMesh;

    #[test]
    fn bem_rigid_modes_are_orthonormal_and_span_rigid_motions() {
        let surface = Surface::try_new(TriMesh::icosphere(1.0, 2)).unwrap();
        let modes = RigidModes::new(&surface);
        for k in 0..6 {
            let c = modes.components(&modes.modes[k]);
            for (j, v) in c.iter().enumerate() {
                assert!((v - if j == k { 1.0 } else { 0.0 }).abs() < 1e-12, "{k} {j} {v}");
            }
        }
        // A rotation about an off-centre point is a rigid motion: nothing of it is left outside.
        let motion: Vec<DVec3> = surface
            .centroids()
            .iter()
            .map(|c| DVec3::new(0.3, -1.0, 2.0) + DVec3::new(1.0, 0.5, -0.2).cross(*c - DVec3::new(2.0, 0.0, 1.0)))
            .collect();
        let c = modes.components(&motion);
        let mut rest = motion.clone();
        for (mode, ck) in modes.modes.iter().zip(c) {
            rest.iter_mut().zip(mode).for_each(|(r, m)| *r -= *m * ck);
        }
        assert!(rest.iter().all(|r| r.length() < 1e-12));
    }
}
