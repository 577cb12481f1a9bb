//! Strain and stress at the particles (Chen 2014 eqs. 2-3): the deformation gradient
//! `J = I + grad u`, Green's strain `E = 1/2 (J^T J - I)` and the isotropic linear stress
//! `sigma = lambda tr(E) I + 2 mu E`.

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use super::material::SphMaterial;
use super::stencil::Stencil;
use crate::bem::principal::{PrincipalStress, principal_stress};
use crate::error::FractureError;

/// Green's strain of displacement gradient `h`, dimensionless.
pub fn green_strain(h: DMat3) -> DMat3 {
    let j = DMat3::IDENTITY + h;
    (j.transpose() * j - DMat3::IDENTITY) * 0.5
}

/// The isotropic linear stress of `strain` in `material`, Pa.
pub fn linear_stress(material: &SphMaterial, strain: DMat3) -> DMat3 {
    let trace = strain.x_axis.x + strain.y_axis.y + strain.z_axis.z;
    DMat3::from_diagonal(DVec3::splat(material.lambda() * trace)) + strain * (2.0 * material.mu())
}

/// The stress at every particle of displacement field `u` (m), Pa.
pub fn particle_stresses(stencil: &Stencil, material: &SphMaterial, u: &[DVec3]) -> Vec<DMat3> {
    (0..stencil.len())
        .into_par_iter()
        .map(|i| linear_stress(material, green_strain(stencil.gradient(i, u))))
        .collect()
}

/// The principal stresses of every tensor in `stresses`. Fails on a non-finite stress.
pub fn principal_stresses(stresses: &[DMat3]) -> Result<Vec<PrincipalStress>, FractureError> {
    stresses.par_iter().map(|s| principal_stress(*s)).collect()
}
