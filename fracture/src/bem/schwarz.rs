//! Block Jacobi and restricted additive Schwarz (Cai and Sarkis 1999) preconditioners for the
//! traction operator: the operator's blocks over small clusters of nearby triangles, without or
//! with an overlap, each factored once and solved exactly, each cluster writing only its own
//! triangles.
//!
//! The collocation matrix `D + A` is `1/2 I` plus a kernel that is strongest between close
//! triangles: across sharp edges, between the slivers of a CAD mesh, and between the two sides of
//! a thin part. There the local coupling, not the global one, slows BiCGSTAB down. The
//! triangles are split into clusters of at most [`CLUSTER_SIZE`] by recursive bisection of their
//! centroids (at the median of the longest side, so a cluster is compact in space whatever the
//! mesh's connectivity, and holds both sides of a thin part). Each cluster's block may be extended
//! by an overlap, the triangles whose centroid lies within a given number of its mean triangle
//! diameters of its bounding box (at most [`MAX_OVERLAP`] times its size, the nearest kept); the
//! extended block is factored, and applying the preconditioner solves it and keeps the cluster's
//! own triangles (by default [`OVERLAP`], a quarter of a diameter). Without the overlap (block
//! Jacobi) the cut between two clusters is a seam the preconditioner does not see across.
//!
//! The solve preconditions on the right: BiCGSTAB solves `(D + A) M^-1 y = b` and the density is
//! `M^-1 y`. Its residual `b - (D + A) M^-1 y` is the residual of the density itself, so the
//! tolerance, the relaxation bound and the exact residual checks of [`super::bicgstab`] mean what
//! they meant without it.
//!
//! Measured on whole solves to 1e-8 (`cargo run --release --example bem_preconditioner -- cow
//! fandisk homer spot box sphere`, two threads, E = 30 GPa, nu = 0.2, pulls along x and
//! obliquely; iterations, and seconds of the solve after the preparation):
//!
//! | mesh, pull | none | block Jacobi, 32 | overlap 0.25, 16 | 32 (default) | 64 |
//! |------------|------|------------------|------------------|--------------|----|
//! | cow.obj (5804), x | 40, 3.34 s | 32, 2.72 s | 29, 2.52 s | 25, 2.18 s | 24, 2.15 s |
//! | cow, oblique | 42, 3.56 s | 30, 2.59 s | 30, 2.55 s | 25, 2.22 s | 25, 2.27 s |
//! | fandisk.obj (12946), x | 39, 4.75 s | 29, 3.73 s | 30, 3.85 s | 27, 3.51 s | 27, 3.88 s |
//! | fandisk, oblique | 39, 4.74 s | 31, 4.11 s | 31, 4.01 s | 31, 3.97 s | 28, 3.84 s |
//! | homer.obj (12000), x | 38, 5.86 s | 38, 6.05 s | 37, 5.84 s | 34, 5.45 s | 34, 5.76 s |
//! | homer, oblique | 41, 6.36 s | 40, 6.40 s | 41, 6.48 s | 39, 6.26 s | 38, 6.35 s |
//! | spot.obj (5856), x | 18, 1.55 s | 16, 1.38 s | 16, 1.38 s | 16, 1.36 s | 16, 1.41 s |
//! | spot, oblique | 20, 1.71 s | 20, 1.76 s | 19, 1.63 s | 19, 1.60 s | 19, 1.70 s |
//! | box 0.4 x 0.2 x 0.2 m (5120), x | 11, 0.69 s | 13, 0.84 s | 13, 0.81 s | 14, 0.87 s | 13, 0.86 s |
//! | box, oblique | 14, 0.83 s | 15, 0.94 s | 14, 0.91 s | 17, 1.03 s | 13, 0.85 s |
//! | icosphere (5120), x | 6, 0.37 s | 8, 0.48 s | 8, 0.47 s | 8, 0.50 s | 8, 0.47 s |
//! | icosphere, oblique | 7, 0.41 s | 8, 0.49 s | 8, 0.45 s | 8, 0.49 s | 8, 0.48 s |
//!
//! Both pay where solves are long (sharp features, long thin triangles, thin parts: a second
//! off on fandisk and cow) and cost one to three iterations where they are already short (a
//! sphere, a box of regular triangles: a tenth of a second or two). For fandisk block Jacobi takes
//! 0.03 s to build and 1.3 ms to apply, the overlap of 0.25 0.07 s and 2 ms, against 53 to 95 ms
//! for a product of the operator; an overlap of 0.5 gained no more than 0.25 in a first trial
//! and took twice as long.
//!
//! The overlap of 0.25 over 32, the default, saves the most where it matters: against block
//! Jacobi, cow 32 to 25 iterations along x and 30 to 25 obliquely, homer 38 to 34 and 40 to 39,
//! fandisk 29 to 27 and 31 to 31, spot the same.
//!
//! A cluster whose block cannot be factored (a pivot that vanishes to working precision, which a
//! second-kind operator near `1/2 I` does not produce on a valid mesh) is left out: `M` is the
//! identity on its triangles, and [`Schwarz::identity_clusters`] counts them.

use glam::DVec3;
use rayon::prelude::*;

use super::buckets::Buckets;
use super::dense_lu::Lu;
use super::operator::TractionOperator;
use super::surface::Surface;

/// Triangles per cluster at most, by default (see the module docs for the measurements).
pub const CLUSTER_SIZE: usize = 32;

/// Overlap of a cluster's block, by default: how far beyond the bounding box of its centroids it
/// reaches, in its mean triangle diameters (see the module docs for the measurements).
pub const OVERLAP: f64 = 0.25;

/// Most overlap triangles of a cluster, in multiples of its size.
pub const MAX_OVERLAP: usize = 3;

/// Largest cluster size accepted: an extended block of `m` triangles stores `9 m^2` factors.
pub const MAX_CLUSTER_SIZE: usize = 256;

/// How a stress solve preconditions BiCGSTAB.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Preconditioner {
    /// None: BiCGSTAB on the operator itself.
    None,
    /// [`Schwarz`] over clusters of at most `cluster_size` triangles (1 to
    /// [`MAX_CLUSTER_SIZE`]) with an overlap of `overlap` mean triangle diameters (finite, >= 0;
    /// 0 is block Jacobi).
    Schwarz {
        /// Triangles per cluster at most.
        cluster_size: usize,
        /// Reach of each cluster's block beyond its own triangles, in their mean diameters.
        overlap: f64,
    },
}

impl Default for Preconditioner {
    /// Schwarz over clusters of [`CLUSTER_SIZE`] triangles with an overlap of [`OVERLAP`].
    fn default() -> Self {
        Self::Schwarz {
            cluster_size: CLUSTER_SIZE,
            overlap: OVERLAP,
        }
    }
}

/// One cluster: its overlap then its own triangles, and the LU factors of their block, or none
/// where it is left out.
#[derive(Clone, Debug)]
struct Cluster {
    /// Overlap triangles first, the cluster's own last (each part ascending), so that a solve
    /// can stop its back substitution after them.
    members: Vec<u32>,
    /// Number of the cluster's own triangles (the tail of `members`).
    own: usize,
    factors: Option<Lu>,
}

impl Cluster {
    fn own(&self) -> &[u32] {
        &self.members[self.members.len() - self.own..]
    }
}

/// The block Jacobi or restricted additive Schwarz preconditioner of a traction operator (see
/// the module docs).
#[derive(Clone, Debug)]
pub struct Schwarz {
    clusters: Vec<Cluster>,
}

impl Schwarz {
    /// Clusters the triangles of `surface` into at most `size` each, extends each by `overlap`
    /// of its mean triangle diameter, and factors the block of `operator` over each. A size
    /// outside 1 to [`MAX_CLUSTER_SIZE`] is taken as the nearest in range and an overlap that is
    /// negative or not finite as 0 ([`super::ElasticBody::try_new`] refuses both by name).
    ///
    /// # Panics
    ///
    /// If `operator` was not built for `surface` (a programmer error).
    pub fn new(operator: &TractionOperator, surface: &Surface, size: usize, overlap: f64) -> Self {
        let centroids = surface.centroids();
        let overlap = if overlap.is_finite() { overlap.max(0.0) } else { 0.0 };
        let groups = clusters(centroids, size.clamp(1, MAX_CLUSTER_SIZE));
        let reaches: Vec<f64> = groups
            .iter()
            .map(|g| overlap * g.iter().map(|&i| surface.diameters()[i as usize]).sum::<f64>() / g.len() as f64)
            .collect();
        let buckets = Buckets::new(centroids, reaches.iter().fold(0.0, |a: f64, &r| a.max(r)));
        let clusters = groups
            .into_par_iter()
            .zip(reaches)
            .map(|(own, reach)| {
                let mut members = if reach > 0.0 {
                    around(&buckets, centroids, &own, reach, MAX_OVERLAP * own.len())
                } else {
                    Vec::new()
                };
                let count = own.len();
                members.extend_from_slice(&own);
                let m = 3 * members.len();
                let mut a = vec![0.0; m * m];
                for (li, &i) in members.iter().enumerate() {
                    for (lj, &j) in members.iter().enumerate() {
                        let block = operator.entry(surface, i as usize, j as usize);
                        for r in 0..3 {
                            for c in 0..3 {
                                a[(3 * li + r) * m + 3 * lj + c] = block.col(c)[r];
                            }
                        }
                    }
                }
                Cluster {
                    members,
                    own: count,
                    factors: Lu::new(a, m),
                }
            })
            .collect();
        Self { clusters }
    }

    /// Number of clusters.
    pub fn clusters(&self) -> usize {
        self.clusters.len()
    }

    /// Mean number of triangles in a cluster's extended block.
    pub fn mean_block(&self) -> f64 {
        self.clusters.iter().map(|c| c.members.len()).sum::<usize>() as f64 / self.clusters.len().max(1) as f64
    }

    /// Clusters whose block could not be factored, where the preconditioner is the identity.
    pub fn identity_clusters(&self) -> usize {
        self.clusters.iter().filter(|c| c.factors.is_none()).count()
    }

    /// `out = M^-1 v`: per cluster, the density (Pa) whose traction under the extended block is
    /// `v` (Pa) there, kept on the cluster's own triangles. Each triangle is written by exactly
    /// one cluster, so the result does not depend on the thread count.
    ///
    /// # Panics
    ///
    /// If `v` or `out` has fewer entries than the surface has triangles (a programmer error).
    pub fn apply(&self, v: &[DVec3], out: &mut [DVec3]) {
        // Each cluster solves into its own stretch of one buffer (its own triangles in order),
        // with a scratch vector per worker rather than per cluster.
        let mut solved = vec![DVec3::ZERO; self.clusters.iter().map(|c| c.own).sum()];
        let mut stretches: Vec<&mut [DVec3]> = Vec::with_capacity(self.clusters.len());
        let mut rest = solved.as_mut_slice();
        for c in &self.clusters {
            let (head, tail) = rest.split_at_mut(c.own);
            stretches.push(head);
            rest = tail;
        }
        self.clusters
            .par_iter()
            .zip(stretches)
            .for_each_init(Vec::new, |x: &mut Vec<f64>, (c, stretch)| {
                x.clear();
                x.extend(c.members.iter().flat_map(|&i| v[i as usize].to_array()));
                if let Some(lu) = &c.factors {
                    lu.solve_tail(x, 3 * c.own);
                }
                let tail = &x[x.len() - 3 * c.own..];
                for (s, block) in stretch.iter_mut().zip(tail.chunks_exact(3)) {
                    *s = DVec3::from_slice(block);
                }
            });
        let mut at = 0;
        for c in &self.clusters {
            for (&i, s) in c.own().iter().zip(&solved[at..at + c.own]) {
                out[i as usize] = *s;
            }
            at += c.own;
        }
    }
}

/// The points split by recursive bisection (at the median along the longest side of their
/// bounding box, ties by index) into groups of at most `size`, each group ascending.
fn clusters(points: &[DVec3], size: usize) -> Vec<Vec<u32>> {
    let mut order: Vec<u32> = (0..points.len() as u32).collect();
    let mut out = Vec::new();
    let mut pending = vec![order.as_mut_slice()];
    while let Some(group) = pending.pop() {
        if group.is_empty() {
            continue;
        }
        if group.len() <= size {
            let mut members = group.to_vec();
            members.sort_unstable();
            out.push(members);
            continue;
        }
        let (lo, hi) = bounds(points, group);
        let axis = (hi - lo).max_position();
        group.sort_unstable_by(|&a, &b| {
            points[a as usize][axis]
                .total_cmp(&points[b as usize][axis])
                .then(a.cmp(&b))
        });
        let (left, right) = group.split_at_mut(group.len() / 2);
        pending.push(right);
        pending.push(left);
    }
    out
}

/// The bounding box of `points[i]` for `i` in `indices`.
fn bounds(points: &[DVec3], indices: &[u32]) -> (DVec3, DVec3) {
    indices
        .iter()
        .fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &i| {
            (lo.min(points[i as usize]), hi.max(points[i as usize]))
        })
}

/// The points outside `own` within `reach` (m) of the bounding box of `own`, at most `most` of
/// them (the nearest to the box, ties by index), ascending.
fn around(buckets: &Buckets, points: &[DVec3], own: &[u32], reach: f64, most: usize) -> Vec<u32> {
    let (lo, hi) = bounds(points, own);
    let distance = |p: DVec3| (lo - p).max(p - hi).max(DVec3::ZERO).length();
    let mut found: Vec<(f64, u32)> = Vec::new();
    buckets.visit(buckets.key(lo - reach), buckets.key(hi + reach), |j| {
        let d = distance(points[j as usize]);
        if d <= reach && own.binary_search(&j).is_err() {
            found.push((d, j));
        }
    });
    found.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut kept: Vec<u32> = found.into_iter().take(most).map(|(_, j)| j).collect();
    kept.sort_unstable();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::kernel::Kelvin;
    use crate::bem::material::Elastic;
    use crate::bem::meshes::{Grading, fibonacci_sphere, grid_box};
    use crate::bem::operator::{Accuracy, FarField};
    use shatter_integrators::SplitMix64;

    /// Every point is in exactly one cluster, no cluster is larger than asked nor smaller than
    /// half of it, and the clusters are compact.
    #[test]
    fn bem_schwarz_clusters_partition_the_points() {
        let points = fibonacci_sphere(1000);
        for size in [1, 7, 32, 1000, 5000] {
            let groups = clusters(&points, size);
            let mut seen = vec![0; points.len()];
            for g in &groups {
                assert!(!g.is_empty() && g.len() <= size, "size {size}: a group of {}", g.len());
                assert!(g.windows(2).all(|w| w[0] < w[1]));
                g.iter().for_each(|&i| seen[i as usize] += 1);
                if size == 32 {
                    let (lo, hi) = bounds(&points, g);
                    // A cap of 32 of the 1000 points is about 0.7 across; random points would
                    // span the sphere (2).
                    assert!(
                        (hi - lo).length() < 1.2,
                        "a group of {} spans {}",
                        g.len(),
                        (hi - lo).length()
                    );
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "size {size}");
            // A group is split only above `size`, into halves of at least half of `size + 1`.
            let least = points.len().min(size.div_ceil(2));
            assert!(groups.iter().all(|g| g.len() >= least), "size {size}");
        }
        assert!(clusters(&[], 4).is_empty());
    }

    /// The overlap query finds, by brute force's measure, the points near a box and not in it,
    /// the nearest first when capped.
    #[test]
    fn bem_schwarz_overlap_is_the_points_near_the_cluster() {
        let points = fibonacci_sphere(2000);
        let buckets = Buckets::new(&points, 0.1);
        let own: Vec<u32> = clusters(&points, 40).swap_remove(5);
        let (lo, hi) = bounds(&points, &own);
        let distance = |p: DVec3| (lo - p).max(p - hi).max(DVec3::ZERO).length();
        let near: Vec<u32> = (0..points.len() as u32)
            .filter(|j| own.binary_search(j).is_err() && distance(points[*j as usize]) <= 0.1)
            .collect();
        assert!(near.len() > 10);
        assert_eq!(around(&buckets, &points, &own, 0.1, usize::MAX), near);
        let capped = around(&buckets, &points, &own, 0.1, 5);
        assert_eq!(capped.len(), 5);
        let farthest_kept = capped.iter().map(|&j| distance(points[j as usize])).fold(0.0, f64::max);
        let nearest_left = near
            .iter()
            .filter(|j| !capped.contains(j))
            .map(|&j| distance(points[j as usize]))
            .fold(f64::INFINITY, f64::min);
        assert!(farthest_kept <= nearest_left);
    }

    fn box_operator() -> (Surface, TractionOperator) {
        let mesh = grid_box(DVec3::new(0.2, 0.1, 0.1), 0.05, Grading::Uniform).expect("a box");
        let surface = Surface::try_new(mesh).expect("a closed box");
        let kelvin = Kelvin::new(&Elastic::try_new(20.0e9, 0.25).expect("a material"));
        let operator = TractionOperator::new(&surface, kelvin, Accuracy::default(), FarField::Direct, false);
        (surface, operator)
    }

    /// The preconditioner inverts the operator on each extended block and keeps the cluster's own
    /// triangles: for a density on the extended block, `M^-1` of the operator's traction there
    /// (nothing elsewhere) gives the density back on the cluster's own triangles. This holds
    /// only if the blocks it factored are the operator's own, so it checks
    /// [`TractionOperator::entry`] against the operator's product as well.
    #[test]
    fn bem_schwarz_inverts_the_operator_on_each_block() {
        let (surface, operator) = box_operator();
        for overlap in [0.0, 0.5] {
            let preconditioner = Schwarz::new(&operator, &surface, 20, overlap);
            assert_eq!(preconditioner.identity_clusters(), 0);
            assert!(preconditioner.clusters() > 4);
            let mean = preconditioner.mean_block();
            assert!(
                (overlap == 0.0) == (mean <= 20.0),
                "overlap {overlap}: blocks of {mean}"
            );
            let mut rng = SplitMix64::new(11);
            for cluster in &preconditioner.clusters {
                let mut density = vec![DVec3::ZERO; surface.len()];
                for &i in &cluster.members {
                    density[i as usize] = DVec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64()) - 0.5;
                }
                let mut traction = vec![DVec3::ZERO; surface.len()];
                operator.apply(&surface, &density, &mut traction);
                let mut restricted = vec![DVec3::ZERO; surface.len()];
                for &i in &cluster.members {
                    restricted[i as usize] = traction[i as usize];
                }
                let mut back = vec![DVec3::ZERO; surface.len()];
                preconditioner.apply(&restricted, &mut back);
                let error = cluster
                    .own()
                    .iter()
                    .map(|&i| (density[i as usize] - back[i as usize]).length())
                    .fold(0.0, f64::max);
                assert!(error < 1e-12, "overlap {overlap}: error {error:e}");
            }
        }
    }
}
