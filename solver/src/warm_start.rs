//! Warm starting: the previous step's impulses applied before the first sweep.
//!
//! A constraint's impulse changes little from one step to the next, so starting each row from last
//! step's `lambda` (carried by the caller in [`Row::lambda`](crate::row::Row::lambda)) leaves the
//! sweeps only the change to find (Catto's warm starting; measured in the tests: a resting stack that
//! needs hundreds of sweeps from zero needs one). Each incoming impulse is first clamped to the row's
//! bounds as they stand now, friction rows to `mu` times their normal row's incoming impulse.

use crate::clamp::clamp_row_increment_within;
use crate::pgs::{Prepared, bounds, clamp};
use crate::row::Row;
use crate::settings::SolveReport;
use crate::twist::Twist;
use shatter_integrators::ClampVerdict;

/// Applies the rows' incoming impulses, clamped to their bounds (non-friction rows first, so that
/// friction rows are bounded by their normal rows' warm impulses). Rows without the energy clamp are
/// applied as they are; the energy-clamped rows are applied together as one impulse scaled by Su's
/// factor for the whole set, `eps* = -2 P / Q` with `P = sum_i lambda_i J_i v` and
/// `Q = |sum_i J_i^T lambda_i|^2` in the metric `M^-1`: in a resting stack each body is pushed up by
/// the contact below and down by the one above, and only the sum is a physical impulse (clamped row
/// by row, the first contact alone would launch the bottom body and be cut back; measured on a
/// stack of six boxes, the warm-started solve then did not converge within 2000 sweeps, where the
/// warm start as one impulse leaves one sweep to do).
pub(crate) fn warm_start(
    prepared: &[Prepared],
    rows: &[Row],
    lambdas: &mut [f64],
    velocities: &mut [Twist],
    warm: &mut Vec<f64>,
    response: &mut Vec<Twist>,
    report: &mut SolveReport,
) {
    warm.clear();
    warm.resize(rows.len(), 0.0);
    for pass_friction in [false, true] {
        for (index, row) in prepared.iter().enumerate() {
            if row.active && row.friction.is_some() == pass_friction {
                let (lower, upper) = bounds(row, warm);
                warm[index] = clamp(rows[index].lambda, lower, upper);
            }
        }
    }
    // Rows without the clamp first, so that the clamped set is measured at the velocities it acts on.
    for (index, row) in prepared.iter().enumerate() {
        if row.active && !row.energy_clamp && warm[index] != 0.0 {
            lambdas[index] = warm[index];
            row.apply(velocities, warm[index]);
        }
    }
    // P = sum_i lambda_i J_i v; the response M^-1 sum_i J_i^T lambda_i gives Q below.
    response.clear();
    response.resize(velocities.len(), Twist::default());
    let mut slope = 0.0;
    for (index, row) in prepared.iter().enumerate() {
        if row.active && row.energy_clamp && warm[index] != 0.0 {
            slope += warm[index] * row.relative_velocity(velocities);
            row.apply(response, warm[index]);
        }
    }
    let clamped = || {
        prepared
            .iter()
            .zip(warm.iter())
            .filter(|(row, lambda)| row.active && row.energy_clamp && **lambda != 0.0)
    };
    let curvature: f64 = clamped()
        .map(|(row, lambda)| lambda * row.relative_velocity(response))
        .sum();
    let factor = clamp_row_increment_within(slope, curvature, 1.0, 0.0);
    let count = clamped().count();
    match factor.verdict {
        ClampVerdict::Scaled => report.scaled_increments += count,
        ClampVerdict::Dropped => report.dropped_increments += count,
        ClampVerdict::Kept | ClampVerdict::NoEffect => {}
    }
    for (index, row) in prepared.iter().enumerate() {
        if row.active && row.energy_clamp && warm[index] != 0.0 {
            let lambda = warm[index] * factor.scale;
            lambdas[index] = lambda;
            row.apply(velocities, lambda);
        }
    }
}
