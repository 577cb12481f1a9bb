//! Six-component quantities of one body in the solver: a velocity (m/s and rad/s), one body's block
//! of a row's Jacobian, or of its response `M^-1 J^T` (per N s).
//!
//! The sweeps spend most of their time on two operations per row, `J v` and `v += M^-1 J^T delta`.
//! Here a twist is three pairs of lanes, `[linear x, linear y]`, `[angular x, angular y]` and
//! `[linear z, angular z]` (48 bytes, no padding: a prepared row holds two twists and a large
//! island's rows are streamed from memory several times a step), and both operations are
//! lane-wise: SSE2 on x86-64 (present on every such machine; the compiler does not find this form
//! by itself), plain pairs elsewhere, and four-wide where the sweeps are compiled for AVX
//! (pgs.rs). A dot product's products are summed in one fixed order, `(p0 + p1) + (p2 + p3)` with
//! `p0 = lx lx' + ax ax'`, `p1 = ly ly' + ay ay'`, `p2 = lz lz' + az az'` and `p3 = 0`, and no
//! fused multiply-add is used, so the result has the same bits on every path (the sweeps' batches
//! sum in that order too, lanes.rs).

use glam::DVec3;

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m128d, _mm_add_pd, _mm_add_sd, _mm_cvtsd_f64, _mm_mul_pd, _mm_set_pd, _mm_set1_pd, _mm_setzero_pd,
    _mm_unpackhi_pd,
};

/// Two `f64` lanes: one SSE2 register on x86-64.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct Pair(__m128d);

// SAFETY (every `unsafe` block below): these intrinsics need only SSE2, which every x86-64
// processor executes (it is the architecture's baseline, always enabled for this target), and they
// touch nothing but their register arguments.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
impl Pair {
    #[inline]
    fn zero() -> Self {
        unsafe { Self(_mm_setzero_pd()) }
    }
    #[inline]
    fn new(low: f64, high: f64) -> Self {
        unsafe { Self(_mm_set_pd(high, low)) }
    }
    #[inline]
    fn splat(value: f64) -> Self {
        unsafe { Self(_mm_set1_pd(value)) }
    }
    #[inline]
    fn low(self) -> f64 {
        unsafe { _mm_cvtsd_f64(self.0) }
    }
    #[inline]
    fn high(self) -> f64 {
        unsafe { _mm_cvtsd_f64(_mm_unpackhi_pd(self.0, self.0)) }
    }
    #[inline]
    fn add(self, other: Self) -> Self {
        unsafe { Self(_mm_add_pd(self.0, other.0)) }
    }
    #[inline]
    fn mul(self, other: Self) -> Self {
        unsafe { Self(_mm_mul_pd(self.0, other.0)) }
    }
    /// `low + high`.
    #[inline]
    fn sum(self) -> f64 {
        unsafe { _mm_cvtsd_f64(_mm_add_sd(self.0, _mm_unpackhi_pd(self.0, self.0))) }
    }
}

/// Two `f64` lanes.
#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug)]
struct Pair([f64; 2]);

#[cfg(not(target_arch = "x86_64"))]
impl Pair {
    #[inline]
    fn zero() -> Self {
        Self([0.0; 2])
    }
    #[inline]
    fn new(low: f64, high: f64) -> Self {
        Self([low, high])
    }
    #[inline]
    fn splat(value: f64) -> Self {
        Self([value; 2])
    }
    #[inline]
    fn low(self) -> f64 {
        self.0[0]
    }
    #[inline]
    fn high(self) -> f64 {
        self.0[1]
    }
    #[inline]
    fn add(self, other: Self) -> Self {
        Self([self.0[0] + other.0[0], self.0[1] + other.0[1]])
    }
    #[inline]
    fn mul(self, other: Self) -> Self {
        Self([self.0[0] * other.0[0], self.0[1] * other.0[1]])
    }
    /// `low + high`.
    #[inline]
    fn sum(self) -> f64 {
        self.0[0] + self.0[1]
    }
}

/// The lane-wise products of a dot product before they are summed: four lanes, of which the
/// fourth is always zero and so not held.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lanes {
    /// `[p0, p1]`.
    low: Pair,
    /// `p2` (`p3` is zero).
    high: f64,
}

impl Lanes {
    /// Lane-wise `self + other`.
    #[inline]
    pub(crate) fn add(self, other: Self) -> Self {
        Self {
            low: self.low.add(other.low),
            high: self.high + other.high,
        }
    }

    /// `(p0 + p1) + (p2 + p3)`: the one order in which lanes are summed (`p3` is a positive zero,
    /// added so that a negative zero `p2` gives the same bits as a four-lane sum).
    #[inline]
    pub(crate) fn sum(self) -> f64 {
        self.low.sum() + (self.high + 0.0)
    }
}

/// A body's linear and angular parts, as the lanes `[linear x, linear y]`, `[angular x, angular
/// y]` and `[linear z, angular z]`.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Twist {
    linear_xy: Pair,
    angular_xy: Pair,
    z: Pair,
}

impl Default for Twist {
    /// Both parts zero.
    fn default() -> Self {
        let zero = Pair::zero();
        Self {
            linear_xy: zero,
            angular_xy: zero,
            z: zero,
        }
    }
}

impl Twist {
    /// The twist with these linear and angular parts.
    #[inline]
    pub(crate) fn new(linear: DVec3, angular: DVec3) -> Self {
        Self {
            linear_xy: Pair::new(linear.x, linear.y),
            angular_xy: Pair::new(angular.x, angular.y),
            z: Pair::new(linear.z, angular.z),
        }
    }

    /// The linear part (a velocity in m/s, or a Jacobian's force direction).
    #[inline]
    pub(crate) fn linear(&self) -> DVec3 {
        DVec3::new(self.linear_xy.low(), self.linear_xy.high(), self.z.low())
    }

    /// The angular part (an angular velocity in rad/s, or a Jacobian's torque arm).
    #[inline]
    pub(crate) fn angular(&self) -> DVec3 {
        DVec3::new(self.angular_xy.low(), self.angular_xy.high(), self.z.high())
    }

    /// The six components, linear then angular.
    #[inline]
    pub(crate) fn components(&self) -> [f64; 6] {
        let (l, w) = (self.linear(), self.angular());
        [l.x, l.y, l.z, w.x, w.y, w.z]
    }

    /// Lane-wise `linear * other.linear + angular * other.angular`: the products a dot product
    /// sums.
    #[inline]
    pub(crate) fn products(&self, other: &Self) -> Lanes {
        Lanes {
            low: self
                .linear_xy
                .mul(other.linear_xy)
                .add(self.angular_xy.mul(other.angular_xy)),
            high: self.z.mul(other.z).sum(),
        }
    }

    /// `self . other` over all six components (`J v` for a Jacobian block and a velocity).
    #[inline]
    pub(crate) fn dot(&self, other: &Self) -> f64 {
        self.products(other).sum()
    }

    /// `self + other`, component by component.
    #[inline]
    pub(crate) fn plus(&self, other: &Self) -> Self {
        Self {
            linear_xy: self.linear_xy.add(other.linear_xy),
            angular_xy: self.angular_xy.add(other.angular_xy),
            z: self.z.add(other.z),
        }
    }

    /// `self + step * scale`: a velocity after the impulse `scale` along the response `step`.
    #[inline]
    pub(crate) fn add_scaled(&self, step: &Self, scale: f64) -> Self {
        let scale = Pair::splat(scale);
        Self {
            linear_xy: self.linear_xy.add(step.linear_xy.mul(scale)),
            angular_xy: self.angular_xy.add(step.angular_xy.mul(scale)),
            z: self.z.add(step.z.mul(scale)),
        }
    }

    /// The velocity change `M^-1 J^T` per unit impulse of a body with `inverse_mass` (1/kg) and the
    /// world-frame `inverse_inertia` (1/(kg m^2), column by column), this twist being its block of
    /// a Jacobian `J`: the products of [`SolverBody::response`](crate::body::SolverBody::response)
    /// in the same order, so the same bits.
    #[inline]
    pub(crate) fn response(&self, inverse_mass: f64, inverse_inertia: &[f64; 9]) -> Self {
        let m = inverse_inertia;
        let (ax, ay, az) = (self.angular_xy.low(), self.angular_xy.high(), self.z.high());
        let column = |c: usize| Pair::new(m[c], m[c + 1]);
        Self {
            linear_xy: self.linear_xy.mul(Pair::splat(inverse_mass)),
            angular_xy: column(0)
                .mul(Pair::splat(ax))
                .add(column(3).mul(Pair::splat(ay)))
                .add(column(6).mul(Pair::splat(az))),
            z: Pair::new(self.z.low() * inverse_mass, m[2] * ax + m[5] * ay + m[8] * az),
        }
    }

    /// `(self + other) / 2`.
    #[inline]
    pub(crate) fn mean(&self, other: &Self) -> Self {
        let half = Pair::splat(0.5);
        Self {
            linear_xy: self.linear_xy.add(other.linear_xy).mul(half),
            angular_xy: self.angular_xy.add(other.angular_xy).mul(half),
            z: self.z.add(other.z).mul(half),
        }
    }

    /// Whether every component is finite.
    #[inline]
    pub(crate) fn is_finite(&self) -> bool {
        self.linear().is_finite() && self.angular().is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twist_dot_and_add_scaled_match_the_three_component_formulas() {
        let a = Twist::new(DVec3::new(1.0, -2.0, 3.0), DVec3::new(0.5, 0.25, -4.0));
        let b = Twist::new(DVec3::new(-0.5, 1.5, 2.0), DVec3::new(2.0, -1.0, 0.125));
        let expected = a.linear().dot(b.linear()) + a.angular().dot(b.angular());
        assert!((a.dot(&b) - expected).abs() <= 1e-15 * expected.abs().max(1.0));
        let moved = a.add_scaled(&b, -2.0);
        assert_eq!(moved.linear(), a.linear() + b.linear() * -2.0);
        assert_eq!(moved.angular(), a.angular() + b.angular() * -2.0);
        assert_eq!(a.mean(&b).linear(), (a.linear() + b.linear()) * 0.5);
        assert_eq!(a.components(), [1.0, -2.0, 3.0, 0.5, 0.25, -4.0]);
        assert!(a.is_finite() && !Twist::new(DVec3::NAN, DVec3::ZERO).is_finite());
    }
}
