//! The state of a rigid body and the quantities derived from it: kinetic energy and momentum.
//!
//! The state is the centre-of-mass position and velocity in world frame, the orientation, and the
//! angular velocity expressed in the body (principal) frame.
//!
//! Velocities were chosen over momenta because static, kinematic and dynamic bodies can then share
//! one layout (an infinite-mass body has a velocity but no finite momentum) and because the
//! constraint solver works in velocities. The angular velocity is kept in the body frame because
//! there the angular momentum is a per-component product, `L_b = I_0 w_b`, exact to one rounding
//! per component. Kept in world frame, every step would go through `L = R I_0 R^T w`, whose
//! rounding error is amplified by the inertia ratio (measured: 3.5e-12 relative angular-momentum
//! drift over 10,000 frame-rate steps for inertia ratios of 1000, against a few 1e-15 in body
//! frame). Use [`RigidState::angular_velocity`] and [`RigidState::set_angular_velocity`] for the
//! world-frame value.

use bytemuck::{Pod, Zeroable};
use glam::{DQuat, DVec3};

use crate::error::{IntegratorError, check_finite3};
use crate::mass::MassProperties;

/// How far the norm of an orientation quaternion may stray from 1 before a state is rejected.
pub const UNIT_QUATERNION_TOLERANCE: f64 = 1e-9;

/// How a body moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// Moved by forces, impulses and contacts; finite mass.
    #[default]
    Dynamic,
    /// Never moves; infinite mass. Its velocities are ignored.
    Static,
    /// Moves with the velocity its owner prescribes and ignores forces; infinite mass.
    Kinematic,
}

/// Pose and velocity of a rigid body, in world frame and SI units.
///
/// The body frame has its origin at the centre of mass and its axes along the principal axes of
/// inertia, so `orientation` maps body-frame vectors to world frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct RigidState {
    /// Position of the centre of mass, m.
    pub position: DVec3,
    /// Rotation from the body (principal) frame to world frame; a unit quaternion.
    pub orientation: DQuat,
    /// Velocity of the centre of mass, world frame, m/s.
    pub linear_velocity: DVec3,
    /// Angular velocity expressed in the body (principal) frame, rad/s: the world-frame angular
    /// velocity is `orientation * body_angular_velocity`.
    pub body_angular_velocity: DVec3,
}

impl Default for RigidState {
    fn default() -> Self {
        Self::at_rest(DVec3::ZERO, DQuat::IDENTITY)
    }
}

impl RigidState {
    /// A body at `position` (m) with `orientation`, not moving.
    pub fn at_rest(position: DVec3, orientation: DQuat) -> Self {
        Self {
            position,
            orientation,
            linear_velocity: DVec3::ZERO,
            body_angular_velocity: DVec3::ZERO,
        }
    }

    /// A body at `position` (m) with `orientation`, moving with `linear_velocity` (m/s) and the
    /// world-frame `angular_velocity` (rad/s).
    pub fn moving(position: DVec3, orientation: DQuat, linear_velocity: DVec3, angular_velocity: DVec3) -> Self {
        Self {
            position,
            orientation,
            linear_velocity,
            body_angular_velocity: orientation.inverse() * angular_velocity,
        }
    }

    /// Angular velocity in world frame, rad/s.
    pub fn angular_velocity(&self) -> DVec3 {
        self.orientation * self.body_angular_velocity
    }

    /// Sets the angular velocity from its world-frame value, rad/s.
    pub fn set_angular_velocity(&mut self, angular_velocity: DVec3) {
        self.body_angular_velocity = self.orientation.inverse() * angular_velocity;
    }

    /// Checks that every component is finite and the orientation is a unit quaternion.
    pub fn validate(&self) -> Result<(), IntegratorError> {
        if self.is_valid() {
            return Ok(());
        }
        check_finite3("position (m)", self.position)?;
        if !self.orientation.is_finite() {
            return Err(IntegratorError::not_finite("orientation quaternion", self.orientation));
        }
        check_finite3("linear velocity (m/s)", self.linear_velocity)?;
        check_finite3("angular velocity (rad/s, body frame)", self.body_angular_velocity)?;
        Err(IntegratorError::NonUnitOrientation {
            norm: self.orientation.length(),
        })
    }

    /// The test behind [`RigidState::validate`], without the error: branch-free, for hot loops.
    #[inline]
    pub fn is_valid(&self) -> bool {
        // x * 0 is 0 for every finite x and NaN otherwise, so the sum is 0 exactly when all
        // thirteen components are finite (a plain sum could overflow for finite values).
        let values: [f64; 13] = bytemuck::cast(*self);
        let poison: f64 = values.iter().map(|v| v * 0.0).sum();
        // |q|^2 - 1 = (|q| - 1)(|q| + 1): compare without a square root.
        let unit = (self.orientation.length_squared() - 1.0).abs() <= 2.0 * UNIT_QUATERNION_TOLERANCE;
        poison == 0.0 && unit
    }

    /// Velocity of the material point at world offset `arm` from the centre of mass, m/s.
    pub fn point_velocity(&self, arm: DVec3) -> DVec3 {
        self.linear_velocity + self.angular_velocity().cross(arm)
    }

    /// Linear momentum `m v`, kg m/s; zero for infinite mass (such bodies are external agents and
    /// carry no momentum in sums over a world).
    pub fn linear_momentum(&self, mass: &MassProperties) -> DVec3 {
        if mass.is_infinite() {
            return DVec3::ZERO;
        }
        self.linear_velocity * mass.mass()
    }

    /// Spin angular momentum about the centre of mass, `L = R I_0 w_b`, world frame, kg m^2/s;
    /// zero for infinite mass.
    pub fn angular_momentum(&self, mass: &MassProperties) -> DVec3 {
        if mass.is_infinite() {
            return DVec3::ZERO;
        }
        self.orientation * (self.body_angular_velocity * mass.principal_inertia())
    }

    /// Total angular momentum about the world point `origin`: orbital `(x - o) x m v` plus spin,
    /// kg m^2/s; zero for infinite mass.
    pub fn angular_momentum_about(&self, mass: &MassProperties, origin: DVec3) -> DVec3 {
        (self.position - origin).cross(self.linear_momentum(mass)) + self.angular_momentum(mass)
    }

    /// Translational kinetic energy `1/2 m |v|^2`, J; zero for infinite mass.
    pub fn linear_kinetic_energy(&self, mass: &MassProperties) -> f64 {
        if mass.is_infinite() {
            return 0.0;
        }
        0.5 * mass.mass() * self.linear_velocity.length_squared()
    }

    /// Rotational kinetic energy `1/2 w . I w`, J; zero for infinite mass.
    pub fn rotational_kinetic_energy(&self, mass: &MassProperties) -> f64 {
        if mass.is_infinite() {
            return 0.0;
        }
        let w = self.body_angular_velocity;
        0.5 * w.dot(w * mass.principal_inertia())
    }

    /// Total kinetic energy, translational plus rotational, J; zero for infinite mass.
    pub fn kinetic_energy(&self, mass: &MassProperties) -> f64 {
        self.linear_kinetic_energy(mass) + self.rotational_kinetic_energy(mass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spinning_box() -> (RigidState, MassProperties) {
        let mass = MassProperties::solid_cuboid(2.0, DVec3::new(0.05, 0.5, 2.0)).unwrap();
        let state = RigidState::moving(
            DVec3::new(1.0, 2.0, 3.0),
            DQuat::from_euler(glam::EulerRot::XYZ, 0.2, 0.7, -0.4),
            DVec3::new(0.5, -1.0, 2.0),
            DVec3::new(3.0, 0.1, 5.0),
        );
        (state, mass)
    }

    #[test]
    fn state_energy_and_momentum_match_world_tensor_formulas() {
        let (state, mass) = spinning_box();
        let inertia = mass.inertia_world(state.orientation);
        let w = state.angular_velocity();
        assert!((w - DVec3::new(3.0, 0.1, 5.0)).length() < 1e-15);
        let expected_l = inertia * w;
        assert!((state.angular_momentum(&mass) - expected_l).length() < 1e-13 * expected_l.length());
        let expected_ke = 0.5 * 2.0 * state.linear_velocity.length_squared() + 0.5 * w.dot(inertia * w);
        assert!((state.kinetic_energy(&mass) - expected_ke).abs() < 1e-13 * expected_ke);
        let about = state.angular_momentum_about(&mass, DVec3::ZERO);
        let orbital = state.position.cross(state.linear_velocity * 2.0);
        assert!((about - orbital - expected_l).length() < 1e-13 * about.length());
    }

    #[test]
    fn state_infinite_mass_has_no_energy_or_momentum_and_no_nan() {
        let (state, _) = spinning_box();
        let mass = MassProperties::infinite();
        assert_eq!(state.kinetic_energy(&mass), 0.0);
        assert_eq!(state.linear_momentum(&mass), DVec3::ZERO);
        assert_eq!(state.angular_momentum_about(&mass, DVec3::ONE), DVec3::ZERO);
    }

    #[test]
    fn state_validate_names_the_bad_value() {
        let (mut state, _) = spinning_box();
        state.validate().unwrap();
        state.body_angular_velocity.y = f64::NAN;
        let err = state.validate().unwrap_err().to_string();
        assert!(err.contains("angular velocity") && err.contains("NaN"), "{err}");
        let (mut state, _) = spinning_box();
        state.orientation *= 1.5;
        assert!(matches!(
            state.validate(),
            Err(IntegratorError::NonUnitOrientation { .. })
        ));
        let (mut state, _) = spinning_box();
        state.position.x = f64::NEG_INFINITY;
        assert!(state.validate().unwrap_err().to_string().contains("position"));
    }

    #[test]
    fn state_snapshots_as_bytes() {
        let (state, mass) = spinning_box();
        let bytes = bytemuck::bytes_of(&state).to_vec();
        assert_eq!(bytemuck::pod_read_unaligned::<RigidState>(&bytes), state);
        let bytes = bytemuck::bytes_of(&mass).to_vec();
        assert_eq!(bytemuck::pod_read_unaligned::<MassProperties>(&bytes), mass);
    }
}
