//! The velocity sweeps four runs at a time.
//!
//! A sweep's rows come in runs between one pair of bodies (a contact patch's seven rows, a
//! contact's three). Runs that share no moving body can be solved at the same time without
//! changing what Gauss-Seidel computes for each of them: neither sees the other's impulses. So the
//! runs are dealt into batches of four ([`LANES`]) that share no moving body and have the same
//! shape (the same number of rows, with friction rows in the same places, bounded by normal rows
//! in the same places), and a batch's rows are solved lane by lane: row `k` of all four runs in
//! one pass of four-wide arithmetic (wide.rs), then row `k + 1`. Each lane computes exactly what
//! the row-by-row sweep (`pgs::sweep_rows`) computes for its run, bit for bit (tested below), so
//! the batches change the order of the runs and nothing else.
//!
//! Which runs share a batch:
//! - an island of fewer than [`WIDE_RUNS`] runs alone: one run per batch, in the island's own
//!   order, so such islands can be swept side by side instead, one island per lane
//!   (together.rs), and give the same bits either way;
//! - a wider island: its runs sorted (stably) by contact level, the higher of the two bodies'
//!   levels in the shock order (ground first), and each level's runs of one shape cut into four
//!   consecutive segments, batch `k` taking run `k` of each segment. Each segment is swept in its
//!   own order, as a Gauss-Seidel sweep from the ground up would; only the segments' ends meet
//!   out of order. (Dealing each run greedily to the first batch it fits swept a column every
//!   other contact: on the 210-box pyramid, kinetic-energy bursts to 5e-3 J where the row order
//!   keeps it at 1e-13 J. With the segments its bursts reach 3e-4 J, and the top box moves 0.2 mm
//!   in 20 s; a Gauss-Seidel pyramid is that sensitive to order either way: at bases 25 and 30
//!   the segments leave the top box within 0.3 and 4.6 mm where the row order gave 2.4 and 5.5.)
//!   A run that would share a moving body with another in its batch gets a batch of its own
//!   after the level's.
//!
//! The dealing depends on the rows alone, so the result is the same bits on every run and every
//! thread count, and on machines with or without AVX2 (wide.rs).
//!
//! Immovable bodies (static, kinematic, and the world slot) may appear in several lanes: their
//! response to an impulse is zero, so whichever lane writes one back writes the velocity it read
//! (up to the sign of a zero, as row by row). Lanes a batch does not fill are padding: rows with
//! no Jacobian that never move anything.

use rayon::prelude::*;
use smallvec::SmallVec;

use crate::body::SlotMass;
use crate::clamp::budget_root;
use crate::head::RowHead;
use crate::pgs::Prepared;
use crate::twist::Twist;
#[cfg(target_arch = "x86_64")]
use crate::wide::Avx;
use crate::wide::{Portable, Wide};

/// Runs solved side by side in one batch.
pub(crate) const LANES: usize = crate::wide::WIDTH;

/// Runs from which an island swept alone is dealt into segments side by side. A smaller island's
/// runs are swept one after another in their own order, so that islands of that size can share
/// batches with one another (one island per lane) and give the bits they give alone.
pub(crate) const WIDE_RUNS: usize = 32;

pub(crate) use crate::wide::Lane;

/// A body's velocity, one component per array entry (linear x, y, z, then angular x, y, z), each
/// with one lane per run.
type LaneTwist = [Lane; 6];

/// Row `k` of the four runs of a batch: everything a sweep reads of it, lane by lane.
///
/// A large island's sweeps are limited by the bytes of rows they read (a pile of debris streams
/// tens of megabytes a sweep), so a row holds only what it cannot share: the responses
/// `M^-1 J^T` are formed from the Jacobian and the two bodies' [`SlotMass`] as the row is swept,
/// `J M^-1 J^T + CFM / h` from its two terms, and a friction row keeps its coefficient where
/// other rows keep their lower bound. (Rows that stored the responses read 1080 bytes per four
/// rows; these read 616. The same bits either way: the sweep repeats the arithmetic of
/// [`SolverBody::response`](crate::body::SolverBody::response), as the prepared rows' users do
/// through [`SlotMass::response`].) Nor does a row keep body B's linear block where it is body
/// A's negated, bit for bit, in every lane: a linear row's `(n, r_a x n, -n, -(r_b x n))`,
/// every contact and friction row. The sweep negates A's block instead (negation is exact, so
/// the products, sums and responses are the same bits); the other rows (twist and angular joint
/// rows, whose zero blocks are both `+0`) keep theirs beside the rows
/// ([`LaneBatches::linear_b`]). With the energy clamp's lanes as four bits, a row is 488 bytes.
#[derive(Clone, Copy, Debug)]
struct LaneRow {
    /// Body A's block of `J`.
    jacobian_a: LaneTwist,
    /// The angular part of body B's block of `J`.
    angular_b: [Lane; 3],
    /// The velocity solve's right-hand side, m/s.
    target: Lane,
    /// `CFM / h`, 1/kg.
    cfm_over_h: Lane,
    /// `1 / (J M^-1 J^T + CFM / h)`, 0 for padding.
    inverse_diagonal: Lane,
    /// `J M^-1 J^T`, 1/kg.
    inverse_effective_mass: Lane,
    /// The lower impulse bound (N s) of a row that is not a friction row; a friction row's
    /// friction coefficient (its bounds are that times its normal rows' impulses).
    lower_or_mu: Lane,
    /// The upper impulse bound of a row that is not a friction row, N s.
    upper: Lane,
    /// For friction rows, the run-relative range of the normal rows that bound it: the same in
    /// every lane.
    friction: Option<(u16, u16)>,
    /// Bit `k` set where lane `k`'s row is energy-clamped (clamp.rs).
    clamped: u8,
    /// Whether body B's linear block is body A's negated in every filled lane (the type's docs);
    /// otherwise it is the row's entry of [`LaneBatches::linear_b`].
    mirrored: bool,
}

/// The energy clamp's lanes of each [`LaneRow::clamped`] as numbers, 1 where clamped, so that the
/// sweep turns them into a mask with one load and one comparison.
const CLAMPED_LANES: [Lane; 1 << LANES] = {
    let mut table = [[0.0; LANES]; 1 << LANES];
    let mut bits = 0;
    while bits < 1 << LANES {
        let mut lane = 0;
        while lane < LANES {
            if bits & (1 << lane) != 0 {
                table[bits][lane] = 1.0;
            }
            lane += 1;
        }
        bits += 1;
    }
    table
};

/// Four runs of one shape that share no moving body.
#[derive(Clone, Copy, Debug)]
struct Batch {
    /// Index of the batch's first [`LaneRow`].
    first: usize,
    /// Rows per run.
    len: usize,
    /// Each lane's first row in its island's row list (`None` for padding).
    start: [Option<usize>; LANES],
    /// Each lane's velocity slots; padding uses an immovable slot.
    a: [usize; LANES],
    b: [usize; LANES],
    /// Each lane's energy budget (clamp.rs), when it has energy-clamped rows.
    pair: [Option<usize>; LANES],
}

/// Which solve a batch's rows take part in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// The velocity solve: the rows' targets, friction bounds and Su's clamp.
    Velocity,
    /// The split pass (split.rs): the split rows' targets on pseudo velocities, no clamp.
    Split,
}

/// One island's part in batches shared by several islands (one lane each).
#[derive(Clone, Copy)]
pub(crate) struct LaneIsland<'a> {
    /// Which solve's rows.
    pub(crate) pass: Pass,
    /// The island's prepared rows, their heads (head.rs) and its runs of rows between one body
    /// pair.
    pub(crate) prepared: &'a [Prepared],
    pub(crate) heads: &'a [RowHead],
    pub(crate) runs: &'a [(usize, usize)],
    /// Where the island's velocity slots and energy budgets start in the shared arrays.
    pub(crate) slot_offset: usize,
    pub(crate) pair_offset: usize,
}

/// What one sweep did in each lane.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LaneSweep {
    /// The largest `|delta| * diagonal` of the lane's rows, m/s.
    pub(crate) residual: Lane,
    /// Energy-clamped increments scaled down and dropped (clamp.rs).
    pub(crate) scaled: [usize; LANES],
    pub(crate) dropped: [usize; LANES],
}

/// The batches of one solve, kept in the solver workspace between solves.
#[derive(Default)]
pub(crate) struct LaneBatches {
    /// The batches' rows: the first `used` of `rows`. The rest are kept from earlier solves and
    /// overwritten in place (built on the stack and moved in, a row cost as much as the sweeps of
    /// a small island).
    rows: Vec<LaneRow>,
    /// Body B's linear block of each row that is not [`LaneRow::mirrored`], place for place with
    /// `rows` (the entries of mirrored rows are never read, so the sweeps do not stream them).
    linear_b: Vec<[Lane; 3]>,
    used: usize,
    /// Accumulated impulse of each lane row, N s: the sweeps' impulses while they run.
    lambdas: Vec<Lane>,
    batches: Vec<Batch>,
    /// `(contact level, first row, end)` of each run, sorted by level.
    order: Vec<(u32, usize, usize)>,
    /// Scratch of the dealing: one level's runs not yet dealt, the runs of one shape among them,
    /// and those that clashed with their batch.
    rest: Vec<(usize, usize)>,
    group: Vec<(usize, usize)>,
    spilled: Vec<(usize, usize)>,
}

/// Whether every friction row of `runs` is bounded by normal rows of its own run, as the batches
/// need (rows a caller lists apart are swept row by row instead), and every run is shorter than
/// [`u16::MAX`] rows.
pub(crate) fn runs_are_regular(heads: &[RowHead], runs: &[(usize, usize)]) -> bool {
    runs.iter().all(|&(start, end)| {
        end - start < usize::from(u16::MAX)
            && heads[start..end].iter().all(|row| match row.friction() {
                Some((first, last)) => start <= first && first < last && last <= end,
                None => true,
            })
    })
}

/// Whether two islands' runs have the same shapes in the same order, so that they can share
/// batches run by run.
pub(crate) fn same_runs(one: &LaneIsland<'_>, other: &LaneIsland<'_>) -> bool {
    one.runs.len() == other.runs.len()
        && one
            .runs
            .iter()
            .zip(other.runs)
            .all(|(&(s1, e1), &(s2, e2))| same_shape(&one.heads[s1..e1], s1, &other.heads[s2..e2], s2))
}

impl LaneBatches {
    /// Deals one `island`'s regular runs (ranges of its rows between one body pair, offsets zero)
    /// into batches and writes their rows (the impulses are [`LaneBatches::load_lambdas`]'s to
    /// write, so the batches can be built while the warm start runs); `world` is the world slot and
    /// `immovable` says which slots no impulse moves. Fewer than [`WIDE_RUNS`] runs are swept one
    /// after another in their own order (one lane each); more are ordered by the contact `levels`
    /// of the shock order (ground first) and each level's runs of one shape cut into [`LANES`]
    /// segments swept side by side.
    pub(crate) fn build_alone(
        &mut self,
        island: &LaneIsland<'_>,
        immovable: &[bool],
        levels: Option<&[u32]>,
        world: usize,
    ) {
        self.deal_alone(island, immovable, levels, world);
        self.fill_planned(island);
    }

    /// [`LaneBatches::build_alone`] without writing the rows: the batches are dealt and planned,
    /// and [`LaneBatches::fill_planned`] writes their rows when called. The dealing reads only the
    /// rows' heads, so it can go beside the warm start while the writing, which reads the prepared
    /// rows, waits for it and is then shared among the pool's threads.
    pub(crate) fn deal_alone(
        &mut self,
        island: &LaneIsland<'_>,
        immovable: &[bool],
        levels: Option<&[u32]>,
        world: usize,
    ) {
        self.used = 0;
        self.batches.clear();
        let (heads, runs) = (island.heads, island.runs);
        if runs.len() < WIDE_RUNS {
            for &run in runs {
                self.plan_batch(&[(island, run)], world);
            }
            return;
        }
        let moves = |slot: usize| !immovable.get(slot).copied().unwrap_or(true);
        let level = |slot: usize| levels.and_then(|l| l.get(slot).copied()).unwrap_or(0);
        self.order.clear();
        self.order.extend(runs.iter().map(|&(start, end)| {
            let row = &heads[start];
            (level(row.a()).max(level(row.b())), start, end)
        }));
        self.order.sort_by_key(|&(level, _, _)| level);
        let order = core::mem::take(&mut self.order);
        let mut rest = core::mem::take(&mut self.rest);
        let mut group = core::mem::take(&mut self.group);
        let mut level_start = 0;
        while level_start < order.len() {
            let level = order[level_start].0;
            let level_end = level_start + order[level_start..].iter().take_while(|run| run.0 == level).count();
            rest.clear();
            rest.extend(
                order[level_start..level_end]
                    .iter()
                    .map(|&(_, start, end)| (start, end)),
            );
            // One shape at a time, in the order the shapes first appear.
            while let Some(&(first, first_end)) = rest.first() {
                let shape = &heads[first..first_end];
                group.clear();
                rest.retain(|&(start, end)| {
                    let same = same_shape(shape, first, &heads[start..end], start);
                    if same {
                        group.push((start, end));
                    }
                    !same
                });
                self.deal(&group, island, &moves, world);
            }
            level_start = level_end;
        }
        self.order = order;
        self.rest = rest;
        self.group = group;
    }

    /// Deals islands whose runs have the same shapes ([`same_runs`], at most [`LANES`] of them)
    /// one island per lane: batch `k` holds run `k` of every island, so each island is swept in
    /// its own order, as alone. Velocity slots and budgets are those of shared arrays (each
    /// island's at its offsets); unfilled lanes use `padding_slot`, an immovable slot. The
    /// impulses are [`LaneBatches::load_lambdas`]'s to write.
    pub(crate) fn build_together(&mut self, islands: &[LaneIsland<'_>], padding_slot: usize) {
        self.used = 0;
        self.batches.clear();
        let Some(first) = islands.first() else {
            return;
        };
        for k in 0..first.runs.len() {
            let lanes: SmallVec<[(&LaneIsland<'_>, (usize, usize)); LANES]> = islands
                .iter()
                .take(LANES)
                .map(|island| (island, island.runs[k]))
                .collect();
            self.push_batch(&lanes, padding_slot);
        }
    }

    /// One Gauss-Seidel sweep over every batch, in the lanes marked `active` (the others are left
    /// as they are): updates `velocities`, the batches' impulses and the pairs' energy `budgets`.
    /// `masses` are the slots' `M^-1`, slot for slot with `velocities`.
    pub(crate) fn sweep(
        &mut self,
        velocities: &mut [Twist],
        masses: &[SlotMass],
        budgets: &mut [f64],
        active: [bool; LANES],
    ) -> LaneSweep {
        debug_assert_eq!(velocities.len(), masses.len());
        // No budgets, no energy-clamped row (each has its pair's budget): the split pass's
        // sweeps, which then skip the clamp's arithmetic (the same bits, as it changes nothing).
        let clamps = !budgets.is_empty();
        debug_assert!(clamps || self.rows[..self.used].iter().all(|row| row.clamped == 0));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[allow(unsafe_code)]
            // SAFETY: the processor was just found to execute AVX2 instructions.
            return unsafe {
                if clamps {
                    sweep_avx2::<true>(self, velocities, masses, budgets, active)
                } else {
                    sweep_avx2::<false>(self, velocities, masses, budgets, active)
                }
            };
        }
        if clamps {
            sweep_batches::<Portable, true>(self, velocities, masses, budgets, active)
        } else {
            sweep_batches::<Portable, false>(self, velocities, masses, budgets, active)
        }
    }

    /// The runs in the order the batches sweep them, lane by lane within a batch.
    #[cfg(test)]
    fn swept_runs(&self) -> Vec<(usize, usize)> {
        let starts = self
            .batches
            .iter()
            .flat_map(|batch| batch.start.iter().flatten().map(|&s| (s, s + batch.len)));
        starts.collect()
    }

    /// Sets each lane row's starting impulses: lane `l`'s from `lambdas_of(l)`, its island's row
    /// impulses (the same list in every lane for an island swept alone); padding lanes start at
    /// zero. Once after the batches are built, before the first sweep.
    pub(crate) fn load_lambdas<'a>(&mut self, lambdas_of: impl Fn(usize) -> &'a [f64]) {
        self.lambdas.clear();
        self.lambdas.resize(self.used, [0.0; LANES]);
        for batch in &self.batches {
            for (lane, start) in batch.start.iter().enumerate() {
                if let Some(start) = *start {
                    let from = &lambdas_of(lane)[start..start + batch.len];
                    let to = &mut self.lambdas[batch.first..batch.first + batch.len];
                    for (to, &from) in to.iter_mut().zip(from) {
                        to[lane] = from;
                    }
                }
            }
        }
    }

    /// Writes lane `lane`'s impulses back to its island's row impulses (all lanes, for an island
    /// swept alone).
    pub(crate) fn scatter(&self, lane: Option<usize>, lambdas: &mut [f64]) {
        for batch in &self.batches {
            for (l, start) in batch.start.iter().enumerate() {
                if let Some(start) = start.filter(|_| lane.is_none_or(|lane| lane == l)) {
                    for k in 0..batch.len {
                        lambdas[start + k] = self.lambdas[batch.first + k][l];
                    }
                }
            }
        }
    }

    /// Deals runs of one shape and one level into batches: the runs are cut into [`LANES`]
    /// consecutive segments, and batch `k` takes run `k` of each segment, so each segment is swept
    /// in its own order and the segments side by side. A run that would share a moving body with
    /// another of its batch goes to a batch of its own after them. The batches are planned here
    /// and their rows written once all are dealt ([`LaneBatches::fill_planned`]).
    fn deal(
        &mut self,
        group: &[(usize, usize)],
        island: &LaneIsland<'_>,
        moves: &impl Fn(usize) -> bool,
        world: usize,
    ) {
        let segment = group.len().div_ceil(LANES);
        let mut spilled = core::mem::take(&mut self.spilled);
        spilled.clear();
        for k in 0..segment {
            let mut lanes: SmallVec<[(&LaneIsland<'_>, (usize, usize)); LANES]> = SmallVec::new();
            for &run in group.iter().skip(k).step_by(segment) {
                let row = &island.heads[run.0];
                let clashes = lanes.iter().any(|&(_, (start, _))| {
                    let other = &island.heads[start];
                    let shared = |slot: usize| moves(slot) && (slot == other.a() || slot == other.b());
                    shared(row.a()) || shared(row.b())
                });
                if clashes {
                    spilled.push(run);
                } else {
                    lanes.push((island, run));
                }
            }
            self.plan_batch(&lanes, world);
        }
        for &run in &spilled {
            self.plan_batch(&[(island, run)], world);
        }
        self.spilled = spilled;
    }

    /// Adds a batch of the given `(island, run)` lanes (at least one, all of one shape and one
    /// pass), the rest padding on `padding_slot`.
    fn push_batch(&mut self, lanes: &[(&LaneIsland<'_>, (usize, usize))], padding_slot: usize) {
        let batch = self.plan_batch(lanes, padding_slot);
        let end = batch.first + batch.len;
        if self.rows.len() < end {
            self.rows.resize(end, LaneRow::padding(None));
            self.linear_b.resize(end, [[0.0; LANES]; 3]);
        }
        for k in 0..batch.len {
            let at = batch.first + k;
            let row = (&mut self.rows[at], &mut self.linear_b[at]);
            fill_row(&batch, k, row, |lane| lanes[lane].0);
        }
    }

    /// Adds the batch of the given lanes as [`LaneBatches::push_batch`] does, with its rows'
    /// places reserved but not written (see [`fill_row`]); returns it.
    fn plan_batch(&mut self, lanes: &[(&LaneIsland<'_>, (usize, usize))], padding_slot: usize) -> Batch {
        let (first, end) = lanes[0].1;
        let mut batch = Batch {
            first: self.used,
            len: end - first,
            start: [None; LANES],
            a: [padding_slot; LANES],
            b: [padding_slot; LANES],
            pair: [None; LANES],
        };
        for (lane, &(island, (start, end))) in lanes.iter().enumerate() {
            let run = &island.heads[start..end];
            batch.start[lane] = Some(start);
            batch.a[lane] = island.slot_offset + run[0].a();
            batch.b[lane] = island.slot_offset + run[0].b();
            batch.pair[lane] = (island.pass == Pass::Velocity)
                .then(|| run.iter().position(RowHead::clamped))
                .flatten()
                .map(|k| island.pair_offset + island.prepared[start + k].pair());
        }
        self.used += batch.len;
        self.batches.push(batch);
        batch
    }

    /// Writes the rows of every batch planned for the one `island`
    /// ([`LaneBatches::plan_batch`]). Each lane row is written on its own from its batch (found
    /// by its place: the batches' rows follow one another), so a large island's rows are written
    /// on the pool: the same rows whatever the thread count. Also called on its own for an island
    /// of the structure the batches were last dealt for (structure.rs): the same batches as
    /// dealing its runs again, with this island's rows.
    pub(crate) fn fill_planned(&mut self, island: &LaneIsland<'_>) {
        let used = self.used;
        if self.rows.len() < used {
            self.rows.resize(used, LaneRow::padding(None));
            self.linear_b.resize(used, [[0.0; LANES]; 3]);
        }
        let batches = &self.batches;
        // A stretch of lane rows finds the batch of its first row, then walks the batches along.
        let fill = |(stretch, (rows, linear_b)): (usize, (&mut [LaneRow], &mut [[Lane; 3]]))| {
            let first = stretch * FILL_STRETCH;
            let mut b = batches.partition_point(|batch| batch.first <= first) - 1;
            for (k, (row, linear_b)) in rows.iter_mut().zip(linear_b).enumerate() {
                let at = first + k;
                while batches[b].first + batches[b].len <= at {
                    b += 1;
                }
                let batch = &batches[b];
                fill_row(batch, at - batch.first, (row, linear_b), |_| island);
            }
        };
        let (rows, linear_b) = (&mut self.rows[..used], &mut self.linear_b[..used]);
        if used >= PARALLEL_FILL_ROWS {
            rows.par_chunks_mut(FILL_STRETCH)
                .zip(linear_b.par_chunks_mut(FILL_STRETCH))
                .enumerate()
                .for_each(fill);
        } else {
            rows.chunks_mut(FILL_STRETCH)
                .zip(linear_b.chunks_mut(FILL_STRETCH))
                .enumerate()
                .for_each(fill);
        }
    }
}

/// Lane rows from which an island's batches are written on the pool: the 210-box pyramid's 700
/// or so among them (it was 2048; median step on two threads 0.487 -> 0.479 ms, nine interleaved
/// rounds on a calm machine), whose writing otherwise waited on one thread for the rows the other
/// had prepared.
const PARALLEL_FILL_ROWS: usize = 512;

/// Lane rows written by one task of the pool.
const FILL_STRETCH: usize = 256;

/// Writes row `k` of `batch` into `row`, lane `j`'s from `island_of(j)`: padding first (padding
/// lanes stay so), then each lane in place.
fn fill_row<'a>(
    batch: &Batch,
    k: usize,
    (row, linear_b): (&mut LaneRow, &mut [Lane; 3]),
    island_of: impl Fn(usize) -> &'a LaneIsland<'a>,
) {
    let Some(first) = batch.start[0] else {
        return;
    };
    let shape = island_of(0);
    // Within a regular run (`runs_are_regular`), so the offsets fit.
    let friction = shape.prepared[first + k]
        .friction()
        .filter(|_| shape.pass == Pass::Velocity)
        .map(|(from, to, _)| ((from - first) as u16, (to - first) as u16));
    // Each lane is written whole, as padding or from its row: the row's earlier contents (an
    // earlier solve's) are never read. (Written as a whole padding row first, each row cost a
    // copy of its 488 bytes more: 2.6 percent of the aligned 1000-box pile's step on one thread.)
    row.friction = friction;
    row.clamped = 0;
    let mut block = [[0.0; LANES]; 3];
    let mut mirrored = true;
    for (lane, start) in batch.start.iter().enumerate() {
        let Some(start) = start else {
            row.pad(lane);
            continue;
        };
        let island = island_of(lane);
        let prepared = &island.prepared[start + k];
        row.fill(lane, prepared, island.pass);
        let (of_a, of_b) = (prepared.jacobian_a.linear(), prepared.jacobian_b.linear());
        for (c, (a, b)) in of_a.to_array().into_iter().zip(of_b.to_array()).enumerate() {
            block[c][lane] = b;
            mirrored &= (-a).to_bits() == b.to_bits();
        }
    }
    // Padding lanes never move anything, whatever their B block (the type's docs). A mirrored
    // row's side entry is never read, so it is not written either.
    row.mirrored = mirrored;
    if !mirrored {
        *linear_b = block;
    }
}

/// Whether two runs (starting at rows `first` and `start`) have friction rows in the same places,
/// bounded by normal rows in the same places.
fn same_shape(one: &[RowHead], first: usize, other: &[RowHead], start: usize) -> bool {
    let relative = |row: &RowHead, base: usize| row.friction().map(|(from, to)| (from - base, to - base));
    one.len() == other.len()
        && one
            .iter()
            .zip(other)
            .all(|(x, y)| relative(x, first) == relative(y, start))
}

impl LaneRow {
    /// A row of padding lanes (no Jacobian, no target, no bounds: they never move anything), for
    /// a friction row bounded by the run-relative normal rows `friction`.
    fn padding(friction: Option<(u16, u16)>) -> Self {
        Self {
            jacobian_a: [[0.0; LANES]; 6],
            angular_b: [[0.0; LANES]; 3],
            target: [0.0; LANES],
            cfm_over_h: [0.0; LANES],
            inverse_diagonal: [0.0; LANES],
            inverse_effective_mass: [0.0; LANES],
            lower_or_mu: [0.0; LANES],
            upper: [0.0; LANES],
            friction,
            clamped: 0,
            mirrored: false,
        }
    }

    /// Makes `lane` of this row padding in place: every lane entry zero, as in
    /// [`padding`](Self::padding) (the clamp bits and friction range are the whole row's, set by
    /// [`fill_row`]).
    fn pad(&mut self, lane: usize) {
        for component in self.jacobian_a.iter_mut().chain(&mut self.angular_b) {
            component[lane] = 0.0;
        }
        for entry in [
            &mut self.target,
            &mut self.cfm_over_h,
            &mut self.inverse_diagonal,
            &mut self.inverse_effective_mass,
            &mut self.lower_or_mu,
            &mut self.upper,
        ] {
            entry[lane] = 0.0;
        }
    }

    /// Puts `row` in `lane`, as `pass` solves it.
    #[inline]
    fn fill(&mut self, lane: usize, row: &Prepared, pass: Pass) {
        let put = |target: &mut LaneTwist, twist: &Twist| {
            for (component, value) in target.iter_mut().zip(twist.components()) {
                component[lane] = value;
            }
        };
        put(&mut self.jacobian_a, &row.jacobian_a);
        for (component, value) in self.angular_b.iter_mut().zip(row.jacobian_b.angular().to_array()) {
            component[lane] = value;
        }
        let velocity = pass == Pass::Velocity;
        self.target[lane] = if velocity {
            row.target
        } else {
            row.split_target().unwrap_or(0.0)
        };
        self.cfm_over_h[lane] = row.cfm_over_h;
        self.inverse_diagonal[lane] = row.inverse_diagonal;
        self.inverse_effective_mass[lane] = row.inverse_effective_mass();
        self.lower_or_mu[lane] = match row.friction().filter(|_| velocity) {
            Some((_, _, mu)) => mu,
            None => row.lower(),
        };
        self.upper[lane] = row.upper;
        if row.energy_clamp && velocity {
            self.clamped |= 1 << lane;
        }
    }
}

/// [`sweep_batches`] on AVX registers, compiled with AVX2 enabled.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn sweep_avx2<const CLAMPS: bool>(
    batches: &mut LaneBatches,
    velocities: &mut [Twist],
    masses: &[SlotMass],
    budgets: &mut [f64],
    active: [bool; LANES],
) -> LaneSweep {
    sweep_batches::<Avx, CLAMPS>(batches, velocities, masses, budgets, active)
}

/// One sweep over every batch; see [`LaneBatches::sweep`]. Without `CLAMPS` no row is
/// energy-clamped and `budgets` is empty, and the clamp's arithmetic is left out.
#[inline(always)]
fn sweep_batches<W: Wide, const CLAMPS: bool>(
    batches: &mut LaneBatches,
    velocities: &mut [Twist],
    masses: &[SlotMass],
    budgets: &mut [f64],
    active: [bool; LANES],
) -> LaneSweep {
    let LaneBatches {
        rows,
        linear_b,
        lambdas,
        batches,
        ..
    } = batches;
    let mut sweep = LaneSweep::default();
    let on = W::load(&each(|lane| if active[lane] { 1.0 } else { 0.0 })).greater(W::splat(0.5));
    let (zero, half) = (W::splat(0.0), W::splat(0.5));
    let mut residual = zero;
    for batch in batches.iter() {
        let mut va = gather::<W>(velocities, &batch.a);
        let mut vb = gather::<W>(velocities, &batch.b);
        let (mass_a, mass_b) = (
            LaneMass::<W>::gather(masses, &batch.a),
            LaneMass::<W>::gather(masses, &batch.b),
        );
        let mut budget = if CLAMPS {
            W::load(&each(|lane| batch.pair[lane].map_or(0.0, |pair| budgets[pair])))
        } else {
            zero
        };
        let rows = &rows[batch.first..batch.first + batch.len];
        let linear_b = &linear_b[batch.first..batch.first + batch.len];
        let lambdas = &mut lambdas[batch.first..batch.first + batch.len];
        for (k, row) in rows.iter().enumerate() {
            let lambda = W::load(&lambdas[k]);
            let jacobian_a: [W; 6] = core::array::from_fn(|c| W::load(&row.jacobian_a[c]));
            let jacobian_b: [W; 6] = core::array::from_fn(|c| match c {
                0..3 if row.mirrored => jacobian_a[c].neg(),
                0..3 => W::load(&linear_b[k][c]),
                _ => W::load(&row.angular_b[c - 3]),
            });
            // `J v` summed as `Prepared::relative_velocity_of` sums it.
            let product = |k: usize| {
                let a = jacobian_a[k].mul(va[k]).add(jacobian_a[k + 3].mul(va[k + 3]));
                let b = jacobian_b[k].mul(vb[k]).add(jacobian_b[k + 3].mul(vb[k + 3]));
                a.add(b)
            };
            let jv = product(0).add(product(1)).add(product(2).add(zero));
            let (lower, upper) = match row.friction {
                Some((from, to)) => {
                    let normals = &lambdas[usize::from(from)..usize::from(to)];
                    let normal = normals.iter().fold(zero, |sum, l| sum.add(W::load(l).abs()));
                    let limit = W::load(&row.lower_or_mu).mul(normal);
                    (limit.neg(), limit)
                }
                None => (W::load(&row.lower_or_mu), W::load(&row.upper)),
            };
            let wanted = W::load(&row.target)
                .sub(jv)
                .sub(W::load(&row.cfm_over_h).mul(lambda))
                .mul(W::load(&row.inverse_diagonal));
            let delta = lambda.add(wanted).clamp(lower, upper).sub(lambda);
            let delta = W::select(on, delta, zero);

            // Su's clamp (clamp.rs, `clamp_row_increment_within`) in the energy-clamped lanes,
            // each charging its pair's budget with the increment's exact energy change.
            let inverse_effective_mass = W::load(&row.inverse_effective_mass);
            let delta = if CLAMPS {
                let slope = delta.mul(jv); // P, J
                let curvature = delta.mul(delta).mul(inverse_effective_mass); // Q, J
                let allowed = W::select(budget.greater(zero), budget, zero);
                let clamped = W::load(&CLAMPED_LANES[usize::from(row.clamped)]).greater(half);
                let charged = W::and(clamped, delta.non_zero());
                let over = W::and(charged, slope.add(half.mul(curvature)).not_at_most(allowed));
                let delta = if W::any(over) {
                    W::load(&scaled(
                        delta.store(),
                        W::flags(over),
                        (slope.store(), curvature.store(), allowed.store()),
                        &mut sweep,
                    ))
                } else {
                    delta
                };
                let change = delta
                    .mul(jv)
                    .add(half.mul(delta).mul(delta).mul(inverse_effective_mass));
                budget = W::select(charged, budget.sub(change), budget);
                delta
            } else {
                delta
            };

            // A zero increment changes nothing, not even the sign of a zero (as row by row).
            let moved = delta.non_zero();
            lambdas[k] = W::select(moved, lambda.add(delta), lambda).store();
            let (response_a, response_b) = (mass_a.response(&jacobian_a), mass_b.response(&jacobian_b));
            for c in 0..6 {
                va[c] = W::select(moved, va[c].add(response_a[c].mul(delta)), va[c]);
                vb[c] = W::select(moved, vb[c].add(response_b[c].mul(delta)), vb[c]);
            }
            let diagonal = inverse_effective_mass.add(W::load(&row.cfm_over_h));
            let change = delta.abs().mul(diagonal);
            residual = W::select(change.greater(residual), change, residual);
        }
        let (mut a, mut b) = ([[0.0; LANES]; 6], [[0.0; LANES]; 6]);
        for c in 0..6 {
            a[c] = va[c].store();
            b[c] = vb[c].store();
        }
        let (va, vb, budget) = (a, b, budget.store());
        for lane in (0..LANES).filter(|&lane| active[lane]) {
            velocities[batch.a[lane]] = twist_of(&va, lane);
            velocities[batch.b[lane]] = twist_of(&vb, lane);
            if let Some(pair) = batch.pair[lane].filter(|_| CLAMPS) {
                budgets[pair] = budget[lane];
            }
        }
    }
    sweep.residual = residual.store();
    sweep
}

/// The increments `delta` of the lanes `over` their budget scaled by Su's factor, the larger root
/// of `eps P + eps^2 Q / 2 = budget` (clamp.rs), or dropped where it is not positive; counted in
/// `tally`. `(P, Q, budget)` per lane.
#[inline(never)]
fn scaled(
    mut delta: Lane,
    over: [bool; LANES],
    (slope, curvature, allowed): (Lane, Lane, Lane),
    tally: &mut LaneSweep,
) -> Lane {
    for lane in (0..LANES).filter(|&lane| over[lane]) {
        let root = budget_root(slope[lane], curvature[lane], allowed[lane]);
        if root <= 0.0 {
            tally.dropped[lane] += 1;
            delta[lane] = 0.0;
        } else {
            tally.scaled[lane] += 1;
            delta[lane] *= if root < 1.0 { root } else { 1.0 };
        }
    }
    delta
}

/// `[f(0), f(1), ..]`: one value per lane.
#[inline(always)]
fn each<T: Copy + Default>(f: impl Fn(usize) -> T) -> [T; LANES] {
    let mut out = [T::default(); LANES];
    for (lane, value) in out.iter_mut().enumerate() {
        *value = f(lane);
    }
    out
}

/// The velocities of `slots`, one lane each.
#[inline(always)]
fn gather<W: Wide>(velocities: &[Twist], slots: &[usize; LANES]) -> [W; 6] {
    let twists: [[f64; 6]; LANES] = each(|lane| velocities[slots[lane]].components());
    let mut out = [W::splat(0.0); 6];
    for (component, value) in out.iter_mut().enumerate() {
        *value = W::load(&each(|lane| twists[lane][component]));
    }
    out
}

/// The `M^-1` of one body in each lane (lanes.rs, [`SlotMass`]).
struct LaneMass<W> {
    inverse_mass: W,
    /// The inverse inertia's columns, three entries each.
    inverse_inertia: [W; 9],
}

impl<W: Wide> LaneMass<W> {
    /// The masses of `slots`, one lane each.
    #[inline(always)]
    fn gather(masses: &[SlotMass], slots: &[usize; LANES]) -> Self {
        let of: [&SlotMass; LANES] = core::array::from_fn(|lane| &masses[slots[lane]]);
        Self {
            inverse_mass: W::load(&each(|lane| of[lane].inverse_mass)),
            inverse_inertia: core::array::from_fn(|k| W::load(&each(|lane| of[lane].inverse_inertia[k]))),
        }
    }

    /// The body's response to a unit impulse along its Jacobian block `jacobian`, `M^-1 J^T`: the
    /// products and sums of [`SolverBody::response`](crate::body::SolverBody::response), in its
    /// order.
    #[inline(always)]
    fn response(&self, jacobian: &[W; 6]) -> [W; 6] {
        let j = |c: usize| jacobian[c];
        let m = &self.inverse_inertia;
        let angular = |i: usize| m[i].mul(j(3)).add(m[3 + i].mul(j(4))).add(m[6 + i].mul(j(5)));
        [
            j(0).mul(self.inverse_mass),
            j(1).mul(self.inverse_mass),
            j(2).mul(self.inverse_mass),
            angular(0),
            angular(1),
            angular(2),
        ]
    }
}

/// Lane `lane` of `velocity` as a twist.
#[inline(always)]
fn twist_of(velocity: &LaneTwist, lane: usize) -> Twist {
    let c = |k: usize| velocity[k][lane];
    Twist::new(glam::DVec3::new(c(0), c(1), c(2)), glam::DVec3::new(c(3), c(4), c(5)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{NO_BODY, SolverBody};
    use crate::contact::{ContactPoint, push_contact_rows};
    use crate::head::heads_of;
    use crate::pgs::{PairKeys, assign_pairs, sweep_rows};
    use crate::settings::SolveReport;
    use crate::shock::ShockOrder;
    use crate::split::{SplitBuffers, start_split, sweep_split_rows};
    use crate::test_scenes::{prepare_rows, push_stacked_patch};
    use glam::{DMat3, DVec3};
    use shatter_integrators::SplitMix64;

    const DT: f64 = 1.0 / 30.0;

    /// A wall of boxes two high (`bottom` on the ground, one fewer on top, each on two below),
    /// moving and spinning at random, with patches of four and of three points and single
    /// contacts (three shapes of run), random warm impulses and small energy budgets so that Su's
    /// clamp acts. Every other box is turned, so that its inverse inertia is a full matrix (the
    /// sweeps form each row's response from it), and the whole wall is turned. Returns the prepared rows, their runs, impulses,
    /// velocities, the slots' `M^-1`, budgets, the slots no impulse moves and the contact levels.
    #[allow(clippy::type_complexity)]
    fn wall(
        rng: &mut SplitMix64,
        bottom: usize,
    ) -> (
        Vec<Prepared>,
        Vec<(usize, usize)>,
        Vec<f64>,
        Vec<Twist>,
        Vec<SlotMass>,
        Vec<f64>,
        Vec<bool>,
        Vec<u32>,
    ) {
        let count = 2 * bottom - 1;
        let bodies: Vec<SolverBody> = (0..count)
            .map(|k| {
                let principal = DMat3::from_diagonal(DVec3::new(6.0, 4.0, 9.0) / rng.range(0.5, 3.0));
                let turn = DMat3::from_axis_angle(rng.unit_vector(), if k % 2 == 0 { 0.0 } else { 0.7 });
                SolverBody {
                    linear_velocity: rng.unit_vector() * rng.range(0.0, 1.0),
                    angular_velocity: rng.unit_vector() * rng.range(0.0, 1.0),
                    inverse_mass: 1.0 / rng.range(0.5, 3.0),
                    inverse_inertia: turn * principal * turn.transpose(),
                }
            })
            .collect();
        let mut rows = Vec::new();
        let patch = |rows: &mut Vec<_>, a: u32, b: u32, points: usize, rng: &mut SplitMix64| {
            let corners = [(-0.4, -0.5), (0.4, -0.5), (0.4, 0.5), (-0.4, 0.5)];
            let friction = (rng.range(0.0, 1.2), rng.range(0.0, 1.0) < 0.9);
            push_stacked_patch(
                rows,
                &bodies,
                (a, b),
                &corners[..points],
                (rng, (-0.01, 0.02)),
                friction,
            );
        };
        for i in 0..bottom {
            patch(&mut rows, i as u32, NO_BODY, 4, rng);
        }
        for top in bottom..count {
            let left = (top - bottom) as u32;
            patch(&mut rows, top as u32, left, if top % 3 == 0 { 3 } else { 4 }, rng);
            if top % 4 == 0 {
                let contact = ContactPoint::new(
                    top as u32,
                    left + 1,
                    DVec3::new(0.3, -0.5, 0.0),
                    DVec3::new(-0.2, 0.5, 0.0),
                    DVec3::Y,
                    0.01,
                    0.5,
                );
                push_contact_rows(&mut rows, &bodies, &contact, DT).unwrap();
            } else {
                patch(&mut rows, top as u32, left + 1, 4, rng);
            }
        }
        // The wall turned as a whole, so that every Jacobian has all six components.
        let turn = DMat3::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.4);
        // Every seventh row's B block is skewed off A's, as a general Jacobian's is, so that the
        // batches hold rows whose B block is stored besides those that negate A's.
        for (index, row) in rows.iter_mut().enumerate() {
            let j = &mut row.jacobian;
            (j.linear_a, j.angular_a) = (turn * j.linear_a, turn * j.angular_a);
            (j.linear_b, j.angular_b) = (turn * j.linear_b, turn * j.angular_b);
            if index % 7 == 3 {
                j.linear_b = 1.1 * j.linear_b + DVec3::new(0.0, 0.05, 0.0);
            }
        }
        let mut prepared = prepare_rows(&rows, &bodies, DT);
        let heads = heads_of(&prepared);
        let pairs = assign_pairs(&mut prepared, &heads, &mut PairKeys::default());
        let budgets: Vec<f64> = (0..pairs).map(|_| rng.range(0.0, 0.02)).collect();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for (index, row) in prepared.iter().enumerate() {
            match runs.last_mut() {
                Some((start, end)) if prepared[*start].a() == row.a() && prepared[*start].b() == row.b() => {
                    *end = index + 1
                }
                _ => runs.push((index, index + 1)),
            }
        }
        let lambdas: Vec<f64> = (0..prepared.len()).map(|_| rng.range(0.0, 0.3)).collect();
        let velocities: Vec<Twist> = bodies
            .iter()
            .map(|b| Twist::new(b.linear_velocity, b.angular_velocity))
            .chain([Twist::default()])
            .collect();
        let immovable: Vec<bool> = (0..=count).map(|slot| slot == count).collect();
        let mut order = ShockOrder::default();
        order.rebuild(&heads_of(&prepared), &immovable);
        let levels = order.levels().to_vec();
        let mut masses = Vec::new();
        SlotMass::fill(&bodies, &mut masses);
        (prepared, runs, lambdas, velocities, masses, budgets, immovable, levels)
    }

    /// One build of the sweep: the dispatching one, or the portable one.
    type SweepBuild = fn(&mut LaneBatches, &mut [Twist], &[SlotMass], &mut [f64]) -> LaneSweep;

    /// The dispatching sweep and the portable one, with Su's clamp (`CLAMPS`, the velocity
    /// solve's) or without (the split pass's).
    fn builds<const CLAMPS: bool>() -> [SweepBuild; 2] {
        [
            |lanes, v, m, b| lanes.sweep(v, m, b, [true; LANES]),
            |lanes, v, m, b| sweep_batches::<Portable, CLAMPS>(lanes, v, m, b, [true; LANES]),
        ]
    }

    /// Everything a sweep changes, as bits.
    fn bits(lambdas: &[f64], velocities: &[Twist], budgets: &[f64]) -> Vec<u64> {
        let velocities = velocities.iter().flat_map(Twist::components);
        lambdas
            .iter()
            .copied()
            .chain(velocities)
            .chain(budgets.iter().copied())
            .map(f64::to_bits)
            .collect()
    }

    #[test]
    fn lanes_sweep_gives_the_bits_of_row_by_row_in_the_order_it_deals() {
        let mut rng = SplitMix64::new(5);
        let mut clamped = 0;
        // The last wall deals enough lane rows to have its batches written on the pool.
        for bottom in [3, 12, 30, 500] {
            let (prepared, runs, lambdas, velocities, masses, budgets, immovable, levels) = wall(&mut rng, bottom);
            let world = velocities.len() - 1;
            let heads = heads_of(&prepared);
            let island = || LaneIsland {
                pass: Pass::Velocity,
                prepared: &prepared,
                heads: &heads,
                runs: &runs,
                slot_offset: 0,
                pair_offset: 0,
            };
            let mut lanes = LaneBatches::default();
            lanes.build_alone(&island(), &immovable, Some(&levels), world);
            lanes.load_lambdas(|_| &lambdas);
            let order = lanes.swept_runs();
            let mut dealt = order.clone();
            dealt.sort_unstable();
            assert_eq!(dealt, runs, "every run dealt once");
            if bottom == 500 {
                assert!(lanes.used >= PARALLEL_FILL_ROWS, "{} lane rows", lanes.used);
            }
            let used = &lanes.rows[..lanes.used];
            let mirrored = used.iter().filter(|row| row.mirrored).count();
            assert!(
                mirrored > 0 && mirrored < used.len(),
                "{mirrored} of {} lane rows negate A's block",
                used.len()
            );
            if runs.len() >= WIDE_RUNS {
                let full = |batch: &Batch| batch.start.iter().all(Option::is_some);
                assert!(lanes.batches.iter().any(full), "a wide wall fills batches");
            } else {
                assert_eq!(order, runs, "a small island is swept in its own order");
            }

            let (mut l, mut v, mut b) = (lambdas.clone(), velocities.clone(), budgets.clone());
            let mut report = SolveReport::default();
            let rowwise: Vec<f64> = (0..6)
                .map(|_| sweep_rows((&prepared, &masses), &order, &mut v, &mut l, &mut b, &mut report))
                .collect();
            clamped += report.scaled_increments + report.dropped_increments;

            for sweep in builds::<true>() {
                lanes.build_alone(&island(), &immovable, Some(&levels), world);
                lanes.load_lambdas(|_| &lambdas);
                let (mut lv, mut lb) = (velocities.clone(), budgets.clone());
                let (mut scaled, mut dropped) = (0, 0);
                for &residual in &rowwise {
                    let outcome = sweep(&mut lanes, &mut lv, &masses, &mut lb);
                    assert_eq!(
                        outcome.residual.into_iter().fold(0.0, f64::max).to_bits(),
                        residual.to_bits()
                    );
                    scaled += outcome.scaled.iter().sum::<usize>();
                    dropped += outcome.dropped.iter().sum::<usize>();
                }
                let mut ll = lambdas.clone();
                lanes.scatter(None, &mut ll);
                assert!(bits(&ll, &lv, &lb) == bits(&l, &v, &b), "{bottom} boxes at the bottom");
                assert_eq!((scaled, dropped), (report.scaled_increments, report.dropped_increments));
            }
        }
        assert!(clamped > 0, "the budgets must make Su's clamp act");
    }

    /// The split pass's sweeps in batches, which leave out Su's clamp (no budgets), give the bits
    /// of its row-by-row sweeps (split.rs) in the order the batches deal the runs.
    #[test]
    fn lanes_split_sweep_gives_the_bits_of_row_by_row_split_sweeps() {
        let mut rng = SplitMix64::new(11);
        for bottom in [12, 500] {
            let (prepared, _, _, velocities, masses, _, immovable, levels) = wall(&mut rng, bottom);
            let world = velocities.len() - 1;
            let heads = heads_of(&prepared);
            let mut buffers = SplitBuffers::default();
            assert!(
                start_split(&heads, world, &mut buffers, false),
                "the wall has depths to correct"
            );
            let island = || buffers.lane_island((&prepared, &heads), 0);
            let mut lanes = LaneBatches::default();
            lanes.build_alone(&island(), &immovable, Some(&levels), world);
            let order = lanes.swept_runs();
            let full = |batch: &Batch| batch.start.iter().all(Option::is_some);
            assert!(lanes.batches.iter().any(full), "a wide wall fills batches");

            let zero = vec![0.0; prepared.len()];
            let (mut l, mut u) = (zero.clone(), vec![Twist::default(); world + 1]);
            let rowwise: Vec<f64> = (0..10)
                .map(|_| sweep_split_rows((&prepared, &masses), &order, &mut u, &mut l))
                .collect();
            assert!(rowwise[0] > 0.0, "the first sweep pushes");

            for sweep in builds::<false>() {
                lanes.build_alone(&island(), &immovable, Some(&levels), world);
                lanes.load_lambdas(|_| &zero);
                let mut lu = vec![Twist::default(); world + 1];
                for &residual in &rowwise {
                    let outcome = sweep(&mut lanes, &mut lu, &masses, &mut []);
                    let lane_residual = outcome.residual.into_iter().fold(0.0, f64::max);
                    assert_eq!(lane_residual.to_bits(), residual.to_bits());
                }
                let mut ll = zero.clone();
                lanes.scatter(None, &mut ll);
                assert!(bits(&ll, &lu, &[]) == bits(&l, &u, &[]), "{bottom} boxes at the bottom");
            }
        }
    }
}
