//! Proxies: the broad phase's record of one box, behind a generational id.
//!
//! Ids are `(index, generation)` pairs, like the engine's `BodyId`: a removed proxy's slot is
//! reused by a later insert, but with the next generation, so the old id is refused instead of
//! silently naming the new box. A removed slot is only reused after the next pair update, because
//! until then the pair list may still hold pairs that name it by index.

use core::fmt;

use glam::DVec3;

use super::BroadPhaseSettings;
use crate::aabb::Aabb;
use crate::error::GeometryError;

/// The stable handle of one box in a [`super::BroadPhase`]. It stays valid until the box is
/// removed; after that every call with it fails, even once its slot holds another box.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProxyId {
    index: u32,
    generation: u32,
}

impl ProxyId {
    /// The slot: a dense index, below the largest number of boxes held at once.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many times the slot had been freed before this box took it.
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

impl fmt::Display for ProxyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proxy {} (generation {})", self.index, self.generation)
    }
}

/// Whether a box belongs to a body that moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyKind {
    /// Ground, terrain, walls: rarely moved, never paired with another static box, and kept tight
    /// (no margin) because nothing is gained by fattening a box that does not move.
    Static,
    /// A moving body: paired with every other box, fattened by the margin.
    Dynamic,
}

impl ProxyKind {
    /// Index of this kind's tree.
    pub(super) fn tree(self) -> usize {
        match self {
            Self::Static => 0,
            Self::Dynamic => 1,
        }
    }
}

/// One slot of the table.
#[derive(Clone, Copy, Debug)]
pub(super) struct Proxy {
    /// The box as the user last gave it, m.
    pub(super) tight: Aabb,
    /// The box the tree and the pairs use: it contains `tight`.
    pub(super) fat: Aabb,
    pub(super) user_key: u64,
    pub(super) kind: ProxyKind,
    pub(super) generation: u32,
    pub(super) live: bool,
    /// Whether the fat box changed (or the proxy is new) since the last pair update.
    pub(super) moved: bool,
}

/// Every proxy, live or freed, by slot.
#[derive(Clone, Debug, Default)]
pub(super) struct ProxyTable {
    pub(super) slots: Vec<Proxy>,
    /// The user key of each slot (stale for free slots), dense for the pair search.
    pub(super) keys: Vec<u64>,
    /// Slots ready for reuse, taken last-in first-out (deterministic).
    free: Vec<u32>,
    /// Slots freed since the last pair update: not reusable yet.
    pending: Vec<u32>,
    live: usize,
}

impl ProxyTable {
    /// Number of live proxies.
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// Whether no slot can be added: slot indices must stay below 2^31, the tag bit of the
    /// trees' child references.
    pub(super) fn is_full(&self) -> bool {
        self.free.is_empty() && self.slots.len() >= 1 << 31
    }

    /// Stores `proxy` (whose generation is overwritten) in a free slot and returns its id.
    pub(super) fn allocate(&mut self, mut proxy: Proxy) -> ProxyId {
        self.live += 1;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            let generation = slot.generation;
            proxy.generation = generation;
            self.keys[index as usize] = proxy.user_key;
            *slot = proxy;
            return ProxyId { index, generation };
        }
        let index = self.slots.len() as u32;
        proxy.generation = 0;
        self.keys.push(proxy.user_key);
        self.slots.push(proxy);
        ProxyId { index, generation: 0 }
    }

    /// The live proxy `id` names, or an error naming `id`.
    pub(super) fn get(&self, id: ProxyId) -> Result<&Proxy, GeometryError> {
        match self.slots.get(id.index as usize) {
            Some(proxy) if proxy.live && proxy.generation == id.generation => Ok(proxy),
            _ => Err(stale(id)),
        }
    }

    /// The live proxy `id` names, mutably, or an error naming `id`.
    pub(super) fn get_mut(&mut self, id: ProxyId) -> Result<&mut Proxy, GeometryError> {
        match self.slots.get_mut(id.index as usize) {
            Some(proxy) if proxy.live && proxy.generation == id.generation => Ok(proxy),
            _ => Err(stale(id)),
        }
    }

    /// Frees the slot of the live proxy at `index`; it becomes reusable at [`Self::recycle`].
    pub(super) fn release(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.live);
        slot.live = false;
        // After 2^32 reuses of one slot an id would alias again; no engine lives that long.
        slot.generation = slot.generation.wrapping_add(1);
        self.pending.push(index);
        self.live -= 1;
    }

    /// Makes the slots freed since the last call reusable.
    pub(super) fn recycle(&mut self) {
        self.free.append(&mut self.pending);
    }

    /// The id of the live proxy in slot `index`.
    pub(super) fn id(&self, index: u32) -> ProxyId {
        ProxyId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }
}

fn stale(id: ProxyId) -> GeometryError {
    GeometryError::invalid(
        "proxy id",
        id,
        "a live proxy of this broad phase (this one was removed, or never inserted here)",
    )
}

/// Refuses a box with a non-finite coordinate (naming the coordinate and its value) or with
/// `min > max` on some axis (naming both values).
pub(super) fn check_box(aabb: &Aabb) -> Result<(), GeometryError> {
    if aabb.min.is_finite() && aabb.max.is_finite() && aabb.min.cmple(aabb.max).all() {
        return Ok(());
    }
    const NAMES: [[&str; 3]; 2] = [
        ["box min.x", "box min.y", "box min.z"],
        ["box max.x", "box max.y", "box max.z"],
    ];
    for (names, corner) in NAMES.iter().zip([aabb.min, aabb.max]) {
        for axis in 0..3 {
            if !corner[axis].is_finite() {
                return Err(GeometryError::invalid(
                    names[axis],
                    corner[axis],
                    "a finite coordinate in metres",
                ));
            }
        }
    }
    for (axis, name) in ["x", "y", "z"].iter().enumerate() {
        if aabb.min[axis] > aabb.max[axis] {
            return Err(GeometryError::InvalidParameter {
                name: "box",
                value: format!("min.{name} = {} > max.{name} = {}", aabb.min[axis], aabb.max[axis]),
                expected: "min <= max on every axis (an inverted box bounds nothing)",
            });
        }
    }
    Ok(())
}

/// The fat box for `tight`: grown by `margin` on every side, then stretched by `reach` (a
/// predicted displacement, m) in the direction it points, so that a body moving steadily stays
/// inside its fat box for a few steps.
fn fatten(tight: &Aabb, margin: f64, reach: DVec3) -> Aabb {
    let grown = tight.expanded(margin);
    Aabb::new(grown.min + reach.min(DVec3::ZERO), grown.max + reach.max(DVec3::ZERO))
}

/// The margin of proxies of `kind`, m.
pub(super) fn margin(settings: &BroadPhaseSettings, kind: ProxyKind) -> f64 {
    match kind {
        ProxyKind::Static => 0.0,
        ProxyKind::Dynamic => settings.margin,
    }
}

/// The fat box for tight box `aabb` of a proxy of `kind` expected to move by `displacement`,
/// checked.
pub(super) fn fat_box(
    settings: &BroadPhaseSettings,
    aabb: &Aabb,
    displacement: DVec3,
    kind: ProxyKind,
) -> Result<Aabb, GeometryError> {
    check_box(aabb)?;
    let reach = match kind {
        ProxyKind::Static => DVec3::ZERO,
        ProxyKind::Dynamic => displacement * settings.prediction,
    };
    let fat = fatten(aabb, margin(settings, kind), reach);
    if !(fat.min.is_finite() && fat.max.is_finite()) {
        return Err(if reach.is_finite() {
            GeometryError::invalid(
                "box",
                aabb,
                "coordinates small enough that the box stays finite when grown by the margin and the predicted reach",
            )
        } else {
            GeometryError::invalid(
                "displacement",
                displacement,
                "a displacement small enough that the prediction factor times it is finite",
            )
        });
    }
    Ok(fat)
}
