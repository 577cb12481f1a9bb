//! Mass properties of a rigid body in its principal frame.
//!
//! A body frame has its origin at the centre of mass and its axes along the principal axes of
//! inertia (Su 2009 section 4.2), so the inertia tensor in the body frame is the diagonal
//! `diag(principal_inertia)` and the world tensor is `R diag(I) R^T` for orientation `R`.
//!
//! Static and kinematic bodies have infinite mass: their inverse mass and inverse inertia are zero
//! and every sum over bodies (energy, momentum) skips them, so no `0 * inf` NaN can arise.

use bytemuck::{Pod, Zeroable};
use glam::{DMat3, DQuat, DVec3};

use crate::error::{IntegratorError, check_finite};
use crate::principal_axes::principal_axes;

/// Relative slack allowed in the triangle inequality `I_a + I_b >= I_c` of principal moments, so
/// that a flat plate (where it holds with equality) survives rounding.
const TRIANGLE_SLACK: f64 = 1e-9;

/// Mass, principal moments of inertia and their inverses.
///
/// Plain data (`Pod`), so a world's mass table can be snapshotted as bytes. Build it with
/// [`MassProperties::try_new`], a shape constructor, [`MassProperties::from_inertia_tensor`], or
/// [`MassProperties::infinite`] for static and kinematic bodies.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct MassProperties {
    mass: f64,
    inverse_mass: f64,
    principal_inertia: DVec3,
    inverse_principal_inertia: DVec3,
}

impl MassProperties {
    /// Mass properties of a dynamic body: `mass` in kg and the principal moments of inertia about
    /// the centre of mass in kg m^2, along the body axes x, y, z.
    ///
    /// Fails unless the mass and every moment are positive and finite and the moments satisfy the
    /// triangle inequality `I_a + I_b >= I_c` that every real mass distribution obeys.
    pub fn try_new(mass: f64, principal_inertia: DVec3) -> Result<Self, IntegratorError> {
        if !(mass.is_finite() && mass > 0.0) {
            return Err(IntegratorError::InvalidMass { mass });
        }
        let moments = principal_inertia.to_array();
        let invalid = |reason| IntegratorError::InvalidInertia {
            principal_inertia: moments,
            reason,
        };
        if !principal_inertia.is_finite() {
            return Err(invalid("every moment must be finite"));
        }
        if principal_inertia.min_element() <= 0.0 {
            return Err(invalid(
                "every moment must be positive (use a static or kinematic body for infinite inertia)",
            ));
        }
        let largest = principal_inertia.max_element();
        if principal_inertia.element_sum() - largest < largest * (1.0 - TRIANGLE_SLACK) {
            return Err(invalid(
                "the two smaller moments must sum to at least the largest (triangle inequality)",
            ));
        }
        Ok(Self {
            mass,
            inverse_mass: 1.0 / mass,
            principal_inertia,
            inverse_principal_inertia: principal_inertia.recip(),
        })
    }

    /// Infinite mass and inertia: the mass properties of static and kinematic bodies.
    ///
    /// Inverse mass and inverse inertia are exactly zero, so impulses do not move the body.
    pub const fn infinite() -> Self {
        Self {
            mass: f64::INFINITY,
            inverse_mass: 0.0,
            principal_inertia: DVec3::INFINITY,
            inverse_principal_inertia: DVec3::ZERO,
        }
    }

    /// A solid cuboid of `mass` kg with `half_extents` in m along the body axes.
    pub fn solid_cuboid(mass: f64, half_extents: DVec3) -> Result<Self, IntegratorError> {
        check_extent("cuboid half extent", half_extents)?;
        let sq = half_extents * half_extents;
        let inertia = DVec3::new(sq.y + sq.z, sq.x + sq.z, sq.x + sq.y) * (mass / 3.0);
        Self::try_new(mass, inertia)
    }

    /// A solid sphere of `mass` kg and `radius` m.
    pub fn solid_sphere(mass: f64, radius: f64) -> Result<Self, IntegratorError> {
        check_extent("sphere radius", DVec3::splat(radius))?;
        Self::try_new(mass, DVec3::splat(0.4 * mass * radius * radius))
    }

    /// Mass properties from a mass and an inertia tensor about the centre of mass given in some
    /// reference frame; also returns the rotation from the principal (body) frame to that frame.
    ///
    /// The principal moments come out in ascending order along the body x, y, z axes.
    pub fn from_inertia_tensor(mass: f64, tensor: DMat3) -> Result<(Self, DQuat), IntegratorError> {
        let axes = principal_axes(tensor)?;
        Ok((Self::try_new(mass, axes.values)?, axes.rotation))
    }

    /// Mass in kg; `f64::INFINITY` for static and kinematic bodies.
    pub fn mass(&self) -> f64 {
        self.mass
    }

    /// Inverse mass in 1/kg; zero for infinite mass.
    pub fn inverse_mass(&self) -> f64 {
        self.inverse_mass
    }

    /// Principal moments of inertia about the centre of mass along the body axes, kg m^2;
    /// `f64::INFINITY` for infinite mass.
    pub fn principal_inertia(&self) -> DVec3 {
        self.principal_inertia
    }

    /// Inverse principal moments, 1/(kg m^2); zero for infinite mass.
    pub fn inverse_principal_inertia(&self) -> DVec3 {
        self.inverse_principal_inertia
    }

    /// Whether the body has infinite mass (static or kinematic).
    pub fn is_infinite(&self) -> bool {
        self.inverse_mass == 0.0
    }

    /// Inverse inertia tensor in world frame, `R diag(1/I) R^T`, in 1/(kg m^2); zero for infinite mass.
    pub fn inverse_inertia_world(&self, orientation: DQuat) -> DMat3 {
        rotate_diagonal(orientation, self.inverse_principal_inertia)
    }

    /// Inertia tensor in world frame, `R diag(I) R^T`, in kg m^2.
    ///
    /// For infinite mass this is not meaningful and is returned as the zero matrix, so that no
    /// infinity leaks into arithmetic; check [`MassProperties::is_infinite`] first.
    pub fn inertia_world(&self, orientation: DQuat) -> DMat3 {
        if self.is_infinite() {
            return DMat3::ZERO;
        }
        rotate_diagonal(orientation, self.principal_inertia)
    }
}

/// `R diag(d) R^T` for the rotation `R` of `orientation`.
fn rotate_diagonal(orientation: DQuat, diagonal: DVec3) -> DMat3 {
    let r = DMat3::from_quat(orientation);
    let scaled = DMat3::from_cols(r.x_axis * diagonal.x, r.y_axis * diagonal.y, r.z_axis * diagonal.z);
    scaled * r.transpose()
}

fn check_extent(quantity: &'static str, extents: DVec3) -> Result<(), IntegratorError> {
    for value in extents.to_array() {
        check_finite(quantity, value)?;
        if value <= 0.0 {
            return Err(IntegratorError::InvalidExtent { quantity, value });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mass_cuboid_matches_closed_form() {
        // A 2 x 4 x 6 m box of 12 kg: I_x = m (b^2 + c^2) / 12 with full edge lengths.
        let props = MassProperties::solid_cuboid(12.0, DVec3::new(1.0, 2.0, 3.0)).unwrap();
        assert_eq!(
            props.principal_inertia(),
            DVec3::new(16.0 + 36.0, 4.0 + 36.0, 4.0 + 16.0)
        );
        assert_eq!(props.inverse_mass(), 1.0 / 12.0);
    }

    #[test]
    fn mass_sphere_matches_closed_form() {
        let props = MassProperties::solid_sphere(5.0, 2.0).unwrap();
        assert_eq!(props.principal_inertia(), DVec3::splat(0.4 * 5.0 * 4.0));
    }

    #[test]
    fn mass_rejects_bad_values_with_their_names() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = MassProperties::try_new(bad, DVec3::ONE).unwrap_err();
            assert!(matches!(err, IntegratorError::InvalidMass { .. }));
            assert!(err.to_string().contains(&format!("mass {bad} kg")), "{err}");
        }
        let err = MassProperties::try_new(1.0, DVec3::new(1.0, 1.0, 3.0)).unwrap_err();
        assert!(err.to_string().contains("triangle inequality"), "{err}");
        let err = MassProperties::try_new(1.0, DVec3::new(1.0, f64::NAN, 1.0)).unwrap_err();
        assert!(err.to_string().contains("NaN"), "{err}");
        let err = MassProperties::solid_cuboid(1.0, DVec3::new(1.0, 0.0, 1.0)).unwrap_err();
        assert!(err.to_string().contains("cuboid half extent 0"), "{err}");
        // A flat plate meets the triangle inequality with equality and must be accepted.
        MassProperties::try_new(1.0, DVec3::new(1.0, 2.0, 3.0)).unwrap();
    }

    #[test]
    fn mass_infinite_has_zero_inverses_and_no_nan() {
        let props = MassProperties::infinite();
        assert!(props.is_infinite());
        let q = DQuat::from_rotation_y(0.3);
        assert_eq!(props.inverse_inertia_world(q), DMat3::ZERO);
        assert_eq!(props.inertia_world(q), DMat3::ZERO);
    }

    #[test]
    fn mass_from_rotated_tensor_recovers_moments_and_frame() {
        let body = MassProperties::solid_cuboid(3.0, DVec3::new(0.1, 0.5, 2.0)).unwrap();
        let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0);
        let tensor = body.inertia_world(q);
        let (props, frame) = MassProperties::from_inertia_tensor(3.0, tensor).unwrap();
        let expected = body.principal_inertia();
        let mut sorted = expected.to_array();
        sorted.sort_by(f64::total_cmp);
        assert!((props.principal_inertia() - DVec3::from(sorted)).abs().max_element() < 1e-13);
        let back = props.inertia_world(frame);
        for c in 0..3 {
            assert!((back.col(c) - tensor.col(c)).abs().max_element() < 1e-13);
        }
    }

    #[test]
    fn mass_world_tensors_are_inverse() {
        let props = MassProperties::try_new(2.0, DVec3::new(0.01, 5.0, 5.005)).unwrap();
        let q = DQuat::from_euler(glam::EulerRot::ZYX, 1.0, 0.4, -0.7);
        let product = props.inertia_world(q) * props.inverse_inertia_world(q);
        assert!(
            (product - DMat3::IDENTITY)
                .abs()
                .to_cols_array()
                .iter()
                .all(|e| *e < 1e-12)
        );
    }
}
