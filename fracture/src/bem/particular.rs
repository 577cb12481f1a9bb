//! A particular solution for a body force linear in position.
//!
//! The single-layer potential solves the homogeneous Navier-Cauchy equation; a body force `f(x)`
//! (N/m^3) needs a particular displacement `u_p` with `mu lap u_p + (lambda + mu) grad div u_p =
//! -f`. Zhu 2015 eq. 4 writes it as a Newton potential over the volume; for the forces a rigid body
//! meets (gravity, and the d'Alembert force `-rho (a + alpha x r + w x (w x r))` of its rigid
//! acceleration) `f` is linear in `r = x - c` (`c` the centre of mass), and a polynomial solves the
//! equation exactly, with no volume integral:
//!
//! ```text
//! f(r) = b + S r + w x r          (S symmetric, w the axial vector of the antisymmetric part)
//! u_p  = k0 ((b . r) r - |r|^2 b / 2) + a |r|^2 S r + g tr(S) |r|^2 r + a' |r|^2 (w x r)
//! k0 = -(1 - 2 nu) / E,  a = -1 / (14 mu + 4 lambda),  g = -a (lambda + mu) / (5 (lambda + 2 mu)),
//! a' = -1 / (10 mu)
//! ```
//!
//! Each term is checked by substitution (`lap(|r|^2 S r) = 10 S r`, `grad div(|r|^2 S r) = 4 S r +
//! 2 tr(S) r`, `lap(|r|^2 r) = grad div(|r|^2 r) = 10 r`, `lap(|r|^2 (w x r)) = 10 w x r` with zero
//! divergence), and in the tests by finite differences of its stress. The constant term's stress
//! is `-(b . r) I` (Zhu's particular solution for gravity, exact).

use glam::{DMat3, DVec3};

use super::kernel::outer;
use super::material::Elastic;

/// The body force `f(x) = b + B (x - c)` (N/m^3) and its particular solution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particular {
    material: Elastic,
    /// Origin of `r`, m.
    center: DVec3,
    /// Constant part `b`, N/m^3.
    constant: DVec3,
    /// Symmetric part of `B`, N/m^4.
    symmetric: DMat3,
    /// Axial vector of the antisymmetric part of `B` (`B_a r = w x r`), N/m^4.
    axial: DVec3,
}

impl Particular {
    /// The particular solution of `f(x) = constant + linear (x - center)`.
    pub fn new(material: Elastic, center: DVec3, constant: DVec3, linear: DMat3) -> Self {
        let symmetric = (linear + linear.transpose()) * 0.5;
        let anti = (linear - linear.transpose()) * 0.5;
        // anti r = w x r: anti[(2,1)] = w_x, anti[(0,2)] = w_y, anti[(1,0)] = w_z.
        let axial = DVec3::new(anti.y_axis.z, anti.z_axis.x, anti.x_axis.y);
        Self {
            material,
            center,
            constant,
            symmetric,
            axial,
        }
    }

    /// No body force.
    pub fn none(material: Elastic) -> Self {
        Self::new(material, DVec3::ZERO, DVec3::ZERO, DMat3::ZERO)
    }

    /// The body force at `x`, N/m^3.
    pub fn force(&self, x: DVec3) -> DVec3 {
        let r = x - self.center;
        self.constant + self.symmetric * r + self.axial.cross(r)
    }

    fn coefficients(&self) -> (f64, f64, f64, f64) {
        let (mu, lambda) = (self.material.shear(), self.material.lambda());
        let k0 = -(1.0 - 2.0 * self.material.poisson()) / self.material.young();
        let a = -1.0 / (14.0 * mu + 4.0 * lambda);
        let g = -a * (lambda + mu) / (5.0 * (lambda + 2.0 * mu));
        (k0, a, g, -1.0 / (10.0 * mu))
    }

    /// The particular displacement at `x`, m.
    pub fn displacement(&self, x: DVec3) -> DVec3 {
        let r = x - self.center;
        let (k0, a, g, a_rot) = self.coefficients();
        let r2 = r.length_squared();
        let b = self.constant;
        let trace = self.symmetric.x_axis.x + self.symmetric.y_axis.y + self.symmetric.z_axis.z;
        (r * b.dot(r) - b * (0.5 * r2)) * k0
            + self.symmetric * r * (a * r2)
            + r * (g * trace * r2)
            + self.axial.cross(r) * (a_rot * r2)
    }

    /// The gradient of the particular displacement at `x` (`[(i, j)] = d u_i / d x_j`).
    pub fn gradient(&self, x: DVec3) -> DMat3 {
        let r = x - self.center;
        let (k0, a, g, a_rot) = self.coefficients();
        let r2 = r.length_squared();
        let b = self.constant;
        let trace = self.symmetric.x_axis.x + self.symmetric.y_axis.y + self.symmetric.z_axis.z;
        let cross = DMat3::from_cols(
            self.axial.cross(DVec3::X),
            self.axial.cross(DVec3::Y),
            self.axial.cross(DVec3::Z),
        );
        (outer(r, b) - outer(b, r) + DMat3::IDENTITY * b.dot(r)) * k0
            + (outer(self.symmetric * r, r) * 2.0 + self.symmetric * r2) * a
            + (outer(r, r) * 2.0 + DMat3::IDENTITY * r2) * (g * trace)
            + (outer(self.axial.cross(r), r) * 2.0 + cross * r2) * a_rot
    }

    /// The particular stress at `x`, Pa.
    pub fn stress(&self, x: DVec3) -> DMat3 {
        self.material.stress_of_gradient(self.gradient(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Particular {
        let material = Elastic::try_new(5.0e9, 0.22).unwrap();
        let linear = DMat3::from_cols(
            DVec3::new(3.0, -1.0, 2.0),
            DVec3::new(0.5, -4.0, 1.0),
            DVec3::new(-2.0, 7.0, 1.5),
        ) * 1e3;
        Particular::new(
            material,
            DVec3::new(0.1, 0.2, -0.3),
            DVec3::new(100.0, -2e4, 50.0),
            linear,
        )
    }

    #[test]
    fn bem_particular_stress_balances_the_body_force() {
        // div sigma_p + f = 0, by central differences of the stress.
        let p = sample();
        let h = 1e-4;
        for x in [DVec3::new(0.3, -0.1, 0.2), DVec3::new(-0.5, 0.4, 0.9)] {
            let mut div = DVec3::ZERO;
            for (j, e) in DVec3::AXES.iter().enumerate() {
                let d = (p.stress(x + *e * h) - p.stress(x - *e * h)) * (0.5 / h);
                div += DVec3::new(d.row(0)[j], d.row(1)[j], d.row(2)[j]);
            }
            let f = p.force(x);
            assert!((div + f).length() < 1e-6 * f.length(), "{div:?} vs {f:?}");
        }
    }

    #[test]
    fn bem_particular_gradient_is_the_derivative_of_the_displacement() {
        let p = sample();
        let x = DVec3::new(0.2, 0.7, -0.4);
        let h = 1e-5;
        let g = p.gradient(x);
        for (j, e) in DVec3::AXES.iter().enumerate() {
            let fd = (p.displacement(x + *e * h) - p.displacement(x - *e * h)) / (2.0 * h);
            assert!(
                (fd - g.col(j)).length() < 1e-7 * g.col(j).length().max(1e-12),
                "{fd:?} vs {:?}",
                g.col(j)
            );
        }
    }

    #[test]
    fn bem_particular_gravity_stress_is_minus_b_dot_r_identity() {
        let material = Elastic::try_new(5.0e9, 0.22).unwrap();
        let b = DVec3::new(0.0, 0.0, -2.4e4);
        let p = Particular::new(material, DVec3::ZERO, b, DMat3::ZERO);
        let x = DVec3::new(0.3, 0.1, 2.0);
        let s = p.stress(x);
        let expected = DMat3::IDENTITY * -b.dot(x);
        for (a, e) in s.to_cols_array().iter().zip(expected.to_cols_array()) {
            assert!((a - e).abs() < 1e-9 * b.length());
        }
    }
}
