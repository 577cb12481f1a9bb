//! A kernel-independent fast multipole method for the Kelvin kernel (Ying, Biros and Zorin
//! 2004, simplified as in Zhu 2015 section 5): sums of point forces seen as displacements or as
//! tractions at the same points, in O(n) time.
//!
//! Passes, over a uniform-depth octree ([`tree`]) with translations from [`operators`]:
//!
//! 1. leaves: the sources' displacement on each leaf's upward check surface, then its
//!    equivalent forces (S2M);
//! 2. upward: children's equivalent forces to their parent's (M2M);
//! 3. downward, level by level: the equivalent forces of every box in the interaction list
//!    (children of the parent's neighbours that are not neighbours) to the box's downward
//!    equivalent forces (compressed M2L), plus its parent's (L2L);
//! 4. leaves: the downward equivalent forces and the sources of the neighbouring leaves, directly,
//!    evaluated with the target kernel (displacement or traction) at each point (L2T, near field).
//!
//! Accuracy (measured in [`FmmSettings::for_accuracy`]): with the standard interaction list
//! (separation 1) at order 8 the traction error is about 1e-5 relative (random points, a sphere
//! mesh's and a box's face centroids, Fibonacci spheres of 3e3 to 1e6 points: 1.3e-7 to 1.4e-5),
//! and it falls only about 2.3 times per order on evenly spread surface points (order 8, 9, 10
//! on 2e4 Fibonacci points: 8.6e-6, 3.8e-6, 1.6e-6). That slow rate is the geometry of the list,
//! not rounding: the nearest translated source box has its corners `sqrt 3` half-widths from its
//! centre and its centre 3 half-widths (max norm) from the farthest target, a convergence factor
//! of about `sqrt 3 / 3` per order, and the error concentrates at targets near leaf faces (order
//! 7: 2e-6 within half a half-width of the centre, 7e-5 within 3 % of a face). Translating only
//! from two boxes away ([`FmmSettings::separation`] 2) makes the factor about `sqrt 3 / 5`, and
//! measured it falls faster still: on 1e5 Fibonacci points 7.6e-6 at order 7, 6.3e-7 at 8,
//! 9.2e-8 at 9, for 1.5 to 2.2 times the mat-vec time at the same order (1e5 and 1e6 points).
//! Measured and ruled out against the slow rate: the pseudo-inverses applied as two factors
//! instead of one product (no change), truncation at 1e-12 instead of 1e-9 (no change at order
//! 10, worse at 6), a downward check surface one lattice step outside the box (better at faces,
//! worse inside), and other radii (outer 2.5, 2.75, 3.5, 4.5, for the upward check and downward
//! equivalent surfaces together or apart: all worse than 3).
//!
//! Speed: the point sums, the dense translations, the M2L products and the Fourier transforms
//! (four grids at once, one per lane) run in four-lane vectors (one AVX register where the
//! machine has AVX, the same bits: `bem/lanes.rs`), and the M2L products are blocked by
//! frequency so they run from cache ([`m2l`]). One traction mat-vec with the 1e-6 settings
//! (order 9, separation 2) takes 1.55 s on 1e5 points and 16.7 s on 1e6 (peak 2.4 GiB) on two
//! cores (`cargo run --release --example bem_fmm_scaling -- 100000 --order 9`; about 3 s on 1e5
//! points before the transforms ran in lanes and the passes above level 2 were dropped).
//!
//! Every box is computed by one task and every sum runs in a fixed order, so the result is the
//! same bit for bit whatever the thread count.

pub mod dense;
pub mod fourier;
pub mod m2l;
pub mod operators;
pub mod tree;

use std::sync::{Arc, Mutex};

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use self::fourier::Spectrum;
use self::operators::{Operators, offset_slot};
use self::tree::Tree;
use super::kernel::Kelvin;
use super::lanes::LANES;
use super::point_sums::PointForces;

/// Accuracy and shape of the multipole evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FmmSettings {
    /// Points per edge of the equivalent and check surfaces (3 to 12): more is more accurate
    /// and slower (see [`FmmSettings::for_accuracy`]).
    pub order: usize,
    /// Points per leaf box, on average: larger leaves move work from the multipole passes to the
    /// direct near field.
    pub leaf_size: usize,
    /// Truncation of the check-to-equivalent pseudo-inverses, relative to the largest singular
    /// value. Their condition number is about 1e10 at order 6 and grows with the order; keeping
    /// the singular values under the truncation would amplify rounding in the check potentials
    /// into the equivalent forces (measured: 1.3e-5 untruncated against 2.5e-6 at 1e-7, order 6).
    pub truncation: f64,
    /// Boxes between a box and the nearest box it meets through the multipole translations (1
    /// or 2; 0 is taken as 1, 3 works and costs more, larger values are taken as 3). 1 is the
    /// standard interaction list: the 27 leaves within one are summed directly. 2 sums the 125
    /// leaves within two directly and translates only from two boxes away, which turns the
    /// worst-case convergence factor per order from about `sqrt 3 / 3` to `sqrt 3 / 5`, for 1.5
    /// to 2.2 times the mat-vec time at the same order (measured on 1e5 and 1e6 points) and four
    /// times the M2L kernel spectra (the way to 1e-6 and 1e-7, see the module docs).
    pub separation: usize,
}

impl FmmSettings {
    /// Settings for a relative L-infinity error of about `accuracy` against direct summation:
    /// order 8 with separation 1 for 1e-4 and coarser (the fastest); order 8 with separation 2
    /// for 1e-5 (the default); order 9 with separation 2 for 1e-6; order 10 with separation 2
    /// for anything finer. With separation 2, on Fibonacci spheres
    /// (`examples/bem_fmm_scaling.rs`, leaves of 256 points):
    ///
    /// | order | 3e3 to 3e4 (six sizes) | 1e5     | 1e6     |
    /// |-------|------------------------|---------|---------|
    /// | 7     |                        | 7.6e-6  |         |
    /// | 8     | 4.3e-8 to 3.7e-7       | 6.3e-7  | 1.4e-6  |
    /// | 9     | 2.5e-7 (2e4)           | 9.2e-8  | 2.1e-7  |
    /// | 10    | 3.7e-8 (2e4)           | 3.6e-8  |         |
    ///
    /// Order 8 would do for 1e-6 up to 1e5 points, but one level more (1e6 points, depth 5)
    /// adds its translations' error; order 9 keeps a margin of five at every size measured.
    /// Separation 1 is 1.5 to 2.2 times faster at the same order, but its error falls slowly with
    /// the order and jumps with how the points meet the leaf faces: order 8 gives 5.1e-6 to
    /// 1.4e-5 on the same six sizes (the largest at 8000 points). Measured traction errors with
    /// separation 1, relative to the largest exact value (tests; the example for the Fibonacci
    /// spheres):
    ///
    /// | order | random in a cube, 6000 | box face centroids, 1984 | sphere mesh centroids, 5120 | Fibonacci sphere, 2e4 | Fibonacci sphere, 1e5 |
    /// |-------|------------------------|--------------------------|-----------------------------|-----------------------|-----------------------|
    /// | 6     | 3e-5                   | 1.6e-4                   |                             | 3.8e-4                |                       |
    /// | 7     | 2.9e-6                 | 1.5e-5                   | 5.1e-5                      | 7.1e-5                | 1.2e-5                |
    /// | 8     | 1.3e-7                 | 3.7e-6                   | 6.5e-6                      | 8.6e-6                | 3.7e-6                |
    /// | 9     |                        |                          |                             | 3.8e-6                |                       |
    /// | 10    |                        |                          |                             | 1.6e-6                |                       |
    ///
    /// Evenly spread surface points are the hard case: no close pair's large exact value hides
    /// the far-field error, and the traction, a derivative, loses a digit against the
    /// displacement (8.8e-7 at order 8, 1.9e-7 at order 10 on the 2e4 Fibonacci points). The
    /// error concentrates at targets near their leaf's faces (order 7: 2e-6 within half a
    /// half-width of the centre, 7e-5 within 3 % of a face) and past order 8 falls only about
    /// 2.3 times per order; with one level fewer (leaves of 1024) order 10 gives 6.1e-7. On 1e6
    /// Fibonacci points (depth 5) order 8 gives 6.9e-6. Separation 2 is what reaches 1e-6 and
    /// 1e-7 on such sets (see the module docs for why).
    pub fn for_accuracy(accuracy: f64) -> Self {
        let (order, separation) = if accuracy >= 1e-4 {
            (8, 1)
        } else if accuracy >= 1e-5 {
            (8, 2)
        } else if accuracy >= 1e-6 {
            (9, 2)
        } else {
            (10, 2)
        };
        Self {
            order,
            leaf_size: 256,
            truncation: 1e-9,
            separation,
        }
    }
}

impl Default for FmmSettings {
    /// Order 8 with separation 2: relative accuracy 1e-5 with a margin on volume, random, mesh and
    /// evenly spread surface point sets ([`FmmSettings::for_accuracy`]).
    fn default() -> Self {
        Self::for_accuracy(1e-5)
    }
}

/// What to evaluate at each point.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// The displacement, m.
    Displacement,
    /// The traction on the plane of the given unit normal at each point, Pa.
    Traction(&'a [DVec3]),
}

/// A multipole evaluator for one material and point set.
#[derive(Clone, Debug)]
pub struct Fmm {
    kelvin: Kelvin,
    operators: Arc<Operators>,
    tree: Tree,
    points: Vec<DVec3>,
    /// The points in leaf order (`tree.order`), so a leaf's points are one slice.
    sorted: Vec<DVec3>,
    /// Per level, per box: the interaction list as (source box, M2L kernel), the offset slots
    /// resolved once here rather than at every mat-vec.
    interactions: Vec<Vec<Vec<(u32, u32)>>>,
    /// Per leaf: the neighbouring leaves (itself included).
    neighbours: Vec<Vec<u32>>,
}

/// Operator sets already built, by (order, Poisson's ratio, truncation, separation).
type Cache = Mutex<Vec<((usize, u64, u64, usize), Arc<Operators>)>>;
static CACHE: Cache = Mutex::new(Vec::new());

/// The operators for `kelvin`'s Poisson's ratio and `settings`, built once per process and kept
/// for its life (about 170 MB at order 8, 320 MB with separation 2, 500 MB at order 9 with
/// separation 2). They are built for a unit shear modulus: `G` scales as `1 / mu`, every
/// translation multiplies a pseudo-inverse (`mu`) by a kernel matrix (`1 / mu`), and only the
/// sources-to-equivalent step needs the factor `mu`, so materials that differ in stiffness alone
/// share one set.
fn operators_for(kelvin: &Kelvin, settings: &FmmSettings) -> Arc<Operators> {
    let key = (
        settings.order,
        kelvin.poisson().to_bits(),
        settings.truncation.to_bits(),
        settings.separation,
    );
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, ops)) = cache.iter().find(|(k, _)| *k == key) {
        return ops.clone();
    }
    let ops = Arc::new(Operators::new(
        &kelvin.unit_shear(),
        settings.order,
        settings.truncation,
        settings.separation,
    ));
    cache.push((key, ops.clone()));
    ops
}

impl Fmm {
    /// The evaluator of `kelvin` over `points` (sources and targets alike).
    pub fn new(kelvin: Kelvin, points: &[DVec3], settings: FmmSettings) -> Self {
        let settings = FmmSettings {
            separation: settings.separation.clamp(1, 3),
            ..settings
        };
        let operators = operators_for(&kelvin, &settings);
        let tree = Tree::new(points, settings.leaf_size.max(1));
        let sorted = tree.order.iter().map(|&i| points[i as usize]).collect();
        let depth = tree.depth();
        let interactions = (0..=depth)
            .map(|l| {
                let level = &tree.levels[l];
                (0..level.coords.len())
                    .into_par_iter()
                    .map(|b| {
                        if l < 2 {
                            Vec::new()
                        } else {
                            interaction_list(&tree, l, b, settings.separation)
                                .into_iter()
                                .filter_map(|(source, slot)| Some((source, operators.m2l.kernel(slot as usize)?)))
                                .collect()
                        }
                    })
                    .collect()
            })
            .collect();
        let leaves = &tree.levels[depth];
        let neighbours = leaves
            .coords
            .par_iter()
            .map(|c| {
                let mut found = Vec::new();
                for d in within(settings.separation as i32) {
                    if let Some(&n) = leaves.index.get(&[c[0] + d[0], c[1] + d[1], c[2] + d[2]]) {
                        found.push(n);
                    }
                }
                found.sort_unstable();
                found
            })
            .collect();
        Self {
            kelvin,
            operators,
            tree,
            points: points.to_vec(),
            sorted,
            interactions,
            neighbours,
        }
    }

    /// The tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Points per edge of the equivalent surfaces.
    pub fn order(&self) -> usize {
        self.operators.order
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// `out_i = sum_{j != i} K(x_i - x_j) q_j` for point forces `charges` (N) at the points, with
    /// `K` the displacement or traction kernel of `target`: displacements in m or tractions in Pa.
    /// A point at the same place as `x_i` (a duplicate) adds nothing, as in the direct sums.
    ///
    /// # Panics
    ///
    /// If `charges` (or the normals of a traction target) do not hold one entry per point: a
    /// programmer error, the lengths being fixed when the evaluator is built.
    pub fn evaluate(&self, charges: &[DVec3], target: Target<'_>) -> Vec<DVec3> {
        if let Target::Traction(normals) = target {
            assert_eq!(normals.len(), self.points.len(), "one normal per point");
        }
        self.evaluate_with(charges, 0, |i, x, sources| match target {
            Target::Displacement => self.kelvin.displacement_sum(x, sources),
            Target::Traction(normals) => self.kelvin.traction_sum(x, normals[i], sources),
        })
    }

    /// `out_i = sum_{j != i} S(x_i - x_j) q_j`: the Cauchy stress (Pa) at each point of the
    /// point forces `charges` (N) at the others, each tensor assembled from the tractions on the
    /// point forces `charges` (N) at the others, for the points from index `first` on (the
    /// earlier ones, sources only, answer zero). Give targets that are not sources a zero charge.
    ///
    /// # Panics
    ///
    /// If `charges` does not hold one entry per point (a programmer error).
    pub fn evaluate_stress(&self, charges: &[DVec3], first: usize) -> Vec<DMat3> {
        self.evaluate_with(charges, first, |_, x, sources| self.kelvin.stress_sum(x, sources))
    }

    /// The multipole passes for `charges`, then at each point from index `first` on
    /// `value(i, x_i, sources)` with the point's downward equivalent forces and its neighbouring
    /// leaves' charges as `sources` (the default value at the points before `first`).
    fn evaluate_with<T: Send + Copy + Default>(
        &self,
        charges: &[DVec3],
        first: usize,
        value: impl Fn(usize, DVec3, &PointForces) -> T + Sync,
    ) -> Vec<T> {
        assert_eq!(charges.len(), self.points.len(), "one charge per point");
        let ops = &*self.operators;
        let tree = &self.tree;
        let depth = tree.depth();
        let ns = ops.surface.len();
        let sorted_charges: Vec<DVec3> = tree.order.iter().map(|&i| charges[i as usize]).collect();
        let shear = self.kelvin.shear();
        // 1. Sources to the leaves' check potentials, then (all leaves at once) their upward
        // equivalent forces.
        let checks: Vec<Vec<f64>> = tree.levels[depth]
            .coords
            .par_iter()
            .enumerate()
            .map(|(leaf, coords)| {
                let h = tree.half_width(depth);
                let center = tree.box_center(depth, *coords);
                let (start, end) = (tree.leaf_points[leaf].0 as usize, tree.leaf_points[leaf].1 as usize);
                let sources = PointForces::from_slices(&self.sorted[start..end], &sorted_charges[start..end]);
                let mut check = vec![0.0; 3 * ns];
                for (k, s) in ops.surface.iter().enumerate() {
                    let x = center + *s * (ops.outer * h);
                    let u = self.kelvin.displacement_sum(x, &sources);
                    // The pseudo-inverse at half-width h and shear modulus mu is h mu times the
                    // unit one.
                    check[3 * k..3 * k + 3].copy_from_slice(&(u * (h * shear)).to_array());
                }
                check
            })
            .collect();
        let mut up: Vec<Vec<Vec<f64>>> = vec![Vec::new(); depth + 1];
        up[depth] = ops.up_check_to_equivalent.apply_many(&as_slices(&checks));
        // 2. Upward: each child's translation (all children of one octant at once), summed into
        // its parent in child order, up to level 2: the translations start there (the boxes of
        // levels 0 and 1 all touch), so nothing reads the levels above.
        for l in (FIRST_TRANSLATED..depth).rev() {
            let lower = &tree.levels[l + 1];
            let translated = by_octant(&lower.coords, &up[l + 1], &ops.m2m);
            let mut parents = vec![vec![0.0; 3 * ns]; tree.levels[l].coords.len()];
            for (child, t) in translated.iter().enumerate() {
                let parent = &mut parents[lower.parent[child] as usize];
                parent.iter_mut().zip(t).for_each(|(p, v)| *p += v);
            }
            up[l] = parents;
        }
        // 3. Downward, from level 2: M2L as a convolution in Fourier space, and L2L (none into
        // level 2, whose parents received nothing).
        let mut down: Vec<Vec<f64>> =
            vec![vec![0.0; 3 * ns]; tree.levels[depth.min(FIRST_TRANSLATED - 1)].coords.len()];
        let fourier = &ops.fourier;
        let grid_len = fourier.side().pow(3);
        // The lattice spacing at half-width h is 2 inner h / (order - 1) and the pseudo-inverse at h is h
        // times the unit one, so the spectra (unit spacing) and the pseudo-inverse meet with the
        // level-independent factor (order - 1) / (2 inner).
        let factor = (ops.order - 1) as f64 / (2.0 * ops.inner);
        for (l, up_level) in up.iter().enumerate().skip(FIRST_TRANSLATED) {
            let spectra: Vec<[Spectrum; 3]> = {
                // Every box's three components, transformed four grids at a time.
                let grids: Vec<Vec<f64>> = up_level
                    .par_iter()
                    .flat_map_iter(|equivalent| {
                        (0..3).map(move |c| {
                            let mut grid = vec![0.0; grid_len];
                            for (k, &at) in ops.grid_index.iter().enumerate() {
                                grid[at] = equivalent[3 * k + c];
                            }
                            grid
                        })
                    })
                    .collect();
                let zero = vec![0.0; grid_len];
                let flat: Vec<Spectrum> = grids
                    .par_chunks(LANES)
                    .flat_map_iter(|chunk| {
                        let lanes = core::array::from_fn(|i| chunk.get(i).unwrap_or(&zero).as_slice());
                        fourier.forward_lanes(lanes, ops.order).into_iter().take(chunk.len())
                    })
                    .collect();
                let mut flat = flat.into_iter();
                (0..up_level.len())
                    .map(|_| [(); 3].map(|_| flat.next().expect("three spectra per box")))
                    .collect()
            };
            let level = &tree.levels[l];
            let convolved = m2l::convolve(&ops.m2l, &spectra, &self.interactions[l]);
            // Every convolved component back to its box's check potential, four at a time.
            let components: Vec<(usize, usize, &Spectrum)> = convolved
                .iter()
                .enumerate()
                .filter_map(|(b, spectra)| spectra.as_ref().map(|spectra| (b, spectra)))
                .flat_map(|(b, spectra)| spectra.iter().enumerate().map(move |(c, s)| (b, c, s)))
                .collect();
            let empty = Spectrum {
                re: vec![0.0; fourier.spectrum_len()],
                im: vec![0.0; fourier.spectrum_len()],
            };
            let values: Vec<Vec<f64>> = components
                .par_chunks(LANES)
                .flat_map_iter(|chunk| {
                    let lanes = core::array::from_fn(|i| chunk.get(i).map_or(&empty, |(_, _, s)| *s));
                    fourier
                        .inverse_lanes(lanes, ops.order)
                        .into_iter()
                        .take(chunk.len())
                        .map(|grid| ops.grid_index.iter().map(|&at| grid[at] * factor).collect())
                })
                .collect();
            let mut checks: Vec<Vec<f64>> = vec![vec![0.0; 3 * ns]; convolved.len()];
            for ((b, c, _), values) in components.iter().zip(values) {
                for (k, v) in values.into_iter().enumerate() {
                    checks[*b][3 * k + c] = v;
                }
            }
            let mut next = ops.down_check_to_equivalent.apply_many(&as_slices(&checks));
            if l > FIRST_TRANSLATED {
                let parents: Vec<Vec<f64>> = level.parent.iter().map(|&p| down[p as usize].clone()).collect();
                let inherited = by_octant(&level.coords, &parents, &ops.l2l);
                for (n, i) in next.iter_mut().zip(&inherited) {
                    n.iter_mut().zip(i).for_each(|(a, b)| *a += b);
                }
            }
            down = next;
        }
        // 4. Leaves: far field from the downward equivalent forces, near field directly.
        let per_leaf: Vec<Vec<(u32, T)>> = tree.levels[depth]
            .coords
            .par_iter()
            .enumerate()
            .map(|(leaf, coords)| {
                let (start, end) = (tree.leaf_points[leaf].0 as usize, tree.leaf_points[leaf].1 as usize);
                if tree.order[start..end].iter().all(|&i| (i as usize) < first) {
                    return Vec::new();
                }
                let h = tree.half_width(depth);
                let center = tree.box_center(depth, *coords);
                // The downward equivalent forces and the neighbouring leaves' sources, together.
                let mut sources = PointForces::new();
                for (k, s) in ops.surface.iter().enumerate() {
                    let f = &down[leaf][3 * k..3 * k + 3];
                    sources.push(center + *s * (ops.outer * h), DVec3::new(f[0], f[1], f[2]));
                }
                for &n in &self.neighbours[leaf] {
                    let (s, e) = (
                        tree.leaf_points[n as usize].0 as usize,
                        tree.leaf_points[n as usize].1 as usize,
                    );
                    sources.extend(&self.sorted[s..e], &sorted_charges[s..e]);
                }
                (start..end)
                    .filter(|&k| tree.order[k] as usize >= first)
                    .map(|k| {
                        let i = tree.order[k];
                        (i, value(i as usize, self.sorted[k], &sources))
                    })
                    .collect()
            })
            .collect();
        let mut out = vec![T::default(); self.points.len()];
        for leaf in per_leaf {
            for (i, v) in leaf {
                out[i as usize] = v;
            }
        }
        out
    }
}

/// The first level with multipole translations: a box of level 1 (or 0) has every other box of
/// its level within one box of it, so its interaction list is empty.
const FIRST_TRANSLATED: usize = 2;

/// The vectors as slices.
fn as_slices(vectors: &[Vec<f64>]) -> Vec<&[f64]> {
    vectors.iter().map(|v| v.as_slice()).collect()
}

/// `matrices[octant(b)] vectors[b]` for every box `b` of a level, the boxes of each octant
/// translated together.
fn by_octant(coords: &[[i32; 3]], vectors: &[Vec<f64>], matrices: &[dense::Matrix]) -> Vec<Vec<f64>> {
    let octant = |c: &[i32; 3]| (c[0] & 1) as usize | ((c[1] & 1) as usize) << 1 | ((c[2] & 1) as usize) << 2;
    let mut out = vec![Vec::new(); coords.len()];
    for (o, matrix) in matrices.iter().enumerate() {
        let members: Vec<usize> = (0..coords.len()).filter(|&b| octant(&coords[b]) == o).collect();
        let inputs: Vec<&[f64]> = members.iter().map(|&b| vectors[b].as_slice()).collect();
        for (b, result) in members.into_iter().zip(matrix.apply_many(&inputs)) {
            out[b] = result;
        }
    }
    out
}

/// The offsets within `reach` boxes of a box (itself included), in a fixed order.
fn within(reach: i32) -> impl Iterator<Item = [i32; 3]> {
    (-reach..=reach).flat_map(move |x| (-reach..=reach).flat_map(move |y| (-reach..=reach).map(move |z| [x, y, z])))
}

/// The interaction list of box `b` of level `l`: children of its parent's boxes within
/// `separation` that are not within `separation` of it, with the offset slot of (target -
/// source) coordinates.
fn interaction_list(tree: &Tree, l: usize, b: usize, separation: usize) -> Vec<(u32, u16)> {
    let level = &tree.levels[l];
    let c = level.coords[b];
    let p = [c[0] >> 1, c[1] >> 1, c[2] >> 1];
    let reach = separation as i32;
    let mut list = Vec::new();
    for d in within(reach) {
        let q = [p[0] + d[0], p[1] + d[1], p[2] + d[2]];
        if !tree.levels[l - 1].index.contains_key(&q) {
            continue;
        }
        for o in 0..8 {
            let s = [2 * q[0] + (o & 1), 2 * q[1] + ((o >> 1) & 1), 2 * q[2] + ((o >> 2) & 1)];
            let diff = [c[0] - s[0], c[1] - s[1], c[2] - s[2]];
            if diff.iter().all(|v| v.abs() <= reach) {
                continue;
            }
            if let Some(&source) = level.index.get(&s) {
                list.push((source, offset_slot(diff, separation) as u16));
            }
        }
    }
    list.sort_unstable();
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::material::Elastic;
    use crate::bem::operator::direct_traction_sum;
    use shatter_integrators::SplitMix64;

    fn direct_displacement(kelvin: &Kelvin, points: &[DVec3], charges: &[DVec3]) -> Vec<DVec3> {
        points
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let mut sum = DVec3::ZERO;
                for (j, (y, q)) in points.iter().zip(charges).enumerate() {
                    if j != i {
                        sum += kelvin.displacement(*x - *y) * *q;
                    }
                }
                sum
            })
            .collect()
    }

    fn relative_max_error(got: &[DVec3], exact: &[DVec3]) -> f64 {
        let scale = exact.iter().fold(0.0f64, |a, v| a.max(v.length()));
        got.iter()
            .zip(exact)
            .fold(0.0f64, |a, (g, e)| a.max((*g - *e).length()))
            / scale
    }

    /// Unit-order charges at `points` and the direct sums they give there: displacement and
    /// traction on `normals`, the exact answers every multipole setting is checked against.
    struct Exact {
        charges: Vec<DVec3>,
        displacement: Vec<DVec3>,
        traction: Vec<DVec3>,
    }

    fn exact(kelvin: &Kelvin, points: &[DVec3], normals: &[DVec3]) -> Exact {
        let mut rng = SplitMix64::new(11);
        let charges: Vec<DVec3> = points.iter().map(|_| rng.unit_vector() * rng.range(0.5, 2.0)).collect();
        let displacement = direct_displacement(kelvin, points, &charges);
        let mut traction = vec![DVec3::ZERO; points.len()];
        direct_traction_sum(kelvin, points, normals, &charges, &mut traction);
        Exact {
            charges,
            displacement,
            traction,
        }
    }

    /// Relative L-infinity errors of the multipole sums with `settings` against `exact`:
    /// displacement, traction.
    fn errors(
        kelvin: &Kelvin,
        points: &[DVec3],
        normals: &[DVec3],
        exact: &Exact,
        settings: FmmSettings,
    ) -> (f64, f64) {
        let fmm = Fmm::new(*kelvin, points, settings);
        let u = fmm.evaluate(&exact.charges, Target::Displacement);
        let t = fmm.evaluate(&exact.charges, Target::Traction(normals));
        (
            relative_max_error(&u, &exact.displacement),
            relative_max_error(&t, &exact.traction),
        )
    }

    fn check(kelvin: &Kelvin, points: &[DVec3], normals: &[DVec3], settings: FmmSettings) -> (f64, f64) {
        errors(kelvin, points, normals, &exact(kelvin, points, normals), settings)
    }

    fn kelvin() -> Kelvin {
        Kelvin::new(&Elastic::try_new(20e9, 0.25).unwrap())
    }

    /// Default settings, relative L-infinity error against direct sums on 6000 random points in a
    /// cube and on a sphere, on the centroids and normals of a 5120-triangle sphere mesh, and on
    /// 8000 evenly spread points of a sphere: displacement and traction under 1e-5 on all four;
    /// and the fast settings for 1e-4 (separation 1) under 1e-4 on the same sets. Measured
    /// traction errors, default then fast: 1.4e-8 and 1.3e-7, 9.5e-10 and 1.1e-8, 4.7e-7 and
    /// 6.5e-6, 6.2e-7 and 7.1e-6 (evenly spaced points are the hard case, see
    /// [`FmmSettings::for_accuracy`]).
    #[test]
    fn bem_fmm_matches_direct_sums_at_default_accuracy() {
        let mut rng = SplitMix64::new(3);
        let n = 6000;
        let cube: Vec<DVec3> = (0..n)
            .map(|_| DVec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()))
            .collect();
        let sphere: Vec<DVec3> = (0..n).map(|_| rng.unit_vector() * 0.7).collect();
        let mesh = shatter_collision::TriMesh::icosphere(0.7, 4);
        let centroids: Vec<DVec3> = (0..mesh.triangles().len())
            .map(|i| mesh.triangle(i).iter().sum::<DVec3>() / 3.0)
            .collect();
        let even = crate::bem::meshes::fibonacci_sphere(8000);
        for (name, points) in [
            ("cube", cube),
            ("sphere", sphere),
            ("sphere mesh", centroids),
            ("even sphere", even),
        ] {
            let normals: Vec<DVec3> = points.iter().map(|p| p.normalize()).collect();
            // One direct sum per point set serves both settings.
            let exact = exact(&kelvin(), &points, &normals);
            for (accuracy, settings) in [(1e-5, FmmSettings::default()), (1e-4, FmmSettings::for_accuracy(1e-4))] {
                let (eu, et) = errors(&kelvin(), &points, &normals, &exact, settings);
                println!(
                    "{name}, separation {}: displacement {eu:.2e} traction {et:.2e}",
                    settings.separation
                );
                assert!(eu < accuracy && et < accuracy, "{name}: {eu} {et}");
            }
        }
    }

    /// The hard case, points on the planes of a box's faces (its 1984 triangle centroids, with
    /// their normals): under 1e-5 at default settings (measured: traction 5.2e-7).
    #[test]
    fn bem_fmm_on_a_planar_mesh_point_set() {
        let mesh = crate::bem::meshes::grid_box(DVec3::new(0.5, 0.3, 0.2), 0.05, crate::bem::meshes::Grading::Uniform)
            .unwrap();
        let surface = crate::bem::Surface::try_new(mesh).unwrap();
        let (points, normals) = (surface.centroids(), surface.normals());
        let settings = FmmSettings {
            leaf_size: 32,
            ..FmmSettings::default()
        };
        let (eu, et) = check(&kelvin(), points, normals, settings);
        println!(
            "box mesh, {} points: displacement {eu:.2e} traction {et:.2e}",
            points.len()
        );
        assert!(eu < 1e-5 && et < 1e-5, "{eu} {et}");
    }

    /// Settings for 1e-6 (order 9, translations from two boxes away) on the two mesh point sets
    /// of the tests above, a sphere mesh's 5120 and a box's 1984 face centroids: displacement
    /// and traction under 1e-6 (measured: traction 4.7e-8 and 5.8e-8).
    #[test]
    fn bem_fmm_separation_two_reaches_one_in_a_million_on_mesh_points() {
        let settings = FmmSettings::for_accuracy(1e-6);
        assert_eq!((settings.order, settings.separation), (9, 2));
        let sphere = shatter_collision::TriMesh::icosphere(0.7, 4);
        let block = crate::bem::meshes::grid_box(DVec3::new(0.5, 0.3, 0.2), 0.05, crate::bem::meshes::Grading::Uniform)
            .unwrap();
        // The box's points in leaves of 32, as in the planar test: at 256 they all sit in one
        // leaf's near field and nothing is translated.
        for (name, mesh, leaf_size) in [("sphere mesh", sphere, 256), ("box mesh", block, 32)] {
            let settings = FmmSettings { leaf_size, ..settings };
            let surface = crate::bem::Surface::try_new(mesh).unwrap();
            let (points, normals) = (surface.centroids(), surface.normals());
            let (eu, et) = check(&kelvin(), points, normals, settings);
            println!(
                "{name}, {} points: displacement {eu:.2e} traction {et:.2e}",
                points.len()
            );
            assert!(eu < 1e-6 && et < 1e-6, "{name}: {eu} {et}");
        }
    }

    /// Materials that differ in stiffness alone share operators: a stiffer one gives
    /// displacements smaller in proportion and the same tractions (to 1e-8: the rounding of the
    /// two check potentials differs, and the pseudo-inverse, truncated at 1e-9, amplifies it;
    /// measured 4e-10).
    #[test]
    fn bem_fmm_scales_with_the_shear_modulus() {
        let mut rng = SplitMix64::new(8);
        let points: Vec<DVec3> = (0..2000).map(|_| rng.unit_vector()).collect();
        let charges: Vec<DVec3> = (0..2000).map(|_| rng.unit_vector()).collect();
        let settings = FmmSettings {
            leaf_size: 32,
            ..FmmSettings::default()
        };
        let soft = Kelvin::new(&Elastic::try_new(20e9, 0.25).unwrap());
        let stiff = Kelvin::new(&Elastic::try_new(70e9, 0.25).unwrap());
        let (u1, t1) = {
            let f = Fmm::new(soft, &points, settings);
            (
                f.evaluate(&charges, Target::Displacement),
                f.evaluate(&charges, Target::Traction(&points)),
            )
        };
        let (u2, t2) = {
            let f = Fmm::new(stiff, &points, settings);
            (
                f.evaluate(&charges, Target::Displacement),
                f.evaluate(&charges, Target::Traction(&points)),
            )
        };
        let scale = u1.iter().fold(0.0f64, |a, u| a.max(u.length()));
        assert!(u1.iter().zip(&u2).all(|(a, b)| (*a - *b * 3.5).length() < 1e-8 * scale));
        let scale = t1.iter().fold(0.0f64, |a, t| a.max(t.length()));
        assert!(t1.iter().zip(&t2).all(|(a, b)| (*a - *b).length() < 1e-8 * scale));
    }

    /// Trees of depth 0 and 1 translate nothing (every leaf is a neighbour of every other): the
    /// evaluation is the direct sum, to rounding.
    #[test]
    fn bem_fmm_shallow_trees_sum_directly() {
        let mut rng = SplitMix64::new(21);
        let points: Vec<DVec3> = (0..600).map(|_| rng.unit_vector()).collect();
        let charges: Vec<DVec3> = (0..600).map(|_| rng.unit_vector()).collect();
        let mut exact = vec![DVec3::ZERO; points.len()];
        direct_traction_sum(&kelvin(), &points, &points, &charges, &mut exact);
        for leaf_size in [1000, 200] {
            let settings = FmmSettings {
                leaf_size,
                ..FmmSettings::default()
            };
            let fmm = Fmm::new(kelvin(), &points, settings);
            assert!(fmm.tree().depth() < 2, "depth {}", fmm.tree().depth());
            let got = fmm.evaluate(&charges, Target::Traction(&points));
            assert!(relative_max_error(&got, &exact) < 1e-12, "leaves of {leaf_size}");
        }
    }

    /// The same bits with one thread and two.
    #[test]
    fn bem_fmm_is_deterministic_across_thread_counts() {
        let mut rng = SplitMix64::new(5);
        let points: Vec<DVec3> = (0..3000).map(|_| rng.unit_vector()).collect();
        let charges: Vec<DVec3> = (0..3000).map(|_| rng.unit_vector()).collect();
        let settings = FmmSettings {
            leaf_size: 32,
            ..FmmSettings::default()
        };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| Fmm::new(kelvin(), &points, settings).evaluate(&charges, Target::Traction(&points)))
        };
        assert_eq!(run(1), run(2));
    }
}
