//! The contact cache: last step's contact impulses, keyed by body pair and feature, to warm-start
//! this step's solve.
//!
//! Warm starting (Catto 2005, "Iterative dynamics with temporal coherence") starts the projected
//! Gauss-Seidel iteration from the previous step's impulses, so a resting stack needs a few
//! iterations per step instead of many. A contact is the same contact from one step to the next
//! when its pair and its [`FeatureId`] are (the narrow phase keeps feature ids stable).
//!
//! The friction impulse is kept as a world vector, not as two numbers along last step's tangents:
//! a sliding contact's friction rows follow the sliding direction, so the tangents turn from step
//! to step, and the vector is projected onto whatever tangents the new rows have.
//!
//! The cache is a vector sorted by key, not a hash map: contacts arrive sorted by pair and
//! feature, so building it is a push per contact, lookups are a binary search, and its bytes
//! (part of a world snapshot) have one order.

use bytemuck::{Pod, Zeroable};
use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::FeatureId;

use crate::contacts::PairContacts;
use crate::handle::BodyId;

/// Pairs from which the cache is rebuilt on the pool.
const PARALLEL_PAIRS: usize = 4096;

/// Pairs whose spans [`ContactCache::pair_spans`] finds in one walk.
const SPAN_PAIRS: usize = 256;

/// One remembered contact: its key and its impulses.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CachedContact {
    /// Lower body of the pair.
    pub body_a: BodyId,
    /// Higher body of the pair.
    pub body_b: BodyId,
    /// The contact's feature id (see [`FeatureId`]).
    pub feature: u32,
    /// Padding, zero.
    pub padding: u32,
    /// Normal impulse, N s.
    pub normal_impulse: f64,
    /// Friction impulse on body A, world frame, N s.
    pub friction_impulse: [f64; 3],
}

/// Last step's impulses of one contact, as a warm start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WarmStart {
    /// Normal impulse, N s.
    pub normal: f64,
    /// Friction impulse on body A, world frame, N s.
    pub friction: DVec3,
}

impl CachedContact {
    fn key(&self) -> (BodyId, BodyId, u32) {
        (self.body_a, self.body_b, self.feature)
    }
}

/// Entries [`ContactCache::pair_from`] steps over before it falls back to a binary search: a pair
/// has a few contacts, and most pairs asked for are remembered.
const PAIR_WALK: usize = 16;

/// What the cache remembers of one pair of bodies, by feature.
#[derive(Clone, Copy, Debug)]
pub struct PairCache<'a> {
    /// The pair's entries, sorted by feature.
    entries: &'a [CachedContact],
}

impl PairCache<'_> {
    /// Fetches the pair's entries into the processor's caches ahead of their reading (a hint:
    /// changes nothing, `shatter_integrators::prefetch`).
    pub fn prefetch(&self) {
        shatter_integrators::prefetch::prefetch(self.entries);
    }

    /// The impulses remembered for feature `feature` of the pair; `None` for a new contact.
    pub fn lookup(&self, feature: FeatureId) -> Option<WarmStart> {
        self.entries
            .binary_search_by_key(&feature.0, |entry| entry.feature)
            .ok()
            .map(|i| WarmStart {
                normal: self.entries[i].normal_impulse,
                friction: DVec3::from(self.entries[i].friction_impulse),
            })
    }
}

/// Last step's contact impulses. See the [module docs](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactCache {
    entries: Vec<CachedContact>,
}

impl ContactCache {
    /// The impulses remembered for feature `feature` of pair `(a, b)` (`a < b`); `None` for a new
    /// contact.
    pub fn lookup(&self, a: BodyId, b: BodyId, feature: FeatureId) -> Option<WarmStart> {
        self.pair(a, b).lookup(feature)
    }

    /// What is remembered of pair `(a, b)` (`a < b`): one search of the whole cache, after which
    /// each of the pair's contacts searches only the pair's few entries.
    pub fn pair(&self, a: BodyId, b: BodyId) -> PairCache<'_> {
        let start = self
            .entries
            .partition_point(|entry| (entry.body_a, entry.body_b) < (a, b));
        let len = self.entries[start..]
            .iter()
            .take_while(|entry| (entry.body_a, entry.body_b) == (a, b))
            .count();
        PairCache {
            entries: &self.entries[start..start + len],
        }
    }

    /// [`ContactCache::pair`] for pairs asked in ascending order: the search starts at `hint`, the
    /// end of the previous pair's entries (0 for the first), and walks a few entries before it
    /// searches the rest, so a run of pairs costs one search rather than one each. Returns the
    /// pair's entries and the hint for the next pair. Any hint gives the same entries.
    pub fn pair_from(&self, hint: usize, a: BodyId, b: BodyId) -> (PairCache<'_>, usize) {
        let entries = &self.entries;
        let before = |entry: &CachedContact| (entry.body_a, entry.body_b) < (a, b);
        let mut start = hint.min(entries.len());
        if start > 0 && !before(&entries[start - 1]) {
            start = entries.partition_point(before);
        } else {
            let walked = entries[start..]
                .iter()
                .take(PAIR_WALK)
                .take_while(|entry| before(entry))
                .count();
            start += walked;
            if walked == PAIR_WALK {
                start += entries[start..].partition_point(before);
            }
        }
        let len = entries[start..]
            .iter()
            .take_while(|entry| (entry.body_a, entry.body_b) == (a, b))
            .count();
        (
            PairCache {
                entries: &entries[start..start + len],
            },
            start + len,
        )
    }

    /// Where the remembered entries of each of `pairs` (sorted by pair, as the collide stage
    /// leaves them) are: their first index in the cache and how many, for [`ContactCache::span`].
    /// Runs of 256 pairs are searched side by side on the pool, each pair from the last one's end
    /// ([`ContactCache::pair_from`]): one search per run, whatever order the pairs are read in
    /// afterwards (a solve builds its rows island by island, each island's pairs scattered through
    /// the list; searching each from the last one of its island took 6 percent of the aligned
    /// 1000-box pile's step).
    pub fn pair_spans(&self, pairs: &[PairContacts], spans: &mut Vec<(usize, usize)>) {
        spans.clear();
        spans.resize(pairs.len(), (0, 0));
        let walk = |(spans, pairs): (&mut [(usize, usize)], &[PairContacts])| {
            let mut hint = 0;
            for (span, pair) in spans.iter_mut().zip(pairs) {
                let (found, next) = self.pair_from(hint, pair.body_a, pair.body_b);
                *span = (next - found.entries.len(), found.entries.len());
                hint = next;
            }
        };
        if pairs.len() > SPAN_PAIRS {
            (spans.par_chunks_mut(SPAN_PAIRS).zip(pairs.par_chunks(SPAN_PAIRS))).for_each(walk);
        } else {
            walk((spans, pairs));
        }
    }

    /// The entries of a span found by [`ContactCache::pair_spans`] (`(first, count)`).
    pub fn span(&self, (first, count): (usize, usize)) -> PairCache<'_> {
        PairCache {
            entries: &self.entries[first..first + count],
        }
    }

    /// How many contacts of `pairs` (sorted by pair, each pair's contacts by feature, as the
    /// collide stage leaves them) the cache remembers: the contacts a solve warm-starts. One walk
    /// through both sorted lists.
    pub fn remembered(&self, pairs: &[PairContacts]) -> usize {
        let mut entries = self.entries.iter().map(CachedContact::key).peekable();
        let mut found = 0;
        for pair in pairs {
            for contact in &pair.contacts {
                let key = (pair.body_a, pair.body_b, contact.feature.0);
                while entries.next_if(|entry| *entry < key).is_some() {}
                if entries.peek() == Some(&key) {
                    found += 1;
                }
            }
        }
        found
    }

    /// Number of remembered contacts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &[CachedContact] {
        &self.entries
    }

    /// Replaces the cache with the warm starts the solve left in `pairs`
    /// ([`ContactPoint::warm_start`](crate::ContactPoint::warm_start); sorted by pair, contacts by
    /// feature, as the collide stage leaves them).
    pub(crate) fn rebuild(&mut self, pairs: &[PairContacts]) {
        fn entries(pair: &PairContacts) -> impl Iterator<Item = CachedContact> + '_ {
            pair.contacts.iter().map(|contact| CachedContact {
                body_a: pair.body_a,
                body_b: pair.body_b,
                feature: contact.feature.0,
                padding: 0,
                normal_impulse: contact.warm_start.normal,
                friction_impulse: contact.warm_start.friction.to_array(),
            })
        }
        self.entries.clear();
        // A heap of debris has tens of thousands of pairs, each a few hundred bytes to read: they
        // are read on the pool, and the entries come out in pair order all the same.
        if pairs.len() >= PARALLEL_PAIRS {
            self.entries.par_extend(pairs.par_iter().flat_map_iter(entries));
        } else {
            self.entries.extend(pairs.iter().flat_map(entries));
        }
        debug_assert!(self.entries.windows(2).all(|w| w[0].key() < w[1].key()));
    }

    /// Replaces the entries wholesale (snapshot restore); fails unless they are sorted and unique.
    pub(crate) fn replace(&mut self, entries: Vec<CachedContact>) -> Result<(), String> {
        if !entries.windows(2).all(|w| w[0].key() < w[1].key()) {
            return Err("contact cache entries are not sorted by pair and feature".into());
        }
        if let Some(bad) = entries
            .iter()
            .find(|e| !(e.normal_impulse.is_finite() && e.friction_impulse.iter().all(|v| v.is_finite())))
        {
            return Err(format!(
                "contact cache impulses {} and {:?} are not all finite",
                bad.normal_impulse, bad.friction_impulse
            ));
        }
        self.entries = entries;
        Ok(())
    }

    /// Forgets every contact of body `id` (it was removed).
    pub(crate) fn forget_body(&mut self, id: BodyId) {
        self.entries.retain(|e| e.body_a != id && e.body_b != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smallvec::smallvec;

    use crate::contacts::{ContactPoint, tangent_basis};

    /// A contact whose warm start is `normal` along the normal and (0.25, -0.5) along the
    /// tangents; the impulses applied differ, so the cache is seen to keep the warm start.
    fn contact(feature: FeatureId, normal: f64) -> ContactPoint {
        let [t1, t2] = tangent_basis(DVec3::Y);
        ContactPoint {
            point: DVec3::ZERO,
            normal: DVec3::Y,
            depth: 0.0,
            feature,
            tangents: tangent_basis(DVec3::Y),
            collision_impulse: 0.0,
            normal_impulse: normal + 1.0,
            friction_impulse: [0.75, 0.5],
            warm_start: WarmStart {
                normal,
                friction: t1 * 0.25 - t2 * 0.5,
            },
        }
    }

    #[test]
    fn contact_cache_finds_what_the_last_step_solved() {
        let (a, b, c) = (BodyId::new(0, 0), BodyId::new(1, 0), BodyId::new(2, 4));
        let pairs = vec![
            PairContacts {
                body_a: a,
                body_b: b,
                friction: 0.5,
                restitution: 0.0,
                contacts: smallvec![contact(FeatureId::of_a(1), 2.0), contact(FeatureId::of_b(0), 3.0)],
                dense: [0, 1],
            },
            PairContacts {
                body_a: a,
                body_b: c,
                friction: 0.5,
                restitution: 0.0,
                contacts: smallvec![contact(FeatureId::of_a(0), 5.0)],
                dense: [0, 2],
            },
        ];
        let mut cache = ContactCache::default();
        cache.rebuild(&pairs);
        assert_eq!(cache.len(), 3);
        let [t1, t2] = tangent_basis(DVec3::Y);
        let warm = cache.lookup(a, b, FeatureId::of_b(0)).unwrap();
        assert_eq!(warm.normal, 3.0);
        assert!((warm.friction - (t1 * 0.25 - t2 * 0.5)).length() < 1e-15);
        assert_eq!(cache.lookup(a, c, FeatureId::of_a(0)).map(|w| w.normal), Some(5.0));
        assert_eq!(cache.lookup(a, c, FeatureId::of_a(1)), None);
        assert_eq!(cache.lookup(b, c, FeatureId::of_a(0)), None);
        // One pair's view holds its own features only, whichever pairs lie beside it.
        let ab = cache.pair(a, b);
        assert_eq!(ab.lookup(FeatureId::of_a(1)).map(|w| w.normal), Some(2.0));
        assert_eq!(ab.lookup(FeatureId::of_a(0)), None);
        assert_eq!(cache.pair(b, c).lookup(FeatureId::of_a(0)), None);
        assert_eq!(cache.pair(c, BodyId::new(9, 0)).lookup(FeatureId::of_a(0)), None);
        // Of a next step with one contact kept, one new and one new pair, one is remembered.
        let next = vec![
            PairContacts {
                contacts: smallvec![contact(FeatureId::of_a(2), 0.0), contact(FeatureId::of_b(0), 0.0)],
                ..pairs[0].clone()
            },
            PairContacts {
                body_b: BodyId::new(3, 0),
                ..pairs[1].clone()
            },
        ];
        assert_eq!(cache.remembered(&next), 1);
        assert_eq!(cache.remembered(&pairs), 3);
        cache.forget_body(b);
        assert_eq!(cache.len(), 1);
        let mut shuffled = cache.entries().to_vec();
        shuffled.push(shuffled[0]);
        assert!(cache.replace(shuffled).is_err(), "duplicate keys are refused");
    }

    #[test]
    fn contact_cache_pair_from_any_hint_finds_what_pair_finds() {
        // Pairs with one to three contacts each, some bodies left out, so that runs of absent
        // pairs, walks longer than the search threshold and hints past the key all occur.
        let bodies: Vec<BodyId> = (0..40).map(|i| BodyId::new(i, i % 3)).collect();
        let mut pairs = Vec::new();
        for (i, &a) in bodies.iter().enumerate() {
            for (j, &b) in bodies.iter().enumerate().skip(i + 1) {
                if (i * 7 + j * 3) % 5 == 0 {
                    let count = 1 + (i + j) % 3;
                    pairs.push(PairContacts {
                        body_a: a,
                        body_b: b,
                        friction: 0.5,
                        restitution: 0.0,
                        contacts: (0..count).map(|f| contact(FeatureId::of_a(f), f as f64)).collect(),
                        dense: [i as u32, j as u32],
                    });
                }
            }
        }
        let mut cache = ContactCache::default();
        cache.rebuild(&pairs);
        let entries = cache.len();
        assert!(entries > 2 * PAIR_WALK);
        let same = |x: PairCache<'_>, y: PairCache<'_>| {
            x.entries.len() == y.entries.len() && x.entries.iter().zip(y.entries).all(|(p, q)| p == q)
        };
        let mut hint = 0;
        for (i, &a) in bodies.iter().enumerate() {
            for &b in &bodies[i + 1..] {
                let wanted = cache.pair(a, b);
                // In ascending order from the last pair's end, as the solve asks ...
                let (found, next) = cache.pair_from(hint, a, b);
                assert!(same(found, wanted), "pair ({a}, {b}) from hint {hint}");
                assert!(next >= hint);
                hint = next;
                // ... and from any hint at all, before, inside or past the pair's entries.
                for other in [0, 1, entries / 3, entries / 2, entries - 1, entries, entries + 5] {
                    assert!(
                        same(cache.pair_from(other, a, b).0, wanted),
                        "pair ({a}, {b}) from {other}"
                    );
                }
            }
        }
        assert_eq!(hint, entries, "the walk in order ends past the last entry");
    }

    /// The spans of a step's pairs, found run by run on a pool of two threads, read back what
    /// [`ContactCache::pair`] finds for every pair, remembered or not (half of them are new here).
    #[test]
    fn contact_cache_pair_spans_find_what_pair_finds() {
        let bodies: Vec<BodyId> = (0..80).map(|i| BodyId::new(i, 0)).collect();
        let mut asked = Vec::new();
        for (i, &a) in bodies.iter().enumerate() {
            for (j, &b) in bodies.iter().enumerate().skip(i + 1).filter(|(j, _)| (i + j) % 4 == 0) {
                asked.push(PairContacts {
                    body_a: a,
                    body_b: b,
                    friction: 0.5,
                    restitution: 0.0,
                    contacts: (0..1 + (i + j) % 3)
                        .map(|f| contact(FeatureId::of_a(f), f as f64))
                        .collect(),
                    dense: [i as u32, j as u32],
                });
            }
        }
        assert!(asked.len() > 2 * SPAN_PAIRS, "{} pairs", asked.len());
        let remembered: Vec<PairContacts> = asked.iter().step_by(2).cloned().collect();
        let mut cache = ContactCache::default();
        cache.rebuild(&remembered);
        let mut spans = vec![(7, 7)];
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| cache.pair_spans(&asked, &mut spans));
        assert_eq!(spans.len(), asked.len());
        for (p, (pair, &span)) in asked.iter().zip(&spans).enumerate() {
            let (found, wanted) = (cache.span(span), cache.pair(pair.body_a, pair.body_b));
            assert_eq!(found.entries, wanted.entries, "pair {p}");
            assert_eq!(
                found.entries.len(),
                if p % 2 == 0 { pair.contacts.len() } else { 0 },
                "pair {p}"
            );
        }
    }
}
