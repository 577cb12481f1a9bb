//! Discrete Fourier transforms of real 3D grids of side `N` (the zero-padded equivalent-surface
//! lattices of the multipole-to-local convolution), kept as half spectra (`N x N x (N/2 + 1)`
//! frequencies, the rest following from Hermitian symmetry).
//!
//! The sides are small (twice the surface order less one: 9 to 19), so each 1D transform is a dense
//! product with a precomputed table of twiddle factors rather than a radix-2 FFT: no
//! power-of-two restriction, and at these sizes the difference in operation count is a factor of
//! about two, paid once per box per level. Each such product is a short chain of dependent
//! additions, so four grids are transformed at once, one per vector lane
//! ([`Fourier::forward_lanes`]), with the bits each grid's own transform gives: on a 13k-point
//! mat-vec (order 8) the transforms went from 19 ms to 9 ms.

use core::f64::consts::TAU;

#[cfg(target_arch = "x86_64")]
use crate::bem::lanes::Avx;
use crate::bem::lanes::{LANES, Lanes, Portable, avx_available};

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
        let zero = vec![0.0; grid.len()];
        let [spectrum, ..] = self.forward_lanes([grid, &zero, &zero, &zero], support);
        spectrum
    }

    /// The real grid whose half spectrum is `spectrum` (the inverse of [`Fourier::forward`],
    /// including the `1 / N^3`), computed only in the corner cube `[0, support)^3`; the rest of
    /// the returned grid is zero.
    pub fn inverse(&self, spectrum: &Spectrum, support: usize) -> Vec<f64> {
        let empty = Spectrum {
            re: vec![0.0; spectrum.re.len()],
            im: vec![0.0; spectrum.im.len()],
        };
        let [grid, ..] = self.inverse_lanes([spectrum, &empty, &empty, &empty], support);
        grid
    }

    /// [`Fourier::forward`] of four grids at once, one per vector lane: each spectrum has the
    /// bits the grid's own transform gives (the lanes never mix), at about the cost of one.
    pub fn forward_lanes(&self, grids: [&[f64]; LANES], support: usize) -> [Spectrum; LANES] {
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { self.forward_avx(grids, support) };
        }
        self.forward_in::<Portable>(grids, support)
    }

    /// [`Fourier::inverse`] of four spectra at once, one per vector lane, as
    /// [`Fourier::forward_lanes`].
    pub fn inverse_lanes(&self, spectra: [&Spectrum; LANES], support: usize) -> [Vec<f64>; LANES] {
        #[cfg(target_arch = "x86_64")]
        if avx_available() {
            #[allow(unsafe_code)]
            // SAFETY: `avx_available` confirmed that this machine executes AVX.
            return unsafe { self.inverse_avx(spectra, support) };
        }
        self.inverse_in::<Portable>(spectra, support)
    }

    /// [`Fourier::forward_in`] in AVX registers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn forward_avx(&self, grids: [&[f64]; LANES], support: usize) -> [Spectrum; LANES] {
        self.forward_in::<Avx>(grids, support)
    }

    /// [`Fourier::inverse_in`] in AVX registers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn inverse_avx(&self, spectra: [&Spectrum; LANES], support: usize) -> [Vec<f64>; LANES] {
        self.inverse_in::<Avx>(spectra, support)
    }

    /// The forward transforms in lanes of `V`; the work arrays hold entry `i` of lane `l` at
    /// `i * LANES + l`.
    #[inline(always)]
    fn forward_in<V: Lanes>(&self, grids: [&[f64]; LANES], support: usize) -> [Spectrum; LANES] {
        let n = self.n;
        let h = n / 2 + 1;
        let support = support.min(n);
        let mut s = Interleaved {
            re: vec![0.0; n * n * h * LANES],
            im: vec![0.0; n * n * h * LANES],
        };
        let mut values = vec![V::splat(0.0); support];
        // Along z, real to half complex, on the lines inside the support.
        for x in 0..support {
            for y in 0..support {
                let line = x * n + y;
                let mut zero = true;
                for (j, value) in values.iter_mut().enumerate() {
                    let lanes: [f64; LANES] = core::array::from_fn(|l| grids[l][line * n + j]);
                    zero &= lanes.iter().all(|v| *v == 0.0);
                    *value = V::load(&lanes);
                }
                if zero {
                    continue;
                }
                for k in 0..h {
                    let (c, sn) = (&self.cos[k * n..k * n + support], &self.sin[k * n..k * n + support]);
                    let (mut a, mut b) = (V::splat(0.0), V::splat(0.0));
                    for j in 0..support {
                        a = a + values[j] * V::splat(c[j]);
                        b = b - values[j] * V::splat(sn[j]);
                    }
                    s.store(line * h + k, a, b);
                }
            }
        }
        // Along y on the planes x < support, then along x everywhere; inputs beyond the support
        // are zero, every output is kept.
        self.complex_pass::<V>(&mut s, h, support, support, n, -1.0);
        self.complex_pass::<V>(&mut s, n * h, 1, support, n, -1.0);
        core::array::from_fn(|l| Spectrum {
            re: s.re.iter().skip(l).step_by(LANES).copied().collect(),
            im: s.im.iter().skip(l).step_by(LANES).copied().collect(),
        })
    }

    /// The inverse transforms in lanes of `V`, laid out as in [`Fourier::forward_in`].
    #[inline(always)]
    fn inverse_in<V: Lanes>(&self, spectra: [&Spectrum; LANES], support: usize) -> [Vec<f64>; LANES] {
        let n = self.n;
        let h = n / 2 + 1;
        let support = support.min(n);
        let len = n * n * h;
        let mut s = Interleaved {
            re: (0..len * LANES).map(|i| spectra[i % LANES].re[i / LANES]).collect(),
            im: (0..len * LANES).map(|i| spectra[i % LANES].im[i / LANES]).collect(),
        };
        self.complex_pass::<V>(&mut s, n * h, 1, n, support, 1.0);
        self.complex_pass::<V>(&mut s, h, support, n, support, 1.0);
        let scale = V::splat(1.0 / (n * n * n) as f64);
        let two = V::splat(2.0);
        let mut grids: [Vec<f64>; LANES] = core::array::from_fn(|_| vec![0.0; n * n * n]);
        for x in 0..support {
            for y in 0..support {
                let line = x * n + y;
                for j in 0..support {
                    // x(j) = X_0 + (-1)^j X_{N/2} + 2 sum_{0<k<N/2} Re(X_k e^{2 pi i k j / N}),
                    // the middle term only for even N.
                    let (re, _) = s.load::<V>(line * h);
                    let mut sum = re;
                    if n % 2 == 0 {
                        let (middle, _) = s.load::<V>(line * h + n / 2);
                        sum = if j % 2 == 0 { sum + middle } else { sum - middle };
                    }
                    for k in 1..n.div_ceil(2) {
                        let (re, im) = s.load::<V>(line * h + k);
                        sum = sum + two * (re * V::splat(self.cos[k * n + j]) - im * V::splat(self.sin[k * n + j]));
                    }
                    for (grid, value) in grids.iter_mut().zip((sum * scale).to_array()) {
                        grid[line * n + j] = value;
                    }
                }
            }
        }
        grids
    }

    /// Complex DFT along one axis of stride `stride` (`h` for y, `N h` for x), in lanes of `V`:
    /// the lines are those of the first `planes` planes across the axis above it (all, for x),
    /// entries `i < input` are read (the rest are zero) and outputs `k < output` written. `sign`
    /// is -1 forward, +1 inverse. A line whose inputs are all zero in every lane is skipped: its
    /// outputs, zero, are already there.
    #[inline(always)]
    fn complex_pass<V: Lanes>(
        &self,
        s: &mut Interleaved,
        stride: usize,
        planes: usize,
        input: usize,
        output: usize,
        sign: f64,
    ) {
        let n = self.n;
        let block = stride * n;
        let sign = V::splat(sign);
        let zero = V::splat(0.0);
        let (mut line_re, mut line_im) = (vec![zero; input], vec![zero; input]);
        let (mut out_re, mut out_im) = (vec![zero; output], vec![zero; output]);
        for plane in 0..planes {
            for offset in 0..stride {
                let start = plane * block + offset;
                let mut all_zero = true;
                for i in 0..input {
                    let at = start + i * stride;
                    all_zero &= s.is_zero(at);
                    (line_re[i], line_im[i]) = s.load::<V>(at);
                }
                if all_zero {
                    continue;
                }
                for k in 0..output {
                    let (c, sn) = (&self.cos[k * n..k * n + input], &self.sin[k * n..k * n + input]);
                    let (mut a, mut b) = (zero, zero);
                    for j in 0..input {
                        // (re + i im)(cos + i sign sin)
                        let (c, sn) = (V::splat(c[j]), V::splat(sn[j]));
                        a = a + (line_re[j] * c - sign * line_im[j] * sn);
                        b = b + (line_im[j] * c + sign * line_re[j] * sn);
                    }
                    out_re[k] = a;
                    out_im[k] = b;
                }
                for k in 0..output {
                    s.store(start + k * stride, out_re[k], out_im[k]);
                }
            }
        }
    }
}

/// Four half spectra interleaved: entry `i` of lane `l` at `i * LANES + l`.
struct Interleaved {
    re: Vec<f64>,
    im: Vec<f64>,
}

impl Interleaved {
    #[inline(always)]
    fn load<V: Lanes>(&self, i: usize) -> (V, V) {
        let at = i * LANES..(i + 1) * LANES;
        (
            V::load(self.re[at.clone()].try_into().expect("four lanes")),
            V::load(self.im[at].try_into().expect("four lanes")),
        )
    }

    #[inline(always)]
    fn store<V: Lanes>(&mut self, i: usize, re: V, im: V) {
        let at = i * LANES..(i + 1) * LANES;
        self.re[at.clone()].copy_from_slice(&re.to_array());
        self.im[at].copy_from_slice(&im.to_array());
    }

    #[inline(always)]
    fn is_zero(&self, i: usize) -> bool {
        let at = i * LANES..(i + 1) * LANES;
        self.re[at.clone()].iter().chain(&self.im[at]).all(|v| *v == 0.0)
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
        let back = f.inverse(&f.forward(&grid, n), n);
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
        let conv = f.inverse(&product, n);
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

    /// Four grids transformed at once give each the bits of its own transform, forward and back,
    /// with a grid that is zero and one zero only on some lines among them (the lines skipped
    /// for all four lanes, and those computed for some), in AVX and in the portable form alike.
    #[test]
    fn bem_fmm_fourier_lanes_match_one_grid_at_a_time() {
        let (n, support) = (9, 5);
        let f = Fourier::new(n);
        let grids: Vec<Vec<f64>> = (0..4)
            .map(|g| {
                (0..n * n * n)
                    .map(|i| {
                        let (x, y, z) = (i / (n * n), (i / n) % n, i % n);
                        let inside = x < support && y < support && z < support;
                        if !inside || g == 2 || (g == 3 && y % 2 == 0) {
                            0.0
                        } else {
                            ((i * (g + 3) * 37 % 101) as f64 - 50.0) / 7.0
                        }
                    })
                    .collect()
            })
            .collect();
        let lanes = f.forward_lanes(core::array::from_fn(|g| grids[g].as_slice()), support);
        for (grid, spectrum) in grids.iter().zip(&lanes) {
            let alone = f.forward(grid, support);
            assert_eq!(
                alone.re.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                spectrum.re.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(
                alone.im.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                spectrum.im.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
        // The portable form (the one machines without AVX run) gives the same bits.
        let portable = f.forward_in::<Portable>(core::array::from_fn(|g| grids[g].as_slice()), support);
        assert_eq!(portable, lanes);
        let back = f.inverse_lanes(core::array::from_fn(|g| &lanes[g]), support);
        assert_eq!(
            f.inverse_in::<Portable>(core::array::from_fn(|g| &lanes[g]), support),
            back
        );
        for (spectrum, grid) in lanes.iter().zip(&back) {
            let alone = f.inverse(spectrum, support);
            assert_eq!(
                alone.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                grid.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
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
        let (back, whole) = (f.inverse(&full, support), f.inverse(&full, n));
        for (x, y, z) in (0..n).flat_map(|i| (0..n).flat_map(move |j| (0..n).map(move |l| (i, j, l)))) {
            let inside = x < support && y < support && z < support;
            let expected = if inside { whole[idx(x, y, z)] } else { 0.0 };
            assert!((back[idx(x, y, z)] - expected).abs() < 1e-12);
            assert!((whole[idx(x, y, z)] - grid[idx(x, y, z)]).abs() < 1e-12);
        }
    }
}
