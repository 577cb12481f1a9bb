//! Contacts as virtual displacements (Chen 2014 section 4), scaled by the impact's energy.
//!
//! The body is rigid, so its strain has to be made up: each contact pushes the surface
//! particles within the material's contact radius of its point into the body (a flat punch).
//! The paper pushes them by the penetration depth along the contact normal
//! ([`VirtualDepth::Penetration`]); by default ([`VirtualDepth::ImpactEnergy`]) they move along
//! the impulse by a depth proportional to it, and how deep is set by energy, not by the
//! solver's penetration (which at 30 Hz is a one-step overshoot of a rigid solve, not a
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
    /// Unit contact normal, pointing into the body.
    pub normal: DVec3,
    /// Penetration along the normal at the start of the step, m (negative: still apart).
    pub depth: f64,
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
        if !(self.normal.is_finite() && (self.normal.length() - 1.0).abs() <= 1e-6) {
            return Err(FractureError::invalid("contact normal", self.normal, "a unit vector"));
        }
        if !self.depth.is_finite() {
            return Err(FractureError::invalid("contact depth (m)", self.depth, "finite"));
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

/// How deep a contact pushes its patch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VirtualDepth {
    /// Along the impulse, scaled so the elastic energy is the impact's ([`impact_energy`]):
    /// independent of the time step and of how deep the rigid solve let the bodies sink.
    #[default]
    ImpactEnergy,
    /// Along the contact normal by the contact's penetration depth, as Chen 2014 writes it
    /// (at one step per frame that depth is what the rigid solve let through in the step).
    Penetration,
}

/// The virtual displacement of `contacts` on `solid`: every surface particle within the contact
/// radius of a contact's point (or the nearest surface particle when none is) moves by the
/// contact's push, summed over contacts. The push is the impulse taken as metres (unscaled: the
/// energy sets the scale later) or the normal times the penetration depth (at least zero), as
/// `depth` says. Particles in ascending order.
pub fn virtual_displacement(
    solid: &ParticleSolid,
    surface: &[bool],
    material: &SphMaterial,
    contacts: &[ContactLoad],
    depth: VirtualDepth,
) -> Vec<(usize, DVec3)> {
    let particles = solid.particles();
    let mut push = vec![DVec3::ZERO; solid.len()];
    let mut pushed = vec![false; solid.len()];
    for contact in contacts {
        let by = match depth {
            VirtualDepth::ImpactEnergy => contact.impulse,
            VirtualDepth::Penetration => contact.normal * contact.depth.max(0.0),
        };
        let mut any = false;
        let mut nearest = (f64::INFINITY, usize::MAX);
        for (i, p) in particles.iter().enumerate() {
            if !surface[i] {
                continue;
            }
            let distance = (p.centroid - contact.point).length();
            if distance <= material.contact_radius {
                push[i] += by;
                pushed[i] = true;
                any = true;
            }
            if distance < nearest.0 {
                nearest = (distance, i);
            }
        }
        if !any && nearest.1 != usize::MAX {
            push[nearest.1] += by;
            pushed[nearest.1] = true;
        }
    }
    (0..solid.len()).filter(|&i| pushed[i]).map(|i| (i, push[i])).collect()
}
