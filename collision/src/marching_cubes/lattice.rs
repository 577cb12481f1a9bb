//! The padded sample lattice and the two passes over it: vertices on crossed edges, then the
//! triangles of every tetrahedron of every cube with corners on both sides.
//!
//! Both passes run over z layers in parallel and concatenate their layers in order, so the
//! numbering of vertices and the order of triangles do not depend on the thread count.

use glam::DVec3;
use rayon::prelude::*;

use super::CROSSING_CLAMP;
use super::tables::{CASES, KUHN_TETRAHEDRA};
use crate::grid::SdfGrid;

/// The grid padded with one layer of virtual outside samples on every side. Padded coordinates
/// are the grid's plus one.
pub(super) struct Lattice<'a> {
    grid: &'a SdfGrid,
    iso: f64,
    /// Padded sample counts (grid dims plus 2).
    dims: [usize; 3],
    /// Per padded sample, in padded index order (x fastest): whether it is inside.
    inside: Vec<bool>,
}

/// A cube with corners on both sides of the level, at padded `(x, y)` within its layer; bit `c` of
/// `corners` says whether corner `c` is inside.
struct ActiveCube {
    x: usize,
    y: usize,
    corners: u8,
}

/// What the first pass finds: the cubes the surface crosses, and one vertex per crossed edge.
pub(super) struct Crossings {
    /// Per padded z layer, the active cubes whose lowest corner is in it, in lattice order.
    cubes: Vec<Vec<ActiveCube>>,
    /// Edge keys (see [`Lattice::key`]) of the vertices, ascending.
    keys: Vec<u64>,
    /// Vertex positions, grid frame, in key order.
    pub(super) positions: Vec<DVec3>,
    /// `row_start[y + ny * z]..row_start[y + ny * z + 1]` are the vertices on edges starting in
    /// padded row `(y, z)` (`ny` padded rows per layer), so a lookup searches only a few keys.
    row_start: Vec<usize>,
}

/// What the first pass finds in one padded z layer, with vertex offsets local to the layer.
struct Layer {
    cubes: Vec<ActiveCube>,
    keys: Vec<u64>,
    positions: Vec<DVec3>,
    /// Per padded row of the layer, one past its last vertex.
    row_ends: Vec<usize>,
}

/// The lattice offset of a cube corner or forward direction (bit 0 `+x`, bit 1 `+y`, bit 2 `+z`).
fn offset(bits: u8) -> [usize; 3] {
    [
        usize::from(bits & 1),
        usize::from((bits >> 1) & 1),
        usize::from((bits >> 2) & 1),
    ]
}

/// Spreads the 4-bit inside pattern of a lattice column (bit 0 at `(y, z)`, 1 at `(y + 1, z)`, 2
/// at `(y, z + 1)`, 3 at `(y + 1, z + 1)`) onto the cube corners with `x` bit clear.
fn spread(column: u8) -> u8 {
    (column & 1) | ((column & 2) << 1) | ((column & 4) << 2) | ((column & 8) << 3)
}

impl<'a> Lattice<'a> {
    pub(super) fn new(grid: &'a SdfGrid, iso: f64) -> Self {
        let [gx, gy, gz] = grid.spec().dims;
        let dims = [gx + 2, gy + 2, gz + 2];
        let mut inside = vec![false; dims[0] * dims[1] * dims[2]];
        inside
            .par_chunks_mut(dims[0] * dims[1])
            .enumerate()
            .filter(|(z, _)| (1..=gz).contains(z))
            .for_each(|(z, layer)| {
                for y in 1..=gy {
                    for x in 1..=gx {
                        layer[x + dims[0] * y] = grid.sample(x - 1, y - 1, z - 1) < iso;
                    }
                }
            });
        Self {
            grid,
            iso,
            dims,
            inside,
        }
    }

    fn index(&self, p: [usize; 3]) -> usize {
        p[0] + self.dims[0] * (p[1] + self.dims[1] * p[2])
    }

    /// The key of the lattice edge from padded point `start` along forward direction `direction`:
    /// ordered like lattice points, then directions.
    fn key(&self, start: [usize; 3], direction: u8) -> u64 {
        self.index(start) as u64 * 8 + u64::from(direction)
    }

    /// How far above the iso value padded point `p` is, clamped to finite values so that extreme
    /// inputs cannot overflow to infinity; one spacing for a virtual sample.
    fn excess(&self, p: [usize; 3]) -> f64 {
        let real = (0..3).all(|a| p[a] >= 1 && p[a] <= self.dims[a] - 2);
        if real {
            (self.grid.sample(p[0] - 1, p[1] - 1, p[2] - 1) - self.iso).clamp(-f64::MAX, f64::MAX)
        } else {
            self.grid.spec().spacing
        }
    }

    /// The first pass: every cube with corners on both sides and the vertex on every crossed
    /// lattice edge. Every crossed edge starts at the lowest corner of a cube that it makes
    /// active (edges along the last padded layers join virtual samples and never cross), so the
    /// edges from each active cube's lowest corner are all of them.
    pub(super) fn crossings(&self) -> Crossings {
        let [nx, ny, nz] = self.dims;
        let layers: Vec<Layer> = (0..nz - 1)
            .into_par_iter()
            .map(|z| {
                let (mut cubes, mut keys, mut positions) = (Vec::new(), Vec::new(), Vec::new());
                let mut row_ends = Vec::with_capacity(ny);
                for y in 0..ny - 1 {
                    let row = |dy: usize, dz: usize| {
                        let start = self.index([0, y + dy, z + dz]);
                        &self.inside[start..start + nx]
                    };
                    let (r00, r10, r01, r11) = (row(0, 0), row(1, 0), row(0, 1), row(1, 1));
                    let column = |x: usize| {
                        u8::from(r00[x]) | (u8::from(r10[x]) << 1) | (u8::from(r01[x]) << 2) | (u8::from(r11[x]) << 3)
                    };
                    let mut low = spread(column(0));
                    for x in 0..nx - 1 {
                        let high = spread(column(x + 1));
                        let corners = low | (high << 1);
                        low = high;
                        if corners == 0 || corners == u8::MAX {
                            continue;
                        }
                        cubes.push(ActiveCube { x, y, corners });
                        let start = [x, y, z];
                        let inside = corners & 1 != 0;
                        for direction in (1..8u8).filter(|d| (corners >> d) & 1 != corners & 1) {
                            let o = offset(direction);
                            let end = [x + o[0], y + o[1], z + o[2]];
                            keys.push(self.key(start, direction));
                            positions.push(if inside {
                                self.vertex(start, end)
                            } else {
                                self.vertex(end, start)
                            });
                        }
                    }
                    row_ends.push(keys.len());
                }
                // The last row starts no crossed edge.
                row_ends.push(keys.len());
                Layer {
                    cubes,
                    keys,
                    positions,
                    row_ends,
                }
            })
            .collect();
        let mut crossings = Crossings {
            cubes: Vec::with_capacity(nz),
            keys: Vec::new(),
            positions: Vec::new(),
            row_start: vec![0],
        };
        for layer in layers {
            let base = crossings.keys.len();
            crossings.cubes.push(layer.cubes);
            crossings.keys.extend(layer.keys);
            crossings.positions.extend(layer.positions);
            crossings.row_start.extend(layer.row_ends.iter().map(|end| base + end));
        }
        // Nor does the last layer.
        let total = crossings.keys.len();
        crossings.row_start.extend(std::iter::repeat_n(total, ny));
        crossings
    }

    /// The vertex on the edge from inside point `a` to outside point `b`, at the zero crossing of
    /// the linear interpolant, clamped away from both ends by [`CROSSING_CLAMP`].
    fn vertex(&self, a: [usize; 3], b: [usize; 3]) -> DVec3 {
        // Distances below and above the level, both finite and >= 0, the first > 0 (a value
        // strictly below the iso value leaves a nonzero difference). Scaling by the larger keeps
        // the sum finite; the denominator is then at least 1.
        let below = -self.excess(a);
        let above = self.excess(b);
        let scale = below.max(above);
        let (below, above) = (below / scale, above / scale);
        let t = (below / (below + above)).clamp(CROSSING_CLAMP, 1.0 - CROSSING_CLAMP);
        let lattice = |p: [usize; 3]| DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64) - DVec3::ONE;
        let (from, to) = (lattice(a), lattice(b));
        let spec = self.grid.spec();
        spec.origin + (from + (to - from) * t) * spec.spacing
    }

    /// The index of the vertex on the edge between corners `u` and `v` of the cube at padded
    /// `cube`. In the Kuhn split one corner's bits contain the other's, so the edge starts at the
    /// smaller corner and runs along their difference.
    fn vertex_index(&self, crossings: &Crossings, cube: [usize; 3], u: u8, v: u8) -> u32 {
        let (low, high) = (u.min(v), u.max(v));
        let o = offset(low);
        let start = [cube[0] + o[0], cube[1] + o[1], cube[2] + o[2]];
        let key = self.key(start, low ^ high);
        let row = start[1] + self.dims[1] * start[2];
        let range = crossings.row_start[row]..crossings.row_start[row + 1];
        let found = crossings.keys[range.clone()]
            .binary_search(&key)
            // Both passes classify samples from the same `inside` table, so every edge a polygon
            // crosses was given a vertex.
            .expect("every crossed lattice edge has a vertex");
        // Fits: the caller checked the vertex count.
        (range.start + found) as u32
    }

    /// The second pass: the surface triangles of every active cube, layer by layer.
    pub(super) fn triangles(&self, crossings: &Crossings) -> Vec<[u32; 3]> {
        let layers: Vec<Vec<[u32; 3]>> = crossings
            .cubes
            .par_iter()
            .enumerate()
            .map(|(z, cubes)| {
                let mut triangles = Vec::with_capacity(cubes.len() * 4);
                for cube in cubes {
                    let at = [cube.x, cube.y, z];
                    for tet in KUHN_TETRAHEDRA {
                        let case = (0..4).fold(0, |m, s| m | (usize::from((cube.corners >> tet[s]) & 1) << s));
                        let polygon = CASES[case];
                        let ids: [u32; 4] = core::array::from_fn(|k| {
                            polygon.get(k).map_or(0, |[i, j]| {
                                self.vertex_index(crossings, at, tet[*i as usize], tet[*j as usize])
                            })
                        });
                        match polygon.len() {
                            3 => triangles.push([ids[0], ids[1], ids[2]]),
                            4 => triangles.extend(split_quad(ids, &crossings.positions)),
                            _ => {}
                        }
                    }
                }
                triangles
            })
            .collect();
        layers.concat()
    }
}

/// Twice the area of a triangle over its squared longest edge: the shape measure the topology
/// check compares to 1e-14.
fn area_ratio(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let longest = (b - a)
        .length_squared()
        .max((c - b).length_squared())
        .max((a - c).length_squared());
    (b - a).cross(c - a).length() / longest
}

/// The two triangles of the quadrilateral `q` (a cycle), along whichever diagonal makes the worse
/// of the two triangles better; ties take the diagonal from `q[0]`.
fn split_quad(q: [u32; 4], positions: &[DVec3]) -> [[u32; 3]; 2] {
    let ratio = |t: [u32; 3]| {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        area_ratio(a, b, c)
    };
    let first = [[q[0], q[1], q[2]], [q[0], q[2], q[3]]];
    let second = [[q[0], q[1], q[3]], [q[1], q[2], q[3]]];
    let worst = |pair: [[u32; 3]; 2]| ratio(pair[0]).min(ratio(pair[1]));
    if worst(second) > worst(first) { second } else { first }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worst area ratio of the triangles that `tet` (corner bits) produces in `case` with
    /// crossing parameter `t[k]` (measured from the inside corner) on the polygon's `k`-th edge.
    fn worst_ratio(tet: [u8; 4], case: usize, t: &[f64]) -> f64 {
        let corner = |bits: u8| {
            let o = offset(bits);
            DVec3::new(o[0] as f64, o[1] as f64, o[2] as f64)
        };
        let points: Vec<DVec3> = CASES[case]
            .iter()
            .zip(t)
            .map(|([i, j], t)| {
                let (inner, outer) = if case & (1 << i) != 0 { (*i, *j) } else { (*j, *i) };
                let (a, b) = (corner(tet[inner as usize]), corner(tet[outer as usize]));
                a + (b - a) * *t
            })
            .collect();
        let triangles = match points.len() {
            3 => vec![[0, 1, 2]],
            _ => split_quad([0, 1, 2, 3], &points).to_vec(),
        };
        triangles
            .iter()
            .map(|t| area_ratio(points[t[0] as usize], points[t[1] as usize], points[t[2] as usize]))
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn marching_cubes_clamped_triangles_are_far_from_slivers() {
        // Every case of every Kuhn tetrahedron, with every combination of the extreme crossing
        // parameters the clamp allows and a few interior ones, then random parameters crowding
        // the ends: the worst triangle stays within a small factor of CROSSING_CLAMP, far from
        // the 1e-14 at which the topology check calls a triangle degenerate.
        let d = CROSSING_CLAMP;
        let params = [d, 2.0 * d, 1e-3, 0.5, 1.0 - 1e-3, 1.0 - 2.0 * d, 1.0 - d];
        let mut rng = shatter_integrators::SplitMix64::new(3);
        let mut worst = f64::INFINITY;
        for tet in KUHN_TETRAHEDRA {
            for case in (1..15).filter(|c| !CASES[*c].is_empty()) {
                let n = CASES[case].len();
                for choice in 0..params.len().pow(n as u32) {
                    let t: Vec<f64> = (0..n)
                        .map(|k| params[(choice / params.len().pow(k as u32)) % params.len()])
                        .collect();
                    worst = worst.min(worst_ratio(tet, case, &t));
                }
                for _ in 0..2000 {
                    let t: Vec<f64> = (0..n)
                        .map(|_| {
                            let near_end = d * 10f64.powf(rng.range(0.0, 6.0));
                            match rng.next_u64() % 3 {
                                0 => near_end,
                                1 => 1.0 - near_end,
                                _ => rng.range(d, 1.0 - d),
                            }
                        })
                        .collect();
                    worst = worst.min(worst_ratio(tet, case, &t));
                }
            }
        }
        println!("worst clamped area ratio {worst:e}");
        assert!(worst > 0.25 * CROSSING_CLAMP, "worst area ratio {worst:e}");
    }
}
