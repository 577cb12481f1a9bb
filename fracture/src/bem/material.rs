//! Isotropic linear elastic material: Young's modulus and Poisson's ratio, and the constants
//! the Kelvin kernels and Hooke's law are written in.

use glam::{DMat3, DVec3};

use crate::error::FractureError;

/// An isotropic, homogeneous linear elastic solid (Zhu 2015 section 4.1: `S = 2 mu eps + lambda
/// tr(eps) I`, small strain, so Cauchy and second Piola-Kirchhoff stress coincide).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elastic {
    /// Young's modulus E, Pa.
    young: f64,
    /// Poisson's ratio nu, dimensionless.
    poisson: f64,
}

impl Elastic {
    /// A material of Young's modulus `young` (Pa, finite and > 0) and Poisson's ratio `poisson`
    /// (in (-1, 0.5): 0.5 is incompressible, where the Kelvin kernel's `1 / (1 - 2 nu)` terms and
    /// the bulk modulus blow up). Fails naming the bad value.
    pub fn try_new(young: f64, poisson: f64) -> Result<Self, FractureError> {
        if !(young.is_finite() && young > 0.0) {
            return Err(FractureError::invalid(
                "Young's modulus (Pa)",
                young,
                "a finite modulus > 0",
            ));
        }
        if !(poisson.is_finite() && poisson > -1.0 && poisson < 0.5) {
            return Err(FractureError::invalid(
                "Poisson's ratio",
                poisson,
                "a ratio in (-1, 0.5)",
            ));
        }
        Ok(Self { young, poisson })
    }

    /// Young's modulus E, Pa.
    pub fn young(&self) -> f64 {
        self.young
    }

    /// Poisson's ratio nu.
    pub fn poisson(&self) -> f64 {
        self.poisson
    }

    /// Shear modulus mu = E / (2 (1 + nu)), Pa.
    pub fn shear(&self) -> f64 {
        self.young / (2.0 * (1.0 + self.poisson))
    }

    /// Lame's first parameter lambda = E nu / ((1 + nu)(1 - 2 nu)), Pa.
    pub fn lambda(&self) -> f64 {
        self.young * self.poisson / ((1.0 + self.poisson) * (1.0 - 2.0 * self.poisson))
    }

    /// Cauchy stress of a displacement gradient `grad` (`grad[(i, j)] = d u_i / d x_j`, a column
    /// per derivative as glam stores it): Hooke's law on the symmetric part, Pa.
    pub fn stress_of_gradient(&self, grad: DMat3) -> DMat3 {
        let strain = (grad + grad.transpose()) * 0.5;
        self.stress_of_strain(strain)
    }

    /// Cauchy stress of a small strain, `2 mu eps + lambda tr(eps) I`, Pa.
    pub fn stress_of_strain(&self, strain: DMat3) -> DMat3 {
        let trace = strain.x_axis.x + strain.y_axis.y + strain.z_axis.z;
        strain * (2.0 * self.shear()) + DMat3::from_diagonal(DVec3::splat(self.lambda() * trace))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bem_material_refuses_bad_moduli_by_name() {
        for (e, nu) in [
            (0.0, 0.3),
            (f64::NAN, 0.3),
            (1e9, 0.5),
            (1e9, -1.0),
            (1e9, f64::INFINITY),
        ] {
            let error = Elastic::try_new(e, nu).unwrap_err().to_string();
            assert!(error.contains("Young") || error.contains("Poisson"), "{error}");
        }
    }

    #[test]
    fn bem_material_uniaxial_strain_of_uniaxial_stress() {
        // sigma = s e_x e_x has strain s / E along x and -nu s / E across: Hooke's law must return it.
        let m = Elastic::try_new(2.0e9, 0.3).unwrap();
        let s = 1.0e6;
        let strain = DMat3::from_diagonal(DVec3::new(
            s / m.young(),
            -m.poisson() * s / m.young(),
            -m.poisson() * s / m.young(),
        ));
        let sigma = m.stress_of_strain(strain);
        assert!((sigma.x_axis.x - s).abs() < 1e-9 * s);
        assert!(sigma.y_axis.y.abs() < 1e-9 * s && sigma.z_axis.z.abs() < 1e-9 * s);
    }
}
