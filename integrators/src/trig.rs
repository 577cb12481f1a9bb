//! Sine and cosine evaluated together, for the rotations of the orientation update.
//!
//! The orientation update turns every body several times per step, and the platform's `sin` and
//! `cos` were a fifth of its cost (two library calls per angle, not inlinable). This version
//! reduces the argument by multiples of pi/2 (Cody and Waite, with pi/2 split into three parts so
//! that `k * part` is exact for `|k| < 2^20`) and evaluates economized polynomials on
//! `[-pi/4, pi/4]` (see the coefficients). It is within 2 ulp of the correctly rounded
//! result, uses no fused multiply-add (so results are the same on every x86-64 and aarch64
//! machine), and hands arguments beyond the reduction range to the standard library.

use crate::lanes::Lanes;

/// pi/2 to 33 significant bits: `k * PIO2_HI` is exact for `|k| < 2^20`.
const PIO2_HI: f64 = 1.570_796_326_734_125_6;
/// The next 33 bits of pi/2.
const PIO2_MID: f64 = 6.077_100_506_303_966e-11;
/// The rest of pi/2.
const PIO2_LO: f64 = 2.022_266_248_795_950_6e-21;
/// Largest |x| reduced here; beyond it the standard library does the reduction.
const REDUCTION_LIMIT: f64 = 1.0e5;
/// Adding and subtracting 1.5 * 2^52 rounds a double below 2^51 to the nearest integer without a
/// library call (`f64::round` is one on baseline x86-64).
const ROUNDING_SHIFTER: f64 = 6_755_399_441_055_744.0;

// sin r = r + r^3 P(r^2) and cos r = 1 - r^2/2 + r^4 Q(r^2) on |r| <= pi/4, with P and Q of degree
// 5: the Taylor series of P and Q economized onto Chebyshev polynomials over [0, (pi/4)^2] in exact
// rational arithmetic and truncated (Lanczos' telescoping). The dropped Chebyshev terms bound the
// error by 2.0e-17 relative for sin and 1.3e-18 for cos; with the coefficients rounded to f64 and
// the polynomials evaluated exactly the measured worst is the same, a fifth of an ulp at most. Two
// Taylor terms fewer for sin and one for cos than the plain series at this accuracy.
const S1: f64 = -0.166_666_666_666_666_66;
const S2: f64 = 0.008_333_333_333_330_95;
const S3: f64 = -0.000_198_412_698_367_597_9;
const S4: f64 = 2.755_731_610_310_501_4e-6;
const S5: f64 = -2.505_113_194_737_459_4e-8;
const S6: f64 = 1.591_813_593_286_977_4e-10;
const C2: f64 = 0.041_666_666_666_666_664;
const C3: f64 = -0.001_388_888_888_888_739_8;
const C4: f64 = 2.480_158_729_876_636_3e-5;
const C5: f64 = -2.755_731_727_203_699_6e-7;
const C6: f64 = 2.087_614_632_531_677e-9;
const C7: f64 = -1.138_263_611_596_406_1e-11;

/// `(sin x, cos x)` for `x` in radians. Non-finite input gives NaN, as the standard library does.
#[inline]
pub fn sin_cos(x: f64) -> (f64, f64) {
    let (sin, cos) = sin_cos_lanes(Lanes([x]));
    (sin.0[0], cos.0[0])
}

/// `(sin x, cos x)` lane by lane; each lane gives exactly what [`sin_cos`] gives for it.
#[inline(always)]
pub fn sin_cos_lanes<const N: usize>(x: Lanes<N>) -> (Lanes<N>, Lanes<N>) {
    // Fast path: no reduction needed. Bit-identical to the general path, where k = 0 makes the
    // reduction exact and the quadrant the first.
    if x.abs().le(Lanes::splat(core::f64::consts::FRAC_PI_4)).all() {
        return sin_cos_reduced(x);
    }
    let k = (x * core::f64::consts::FRAC_2_PI + ROUNDING_SHIFTER) - ROUNDING_SHIFTER;
    let r = ((x - k * PIO2_HI) - k * PIO2_MID) - k * PIO2_LO;
    let (sin, cos) = sin_cos_reduced(r);
    // Quadrant k mod 4 as m = k - 4 round(k / 4) in {-2, -1, 0, 1, 2} (m = +-2 both mean the third
    // quadrant), decided with lane-wise float compares so the whole function stays branch-free.
    let m = k - ((k * 0.25 + ROUNDING_SHIFTER) - ROUNDING_SHIFTER) * 4.0;
    let odd = m.abs().lt(Lanes::splat(1.5)) & m.abs().gt(Lanes::splat(0.5));
    let third = m.abs().gt(Lanes::splat(1.5));
    let (s, c) = (Lanes::select(odd, cos, sin), Lanes::select(odd, sin, cos));
    let negate_sin = third | m.lt(Lanes::splat(-0.5));
    let negate_cos = third | m.gt(Lanes::splat(0.5));
    let mut sin_out = Lanes::select(negate_sin, -s, s);
    let mut cos_out = Lanes::select(negate_cos, -c, c);
    let in_range = x.abs().le(Lanes::splat(REDUCTION_LIMIT));
    if !in_range.all() {
        for i in 0..N {
            if !in_range.get(i) {
                (sin_out.0[i], cos_out.0[i]) = x.0[i].sin_cos();
            }
        }
    }
    (sin_out, cos_out)
}

/// `(sin r, cos r)` for `|r| <= pi/4`: the economized series above, Horner's rule.
#[inline(always)]
fn sin_cos_reduced<const N: usize>(r: Lanes<N>) -> (Lanes<N>, Lanes<N>) {
    let r2 = r * r;
    let sin_poly = ((((r2 * S6 + S5) * r2 + S4) * r2 + S3) * r2 + S2) * r2 + S1;
    let sin = r + r * r2 * sin_poly;
    let cos_poly = ((((r2 * C7 + C6) * r2 + C5) * r2 + C4) * r2 + C3) * r2 + C2;
    let cos = (Lanes::splat(1.0) - r2 * 0.5) + r2 * r2 * cos_poly;
    (sin, cos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ulp_distance(a: f64, b: f64) -> u64 {
        // Distance in units of the spacing at the larger magnitude, with a floor at the spacing
        // of 1.0 so results near zero are compared absolutely (as the rotations use them).
        let scale = a.abs().max(b.abs()).max(f64::EPSILON);
        let spacing = f64::EPSILON * 2f64.powi(scale.log2().floor() as i32);
        ((a - b).abs() / spacing.max(f64::EPSILON * f64::EPSILON)).round() as u64
    }

    #[test]
    fn trig_exact_points() {
        assert_eq!(sin_cos(0.0), (0.0, 1.0));
        let (s, c) = sin_cos(core::f64::consts::FRAC_PI_2);
        assert!((s - 1.0).abs() <= f64::EPSILON && c.abs() < 1e-16);
        let (s, c) = sin_cos(-core::f64::consts::PI);
        assert!(s.abs() < 1e-15 && (c + 1.0).abs() <= f64::EPSILON);
        assert!(sin_cos(f64::NAN).0.is_nan() && sin_cos(f64::INFINITY).1.is_nan());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn trig_matches_std_within_two_ulp(x in -2.0e5f64..2.0e5, small in -4.0f64..4.0) {
            let inputs = [x, small, small * 1e-6];
            let (s_lanes, c_lanes) = sin_cos_lanes(Lanes(inputs));
            for (i, x) in inputs.into_iter().enumerate() {
                let (s, c) = sin_cos(x);
                prop_assert_eq!((s, c), (s_lanes.0[i], c_lanes.0[i]));
                let (s_ref, c_ref) = x.sin_cos();
                prop_assert!(ulp_distance(s, s_ref) <= 2, "sin({x}) = {s} vs {s_ref}");
                prop_assert!(ulp_distance(c, c_ref) <= 2, "cos({x}) = {c} vs {c_ref}");
            }
        }
    }
}
