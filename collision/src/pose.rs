//! Where a body is: the rigid transform from its body frame to world frame.

use glam::{DMat3, DQuat, DVec3};

/// A rigid transform: `world = orientation * body + position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position of the body origin (its centre of mass), world frame, m.
    pub position: DVec3,
    /// Rotation from body to world frame; a unit quaternion.
    pub orientation: DQuat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// The body frame coincides with the world frame.
    pub const IDENTITY: Self = Self {
        position: DVec3::ZERO,
        orientation: DQuat::IDENTITY,
    };

    /// A pose from its parts.
    pub const fn new(position: DVec3, orientation: DQuat) -> Self {
        Self { position, orientation }
    }

    /// A pose with no rotation.
    pub const fn from_position(position: DVec3) -> Self {
        Self::new(position, DQuat::IDENTITY)
    }

    /// A body point in world frame.
    pub fn transform_point(&self, point: DVec3) -> DVec3 {
        self.orientation * point + self.position
    }

    /// A world point in body frame.
    pub fn inverse_transform_point(&self, point: DVec3) -> DVec3 {
        self.orientation.inverse() * (point - self.position)
    }

    /// The pose in the world of `inner`, a pose given in this pose's frame.
    pub fn compose(&self, inner: &Self) -> Self {
        Self::new(
            self.transform_point(inner.position),
            (self.orientation * inner.orientation).normalize(),
        )
    }

    /// Where `pose` (in the world) sits in this pose's frame: the inverse of [`Pose::compose`].
    pub fn relative_pose(&self, pose: &Self) -> Self {
        Self::new(
            self.inverse_transform_point(pose.position),
            (self.orientation.inverse() * pose.orientation).normalize(),
        )
    }

    /// The transform taking `other`'s body frame to this body's frame, as a matrix and an offset:
    /// `this_body = m * other_body + t`. Applying a matrix is cheaper than a quaternion when many
    /// points go through the same transform.
    pub fn relative_to(&self, other: &Self) -> (DMat3, DVec3) {
        let inverse = self.orientation.inverse();
        (
            DMat3::from_quat(inverse * other.orientation),
            inverse * (other.position - self.position),
        )
    }

    /// Whether every component is finite and the orientation is unit to within 1e-9.
    pub fn is_valid(&self) -> bool {
        self.position.is_finite()
            && self.orientation.is_finite()
            && (self.orientation.length_squared() - 1.0).abs() < 2e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_round_trips_and_composes() {
        let a = Pose::new(DVec3::new(1.0, 2.0, 3.0), DQuat::from_rotation_y(0.7));
        let b = Pose::new(
            DVec3::new(-2.0, 0.5, 1.0),
            DQuat::from_euler(glam::EulerRot::XYZ, 0.1, 0.2, 0.3),
        );
        let p = DVec3::new(0.3, -0.4, 0.5);
        assert!((a.inverse_transform_point(a.transform_point(p)) - p).length() < 1e-15);
        let (m, t) = a.relative_to(&b);
        let direct = a.inverse_transform_point(b.transform_point(p));
        assert!((m * p + t - direct).length() < 1e-14);
        // `compose` places a pose given in `a`'s frame; `relative_pose` undoes it.
        let placed = a.compose(&b);
        assert!((placed.transform_point(p) - a.transform_point(b.transform_point(p))).length() < 1e-14);
        let back = a.relative_pose(&placed);
        assert!((back.position - b.position).length() < 1e-14 && back.orientation.angle_between(b.orientation) < 1e-7);
        assert!(a.is_valid() && !Pose::new(DVec3::NAN, DQuat::IDENTITY).is_valid());
    }
}
