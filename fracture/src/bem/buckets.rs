//! Points bucketed in cubes of one side: the neighbour queries over triangle centroids (the
//! operator's near sources, the preconditioner's overlaps) visit a few cubes instead of every
//! point.

use glam::DVec3;
use hashbrown::HashMap;

/// Point indices by the cube of side `cell` (m) that holds them.
pub(crate) struct Buckets {
    cell: f64,
    cubes: HashMap<[i64; 3], Vec<u32>>,
}

impl Buckets {
    /// Buckets `points` in cubes of side `cell` (m; one that is not positive and finite is
    /// taken as 1, so a set whose reach is zero can still be bucketed).
    pub(crate) fn new(points: &[DVec3], cell: f64) -> Self {
        let cell = if cell > 0.0 && cell.is_finite() { cell } else { 1.0 };
        let mut cubes: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
        for (i, p) in points.iter().enumerate() {
            cubes.entry(key(*p, cell)).or_default().push(i as u32);
        }
        Self { cell, cubes }
    }

    /// The cube holding `p`.
    pub(crate) fn key(&self, p: DVec3) -> [i64; 3] {
        key(p, self.cell)
    }

    /// Calls `visit` with the points of every cube from `from` to `to` (corners included), cube
    /// by cube in a fixed order, each cube's points in ascending index order.
    pub(crate) fn visit(&self, from: [i64; 3], to: [i64; 3], mut visit: impl FnMut(u32)) {
        for x in from[0]..=to[0] {
            for y in from[1]..=to[1] {
                for z in from[2]..=to[2] {
                    self.cubes.get(&[x, y, z]).into_iter().flatten().for_each(|&j| visit(j));
                }
            }
        }
    }
}

fn key(p: DVec3, cell: f64) -> [i64; 3] {
    let k = (p / cell).floor();
    [k.x as i64, k.y as i64, k.z as i64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::meshes::fibonacci_sphere;

    /// The cubes around a point hold every point within a cube's side of it: the same set as
    /// brute force after filtering by distance.
    #[test]
    fn bem_buckets_find_every_point_within_a_cell() {
        let points = fibonacci_sphere(3000);
        let cell = 0.13;
        let buckets = Buckets::new(&points, cell);
        for (i, p) in points.iter().enumerate().step_by(37) {
            let k = buckets.key(*p);
            let mut found = Vec::new();
            buckets.visit(k.map(|c| c - 1), k.map(|c| c + 1), |j| {
                if points[j as usize].distance(*p) < cell {
                    found.push(j);
                }
            });
            found.sort_unstable();
            let brute: Vec<u32> = (0..points.len() as u32)
                .filter(|&j| points[j as usize].distance(*p) < cell)
                .collect();
            assert_eq!(found, brute, "point {i}");
        }
    }
}
