//! Ways to make a fracture pattern: impact-centred (radial) Voronoi with rings and spokes, uniform
//! Voronoi, planar slices, and regions from the user's closed meshes (Su 2009 section 4.3 leaves
//! the choice open; the paper's figures use an impact-centred one).

use glam::{DQuat, DVec3};
use shatter_collision::level_set::level_set_from_mesh;
use shatter_collision::topology::require_solid;
use shatter_collision::{Aabb, GridSpec, TriMesh};
use shatter_integrators::SplitMix64;

use super::pattern::FracturePattern;
use crate::error::FractureError;

/// The centre of the unit box, where the generated patterns put their impact point.
pub const BOX_CENTRE: DVec3 = DVec3::splat(0.5);

/// How the spokes of a radial pattern are spread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpokeLayout {
    /// Evenly over the sphere of directions: wedges in every direction, for solid bodies.
    Sphere,
    /// Evenly around the circle across the direction of impact: a dart board on a wall or a
    /// plate hit face on (regions are prisms along the impact direction).
    Disc,
}

/// An impact-centred pattern: one small cell at the impact point, then rings of cells whose size
/// grows geometrically outward, cut by spokes (Su 2009 Fig. 4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadialPattern {
    /// Rings of cells around the central one.
    pub rings: usize,
    /// Cells per ring.
    pub spokes: usize,
    /// Radius of the first ring's sites, pattern units (the box is 1 across).
    pub inner_radius: f64,
    /// Ratio of each ring's radius to the previous one (> 1).
    pub growth: f64,
    /// Random displacement of each site, as a fraction of its ring's spacing (0: regular).
    pub jitter: f64,
    /// Seed of the jitter.
    pub seed: u64,
    /// How the spokes are spread.
    pub layout: SpokeLayout,
}

impl Default for RadialPattern {
    fn default() -> Self {
        Self {
            rings: 4,
            spokes: 10,
            inner_radius: 0.035,
            growth: 2.0,
            jitter: 0.3,
            seed: 1,
            layout: SpokeLayout::Disc,
        }
    }
}

/// An impact-centred pattern of many pieces on a plate hit face on: sites on a sunflower
/// (Vogel) spiral in the plane across the impact, dense at the impact and thinning outward, so
/// pieces grow with distance without the rings of [`RadialPattern`] (whose every ring has the
/// same number of cells, too many near the impact for thousands of pieces). Regions are prisms
/// along the impact direction (Su 2009 Fig. 8's shattered table top).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpiralPattern {
    /// Number of sites (regions).
    pub count: usize,
    /// Radius of the disc of sites around the impact point, pattern units (the box is 1 across;
    /// beyond it the outermost cells go on).
    pub radius: f64,
    /// Site `i` lies at `radius * ((i + 1/2) / count)^concentration` from the impact: 0.5 spreads
    /// the sites evenly over the disc, larger values crowd them towards the impact (piece area
    /// grows as distance to the power `2 - 1 / concentration`).
    pub concentration: f64,
    /// Random displacement of each site, as a fraction of the local site spacing (0: regular).
    pub jitter: f64,
    /// Seed of the jitter.
    pub seed: u64,
}

impl Default for SpiralPattern {
    fn default() -> Self {
        Self {
            count: 3000,
            radius: 0.75,
            concentration: 0.7,
            jitter: 0.3,
            seed: 1,
        }
    }
}

impl FracturePattern {
    /// The impact-centred Voronoi pattern `settings` describe, impact point at the box centre,
    /// pattern frame the identity (impact along +z). Fails naming a count, radius, growth or
    /// jitter out of range.
    pub fn radial(settings: &RadialPattern) -> Result<Self, FractureError> {
        let RadialPattern {
            rings,
            spokes,
            inner_radius,
            growth,
            jitter,
            seed,
            layout,
        } = *settings;
        if rings == 0 || spokes < 2 || rings * spokes > 1 << 20 {
            return Err(FractureError::invalid(
                "rings and spokes",
                (rings, spokes),
                "at least one ring of at least two spokes",
            ));
        }
        if !(inner_radius.is_finite() && inner_radius > 0.0 && inner_radius < 0.5) {
            return Err(FractureError::invalid(
                "inner radius (pattern units)",
                inner_radius,
                "in (0, 0.5)",
            ));
        }
        if !(growth.is_finite() && growth > 1.0) {
            return Err(FractureError::invalid("ring growth", growth, "a finite ratio above 1"));
        }
        if !(jitter.is_finite() && (0.0..0.5).contains(&jitter)) {
            return Err(FractureError::invalid("jitter", jitter, "in [0, 0.5)"));
        }
        let mut random = SplitMix64::new(seed);
        let directions = spoke_directions(spokes, layout);
        let mut sites = vec![BOX_CENTRE];
        let mut radius = inner_radius;
        for ring in 0..rings {
            // Neighbouring spokes' sites are about this far apart on the ring.
            let spacing = radius * (4.0 * std::f64::consts::PI / spokes as f64).sqrt();
            // Turning every other ring by half a spoke staggers the cuts like bricks.
            let twist = if ring % 2 == 1 {
                std::f64::consts::PI / spokes as f64
            } else {
                0.0
            };
            let turn = DQuat::from_rotation_z(twist);
            for direction in &directions {
                let mut site = BOX_CENTRE + turn * *direction * radius;
                if jitter > 0.0 {
                    let shove = random.unit_vector() * (jitter * spacing.min(radius * (1.0 - 1.0 / growth)));
                    site += match layout {
                        SpokeLayout::Sphere => shove,
                        SpokeLayout::Disc => DVec3::new(shove.x, shove.y, 0.0),
                    };
                }
                sites.push(site);
            }
            radius *= growth;
        }
        let weights = vec![0.0; sites.len()];
        Self::power_diagram(sites, weights, BOX_CENTRE, DQuat::IDENTITY)
    }

    /// The sunflower-spiral pattern `settings` describe, impact point at the box centre, pattern
    /// frame the identity (impact along +z). Fails naming a count, radius, concentration or
    /// jitter out of range.
    pub fn spiral(settings: &SpiralPattern) -> Result<Self, FractureError> {
        let SpiralPattern {
            count,
            radius,
            concentration,
            jitter,
            seed,
        } = *settings;
        if !(2..=1 << 20).contains(&count) {
            return Err(FractureError::invalid("spiral site count", count, "in 2..=1048576"));
        }
        if !(radius.is_finite() && radius > 0.0 && radius <= 1.0) {
            return Err(FractureError::invalid(
                "spiral radius (pattern units)",
                radius,
                "in (0, 1]",
            ));
        }
        if !(concentration.is_finite() && (0.5..=4.0).contains(&concentration)) {
            return Err(FractureError::invalid(
                "spiral concentration",
                concentration,
                "in [0.5, 4]",
            ));
        }
        if !(jitter.is_finite() && (0.0..0.5).contains(&jitter)) {
            return Err(FractureError::invalid("jitter", jitter, "in [0, 0.5)"));
        }
        // The golden angle turns each site so that no two line up along a spoke.
        let golden_angle = std::f64::consts::PI * (3.0 - 5f64.sqrt());
        let mut random = SplitMix64::new(seed);
        let sites = (0..count)
            .map(|i| {
                let t = (i as f64 + 0.5) / count as f64;
                let r = radius * t.powf(concentration);
                // Area per site where the spiral is at `t`: d(pi r^2)/di.
                let spacing =
                    (std::f64::consts::TAU * radius * radius * concentration * t.powf(2.0 * concentration - 1.0)
                        / count as f64)
                        .sqrt();
                let (sin, cos) = (golden_angle * i as f64).sin_cos();
                let shove = random.unit_vector() * (jitter * spacing);
                BOX_CENTRE + DVec3::new(r * cos + shove.x, r * sin + shove.y, 0.0)
            })
            .collect::<Vec<_>>();
        let weights = vec![0.0; sites.len()];
        Self::power_diagram(sites, weights, BOX_CENTRE, DQuat::IDENTITY)
    }

    /// A Voronoi pattern of `count` sites uniformly random in the box (seeded), impact point at
    /// the centre: pieces of similar size everywhere. Fails on fewer than two sites.
    pub fn uniform(count: usize, seed: u64) -> Result<Self, FractureError> {
        let mut random = SplitMix64::new(seed);
        let sites: Vec<DVec3> = (0..count)
            .map(|_| DVec3::new(random.next_f64(), random.next_f64(), random.next_f64()))
            .collect();
        Self::power_diagram(sites, vec![0.0; count], BOX_CENTRE, DQuat::IDENTITY)
    }

    /// Parallel slabs across unit `direction` (pattern space), cut at signed distances `cuts`
    /// from the box centre along it (pattern units, strictly increasing, within (-0.5, 0.5));
    /// impact point at the centre, impact along `direction`. Fails naming a bad direction or
    /// cut.
    pub fn slices(direction: DVec3, cuts: &[f64]) -> Result<Self, FractureError> {
        let length = direction.length();
        if !(length.is_finite() && (length - 1.0).abs() < 1e-9) {
            return Err(FractureError::invalid("slice direction", direction, "a unit vector"));
        }
        if cuts.is_empty()
            || cuts.iter().any(|c| !(c.is_finite() && c.abs() < 0.5))
            || cuts.windows(2).any(|w| w[1] <= w[0])
        {
            return Err(FractureError::invalid(
                "slice cuts (pattern units from the centre)",
                cuts,
                "at least one cut, strictly increasing, each within (-0.5, 0.5)",
            ));
        }
        // Slab centres along the direction, then weights that move each bisector onto its cut:
        // with sites at t_i, the bisector of i and i + 1 lies at
        // (t_{i+1}^2 - t_i^2 - w_{i+1} + w_i) / (2 (t_{i+1} - t_i)).
        let mut centres = vec![cuts[0] - 0.25];
        centres.extend(cuts.windows(2).map(|w| 0.5 * (w[0] + w[1])));
        centres.push(cuts[cuts.len() - 1] + 0.25);
        let mut weights = vec![0.0];
        for (i, cut) in cuts.iter().enumerate() {
            let (t0, t1) = (centres[i], centres[i + 1]);
            weights.push(weights[i] + t1 * t1 - t0 * t0 - 2.0 * cut * (t1 - t0));
        }
        let sites = centres.iter().map(|t| BOX_CENTRE + direction * *t).collect();
        let frame = DQuat::from_rotation_arc(DVec3::Z, direction);
        Self::power_diagram(sites, weights, BOX_CENTRE, frame)
    }

    /// Regions from closed meshes in pattern space (one per region; they should tile the box,
    /// and where they overlap or leave gaps a point goes to the region whose level set is
    /// lowest), sampled on grids of `cells` cells across the box. Fails naming the first mesh
    /// that is not a closed, outward-wound solid, or a resolution out of range.
    pub fn from_meshes(meshes: &[TriMesh], cells: usize, impact: DVec3, frame: DQuat) -> Result<Self, FractureError> {
        if !(4..=1024).contains(&cells) {
            return Err(FractureError::invalid("pattern cells", cells, "between 4 and 1024"));
        }
        let spacing = 1.0 / cells as f64;
        let mut grids = Vec::with_capacity(meshes.len());
        for (index, mesh) in meshes.iter().enumerate() {
            require_solid(mesh).map_err(|e| FractureError::input(format!("pattern region mesh {index}: {e}")))?;
            let bounds = mesh.bounds().unwrap_or(Aabb::EMPTY);
            let spec = GridSpec::covering(bounds, spacing, 3)?;
            grids.push(level_set_from_mesh(mesh, spec)?);
        }
        Self::from_level_sets(grids, impact, frame)
    }
}

/// Unit directions of `count` spokes.
fn spoke_directions(count: usize, layout: SpokeLayout) -> Vec<DVec3> {
    match layout {
        SpokeLayout::Disc => (0..count)
            .map(|i| {
                let angle = std::f64::consts::TAU * i as f64 / count as f64;
                DVec3::new(angle.cos(), angle.sin(), 0.0)
            })
            .collect(),
        // A Fibonacci sphere: even coverage for any count.
        SpokeLayout::Sphere => {
            let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
            (0..count)
                .map(|i| {
                    let z = 1.0 - (2.0 * i as f64 + 1.0) / count as f64;
                    let r = (1.0 - z * z).sqrt();
                    let angle = golden * i as f64;
                    DVec3::new(r * angle.cos(), r * angle.sin(), z)
                })
                .collect()
        }
    }
}
