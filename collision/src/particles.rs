//! Surface particles: the points of a body that the narrow phase tests against the level sets of
//! other bodies (Su 2009 section 4.1, after Guendelman, Bridson and Fedkiw 2003).
//!
//! Particles are the mesh's vertices (corners and creases are where contacts concentrate) plus a
//! Poisson-disk fill: darts thrown uniformly by area, each kept only if no kept particle lies
//! within `spacing`. Vertices closer than `spacing` to an earlier vertex are dropped too, so dense
//! meshes (contoured level sets) are thinned to the requested spacing while coarse ones (a box's 8
//! corners) keep every vertex. Every particle lies on the surface; no two are closer than
//! `spacing`; and with enough darts (30 per expected particle) the surface is covered to within
//! about twice the spacing.

use glam::DVec3;
use hashbrown::HashMap;
use shatter_integrators::SplitMix64;

use crate::error::GeometryError;
use crate::grid::SdfGrid;
use crate::marching_cubes::contour;
use crate::trimesh::TriMesh;

/// Darts thrown per particle a perfect packing of the surface would hold.
const DARTS_PER_PARTICLE: f64 = 30.0;
/// Most particles one call may produce, a guard against a spacing tiny for the surface.
pub const MAX_PARTICLES: usize = 1 << 24;

/// Samples particles on `mesh` at least `spacing` apart (m): its vertices first, then a
/// Poisson-disk fill, seeded by `seed` (same seed, same particles).
///
/// Fails on an empty mesh, a spacing that is not positive and finite, or a spacing so small the
/// surface would need more than [`MAX_PARTICLES`].
pub fn sample_surface(mesh: &TriMesh, spacing: f64, seed: u64) -> Result<Vec<DVec3>, GeometryError> {
    if mesh.is_empty() {
        return Err(GeometryError::Empty { what: "mesh" });
    }
    if !(spacing.is_finite() && spacing > 0.0) {
        return Err(GeometryError::invalid(
            "particle spacing",
            spacing,
            "a positive finite length in metres",
        ));
    }
    let areas: Vec<f64> = (0..mesh.triangles().len())
        .map(|i| {
            let [a, b, c] = mesh.triangle(i);
            0.5 * (b - a).cross(c - a).length()
        })
        .collect();
    let total: f64 = areas.iter().sum();
    // A disk of radius spacing/2 per particle at the densest packing.
    let expected = total / (std::f64::consts::PI * 0.25 * spacing * spacing * 1.1);
    if !(expected < MAX_PARTICLES as f64) {
        return Err(GeometryError::invalid(
            "particle spacing",
            spacing,
            "a spacing large enough that the surface needs at most 2^24 particles",
        ));
    }
    let mut disk = PoissonDisk::new(spacing);
    for v in mesh.vertices() {
        disk.offer(*v);
    }
    if total > 0.0 {
        let cumulative: Vec<f64> = areas
            .iter()
            .scan(0.0, |sum, a| {
                *sum += a;
                Some(*sum)
            })
            .collect();
        let mut rng = SplitMix64::new(seed);
        let darts = (expected * DARTS_PER_PARTICLE).ceil() as usize;
        for _ in 0..darts {
            let pick = rng.next_f64() * total;
            let t = cumulative.partition_point(|c| *c <= pick).min(areas.len() - 1);
            let [a, b, c] = mesh.triangle(t);
            // Uniform point in a triangle: fold the unit square onto it.
            let (mut u, mut v) = (rng.next_f64(), rng.next_f64());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            disk.offer(a + (b - a) * u + (c - a) * v);
        }
    }
    Ok(disk.points)
}

/// Samples particles on the zero level set of `grid` at least about `spacing` apart (m), seeded
/// by `seed`: the level set is contoured ([`crate::marching_cubes::contour`]), the contour sampled
/// as in [`sample_surface`] (its vertices thinned to the spacing, then a Poisson-disk fill), and
/// every particle moved onto the trilinear zero set by Newton steps. This is how a body known only
/// by its level set (a fragment of Su 2009 section 4.2) gets particles.
///
/// The contour lies within a small fraction of a cell of the zero set, so the projection moves
/// particles by that much at most and their spacing shrinks by at most twice that. Fails on an
/// empty level set (no negative sample) or a bad spacing.
pub fn sample_level_set(grid: &SdfGrid, spacing: f64, seed: u64) -> Result<Vec<DVec3>, GeometryError> {
    let contour = contour(grid)?;
    let mut points = sample_surface(&contour, spacing, seed)?;
    // The grid's gradient is blended central differences, not the trilinear interpolant's own
    // derivative, so these Newton-like steps converge linearly, each dividing the error by about
    // a thousand: a few reach round-off. The tolerance is relative to the cell so it means the
    // same at every scale.
    project_to_surface(
        &mut points,
        |p| grid.value_and_gradient(p),
        LEVEL_SET_NEWTON_STEPS,
        1e-12 * grid.spec().spacing,
    );
    Ok(points)
}

/// Newton steps that put a contoured particle on the trilinear zero set.
const LEVEL_SET_NEWTON_STEPS: usize = 8;

/// Moves each point onto the zero level set of `distance` by Newton steps along its gradient
/// (`p - phi grad / |grad|^2`), at most `iterations` times or until `|phi|` is below `tolerance`.
/// Use it to put particles sampled on a contoured mesh exactly on the level set or analytic shape
/// they came from. A step that would leave a point non-finite is not taken.
pub fn project_to_surface(
    points: &mut [DVec3],
    distance: impl Fn(DVec3) -> (f64, DVec3),
    iterations: usize,
    tolerance: f64,
) {
    for p in points.iter_mut() {
        for _ in 0..iterations {
            let (phi, gradient) = distance(*p);
            let g2 = gradient.length_squared();
            if phi.abs() <= tolerance || !(g2 > 0.0) {
                break;
            }
            let next = *p - gradient * (phi / g2);
            if !next.is_finite() {
                break;
            }
            *p = next;
        }
    }
}

/// Points at least `spacing` apart, with a hash grid of cells `spacing` wide for the test.
struct PoissonDisk {
    spacing: f64,
    points: Vec<DVec3>,
    cells: HashMap<[i64; 3], smallvec::SmallVec<[u32; 4]>>,
}

impl PoissonDisk {
    fn new(spacing: f64) -> Self {
        Self {
            spacing,
            points: Vec::new(),
            cells: HashMap::new(),
        }
    }

    fn cell(&self, p: DVec3) -> [i64; 3] {
        (p / self.spacing).floor().to_array().map(|c| c as i64)
    }

    /// Keeps `p` if no kept point is closer than the spacing.
    fn offer(&mut self, p: DVec3) {
        let [x, y, z] = self.cell(p);
        let limit = self.spacing * self.spacing;
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if let Some(bucket) = self.cells.get(&[x + dx, y + dy, z + dz])
                        && bucket
                            .iter()
                            .any(|i| (self.points[*i as usize] - p).length_squared() < limit)
                    {
                        return;
                    }
                }
            }
        }
        self.cells.entry([x, y, z]).or_default().push(self.points.len() as u32);
        self.points.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::TriangleBvh;

    #[test]
    fn particles_are_on_the_surface_spaced_and_covering() {
        let mesh = TriMesh::cuboid(DVec3::new(1.0, 0.5, 0.25));
        let spacing = 0.1;
        let particles = sample_surface(&mesh, spacing, 7).unwrap();
        // Every corner is a particle.
        for corner in mesh.vertices() {
            assert!(particles.contains(corner));
        }
        let bvh = TriangleBvh::build(&mesh);
        for p in &particles {
            assert!(bvh.closest_point(*p, f64::INFINITY).unwrap().distance_squared < 1e-24);
        }
        for (i, p) in particles.iter().enumerate() {
            for q in &particles[i + 1..] {
                assert!((*p - *q).length() >= spacing);
            }
        }
        // Coverage: random surface points all have a particle within twice the spacing.
        let probes = sample_surface(&mesh, spacing / 4.0, 99).unwrap();
        let worst = probes
            .iter()
            .map(|q| {
                particles
                    .iter()
                    .map(|p| (*p - *q).length())
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max);
        assert!(
            worst < 2.0 * spacing,
            "a surface point is {worst} m from every particle"
        );
        // Roughly the count a disk packing gives: area / (pi (s/2)^2 * packing ratio).
        let area = mesh.surface_area();
        let n = particles.len() as f64;
        assert!(
            n > 0.4 * area / (spacing * spacing) && n < 1.3 * area / (spacing * spacing),
            "{n}"
        );
        assert_eq!(particles, sample_surface(&mesh, spacing, 7).unwrap());
    }

    #[test]
    fn particles_projected_onto_an_analytic_sphere() {
        let mesh = TriMesh::icosphere(1.0, 2);
        let mut particles = sample_surface(&mesh, 0.2, 3).unwrap();
        project_to_surface(&mut particles, |p| (p.length() - 1.0, p / p.length()), 8, 1e-14);
        assert!(particles.iter().all(|p| (p.length() - 1.0).abs() < 1e-14));
    }

    #[test]
    fn particles_on_a_level_set_lie_on_its_zero_set() {
        use crate::grid::GridSpec;
        // An ellipsoid-ish level set (not a distance field away from the axes, so the projection
        // has real work to do), 40 cells across.
        let spec =
            GridSpec::with_resolution(crate::aabb::Aabb::from_center(DVec3::ZERO, DVec3::splat(1.2)), 40, 2).unwrap();
        let grid = SdfGrid::from_fn(spec, |p| (p * DVec3::new(1.0, 1.6, 2.2)).length() - 1.0).unwrap();
        let spacing = 0.08;
        let particles = sample_level_set(&grid, spacing, 5).unwrap();
        assert!(particles.len() > 100, "{}", particles.len());
        let cell = grid.spec().spacing;
        let worst = particles.iter().map(|p| grid.value(*p).abs()).fold(0.0, f64::max);
        // The contour alone is about 1e-2 cells off; projected, round-off remains.
        assert!(worst <= 1e-9 * cell, "a particle is {worst} m off the zero set");
        // Close to the requested spacing (projection moves points a fraction of a cell).
        let closest = particles
            .iter()
            .enumerate()
            .flat_map(|(i, p)| particles[i + 1..].iter().map(move |q| (*p - *q).length()))
            .fold(f64::INFINITY, f64::min);
        assert!(closest > spacing - 0.1 * cell, "two particles {closest} m apart");
        // Covering: every contour vertex has a particle within twice the spacing.
        let contour = contour(&grid).unwrap();
        let gap = contour
            .vertices()
            .iter()
            .map(|v| {
                particles
                    .iter()
                    .map(|p| (*p - *v).length())
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max);
        assert!(gap < 2.0 * spacing, "a surface point is {gap} m from every particle");
        assert_eq!(particles, sample_level_set(&grid, spacing, 5).unwrap());
        let empty = SdfGrid::from_fn(spec, |_| 1.0).unwrap();
        assert!(sample_level_set(&empty, spacing, 5).is_err());
    }

    #[test]
    fn particles_refuse_bad_spacing_and_empty_meshes() {
        let mesh = TriMesh::cuboid(DVec3::ONE);
        assert!(
            sample_surface(&mesh, 0.0, 1)
                .unwrap_err()
                .to_string()
                .contains("particle spacing")
        );
        assert!(sample_surface(&mesh, f64::NAN, 1).is_err());
        assert!(sample_surface(&mesh, 1e-9, 1).unwrap_err().to_string().contains("2^24"));
        assert_eq!(
            sample_surface(&TriMesh::default(), 0.1, 1).unwrap_err(),
            GeometryError::Empty { what: "mesh" }
        );
    }
}
