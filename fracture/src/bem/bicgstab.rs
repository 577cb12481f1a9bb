//! BiCGSTAB (van der Vorst 1992) for the non-symmetric collocation system, over vectors of 3D
//! blocks.
//!
//! The collocation matrix `D + A` is dense and non-symmetric (the traction kernel is not
//! symmetric in `x` and `y`), so conjugate gradients do not apply; GMRES would need a growing
//! Krylov basis. BiCGSTAB costs two mat-vecs per iteration and constant memory. Being a second-kind
//! equation, `D + A` has its spectrum clustered about `1/2`, which is why the iteration count stays
//! flat under refinement. Dot products are summed sequentially, so iterates are bit-identical
//! whatever the thread count.
//!
//! **Relaxed products.** A product `A v` taken when the residual is `r` only has to be accurate
//! to about `tol |b| / |r|` relative for the iteration to reach the tolerance `tol`: its error
//! enters the residual scaled by the size of `v`, which shrinks with `r` (the relaxation strategy
//! of Bouras and Fraysse 2005; its theory for Krylov methods in van den Eshof and Sleijpen 2004
//! and Simoncini and Szyld 2003). [`bicgstab_relaxed`] hands that bound to the product, which may
//! then use a cheaper approximation of `A` (a multipole far field of lower order): the late
//! iterations, where the residual is small, cost a fraction of the early ones. The errors of the
//! cheap products accumulate in the recursed residual, so at the end the residual is recomputed
//! with the exact product, and when it is above the tolerance the iteration restarts from the
//! current solution (a new shadow vector from the true residual), within the same iteration
//! budget, with the bound cut by the ratio of the recursed to the true residual (products worse
//! than they claim get less slack). The tolerance therefore holds for the exact operator whatever
//! the cheap products' real errors were: they decide only how much work is saved.
//!
//! **Warm-up.** The bound gives the first iterations, where the residual is large, no slack at
//! all, yet their work only has to bring the residual down to where relaxation starts. A solve
//! may therefore begin with a warm-up round that runs with the cheapest products to a modest
//! residual; the exact residual of its solution then starts the relaxed iteration, which has
//! that many fewer decades to go. (The errors of the warm-up's products stay in its solution,
//! whose exact residual the next round starts from, so they cost iterations, not accuracy.)

use glam::DVec3;

/// When the iteration stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stopping {
    /// Relative residual `|b - A x| / |b|` to reach.
    pub tolerance: f64,
    /// Most iterations (two mat-vecs each), restarts included.
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
    /// Iterations run, restarts included.
    pub iterations: usize,
    /// Relative residual `|b - A x| / |b|` of the returned solution, with the exact product
    /// (recomputed, not recursed).
    pub relative_residual: f64,
    /// Whether `relative_residual <= tolerance`.
    pub converged: bool,
    /// Products taken with the exact operator, the residual checks included.
    pub exact_products: usize,
    /// Products a relaxed solve took with a cheaper approximation.
    pub relaxed_products: usize,
    /// Times the iteration restarted because the recursed residual had drifted from the true one.
    pub restarts: usize,
    /// Iterations of the warm-up round (included in `iterations`).
    pub warm_up_iterations: usize,
}

/// How a product was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    /// With the operator itself (to its own accuracy).
    Exact,
    /// With a cheaper approximation within the error it was allowed.
    Relaxed,
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
    bicgstab_relaxed(
        &mut |v: &[DVec3], out: &mut [DVec3], _| {
            apply(v, out);
            Product::Exact
        },
        b,
        stopping,
        None,
    )
}

/// Solves `A x = b` from `x = 0` with relaxed products (see the module docs):
/// `apply(v, out, allowed)` writes `A v` into `out` to a relative error of at most `allowed`
/// (zero: exactly; infinite: as cheaply as it can) and says how it took it. With `warm_up`, a
/// first round runs to that relative residual with the cheapest products, and the iteration
/// goes on from its solution (see the module docs).
pub fn bicgstab_relaxed(
    apply: &mut impl FnMut(&[DVec3], &mut [DVec3], f64) -> Product,
    b: &[DVec3],
    stopping: Stopping,
    warm_up: Option<f64>,
) -> (Vec<DVec3>, Convergence) {
    let n = b.len();
    let mut x = vec![DVec3::ZERO; n];
    let mut convergence = Convergence {
        iterations: 0,
        relative_residual: 0.0,
        converged: true,
        exact_products: 0,
        relaxed_products: 0,
        restarts: 0,
        warm_up_iterations: 0,
    };
    let b_norm = norm(b);
    if b_norm == 0.0 {
        return (x, convergence);
    }
    let goal = stopping.tolerance * b_norm;
    let mut product = |v: &[DVec3], out: &mut [DVec3], allowed: f64, c: &mut Convergence| match apply(v, out, allowed) {
        Product::Exact => c.exact_products += 1,
        Product::Relaxed => c.relaxed_products += 1,
    };
    let mut r = b.to_vec();
    let mut v = vec![DVec3::ZERO; n];
    let mut p = vec![DVec3::ZERO; n];
    let mut s = vec![DVec3::ZERO; n];
    let mut t = vec![DVec3::ZERO; n];
    // The share of the relaxation bound the products get: cut by the gap between the recursed and
    // the true residual whenever a round ends with the true one above the tolerance, so products
    // whose real error is larger than they claim are relaxed less in the next round.
    let mut trust = 1.0;
    // A warm-up only between the tolerance and the starting residual: one at 1 or above would
    // have nothing to do.
    let mut warming = warm_up.is_some_and(|w| w > stopping.tolerance && w < 1.0);
    loop {
        // The round's goal, and the error its products may have at a residual of `norm`.
        let round_goal = match warm_up {
            Some(w) if warming => w * b_norm,
            _ => goal,
        };
        let allowed = |norm: f64| if warming { f64::INFINITY } else { trust * goal / norm };
        let r_hat = r.clone();
        let (mut rho, mut alpha, mut omega) = (1.0, 1.0, 1.0);
        v.fill(DVec3::ZERO);
        p.fill(DVec3::ZERO);
        let mut r_norm = norm(&r);
        let first = convergence.iterations;
        while convergence.iterations < stopping.max_iterations && r_norm > round_goal {
            convergence.iterations += 1;
            let rho_next = dot(&r_hat, &r);
            if rho_next == 0.0 || omega == 0.0 {
                break; // breakdown: the residual is orthogonal to the shadow vector
            }
            let beta = (rho_next / rho) * (alpha / omega);
            rho = rho_next;
            for k in 0..n {
                p[k] = r[k] + (p[k] - v[k] * omega) * beta;
            }
            product(&p, &mut v, allowed(r_norm), &mut convergence);
            alpha = rho / dot(&r_hat, &v);
            for k in 0..n {
                s[k] = r[k] - v[k] * alpha;
            }
            let s_norm = norm(&s);
            if s_norm <= round_goal {
                for k in 0..n {
                    x[k] += p[k] * alpha;
                }
                break;
            }
            product(&s, &mut t, allowed(s_norm), &mut convergence);
            let tt = dot(&t, &t);
            omega = if tt > 0.0 { dot(&t, &s) / tt } else { 0.0 };
            for k in 0..n {
                x[k] += p[k] * alpha + s[k] * omega;
                r[k] = s[k] - t[k] * omega;
            }
            r_norm = norm(&r);
        }
        // The recursed residual drifts from the true one (the more so with relaxed products):
        // recompute it exactly, and go on from here while it is above the tolerance.
        product(&x, &mut t, 0.0, &mut convergence);
        for k in 0..n {
            r[k] = b[k] - t[k];
        }
        let true_norm = norm(&r);
        convergence.relative_residual = true_norm / b_norm;
        convergence.converged = true_norm <= goal;
        // A round that could not iterate (a residual that is not finite) ends the restarts, and
        // the others spend the budget.
        if convergence.converged || convergence.iterations >= stopping.max_iterations || convergence.iterations == first
        {
            break;
        }
        if warming {
            warming = false;
            convergence.warm_up_iterations = convergence.iterations;
            continue;
        }
        convergence.restarts += 1;
        trust *= (r_norm / true_norm).min(1.0);
    }
    (x, convergence)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `out = (1/2 I + C) v` for `n` blocks: a non-symmetric coupling `C` of size `strength`, like
    /// `D + A`.
    fn coupled(n: usize, strength: f64) -> impl Fn(&[DVec3], &mut [DVec3]) {
        move |v: &[DVec3], out: &mut [DVec3]| {
            for i in 0..n {
                let mut sum = v[i] * 0.5;
                for (j, vj) in v.iter().enumerate() {
                    let c = ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.4;
                    sum += DVec3::new(vj.y, vj.z, vj.x) * (strength * c);
                }
                out[i] = sum;
            }
        }
    }

    /// Coupling of the relaxed tests' system: 13 iterations exact.
    const STRENGTH: f64 = 0.03;

    fn right_side(n: usize) -> Vec<DVec3> {
        (0..n).map(|i| DVec3::new(i as f64, 1.0, -(i as f64).sqrt())).collect()
    }

    /// `|b - A x| / |b|` with the exact product.
    fn true_residual(apply: &impl Fn(&[DVec3], &mut [DVec3]), x: &[DVec3], b: &[DVec3]) -> f64 {
        let mut ax = vec![DVec3::ZERO; x.len()];
        apply(x, &mut ax);
        norm(&b.iter().zip(&ax).map(|(b, a)| *b - *a).collect::<Vec<_>>()) / norm(b)
    }

    /// A product perturbed by `lie` times the relative error it was allowed, in a fixed
    /// direction that changes from product to product, whenever it is allowed at least `1e-6`
    /// (a cheap approximation that claims that accuracy); exact otherwise.
    fn relaxed(apply: impl Fn(&[DVec3], &mut [DVec3]), lie: f64) -> impl FnMut(&[DVec3], &mut [DVec3], f64) -> Product {
        let mut count = 0usize;
        move |v: &[DVec3], out: &mut [DVec3], allowed: f64| {
            apply(v, out);
            if allowed < 1e-6 {
                return Product::Exact;
            }
            count += 1;
            let size = norm(out) / (out.len() as f64).sqrt();
            let error = (allowed * lie).min(0.5) * size;
            for (k, o) in out.iter_mut().enumerate() {
                let phase = (k * 13 + count * 7) as f64;
                *o += DVec3::new(phase.sin(), phase.cos(), (0.3 * phase).sin()) * error;
            }
            Product::Relaxed
        }
    }

    /// Products relaxed within the error they are allowed (each off by all of it): the solve
    /// reaches the tolerance for the exact operator with most of its products cheap, in at most
    /// twice the iterations of the exact solve (measured: 20 against 13, 7 exact products against
    /// 26).
    #[test]
    fn bem_bicgstab_relaxed_products_keep_the_tolerance() {
        let n = 120;
        let b = right_side(n);
        let (exact_x, exact) = bicgstab(&mut coupled(n, STRENGTH), &b, Stopping::default());
        let (x, conv) = bicgstab_relaxed(&mut relaxed(coupled(n, STRENGTH), 1.0), &b, Stopping::default(), None);
        println!("exact {exact:?}\nrelaxed {conv:?}");
        assert!(exact.converged && conv.converged, "{exact:?} {conv:?}");
        assert!(
            exact.iterations >= 10,
            "a system that takes a few iterations: {exact:?}"
        );
        assert_eq!(exact.relaxed_products, 0);
        assert!(conv.relaxed_products >= 6, "{conv:?}");
        assert!(conv.exact_products < exact.exact_products, "{conv:?}");
        assert!(conv.iterations <= 2 * exact.iterations, "{conv:?}");
        let residual = true_residual(&coupled(n, STRENGTH), &x, &b);
        assert!(residual <= 1e-8, "{residual}");
        assert!(
            (residual - conv.relative_residual).abs() <= 1e-12,
            "the reported residual is the true one"
        );
        let difference = norm(&x.iter().zip(&exact_x).map(|(a, e)| *a - *e).collect::<Vec<_>>()) / norm(&exact_x);
        assert!(difference < 1e-7, "{difference}");
    }

    /// Relaxed products a thousand times worse than they claim: the recursed residual no longer
    /// tells the truth, the solve restarts from the true residual with less slack, and the
    /// tolerance still holds (measured: two restarts, 77 iterations).
    #[test]
    fn bem_bicgstab_relaxed_products_that_lie_cost_restarts_not_accuracy() {
        let n = 120;
        let b = right_side(n);
        let (x, conv) = bicgstab_relaxed(&mut relaxed(coupled(n, STRENGTH), 1.0e3), &b, Stopping::default(), None);
        println!("{conv:?}");
        assert!(conv.converged && conv.restarts >= 1, "{conv:?}");
        let residual = true_residual(&coupled(n, STRENGTH), &x, &b);
        assert!(residual <= 1e-8, "{residual}");
    }

    /// A warm-up round on the cheapest products (here off by half the product, whatever
    /// they are allowed) to a residual of 1e-3: the iteration then goes on from its solution and
    /// reaches the tolerance for the exact operator.
    #[test]
    fn bem_bicgstab_warm_up_on_cheap_products_keeps_the_tolerance() {
        let n = 120;
        let b = right_side(n);
        let (x, conv) = bicgstab_relaxed(
            &mut relaxed(coupled(n, STRENGTH), 1.0),
            &b,
            Stopping::default(),
            Some(1e-3),
        );
        println!("{conv:?}");
        assert!(conv.converged && conv.warm_up_iterations > 0, "{conv:?}");
        assert!(conv.iterations > conv.warm_up_iterations);
        let residual = true_residual(&coupled(n, STRENGTH), &x, &b);
        assert!(residual <= 1e-8, "{residual}");
        // A warm-up no looser than the tolerance, or not below the starting residual, is no
        // warm-up.
        for warm_up in [1e-9, 1.0, f64::NAN] {
            let mut product = relaxed(coupled(n, STRENGTH), 1.0);
            let (_, plain) = bicgstab_relaxed(&mut product, &b, Stopping::default(), Some(warm_up));
            assert!(plain.converged && plain.warm_up_iterations == 0, "{warm_up}: {plain:?}");
        }
    }

    /// A product that returns NaN ends the solve unconverged, within its budget.
    #[test]
    fn bem_bicgstab_stops_on_a_product_that_is_not_finite() {
        let b = right_side(10);
        let mut nan = |_: &[DVec3], out: &mut [DVec3]| out.fill(DVec3::NAN);
        let (_, conv) = bicgstab(&mut nan, &b, Stopping::default());
        assert!(!conv.converged && conv.iterations <= 2, "{conv:?}");
    }

    #[test]
    fn bem_bicgstab_solves_a_nonsymmetric_system() {
        // A 30-block system: diagonal 1/2 plus a small non-symmetric coupling, like D + A.
        let n = 30;
        let b = right_side(n);
        let mut op = coupled(n, 0.02);
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
