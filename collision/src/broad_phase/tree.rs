//! The dynamic bounding volume tree: one leaf per proxy's fat box, edited in place as proxies
//! come, go and move.
//!
//! Layout: a binary tree whose nodes hold their two children's boxes (as Jolt's quad tree holds
//! its four), and whose leaves are not nodes but proxy indices in a parent's child slot. A search
//! tests both children of a node from one place in memory and only ever fetches nodes it descends
//! into; with a separate node per box it fetches every node it tests, about twice as many, and in
//! a tree larger than the caches those fetches are the cost.
//!
//! Edits follow Box2D v3's dynamic tree (dynamic_tree.c) and Bullet's `btDbvt`:
//! - insertion finds the cheapest sibling by the surface area heuristic (`sibling.rs`) and
//!   applies tree rotations on the way up (Kopta, Ize, Spjut, Brunvand, Davis and Kensler 2012,
//!   "Fast, effective BVH updates for animated scenes");
//! - a small move only replaces the leaf's box and grows the boxes above it until one already
//!   holds it (Box2D v3's "enlarged" nodes), marking the nodes dirty; [`Tree::refit`] later
//!   recomputes exactly the dirty nodes, children first, so boxes also shrink when leaves move
//!   away, and rotates each of them. Between the two the tree is valid (every box holds its
//!   subtree), only loose;
//! - a far move (the new box does not touch the old one) removes and reinserts the leaf, since
//!   stretching its ancestors across the world would only bloat them;
//! - a bulk load is rebuilt top down, and after many edits the nodes are laid out again in
//!   depth-first order (see `build.rs`).
//!
//! Invariants: the box a node keeps for a child contains every leaf box below that child; a dirty
//! node's parent is dirty (so the dirty nodes hang from the root and a refit finds them all from
//! there); an empty child slot ([`NONE`]) only occurs as slot 1 of a root holding a single proxy.

use glam::DVec3;

use crate::aabb::Aabb;

/// No node.
pub(super) const NULL: u32 = u32::MAX;
/// An empty child slot.
pub(super) const NONE: u32 = u32::MAX;
/// Searches of trees lower than this keep their stack in a fixed array of [`SHORT_STACK`] + 4
/// entries: a depth-first search holds at most one more node than the tree is high (heights are
/// kept exact or too high, never too low), and one more slot is written without being kept.
const SHORT_STACK: usize = 60;
/// The tag of a child that is a proxy: the proxy's index is in the other bits.
pub(super) const PROXY: u32 = 1 << 31;

/// Whether child reference `child` is an internal node.
pub(super) fn is_node(child: u32) -> bool {
    child & PROXY == 0
}

/// The proxy a child reference names, if it names one.
pub(super) fn proxy_of(child: u32) -> Option<u32> {
    (child != NONE && child & PROXY != 0).then_some(child & !PROXY)
}

/// One internal node: 128 bytes, two cache lines.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(super) struct Node {
    /// The lower corners of the two children's boxes, by axis then child, m (so that the tests
    /// of both children read neighbouring values); each box holds every leaf box below its
    /// child.
    pub(super) low: [[f64; 2]; 3],
    /// The upper corners, likewise.
    pub(super) high: [[f64; 2]; 3],
    /// Each child: an internal node index, a proxy tagged with [`PROXY`], or [`NONE`].
    pub(super) children: [u32; 2],
    pub(super) parent: u32,
    /// Longest path down to a leaf (1 when both children are leaves); breaks cost ties towards
    /// balance, so that boxes with zero area (points, coincident boxes) do not chain.
    pub(super) height: u32,
    /// Which child of the parent this node is.
    pub(super) slot: u8,
    /// Some box below may have changed since the last refit: the boxes kept here and above may
    /// be loose.
    pub(super) dirty: bool,
}

impl Node {
    /// The box kept for child `slot`.
    pub(super) fn child_box(&self, slot: usize) -> Aabb {
        let (l, h) = (&self.low, &self.high);
        Aabb::new(
            DVec3::new(l[0][slot], l[1][slot], l[2][slot]),
            DVec3::new(h[0][slot], h[1][slot], h[2][slot]),
        )
    }

    /// Sets the box kept for child `slot`.
    pub(super) fn set_child_box(&mut self, slot: usize, bounds: Aabb) {
        for axis in 0..3 {
            self.low[axis][slot] = bounds.min[axis];
            self.high[axis][slot] = bounds.max[axis];
        }
    }

    /// The box of the whole node.
    pub(super) fn bounds(&self) -> Aabb {
        self.child_box(0).union(self.child_box(1))
    }

    /// Which children's boxes overlap `bounds` (inclusive, as [`Aabb::overlaps`]), both tested
    /// in full before the caller branches on either.
    #[inline(always)]
    fn hits(&self, bounds: &Aabb) -> [bool; 2] {
        let mut hit = [true; 2];
        for axis in 0..3 {
            for (lane, h) in hit.iter_mut().enumerate() {
                *h &= (self.low[axis][lane] <= bounds.max[axis]) & (bounds.min[axis] <= self.high[axis][lane]);
            }
        }
        hit
    }
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
    /// Where each proxy of this tree sits, by proxy index: `node << 1 | slot`.
    pub(super) place: Vec<u32>,
    /// Insertions, removals and rotations since the nodes were last laid out (see `build.rs`).
    pub(super) edits: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NULL,
            leaves: 0,
            fresh: 0,
            place: Vec::new(),
            edits: 0,
        }
    }
}

impl Tree {
    /// The node and child slot holding `proxy`.
    pub(super) fn place_of(&self, proxy: u32) -> (u32, usize) {
        let place = self.place[proxy as usize];
        (place >> 1, (place & 1) as usize)
    }

    /// The box the tree holds for `proxy`.
    pub(super) fn leaf_bounds(&self, proxy: u32) -> Aabb {
        let (node, slot) = self.place_of(proxy);
        self.nodes[node as usize].child_box(slot)
    }

    /// Stores `node` in a free slot.
    fn allocate(&mut self, node: Node) -> u32 {
        if let Some(index) = self.free.pop() {
            self.nodes[index as usize] = node;
            index
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// A node with no children yet, under `parent` at `slot`.
    pub(super) fn blank(parent: u32, slot: usize) -> Node {
        Node {
            low: [[f64::INFINITY; 2]; 3],
            high: [[f64::NEG_INFINITY; 2]; 3],
            children: [NONE; 2],
            parent,
            height: 1,
            slot: slot as u8,
            dirty: false,
        }
    }

    /// Puts `child` (with box `bounds`) in slot `slot` of `node`, and points it back there.
    pub(super) fn set_child(&mut self, node: u32, slot: usize, child: u32, bounds: Aabb) {
        let n = &mut self.nodes[node as usize];
        n.children[slot] = child;
        n.set_child_box(slot, bounds);
        if let Some(proxy) = proxy_of(child) {
            self.place[proxy as usize] = node << 1 | slot as u32;
        } else if child != NONE {
            let c = &mut self.nodes[child as usize];
            c.parent = node;
            c.slot = slot as u8;
        }
    }

    pub(super) fn height_of(&self, child: u32) -> u32 {
        if child != NONE && is_node(child) {
            self.nodes[child as usize].height
        } else {
            0
        }
    }

    fn update_height(&mut self, node: u32) {
        let [a, b] = self.nodes[node as usize].children;
        self.nodes[node as usize].height = 1 + self.height_of(a).max(self.height_of(b));
    }

    /// Adds a leaf for `proxy` with box `bounds`.
    pub(super) fn insert(&mut self, proxy: u32, bounds: Aabb) {
        debug_assert!(proxy < PROXY, "proxy indices stay below 2^31");
        if self.place.len() <= proxy as usize {
            self.place.resize(proxy as usize + 1, 0);
        }
        self.leaves += 1;
        self.edits += 1;
        let leaf = proxy | PROXY;
        if self.root == NULL {
            self.root = self.allocate(Self::blank(NULL, 0));
            self.set_child(self.root, 0, leaf, bounds);
            return;
        }
        if self.nodes[self.root as usize].children[1] == NONE {
            self.set_child(self.root, 1, leaf, bounds);
            return;
        }
        let Some((node, slot)) = self.best_sibling(&bounds) else {
            // The new leaf goes next to the whole tree: a new root above the old one.
            let old = self.root;
            let old_bounds = self.nodes[old as usize].bounds();
            let dirty = self.nodes[old as usize].dirty;
            self.root = self.allocate(Self::blank(NULL, 0));
            self.set_child(self.root, 0, old, old_bounds);
            self.set_child(self.root, 1, leaf, bounds);
            self.nodes[self.root as usize].dirty = dirty;
            self.update_height(self.root);
            return;
        };
        let sibling = self.nodes[node as usize].children[slot];
        let sibling_bounds = self.nodes[node as usize].child_box(slot);
        let middle = self.allocate(Self::blank(node, slot));
        self.set_child(middle, 0, sibling, sibling_bounds);
        self.set_child(middle, 1, leaf, bounds);
        // Keeps dirty nodes hanging from the root: the sibling's ancestors are already dirty.
        self.nodes[middle as usize].dirty = is_node(sibling) && self.nodes[sibling as usize].dirty;
        self.update_height(middle);
        self.set_child(node, slot, middle, sibling_bounds.union(bounds));
        let mut index = node;
        loop {
            self.rotate(index);
            self.update_height(index);
            let n = self.nodes[index as usize];
            if n.parent == NULL {
                break;
            }
            self.nodes[n.parent as usize].set_child_box(n.slot as usize, n.bounds());
            index = n.parent;
        }
    }

    /// Removes the leaf of `proxy` (its sibling takes the parent's place). The boxes above keep
    /// their size, now loose, and are marked dirty for the next refit.
    pub(super) fn remove(&mut self, proxy: u32) {
        let (node, slot) = self.place_of(proxy);
        self.leaves -= 1;
        self.edits += 1;
        let n = self.nodes[node as usize];
        let (sibling, sibling_bounds) = (n.children[1 - slot], n.child_box(1 - slot));
        if n.parent == NULL {
            if sibling == NONE {
                self.free.push(node);
                self.root = NULL;
            } else if is_node(sibling) {
                self.free.push(node);
                self.root = sibling;
                self.nodes[sibling as usize].parent = NULL;
            } else {
                self.set_child(node, 0, sibling, sibling_bounds);
                self.set_child(node, 1, NONE, Aabb::EMPTY);
                self.nodes[node as usize].height = 1;
            }
            return;
        }
        self.free.push(node);
        self.set_child(n.parent, n.slot as usize, sibling, sibling_bounds);
        self.mark_dirty(n.parent);
    }

    /// Gives the leaf of `proxy` the box `bounds`, which overlaps its old one: the boxes above
    /// grow until one already holds it, and the nodes are marked dirty up to the root.
    pub(super) fn move_leaf(&mut self, proxy: u32, bounds: Aabb) {
        let (node, slot) = self.place_of(proxy);
        self.nodes[node as usize].set_child_box(slot, bounds);
        let mut index = node;
        let mut growing = true;
        loop {
            let n = &mut self.nodes[index as usize];
            let was_dirty = std::mem::replace(&mut n.dirty, true);
            let (parent, slot) = (n.parent, n.slot as usize);
            if parent == NULL || (!growing && was_dirty) {
                // Everything above is dirty already, and holds the box.
                break;
            }
            if growing {
                let parent = &mut self.nodes[parent as usize];
                let held = parent.child_box(slot);
                if held.contains(&bounds) {
                    growing = false;
                } else {
                    parent.set_child_box(slot, held.union(bounds));
                }
            }
            index = parent;
        }
    }

    /// Marks `index` and its ancestors dirty.
    fn mark_dirty(&mut self, mut index: u32) {
        while index != NULL && !self.nodes[index as usize].dirty {
            self.nodes[index as usize].dirty = true;
            index = self.nodes[index as usize].parent;
        }
    }

    /// Recomputes every dirty node's boxes and height from its children, children first, and
    /// rotates it; afterwards no node is dirty and every box a node keeps is exactly the union of
    /// the leaf boxes below.
    pub(super) fn refit(&mut self) {
        if self.root == NULL || !self.nodes[self.root as usize].dirty {
            return;
        }
        // Post-order over the dirty subtree with an explicit stack: a tree of zero-area boxes can
        // be deep, and recursion would risk the thread's stack.
        let mut stack: Vec<(u32, bool)> = vec![(self.root, false)];
        while let Some((index, children_done)) = stack.pop() {
            if children_done {
                self.rotate(index);
                self.update_height(index);
                let n = &mut self.nodes[index as usize];
                n.dirty = false;
                let (parent, slot, bounds) = (n.parent, n.slot as usize, n.bounds());
                if parent != NULL {
                    self.nodes[parent as usize].set_child_box(slot, bounds);
                }
                continue;
            }
            stack.push((index, true));
            for child in self.nodes[index as usize].children {
                if child != NONE && is_node(child) && self.nodes[child as usize].dirty {
                    stack.push((child, false));
                }
            }
        }
    }

    /// Swaps a child of node `index` with a grandchild under its other child when that shrinks
    /// the other child's box (the only box the swap changes); of the up to four such swaps, takes
    /// the one that shrinks it most (Kopta et al. 2012, section 3).
    fn rotate(&mut self, index: u32) {
        let n = self.nodes[index as usize];
        if n.children.contains(&NONE) {
            return;
        }
        // (gain, slot of the child moved down, slot of the grandchild moved up)
        let mut best: Option<(f64, usize, usize)> = None;
        for x_slot in 0..2 {
            let z = n.children[1 - x_slot];
            if !is_node(z) {
                continue;
            }
            let middle = &self.nodes[z as usize];
            let area = n.child_box(1 - x_slot).surface_area();
            for y_slot in 0..2 {
                let gain = n.child_box(x_slot).union(middle.child_box(1 - y_slot)).surface_area() - area;
                if gain < best.map_or(0.0, |b| b.0) {
                    best = Some((gain, x_slot, y_slot));
                }
            }
        }
        let Some((_, x_slot, y_slot)) = best else {
            return;
        };
        self.edits += 1;
        let z = n.children[1 - x_slot];
        let (x, x_bounds) = (n.children[x_slot], n.child_box(x_slot));
        let (y, y_bounds) = (
            self.nodes[z as usize].children[y_slot],
            self.nodes[z as usize].child_box(y_slot),
        );
        self.set_child(index, x_slot, y, y_bounds);
        self.set_child(z, y_slot, x, x_bounds);
        self.update_height(z);
        // A dirty subtree moved under `z`: keep the dirty nodes hanging from the root.
        let x_dirty = is_node(x) && self.nodes[x as usize].dirty;
        self.nodes[z as usize].dirty |= x_dirty;
        let z_bounds = self.nodes[z as usize].bounds();
        self.nodes[index as usize].set_child_box(1 - x_slot, z_bounds);
    }

    /// Calls `visit` with every proxy whose leaf box overlaps `bounds` (inclusive, as
    /// [`Aabb::overlaps`]); `stack` is scratch space, reused across searches.
    pub(super) fn query(&self, bounds: &Aabb, stack: &mut Vec<u32>, mut visit: impl FnMut(u32)) {
        if self.root == NULL {
            return;
        }
        let root = &self.nodes[self.root as usize];
        if (root.height as usize) < SHORT_STACK {
            // Pushes need no branch then: write, and advance the top only if the child is to be
            // visited. The outcomes of the box tests are unpredictable, so every branch on them
            // is a likely misprediction.
            let mut short = [0u32; SHORT_STACK + 4];
            short[0] = self.root;
            let mut top = 1;
            while top > 0 {
                top -= 1;
                let node = &self.nodes[short[top] as usize];
                let hits = node.hits(bounds);
                for (hit, child) in hits.into_iter().zip(node.children) {
                    let internal = child & PROXY == 0;
                    short[top] = child;
                    top += usize::from(hit & internal);
                    if hit & !internal {
                        visit(child & !PROXY);
                    }
                }
            }
            return;
        }
        stack.clear();
        stack.push(self.root);
        while let Some(index) = stack.pop() {
            let node = &self.nodes[index as usize];
            // An empty slot's box overlaps nothing.
            for (hit, child) in node.hits(bounds).into_iter().zip(node.children) {
                if hit {
                    if child & PROXY != 0 {
                        visit(child & !PROXY);
                    } else {
                        stack.push(child);
                    }
                }
            }
        }
    }
}
