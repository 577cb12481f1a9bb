//! A capsule: the points within `radius` of a segment along the body y axis.

use glam::DVec3;

use super::{SignedDistance, check_length};
use crate::aabb::Aabb;
use crate::error::GeometryError;

/// The points within `radius` m of the segment from `(0, -half_height, 0)` to `(0, half_height, 0)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    half_height: f64,
    radius: f64,
}

impl Capsule {
    /// A capsule whose core segment has half length `half_height` m (zero gives a sphere) and
    /// whose radius is `radius` m.
    pub fn try_new(half_height: f64, radius: f64) -> Result<Self, GeometryError> {
        if !(half_height.is_finite() && half_height >= 0.0) {
            return Err(GeometryError::invalid(
                "capsule half height",
                half_height,
                "a non-negative finite length in metres",
            ));
        }
        Ok(Self {
            half_height,
            radius: check_length("capsule radius", radius)?,
        })
    }

    /// Half length of the core segment, m.
    pub fn half_height(&self) -> f64 {
        self.half_height
    }

    /// Radius, m.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// The segment's end points (the caps' centres).
    pub fn segment(&self) -> [DVec3; 2] {
        [
            DVec3::new(0.0, -self.half_height, 0.0),
            DVec3::new(0.0, self.half_height, 0.0),
        ]
    }

    /// Volume, m^3: a cylinder plus a ball.
    pub fn volume(&self) -> f64 {
        let r2 = self.radius * self.radius;
        std::f64::consts::PI * r2 * (2.0 * self.half_height + 4.0 / 3.0 * self.radius)
    }
}

impl SignedDistance for Capsule {
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        let nearest = DVec3::new(0.0, point.y.clamp(-self.half_height, self.half_height), 0.0);
        let offset = point - nearest;
        let length = offset.length();
        // On the core segment every direction normal to it is a gradient: +x is the fixed choice
        // (and +y or -y at the segment's ends would also do; +x is continuous with the side).
        let gradient = if length > 0.0 { offset / length } else { DVec3::X };
        (length - self.radius, gradient)
    }

    fn bounds(&self) -> Option<Aabb> {
        let r = self.radius;
        Some(Aabb::from_center(DVec3::ZERO, DVec3::new(r, self.half_height + r, r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::testing::check_gradient;

    #[test]
    fn shapes_capsule_distance_is_exact() {
        let capsule = Capsule::try_new(1.0, 0.5).unwrap();
        assert_eq!(capsule.distance(DVec3::new(2.0, 0.3, 0.0)), 1.5);
        assert_eq!(capsule.distance(DVec3::new(0.0, 4.0, 0.0)), 2.5);
        assert_eq!(capsule.distance(DVec3::new(0.0, -1.0, 0.0)), -0.5);
        assert!((capsule.distance(DVec3::new(3.0, 5.0, 0.0)) - (5.0 - 0.5)).abs() < 1e-15);
        check_gradient(
            &capsule,
            &[
                DVec3::new(0.2, 0.9, -0.1),
                DVec3::new(1.0, -3.0, 2.0),
                DVec3::new(-0.3, 0.0, 0.1),
            ],
        );
        assert!((capsule.volume() - std::f64::consts::PI * 0.25 * (2.0 + 2.0 / 3.0)).abs() < 1e-14);
        assert!(
            Capsule::try_new(-1.0, 1.0)
                .unwrap_err()
                .to_string()
                .contains("capsule half height")
        );
        assert!(
            Capsule::try_new(1.0, 0.0)
                .unwrap_err()
                .to_string()
                .contains("capsule radius")
        );
    }
}
