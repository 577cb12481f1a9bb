//! One shock group solved as a block: a body against supports held still, all its rows at once.
//!
//! A shock group (shock.rs) is every row between one moving body and the lower-level bodies it
//! rests on, with those supports frozen. Gauss-Seidel over such a group converges slowly: the rows
//! of a box on two supports (two patches of four corners, two tangents and a twist each) couple
//! through the box's rotation. Measured on the 210-box pyramid at 30 Hz, every group still changed
//! by 2e-5 m/s after 20 iterations, because the supports' frozen velocities differ by about 1e-6 m/s
//! and the corner rows ask for slightly incompatible velocities; the pass was 30 percent of the step.
//!
//! The group is a small linear complementarity problem in the moving body's six velocities, so it
//! is solved directly under a guess of each row's role (a block principal pivoting method):
//!
//! - a *free* row is an unknown: its `J v' + CFM/h lambda = target` holds exactly;
//! - an *idle* normal row is held at `lambda = 0`;
//! - a *sliding* friction row is held at its bound, `lambda = s mu sum(lambda_n)` over its patch's
//!   normal rows with the sign `s` of the slip, which stays linear in the unknowns.
//!
//! With `J` the free rows' moving-side Jacobians, `R = M^-1 J^T` the responses and `Sigma` their
//! `CFM / h`, each guess solves
//!
//! ```text
//! (J R + J R_s S mu + Sigma + eps I) delta = target - J v_held - Sigma lambda,
//! ```
//!
//! where `R_s S mu` carries a sliding row's impulse over to the normal rows it follows and `v_held`
//! is the velocity after the held rows' impulses. The matrix is unsymmetric with sliding rows and
//! singular with redundant rows (four coplanar corners constrain three velocities), so it is solved
//! directly (through its 6 x 6 capacitance matrix, free_rows.rs) after adding `eps`, `1e-8` of its
//! largest diagonal entry, and filtered by it: of all impulses that satisfy the rows, that picks
//! (nearly) the ones closest to the warm-started impulses, and rows asking for incompatible
//! velocities (a body pinched between supports closing on it) get the least-squares compromise
//! with the smallest impulses, not opposing impulses that grow as `1 / eps` (free_rows.rs). Rows
//! that can hold are then off by about `eps` times the impulse change, as if they had a CFM of
//! that size for this pass (solved to `Accuracy::Refined`, a second filtered solve of what is left
//! takes that to round-off: the load pass and the shock pass of an island nearly at rest do so,
//! free_rows.rs). With the unfiltered solve, larger `eps` was measurably worse (1e-6: 12
//! percent slower pyramid, 1e-4: 44 percent) and smaller let the incompatibility through (1e-10:
//! three quarters of the pyramid's groups failed the checks below).
//!
//! After each solve the guess is checked against the group's LCP: a free normal row that pulls goes
//! idle, an idle one that approaches goes free, a free friction row past `mu` times its patch's new
//! normal impulse slides, and a sliding one whose row would rather slow down than slip goes free. A
//! guess that passes is the group's solution. It is kept only when, in addition, the kinetic energy
//! the group's rows give the moving body, `sum_i delta_i J_i (v + v') / 2` (exact: it is
//! `(v + v')^T M (v' - v) / 2`), is within the energy the group's body pairs have removed so far
//! (clamp.rs), taken together: the supports are frozen, so all of it is the one body's, and a
//! group that moves load from one support to another has one pair's rows add energy while the
//! other's remove more. Checked pair by pair instead, 134 of the pyramid's 210 groups per step
//! failed once each step was warm started from the sweeps' impulses (`Row::warm`), and their
//! Gauss-Seidel fallback doubled the step; taken together, all 210 pass. Each pair is then charged
//! its own share, a pair left short paid from the others' surplus, so no budget goes below zero
//! and the solve still never raises the kinetic energy.
//!
//! The first two guesses change every row that breaks a condition at once; later ones change only
//! the first such row, normal rows before friction rows (Murty's least-index rule, which cannot
//! cycle on a P-matrix LCP; friction makes this one no P-matrix, so it can still cycle: about one
//! group in eight of the random pile's does). After eight guesses, or on a degenerate system,
//! nothing is changed and the group falls back to Gauss-Seidel (shock.rs). A one-row-at-a-time
//! guess that repeats an earlier one-row-at-a-time guess gives up at once: each such guess follows
//! from the roles alone, so the rest would cycle through the same guesses and fail all the same
//! (measured on the random pile at 30 Hz, 3 s: of the 10 900 groups that reached the eighth guess,
//! 8 100 had come back to the third guess's roles at the fifth, and 9 100 had repeated by the
//! eighth).
//!
//! Only groups of up to 16 rows are tried (a box on two supports has 14): measured at 30 Hz, the
//! block settles 99.8 percent of the pyramid's groups (nearly all on the first guess), every group
//! of the aligned pile and 71 percent of the random pile's, and a box landing on the ground in 995
//! of 1000 random motions (tests/shock.rs).
//!
//! Measured on one thread (`pile_1000` at 60 Hz, the others at 30 Hz): the 210-box pyramid's step
//! from 4.4 to 2.5-3.4 ms and the aligned 1000-box pile's from 13.3 to 7.3 ms; the random pile is
//! unchanged within the noise (the block is 12 percent of its step and Gauss-Seidel on the groups it
//! leaves another 11).
//!
//! Rejected alternative: over-relaxed Gauss-Seidel within the group. It needs a relaxation factor
//! tuned to the group's conditioning and its overshoots are cut by the energy clamp.
//!
//! Rejected too: solving the split pass's groups (split.rs: each body's contact normal rows to its
//! supports, toward their split targets) as blocks in the same way. Their impulses start each
//! step from the split sweeps', not from a load that holds, so the first guesses are poor:
//! measured on the random 1000-cube pile at 30 Hz, one thread, 3.2 guesses a group, 1.9 us for
//! each group the block solved against 1.0 us for the 7.8 Gauss-Seidel iterations a group takes,
//! and 144 of 977 groups still failed (48 cycling, 95 out of guesses); the solve stage went from
//! 5.6 to 6.5 ms on two threads.

use crate::free_rows::{Accuracy, FreeSystem};
use crate::pgs::Prepared;
use crate::shock::{Frozen, moving_slot};
use crate::shock_state::GroupState;
use crate::twist::Twist;
use smallvec::SmallVec;

/// Largest group solved as a block, rows; larger ones (a body on many supports) only iterate.
pub(crate) const MAX_BLOCK_ROWS: usize = 16;

/// Regularization of the block matrix, relative to its largest diagonal entry.
pub(crate) const REGULARIZATION: f64 = 1e-8;

/// Most guesses of the rows' roles before the block gives up (each one a factorization).
const GUESSES: usize = 8;

/// Guesses that change every row breaking the LCP at once; later ones change one row at a time.
const WHOLE_SET_GUESSES: usize = 2;

/// What the block solve does with one row in the current guess.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Role {
    /// Its impulse is an unknown of the block system.
    Free,
    /// A normal row held at zero impulse.
    Idle,
    /// A friction row held at its bound, with this sign (+1 or -1).
    Sliding(f64),
}

/// One row of a group seen from its moving body.
#[derive(Clone, Copy)]
struct MovingRow {
    /// Index into the prepared rows.
    index: usize,
    /// Moving side of `J`.
    jacobian: Twist,
    /// Moving side of `M^-1 J^T`.
    response: Twist,
    /// The frozen side's part of `J v`, m/s (constant during the group).
    frozen: f64,
    /// `(first, end, mu)`: positions in the group of a friction row's patch normal rows, and its
    /// friction coefficient; `None` for a normal row.
    patch: Option<(usize, usize, f64)>,
    /// The row's impulse before the block, N s.
    old: f64,
    /// The row's impulse in the current guess, N s.
    new: f64,
    /// The row's part in the current guess.
    role: Role,
}

impl MovingRow {
    /// The row's `J v` with the moving body at `v`, m/s.
    #[inline]
    fn velocity(&self, v: &Twist) -> f64 {
        self.frozen + self.jacobian.dot(v)
    }
}

/// Tries to solve the group `group` (rows with their frozen side; all move the same body) as one
/// block, see the module docs, its free rows solved to `accuracy` (free_rows.rs). On success updates the rows' impulses, the moving body's velocity
/// and the pairs' energy budgets (J) in `state` and returns `true`; otherwise leaves everything as
/// it was.
pub(crate) fn solve_group<S: GroupState>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &mut S,
    tolerance: f64,
    accuracy: Accuracy,
) -> bool {
    let n = group.len();
    if !(2..=MAX_BLOCK_ROWS).contains(&n) {
        return false;
    }
    let Some(moving) = moving_slot(prepared, group) else {
        return false;
    };
    let v0 = state.velocity(moving);
    // Filled row by row: no default rows written first.
    let mut storage: SmallVec<[MovingRow; MAX_BLOCK_ROWS]> = SmallVec::new();
    if !gather(group, prepared, state, moving, &mut storage) {
        return false;
    }
    let rows = &mut storage[..];
    let mut tried: SmallVec<[u32; GUESSES]> = SmallVec::new();
    let mut system = FreeSystem::new(0);
    for guess in 0..GUESSES {
        if guess >= WHOLE_SET_GUESSES {
            let roles = roles_key(rows);
            if tried.contains(&roles) {
                return false; // A cycle (module docs).
            }
            tried.push(roles);
        }
        let Some(v1) = solve_guess(rows, prepared, &v0, (&mut system, accuracy)) else {
            return false;
        };
        if revise_guess(rows, prepared, &v1, tolerance, guess >= WHOLE_SET_GUESSES) {
            let finite = v1.is_finite();
            if !(finite && charge_budgets(rows, prepared, &v0, &v1, state)) {
                return false;
            }
            for row in rows.iter() {
                state.set_lambda(row.index, row.new);
            }
            state.set_velocity(moving, v1);
            return true;
        }
    }
    false
}

/// The roles of a group's rows (at most [`MAX_BLOCK_ROWS`]) as one number, two bits a row.
fn roles_key(rows: &[MovingRow]) -> u32 {
    const _: () = assert!(2 * MAX_BLOCK_ROWS <= u32::BITS as usize);
    rows.iter().enumerate().fold(0, |key, (k, row)| {
        let bits = match row.role {
            Role::Free => 0,
            Role::Idle => 1,
            Role::Sliding(sign) if sign > 0.0 => 2,
            Role::Sliding(_) => 3,
        };
        key | bits << (2 * k)
    })
}

/// Pushes onto `rows` (empty) the group's rows seen from the moving body (slot `moving`) and the first guess of their
/// roles: normal rows are free when they push or approach, friction rows are free. Returns `false`
/// when a friction row's patch is not in the group (then the group is left to Gauss-Seidel).
fn gather<S: GroupState>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &S,
    moving: usize,
    rows: &mut SmallVec<[MovingRow; MAX_BLOCK_ROWS]>,
) -> bool {
    let moving_velocity = state.velocity(moving);
    let mass = state.mass(moving);
    for &(index, frozen) in group {
        let row = &prepared[index];
        let (jacobian, response, frozen) = match frozen {
            Frozen::A => (
                row.jacobian_b,
                row.response_b(mass),
                row.side_a(&state.velocity(row.a())),
            ),
            Frozen::B => (
                row.jacobian_a,
                row.response_a(mass),
                row.side_b(&state.velocity(row.b())),
            ),
            Frozen::None => return false,
        };
        let old = state.lambda(index);
        let mut slot = MovingRow {
            index,
            jacobian,
            response,
            frozen,
            patch: None,
            old,
            new: old,
            role: Role::Free,
        };
        if row.friction().is_none() && !(old > 0.0 || slot.velocity(&moving_velocity) < row.target) {
            slot.role = Role::Idle;
        }
        rows.push(slot);
    }
    for k in 0..rows.len() {
        if let Some((start, end, mu)) = prepared[rows[k].index].friction() {
            // The group is sorted by row index, and a patch's normal rows are consecutive.
            let Some(first) = rows.iter().position(|other| other.index == start) else {
                return false;
            };
            let last = first + (end - start);
            if last > rows.len() || rows[last - 1].index != end - 1 {
                return false;
            }
            rows[k].patch = Some((first, last, mu));
            // A friction row starts sliding when its patch has no free normal row or when it
            // was at its bound already.
            let patch = &rows[first..last];
            let limit = mu * patch.iter().map(|normal| normal.old.abs()).sum::<f64>();
            let patch_free = patch.iter().any(|normal| normal.role == Role::Free);
            let old = rows[k].old;
            if !patch_free || (limit > 0.0 && old.abs() >= limit * (1.0 - SATURATED)) {
                rows[k].role = Role::Sliding(1.0_f64.copysign(old));
            }
        }
    }
    true
}

/// How close (relative) to its bound a friction row's impulse must be to start out sliding.
const SATURATED: f64 = 1e-9;

/// A sliding row's impulse: its sign times `mu` times its patch's normal impulses in `rows`.
#[inline]
fn sliding_impulse(rows: &[MovingRow], sign: f64, patch: (usize, usize, f64)) -> f64 {
    let (first, last, mu) = patch;
    sign * mu * rows[first..last].iter().map(|normal| normal.new).sum::<f64>()
}

/// Solves the block system of the current guess in `system` (the block's, written over): fills
/// every row's `new` impulse and returns the moving body's new velocity, or `None` when the
/// system is degenerate.
fn solve_guess(
    rows: &mut [MovingRow],
    prepared: &[Prepared],
    v0: &Twist,
    (system, accuracy): (&mut FreeSystem, Accuracy),
) -> Option<Twist> {
    let n = rows.len();
    // Column of each free row in the system; the impulses the held rows would have if the free
    // rows kept theirs.
    let mut column = [usize::MAX; MAX_BLOCK_ROWS];
    let mut free = [0usize; MAX_BLOCK_ROWS];
    let mut count = 0;
    for (k, row) in rows.iter_mut().enumerate() {
        match row.role {
            Role::Free => {
                column[k] = count;
                free[count] = k;
                count += 1;
                row.new = row.old;
            }
            Role::Idle | Role::Sliding(_) => row.new = 0.0,
        }
    }
    let free = &free[..count];
    for k in 0..n {
        if let (Role::Sliding(sign), Some(patch)) = (rows[k].role, rows[k].patch) {
            rows[k].new = sliding_impulse(rows, sign, patch);
        }
    }
    let mut base = *v0;
    for row in rows.iter().filter(|row| row.role != Role::Free) {
        base = base.add_scaled(&row.response, row.new - row.old);
    }
    if count > 0 {
        let mut delta = [0.0; MAX_BLOCK_ROWS];
        if !solve_free(
            rows,
            prepared,
            (free, &column),
            &base,
            &mut delta[..count],
            (system, accuracy),
        ) {
            return None;
        }
        for (&k, &d) in free.iter().zip(&delta) {
            rows[k].new = rows[k].old + d;
        }
        for k in 0..n {
            if let (Role::Sliding(sign), Some(patch)) = (rows[k].role, rows[k].patch) {
                rows[k].new = sliding_impulse(rows, sign, patch);
            }
        }
    }
    let mut v1 = *v0;
    for row in rows.iter() {
        v1 = v1.add_scaled(&row.response, row.new - row.old);
    }
    Some(v1)
}

/// Builds the free rows' system (module docs) in `system` with the held rows' velocity `base`
/// and solves it to `accuracy`: writes the free rows' impulse changes to `delta`; `false` when
/// the system is degenerate.
///
/// The matrix is `D + J W`: `D` diagonal (each row's `CFM / h` plus the regularization), `J` the
/// free rows' moving-side Jacobians and `W` the moving body's velocity change per unit of each free
/// row's impulse, its patch's sliding rows' share included (free_rows.rs solves it).
fn solve_free(
    rows: &[MovingRow],
    prepared: &[Prepared],
    (free, column): (&[usize], &[usize]),
    base: &Twist,
    delta: &mut [f64],
    (system, accuracy): (&mut FreeSystem, Accuracy),
) -> bool {
    let count = free.len();
    system.reset(count);
    let mut effect = [Twist::default(); MAX_BLOCK_ROWS];
    for (i, &k) in free.iter().enumerate() {
        effect[i] = rows[k].response;
    }
    for held in rows {
        if let (Role::Sliding(sign), Some((first, last, mu))) = (held.role, held.patch) {
            for normal in first..last {
                if column[normal] != usize::MAX {
                    effect[column[normal]] = effect[column[normal]].add_scaled(&held.response, sign * mu);
                }
            }
        }
    }
    let mut rhs = [0.0; MAX_BLOCK_ROWS];
    let mut largest: f64 = 0.0;
    for (i, &k) in free.iter().enumerate() {
        let (row, p) = (&rows[k], &prepared[rows[k].index]);
        system.jacobian[i] = row.jacobian.components();
        system.effect[i] = effect[i].components();
        system.diagonal[i] = p.cfm_over_h;
        largest = largest.max((row.jacobian.dot(&effect[i]) + p.cfm_over_h).abs());
        rhs[i] = p.target - row.velocity(base) - p.cfm_over_h * row.old;
    }
    if !(largest > 0.0 && largest.is_finite()) {
        return false;
    }
    let regularization = REGULARIZATION * largest;
    for d in &mut system.diagonal[..count] {
        *d += regularization;
    }
    system.solve(&rhs[..count], regularization, delta, accuracy)
}

/// Checks the guess (impulses `new`, velocity `v1`) against the group's LCP and moves the rows
/// that break it to another role (module docs); with `one_at_a_time`, only the first of them, normal
/// rows before friction rows (Murty's least-index rule, which cannot cycle where whole-set changes
/// can). Returns `true` when nothing had to move.
fn revise_guess(
    rows: &mut [MovingRow],
    prepared: &[Prepared],
    v1: &Twist,
    tolerance: f64,
    one_at_a_time: bool,
) -> bool {
    let mut roles = [Role::Free; MAX_BLOCK_ROWS];
    for (k, row) in rows.iter().enumerate() {
        let p = &prepared[row.index];
        let residual = p.target - row.velocity(v1) - p.cfm_over_h * row.new;
        let slack = tolerance.max(1e-9 * p.target.abs());
        roles[k] = match (row.patch, row.role) {
            (None, Role::Free) if row.new < 0.0 => Role::Idle,
            (None, Role::Idle) if residual > slack => Role::Free,
            (Some((first, last, mu)), role) => {
                let limit = (mu * rows[first..last].iter().map(|normal| normal.new).sum::<f64>()).max(0.0);
                match role {
                    Role::Free if row.new.abs() > limit => Role::Sliding(1.0_f64.copysign(row.new)),
                    Role::Sliding(sign) if limit > 0.0 && residual * sign < -slack => Role::Free,
                    role => role,
                }
            }
            (None, role) => role,
        };
    }
    let mut settled = true;
    for normal_rows in [true, false] {
        for k in 0..rows.len() {
            if rows[k].patch.is_none() == normal_rows && roles[k] != rows[k].role {
                rows[k].role = roles[k];
                settled = false;
                if one_at_a_time {
                    return false;
                }
            }
        }
    }
    settled
}

/// Charges the group's body pairs with the kinetic energy their rows' increments give the moving
/// body, `sum_i delta_i J_i (v0 + v1) / 2` (J), if their budgets together can afford it (module
/// docs); returns whether it did (nothing is charged otherwise).
fn charge_budgets<S: GroupState>(
    rows: &[MovingRow],
    prepared: &[Prepared],
    v0: &Twist,
    v1: &Twist,
    state: &mut S,
) -> bool {
    let mean = v0.mean(v1);
    let mut work = [(usize::MAX, 0.0); MAX_BLOCK_ROWS];
    let mut pairs = 0;
    for row in rows {
        let p = &prepared[row.index];
        if !p.energy_clamp || row.new == row.old {
            continue;
        }
        let w = (row.new - row.old) * row.jacobian.dot(&mean);
        match work[..pairs].iter_mut().find(|(pair, _)| *pair == p.pair()) {
            Some(entry) => entry.1 += w,
            None => {
                work[pairs] = (p.pair(), w);
                pairs += 1;
            }
        }
    }
    let work = &work[..pairs];
    let total: f64 = work.iter().map(|&(_, w)| w).sum();
    let available: f64 = work.iter().map(|&(pair, _)| state.budget(pair).max(0.0)).sum();
    if !(total <= available) {
        return false;
    }
    // A pair that gave more than it had is left at zero, its debt paid from the others' surplus
    // in order, so no budget goes negative.
    let mut debt = 0.0;
    for &(pair, w) in work {
        let left = state.budget(pair).max(0.0) - w;
        debt += (-left).max(0.0);
        state.set_budget(pair, left.max(0.0));
    }
    for &(pair, _) in work {
        let take = debt.min(state.budget(pair));
        if take > 0.0 {
            state.set_budget(pair, state.budget(pair) - take);
            debt -= take;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    use super::*;
    use crate::body::{SlotMass, SolverBody};
    use crate::head::heads_of;
    use crate::pgs::{PairKeys, assign_pairs};
    use crate::settings::SolveReport;
    use crate::shock_state::Shared;
    use crate::test_scenes::{prepare_rows, push_stacked_patch};

    /// A unit cube (mass 1 kg) sinking at 1 m/s onto two supports held still, one corner of each
    /// support changing its push by `changes` (N s). Returns whether the group was charged, its
    /// pairs' budgets after (J), the first pair's own share of the work and the cube's kinetic
    /// energy change (J), measured from its velocities.
    fn charge(budgets: [f64; 2], changes: [f64; 2]) -> (bool, [f64; 2], f64, f64) {
        let cube = SolverBody {
            linear_velocity: DVec3::new(0.0, -1.0, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::from_diagonal(DVec3::splat(6.0)),
        };
        let support = SolverBody {
            linear_velocity: DVec3::ZERO,
            ..cube
        };
        let bodies = [cube, support, support];
        let mut rng = SplitMix64::new(5);
        let mut rows = Vec::new();
        let patch = |x: f64| [(x, -0.5), (x, 0.5)];
        push_stacked_patch(
            &mut rows,
            &bodies,
            (0, 1),
            &patch(-0.5),
            (&mut rng, (0.0, 0.0)),
            (0.5, true),
        );
        push_stacked_patch(
            &mut rows,
            &bodies,
            (0, 2),
            &patch(0.5),
            (&mut rng, (0.0, 0.0)),
            (0.5, true),
        );
        let mut prepared = prepare_rows(&rows, &bodies, 1.0 / 30.0);
        let heads = heads_of(&prepared);
        assert_eq!(assign_pairs(&mut prepared, &heads, &mut PairKeys::default()), 2);
        let group: Vec<(usize, Frozen)> = (0..rows.len())
            .filter(|&i| rows[i].friction.is_none())
            .map(|i| (i, Frozen::B))
            .collect();
        let mut lambdas = vec![0.5; rows.len()];
        let mut masses = Vec::new();
        SlotMass::fill(&bodies, &mut masses);
        let mut velocities: Vec<Twist> = bodies
            .iter()
            .map(|b| Twist::new(b.linear_velocity, b.angular_velocity))
            .chain([Twist::default()])
            .collect();
        let mut budgets = budgets.to_vec();
        let mut report = SolveReport::default();
        let mut state = Shared {
            lambdas: &mut lambdas,
            velocities: &mut velocities,
            masses: &masses,
            budgets: &mut budgets,
            report: &mut report,
        };
        let mut moving = SmallVec::new();
        assert!(gather(&group, &prepared, &state, 0, &mut moving));
        assert_eq!(moving.len(), 4);
        moving[0].new += changes[0];
        moving[2].new += changes[1];
        let v0 = state.velocity(0);
        let v1 = moving
            .iter()
            .fold(v0, |v, row| v.add_scaled(&row.response, row.new - row.old));
        let first_pair = changes[0] * moving[0].jacobian.dot(&v0.mean(&v1));
        let charged = charge_budgets(&moving, &prepared, &v0, &v1, &mut state);
        let energy = |v: &Twist| 0.5 * v.linear().length_squared() + 0.5 * v.angular().length_squared() / 6.0;
        (charged, [budgets[0], budgets[1]], first_pair, energy(&v1) - energy(&v0))
    }

    /// The first support pushing less gives the cube energy through its pair's rows, the second
    /// pushing more takes more away: the group is charged from both pairs' budgets together, the
    /// first pair left at zero with its debt paid from the second's surplus, the two down by the
    /// cube's energy change. A group whose pairs together cannot pay is refused, nothing charged.
    #[test]
    fn shock_block_charges_a_group_from_its_pairs_budgets_together() {
        let (charged, after, first_pair, change) = charge([0.0, 0.05], [-0.02, 0.04]);
        assert!(first_pair > 0.0 && change < 0.0, "{first_pair} J, {change} J");
        assert!(charged, "a group that removes energy is refused");
        assert_eq!(after[0], 0.0);
        assert!((after[1] - (0.05 - change)).abs() < 1e-14, "{after:?} after {change} J");
        // Pushing less at the first support than more at the second: the cube speeds up.
        let (_, _, _, gain) = charge([0.0, 0.0], [-0.04, 0.02]);
        assert!(gain > 0.0);
        let (refused, untouched, _, _) = charge([0.4 * gain, 0.4 * gain], [-0.04, 0.02]);
        assert!(!refused);
        assert_eq!(untouched, [0.4 * gain, 0.4 * gain]);
        let (charged, after, _, _) = charge([0.6 * gain, 0.6 * gain], [-0.04, 0.02]);
        assert!(charged && after.iter().all(|&b| b >= 0.0), "{after:?}");
        assert!(
            (after[0] + after[1] - 0.2 * gain).abs() < 1e-12 * gain,
            "{after:?} of {gain} J"
        );
    }
}
