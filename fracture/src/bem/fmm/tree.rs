//! The octree of a multipole evaluation: uniform depth over the points' bounding cube, empty
//! boxes pruned, points sorted leaf by leaf in Morton order (so every pass visits them in the
//! same order whatever the thread count).

use glam::DVec3;
use hashbrown::HashMap;

/// One level of the tree: its non-empty boxes.
#[derive(Clone, Debug, Default)]
pub struct Level {
    /// Integer coordinates of each box (0 .. 2^level per axis).
    pub coords: Vec<[i32; 3]>,
    /// Box index of each coordinate.
    pub index: HashMap<[i32; 3], u32>,
    /// Parent box (index in the level above) of each box; empty at the root.
    pub parent: Vec<u32>,
}

/// A uniform-depth octree over a point set.
#[derive(Clone, Debug)]
pub struct Tree {
    /// Centre of the root cube, m.
    pub center: DVec3,
    /// Half-width of the root cube, m.
    pub half: f64,
    /// Levels from the root (0) to the leaves.
    pub levels: Vec<Level>,
    /// Point indices in leaf order.
    pub order: Vec<u32>,
    /// Per leaf, the range of `order` holding its points.
    pub leaf_points: Vec<(u32, u32)>,
}

/// Deepest tree: 2^20 boxes per axis.
const MAX_DEPTH: usize = 20;

impl Tree {
    /// The tree over `points` whose leaves hold `leaf_size` points on average (the first depth
    /// at which they do), at most 20 levels (2^20 boxes per axis).
    pub fn new(points: &[DVec3], leaf_size: usize) -> Self {
        let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for p in points {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        let center = (lo + hi) * 0.5;
        // A little margin keeps every point strictly inside the root cube.
        let half = ((hi - lo).max_element() * 0.5).max(1e-300) * (1.0 + 1e-9);
        let key = |p: DVec3, depth: usize| {
            let cells = (1u64 << depth) as f64;
            let f = ((p - center) / (2.0 * half) + DVec3::splat(0.5)) * cells;
            let clamp = |v: f64| (v.floor() as i64).clamp(0, cells as i64 - 1) as i32;
            [clamp(f.x), clamp(f.y), clamp(f.z)]
        };
        let mut depth = 0;
        while depth < MAX_DEPTH {
            let mut keys: Vec<u64> = points.iter().map(|p| morton(key(*p, depth))).collect();
            keys.sort_unstable();
            keys.dedup();
            if points.len() <= leaf_size * keys.len() {
                break;
            }
            depth += 1;
        }
        let mut order: Vec<u32> = (0..points.len() as u32).collect();
        let leaf_keys: Vec<[i32; 3]> = points.iter().map(|p| key(*p, depth)).collect();
        order.sort_by_key(|&i| (morton(leaf_keys[i as usize]), i));
        let mut levels = vec![Level::default(); depth + 1];
        let mut leaf_points = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let c = leaf_keys[order[start] as usize];
            let mut end = start;
            while end < order.len() && leaf_keys[order[end] as usize] == c {
                end += 1;
            }
            let leaf = &mut levels[depth];
            leaf.index.insert(c, leaf.coords.len() as u32);
            leaf.coords.push(c);
            leaf_points.push((start as u32, end as u32));
            start = end;
        }
        for l in (0..depth).rev() {
            let (upper, lower) = levels.split_at_mut(l + 1);
            let (parent_level, child_level) = (&mut upper[l], &mut lower[0]);
            for c in &child_level.coords {
                let p = [c[0] >> 1, c[1] >> 1, c[2] >> 1];
                let next = parent_level.coords.len() as u32;
                let index = *parent_level.index.entry(p).or_insert(next);
                if index == next {
                    parent_level.coords.push(p);
                }
                child_level.parent.push(index);
            }
        }
        Self {
            center,
            half,
            levels,
            order,
            leaf_points,
        }
    }

    /// Depth of the leaves.
    pub fn depth(&self) -> usize {
        self.levels.len() - 1
    }

    /// Half-width of the boxes of `level`, m.
    pub fn half_width(&self, level: usize) -> f64 {
        self.half / (1u64 << level) as f64
    }

    /// Centre of box `coords` of `level`, m.
    pub fn box_center(&self, level: usize, coords: [i32; 3]) -> DVec3 {
        let h = self.half_width(level);
        let c = DVec3::new(coords[0] as f64, coords[1] as f64, coords[2] as f64);
        self.center - DVec3::splat(self.half) + (c * 2.0 + DVec3::ONE) * h
    }
}

/// Interleaves the bits of three 21-bit coordinates.
fn morton(c: [i32; 3]) -> u64 {
    let spread = |v: i32| {
        let mut x = v as u64 & 0x1f_ffff;
        x = (x | x << 32) & 0x1f_0000_0000_ffff;
        x = (x | x << 16) & 0x1f_0000_ff00_00ff;
        x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
        x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
        x = (x | x << 2) & 0x1249_2492_4924_9249;
        x
    };
    spread(c[0]) | spread(c[1]) << 1 | spread(c[2]) << 2
}
