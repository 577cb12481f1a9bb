//! Warm starting: the previous step's impulses applied before the first sweep.
//!
//! A constraint's impulse changes little from one step to the next, so starting each row from last
//! step's impulse (carried by the caller in [`Row::warm`](crate::row::Row::warm)) leaves the
//! sweeps only the change to find (Catto's warm starting; measured in the tests: a resting stack that
//! needs hundreds of sweeps from zero needs one). Each incoming impulse is first clamped to the row's
//! bounds as they stand now, friction rows to `mu` times their normal row's incoming impulse.

use crate::body::SlotMass;
use crate::clamp::clamp_row_increment_within;
use crate::pgs::{Prepared, bounds, clamp};
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
/// reading the rows a third time for `Q` and the shares, 0.7 percent of its instructions. The
/// response is summed as `J^T lambda` per slot, `M^-1` (the slots' `masses`) applied once per
/// slot: the prepared rows keep no `M^-1 J^T` (pgs.rs), and forming it row by row took 4 percent
/// more instructions for the pyramid's whole step. Each slot's `J^T lambda` is the sum of its
/// pairs' summed impulses on it, added pair by pair: summed row by row as well, into the slots
/// beside the pairs, it took 1.3 percent more instructions for the pyramid's step (6.66 against
/// 6.58 million, `tools/instructions.sh`) and 0.4 percent more for the random 1000-cube pile's.
///
/// Tried and dropped: reading the rows in fixed chunks of 512 on the pool, each chunk summing its
/// pairs' runs, the chunks' sums added in order (the same bits on any thread count). The
/// pyramid's step on two threads went 0.46 -> 0.48 ms (seven interleaved rounds) and its
/// instructions back up by as much as the pair-by-pair sum had saved.
pub(crate) fn warm_start(
    prepared: &[Prepared],
    lambdas: &mut [f64],
    (velocities, masses): (&mut [Twist], &[SlotMass]),
    (warm, scratch): (&mut Vec<f64>, &mut WarmScratch),
    budgets: &mut [f64],
    report: &mut SolveReport,
) {
    warm.clear();
    warm.resize(prepared.len(), 0.0);
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
                warm[index] = clamp(row.incoming, lower, upper);
            }
        }
        unclamped |= !row.energy_clamp && warm[index] != 0.0;
    }
    for &index in deferred.iter() {
        let row = &prepared[index];
        let (lower, upper) = bounds(row, warm);
        warm[index] = clamp(row.incoming, lower, upper);
        unclamped |= !row.energy_clamp && warm[index] != 0.0;
    }
    // Rows without the clamp first, so that the clamped set is measured at the velocities it acts on.
    if unclamped {
        for (index, row) in prepared.iter().enumerate() {
            if row.active && !row.energy_clamp && warm[index] != 0.0 {
                lambdas[index] = warm[index];
                row.apply(masses, velocities, warm[index]);
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
            pairs[row.pair()].add(row, lambda, before);
            clamped.push(index as u32);
        }
    }
    // `J^T lambda` on each slot, its pairs' summed impulses on it, then `M^-1` once per slot.
    for pair in pairs.iter().filter(|pair| pair.touched) {
        for (&slot, impulse) in pair.slots.iter().zip(&pair.impulse) {
            response[slot as usize] = response[slot as usize].plus(impulse);
        }
    }
    for (slot, mass) in response.iter_mut().zip(masses) {
        *slot = mass.response(slot);
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

    /// The warm start's bookkeeping against the formulas computed row by row, on three boxes with
    /// random masses, inertias and velocities resting on each other and the ground in both row
    /// orientations (a row's body A above or below its body B) and random incoming impulses: `P =
    /// sum_i lambda_i J_i v`, the response `r = M^-1 sum_i J_i^T lambda_i`, `Q = sum_i lambda_i J_i
    /// r`, Su's factor `eps` from them, each pair's share `-eps sum_i lambda_i J_i (v + eps r / 2)`
    /// of the energy removed (its rows' only), the credited budgets, the velocities `v + eps r`
    /// and the impulses `eps lambda_i`. Seeds are drawn until both a kept and a scaled set occur.
    #[test]
    fn warm_start_sums_per_pair_are_the_row_by_row_formulas() {
        use shatter_integrators::SplitMix64;

        use crate::clamp::clamp_row_increment_within;

        let mut rng = SplitMix64::new(17);
        let (mut kept, mut scaled) = (0, 0);
        for _ in 0..64 {
            let bodies: Vec<SolverBody> = (0..3)
                .map(|_| {
                    let v = |rng: &mut SplitMix64| {
                        DVec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0))
                    };
                    let inertia = DVec3::new(rng.range(0.2, 2.0), rng.range(0.2, 2.0), rng.range(0.2, 2.0));
                    SolverBody {
                        linear_velocity: v(&mut rng),
                        angular_velocity: v(&mut rng),
                        inverse_mass: rng.range(0.2, 2.0),
                        inverse_inertia: DMat3::from_diagonal(inertia),
                    }
                })
                .collect();
            let world = bodies.len() as u32;
            let mut rows: Vec<Row> = Vec::new();
            for pair in [(0, NO_BODY), (1, 0), (2, 1), (0, 2)] {
                push_flat_patch(&mut rows, &bodies, pair);
            }
            for row in rows.iter_mut() {
                row.warm = if row.friction.is_none() {
                    rng.range(0.0, 2.0)
                } else {
                    0.0
                };
            }
            let mut workspace = SolverWorkspace::default();
            start(&mut workspace, &bodies, &rows, 1.0 / 30.0, &SolverSettings::default()).unwrap();

            // Row by row: slot velocities (the world's zero) and each row's two sides.
            let slot = |body: u32| if body == NO_BODY { world } else { body };
            let velocity = |body: u32| {
                bodies
                    .get(slot(body) as usize)
                    .map_or((DVec3::ZERO, DVec3::ZERO), |b| (b.linear_velocity, b.angular_velocity))
            };
            let mut response = vec![(DVec3::ZERO, DVec3::ZERO); bodies.len() + 1];
            let set: Vec<&Row> = rows.iter().filter(|row| row.warm != 0.0).collect();
            let side = |row: &Row, a: bool| {
                let j = &row.jacobian;
                if a {
                    (row.a, j.linear_a, j.angular_a)
                } else {
                    (row.b, j.linear_b, j.angular_b)
                }
            };
            let jv = |row: &Row, of: &dyn Fn(u32) -> (DVec3, DVec3)| {
                [true, false]
                    .iter()
                    .map(|&a| {
                        let (body, linear, angular) = side(row, a);
                        let (v, w) = of(body);
                        linear.dot(v) + angular.dot(w)
                    })
                    .sum::<f64>()
            };
            for row in &set {
                for a in [true, false] {
                    let (body, linear, angular) = side(row, a);
                    if let Some(b) = bodies.get(slot(body) as usize) {
                        let r = &mut response[slot(body) as usize];
                        r.0 += row.warm * b.inverse_mass * linear;
                        r.1 += row.warm * (b.inverse_inertia * angular);
                    }
                }
            }
            let slope: f64 = set.iter().map(|row| row.warm * jv(row, &velocity)).sum();
            let of_response = |body: u32| response[slot(body) as usize];
            let curvature: f64 = set.iter().map(|row| row.warm * jv(row, &of_response)).sum();
            let eps = clamp_row_increment_within(slope, curvature, 1.0, 0.0).scale;
            if eps == 1.0 {
                kept += 1
            } else if eps > 0.0 {
                scaled += 1
            }
            // Shares by unordered slot pair, in the order the solver numbers its pairs.
            let mut shares: Vec<(u64, f64)> = Vec::new();
            for row in &set {
                let (a, b) = (slot(row.a) as u64, slot(row.b) as u64);
                let key = (a.min(b) << 32) | a.max(b);
                let share = -eps * row.warm * (jv(row, &velocity) + 0.5 * eps * jv(row, &of_response));
                match shares.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 += share,
                    None => shares.push((key, share)),
                }
            }
            shares.sort_by_key(|(key, _)| *key);
            let removed: f64 = shares.iter().map(|(_, share)| share).sum();
            let credited: f64 = shares.iter().map(|(_, share)| share.max(0.0)).sum();
            let fraction = if credited > 0.0 {
                (removed / credited).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let scale = curvature.abs() + slope.abs();
            assert_eq!(workspace.budgets.len(), shares.len());
            for ((_, share), budget) in shares.iter().zip(&workspace.budgets) {
                let expected = if eps > 0.0 { share.max(0.0) * fraction } else { 0.0 };
                assert!(
                    (budget - expected).abs() <= 1e-12 * scale,
                    "budget {budget} J, expected {expected} J"
                );
            }
            for (k, body) in bodies.iter().enumerate() {
                let (v, w) = (workspace.velocities[k].linear(), workspace.velocities[k].angular());
                let expected = (
                    body.linear_velocity + eps * response[k].0,
                    body.angular_velocity + eps * response[k].1,
                );
                assert!(
                    (v - expected.0).length() + (w - expected.1).length() <= 1e-12 * (1.0 + scale),
                    "body {k}"
                );
            }
            for (index, row) in rows.iter().enumerate() {
                assert!((workspace.lambdas[index] - eps * row.warm).abs() <= 1e-15 * (1.0 + row.warm));
            }
        }
        assert!(kept > 0 && scaled > 0, "kept {kept}, scaled {scaled} of 64 sets");
    }
}
