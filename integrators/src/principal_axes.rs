//! Principal axes of a symmetric 3x3 tensor, by cyclic Jacobi rotations.
//!
//! A body frame in shatter has its axes along the principal axes of inertia (Su 2009 section 4.2),
//! so every inertia tensor that geometry produces passes through here once. Jacobi rotations are
//! chosen over the closed-form cubic because they stay accurate for repeated and nearly repeated
//! moments (spheres, cubes, symmetric tops), where the cubic's trigonometric solution loses half
//! its digits, and because the eigenvectors come out orthonormal by construction.

use glam::{DMat3, DQuat, DVec3};

use crate::error::{IntegratorError, check_finite3};

/// Largest number of Jacobi sweeps; a 3x3 symmetric matrix converges quadratically in 4 to 6.
const MAX_SWEEPS: usize = 32;

/// Eigen-decomposition of a symmetric tensor: `tensor = R diag(values) R^T`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrincipalAxes {
    /// Eigenvalues in ascending order (for inertia: principal moments, kg m^2).
    pub values: DVec3,
    /// Rotation whose columns are the unit eigenvectors, right-handed (determinant +1).
    pub rotation: DQuat,
}

/// Diagonalizes the symmetric part of `tensor`.
///
/// Only the symmetric part `(T + T^T) / 2` is used. Eigenvalues come out sorted ascending and the
/// eigenvector frame is right-handed. Deterministic for a given input. Fails, naming the column,
/// if any entry is not finite.
pub fn principal_axes(tensor: DMat3) -> Result<PrincipalAxes, IntegratorError> {
    for column in [tensor.x_axis, tensor.y_axis, tensor.z_axis] {
        check_finite3("tensor column", column)?;
    }
    let mut a = [[0.0f64; 3]; 3];
    for (row, a_row) in a.iter_mut().enumerate() {
        for (col, value) in a_row.iter_mut().enumerate() {
            *value = 0.5 * (tensor.col(col)[row] + tensor.col(row)[col]);
        }
    }
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    for _ in 0..MAX_SWEEPS {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off <= f64::EPSILON * f64::EPSILON * diag * 1e-4 || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            jacobi_rotate(&mut a, &mut v, p, q);
        }
    }

    // Sort eigenpairs ascending; ties keep their index order so the result is deterministic.
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let column = |k: usize| DVec3::new(v[0][k], v[1][k], v[2][k]);
    let (c0, c1) = (column(order[0]), column(order[1]));
    // The third axis is the cross product, which makes the frame right-handed and exactly
    // orthogonal to the first two.
    let c2 = c0.cross(c1).normalize();
    let c1 = c2.cross(c0).normalize();
    let c0 = c0.normalize();
    Ok(PrincipalAxes {
        values: DVec3::new(a[order[0]][order[0]], a[order[1]][order[1]], a[order[2]][order[2]]),
        rotation: DQuat::from_mat3(&DMat3::from_cols(c0, c1, c2)).normalize(),
    })
}

/// One Jacobi rotation zeroing `a[p][q]`, accumulated into the eigenvector matrix `v`.
fn jacobi_rotate(a: &mut [[f64; 3]; 3], v: &mut [[f64; 3]; 3], p: usize, q: usize) {
    let apq = a[p][q];
    if apq == 0.0 {
        return;
    }
    // Numerical Recipes' stable choice of the smaller rotation angle: t = tan(theta).
    let tau = (a[q][q] - a[p][p]) / (2.0 * apq);
    let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
    let c = 1.0 / (1.0 + t * t).sqrt();
    let s = t * c;
    for row in a.iter_mut() {
        let (akp, akq) = (row[p], row[q]);
        row[p] = c * akp - s * akq;
        row[q] = s * akp + c * akq;
    }
    let (row_p, row_q) = (a[p], a[q]);
    for (k, (apk, aqk)) in row_p.into_iter().zip(row_q).enumerate() {
        a[p][k] = c * apk - s * aqk;
        a[q][k] = s * apk + c * aqk;
    }
    for row in v.iter_mut() {
        let (vp, vq) = (row[p], row[q]);
        row[p] = c * vp - s * vq;
        row[q] = s * vp + c * vq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reconstruct(axes: &PrincipalAxes) -> DMat3 {
        let r = DMat3::from_quat(axes.rotation);
        r * DMat3::from_diagonal(axes.values) * r.transpose()
    }

    #[test]
    fn principal_axes_of_a_diagonal_tensor_are_sorted_moments() {
        let axes = principal_axes(DMat3::from_diagonal(DVec3::new(3.0, 1.0, 2.0))).unwrap();
        assert_eq!(axes.values, DVec3::new(1.0, 2.0, 3.0));
        let r = DMat3::from_quat(axes.rotation);
        assert!((r.determinant() - 1.0).abs() < 1e-15);
        // The smallest moment belongs to the world y axis.
        assert!((r.x_axis.dot(DVec3::Y).abs() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn principal_axes_refuse_non_finite_tensors() {
        let mut tensor = DMat3::IDENTITY;
        tensor.y_axis.z = f64::NAN;
        let err = principal_axes(tensor).unwrap_err();
        assert!(err.to_string().contains("tensor column"), "{err}");
    }

    #[test]
    fn principal_axes_of_a_sphere_tensor_are_exact() {
        let axes = principal_axes(DMat3::from_diagonal(DVec3::splat(0.4))).unwrap();
        assert_eq!(axes.values, DVec3::splat(0.4));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn principal_axes_reconstruct_random_tensors(
            moments in prop::array::uniform3(1e-3f64..1e3),
            axis in prop::array::uniform3(-1.0f64..1.0),
            angle in -3.0f64..3.0,
            repeat in 0usize..3,
        ) {
            let mut m = DVec3::from(moments);
            // Exercise repeated moments too (symmetric tops and spheres).
            if repeat == 1 { m.y = m.x; }
            if repeat == 2 { m.y = m.x; m.z = m.x; }
            let axis = DVec3::from(axis);
            prop_assume!(axis.length() > 1e-3);
            let r = DMat3::from_quat(DQuat::from_axis_angle(axis.normalize(), angle));
            let tensor = r * DMat3::from_diagonal(m) * r.transpose();
            let axes = principal_axes(tensor).unwrap();
            let back = reconstruct(&axes);
            let scale = m.max_element();
            for c in 0..3 {
                prop_assert!((back.col(c) - tensor.col(c)).abs().max_element() < 1e-13 * scale);
            }
            let mut sorted = moments;
            if repeat == 1 { sorted[1] = sorted[0]; }
            if repeat == 2 { sorted = [sorted[0]; 3]; }
            sorted.sort_by(f64::total_cmp);
            prop_assert!((axes.values - DVec3::from(sorted)).abs().max_element() < 1e-13 * scale);
            prop_assert!(axes.values.x <= axes.values.y && axes.values.y <= axes.values.z);
            prop_assert!((DMat3::from_quat(axes.rotation).determinant() - 1.0).abs() < 1e-14);
        }
    }
}
