//! The pieces a cracked body falls into, found on a grid of its material (the topology update
//! of Zhu 2015 Algorithm 3, made robust to cuts that the surface mesh refuses).
//!
//! The explicit cut through a ligament (`through`, `breakout`) edits the surface mesh, and
//! refuses whenever the edit would break the mesh's checks: a front a little short of the far
//! surface, a path that meets another crack, triangles past the angle bounds. Then cracks that
//! span the body, or that meet each other round a piece, leave it whole. Here instead the
//! body's material is sampled on a regular grid and flooded across every sample-to-sample
//! segment that does not meet a crack wall or a bridge over a ligament thin enough to break
//! ([`super::barrier`]); each region the flood reaches is a piece. Regions smaller than
//! [`Separation::smallest`] (samples shut in between folds of a front's walls) join the
//! neighbouring region they share the most blocked segments with.
//!
//! Each piece's surface is the zero set of a level set on the grid: the body's own signed
//! distance, cut by the distance to the barrier with the sign of the piece (inside the piece
//! below zero, in the others above), contoured by marching cubes. So a piece's faces follow the
//! body's surface and its cracks' walls at the grid's resolution: the exact cracked surface
//! mesh is kept for the crack paths ([`super::mesh::CrackMesh::wall_triangles`]), the pieces
//! are grid-resolved closed meshes whose volumes sum to the body's within a layer of samples.
//!
//! Everything is deterministic: the segment tests run on the thread pool, each writing its own
//! sample's flags, and the flood and the merges go in index order.

use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::TriMesh;
use shatter_collision::level_set::level_set_from_mesh;
use shatter_collision::marching_cubes::contour;
use shatter_collision::mass_properties::{VolumeIntegrals, mesh_integrals};
use shatter_collision::topology::require_solid;
use shatter_collision::{GridSpec, SdfGrid};

use super::barrier::Barrier;
use super::mesh::CrackMesh;
use crate::error::FractureError;

/// Most samples a separation grid may hold; a finer spacing is coarsened to stay within it.
pub const MAX_SAMPLES: usize = 1 << 23;

/// How the pieces are found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Separation {
    /// Distance between samples (m).
    pub spacing: f64,
    /// Thickest ligament that breaks (m): fronts within it of a surface are bridged to it.
    pub ligament: f64,
    /// Smallest piece (m^3); smaller regions join a neighbour.
    pub smallest: f64,
}

impl Separation {
    /// Checks every length, naming the first bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        if !(self.spacing.is_finite() && self.spacing > 0.0) {
            return Err(FractureError::invalid(
                "separation grid spacing (m)",
                self.spacing,
                "a positive finite length",
            ));
        }
        for (what, value) in [
            ("ligament that breaks (m)", self.ligament),
            ("smallest piece (m^3)", self.smallest),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(FractureError::invalid(what, value, "finite and >= 0"));
            }
        }
        Ok(())
    }
}

/// The regions of the body's samples that the barrier cuts apart.
#[derive(Clone, Debug)]
struct Regions {
    /// The grid.
    spec: GridSpec,
    /// Per sample, its region (`u32::MAX`: outside the body).
    label: Vec<u32>,
    /// Samples per region.
    sizes: Vec<usize>,
}

impl Regions {
    /// Volume of region `r` (m^3): its samples times the cell volume.
    fn volume(&self, r: usize) -> f64 {
        self.sizes[r] as f64 * self.spec.spacing.powi(3)
    }
}

/// The grid the separation of a body with surface `body` samples, `spacing` apart (coarsened to
/// stay under [`MAX_SAMPLES`]), two samples past the body on every side, its origin shifted
/// off the body's symmetry planes by an irrational fraction of the spacing so that planar cracks
/// on them do not pass through samples.
fn grid(body: &TriMesh, spacing: f64) -> Result<GridSpec, FractureError> {
    let bounds = body
        .bounds()
        .ok_or_else(|| FractureError::input("an empty surface has no pieces"))?;
    let size = bounds.max - bounds.min;
    let mut h = spacing;
    let samples = |h: f64| {
        ((size / h).ceil() + DVec3::splat(5.0))
            .to_array()
            .iter()
            .product::<f64>()
    };
    while samples(h) > MAX_SAMPLES as f64 {
        h *= 1.25;
    }
    let shift = DVec3::new(0.309_016_994, 0.207_879_576, 0.113_700_6) * h;
    let origin = bounds.min - DVec3::splat(2.0 * h) - shift;
    let dims = ((size + DVec3::splat(4.0 * h) + shift) / h)
        .ceil()
        .to_array()
        .map(|c| c as usize + 1);
    Ok(GridSpec::try_new(origin, h, dims)?)
}

/// Floods the samples of `body` inside it across every segment `barrier` does not block (see
/// the module docs), then joins regions under `smallest` (m^3) to their neighbours.
fn regions(body: &SdfGrid, barrier: &Barrier, smallest: f64) -> Regions {
    let spec = *body.spec();
    let n = spec.sample_count();
    let inside: Vec<bool> = body.values().iter().map(|&v| v < 0.0).collect();
    // Bit `a` of a sample: the segment to its next sample along axis `a` is blocked.
    let blocked: Vec<u8> = (0..n)
        .into_par_iter()
        .map(|s| {
            if !inside[s] {
                return 0;
            }
            let c = spec.coordinates(s);
            let mut bits = 0u8;
            for axis in 0..3 {
                if c[axis] + 1 < spec.dims[axis] && inside[s + stride(&spec, axis)] && barrier.blocks(c, axis) {
                    bits |= 1 << axis;
                }
            }
            bits
        })
        .collect();
    let mut label = vec![u32::MAX; n];
    let mut sizes = Vec::new();
    let mut stack = Vec::new();
    for start in 0..n {
        if !inside[start] || label[start] != u32::MAX {
            continue;
        }
        let region = sizes.len() as u32;
        label[start] = region;
        stack.push(start);
        let mut count = 0;
        while let Some(s) = stack.pop() {
            count += 1;
            for (o, open) in neighbours(&spec, s, &blocked) {
                if open && inside[o] && label[o] == u32::MAX {
                    label[o] = region;
                    stack.push(o);
                }
            }
        }
        sizes.push(count);
    }
    let mut regions = Regions { spec, label, sizes };
    join_small(&mut regions, &blocked, smallest);
    regions
}

/// Index step to the next sample along `axis`.
fn stride(spec: &GridSpec, axis: usize) -> usize {
    match axis {
        0 => 1,
        1 => spec.dims[0],
        _ => spec.dims[0] * spec.dims[1],
    }
}

/// The up to six neighbours of sample `s`, each with whether the segment to it is open.
fn neighbours(spec: &GridSpec, s: usize, blocked: &[u8]) -> impl Iterator<Item = (usize, bool)> {
    let c = spec.coordinates(s);
    let mut out = smallvec::SmallVec::<[(usize, bool); 6]>::new();
    for (axis, (&at, &dim)) in c.iter().zip(&spec.dims).enumerate() {
        let step = stride(spec, axis);
        if at + 1 < dim {
            out.push((s + step, blocked[s] & (1 << axis) == 0));
        }
        if at > 0 {
            out.push((s - step, blocked[s - step] & (1 << axis) == 0));
        }
    }
    out.into_iter()
}

/// Joins every region under `smallest` (m^3), smallest first, to the neighbouring region it
/// shares the most blocked segments with (the lower index on a tie); one with no neighbour (a
/// few samples the body's surface and the barrier shut in, a sliver beside a slot) is dropped.
/// Then renumbers the regions in order of their first sample.
fn join_small(regions: &mut Regions, blocked: &[u8], smallest: f64) {
    let cell = regions.spec.spacing.powi(3);
    let count = regions.sizes.len();
    let mut into: Vec<u32> = (0..count as u32).collect();
    let find = |into: &[u32], mut r: u32| {
        while into[r as usize] != r {
            r = into[r as usize];
        }
        r
    };
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&r| (regions.sizes[r], r));
    let mut sizes = regions.sizes.clone();
    let mut dropped = vec![false; count];
    // Blocked segments between regions, counted once per pair of samples.
    let mut shared: hashbrown::HashMap<(u32, u32), usize> = hashbrown::HashMap::new();
    for s in 0..regions.label.len() {
        let a = regions.label[s];
        if a == u32::MAX {
            continue;
        }
        for (o, open) in neighbours(&regions.spec, s, blocked) {
            let b = regions.label[o];
            if !open && b != u32::MAX && b != a && o > s {
                *shared.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    for r in order {
        let root = find(&into, r as u32);
        if root != r as u32 || sizes[r] as f64 * cell >= smallest {
            continue;
        }
        // The neighbour sharing the most segments with `r`, through every region joined to it.
        let mut best: Option<(usize, u32)> = None;
        let mut totals: Vec<(u32, usize)> = Vec::new();
        for (&(a, b), &k) in &shared {
            let (ra, rb) = (find(&into, a), find(&into, b));
            let other = if ra == root && rb != root {
                rb
            } else if rb == root && ra != root {
                ra
            } else {
                continue;
            };
            match totals.iter_mut().find(|(o, _)| *o == other) {
                Some(entry) => entry.1 += k,
                None => totals.push((other, k)),
            }
        }
        for (other, k) in totals {
            if best.is_none_or(|(bk, bo)| k > bk || (k == bk && other < bo)) {
                best = Some((k, other));
            }
        }
        match best {
            Some((_, other)) => {
                into[root as usize] = other;
                sizes[other as usize] += sizes[root as usize];
            }
            None => dropped[root as usize] = true,
        }
    }
    let mut renumber = vec![u32::MAX; count];
    let mut new_sizes = Vec::new();
    for l in regions.label.iter_mut().filter(|l| **l != u32::MAX) {
        let root = find(&into, *l) as usize;
        if dropped[root] {
            *l = u32::MAX;
            continue;
        }
        if renumber[root] == u32::MAX {
            renumber[root] = new_sizes.len() as u32;
            new_sizes.push(0);
        }
        *l = renumber[root];
        new_sizes[*l as usize] += 1;
    }
    regions.sizes = new_sizes;
}

/// The pieces the cracks of `crack` (the cracked surface, material frame, m) cut its body into,
/// each a closed mesh with its volume integrals (see the module docs); empty when the body
/// stays in one piece. Fails on bad settings (named) or a piece that marching cubes could not
/// close.
pub fn separate(crack: &CrackMesh, settings: &Separation) -> Result<Vec<(TriMesh, VolumeIntegrals)>, FractureError> {
    settings.validate()?;
    // The material is what the cracked surface bounds: the slots are outside it, and where a
    // crack's mouth meets the surface no sample lies between the two.
    let (body, _) = crack.to_trimesh()?;
    let spec = grid(&body, settings.spacing)?;
    let barrier = Barrier::new(crack, settings.ligament, spec);
    if barrier.wall_count() == 0 {
        return Ok(Vec::new());
    }
    let sdf = level_set_from_mesh(&body, spec)?;
    let found = regions(&sdf, &barrier, settings.smallest);
    if found.sizes.len() < 2 {
        return Ok(Vec::new());
    }
    let h = spec.spacing;
    // Distance to the barrier within each inside sample's eight cells, at most a spacing.
    let distance: Vec<f64> = (0..spec.sample_count())
        .into_par_iter()
        .map(|s| {
            if found.label[s] == u32::MAX {
                h
            } else {
                barrier.distance(spec.coordinates(s), h).max(1e-6 * h)
            }
        })
        .collect();
    (0..found.sizes.len())
        .map(|r| piece_surface(&sdf, &found, &distance, r as u32))
        .collect()
}

/// The closed surface of region `r` and its volume integrals, contoured on every second sample
/// (a piece is a body that may break again, and its surface then holds about as many triangles
/// as a surface meshed at the target edge, twice the spacing), or on every sample when the
/// coarser surface loses the piece (thinner than two spacings: nothing left, or under half its
/// samples' volume).
fn piece_surface(
    sdf: &SdfGrid,
    found: &Regions,
    distance: &[f64],
    r: u32,
) -> Result<(TriMesh, VolumeIntegrals), FractureError> {
    let fine = found.volume(r as usize);
    match contour_piece(sdf, found, distance, r, 2) {
        Ok((surface, integrals)) if integrals.volume >= 0.5 * fine => Ok((surface, integrals)),
        _ => contour_piece(sdf, found, distance, r, 1),
    }
}

/// Region `r`'s surface on every `step`-th sample: the level set `max(phi, -d)` on its samples
/// and `max(phi, d)` elsewhere (`phi` the body's signed distance, `d` the distance to the
/// barrier), contoured on the box of samples around the region.
fn contour_piece(
    sdf: &SdfGrid,
    found: &Regions,
    distance: &[f64],
    r: u32,
    step: usize,
) -> Result<(TriMesh, VolumeIntegrals), FractureError> {
    let spec = found.spec;
    let (mut lo, mut hi) = ([usize::MAX; 3], [0usize; 3]);
    for (s, _) in found.label.iter().enumerate().filter(|(_, l)| **l == r) {
        let c = spec.coordinates(s);
        for a in 0..3 {
            lo[a] = lo[a].min(c[a]);
            hi[a] = hi[a].max(c[a]);
        }
    }
    // A step of margin (the body's samples are two inside the grid's edges; past the grid's
    // last sample the values repeat it, outside the body).
    let lo = lo.map(|c| c.saturating_sub(step));
    let dims = [0, 1, 2].map(|a| (hi[a] + step - lo[a]).div_ceil(step) + 1);
    let sub = GridSpec::try_new(spec.position(lo[0], lo[1], lo[2]), spec.spacing * step as f64, dims)?;
    let at = |a: usize, i: usize| (lo[a] + i * step).min(spec.dims[a] - 1);
    let mut values = Vec::with_capacity(sub.sample_count());
    for k in 0..dims[2] {
        for j in 0..dims[1] {
            for i in 0..dims[0] {
                let s = spec.index(at(0, i), at(1, j), at(2, k));
                let phi = sdf.values()[s];
                values.push(match found.label[s] {
                    u32::MAX => phi,
                    l if l == r => phi.max(-distance[s]),
                    _ => phi.max(distance[s]),
                });
            }
        }
    }
    let surface = contour(&SdfGrid::try_from_values(sub, values)?)?;
    require_solid(&surface)?;
    let integrals = mesh_integrals(&surface);
    Ok((surface, integrals))
}
