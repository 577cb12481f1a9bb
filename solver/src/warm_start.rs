//! Warm starting: the previous step's impulses applied before the first sweep.
//!
//! A constraint's impulse changes little from one step to the next, so starting each row from last
//! step's impulse (carried by the caller in [`Row::warm`](crate::row::Row::warm)) leaves the
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
///
/// The kinetic energy the scaled set removes is credited to the pairs' `budgets` (J; clamp.rs),
/// each pair its rows' share, so the sweeps may give back what the warm start took too much of.
/// Without it a pair's budget holds only what the sweeps removed, which is next to nothing once
/// the warm start is good, and the random 1000-box pile at 60 Hz kept rocking at 4 cm/s for 20 s
/// where with it every box was asleep within 8 s.
///
/// The rows are read in two passes (bounds; `P` and the response), and the rest is summed per body
/// pair: `Q` and each pair's share of the energy read only the pair's summed impulse on its two
/// slots (`sum_i lambda_i J_i`, which is all its rows' `J_i` read of the response), and the scaled
/// set is applied as `scale` times each slot's summed response. A large island's prepared rows
/// are tens of megabytes, so each pass over them costs what its memory traffic does: the seven
/// passes this was written with first were a fifth of a 4000-body pile's solve, applying the set
/// row by row (a fourth pass) was 4 percent of the 210-box pyramid's step on two threads, and
/// reading the rows a third time for `Q` and the shares, 0.7 percent of its instructions.
pub(crate) fn warm_start(
    prepared: &[Prepared],
    rows: &[Row],
    lambdas: &mut [f64],
    velocities: &mut [Twist],
    (warm, scratch): (&mut Vec<f64>, &mut WarmScratch),
    budgets: &mut [f64],
    report: &mut SolveReport,
) {
    warm.clear();
    warm.resize(rows.len(), 0.0);
    // Friction rows are bounded by their normal rows' warm impulses: those that come after the
    // normal rows they read (the usual layout) are bounded in the same pass, the others after.
    let WarmScratch {
        response,
        clamped,
        pairs,
        deferred,
    } = scratch;
    deferred.clear();
    let mut unclamped = false;
    for (index, row) in prepared.iter().enumerate() {
        if !row.active {
            continue;
        }
        match row.friction() {
            Some((_, end, _)) if end > index => deferred.push(index),
            _ => {
                let (lower, upper) = bounds(row, warm);
                warm[index] = clamp(rows[index].warm, lower, upper);
            }
        }
        unclamped |= !row.energy_clamp && warm[index] != 0.0;
    }
    for &index in deferred.iter() {
        let row = &prepared[index];
        let (lower, upper) = bounds(row, warm);
        warm[index] = clamp(rows[index].warm, lower, upper);
        unclamped |= !row.energy_clamp && warm[index] != 0.0;
    }
    // Rows without the clamp first, so that the clamped set is measured at the velocities it acts on.
    if unclamped {
        for (index, row) in prepared.iter().enumerate() {
            if row.active && !row.energy_clamp && warm[index] != 0.0 {
                lambdas[index] = warm[index];
                row.apply(velocities, warm[index]);
            }
        }
    }
    // P = sum_i lambda_i J_i v; the response M^-1 sum_i J_i^T lambda_i gives Q below. Each body
    // pair keeps its rows' share of P and their summed impulse on each of its two slots.
    response.clear();
    response.resize(velocities.len(), Twist::default());
    pairs.clear();
    pairs.resize(budgets.len(), PairWarm::default());
    clamped.clear();
    let mut slope = 0.0;
    for (index, row) in prepared.iter().enumerate() {
        if row.active && row.energy_clamp && warm[index] != 0.0 {
            let lambda = warm[index];
            let before = lambda * row.relative_velocity(velocities);
            slope += before;
            row.apply(response, lambda);
            pairs[row.pair()].add(row, lambda, before);
            clamped.push(index as u32);
        }
    }
    // Q = sum_i lambda_i J_i M^-1 sum_k J_k^T lambda_k: each pair's summed impulses against the
    // response of its two slots (what its rows' `J_i` read of it).
    let mut curvature = 0.0;
    for pair in pairs.iter_mut().filter(|pair| pair.touched) {
        pair.response = pair.impulse[0].dot(&response[pair.slots[0] as usize])
            + pair.impulse[1].dot(&response[pair.slots[1] as usize]);
        curvature += pair.response;
    }
    let factor = clamp_row_increment_within(slope, curvature, 1.0, 0.0);
    let count = clamped.len();
    match factor.verdict {
        ClampVerdict::Scaled => report.scaled_increments += count,
        ClampVerdict::Dropped => report.dropped_increments += count,
        ClampVerdict::Kept | ClampVerdict::NoEffect => {}
    }
    // Each pair's share of the kinetic energy the scaled set removes, `-sum_i eps lambda_i J_i
    // (v + v') / 2` over its rows with `v' = v + eps response`, is the energy its rows removed so
    // far (the shares sum to the set's change). A pair's share can be negative: its rows added
    // energy that another pair's rows took out. The budgets (zero before the warm start) may hold
    // no more than the set removed in all, so the removing pairs are credited their shares scaled
    // down by the others' debts, and a pair in debt gets nothing: crediting each pair its own share
    // let the removing pairs give back all they took while the debt was never paid, and the solve
    // raised the kinetic energy (a box pushed by a warm-started contact into a box resting on the
    // ground: 0.366 J -> 0.444 J, solver/tests/clamp.proptest-regressions).
    let scale = factor.scale;
    if scale > 0.0 {
        let mut removed = 0.0;
        for (budget, pair) in budgets.iter_mut().zip(pairs.iter()).filter(|(_, pair)| pair.touched) {
            let share = -scale * (pair.before + 0.5 * scale * pair.response);
            *budget += share;
            removed += share;
        }
        let credited: f64 = budgets.iter().map(|b| b.max(0.0)).sum();
        let fraction = if credited > 0.0 {
            (removed / credited).clamp(0.0, 1.0)
        } else {
            0.0
        };
        for budget in budgets.iter_mut() {
            *budget = budget.max(0.0) * fraction;
        }
    }
    for &index in clamped.iter() {
        lambdas[index as usize] = warm[index as usize] * scale;
    }
    // The set's impulses change each slot's velocity by `scale` times its response, which the
    // second pass summed: one update per slot instead of another pass over the rows.
    if scale != 0.0 {
        for (velocity, response) in velocities.iter_mut().zip(response.iter()) {
            *velocity = velocity.add_scaled(response, scale);
        }
    }
}

/// One body pair's energy-clamped rows with a warm impulse, summed as the warm start measured them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PairWarm {
    /// The pair's two slots, the lower first.
    slots: [u32; 2],
    /// `sum_i lambda_i J_i` on each slot (its block of the rows' impulse), N s and N m s.
    impulse: [Twist; 2],
    /// `sum_i lambda_i J_i v` before the clamped rows act, J.
    before: f64,
    /// `sum_i lambda_i J_i r`, `r` the set's velocity response `M^-1 sum_k J_k^T lambda_k`, J.
    response: f64,
    /// Whether any of its rows has a warm impulse.
    touched: bool,
}

impl PairWarm {
    /// Adds `row`'s warm impulse `lambda` (N s), whose `lambda J v` is `before` (J).
    #[inline]
    fn add(&mut self, row: &Prepared, lambda: f64, before: f64) {
        let (low, high) = if row.a() <= row.b() {
            (&row.jacobian_a, &row.jacobian_b)
        } else {
            (&row.jacobian_b, &row.jacobian_a)
        };
        self.slots = [row.a().min(row.b()) as u32, row.a().max(row.b()) as u32];
        self.impulse = [
            self.impulse[0].add_scaled(low, lambda),
            self.impulse[1].add_scaled(high, lambda),
        ];
        self.before += before;
        self.touched = true;
    }
}

/// The warm start's memory, kept between solves (workspace.rs).
#[derive(Clone, Debug, Default)]
pub(crate) struct WarmScratch {
    /// Velocity response of the energy-clamped warm impulses per slot.
    response: Vec<Twist>,
    /// The energy-clamped rows with a warm impulse, in row order.
    clamped: Vec<u32>,
    /// Each body pair's share of them.
    pairs: Vec<PairWarm>,
    /// Friction rows bounded after the others.
    deferred: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use glam::{DMat3, DVec3};

    use crate::body::{NO_BODY, SolverBody};
    use crate::phases::start;
    use crate::row::Row;
    use crate::settings::SolverSettings;
    use crate::test_scenes::{FACE_CORNERS, push_flat_patch};
    use crate::workspace::SolverWorkspace;

    /// Two unit cubes of mass `m` falling together at `v`, one on the other on the ground, warm
    /// started with the normal impulses that stop them: `2 m v` under the lower cube, `m v` between
    /// them. The warm start removes both cubes' kinetic energy, `m v^2`, and credits all of it to
    /// the ground pair, whose rows did the work (`sum lambda J (v + v') / 2 = 2 m v (-v / 2)`); the
    /// cubes moved together, so the rows between them did none and their pair gets nothing.
    #[test]
    fn warm_start_credits_the_energy_it_removes_to_the_pairs_that_removed_it() {
        let (m, v) = (2.0, 0.5);
        let cube = SolverBody {
            linear_velocity: DVec3::new(0.0, -v, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0 / m,
            inverse_inertia: DMat3::from_diagonal(DVec3::splat(6.0 / m)),
        };
        let bodies = [cube, cube];
        let corners = FACE_CORNERS;
        let mut rows: Vec<Row> = Vec::new();
        push_flat_patch(&mut rows, &bodies, (0, NO_BODY));
        let upper_patch = rows.len();
        push_flat_patch(&mut rows, &bodies, (1, 0));
        for (index, row) in rows.iter_mut().enumerate() {
            if row.friction.is_none() {
                let load = if index < upper_patch { 2.0 } else { 1.0 };
                row.warm = load * m * v / corners.len() as f64;
            }
        }
        let mut workspace = SolverWorkspace::default();
        start(&mut workspace, &bodies, &rows, 1.0 / 30.0, &SolverSettings::default()).unwrap();
        for velocity in &workspace.velocities[..2] {
            assert!(velocity.linear().length() < 1e-15 && velocity.angular().length() < 1e-15);
        }
        let mut budgets = workspace.budgets.clone();
        budgets.sort_by(f64::total_cmp);
        assert_eq!(budgets.len(), 2);
        assert!(budgets[0].abs() < 1e-15, "between the cubes: {} J", budgets[0]);
        assert!(
            (budgets[1] - m * v * v).abs() < 1e-14,
            "ground: {} J, not {} J",
            budgets[1],
            m * v * v
        );
    }
}
