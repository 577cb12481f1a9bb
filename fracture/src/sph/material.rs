//! The material of an SPH solid: density, isotropic linear elasticity, and how it cracks.

use crate::error::FractureError;

/// What an SPH solid is made of and how it cracks (Chen 2014 sections 2 and 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphMaterial {
    /// Density, kg/m^3.
    pub density: f64,
    /// Young's modulus, Pa.
    pub young: f64,
    /// Poisson's ratio, dimensionless, in (-1, 0.5).
    pub poisson: f64,
    /// Rankine threshold: a crack starts where the largest principal stress exceeds it, Pa.
    pub tensile_strength: f64,
    /// Links crossing a crack plane within this distance of the crack's origin are cut, m.
    pub crack_radius: f64,
    /// Radius of the patch of surface particles a contact pushes, m.
    pub contact_radius: f64,
    /// Split particles touched by a crack 1-to-12 before cutting (Chen 2014 section 6).
    pub subdivision: bool,
    /// How many times a particle may be split: 1 splits the mesh's own particles once.
    pub max_level: u8,
}

impl SphMaterial {
    /// Brick-like defaults at `tensile_strength` (Pa) and `crack_radius` (m): density 1800
    /// kg/m^3, E = 10 GPa, nu = 0.2, contact patch the crack radius, subdivision on, one level.
    pub fn brittle(tensile_strength: f64, crack_radius: f64) -> Self {
        Self {
            density: 1800.0,
            young: 1.0e10,
            poisson: 0.2,
            tensile_strength,
            crack_radius,
            contact_radius: crack_radius,
            subdivision: true,
            max_level: 1,
        }
    }

    /// Checks every value, naming the first bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        let positive = [
            ("density (kg/m^3)", self.density),
            ("Young's modulus (Pa)", self.young),
            ("tensile strength (Pa)", self.tensile_strength),
            ("crack radius (m)", self.crack_radius),
            ("contact radius (m)", self.contact_radius),
        ];
        for (what, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(FractureError::invalid(what, value, "a positive finite number"));
            }
        }
        if !(self.poisson > -1.0 && self.poisson < 0.5) {
            return Err(FractureError::invalid(
                "Poisson's ratio",
                self.poisson,
                "a number in (-1, 0.5)",
            ));
        }
        Ok(())
    }

    /// Lame's first parameter lambda, Pa.
    pub fn lambda(&self) -> f64 {
        self.young * self.poisson / ((1.0 + self.poisson) * (1.0 - 2.0 * self.poisson))
    }

    /// The shear modulus mu, Pa.
    pub fn mu(&self) -> f64 {
        self.young / (2.0 * (1.0 + self.poisson))
    }
}
