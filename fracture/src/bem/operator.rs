//! The collocation operator of the traction boundary integral equation (Zhu 2015 eq. 7-8).
//!
//! With the displacement a single-layer potential `u(x) = int_S G(x, y) rho(y) dA_y` of a density
//! `rho` (Pa), the traction on the material side of the boundary at a smooth point `x` is
//!
//! ```text
//! t(x) = kappa rho(x) + p.v. int_S T(x, y; n_x) rho(y) dA_y,       kappa = omega(x) / (4 pi)
//! ```
//!
//! with `omega` the solid angle of the material at `x`. Collocation points are triangle centroids,
//! where `omega = 2 pi` and `kappa = 1/2`. Zhu writes `kappa = sgn(sheet) omega / (4 pi)` with
//! `sgn = -1` on cavities, measuring `omega` on the side each sheet encloses; with normals out of
//! the material on every sheet (as [`super::Surface`] requires) the material is on the side the
//! normal points away from on outer surfaces and cavities alike, and the jump is `+1/2` on both:
//! the hollow-sphere oracle checks the cavity's sign.
//!
//! Discretisation, `rho` constant per triangle (`A` the area, `c` the centroid):
//!
//! ```text
//! t_i = 1/2 rho_i + sum_{j != i} A_j T(c_i - c_j; n_i) rho_j + sum_{j near i} C_ij rho_j
//! ```
//!
//! The first sum treats every source as a point force at its centroid: it is what the far-field
//! summation (direct or multipole) computes. `C_ij` corrects it on the sources within
//! `near_ratio` diameters of the target, replacing the point by an accurate integral over the
//! triangle (adaptive quadrature; the principal value in closed form on the target's own
//! triangle, where `r^ . n = 0` leaves only the kernel's odd part). The corrections are 3x3 blocks
//! stored once per operator.

use glam::{DMat3, DVec3};
use rayon::prelude::*;

use super::buckets::Buckets;
use super::fmm::{Fmm, FmmSettings, Target};
use super::kernel::{Kelvin, outer};
use super::lanes::LANES;
use super::point_sums::PointForces;
use super::quadrature::{principal_value_direction, visit_adaptive};
use super::relaxed::cheaper_far_fields;
use super::surface::Surface;

/// How the far field (every source as a point force at its centroid) is summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FarField {
    /// Direct summation below [`FarField::AUTO_THRESHOLD`] triangles, the multipole method with
    /// the fast settings for 1e-4 above (`FmmSettings::for_accuracy(1e-4)`, order 8 with
    /// separation 1: errors of 1e-7 to 1.4e-5 measured, 7.3e-6 on fandisk.obj's centroids). The
    /// collocation itself is accurate to about a percent (the oracles in `tests/bem.rs`), so a
    /// tighter far field changes no stress that matters and costs more per mat-vec (fandisk,
    /// two threads: 0.095 s, against 0.151 s at the 1e-5 settings, 3.7e-6).
    #[default]
    Auto,
    /// Direct summation: O(n^2), exact to round-off.
    Direct,
    /// The fast multipole method: O(n), to the accuracy its settings give.
    Multipole(FmmSettings),
}

impl FarField {
    /// Triangles from which [`FarField::Auto`] uses the multipole method. One traction mat-vec
    /// on two cores (`cargo run --release --example bem_fmm_scaling -- 1000 5000 8000 10000`):
    /// direct 2 ms, 53 ms, 0.12 s and 0.18 s, multipole (default settings) 13 ms, 78 ms,
    /// 0.13 s and 0.17 s (the fast settings of `Auto` a little less). Below the threshold the
    /// direct sum costs no more, is exact, and needs no operators (about 6 s to build, once per
    /// process).
    pub const AUTO_THRESHOLD: usize = 8000;

    /// The multipole settings for a surface of `triangles`, `None` for direct summation.
    pub fn multipole(self, triangles: usize) -> Option<FmmSettings> {
        match self {
            FarField::Direct => None,
            FarField::Auto if triangles < FarField::AUTO_THRESHOLD => None,
            FarField::Auto => Some(FmmSettings::for_accuracy(1e-4)),
            FarField::Multipole(settings) => Some(settings),
        }
    }
}

/// How the operator integrates near sources.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accuracy {
    /// Sources whose centroid lies within this many of their own diameters of a target get an
    /// accurate integral instead of the centroid point (dimensionless, >= 1).
    pub near_ratio: f64,
    /// Acceptance ratio of the adaptive quadrature (see [`super::quadrature::visit_adaptive`])
    /// in the operator's near-field corrections.
    pub quadrature_ratio: f64,
    /// Acceptance ratio of the adaptive quadrature when a solution is evaluated at points
    /// (stress and displacement, [`super::Solution`]). Looser than the operator's by default: a
    /// 7-point piece two of its diameters away errs far below the discretization (measured on a
    /// 9856-triangle block, every vertex's largest principal stress one edge inside moved by
    /// 1e-6 of the peak from ratio 3 to 2, and 2e-5 at 1.5, against percent-level errors of the
    /// piecewise-constant density), and the evaluation at every vertex took 0.14 s instead of
    /// 0.20 s.
    pub evaluation_ratio: f64,
}

impl Default for Accuracy {
    fn default() -> Self {
        Self {
            near_ratio: 4.0,
            quadrature_ratio: 3.0,
            evaluation_ratio: 2.0,
        }
    }
}

/// Near-field corrections in compressed rows: row `i` holds `(j, C_ij)` for `j` in
/// `sources[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default)]
pub struct NearField {
    offsets: Vec<usize>,
    sources: Vec<u32>,
    blocks: Vec<DMat3>,
}

impl NearField {
    /// Number of stored 3x3 blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Adds `sum_j C_ij x_j` to `out[i]` for every row.
    fn apply(&self, x: &[DVec3], out: &mut [DVec3]) {
        out.par_iter_mut().enumerate().for_each(|(i, o)| {
            for k in self.offsets[i]..self.offsets[i + 1] {
                *o += self.blocks[k] * x[self.sources[k] as usize];
            }
        });
    }
}

/// The discrete traction operator `D + A` of one surface and material.
#[derive(Clone, Debug)]
pub struct TractionOperator {
    kelvin: Kelvin,
    near: NearField,
    /// The multipole evaluator over the centroids, when the far field uses it.
    fmm: Option<Fmm>,
    /// Cheaper multipole evaluators for relaxed products, most accurate first, each with the
    /// relative error of the product to assume of it ([`super::relaxed::cheaper_far_fields`]).
    relaxed: Vec<(Fmm, f64)>,
}

impl TractionOperator {
    /// Builds the near-field corrections of `surface` for `kelvin`, and the multipole evaluator
    /// when `far_field` asks for it, with the cheaper ones of relaxed products if `relaxed`.
    pub fn new(surface: &Surface, kelvin: Kelvin, accuracy: Accuracy, far_field: FarField, relaxed: bool) -> Self {
        let neighbours = neighbours_within(surface, accuracy.near_ratio);
        // Flat rows first, then each row's blocks.
        let mut near = NearField {
            offsets: Vec::with_capacity(surface.len() + 1),
            ..NearField::default()
        };
        near.offsets.push(0);
        for row in &neighbours {
            near.sources.extend_from_slice(row);
            near.offsets.push(near.sources.len());
        }
        near.blocks = vec![DMat3::ZERO; near.sources.len()];
        let mut rows: Vec<&mut [DMat3]> = Vec::with_capacity(surface.len());
        let mut rest = near.blocks.as_mut_slice();
        for row in &neighbours {
            let (this, tail) = rest.split_at_mut(row.len());
            rows.push(this);
            rest = tail;
        }
        rows.into_par_iter()
            .enumerate()
            .for_each_init(RowScratch::default, |scratch, (i, out)| {
                corrections(
                    surface,
                    &kelvin,
                    i,
                    &neighbours[i],
                    accuracy.quadrature_ratio,
                    scratch,
                    out,
                )
            });
        let settings = far_field.multipole(surface.len());
        let fmm = settings.map(|settings| Fmm::new(kelvin, surface.centroids(), settings));
        let relaxed = match settings {
            Some(settings) if relaxed => cheaper_far_fields(settings)
                .into_iter()
                .map(|(cheap, error)| (Fmm::new(kelvin, surface.centroids(), cheap), error))
                .collect(),
            _ => Vec::new(),
        };
        Self {
            kelvin,
            near,
            fmm,
            relaxed,
        }
    }

    /// Whether the far field is summed by the multipole method.
    pub fn uses_multipole(&self) -> bool {
        self.fmm.is_some()
    }

    /// The kernels.
    pub fn kelvin(&self) -> &Kelvin {
        &self.kelvin
    }

    /// The near-field corrections.
    pub fn near_field(&self) -> &NearField {
        &self.near
    }

    /// The cheaper far fields relaxed products may use, most accurate first, each with the
    /// relative error of the product to assume of it.
    pub fn relaxed_far_fields(&self) -> &[(Fmm, f64)] {
        &self.relaxed
    }

    /// The block `(i, j)` of `D + A` (dimensionless): the traction at centroid `i` of a unit
    /// density on triangle `j`, as [`TractionOperator::apply`] sums it with the direct far field.
    ///
    /// # Panics
    ///
    /// If `i` or `j` is not a triangle of `surface`, or `surface` is not the one the operator was
    /// built for (a programmer error).
    pub fn entry(&self, surface: &Surface, i: usize, j: usize) -> DMat3 {
        let row = &self.near.sources[self.near.offsets[i]..self.near.offsets[i + 1]];
        let near = match row.binary_search(&(j as u32)) {
            Ok(k) => self.near.blocks[self.near.offsets[i] + k],
            Err(_) => DMat3::ZERO,
        };
        // The far field counts no source at the target's own place (itself, or a duplicate).
        let r = surface.centroids()[i] - surface.centroids()[j];
        if r == DVec3::ZERO {
            return near;
        }
        near + self.kelvin.traction(r, surface.normals()[i]) * surface.areas()[j]
    }

    /// `out = (D + A) rho`: tractions (Pa) at the centroids of the density `rho` (Pa).
    pub fn apply(&self, surface: &Surface, rho: &[DVec3], out: &mut [DVec3]) {
        self.apply_with(surface, rho, out, None);
    }

    /// `out = (D + A) rho` with the far field of the operator (`far` `None`) or relaxed far field
    /// `far` (an index into [`TractionOperator::relaxed_far_fields`]).
    ///
    /// # Panics
    ///
    /// If `far` is not an index into the relaxed far fields (a programmer error).
    pub fn apply_with(&self, surface: &Surface, rho: &[DVec3], out: &mut [DVec3], far: Option<usize>) {
        let charges: Vec<DVec3> = rho.iter().zip(surface.areas()).map(|(r, a)| *r * *a).collect();
        match far.map(|k| &self.relaxed[k].0).or(self.fmm.as_ref()) {
            Some(fmm) => out.copy_from_slice(&fmm.evaluate(&charges, Target::Traction(surface.normals()))),
            None => direct_traction_sum(&self.kelvin, surface.centroids(), surface.normals(), &charges, out),
        }
        self.near.apply(rho, out);
    }
}

/// `out_i = sum_{j != i} T(p_i - p_j; n_i) q_j`: the traction at every point of point forces `q`
/// (N) at the same points, by direct summation (O(n^2), parallel over targets, each target
/// summed in a fixed order so the result does not depend on the thread count). A point at the
/// same place as the target (itself, or a duplicate) adds nothing.
pub fn direct_traction_sum(kelvin: &Kelvin, points: &[DVec3], normals: &[DVec3], charges: &[DVec3], out: &mut [DVec3]) {
    let sources = PointForces::from_slices(points, charges);
    out.par_iter_mut().enumerate().for_each(|(i, o)| {
        *o = kelvin.traction_sum(points[i], normals[i], &sources);
    });
}

/// Per triangle, the triangles (itself included) whose centroid is within `ratio` of their own
/// diameters of its centroid, in ascending order.
fn neighbours_within(surface: &Surface, ratio: f64) -> Vec<Vec<u32>> {
    let centroids = surface.centroids();
    let reach: Vec<f64> = surface.diameters().iter().map(|d| d * ratio).collect();
    let cell = reach.iter().fold(0.0f64, |a, &r| a.max(r));
    let buckets = Buckets::new(centroids, cell);
    (0..centroids.len())
        .into_par_iter()
        .map(|i| {
            let k = buckets.key(centroids[i]);
            let mut found = Vec::new();
            buckets.visit(k.map(|c| c - 1), k.map(|c| c + 1), |j| {
                if (centroids[i] - centroids[j as usize]).length_squared() < reach[j as usize].powi(2) {
                    found.push(j);
                }
            });
            found.sort_unstable();
            found
        })
        .collect()
}

/// Quadrature points of one row's blocks, and each block's (point count, first point, slot).
#[derive(Default)]
struct RowScratch {
    points: Vec<(DVec3, f64)>,
    spans: Vec<(usize, usize, usize)>,
}

/// The correction blocks `C_ij` (dimensionless) of target `i` against each of `sources` into
/// `out`: the accurate integral of `T` over triangle `j` at the centroid of `i`, less the point
/// term the far field already counts (none for `i = j`, whose block is the jump `1/2 I` plus the
/// principal value). The sources' quadrature rules are gathered first, and rules of one length
/// are integrated four at a time ([`Kelvin::traction_integrals`], each with the bits of its own
/// point-by-point sum).
fn corrections(
    surface: &Surface,
    kelvin: &Kelvin,
    i: usize,
    sources: &[u32],
    quadrature_ratio: f64,
    scratch: &mut RowScratch,
    out: &mut [DMat3],
) {
    let (x, n) = (surface.centroids()[i], surface.normals()[i]);
    scratch.points.clear();
    scratch.spans.clear();
    for (slot, &j) in sources.iter().enumerate() {
        let j = j as usize;
        let triangle = surface.triangle(j);
        if i == j {
            // On the flat triangle r^ . n = 0: T = -(1 - 2 nu)(n_l r^_i - n_i r^_l) / (8 pi (1 - nu) r^2).
            let nu = kelvin.poisson();
            let pv = principal_value_direction(&triangle, x);
            let scale = -(1.0 - 2.0 * nu) / (8.0 * core::f64::consts::PI * (1.0 - nu));
            out[slot] = DMat3::IDENTITY * 0.5 + (outer(pv, n) - outer(n, pv)) * scale;
            continue;
        }
        let start = scratch.points.len();
        visit_adaptive(&triangle, x, quadrature_ratio, &mut |y, w| scratch.points.push((y, w)));
        scratch.spans.push((scratch.points.len() - start, start, slot));
    }
    scratch.spans.sort_unstable();
    let points = &scratch.points;
    for group in scratch.spans.chunk_by(|a, b| a.0 == b.0) {
        for quad in group.chunks(LANES) {
            // Lanes past the group's end repeat its last rule; their results are dropped.
            let rules = core::array::from_fn(|l| {
                let (len, start, _) = quad[l.min(quad.len() - 1)];
                &points[start..start + len]
            });
            let integrals = kelvin.traction_integrals(x, n, rules);
            for (integral, &(_, _, slot)) in integrals.iter().zip(quad) {
                let j = sources[slot] as usize;
                out[slot] = *integral - kelvin.traction(x - surface.centroids()[j], n) * surface.areas()[j];
            }
        }
    }
}
