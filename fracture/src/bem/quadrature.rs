//! Quadrature over flat triangles for kernels singular like `1/r` and `1/r^2`.
//!
//! - [`visit_adaptive`]: a 7-point degree-5 rule (Radon) on the triangle when the target is at
//!   least `ratio` diameters from it, otherwise on its four midpoint children, recursively. A
//!   degree-5 rule on a `1/r^2` kernel at three diameters errs by about 1e-6 relative; the
//!   recursion only refines the children near the target, so a target a tenth of a diameter away
//!   costs a few dozen kernel evaluations.
//! - [`visit_duffy`]: the Duffy transform for a target at a vertex of the triangle: the map
//!   `y = p0 + s (p1 - p0) + s t (p2 - p1)` has Jacobian `2 A s`, which cancels a `1/r` singularity,
//!   so a tensor Gauss-Legendre rule converges exponentially.
//! - [`principal_value_direction`]: the Cauchy principal value of `integral of r^ / r^2` over a
//!   triangle about a point in its plane, in closed form (the traction kernel's self term).
//!
//! Every visitor calls `f(point, weight)` with weights that sum to the area (m^2).

use glam::DVec3;

/// Radon's 7-point rule, exact for polynomials of degree 5: barycentric points and weights
/// (summing to 1). `a = (6 - sqrt 15) / 21`, `b = (6 + sqrt 15) / 21`.
const RADON: [([f64; 3], f64); 7] = {
    const S15: f64 = 3.872_983_346_207_417;
    const A: f64 = (6.0 - S15) / 21.0;
    const B: f64 = (6.0 + S15) / 21.0;
    const WA: f64 = (155.0 - S15) / 1200.0;
    const WB: f64 = (155.0 + S15) / 1200.0;
    [
        ([1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0], 9.0 / 40.0),
        ([A, A, 1.0 - 2.0 * A], WA),
        ([A, 1.0 - 2.0 * A, A], WA),
        ([1.0 - 2.0 * A, A, A], WA),
        ([B, B, 1.0 - 2.0 * B], WB),
        ([B, 1.0 - 2.0 * B, B], WB),
        ([1.0 - 2.0 * B, B, B], WB),
    ]
};

/// Gauss-Legendre nodes and weights on [0, 1], 8 points (exact to degree 15).
pub(crate) const GAUSS8: [(f64, f64); 8] = [
    (0.019_855_071_751_231_856, 0.050_614_268_145_188_13),
    (0.101_666_761_293_186_63, 0.111_190_517_226_687_24),
    (0.237_233_795_041_835_5, 0.156_853_322_938_943_64),
    (0.408_282_678_752_175, 0.181_341_891_689_181),
    (0.591_717_321_247_825, 0.181_341_891_689_181),
    (0.762_766_204_958_164_5, 0.156_853_322_938_943_64),
    (0.898_333_238_706_813_4, 0.111_190_517_226_687_24),
    (0.980_144_928_248_768_1, 0.050_614_268_145_188_13),
];

/// Deepest recursion of [`visit_adaptive`]: a child of depth 12 is 4096 times smaller than the
/// triangle, so a target closer than that to the surface is integrated with a bounded error
/// instead of without end.
const MAX_DEPTH: u32 = 12;

/// Area of the triangle `[a, b, c]`, m^2.
pub fn triangle_area(t: &[DVec3; 3]) -> f64 {
    0.5 * (t[1] - t[0]).cross(t[2] - t[0]).length()
}

/// Longest edge of the triangle, m.
pub fn diameter(t: &[DVec3; 3]) -> f64 {
    (t[1] - t[0])
        .length_squared()
        .max((t[2] - t[1]).length_squared())
        .max((t[0] - t[2]).length_squared())
        .sqrt()
}

/// The 7-point rule on `t`.
pub fn visit_radon(t: &[DVec3; 3], f: &mut impl FnMut(DVec3, f64)) {
    let area = triangle_area(t);
    for (b, w) in RADON {
        f(t[0] * b[0] + t[1] * b[1] + t[2] * b[2], w * area);
    }
}

/// Integrates over `t` for a kernel singular at `target` (which must not lie on `t`): the 7-point
/// rule where `target` is at least `ratio` diameters from the centroid of a piece, children
/// otherwise (see the module docs).
pub fn visit_adaptive(t: &[DVec3; 3], target: DVec3, ratio: f64, f: &mut impl FnMut(DVec3, f64)) {
    visit_adaptive_at(t, target, (ratio * diameter(t)).powi(2), triangle_area(t), 0, f);
}

/// [`visit_adaptive`] on a piece `t` of area `area` whose 7-point rule is accepted at squared
/// distance `reach2` from its centroid: a midpoint child is the piece halved, so its reach is a
/// quarter and its area a quarter (computed once at the top, not again at every level).
fn visit_adaptive_at(
    t: &[DVec3; 3],
    target: DVec3,
    reach2: f64,
    area: f64,
    depth: u32,
    f: &mut impl FnMut(DVec3, f64),
) {
    let centroid = (t[0] + t[1] + t[2]) / 3.0;
    if depth >= MAX_DEPTH || (target - centroid).length_squared() >= reach2 {
        for (b, w) in RADON {
            f(t[0] * b[0] + t[1] * b[1] + t[2] * b[2], w * area);
        }
        return;
    }
    let m01 = 0.5 * (t[0] + t[1]);
    let m12 = 0.5 * (t[1] + t[2]);
    let m20 = 0.5 * (t[2] + t[0]);
    for child in [[t[0], m01, m20], [m01, t[1], m12], [m20, m12, t[2]], [m01, m12, m20]] {
        visit_adaptive_at(&child, target, 0.25 * reach2, 0.25 * area, depth + 1, f);
    }
}

/// Integrates over `t` for a kernel singular like `1/r` at its vertex `t[0]` (Duffy transform,
/// 8 x 8 Gauss-Legendre points).
pub fn visit_duffy(t: &[DVec3; 3], f: &mut impl FnMut(DVec3, f64)) {
    let twice_area = 2.0 * triangle_area(t);
    for (s, ws) in GAUSS8 {
        for (u, wu) in GAUSS8 {
            let y = t[0] + (t[1] - t[0]) * s + (t[2] - t[1]) * (s * u);
            f(y, ws * wu * twice_area * s);
        }
    }
}

/// The Cauchy principal value of `integral over t of r^ / r^2 dA_y`, `r = x - y`, for `x` in the
/// plane of `t` and inside it (1/m^0: dimensionless direction sum).
///
/// In polar coordinates about `x`, `y = x + rho e(theta)`, the integrand is `-e / rho` and the
/// principal value is `-integral of e(theta) ln R(theta) d theta` (the `ln eps` term vanishes
/// because `e` integrates to zero over a full turn). Each edge is seen at distance `h` along its
/// foot direction `m`, with `R = h / cos phi` and `e = m cos phi + t sin phi`, whose integrals
/// are elementary:
///
/// ```text
/// int cos(phi) ln(h / cos phi) = sin(phi) (ln h - ln cos phi + 1) - ln(sec phi + tan phi)
/// int sin(phi) ln(h / cos phi) = cos(phi) (ln cos phi - ln h - 1)
/// ```
pub fn principal_value_direction(t: &[DVec3; 3], x: DVec3) -> DVec3 {
    let normal = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
    let mut sum = DVec3::ZERO;
    for e in 0..3 {
        let (a, b) = (t[e] - x, t[(e + 1) % 3] - x);
        let along = (b - a).normalize();
        // Foot of the perpendicular from x onto the edge's line.
        let foot = a - along * a.dot(along);
        let h = foot.length();
        let m = foot / h;
        let tangent = normal.cross(m);
        let phi_a = a.dot(tangent).atan2(a.dot(m));
        let phi_b = b.dot(tangent).atan2(b.dot(m));
        let ln_h = h.ln();
        let cos_part = |phi: f64| {
            let (s, c) = phi.sin_cos();
            s * (ln_h - c.ln() + 1.0) - (1.0 / c + s / c).ln()
        };
        let sin_part = |phi: f64| {
            let c = phi.cos();
            c * (c.ln() - ln_h - 1.0)
        };
        sum += m * (cos_part(phi_b) - cos_part(phi_a)) + tangent * (sin_part(phi_b) - sin_part(phi_a));
    }
    -sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> [DVec3; 3] {
        [
            DVec3::new(0.1, 0.0, 0.2),
            DVec3::new(1.3, 0.2, 0.1),
            DVec3::new(0.4, 0.9, 0.5),
        ]
    }

    #[test]
    fn bem_quadrature_rules_integrate_polynomials_exactly() {
        let t = sample();
        let area = triangle_area(&t);
        // The integral of (y - c)^2 . e over a triangle, by the exact second-moment formula.
        let c = (t[0] + t[1] + t[2]) / 3.0;
        let d = [t[0] - c, t[1] - c, t[2] - c];
        let exact = area / 12.0 * (d[0].x * d[0].x + d[1].x * d[1].x + d[2].x * d[2].x);
        let mut radon = 0.0;
        visit_radon(&t, &mut |y, w| radon += w * (y.x - c.x).powi(2));
        let mut duffy = 0.0;
        visit_duffy(&t, &mut |y, w| duffy += w * (y.x - c.x).powi(2));
        let mut adaptive = 0.0;
        visit_adaptive(&t, t[0], 3.0, &mut |y, w| adaptive += w * (y.x - c.x).powi(2));
        for got in [radon, duffy, adaptive] {
            assert!((got - exact).abs() < 1e-13 * exact, "{got} vs {exact}");
        }
    }

    #[test]
    fn bem_quadrature_duffy_integrates_one_over_r_at_a_vertex() {
        // Right isosceles triangle of legs L at the origin: integral of 1/r over it is
        // L ln(1 + sqrt 2) (polar coordinates: int_0^{pi/4} L / cos(theta) d theta).
        let l = 0.7;
        let t = [DVec3::ZERO, DVec3::new(l, 0.0, 0.0), DVec3::new(l, l, 0.0)];
        let mut sum = 0.0;
        visit_duffy(&t, &mut |y, w| sum += w / y.length());
        let exact = l * (1.0 + 2f64.sqrt()).ln();
        assert!((sum - exact).abs() < 1e-10 * exact, "{sum} vs {exact}");
    }

    #[test]
    fn bem_quadrature_principal_value_matches_polar_brute_force() {
        let t = [
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(1.0, 0.1, 0.0),
            DVec3::new(0.3, 0.8, 0.0),
        ];
        for x in [(t[0] + t[1] + t[2]) / 3.0, DVec3::new(0.5, 0.2, 0.0)] {
            let got = principal_value_direction(&t, x);
            // Brute force: -int e(theta) ln R(theta) d theta with R found by ray casting.
            let n = 200_000;
            let mut sum = DVec3::ZERO;
            for k in 0..n {
                let theta = (k as f64 + 0.5) / n as f64 * core::f64::consts::TAU;
                let e = DVec3::new(theta.cos(), theta.sin(), 0.0);
                let mut reach = f64::INFINITY;
                for i in 0..3 {
                    let (a, b) = (t[i] - x, t[(i + 1) % 3] - x);
                    let edge = b - a;
                    let det = e.x * (-edge.y) - e.y * (-edge.x);
                    let s = (a.x * (-edge.y) - a.y * (-edge.x)) / det;
                    let u = (e.x * a.y - e.y * a.x) / det;
                    if s > 0.0 && (0.0..=1.0).contains(&u) {
                        reach = reach.min(s);
                    }
                }
                sum -= e * reach.ln();
            }
            sum *= core::f64::consts::TAU / n as f64;
            assert!((got - sum).length() < 1e-6, "{got:?} vs {sum:?}");
        }
    }

    #[test]
    fn bem_quadrature_adaptive_converges_on_a_near_singular_target() {
        // 1/r^2 over a unit right triangle from a point 1e-3 above its centroid: refining the
        // acceptance ratio must not change the answer beyond 1e-6 relative.
        let t = [DVec3::ZERO, DVec3::X, DVec3::Y];
        let x = DVec3::new(1.0 / 3.0, 1.0 / 3.0, 1e-3);
        let run = |ratio: f64| {
            let mut sum = 0.0;
            visit_adaptive(&t, x, ratio, &mut |y, w| sum += w / (x - y).length_squared());
            sum
        };
        let (coarse, fine) = (run(3.0), run(6.0));
        assert!((coarse - fine).abs() < 1e-5 * fine, "{coarse} vs {fine}");
    }
}
