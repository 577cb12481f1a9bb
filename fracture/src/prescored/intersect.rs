//! The parent's lattice cut by a placed pattern (Su 2009 section 4.2): every lattice sample
//! inside the parent gets the region that owns it, samples of one region are flood-filled into
//! connected components (each its own fragment), and each component's cells are summed for its
//! mass properties.
//!
//! A sample stands for the cube of one spacing around it, inside or outside the fragment by the
//! sign of the level sets at its centre (the paper's simplification). The cubes of a body tile
//! the lattice, so the fragments' volumes sum to the parent's cell volume exactly, and each
//! differs from its true volume by at most the cells its surface passes through: a layer one cell
//! thick, `area * spacing / 2` in the worst case.

use glam::{DMat3, DVec3};
use hashbrown::HashMap;
use rayon::prelude::*;
use shatter_collision::SdfGrid;
use shatter_collision::mass_properties::VolumeIntegrals;

use super::pattern::FracturePattern;
use super::placement::Placement;

/// No region or component.
pub(crate) const NONE: u32 = u32::MAX;

/// A connected piece of one region inside the parent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Component {
    /// The region it lies in.
    pub region: u32,
    /// Its samples' cells, summed.
    sums: CellSums,
    /// Lowest and highest lattice indices of its samples.
    pub low: [usize; 3],
    pub high: [usize; 3],
}

impl Component {
    /// Lattice samples in it.
    pub fn cells(&self) -> usize {
        self.sums.count
    }

    /// Volume integrals of its cells (cubes of side `spacing` around its samples), body frame.
    pub fn integrals(&self, spacing: f64) -> VolumeIntegrals {
        self.sums.integrals(spacing)
    }
}

/// Sums over lattice samples of `1`, `x` and `x x^T`: the volume integrals of the cubes of one
/// spacing around them, once the spacing is known.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CellSums {
    count: usize,
    first: DVec3,
    second: DMat3,
}

impl Default for CellSums {
    /// No samples: all zero (a derived `Default` would start `second` at glam's identity).
    fn default() -> Self {
        Self {
            count: 0,
            first: DVec3::ZERO,
            second: DMat3::ZERO,
        }
    }
}

impl CellSums {
    /// Adds the sample at `x`.
    fn add(&mut self, x: DVec3) {
        self.count += 1;
        self.first += x;
        self.second += DMat3::from_cols(x * x.x, x * x.y, x * x.z);
    }

    /// Volume integrals of the cubes of side `spacing` centred on the samples: each cube adds
    /// `h^3 (1, x, x x^T + h^2/12 I)`.
    fn integrals(&self, spacing: f64) -> VolumeIntegrals {
        let cube = spacing * spacing * spacing;
        let n = self.count as f64;
        VolumeIntegrals {
            volume: n * cube,
            first: self.first * cube,
            second: (self.second + DMat3::from_diagonal(DVec3::splat(n * spacing * spacing / 12.0))) * cube,
        }
    }
}

/// The parent's lattice cut by a placed pattern.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Intersection {
    /// Region per lattice sample inside the parent, [`NONE`] outside.
    pub labels: Vec<u32>,
    /// Component per lattice sample, [`NONE`] outside.
    pub components: Vec<u32>,
    /// The components, numbered in the order of their first sample.
    pub parts: Vec<Component>,
}

/// Labels, flood-fills and sums the lattice of `body` (its level set, body frame) under `pattern`
/// placed by `placement`.
pub(crate) fn intersect(body: &SdfGrid, pattern: &FracturePattern, placement: &Placement) -> Intersection {
    let spec = *body.spec();
    let [nx, ny, _] = spec.dims;
    let mut labels = vec![NONE; spec.sample_count()];
    labels
        .par_chunks_mut(nx * ny)
        .zip(body.values().par_chunks(nx * ny))
        .enumerate()
        .for_each(|(k, (labels, values))| {
            for (slot, (label, value)) in labels.iter_mut().zip(values).enumerate() {
                if *value < 0.0 {
                    let x = spec.position(slot % nx, slot / nx, k);
                    *label = pattern.locate(placement.to_pattern(x));
                }
            }
        });
    let (components, parts) = flood_fill(body, &labels);
    Intersection {
        labels,
        components,
        parts,
    }
}

/// Connected components of equal labels over the six face neighbours, numbered by first sample.
fn flood_fill(body: &SdfGrid, labels: &[u32]) -> (Vec<u32>, Vec<Component>) {
    let spec = body.spec();
    let [nx, ny, nz] = spec.dims;
    let mut components = vec![NONE; labels.len()];
    let mut parts = Vec::new();
    let mut stack = Vec::new();
    for start in 0..labels.len() {
        if labels[start] == NONE || components[start] != NONE {
            continue;
        }
        let id = parts.len() as u32;
        let region = labels[start];
        let mut part = Component {
            region,
            sums: CellSums::default(),
            low: [usize::MAX; 3],
            high: [0; 3],
        };
        components[start] = id;
        stack.push(start);
        while let Some(index) = stack.pop() {
            let [i, j, k] = spec.coordinates(index);
            let x = spec.position(i, j, k);
            part.sums.add(x);
            for (a, c) in [i, j, k].into_iter().enumerate() {
                part.low[a] = part.low[a].min(c);
                part.high[a] = part.high[a].max(c);
            }
            let mut visit = |n: usize| {
                if labels[n] == region && components[n] == NONE {
                    components[n] = id;
                    stack.push(n);
                }
            };
            if i > 0 {
                visit(index - 1);
            }
            if i + 1 < nx {
                visit(index + 1);
            }
            if j > 0 {
                visit(index - nx);
            }
            if j + 1 < ny {
                visit(index + nx);
            }
            if k > 0 {
                visit(index - nx * ny);
            }
            if k + 1 < nz {
                visit(index + nx * ny);
            }
        }
        parts.push(part);
    }
    (components, parts)
}

/// Volume integrals of the cubes of one spacing around the negative samples of `grid` (its
/// frame): the mass properties a body cut on this lattice is made of, so that a body built with
/// them breaks into fragments whose motion is exactly its own.
pub fn lattice_integrals(grid: &SdfGrid) -> VolumeIntegrals {
    let spec = grid.spec();
    let mut sums = CellSums::default();
    for (index, value) in grid.values().iter().enumerate() {
        if *value < 0.0 {
            let [i, j, k] = spec.coordinates(index);
            sums.add(spec.position(i, j, k));
        }
    }
    sums.integrals(spec.spacing)
}

/// What happens to a component below the minimum fragment volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Debris {
    /// Taken out of the world (its mass and momentum go with it, and are reported).
    Remove,
    /// Joined to the neighbouring fragment it shares the most cell faces with (removed if it
    /// touches none).
    #[default]
    Merge,
    /// Kept as a fragment of its own.
    Keep,
}

/// Components grouped into fragments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Grouping {
    /// The components of each fragment, the first being the one that gave it its size.
    pub fragments: Vec<Vec<u32>>,
    /// Components taken out of the world.
    pub removed: Vec<u32>,
}

/// Groups the components of `cut` into fragments: those of at least `min_cells` cells are
/// fragments, smaller ones are handled as `debris` says.
pub(crate) fn group(body: &SdfGrid, cut: &Intersection, min_cells: usize, debris: Debris) -> Grouping {
    // A body whose every piece is below the minimum keeps its largest piece as a fragment, so
    // breaking never takes a whole body out of the world.
    let largest = (0..cut.parts.len()).max_by_key(|&c| (cut.parts[c].cells(), std::cmp::Reverse(c)));
    let small = |c: usize| cut.parts[c].cells() < min_cells && Some(c) != largest;
    if debris == Debris::Keep || !(0..cut.parts.len()).any(small) {
        return Grouping {
            fragments: (0..cut.parts.len() as u32).map(|c| vec![c]).collect(),
            removed: Vec::new(),
        };
    }
    let mut fragment_of = vec![NONE; cut.parts.len()];
    let mut fragments: Vec<Vec<u32>> = Vec::new();
    for (c, slot) in fragment_of.iter_mut().enumerate() {
        if !small(c) {
            *slot = fragments.len() as u32;
            fragments.push(vec![c as u32]);
        }
    }
    let mut removed = Vec::new();
    if debris == Debris::Remove {
        removed = (0..cut.parts.len() as u32).filter(|&c| small(c as usize)).collect();
        return Grouping { fragments, removed };
    }
    // Faces shared between each small component and the fragments around it.
    let spec = body.spec();
    let [nx, ny, _] = spec.dims;
    let mut shared: HashMap<(u32, u32), u32> = HashMap::new();
    for (index, &c) in cut.components.iter().enumerate() {
        if c == NONE {
            continue;
        }
        let [i, j, k] = spec.coordinates(index);
        let forward = [
            (i + 1 < spec.dims[0]).then_some(index + 1),
            (j + 1 < spec.dims[1]).then_some(index + nx),
            (k + 1 < spec.dims[2]).then_some(index + nx * ny),
        ];
        for n in forward.into_iter().flatten() {
            let d = cut.components[n];
            if d == NONE || d == c {
                continue;
            }
            for (a, b) in [(c, d), (d, c)] {
                if small(a as usize) && !small(b as usize) {
                    *shared.entry((a, b)).or_default() += 1;
                }
            }
        }
    }
    let mut best: Vec<(u32, u32)> = vec![(0, NONE); cut.parts.len()];
    let mut pairs: Vec<_> = shared.into_iter().collect();
    pairs.sort_unstable();
    for ((a, b), faces) in pairs {
        if faces > best[a as usize].0 {
            best[a as usize] = (faces, b);
        }
    }
    for (c, &(_, target)) in best.iter().enumerate() {
        if small(c) {
            match target {
                NONE => removed.push(c as u32),
                target => fragments[fragment_of[target as usize] as usize].push(c as u32),
            }
        }
    }
    Grouping { fragments, removed }
}
