//! Each island's contact and joint rows, built straight into its own list.
//!
//! Once the islands are known (solve_islands.rs), each one's contact pairs are built in chunks,
//! side by side on the pool: an island's first chunk (one thread's share of the largest island's
//! pairs, [`first_chunk_pairs`]) in its own slot, the rest in chunks of at most
//! [`PAIRS_PER_CHUNK`] pairs of their own, joined onto the first in pair order
//! ([`IslandScratch::finish_rows`]) with every row index they hold shifted. The rows' bodies are
//! renumbered as each pair's rows are built, while they are in cache. Small islands (the columns
//! of a pile, the spheres on a table) are built in one chunk and never copied; a heap of debris in
//! one island has all but its first chunk copied once. Each row depends on its own pair alone, so
//! the rows are the same however the pairs are chunked, whatever the thread count.

use rayon::prelude::*;
use shatter_integrators::parallel::{for_each_mut, join, task_len};
use shatter_integrators::prefetch::prefetch;
use shatter_solver::{Row, SolverBody};

use crate::contacts::PairContacts;
use crate::stages::solve::SolvedPatch;
use crate::stages::solve_islands::{Island, IslandScratch, IslandSlot};

/// Contact pairs whose rows one task builds, past an island's first chunk.
pub(crate) const PAIRS_PER_CHUNK: usize = 64;

/// Pairs in each island's first chunk, the one built in its slot and never copied, on a pool of
/// `threads`: each thread's share of `pairs` (the largest island's pairs), at least
/// [`PAIRS_PER_CHUNK`]. The other chunks are copied onto it once built; with every chunk of
/// [`PAIRS_PER_CHUNK`] pairs, a heap of debris in one island had nearly all its rows copied.
/// Measured with temporary timers on the random 1000-cube pile (13 500 rows, `stage_times`, 30
/// Hz): joining the chunks took 183-223 us a step on two threads and 98-105 us with this, and 340
/// against 24 us on one; building them, 441-521 against 420-426 us on two.
fn first_chunk_pairs(pairs: usize, threads: usize) -> usize {
    pairs.div_ceil(threads.max(1)).max(PAIRS_PER_CHUNK)
}

/// The rows of a run of one island's contact pairs, numbered from 0 within the chunk, their
/// bodies numbered in the island, and the patches that read them.
#[derive(Debug, Default)]
pub(crate) struct ContactChunk {
    pub(crate) rows: Vec<Row>,
    pub(crate) patches: Vec<SolvedPatch>,
    /// The pairs whose rows (some or all) could not be built, with why.
    pub(crate) failures: Vec<(usize, String)>,
    /// Contact points of its patches warm-started from last step's contact cache.
    pub(crate) warm_started: usize,
    /// Where the chunk's rows start among its island's rows once joined, and whether they fit
    /// there at all.
    start: u32,
    kept: bool,
}

impl ContactChunk {
    fn clear(&mut self) {
        self.rows.clear();
        self.patches.clear();
        self.failures.clear();
        self.warm_started = 0;
    }
}

/// Patches from which [`IslandScratch::visit_patches`] visits the pairs on the pool. Measured on
/// two threads (`stage_times`, 30 Hz, when the patches were visited chunk by chunk of the
/// step-wide row list), the impulses handed back to the contacts took 40 -> 26 us a step for the
/// 210-box pyramid's 400 patches and 94 -> 52 us for the aligned 1000-box pile's 1000 when this
/// was lowered from 2048.
const PARALLEL_PATCHES: usize = 256;

/// A pair without patches in [`IslandScratch::pair_patches`].
const NO_PATCHES: (u32, u32, u32, u32) = (u32::MAX, u32::MAX, 0, 0);

impl IslandScratch {
    /// Builds the contact rows of every island found by [`IslandScratch::find`]: `build(p, chunk)`
    /// appends the rows and patches of contact pair `p` to `chunk`, its bodies numbered as solver
    /// slots and its row indices from the chunk's start; the rows' bodies are then renumbered in
    /// the island. `ahead(p)` is called with the pair to be built next while the one before it is
    /// built, to fetch what `build` will read of it (prefetch.rs): an island's pairs lie apart
    /// in the pair list wherever its bodies' handles are not in order (the aligned 1000-box
    /// pile's columns of ten, handles going layer by layer), and each pair's contacts (about 700
    /// bytes) were waited for. Mean time a step of this for that pile at 60 Hz (temporary timers,
    /// three runs, averaged over four rounds): 240 -> 217 us on two threads, 380 -> 349 us on
    /// one; with the pair's cached contacts fetched too, 212 us; fetched two pairs ahead, 225 us.
    /// The pyramid's and the random pile's, whose islands' pairs lie in order, did not change.
    pub(crate) fn build_rows(&mut self, build: impl Fn(usize, &mut ContactChunk) + Sync, ahead: impl Fn(usize) + Sync) {
        let count = self.count;
        let largest = self.by_size[..count]
            .first()
            .map_or(0, |&k| self.islands[k].pairs.len());
        let first = first_chunk_pairs(largest, rayon::current_num_threads());
        self.first_chunk = first;
        self.chunk_places.clear();
        for (slot, &k) in self.by_size[..count].iter().enumerate() {
            let extra =
                (0..self.islands[k].extra_chunks(first)).map(|c| (slot as u32, (first + c * PAIRS_PER_CHUNK) as u32));
            self.chunk_places.extend(extra);
        }
        let chunk_count = self.chunk_places.len();
        if self.chunks.len() < chunk_count {
            self.chunks.resize_with(chunk_count, ContactChunk::default);
        }
        let (islands, by_size, local_of) = (&self.islands, &self.by_size, &self.local_of);
        let build_pairs = |island: &Island, (from, len): (usize, usize), chunk: &mut ContactChunk| {
            chunk.clear();
            let last = island.pairs.len().min(from + len);
            let pairs = &island.pairs[from..last];
            for (k, &p) in pairs.iter().enumerate() {
                if let Some(&next) = pairs.get(k + 1) {
                    ahead(next as usize);
                }
                let start = chunk.rows.len();
                build(p as usize, chunk);
                for row in &mut chunk.rows[start..] {
                    row.a = island.local(local_of, row.a);
                    row.b = island.local(local_of, row.b);
                }
            }
        };
        let slots = &mut self.slots[..count];
        let firsts = |(slot, &k): (&mut IslandSlot, &usize)| build_pairs(&islands[k], (0, first), &mut slot.rows);
        let (chunks, places) = (&mut self.chunks[..chunk_count], &self.chunk_places);
        let rest = |(chunk, &(slot, start)): (&mut ContactChunk, &(u32, u32))| {
            build_pairs(
                &islands[by_size[slot as usize]],
                (start as usize, PAIRS_PER_CHUNK),
                chunk,
            )
        };
        if count + chunk_count > 1 {
            join(
                || for_each_mut(slots, 1, &|k, slot| firsts((slot, &by_size[k]))),
                || for_each_mut(chunks, 1, &|k, chunk| rest((chunk, &places[k]))),
            );
        } else {
            slots.iter_mut().zip(by_size.iter()).for_each(firsts);
        }
    }

    /// Completes every island's rows and bodies once its contact rows are built: its other
    /// chunks joined onto the first (a chunk whose rows would not fit the solver's `u32` row
    /// numbers is left out, with a failure naming its patches), then its joints' rows, from
    /// `joint_rows` (numbered as solver slots; joint slice `j` is `joint_slices[j]`), and its
    /// bodies copied out of `bodies`. Returns the failures of the contact pairs, in pair order.
    pub(crate) fn finish_rows(
        &mut self,
        bodies: &[SolverBody],
        joint_rows: &[Row],
        joint_slices: &[(usize, usize)],
    ) -> Vec<String> {
        let count = self.count;
        let (islands, by_size, local_of) = (&self.islands, &self.by_size, &self.local_of);
        // Each slot's chunks, which are consecutive (built in slot order).
        let mut rest = &mut self.chunks[..self.chunk_places.len()];
        let mut own_chunks: Vec<&mut [ContactChunk]> = Vec::with_capacity(count);
        for &k in &by_size[..count] {
            let (mine, others) = rest.split_at_mut(islands[k].extra_chunks(self.first_chunk));
            own_chunks.push(mine);
            rest = others;
        }
        let finish = |((slot, chunks), &k): ((&mut IslandSlot, &mut [ContactChunk]), &usize)| {
            let island = &islands[k];
            // The chunks' rows are copied as one task, which the pool's other thread takes while
            // this one copies the island's bodies: the thread that built the chunks (rayon hands
            // the second half of a join to another thread) then reads them from its own cache,
            // and the second half of the rows, which it copied, is again its own when the solve
            // prepares them on the pool. Copied on the pool in halves instead, this thread read
            // its half from the other core's cache: median step on two threads (interleaved
            // runs, calm machine) pyramid 0.444 -> 0.434 ms, random pile at 30 Hz 7.42 -> 7.34 ms.
            let IslandSlot {
                rows: own,
                local_bodies,
                ..
            } = slot;
            let span = place_chunks(own, chunks);
            let mut copy_bodies = || {
                local_bodies.clear();
                local_bodies.extend(island.bodies.iter().map(|&b| bodies[b as usize]));
            };
            if chunks.is_empty() {
                copy_bodies();
            } else {
                join(copy_bodies, || copy_chunks(own, chunks, span));
            }
            slot.joint_starts.clear();
            for &j in &island.joints {
                let (start, end) = joint_slices[j as usize];
                slot.joint_starts.push(slot.rows.rows.len() as u32);
                slot.rows.rows.extend(joint_rows[start..end].iter().map(|row| Row {
                    a: island.local(local_of, row.a),
                    b: island.local(local_of, row.b),
                    ..*row
                }));
            }
        };
        let slots = &mut self.slots[..count];
        if count > 1 {
            // Left whole on the step's thread in a step too small to share work (`parallel::alone`).
            (slots.par_iter_mut().zip(own_chunks.into_par_iter()))
                .zip(by_size.par_iter())
                .with_min_len(task_len(1))
                .for_each(finish);
        } else {
            slots.iter_mut().zip(own_chunks).zip(by_size.iter()).for_each(finish);
        }
        // Where each pair's patches are: its slot's own list or one of its chunks.
        let pair_patches = &mut self.pair_patches;
        pair_patches.clear();
        pair_patches.resize(self.pair_island.len(), NO_PATCHES);
        let mut failures = Vec::new();
        let holders = (self.slots[..count].iter().enumerate())
            .map(|(slot, own)| (slot as u32, u32::MAX, &own.rows))
            .chain(
                (self.chunks.iter().zip(&self.chunk_places).enumerate())
                    .map(|(c, (chunk, &(slot, _)))| (slot, c as u32, chunk)),
            );
        for (slot, holder, chunk) in holders {
            failures.extend(chunk.failures.iter().cloned());
            if !chunk.kept && holder != u32::MAX {
                let first = chunk.patches.first().map_or(usize::MAX, |patch| patch.pair);
                failures.push((
                    first,
                    format!(
                        "{} contact patches: more rows than the solver can number (u32)",
                        chunk.patches.len()
                    ),
                ));
                continue;
            }
            for (index, patch) in chunk.patches.iter().enumerate() {
                let entry = &mut pair_patches[patch.pair];
                if entry.0 == u32::MAX {
                    *entry = (slot, holder, index as u32, 0);
                }
                entry.3 += 1;
            }
        }
        // Stable: a pair's failures keep their order.
        failures.sort_by_key(|(pair, _)| *pair);
        failures.into_iter().map(|(_, why)| why).collect()
    }

    /// Rows in every island.
    pub(crate) fn rows(&self) -> usize {
        self.slots[..self.count].iter().map(|slot| slot.rows.rows.len()).sum()
    }

    /// Contact points warm-started from last step's contact cache, every island.
    pub(crate) fn warm_started(&self) -> usize {
        self.slots[..self.count].iter().map(|slot| slot.rows.warm_started).sum()
    }

    /// Whether joint slice `j` is in an island (one of its bodies is dynamic), so that its rows
    /// are solved there.
    pub(crate) fn has_joint(&self, j: usize) -> bool {
        self.joint_island.get(j).is_some_and(|&k| k != u32::MAX)
    }

    /// The rows of joint slice `j` (`len` rows) in its island, or `None` for a joint in no
    /// island.
    pub(crate) fn joint_rows(&self, j: usize, len: usize) -> Option<&[Row]> {
        let k = *self.joint_island.get(j)?;
        let island = self.islands.get(k as usize)?;
        let slot = &self.slots[self.slot_of[k as usize] as usize];
        let place = island.joints.binary_search(&(j as u32)).ok()?;
        let start = slot.joint_starts[place] as usize;
        Some(&slot.rows.rows[start..start + len])
    }

    /// Calls `visit` with each contact pair that has patches, each of its patches in the order
    /// they were built, and its island's rows. Each pair's patches are written by that pair's
    /// visits alone, so with many patches the pairs are visited side by side on the pool: the same
    /// writes in the same order for every pair.
    ///
    /// The patches of the pair after each are fetched while its own are visited (prefetch.rs):
    /// they lie in their islands' lists, which the pairs visit in no order of theirs. Measured on
    /// the aligned 1000-box pile at 60 Hz (temporary timers, mean step): 75 -> 70 us on two
    /// threads, 113 -> 99 us on one. Fetching the rows the patches read as well (seven of 208
    /// bytes each) took longer than waiting for them: 75 -> 89 us.
    pub(crate) fn visit_patches(
        &self,
        contacts: &mut [PairContacts],
        visit: impl Fn(&mut PairContacts, &SolvedPatch, &[Row]) + Sync,
    ) {
        // The patches of the pair `entry` (from `pair_patches`) and its island's rows.
        let patches_of = |&(slot, holder, first, len): &(u32, u32, u32, u32)| {
            (slot != u32::MAX).then(|| {
                let own = &self.slots[slot as usize].rows;
                let patches = if holder == u32::MAX {
                    &own.patches
                } else {
                    &self.chunks[holder as usize].patches
                };
                (&patches[first as usize..(first + len) as usize], &own.rows[..])
            })
        };
        let pair_patches = &self.pair_patches;
        let visit_pair = |p: usize, pair: &mut PairContacts| {
            if let Some((patches, _)) = pair_patches.get(p + 1).and_then(patches_of) {
                prefetch(patches);
            }
            if let Some((patches, rows)) = patches_of(&pair_patches[p]) {
                for patch in patches {
                    visit(pair, patch, rows);
                }
            }
        };
        let patches: usize = pair_patches.iter().map(|entry| entry.3 as usize).sum();
        if patches >= PARALLEL_PATCHES {
            for_each_mut(contacts, PAIRS_PER_CHUNK, &visit_pair);
        } else {
            contacts
                .iter_mut()
                .enumerate()
                .for_each(|(p, pair)| visit_pair(p, pair));
        }
    }
}

/// Places `chunks` after `own`'s rows, in order: each chunk's first row's place among the
/// island's rows (a chunk left out takes no room) and whether its rows fit the solver's `u32` row
/// numbers at all (`kept`); counts the kept chunks' warm starts. Returns where the chunks' rows go
/// among the island's rows, `(first, end)`, for [`copy_chunks`].
fn place_chunks(own: &mut ContactChunk, chunks: &mut [ContactChunk]) -> (usize, usize) {
    let first = own.rows.len();
    let mut end = first;
    for chunk in chunks.iter_mut() {
        chunk.start = end as u32;
        chunk.kept = u32::try_from(end + chunk.rows.len()).is_ok_and(|last| last < u32::MAX);
        if chunk.kept {
            end += chunk.rows.len();
            own.warm_started += chunk.warm_started;
        }
    }
    (first, end)
}

/// Copies the rows of the kept `chunks` (placed by [`place_chunks`], their rows going to `(first,
/// end)`) onto `own`'s, in order, every row index a chunk holds (friction rows' normal rows, and
/// its patches' rows, which stay in the chunk) shifted by the rows before it.
fn copy_chunks(own: &mut ContactChunk, chunks: &mut [ContactChunk], (first, end): (usize, usize)) {
    own.rows.reserve(end - first);
    for chunk in chunks.iter_mut().filter(|chunk| chunk.kept) {
        let offset = chunk.start;
        own.rows.extend(chunk.rows.iter().map(|row| {
            let mut row = *row;
            if let Some(friction) = &mut row.friction {
                friction.normal_row += offset;
            }
            row
        }));
        // The patches stay in their chunks, their rows shifted where they are.
        for patch in &mut chunk.patches {
            patch.rows.friction = patch.rows.friction.map(|first| first + offset);
            patch.rows.normals += offset;
            patch.rows.twist = patch.rows.twist.map(|twist| twist + offset);
        }
    }
    debug_assert_eq!(own.rows.len(), end);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact_cache::WarmStart;
    use crate::handle::BodyId;
    use glam::{DMat3, DVec3};
    use shatter_collision::FeatureId;
    use shatter_solver::{ContactPoint, PatchRows, push_contact_rows};
    use smallvec::SmallVec;

    /// Pairs spread over three interleaved islands (pair `p` links bodies `p` and `p + 3`), each
    /// built in many chunks on a pool of two threads: every pair's patches, visited side by side,
    /// read the pair's own rows among its island's joined rows (each row carries its pair's
    /// number); the visits write what visiting pair after pair writes (an order-sensitive
    /// update); pairs without patches are left alone; and the failures come back in pair order.
    #[test]
    fn island_rows_patches_read_their_own_joined_rows() {
        let pairs = 3000;
        let bodies: Vec<SolverBody> = (0..pairs + 3)
            .map(|_| SolverBody {
                linear_velocity: DVec3::NEG_Y,
                angular_velocity: DVec3::ZERO,
                inverse_mass: 1.0,
                inverse_inertia: DMat3::IDENTITY * 6.0,
            })
            .collect();
        let slots: Vec<(u32, u32)> = (0..pairs as u32).map(|p| (p + 3, p)).collect();
        let mut scratch = IslandScratch::default();
        assert_eq!(scratch.find(&bodies, &slots, &[]), 3);
        // Every fifth pair has no patch, the others one or two, each patch naming its pair's
        // three rows; every seventh pair fails as well.
        let patches_of = |p: usize| if p % 5 == 0 { 0 } else { 1 + p % 2 };
        let build = |p: usize, chunk: &mut ContactChunk| {
            let start = chunk.rows.len() as u32;
            let (a, b) = slots[p];
            let point = ContactPoint::new(a, b, DVec3::NEG_Y * 0.5, DVec3::Y * 0.5, DVec3::Y, 1e-3, 0.4);
            push_contact_rows(&mut chunk.rows, &bodies, &point, 1.0 / 30.0).unwrap();
            for row in &mut chunk.rows[start as usize..] {
                row.lambda = p as f64;
            }
            for k in 0..patches_of(p) {
                chunk.patches.push(SolvedPatch {
                    pair: p,
                    contacts: (0..4).filter(|c| (c + k) % 2 == 0).collect(),
                    offsets: SmallVec::new(),
                    normal: DVec3::Y,
                    rows: PatchRows {
                        friction: Some(start + 1),
                        twist: Some(start + 2),
                        normals: start,
                        tangents: [DVec3::X, DVec3::Z],
                        centre_arm_a: DVec3::ZERO,
                    },
                });
            }
            if p % 7 == 0 {
                chunk.failures.push((p, format!("pair {p}")));
            }
        };
        // What is built and what is announced ahead of its building, in the order it happens.
        let log = std::sync::Mutex::new(Vec::new());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let failures = pool.install(|| {
            scratch.build_rows(
                |p, chunk| {
                    log.lock().unwrap().push((p, true));
                    build(p, chunk)
                },
                |p| log.lock().unwrap().push((p, false)),
            );
            scratch.finish_rows(&bodies, &[], &[])
        });
        let expected: Vec<String> = (0..pairs).filter(|p| p % 7 == 0).map(|p| format!("pair {p}")).collect();
        assert_eq!(failures, expected);
        // Every pair is built once; each but the first of each chunk (which nothing precedes on
        // its thread) is announced once, before it is built.
        let log = log.into_inner().unwrap();
        let at = |p: usize, built: bool| log.iter().position(|&entry| entry == (p, built));
        let chunks = scratch.count + scratch.chunk_places.len();
        assert_eq!(log.iter().filter(|entry| entry.1).count(), pairs);
        assert_eq!(log.iter().filter(|entry| !entry.1).count(), pairs - chunks);
        for p in 0..pairs {
            assert!(at(p, true).is_some(), "pair {p} built");
            if let Some(announced) = at(p, false) {
                assert!(
                    announced < at(p, true).unwrap(),
                    "pair {p} announced after it was built"
                );
            }
        }
        assert_eq!(scratch.rows(), 3 * pairs);
        // Each island's rows name its own bodies: pair p's bodies are the island's (p / 3)-th and
        // (p / 3 + 1)-th.
        let point = crate::contacts::ContactPoint {
            point: DVec3::ZERO,
            normal: DVec3::Y,
            depth: 0.0,
            feature: FeatureId::of_a(0),
            tangents: [DVec3::X, DVec3::Z],
            collision_impulse: 0.0,
            normal_impulse: 1.0,
            friction_impulse: [0.0; 2],
            warm_start: WarmStart::default(),
        };
        let contacts: Vec<PairContacts> = (0..pairs)
            .map(|p| PairContacts {
                body_a: BodyId::new(p as u32, 0),
                body_b: BodyId::new(p as u32 + 3, 0),
                friction: 0.5,
                restitution: 0.0,
                contacts: SmallVec::from_elem(point, 4),
                dense: [p as u32, p as u32 + 3],
            })
            .collect();
        let visit = |pair: &mut PairContacts, patch: &SolvedPatch, rows: &[Row]| {
            let p = patch.pair;
            assert_eq!(pair.body_a, BodyId::new(p as u32, 0), "patch of another pair");
            let read = [
                patch.rows.normals,
                patch.rows.friction.unwrap(),
                patch.rows.twist.unwrap(),
            ];
            let local = (p / 3) as u32;
            for r in read {
                assert_eq!(rows[r as usize].lambda, p as f64, "pair {p}: row {r} is another pair's");
                assert_eq!([rows[r as usize].a, rows[r as usize].b], [local + 1, local]);
            }
            for &c in &patch.contacts {
                let impulse = &mut pair.contacts[c].normal_impulse;
                *impulse = *impulse * 3.0 + read[0] as f64;
            }
        };
        let mut visited = contacts.clone();
        pool.install(|| scratch.visit_patches(&mut visited, visit));
        let mut expected = contacts.clone();
        for (p, pair) in expected.iter_mut().enumerate() {
            let place = 3 * (p / 3) as u32;
            for k in 0..patches_of(p) {
                for c in (0..4).filter(|c| (c + k) % 2 == 0) {
                    let impulse = &mut pair.contacts[c].normal_impulse;
                    *impulse = *impulse * 3.0 + place as f64;
                }
            }
        }
        assert!(visited == expected);
        assert!(visited != contacts, "the visit wrote something");
    }
}
