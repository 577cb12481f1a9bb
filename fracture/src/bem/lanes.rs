//! Four f64 lanes with lane-wise arithmetic, for the inner loops of the point sums: a portable
//! form (an array, which the compiler turns into whatever vector registers the target has) and,
//! on x86-64 machines that have it, one 256-bit AVX register.
//!
//! Both forms perform the same IEEE operations in the same order, and neither contracts a
//! multiply and an add into a fused one, so a sum computed through either has the same bits:
//! the AVX form is chosen at run time ([`avx_available`]) without changing any result.
//!
//! The module is private to the crate on purpose: an [`Avx`] value runs AVX instructions from
//! safe methods, which is sound only because every such value is made inside a function this
//! crate enters after detecting AVX. The constraint solver keeps its own four-lane type
//! (`shatter-solver`'s wide.rs) private for the same reason, rather than share one public type
//! that safe code elsewhere could misuse.

use core::ops::{Add, Mul, Sub};

/// Lanes per vector.
pub const LANES: usize = 4;

/// Four f64 lanes.
pub trait Lanes: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {
    /// Every lane `v`.
    fn splat(v: f64) -> Self;
    /// The lanes `v`.
    fn load(v: &[f64; LANES]) -> Self;
    /// `1 / v` lane by lane, zero where `v` is not greater than zero (NaN included).
    fn recip_or_zero(self) -> Self;
    /// The square root, lane by lane.
    fn sqrt(self) -> Self;
    /// The lanes as an array.
    fn to_array(self) -> [f64; LANES];
}

/// The portable form: an array.
#[derive(Clone, Copy, Debug)]
pub struct Portable([f64; LANES]);

impl Lanes for Portable {
    #[inline(always)]
    fn splat(v: f64) -> Self {
        Self([v; LANES])
    }

    #[inline(always)]
    fn load(v: &[f64; LANES]) -> Self {
        Self(*v)
    }

    #[inline(always)]
    fn recip_or_zero(self) -> Self {
        Self(self.0.map(|v| if v > 0.0 { 1.0 / v } else { 0.0 }))
    }

    #[inline(always)]
    fn sqrt(self) -> Self {
        Self(self.0.map(f64::sqrt))
    }

    #[inline(always)]
    fn to_array(self) -> [f64; LANES] {
        self.0
    }
}

impl Add for Portable {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]])
    }
}

impl Sub for Portable {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]])
    }
}

impl Mul for Portable {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let (a, b) = (self.0, o.0);
        Self([a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]])
    }
}

/// Whether this machine runs [`Avx`] (checked once, then cached by the standard library).
#[inline]
pub fn avx_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx::Avx;

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx {
    //! The AVX form.
    //!
    //! SAFETY (every `unsafe` block here): the intrinsics need AVX. A value of [`Avx`] is made
    //! only by code that runs inside a function compiled with `#[target_feature(enable =
    //! "avx")]`, which callers enter only after [`super::avx_available`] returned true; these
    //! methods are always inlined into that function.

    use super::{LANES, Lanes};
    use core::arch::x86_64::{
        __m256d, _CMP_GT_OQ, _mm256_add_pd, _mm256_and_pd, _mm256_cmp_pd, _mm256_div_pd, _mm256_loadu_pd,
        _mm256_mul_pd, _mm256_set1_pd, _mm256_setzero_pd, _mm256_sqrt_pd, _mm256_storeu_pd, _mm256_sub_pd,
    };
    use core::ops::{Add, Mul, Sub};

    /// One 256-bit register of four f64.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx(__m256d);

    impl Lanes for Avx {
        #[inline(always)]
        fn splat(v: f64) -> Self {
            Self(unsafe { _mm256_set1_pd(v) })
        }

        #[inline(always)]
        fn load(v: &[f64; LANES]) -> Self {
            // Also SAFETY: `v` is four readable f64, the width of one unaligned load.
            Self(unsafe { _mm256_loadu_pd(v.as_ptr()) })
        }

        #[inline(always)]
        fn recip_or_zero(self) -> Self {
            // 1 / v, then the lanes where v > 0 (ordered, so NaN gives zero) kept.
            Self(unsafe {
                let positive = _mm256_cmp_pd::<_CMP_GT_OQ>(self.0, _mm256_setzero_pd());
                _mm256_and_pd(_mm256_div_pd(_mm256_set1_pd(1.0), self.0), positive)
            })
        }

        #[inline(always)]
        fn sqrt(self) -> Self {
            Self(unsafe { _mm256_sqrt_pd(self.0) })
        }

        #[inline(always)]
        fn to_array(self) -> [f64; LANES] {
            let mut out = [0.0; LANES];
            // Also SAFETY: `out` is four writable f64.
            unsafe { _mm256_storeu_pd(out.as_mut_ptr(), self.0) };
            out
        }
    }

    impl Add for Avx {
        type Output = Self;
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Self(unsafe { _mm256_add_pd(self.0, o.0) })
        }
    }

    impl Sub for Avx {
        type Output = Self;
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Self(unsafe { _mm256_sub_pd(self.0, o.0) })
        }
    }

    impl Mul for Avx {
        type Output = Self;
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            Self(unsafe { _mm256_mul_pd(self.0, o.0) })
        }
    }
}
