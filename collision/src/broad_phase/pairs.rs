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

use super::proxy::{Proxy, ProxyKind};
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
    /// Drops every pair with a proxy marked in `touched` (by slot), and merges in `fresh`, which
    /// must be sorted and hold only pairs with a touched proxy.
    pub(super) fn renew(&mut self, touched: &[bool], fresh: &[PairEntry]) {
        let mut merged = std::mem::take(&mut self.spare);
        merged.clear();
        merged.reserve(self.entries.len() + fresh.len());
        let mut fresh = fresh.iter().peekable();
        for entry in &self.entries {
            if touched[entry.first as usize] || touched[entry.second as usize] {
                continue;
            }
            while let Some(new) = fresh.next_if(|new| *new < entry) {
                merged.push(*new);
            }
            merged.push(*entry);
        }
        merged.extend(fresh);
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
/// live slots with their `moved` flag set. The result does not depend on the thread count: the
/// parallel part only collects, and the sort orders distinct entries.
pub(super) fn find_pairs(trees: &[Tree; 2], proxies: &[Proxy], moved: &[u32]) -> Vec<PairEntry> {
    let mut found = if moved.len() < PARALLEL_THRESHOLD {
        let mut found = Vec::new();
        for &index in moved {
            pairs_of(trees, proxies, index, &mut found);
        }
        found
    } else {
        moved
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut found = Vec::with_capacity(8 * chunk.len());
                for &index in chunk {
                    pairs_of(trees, proxies, index, &mut found);
                }
                found
            })
            .flatten_iter()
            .collect()
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
fn pairs_of(trees: &[Tree; 2], proxies: &[Proxy], index: u32, found: &mut Vec<PairEntry>) {
    let proxy = &proxies[index as usize];
    let mut visit = |other: u32| {
        let partner = &proxies[other as usize];
        if other == index || partner.user_key == proxy.user_key || (partner.moved && other < index) {
            return;
        }
        found.push(if proxy.user_key < partner.user_key {
            PairEntry {
                low: proxy.user_key,
                high: partner.user_key,
                first: index,
                second: other,
            }
        } else {
            PairEntry {
                low: partner.user_key,
                high: proxy.user_key,
                first: other,
                second: index,
            }
        });
    };
    trees[ProxyKind::Dynamic.tree()].query(&proxy.fat, &mut visit);
    if proxy.kind == ProxyKind::Dynamic {
        trees[ProxyKind::Static.tree()].query(&proxy.fat, &mut visit);
    }
}
