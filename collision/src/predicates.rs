//! Exact geometric predicates: the sign of an orientation determinant, right even when the
//! points are nearly or exactly coplanar.
//!
//! A rounded determinant can give the wrong sign when its true value is tiny against the
//! products it sums, and a mesh validator or a cut that trusts it then calls crossing triangles
//! disjoint (or the other way round). Each predicate first evaluates the determinant in floating
//! point and accepts the sign when the magnitude beats a proven error bound (Shewchuk 1997,
//! "Adaptive precision floating-point arithmetic and fast robust geometric predicates", the
//! bounds `ccwerrboundA` and `o3derrboundA`). Otherwise it evaluates the determinant exactly as a
//! floating-point expansion: a sum of non-overlapping doubles built from error-free
//! transformations (two-sum and the fused-multiply-add two-product), whose sign is the sign of
//! its largest component.
//!
//! Rejected: Shewchuk's staged adaptive tails. They are faster on near-degenerate input, but
//! near-degenerate input is rare here (the filter answers almost every call) and the plain exact
//! expansion is much shorter to audit.

use glam::{DVec2, DVec3};
use smallvec::SmallVec;

/// An expansion: non-overlapping doubles, smallest magnitude first. Zero components are
/// dropped as they arise, so real expansions stay short and live on the stack.
type Expansion = SmallVec<[f64; 16]>;

/// Half the distance between 1 and the next double: the relative rounding error bound.
const EPSILON: f64 = f64::EPSILON * 0.5;
/// Shewchuk's `ccwerrboundA`: the 2D orientation's floating-point error bound, relative to the
/// permanent (the sum of the absolute values of the determinant's products).
const ORIENT2D_BOUND: f64 = (3.0 + 16.0 * EPSILON) * EPSILON;
/// Shewchuk's `o3derrboundA`: the same for the 3D orientation.
const ORIENT3D_BOUND: f64 = (7.0 + 56.0 * EPSILON) * EPSILON;

/// The sign of the 2D orientation of `a`, `b`, `c`: `+1` when they turn counter-clockwise,
/// `-1` clockwise, `0` when exactly collinear. Exact for all finite input.
pub fn orient2d(a: DVec2, b: DVec2, c: DVec2) -> i32 {
    let left = (a.x - c.x) * (b.y - c.y);
    let right = (a.y - c.y) * (b.x - c.x);
    let det = left - right;
    let permanent = left.abs() + right.abs();
    if det.abs() > ORIENT2D_BOUND * permanent {
        return sign(det);
    }
    let [ax, ay, bx, by, cx, cy] = [a.x, a.y, b.x, b.y, c.x, c.y];
    let acx = two_diff(ax, cx);
    let acy = two_diff(ay, cy);
    let bcx = two_diff(bx, cx);
    let bcy = two_diff(by, cy);
    let exact = difference(product(&acx, &bcy), &product(&acy, &bcx));
    expansion_sign(&exact)
}

/// The sign of the 3D orientation of `d` against the triangle `a`, `b`, `c`: `+1` when `d` lies
/// on the side the right-handed normal `(b - a) x (c - a)` points to, `-1` on the other side, `0`
/// when the four points are exactly coplanar. Exact for all finite input.
pub fn orient3d(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> i32 {
    let (ad, bd, cd) = (a - d, b - d, c - d);
    // A coordinate shared by all four points (a face of an axis-aligned box) makes a zero
    // column: the determinant is exactly zero. Float subtraction of equal values is exactly 0.
    if (ad.x == 0.0 && bd.x == 0.0 && cd.x == 0.0)
        || (ad.y == 0.0 && bd.y == 0.0 && cd.y == 0.0)
        || (ad.z == 0.0 && bd.z == 0.0 && cd.z == 0.0)
    {
        return 0;
    }
    // Shewchuk's determinant (a - d) . ((b - d) x (c - d)) is the negative of
    // ((b - a) x (c - a)) . (d - a), the sign this function promises.
    let bc = bd.x * cd.y - cd.x * bd.y;
    let ca = cd.x * ad.y - ad.x * cd.y;
    let ab = ad.x * bd.y - bd.x * ad.y;
    let det = ad.z * bc + bd.z * ca + cd.z * ab;
    let permanent = ((bd.x * cd.y).abs() + (cd.x * bd.y).abs()) * ad.z.abs()
        + ((cd.x * ad.y).abs() + (ad.x * cd.y).abs()) * bd.z.abs()
        + ((ad.x * bd.y).abs() + (bd.x * ad.y).abs()) * cd.z.abs();
    if det.abs() > ORIENT3D_BOUND * permanent {
        return -sign(det);
    }
    -expansion_sign(&orient3d_exact(a, b, c, d))
}

/// `(a - d) . ((b - d) x (c - d))` as an exact expansion.
fn orient3d_exact(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> Expansion {
    let adx = two_diff(a.x, d.x);
    let ady = two_diff(a.y, d.y);
    let adz = two_diff(a.z, d.z);
    let bdx = two_diff(b.x, d.x);
    let bdy = two_diff(b.y, d.y);
    let bdz = two_diff(b.z, d.z);
    let cdx = two_diff(c.x, d.x);
    let cdy = two_diff(c.y, d.y);
    let cdz = two_diff(c.z, d.z);
    let bc = difference(product(&bdx, &cdy), &product(&cdx, &bdy));
    let ca = difference(product(&cdx, &ady), &product(&adx, &cdy));
    let ab = difference(product(&adx, &bdy), &product(&bdx, &ady));
    let mut sum = product(&adz, &bc);
    accumulate(&mut sum, &product(&bdz, &ca), 1.0);
    accumulate(&mut sum, &product(&cdz, &ab), 1.0);
    sum
}

fn sign(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// `a + b` exactly: the rounded sum and its rounding error (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// `a - b` as an exact expansion (smallest component first, a zero error dropped).
fn two_diff(a: f64, b: f64) -> Expansion {
    let (s, e) = two_sum(a, -b);
    if e == 0.0 {
        SmallVec::from_slice(&[s])
    } else {
        SmallVec::from_slice(&[e, s])
    }
}

/// `a * b` exactly: the rounded product and its error, which a fused multiply-add gives exactly.
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// Adds the double `b` to the non-overlapping expansion `e` in place (Shewchuk's
/// Grow-Expansion); zero components are dropped. Writing the error terms back over the
/// components already read is safe: the k-th output never overtakes the k-th input.
fn grow(e: &mut Expansion, b: f64) {
    let mut q = b;
    let mut k = 0;
    for i in 0..e.len() {
        let (s, err) = two_sum(q, e[i]);
        if err != 0.0 {
            e[k] = err;
            k += 1;
        }
        q = s;
    }
    e.truncate(k);
    if q != 0.0 || e.is_empty() {
        e.push(q);
    }
}

/// `e + sign * f`, exactly, into `e`.
fn accumulate(e: &mut Expansion, f: &[f64], sign: f64) {
    for &b in f {
        grow(e, sign * b);
    }
}

/// The exact difference of two expansions.
fn difference(mut e: Expansion, f: &[f64]) -> Expansion {
    accumulate(&mut e, f, -1.0);
    e
}

/// The exact product of two expansions.
fn product(e: &[f64], f: &[f64]) -> Expansion {
    let mut out = Expansion::new();
    for &x in e {
        for &y in f {
            let (p, err) = two_product(x, y);
            grow(&mut out, err);
            grow(&mut out, p);
        }
    }
    out
}

/// The sign of an expansion: that of its largest (last non-zero) component.
fn expansion_sign(e: &[f64]) -> i32 {
    e.iter().rev().find(|x| **x != 0.0).map_or(0, |x| sign(*x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact orientation on integer coordinates, by 128-bit integer arithmetic.
    fn orient3d_integer(p: [[i64; 3]; 4]) -> i32 {
        let d = |i: usize, k: usize| i128::from(p[i][k] - p[3][k]);
        let det = d(0, 2) * (d(1, 0) * d(2, 1) - d(2, 0) * d(1, 1))
            + d(1, 2) * (d(2, 0) * d(0, 1) - d(0, 0) * d(2, 1))
            + d(2, 2) * (d(0, 0) * d(1, 1) - d(1, 0) * d(0, 1));
        -(det.signum() as i32)
    }

    #[test]
    fn predicates_orient3d_sign_convention_follows_the_right_hand_normal() {
        let (a, b, c) = (DVec3::ZERO, DVec3::X, DVec3::Y);
        assert_eq!(orient3d(a, b, c, DVec3::Z), 1);
        assert_eq!(orient3d(a, b, c, -DVec3::Z), -1);
        assert_eq!(orient3d(a, b, c, DVec3::new(0.3, 0.4, 0.0)), 0);
        assert_eq!(orient2d(DVec2::ZERO, DVec2::X, DVec2::Y), 1);
        assert_eq!(orient2d(DVec2::ZERO, DVec2::Y, DVec2::X), -1);
    }

    #[test]
    fn predicates_orient3d_matches_integer_arithmetic_on_large_near_coplanar_points() {
        // Coordinates up to 2^40 make every product exceed 2^53, so rounding matters; the
        // fourth point is placed on or next to the plane of the first three.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as i64 - (1 << 39)
        };
        let (mut zeros, mut nonzero_slivers) = (0, 0);
        for round in 0..4000 {
            let a = [next(), next(), next()];
            let b = [next(), next(), next()];
            let c = if round % 2 == 0 {
                [next() >> 20, next() >> 20, next() >> 20]
            } else {
                // A sliver: c one unit off the midpoint of a b, so the determinant is about
                // 2^-80 of the products it sums and only the exact path can sign it.
                std::array::from_fn(|k| a[k] + (b[k] - a[k]) / 2 + (next() & 1))
            };
            // d = a + (b - a) + (c - a) shifted by -1, 0 or 1 in z: on or next to the plane.
            let shift = (next() & 3) - 1;
            let d = [
                b[0] + c[0] - a[0],
                b[1] + c[1] - a[1],
                b[2] + c[2] - a[2] + shift.clamp(-1, 1),
            ];
            if d.iter().any(|v| v.abs() >= 1 << 52) {
                continue;
            }
            let points = [a, b, c, d];
            let f = |p: [i64; 3]| DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
            let expected = orient3d_integer(points);
            zeros += usize::from(expected == 0);
            nonzero_slivers += usize::from(expected != 0 && round % 2 == 1);
            assert_eq!(orient3d(f(a), f(b), f(c), f(d)), expected, "{points:?}");
        }
        assert!(zeros > 100, "the test must exercise exactly coplanar points ({zeros})");
        assert!(nonzero_slivers > 100, "and signed slivers ({nonzero_slivers})");
    }

    #[test]
    fn predicates_orient2d_is_exact_where_rounding_flips_the_naive_sign() {
        // Points on the line y = x near 0.5, nudged by one ulp: the classic failure of the
        // naive determinant (Kettner et al. 2008).
        let b = DVec2::new(12.0, 12.0);
        let c = DVec2::new(24.0, 24.0);
        let mut disagreements = 0;
        for i in 0..64 {
            for j in 0..64 {
                let a = DVec2::new(0.5 + i as f64 * f64::EPSILON, 0.5 + j as f64 * f64::EPSILON);
                let exact = (j as i64 - i as i64).signum() as i32;
                let naive = sign((a.x - c.x) * (b.y - c.y) - (a.y - c.y) * (b.x - c.x));
                disagreements += usize::from(naive != exact);
                assert_eq!(orient2d(a, b, c), exact, "i {i} j {j}");
            }
        }
        assert!(
            disagreements > 0,
            "the naive determinant should fail somewhere on this grid"
        );
    }
}
