//! A box centred at the body origin, aligned with the body axes.

use glam::DVec3;

use super::{SignedDistance, check_length};
use crate::aabb::Aabb;
use crate::error::GeometryError;

/// A box with `half_extents` m along the body axes, centred at the body origin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cuboid {
    half_extents: DVec3,
}

impl Cuboid {
    /// A box with `half_extents` (m); fails unless every half extent is positive and finite.
    pub fn try_new(half_extents: DVec3) -> Result<Self, GeometryError> {
        for value in half_extents.to_array() {
            check_length("cuboid half extent", value)?;
        }
        Ok(Self { half_extents })
    }

    /// Half extents, m.
    pub fn half_extents(&self) -> DVec3 {
        self.half_extents
    }

    /// The eight corners; corner `i` has `+x` when bit 0 of `i` is set, `+y` for bit 1, `+z` for
    /// bit 2 (the numbering the narrow phase uses as contact feature ids).
    pub fn corners(&self) -> [DVec3; 8] {
        let h = self.half_extents;
        core::array::from_fn(|i| {
            let s = |bit: usize| if i & bit != 0 { 1.0 } else { -1.0 };
            DVec3::new(s(1) * h.x, s(2) * h.y, s(4) * h.z)
        })
    }

    /// Volume, m^3.
    pub fn volume(&self) -> f64 {
        8.0 * self.half_extents.element_product()
    }
}

impl SignedDistance for Cuboid {
    fn distance_and_gradient(&self, point: DVec3) -> (f64, DVec3) {
        // q > 0 component-wise measures how far outside each slab the point is.
        let q = point.abs() - self.half_extents;
        let outside = q.max(DVec3::ZERO);
        let outside_distance = outside.length();
        let sign = DVec3::new(sign(point.x), sign(point.y), sign(point.z));
        if outside_distance > 0.0 {
            return (outside_distance, outside / outside_distance * sign);
        }
        // Inside (or on the surface): the nearest face is the one with the largest q; ties go to
        // the lowest axis so the gradient is deterministic.
        let axis = if q.x >= q.y && q.x >= q.z {
            0
        } else if q.y >= q.z {
            1
        } else {
            2
        };
        let mut gradient = DVec3::ZERO;
        gradient[axis] = sign[axis];
        (q[axis], gradient)
    }

    fn bounds(&self) -> Option<Aabb> {
        Some(Aabb::from_center(DVec3::ZERO, self.half_extents))
    }
}

/// +1 for non-negative values (so points on a mid-plane pick the positive face), -1 otherwise.
fn sign(x: f64) -> f64 {
    if x >= 0.0 { 1.0 } else { -1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::testing::check_gradient;

    #[test]
    fn shapes_cuboid_distance_is_exact_inside_and_outside() {
        let cuboid = Cuboid::try_new(DVec3::new(1.0, 2.0, 3.0)).unwrap();
        // Face, edge and corner regions outside.
        assert_eq!(cuboid.distance(DVec3::new(3.0, 0.0, 0.0)), 2.0);
        assert_eq!(cuboid.distance(DVec3::new(4.0, 6.0, 0.0)), 5.0);
        assert!((cuboid.distance(DVec3::new(2.0, 3.0, 4.0)) - 3f64.sqrt()).abs() < 1e-15);
        // Inside: distance to the nearest face, negative.
        assert_eq!(cuboid.distance(DVec3::new(0.5, 0.0, 0.0)), -0.5);
        assert_eq!(cuboid.distance(DVec3::new(0.0, 0.0, -2.5)), -0.5);
        assert_eq!(cuboid.distance(DVec3::new(1.0, 1.0, 1.0)), 0.0);
        check_gradient(
            &cuboid,
            &[
                DVec3::new(0.5, 0.1, 0.2),
                DVec3::new(-0.1, 1.7, -0.2),
                DVec3::new(2.0, 3.0, -4.0),
                DVec3::new(-1.5, 0.3, 0.4),
                DVec3::new(0.2, -0.1, -2.9),
            ],
        );
        assert_eq!(cuboid.corners()[5], DVec3::new(1.0, -2.0, 3.0));
        assert!(
            Cuboid::try_new(DVec3::new(1.0, 0.0, 1.0))
                .unwrap_err()
                .to_string()
                .contains("cuboid half extent")
        );
    }
}
