//! Four `f64` lanes with the arithmetic the batched sweeps need (lanes.rs), in two builds that
//! give the same bits: AVX2 registers where the processor has them, plain arrays elsewhere.
//!
//! Every operation is lane-wise and exact in IEEE arithmetic (add, subtract, multiply, negate,
//! absolute value, compare, select); the clamp and the compares are defined as the scalar code
//! defines them, NaN included, so the two builds cannot differ. No fused multiply-add is used.

/// Lanes of a [`Wide`] value.
pub(crate) const WIDTH: usize = 4;

/// One `f64` per lane.
pub(crate) type Lane = [f64; WIDTH];

/// Four `f64` lanes and their lane-wise operations.
pub(crate) trait Wide: Copy {
    /// Four lane flags, the result of a compare.
    type Mask: Copy;
    /// The lanes of `lane`.
    fn load(lane: &Lane) -> Self;
    /// The lanes as an array.
    fn store(self) -> Lane;
    /// `value` in every lane.
    fn splat(value: f64) -> Self;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    /// `pgs::clamp` per lane: `value < lower ? lower : value`, then `> upper ? upper : that`.
    fn clamp(self, lower: Self, upper: Self) -> Self;
    /// `self != 0` (true for NaN).
    fn non_zero(self) -> Self::Mask;
    /// `self > other` (false for NaN).
    fn greater(self, other: Self) -> Self::Mask;
    /// `!(self <= other)` (true for NaN).
    fn not_at_most(self, other: Self) -> Self::Mask;
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// `mask ? a : b` per lane.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
    /// Whether any lane of `mask` is set.
    fn any(mask: Self::Mask) -> bool;
    /// The lanes of `mask`.
    fn flags(mask: Self::Mask) -> [bool; 4];
}

/// Plain arrays: the build for every machine.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable(Lane);

impl Portable {
    #[inline(always)]
    fn map(self, other: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        let (a, b) = (self.0, other.0);
        Self([f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])])
    }

    #[inline(always)]
    fn test(self, other: Self, f: impl Fn(f64, f64) -> bool) -> [bool; 4] {
        let (a, b) = (self.0, other.0);
        [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])]
    }
}

impl Wide for Portable {
    type Mask = [bool; 4];
    #[inline(always)]
    fn load(lane: &Lane) -> Self {
        Self(*lane)
    }
    #[inline(always)]
    fn store(self) -> Lane {
        self.0
    }
    #[inline(always)]
    fn splat(value: f64) -> Self {
        Self([value; 4])
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.map(other, |a, b| a + b)
    }
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        self.map(other, |a, b| a - b)
    }
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        self.map(other, |a, b| a * b)
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(self, |a, _| -a)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(self, |a, _| a.abs())
    }
    #[inline(always)]
    fn clamp(self, lower: Self, upper: Self) -> Self {
        let v = self.0;
        Self([0, 1, 2, 3].map(|k| crate::pgs::clamp(v[k], lower.0[k], upper.0[k])))
    }
    #[inline(always)]
    fn non_zero(self) -> [bool; 4] {
        self.test(self, |a, _| a != 0.0)
    }
    #[inline(always)]
    fn greater(self, other: Self) -> [bool; 4] {
        self.test(other, |a, b| a > b)
    }
    #[inline(always)]
    fn not_at_most(self, other: Self) -> [bool; 4] {
        self.test(other, |a, b| !(a <= b))
    }
    #[inline(always)]
    fn and(a: [bool; 4], b: [bool; 4]) -> [bool; 4] {
        [a[0] & b[0], a[1] & b[1], a[2] & b[2], a[3] & b[3]]
    }
    #[inline(always)]
    fn select(mask: [bool; 4], a: Self, b: Self) -> Self {
        Self([0, 1, 2, 3].map(|k| if mask[k] { a.0[k] } else { b.0[k] }))
    }
    #[inline(always)]
    fn any(mask: [bool; 4]) -> bool {
        mask[0] | mask[1] | mask[2] | mask[3]
    }
    #[inline(always)]
    fn flags(mask: [bool; 4]) -> [bool; 4] {
        mask
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::Avx;

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx {
    use super::{Lane, Wide};
    use core::arch::x86_64::{
        __m256d, _CMP_GT_OQ, _CMP_NEQ_UQ, _CMP_NLE_UQ, _mm256_add_pd, _mm256_and_pd, _mm256_andnot_pd,
        _mm256_blendv_pd, _mm256_cmp_pd, _mm256_loadu_pd, _mm256_max_pd, _mm256_min_pd, _mm256_movemask_pd,
        _mm256_mul_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd, _mm256_xor_pd,
    };

    /// One AVX register of four lanes. Only the AVX2 build of the sweeps (lanes.rs), which runs
    /// after `is_x86_feature_detected!("avx2")`, makes and uses values of this type.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx(__m256d);

    // SAFETY (every `unsafe` block below): these AVX intrinsics touch only their register
    // arguments and, for loads and stores, the four `f64` of a `[f64; 4]` they are given. Values
    // of `Avx` exist only inside code compiled with AVX2 enabled and entered after the processor
    // was found to have it (lanes.rs), so the instructions are always available where they run.
    impl Wide for Avx {
        type Mask = __m256d;
        #[inline(always)]
        fn load(lane: &Lane) -> Self {
            unsafe { Self(_mm256_loadu_pd(lane.as_ptr())) }
        }
        #[inline(always)]
        fn store(self) -> Lane {
            let mut out = [0.0; 4];
            unsafe { _mm256_storeu_pd(out.as_mut_ptr(), self.0) };
            out
        }
        #[inline(always)]
        fn splat(value: f64) -> Self {
            unsafe { Self(_mm256_set1_pd(value)) }
        }
        #[inline(always)]
        fn add(self, other: Self) -> Self {
            unsafe { Self(_mm256_add_pd(self.0, other.0)) }
        }
        #[inline(always)]
        fn sub(self, other: Self) -> Self {
            unsafe { Self(_mm256_sub_pd(self.0, other.0)) }
        }
        #[inline(always)]
        fn mul(self, other: Self) -> Self {
            unsafe { Self(_mm256_mul_pd(self.0, other.0)) }
        }
        #[inline(always)]
        fn neg(self) -> Self {
            unsafe { Self(_mm256_xor_pd(self.0, _mm256_set1_pd(-0.0))) }
        }
        #[inline(always)]
        fn abs(self) -> Self {
            unsafe { Self(_mm256_andnot_pd(_mm256_set1_pd(-0.0), self.0)) }
        }
        #[inline(always)]
        fn clamp(self, lower: Self, upper: Self) -> Self {
            // `max_pd(a, b)` is `a > b ? a : b` and `min_pd(a, b)` is `a < b ? a : b`, NaN giving
            // `b`: exactly `pgs::clamp`'s two compares with the value second.
            unsafe { Self(_mm256_min_pd(upper.0, _mm256_max_pd(lower.0, self.0))) }
        }
        #[inline(always)]
        fn non_zero(self) -> __m256d {
            unsafe { _mm256_cmp_pd::<_CMP_NEQ_UQ>(self.0, _mm256_setzero_pd()) }
        }
        #[inline(always)]
        fn greater(self, other: Self) -> __m256d {
            unsafe { _mm256_cmp_pd::<_CMP_GT_OQ>(self.0, other.0) }
        }
        #[inline(always)]
        fn not_at_most(self, other: Self) -> __m256d {
            unsafe { _mm256_cmp_pd::<_CMP_NLE_UQ>(self.0, other.0) }
        }
        #[inline(always)]
        fn and(a: __m256d, b: __m256d) -> __m256d {
            unsafe { _mm256_and_pd(a, b) }
        }
        #[inline(always)]
        fn select(mask: __m256d, a: Self, b: Self) -> Self {
            unsafe { Self(_mm256_blendv_pd(b.0, a.0, mask)) }
        }
        #[inline(always)]
        fn any(mask: __m256d) -> bool {
            unsafe { _mm256_movemask_pd(mask) != 0 }
        }
        #[inline(always)]
        fn flags(mask: __m256d) -> [bool; 4] {
            let bits = unsafe { _mm256_movemask_pd(mask) };
            [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0]
        }
    }
}
