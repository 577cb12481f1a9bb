//! The translation operators of the kernel-independent FMM (Ying, Biros and Zorin 2004), for the
//! Kelvin kernel, computed once per material and order and shared by every level.
//!
//! A box of half-width `h` represents the field of its sources by point forces on an *equivalent
//! surface* (the cube of half-width `h`, an `order^3` lattice's surface points) whose
//! displacement matches the sources' on a *check surface* (half-width `3 h`); far fields arriving
//! at a box are represented the other way round (check `h`, equivalent `3 h`). The mature
//! implementations use 1.05 and 2.95 and Zhu 2015 used 1.2 and 3.0; 1 and 3 keep their sum of 4
//! and align the inner lattices for the convolution below (see [`radii`]).
//! Matching is a least-squares solve through the truncated-SVD pseudo-inverse of the
//! check-from-equivalent matrix.
//!
//! The Kelvin kernel is homogeneous of degree -1 (`G(s r) = G(r) / s`), so a check-from-equivalent
//! matrix at half-width `h` is the unit one over `h` and its pseudo-inverse the unit one times `h`:
//! every translation (which multiplies one by the other) is the same at every level. Only the
//! source-to-equivalent step needs the factor `h`.
//!
//! Multipole-to-local (M2L), the dominant cost, is a convolution. The inner surfaces (radius 1,
//! the box itself) are the boundary points of a lattice of spacing `2h / (order - 1)`, and boxes
//! of one level sit a whole number of spacings apart, so the check potential of a source box's
//! equivalent forces is the lattice convolution of those forces with the kernel sampled at lattice
//! vectors. Zero-padded to a grid of side `N = 2 order - 1`, it is a product of discrete Fourier
//! transforms (Ying, Biros and Zorin 2004 section 3.3; PVFMM does the same): each box is
//! transformed once, each interaction costs `9 N^2 (N / 2 + 1)` complex products, and each
//! target is transformed back once. `2 order - 1` is the smallest side without wrap-around: the
//! kernel's lattice vectors span `2 order - 1` per axis, and the check points only need the
//! `order` entries of the corner (PVFMM pads to `2 order`; the odd side has a fifth fewer
//! frequencies). That was chosen over compressing the 316 dense M2L
//! matrices with a shared SVD basis, which measured no useful compression at 1e-8 (rank 436 of
//! 456 at order 6) and took 15 s to precompute, and over storing them dense (half a gigabyte at
//! order 6).

use glam::DVec3;
use rayon::prelude::*;

use super::dense::{Matrix, svd};
use super::fourier::{Fourier, Spectrum};
use super::m2l::KernelBlocks;
use crate::bem::kernel::Kelvin;

/// The surface radii of an order, in half-widths: `(steps, inner, outer)`. The inner surface's
/// lattice spacing `2 inner / (order - 1)` must divide the box width 2, so
/// `inner = (order - 1) / steps` for a whole number of `steps` per box; the two radii sum to 4,
/// the separation of the nearest well-separated boxes. Of the choices, `inner = 1` (the box
/// itself, `steps = order - 1`) measured the most accurate: 2.4e-6 against 9.5e-6 for
/// `inner = 1.25` at order 6 on a sphere, and 1.5e-5 against 1.1e-4 at order 7 on a box's faces.
pub fn radii(order: usize) -> (i64, f64, f64) {
    let steps = order as i64 - 1;
    (steps, 1.0, 3.0)
}

/// The largest box-coordinate difference of an M2L pair whose boxes are `separation` boxes apart
/// or more (children of the parent's neighbours within `separation`): `2 separation + 1`.
pub fn offset_reach(separation: usize) -> i32 {
    2 * separation as i32 + 1
}

/// The M2L offsets of a separation: box-coordinate differences `d` in `[-r, r]^3`
/// (`r = offset_reach(separation)`) with some `|d_i| > separation`, indexed
/// `((dx + r) * w + (dy + r)) * w + (dz + r)` with `w = 2 r + 1` (separation 1: 343 slots, 316
/// used; separation 2: 1331 slots, 1206 used).
pub fn offset_slot(d: [i32; 3], separation: usize) -> usize {
    let r = offset_reach(separation);
    let w = 2 * r + 1;
    (((d[0] + r) * w + (d[1] + r)) * w + (d[2] + r)) as usize
}

/// Precomputed translations at unit half-width.
#[derive(Debug)]
pub struct Operators {
    /// Points per edge of the surfaces.
    pub order: usize,
    /// Boxes between a box and the nearest box it meets through M2L (see
    /// [`super::FmmSettings::separation`]).
    pub separation: usize,
    /// Lattice steps per box width (see [`radii`]).
    pub steps: i64,
    /// Inner surface radius, in half-widths.
    pub inner: f64,
    /// Outer surface radius, in half-widths.
    pub outer: f64,
    /// Points on the unit cube's surface (the `order^3` lattice's boundary).
    pub surface: Vec<DVec3>,
    /// Index of each surface point in the zero-padded convolution grid.
    pub grid_index: Vec<usize>,
    /// Transforms of the convolution grid (side `2 order - 1`).
    pub fourier: Fourier,
    /// Upward check-to-equivalent pseudo-inverse at half-width 1 (`3 n_s x 3 n_s`).
    pub up_check_to_equivalent: Matrix,
    /// Child-to-parent translations, by child octant (bit 0: +x, 1: +y, 2: +z).
    pub m2m: Vec<Matrix>,
    /// Parent-to-child translations, by child octant.
    pub l2l: Vec<Matrix>,
    /// Downward check-to-equivalent pseudo-inverse at half-width 1.
    pub down_check_to_equivalent: Matrix,
    /// M2L kernel spectra by offset slot (none for near offsets): the six distinct components
    /// `G_xx, G_xy, G_xz, G_yy, G_yz, G_zz` sampled at lattice vectors of unit spacing, blocked
    /// by frequency.
    pub m2l: KernelBlocks,
}

/// The lattice coordinates of the surface points of [`unit_surface`], in the same order.
pub fn surface_lattice(order: usize) -> Vec<[usize; 3]> {
    let mut points = Vec::new();
    for i in 0..order {
        for j in 0..order {
            for k in 0..order {
                let edge = |v: usize| v == 0 || v == order - 1;
                if edge(i) || edge(j) || edge(k) {
                    points.push([i, j, k]);
                }
            }
        }
    }
    points
}

/// The surface points of the `order^3` lattice spanning [-1, 1]^3.
pub fn unit_surface(order: usize) -> Vec<DVec3> {
    let step = 2.0 / (order - 1) as f64;
    surface_lattice(order)
        .iter()
        .map(|a| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64) * step - DVec3::ONE)
        .collect()
}

/// The displacement matrix `[G(t_i - s_j)]` (3 x 3 blocks) of point forces at `sources` seen at
/// `targets`.
pub fn displacement_matrix(kelvin: &Kelvin, targets: &[DVec3], sources: &[DVec3]) -> Matrix {
    let mut m = Matrix::zeros(3 * targets.len(), 3 * sources.len());
    for (i, t) in targets.iter().enumerate() {
        for (j, s) in sources.iter().enumerate() {
            let g = kelvin.displacement(*t - *s);
            for a in 0..3 {
                for b in 0..3 {
                    m.set(3 * i + a, 3 * j + b, g.col(b)[a]);
                }
            }
        }
    }
    m
}

fn scaled(points: &[DVec3], center: DVec3, radius: f64) -> Vec<DVec3> {
    points.iter().map(|p| center + *p * radius).collect()
}

/// Octant `o`'s centre offset from its parent's, in child half-widths.
pub fn octant_offset(o: usize) -> DVec3 {
    DVec3::new(
        if o & 1 != 0 { 1.0 } else { -1.0 },
        if o & 2 != 0 { 1.0 } else { -1.0 },
        if o & 4 != 0 { 1.0 } else { -1.0 },
    )
}

impl Operators {
    /// The translations of `kelvin` for surfaces of `order` points per edge (>= 3), with
    /// pseudo-inverses truncated at `pinv_tolerance` relative to the largest singular value.
    pub fn new(kelvin: &Kelvin, order: usize, pinv_tolerance: f64, separation: usize) -> Self {
        let (steps, inner_radius, outer_radius) = radii(order);
        let surface = unit_surface(order);
        let inner = scaled(&surface, DVec3::ZERO, inner_radius);
        let outer_points = scaled(&surface, DVec3::ZERO, outer_radius);
        // G is even and symmetric, so K(inner <- outer) = K(outer <- inner)^T: one SVD serves both.
        let up = svd(&displacement_matrix(kelvin, &outer_points, &inner));
        let up_check_to_equivalent = up.pseudo_inverse(pinv_tolerance);
        let down_check_to_equivalent = up_check_to_equivalent.transpose();
        let m2m = (0..8)
            .into_par_iter()
            .map(|o| {
                // Child of half-width 1 at its octant offset; parent of half-width 2 at the origin.
                let child = scaled(&surface, octant_offset(o), inner_radius);
                let check = scaled(&surface, DVec3::ZERO, 2.0 * outer_radius);
                let mut pinv = up_check_to_equivalent.clone();
                pinv.scale(2.0);
                pinv.mul(&displacement_matrix(kelvin, &check, &child))
            })
            .collect();
        let l2l = (0..8)
            .into_par_iter()
            .map(|o| {
                let check = scaled(&surface, octant_offset(o), inner_radius);
                let parent = scaled(&surface, DVec3::ZERO, 2.0 * outer_radius);
                down_check_to_equivalent.mul(&displacement_matrix(kelvin, &check, &parent))
            })
            .collect();
        let side = 2 * order - 1;
        let fourier = Fourier::new(side);
        let grid_index = surface_lattice(order)
            .iter()
            .map(|a| (a[0] * side + a[1]) * side + a[2])
            .collect();
        let span = order as i64 - 1;
        let reach = offset_reach(separation) as i64;
        let width = 2 * reach + 1;
        let m2l: Vec<Option<[Spectrum; 6]>> = (0..width.pow(3))
            .into_par_iter()
            .map(|slot| {
                let d = [
                    slot / (width * width) - reach,
                    (slot / width) % width - reach,
                    slot % width - reach,
                ];
                if d.iter().all(|v| v.unsigned_abs() as usize <= separation) {
                    return None;
                }
                // Kernel at the lattice vectors (order - 1) d + j, j in [-(order - 1), order - 1]^3,
                // stored at j mod side.
                let mut grids = [(); 6].map(|_| vec![0.0; side * side * side]);
                for jx in -span..=span {
                    for jy in -span..=span {
                        for jz in -span..=span {
                            let v = DVec3::new(
                                (steps * d[0] + jx) as f64,
                                (steps * d[1] + jy) as f64,
                                (steps * d[2] + jz) as f64,
                            );
                            let g = kelvin.displacement(v);
                            let wrap = |j: i64| j.rem_euclid(side as i64) as usize;
                            let at = (wrap(jx) * side + wrap(jy)) * side + wrap(jz);
                            for (c, (a, b)) in COMPONENTS.iter().enumerate() {
                                grids[c][at] = g.col(*b)[*a];
                            }
                        }
                    }
                }
                Some(grids.map(|g| fourier.forward(&g, side)))
            })
            .collect();
        let m2l = KernelBlocks::new(&m2l, fourier.spectrum_len());
        Self {
            order,
            separation,
            steps,
            inner: inner_radius,
            outer: outer_radius,
            surface,
            grid_index,
            fourier,
            up_check_to_equivalent,
            m2m,
            l2l,
            down_check_to_equivalent,
            m2l,
        }
    }
}

/// The six distinct entries `(row, column)` of the symmetric Kelvin tensor, in the order of
/// [`Operators::m2l`].
pub const COMPONENTS: [(usize, usize); 6] = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];

/// The slot in [`COMPONENTS`] of entry `(a, b)`.
pub fn component(a: usize, b: usize) -> usize {
    match (a.min(b), a.max(b)) {
        (0, 0) => 0,
        (0, 1) => 1,
        (0, 2) => 2,
        (1, 1) => 3,
        (1, 2) => 4,
        _ => 5,
    }
}
