//! Where a new leaf goes: the sibling that adds the least surface area to the tree.
//!
//! Inserting leaf `L` next to node `S` creates a parent of area `A(S ∪ L)` and grows every
//! ancestor `P` of `S` by `A(P ∪ L) - A(P)`; the surface area heuristic (Goldsmith and Salmon
//! 1987; MacDonald and Booth 1990) charges their sum. The search follows one path down from the
//! root, keeping the cheapest sibling seen on it and stepping into the child with the lower bound
//! on the cost of any sibling inside it (its ancestors' growth, plus its own growth, less any
//! area the leaf saves it), until no child can beat the best; when the bounds tie (both children
//! already hold the leaf) it steps towards the nearer centre. This is the search of Box2D v3
//! (`b2FindBestSibling`), after Bittner, Hapala and Havran 2012, "Fast insertion-based
//! optimization of bounding volume hierarchies".
//!
//! Alternatives measured on a pile of ten thousand boxes where one in a hundred jumps each step:
//! Box2D v2.4's greedy descent (stop as soon as staying is cheaper than either child) let the
//! tree's total area double in two thousand steps, and the pair search slow down by as much; the
//! exact branch-and-bound search over the whole tree (Bittner et al. section 4.1, with a heap)
//! held the area as well as this one does, at two and a half times the cost per insertion.

use super::tree::{Tree, is_node};
use crate::aabb::Aabb;

impl Tree {
    /// The child slot next to whose occupant a new box `bounds` costs least along one path, or
    /// `None` for the whole tree (a new root). The tree must hold at least two leaves.
    pub(super) fn best_sibling(&self, bounds: &Aabb) -> Option<(u32, usize)> {
        let area = bounds.surface_area();
        let center = bounds.center();
        let mut own = self.nodes[self.root as usize].bounds();
        let mut direct = own.union(*bounds).surface_area();
        if !(direct > 0.0) {
            return self.greedy_sibling(bounds);
        }
        let mut inherited = 0.0;
        let (mut best, mut best_cost) = (None, direct);
        let mut at: Option<(u32, usize)> = None;
        let mut index = self.root;
        loop {
            let cost = direct + inherited;
            if cost < best_cost {
                (best, best_cost) = (at, cost);
            }
            // What every sibling below pays for this node's growth.
            inherited += direct - own.surface_area();
            let node = &self.nodes[index as usize];
            let mut lower = [f64::INFINITY; 2];
            let mut directs = [0.0; 2];
            for slot in 0..2 {
                let child = node.child_box(slot);
                directs[slot] = child.union(*bounds).surface_area();
                if is_node(node.children[slot]) {
                    // Any sibling inside pays at least the growth of this child, and a new
                    // parent of at least the leaf's area.
                    lower[slot] = inherited + directs[slot] + (area - child.surface_area()).min(0.0);
                } else if directs[slot] + inherited < best_cost {
                    (best, best_cost) = (Some((index, slot)), directs[slot] + inherited);
                }
            }
            if best_cost <= lower[0] && best_cost <= lower[1] {
                return best;
            }
            if lower[0] == lower[1] {
                // Both contain the new box (or the areas are degenerate): go to the nearer child,
                // then to the shorter one, so that coincident boxes still make a balanced tree.
                let distance = |slot: usize| (node.child_box(slot).center() - center).length_squared();
                let height = |slot: usize| self.height_of(node.children[slot]);
                lower = [0, 1].map(distance);
                if lower[0] == lower[1] {
                    lower = [0, 1].map(|slot| height(slot) as f64);
                }
            }
            let slot = usize::from(!(lower[0] <= lower[1]));
            if !is_node(node.children[slot]) {
                // Only with overflowing areas (boxes near the limits of f64).
                return best;
            }
            at = Some((index, slot));
            own = node.child_box(slot);
            direct = directs[slot];
            index = node.children[slot];
        }
    }

    /// A good sibling found by greedy descent (Box2D v2.4 `b2DynamicTree::InsertLeaf`), for when
    /// every area is zero and the search above cannot tell candidates apart: stopping at a
    /// subtree costs a new parent holding both; going down into a child costs the growth of the
    /// subtree (inherited by every ancestor) plus what the child grows; equal costs go to the
    /// shorter child, so coincident boxes still make a balanced tree.
    fn greedy_sibling(&self, bounds: &Aabb) -> Option<(u32, usize)> {
        let mut index = self.root;
        let mut own = self.nodes[index as usize].bounds();
        let mut at = None;
        loop {
            let node = &self.nodes[index as usize];
            let area = own.surface_area();
            let combined = own.union(*bounds).surface_area();
            let here = 2.0 * combined;
            let inherited = 2.0 * (combined - area);
            let cost = |slot: usize| {
                let child = node.child_box(slot);
                let grown = child.union(*bounds).surface_area();
                let kept = if is_node(node.children[slot]) {
                    child.surface_area()
                } else {
                    0.0
                };
                (grown - kept + inherited, self.height_of(node.children[slot]))
            };
            let ((cost_left, height_left), (cost_right, height_right)) = (cost(0), cost(1));
            if here < cost_left && here < cost_right {
                return at;
            }
            let slot =
                usize::from(!(cost_left < cost_right || (cost_left == cost_right && height_left <= height_right)));
            let child = node.children[slot];
            if !is_node(child) {
                return Some((index, slot));
            }
            at = Some((index, slot));
            own = node.child_box(slot);
            index = child;
        }
    }
}
