//! Waking during the step (see the sleep stage for the rules): islands jointed to moving bodies
//! wake before the broad phase; islands touched by moving bodies wake in the collide stage, which
//! then finds the pairs and contacts the woken bodies bring, so they take part in the step fully.

use rayon::prelude::*;

use crate::contacts::PairContacts;
use crate::error::EngineError;
use crate::manifold_cache::CachedManifold;
use crate::stages::{broad_phase, collide, sleep};
use crate::world::World;

/// How many times one step wakes islands touched by moving bodies and looks for the woken
/// bodies' contacts; a chain of sleeping islands longer than this wakes over several steps.
const WAKE_ROUNDS: usize = 8;

/// Touching pairs from which the wake requests are read on the pool.
const PARALLEL_REQUESTS: usize = 4096;

/// Merges `list[old..]` into `list[..old]`, both sorted by `key` (no key in both), so that the
/// whole list is sorted. Each entry of `list[..old]` that sorts after the first of the others
/// moves once, in one block per entry merged (`shift` moves `list[from..to]` right by `by`
/// places), and only the few merged entries are copied aside. A woken island brings a handful of
/// pairs into lists of tens of thousands (the shattered table's manifold cache is ten
/// megabytes): sorting the lists again moved all of them through a scratch buffer the size of
/// the list, a few milliseconds of one thread per waking step.
fn merge_appended<T: Clone, K: Ord>(
    list: &mut [T],
    old: usize,
    key: impl Fn(&T) -> K,
    shift: impl Fn(&mut [T], usize, usize, usize),
) {
    let appended: Vec<T> = list[old..].to_vec();
    // `list[end - free..end]` holds copies that may be overwritten; the entries to merge are the
    // first `free` of `appended`, and `list[..end - free]` the others not yet in place.
    let mut end = list.len();
    for (free, entry) in (1..=appended.len()).rev().zip(appended.into_iter().rev()) {
        let entry_key = key(&entry);
        let rest = end - free;
        let at = list[..rest].partition_point(|other| key(other) < entry_key);
        shift(list, at, rest, free);
        // The entries after `at` now end at `end`; the copies to overwrite lie before them.
        end = at + free - 1;
        list[end] = entry;
    }
}

/// [`merge_appended`]'s block move for plain data: one memory move.
fn copy_right<T: Copy>(list: &mut [T], from: usize, to: usize, by: usize) {
    list.copy_within(from..to, from + by);
}

/// [`merge_appended`]'s block move for any entries: a rotation (the copies it moves in front are
/// overwritten).
fn rotate_right<T>(list: &mut [T], from: usize, to: usize, by: usize) {
    list[from..to + by].rotate_right(by);
}

impl World {
    /// Wakes, before anything is computed, the sleeping islands jointed to moving bodies.
    pub(crate) fn wake_jointed(&mut self) -> usize {
        let mut tags = Vec::new();
        for joint in self.joints.joints() {
            let Ok(a) = self.bodies.dense_index(joint.body_a) else {
                continue;
            };
            let Some(Ok(b)) = joint.body_b.map(|b| self.bodies.dense_index(b)) else {
                continue;
            };
            tags.extend(sleep::wake_request(&self.bodies, a, b));
        }
        tags.sort_unstable();
        tags.dedup();
        let mut woken = 0;
        for tag in tags {
            let bodies = sleep::wake_island(&mut self.bodies, tag);
            self.remember_woken(&bodies);
            woken += bodies.len();
        }
        woken
    }

    /// Wakes the sleeping islands that `contacts` show touched by moving bodies, and adds the
    /// pairs and contacts the woken bodies bring (with each other and with static bodies), so
    /// they take part in this step with all their contacts. Repeats while waking spreads, up to
    /// [`WAKE_ROUNDS`] times; islands still touched after that wake at the end of the step.
    /// `connected` lists the jointed pairs the broad phase skips; the new pairs' manifold cache
    /// entries go to `manifolds`.
    pub(crate) fn wake_touched(
        &mut self,
        pairs: &mut Vec<[u32; 2]>,
        contacts: &mut Vec<PairContacts>,
        manifolds: &mut Vec<CachedManifold>,
        connected: &[(u64, u64)],
        dt: f64,
    ) -> Result<usize, EngineError> {
        let mut woken = 0;
        for round in 0..=WAKE_ROUNDS {
            let bodies = &self.bodies;
            let request =
                |pair: &PairContacts| sleep::wake_request(bodies, pair.dense[0] as usize, pair.dense[1] as usize);
            // Sorted below, so the list is the same whatever the thread count.
            let mut tags: Vec<u32> = if contacts.len() >= PARALLEL_REQUESTS {
                contacts.par_iter().filter_map(request).collect()
            } else {
                contacts.iter().filter_map(request).collect()
            };
            tags.sort_unstable();
            tags.dedup();
            if tags.is_empty() {
                break;
            }
            if round == WAKE_ROUNDS {
                self.scratch.wake_requests.extend(tags);
                break;
            }
            let mut round_woken = Vec::new();
            for tag in tags {
                let bodies = sleep::wake_island(&mut self.bodies, tag);
                self.remember_woken(&bodies);
                round_woken.extend(bodies);
            }
            woken += round_woken.len();
            let records = self.bodies.records();
            let key = |pair: &[u32; 2]| (records[pair[0] as usize].id, records[pair[1] as usize].id);
            let mut fresh = Vec::new();
            broad_phase::find_pairs_after_waking(
                &self.bodies,
                &mut self.broad_phase,
                dt,
                self.settings.contact_margin,
                connected,
                &round_woken,
                &mut fresh,
                &mut self.scratch.broad,
            )?;
            // Bodies that overflowed were caught by the first search of the step and quarantined.
            debug_assert!(fresh.iter().all(|[a, b]| {
                self.bodies.states()[*a as usize].is_valid() && self.bodies.states()[*b as usize].is_valid()
            }));
            fresh.retain(|pair| pairs.binary_search_by_key(&key(pair), key).is_err());
            let job = collide::Narrow::new(&self.bodies, &self.manifold_cache, &self.settings, dt);
            let (cached, touching, known) = (manifolds.len(), contacts.len(), pairs.len());
            collide::narrow_phase(
                &job,
                &fresh,
                &mut self.scratch.narrow,
                (contacts, touching),
                (manifolds, cached),
            )?;
            // Each list is now two sorted runs, the second short: it is merged into the first.
            pairs.extend(fresh);
            merge_appended(pairs, known, key, copy_right);
            merge_appended(contacts, touching, |pair| (pair.body_a, pair.body_b), rotate_right);
            merge_appended(manifolds, cached, CachedManifold::key, copy_right);
        }
        Ok(woken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    /// Merging a short sorted run into a long one gives what sorting the whole list gives, for
    /// runs that fall before, among and after the long one's entries, and for empty runs.
    #[test]
    fn wake_merge_appended_sorts_as_a_full_sort_does() {
        let mut rng = SplitMix64::new(17);
        for (old, added) in [(0, 0), (0, 3), (5, 0), (1, 1), (40, 1), (40, 7), (1000, 25), (3, 40)] {
            for _ in 0..20 {
                // Distinct keys, split at random between the two runs.
                let mut keys: Vec<u32> = (0..(old + added) as u32).map(|k| 3 * k + 1).collect();
                for k in (1..keys.len()).rev() {
                    keys.swap(k, (rng.next_u64() % (k as u64 + 1)) as usize);
                }
                let (mut first, mut second) = (keys[..old].to_vec(), keys[old..].to_vec());
                first.sort_unstable();
                second.sort_unstable();
                let mut list: Vec<(u32, String)> = first
                    .iter()
                    .chain(&second)
                    .map(|&k| (k, format!("entry {k}")))
                    .collect();
                let mut sorted = list.clone();
                sorted.sort_by_key(|entry| entry.0);
                let mut plain: Vec<u32> = list.iter().map(|entry| entry.0).collect();
                merge_appended(&mut list, old, |entry| entry.0, rotate_right);
                assert_eq!(list, sorted, "{old} + {added}");
                merge_appended(&mut plain, old, |&k| k, copy_right);
                assert!(plain.iter().eq(sorted.iter().map(|entry| &entry.0)), "{old} + {added}");
            }
        }
    }
}
