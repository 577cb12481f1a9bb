//! The broad phase: which pairs of moving boxes may touch, found without testing every pair.
//!
//! Each body (or each part of a compound body) is a *proxy*: an axis-aligned box in world frame,
//! metres, with the user's 64-bit key (the engine's body id). The engine inserts a proxy when a
//! body appears, gives it its new box every step with [`BroadPhase::update`], removes it when the
//! body goes, and asks for the pairs with [`BroadPhase::update_pairs`].
//!
//! # The contract: pairs of fat boxes
//! The broad phase does not test the boxes the user gives (the *tight* boxes) but *fat* boxes
//! that contain them: a dynamic proxy's fat box is its tight box grown by
//! [`BroadPhaseSettings::margin`] on every side (and stretched along a predicted displacement, see
//! [`BroadPhase::update_with_displacement`]); a static proxy's fat box is its tight box. A fat box
//! is recomputed only when the tight box leaves it (or when it has become far larger than needed,
//! more than four margins), so the small motions of a settling pile change nothing: no tree edit,
//! no pair search. The pairs reported are exactly the pairs of proxies whose current fat boxes
//! overlap ([`BroadPhase::fat_aabb`] returns them), less static-static pairs and pairs of proxies
//! with the same key. This is a superset of the pairs whose tight boxes overlap: none of those
//! is ever missed. Boxes that merely touch overlap, as in [`Aabb::overlaps`] (bounds are
//! inclusive), so two boxes resting face to face with a zero margin still pair.
//!
//! Pairs are reported by user key, `(low, high)` with `low < high`, sorted, each once: the same
//! input calls give the same list, bit for bit, whatever the number of rayon threads.
//!
//! # How
//! Two dynamic bounding volume trees (`tree.rs`), one for static and one for dynamic proxies, so
//! that terrain is never tested against itself; a move buffer of the proxies whose fat box
//! changed; and a persistent sorted pair list (`pairs.rs`). [`BroadPhase::update`] only compares
//! the new box with the fat box and, when it left it, records the new fat box. All the work is
//! in [`BroadPhase::update_pairs`], in proportion to the moved proxies:
//! 1. the trees take the new fat boxes, in tree order (`apply_moves`): a box that still touches
//!    its old place grows its ancestors, one that jumped is reinserted (`sibling.rs`); a tree that
//!    was mostly bulk loaded since its last rebuild is rebuilt top down (`build.rs`);
//! 2. each moved proxy's fat box is searched for in the trees, in parallel (`pairs.rs`), and the
//!    new pairs are sorted;
//! 3. side by side: the trees are refitted exactly and rotated (and, after many edits, laid out
//!    again), while the pair list drops the moved proxies' old pairs, merges in the new ones and
//!    writes the answer.
//!
//! The design is Box2D v3's (broad_phase.c, dynamic_tree.c: fat boxes, a move buffer, a pair
//! search per moved proxy) with Bullet's static/dynamic split (btDbvtBroadphase). A
//! sweep-and-prune (Rapier) was rejected because piles project many boxes onto every axis, so its
//! sorted lists churn without pairs.
//!
//! # Errors
//! Boxes with a non-finite coordinate or `min > max`, stale or foreign proxy ids, and non-finite
//! displacements are refused with a [`GeometryError`] naming the value; nothing changes then.

mod build;
mod pairs;
mod proxy;
mod sibling;
mod tree;

pub use proxy::{ProxyId, ProxyKind};

use core::sync::atomic::{AtomicU64, Ordering};

use glam::DVec3;

use crate::aabb::Aabb;
use crate::error::GeometryError;
use pairs::PairSet;
use proxy::{Proxy, ProxyTable, check_box, fat_box, margin};
use tree::Tree;

/// Edits per leaf (insertions, removals, rotations) after which a tree's nodes are laid out again
/// (see `build.rs`): rare enough to cost a few percent, often enough to keep searches local.
const COMPACT_AFTER: usize = 2;

/// How fat boxes are made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BroadPhaseSettings {
    /// How far a dynamic proxy's fat box reaches beyond its tight box on every side, m. A body
    /// that moves less than this since its fat box was made costs nothing; larger margins mean
    /// fewer updates but more pairs for the narrow phase to reject. Box2D uses 0.1 m for bodies
    /// of about a metre. Zero makes fat boxes tight (and every motion an update).
    pub margin: f64,
    /// How many times the displacement given to [`BroadPhase::update_with_displacement`] the fat
    /// box is stretched ahead of the body, dimensionless (Box2D v2.4 uses 4): with 2, a body
    /// moving steadily renews its fat box about every other step instead of every step.
    pub prediction: f64,
}

impl Default for BroadPhaseSettings {
    fn default() -> Self {
        Self {
            margin: 0.1,
            prediction: 2.0,
        }
    }
}

/// Candidate pairs of moving boxes. See the [module docs](self) for the contract.
#[derive(Clone, Debug)]
pub struct BroadPhase {
    settings: BroadPhaseSettings,
    proxies: ProxyTable,
    /// Indexed by [`ProxyKind::tree`].
    trees: [Tree; 2],
    /// Slots whose fat box changed since the last pair update (each once; some may be dead).
    moved: Vec<u32>,
    /// Slots removed since the last pair update.
    removed: Vec<u32>,
    pairs: PairSet,
    /// Names the pair set's contents ([`BroadPhase::pair_stamp`]).
    pair_stamp: u64,
    /// Per slot: moved or removed in this update (all false between updates).
    touched: Vec<bool>,
}

/// Whether `proxy` keeps its fat box for the new tight box `aabb`, `fat` the fat box it would be
/// given now: v2.4's test (b2DynamicTree::MoveProxy), keep it while it holds the tight box and is
/// not far larger (four margins) than the new one would be (a fast body that stopped).
fn keeps(settings: &BroadPhaseSettings, proxy: &Proxy, aabb: &Aabb, fat: &Aabb) -> bool {
    let slack = 4.0 * margin(settings, proxy.kind);
    proxy.fat.contains(aabb) && fat.expanded(slack).contains(&proxy.fat)
}

/// A number no pair set of this process has been stamped with before
/// ([`BroadPhase::pair_stamp`]).
fn fresh_stamp() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Default for BroadPhase {
    fn default() -> Self {
        Self::new()
    }
}

impl BroadPhase {
    /// An empty broad phase with the default settings (0.1 m margin).
    pub fn new() -> Self {
        Self {
            settings: BroadPhaseSettings::default(),
            proxies: ProxyTable::default(),
            trees: Default::default(),
            moved: Vec::new(),
            removed: Vec::new(),
            pairs: PairSet::default(),
            pair_stamp: fresh_stamp(),
            touched: Vec::new(),
        }
    }

    /// An empty broad phase with `settings`; fails on a negative or non-finite margin or
    /// prediction factor, naming it.
    pub fn try_with_settings(settings: BroadPhaseSettings) -> Result<Self, GeometryError> {
        if !(settings.margin.is_finite() && settings.margin >= 0.0) {
            return Err(GeometryError::invalid(
                "broad phase margin",
                settings.margin,
                "a non-negative finite distance in metres",
            ));
        }
        if !(settings.prediction.is_finite() && settings.prediction >= 0.0) {
            return Err(GeometryError::invalid(
                "broad phase prediction",
                settings.prediction,
                "a non-negative finite factor",
            ));
        }
        Ok(Self {
            settings,
            ..Self::new()
        })
    }

    /// The settings.
    pub fn settings(&self) -> &BroadPhaseSettings {
        &self.settings
    }

    /// Number of proxies.
    pub fn len(&self) -> usize {
        self.proxies.len()
    }

    /// Whether there is no proxy.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a dynamic proxy with tight box `aabb` (world frame, m) and the user's `user_key`.
    /// Fails on a non-finite or inverted box, naming the bad coordinate.
    pub fn insert(&mut self, aabb: Aabb, user_key: u64) -> Result<ProxyId, GeometryError> {
        self.insert_with_kind(aabb, user_key, ProxyKind::Dynamic)
    }

    /// Adds a static proxy (ground, terrain: never paired with another static one).
    pub fn insert_static(&mut self, aabb: Aabb, user_key: u64) -> Result<ProxyId, GeometryError> {
        self.insert_with_kind(aabb, user_key, ProxyKind::Static)
    }

    /// Adds a proxy of kind `kind`; see [`BroadPhase::insert`].
    pub fn insert_with_kind(&mut self, aabb: Aabb, user_key: u64, kind: ProxyKind) -> Result<ProxyId, GeometryError> {
        let fat = fat_box(&self.settings, &aabb, DVec3::ZERO, kind)?;
        if self.proxies.is_full() {
            return Err(GeometryError::invalid(
                "number of proxies",
                self.proxies.len(),
                "fewer than 2^31 proxies at once",
            ));
        }
        let id = self.proxies.allocate(Proxy {
            tight: aabb,
            fat,
            user_key,
            kind,
            generation: 0,
            live: true,
            moved: true,
        });
        let tree = &mut self.trees[kind.tree()];
        tree.insert(id.index(), fat);
        tree.fresh += 1;
        self.moved.push(id.index());
        Ok(id)
    }

    /// Removes proxy `id` and returns its user key; fails, changing nothing, when `id` is not a
    /// live proxy of this broad phase (removed already, or never inserted here).
    pub fn remove(&mut self, id: ProxyId) -> Result<u64, GeometryError> {
        let proxy = self.proxies.get(id)?;
        let (key, kind) = (proxy.user_key, proxy.kind);
        self.trees[kind.tree()].remove(id.index());
        self.proxies.release(id.index());
        self.removed.push(id.index());
        Ok(key)
    }

    /// Gives proxy `id` its new tight box `aabb` (world frame, m). Returns whether the fat box
    /// had to change (the box left it, or it was more than four margins too large). Cheap either
    /// way: the trees take the new fat boxes at the next [`BroadPhase::update_pairs`]. Fails,
    /// changing nothing, on a stale id or a non-finite or inverted box.
    pub fn update(&mut self, id: ProxyId, aabb: Aabb) -> Result<bool, GeometryError> {
        self.update_with_displacement(id, aabb, DVec3::ZERO)
    }

    /// As [`BroadPhase::update`], for a body expected to move by `displacement` (m, typically
    /// velocity times the step) before the next update: a renewed fat box is stretched by
    /// [`BroadPhaseSettings::prediction`] times it, so a fast body does not renew it every step.
    /// Static proxies ignore the displacement.
    pub fn update_with_displacement(
        &mut self,
        id: ProxyId,
        aabb: Aabb,
        displacement: DVec3,
    ) -> Result<bool, GeometryError> {
        if !displacement.is_finite() {
            return Err(GeometryError::invalid(
                "displacement",
                displacement,
                "a finite predicted displacement in metres",
            ));
        }
        let settings = self.settings;
        let proxy = self.proxies.get_mut(id)?;
        let fat = fat_box(&settings, &aabb, displacement, proxy.kind)?;
        proxy.tight = aabb;
        if keeps(&settings, proxy, &aabb, &fat) {
            return Ok(false);
        }
        // The tree learns of it at the next pair update, all moves at once, in tree order.
        proxy.fat = fat;
        if !proxy.moved {
            proxy.moved = true;
            self.moved.push(id.index());
        }
        Ok(true)
    }

    /// Whether [`BroadPhase::update_with_displacement`] with these arguments would keep the fat
    /// box of `id` (return `false`, changing no pair and no tree): the one thing it would do
    /// then is record `aabb` as the tight box. `false` where it would fail (a stale id, a bad
    /// box or displacement). Takes `&self`, so many proxies can be checked side by side and only
    /// those that need their fat box renewed updated.
    pub fn keeps_fat_box(&self, id: ProxyId, aabb: &Aabb, displacement: DVec3) -> bool {
        let Ok(proxy) = self.proxies.get(id) else {
            return false;
        };
        displacement.is_finite()
            && fat_box(&self.settings, aabb, displacement, proxy.kind)
                .is_ok_and(|fat| keeps(&self.settings, proxy, aabb, &fat))
    }

    /// The tight box last given for `id`, m.
    pub fn aabb(&self, id: ProxyId) -> Result<Aabb, GeometryError> {
        Ok(self.proxies.get(id)?.tight)
    }

    /// The fat box of `id`, m: the box its pairs are decided by. It contains [`BroadPhase::aabb`].
    pub fn fat_aabb(&self, id: ProxyId) -> Result<Aabb, GeometryError> {
        Ok(self.proxies.get(id)?.fat)
    }

    /// The user key of `id`.
    pub fn user_key(&self, id: ProxyId) -> Result<u64, GeometryError> {
        Ok(self.proxies.get(id)?.user_key)
    }

    /// The kind of `id`.
    pub fn kind(&self, id: ProxyId) -> Result<ProxyKind, GeometryError> {
        Ok(self.proxies.get(id)?.kind)
    }

    /// Every live proxy, in slot order.
    pub fn proxies(&self) -> impl Iterator<Item = ProxyId> + '_ {
        self.proxies
            .slots
            .iter()
            .enumerate()
            .filter(|(_, proxy)| proxy.live)
            .map(|(index, _)| self.proxies.id(index as u32))
    }

    /// The current pairs, as [`BroadPhase::update_pairs`] writes them.
    pub fn pairs(&mut self) -> Vec<(u64, u64)> {
        let mut pairs = Vec::new();
        self.update_pairs(&mut pairs);
        pairs
    }

    /// Brings the pairs up to date with every insert, remove and update so far and writes them
    /// into `pairs` (cleared first): the user keys of every two proxies whose fat boxes overlap,
    /// `(low, high)`, sorted, each once, without static-static pairs or pairs sharing a key.
    /// Work is proportional to the proxies whose fat box changed, not to all proxies.
    pub fn update_pairs(&mut self, pairs: &mut Vec<(u64, u64)>) {
        let slots = &self.proxies.slots;
        self.moved.retain(|index| slots[*index as usize].live);
        if self.moved.is_empty() && self.removed.is_empty() {
            self.pairs.write_keys(pairs);
            return;
        }
        // Tree edits and searches in tree order rather than in the order of the updates:
        // consecutive ones then touch the same nodes, still in cache (the trees of large scenes
        // are not).
        self.pair_stamp = fresh_stamp();
        self.sort_moved();
        self.apply_moves();
        if self.rebuild_loaded_trees() {
            self.sort_moved();
        }
        self.touched.resize(self.proxies.slots.len(), false);
        for index in self.moved.iter().chain(&self.removed) {
            self.touched[*index as usize] = true;
        }
        let fresh = pairs::find_pairs(&self.trees, &self.proxies, &self.touched, &self.moved);
        // The searches ran on trees whose moved boxes only grew their ancestors; tightening and
        // rotating them is independent of merging the pairs, so the two run side by side.
        let (trees, pair_set, touched) = (&mut self.trees, &mut self.pairs, &self.touched);
        shatter_integrators::parallel::join(
            || {
                for tree in trees.iter_mut() {
                    tree.refit();
                    if tree.edits > COMPACT_AFTER * tree.leaves.max(1) {
                        tree.compact();
                    }
                }
            },
            || pair_set.renew(touched, &fresh, pairs),
        );
        for index in self.moved.iter().chain(&self.removed) {
            self.touched[*index as usize] = false;
        }
        for index in self.moved.drain(..) {
            self.proxies.slots[index as usize].moved = false;
        }
        self.removed.clear();
        self.proxies.recycle();
    }

    /// Sorts the move buffer by tree and place in it.
    fn sort_moved(&mut self) {
        let (slots, trees) = (&self.proxies.slots, &self.trees);
        // One 64-bit key per proxy (tree: 1 bit, place: 32, slot: 31) sorts far faster than a
        // comparison that looks both up.
        let mut keys: Vec<u64> = self
            .moved
            .iter()
            .map(|&index| {
                let tree = slots[index as usize].kind.tree();
                (tree as u64) << 63 | u64::from(trees[tree].place[index as usize]) << 31 | u64::from(index)
            })
            .collect();
        keys.sort_unstable();
        for (moved, key) in self.moved.iter_mut().zip(keys) {
            *moved = (key & ((1 << 31) - 1)) as u32;
        }
    }

    /// Gives the trees the fat boxes that changed since the last pair update: a box that still
    /// touches its old place is moved there, one that jumped is reinserted.
    fn apply_moves(&mut self) {
        for &index in &self.moved {
            let proxy = &self.proxies.slots[index as usize];
            let tree = &mut self.trees[proxy.kind.tree()];
            let held = tree.leaf_bounds(index);
            if held == proxy.fat {
                // New, or moved back.
            } else if held.overlaps(&proxy.fat) {
                tree.move_leaf(index, proxy.fat);
            } else {
                tree.remove(index);
                tree.insert(index, proxy.fat);
            }
        }
    }

    /// Proxies whose fat box changed (or that were inserted) since the last
    /// [`BroadPhase::update_pairs`]: the ones each [`BroadPhase::query`] checks one by one.
    pub fn pending_moves(&self) -> usize {
        self.moved.len()
    }

    /// Whether any proxy was inserted, removed or given a new fat box since the last
    /// [`BroadPhase::update_pairs`]: whether the next one can change the pairs.
    pub fn has_pending_changes(&self) -> bool {
        !(self.moved.is_empty() && self.removed.is_empty())
    }

    /// Names the pairs [`BroadPhase::update_pairs`] last wrote: a new number, never used before
    /// in this process, each time an update changes them (a clone keeps its original's). A
    /// caller that kept the pairs written with this stamp has them still, as long as the stamp
    /// is the same and [`BroadPhase::has_pending_changes`] is false, and can skip the update.
    pub fn pair_stamp(&self) -> u64 {
        self.pair_stamp
    }

    /// Number of proxy pairs currently held (before pairs sharing both keys collapse into one).
    pub fn proxy_pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Calls `visit` with every proxy whose fat box overlaps `aabb` (world frame, m), in an order
    /// that depends only on the calls made so far. Proxies updated since the last pair update are
    /// found by a scan of those proxies, so a query is cheapest right after
    /// [`BroadPhase::update_pairs`]. Fails on a non-finite or inverted box.
    pub fn query(&self, aabb: &Aabb, mut visit: impl FnMut(ProxyId, u64)) -> Result<(), GeometryError> {
        check_box(aabb)?;
        let slots = &self.proxies.slots;
        let mut stack = Vec::new();
        for tree in &self.trees {
            tree.query(aabb, &mut stack, |index| {
                let proxy = &slots[index as usize];
                if !proxy.moved {
                    visit(self.proxies.id(index), proxy.user_key);
                }
            });
        }
        for &index in &self.moved {
            let proxy = &slots[index as usize];
            if proxy.live && proxy.fat.overlaps(aabb) {
                visit(self.proxies.id(index), proxy.user_key);
            }
        }
        Ok(())
    }

    /// Rebuilds both trees top down. Never needed for correctness, and done automatically when
    /// most of a tree was inserted since its last rebuild (a scene being loaded); call it after
    /// large rearrangements that were made by moving boxes rather than inserting them.
    pub fn rebuild(&mut self) {
        for tree in &mut self.trees {
            tree.rebuild();
        }
    }

    /// Rebuilds the trees that were mostly bulk loaded since their last rebuild; returns whether
    /// any was.
    fn rebuild_loaded_trees(&mut self) -> bool {
        let mut any = false;
        for tree in &mut self.trees {
            if tree.fresh > 0 && 2 * tree.fresh > tree.leaves {
                tree.rebuild();
                any = true;
            }
        }
        any
    }
}

#[cfg(test)]
mod tests;
