//! Waking during the step (see the sleep stage for the rules): islands jointed to moving bodies
//! wake before the broad phase; islands touched by moving bodies wake in the collide stage, which
//! then finds the pairs and contacts the woken bodies bring, so they take part in the step fully.

use crate::contacts::PairContacts;
use crate::error::EngineError;
use crate::manifold_cache::CachedManifold;
use crate::stages::{broad_phase, collide, sleep};
use crate::world::World;

/// How many times one step wakes islands touched by moving bodies and looks for the woken
/// bodies' contacts; a chain of sleeping islands longer than this wakes over several steps.
const WAKE_ROUNDS: usize = 8;

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
            let mut tags: Vec<u32> = contacts
                .iter()
                .filter_map(|pair| sleep::wake_request(&self.bodies, pair.dense[0] as usize, pair.dense[1] as usize))
                .collect();
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
            let cached = manifolds.len();
            collide::narrow_phase(&job, &fresh, &mut self.scratch.narrow, contacts, manifolds)?;
            // Two sorted runs each: the stable sorts merge them.
            pairs.extend(fresh);
            pairs.sort_by_key(key);
            contacts.sort_by_key(|pair| (pair.body_a, pair.body_b));
            if manifolds.len() > cached {
                manifolds.sort_by_key(CachedManifold::key);
            }
        }
        Ok(woken)
    }
}
