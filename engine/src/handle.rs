//! Generational handles: the stable names of bodies and joints.
//!
//! A handle is a slot index and the generation the slot had when the thing was made. Removing the
//! thing bumps the slot's generation, so an old handle no longer matches even after the slot is
//! reused: it is refused by name instead of silently naming the newcomer (Box2D v3 `b2BodyId`,
//! Rapier's arena indices).

use core::fmt;

use bytemuck::{Pod, Zeroable};

/// The stable handle of a body in a [`crate::World`]. Valid until the body is removed; after that
/// every call with it fails with [`crate::EngineError::StaleBody`], even once the slot holds
/// another body.
///
/// Ordered by index then generation; the step sorts pairs and contacts by this order.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Pod, Zeroable)]
pub struct BodyId {
    /// Slot in the store's handle table (not the dense index of the body's data).
    pub index: u32,
    /// How many times the slot had been freed before this body took it.
    pub generation: u32,
}

impl BodyId {
    /// A handle from its parts. A handle made up this way is only valid if a body with exactly
    /// this index and generation exists; anything else is refused as stale.
    pub const fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The handle packed into one integer, generation in the high half: a key for side tables
    /// and for the broad phase.
    pub const fn to_bits(self) -> u64 {
        (self.generation as u64) << 32 | self.index as u64
    }

    /// The inverse of [`BodyId::to_bits`].
    pub const fn from_bits(bits: u64) -> Self {
        Self {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

impl fmt::Display for BodyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "body {} (generation {})", self.index, self.generation)
    }
}

/// The stable handle of a joint in a [`crate::World`]; stale after the joint is removed or broken.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Pod, Zeroable)]
pub struct JointId {
    /// Slot in the joint table.
    pub index: u32,
    /// How many times the slot had been freed before this joint took it.
    pub generation: u32,
}

impl fmt::Display for JointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "joint {} (generation {})", self.index, self.generation)
    }
}

/// One slot of a generational table: the generation it is at and, while occupied, where its
/// data lives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub(crate) generation: u32,
    /// Index into the dense arrays, or [`Slot::VACANT`].
    pub(crate) dense: u32,
}

impl Slot {
    pub(crate) const VACANT: u32 = u32::MAX;
}

/// The slot table shared by bodies and joints: allocation with a last-in first-out free list
/// (deterministic reuse), generation bumps on release.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl SlotTable {
    /// Takes a free slot (or a new one) for data at `dense`; returns `(index, generation)`.
    pub(crate) fn allocate(&mut self, dense: usize) -> (u32, u32) {
        let dense = dense as u32;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.dense = dense;
            return (index, slot.generation);
        }
        let index = self.slots.len() as u32;
        self.slots.push(Slot { generation: 0, dense });
        (index, 0)
    }

    /// The dense index of the live entry `(index, generation)`, if there is one.
    pub(crate) fn dense(&self, index: u32, generation: u32) -> Option<usize> {
        match self.slots.get(index as usize) {
            Some(slot) if slot.generation == generation && slot.dense != Slot::VACANT => Some(slot.dense as usize),
            _ => None,
        }
    }

    /// Points the live slot `index` at a new dense position (after a swap-remove moved its data).
    pub(crate) fn relocate(&mut self, index: u32, dense: usize) {
        self.slots[index as usize].dense = dense as u32;
    }

    /// Frees slot `index`: its generation moves on so old handles go stale. A slot whose
    /// generation would wrap is retired rather than reused, so no handle can ever come back to life.
    pub(crate) fn release(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.dense = Slot::VACANT;
        if slot.generation < u32::MAX {
            slot.generation += 1;
            self.free.push(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_bits_round_trip_and_order() {
        let id = BodyId::new(7, 3);
        assert_eq!(BodyId::from_bits(id.to_bits()), id);
        assert!(BodyId::new(1, 9) < BodyId::new(2, 0));
        assert_eq!(id.to_string(), "body 7 (generation 3)");
    }

    #[test]
    fn handle_slots_reuse_last_freed_with_a_new_generation() {
        let mut table = SlotTable::default();
        let a = table.allocate(0);
        let b = table.allocate(1);
        assert_eq!((a, b), ((0, 0), (1, 0)));
        table.release(0);
        assert_eq!(table.dense(0, 0), None);
        assert_eq!(table.dense(1, 0), Some(1));
        let c = table.allocate(1);
        assert_eq!(c, (0, 1));
        assert_eq!(table.dense(0, 1), Some(1));
        assert_eq!(table.dense(5, 0), None);
    }
}
