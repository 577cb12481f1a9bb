//! The constraint solve split into islands, solved in parallel.
//!
//! Rows couple only the dynamic bodies they touch, so the LCP of a step falls apart into
//! independent blocks: the islands of dynamic bodies linked by contact pairs and joints
//! (union-find, as for sleep). They are found from the pairs and joints before any row is built
//! ([`IslandScratch::find`]), so each island's rows are built straight into its own list with its
//! own body numbers (island_rows.rs) and solved there: no step-wide row list is copied out island
//! by island and merged back. Static and kinematic bodies do not link islands (no row changes
//! their velocity), so each island gets its own copy of those it touches. An island's bodies are
//! numbered by their place in its body list (ascending solver slots) and its rows are its pairs'
//! rows in pair order, then its joints' rows in joint order. Islands of one make (as many bodies
//! and rows: the columns of a pile) go to the solver four at a time
//! (`shatter_solver::solve_together`, which sweeps them side by side and gives each the bits it
//! gets alone). The calls run in parallel on the rayon pool, and the bodies' velocities are merged
//! back island by island. A solve is a pure function of its island, so the results are the same
//! bits whatever the thread count and the grouping.

use shatter_solver::{
    IslandSolve, NO_BODY, SolveReport, SolverBody, SolverError, SolverSettings, SolverWorkspace, SplitVelocity,
    solve_together,
};
use smallvec::SmallVec;

use crate::islands::UnionFind;
use crate::stages::island_rows::ContactChunk;

/// Islands of one make handed to the solver in one call: one per lane of its batches.
const ISLANDS_TOGETHER: usize = 4;

/// Marks, in [`IslandScratch::local_of`], a body that is not dynamic (kinematic, or held still
/// this step): it joins every island it touches, with a number of its own in each, found by
/// search.
pub(crate) const SHARED_BODY: u32 = u32::MAX - 1;

/// What the solves of all islands did together.
#[derive(Clone, Debug, Default)]
pub(crate) struct IslandsReport {
    /// Islands solved.
    pub(crate) islands: usize,
    /// The most sweeps (velocity plus split) any island ran.
    pub(crate) iterations: usize,
    /// The most velocity sweeps any island ran.
    pub(crate) velocity_iterations: usize,
    /// Energy-clamped increments scaled down or dropped, all islands.
    pub(crate) clamped: usize,
    /// Split velocity per solver body.
    pub(crate) split: Vec<SplitVelocity>,
    /// Islands the solver refused (their bodies were left as they were and their rows' impulses
    /// zeroed), with why.
    pub(crate) failures: Vec<String>,
}

/// One island: its bodies (solver slots, ascending), and the contact pairs and joints that link
/// them (ascending indices into the step's pairs and joint slices).
#[derive(Debug, Default)]
pub(crate) struct Island {
    /// Its bodies' solver slots, ascending.
    pub(crate) bodies: Vec<u32>,
    /// Its contact pairs (indices into the step's pairs), ascending.
    pub(crate) pairs: Vec<u32>,
    /// Its joints (indices into the step's joint slices), ascending.
    pub(crate) joints: Vec<u32>,
    /// Whether a body that is not dynamic is among `bodies` (then they need sorting once listed).
    touches_kinematic: bool,
}

impl Island {
    /// Chunks of its contact pairs built apart from the first, which is built in its slot and
    /// holds `first` pairs (island_rows.rs).
    pub(crate) fn extra_chunks(&self, first: usize) -> usize {
        (self.pairs.len().saturating_sub(first)).div_ceil(crate::stages::island_rows::PAIRS_PER_CHUNK)
    }

    /// The island's number for solver body `global` (a member, or [`NO_BODY`]), given each
    /// dynamic body's number in `local_of`.
    pub(crate) fn local(&self, local_of: &[u32], global: u32) -> u32 {
        if global == NO_BODY {
            return NO_BODY;
        }
        match local_of[global as usize] {
            SHARED_BODY => self.bodies.binary_search(&global).map_or(NO_BODY, |k| k as u32),
            local => local,
        }
    }
}

/// The memory one island's rows are built and solved in: its bodies and rows in its own
/// numbering, as the solver takes them, the solver's workspace and what the solve returned.
/// Slots are handed to the islands by size, the largest island the first slot, so each slot grows
/// to about the same size step after step: given out by island order instead, every slot grew in
/// turn to the largest island of a shattering pile (gigabytes kept, and the pages faulted in
/// afresh each time one grew).
#[derive(Debug, Default)]
pub(crate) struct IslandSlot {
    /// The island's bodies, in its own numbering.
    pub(crate) local_bodies: Vec<SolverBody>,
    /// The island's rows, its contact patches (their rows numbered among these) and what its
    /// pairs' rows could not be built for.
    pub(crate) rows: ContactChunk,
    /// Where each of the island's joints' rows start among its rows, in its joint order.
    pub(crate) joint_starts: Vec<u32>,
    workspace: SolverWorkspace,
    result: Option<Result<SolveReport, SolverError>>,
}

/// The islands of the last solve and the slots they were solved in, kept for their memory.
#[derive(Debug, Default)]
pub(crate) struct IslandScratch {
    /// The islands found, the first `count` of them this step's.
    pub(crate) islands: Vec<Island>,
    /// Islands found this step.
    pub(crate) count: usize,
    /// The slots, the first `count` of them in use this step.
    pub(crate) slots: Vec<IslandSlot>,
    /// Island numbers from the largest island down: island `by_size[s]` is built and solved in
    /// slot `s`.
    pub(crate) by_size: Vec<usize>,
    /// The slot of each island.
    pub(crate) slot_of: Vec<u32>,
    /// Each dynamic solver body's number in its island; [`SHARED_BODY`] for the others.
    pub(crate) local_of: Vec<u32>,
    /// The island of each contact pair, `u32::MAX` for none.
    pub(crate) pair_island: Vec<u32>,
    /// The island of each joint slice, `u32::MAX` for none.
    pub(crate) joint_island: Vec<u32>,
    /// Island number of each union-find root, `u32::MAX` for none yet.
    number: Vec<u32>,
    /// The bodies' islands, and each body's root.
    sets: UnionFind,
    roots: Vec<usize>,
    /// The chunks of pairs past each island's first (island_rows.rs).
    pub(crate) chunks: Vec<ContactChunk>,
    /// Each chunk's slot and where its pairs start in the island's pairs.
    pub(crate) chunk_places: Vec<(u32, u32)>,
    /// Pairs in each island's first chunk this step, the one built in its slot (island_rows.rs).
    pub(crate) first_chunk: usize,
    /// Each contact pair's patches: its slot, the chunk holding them (`u32::MAX` for the slot's
    /// own rows), and the first of them and how many in that list; `u32::MAX` as the slot for
    /// none.
    pub(crate) pair_patches: Vec<(u32, u32, u32, u32)>,
    /// What the islands of this scratch were last found from.
    found_from: FoundFrom,
}

/// The links and bodies [`IslandScratch::find`] last found islands from: the islands, their
/// slots and every list `find` fills depend on these alone, so the same again (a resting stack,
/// step after step) finds what is already there.
#[derive(Debug, Default)]
struct FoundFrom {
    /// Whether the lists below are those of the last `find`.
    valid: bool,
    /// The contact pairs' solver bodies.
    pairs: Vec<(u32, u32)>,
    /// The joint slices' solver bodies.
    joints: Vec<[u32; 2]>,
    /// Whether each solver body is dynamic.
    dynamic: Vec<bool>,
}

impl FoundFrom {
    /// Whether these are the links and bodies of the last `find`.
    fn same(&self, bodies: &[SolverBody], pairs: &[(u32, u32)], joints: &[[u32; 2]]) -> bool {
        self.valid
            && self.pairs == pairs
            && self.joints == joints
            && self.dynamic.len() == bodies.len()
            && (self.dynamic.iter().zip(bodies)).all(|(&dynamic, body)| dynamic == body.is_dynamic())
    }

    /// Remembers the links and bodies islands were found from, `dynamic` saying which bodies are.
    fn keep(&mut self, pairs: &[(u32, u32)], joints: &[[u32; 2]], dynamic: Vec<bool>) {
        self.pairs.clear();
        self.pairs.extend_from_slice(pairs);
        self.joints.clear();
        self.joints.extend_from_slice(joints);
        self.dynamic = dynamic;
        self.valid = true;
    }
}

impl IslandScratch {
    /// Finds the islands linked by contact `pairs` (each pair's solver bodies `(a, b)`) and by
    /// `joints` (each joint slice's two bodies) over `bodies`, and hands out their slots; returns
    /// how many. A link between two dynamic bodies joins their islands; one whose bodies are
    /// neither dynamic belongs to no island and gets no rows (nothing it does can change a
    /// velocity). Islands are numbered in the order of their first link, pairs before joints.
    pub(crate) fn find(&mut self, bodies: &[SolverBody], pairs: &[(u32, u32)], joints: &[[u32; 2]]) -> usize {
        if self.found_from.same(bodies, pairs, joints) {
            return self.count;
        }
        // The remembered flags' memory, filled with this call's.
        let mut flags = core::mem::take(&mut self.found_from.dynamic);
        flags.clear();
        flags.extend(bodies.iter().map(SolverBody::is_dynamic));
        let count = self.find_anew(&flags, pairs, joints);
        self.found_from.keep(pairs, joints, flags);
        count
    }

    /// [`IslandScratch::find`] worked out, with `flags` saying which solver bodies are dynamic.
    fn find_anew(&mut self, flags: &[bool], pairs: &[(u32, u32)], joints: &[[u32; 2]]) -> usize {
        let dynamic = |b: u32| b != NO_BODY && flags[b as usize];
        let links = || pairs.iter().map(|&(a, b)| [a, b]).chain(joints.iter().copied());
        self.sets.reset(flags.len());
        for [a, b] in links() {
            if dynamic(a) && dynamic(b) {
                self.sets.union(a as usize, b as usize);
            }
        }
        self.sets.roots_into(&mut self.roots);
        let (roots, number, islands) = (&self.roots, &mut self.number, &mut self.islands);
        number.clear();
        number.resize(flags.len(), u32::MAX);
        self.pair_island.clear();
        self.joint_island.clear();
        let mut count = 0usize;
        for (l, [a, b]) in links().enumerate() {
            let owner = [a, b].into_iter().find(|&body| dynamic(body));
            let found = owner.map_or(u32::MAX, |owner| {
                let root = roots[owner as usize];
                if number[root] == u32::MAX {
                    number[root] = count as u32;
                    if islands.len() == count {
                        islands.push(Island::default());
                    }
                    let island = &mut islands[count];
                    island.bodies.clear();
                    island.pairs.clear();
                    island.joints.clear();
                    island.touches_kinematic = false;
                    count += 1;
                }
                let island = &mut islands[number[root] as usize];
                // Bodies that are not dynamic join every island they touch; dynamic ones are
                // listed below.
                for body in [a, b] {
                    if body != NO_BODY && !dynamic(body) {
                        island.bodies.push(body);
                        island.touches_kinematic = true;
                    }
                }
                if l < pairs.len() {
                    island.pairs.push(l as u32);
                } else {
                    island.joints.push((l - pairs.len()) as u32);
                }
                number[root]
            });
            if l < pairs.len() {
                self.pair_island.push(found);
            } else {
                self.joint_island.push(found);
            }
        }
        // Dynamic bodies in ascending order by one scan, so only islands that touch another body
        // need a sort.
        for (b, &root) in roots.iter().enumerate() {
            let island = number[root];
            if island != u32::MAX && dynamic(b as u32) {
                islands[island as usize].bodies.push(b as u32);
            }
        }
        let local_of = &mut self.local_of;
        local_of.clear();
        local_of.resize(flags.len(), SHARED_BODY);
        for island in islands[..count].iter_mut() {
            if island.touches_kinematic {
                island.bodies.sort_unstable();
                island.bodies.dedup();
            }
            for (k, &body) in island.bodies.iter().enumerate() {
                if dynamic(body) {
                    local_of[body as usize] = k as u32;
                }
            }
        }
        // Slots by size (`IslandSlot`'s docs), links standing in for the rows not built yet.
        let size = |island: &Island| (island.pairs.len() + island.joints.len(), island.bodies.len());
        let by_size = &mut self.by_size;
        by_size.clear();
        by_size.extend(0..count);
        by_size.sort_by_key(|&k| (core::cmp::Reverse(size(&islands[k])), k));
        self.slot_of.clear();
        self.slot_of.resize(count, 0);
        for (slot, &k) in by_size.iter().enumerate() {
            self.slot_of[k] = slot as u32;
        }
        if self.slots.len() < count {
            self.slots.resize_with(count, IslandSlot::default);
        }
        self.count = count;
        count
    }

    /// Solves every island's rows over its bodies (both built by [`IslandScratch::build_rows`]
    /// and [`IslandScratch::finish_rows`]) and writes the new velocities of the dynamic ones into
    /// `bodies`, island by island; an island the solver refuses keeps its bodies' velocities and
    /// has its rows' impulses zeroed.
    pub(crate) fn solve(&mut self, bodies: &mut [SolverBody], dt: f64, settings: &SolverSettings) -> IslandsReport {
        let count = self.count;
        let mut outcome = IslandsReport {
            split: vec![SplitVelocity::default(); bodies.len()],
            ..IslandsReport::default()
        };
        // Islands of one make go to the solver four at a time (module docs), neighbours in the
        // order of their makes; an island without rows (every patch of it refused) is not solved.
        let make = |slot: &IslandSlot| (slot.rows.rows.len(), slot.local_bodies.len());
        let mut by_make: Vec<(usize, &mut IslandSlot)> = (self.slots[..count].iter_mut().enumerate())
            .filter(|(_, slot)| !slot.rows.rows.is_empty())
            .collect();
        outcome.islands = by_make.len();
        by_make.sort_by_key(|(s, slot)| (core::cmp::Reverse(make(slot)), *s));
        let mut groups: Vec<SmallVec<[&mut IslandSlot; ISLANDS_TOGETHER]>> = Vec::new();
        for (_, slot) in by_make {
            match groups.last_mut() {
                Some(group) if group.len() < ISLANDS_TOGETHER && make(group[0]) == make(slot) => group.push(slot),
                _ => groups.push(smallvec::smallvec![slot]),
            }
        }
        let solve_group = |group: &mut SmallVec<[&mut IslandSlot; ISLANDS_TOGETHER]>| {
            let mut solves: SmallVec<[IslandSolve<'_>; ISLANDS_TOGETHER]> = group
                .iter_mut()
                .map(|slot| IslandSolve {
                    workspace: &mut slot.workspace,
                    bodies: &mut slot.local_bodies,
                    rows: &mut slot.rows.rows,
                })
                .collect();
            let results = solve_together(&mut solves, dt, settings);
            drop(solves);
            for (slot, result) in group.iter_mut().zip(results) {
                slot.result = Some(result);
            }
        };
        // The largest island (a heap of debris: most of the step's rows) shares its own solve among
        // threads, and the others go beside it from the start. Handed to the pool as one list, the
        // list was cut in two halves once: the thread holding the first half solved its other
        // islands one after another once the largest was done, while the rest of the pool waited.
        if let Some((largest, others)) = groups.split_first_mut() {
            shatter_integrators::parallel::join(
                || solve_group(largest),
                || shatter_integrators::parallel::for_each_mut(others, 1, &|_, group| solve_group(group)),
            );
        }
        drop(groups);
        // Merged in island order, as the report's lists are.
        for (k, island) in self.islands[..count].iter().enumerate() {
            let slot = &mut self.slots[self.slot_of[k] as usize];
            let Some(result) = slot.result.take() else {
                continue;
            };
            let solved = result.is_ok();
            merge_report(&mut outcome, island, slot.rows.rows.len(), result);
            if solved {
                for (j, &global) in island.bodies.iter().enumerate() {
                    bodies[global as usize] = slot.local_bodies[j];
                }
            } else {
                for row in &mut slot.rows.rows {
                    (row.lambda, row.warm, row.exchanged) = (0.0, 0.0, 0.0);
                }
            }
        }
        outcome
    }
}

/// Adds one island's solve to `outcome`: counts and split velocities (local body `k` is the
/// island's `k`-th body), or the failure of its `rows` rows.
fn merge_report(outcome: &mut IslandsReport, island: &Island, rows: usize, result: Result<SolveReport, SolverError>) {
    match result {
        Ok(report) => {
            outcome.iterations = outcome.iterations.max(report.iterations + report.split_iterations);
            outcome.velocity_iterations = outcome.velocity_iterations.max(report.iterations);
            outcome.clamped += report.scaled_increments + report.dropped_increments;
            for (k, split) in report.split_velocities.iter().enumerate() {
                outcome.split[island.bodies[k] as usize] = *split;
            }
        }
        Err(error) => outcome.failures.push(format!("an island of {rows} rows: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat3, DVec3};
    use shatter_solver::{ContactPoint, Row, push_contact_rows, solve};

    fn ball(vy: f64) -> SolverBody {
        SolverBody {
            linear_velocity: DVec3::new(0.0, vy, 0.0),
            angular_velocity: DVec3::ZERO,
            inverse_mass: 1.0,
            inverse_inertia: DMat3::IDENTITY * 10.0,
        }
    }

    /// A ball resting on the ground (`b` = [`NO_BODY`]) or on another ball, `depth` deep.
    fn contact(a: u32, b: u32, normal: DVec3, depth: f64) -> ContactPoint {
        ContactPoint::new(a, b, -normal * 0.5, normal * 0.5, normal, depth, 0.5)
    }

    /// `contacts` (one pair each) over `bodies` found, built and solved as islands with default
    /// settings; `edit` may change each pair's rows once built. Returns the report, the scratch
    /// and each pair's three rows as solved.
    fn solve_pairs(
        bodies: &mut [SolverBody],
        contacts: &[ContactPoint],
        edit: impl Fn(usize, &mut [Row]) + Sync,
    ) -> (IslandsReport, Vec<[Row; 3]>) {
        let dt = 1.0 / 30.0;
        let mut scratch = IslandScratch::default();
        let pairs: Vec<(u32, u32)> = contacts.iter().map(|c| (c.a, c.b)).collect();
        scratch.find(bodies, &pairs, &[]);
        let global = &*bodies;
        scratch.build_rows(
            |p, chunk| {
                let start = chunk.rows.len();
                push_contact_rows(&mut chunk.rows, global, &contacts[p], dt).unwrap();
                edit(p, &mut chunk.rows[start..]);
            },
            |_| {},
        );
        assert!(scratch.finish_rows(bodies, &[], &[]).is_empty());
        let report = scratch.solve(bodies, dt, &SolverSettings::default());
        let rows = (0..contacts.len())
            .map(|p| {
                let k = scratch.pair_island[p] as usize;
                let place = scratch.islands[k].pairs.binary_search(&(p as u32)).unwrap();
                let rows = &scratch.slots[scratch.slot_of[k] as usize].rows.rows;
                [rows[3 * place], rows[3 * place + 1], rows[3 * place + 2]]
            })
            .collect();
        (report, rows)
    }

    /// Everything [`IslandScratch::find`] fills, for comparing two scratches.
    fn found(scratch: &IslandScratch) -> impl PartialEq + core::fmt::Debug {
        let islands: Vec<_> = (scratch.islands[..scratch.count].iter())
            .map(|island| {
                let lists = (island.bodies.clone(), island.pairs.clone(), island.joints.clone());
                (lists, island.touches_kinematic)
            })
            .collect();
        let numbers = (
            scratch.pair_island.clone(),
            scratch.joint_island.clone(),
            scratch.local_of.clone(),
        );
        (
            scratch.count,
            islands,
            numbers,
            scratch.by_size.clone(),
            scratch.slot_of.clone(),
        )
    }

    /// A scratch asked again for the links and bodies it last found islands from keeps what it
    /// found; other links, other joints or a body no longer dynamic are found anew: each time
    /// what a fresh scratch finds.
    #[test]
    fn solve_islands_found_again_are_the_islands_found_anew() {
        let mut held = ball(0.0);
        held.inverse_mass = 0.0;
        held.inverse_inertia = DMat3::ZERO;
        let mut bodies = vec![ball(-1.0), ball(-2.0), held, ball(-0.5), ball(0.0), ball(0.3)];
        let pairs = vec![(0, NO_BODY), (3, 0), (1, 2), (4, 2), (5, 4)];
        let mut other_pairs = pairs.clone();
        other_pairs[1] = (3, 1);
        let joints = [[5, 0]];
        let mut scratch = IslandScratch::default();
        let mut check = |bodies: &[SolverBody], pairs: &[(u32, u32)], joints: &[[u32; 2]], islands: usize| {
            let mut fresh = IslandScratch::default();
            assert_eq!(fresh.find(bodies, pairs, joints), islands);
            assert_eq!(scratch.find(bodies, pairs, joints), islands);
            assert_eq!(found(&scratch), found(&fresh));
        };
        // {0, 3}, {1}, {4, 5}; the held body 2 joins none.
        check(&bodies, &pairs, &[], 3);
        check(&bodies, &pairs, &[], 3);
        // {0}, {1, 3}, {4, 5}.
        check(&bodies, &other_pairs, &[], 3);
        // {0, 4, 5}, {1, 3}.
        check(&bodies, &other_pairs, &joints, 2);
        check(&bodies, &other_pairs, &joints, 2);
        // {0, 3, 4, 5}, {1}.
        check(&bodies, &pairs, &joints, 2);
        // Body 4 held too: {0, 3, 5} (5 touching 4), {1}.
        bodies[4] = held;
        check(&bodies, &pairs, &joints, 2);
        check(&bodies, &pairs, &joints, 2);
    }

    /// The same impulses, bit for bit.
    fn same_impulses(x: &Row, y: &Row) -> bool {
        (x.lambda.to_bits(), x.warm.to_bits()) == (y.lambda.to_bits(), y.warm.to_bits())
    }

    /// Two separate stacks solved as islands give the same bits as each stack solved alone, and
    /// each island's rows name its bodies by their place among its own.
    #[test]
    fn solve_islands_match_separate_solves() {
        let dt = 1.0 / 30.0;
        let bodies = vec![ball(-1.0), ball(-2.0), ball(-0.5), ball(-0.1)];
        // Stack one: ground - 0 - 2; stack two: ground - 1 - 3. Interleaved on purpose.
        let pairs = [(0, NO_BODY), (1, NO_BODY), (2, 0), (3, 1)];
        let contacts: Vec<ContactPoint> = pairs.iter().map(|&(a, b)| contact(a, b, DVec3::Y, 0.01)).collect();
        let mut together = bodies.clone();
        let (report, rows) = solve_pairs(&mut together, &contacts, |_, _| {});
        assert_eq!(report.islands, 2);
        assert!(report.failures.is_empty());
        assert_eq!([rows[2][0].a, rows[2][0].b], [1, 0], "stack one's upper contact, local");
        // Stack one alone: bodies 0 and 2 as 0 and 1.
        let mut alone_bodies = vec![bodies[0], bodies[2]];
        let mut alone_rows = Vec::new();
        for (a, b) in [(0, NO_BODY), (1, 0)] {
            push_contact_rows(&mut alone_rows, &alone_bodies, &contact(a, b, DVec3::Y, 0.01), dt).unwrap();
        }
        solve(&mut alone_bodies, &mut alone_rows, dt, &SolverSettings::default()).unwrap();
        assert_eq!(together[0], alone_bodies[0]);
        assert_eq!(together[2], alone_bodies[1]);
        for (k, pair) in [0, 2].into_iter().enumerate() {
            for (together_row, alone_row) in rows[pair].iter().zip(&alone_rows[3 * k..3 * k + 3]) {
                assert!(same_impulses(together_row, alone_row), "pair {pair}");
            }
        }
    }

    /// Two wide islands, interleaved, each with many chunks of pairs (built side by side, their
    /// rows copied onto the first chunk's as a task of its own): solved as islands on a pool of
    /// two threads, the first gives the bits it gives solved alone (where the chunks were built
    /// and copied changes nothing); with the second refused, its bodies keep their velocities,
    /// its rows' impulses are zeroed, and the first is solved as before.
    #[test]
    fn solve_islands_match_separate_solves_for_large_islands() {
        let dt = 1.0 / 30.0;
        // Each island: a line of balls on the ground, each touching the next; island `i` holds the
        // bodies `2 k + i`.
        let per_island = 1400;
        let bodies: Vec<SolverBody> = (0..2 * per_island).map(|k| ball(-1.0 - 0.1 * (k % 7) as f64)).collect();
        let line = |number: &dyn Fn(usize) -> u32| {
            let mut list = Vec::new();
            for k in 0..per_island {
                list.push(contact(number(k), NO_BODY, DVec3::Y, 0.01));
                if k > 0 {
                    list.push(contact(number(k), number(k - 1), DVec3::X, 0.002));
                }
            }
            list
        };
        let (first, second) = (line(&|k| 2 * k as u32), line(&|k| 2 * k as u32 + 1));
        let contacts: Vec<ContactPoint> = first.iter().zip(&second).flat_map(|(x, y)| [*x, *y]).collect();
        assert!(first.len() >= 8 * crate::stages::island_rows::PAIRS_PER_CHUNK);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut together = bodies.clone();
        let (report, rows) = pool.install(|| solve_pairs(&mut together, &contacts, |_, _| {}));
        assert_eq!(report.islands, 2);
        assert!(report.failures.is_empty());
        // The first island alone, its bodies numbered from 0.
        let mut alone_bodies: Vec<SolverBody> = bodies.iter().step_by(2).copied().collect();
        let mut alone_rows = Vec::new();
        for contact in line(&|k| k as u32) {
            push_contact_rows(&mut alone_rows, &alone_bodies, &contact, dt).unwrap();
        }
        solve(&mut alone_bodies, &mut alone_rows, dt, &SolverSettings::default()).unwrap();
        for (k, alone) in alone_bodies.iter().enumerate() {
            assert_eq!(together[2 * k], *alone, "body {k}");
        }
        // Pairs alternate between the islands.
        let matches_alone = |rows: &[[Row; 3]]| {
            for (c, alone) in alone_rows.chunks(3).enumerate() {
                for (row, alone_row) in rows[2 * c].iter().zip(alone) {
                    assert!(same_impulses(row, alone_row), "contact {c}");
                }
            }
        };
        matches_alone(&rows);
        // The second island refused (a row with a negative CFM), every row starting from a
        // quarter newton second.
        let mut refused = bodies.clone();
        let (report, rows) = pool.install(|| {
            solve_pairs(&mut refused, &contacts, |p, rows| {
                for row in rows.iter_mut() {
                    row.lambda = 0.25;
                }
                if p == 3 {
                    rows[0].cfm = -1.0;
                }
            })
        });
        assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
        matches_alone(&rows);
        for k in 0..per_island {
            assert_eq!(refused[2 * k + 1], bodies[2 * k + 1], "body {}", 2 * k + 1);
        }
        for row in rows.iter().skip(1).step_by(2).flatten() {
            assert_eq!((row.lambda, row.warm), (0.0, 0.0));
        }
    }

    /// Islands from links: dynamic bodies linked by pairs or joints share one; a kinematic body
    /// (here one with zero inverse mass) joins each island it touches without linking them, and
    /// gets its own number in each; links that touch no dynamic body are in none.
    #[test]
    fn solve_islands_found_from_pairs_and_joints() {
        let held = SolverBody {
            inverse_mass: 0.0,
            inverse_inertia: DMat3::ZERO,
            ..ball(0.0)
        };
        // 0, 1, 3 and 4 dynamic; 2 and 5 held.
        let bodies = [ball(0.0), ball(0.0), held, ball(0.0), ball(0.0), held];
        let pairs = [(0, 2), (2, 3), (5, NO_BODY), (3, NO_BODY), (2, 5)];
        let joints = [[1, 0], [4, NO_BODY], [5, 2]];
        let mut scratch = IslandScratch::default();
        assert_eq!(scratch.find(&bodies, &pairs, &joints), 3);
        assert_eq!(scratch.pair_island, [0, 1, u32::MAX, 1, u32::MAX]);
        assert_eq!(scratch.joint_island, [0, 2, u32::MAX]);
        let island = |k: usize| &scratch.islands[k];
        assert_eq!(
            (&island(0).bodies, &island(0).pairs, &island(0).joints),
            (&vec![0, 1, 2], &vec![0], &vec![0])
        );
        assert_eq!((&island(1).bodies, &island(1).pairs), (&vec![2, 3], &vec![1, 3]));
        assert_eq!((&island(2).bodies, &island(2).joints), (&vec![4], &vec![1]));
        // The held body is 2 in the first island and 0 in the second; the dynamic ones by place.
        let local = |k: usize, body: u32| island(k).local(&scratch.local_of, body);
        assert_eq!(
            [local(0, 0), local(0, 1), local(0, 2), local(0, NO_BODY)],
            [0, 1, 2, NO_BODY]
        );
        assert_eq!([local(1, 2), local(1, 3)], [0, 1]);
        // Slots by size: the first island (two links, three bodies) before the second (two links,
        // two bodies) before the third.
        assert_eq!(scratch.by_size[..3], [0, 1, 2]);
    }
}
