//! The constraint solve split into islands, solved in parallel.
//!
//! Rows couple only the dynamic bodies they touch, so the LCP of a step falls apart into
//! independent blocks: the islands of dynamic bodies linked by rows (union-find, as for sleep).
//! Static and kinematic bodies do not link islands (no row changes their velocity), so each island
//! gets its own copy of those it touches. Each island is solved on its own bodies and rows, in the
//! global row order; islands of one make (as many bodies and rows: the columns of a pile) go to
//! the solver four at a time (`shatter_solver::solve_together`, which sweeps them side by side and
//! gives each the bits it gets alone). The calls run in parallel on the rayon pool; the bodies'
//! velocities are merged back island by island, and each row takes its impulses from its own
//! island's solve (a large step's rows on the pool). A solve is a pure function of its island,
//! so the results are the same bits whatever the thread count and the grouping.

use rayon::prelude::*;
use shatter_solver::{
    IslandSolve, NO_BODY, Row, SolveReport, SolverBody, SolverError, SolverSettings, SolverWorkspace, SplitVelocity,
    solve_together, solve_with,
};
use smallvec::SmallVec;

use crate::islands::UnionFind;

/// Islands of one make handed to the solver in one call: one per lane of its batches.
const ISLANDS_TOGETHER: usize = 4;

/// What the solves of all islands did together.
#[derive(Clone, Debug, Default)]
pub(crate) struct IslandsReport {
    /// Islands solved.
    pub(crate) islands: usize,
    /// The most sweeps (velocity plus split) any island ran.
    pub(crate) iterations: usize,
    /// Energy-clamped increments scaled down or dropped, all islands.
    pub(crate) clamped: usize,
    /// Split velocity per body of the global slice.
    pub(crate) split: Vec<SplitVelocity>,
    /// Islands the solver refused (their bodies and rows were left as they were), with why.
    pub(crate) failures: Vec<String>,
}

/// One island: its bodies (global indices, ascending) and its rows (global indices, ascending).
#[derive(Debug, Default)]
pub(crate) struct Island {
    bodies: Vec<u32>,
    rows: Vec<usize>,
    /// Whether a kinematic body is among `bodies` (then they need sorting once listed).
    touches_kinematic: bool,
}

/// The memory one island's solve works in: its bodies and rows renumbered to local indices, as
/// the solver takes them, the solver's workspace and what the solve returned. Slots are handed to
/// the islands by size, the largest island the first slot, so each slot grows to about the same
/// size step after step: given out by island order instead, every slot grew in turn to the
/// largest island of a shattering pile (gigabytes kept, and the pages faulted in afresh each time
/// one grew).
#[derive(Debug, Default)]
pub(crate) struct IslandSlot {
    local_bodies: Vec<SolverBody>,
    local_rows: Vec<Row>,
    /// For a large island, each body's number in it (`NO_BODY` for bodies outside it).
    local_of: Vec<u32>,
    workspace: SolverWorkspace,
    result: Option<Result<SolveReport, SolverError>>,
}

/// The islands of the last solve and the slots they were solved in, kept for their memory.
#[derive(Debug, Default)]
pub(crate) struct IslandScratch {
    islands: Vec<Island>,
    slots: Vec<IslandSlot>,
    /// Island numbers from the largest island down: island `by_size[s]` is solved in slot `s`.
    by_size: Vec<usize>,
    /// The slot of each island.
    slot_of: Vec<u32>,
    /// Island number of each union-find root, `u32::MAX` for none yet.
    number: Vec<u32>,
    /// The bodies' islands, and each body's root.
    sets: UnionFind,
    roots: Vec<usize>,
    /// Each row's bodies `[a, b]`.
    ends: Vec<[u32; 2]>,
    /// Each row's island and its place in the island's row list, `u32::MAX` for rows in none.
    places: Vec<[u32; 2]>,
    /// Each island's outcome: solved, refused, or (`None`) not solved.
    solved: Vec<Option<bool>>,
}

/// Solves `rows` over `bodies` island by island; updates velocities and impulses in place.
pub(crate) fn solve_islands(
    bodies: &mut [SolverBody],
    rows: &mut [Row],
    dt: f64,
    settings: &SolverSettings,
    scratch: &mut IslandScratch,
) -> IslandsReport {
    let count = find_islands(bodies, rows, scratch);
    let mut outcome = IslandsReport {
        islands: count,
        split: vec![SplitVelocity::default(); bodies.len()],
        ..IslandsReport::default()
    };
    if scratch.slots.len() < count {
        scratch.slots.resize_with(count, IslandSlot::default);
    }
    let (islands, slots) = (&scratch.islands[..count], &mut scratch.slots[..count]);
    // One island holding every body and row (a pile, a pyramid): solved in place, no renumbering.
    if let [island] = islands
        && island.bodies.len() == bodies.len()
        && island.rows.len() == rows.len()
    {
        let result = solve_with(&mut slots[0].workspace, bodies, rows, dt, settings);
        let failed = result.is_err();
        merge_report(&mut outcome, island, result, |k| k);
        if failed {
            for row in rows.iter_mut() {
                (row.lambda, row.warm) = (0.0, 0.0);
            }
        }
        return outcome;
    }
    // Slots by size (the struct's docs); islands of one make go to the solver four at a time
    // (module docs), neighbours in the size order.
    let make = |island: &Island| (island.rows.len(), island.bodies.len());
    let by_size = &mut scratch.by_size;
    by_size.clear();
    by_size.extend(0..count);
    by_size.sort_by_key(|&k| (core::cmp::Reverse(make(&islands[k])), k));
    let mut groups: Vec<SmallVec<[(&Island, &mut IslandSlot); ISLANDS_TOGETHER]>> = Vec::new();
    for (&k, slot) in by_size.iter().zip(slots.iter_mut()) {
        let island = &islands[k];
        match groups.last_mut() {
            Some(group) if group.len() < ISLANDS_TOGETHER && make(group[0].0) == make(island) => {
                group.push((island, slot))
            }
            _ => groups.push(smallvec::smallvec![(island, slot)]),
        }
    }
    let (global_bodies, global_rows) = (&*bodies, &*rows);
    let solve_group = |group: &mut SmallVec<[(&Island, &mut IslandSlot); ISLANDS_TOGETHER]>| {
        for (island, slot) in group.iter_mut() {
            slot.renumber(island, global_bodies, global_rows);
        }
        let mut solves: SmallVec<[IslandSolve<'_>; ISLANDS_TOGETHER]> = group
            .iter_mut()
            .map(|(_, slot)| IslandSolve {
                workspace: &mut slot.workspace,
                bodies: &mut slot.local_bodies,
                rows: &mut slot.local_rows,
            })
            .collect();
        let results = solve_together(&mut solves, dt, settings);
        drop(solves);
        for ((_, slot), result) in group.iter_mut().zip(results) {
            slot.result = Some(result);
        }
    };
    // The largest island (a heap of debris: most of the step's rows) shares its own solve among
    // threads, and the others go beside it from the start. Handed to the pool as one list, the
    // list was cut in two halves once: the thread holding the first half solved its other
    // islands one after another once the largest was done, while the rest of the pool waited.
    if let Some((largest, others)) = groups.split_first_mut() {
        rayon::join(|| solve_group(largest), || others.par_iter_mut().for_each(solve_group));
    }
    drop(groups);
    // Merged in island order, as the report's lists are.
    let slot_of = &mut scratch.slot_of;
    slot_of.clear();
    slot_of.resize(count, 0);
    for (slot, &k) in scratch.by_size.iter().enumerate() {
        slot_of[k] = slot as u32;
    }
    let solved = &mut scratch.solved;
    solved.clear();
    for (k, island) in scratch.islands[..count].iter().enumerate() {
        let slot = &mut scratch.slots[slot_of[k] as usize];
        let Some(result) = slot.result.take() else {
            solved.push(None);
            continue;
        };
        solved.push(Some(result.is_ok()));
        merge_report(&mut outcome, island, result, |j| island.bodies[j] as usize);
        if solved[k] == Some(true) {
            for (j, &global) in island.bodies.iter().enumerate() {
                bodies[global as usize] = slot.local_bodies[j];
            }
        }
    }
    // Each row takes its impulses from its island's solve (zero when the solver refused the
    // island); every row is written on its own, so a heap of debris shares them among threads.
    let (slots, slot_of, solved) = (&scratch.slots, &scratch.slot_of, &scratch.solved);
    let merge_row = |(row, &[k, j]): (&mut Row, &[u32; 2])| {
        let Some(&Some(ok)) = solved.get(k as usize) else {
            return;
        };
        (row.lambda, row.warm) = if ok {
            let local = &slots[slot_of[k as usize] as usize].local_rows[j as usize];
            (local.lambda, local.warm)
        } else {
            (0.0, 0.0)
        };
    };
    if rows.len() >= PARALLEL_ROWS {
        rows.par_iter_mut().zip(scratch.places.par_iter()).for_each(merge_row);
    } else {
        rows.iter_mut().zip(&scratch.places).for_each(merge_row);
    }
    outcome
}

/// Adds one island's solve to `outcome`: counts and split velocities (local body `k` is global
/// body `global(k)`), or the failure.
fn merge_report(
    outcome: &mut IslandsReport,
    island: &Island,
    result: Result<SolveReport, SolverError>,
    global: impl Fn(usize) -> usize,
) {
    match result {
        Ok(report) => {
            outcome.iterations = outcome.iterations.max(report.iterations + report.split_iterations);
            outcome.clamped += report.scaled_increments + report.dropped_increments;
            for (k, split) in report.split_velocities.iter().enumerate() {
                outcome.split[global(k)] = *split;
            }
        }
        Err(error) => outcome
            .failures
            .push(format!("an island of {} rows: {error}", island.rows.len())),
    }
}

impl IslandSlot {
    /// Copies `island`'s bodies and rows out of the step's `bodies` and `rows` into the slot's
    /// local lists, renumbered: bodies by their place in the island's body list, friction rows' normal
    /// rows by their place in its row list (both lists ascending, so a binary search finds them;
    /// a kinematic body shared by several islands gets its own number in each). Reads only, so the
    /// islands renumber in parallel.
    fn renumber(&mut self, island: &Island, bodies: &[SolverBody], rows: &[Row]) {
        let (members, own_rows) = (&island.bodies, &island.rows);
        let Self {
            local_bodies,
            local_rows,
            local_of,
            ..
        } = self;
        // A large island looks its bodies up in a table of every body (the same numbers as the
        // search; a heap of debris in one island has thousands).
        let table = members.len() >= TABLE_BODIES;
        if table {
            local_of.clear();
            local_of.resize(bodies.len(), NO_BODY);
            for (k, &global) in members.iter().enumerate() {
                if global != NO_BODY {
                    local_of[global as usize] = k as u32;
                }
            }
        }
        let local = |global: u32| {
            if global == NO_BODY {
                NO_BODY
            } else if table {
                local_of[global as usize]
            } else {
                members.binary_search(&global).map_or(NO_BODY, |k| k as u32)
            }
        };
        local_bodies.clear();
        local_bodies.extend(members.iter().map(|&b| bodies[b as usize]));
        let renumbered = |(k, &r): (usize, &usize)| {
            let mut row = rows[r];
            row.a = local(row.a);
            row.b = local(row.b);
            if let Some(friction) = row.friction.as_mut() {
                // The normal row is in the same island (it shares the friction row's bodies),
                // usually a few rows before this one (a contact's or patch's rows come together).
                let (wanted, from) = (friction.normal_row as usize, k.saturating_sub(NEAR_ROWS));
                let near = own_rows[from..k]
                    .iter()
                    .rposition(|&other| other == wanted)
                    .map(|j| from + j);
                friction.normal_row = near
                    .or_else(|| own_rows.binary_search(&wanted).ok())
                    .map_or(u32::MAX, |j| j as u32);
            }
            row
        };
        // Each row is renumbered on its own, so a large island (a heap of debris holds most of
        // the step's rows) shares the copying among threads: the same rows in the same order.
        local_rows.clear();
        if own_rows.len() >= PARALLEL_ROWS {
            local_rows.par_extend(own_rows.par_iter().enumerate().map(renumbered));
        } else {
            local_rows.extend(own_rows.iter().enumerate().map(renumbered));
        }
    }
}

/// Rows from which an island is renumbered, and the solved impulses are merged back into the
/// step's rows, on the pool (the random 1000-box pile's largest island, about 14 000 rows, took
/// 0.37 ms to renumber on one thread; the 210-box pyramid's 2800 rows pay for a second thread
/// too, solve.rs's `PARALLEL_APPEND_ROWS`).
const PARALLEL_ROWS: usize = 1024;

/// Bodies from which an island renumbers them through a table rather than by search.
const TABLE_BODIES: usize = 256;

/// Rows before a friction row searched for its normal row before the whole island's rows are.
const NEAR_ROWS: usize = 8;

/// Finds the islands of `rows` into `scratch.islands` (the first of them; returns how many),
/// ordered by their first row; rows touching no dynamic body are left out (nothing they do can
/// change a velocity).
fn find_islands(bodies: &[SolverBody], rows: &[Row], scratch: &mut IslandScratch) -> usize {
    let dynamic = |b: u32| b != NO_BODY && bodies[b as usize].is_dynamic();
    // Each row's two bodies, read out of the rows once: both passes below need only them, and a
    // heap of debris in one island streams tens of megabytes of rows per pass.
    let ends = &mut scratch.ends;
    ends.clear();
    if rows.len() >= PARALLEL_ROWS {
        ends.par_extend(rows.par_iter().map(|row| [row.a, row.b]));
    } else {
        ends.extend(rows.iter().map(|row| [row.a, row.b]));
    }
    let (sets, roots) = (&mut scratch.sets, &mut scratch.roots);
    sets.reset(bodies.len());
    // A contact patch's rows come together: one union per run of rows between the same bodies.
    let mut last = [NO_BODY; 2];
    for &[a, b] in ends.iter() {
        if [a, b] != last && dynamic(a) && dynamic(b) {
            sets.union(a as usize, b as usize);
        }
        last = [a, b];
    }
    sets.roots_into(roots);
    let roots = &scratch.roots;
    let number = &mut scratch.number;
    number.clear();
    number.resize(bodies.len(), u32::MAX);
    let islands = &mut scratch.islands;
    let places = &mut scratch.places;
    places.clear();
    places.resize(rows.len(), [u32::MAX; 2]);
    let mut count = 0usize;
    // The island of the last run of rows between the same bodies, if it has one.
    let mut last: Option<([u32; 2], Option<u32>)> = None;
    for (r, &[a, b]) in scratch.ends.iter().enumerate() {
        let of_run = match last {
            Some((ends, island)) if ends == [a, b] => island,
            _ => {
                let owner = if dynamic(a) {
                    Some(a)
                } else if dynamic(b) {
                    Some(b)
                } else {
                    None
                };
                let island = owner.map(|owner| {
                    let root = roots[owner as usize];
                    if number[root] == u32::MAX {
                        number[root] = count as u32;
                        if islands.len() == count {
                            islands.push(Island::default());
                        }
                        islands[count].bodies.clear();
                        islands[count].rows.clear();
                        islands[count].touches_kinematic = false;
                        count += 1;
                    }
                    // Kinematic bodies join every island they touch; dynamic ones are listed
                    // below.
                    let island = &mut islands[number[root] as usize];
                    for b in [a, b] {
                        if b != NO_BODY && !dynamic(b) {
                            island.bodies.push(b);
                            island.touches_kinematic = true;
                        }
                    }
                    number[root]
                });
                last = Some(([a, b], island));
                island
            }
        };
        let Some(k) = of_run else {
            continue;
        };
        let island = &mut islands[k as usize];
        places[r] = [k, island.rows.len() as u32];
        island.rows.push(r);
    }
    // Dynamic bodies in ascending order by one scan, so only islands that touch a kinematic body
    // need a sort (sorting every row's bodies was 3 percent of a pyramid's step).
    for (b, &root) in roots.iter().enumerate() {
        let island = number[root];
        if island != u32::MAX && dynamic(b as u32) {
            islands[island as usize].bodies.push(b as u32);
        }
    }
    for island in islands[..count].iter_mut().filter(|island| island.touches_kinematic) {
        island.bodies.sort_unstable();
        island.bodies.dedup();
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DVec3};
    use shatter_solver::{ContactPoint, push_contact_rows, solve};

    fn ball(x: f64, vy: f64) -> SolverBody {
        SolverBody {
            linear_velocity: DVec3::new(x * 0.0, vy, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY * 10.0,
        }
    }

    /// `rows` over `bodies` solved island by island with default settings and fresh scratch.
    fn solve_fresh(bodies: &mut [SolverBody], rows: &mut [Row], dt: f64) -> IslandsReport {
        solve_islands(
            bodies,
            rows,
            dt,
            &SolverSettings::default(),
            &mut IslandScratch::default(),
        )
    }

    /// Two separate stacks solved as islands give the same bits as each stack solved alone.
    #[test]
    fn solve_islands_match_separate_solves() {
        let dt = 1.0 / 30.0;
        let settings = SolverSettings::default();
        let mut bodies = vec![ball(0.0, -1.0), ball(5.0, -2.0), ball(0.0, -0.5), ball(5.0, -0.1)];
        let mut rows = Vec::new();
        let contact = |a, b| ContactPoint::new(a, b, DVec3::NEG_Y * 0.5, DVec3::Y * 0.5, DVec3::Y, 0.01, 0.5);
        // Stack one: ground - 0 - 2; stack two: ground - 1 - 3. Interleaved on purpose.
        for (a, b) in [(0, NO_BODY), (1, NO_BODY), (2, 0), (3, 1)] {
            push_contact_rows(&mut rows, &bodies, &contact(a, b), dt).unwrap();
        }
        let mut together_bodies = bodies.clone();
        let mut together_rows = rows.clone();
        let report = solve_fresh(&mut together_bodies, &mut together_rows, dt);
        assert_eq!(report.islands, 2);
        assert!(report.failures.is_empty());
        // Stack one alone: bodies 0 and 2 as 0 and 1.
        let mut alone_bodies = vec![bodies[0], bodies[2]];
        let mut alone_rows = Vec::new();
        for (a, b) in [(0, NO_BODY), (1, 0)] {
            push_contact_rows(&mut alone_rows, &alone_bodies, &contact(a, b), dt).unwrap();
        }
        solve(&mut alone_bodies, &mut alone_rows, dt, &settings).unwrap();
        assert_eq!(together_bodies[0], alone_bodies[0]);
        assert_eq!(together_bodies[2], alone_bodies[1]);
        assert_eq!(together_rows[6].lambda, alone_rows[3].lambda);
        bodies.clear();
    }

    /// Two wide islands, interleaved, each with more rows than renumbering copies on one thread:
    /// solved as islands on a pool of two threads, the first gives the bits it gives solved
    /// alone (the copies, checks and batches of a large island shared among threads change
    /// nothing).
    #[test]
    fn solve_islands_match_separate_solves_for_large_islands() {
        let dt = 1.0 / 30.0;
        let settings = SolverSettings::default();
        // Each island: a line of balls on the ground, each touching the next; island `i` holds the
        // bodies `2 k + i`.
        let per_island = 2800;
        let bodies: Vec<SolverBody> = (0..2 * per_island)
            .map(|k| ball(k as f64, -1.0 - 0.1 * (k % 7) as f64))
            .collect();
        let contacts = |number: &dyn Fn(usize) -> u32| {
            let mut list = Vec::new();
            for k in 0..per_island {
                list.push(ContactPoint::new(
                    number(k),
                    NO_BODY,
                    DVec3::NEG_Y * 0.5,
                    DVec3::Y * 0.5,
                    DVec3::Y,
                    0.01,
                    0.5,
                ));
                if k > 0 {
                    let side = ContactPoint::new(
                        number(k),
                        number(k - 1),
                        DVec3::NEG_X * 0.5,
                        DVec3::X * 0.5,
                        DVec3::X,
                        0.002,
                        0.3,
                    );
                    list.push(side);
                }
            }
            list
        };
        let mut rows = Vec::new();
        let (first, second) = (contacts(&|k| 2 * k as u32), contacts(&|k| 2 * k as u32 + 1));
        for (one, two) in first.iter().zip(&second) {
            push_contact_rows(&mut rows, &bodies, one, dt).unwrap();
            push_contact_rows(&mut rows, &bodies, two, dt).unwrap();
        }
        assert!(rows.len() / 2 >= PARALLEL_ROWS, "{} rows", rows.len());
        let (mut together_bodies, mut together_rows) = (bodies.clone(), rows.clone());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let report = pool.install(|| solve_fresh(&mut together_bodies, &mut together_rows, dt));
        assert_eq!(report.islands, 2);
        assert!(report.failures.is_empty());
        // The first island alone, its bodies numbered from 0.
        let mut alone_bodies: Vec<SolverBody> = bodies.iter().step_by(2).copied().collect();
        let mut alone_rows = Vec::new();
        for contact in contacts(&|k| k as u32) {
            push_contact_rows(&mut alone_rows, &alone_bodies, &contact, dt).unwrap();
        }
        solve(&mut alone_bodies, &mut alone_rows, dt, &settings).unwrap();
        for (k, alone) in alone_bodies.iter().enumerate() {
            assert_eq!(together_bodies[2 * k], *alone, "body {k}");
        }
        // Rows come three per contact, the two islands' contacts alternating.
        let matches_alone = |together_rows: &[Row]| {
            for (c, alone) in alone_rows.chunks(3).enumerate() {
                let together = &together_rows[6 * c..6 * c + 3];
                for (t, a) in together.iter().zip(alone) {
                    assert_eq!(
                        (t.lambda.to_bits(), t.warm.to_bits()),
                        (a.lambda.to_bits(), a.warm.to_bits()),
                        "contact {c}"
                    );
                }
            }
        };
        matches_alone(&together_rows);
        // The second island refused (a row with a negative CFM): its bodies keep their
        // velocities, its rows' impulses are zeroed, and the first is solved as before.
        let (mut refused_bodies, mut refused_rows) = (bodies.clone(), rows.clone());
        for row in &mut refused_rows {
            row.lambda = 0.25;
        }
        refused_rows[3].cfm = -1.0;
        let report = pool.install(|| solve_fresh(&mut refused_bodies, &mut refused_rows, dt));
        assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
        matches_alone(&refused_rows);
        for k in 0..per_island {
            assert_eq!(refused_bodies[2 * k + 1], bodies[2 * k + 1], "body {}", 2 * k + 1);
        }
        for row in refused_rows.chunks(3).skip(1).step_by(2).flatten() {
            assert_eq!((row.lambda, row.warm), (0.0, 0.0));
        }
    }
}
