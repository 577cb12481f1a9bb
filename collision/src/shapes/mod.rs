//! Analytic shapes with exact signed distance and gradient, in the body frame.
//!
//! Each shape answers `distance_and_gradient(p)`: the exact signed distance of `p` to its
//! surface (negative inside, m) and the gradient of that distance (a unit vector wherever the
//! distance is differentiable; at the few points where it is not, such as a sphere's centre, a
//! fixed unit vector). Exact distances matter twice: the narrow phase reads contact depths and
//! normals from them, and level sets sampled from them are exact at the samples.

mod capsule;
mod cuboid;
mod half_space;
mod sphere;

pub use capsule::Capsule;
pub use cuboid::Cuboid;
pub use half_space::HalfSpace;
pub use sphere::Sphere;

use glam::DVec3;

use crate::aabb::Aabb;
use crate::error::GeometryError;

/// Anything with an exact signed distance.
pub trait SignedDistance {
    /// Signed distance to the surface (negative inside, m) and its gradient.
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3);

    /// Signed distance to the surface, m.
    fn distance(&self, point: DVec3) -> f64 {
        self.distance_and_gradient(point).0
    }

    /// The smallest box holding the shape; `None` for unbounded shapes.
    fn bounds(&self) -> Option<Aabb>;
}

/// One of the analytic shapes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// A ball.
    Sphere(Sphere),
    /// A box.
    Cuboid(Cuboid),
    /// A cylinder with hemispherical caps.
    Capsule(Capsule),
    /// Everything below a plane.
    HalfSpace(HalfSpace),
}

impl Shape {
    /// Enclosed volume, m^3; `None` for a half-space, which encloses no finite volume.
    pub fn volume(&self) -> Option<f64> {
        match self {
            Self::Sphere(s) => Some(s.volume()),
            Self::Cuboid(c) => Some(c.volume()),
            Self::Capsule(c) => Some(c.volume()),
            Self::HalfSpace(_) => None,
        }
    }
}

impl SignedDistance for Shape {
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        match self {
            Shape::Sphere(s) => s.distance_and_gradient(point),
            Shape::Cuboid(s) => s.distance_and_gradient(point),
            Shape::Capsule(s) => s.distance_and_gradient(point),
            Shape::HalfSpace(s) => s.distance_and_gradient(point),
        }
    }

    fn bounds(&self) -> Option<Aabb> {
        match self {
            Shape::Sphere(s) => s.bounds(),
            Shape::Cuboid(s) => s.bounds(),
            Shape::Capsule(s) => s.bounds(),
            Shape::HalfSpace(s) => s.bounds(),
        }
    }
}

/// Checks that a length parameter is positive and finite.
pub(crate) fn check_length(name: &'static str, value: f64) -> Result<f64, GeometryError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(GeometryError::invalid(
            name,
            value,
            "a positive finite length in metres",
        ))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Checks, at `points`, that the gradient matches central differences of the distance and is
    /// unit length wherever the distance is smooth there.
    pub fn check_gradient(shape: &impl SignedDistance, points: &[DVec3]) {
        let h = 1e-6;
        for &p in points {
            let (d, g) = shape.distance_and_gradient(p);
            assert!((g.length() - 1.0).abs() < 1e-12, "gradient {g} at {p} is not unit");
            let numeric = DVec3::new(
                shape.distance(p + DVec3::X * h) - shape.distance(p - DVec3::X * h),
                shape.distance(p + DVec3::Y * h) - shape.distance(p - DVec3::Y * h),
                shape.distance(p + DVec3::Z * h) - shape.distance(p - DVec3::Z * h),
            ) / (2.0 * h);
            assert!(
                (numeric - g).length() < 1e-6,
                "gradient {g} vs numeric {numeric} at {p} (d = {d})"
            );
        }
    }
}
