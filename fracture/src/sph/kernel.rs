//! The smoothing kernel: Wendland's C2 function in three dimensions.
//!
//! `W(r, h) = 21 / (2 pi h^3) (1 - q)^4 (1 + 4 q)`, `q = r / h <= 1`: compact support `h`,
//! positive Fourier transform (no pairing of particles). Its normalisation drops out of the
//! corrected gradient ([`super::stencil`]) but is kept so `W` integrates to one.

use std::f64::consts::PI;

use glam::DVec3;

/// `W(|d|, h)`, 1/m^3.
pub fn kernel(d: DVec3, h: f64) -> f64 {
    let q = d.length() / h;
    if q >= 1.0 {
        return 0.0;
    }
    21.0 / (2.0 * PI * h * h * h) * (1.0 - q).powi(4) * (1.0 + 4.0 * q)
}

/// The gradient of `W` with respect to the first point, `d = x_i - x_j`, 1/m^4.
pub fn kernel_gradient(d: DVec3, h: f64) -> DVec3 {
    let r = d.length();
    let q = r / h;
    if q >= 1.0 || r == 0.0 {
        return DVec3::ZERO;
    }
    let dw_dr = 21.0 / (2.0 * PI * h * h * h) * (-20.0 * q * (1.0 - q).powi(3)) / h;
    d * (dw_dr / r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sph_kernel_integrates_to_one_and_its_gradient_is_its_derivative() {
        let h = 0.3;
        // Midpoint rule over the support's bounding cube.
        let n = 60;
        let step = 2.0 * h / n as f64;
        let mut total = 0.0;
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let d = DVec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5) * step - DVec3::splat(h);
                    total += kernel(d, h) * step.powi(3);
                }
            }
        }
        assert!((total - 1.0).abs() < 1e-3, "{total}");
        let d = DVec3::new(0.05, -0.1, 0.07);
        let e = 1e-7;
        for axis in 0..3 {
            let mut step = DVec3::ZERO;
            step[axis] = e;
            let numeric = (kernel(d + step, h) - kernel(d - step, h)) / (2.0 * e);
            let analytic = kernel_gradient(d, h)[axis];
            assert!(
                (numeric - analytic).abs() < 1e-6 * analytic.abs().max(1.0),
                "{numeric} vs {analytic}"
            );
        }
        assert_eq!(kernel(DVec3::X * h, h), 0.0);
        assert_eq!(kernel_gradient(DVec3::X * 1.5 * h, h), DVec3::ZERO);
    }
}
