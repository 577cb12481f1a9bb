//! Discrete Fourier transforms of real 3D grids of side `N` (the zero-padded equivalent-surface
//! lattices of the multipole-to-local convolution), kept as half spectra (`N x N x (N/2 + 1)`
//! frequencies, the rest following from Hermitian symmetry).
//!
//! The sides are small (twice the surface order: 10 to 16), so each 1D transform is a dense
//! product with a precomputed table of twiddle factors rather than a radix-2 FFT: no
//! power-of-two restriction, and at these sizes the difference in operation count is a factor of
//! about two, paid once per box per level.

use core::f64::consts::TAU;

/// A half spectrum: real and imaginary parts, index `(x * N + y) * (N/2 + 1) + z`.
#[derive(Clone, Debug, PartialEq)]
pub struct Spectrum {
    /// Real parts.
    pub re: Vec<f64>,
    /// Imaginary parts.
    pub im: Vec<f64>,
}

/// Transforms of one grid side.
#[derive(Clone, Debug)]
pub struct Fourier {
    n: usize,
    /// `cos(2 pi k j / N)` and `sin(2 pi k j / N)`, index `k * N + j`.
    cos: Vec<f64>,
    sin: Vec<f64>,
}

impl Fourier {
    /// Transforms of side `n` (even, >= 2).
    pub fn new(n: usize) -> Self {
        let mut cos = vec![0.0; n * n];
        let mut sin = vec![0.0; n * n];
        for k in 0..n {
            for j in 0..n {
                let angle = TAU * ((k * j) % n) as f64 / n as f64;
                cos[k * n + j] = angle.cos();
                sin[k * n + j] = angle.sin();
            }
        }
        Self { n, cos, sin }
    }

    /// Grid side.
    pub fn side(&self) -> usize {
        self.n
    }

    /// Frequencies of a half spectrum.
    pub fn spectrum_len(&self) -> usize {
        self.n * self.n * (self.n / 2 + 1)
    }

    /// The half spectrum `X(k) = sum_j x(j) e^{-2 pi i k . j / N}` of the real grid `x`
    /// (index `(x * N + y) * N + z`).
    pub fn forward(&self, grid: &[f64]) -> Spectrum {
        let n = self.n;
        let h = n / 2 + 1;
        let mut re = vec![0.0; n * n * h];
        let mut im = vec![0.0; n * n * h];
        // Along z, real to half complex; lines that are all zero stay zero.
        for line in 0..n * n {
            let x = &grid[line * n..(line + 1) * n];
            if x.iter().all(|v| *v == 0.0) {
                continue;
            }
            for k in 0..h {
                let (c, s) = (&self.cos[k * n..(k + 1) * n], &self.sin[k * n..(k + 1) * n]);
                let (mut a, mut b) = (0.0, 0.0);
                for j in 0..n {
                    a += x[j] * c[j];
                    b -= x[j] * s[j];
                }
                re[line * h + k] = a;
                im[line * h + k] = b;
            }
        }
        let mut spectrum = Spectrum { re, im };
        self.complex_pass(&mut spectrum, n * h, h, -1.0); // along y
        self.complex_pass(&mut spectrum, h, n * h, -1.0); // along x: stride n*h
        spectrum
    }

    /// The real grid whose half spectrum is `spectrum` (the inverse of [`Fourier::forward`],
    /// including the `1 / N^3`).
    pub fn inverse(&self, mut spectrum: Spectrum) -> Vec<f64> {
        let n = self.n;
        let h = n / 2 + 1;
        self.complex_pass(&mut spectrum, h, n * h, 1.0);
        self.complex_pass(&mut spectrum, n * h, h, 1.0);
        let scale = 1.0 / (n * n * n) as f64;
        let mut grid = vec![0.0; n * n * n];
        for line in 0..n * n {
            let (re, im) = (
                &spectrum.re[line * h..(line + 1) * h],
                &spectrum.im[line * h..(line + 1) * h],
            );
            for j in 0..n {
                // x(j) = X_0 + (-1)^j X_{N/2} + 2 sum_{0<k<N/2} Re(X_k e^{2 pi i k j / N}).
                let mut sum = re[0] + if j % 2 == 0 { re[n / 2] } else { -re[n / 2] };
                for k in 1..n / 2 {
                    sum += 2.0 * (re[k] * self.cos[k * n + j] - im[k] * self.sin[k * n + j]);
                }
                grid[line * n + j] = sum * scale;
            }
        }
        grid
    }

    /// Complex DFT of every line along one axis: element `i` of a line at `start + i * stride`;
    /// lines start at every index whose coordinate along the axis is 0. `sign` is -1 forward,
    /// +1 inverse.
    fn complex_pass(&self, s: &mut Spectrum, stride: usize, inner: usize, sign: f64) {
        let n = self.n;
        let total = s.re.len();
        let block = stride * n;
        let (mut line_re, mut line_im) = (vec![0.0; n], vec![0.0; n]);
        for base in (0..total).step_by(block) {
            for offset in 0..stride.min(block) {
                let _ = inner;
                let start = base + offset;
                if start >= total {
                    break;
                }
                let mut zero = true;
                for i in 0..n {
                    line_re[i] = s.re[start + i * stride];
                    line_im[i] = s.im[start + i * stride];
                    zero &= line_re[i] == 0.0 && line_im[i] == 0.0;
                }
                if zero {
                    continue;
                }
                for k in 0..n {
                    let (c, sn) = (&self.cos[k * n..(k + 1) * n], &self.sin[k * n..(k + 1) * n]);
                    let (mut a, mut b) = (0.0, 0.0);
                    for j in 0..n {
                        // (re + i im)(cos + i sign sin)
                        a += line_re[j] * c[j] - sign * line_im[j] * sn[j];
                        b += line_im[j] * c[j] + sign * line_re[j] * sn[j];
                    }
                    s.re[start + k * stride] = a;
                    s.im[start + k * stride] = b;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bem_fmm_fourier_inverts_and_convolves() {
        let n = 10;
        let f = Fourier::new(n);
        let grid: Vec<f64> = (0..n * n * n).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect();
        let back = f.inverse(f.forward(&grid));
        for (a, b) in grid.iter().zip(&back) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        // Circular convolution theorem against a direct sum.
        let k: Vec<f64> = (0..n * n * n).map(|i| ((i * 13 % 17) as f64 - 8.0) / 3.0).collect();
        let (a, b) = (f.forward(&grid), f.forward(&k));
        let mut product = a.clone();
        for i in 0..a.re.len() {
            product.re[i] = a.re[i] * b.re[i] - a.im[i] * b.im[i];
            product.im[i] = a.re[i] * b.im[i] + a.im[i] * b.re[i];
        }
        let conv = f.inverse(product);
        let idx = |x: usize, y: usize, z: usize| (x * n + y) * n + z;
        for (x, y, z) in [(0, 0, 0), (3, 7, 2), (9, 1, 5)] {
            let mut sum = 0.0;
            for (i, j, l) in (0..n).flat_map(|i| (0..n).flat_map(move |j| (0..n).map(move |l| (i, j, l)))) {
                sum += grid[idx(i, j, l)] * k[idx((x + n - i) % n, (y + n - j) % n, (z + n - l) % n)];
            }
            assert!(
                (conv[idx(x, y, z)] - sum).abs() < 1e-9 * sum.abs().max(1.0),
                "{} vs {sum}",
                conv[idx(x, y, z)]
            );
        }
    }
}
