//! Discrete Fourier transforms of real 3D grids of side `N` (the zero-padded equivalent-surface
//! lattices of the multipole-to-local convolution), kept as half spectra (`N x N x (N/2 + 1)`
//! frequencies, the rest following from Hermitian symmetry).
//!
//! The sides are small (twice the surface order less one: 9 to 19), so each 1D transform is a dense
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
    /// Transforms of side `n` (>= 2, odd or even).
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
    /// (index `(x * N + y) * N + z`), which is zero outside the corner cube `[0, support)^3`
    /// (`support = N` for any grid): the passes skip the known zeros, about half the work each
    /// for a zero-padded lattice of side `N / 2`.
    pub fn forward(&self, grid: &[f64], support: usize) -> Spectrum {
        let n = self.n;
        let h = n / 2 + 1;
        let support = support.min(n);
        let mut re = vec![0.0; n * n * h];
        let mut im = vec![0.0; n * n * h];
        // Along z, real to half complex, on the lines inside the support.
        for x in 0..support {
            for y in 0..support {
                let line = x * n + y;
                let values = &grid[line * n..line * n + support];
                if values.iter().all(|v| *v == 0.0) {
                    continue;
                }
                for k in 0..h {
                    let (c, s) = (&self.cos[k * n..k * n + support], &self.sin[k * n..k * n + support]);
                    let (mut a, mut b) = (0.0, 0.0);
                    for j in 0..support {
                        a += values[j] * c[j];
                        b -= values[j] * s[j];
                    }
                    re[line * h + k] = a;
                    im[line * h + k] = b;
                }
            }
        }
        let mut spectrum = Spectrum { re, im };
        // Along y on the planes x < support, then along x everywhere; inputs beyond the support
        // are zero, every output is kept.
        self.complex_pass(&mut spectrum, h, support, support, n, -1.0);
        self.complex_pass(&mut spectrum, n * h, 1, support, n, -1.0);
        spectrum
    }

    /// The real grid whose half spectrum is `spectrum` (the inverse of [`Fourier::forward`],
    /// including the `1 / N^3`), computed only in the corner cube `[0, support)^3`; the rest of
    /// the returned grid is zero.
    pub fn inverse(&self, mut spectrum: Spectrum, support: usize) -> Vec<f64> {
        let n = self.n;
        let h = n / 2 + 1;
        let support = support.min(n);
        self.complex_pass(&mut spectrum, n * h, 1, n, support, 1.0);
        self.complex_pass(&mut spectrum, h, support, n, support, 1.0);
        let scale = 1.0 / (n * n * n) as f64;
        let mut grid = vec![0.0; n * n * n];
        for x in 0..support {
            for y in 0..support {
                let line = x * n + y;
                let (re, im) = (
                    &spectrum.re[line * h..(line + 1) * h],
                    &spectrum.im[line * h..(line + 1) * h],
                );
                for j in 0..support {
                    // x(j) = X_0 + (-1)^j X_{N/2} + 2 sum_{0<k<N/2} Re(X_k e^{2 pi i k j / N}),
                    // the middle term only for even N.
                    let mut sum = re[0];
                    if n % 2 == 0 {
                        sum += if j % 2 == 0 { re[n / 2] } else { -re[n / 2] };
                    }
                    for k in 1..n.div_ceil(2) {
                        sum += 2.0 * (re[k] * self.cos[k * n + j] - im[k] * self.sin[k * n + j]);
                    }
                    grid[line * n + j] = sum * scale;
                }
            }
        }
        grid
    }

    /// Complex DFT along one axis of stride `stride` (`h` for y, `N h` for x): the lines are
    /// those of the first `planes` planes across the axis above it (all, for x), entries
    /// `i < input` are read (the rest are zero) and outputs `k < output` written. `sign` is -1
    /// forward, +1 inverse.
    fn complex_pass(&self, s: &mut Spectrum, stride: usize, planes: usize, input: usize, output: usize, sign: f64) {
        let n = self.n;
        let block = stride * n;
        let (mut line_re, mut line_im) = (vec![0.0; input], vec![0.0; input]);
        let (mut out_re, mut out_im) = (vec![0.0; output], vec![0.0; output]);
        for plane in 0..planes {
            for offset in 0..stride {
                let start = plane * block + offset;
                let mut zero = true;
                for i in 0..input {
                    line_re[i] = s.re[start + i * stride];
                    line_im[i] = s.im[start + i * stride];
                    zero &= line_re[i] == 0.0 && line_im[i] == 0.0;
                }
                if zero {
                    continue;
                }
                for k in 0..output {
                    let (c, sn) = (&self.cos[k * n..k * n + input], &self.sin[k * n..k * n + input]);
                    let (mut a, mut b) = (0.0, 0.0);
                    for j in 0..input {
                        // (re + i im)(cos + i sign sin)
                        a += line_re[j] * c[j] - sign * line_im[j] * sn[j];
                        b += line_im[j] * c[j] + sign * line_re[j] * sn[j];
                    }
                    out_re[k] = a;
                    out_im[k] = b;
                }
                for k in 0..output {
                    s.re[start + k * stride] = out_re[k];
                    s.im[start + k * stride] = out_im[k];
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
        for n in [10, 9] {
            inverts_and_convolves(n);
        }
    }

    /// The inverse undoes the forward transform and products of spectra are circular
    /// convolutions, on a grid of side `n`.
    fn inverts_and_convolves(n: usize) {
        let f = Fourier::new(n);
        let grid: Vec<f64> = (0..n * n * n).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect();
        let back = f.inverse(f.forward(&grid, n), n);
        for (a, b) in grid.iter().zip(&back) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        // Circular convolution theorem against a direct sum.
        let k: Vec<f64> = (0..n * n * n).map(|i| ((i * 13 % 17) as f64 - 8.0) / 3.0).collect();
        let (a, b) = (f.forward(&grid, n), f.forward(&k, n));
        let mut product = a.clone();
        for i in 0..a.re.len() {
            product.re[i] = a.re[i] * b.re[i] - a.im[i] * b.im[i];
            product.im[i] = a.re[i] * b.im[i] + a.im[i] * b.re[i];
        }
        let conv = f.inverse(product, n);
        let idx = |x: usize, y: usize, z: usize| (x * n + y) * n + z;
        for (x, y, z) in [(0, 0, 0), (3, 7, 2), (n - 1, 1, 5)] {
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

    /// A grid zero outside the corner cube of side 5 transforms the same with the support given
    /// as with the full side, and the inverse restricted to the cube agrees there.
    #[test]
    fn bem_fmm_fourier_pruned_passes_match_the_full_ones() {
        let (n, support) = (12, 5);
        let f = Fourier::new(n);
        let idx = |x: usize, y: usize, z: usize| (x * n + y) * n + z;
        let mut grid = vec![0.0; n * n * n];
        for (x, y, z) in (0..support).flat_map(|i| (0..support).flat_map(move |j| (0..support).map(move |l| (i, j, l))))
        {
            grid[idx(x, y, z)] = ((x * 31 + y * 7 + z * 3) % 11) as f64 - 5.0;
        }
        let (pruned, full) = (f.forward(&grid, support), f.forward(&grid, n));
        for i in 0..full.re.len() {
            assert!((pruned.re[i] - full.re[i]).abs() < 1e-12 && (pruned.im[i] - full.im[i]).abs() < 1e-12);
        }
        let (back, whole) = (f.inverse(full.clone(), support), f.inverse(full, n));
        for (x, y, z) in (0..n).flat_map(|i| (0..n).flat_map(move |j| (0..n).map(move |l| (i, j, l)))) {
            let inside = x < support && y < support && z < support;
            let expected = if inside { whole[idx(x, y, z)] } else { 0.0 };
            assert!((back[idx(x, y, z)] - expected).abs() < 1e-12);
            assert!((whole[idx(x, y, z)] - grid[idx(x, y, z)]).abs() < 1e-12);
        }
    }
}
