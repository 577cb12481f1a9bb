//! BiCGSTAB (van der Vorst 1992) for the non-symmetric collocation system, over vectors of 3D
//! blocks.
//!
//! The collocation matrix `D + A` is dense and non-symmetric (the traction kernel is not
//! symmetric in `x` and `y`), so conjugate gradients do not apply; GMRES would need a growing
//! Krylov basis. BiCGSTAB costs two mat-vecs per iteration and constant memory. Being a second-kind
//! equation, `D + A` has its spectrum clustered about `1/2`, which is why the iteration count stays
//! flat under refinement. Dot products are summed sequentially, so iterates are bit-identical
//! whatever the thread count.

use glam::DVec3;

/// When the iteration stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stopping {
    /// Relative residual `|b - A x| / |b|` to reach.
    pub tolerance: f64,
    /// Most iterations (two mat-vecs each).
    pub max_iterations: usize,
}

impl Default for Stopping {
    fn default() -> Self {
        Self {
            tolerance: 1e-8,
            max_iterations: 200,
        }
    }
}

/// What a solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Convergence {
    /// Iterations run.
    pub iterations: usize,
    /// Relative residual `|b - A x| / |b|` of the returned solution (recomputed, not recursed).
    pub relative_residual: f64,
    /// Whether `relative_residual <= tolerance`.
    pub converged: bool,
}

fn dot(a: &[DVec3], b: &[DVec3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(*y)).sum()
}

fn norm(a: &[DVec3]) -> f64 {
    dot(a, a).sqrt()
}

/// Solves `A x = b` from `x = 0`, with `apply(v, out)` writing `A v` into `out`.
pub fn bicgstab(
    apply: &mut impl FnMut(&[DVec3], &mut [DVec3]),
    b: &[DVec3],
    stopping: Stopping,
) -> (Vec<DVec3>, Convergence) {
    let n = b.len();
    let mut x = vec![DVec3::ZERO; n];
    let b_norm = norm(b);
    if b_norm == 0.0 {
        let done = Convergence {
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        };
        return (x, done);
    }
    let mut r = b.to_vec();
    let r_hat = r.clone();
    let (mut rho, mut alpha, mut omega) = (1.0, 1.0, 1.0);
    let mut v = vec![DVec3::ZERO; n];
    let mut p = vec![DVec3::ZERO; n];
    let mut s = vec![DVec3::ZERO; n];
    let mut t = vec![DVec3::ZERO; n];
    let mut iterations = 0;
    while iterations < stopping.max_iterations && norm(&r) > stopping.tolerance * b_norm {
        iterations += 1;
        let rho_next = dot(&r_hat, &r);
        if rho_next == 0.0 || omega == 0.0 {
            break; // breakdown: the residual is orthogonal to the shadow vector
        }
        let beta = (rho_next / rho) * (alpha / omega);
        rho = rho_next;
        for k in 0..n {
            p[k] = r[k] + (p[k] - v[k] * omega) * beta;
        }
        apply(&p, &mut v);
        alpha = rho / dot(&r_hat, &v);
        for k in 0..n {
            s[k] = r[k] - v[k] * alpha;
        }
        if norm(&s) <= stopping.tolerance * b_norm {
            for k in 0..n {
                x[k] += p[k] * alpha;
            }
            break;
        }
        apply(&s, &mut t);
        let tt = dot(&t, &t);
        omega = if tt > 0.0 { dot(&t, &s) / tt } else { 0.0 };
        for k in 0..n {
            x[k] += p[k] * alpha + s[k] * omega;
            r[k] = s[k] - t[k] * omega;
        }
    }
    // The recursed residual drifts from the true one; report the true one.
    apply(&x, &mut t);
    let residual = b
        .iter()
        .zip(&t)
        .map(|(b, ax)| (*b - *ax).length_squared())
        .sum::<f64>()
        .sqrt()
        / b_norm;
    let convergence = Convergence {
        iterations,
        relative_residual: residual,
        converged: residual <= stopping.tolerance,
    };
    (x, convergence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bem_bicgstab_solves_a_nonsymmetric_system() {
        // A 30-block system: diagonal 1/2 plus a small non-symmetric coupling, like D + A.
        let n = 30;
        let apply = |v: &[DVec3], out: &mut [DVec3]| {
            for i in 0..n {
                let mut sum = v[i] * 0.5;
                for (j, vj) in v.iter().enumerate() {
                    let c = ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4;
                    sum += DVec3::new(vj.y, vj.z, vj.x) * (0.02 * c);
                }
                out[i] = sum;
            }
        };
        let b: Vec<DVec3> = (0..n).map(|i| DVec3::new(i as f64, 1.0, -(i as f64).sqrt())).collect();
        let mut op = apply;
        let (x, conv) = bicgstab(&mut op, &b, Stopping::default());
        assert!(conv.converged, "{conv:?}");
        let mut ax = vec![DVec3::ZERO; n];
        op(&x, &mut ax);
        let err = b
            .iter()
            .zip(&ax)
            .map(|(b, a)| (*b - *a).length_squared())
            .sum::<f64>()
            .sqrt();
        assert!(err <= 1e-8 * norm(&b));
    }
}
