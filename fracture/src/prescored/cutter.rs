//! The fragments' geometry after a cut: each fragment's level set and surface particles, made
//! to hold the cells its mass comes from.
//!
//! A fragment's mass is the sum of its cells (Su 2009 section 4.2 treats a lattice cell as wholly
//! inside or outside by the sign at its centre), so its collision geometry is the union of those
//! same cells where it meets another piece, and the parent's own surface elsewhere:
//!
//! `phi_f = max(phi_parent, d_f)`, with `d_f` the signed distance to the cells of `f` together
//! with the cells outside the parent.
//!
//! Su 2009 uses `max(phi_parent, phi_region)` instead, whose zero set lies where the pattern's
//! walls pass between the samples: anywhere from on a sample to a whole spacing beyond it. A
//! piece one or two cells across then has a level set far smaller than its cells (on the
//! 150 x 10 x 100 wall cut by a 2000-site spiral, a tenth of the pieces held under 0.85 of their
//! cells and one nothing at all; now the least holds 0.69 and the median 0.97) and a few
//! particles along a line: it hangs from them like a pendulum, rocking for seconds, and
//! neither rests nor sleeps. Here a sample next to a cell of the other kind takes the exact
//! distance to that cell's cube (half a spacing across a face, `sqrt(2)/2` across an edge,
//! `sqrt(3)/2` across a corner), so the zero set runs along the cells' faces, with the rounding of
//! trilinear interpolation at their edges; samples farther in or out keep the region's level set
//! beyond a spacing, so depths and gradients inside stay those of the pattern.
//!
//! Particles: the parent's particles go to the fragment of the cell they lie in (the paper's voxel
//! assignment; a particle in a cell outside the parent or of removed debris goes to the nearest
//! cell of a fragment around it). On the faces between a fragment and another piece, the corners
//! of the cells are the particles: every convex corner of the fragment's cells (one cell of the
//! eight around it is the fragment's) is kept, thinned only among corners pointing the same way,
//! so even a piece one cell across stands on its four corners; the other corners are thinned to
//! one per bin of twice the particle spacing, those on convex edges first. Twice, because the
//! corners of a sloping cut face lie in a band a cell deep, which meets far more bins than a plane
//! does: with bins of one spacing a spiral-cut wall's fragments carried 94k particles against the
//! 62k that points on the pattern's walls gave, with two 41k, while the fragment's outline is
//! held by its convex corners whatever the fill.

use glam::DVec3;
use hashbrown::HashMap;
use rayon::prelude::*;
use shatter_collision::{GridSpec, SdfGrid};

use super::intersect::{Grouping, Intersection, NONE, face_neighbours};
use super::pattern::FracturePattern;
use super::placement::Placement;
use crate::error::FractureError;

/// Samples of padding around a fragment's cells in its level set. One is enough: the surface
/// lies within a spacing of the fragment's inside samples, so the padding layer holds every
/// sign change, and beyond the grid `SdfGrid::value` goes on as the distance to its box, which
/// only the contact margin reads.
const PADDING: i64 = 1;

/// Farthest a corner of a fragment's cells may lie outside the parent's surface and still be a
/// particle (projected onto the surface), in spacings: a cut face meets a curved surface in
/// cells the surface passes through.
const CORNER_REACH: f64 = 0.5;

/// Where a lattice sample lies, seen from one fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// In the fragment.
    Own,
    /// Outside the parent (or beyond its lattice).
    Outside,
    /// In another fragment or in removed debris.
    Other,
}

/// Level sets and particles of the fragments of one cut.
pub(crate) struct Cutter<'a> {
    pub body: &'a SdfGrid,
    pub pattern: &'a FracturePattern,
    pub placement: &'a Placement,
    pub cut: &'a Intersection,
    pub grouping: &'a Grouping,
    /// The fragment of every component ([`NONE`] for removed ones).
    pub fragment_of: &'a [u32],
}

impl Cutter<'_> {
    /// Every fragment's level set and surface particles (body frame), in fragment order; the
    /// parent's `particles` are shared out by the cells they lie in, and `spacing` (m) thins
    /// the particles made on cut faces.
    pub fn fragments(&self, particles: &[DVec3], spacing: f64) -> Result<Vec<(SdfGrid, Vec<DVec3>)>, FractureError> {
        let mut owned = vec![Vec::new(); self.grouping.fragments.len()];
        let owners: Vec<Option<u32>> = particles.par_iter().map(|&x| self.owner(x)).collect();
        for (&x, owner) in particles.iter().zip(owners) {
            if let Some(f) = owner {
                owned[f as usize].push(x);
            }
        }
        owned
            .into_par_iter()
            .enumerate()
            .map(|(f, mut particles)| {
                let around = Neighbourhood::new(self, f as u32);
                particles.extend(self.corner_particles(&around, spacing));
                // A fragment the parent's particles missed and no other piece touches (a sliver
                // at the resolution of the lattice) takes its outermost samples.
                if particles.is_empty() {
                    particles.extend(self.outermost_samples(f as u32));
                }
                Ok((self.level_set(&around)?, particles))
            })
            .collect()
    }

    /// The fragment a parent particle at body-frame `x` goes to: that of the lattice sample
    /// nearest it (whose cell holds it), or where that cell is outside the parent or removed,
    /// of the nearest of the eight samples around `x` in a fragment.
    fn owner(&self, x: DVec3) -> Option<u32> {
        let spec = self.body.spec();
        let local = (x - spec.origin) / spec.spacing;
        let base = local.floor();
        let mut best: Option<(f64, u32)> = None;
        for corner in 0..8 {
            let offset = DVec3::new(
                (corner & 1) as f64,
                ((corner >> 1) & 1) as f64,
                ((corner >> 2) & 1) as f64,
            );
            let at = base + offset;
            if at.cmplt(DVec3::ZERO).any()
                || at.x as usize >= spec.dims[0]
                || at.y as usize >= spec.dims[1]
                || at.z as usize >= spec.dims[2]
            {
                continue;
            }
            let c = self.cut.components[spec.index(at.x as usize, at.y as usize, at.z as usize)];
            if c == NONE || self.fragment_of[c as usize] == NONE {
                continue;
            }
            let distance = (at - local).length_squared();
            if best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, self.fragment_of[c as usize]));
            }
        }
        best.map(|(_, f)| f)
    }

    /// The fragment's level set at the samples of the parent's lattice around its cells (grown
    /// by [`PADDING`] samples, beyond the lattice where the cells reach its edge): on the parent's
    /// own lattice, so a fragment and its own fragments stay on one lattice and nothing is
    /// interpolated.
    fn level_set(&self, around: &Neighbourhood) -> Result<SdfGrid, FractureError> {
        let spec = self.body.spec();
        let h = spec.spacing;
        let f = around.fragment;
        let low = around.low.map(|l| l + 1);
        let dims = around.dims.map(|n| n - 2);
        let origin = spec.origin + DVec3::new(low[0] as f64, low[1] as f64, low[2] as f64) * h;
        let sub = GridSpec::try_new(origin, h, dims)?;
        let [nx, ny, _] = dims;
        let mut values = vec![0.0; sub.sample_count()];
        let components = &self.grouping.fragments[f as usize];
        // The regions' level sets a row at a time (`FracturePattern::row_values`), pattern units,
        // for the samples farther than a cell from the fragment's boundary.
        let (placement, scale) = (self.placement, self.placement.scale);
        let step = placement.to_pattern(sub.position(1, 0, 0)) - placement.to_pattern(sub.position(0, 0, 0));
        let offsets = around.offsets();
        values.par_chunks_mut(nx * ny).enumerate().for_each(|(k, plane)| {
            let mut regions = vec![0.0; nx * components.len()];
            for j in 0..ny {
                let row = around.index([1, j + 1, k + 1]);
                let mut evaluated = false;
                for i in 0..nx {
                    let at = row + i;
                    let side = around.sides[at];
                    let (gi, gj, gk) = (low[0] + i as i64, low[1] + j as i64, low[2] + k as i64);
                    let lattice = (0..spec.dims[0] as i64).contains(&gi)
                        && (0..spec.dims[1] as i64).contains(&gj)
                        && (0..spec.dims[2] as i64).contains(&gk);
                    let body = if lattice {
                        self.body.values()[spec.index(gi as usize, gj as usize, gk as usize)]
                    } else {
                        self.body.value(sub.position(i, j, k))
                    };
                    // Outside the parent the cells' distance is negative, so the parent's level
                    // set decides.
                    if side == Side::Outside {
                        plane[i + nx * j] = body;
                        continue;
                    }
                    plane[i + nx * j] = match (side, around.across(at, &offsets)) {
                        (Side::Own, Some(d)) => body.max(-d * h),
                        // Inside the parent, the other piece's cells are all there is.
                        (_, Some(d)) => d * h,
                        (side, None) => {
                            if !evaluated {
                                let start = placement.to_pattern(sub.position(0, j, k));
                                for (&c, row) in components.iter().zip(regions.chunks_exact_mut(nx)) {
                                    self.pattern
                                        .row_values(self.cut.parts[c as usize].region, start, step, row);
                                }
                                evaluated = true;
                            }
                            let region = (0..components.len())
                                .map(|c| regions[c * nx + i] * scale)
                                .fold(f64::INFINITY, f64::min);
                            if side == Side::Own {
                                body.max(region.min(-h))
                            } else {
                                region.max(h)
                            }
                        }
                    };
                }
            }
        });
        Ok(SdfGrid::try_from_values(sub, values)?)
    }

    /// Corners of the fragment's cells on the faces it shares with other pieces, inside the
    /// parent (or projected onto its surface from just outside), thinned as the module's docs
    /// say, in lattice order.
    fn corner_particles(&self, around: &Neighbourhood, spacing: f64) -> Vec<DVec3> {
        let spec = self.body.spec();
        let h = spec.spacing;
        // Corner (a, b, c) of the neighbourhood sits between its samples a - 1 and a along x
        // (likewise y, z); the fragment's cells are one sample in from the neighbourhood's
        // border on every side, so its corners are those from 2 to dims - 2.
        let [nx, ny, nz] = around.dims;
        let mut chosen: HashMap<[i64; 3], (u8, usize)> = HashMap::new();
        let mut convex: HashMap<([i64; 3], u8), (f64, usize)> = HashMap::new();
        let mut points = Vec::new();
        for c in 2..nz - 1 {
            for b in 2..ny - 1 {
                for a in 2..nx - 1 {
                    // The eight cells around the corner are in the block around its lowest.
                    if !around.mixed[around.index([a - 1, b - 1, c - 1])] {
                        continue;
                    }
                    let (mut own, mut other, mut octant) = (0u8, false, 0u8);
                    for corner in 0..8usize {
                        let at =
                            around.index([a - 1 + (corner & 1), b - 1 + ((corner >> 1) & 1), c - 1 + (corner >> 2)]);
                        match around.sides[at] {
                            Side::Own => {
                                own += 1;
                                octant = corner as u8;
                            }
                            Side::Other => other = true,
                            Side::Outside => {}
                        }
                    }
                    if own == 0 || !other {
                        continue;
                    }
                    let lattice = DVec3::new(a as f64, b as f64, c as f64) - 0.5;
                    let mut p = spec.origin + (around.low_position() + lattice) * h;
                    let value = self.body.value(p);
                    if value > CORNER_REACH * h {
                        continue;
                    }
                    if value > 0.0 {
                        let gradient = self.body.gradient(p);
                        if gradient.length_squared() > 0.0 {
                            p -= gradient * (value / gradient.length_squared());
                        }
                    }
                    let index = points.len();
                    points.push(p);
                    let bin = (p / spacing).floor().as_i64vec3().to_array();
                    if own == 1 {
                        // Pointing away from the fragment's cell, the corner's octant.
                        let outward = DVec3::new(
                            if octant & 1 == 0 { 1.0 } else { -1.0 },
                            if octant & 2 == 0 { 1.0 } else { -1.0 },
                            if octant & 4 == 0 { 1.0 } else { -1.0 },
                        );
                        let reach = p.dot(outward);
                        convex
                            .entry((bin, octant))
                            .and_modify(|best: &mut (f64, usize)| {
                                if reach > best.0 {
                                    *best = (reach, index)
                                }
                            })
                            .or_insert((reach, index));
                        continue;
                    }
                    let key = (p / (2.0 * spacing)).floor().as_i64vec3().to_array();
                    chosen
                        .entry(key)
                        .and_modify(|best| {
                            if own < best.0 {
                                *best = (own, index)
                            }
                        })
                        .or_insert((own, index));
                }
            }
        }
        let mut kept: Vec<usize> = chosen
            .into_values()
            .map(|(_, index)| index)
            .chain(convex.into_values().map(|(_, index)| index))
            .collect();
        kept.sort_unstable();
        kept.into_iter().map(|index| points[index]).collect()
    }

    /// Whether lattice sample `s` (at lattice indices `at`, inside a kept fragment) lies on a cut
    /// face (next to a sample of another fragment and another region) and whether it lies on the
    /// fragment's outer surface (next to a sample outside the parent or of a removed piece).
    fn faces(&self, s: usize, at: [usize; 3]) -> (bool, bool) {
        let f = self.fragment_of[self.cut.components[s] as usize];
        let neighbours = face_neighbours(self.body.spec().dims, s, at);
        let mut on_cut = false;
        let mut on_surface = false;
        for n in neighbours.into_iter().flatten() {
            let d = self.cut.components[n];
            if d == NONE {
                on_surface = true;
            } else if self.fragment_of[d as usize] != f {
                on_cut |= self.cut.labels[n] != self.cut.labels[s];
                on_surface |= self.fragment_of[d as usize] == NONE;
            }
        }
        (on_cut, on_surface)
    }

    /// Fragment `f`'s lattice samples on a cut face or its outer surface, body frame, in
    /// lattice order.
    fn outermost_samples(&self, f: u32) -> Vec<DVec3> {
        let spec = self.body.spec();
        let (low, high) = self.cell_box(f);
        let mut samples = Vec::new();
        for k in low[2]..=high[2] {
            for j in low[1]..=high[1] {
                for i in low[0]..=high[0] {
                    let s = spec.index(i, j, k);
                    let c = self.cut.components[s];
                    if c == NONE || self.fragment_of[c as usize] != f {
                        continue;
                    }
                    let (on_cut, on_surface) = self.faces(s, [i, j, k]);
                    if on_cut || on_surface {
                        samples.push(spec.position(i, j, k));
                    }
                }
            }
        }
        samples
    }

    /// Lowest and highest lattice indices of fragment `f`'s samples.
    fn cell_box(&self, f: u32) -> ([usize; 3], [usize; 3]) {
        let mut low = [usize::MAX; 3];
        let mut high = [0; 3];
        for &c in &self.grouping.fragments[f as usize] {
            let part = &self.cut.parts[c as usize];
            for a in 0..3 {
                low[a] = low[a].min(part.low[a]);
                high[a] = high[a].max(part.high[a]);
            }
        }
        (low, high)
    }
}

/// The side of every lattice sample around one fragment's cells, seen from it: the box of its
/// cells grown by [`PADDING`] and one more sample, so that every sample of its level set has its
/// 26 neighbours here.
struct Neighbourhood {
    fragment: u32,
    /// Lattice indices of the first sample (may be negative: beyond the lattice).
    low: [i64; 3],
    dims: [usize; 3],
    sides: Vec<Side>,
    /// Per sample, whether the block of 27 around it holds both sides of the fragment's cut
    /// faces (false on the border, whose blocks are not all here).
    mixed: Vec<bool>,
}

impl Neighbourhood {
    fn new(cutter: &Cutter<'_>, fragment: u32) -> Self {
        let spec = cutter.body.spec();
        let (cells_low, cells_high) = cutter.cell_box(fragment);
        let low = cells_low.map(|l| l as i64 - PADDING - 1);
        let dims = [0, 1, 2].map(|a| (cells_high[a] as i64 + PADDING + 1 - low[a] + 1) as usize);
        // Row by row: the lattice's samples of a row are one stretch of it, the rest outside.
        let mut sides = vec![Side::Outside; dims[0] * dims[1] * dims[2]];
        let on = |a: usize, g: i64| (0..spec.dims[a] as i64).contains(&g);
        let first = (-low[0]).max(0) as usize;
        let last = ((spec.dims[0] as i64 - low[0]).min(dims[0] as i64)).max(0) as usize;
        for (row, out) in sides.chunks_exact_mut(dims[0]).enumerate() {
            let (gj, gk) = (low[1] + (row % dims[1]) as i64, low[2] + (row / dims[1]) as i64);
            if !(on(1, gj) && on(2, gk)) || first >= last {
                continue;
            }
            let start = spec.index((low[0] + first as i64) as usize, gj as usize, gk as usize);
            let components = &cutter.cut.components[start..start + (last - first)];
            for (side, &c) in out[first..last].iter_mut().zip(components) {
                *side = match c {
                    NONE => Side::Outside,
                    c if cutter.fragment_of[c as usize] == fragment => Side::Own,
                    _ => Side::Other,
                };
            }
        }
        let mixed = mixed_blocks(dims, &sides);
        Self {
            fragment,
            low,
            dims,
            sides,
            mixed,
        }
    }

    /// Index of local indices `[i, j, k]`.
    #[inline]
    fn index(&self, [i, j, k]: [usize; 3]) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Lattice indices of the first sample, as a point.
    fn low_position(&self) -> DVec3 {
        DVec3::new(self.low[0] as f64, self.low[1] as f64, self.low[2] as f64)
    }

    /// The 26 neighbours' index offsets, with their distance to the neighbour's cell in
    /// spacings: faces first, then edges, then corners.
    fn offsets(&self) -> [(isize, f64); 26] {
        let mut offsets = [(0isize, 0.0); 26];
        let mut n = 0;
        for across in 1..=3 {
            for dk in -1isize..=1 {
                for dj in -1isize..=1 {
                    for di in -1isize..=1 {
                        if di.abs() + dj.abs() + dk.abs() == across {
                            let delta = di + self.dims[0] as isize * (dj + self.dims[1] as isize * dk);
                            offsets[n] = (delta, 0.5 * (across as f64).sqrt());
                            n += 1;
                        }
                    }
                }
            }
        }
        offsets
    }

    /// Distance in spacings from sample `at` to the nearest cell among its 26 neighbours on the
    /// other side of the fragment's cut faces (the fragment and the outside on one, other pieces
    /// on the other); `None` if all are on its side.
    #[inline]
    fn across(&self, at: usize, offsets: &[(isize, f64); 26]) -> Option<f64> {
        if !self.mixed[at] {
            return None;
        }
        let other = self.sides[at] == Side::Other;
        offsets
            .iter()
            .find(|(delta, _)| (self.sides[at.wrapping_add_signed(*delta)] == Side::Other) != other)
            .map(|&(_, d)| d)
    }
}

/// Per sample of a block of `dims` samples with `sides`, whether the 27 samples around it hold
/// both another piece's cells and the fragment's or the outside (false on the border): a max
/// filter three samples wide along each axis in turn, over two bits (another piece's, the rest).
fn mixed_blocks([nx, ny, nz]: [usize; 3], sides: &[Side]) -> Vec<bool> {
    let mut bits: Vec<u8> = sides.iter().map(|&s| if s == Side::Other { 1 } else { 2 }).collect();
    let mut spread = bits.clone();
    // Along x within each row, then along y and z between whole rows and planes.
    for row in bits.chunks_exact(nx).zip(spread.chunks_exact_mut(nx)) {
        let (from, to) = row;
        for i in 1..nx - 1 {
            to[i] = from[i - 1] | from[i] | from[i + 1];
        }
    }
    std::mem::swap(&mut bits, &mut spread);
    for (stride, count) in [(nx, ny), (nx * ny, nz)] {
        spread.copy_from_slice(&bits);
        for at in 0..bits.len() {
            let along = (at / stride) % count;
            if along > 0 && along + 1 < count {
                spread[at] = bits[at - stride] | bits[at] | bits[at + stride];
            }
        }
        std::mem::swap(&mut bits, &mut spread);
    }
    // Only the inner samples were spread along all three axes.
    let mut mixed = vec![false; sides.len()];
    for k in 1..nz - 1 {
        for j in 1..ny - 1 {
            let row = nx * (j + ny * k);
            for at in row + 1..row + nx - 1 {
                mixed[at] = bits[at] == 3;
            }
        }
    }
    mixed
}
