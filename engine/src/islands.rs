//! Islands: the groups of dynamic bodies linked by contacts and joints, found by union-find.
//!
//! An island is the unit of sleep: a body resting on another can only sleep together with it,
//! otherwise the sleeper would stop holding up the one still awake. Static and kinematic bodies
//! never join islands (a floor would otherwise fuse every pile on it into one island).
//!
//! Union by lower index with path halving: the representative of a set is its lowest member, so
//! the result depends only on the set of links, not on the order they were given in.

/// Disjoint sets over `0..n`.
#[derive(Clone, Debug, Default)]
pub struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    /// `n` singletons.
    pub fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).collect(),
        }
    }

    /// Makes this `n` singletons again, keeping the memory (a step does not allocate).
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n as u32);
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The representative of `i`'s set: its lowest member.
    pub fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] as usize != i {
            let grandparent = self.parent[self.parent[i] as usize];
            self.parent[i] = grandparent;
            i = grandparent as usize;
        }
        i
    }

    /// Merges the sets of `a` and `b`.
    pub fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (low, high) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[high] = low as u32;
        }
    }

    /// Every element's representative.
    pub fn roots(&mut self) -> Vec<usize> {
        let mut roots = Vec::new();
        self.roots_into(&mut roots);
        roots
    }

    /// Every element's representative, written into `roots` (cleared first).
    pub fn roots_into(&mut self, roots: &mut Vec<usize>) {
        roots.clear();
        for i in 0..self.len() {
            let root = self.find(i);
            roots.push(root);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Components by brute force: repeated relaxation of labels along the links.
    fn brute_force(n: usize, links: &[(usize, usize)]) -> Vec<usize> {
        let mut label: Vec<usize> = (0..n).collect();
        loop {
            let mut changed = false;
            for &(a, b) in links {
                let low = label[a].min(label[b]);
                for i in [a, b] {
                    if label[i] != low {
                        label[i] = low;
                        changed = true;
                    }
                }
            }
            if !changed {
                return label;
            }
        }
    }

    #[test]
    fn islands_match_brute_force_and_ignore_link_order() {
        let mut rng = shatter_integrators::SplitMix64::new(7);
        let (mut reused, mut roots) = (UnionFind::new(3), Vec::new());
        for trial in 0..50 {
            let n = 1 + trial % 40;
            let links: Vec<(usize, usize)> = (0..n)
                .map(|_| {
                    (
                        (rng.next_u64() % n as u64) as usize,
                        (rng.next_u64() % n as u64) as usize,
                    )
                })
                .collect();
            let mut forward = UnionFind::new(n);
            links.iter().for_each(|&(a, b)| forward.union(a, b));
            let mut backward = UnionFind::new(n);
            links.iter().rev().for_each(|&(a, b)| backward.union(b, a));
            let expected = brute_force(n, &links);
            assert_eq!(forward.roots(), expected, "trial {trial}");
            assert_eq!(backward.roots(), expected, "trial {trial}");
            // A reset set, used before for other links, gives the same answer.
            reused.reset(n);
            links.iter().for_each(|&(a, b)| reused.union(a, b));
            reused.roots_into(&mut roots);
            assert_eq!(roots, expected, "trial {trial}, reused");
        }
    }
}
