//! One fracture event (Su 2009 section 4.2): place the pattern on the impact, cut the parent's
//! lattice into components, group them into fragments, give each its level set
//! `max(phi_parent, phi_region)`, its surface particles and its mass properties, and describe it
//! as a body that carries its share of the parent's momentum.
//!
//! Particles: the parent's particles go to the fragment whose level set is lowest at them (among
//! the fragments of the eight lattice samples around them: the paper's voxel assignment, with the
//! level-set comparison where a cell is shared), and a region's particles are made on the cut
//! faces: every lattice sample next to a sample of another region is projected onto its region's
//! boundary, kept where it lies inside the parent, and thinned to the particle spacing.

use glam::DVec3;
use hashbrown::HashSet;
use rayon::prelude::*;
use shatter_collision::{Aabb, BodyMassProperties, GridSpec, Pose, SdfGrid};
use shatter_engine::BodyDesc;
use shatter_integrators::RigidState;

use super::intersect::{Debris, Grouping, Intersection, NONE, face_neighbours, group, intersect};
use super::pattern::FracturePattern;
use super::placement::{Alignment, Placement};
use crate::error::FractureError;
use crate::fragments::{LevelSetPiece, ParentMomentum, ParentMotion, assembly_motion, level_set_fragment_desc};

/// The body being broken, as the event needs it.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    /// Its level set on its lattice, body frame (negative inside, m).
    pub level_set: &'a SdfGrid,
    /// Its surface particles, body frame.
    pub particles: &'a [DVec3],
    /// Its pose in the world.
    pub pose: Pose,
    /// Its mass, kg.
    pub mass: f64,
    /// Its momentum, world frame.
    pub momentum: ParentMomentum,
}

/// How a fracture event cuts and what it keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShatterSettings {
    /// How the pattern is aligned with the impact.
    pub alignment: Alignment,
    /// Fragments below this volume are debris, m^3.
    pub min_fragment_volume: f64,
    /// What happens to debris.
    pub debris: Debris,
    /// Distance between the particles made on cut faces, m.
    pub particle_spacing: f64,
}

/// What a fracture event made.
#[derive(Clone, Debug)]
pub struct Shattered {
    /// Where the pattern was placed, parent body frame.
    pub placement: Placement,
    /// The fragments, ready to spawn (the parent is to be removed).
    pub fragments: Vec<BodyDesc>,
    /// The pattern region each fragment came from (its largest part's).
    pub regions: Vec<u32>,
    /// Mass of the debris taken out of the world, kg.
    pub removed_mass: f64,
    /// Momentum the removed debris carried away, world frame.
    pub removed_momentum: ParentMomentum,
    /// The rigid motion the fragments share (see [`assembly_motion`]).
    pub motion: ParentMotion,
    /// Volume of the parent's cells, m^3 (its mass over this is the fragments' density).
    pub cell_volume: f64,
}

/// Breaks `parent` with `pattern` for an impact at body-frame `point` pushing along body-frame
/// `normal`. Changes nothing anywhere: the caller spawns the fragments and removes the parent.
/// Fails naming a bad point, normal, setting or mass, or a parent with no inside.
pub fn shatter(
    parent: &Parent<'_>,
    pattern: &FracturePattern,
    point: DVec3,
    normal: DVec3,
    settings: &ShatterSettings,
) -> Result<Shattered, FractureError> {
    if !(settings.particle_spacing.is_finite() && settings.particle_spacing > 0.0) {
        return Err(FractureError::invalid(
            "particle spacing (m)",
            settings.particle_spacing,
            "a positive length",
        ));
    }
    if !(settings.min_fragment_volume.is_finite() && settings.min_fragment_volume >= 0.0) {
        return Err(FractureError::invalid(
            "minimum fragment volume (m^3)",
            settings.min_fragment_volume,
            "zero or a positive volume",
        ));
    }
    if !(parent.mass.is_finite() && parent.mass > 0.0) {
        return Err(FractureError::invalid(
            "parent mass (kg)",
            parent.mass,
            "a positive finite mass",
        ));
    }
    let body = parent.level_set;
    let spacing = body.spec().spacing;
    let bounds =
        inside_box(body).ok_or_else(|| FractureError::input("the body to break has no inside on its lattice"))?;
    let placement = Placement::new(pattern, body.spec(), bounds, point, normal, settings.alignment)?;
    let cut = intersect(body, pattern, &placement);
    let cell = spacing * spacing * spacing;
    let min_cells = (settings.min_fragment_volume / cell).ceil() as usize;
    let grouping = group(body, &cut, min_cells, settings.debris);
    let total_cells: usize = cut.parts.iter().map(|p| p.cells()).sum();
    let cell_volume = total_cells as f64 * cell;
    let density = parent.mass / cell_volume;

    // Mass properties of every fragment and of every removed piece: the motion that carries the
    // parent's momentum is shared by all of them.
    let integrals = |components: &[u32]| {
        components
            .iter()
            .map(|&c| cut.parts[c as usize].integrals(body.spec()))
            .fold(Default::default(), |sum: shatter_collision::VolumeIntegrals, i| {
                sum.plus(i)
            })
    };
    let fragment_mass: Vec<BodyMassProperties> = grouping
        .fragments
        .iter()
        .map(|f| BodyMassProperties::from_integrals(integrals(f), density))
        .collect::<Result<_, _>>()?;
    let removed_mass: Vec<BodyMassProperties> = grouping
        .removed
        .iter()
        .map(|&c| BodyMassProperties::from_integrals(integrals(&[c]), density))
        .collect::<Result<_, _>>()?;
    let everything: Vec<BodyMassProperties> = fragment_mass.iter().chain(&removed_mass).copied().collect();
    let motion = assembly_motion(&everything, &parent.pose, &parent.momentum)?;
    let removed_momentum = removed_mass
        .iter()
        .map(|piece| {
            let position = parent.pose.transform_point(piece.center_of_mass);
            let state = RigidState::moving(
                position,
                parent.pose.orientation * piece.principal_frame,
                motion.linear_velocity + motion.angular_velocity.cross(position - motion.centre),
                motion.angular_velocity,
            );
            ParentMomentum::of(&state, &piece.mass)
        })
        .fold(ParentMomentum::default(), |sum, m| sum + m);

    let fragment_of = fragment_of_component(&cut, &grouping);
    let cutter = Cutter {
        body,
        pattern,
        placement: &placement,
        cut: &cut,
        grouping: &grouping,
        fragment_of: &fragment_of,
        split: split_regions(pattern.region_count(), &cut, &fragment_of),
    };
    let mut particles = cutter.particles(parent.particles, settings.particle_spacing);
    let grids = (0..grouping.fragments.len())
        .into_par_iter()
        .map(|f| cutter.grid(f as u32))
        .collect::<Result<Vec<_>, _>>()?;
    // Each fragment's body on its own (collected in fragment order, the first failure kept).
    let fragments = grids
        .into_par_iter()
        .zip(particles.par_drain(..))
        .zip(fragment_mass.par_iter())
        .map(|((level_set, particles), &mass)| {
            let piece = LevelSetPiece {
                mass,
                level_set,
                particles,
            };
            level_set_fragment_desc(piece, &parent.pose, &motion)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Shattered {
        placement,
        fragments,
        regions: grouping
            .fragments
            .iter()
            .map(|f| cut.parts[f[0] as usize].region)
            .collect(),
        removed_mass: removed_mass.iter().map(|p| p.mass.mass()).sum(),
        removed_momentum,
        motion,
        cell_volume,
    })
}

/// The box of a level set's inside samples grown by half a spacing (the cells they stand for).
fn inside_box(body: &SdfGrid) -> Option<Aabb> {
    body.inside_samples_box().map(|b| b.expanded(0.5 * body.spec().spacing))
}

/// Per region, whether its components went to more than one fragment (or some were removed).
fn split_regions(regions: usize, cut: &Intersection, fragment_of: &[u32]) -> Vec<bool> {
    let mut first = vec![None; regions];
    let mut split = vec![false; regions];
    for (part, &f) in cut.parts.iter().zip(fragment_of) {
        let r = part.region as usize;
        match first[r] {
            None => first[r] = Some(f),
            Some(g) if g != f => split[r] = true,
            Some(_) => {}
        }
    }
    split
}

/// The fragment of every component ([`NONE`] for removed ones).
fn fragment_of_component(cut: &Intersection, grouping: &Grouping) -> Vec<u32> {
    let mut fragment_of = vec![NONE; cut.parts.len()];
    for (f, components) in grouping.fragments.iter().enumerate() {
        for &c in components {
            fragment_of[c as usize] = f as u32;
        }
    }
    fragment_of
}

/// Level-set values this many spacings outside a fragment need only their sign.
const FAR_CELLS: f64 = 3.0;

/// Level sets and particles of the fragments of one cut.
struct Cutter<'a> {
    body: &'a SdfGrid,
    pattern: &'a FracturePattern,
    placement: &'a Placement,
    cut: &'a Intersection,
    grouping: &'a Grouping,
    fragment_of: &'a [u32],
    /// Per region: whether it fell into more than one fragment.
    split: Vec<bool>,
}

impl Cutter<'_> {
    /// Fragment `f`'s level set at body-frame `x`, m: the lowest over its components of
    /// `max(phi_parent, phi_region)` (Su 2009 section 4.2). Where `x` is nearest a lattice sample of
    /// the same region that belongs to another fragment (the region fell apart into several
    /// components) the value is kept at least half a spacing above zero, so that the components
    /// do not share an inside.
    fn value(&self, f: u32, x: DVec3) -> f64 {
        let spec = self.body.spec();
        let local = ((x - spec.origin) / spec.spacing).round();
        let nearest = (local.cmpge(DVec3::ZERO).all()
            && (local.x as usize) < spec.dims[0]
            && (local.y as usize) < spec.dims[1]
            && (local.z as usize) < spec.dims[2])
            .then(|| spec.index(local.x as usize, local.y as usize, local.z as usize));
        let far = FAR_CELLS * spec.spacing;
        self.combine(f, self.body.value(x), nearest, |_, region| {
            self.placement.region_value_capped(self.pattern, region, x, far)
        })
    }

    /// Fragment `f`'s level set at a point where the parent's level set is `body`, the lattice
    /// sample nearest the point is `nearest` (if it is on the lattice at all) and
    /// `region_value(k, region)` is the level set there of the region of the fragment's `k`-th
    /// component (m; any value beyond [`FAR_CELLS`] spacings will do where it is beyond).
    fn combine(&self, f: u32, body: f64, nearest: Option<usize>, region_value: impl Fn(usize, u32) -> f64) -> f64 {
        let spacing = self.body.spec().spacing;
        // Beyond this distance from a fragment only the sign of its level set matters (the
        // narrow phase tests particles against it), so a value already past it decides.
        if body > FAR_CELLS * spacing {
            return body;
        }
        let mut value = f64::INFINITY;
        for (k, &c) in self.grouping.fragments[f as usize].iter().enumerate() {
            let region = self.cut.parts[c as usize].region;
            let mut v = region_value(k, region).max(body);
            if let (true, Some(s)) = (self.split[region as usize], nearest) {
                let other = self.cut.components[s];
                if self.cut.labels[s] == region && other != NONE && self.fragment_of[other as usize] != f {
                    v = v.max(0.5 * spacing);
                }
            }
            value = value.min(v);
        }
        value
    }

    /// Surface particles of every fragment, body frame.
    fn particles(&self, parent: &[DVec3], spacing: f64) -> Vec<Vec<DVec3>> {
        let count = self.grouping.fragments.len();
        let mut particles = vec![Vec::new(); count];
        let spec = self.body.spec();
        let [nx, ny, nz] = spec.dims;
        // The parent's own particles: voxel assignment, compared by level set where a cell is
        // shared by fragments.
        let owners: Vec<Option<u32>> = parent
            .par_iter()
            .map(|&x| {
                let local = (x - spec.origin) / spec.spacing;
                let base = local.floor();
                let mut candidates: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
                for corner in 0..8 {
                    let offset = DVec3::new(
                        (corner & 1) as f64,
                        ((corner >> 1) & 1) as f64,
                        ((corner >> 2) & 1) as f64,
                    );
                    let at = base + offset;
                    if at.cmplt(DVec3::ZERO).any() || at.x as usize >= nx || at.y as usize >= ny || at.z as usize >= nz
                    {
                        continue;
                    }
                    let c = self.cut.components[spec.index(at.x as usize, at.y as usize, at.z as usize)];
                    if c != NONE
                        && self.fragment_of[c as usize] != NONE
                        && !candidates.contains(&self.fragment_of[c as usize])
                    {
                        candidates.push(self.fragment_of[c as usize]);
                    }
                }
                match candidates.len() {
                    0 => None,
                    1 => Some(candidates[0]),
                    // Each candidate's level set once; ties to the lower fragment.
                    _ => candidates
                        .iter()
                        .map(|&f| (self.value(f, x), f))
                        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                        .map(|(_, f)| f),
                }
            })
            .collect();
        for (&x, owner) in parent.iter().zip(owners) {
            if let Some(owner) = owner {
                particles[owner as usize].push(x);
            }
        }
        // The regions' particles on the cut faces, thinned by bins of the particle spacing.
        // Planes of the lattice are scanned in parallel, then binned in order.
        let found: Vec<Vec<(u32, DVec3)>> = (0..nz)
            .into_par_iter()
            .map(|k| {
                let mut found = Vec::new();
                for j in 0..ny {
                    for i in 0..nx {
                        let s = spec.index(i, j, k);
                        let c = self.cut.components[s];
                        if c == NONE || self.fragment_of[c as usize] == NONE || !self.on_cut(s, [i, j, k]) {
                            continue;
                        }
                        let x = spec.position(i, j, k);
                        let region = self.cut.labels[s];
                        let p = self
                            .placement
                            .to_body(self.pattern.project(region, self.placement.to_pattern(x)));
                        if self.body.value(p) <= 0.0 && (p - x).length() <= 2.0 * spec.spacing {
                            found.push((self.fragment_of[c as usize], p));
                        }
                    }
                }
                found
            })
            .collect();
        // Each fragment's cut-face points, in lattice order, thinned by bins of the particle
        // spacing: fragments in parallel, each in order, so the result is the same on any pool.
        let mut cut_points: Vec<Vec<DVec3>> = vec![Vec::new(); count];
        for (f, p) in found.into_iter().flatten() {
            cut_points[f as usize].push(p);
        }
        particles
            .par_iter_mut()
            .zip(cut_points)
            .enumerate()
            .for_each(|(f, (list, points))| {
                let mut bins: HashSet<[i64; 3]> = HashSet::with_capacity(points.len());
                for p in points {
                    if bins.insert((p / spacing).floor().as_i64vec3().to_array()) {
                        list.push(p);
                    }
                }
                // A fragment the parent's particles missed and no cut face reached (a sliver at
                // the resolution of the lattice) takes its outermost samples.
                if list.is_empty() {
                    list.extend(self.outermost_samples(f as u32));
                }
            });
        particles
    }

    /// [`Cutter::faces`]'s first answer, found sooner: most samples have no neighbour of
    /// another region, which their labels alone show.
    fn on_cut(&self, s: usize, at: [usize; 3]) -> bool {
        let labels = &self.cut.labels;
        let neighbours = face_neighbours(self.body.spec().dims, s, at);
        neighbours.iter().flatten().any(|&n| labels[n] != labels[s]) && self.faces(s, at).0
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

    /// Fragment `f`'s level set at the samples of the parent's lattice around its cells (grown by
    /// [`PADDING`] samples, beyond the lattice where the cells reach its edge): the lattice
    /// values themselves, so a fragment and its own fragments stay on one lattice and nothing
    /// is interpolated.
    fn grid(&self, f: u32) -> Result<SdfGrid, FractureError> {
        let spec = self.body.spec();
        let (cells_low, cells_high) = self.cell_box(f);
        let low = cells_low.map(|l| l as i64 - PADDING);
        let high = cells_high.map(|h| h as i64 + PADDING);
        let dims = [0, 1, 2].map(|a| (high[a] - low[a] + 1) as usize);
        let origin = spec.origin + DVec3::new(low[0] as f64, low[1] as f64, low[2] as f64) * spec.spacing;
        let sub = GridSpec::try_new(origin, spec.spacing, dims)?;
        let [nx, ny, _] = dims;
        let mut values = vec![0.0; sub.sample_count()];
        let components = &self.grouping.fragments[f as usize];
        // The regions' level sets a row at a time (`FracturePattern::row_values`), pattern units.
        let (placement, scale) = (self.placement, self.placement.scale);
        let step = placement.to_pattern(sub.position(1, 0, 0)) - placement.to_pattern(sub.position(0, 0, 0));
        values.par_chunks_mut(nx * ny).enumerate().for_each(|(k, plane)| {
            let gk = low[2] + k as i64;
            let mut regions = vec![0.0; nx * components.len()];
            for j in 0..ny {
                let gj = low[1] + j as i64;
                let start = placement.to_pattern(sub.position(0, j, k));
                for (&c, row) in components.iter().zip(regions.chunks_exact_mut(nx)) {
                    self.pattern
                        .row_values(self.cut.parts[c as usize].region, start, step, row);
                }
                for i in 0..nx {
                    let gi = low[0] + i as i64;
                    let x = sub.position(i, j, k);
                    let lattice = (0..spec.dims[0] as i64).contains(&gi)
                        && (0..spec.dims[1] as i64).contains(&gj)
                        && (0..spec.dims[2] as i64).contains(&gk);
                    let index = lattice.then(|| spec.index(gi as usize, gj as usize, gk as usize));
                    let body = match index {
                        Some(s) => self.body.values()[s],
                        None => self.body.value(x),
                    };
                    let value = self.combine(f, body, index, |c, _| regions[c * nx + i] * scale);
                    plane[i + nx * j] = value;
                }
            }
        });
        Ok(SdfGrid::try_from_values(sub, values)?)
    }
}

/// Samples of padding around a fragment's cells in its level set. One is enough: the surface
/// lies within a spacing of the fragment's inside samples, so the padding layer holds every
/// sign change, and beyond the grid `SdfGrid::value` goes on as the distance to its box, which
/// only the contact margin reads. Two layers cost 40 % more samples on the wall's small pieces
/// near the impact (most of a fracture event's time), and the tests hold with one.
const PADDING: i64 = 1;
