//! Contacts as virtual displacements (Chen 2014 section 4), scaled by the impact's energy.
//!
//! The body is rigid, so its strain has to be made up: each contact pushes the surface
//! particles within the material's contact radius of its point along its impulse (into the
//! body), by a depth proportional to the impulse (a flat punch). How deep is set by energy, not
//! by the solver's penetration (which at 30 Hz is a one-step overshoot of a rigid solve, not a
//! property of the impact): the displacement is scaled so the elastic energy of the equilibrium
//! ([`super::elastic`]) equals the kinetic energy the contacts' impulses take out of the
//! relative motion, `sum_k |J_k|^2 / (2 m_k)` with `m_k` the pair's effective mass (the
//! body's mass against a static body). That is the energy stored at greatest compression of a
//! perfectly inelastic impact, an upper bound for any restitution. Stress then scales as
//! `v sqrt(m E_Y / V_zone)`, the classic impact-stress law, and does not change with the time
//! step.

use glam::DVec3;

use super::material::SphMaterial;
use super::solid::ParticleSolid;
use crate::error::FractureError;

/// A contact on an SPH body, in its material frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactLoad {
    /// Where the contact pushes, m.
    pub point: DVec3,
    /// The impulse the body received there, N s (pointing into the body).
    pub impulse: DVec3,
    /// The pair's effective mass `(1/m_a + 1/m_b)^-1` (the body's mass against a static body),
    /// kg.
    pub effective_mass: f64,
}

impl ContactLoad {
    /// Checks the values, naming the first bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        if !self.point.is_finite() {
            return Err(FractureError::invalid("contact point (m)", self.point, "finite"));
        }
        if !self.impulse.is_finite() {
            return Err(FractureError::invalid("contact impulse (N s)", self.impulse, "finite"));
        }
        if !(self.effective_mass.is_finite() && self.effective_mass > 0.0) {
            return Err(FractureError::invalid(
                "effective mass (kg)",
                self.effective_mass,
                "a positive finite number",
            ));
        }
        Ok(())
    }
}

/// The kinetic energy the contacts take out of the relative motion, `sum |J|^2 / (2 m)`, J.
pub fn impact_energy(contacts: &[ContactLoad]) -> f64 {
    contacts
        .iter()
        .map(|c| c.impulse.length_squared() / (2.0 * c.effective_mass))
        .sum()
}

/// The unscaled virtual displacement of `contacts` on `solid`: every surface particle within
/// the contact radius of a contact's point (or the nearest surface particle when none is)
/// moves by the contact's impulse taken as metres (the energy sets the scale later), summed
/// over contacts. Particles in ascending order.
pub fn virtual_displacement(
    solid: &ParticleSolid,
    surface: &[bool],
    material: &SphMaterial,
    contacts: &[ContactLoad],
) -> Vec<(usize, DVec3)> {
    let particles = solid.particles();
    let mut push = vec![DVec3::ZERO; solid.len()];
    let mut pushed = vec![false; solid.len()];
    for contact in contacts {
        let mut any = false;
        let mut nearest = (f64::INFINITY, usize::MAX);
        for (i, p) in particles.iter().enumerate() {
            if !surface[i] {
                continue;
            }
            let distance = (p.centroid - contact.point).length();
            if distance <= material.contact_radius {
                push[i] += contact.impulse;
                pushed[i] = true;
                any = true;
            }
            if distance < nearest.0 {
                nearest = (distance, i);
            }
        }
        if !any && nearest.1 != usize::MAX {
            push[nearest.1] += contact.impulse;
            pushed[nearest.1] = true;
        }
    }
    (0..solid.len()).filter(|&i| pushed[i]).map(|i| (i, push[i])).collect()
}
