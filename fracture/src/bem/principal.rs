//! Principal stresses: the eigen-decomposition of a symmetric stress tensor.

use glam::{DMat3, DVec3};
use shatter_integrators::principal_axes;

use crate::error::FractureError;

/// Principal stresses (Pa) in descending order, with their unit directions: `values[0]` is the
/// largest (most tensile) one, the Rankine criterion's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrincipalStress {
    /// Principal stresses, largest first, Pa.
    pub values: [f64; 3],
    /// Unit principal directions, one per value (right-handed frame).
    pub directions: [DVec3; 3],
}

/// The principal stresses of `stress` (its symmetric part), by Jacobi rotations. Fails on a
/// non-finite entry.
pub fn principal_stress(stress: DMat3) -> Result<PrincipalStress, FractureError> {
    let axes = principal_axes(stress).map_err(|e| FractureError::input(format!("stress tensor: {e}")))?;
    let frame = DMat3::from_quat(axes.rotation);
    Ok(PrincipalStress {
        values: [axes.values.z, axes.values.y, axes.values.x],
        directions: [frame.z_axis, frame.y_axis, -frame.x_axis],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bem_principal_stress_of_a_rotated_diagonal_tensor() {
        let rotation = DMat3::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 0.7);
        let stress = rotation * DMat3::from_diagonal(DVec3::new(-3.0e6, 5.0e6, 1.0e6)) * rotation.transpose();
        let p = principal_stress(stress).unwrap();
        assert!(
            (p.values[0] - 5.0e6).abs() < 1e-3
                && (p.values[1] - 1.0e6).abs() < 1e-3
                && (p.values[2] + 3.0e6).abs() < 1e-3
        );
        assert!(p.directions[0].cross(rotation.y_axis).length() < 1e-9);
        for k in 0..3 {
            let sv = stress * p.directions[k];
            assert!((sv - p.directions[k] * p.values[k]).length() < 1e-6);
        }
        assert!(principal_stress(DMat3::from_diagonal(DVec3::new(f64::NAN, 0.0, 0.0))).is_err());
    }
}
