//! Quadric error metrics (Garland and Heckbert 1997): the sum of squared distances from a point
//! to a set of planes, kept as one symmetric 4x4 form so that merging two vertices' plane sets
//! is an addition.

use glam::{DMat3, DVec3};

/// Area-weighted sum of squared plane distances, `E(p) = p^T A p + 2 b^T p + c`, with the total
/// weight (m^2) so that `E / weight` is a mean squared distance (m^2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Quadric {
    a: DMat3,
    b: DVec3,
    c: f64,
    weight: f64,
}

impl Default for Quadric {
    fn default() -> Self {
        Self {
            a: DMat3::ZERO,
            b: DVec3::ZERO,
            c: 0.0,
            weight: 0.0,
        }
    }
}

impl Quadric {
    /// The plane through `point` with unit `normal`, weighted by `weight` (the triangle's area,
    /// m^2): the squared distance `(n . (p - point))^2` times the weight.
    pub(super) fn plane(normal: DVec3, point: DVec3, weight: f64) -> Self {
        let d = -normal.dot(point);
        Self {
            a: DMat3::from_cols(normal * normal.x, normal * normal.y, normal * normal.z) * weight,
            b: normal * (d * weight),
            c: d * d * weight,
            weight,
        }
    }

    /// The planes of both.
    pub(super) fn merged(&self, other: &Self) -> Self {
        Self {
            a: self.a + other.a,
            b: self.b + other.b,
            c: self.c + other.c,
            weight: self.weight + other.weight,
        }
    }

    /// Weighted mean squared distance (m^2) from `p` to the planes; zero with no planes.
    pub(super) fn mean_squared_distance(&self, p: DVec3) -> f64 {
        if self.weight <= 0.0 {
            return 0.0;
        }
        // Rounding can take a sum of squares a hair below zero.
        ((p.dot(self.a * p) + 2.0 * self.b.dot(p) + self.c) / self.weight).max(0.0)
    }

    /// The point nearest all planes when they pin one down (three or more independent
    /// normals: a corner), else `None` (planes of a flat region or a ridge leave a plane or a
    /// line of minimisers; the caller picks among the edge's own points).
    pub(super) fn minimiser(&self) -> Option<DVec3> {
        let scale = (self.a.x_axis.x + self.a.y_axis.y + self.a.z_axis.z) / 3.0;
        let det = self.a.determinant();
        // A corner whose three faces meet at angles of at least a few degrees has a determinant
        // above 1e-3 of the trace's cube; below it the solve amplifies rounding.
        if !(scale > 0.0 && det.abs() > 1e-3 * scale.powi(3)) {
            return None;
        }
        let p = self.a.inverse() * -self.b;
        p.is_finite().then_some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplify_quadric_measures_plane_distances_and_finds_a_corner() {
        let corner = DVec3::new(0.3, -0.2, 0.5);
        let q = Quadric::plane(DVec3::X, corner, 2.0)
            .merged(&Quadric::plane(DVec3::Y, corner, 1.0))
            .merged(&Quadric::plane(DVec3::Z, corner, 1.0));
        let p = corner + DVec3::new(0.1, 0.2, -0.3);
        let expected = (2.0 * 0.01 + 0.04 + 0.09) / 4.0;
        assert!((q.mean_squared_distance(p) - expected).abs() < 1e-15);
        assert!((q.minimiser().unwrap() - corner).length() < 1e-12);
        // Two planes meet in a line: no single minimiser.
        let ridge = Quadric::plane(DVec3::X, corner, 1.0).merged(&Quadric::plane(DVec3::Y, corner, 1.0));
        assert!(ridge.minimiser().is_none());
        assert_eq!(Quadric::default().mean_squared_distance(p), 0.0);
    }
}
