//! The dynamic bounding volume tree: one leaf per proxy's fat box, edited in place as proxies
//! come, go and move.
//!
//! The design follows Box2D v3's dynamic tree (dynamic_tree.c) and Bullet's `btDbvt`:
//! - insertion walks down to the cheapest sibling by the surface area heuristic (Goldsmith and
//!   Salmon 1987; the greedy descent of Box2D v2.4) and then applies tree rotations on the way up
//!   (Kopta, Ize, Spjut, Brunvand, Davis and Kensler 2012, "Fast, effective BVH updates for
//!   animated scenes");
//! - a small move only replaces the leaf's box and grows its ancestors until one already holds it
//!   (Box2D v3's "enlarged" nodes), marking them dirty; [`Tree::refit`] later recomputes exactly
//!   the dirty nodes, bottom up, so ancestors also shrink when their leaves move away, and rotates
//!   each of them. Between the two the tree is valid (every node holds its subtree), only loose;
//! - a far move (the new box does not touch the old one) removes and reinserts the leaf, since
//!   stretching its ancestors across the world would only bloat them;
//! - a bulk load is rebuilt top down (see `build.rs`).
//!
//! Invariants: every node's box contains its children's; a dirty node's parent is dirty (so the
//! dirty nodes form a subtree hanging from the root and a refit finds them all from there).

use smallvec::SmallVec;

use crate::aabb::Aabb;

/// No node.
pub(super) const NULL: u32 = u32::MAX;

/// One node. 64 bytes: one cache line.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// Holds every leaf box below, m.
    pub(super) bounds: Aabb,
    pub(super) parent: u32,
    /// An internal node's two children; a leaf's `[proxy index, NULL]`.
    pub(super) children: [u32; 2],
    /// Longest path down to a leaf (zero for a leaf); breaks cost ties towards balance, so that
    /// boxes with zero area (points, coincident boxes) do not pile into a chain.
    pub(super) height: u32,
    pub(super) leaf: bool,
    /// Some box below may have changed since the last refit: `bounds` may be loose.
    pub(super) dirty: bool,
}

/// The tree over one kind of proxy.
#[derive(Clone, Debug)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    /// Freed node slots, reused last-in first-out (deterministic).
    pub(super) free: Vec<u32>,
    pub(super) root: u32,
    pub(super) leaves: usize,
    /// Leaves inserted for new proxies since the last rebuild: when they are most of the tree,
    /// it was bulk loaded one box at a time and a top-down rebuild pays.
    pub(super) fresh: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NULL,
            leaves: 0,
            fresh: 0,
        }
    }
}

impl Tree {
    /// Stores `node` in a free slot.
    pub(super) fn allocate(&mut self, node: Node) -> u32 {
        if let Some(index) = self.free.pop() {
            self.nodes[index as usize] = node;
            index
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Adds a leaf for `proxy` with box `bounds` and returns it.
    pub(super) fn insert(&mut self, proxy: u32, bounds: Aabb) -> u32 {
        let leaf = self.allocate(Node {
            bounds,
            parent: NULL,
            children: [proxy, NULL],
            height: 0,
            leaf: true,
            dirty: false,
        });
        self.leaves += 1;
        if self.root == NULL {
            self.root = leaf;
            return leaf;
        }
        let sibling = self.best_sibling(&bounds);
        let grandparent = self.nodes[sibling as usize].parent;
        let old = self.nodes[sibling as usize];
        let parent = self.allocate(Node {
            bounds: old.bounds.union(bounds),
            parent: grandparent,
            children: [sibling, leaf],
            height: old.height + 1,
            leaf: false,
            // Keeps dirty nodes hanging from the root: the sibling's ancestors are already dirty.
            dirty: old.dirty,
        });
        self.nodes[sibling as usize].parent = parent;
        self.nodes[leaf as usize].parent = parent;
        if grandparent == NULL {
            self.root = parent;
        } else {
            self.replace_child(grandparent, sibling, parent);
        }
        let mut index = grandparent;
        while index != NULL {
            self.refit_node(index);
            self.rotate(index);
            index = self.nodes[index as usize].parent;
        }
        leaf
    }

    /// The node next to which a new box `bounds` costs least (greedy descent, Box2D v2.4
    /// `b2DynamicTree::InsertLeaf`): stopping at a node costs a new parent holding both; going
    /// down into a child costs the growth of the node (inherited by every ancestor) plus what the
    /// child grows.
    fn best_sibling(&self, bounds: &Aabb) -> u32 {
        let mut index = self.root;
        loop {
            let node = &self.nodes[index as usize];
            if node.leaf {
                return index;
            }
            let area = node.bounds.surface_area();
            let combined = node.bounds.union(*bounds).surface_area();
            let here = 2.0 * combined;
            let inherited = 2.0 * (combined - area);
            let descend = |child: u32| {
                let child = &self.nodes[child as usize];
                let grown = child.bounds.union(*bounds).surface_area();
                let own = if child.leaf { 0.0 } else { child.bounds.surface_area() };
                (grown - own + inherited, child.height)
            };
            let [left, right] = node.children;
            let (cost_left, height_left) = descend(left);
            let (cost_right, height_right) = descend(right);
            if here < cost_left && here < cost_right {
                return index;
            }
            let go_left = cost_left < cost_right || (cost_left == cost_right && height_left <= height_right);
            index = if go_left { left } else { right };
        }
    }

    /// Removes `leaf` (its sibling takes the parent's place). The ancestors keep their boxes,
    /// which are now loose, and are marked dirty for the next refit.
    pub(super) fn remove(&mut self, leaf: u32) {
        debug_assert!(self.nodes[leaf as usize].leaf);
        self.leaves -= 1;
        self.free.push(leaf);
        let parent = self.nodes[leaf as usize].parent;
        if parent == NULL {
            self.root = NULL;
            return;
        }
        let [a, b] = self.nodes[parent as usize].children;
        let sibling = if a == leaf { b } else { a };
        let grandparent = self.nodes[parent as usize].parent;
        self.free.push(parent);
        self.nodes[sibling as usize].parent = grandparent;
        if grandparent == NULL {
            self.root = sibling;
        } else {
            self.replace_child(grandparent, parent, sibling);
            self.mark_dirty(grandparent);
        }
    }

    /// Gives `leaf` the box `bounds`, which overlaps its old one: ancestors grow until one already
    /// holds it, and are marked dirty up to the root.
    pub(super) fn move_leaf(&mut self, leaf: u32, bounds: Aabb) {
        self.nodes[leaf as usize].bounds = bounds;
        let mut index = self.nodes[leaf as usize].parent;
        let mut growing = true;
        while index != NULL {
            let node = &mut self.nodes[index as usize];
            if growing {
                if node.bounds.contains(&bounds) {
                    growing = false;
                } else {
                    node.bounds = node.bounds.union(bounds);
                }
            }
            if !growing && node.dirty {
                // Everything above is dirty already, and holds the box.
                break;
            }
            node.dirty = true;
            index = node.parent;
        }
    }

    /// Marks `index` and its ancestors dirty.
    fn mark_dirty(&mut self, mut index: u32) {
        while index != NULL && !self.nodes[index as usize].dirty {
            self.nodes[index as usize].dirty = true;
            index = self.nodes[index as usize].parent;
        }
    }

    /// Recomputes every dirty node's box and height from its children, children first, and
    /// rotates it; afterwards no node is dirty and every box is the union of its children's.
    pub(super) fn refit(&mut self) {
        if self.root == NULL || !self.nodes[self.root as usize].dirty {
            return;
        }
        // Post-order over the dirty subtree with an explicit stack: a tree of zero-area boxes can
        // be deep, and recursion would risk the thread's stack.
        let mut stack: Vec<(u32, bool)> = vec![(self.root, false)];
        while let Some((index, children_done)) = stack.pop() {
            if children_done {
                self.refit_node(index);
                self.rotate(index);
                self.nodes[index as usize].dirty = false;
                continue;
            }
            stack.push((index, true));
            for child in self.nodes[index as usize].children {
                let node = &self.nodes[child as usize];
                if !node.leaf && node.dirty {
                    stack.push((child, false));
                }
            }
        }
    }

    /// Sets an internal node's box and height from its children.
    fn refit_node(&mut self, index: u32) {
        let [a, b] = self.nodes[index as usize].children;
        let (a, b) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        let (bounds, height) = (a.bounds.union(b.bounds), 1 + a.height.max(b.height));
        let node = &mut self.nodes[index as usize];
        node.bounds = bounds;
        node.height = height;
    }

    /// Swaps a child of internal node `index` with a grandchild under its other child when that
    /// shrinks the surface area of the other child (the only box the swap changes); of the up to
    /// four such swaps, takes the one that shrinks it most (Kopta et al. 2012, section 3).
    fn rotate(&mut self, index: u32) {
        let [b, c] = self.nodes[index as usize].children;
        // (child moved down, its slot under `index`, grandchild moved up, the node between, its slot)
        let mut best: Option<(f64, u32, usize, u32, u32, usize)> = None;
        for (slot, (x, z)) in [(b, c), (c, b)].into_iter().enumerate() {
            let middle = &self.nodes[z as usize];
            if middle.leaf {
                continue;
            }
            let area = middle.bounds.surface_area();
            let x_bounds = self.nodes[x as usize].bounds;
            for (inner_slot, (y, kept)) in [(0, 1), (1, 0)]
                .map(|(i, k)| (middle.children[i], middle.children[k]))
                .into_iter()
                .enumerate()
            {
                let gain = x_bounds.union(self.nodes[kept as usize].bounds).surface_area() - area;
                if gain < best.map_or(0.0, |b| b.0) {
                    best = Some((gain, x, slot, y, z, inner_slot));
                }
            }
        }
        let Some((_, x, slot, y, z, inner_slot)) = best else {
            return;
        };
        self.nodes[index as usize].children[slot] = y;
        self.nodes[y as usize].parent = index;
        self.nodes[z as usize].children[inner_slot] = x;
        self.nodes[x as usize].parent = z;
        let x_dirty = self.nodes[x as usize].dirty;
        self.refit_node(z);
        // A dirty subtree moved under `z`: keep the dirty nodes hanging from the root.
        self.nodes[z as usize].dirty |= x_dirty;
        self.refit_node(index);
    }

    /// Replaces child `old` of `parent` by `new`.
    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        let children = &mut self.nodes[parent as usize].children;
        let slot = usize::from(children[0] != old);
        debug_assert_eq!(children[slot], old);
        children[slot] = new;
    }

    /// Calls `visit` with the proxy of every leaf whose box overlaps `bounds` (inclusive, as
    /// [`Aabb::overlaps`]).
    pub(super) fn query(&self, bounds: &Aabb, mut visit: impl FnMut(u32)) {
        if self.root == NULL {
            return;
        }
        let mut stack: SmallVec<[u32; 64]> = SmallVec::new();
        stack.push(self.root);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            if !node.bounds.overlaps(bounds) {
                continue;
            }
            if node.leaf {
                visit(node.children[0]);
            } else {
                stack.extend(node.children);
            }
        }
    }

    /// Every leaf as `(node, proxy)`, in node order.
    pub(super) fn leaf_nodes(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut free = vec![false; self.nodes.len()];
        for index in &self.free {
            free[*index as usize] = true;
        }
        self.nodes
            .iter()
            .enumerate()
            .filter(move |(index, node)| node.leaf && !free[*index])
            .map(|(index, node)| (index as u32, node.children[0]))
    }
}
