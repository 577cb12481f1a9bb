//! One fracture event on an SPH solid: contacts to stress, stress to cracks, repeated.
//!
//! A pass builds the stencil on the solid as it now is (cracks already cut hide what lies
//! beyond them), solves the equilibrium of the contacts' virtual displacement scaled to the
//! impact's energy ([`super::load`]), and opens a crack at every Rankine start
//! ([`super::crack`]). The next pass sees the cracks of the last one, so stress gathers at
//! their fronts and cracks grow from there; the event stops at a pass with no stress above the
//! tensile strength, or after the set number of passes.

use glam::{DMat3, DVec3};

use super::crack::{CrackCut, CrackStart, open_crack, rankine_starts, rejoin_small_pieces};
use super::elastic::{EquilibriumSettings, solve_equilibrium};
use super::load::{ContactLoad, VirtualDepth, impact_energy, virtual_displacement};
use super::material::SphMaterial;
use super::solid::ParticleSolid;
use super::stencil::Stencil;
use super::stress::{particle_stresses, principal_stresses};
use crate::bem::principal::PrincipalStress;
use crate::error::FractureError;

/// How an event computes stress and cracks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrackSettings {
    /// Kernel support in particle radii.
    pub support: f64,
    /// How deep contacts push.
    pub depth: VirtualDepth,
    /// The equilibrium solve.
    pub equilibrium: EquilibriumSettings,
    /// Most stress passes per event.
    pub passes: usize,
    /// Most cracks a pass starts.
    pub max_cracks: usize,
    /// The smallest piece an event may leave, as a fraction of the body's volume: a smaller
    /// piece keeps the links that would have cut it off ([`rejoin_small_pieces`]).
    pub min_piece: f64,
}

impl Default for CrackSettings {
    fn default() -> Self {
        Self {
            support: 3.0,
            depth: VirtualDepth::ImpactEnergy,
            equilibrium: EquilibriumSettings::default(),
            passes: 3,
            max_cracks: 4,
            min_piece: 0.01,
        }
    }
}

/// The stress of a load on a solid.
#[derive(Clone, Debug, PartialEq)]
pub struct StressField {
    /// Displacement of every particle, m.
    pub displacement: Vec<DVec3>,
    /// Stress at every particle, Pa.
    pub stress: Vec<DMat3>,
    /// Its principal stresses.
    pub principal: Vec<PrincipalStress>,
    /// Elastic energy of the equilibrium: the impact's energy, J.
    pub energy: f64,
    /// Conjugate-gradient iterations of the equilibrium.
    pub iterations: usize,
    /// Their final relative residual.
    pub residual: f64,
    /// Particles whose gradient could not be corrected.
    pub uncorrected: usize,
}

/// The stress `contacts` cause in `solid`. A load with no energy (zero impulses) gives zero
/// stress. Fails naming a bad contact or material value.
pub fn stress_field(
    solid: &ParticleSolid,
    material: &SphMaterial,
    contacts: &[ContactLoad],
    settings: &CrackSettings,
) -> Result<StressField, FractureError> {
    material.validate()?;
    contacts.iter().try_for_each(ContactLoad::validate)?;
    if !(settings.support.is_finite() && settings.support > 1.0) {
        return Err(FractureError::invalid(
            "kernel support (particle radii)",
            settings.support,
            "a finite number above 1",
        ));
    }
    let stencil = Stencil::new(solid, settings.support);
    let surface: Vec<bool> = (0..solid.len()).map(|i| solid.is_surface(i)).collect();
    let prescribed = virtual_displacement(solid, &surface, material, contacts, settings.depth);
    let unit = solve_equilibrium(solid, material, &prescribed, &settings.equilibrium)?;
    let scale = match settings.depth {
        VirtualDepth::Penetration => 1.0,
        VirtualDepth::ImpactEnergy if unit.energy > 0.0 => (impact_energy(contacts) / unit.energy).sqrt(),
        VirtualDepth::ImpactEnergy => 0.0,
    };
    let displacement: Vec<DVec3> = unit.displacement.iter().map(|u| *u * scale).collect();
    let stress = particle_stresses(&stencil, material, &displacement);
    let principal = principal_stresses(&stress)?;
    Ok(StressField {
        displacement,
        stress,
        principal,
        energy: unit.energy * scale * scale,
        iterations: unit.iterations,
        residual: unit.residual,
        uncorrected: stencil.uncorrected(),
    })
}

/// One stress pass of an event.
#[derive(Clone, Debug, PartialEq)]
pub struct StressPass {
    /// The largest principal stress anywhere, Pa.
    pub max_stress: f64,
    /// Conjugate-gradient iterations of its equilibrium.
    pub iterations: usize,
    /// Their final relative residual.
    pub residual: f64,
    /// The cracks it opened.
    pub cracks: Vec<(CrackStart, CrackCut)>,
}

/// Everything an event did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrackReport {
    /// Its passes, in order.
    pub passes: Vec<StressPass>,
    /// Cut links given back so that no piece is smaller than the settings allow.
    pub restored: usize,
}

impl CrackReport {
    /// Links cut over the event.
    pub fn links_cut(&self) -> usize {
        self.passes.iter().flat_map(|p| &p.cracks).map(|(_, c)| c.cut).sum()
    }

    /// Links cut and kept cut over the event.
    pub fn links_kept_cut(&self) -> usize {
        self.links_cut() - self.restored
    }

    /// Particles split over the event.
    pub fn particles_split(&self) -> usize {
        self.passes.iter().flat_map(|p| &p.cracks).map(|(_, c)| c.split).sum()
    }

    /// Every crack's start, in order.
    pub fn starts(&self) -> impl Iterator<Item = &CrackStart> {
        self.passes.iter().flat_map(|p| &p.cracks).map(|(s, _)| s)
    }
}

/// Cracks `solid` under `contacts`: stress passes until none exceeds the tensile strength or
/// `settings.passes` have run. Fails, leaving `solid` as it was, naming a bad contact or value.
pub fn crack_solid(
    solid: &mut ParticleSolid,
    material: &SphMaterial,
    contacts: &[ContactLoad],
    settings: &CrackSettings,
) -> Result<CrackReport, FractureError> {
    let mut work = solid.clone();
    let mut report = CrackReport::default();
    let mut cuts = Vec::new();
    for _ in 0..settings.passes {
        let field = stress_field(&work, material, contacts, settings)?;
        let max_stress = field
            .principal
            .iter()
            .map(|p| p.values[0])
            .fold(f64::NEG_INFINITY, f64::max);
        let starts = rankine_starts(&work, &field.principal, material, settings.max_cracks);
        let cracks: Vec<(CrackStart, CrackCut)> = starts
            .into_iter()
            .map(|start| (start, open_crack(&mut work, &start, material, &mut cuts)))
            .collect();
        let opened = cracks.iter().any(|(_, c)| c.cut > 0 || c.split > 0);
        report.passes.push(StressPass {
            max_stress,
            iterations: field.iterations,
            residual: field.residual,
            cracks,
        });
        if !opened {
            break;
        }
    }
    let min_volume = settings.min_piece * work.volume();
    report.restored = rejoin_small_pieces(&mut work, &cuts, min_volume);
    *solid = work;
    Ok(report)
}
