//! Shock propagation: a final pass that settles contact stacks from the ground up (Guendelman,
//! Bridson and Fedkiw 2003, section 7; Su, Schroeder and Fedkiw 2009 use it for their stacks).
//!
//! Projected Gauss-Seidel spreads a stack's weight one contact per sweep, and a box touching at four
//! corners rocks while its corner rows take turns: measured before this pass, a column of five unit
//! boxes at 30 Hz still fell at 5 cm/s after 20 sweeps of its first step and walked centimetres
//! within seconds; a 55-box pyramid swayed by decimetres. Warm starting carries the impulses from
//! step to step but not the error the unconverged sweeps leave in the velocities.
//!
//! The pass orders the bodies by contact level: level 0 is the world (static, kinematic and other
//! immovable bodies), and a body's level is one more than that of the lowest-level body it touches
//! (breadth-first over contact normal rows). It then visits the levels in ascending order; a contact
//! row between a body and one of lower level treats the lower body as immovable, so only the upper
//! body's velocity changes. Each body's rows to its supports are iterated together (up to
//! [`SolverSettings::shock_iterations`] times, until they stop changing) before the next body's,
//! which solves that body against fixed supports closely enough to stop the rocking (measured on the
//! column: 4 iterations left 2 mm/s of sway, 20 left 1e-7 m/s). Each such group is first solved
//! directly as one small LCP (shock_block.rs); the iterations run only where that gives up. A level
//! is then final before the one above it is solved, so
//! a stack of any height is settled in one pass. Rows between bodies of one level, joint rows and
//! rows of bodies that touch no level-0 body are solved as in a normal sweep.
//!
//! The price is momentum: a support does not feel the reaction of the corrections the pass makes
//! (it is treated as infinitely heavy). The pass runs after the ordinary sweeps, so it corrects
//! only what they left unconverged. Every increment is energy-clamped against the upper body's own
//! kinetic energy (a frozen support neither gains nor loses any), with the same per-pair budgets as
//! the sweeps, so the pass can never raise the kinetic energy of the solve.

use crate::clamp::clamp_row_increment_within;
use crate::pgs::{Prepared, Twist, bounds, clamp};
use crate::settings::SolveReport;
#[cfg(doc)]
use crate::settings::SolverSettings;
use crate::shock_block::solve_group;
use shatter_integrators::ClampVerdict;

/// Which side of a row the shock pass holds still.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frozen {
    None,
    A,
    B,
}

/// The rows in shock order: `(row, frozen side)`, grouped so that consecutive rows with the same
/// moving body (and a frozen side) are one group.
#[derive(Default)]
pub(crate) struct ShockOrder {
    rows: Vec<(usize, Frozen)>,
    /// `(start, end)` into `rows` of each group.
    groups: Vec<(usize, usize)>,
    /// `(level, moving body, row, frozen side)` per active row, sorted.
    keyed: Vec<(u32, usize, usize, Frozen)>,
    /// Scratch of the counting sorts: the entries in their new order, and one count per key.
    sorted: Vec<(u32, usize, usize, Frozen)>,
    counts: Vec<usize>,
    /// Scratch of the level search.
    levels: Levels,
}

/// The breadth-first search of the contact levels, with its arrays.
#[derive(Default)]
struct Levels {
    /// Start of each slot's neighbours in `neighbours` (one extra entry at the end).
    offsets: Vec<u32>,
    /// Next free place of each slot's neighbours while they are filled in.
    fill: Vec<u32>,
    /// Slots sharing a contact normal row with each slot.
    neighbours: Vec<usize>,
    /// Contact level per slot.
    level: Vec<u32>,
    /// The search's queue.
    queue: Vec<usize>,
}

/// Reorders `items` stably by `key` (each below `keys`), through `sorted` and `counts`.
fn counting_sort<T: Copy>(
    items: &mut Vec<T>,
    sorted: &mut Vec<T>,
    counts: &mut Vec<usize>,
    keys: usize,
    key: impl Fn(&T) -> usize,
) {
    counts.clear();
    counts.resize(keys + 1, 0);
    for item in items.iter() {
        counts[key(item) + 1] += 1;
    }
    for k in 0..keys {
        counts[k + 1] += counts[k];
    }
    sorted.clear();
    sorted.extend_from_slice(items);
    for item in items.iter() {
        let slot = &mut counts[key(item)];
        sorted[*slot] = *item;
        *slot += 1;
    }
    core::mem::swap(items, sorted);
}

/// Whether a row is a contact normal row (a split row that is not friction).
fn is_contact(row: &Prepared) -> bool {
    row.split_target.is_some() && row.friction.is_none()
}

impl Levels {
    /// Fills `level` with the contact levels of the `immovable.len()` velocity slots (the last is
    /// the world), `u32::MAX` for bodies that touch no level-0 body through contacts.
    fn compute(&mut self, prepared: &[Prepared], immovable: &[bool]) {
        let slots = immovable.len();
        let Self {
            offsets,
            fill,
            neighbours,
            level,
            queue,
        } = self;
        offsets.clear();
        offsets.resize(slots + 1, 0);
        for row in prepared.iter().filter(|r| r.active && is_contact(r)) {
            offsets[row.a + 1] += 1;
            offsets[row.b + 1] += 1;
        }
        for i in 0..slots {
            offsets[i + 1] += offsets[i];
        }
        fill.clear();
        fill.extend_from_slice(offsets);
        neighbours.clear();
        neighbours.resize(offsets[slots] as usize, 0);
        for row in prepared.iter().filter(|r| r.active && is_contact(r)) {
            for (from, to) in [(row.a, row.b), (row.b, row.a)] {
                neighbours[fill[from] as usize] = to;
                fill[from] += 1;
            }
        }
        level.clear();
        level.resize(slots, u32::MAX);
        queue.clear();
        queue.extend((0..slots).filter(|&i| immovable[i]));
        for &i in queue.iter() {
            level[i] = 0;
        }
        let mut head = 0;
        while head < queue.len() {
            let body = queue[head];
            head += 1;
            for &next in &neighbours[offsets[body] as usize..offsets[body + 1] as usize] {
                if level[next] == u32::MAX {
                    level[next] = level[body] + 1;
                    queue.push(next);
                }
            }
        }
    }
}

impl ShockOrder {
    /// Makes this the order for `prepared` over `immovable.len()` slots; `immovable[i]` marks
    /// slots the solve cannot move (the world slot, static and kinematic bodies).
    pub(crate) fn rebuild(&mut self, prepared: &[Prepared], immovable: &[bool]) {
        self.levels.compute(prepared, immovable);
        let level = &self.levels.level;
        // Contact rows (normal and friction) freeze their lower-level side.
        let contact_row = |row: &Prepared| match row.friction {
            Some((normal, _, _)) => is_contact(&prepared[normal]),
            None => is_contact(row),
        };
        let keyed = &mut self.keyed;
        keyed.clear();
        keyed.extend(
            prepared
                .iter()
                .enumerate()
                .filter(|(_, row)| row.active)
                .map(|(index, row)| {
                    let (la, lb) = (level[row.a], level[row.b]);
                    let contact = contact_row(row);
                    if contact && la < lb && lb != u32::MAX {
                        (lb, row.b, index, Frozen::A)
                    } else if contact && lb < la && la != u32::MAX {
                        (la, row.a, index, Frozen::B)
                    } else {
                        (la.min(lb), usize::MAX, index, Frozen::None)
                    }
                }),
        );
        // By level, then moving body, then row order: deterministic, and each body's support rows
        // together. The rows arrive in row order, so two stable counting sorts do it, by body and
        // then by level, in time linear in the rows (a comparison sort here was 5 percent of the
        // random pile's step).
        let slots = immovable.len();
        let body_rank = |body: usize| if body == usize::MAX { slots } else { body };
        counting_sort(keyed, &mut self.sorted, &mut self.counts, slots + 1, |entry| {
            body_rank(entry.1)
        });
        let levels = keyed
            .iter()
            .map(|entry| entry.0)
            .filter(|&level| level != u32::MAX)
            .max()
            .map_or(0, |top| top as usize + 1);
        let level_rank = |level: u32| if level == u32::MAX { levels } else { level as usize };
        counting_sort(keyed, &mut self.sorted, &mut self.counts, levels + 1, |entry| {
            level_rank(entry.0)
        });
        self.rows.clear();
        self.rows
            .extend(keyed.iter().map(|&(_, _, index, frozen)| (index, frozen)));
        let groups = &mut self.groups;
        groups.clear();
        let mut start = 0;
        for i in 1..=keyed.len() {
            let same = i < keyed.len()
                && keyed[i].1 != usize::MAX
                && keyed[i].1 == keyed[start].1
                && keyed[i].0 == keyed[start].0;
            if !same {
                groups.push((start, i));
                start = i;
            }
        }
    }

    /// Runs the pass once over the velocity solve: updates `lambdas` and `velocities`, charging
    /// `budgets`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sweep(
        &self,
        prepared: &[Prepared],
        lambdas: &mut [f64],
        velocities: &mut [Twist],
        budgets: &mut [f64],
        group_iterations: usize,
        tolerance: f64,
        report: &mut SolveReport,
    ) {
        let mut state = (lambdas, velocities, budgets, report);
        self.visit(
            &mut state,
            group_iterations,
            tolerance,
            |(lambdas, velocities, budgets, _), group| {
                solve_group(group, prepared, lambdas, velocities, budgets, tolerance)
            },
            |(lambdas, velocities, budgets, report), index, frozen| {
                update(&prepared[index], frozen, index, lambdas, velocities, budgets, report)
            },
        );
    }

    /// Runs the pass once over the split solve: `targets[i]` is row `i`'s split target (`None` for
    /// rows outside the split solve); updates `lambdas` and the pseudo velocities.
    pub(crate) fn sweep_split(
        &self,
        prepared: &[Prepared],
        lambdas: &mut [f64],
        pseudo: &mut [Twist],
        group_iterations: usize,
        tolerance: f64,
    ) {
        self.visit(
            &mut (lambdas, pseudo),
            group_iterations,
            tolerance,
            |_, _| false,
            |(lambdas, pseudo), index, frozen| {
                let row = &prepared[index];
                match row.split_target {
                    Some(target) if row.friction.is_none() => {
                        let moving_mass = moving_mass(row, frozen);
                        let diagonal = moving_mass + row.cfm_over_h;
                        if !(moving_mass > 0.0) {
                            return 0.0;
                        }
                        let lambda = lambdas[index];
                        let wanted = (target - row.relative_velocity(pseudo) - row.cfm_over_h * lambda) / diagonal;
                        let delta = clamp(lambda + wanted, row.lower, row.upper) - lambda;
                        apply(row, frozen, pseudo, delta);
                        lambdas[index] += delta;
                        (delta * diagonal).abs()
                    }
                    _ => 0.0,
                }
            },
        );
    }

    /// Calls `update(row, frozen)` over the groups in order, each group repeated up to
    /// `group_iterations` times until the largest change `update` reports is within `tolerance`;
    /// a group with a frozen side is first handed to `block` (shock_block.rs).
    fn visit<S>(
        &self,
        state: &mut S,
        group_iterations: usize,
        tolerance: f64,
        block: impl Fn(&mut S, &[(usize, Frozen)]) -> bool,
        update: impl Fn(&mut S, usize, Frozen) -> f64,
    ) {
        for &(start, end) in &self.groups {
            let group = &self.rows[start..end];
            let repeats = if group[0].1 == Frozen::None {
                1
            } else if block(state, group) {
                continue;
            } else {
                group_iterations
            };
            for _ in 0..repeats {
                let mut residual: f64 = 0.0;
                for &(index, frozen) in group {
                    residual = residual.max(update(state, index, frozen));
                }
                if residual <= tolerance {
                    break;
                }
            }
        }
    }
}

/// The moving side's part of `J M^-1 J^T` (1/kg) and of `J v` (m/s) with `frozen` held still,
/// and the whole `J v`.
#[inline]
fn moving_side(row: &Prepared, frozen: Frozen, velocities: &[Twist]) -> (f64, f64, f64) {
    let (va, vb) = (row.side_velocity_a(velocities), row.side_velocity_b(velocities));
    let jv = va + vb;
    match frozen {
        Frozen::None => (row.inverse_effective_mass, jv, jv),
        Frozen::A => (row.inverse_mass_b, vb, jv),
        Frozen::B => (row.inverse_mass_a, va, jv),
    }
}

/// The moving side's part of `J M^-1 J^T`, 1/kg.
#[inline]
fn moving_mass(row: &Prepared, frozen: Frozen) -> f64 {
    match frozen {
        Frozen::None => row.inverse_effective_mass,
        Frozen::A => row.inverse_mass_b,
        Frozen::B => row.inverse_mass_a,
    }
}

/// `v += M^-1 J^T delta` on the moving side(s).
#[inline]
fn apply(row: &Prepared, frozen: Frozen, velocities: &mut [Twist], delta: f64) {
    if delta == 0.0 {
        return;
    }
    match frozen {
        Frozen::None => row.apply(velocities, delta),
        Frozen::A => row.apply_b(velocities, delta),
        Frozen::B => row.apply_a(velocities, delta),
    }
}

/// One row update with `frozen` held still; returns the change of the row's `J v` it made, m/s.
#[inline]
fn update(
    row: &Prepared,
    frozen: Frozen,
    index: usize,
    lambdas: &mut [f64],
    velocities: &mut [Twist],
    budgets: &mut [f64],
    report: &mut SolveReport,
) -> f64 {
    let (moving_mass, moving_velocity, jv) = moving_side(row, frozen, velocities);
    let diagonal = moving_mass + row.cfm_over_h;
    if !(moving_mass > 0.0) {
        return 0.0;
    }
    let lambda = lambdas[index];
    let wanted = (row.target - jv - row.cfm_over_h * lambda) / diagonal;
    let (lower, upper) = bounds(row, lambdas);
    let mut delta = clamp(lambda + wanted, lower, upper) - lambda;
    if row.energy_clamp {
        let budget = &mut budgets[row.pair];
        let verdict = clamp_row_increment_within(moving_velocity, moving_mass, delta, *budget);
        match verdict.verdict {
            ClampVerdict::Scaled => report.scaled_increments += 1,
            ClampVerdict::Dropped => report.dropped_increments += 1,
            ClampVerdict::Kept | ClampVerdict::NoEffect => {}
        }
        delta *= verdict.scale;
        *budget -= delta * moving_velocity + 0.5 * delta * delta * moving_mass;
    }
    lambdas[index] += delta;
    apply(row, frozen, velocities, delta);
    (delta * diagonal).abs()
}
