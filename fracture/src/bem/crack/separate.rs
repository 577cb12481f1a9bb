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
//! Each piece's surface is the zero set of a level set on the grid: the uncracked body's signed
//! distance, cut by the distance to the barrier with the sign of the piece (inside the piece
//! below zero, in the others above) where the piece faces another, contoured by marching cubes
//! and simplified to the body's target edge ([`shatter_collision::simplify`]). So a piece's
//! faces follow the body's surface and the cracks that part it from the others at the grid's
//! resolution, and a crack that runs into a piece without cutting anything off is healed in it
//! (a slit would cost the piece's next stress solve many more elements and iterations). The
//! exact cracked surface mesh is kept for the crack paths
//! ([`super::mesh::CrackMesh::wall_triangles`]); the pieces are grid-resolved closed meshes
//! whose volumes sum to the body's within a layer of samples.
//!
//! Everything is deterministic: the segment tests run on the thread pool, each writing its own
//! sample's flags, and the flood and the merges go in index order.

use glam::DVec3;
use rayon::prelude::*;
use shatter_collision::TriMesh;
use shatter_collision::level_set::level_set_from_mesh;
use shatter_collision::marching_cubes::contour;
use shatter_collision::mass_properties::{VolumeIntegrals, mesh_integrals};
use shatter_collision::simplify::{Simplification, simplify};
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
    /// Edge length (m) each piece's contoured surface is simplified towards: the body's own
    /// target edge, so that a piece costs about what its share of the body did when it breaks
    /// again.
    pub edge: f64,
}

impl Separation {
    /// Checks every length, naming the first bad one.
    pub fn validate(&self) -> Result<(), FractureError> {
        for (what, value) in [
            ("separation grid spacing (m)", self.spacing),
            ("pieces' surface edge (m)", self.edge),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(FractureError::invalid(what, value, "a positive finite length"));
            }
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

/// The pieces the cracks of `crack` (the cracked surface of the body bounded by `uncracked`,
/// material frame, m) cut the body into, each a closed mesh with its volume integrals (see the
/// module docs); empty when the body stays in one piece. Fails on bad settings (named) or a
/// piece that marching cubes could not close.
pub fn separate(
    uncracked: &TriMesh,
    crack: &CrackMesh,
    settings: &Separation,
) -> Result<Vec<(TriMesh, VolumeIntegrals)>, FractureError> {
    settings.validate()?;
    // The material flooded is what the cracked surface bounds: the slots are outside it, and
    // where a crack's mouth meets the surface no sample lies between the two.
    let (body, _) = crack.to_trimesh()?;
    let spec = grid(&body, settings.spacing)?;
    let barrier = Barrier::new(crack, settings.ligament, spec);
    if barrier.wall_count() == 0 {
        return Ok(Vec::new());
    }
    let sdf = level_set_from_mesh(&body, spec)?;
    let mut found = regions(&sdf, &barrier, settings.smallest);
    if found.sizes.len() < 2 {
        return Ok(Vec::new());
    }
    // The pieces' faces are contoured from the uncracked body's level set: slots a fraction of
    // a spacing wide are below what the grid resolves, and contoured they crumple a piece's
    // surface wherever a crack runs into it. The faces between pieces come from the barrier.
    let sdf = level_set_from_mesh(uncracked, spec)?;
    take_in_slots(&mut found, &sdf);
    let h = spec.spacing;
    // Distance to the barrier within each inside sample's eight cells, at most a spacing; a
    // spacing also where no other piece's sample lies within two samples. So a piece's faces
    // follow the barrier only where it parts the piece from another: a crack that runs into a
    // piece without cutting it off is healed there, not kept as a slit (two sheets of surface a
    // slot's width apart, which the stress solve resolves only with many more iterations and
    // elements).
    let distance: Vec<f64> = (0..spec.sample_count())
        .into_par_iter()
        .map(|s| {
            if found.label[s] == u32::MAX {
                return h;
            }
            let d = barrier.distance(spec.coordinates(s), h).max(1e-6 * h);
            if d < h && faces_another(&found, s, 2) { d } else { h }
        })
        .collect();
    (0..found.sizes.len())
        .map(|r| piece_surface(&sdf, &found, &distance, r as u32, settings.edge))
        .collect()
}

/// Gives every sample inside the uncracked body that the flood left out (it lay in a slot, or
/// in material cut off with a region too small to keep) the region of its first labelled
/// neighbour along the axes, in one pass over the labels as they were; a sample with none stays
/// out.
fn take_in_slots(found: &mut Regions, uncracked: &SdfGrid) {
    let spec = found.spec;
    let taken: Vec<(usize, u32)> = (0..spec.sample_count())
        .filter(|&s| found.label[s] == u32::MAX && uncracked.values()[s] < 0.0)
        .filter_map(|s| {
            let c = spec.coordinates(s);
            (0..3)
                .flat_map(|a| {
                    let step = stride(&spec, a);
                    [
                        (c[a] + 1 < spec.dims[a]).then(|| s + step),
                        (c[a] > 0).then(|| s - step),
                    ]
                })
                .flatten()
                .map(|o| found.label[o])
                .find(|&l| l != u32::MAX)
                .map(|l| (s, l))
        })
        .collect();
    for (s, l) in taken {
        found.label[s] = l;
        found.sizes[l as usize] += 1;
    }
}

/// Whether a sample of a region other than sample `s`'s lies within `reach` samples of it
/// along every axis.
fn faces_another(found: &Regions, s: usize, reach: usize) -> bool {
    let spec = &found.spec;
    let own = found.label[s];
    let c = spec.coordinates(s);
    let range = |a: usize| c[a].saturating_sub(reach)..=(c[a] + reach).min(spec.dims[a] - 1);
    range(2).any(|k| {
        range(1).any(|j| {
            range(0).any(|i| {
                let other = found.label[spec.index(i, j, k)];
                other != own && other != u32::MAX
            })
        })
    })
}

/// The closed surface of region `r` and its volume integrals: contoured on every sample, then
/// simplified towards `edge` (m) within half the spacing (the contour's own error where it
/// cuts the body's edges and corners is of that order), which removes the contour's slivers and brings the triangle count to about
/// that of a surface meshed at the body's target edge.
fn piece_surface(
    sdf: &SdfGrid,
    found: &Regions,
    distance: &[f64],
    r: u32,
    edge: f64,
) -> Result<(TriMesh, VolumeIntegrals), FractureError> {
    let contoured = contour_piece(sdf, found, distance, r)?;
    let settings = Simplification::new(edge, 0.5 * found.spec.spacing);
    let (surface, _) = simplify(&contoured, &settings)?;
    let integrals = mesh_integrals(&surface);
    Ok((surface, integrals))
}

/// Region `r`'s surface: the level set `max(phi, -d)` on its samples
/// and `max(phi, d)` elsewhere (`phi` the body's signed distance, `d` the distance to the
/// barrier), contoured on the box of samples around the region.
fn contour_piece(sdf: &SdfGrid, found: &Regions, distance: &[f64], r: u32) -> Result<TriMesh, FractureError> {
    let spec = found.spec;
    let (mut lo, mut hi) = ([usize::MAX; 3], [0usize; 3]);
    for (s, _) in found.label.iter().enumerate().filter(|(_, l)| **l == r) {
        let c = spec.coordinates(s);
        for a in 0..3 {
            lo[a] = lo[a].min(c[a]);
            hi[a] = hi[a].max(c[a]);
        }
    }
    // A sample of margin (the body's samples are two inside the grid's edges).
    let lo = lo.map(|c| c.saturating_sub(1));
    let dims = [0, 1, 2].map(|a| (hi[a] + 1).min(spec.dims[a] - 1) - lo[a] + 1);
    let sub = GridSpec::try_new(spec.position(lo[0], lo[1], lo[2]), spec.spacing, dims)?;
    let at = |a: usize, i: usize| lo[a] + i;
    // The barrier's distance is taken as at least a quarter spacing: a sample nearer the
    // barrier would put the surface within a hair of it, and a layer of samples between two
    // barrier sheets would come out as two sheets of surface a hair apart (a fin the stress
    // solve cannot converge on). The faces move by at most that quarter spacing.
    let least = 0.25 * spec.spacing;
    let mut values = Vec::with_capacity(sub.sample_count());
    for k in 0..dims[2] {
        for j in 0..dims[1] {
            for i in 0..dims[0] {
                let s = spec.index(at(0, i), at(1, j), at(2, k));
                let phi = sdf.values()[s];
                values.push(match found.label[s] {
                    // Outside the body, or material dropped with a region too small to keep.
                    u32::MAX if phi < 0.0 => spec.spacing,
                    u32::MAX => phi,
                    l if l == r => phi.max(-distance[s].max(least)),
                    _ => phi.max(distance[s].max(least)),
                });
            }
        }
    }
    let surface = contour(&SdfGrid::try_from_values(sub, values)?)?;
    require_solid(&surface)?;
    Ok(surface)
}
