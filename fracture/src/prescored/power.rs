//! Power diagrams: the regions of the generated fracture patterns.
//!
//! Site `i` at `s_i` with weight `w_i` owns the points whose power distance `|x - s_i|^2 - w_i`
//! is smallest. Cells are convex polyhedra bounded by the bisector planes
//! `2 x . (s_j - s_i) = |s_j|^2 - |s_i|^2 - w_j + w_i`, so one representation covers Voronoi
//! patterns (all weights zero) and slabs and bricks (collinear or lattice sites, weights placing
//! each bisector at a chosen cut).
//!
//! A cell's level set is `phi_i(x) = max_j (n_ij . x - d_ij)` over its neighbours' bisector
//! planes (unit normals pointing out of the cell). Inside the cell this is the exact signed
//! distance to its boundary: a plane that is no face of the cell lies farther than the nearest
//! face. Outside it is a lower bound of the distance with the right sign, which is all
//! inside/outside queries need (Su 2009 section 4.2 accepts the same of its max(phi, phi)).
//! Taking the planes of every other site would give the same values; the neighbours (found on a
//! lattice when the pattern is built) only make it cheaper.

use glam::DVec3;
use rayon::prelude::*;

/// A plane bounding a cell: signed distance `normal . x - offset`, positive outside the cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Plane {
    pub normal: DVec3,
    pub offset: f64,
}

impl Plane {
    /// Signed distance of `point` (positive on the far side from the cell).
    #[inline]
    pub fn distance(&self, point: DVec3) -> f64 {
        self.normal.dot(point) - self.offset
    }
}

/// Sites, weights and each cell's bounding planes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PowerDiagram {
    pub sites: Vec<DVec3>,
    pub weights: Vec<f64>,
    planes: Vec<Plane>,
    /// Cell `i`'s planes are `planes[ranges[i]..ranges[i + 1]]`.
    ranges: Vec<u32>,
}

impl PowerDiagram {
    /// The diagram of `sites` and `weights` whose cells are bounded by the bisectors with the
    /// listed neighbours (`neighbours[i]` ascending, symmetric).
    pub fn new(sites: Vec<DVec3>, weights: Vec<f64>, neighbours: &[Vec<u32>]) -> Self {
        let mut planes = Vec::new();
        let mut ranges = vec![0u32];
        for (i, around) in neighbours.iter().enumerate() {
            for &j in around {
                planes.push(bisector(&sites, &weights, i, j as usize));
            }
            ranges.push(planes.len() as u32);
        }
        Self {
            sites,
            weights,
            planes,
            ranges,
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.sites.len()
    }

    /// Power distance of `point` to site `i`.
    #[inline]
    pub fn power(&self, i: usize, point: DVec3) -> f64 {
        (point - self.sites[i]).length_squared() - self.weights[i]
    }

    /// The cell of `point` among `candidates` (smallest power distance; ties to the lower index).
    #[inline]
    pub fn nearest(&self, point: DVec3, candidates: impl IntoIterator<Item = u32>) -> u32 {
        let mut best = (f64::INFINITY, u32::MAX);
        for c in candidates {
            let p = self.power(c as usize, point);
            if p < best.0 || (p == best.0 && c < best.1) {
                best = (p, c);
            }
        }
        best.1
    }

    /// The planes of cell `i`.
    pub fn planes(&self, i: usize) -> &[Plane] {
        &self.planes[self.ranges[i] as usize..self.ranges[i + 1] as usize]
    }

    /// Level set of cell `i` at `point`: the largest signed distance to its planes.
    #[inline]
    pub fn value(&self, i: usize, point: DVec3) -> f64 {
        self.planes(i)
            .iter()
            .fold(f64::NEG_INFINITY, |m, plane| m.max(plane.distance(point)))
    }

    /// [`PowerDiagram::value`], or any value above `cap` as soon as one plane exceeds it (for
    /// points where only "farther than `cap`" matters).
    #[inline]
    pub fn value_capped(&self, i: usize, point: DVec3, cap: f64) -> f64 {
        let mut m = f64::NEG_INFINITY;
        for plane in self.planes(i) {
            let d = plane.distance(point);
            if d > cap {
                return d;
            }
            m = m.max(d);
        }
        m
    }

    /// Level set of cell `i` at the points `start + t step`, `t = 0, 1, ...` below `out.len()`,
    /// into `out`: plane by plane, each affine in `t`, so a row costs a multiply, an add and a
    /// max per plane and point (against a dot product and a transform per point one by one).
    pub fn row_values(&self, i: usize, start: DVec3, step: DVec3, out: &mut [f64]) {
        out.fill(f64::NEG_INFINITY);
        for plane in self.planes(i) {
            let (d0, ds) = (plane.distance(start), plane.normal.dot(step));
            for (t, o) in out.iter_mut().enumerate() {
                *o = o.max(d0 + ds * t as i32 as f64);
            }
        }
    }

    /// How many of the points `start + t step`, `t = 0, 1, ...` below `count`, from the first
    /// on, lie inside cell `i` deeper than `depth` and inside `domain` (min, max corners) by
    /// `depth`: each plane's distance is affine in `t`, so each plane bounds the run at once.
    pub fn inside_run(
        &self,
        i: usize,
        start: DVec3,
        step: DVec3,
        count: usize,
        depth: f64,
        domain: (DVec3, DVec3),
    ) -> usize {
        let mut run = count as f64;
        // Keeps t where `d0 + t ds < -depth`, for t from zero.
        let mut bound = |d0: f64, ds: f64| {
            if !(d0 < -depth) {
                run = 0.0;
            } else if ds > 0.0 {
                run = run.min(((-depth - d0) / ds).ceil());
            }
        };
        for plane in self.planes(i) {
            bound(plane.distance(start), plane.normal.dot(step));
        }
        for axis in 0..3 {
            bound(domain.0[axis] - start[axis], -step[axis]);
            bound(start[axis] - domain.1[axis], step[axis]);
        }
        run.max(0.0) as usize
    }

    /// The closest point to `point` on the face of cell `i` that decides its level set there
    /// (the plane of largest signed distance): exact on the cell's boundary near that face.
    pub fn project(&self, i: usize, point: DVec3) -> DVec3 {
        let mut nearest: Option<(f64, &Plane)> = None;
        for plane in self.planes(i) {
            let d = plane.distance(point);
            // The last of equal distances, as `max_by` keeps it.
            if nearest.is_none_or(|(best, _)| d >= best) {
                nearest = Some((d, plane));
            }
        }
        match nearest {
            Some((d, plane)) => point - plane.normal * d,
            None => point,
        }
    }
}

/// The neighbours of every cell: `j` is a neighbour of `i` when their bisector holds a face of
/// positive area inside `domain` (min, max corners). Only the pairs in `pairs` are tried and only
/// each cell's partners in `pairs` clip its faces, so `pairs` must include every touching pair
/// (a [`super::candidates::CandidateLattice`] gives such a superset).
pub(crate) fn neighbours(
    sites: &[DVec3],
    weights: &[f64],
    pairs: &[(u32, u32)],
    domain: (DVec3, DVec3),
) -> Vec<Vec<u32>> {
    let mut partners = vec![Vec::new(); sites.len()];
    for &(i, j) in pairs {
        partners[i as usize].push(j);
        partners[j as usize].push(i);
    }
    let touching: Vec<bool> = pairs
        .par_iter()
        .map(|&(i, j)| {
            let face = bisector(sites, weights, i as usize, j as usize);
            let mut polygon = plane_in_box(face, domain);
            for &k in &partners[i as usize] {
                if k != j && !polygon.is_empty() {
                    polygon = clip(&polygon, bisector(sites, weights, i as usize, k as usize));
                }
            }
            polygon_area(&polygon) > 1e-12
        })
        .collect();
    let mut around = vec![Vec::new(); sites.len()];
    for (&(i, j), touch) in pairs.iter().zip(touching) {
        if touch {
            around[i as usize].push(j);
            around[j as usize].push(i);
        }
    }
    for list in &mut around {
        list.sort_unstable();
    }
    around
}

/// The polygon where `plane` crosses the box `domain`.
fn plane_in_box(plane: Plane, (low, high): (DVec3, DVec3)) -> Vec<DVec3> {
    let centre = 0.5 * (low + high);
    let reach = (high - low).length();
    let origin = centre - plane.normal * plane.distance(centre);
    let (u, v) = plane.normal.any_orthonormal_pair();
    let mut polygon = vec![
        origin + (u + v) * reach,
        origin + (v - u) * reach,
        origin - (u + v) * reach,
        origin + (u - v) * reach,
    ];
    for axis in 0..3 {
        let mut normal = DVec3::ZERO;
        normal[axis] = 1.0;
        polygon = clip(
            &polygon,
            Plane {
                normal,
                offset: high[axis],
            },
        );
        polygon = clip(
            &polygon,
            Plane {
                normal: -normal,
                offset: -low[axis],
            },
        );
    }
    polygon
}

/// The part of convex `polygon` on the cell side of `plane` (Sutherland and Hodgman).
fn clip(polygon: &[DVec3], plane: Plane) -> Vec<DVec3> {
    let mut kept = Vec::with_capacity(polygon.len() + 1);
    for (index, &a) in polygon.iter().enumerate() {
        let b = polygon[(index + 1) % polygon.len()];
        let (da, db) = (plane.distance(a), plane.distance(b));
        if da <= 0.0 {
            kept.push(a);
        }
        if (da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0) {
            kept.push(a + (b - a) * (da / (da - db)));
        }
    }
    kept
}

/// Area of a planar convex polygon.
fn polygon_area(polygon: &[DVec3]) -> f64 {
    if polygon.len() < 3 {
        return 0.0;
    }
    let mut twice = DVec3::ZERO;
    for index in 1..polygon.len() - 1 {
        twice += (polygon[index] - polygon[0]).cross(polygon[index + 1] - polygon[0]);
    }
    0.5 * twice.length()
}

/// The bisector of cells `i` and `j`, oriented out of cell `i`.
fn bisector(sites: &[DVec3], weights: &[f64], i: usize, j: usize) -> Plane {
    let (si, sj) = (sites[i], sites[j]);
    let axis = sj - si;
    let length = axis.length();
    Plane {
        normal: axis / length,
        offset: (sj.length_squared() - si.length_squared() - weights[j] + weights[i]) / (2.0 * length),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prescored_power_cells_of_weighted_collinear_sites_cut_where_asked() {
        // Slab centres 0.1, 0.4, 0.8 with cuts at 0.25 and 0.5: weights move the bisectors.
        let sites = vec![DVec3::X * 0.1, DVec3::X * 0.4, DVec3::X * 0.8];
        let cuts = [0.25, 0.5];
        let mut weights = vec![0.0];
        for i in 0..2 {
            let (t0, t1) = (sites[i].x, sites[i + 1].x);
            weights.push(weights[i] + t1 * t1 - t0 * t0 - 2.0 * cuts[i] * (t1 - t0));
        }
        let diagram = PowerDiagram::new(sites, weights, &[vec![1], vec![0, 2], vec![1]]);
        let all = || 0..3u32;
        assert_eq!(diagram.nearest(DVec3::X * 0.249, all()), 0);
        assert_eq!(diagram.nearest(DVec3::X * 0.251, all()), 1);
        assert_eq!(diagram.nearest(DVec3::X * 0.499, all()), 1);
        assert_eq!(diagram.nearest(DVec3::X * 0.501, all()), 2);
        // Inside the middle slab the level set is minus the distance to the nearer cut.
        assert!((diagram.value(1, DVec3::new(0.3, 5.0, -2.0)) + 0.05).abs() < 1e-12);
        assert!((diagram.value(1, DVec3::X * 0.7) - 0.2).abs() < 1e-12);
        let on_face = diagram.project(1, DVec3::new(0.45, 1.0, 2.0));
        assert!((on_face - DVec3::new(0.5, 1.0, 2.0)).length() < 1e-12);
    }

    /// Along a line, the row evaluation gives the cell's level set point by point (to
    /// round-off), and the run a cell keeps is every leading point inside it and the box by the
    /// depth and no point that is not: random cells (every other site a neighbour), random lines.
    #[test]
    fn prescored_power_rows_match_the_points_one_by_one() {
        use shatter_integrators::SplitMix64;
        let mut random = SplitMix64::new(23);
        let mut point = |low: f64, high: f64| {
            DVec3::new(
                random.range(low, high),
                random.range(low, high),
                random.range(low, high),
            )
        };
        let sites: Vec<DVec3> = (0..12).map(|_| point(0.0, 1.0)).collect();
        let neighbours: Vec<Vec<u32>> = (0..12u32).map(|i| (0..12).filter(|&j| j != i).collect()).collect();
        let diagram = PowerDiagram::new(sites, vec![0.0; 12], &neighbours);
        let (depth, domain) = (1e-9, (DVec3::ZERO, DVec3::ONE));
        let inside = |i: usize, p: DVec3, slack: f64| {
            diagram.value(i, p) < -depth + slack
                && (p - domain.0).min_element() > depth - slack
                && (domain.1 - p).min_element() > depth - slack
        };
        let (mut in_runs, mut rows) = (0, 0);
        for _ in 0..300 {
            let (start, step) = (point(-0.2, 1.2), point(-0.04, 0.04));
            let cell = diagram.nearest(start, 0..12);
            let mut values = [0.0; 40];
            diagram.row_values(cell as usize, start, step, &mut values);
            for (t, value) in values.iter().enumerate() {
                let alone = diagram.value(cell as usize, start + step * t as f64);
                assert!((value - alone).abs() < 1e-12, "{value} against {alone}");
            }
            let run = diagram.inside_run(cell as usize, start, step, values.len(), depth, domain);
            let at = |t: usize| start + step * t as f64;
            assert!(
                (0..run).all(|t| inside(cell as usize, at(t), 1e-12)),
                "run {run} too long"
            );
            let surely = (0..values.len())
                .take_while(|&t| inside(cell as usize, at(t), -1e-12))
                .count();
            assert!(run >= surely, "run {run}, {surely} points surely inside");
            in_runs += run;
            rows += usize::from(run > 0 && run < values.len());
        }
        assert!(
            in_runs > 500 && rows > 50,
            "{in_runs} points in runs, {rows} runs ending inside the row"
        );
    }
}
