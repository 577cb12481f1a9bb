//! Relaxed products of the traction operator: cheaper multipole far fields for the late
//! iterations of a solve, where the residual is small and a product only has to be accurate to
//! about the tolerance over the residual ([`super::bicgstab`] says why, and how the iteration
//! keeps its tolerance for the exact operator whatever the cheap products do).
//!
//! A product allowed a relative error `e` takes the cheapest far field whose error is at most
//! `e`. The errors are first assumed from measurements ([`RELAXED_ORDERS`]), then checked in each
//! solve: the first product a cheaper far field would take is also taken with the operator's
//! own, and the error measured on it replaces the assumed one when larger. A far field that
//! is worse on some surface than on the measured ones (small leaves, say, which put more of the
//! sum through the translations) is so used only where its real error is allowed.

use glam::DVec3;

use super::bicgstab::Product;
use super::fmm::FmmSettings;
use super::operator::TractionOperator;
use super::surface::Surface;

/// Multipole orders of the relaxed far fields, with the relative error of the whole traction
/// product to assume of each (separation 1), in the 2-norm the relaxation bound is stated in.
/// Measured against the direct product on a smooth density (fandisk.obj, 12946 triangles;
/// spot.obj, 5856; leaves of 256 points):
///
/// | order | 2-norm, fandisk | 2-norm, spot | largest entry, fandisk | largest entry, spot | product, fandisk |
/// |-------|-----------------|--------------|------------------------|---------------------|------------------|
/// | 8 (the default far field) | 2.9e-6 | 1.3e-6 | 7.3e-6 | 5.0e-6 | 0.126 s |
/// | 7     | 1.3e-5          | 3.3e-6       | 7.2e-5                 | 1.1e-5              | 0.088 s          |
/// | 6     | 9.2e-5          | 2.7e-5       | 3.1e-4                 | 1.2e-4              | 0.061 s          |
/// | 5     | 2.0e-2          | 5.6e-3       | 6.8e-2                 | 2.0e-2              | 0.046 s          |
/// | 4     | 1.3e-2          | 1.3e-3       | 4.2e-2                 | 4.5e-3              | 0.038 s          |
///
/// (largest entry: the largest error relative to the largest exact entry; two threads; the near
/// field, the same in all, is 0.013 s of each product; since these were measured the passes
/// above level 2 were dropped and the transforms run in lanes: order 8 now takes 0.095 s and
/// order 6 0.053 s). On the iterates of a solve the errors
/// are larger (fandisk: order 7 1.2e-4, order 6 6.2e-4, order 4 5.5e-2), which the check in each
/// solve finds. Only order 6 is used. Whole solves to 1e-8 (BiCGSTAB on the completed operator,
/// two threads, pulls along two directions, order 8 and separation 1 as the exact far field;
/// before the warm-up below), none relaxed, order 6, orders 6 and 4:
///
/// | mesh | none | order 6 | orders 6 and 4 |
/// |------|------|---------|----------------|
/// | fandisk, x | 7.26 s, 32 iterations | 6.07 s, 32 | 7.77 s, 47 |
/// | fandisk, oblique | 7.07 s, 31 | 6.80 s, 34 | 6.96 s, 37 |
/// | homer.obj (12000), x | 7.10 s, 34 | 6.39 s, 36 | 8.20 s, 50 |
/// | homer, oblique | 7.37 s, 35 | 6.58 s, 36 | 6.74 s, 38 |
/// | spot, x | 1.58 s, 18 | 1.60 s, 22 | 1.99 s, 30 |
/// | spot, oblique | 1.74 s, 20 | 1.53 s, 20 | 1.54 s, 20 |
///
/// Order 4, five percent off, perturbs BiCGSTAB (not a minimal-residual method) enough to cost
/// more iterations than its cheaper products save; order 7 is used too late to matter (from a
/// residual of about 1e-4, where order 6 takes over soon after).
pub const RELAXED_ORDERS: [(usize, f64); 1] = [(6, 1e-4)];

/// Relative residual to which a solve with a cheaper far field first runs on it alone (the
/// warm-up of [`super::bicgstab`]), before the relaxed iteration with the operator's own far
/// field goes on from there. Measured on whole solves of [`super::ElasticBody::solve`] to 1e-8
/// (two threads; pulls along x and an oblique direction; before the preconditioner of
/// [`super::schwarz`], which takes fandisk along x to 27 iterations, 13 of them warming up, and
/// 4.51 s with the preparation), relaxed products alone against a warm-up to 1e-4 first:
///
/// | mesh | relaxed alone | warm-up to 1e-4, then relaxed |
/// |------|---------------|-------------------------------|
/// | fandisk.obj, x | 5.37 s, 32 iterations | 4.53 s, 39 (18 warming up) |
/// | fandisk, oblique | 5.93 s, 34 | 4.85 s, 39 (18) |
/// | homer.obj, x | 6.02 s, 36 | 5.80 s, 38 (15) |
/// | homer, oblique | 6.20 s, 36 | 6.29 s, 41 (16) |
///
/// A first trial outside the solve (fandisk, the pull's tractions alone, the warm-up on a body
/// of its own) tried other settings, none better than 1e-4 on order 6 (4.35 s): warming up to
/// 1e-3, 3e-4 or 1e-5 (4.38, 4.45, 4.70 s), on order 4 to 1e-3 (4.44 s), on order 7 (4.52 s);
/// and the round after the warm-up needs its relaxation (6.07 s with every product exact; homer
/// 6.24 s against 5.86 s). On spot.obj (multipole far field forced) it made no difference (1.17
/// and 1.22 s against 1.28 and 1.21 s).
pub const WARM_UP: f64 = 1e-4;

/// The cheaper far fields a solve may use beside the multipole method at `settings`, most
/// accurate first, each with the relative error to assume of it: the [`RELAXED_ORDERS`] of lower
/// order than `settings`, at separation 1 and the same leaves.
pub fn cheaper_far_fields(settings: FmmSettings) -> Vec<(FmmSettings, f64)> {
    RELAXED_ORDERS
        .iter()
        .filter(|(order, _)| *order < settings.order)
        .map(|&(order, error)| {
            let cheap = FmmSettings {
                order,
                separation: 1,
                ..settings
            };
            (cheap, error)
        })
        .collect()
}

/// The products of one solve: the operator's, or a cheaper far field's within the error allowed.
pub struct RelaxedProducts<'a> {
    operator: &'a TractionOperator,
    surface: &'a Surface,
    /// Relative error of each cheaper far field: assumed, then as checked.
    errors: Vec<f64>,
    /// Whether each has been checked in this solve.
    checked: Vec<bool>,
    scratch: Vec<DVec3>,
}

impl<'a> RelaxedProducts<'a> {
    /// The products of `operator` on `surface`, no cheaper far field checked yet.
    pub fn new(operator: &'a TractionOperator, surface: &'a Surface) -> Self {
        let errors: Vec<f64> = operator.relaxed_far_fields().iter().map(|(_, e)| *e).collect();
        Self {
            operator,
            surface,
            checked: vec![false; errors.len()],
            errors,
            scratch: Vec::new(),
        }
    }

    /// Whether there is a cheaper far field to relax to.
    pub fn relaxes(&self) -> bool {
        !self.errors.is_empty()
    }

    /// The relative error of each cheaper far field, most accurate first: as assumed, or as
    /// checked when that was larger.
    pub fn errors(&self) -> &[f64] {
        &self.errors
    }

    /// `out = (D + A) rho` to a relative error of at most `allowed` beyond the operator's own.
    pub fn apply(&mut self, rho: &[DVec3], out: &mut [DVec3], allowed: f64) -> Product {
        let Some(k) = (0..self.errors.len()).rev().find(|&k| self.errors[k] <= allowed) else {
            self.operator.apply_with(self.surface, rho, out, None);
            return Product::Exact;
        };
        if self.checked[k] {
            self.operator.apply_with(self.surface, rho, out, Some(k));
            return Product::Relaxed;
        }
        // Its first use: the exact product, and the cheap one beside it to measure its error.
        self.operator.apply_with(self.surface, rho, out, None);
        self.scratch.resize(out.len(), DVec3::ZERO);
        self.operator.apply_with(self.surface, rho, &mut self.scratch, Some(k));
        let size: f64 = out.iter().map(|v| v.length_squared()).sum::<f64>().sqrt();
        let error: f64 = out
            .iter()
            .zip(&self.scratch)
            .map(|(a, b)| (*a - *b).length_squared())
            .sum::<f64>()
            .sqrt();
        if size > 0.0 {
            self.errors[k] = self.errors[k].max(error / size);
        }
        self.checked[k] = true;
        Product::Exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::kernel::Kelvin;
    use crate::bem::material::Elastic;
    use crate::bem::operator::{Accuracy, FarField};
    use shatter_collision::TriMesh;

    fn relative_error(a: &[DVec3], b: &[DVec3]) -> f64 {
        let size: f64 = b.iter().map(|v| v.length_squared()).sum::<f64>().sqrt();
        a.iter()
            .zip(b)
            .map(|(x, y)| (*x - *y).length_squared())
            .sum::<f64>()
            .sqrt()
            / size
    }

    /// A cheap far field worse than assumed: the first product allowed it is exact and measures
    /// it, and its error on that product is then what the choice assumes: a product allowed less
    /// stays exact, one allowed that much takes it (leaves of eight points, most of the sum
    /// through the translations; measured 2.3e-5).
    #[test]
    fn bem_relaxed_products_check_the_error_they_assume() {
        let surface = Surface::try_new(TriMesh::icosphere(1.0, 3)).unwrap();
        let settings = FmmSettings {
            leaf_size: 8,
            ..FmmSettings::default()
        };
        let kelvin = Kelvin::new(&Elastic::try_new(20e9, 0.25).unwrap());
        let operator = TractionOperator::new(
            &surface,
            kelvin,
            Accuracy::default(),
            FarField::Multipole(settings),
            true,
        );
        assert_eq!(operator.relaxed_far_fields().len(), 1);
        // A rough density, as the late iterates of a solve are.
        let mut rng = shatter_integrators::SplitMix64::new(9);
        let rho: Vec<DVec3> = (0..surface.len()).map(|_| rng.unit_vector()).collect();
        let mut exact = vec![DVec3::ZERO; rho.len()];
        operator.apply(&surface, &rho, &mut exact);
        let mut cheap = vec![DVec3::ZERO; rho.len()];
        operator.apply_with(&surface, &rho, &mut cheap, Some(0));
        let real = relative_error(&cheap, &exact);
        println!("order 6 on leaves of eight: {real:.2e}");
        assert!(real > 1e-6, "{real}");

        let mut products = RelaxedProducts::new(&operator, &surface);
        assert_eq!(products.errors(), [RELAXED_ORDERS[0].1]);
        // Assumed better than it is.
        products.errors[0] = 1e-7;
        let mut out = vec![DVec3::ZERO; rho.len()];
        assert_eq!(products.apply(&rho, &mut out, 1.0), Product::Exact, "the check");
        assert!(out == exact, "the exact product");
        assert_eq!(products.errors(), [real]);
        assert_eq!(products.apply(&rho, &mut out, 0.5 * real), Product::Exact);
        assert!(out == exact, "the exact product");
        assert_eq!(products.apply(&rho, &mut out, real), Product::Relaxed);
        assert!(out == cheap, "the order-6 product");
        // Measured better than assumed: the assumption stays.
        let mut products = RelaxedProducts::new(&operator, &surface);
        assert_eq!(products.apply(&rho, &mut out, 1.0), Product::Exact);
        assert_eq!(products.errors(), [RELAXED_ORDERS[0].1.max(real)]);
    }
}
