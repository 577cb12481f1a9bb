//! Rebuilding a [`Tree`]'s storage: a top-down rebuild from its leaves, after a bulk load (where
//! inserting one box at a time leaves a tree shaped by the insertion order), and a compaction
//! that only lays the nodes out again, depth first, after edits have scattered them.
//!
//! Each range of leaves is split at the cheapest of [`BINS`] planes along the axis of largest
//! centroid spread by the surface area heuristic (binned SAH, Wald 2007, as `crate::bvh` does for
//! triangles), down to single leaves. Leaves are first put in proxy order, so the result depends
//! only on the set of boxes, not on the tree it replaces.

use glam::DVec3;

use super::tree::{NULL, PROXY, Tree, is_node, proxy_of};
use crate::aabb::{Aabb, best_binned_split};

/// Candidate split planes per range.
const BINS: usize = 16;

/// A leaf to place.
#[derive(Clone, Copy)]
struct Item {
    bounds: Aabb,
    centroid: DVec3,
    proxy: u32,
}

impl Tree {
    /// Rebuilds the tree over its current leaves.
    pub(super) fn rebuild(&mut self) {
        let mut items: Vec<Item> = Vec::with_capacity(self.leaves);
        for node in self.live_nodes() {
            let n = &self.nodes[node as usize];
            for slot in 0..2 {
                if let Some(proxy) = proxy_of(n.children[slot]) {
                    let bounds = n.child_box(slot);
                    items.push(Item {
                        bounds,
                        centroid: bounds.center(),
                        proxy,
                    });
                }
            }
        }
        items.sort_unstable_by_key(|item| item.proxy);
        self.nodes.clear();
        self.free.clear();
        self.root = NULL;
        self.fresh = 0;
        self.edits = 0;
        self.leaves = items.len();
        if items.is_empty() {
            return;
        }
        self.nodes.reserve(items.len());
        self.root = self.push_node(NULL, 0);
        if items.len() == 1 {
            self.set_child(self.root, 0, items[0].proxy | PROXY, items[0].bounds);
            return;
        }
        // Depth first with an explicit stack (a skewed split sequence can be deep); children get
        // larger indices than their parent, and the left subtree is laid out first, which keeps
        // nearby boxes nearby in memory. Each entry: a range of items and the child slot it fills.
        let mut stack: Vec<(usize, usize, u32, usize)> = Vec::new();
        let mid = split(&mut items);
        stack.push((mid, items.len(), self.root, 1));
        stack.push((0, mid, self.root, 0));
        while let Some((start, end, parent, slot)) = stack.pop() {
            if end - start == 1 {
                self.set_child(parent, slot, items[start].proxy | PROXY, items[start].bounds);
                continue;
            }
            let index = self.push_node(parent, slot);
            self.set_child(parent, slot, index, Aabb::EMPTY);
            let mid = split(&mut items[start..end]) + start;
            stack.push((mid, end, index, 1));
            stack.push((start, mid, index, 0));
        }
        // Children come after their parent: one backward sweep sets the boxes kept for internal
        // children, and the heights.
        for index in (0..self.nodes.len()).rev() {
            let node = self.nodes[index];
            let mut height = 0;
            for slot in 0..2 {
                let child = node.children[slot];
                if is_node(child) {
                    let c = &self.nodes[child as usize];
                    height = height.max(c.height);
                    let b = c.bounds();
                    self.nodes[index].set_child_box(slot, b);
                }
            }
            self.nodes[index].height = 1 + height;
        }
    }

    /// Lays the nodes out again in depth-first order (left child right after its parent) without
    /// changing the tree. Edits reuse freed node slots wherever they are, so after many of them
    /// a search jumps across memory at every step; in trees larger than the caches, the searches
    /// of a pile of a hundred thousand jostling boxes took about half the time in a freshly laid
    /// out tree. The pass costs about as much as a search through the whole tree.
    pub(super) fn compact(&mut self) {
        self.edits = 0;
        if self.root == NULL {
            self.nodes.clear();
            self.free.clear();
            return;
        }
        let mut nodes = Vec::with_capacity(self.nodes.len() - self.free.len());
        // (old index, new parent, slot in it)
        let mut stack = vec![(self.root, NULL, 0usize)];
        while let Some((old, parent, slot)) = stack.pop() {
            let index = nodes.len() as u32;
            let mut node = self.nodes[old as usize];
            node.parent = parent;
            node.slot = slot as u8;
            nodes.push(node);
            if parent != NULL {
                nodes[parent as usize].children[slot] = index;
            }
            for slot in (0..2).rev() {
                let child = node.children[slot];
                if let Some(proxy) = proxy_of(child) {
                    self.place[proxy as usize] = index << 1 | slot as u32;
                } else if is_node(child) {
                    // Start fetching the child now (the load is kept, its value unused): a
                    // traversal that waits for one scattered node at a time took half again as
                    // long on a hundred thousand boxes.
                    std::hint::black_box(self.nodes[child as usize].children);
                    stack.push((child, index, slot));
                }
            }
        }
        self.root = 0;
        self.nodes = nodes;
        self.free.clear();
    }

    fn push_node(&mut self, parent: u32, slot: usize) -> u32 {
        self.nodes.push(Self::blank(parent, slot));
        (self.nodes.len() - 1) as u32
    }

    /// The indices of the nodes in use.
    pub(super) fn live_nodes(&self) -> impl Iterator<Item = u32> + '_ {
        let mut free = vec![false; self.nodes.len()];
        for index in &self.free {
            free[*index as usize] = true;
        }
        (0..self.nodes.len() as u32).filter(move |index| !free[*index as usize])
    }
}

/// Reorders `items` (at least two) around the cheapest binned SAH plane and returns how many go
/// left (at least one, at most all but one).
fn split(items: &mut [Item]) -> usize {
    let count = items.len();
    let centroids = Aabb::from_points(items.iter().map(|item| item.centroid));
    let extent = centroids.size();
    let axis = if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let (low, width) = (centroids.min[axis], extent[axis]);
    if !(width > 0.0) {
        // Coincident centroids: no plane separates them; halve the range to stay balanced.
        return count / 2;
    }
    let bin_of = |item: &Item| (((item.centroid[axis] - low) / width * BINS as f64) as usize).min(BINS - 1);
    let mut bin_bounds = [Aabb::EMPTY; BINS];
    let mut bin_counts = [0usize; BINS];
    for item in items.iter() {
        let bin = bin_of(item);
        bin_bounds[bin] = bin_bounds[bin].union(item.bounds);
        bin_counts[bin] += 1;
    }
    let Some((_, split_bin)) = best_binned_split(&bin_bounds, &bin_counts) else {
        // Every centroid in one bin (spread below the bin width's rounding): halve.
        return count / 2;
    };
    // In-place partition: deterministic, and the order within each side does not matter since
    // each side is split again by the same rule.
    let mut left = 0;
    for i in 0..count {
        if bin_of(&items[i]) <= split_bin {
            items.swap(i, left);
            left += 1;
        }
    }
    left
}
