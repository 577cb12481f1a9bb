//! Fixed-width lanes of `f64`: the data-parallel form of the per-body kernels.
//!
//! The orientation update of one body is a long chain of dependent operations (polynomials,
//! square roots, divisions), so one body at a time leaves most of the processor idle waiting on
//! latency. Written over `Lanes<N>`, the same code advances `N` independent bodies in lock step:
//! the compiler turns each lane-wise operation into SIMD instructions and the `N` chains overlap.
//! With `N = 1` it is the scalar code, so single-body and batch updates share one implementation
//! and give bit-identical results (no fused multiply-add is used anywhere, and every operation is
//! an IEEE-754 correctly rounded one, lane by lane).
//!
//! Two details matter to the generated code: lanes are 32-byte aligned, and arithmetic is written
//! as in-place loops over the array. Both let the compiler keep four lanes in one AVX register (or
//! two SSE registers) instead of shuffling scalars; measured, they cut the instructions of the
//! batch update by a quarter.

use core::array::from_fn;
use core::ops::{Add, Div, Mul, Neg, Sub};

use glam::{DQuat, DVec3};

/// `N` independent `f64` values.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub struct Lanes<const N: usize>(pub [f64; N]);

/// One boolean per lane, stored as an all-ones or all-zeros 64-bit pattern.
///
/// The pattern, not `bool`, is what lets [`Lanes::select`] compile to a blend: with `[bool; N]`
/// the compiler scalarized the tail of the energy fix into per-lane branches and scalar square
/// roots, which measured about a fifth of the batch update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Mask<const N: usize>([u64; N]);

impl<const N: usize> Mask<N> {
    /// A mask from a per-lane predicate.
    #[inline(always)]
    pub fn from_fn(mut f: impl FnMut(usize) -> bool) -> Self {
        Self(from_fn(|i| bits(f(i))))
    }

    /// A mask with every lane set to `value`.
    #[inline(always)]
    pub fn splat(value: bool) -> Self {
        Self([bits(value); N])
    }

    /// Whether lane `i` is set.
    #[inline(always)]
    pub fn get(&self, i: usize) -> bool {
        self.0[i] != 0
    }

    /// Sets lane `i`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, value: bool) {
        self.0[i] = bits(value);
    }

    /// Whether every lane is set.
    #[inline(always)]
    pub fn all(self) -> bool {
        self.0.iter().fold(u64::MAX, |all, m| all & m) != 0
    }
}

/// The lane pattern of a boolean: all ones for true.
#[inline(always)]
fn bits(value: bool) -> u64 {
    u64::from(value).wrapping_neg()
}

impl<const N: usize> core::ops::BitAnd for Mask<N> {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, rhs: Self) -> Self {
        Self(from_fn(|i| self.0[i] & rhs.0[i]))
    }
}

impl<const N: usize> core::ops::BitOr for Mask<N> {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, rhs: Self) -> Self {
        Self(from_fn(|i| self.0[i] | rhs.0[i]))
    }
}

impl<const N: usize> core::ops::Not for Mask<N> {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Self(from_fn(|i| !self.0[i]))
    }
}

impl<const N: usize> Lanes<N> {
    /// Every lane set to `value`.
    #[inline(always)]
    pub fn splat(value: f64) -> Self {
        Self([value; N])
    }

    /// Lane-wise map.
    #[inline(always)]
    pub fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self(from_fn(|i| f(self.0[i])))
    }

    /// Lane-wise square root.
    #[inline(always)]
    pub fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }

    /// Lane-wise absolute value.
    #[inline(always)]
    pub fn abs(self) -> Self {
        self.map(f64::abs)
    }

    /// Lane-wise maximum (NaN-ignoring, as `f64::max`).
    #[inline(always)]
    pub fn max(self, other: Self) -> Self {
        Self(from_fn(|i| self.0[i].max(other.0[i])))
    }

    /// Lane-wise `self < other`.
    #[inline(always)]
    pub fn lt(self, other: Self) -> Mask<N> {
        Mask::from_fn(|i| self.0[i] < other.0[i])
    }

    /// Lane-wise `self <= other`.
    #[inline(always)]
    pub fn le(self, other: Self) -> Mask<N> {
        Mask::from_fn(|i| self.0[i] <= other.0[i])
    }

    /// Lane-wise `self > other` (false for NaN).
    #[inline(always)]
    pub fn gt(self, other: Self) -> Mask<N> {
        Mask::from_fn(|i| self.0[i] > other.0[i])
    }

    /// Lane-wise `self >= other` (false for NaN).
    #[inline(always)]
    pub fn ge(self, other: Self) -> Mask<N> {
        Mask::from_fn(|i| self.0[i] >= other.0[i])
    }

    /// Lane-wise choice: `when_true` where `mask` holds, else `when_false`. Bitwise, so it
    /// compiles to a blend and passes NaN payloads through unchanged.
    #[inline(always)]
    pub fn select(mask: Mask<N>, when_true: Self, when_false: Self) -> Self {
        Self(from_fn(|i| {
            let m = mask.0[i];
            f64::from_bits((when_true.0[i].to_bits() & m) | (when_false.0[i].to_bits() & !m))
        }))
    }
}

macro_rules! lane_op {
    ($trait:ident, $method:ident, $op:tt) => {
        impl<const N: usize> $trait for Lanes<N> {
            type Output = Self;
            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                let mut out = self.0;
                for (o, r) in out.iter_mut().zip(rhs.0) {
                    *o $op r;
                }
                Self(out)
            }
        }
        impl<const N: usize> $trait<f64> for Lanes<N> {
            type Output = Self;
            #[inline(always)]
            fn $method(self, rhs: f64) -> Self {
                let mut out = self.0;
                for o in out.iter_mut() {
                    *o $op rhs;
                }
                Self(out)
            }
        }
    };
}
lane_op!(Add, add, +=);
lane_op!(Sub, sub, -=);
lane_op!(Mul, mul, *=);
lane_op!(Div, div, /=);

impl<const N: usize> Neg for Lanes<N> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|x| -x)
    }
}

/// `N` vectors in structure-of-arrays form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vec3Lanes<const N: usize> {
    /// x components.
    pub x: Lanes<N>,
    /// y components.
    pub y: Lanes<N>,
    /// z components.
    pub z: Lanes<N>,
}

impl<const N: usize> Vec3Lanes<N> {
    /// Gathers `N` vectors.
    #[inline(always)]
    pub fn gather(vectors: [DVec3; N]) -> Self {
        Self {
            x: Lanes(from_fn(|i| vectors[i].x)),
            y: Lanes(from_fn(|i| vectors[i].y)),
            z: Lanes(from_fn(|i| vectors[i].z)),
        }
    }

    /// Lane `i` as a vector.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> DVec3 {
        DVec3::new(self.x.0[i], self.y.0[i], self.z.0[i])
    }

    /// Dot products.
    #[inline(always)]
    pub fn dot(self, o: Self) -> Lanes<N> {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Cross products.
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }

    /// Lane-wise component products.
    #[inline(always)]
    pub fn mul_elements(self, o: Self) -> Self {
        Self {
            x: self.x * o.x,
            y: self.y * o.y,
            z: self.z * o.z,
        }
    }

    /// Lane-wise component quotients.
    #[inline(always)]
    pub fn div_elements(self, o: Self) -> Self {
        Self {
            x: self.x / o.x,
            y: self.y / o.y,
            z: self.z / o.z,
        }
    }

    /// Every vector scaled by its lane's `s`.
    #[inline(always)]
    pub fn scale(self, s: Lanes<N>) -> Self {
        Self {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    /// Lane-wise choice of whole vectors.
    #[inline(always)]
    pub fn select(mask: Mask<N>, when_true: Self, when_false: Self) -> Self {
        Self {
            x: Lanes::select(mask, when_true.x, when_false.x),
            y: Lanes::select(mask, when_true.y, when_false.y),
            z: Lanes::select(mask, when_true.z, when_false.z),
        }
    }
}

impl<const N: usize> Add for Vec3Lanes<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl<const N: usize> Sub for Vec3Lanes<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

/// `N` quaternions in structure-of-arrays form, `w + x i + y j + z k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuatLanes<const N: usize> {
    /// Imaginary part.
    pub v: Vec3Lanes<N>,
    /// Real part.
    pub w: Lanes<N>,
}

impl<const N: usize> QuatLanes<N> {
    /// Gathers `N` quaternions.
    #[inline(always)]
    pub fn gather(quats: [DQuat; N]) -> Self {
        Self {
            v: Vec3Lanes::gather(from_fn(|i| DVec3::new(quats[i].x, quats[i].y, quats[i].z))),
            w: Lanes(from_fn(|i| quats[i].w)),
        }
    }

    /// Lane `i` as a quaternion.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> DQuat {
        DQuat::from_xyzw(self.v.x.0[i], self.v.y.0[i], self.v.z.0[i], self.w.0[i])
    }

    /// Hamilton products `self * rhs`, with `rhs = (w, v)` given by parts: rotation by `self`
    /// after `rhs` when both are rotations.
    #[inline(always)]
    pub fn mul_parts(self, rhs_v: Vec3Lanes<N>, rhs_w: Lanes<N>) -> Self {
        Self {
            v: rhs_v.scale(self.w) + self.v.scale(rhs_w) + self.v.cross(rhs_v),
            w: self.w * rhs_w - self.v.dot(rhs_v),
        }
    }

    /// Quaternions whose norm is within about 1e-8 of 1, brought back to unit norm to round-off.
    ///
    /// One Newton step for `1 / sqrt(n)` about `n = 1`, `(3 - n) / 2`, has error `O((n - 1)^2)`:
    /// below round-off for the products of unit quaternions this is meant for, and without the
    /// square root and division of a full normalization.
    #[inline(always)]
    pub fn renormalize(self) -> Self {
        let inverse_norm = (Lanes::splat(3.0) - (self.v.dot(self.v) + self.w * self.w)) * 0.5;
        Self {
            v: self.v.scale(inverse_norm),
            w: self.w * inverse_norm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_quaternion_product_matches_glam() {
        let a = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.2, 1.1);
        let b = DQuat::from_euler(glam::EulerRot::ZYX, -1.3, 0.5, 0.25);
        let lanes = QuatLanes::<2>::gather([a, b]);
        let rhs = QuatLanes::<2>::gather([b, a]);
        let product = lanes.mul_parts(rhs.v, rhs.w);
        for (i, expected) in [a * b, b * a].into_iter().enumerate() {
            let got = product.lane(i);
            assert!((got - expected).length() < 1e-15, "{got} vs {expected}");
        }
        let v = Vec3Lanes::<2>::gather([DVec3::X, DVec3::Y]);
        assert_eq!(v.cross(Vec3Lanes::gather([DVec3::Y, DVec3::Z])).lane(0), DVec3::Z);
        assert_eq!(v.cross(Vec3Lanes::gather([DVec3::Y, DVec3::Z])).lane(1), DVec3::X);
    }
}
