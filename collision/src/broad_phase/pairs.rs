//! Pair bookkeeping: the persistent set of overlapping proxy pairs, and the search that renews the
//! pairs of the proxies whose fat boxes changed.
//!
//! A pair of fat boxes can only start or stop overlapping when one of the two boxes changes, and a
//! fat box changes only when its proxy is moved out of it, inserted or removed. So each update
//! drops the pairs of those proxies and queries the trees once per moved proxy for its new ones
//! (Box2D v3's move buffer, broad_phase.c), in parallel; the pairs of the many proxies that stayed
//! inside their fat boxes are kept as they are. The set is a vector sorted by user keys, so the
//! answer comes out in order, and it is merged with the (sorted) new pairs rather than hashed, so
//! no hash order can reach the result.

use rayon::prelude::*;

use super::proxy::{ProxyKind, ProxyTable};
use super::tree::Tree;

/// Below this many moved proxies the search runs on the calling thread: splitting costs more
/// than it saves.
const PARALLEL_THRESHOLD: usize = 256;
/// Moved proxies per parallel task.
const CHUNK: usize = 64;

/// One overlapping pair of proxies, by user key (`low < high`) and then by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct PairEntry {
    pub(super) low: u64,
    pub(super) high: u64,
    /// Slot of the proxy with key `low`.
    pub(super) first: u32,
    /// Slot of the proxy with key `high`.
    pub(super) second: u32,
}

/// The current pairs, sorted.
#[derive(Clone, Debug, Default)]
pub(super) struct PairSet {
    entries: Vec<PairEntry>,
    /// The previous buffer, kept to merge into without allocating.
    spare: Vec<PairEntry>,
}

impl PairSet {
    /// Drops every pair with a proxy marked in `touched` (by slot), merges in `fresh` (sorted,
    /// holding only pairs with a touched proxy), and writes the result as [`Self::write_keys`]
    /// does, in the same pass.
    pub(super) fn renew(&mut self, touched: &[bool], fresh: &[PairEntry], out: &mut Vec<(u64, u64)>) {
        let mut merged = std::mem::take(&mut self.spare);
        merged.clear();
        merged.reserve(self.entries.len() + fresh.len());
        out.clear();
        out.reserve(self.entries.len() + fresh.len());
        let mut emit = |entry: PairEntry| {
            merged.push(entry);
            let pair = (entry.low, entry.high);
            if out.last() != Some(&pair) {
                out.push(pair);
            }
        };
        let mut next = 0;
        for entry in &self.entries {
            if touched[entry.first as usize] || touched[entry.second as usize] {
                continue;
            }
            while next < fresh.len() && fresh[next] < *entry {
                emit(fresh[next]);
                next += 1;
            }
            emit(*entry);
        }
        fresh[next..].iter().for_each(|entry| emit(*entry));
        self.spare = std::mem::replace(&mut self.entries, merged);
    }

    /// Writes the pairs of user keys into `out` (cleared first): each once, in order. Several
    /// proxies may share keys (one body with several boxes), so consecutive equal pairs collapse.
    pub(super) fn write_keys(&self, out: &mut Vec<(u64, u64)>) {
        out.clear();
        out.reserve(self.entries.len());
        for entry in &self.entries {
            let pair = (entry.low, entry.high);
            if out.last() != Some(&pair) {
                out.push(pair);
            }
        }
    }

    /// Number of proxy pairs held.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Every pair with a proxy of `moved` whose fat boxes overlap, sorted, each once; `moved` holds
/// live slots, all marked in `touched`. The result does not depend on the thread count: the
/// parallel part only collects, and the sort orders distinct entries.
pub(super) fn find_pairs(trees: &[Tree; 2], proxies: &ProxyTable, touched: &[bool], moved: &[u32]) -> Vec<PairEntry> {
    let search = |chunk: &[u32]| {
        let mut found = Vec::with_capacity(8 * chunk.len());
        let mut stack = Vec::with_capacity(64);
        for &index in chunk {
            pairs_of(trees, proxies, touched, index, &mut stack, &mut found);
        }
        found
    };
    let mut found = if moved.len() < PARALLEL_THRESHOLD {
        search(moved)
    } else {
        moved.par_chunks(CHUNK).map(search).flatten_iter().collect()
    };
    if found.len() < 4096 {
        found.sort_unstable();
    } else {
        found.par_sort_unstable();
    }
    found
}

/// Pushes the pairs of moved proxy `index`. Static proxies are not paired with each other, nor
/// proxies sharing a user key (they belong to one body); a pair of two moved proxies is reported
/// by the one with the larger slot only, since both searches find it.
fn pairs_of(
    trees: &[Tree; 2],
    proxies: &ProxyTable,
    touched: &[bool],
    index: u32,
    stack: &mut Vec<u32>,
    found: &mut Vec<PairEntry>,
) {
    let proxy = &proxies.slots[index as usize];
    let key = proxy.user_key;
    // Partners are read from the dense key array, not the proxy records: a search finds a few
    // partners scattered over the table, and the keys are eight times denser in cache.
    let mut visit = |other: u32| {
        let other_key = proxies.keys[other as usize];
        if other_key == key || (touched[other as usize] && other <= index) {
            return;
        }
        found.push(if key < other_key {
            PairEntry {
                low: key,
                high: other_key,
                first: index,
                second: other,
            }
        } else {
            PairEntry {
                low: other_key,
                high: key,
                first: other,
                second: index,
            }
        });
    };
    trees[ProxyKind::Dynamic.tree()].query(&proxy.fat, stack, &mut visit);
    if proxy.kind == ProxyKind::Dynamic {
        trees[ProxyKind::Static.tree()].query(&proxy.fat, stack, &mut visit);
    }
}
