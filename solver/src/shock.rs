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
//! column before the block below: 4 iterations left 2 mm/s of sway, 20 left 1e-7 m/s). Each such
//! group is first solved directly as one small LCP (shock_block.rs); the iterations run only where
//! that gives up (the settings' docs say why 2 of them by default). A level
//! is then final before the one above it is solved, so
//! a stack of any height is settled in one pass. Rows between bodies of one level, joint rows and
//! rows of bodies that touch no level-0 body are solved as in a normal sweep.
//!
//! The price is momentum: a support does not feel the reaction of the corrections the pass makes
//! (it is treated as infinitely heavy). The pass runs after the ordinary sweeps, so it corrects
//! only what they left unconverged. Every increment is energy-clamped against the upper body's own
//! kinetic energy (a frozen support neither gains nor loses any), with the same per-pair budgets as
//! the sweeps, so the pass can never raise the kinetic energy of the solve.
//!
//! A known cost of that: heaps stand steeper than they should. A support that never yields holds
//! up what rests on it whether or not the heap as a whole could stand, so a jammed heap whose
//! sides would slump (loose debris has no cohesion) keeps its shape. Measured on the 1000 cubes
//! in random orientations dropped from the lattice at 30 Hz (`pile_1000_random_orientation`), mean
//! height of the cubes after 4 s: 4.5 m with this pass and 2.3 m without it (a cone of such cubes
//! at a 45 degree slope would have its mass at about 2.5 m). Leaving the pass out for bodies
//! faster than 0.1 m/s, or for groups whose rows the sweeps left more than 0.1 m/s from holding,
//! let that heap slump (2.5 to 2.9 m) but toppled the 210-box pyramid as it landed; at 0.3 m/s
//! the pyramid stood, a margin too close to `g dt` (0.33 m/s at 30 Hz) to rely on. Leaving it out
//! for bodies that enter the solve faster than 1 m/s (gravity's `g dt` included) leaves stacks at
//! rest alone; on the random pile it slumped the heap at 30 Hz (mean height at 15 s 2.2 to 2.4 m
//! over six lattice seeds, against 4.0 to 4.4 m), settled it on all six seeds at both rates, and
//! shortened its step (two threads: 8.1 -> 7.4 ms at 30 Hz, 7.8 -> 6.7 ms at 60 Hz), but the
//! aligned pile's columns, their boxes landing at 1.4 to 4.4 m/s, then took longer to settle
//! (median step over the first 3 s 1.5 -> 3.5 ms at 30 Hz; still 2.3 times at 3 m/s, and at 5
//! m/s neither pile got faster), and so they did, 1.5 -> 4.0 ms, with only the groups left out
//! whose body and every support entered faster than 1 m/s. Solving the groups with a row whose
//! relative velocity after the sweeps exceeded 0.3 m/s by Gauss-Seidel instead of the block
//! (shock_block.rs) made the random pile's step 13 percent shorter at 30 Hz and 8 at 60 Hz, but
//! its heap kept avalanching longer (kinetic energy after 10 s up to 3e-2 of the energy released,
//! against 1e-2), one seed in six above the stability test's bound at 15 s at 60 Hz. The remedy
//! is a velocity solve that converges on such stacks by itself, so that this pass has only
//! round-off to correct. For stacks at rest the load pass (loads.rs) does that: warm started from
//! the loads it hands down, their sweeps converge and this pass is skipped.
//!
//! The bodies of one level do not touch each other's rows, so with more than one thread the groups
//! of a wide level are solved side by side, each on a private copy, and committed in order
//! (shock_state.rs; the same bits as one after another, tests/shock_levels.rs). Measured on the
//! 1000-cube random pile at 30 Hz on two threads: median step 31.6 -> 25.7 ms. The split pass's
//! run of this order keeps its groups on its own thread while the velocity solve runs beside it
//! (phases.rs) and holds the other threads.

use crate::body::SlotMass;
use crate::clamp::clamp_row_increment_within;
use crate::free_rows::Accuracy;
use crate::head::RowHead;
use crate::pgs::{Prepared, clamp};
use crate::settings::SolveReport;
#[cfg(doc)]
use crate::settings::SolverSettings;
use crate::shock_block::solve_group;
use crate::shock_state::{GroupChange, GroupState, Shared, detached};
use crate::twist::Twist;
use shatter_integrators::parallel::for_each_mut;
use shatter_integrators::prefetch::prefetch;
use smallvec::SmallVec;

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
    pub(crate) rows: Vec<(usize, Frozen)>,
    /// `(start, end)` into `rows` of each group.
    pub(crate) groups: Vec<(usize, usize)>,
    /// `(first, end, side by side)` into `groups`: consecutive groups of moving bodies at one level
    /// (which may be solved side by side, shock_state.rs), or one other group.
    pub(crate) batches: Vec<(usize, usize, bool)>,
    /// `(level, moving body, row, frozen side)` per active row, sorted ([`NO_MOVER`] for a row
    /// with no moving body): 16 bytes an entry, which the sorts stream twice.
    keyed: Vec<Entry>,
    /// Scratch of the counting sort: the entries in their new order, and one count per place.
    sorted: Vec<Entry>,
    counts: Vec<usize>,
    /// Scratch of the level search.
    levels: Levels,
    /// The places the counting sort orders the entries by, laid out from the levels.
    buckets: Buckets,
}

/// The moving body of a shock order entry whose row has none.
const NO_MOVER: u32 = u32::MAX;

/// The memory one pass of the shock order works in: what the groups of a side-by-side batch
/// changed. Each pass has its own, so the velocity and split passes can run at the same time over
/// one order.
#[derive(Default)]
pub(crate) struct ShockScratch {
    changes: Vec<Option<GroupChange>>,
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

/// The places of the shock order's sort keys `(level, moving body)`, level by level: each level's
/// moving bodies in slot order, then one place for that level's rows with no moving body; one last
/// place for the rows of bodies that touch no level-0 body (level `u32::MAX`). A moving body's
/// rows all have its level, so one counting sort by place orders the rows by level, then moving
/// body, then row, as two sorts (by body, then by level) did.
#[derive(Default)]
struct Buckets {
    /// Place of each slot's rows as their moving body (`u32::MAX` for a slot of no level).
    body: Vec<u32>,
    /// Place of each level's rows with no moving body; the last is level `u32::MAX`'s.
    loose: Vec<u32>,
}

impl Buckets {
    /// Lays the places out for the slots' contact `level`s; returns how many there are.
    fn lay_out(&mut self, level: &[u32]) -> usize {
        let Self { body, loose } = self;
        let levels = level
            .iter()
            .filter(|&&l| l != u32::MAX)
            .max()
            .map_or(0, |&top| top as usize + 1);
        loose.clear();
        loose.resize(levels + 1, 0);
        for &l in level.iter().filter(|&&l| l != u32::MAX) {
            loose[l as usize] += 1;
        }
        // Each level's first place (its bodies, then its loose rows), then its bodies' places:
        // what is left in `loose[l]` is the place after the bodies.
        let mut first = 0;
        for place in loose.iter_mut() {
            let bodies = *place;
            *place = first;
            first += bodies + 1;
        }
        body.clear();
        body.extend(level.iter().map(|&l| match l {
            u32::MAX => u32::MAX,
            l => {
                let place = loose[l as usize];
                loose[l as usize] += 1;
                place
            }
        }));
        first as usize
    }

    /// The place of shock order entry `(level, moving body, _, _)`.
    fn of(&self, (level, moving, _, _): &Entry) -> usize {
        if *moving != NO_MOVER {
            // A moving body has a level (the order's keying moves only bodies of one).
            debug_assert_ne!(self.body[*moving as usize], u32::MAX, "a moving body of no level");
            self.body[*moving as usize] as usize
        } else if *level == u32::MAX {
            self.loose[self.loose.len() - 1] as usize
        } else {
            self.loose[*level as usize] as usize
        }
    }
}

/// Rows from which the shock order is sorted by counting rather than by comparison.
const COUNTING_SORT_ROWS: usize = 512;

/// A shock order entry: `(level, moving body, row, frozen side)`.
type Entry = (u32, u32, u32, Frozen);

/// Orders the shock order's `entries` (in row order) by level, then moving body ([`NO_MOVER`]
/// after the bodies), then row: deterministic, and each body's support rows together. The slots'
/// contact levels are `level`; a moving body's entries have its level, and only entries with no
/// moving body have level `u32::MAX`. A large island is sorted by [`sort_by_place`], a small one
/// by comparison, which is faster there; the order is the same either way (no two rows share a
/// key).
fn sort_entries(entries: &mut Vec<Entry>, scratch: (&mut Vec<Entry>, &mut Vec<usize>, &mut Buckets), level: &[u32]) {
    if entries.len() < COUNTING_SORT_ROWS {
        entries.sort_unstable_by_key(|&(level, body, index, _)| (level, body, index));
    } else {
        sort_by_place(entries, scratch, level);
    }
}

/// [`sort_entries`] in time linear in the entries: one stable counting sort by the place of
/// `(level, moving body)` ([`Buckets`]), the entries arriving in row order. Measured on the
/// random 1000-cube pile at 30 Hz on two threads (temporary timers, means over three runs), this
/// and the keying before it take 119 us a step, where two counting sorts (by body, then by
/// level) took 113 us and the keying 55; a comparison sort was 5 percent of that pile's step.
fn sort_by_place(
    entries: &mut Vec<Entry>,
    (sorted, counts, buckets): (&mut Vec<Entry>, &mut Vec<usize>, &mut Buckets),
    level: &[u32],
) {
    let places = buckets.lay_out(level);
    counting_sort(entries, sorted, counts, places, |entry| buckets.of(entry));
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
    // Every place is written below: only a change of length touches `sorted` here (copying
    // `items` in first was a third of the sort's memory traffic).
    match items.first() {
        Some(&first) => sorted.resize(items.len(), first),
        None => sorted.clear(),
    }
    for item in items.iter() {
        let slot = &mut counts[key(item)];
        sorted[*slot] = *item;
        *slot += 1;
    }
    core::mem::swap(items, sorted);
}

impl Levels {
    /// Fills `level` with the contact levels of the `immovable.len()` velocity slots (the last is
    /// the world), `u32::MAX` for bodies that touch no level-0 body through contacts.
    fn compute(&mut self, heads: &[RowHead], immovable: &[bool]) {
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
        for row in heads.iter().filter(|r| r.is_split()) {
            offsets[row.a() + 1] += 1;
            offsets[row.b() + 1] += 1;
        }
        for i in 0..slots {
            offsets[i + 1] += offsets[i];
        }
        fill.clear();
        fill.extend_from_slice(offsets);
        neighbours.clear();
        neighbours.resize(offsets[slots] as usize, 0);
        for row in heads.iter().filter(|r| r.is_split()) {
            for (from, to) in [(row.a(), row.b()), (row.b(), row.a())] {
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
    /// The contact level of each velocity slot in the order last built (`u32::MAX` for bodies
    /// that touch no level-0 body through contacts).
    pub(crate) fn levels(&self) -> &[u32] {
        &self.levels.level
    }

    /// Makes this the order for the rows with `heads` over `immovable.len()` slots; `immovable[i]` marks
    /// slots the solve cannot move (the world slot, static and kinematic bodies). A solve whose rows
    /// keep the structure of the last one keeps its order without calling this (structure.rs).
    pub(crate) fn rebuild(&mut self, heads: &[RowHead], immovable: &[bool]) {
        self.levels.compute(heads, immovable);
        let level = &self.levels.level;
        // Contact rows (normal and friction) freeze their lower-level side.
        let contact_row = |row: &RowHead| match row.friction() {
            Some((normal, _)) => heads[normal].is_contact(),
            None => row.is_contact(),
        };
        let keyed = &mut self.keyed;
        keyed.clear();
        keyed.extend(
            heads
                .iter()
                .enumerate()
                .filter(|(_, row)| row.active())
                .map(|(index, row)| {
                    let (la, lb) = (level[row.a()], level[row.b()]);
                    let contact = contact_row(row);
                    // Slots and rows are numbered in 32 bits (RowHead), below NO_MOVER.
                    let index = index as u32;
                    if contact && la < lb && lb != u32::MAX {
                        (lb, row.b() as u32, index, Frozen::A)
                    } else if contact && lb < la && la != u32::MAX {
                        (la, row.a() as u32, index, Frozen::B)
                    } else {
                        (la.min(lb), NO_MOVER, index, Frozen::None)
                    }
                }),
        );
        sort_entries(keyed, (&mut self.sorted, &mut self.counts, &mut self.buckets), level);
        self.rows.clear();
        self.rows
            .extend(keyed.iter().map(|&(_, _, index, frozen)| (index as usize, frozen)));
        let groups = &mut self.groups;
        groups.clear();
        let batches = &mut self.batches;
        batches.clear();
        let mut start = 0;
        for i in 1..=keyed.len() {
            let same = i < keyed.len()
                && keyed[i].1 != NO_MOVER
                && keyed[i].1 == keyed[start].1
                && keyed[i].0 == keyed[start].0;
            if !same {
                // Groups of moving bodies at one level share a batch; every other group is its own.
                let moving = keyed[start].1 != NO_MOVER;
                match batches.last_mut() {
                    Some((_, last, true)) if moving && keyed[groups[*last - 1].0].0 == keyed[start].0 => {
                        *last += 1;
                    }
                    _ => batches.push((groups.len(), groups.len() + 1, moving)),
                }
                groups.push((start, i));
                start = i;
            }
        }
    }

    /// Runs the pass once over the velocity solve: updates `lambdas` and `velocities` (of slots
    /// with inverse masses `masses`), charging `budgets`; the groups solved as blocks are solved
    /// to `accuracy` ([`Accuracy`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sweep(
        &self,
        scratch: &mut ShockScratch,
        prepared: &[Prepared],
        lambdas: &mut [f64],
        (velocities, masses): (&mut [Twist], &[SlotMass]),
        budgets: &mut [f64],
        (group_iterations, accuracy): (usize, Accuracy),
        tolerance: f64,
        report: &mut SolveReport,
    ) {
        let mut shared = Shared {
            lambdas,
            velocities,
            masses,
            budgets,
            report,
        };
        self.visit(
            scratch,
            prepared,
            &mut shared,
            (group_iterations, tolerance),
            &VelocityPass { accuracy },
            true,
        );
    }

    /// Runs the pass once over the split solve (split.rs): updates the split impulses `lambdas`
    /// and the pseudo velocities (of slots with inverse masses `masses`). With `share` the groups
    /// of a wide level go to the pool side by side; without, they are solved one after another on
    /// this thread (the same bits). Each group iterates up to `iterations.0` times, until its rows
    /// change by at most `iterations.1` (m/s).
    pub(crate) fn sweep_split(
        &self,
        scratch: &mut ShockScratch,
        prepared: &[Prepared],
        lambdas: &mut [f64],
        (pseudo, masses): (&mut [Twist], &[SlotMass]),
        iterations: (usize, f64),
        share: bool,
    ) {
        let mut report = SolveReport::default();
        let mut shared = Shared {
            lambdas,
            velocities: pseudo,
            masses,
            budgets: &mut [],
            report: &mut report,
        };
        self.visit(scratch, prepared, &mut shared, iterations, &SplitPass, share);
    }

    /// Runs `pass` over the groups in order: a group with a frozen side is solved by
    /// [`solve_moving_group`], every other row updated once. With `share`, the groups of one level
    /// are solved side by side on the rayon pool when there are enough of them (shock_state.rs:
    /// the same bits as one after another). Each group iterates up to `group_iterations` times,
    /// until its rows change by at most `tolerance` (m/s).
    fn visit(
        &self,
        scratch: &mut ShockScratch,
        prepared: &[Prepared],
        shared: &mut Shared<'_>,
        (group_iterations, tolerance): (usize, f64),
        pass: &(impl Pass + Sync),
        share: bool,
    ) {
        let Self {
            rows, groups, batches, ..
        } = self;
        let changes = &mut scratch.changes;
        // The next group's rows are fetched while a group is solved: a group's rows lie wherever
        // its contacts' pairs put them among the island's, which in a heap of debris is all over
        // a few megabytes. Measured on the random 1000-cube pile on two threads (temporary
        // timers, mean per pass): the velocity pass 375 -> 356 us at 30 Hz and 514 -> 495 us at
        // 60 Hz, the split pass 426 -> 394 and 589 -> 561 us; median step 7.38 -> 7.04 ms and
        // 6.92 -> 6.61 ms over three runs each of one build switched at run time, 6.96 -> 6.90 ms
        // and 6.61 -> 6.51 ms over four interleaved rounds of two builds (a noisier machine).
        let ahead = |group: Option<&(usize, usize)>| {
            for &(index, _) in group.map_or(&[][..], |&(start, end)| &rows[start..end]) {
                prefetch(&prepared[index]);
            }
        };
        // One thread gains nothing from the copies; the bits are the same either way.
        let threads = rayon::current_num_threads();
        for &(first, last, side_by_side) in batches.iter() {
            let groups = &groups[first..last];
            if share && side_by_side && threads > 1 && groups.len() >= SIDE_BY_SIDE_GROUPS {
                let (lambdas, budgets) = (&*shared.lambdas, &*shared.budgets);
                let slots = (&*shared.velocities, shared.masses);
                changes.clear();
                changes.resize_with(groups.len(), || None);
                for_each_mut(changes, SIDE_BY_SIDE_RUN, &|k, change| {
                    ahead(groups.get(k + 1));
                    let (start, end) = groups[k];
                    let group = &rows[start..end];
                    // Side-by-side batches hold only groups with a moving body.
                    *change = moving_slot(prepared, group).map(|moving| {
                        detached(group, moving, lambdas, slots, budgets, |own| {
                            solve_moving_group(group, prepared, own, group_iterations, tolerance, pass);
                        })
                    });
                });
                for change in changes.iter().flatten() {
                    change.commit(shared);
                }
            } else {
                for (k, &(start, end)) in groups.iter().enumerate() {
                    ahead(groups.get(k + 1));
                    let group = &rows[start..end];
                    if group[0].1 == Frozen::None {
                        for &(index, frozen) in group {
                            pass.update(&prepared[index], frozen, index, 1.0, shared);
                        }
                    } else {
                        solve_moving_group(group, prepared, shared, group_iterations, tolerance, pass);
                    }
                }
            }
        }
    }
}

/// One of the two passes the shock order runs: how it updates a row, and whether a moving body's
/// group is first tried as a block.
trait Pass {
    /// Whether groups are first solved as one block (shock_block.rs), and how closely.
    fn block(&self) -> Option<Accuracy>;
    /// One row update with `frozen` held still, its step scaled by `relaxation`; returns the
    /// change of the row's `J v`, m/s.
    fn update<S: GroupState>(
        &self,
        row: &Prepared,
        frozen: Frozen,
        index: usize,
        relaxation: f64,
        state: &mut S,
    ) -> f64;

    /// Up to `iterations` Gauss-Seidel sweeps over a group with a moving body, until its rows
    /// change by at most `tolerance` (m/s): [`Pass::update`] row by row (`iterate_rows`), with
    /// the moving body's velocity held by [`Pass::held`] and what does not change while the group
    /// is solved formed once.
    fn iterate<S: GroupState>(
        &self,
        group: &[(usize, Frozen)],
        prepared: &[Prepared],
        state: &mut S,
        iterations: usize,
        tolerance: f64,
    ) {
        if let Some(moving) = moving_slot(prepared, group) {
            self.held(group, prepared, state, (moving, iterations, tolerance));
        }
    }

    /// [`Pass::iterate`] over a group that moves one slot: `sweeps` is that slot, the most sweeps
    /// and the tolerance. The same bits as `iterate_rows`.
    fn held<S: GroupState>(&self, group: &[(usize, Frozen)], prepared: &[Prepared], state: &mut S, sweeps: HeldSweeps);
}

/// What [`Pass::held`] sweeps to: the moving slot, the most sweeps and the tolerance (m/s).
type HeldSweeps = (usize, usize, f64);

/// [`Pass::iterate`] row by row through [`Pass::update`], under-relaxed as the velocity pass's
/// held sweeps are where `relaxes` ([`Relaxation`]): the reference they are tested against.
#[cfg(test)]
fn iterate_rows<S: GroupState, P: Pass + ?Sized>(
    (pass, relaxes): (&P, bool),
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &mut S,
    iterations: usize,
    tolerance: f64,
) {
    let mut schedule = Relaxation::default();
    for _ in 0..iterations {
        let factor = if relaxes { schedule.factor } else { 1.0 };
        let mut residual: f64 = 0.0;
        for &(index, frozen) in group {
            residual = residual.max(pass.update(&prepared[index], frozen, index, factor, state));
        }
        if residual <= tolerance {
            break;
        }
        schedule.after_sweep(residual);
    }
}

/// The pass over the velocity solve, its blocks solved to `accuracy`.
struct VelocityPass {
    accuracy: Accuracy,
}

impl Pass for VelocityPass {
    fn block(&self) -> Option<Accuracy> {
        Some(self.accuracy)
    }
    #[inline]
    fn update<S: GroupState>(
        &self,
        row: &Prepared,
        frozen: Frozen,
        index: usize,
        relaxation: f64,
        state: &mut S,
    ) -> f64 {
        update(row, frozen, index, relaxation, state)
    }

    fn held<S: GroupState>(&self, group: &[(usize, Frozen)], prepared: &[Prepared], state: &mut S, sweeps: HeldSweeps) {
        gauss_seidel_moving(group, prepared, state, sweeps);
    }
}

/// The pass over the split solve: contact normal rows toward their split targets, on pseudo
/// velocities, not energy-clamped.
struct SplitPass;

impl Pass for SplitPass {
    fn block(&self) -> Option<Accuracy> {
        None
    }
    #[inline]
    fn update<S: GroupState>(
        &self,
        row: &Prepared,
        frozen: Frozen,
        index: usize,
        relaxation: f64,
        state: &mut S,
    ) -> f64 {
        let Some(target) = row.split_target().filter(|_| row.friction().is_none()) else {
            return 0.0;
        };
        let moving_mass = moving_mass(row, frozen);
        let diagonal = moving_mass + row.cfm_over_h;
        if !(moving_mass > 0.0) {
            return 0.0;
        }
        let lambda = state.lambda(index);
        let (va, vb) = (state.velocity(row.a()), state.velocity(row.b()));
        let wanted = relaxation * ((target - row.relative_velocity_of(&va, &vb) - row.cfm_over_h * lambda) / diagonal);
        let delta = clamp(lambda + wanted, row.lower(), row.upper) - lambda;
        apply_to(row, frozen, state, va, vb, delta);
        state.set_lambda(index, lambda + delta);
        (delta * diagonal).abs()
    }

    fn held<S: GroupState>(&self, group: &[(usize, Frozen)], prepared: &[Prepared], state: &mut S, sweeps: HeldSweeps) {
        split_moving(group, prepared, state, sweeps);
    }
}

/// The split pass's Gauss-Seidel over the rows of `group`, which move slot `moving` against frozen
/// supports, for up to `iterations` sweeps until they change by at most `tolerance` (m/s): the
/// updates of [`SplitPass::update`], with the moving body's pseudo velocity held here and each
/// row's frozen side of `J u` (its products, summed with the moving side's as the update sums
/// them) and its response on the moving body formed once, not at every update: the same bits.
/// Split rows carry no friction: their Gauss-Seidel converges without relaxation.
fn split_moving<S: GroupState>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &mut S,
    (moving, iterations, tolerance): HeldSweeps,
) {
    let mut velocity = state.velocity(moving);
    let fixed = held_sides(group, prepared, state, moving, Twist::products);
    for _ in 0..iterations {
        let mut residual: f64 = 0.0;
        for (&(index, frozen), (fixed, response)) in group.iter().zip(&fixed) {
            let row = &prepared[index];
            let Some(target) = row.split_target().filter(|_| row.friction().is_none()) else {
                continue;
            };
            let moving_mass = moving_mass(row, frozen);
            if !(moving_mass > 0.0) {
                continue;
            }
            let diagonal = moving_mass + row.cfm_over_h;
            let lambda = state.lambda(index);
            let ju = match frozen {
                Frozen::A => fixed.add(row.jacobian_b.products(&velocity)),
                _ => row.jacobian_a.products(&velocity).add(*fixed),
            };
            let wanted = (target - ju.sum() - row.cfm_over_h * lambda) / diagonal;
            let delta = clamp(lambda + wanted, row.lower(), row.upper) - lambda;
            if delta != 0.0 {
                velocity = velocity.add_scaled(response, delta);
            }
            state.set_lambda(index, lambda + delta);
            residual = residual.max((delta * diagonal).abs());
        }
        if residual <= tolerance {
            break;
        }
    }
    state.set_velocity(moving, velocity);
}

/// Each row of `group` (which moves slot `moving` against supports held still) as its Gauss-Seidel
/// reads it again and again: `frozen_side` of the row's Jacobian block and velocity on its held
/// side (which does not change while the group is solved), and the row's response `M^-1 J^T` on
/// the moving body.
fn held_sides<S: GroupState, T>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &S,
    moving: usize,
    frozen_side: impl Fn(&Twist, &Twist) -> T,
) -> SmallVec<[(T, Twist); 16]> {
    let mass = state.mass(moving);
    group
        .iter()
        .map(|&(index, frozen)| {
            let row = &prepared[index];
            debug_assert!(frozen != Frozen::None, "a moving body's group holds its supports");
            match frozen {
                Frozen::A => (
                    frozen_side(&row.jacobian_a, &state.velocity(row.a())),
                    row.response_b(mass),
                ),
                _ => (
                    frozen_side(&row.jacobian_b, &state.velocity(row.b())),
                    row.response_a(mass),
                ),
            }
        })
        .collect()
}

/// Groups of one level below which they are solved one after another: each is a few microseconds,
/// about what handing a batch to the pool costs.
pub(crate) const SIDE_BY_SIDE_GROUPS: usize = 16;

/// Groups of a side-by-side batch solved one after another by one thread.
const SIDE_BY_SIDE_RUN: usize = 4;

/// The slot a group with a frozen side moves; `None` for a group of rows that move both sides.
pub(crate) fn moving_slot(prepared: &[Prepared], group: &[(usize, Frozen)]) -> Option<usize> {
    match group[0] {
        (index, Frozen::A) => Some(prepared[index].b()),
        (index, Frozen::B) => Some(prepared[index].a()),
        (_, Frozen::None) => None,
    }
}

/// Solves one body against its frozen supports: as a block first where `P` says so
/// (shock_block.rs), then, unless that settled it, by up to `iterations` Gauss-Seidel sweeps over
/// its rows until they change by at most `tolerance`.
fn solve_moving_group<S: GroupState, P: Pass>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &mut S,
    iterations: usize,
    tolerance: f64,
    pass: &P,
) {
    if let Some(accuracy) = pass.block()
        && solve_group(group, prepared, state, tolerance, accuracy)
    {
        return;
    }
    pass.iterate(group, prepared, state, iterations, tolerance);
}

/// The moving side's part of `J M^-1 J^T`, 1/kg.
#[inline]
fn moving_mass(row: &Prepared, frozen: Frozen) -> f64 {
    match frozen {
        Frozen::None => row.inverse_effective_mass(),
        Frozen::A => row.inverse_mass_b,
        Frozen::B => row.inverse_mass_a,
    }
}

/// One row update with `frozen` held still; returns the change of the row's `J v` it made, m/s.
#[inline]
fn update<S: GroupState>(row: &Prepared, frozen: Frozen, index: usize, relaxation: f64, state: &mut S) -> f64 {
    let (va, vb) = (state.velocity(row.a()), state.velocity(row.b()));
    let Some((delta, diagonal)) = increment(row, frozen, index, row.side_a(&va), row.side_b(&vb), relaxation, state)
    else {
        return 0.0;
    };
    apply_to(row, frozen, state, va, vb, delta);
    (delta * diagonal).abs()
}

/// Gauss-Seidel over the rows of `group`, which move slot `moving` against frozen supports, for
/// up to `iterations` sweeps until they change by at most `tolerance` (m/s). The same updates as
/// [`update`], with the moving body's velocity held here and each row's frozen side of `J v`
/// computed once (the supports do not move while the group is solved): the same bits, for less.
fn gauss_seidel_moving<S: GroupState>(
    group: &[(usize, Frozen)],
    prepared: &[Prepared],
    state: &mut S,
    (moving, iterations, tolerance): HeldSweeps,
) {
    let mut velocity = state.velocity(moving);
    let fixed = held_sides(group, prepared, state, moving, Twist::dot);
    // Friction can trap plain Gauss-Seidel in a cycle (a tipping box's corners pushing and
    // releasing in turn while it slides): once a sweep fails to halve the residual of the sweep
    // two before it, the updates are under-relaxed, which damps such a cycle out.
    let mut schedule = Relaxation::default();
    for _ in 0..iterations {
        let mut residual: f64 = 0.0;
        for (&(index, frozen), (fixed, response)) in group.iter().zip(&fixed) {
            let fixed = *fixed;
            let row = &prepared[index];
            let (side_a, side_b) = match frozen {
                Frozen::A => (fixed, row.side_b(&velocity)),
                _ => (row.side_a(&velocity), fixed),
            };
            let Some((delta, diagonal)) = increment(row, frozen, index, side_a, side_b, schedule.factor, state) else {
                continue;
            };
            if delta != 0.0 {
                velocity = velocity.add_scaled(response, delta);
            }
            residual = residual.max((delta * diagonal).abs());
        }
        if residual <= tolerance {
            break;
        }
        schedule.after_sweep(residual);
    }
    state.set_velocity(moving, velocity);
}

/// The relaxation factor of a shock group's Gauss-Seidel: 1 until a sweep fails to halve the
/// residual of the sweep two before it (a cycle), 0.5 from then on.
#[derive(Clone, Copy, Debug)]
struct Relaxation {
    factor: f64,
    sweeps: usize,
    residuals: [f64; 2],
}

impl Default for Relaxation {
    fn default() -> Self {
        Self {
            factor: 1.0,
            sweeps: 0,
            residuals: [f64::INFINITY; 2],
        }
    }
}

impl Relaxation {
    /// Takes note of a sweep's residual (m/s).
    fn after_sweep(&mut self, residual: f64) {
        let slot = self.sweeps % 2;
        if residual > 0.5 * self.residuals[slot] {
            self.factor = 0.5;
        }
        self.residuals[slot] = residual;
        self.sweeps += 1;
    }
}

/// The impulse increment (N s) of one row update whose `J v` is `side_a + side_b`, with `frozen`
/// held still: clamped to the row's bounds and by the energy budget of its body pair (charged),
/// and written to the row's impulse; returned with the row's moving diagonal, or `None` when
/// the moving side has no mass.
#[inline]
fn increment<S: GroupState>(
    row: &Prepared,
    frozen: Frozen,
    index: usize,
    side_a: f64,
    side_b: f64,
    relaxation: f64,
    state: &mut S,
) -> Option<(f64, f64)> {
    let jv = side_a + side_b;
    let (moving_mass, moving_velocity) = match frozen {
        Frozen::None => (row.inverse_effective_mass(), jv),
        Frozen::A => (row.inverse_mass_b, side_b),
        Frozen::B => (row.inverse_mass_a, side_a),
    };
    let diagonal = moving_mass + row.cfm_over_h;
    if !(moving_mass > 0.0) {
        return None;
    }
    let lambda = state.lambda(index);
    let wanted = relaxation * ((row.target - jv - row.cfm_over_h * lambda) / diagonal);
    let (lower, upper) = match row.friction() {
        Some((start, end, mu)) => {
            let limit = mu * (start..end).map(|n| state.lambda(n).abs()).sum::<f64>();
            (-limit, limit)
        }
        None => (row.lower(), row.upper),
    };
    let mut delta = clamp(lambda + wanted, lower, upper) - lambda;
    if row.energy_clamp {
        let budget = state.budget(row.pair());
        let verdict = clamp_row_increment_within(moving_velocity, moving_mass, delta, budget);
        state.count(verdict.verdict);
        delta *= verdict.scale;
        state.set_budget(
            row.pair(),
            budget - (delta * moving_velocity + 0.5 * delta * delta * moving_mass),
        );
    }
    state.set_lambda(index, lambda + delta);
    Some((delta, diagonal))
}

/// `v += M^-1 J^T delta` on the moving side(s), from their velocities `va` and `vb` before it.
#[inline]
fn apply_to<S: GroupState>(row: &Prepared, frozen: Frozen, state: &mut S, va: Twist, vb: Twist, delta: f64) {
    if delta == 0.0 {
        return;
    }
    if frozen != Frozen::A {
        let va = row.pushed_a(state.mass(row.a()), va, delta);
        state.set_velocity(row.a(), va);
    }
    if frozen != Frozen::B {
        let vb = row.pushed_b(state.mass(row.b()), vb, delta);
        state.set_velocity(row.b(), vb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::SolverBody;
    use crate::head::heads_of;
    use crate::patch::{ContactPatch, PatchPoint, push_patch_rows};
    use crate::pgs::prepare;
    use crate::settings::SolverSettings;
    use crate::softness::Softness;
    use crate::test_scenes::{FACE_CORNERS, push_stacked_patch};
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    /// The counting sort orders stably by key, as a stable comparison sort does, with its scratch
    /// reused across lists that grow, shrink and are empty (nothing of an earlier list is left).
    #[test]
    fn shock_counting_sort_is_a_stable_sort_with_reused_scratch() {
        let mut rng = SplitMix64::new(3);
        let (mut sorted, mut counts) = (Vec::new(), Vec::new());
        for len in [40, 7, 0, 300, 12, 0, 1] {
            let mut items: Vec<(usize, usize)> = (0..len).map(|k| (rng.below(9) as usize, k)).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|item| item.0);
            counting_sort(&mut items, &mut sorted, &mut counts, 9, |item| item.0);
            assert_eq!(items, expected, "{len} items");
        }
    }

    /// Sorting by place gives the comparison sort's order, for levels of every kind (bodies of
    /// many levels, levels without bodies between them, bodies of no level) and with the scratch
    /// reused across lists of different levels and lengths.
    #[test]
    fn shock_sort_by_place_orders_as_the_comparison_sort() {
        let mut rng = SplitMix64::new(11);
        let mut scratch = (Vec::new(), Vec::new(), Buckets::default());
        let mut moving_seen = 0;
        for (slots, top, entries) in [(40, 6, 900), (3, 1, 20), (200, 30, 2000), (1, 0, 5), (50, 0, 0)] {
            // Level 0 for the first slot (the ground), random levels up to `top` (some skipped),
            // and no level for every fifth slot.
            let level: Vec<u32> = (0..slots)
                .map(|s| match s {
                    0 => 0,
                    s if s % 5 == 4 => u32::MAX,
                    _ => rng.below(top as u64 + 1) as u32,
                })
                .collect();
            let mut list: Vec<Entry> = (0..entries)
                .map(|row| {
                    let slot = rng.below(slots as u64) as usize;
                    let frozen = if rng.below(2) == 0 { Frozen::A } else { Frozen::B };
                    match level[slot] {
                        // A moving body's entry has its level; loose entries any level or none.
                        l if l != u32::MAX && l > 0 && rng.below(3) > 0 => (l, slot as u32, row, frozen),
                        _ if rng.below(4) == 0 => (u32::MAX, NO_MOVER, row, Frozen::None),
                        _ => (rng.below(top as u64 + 1) as u32, NO_MOVER, row, Frozen::None),
                    }
                })
                .collect();
            moving_seen += list.iter().filter(|entry| entry.1 != NO_MOVER).count();
            let mut expected = list.clone();
            expected.sort_by_key(|&(level, body, row, _)| (level, body, row));
            let (sorted, counts, buckets) = &mut scratch;
            sort_by_place(&mut list, (sorted, counts, buckets), &level);
            assert_eq!(list, expected, "{slots} slots, {entries} entries");
        }
        assert!(moving_seen > 1000);
    }

    fn body(rng: &mut SplitMix64) -> SolverBody {
        SolverBody {
            linear_velocity: rng.unit_vector() * rng.range(0.0, 2.0),
            angular_velocity: rng.unit_vector() * rng.range(0.0, 2.0),
            inverse_mass: 1.0 / rng.range(0.5, 3.0),
            inverse_inertia: DMat3::from_diagonal(DVec3::new(
                rng.range(1.0, 6.0),
                rng.range(1.0, 6.0),
                rng.range(1.0, 6.0),
            )),
        }
    }

    /// A box (slot 0) on two supports (slots 1 and 2), moving and spinning at random: one patch
    /// lists the box first, the other the support, so both frozen sides occur; small energy
    /// budgets make the clamp act. Both passes: the velocity pass's and the split pass's.
    #[test]
    fn shock_gauss_seidel_with_the_moving_body_held_gives_the_bits_of_row_updates() {
        let mut rng = SplitMix64::new(11);
        let (mut clamped, mut pushed) = (0, 0);
        for _ in 0..200 {
            let bodies: Vec<SolverBody> = (0..3).map(|_| body(&mut rng)).collect();
            let mut rows = Vec::new();
            for (support, box_first) in [(1u32, true), (2u32, false)] {
                let x = if box_first { -0.5 } else { 0.5 };
                let points: Vec<PatchPoint> = [(-0.4, -0.5), (0.4, -0.5), (0.4, 0.5), (-0.4, 0.5)]
                    .into_iter()
                    .map(|(dx, z)| {
                        let on_box = DVec3::new(x + dx, -0.5, z);
                        let on_support = DVec3::new(dx, 0.5, z);
                        let depth = rng.range(-0.01, 0.02);
                        if box_first {
                            PatchPoint {
                                arm_a: on_box,
                                arm_b: on_support,
                                normal: -DVec3::Y,
                                depth,
                            }
                        } else {
                            PatchPoint {
                                arm_a: on_support,
                                arm_b: on_box,
                                normal: DVec3::Y,
                                depth,
                            }
                        }
                    })
                    .collect();
                let (a, b) = if box_first { (0, support) } else { (support, 0) };
                let patch = ContactPatch {
                    a,
                    b,
                    points: &points,
                    normal: if box_first { -DVec3::Y } else { DVec3::Y },
                    friction: rng.range(0.0, 1.2),
                    softness: Softness::rigid(0.2),
                    energy_clamp: true,
                    friction_direction: None,
                };
                push_patch_rows(&mut rows, &bodies, &patch, 1.0 / 30.0).unwrap();
            }
            let settings = SolverSettings::default();
            let mut prepared: Vec<Prepared> = rows
                .iter()
                .map(|r| prepare(r, &bodies, 1.0 / 30.0, &settings))
                .collect();
            for row in &mut prepared {
                row.set_pair(if row.a() == 1 || row.b() == 1 { 0 } else { 1 });
            }
            let group: Vec<(usize, Frozen)> = prepared
                .iter()
                .enumerate()
                .map(|(k, row)| (k, if row.a() == 0 { Frozen::B } else { Frozen::A }))
                .collect();
            let mut masses = Vec::new();
            SlotMass::fill(&bodies, &mut masses);
            let velocities: Vec<Twist> = bodies
                .iter()
                .map(|b| Twist::new(b.linear_velocity, b.angular_velocity))
                .chain([Twist::default()])
                .collect();
            let lambdas: Vec<f64> = (0..prepared.len()).map(|_| rng.range(0.0, 0.2)).collect();
            let budgets = vec![rng.range(0.0, 0.05), rng.range(0.0, 0.05)];
            let pass = VelocityPass {
                accuracy: Accuracy::Filtered,
            };
            let run = |held: bool, split: bool| {
                let (mut l, mut v, mut b) = (lambdas.clone(), velocities.clone(), budgets.clone());
                let mut report = SolveReport::default();
                let mut state = Shared {
                    lambdas: &mut l,
                    velocities: &mut v,
                    masses: &masses,
                    budgets: &mut b,
                    report: &mut report,
                };
                match (held, split) {
                    (true, false) => pass.iterate(&group, &prepared, &mut state, 7, 1e-12),
                    (false, false) => iterate_rows((&pass, true), &group, &prepared, &mut state, 7, 1e-12),
                    (true, true) => SplitPass.iterate(&group, &prepared, &mut state, 7, 1e-12),
                    (false, true) => iterate_rows((&SplitPass, false), &group, &prepared, &mut state, 7, 1e-12),
                }
                let clamped = (report.scaled_increments, report.dropped_increments);
                (l, v.iter().map(Twist::components).collect::<Vec<_>>(), b, clamped)
            };
            let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            for split in [false, true] {
                let (plain, held) = (run(false, split), run(true, split));
                assert_eq!(bits(&plain.0), bits(&held.0), "impulses");
                assert_eq!(
                    plain.1.iter().map(|c| bits(c)).collect::<Vec<_>>(),
                    held.1.iter().map(|c| bits(c)).collect::<Vec<_>>(),
                    "velocities"
                );
                assert_eq!(bits(&plain.2), bits(&held.2), "budgets");
                assert_eq!(plain.3, held.3, "clamp counts");
                if split {
                    pushed += usize::from(bits(&plain.0) != bits(&lambdas));
                } else {
                    clamped += plain.3.0 + plain.3.1;
                }
            }
        }
        assert!(clamped > 0, "the energy clamp never acted");
        assert!(pushed > 0, "the split pass never pushed");
    }

    /// The order of a column of boxes on the ground with patches between the `pairs` of slots
    /// (slot 3 is the world), its values drawn from `rng`.
    fn column(rng: &mut SplitMix64, pairs: &[(u32, u32)]) -> (Vec<Prepared>, Vec<bool>) {
        let bodies: Vec<SolverBody> = (0..3).map(|_| body(rng)).collect();
        let mut rows = Vec::new();
        for &(a, b) in pairs {
            let friction = rng.range(0.0, 1.0);
            let corners = FACE_CORNERS;
            push_stacked_patch(
                &mut rows,
                &bodies,
                (a, b),
                &corners,
                (rng, (-0.01, 0.02)),
                (friction, true),
            );
        }
        let settings = SolverSettings::default();
        let prepared = rows
            .iter()
            .map(|r| prepare(r, &bodies, 1.0 / 30.0, &settings))
            .collect();
        (prepared, vec![false, false, false, true])
    }

    /// An order rebuilt over the last step's gives exactly the groups a fresh one would, whether
    /// the rows kept their structure (new values only) or not (a patch moved to another body, a
    /// body made immovable): nothing of the last build is left in it.
    #[test]
    fn shock_order_rebuilt_in_place_equals_a_fresh_one() {
        let mut rng = SplitMix64::new(5);
        let world = crate::body::NO_BODY;
        let stack = [(0, world), (1, 0), (2, 1)];
        let leaning = [(0, world), (1, 0), (2, 0)];
        let mut kept = ShockOrder::default();
        let same = |kept: &ShockOrder, fresh: &ShockOrder| {
            assert_eq!(kept.rows, fresh.rows, "rows");
            assert_eq!(kept.groups, fresh.groups, "groups");
            assert_eq!(kept.batches, fresh.batches, "batches");
        };
        for (pairs, still) in [
            (&stack, None),
            (&stack, None),
            (&leaning, None),
            (&leaning, Some(0)),
            (&stack, Some(0)),
            (&stack, None),
        ] {
            let (prepared, mut immovable) = column(&mut rng, pairs);
            if let Some(slot) = still {
                immovable[slot] = true;
            }
            let mut fresh = ShockOrder::default();
            fresh.rebuild(&heads_of(&prepared), &immovable);
            kept.rebuild(&heads_of(&prepared), &immovable);
            same(&kept, &fresh);
        }
        // The stack's third box stands on the second, the leaning one's on the first, beside the
        // second (one level, one batch): different orders, so the comparisons above were not
        // between equal orders only.
        let [standing, leaning] = [&stack, &leaning].map(|pairs| {
            let (prepared, immovable) = column(&mut rng, pairs);
            let mut order = ShockOrder::default();
            order.rebuild(&heads_of(&prepared), &immovable);
            order.batches
        });
        assert_ne!(standing, leaning);
    }
}
