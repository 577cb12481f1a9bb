//! A fracture pattern: all of space cut into regions once, ahead of time (Su 2009 section 4.1).
//!
//! Pattern space is the unit box `[0, 1]^3`. Each region has a level set (negative inside). The
//! pattern has an impact point inside the box and a frame whose z axis is the direction a
//! collision travels into the body there: at a fracture the box is turned so that this axis lies
//! along the collision normal, moved so that the impact point sits on the collision point, and
//! scaled to enclose the body ([`super::placement`]).
//!
//! Regions come in two kinds: the cells of a power diagram (every generated pattern: Voronoi,
//! radial, slices; exact level sets from their planes, see [`super::power`]) or level sets on
//! grids (patterns from user meshes, one closed mesh per region). Beyond the box the regions go
//! on: a power cell is unbounded by nature, and a grid region answers with its grid's value at the
//! nearest point of the grid plus the distance to it, so no part of a body placed partly outside
//! the box is ever lost.
//!
//! Surface particles of a region are made when a body breaks, at the body's resolution, from the
//! region's level set ([`FracturePattern::project`]): the pattern is scaled differently for every
//! body, so particles stored at the pattern's resolution would be too sparse on a large body and
//! needlessly dense on a small one.

use glam::{DQuat, DVec3};
use shatter_collision::SdfGrid;

use super::candidates::CandidateLattice;
use super::power::{PowerDiagram, neighbours};
use crate::error::FractureError;

/// Where power-cell faces are looked for: the unit box and half a box around it, which is as far
/// as a pattern scaled to enclose a body (plus a few cells of level-set padding) reaches.
const DOMAIN: (DVec3, DVec3) = (DVec3::splat(-0.5), DVec3::splat(1.5));

/// How the regions are represented.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Regions {
    /// Cells of a power diagram.
    Power(PowerDiagram),
    /// One signed-distance grid per region, pattern space.
    LevelSets(Vec<SdfGrid>),
}

/// Space cut into regions, to be aligned on an impact: regions of the unit box `[0, 1]^3` with
/// level sets, an impact point and a frame whose z axis is the direction of impact.
#[derive(Clone, Debug, PartialEq)]
pub struct FracturePattern {
    regions: Regions,
    impact: DVec3,
    frame: DQuat,
    candidates: CandidateLattice,
}

impl FracturePattern {
    /// The cells of the power diagram of `sites` (pattern space) with `weights` (pattern units
    /// squared; all zero for a Voronoi diagram), with impact point `impact` and `frame` (whose z
    /// axis is the direction of impact). Fails naming the value on fewer than two sites, a
    /// non-finite or repeated site or weight, an impact point not strictly inside the unit box,
    /// or a frame that is not a finite rotation.
    pub fn power_diagram(
        sites: Vec<DVec3>,
        weights: Vec<f64>,
        impact: DVec3,
        frame: DQuat,
    ) -> Result<Self, FractureError> {
        check_placement(impact, frame)?;
        if sites.len() < 2 || sites.len() > u32::MAX as usize / 2 {
            return Err(FractureError::invalid(
                "pattern site count",
                sites.len(),
                "at least 2 sites",
            ));
        }
        if weights.len() != sites.len() {
            return Err(FractureError::input(format!(
                "a power diagram needs one weight per site: {} weights for {} sites",
                weights.len(),
                sites.len()
            )));
        }
        if let Some(bad) = sites.iter().find(|s| !s.is_finite()) {
            return Err(FractureError::invalid("pattern site", bad, "finite coordinates"));
        }
        if let Some(bad) = weights.iter().find(|w| !w.is_finite()) {
            return Err(FractureError::invalid("pattern site weight", bad, "a finite number"));
        }
        let mut sorted: Vec<[u64; 3]> = sites.iter().map(|s| s.to_array().map(f64::to_bits)).collect();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(FractureError::invalid(
                "pattern site (given twice)",
                pair[0].map(f64::from_bits),
                "distinct sites",
            ));
        }
        let provisional = PowerDiagram::new(sites.clone(), weights.clone(), &vec![Vec::new(); sites.len()]);
        let candidates = CandidateLattice::build(|centre, radius| power_candidates(&provisional, centre, radius));
        let around = neighbours(&sites, &weights, &candidates.pairs(), DOMAIN);
        Ok(Self {
            regions: Regions::Power(PowerDiagram::new(sites, weights, &around)),
            impact,
            frame: frame.normalize(),
            candidates,
        })
    }

    /// Regions given by signed-distance grids in pattern space (negative inside; each grid needs
    /// an inside). A point belongs to the region whose level set is smallest there. Fails naming
    /// the region with no inside, fewer than two regions, or a bad impact point or frame.
    pub fn from_level_sets(grids: Vec<SdfGrid>, impact: DVec3, frame: DQuat) -> Result<Self, FractureError> {
        check_placement(impact, frame)?;
        if grids.len() < 2 || grids.len() > u32::MAX as usize / 2 {
            return Err(FractureError::invalid(
                "pattern region count",
                grids.len(),
                "at least 2 regions",
            ));
        }
        if let Some(empty) = grids.iter().position(|g| g.values().iter().all(|v| *v >= 0.0)) {
            return Err(FractureError::input(format!(
                "pattern region {empty} has no inside: its level set has no negative sample"
            )));
        }
        let candidates = CandidateLattice::build(|centre, radius| {
            let values: Vec<f64> = grids.iter().map(|g| g.value(centre)).collect();
            let lowest = values.iter().copied().fold(f64::INFINITY, f64::min);
            // A trilinear level set changes by at most sqrt(3) per unit of distance; a region
            // owning some point of the cell is within twice that of the lowest at its centre.
            let reach = 2.0 * 3f64.sqrt() * radius;
            (0..grids.len() as u32)
                .filter(|&j| values[j as usize] <= lowest + reach)
                .collect()
        });
        Ok(Self {
            regions: Regions::LevelSets(grids),
            impact,
            frame: frame.normalize(),
            candidates,
        })
    }

    /// Number of regions.
    pub fn region_count(&self) -> usize {
        match &self.regions {
            Regions::Power(diagram) => diagram.len(),
            Regions::LevelSets(grids) => grids.len(),
        }
    }

    /// The impact point, pattern space.
    pub fn impact_point(&self) -> DVec3 {
        self.impact
    }

    /// The pattern's frame: its z axis is the direction of impact.
    pub fn frame(&self) -> DQuat {
        self.frame
    }

    /// The region that owns `point` (pattern space).
    pub fn locate(&self, point: DVec3) -> u32 {
        let inside_box = point.cmpge(DVec3::ZERO).all() && point.cmple(DVec3::ONE).all();
        match &self.regions {
            Regions::Power(diagram) if inside_box => diagram.nearest(point, self.candidates.at(point).iter().copied()),
            Regions::Power(diagram) => diagram.nearest(point, 0..diagram.len() as u32),
            Regions::LevelSets(grids) => {
                let mut best = (f64::INFINITY, u32::MAX);
                for &c in self.candidates.at(point) {
                    let v = grids[c as usize].value(point);
                    if v < best.0 {
                        best = (v, c);
                    }
                }
                best.1
            }
        }
    }

    /// How many of the points `start + t step` (pattern space), `t = 0, 1, ...` below `count`,
    /// from the first on, [`FracturePattern::locate`] gives to `region`, as far as a power
    /// cell's planes show it at once: the points inside the cell and the pattern's box deeper
    /// than 1e-9 of the box, far above round-off (the planes along the line are affine in `t`,
    /// so the run's end comes from one pass over them). Zero where that does not show (then
    /// `locate` decides), and always for level-set regions.
    pub fn inside_run(&self, region: u32, start: DVec3, step: DVec3, count: usize) -> usize {
        match &self.regions {
            Regions::Power(diagram) if (region as usize) < diagram.len() => {
                let domain = (DVec3::ZERO, DVec3::ONE);
                diagram.inside_run(region as usize, start, step, count, LOCATE_MARGIN, domain)
            }
            _ => 0,
        }
    }

    /// The level set of `region` (pattern units) at the points `start + t step` (pattern space),
    /// `t = 0, 1, ...` below `out.len()`, into `out`; for a power cell the same values as
    /// [`FracturePattern::value`] point by point, up to round-off.
    pub fn row_values(&self, region: u32, start: DVec3, step: DVec3, out: &mut [f64]) {
        match &self.regions {
            Regions::Power(diagram) => diagram.row_values(region as usize, start, step, out),
            Regions::LevelSets(grids) => {
                for (t, o) in out.iter_mut().enumerate() {
                    *o = grids[region as usize].value(start + step * t as f64);
                }
            }
        }
    }

    /// The level set of `region` at `point` (pattern space, pattern units): negative inside.
    #[inline]
    pub fn value(&self, region: u32, point: DVec3) -> f64 {
        match &self.regions {
            Regions::Power(diagram) => diagram.value(region as usize, point),
            Regions::LevelSets(grids) => grids[region as usize].value(point),
        }
    }

    /// [`FracturePattern::value`] where it is at most `cap`; above it, some value above `cap`
    /// (cheaper for power cells, which stop at the first plane that shows it).
    #[inline]
    pub fn value_capped(&self, region: u32, point: DVec3, cap: f64) -> f64 {
        match &self.regions {
            Regions::Power(diagram) => diagram.value_capped(region as usize, point, cap),
            Regions::LevelSets(grids) => grids[region as usize].value(point),
        }
    }

    /// A point on the boundary of `region` near `point` (pattern space): exact for power cells,
    /// one step along the level set's gradient for grid regions.
    pub fn project(&self, region: u32, point: DVec3) -> DVec3 {
        match &self.regions {
            Regions::Power(diagram) => diagram.project(region as usize, point),
            Regions::LevelSets(grids) => {
                let (value, gradient) = grids[region as usize].value_and_gradient(point);
                let length = gradient.length();
                if length > 0.0 {
                    point - gradient * (value / (length * length))
                } else {
                    point
                }
            }
        }
    }

    /// The regions, for writing to a file.
    pub(crate) fn regions(&self) -> &Regions {
        &self.regions
    }
}

/// How deep inside a power cell (pattern units) a point must lie for its planes alone to say it
/// is the cell's: far above the round-off by which the planes and the power distances could
/// disagree, and by which a point reached in steps along a line differs from one computed on its
/// own.
const LOCATE_MARGIN: f64 = 1e-9;

/// A power cell may own some point within `radius` of `centre` only if its power distance at the
/// centre exceeds the lowest by no more than the most that difference can fall over `radius`
/// (the difference of two power distances is linear with gradient `2 (s_lowest - s_j)`).
fn power_candidates(diagram: &PowerDiagram, centre: DVec3, radius: f64) -> Vec<u32> {
    let all = 0..diagram.len() as u32;
    let lowest = diagram.nearest(centre, all.clone()) as usize;
    let base = diagram.power(lowest, centre);
    all.filter(|&j| {
        let j = j as usize;
        let slack = 2.0 * (diagram.sites[j] - diagram.sites[lowest]).length() * radius;
        diagram.power(j, centre) - base <= slack * (1.0 + 1e-9) + 1e-12
    })
    .collect()
}

/// Checks an impact point (strictly inside the unit box) and a frame (a finite rotation).
fn check_placement(impact: DVec3, frame: DQuat) -> Result<(), FractureError> {
    if !(impact.is_finite() && impact.cmpgt(DVec3::ZERO).all() && impact.cmplt(DVec3::ONE).all()) {
        return Err(FractureError::invalid(
            "pattern impact point",
            impact,
            "a point strictly inside the unit box [0, 1]^3",
        ));
    }
    if !(frame.is_finite() && (frame.length() - 1.0).abs() < 1e-6) {
        return Err(FractureError::invalid("pattern frame", frame, "a unit quaternion"));
    }
    Ok(())
}
