//! One fracture event (Su 2009 section 4.2): place the pattern on the impact, cut the parent's
//! lattice into components, group them into fragments, give each its level set and surface
//! particles (`super::cutter`, which makes them hold the fragment's cells) and its mass
//! properties, and describe it as a body that carries its share of the parent's momentum.

use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::{Aabb, BodyMassProperties, Pose, SdfGrid};
use shatter_engine::BodyDesc;
use shatter_integrators::RigidState;

use super::cutter::Cutter;
use super::intersect::{Debris, Grouping, Intersection, NONE, group, intersect};
use super::pattern::FracturePattern;
use super::placement::{Alignment, Placement};
use crate::error::FractureError;
use crate::fragments::{LevelSetPiece, ParentMomentum, ParentMotion, assembly_motion, level_set_fragment_desc};

/// The body being broken, as the event needs it.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    /// Its level set on its lattice, body frame (negative inside, m).
    pub level_set: &'a SdfGrid,
    /// Its surface particles, body frame.
    pub particles: &'a [DVec3],
    /// Its pose in the world.
    pub pose: Pose,
    /// Its mass, kg.
    pub mass: f64,
    /// Its momentum, world frame.
    pub momentum: ParentMomentum,
}

/// How a fracture event cuts and what it keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShatterSettings {
    /// How the pattern is aligned with the impact.
    pub alignment: Alignment,
    /// Fragments below this volume are debris, m^3.
    pub min_fragment_volume: f64,
    /// What happens to debris.
    pub debris: Debris,
    /// Distance between the particles made on cut faces, m.
    pub particle_spacing: f64,
}

/// What a fracture event made.
#[derive(Clone, Debug)]
pub struct Shattered {
    /// Where the pattern was placed, parent body frame.
    pub placement: Placement,
    /// The fragments, ready to spawn (the parent is to be removed).
    pub fragments: Vec<BodyDesc>,
    /// The pattern region each fragment came from (its largest part's).
    pub regions: Vec<u32>,
    /// Mass of the debris taken out of the world, kg.
    pub removed_mass: f64,
    /// Momentum the removed debris carried away, world frame.
    pub removed_momentum: ParentMomentum,
    /// The rigid motion the fragments share (see [`assembly_motion`]).
    pub motion: ParentMotion,
    /// Volume of the parent's cells, m^3 (its mass over this is the fragments' density).
    pub cell_volume: f64,
}

/// Breaks `parent` with `pattern` for an impact at body-frame `point` pushing along body-frame
/// `normal`. Changes nothing anywhere: the caller spawns the fragments and removes the parent.
/// Fails naming a bad point, normal, setting or mass, or a parent with no inside.
pub fn shatter(
    parent: &Parent<'_>,
    pattern: &FracturePattern,
    point: DVec3,
    normal: DVec3,
    settings: &ShatterSettings,
) -> Result<Shattered, FractureError> {
    if !(settings.particle_spacing.is_finite() && settings.particle_spacing > 0.0) {
        return Err(FractureError::invalid(
            "particle spacing (m)",
            settings.particle_spacing,
            "a positive length",
        ));
    }
    if !(settings.min_fragment_volume.is_finite() && settings.min_fragment_volume >= 0.0) {
        return Err(FractureError::invalid(
            "minimum fragment volume (m^3)",
            settings.min_fragment_volume,
            "zero or a positive volume",
        ));
    }
    if !(parent.mass.is_finite() && parent.mass > 0.0) {
        return Err(FractureError::invalid(
            "parent mass (kg)",
            parent.mass,
            "a positive finite mass",
        ));
    }
    let body = parent.level_set;
    let spacing = body.spec().spacing;
    let bounds =
        inside_box(body).ok_or_else(|| FractureError::input("the body to break has no inside on its lattice"))?;
    let placement = Placement::new(pattern, body.spec(), bounds, point, normal, settings.alignment)?;
    let cut = intersect(body, pattern, &placement);
    let cell = spacing * spacing * spacing;
    let min_cells = (settings.min_fragment_volume / cell).ceil() as usize;
    let grouping = group(body, &cut, min_cells, settings.debris);
    let total_cells: usize = cut.parts.iter().map(|p| p.cells()).sum();
    let cell_volume = total_cells as f64 * cell;
    let density = parent.mass / cell_volume;

    // Mass properties of every fragment and of every removed piece: the motion that carries the
    // parent's momentum is shared by all of them.
    let integrals = |components: &[u32]| {
        components
            .iter()
            .map(|&c| cut.parts[c as usize].integrals(body.spec()))
            .fold(Default::default(), |sum: shatter_collision::VolumeIntegrals, i| {
                sum.plus(i)
            })
    };
    let fragment_mass: Vec<BodyMassProperties> = grouping
        .fragments
        .iter()
        .map(|f| BodyMassProperties::from_integrals(integrals(f), density))
        .collect::<Result<_, _>>()?;
    let removed_mass: Vec<BodyMassProperties> = grouping
        .removed
        .iter()
        .map(|&c| BodyMassProperties::from_integrals(integrals(&[c]), density))
        .collect::<Result<_, _>>()?;
    let everything: Vec<BodyMassProperties> = fragment_mass.iter().chain(&removed_mass).copied().collect();
    let motion = assembly_motion(&everything, &parent.pose, &parent.momentum)?;
    let removed_momentum = removed_mass
        .iter()
        .map(|piece| {
            let position = parent.pose.transform_point(piece.center_of_mass);
            let state = RigidState::moving(
                position,
                parent.pose.orientation * piece.principal_frame,
                motion.linear_velocity + motion.angular_velocity.cross(position - motion.centre),
                motion.angular_velocity,
            );
            ParentMomentum::of(&state, &piece.mass)
        })
        .fold(ParentMomentum::default(), |sum, m| sum + m);

    let fragment_of = fragment_of_component(&cut, &grouping);
    let cutter = Cutter {
        body,
        pattern,
        placement: &placement,
        cut: &cut,
        grouping: &grouping,
        fragment_of: &fragment_of,
    };
    let pieces = cutter.fragments(parent.particles, settings.particle_spacing)?;
    // Each fragment's body on its own (collected in fragment order, the first failure kept).
    let fragments = pieces
        .into_par_iter()
        .zip(fragment_mass.par_iter())
        .map(|((level_set, particles), &mass)| {
            let piece = LevelSetPiece {
                mass,
                level_set,
                particles,
            };
            level_set_fragment_desc(piece, &parent.pose, &motion)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Shattered {
        placement,
        fragments,
        regions: grouping
            .fragments
            .iter()
            .map(|f| cut.parts[f[0] as usize].region)
            .collect(),
        removed_mass: removed_mass.iter().map(|p| p.mass.mass()).sum(),
        removed_momentum,
        motion,
        cell_volume,
    })
}

/// The box of a level set's inside samples grown by half a spacing (the cells they stand for).
fn inside_box(body: &SdfGrid) -> Option<Aabb> {
    body.inside_samples_box().map(|b| b.expanded(0.5 * body.spec().spacing))
}

/// The fragment of every component ([`NONE`] for removed ones).
fn fragment_of_component(cut: &Intersection, grouping: &Grouping) -> Vec<u32> {
    let mut fragment_of = vec![NONE; cut.parts.len()];
    for (f, components) in grouping.fragments.iter().enumerate() {
        for &c in components {
            fragment_of[c as usize] = f as u32;
        }
    }
    fragment_of
}
