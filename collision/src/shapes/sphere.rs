//! A ball centred at the body origin.

use glam::DVec3;

use super::{SignedDistance, check_length};
use crate::aabb::Aabb;
use crate::error::GeometryError;

/// A ball of `radius` m centred at the body origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    radius: f64,
}

impl Sphere {
    /// A ball of `radius` m; fails unless the radius is positive and finite.
    pub fn try_new(radius: f64) -> Result<Self, GeometryError> {
        Ok(Self {
            radius: check_length("sphere radius", radius)?,
        })
    }

    /// Radius, m.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Volume, m^3.
    pub fn volume(&self) -> f64 {
        4.0 / 3.0 * std::f64::consts::PI * self.radius.powi(3)
    }
}

impl SignedDistance for Sphere {
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        let length = point.length();
        // At the centre every direction is a gradient; +y is the fixed choice.
        let gradient = if length > 0.0 { point / length } else { DVec3::Y };
        (length - self.radius, gradient)
    }

    fn bounds(&self) -> Option<Aabb> {
        Some(Aabb::from_center(DVec3::ZERO, DVec3::splat(self.radius)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::testing::check_gradient;

    #[test]
    fn shapes_sphere_distance_is_exact() {
        let sphere = Sphere::try_new(2.0).unwrap();
        assert_eq!(sphere.distance(DVec3::new(0.0, 3.0, 4.0)), 3.0);
        assert_eq!(sphere.distance(DVec3::ZERO), -2.0);
        assert_eq!(sphere.distance_and_gradient(DVec3::ZERO).1, DVec3::Y);
        check_gradient(&sphere, &[DVec3::new(0.3, -1.0, 0.2), DVec3::new(5.0, 1.0, -2.0)]);
        assert!(
            Sphere::try_new(-1.0)
                .unwrap_err()
                .to_string()
                .contains("sphere radius = -1.0")
        );
        assert!(Sphere::try_new(f64::NAN).is_err());
    }
}
