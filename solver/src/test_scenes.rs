//! Contact scenes shared by the unit tests of several modules.

use glam::DVec3;
use shatter_integrators::SplitMix64;

use crate::body::SolverBody;
use crate::patch::{ContactPatch, PatchPoint, push_patch_rows};
use crate::pgs::{Prepared, prepare};
use crate::row::Row;
use crate::settings::SolverSettings;
use crate::softness::Softness;

/// The four corners `(x, z)` of a unit box's face, m from its centre: the contact points of a
/// unit box resting flat on another or on the world.
pub(crate) const FACE_CORNERS: [(f64, f64); 4] = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)];

/// The rows of a unit box `a` resting flat on `b` (a unit box or the world), touching at its four
/// [`FACE_CORNERS`] without penetration, with friction 0.5 and Su's clamp.
pub(crate) fn push_flat_patch(rows: &mut Vec<Row>, bodies: &[SolverBody], (a, b): (u32, u32)) {
    let no_depth = (&mut SplitMix64::new(0), (0.0, 0.0));
    push_stacked_patch(rows, bodies, (a, b), &FACE_CORNERS, no_depth, (0.5, true));
}

/// The rows of a patch between a box `a` resting on `b` (a box or the world), both 1 m tall, at
/// the `corners` `(x, z)` of the contact face (m, from the boxes' centres), each point's depth
/// drawn from `depths` (m), with Coulomb friction `friction` and Su's clamp where `clamped`.
pub(crate) fn push_stacked_patch(
    rows: &mut Vec<Row>,
    bodies: &[SolverBody],
    (a, b): (u32, u32),
    corners: &[(f64, f64)],
    (rng, depths): (&mut SplitMix64, (f64, f64)),
    (friction, clamped): (f64, bool),
) {
    let points: Vec<PatchPoint> = corners
        .iter()
        .map(|&(x, z)| PatchPoint {
            arm_a: DVec3::new(x, -0.5, z),
            arm_b: DVec3::new(x, 0.5, z),
            normal: DVec3::Y,
            depth: rng.range(depths.0, depths.1),
        })
        .collect();
    let patch = ContactPatch {
        a,
        b,
        points: &points,
        normal: DVec3::Y,
        friction,
        softness: Softness::rigid(0.2),
        energy_clamp: clamped,
        friction_direction: None,
    };
    push_patch_rows(rows, bodies, &patch, 1.0 / 30.0).unwrap();
}

/// `rows` prepared against `bodies` for a step of `dt` (s) with the default solver settings.
pub(crate) fn prepare_rows(rows: &[Row], bodies: &[SolverBody], dt: f64) -> Vec<Prepared> {
    let settings = SolverSettings::default();
    rows.iter().map(|row| prepare(row, bodies, dt, &settings)).collect()
}
