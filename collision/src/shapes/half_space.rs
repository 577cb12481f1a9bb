//! A half-space: everything on one side of a plane, the usual infinite ground.

use glam::DVec3;

use super::SignedDistance;
use crate::aabb::Aabb;
use crate::error::GeometryError;

/// The points `x` with `normal . x <= offset`: the outward unit `normal` points out of the solid
/// and the plane sits `offset` m from the body origin along it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace {
    normal: DVec3,
    offset: f64,
}

impl HalfSpace {
    /// The half-space below the plane with outward `normal` (normalized here; must be non-zero
    /// and finite) at `offset` m along it.
    pub fn try_new(normal: DVec3, offset: f64) -> Result<Self, GeometryError> {
        let length = normal.length();
        if !(length.is_finite() && length > 0.0) {
            return Err(GeometryError::invalid(
                "half-space normal",
                normal,
                "a non-zero finite vector",
            ));
        }
        if !offset.is_finite() {
            return Err(GeometryError::invalid(
                "half-space offset",
                offset,
                "a finite distance in metres",
            ));
        }
        Ok(Self {
            normal: normal / length,
            offset,
        })
    }

    /// The ground: everything below `y = height`.
    pub fn ground(height: f64) -> Result<Self, GeometryError> {
        Self::try_new(DVec3::Y, height)
    }

    /// Outward unit normal.
    pub fn normal(&self) -> DVec3 {
        self.normal
    }

    /// Distance of the plane from the body origin along the normal, m.
    pub fn offset(&self) -> f64 {
        self.offset
    }
}

impl SignedDistance for HalfSpace {
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        (self.normal.dot(point) - self.offset, self.normal)
    }

    fn bounds(&self) -> Option<Aabb> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_half_space_distance_is_exact() {
        let ground = HalfSpace::try_new(DVec3::new(0.0, 2.0, 0.0), 1.0).unwrap();
        assert_eq!(ground.normal(), DVec3::Y);
        assert_eq!(ground.distance(DVec3::new(5.0, 3.0, -2.0)), 2.0);
        assert_eq!(ground.distance(DVec3::new(0.0, -1.0, 0.0)), -2.0);
        assert_eq!(ground.distance_and_gradient(DVec3::ZERO).1, DVec3::Y);
        assert!(ground.bounds().is_none());
        assert!(
            HalfSpace::try_new(DVec3::ZERO, 0.0)
                .unwrap_err()
                .to_string()
                .contains("half-space normal")
        );
        assert!(HalfSpace::try_new(DVec3::Y, f64::NAN).is_err());
    }
}
