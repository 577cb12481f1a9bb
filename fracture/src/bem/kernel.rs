//! The Kelvin (Navier-Cauchy) fundamental solution and the kernels derived from it.
//!
//! A point force `F` (N) at `y` in an infinite isotropic solid displaces `x` by `G(x, y) F`,
//! with `r = x - y`, `r = |r|`, `r^ = r / r` (Zhu 2015 eq. 6, written here with Poisson's ratio):
//!
//! ```text
//! G_ij = [(3 - 4 nu) delta_ij + r^_i r^_j] / (16 pi mu (1 - nu) r)            (m/N)
//! ```
//!
//! Its stress, by Hooke's law on the gradient, for a unit force along `l`:
//!
//! ```text
//! S_lij = -[(1 - 2 nu)(delta_il r^_j + delta_jl r^_i - delta_ij r^_l) + 3 r^_i r^_j r^_l]
//!         / (8 pi (1 - nu) r^2)                                                 (1/m^2)
//! ```
//!
//! and the traction on a plane of unit normal `n` at `x` is `T_il = S_lij n_j`:
//!
//! ```text
//! T_il = -[(r^ . n)((1 - 2 nu) delta_il + 3 r^_i r^_l) + (1 - 2 nu)(n_l r^_i - n_i r^_l)]
//!        / (8 pi (1 - nu) r^2)
//! ```
//!
//! (`t = T F`). These are the textbook forms (Brebbia and Dominguez, "Boundary Elements", ch. 5),
//! checked in the tests against finite differences of `G` and against equilibrium: the traction
//! over any closed surface around the force is `-F`. Zhu's eq. 6 writes `G` with the Lame
//! parameters; `(lambda + mu) / (lambda + 2 mu) = 1 / (2 (1 - nu))` makes the two the same.

use core::f64::consts::PI;

use glam::{DMat3, DVec3};

use super::material::Elastic;

/// The Kelvin kernels of one material, with their constant factors computed once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kelvin {
    /// Poisson's ratio.
    nu: f64,
    /// `1 / (16 pi mu (1 - nu))`, m/N.
    displacement_scale: f64,
    /// `1 / (8 pi (1 - nu))`.
    stress_scale: f64,
}

impl Kelvin {
    /// The kernels of `material`.
    pub fn new(material: &Elastic) -> Self {
        let nu = material.poisson();
        Self {
            nu,
            displacement_scale: 1.0 / (16.0 * PI * material.shear() * (1.0 - nu)),
            stress_scale: 1.0 / (8.0 * PI * (1.0 - nu)),
        }
    }

    /// Poisson's ratio the kernels were built for.
    pub fn poisson(&self) -> f64 {
        self.nu
    }

    /// Shear modulus the kernels were built for, Pa (`G` scales as its inverse).
    pub fn shear(&self) -> f64 {
        1.0 / (16.0 * PI * (1.0 - self.nu) * self.displacement_scale)
    }

    /// The factor `1 / (16 pi mu (1 - nu))` of `G`, m/N.
    pub(super) fn displacement_scale(&self) -> f64 {
        self.displacement_scale
    }

    /// The factor `1 / (8 pi (1 - nu))` of `S` and `T`.
    pub(super) fn stress_scale(&self) -> f64 {
        self.stress_scale
    }

    /// The kernels of the same Poisson's ratio and a shear modulus of 1 Pa.
    pub fn unit_shear(&self) -> Self {
        Self {
            displacement_scale: 1.0 / (16.0 * PI * (1.0 - self.nu)),
            ..*self
        }
    }

    /// `G(x, y)` for `r = x - y` (m/N): displacement at `x` per unit force at `y`. Singular at
    /// `r = 0` (returns non-finite values there; callers integrate around it).
    #[inline]
    pub fn displacement(&self, r: DVec3) -> DMat3 {
        let inv = 1.0 / r.length();
        let d = r * inv;
        let scale = self.displacement_scale * inv;
        let diagonal = (3.0 - 4.0 * self.nu) * scale;
        outer(d, d * scale) + DMat3::from_diagonal(DVec3::splat(diagonal))
    }

    /// The traction `T(x, y)` (1/m^2) on the plane of unit normal `n` at `x`: `t = T F` is the
    /// traction (Pa) a unit force at `y` causes there.
    #[inline]
    pub fn traction(&self, r: DVec3, n: DVec3) -> DMat3 {
        let inv2 = 1.0 / r.length_squared();
        let d = r * inv2.sqrt();
        let a = 1.0 - 2.0 * self.nu;
        let dn = d.dot(n);
        let s = -self.stress_scale * inv2;
        // Column l of T is the traction of a unit force along l.
        let symmetric = outer(d, d * (3.0 * dn * s)) + DMat3::from_diagonal(DVec3::splat(a * dn * s));
        // (n_l r^_i - n_i r^_l): the antisymmetric part, column l = n_l r^ - r^_l n.
        symmetric + (outer(d, n) - outer(n, d)) * (a * s)
    }

    /// `G(r) f` (m) without forming the matrix: `[(3 - 4 nu) f + r^ (r^ . f)] / (16 pi mu (1 - nu) r)`.
    #[inline]
    pub fn displacement_times(&self, r: DVec3, f: DVec3) -> DVec3 {
        let inv = 1.0 / r.length();
        let d = r * inv;
        (f * (3.0 - 4.0 * self.nu) + d * d.dot(f)) * (self.displacement_scale * inv)
    }

    /// `T(r; n) f` (Pa) without forming the matrix:
    /// `-[(r^.n)((1 - 2 nu) f + 3 r^ (r^.f)) + (1 - 2 nu)((n.f) r^ - (r^.f) n)] / (8 pi (1 - nu) r^2)`.
    #[inline]
    pub fn traction_times(&self, r: DVec3, n: DVec3, f: DVec3) -> DVec3 {
        let inv2 = 1.0 / r.length_squared();
        let d = r * inv2.sqrt();
        let a = 1.0 - 2.0 * self.nu;
        let (dn, df, nf) = (d.dot(n), d.dot(f), n.dot(f));
        (f * (a * dn) + d * (3.0 * dn * df + a * nf) - n * (a * df)) * (-self.stress_scale * inv2)
    }

    /// The stress `sigma(x)` (Pa) of a force `f` (N) at `y`, `r = x - y`: `sigma_ij = S_lij f_l`.
    #[inline]
    pub fn stress(&self, r: DVec3, f: DVec3) -> DMat3 {
        let inv2 = 1.0 / r.length_squared();
        let d = r * inv2.sqrt();
        let a = 1.0 - 2.0 * self.nu;
        let s = -self.stress_scale * inv2;
        let df = d.dot(f);
        // (1 - 2 nu)(f_i r^_j + f_j r^_i - delta_ij r^.f) + 3 r^_i r^_j (r^.f)
        (outer(f, d) + outer(d, f)) * (a * s) + outer(d, d * (3.0 * df * s))
            - DMat3::from_diagonal(DVec3::splat(a * df * s))
    }
}

/// The outer product `a b^T` (column j is `a b_j`).
#[inline]
pub(crate) fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bem::material::Elastic;

    fn kelvin() -> (Elastic, Kelvin) {
        let m = Elastic::try_new(3.0e9, 0.27).unwrap();
        (m, Kelvin::new(&m))
    }

    /// Displacement gradient of `G f` at `x` (source at the origin) by central differences.
    fn gradient_fd(k: &Kelvin, x: DVec3, f: DVec3) -> DMat3 {
        let h = 1e-5 * x.length();
        let mut cols = [DVec3::ZERO; 3];
        for (j, col) in cols.iter_mut().enumerate() {
            let e = DVec3::AXES[j] * h;
            *col = (k.displacement(x + e) * f - k.displacement(x - e) * f) / (2.0 * h);
        }
        DMat3::from_cols(cols[0], cols[1], cols[2])
    }

    #[test]
    fn bem_kernel_stress_is_hookes_law_on_the_displacement_gradient() {
        let (m, k) = kelvin();
        for (x, f) in [
            (DVec3::new(0.3, -0.2, 0.5), DVec3::new(1.0, 2.0, -0.5)),
            (DVec3::new(-1.0, 0.1, 0.05), DVec3::new(0.0, 0.0, 3.0)),
        ] {
            let expected = m.stress_of_gradient(gradient_fd(&k, x, f));
            let got = k.stress(x, f);
            let scale = expected.to_cols_array().iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (a, b) in got.to_cols_array().iter().zip(expected.to_cols_array()) {
                assert!((a - b).abs() < 1e-7 * scale, "{got:?} vs {expected:?}");
            }
        }
    }

    #[test]
    fn bem_kernel_traction_is_the_stress_on_the_plane() {
        let (_, k) = kelvin();
        let r = DVec3::new(0.4, -0.7, 0.2);
        let n = DVec3::new(0.2, 0.5, -1.0).normalize();
        let f = DVec3::new(-1.0, 0.5, 2.0);
        let t = k.traction(r, n) * f;
        let expected = k.stress(r, f) * n;
        assert!((t - expected).length() < 1e-12 * expected.length());
    }

    #[test]
    fn bem_kernel_products_match_the_matrices() {
        let (_, k) = kelvin();
        let (r, n, f) = (
            DVec3::new(0.3, -0.8, 0.1),
            DVec3::new(0.6, 0.0, 0.8),
            DVec3::new(-1.0, 2.0, 0.5),
        );
        let t = k.traction(r, n) * f;
        assert!((k.traction_times(r, n, f) - t).length() < 1e-13 * t.length());
        let u = k.displacement(r) * f;
        assert!((k.displacement_times(r, f) - u).length() < 1e-13 * u.length());
    }

    #[test]
    fn bem_kernel_displacement_is_symmetric_and_decays_as_one_over_r() {
        let (m, k) = kelvin();
        let r = DVec3::new(0.0, 0.0, 2.0);
        let g = k.displacement(r);
        assert!((g - g.transpose()).to_cols_array().iter().all(|v| v.abs() < 1e-30));
        // Along the line of a force: (3 - 4 nu + 1) / (16 pi mu (1 - nu) r).
        let nu = m.poisson();
        let along = (4.0 - 4.0 * nu) / (16.0 * PI * m.shear() * (1.0 - nu) * 2.0);
        assert!((g.z_axis.z - along).abs() < 1e-12 * along);
        let far = k.displacement(r * 10.0);
        assert!((far.z_axis.z * 10.0 - g.z_axis.z).abs() < 1e-12 * along);
    }
}
