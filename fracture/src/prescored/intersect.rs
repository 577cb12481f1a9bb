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
use shatter_collision::mass_properties::VolumeIntegrals;
use shatter_collision::{GridSpec, SdfGrid};

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

    /// Volume integrals of its cells (cubes of one spacing around its samples on the lattice
    /// `spec`), body frame.
    pub fn integrals(&self, spec: &GridSpec) -> VolumeIntegrals {
        self.sums.integrals(spec)
    }
}

/// Sums over lattice samples of `1`, their indices `n = (i, j, k)` and `n n^T`: the volume
/// integrals of the cubes of one spacing around them once the lattice is known. Integer sums are
/// exact, so they do not depend on the order the samples come in and the pieces of a body add up
/// to the body exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CellSums {
    count: usize,
    /// Sum of `n`.
    first: [i64; 3],
    /// Sum of `n n^T`: xx, yy, zz, xy, xz, yz.
    second: [i64; 6],
}

impl CellSums {
    /// Adds the sample at lattice indices `(i, j, k)`.
    #[inline]
    fn add(&mut self, [i, j, k]: [usize; 3]) {
        let (i, j, k) = (i as i64, j as i64, k as i64);
        self.count += 1;
        self.first[0] += i;
        self.first[1] += j;
        self.first[2] += k;
        self.second[0] += i * i;
        self.second[1] += j * j;
        self.second[2] += k * k;
        self.second[3] += i * j;
        self.second[4] += i * k;
        self.second[5] += j * k;
    }

    /// Adds the samples `i` in `begin..end` of the row `(j, k)`.
    #[inline]
    fn add_row(&mut self, begin: usize, end: usize, j: usize, k: usize) {
        // Sums of i and i^2 over 0..n, in closed form.
        let sum = |n: i64| n * (n - 1) / 2;
        let squares = |n: i64| (n - 1) * n * (2 * n - 1) / 6;
        let (b, e, j, k) = (begin as i64, end as i64, j as i64, k as i64);
        let m = e - b;
        let si = sum(e) - sum(b);
        let sii = squares(e) - squares(b);
        self.count += m as usize;
        self.first[0] += si;
        self.first[1] += j * m;
        self.first[2] += k * m;
        self.second[0] += sii;
        self.second[1] += j * j * m;
        self.second[2] += k * k * m;
        self.second[3] += j * si;
        self.second[4] += k * si;
        self.second[5] += j * k * m;
    }

    /// Volume integrals of the cubes of side `h` centred on the samples `x = o + h n` of the
    /// lattice `spec`: each cube adds `h^3 (1, x, x x^T + h^2/12 I)`, and summed over the samples
    /// `sum x = N o + h S1`, `sum x x^T = N o o^T + h (o S1^T + S1 o^T) + h^2 S2`.
    fn integrals(&self, spec: &GridSpec) -> VolumeIntegrals {
        let (o, h) = (spec.origin, spec.spacing);
        let cube = h * h * h;
        let n = self.count as f64;
        let s1 = DVec3::new(self.first[0] as f64, self.first[1] as f64, self.first[2] as f64);
        let [xx, yy, zz, xy, xz, yz] = self.second.map(|v| v as f64);
        let s2 = DMat3::from_cols(DVec3::new(xx, xy, xz), DVec3::new(xy, yy, yz), DVec3::new(xz, yz, zz));
        let outer = |a: DVec3, b: DVec3| DMat3::from_cols(a * b.x, a * b.y, a * b.z);
        let first = o * n + s1 * h;
        let second = outer(o, o) * n + (outer(o, s1) + outer(s1, o)) * h + s2 * (h * h);
        VolumeIntegrals {
            volume: n * cube,
            first: first * cube,
            second: (second + DMat3::from_diagonal(DVec3::splat(n * h * h / 12.0))) * cube,
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
            // Along a row, samples share a region for long stretches: once a sample's region is
            // known, the stretch of the row that its planes keep inside it is labelled at once
            // (`FracturePattern::inside_run`); `locate` decides where that shows nothing.
            let step = placement.to_pattern(spec.position(1, 0, 0)) - placement.to_pattern(spec.position(0, 0, 0));
            for (j, (labels, values)) in labels.chunks_exact_mut(nx).zip(values.chunks_exact(nx)).enumerate() {
                let mut hint = NONE;
                let mut i = 0;
                while i < nx {
                    if values[i] >= 0.0 {
                        i += 1;
                        continue;
                    }
                    let start = placement.to_pattern(spec.position(i, j, k));
                    let run = if hint == NONE {
                        0
                    } else {
                        pattern.inside_run(hint, start, step, nx - i)
                    };
                    if run == 0 {
                        hint = pattern.locate(start);
                        labels[i] = hint;
                        i += 1;
                        continue;
                    }
                    for (label, value) in labels[i..i + run].iter_mut().zip(&values[i..i + run]) {
                        if *value < 0.0 {
                            *label = hint;
                        }
                    }
                    i += run;
                }
            }
        });
    let (components, parts) = connected_components(body, &labels);
    Intersection {
        labels,
        components,
        parts,
    }
}

/// Connected components of equal labels over the six face neighbours, numbered by first sample.
///
/// Works on runs (maximal stretches of one label along a lattice row) rather than samples: runs
/// of equal label that overlap in the row below or the plane before are joined in a union-find
/// whose roots are the lowest runs, so numbering roots in run order numbers components by their
/// first sample. Memory is read row by row, and each run's sums come in closed form; a
/// sample-by-sample flood fill jumps across the lattice and costs several times as much.
fn connected_components(body: &SdfGrid, labels: &[u32]) -> (Vec<u32>, Vec<Component>) {
    let [nx, ny, nz] = body.spec().dims;
    let mut runs: Vec<Run> = Vec::new();
    // Runs of row `r = j + ny k` are `runs[row_start[r]..row_start[r + 1]]`.
    let mut row_start = Vec::with_capacity(ny * nz + 1);
    for (row, row_labels) in labels.chunks_exact(nx).enumerate() {
        row_start.push(runs.len() as u32);
        let mut i = 0;
        while i < nx {
            let label = row_labels[i];
            let begin = i;
            while i < nx && row_labels[i] == label {
                i += 1;
            }
            if label != NONE {
                runs.push(Run {
                    row,
                    begin,
                    end: i,
                    label,
                });
            }
        }
    }
    row_start.push(runs.len() as u32);
    let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
    for row in 0..ny * nz {
        let (j, k) = (row % ny, row / ny);
        let here = row_start[row] as usize..row_start[row + 1] as usize;
        for before in [(j > 0).then(|| row - 1), (k > 0).then(|| row - ny)]
            .into_iter()
            .flatten()
        {
            let there = row_start[before] as usize..row_start[before + 1] as usize;
            // Both rows' runs are sorted along the row: walk them together.
            let (mut a, mut b) = (here.start, there.start);
            while a < here.end && b < there.end {
                let (ra, rb) = (&runs[a], &runs[b]);
                if ra.begin < rb.end && rb.begin < ra.end && ra.label == rb.label {
                    union(&mut parent, a as u32, b as u32);
                }
                if ra.end <= rb.end {
                    a += 1;
                } else {
                    b += 1;
                }
            }
        }
    }
    let mut components = vec![NONE; labels.len()];
    let mut parts: Vec<Component> = Vec::new();
    let mut id_of_root = vec![NONE; runs.len()];
    for (r, run) in runs.iter().enumerate() {
        let root = find(&mut parent, r as u32) as usize;
        if id_of_root[root] == NONE {
            id_of_root[root] = parts.len() as u32;
            parts.push(Component {
                region: run.label,
                sums: CellSums::default(),
                low: [usize::MAX; 3],
                high: [0; 3],
            });
        }
        let id = id_of_root[root];
        let (j, k) = (run.row % ny, run.row / ny);
        components[run.row * nx + run.begin..run.row * nx + run.end].fill(id);
        let part = &mut parts[id as usize];
        part.sums.add_row(run.begin, run.end, j, k);
        part.low = [part.low[0].min(run.begin), part.low[1].min(j), part.low[2].min(k)];
        part.high = [part.high[0].max(run.end - 1), part.high[1].max(j), part.high[2].max(k)];
    }
    (components, parts)
}

/// The samples sharing a face with sample `s` at lattice indices `[i, j, k]` of a lattice of
/// `dims` samples (`None` past its edges).
#[inline]
pub(crate) fn face_neighbours([nx, ny, nz]: [usize; 3], s: usize, [i, j, k]: [usize; 3]) -> [Option<usize>; 6] {
    [
        (i > 0).then(|| s - 1),
        (i + 1 < nx).then_some(s + 1),
        (j > 0).then(|| s - nx),
        (j + 1 < ny).then_some(s + nx),
        (k > 0).then(|| s - nx * ny),
        (k + 1 < nz).then_some(s + nx * ny),
    ]
}

/// A maximal stretch of one label along a lattice row: samples `begin..end` of row `row`.
struct Run {
    row: usize,
    begin: usize,
    end: usize,
    label: u32,
}

/// The root of `x`'s set, halving the path on the way.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Joins the sets of `a` and `b`; the lower root stays the root.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra < rb {
        parent[rb as usize] = ra;
    } else if rb < ra {
        parent[ra as usize] = rb;
    }
}

/// Volume integrals of the cubes of one spacing around the negative samples of `grid` (its
/// frame): the mass properties a body cut on this lattice is made of, so that a body built with
/// them breaks into fragments whose motion is exactly its own.
pub fn lattice_integrals(grid: &SdfGrid) -> VolumeIntegrals {
    let spec = grid.spec();
    let mut sums = CellSums::default();
    for (index, value) in grid.values().iter().enumerate() {
        if *value < 0.0 {
            sums.add(spec.coordinates(index));
        }
    }
    sums.integrals(spec)
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

#[cfg(test)]
mod tests {
    use super::*;
    use shatter_integrators::SplitMix64;

    /// A component as the oracle finds it: region, sums, lowest and highest indices.
    type Found = (u32, CellSums, [usize; 3], [usize; 3]);

    /// Sample-by-sample flood fill: the oracle.
    fn flood_fill_by_samples(dims: [usize; 3], labels: &[u32]) -> (Vec<u32>, Vec<Found>) {
        let [nx, ny, _] = dims;
        let mut components = vec![NONE; labels.len()];
        let mut parts = Vec::new();
        for start in 0..labels.len() {
            if labels[start] == NONE || components[start] != NONE {
                continue;
            }
            let id = parts.len() as u32;
            let (mut sums, mut low, mut high) = (CellSums::default(), [usize::MAX; 3], [0; 3]);
            components[start] = id;
            let mut stack = vec![start];
            while let Some(s) = stack.pop() {
                let at = [s % nx, (s / nx) % ny, s / (nx * ny)];
                sums.add(at);
                for a in 0..3 {
                    low[a] = low[a].min(at[a]);
                    high[a] = high[a].max(at[a]);
                }
                let neighbours = face_neighbours(dims, s, at);
                for n in neighbours.into_iter().flatten() {
                    if labels[n] == labels[start] && components[n] == NONE {
                        components[n] = id;
                        stack.push(n);
                    }
                }
            }
            parts.push((labels[start], sums, low, high));
        }
        (components, parts)
    }

    /// Labelling a row by stretches gives every sample the region that locating it on its own
    /// gives: dart-board and uniform patterns placed at random impacts, with both alignments,
    /// on a sphere's lattice (rows entering and leaving the body and the pattern's cells).
    #[test]
    fn prescored_labels_by_stretches_are_those_of_each_sample_located_alone() {
        use crate::prescored::generators::RadialPattern;
        use crate::prescored::placement::Alignment;
        use shatter_collision::{Shape, Sphere};
        let shape = Shape::Sphere(Sphere::try_new(0.5).unwrap());
        let body = crate::prescored::model::shape_lattice(&shape, 40).unwrap();
        let spec = *body.spec();
        let bounds = body.inside_samples_box().unwrap();
        let patterns = [
            FracturePattern::radial(&RadialPattern::default()).unwrap(),
            FracturePattern::uniform(60, 9).unwrap(),
        ];
        let mut random = SplitMix64::new(17);
        let mut v = || {
            DVec3::new(
                random.range(-1.0, 1.0),
                random.range(-1.0, 1.0),
                random.range(-1.0, 1.0),
            )
        };
        let mut stretched = 0;
        for round in 0..12 {
            let pattern = &patterns[round % 2];
            let alignment = if round % 3 == 0 {
                Alignment::Exact
            } else {
                Alignment::Overlay
            };
            let placement = Placement::new(pattern, &spec, bounds, v() * 0.3, v(), alignment).unwrap();
            let cut = intersect(&body, pattern, &placement);
            let [nx, ny, nz] = spec.dims;
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        let s = spec.index(i, j, k);
                        let alone = if body.values()[s] < 0.0 {
                            pattern.locate(placement.to_pattern(spec.position(i, j, k)))
                        } else {
                            NONE
                        };
                        assert_eq!(cut.labels[s], alone, "round {round}, sample {i} {j} {k}");
                        stretched += usize::from(i > 0 && alone != NONE && cut.labels[s - 1] == alone);
                    }
                }
            }
        }
        assert!(stretched > 10_000, "only {stretched} samples continued a stretch");
    }

    #[test]
    fn prescored_runs_find_the_components_a_flood_fill_finds() {
        let spec = GridSpec::try_new(DVec3::new(-0.3, 0.1, 0.7), 0.05, [13, 9, 7]).unwrap();
        let mut random = SplitMix64::new(5);
        for round in 0..40 {
            // Few labels and many gaps make components of every shape: U-turns that join late,
            // pieces touching only along an edge (not joined), single samples.
            let regions = 1 + round % 4;
            let labels: Vec<u32> = (0..spec.sample_count())
                .map(|_| {
                    let r = (random.next_f64() * (regions + 1) as f64) as u32;
                    if r == regions as u32 { NONE } else { r }
                })
                .collect();
            let grid = SdfGrid::try_from_values(spec, vec![-1.0; spec.sample_count()]).unwrap();
            let (components, parts) = connected_components(&grid, &labels);
            let (expected_components, expected) = flood_fill_by_samples(spec.dims, &labels);
            assert_eq!(components, expected_components, "round {round}");
            let found: Vec<_> = parts.iter().map(|p| (p.region, p.sums, p.low, p.high)).collect();
            assert_eq!(found, expected, "round {round}");
        }
    }
}
