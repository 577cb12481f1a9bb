//! The energy fix of the orientation update (Su, Schroeder and Fedkiw 2009, section 2).
//!
//! After a base update the body has the right angular momentum `L` but, at frame-rate steps, the
//! wrong kinetic energy `KE = 1/2 L^T I^-1 L` because the inertia tensor `I = R I_0 R^T` was
//! rotated by an approximate `R`. The fix rotates the body once more, `R <- exp(eps s*) R` about a
//! unit axis `s` orthogonal to `L`, which leaves `L` untouched and moves the energy along
//!
//! ```text
//! KE(eps) = KE cos^2 eps - a sin eps cos eps + b sin^2 eps                    (Su eq. 3-4)
//!         = (KE + b)/2 + (r/2) cos(2 eps + phi)
//! a = (s x L) . w,   b = 1/2 (s x L)^T I^-1 (s x L),   c = KE - b,   k = KE - KE_0,
//! n = c - 2k,   r = sqrt(c^2 + a^2),   phi = atan2(a, c),   g = a^2 + 4k(c - k) = r^2 - n^2.
//! ```
//!
//! The target `KE_0` is reachable along `s` iff `g >= 0`, at `2 eps + phi = +-acos(n / r)`.
//!
//! # Root choice (erratum)
//!
//! The paper's closed form (eq. 6 with `p_c = +1`, `p_b = -sgn a`, and its section 2.3 variant)
//! picks a root meant for small corrections and misses `KE_0` in a few percent of large
//! corrections on the fallback axes (see `../shared/papers/README.md`). We solve for the root of
//! smallest `|eps|` directly: with `psi = 2 eps` and `sigma = sgn a`,
//!
//! ```text
//! cos psi = (n c + |a| sqrt g) / r^2,     sin psi = (sigma sqrt(g) c - n a) / r^2
//!                                                 = 4 k (c - k) / (sigma sqrt(g) c + n a),
//! ```
//!
//! the largest `cos psi` of the two roots, i.e. the smallest rotation. The second form of
//! `sin psi` avoids cancellation for small corrections. The rotation quaternion needs
//! `eps / 2 = psi / 4`, which bisecting the angle twice gives with square roots only.
//!
//! # Axis choice and safeguards (Su sections 2.3 and 2.4)
//!
//! - No fix when `|k|` is at round-off relative to the energy, or when the energy is negligible.
//! - Primary axis `s = L x w / |L x w|`, the locally optimal one (then `a = |L x w| > 0`).
//! - Fallback when `a / KE` is too small for `s` to be well defined, or `g < 0`: `s = L x r_max`
//!   when the energy must fall (`r_max` the axis of largest moment: aligning `L` with it gives the
//!   least energy this `L` allows) and `s = L x r_min` when it must rise. The rotation family about
//!   the fallback axis reaches the extreme energy, so `KE_0` is always inside it unless round-off
//!   pushed `KE_0` outside `[|L|^2 / 2 I_max, |L|^2 / 2 I_min]`: that case is reported, not hidden.

use glam::{DQuat, DVec3};

use crate::lanes::{Lanes, Mask, QuatLanes, Vec3Lanes};

/// Tunables of the energy fix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyFixSettings {
    /// Energy errors `|KE - KE_0|` at or below this fraction of `KE_0` are round-off and left
    /// alone. Dimensionless; default `2^-50` (about four machine epsilons).
    pub round_off: f64,
    /// Rotational kinetic energy, J, at or below which no fix is made: the error cannot matter.
    /// Default 0, so only a body that does not rotate is skipped; raise it to save work on slow
    /// debris.
    pub negligible_energy: f64,
    /// Smallest `a / KE = 2 tan(angle between L and w)` for which the primary axis `L x w` is
    /// trusted; below it the axis direction is dominated by round-off and a fallback axis is
    /// used. Dimensionless; default `1e-6`.
    pub min_slope: f64,
}

impl Default for EnergyFixSettings {
    fn default() -> Self {
        Self {
            round_off: f64::EPSILON * 4.0,
            negligible_energy: 0.0,
            min_slope: 1e-6,
        }
    }
}

/// Which rotation axis the fix used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixAxis {
    /// `s = L x w`, the locally optimal axis.
    Primary,
    /// `s = L x r_max`: the energy had to fall and the primary axis could not reach the target.
    TowardLargestMoment,
    /// `s = L x r_min`: the energy had to rise and the primary axis could not reach the target.
    TowardSmallestMoment,
}

/// What the energy fix did to one body in one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EnergyFixOutcome {
    /// The energy error was at round-off; nothing was changed.
    WithinRoundOff,
    /// The rotational energy was at or below the negligible threshold; nothing was changed.
    NegligibleEnergy,
    /// The body was rotated about `axis` to restore the target energy.
    Rotated {
        /// The axis that was used.
        axis: FixAxis,
        /// Sine of the rotation angle. The angle lies in `[-pi/2, pi/2]`, so this determines it
        /// (see [`EnergyFixOutcome::angle`]); the sine is kept because it costs no library call.
        sin_angle: f64,
    },
    /// The target lies outside the energies this angular momentum allows (only round-off can do
    /// that); nothing was changed. `excess` is `KE - KE_0`, J.
    Unreachable {
        /// Energy error left in place, J.
        excess: f64,
    },
}

impl EnergyFixOutcome {
    /// The rotation angle of the fix in radians, in `[-pi/2, pi/2]`; zero when nothing was rotated.
    pub fn angle(&self) -> f64 {
        match self {
            Self::Rotated { sin_angle, .. } => sin_angle.clamp(-1.0, 1.0).asin(),
            _ => 0.0,
        }
    }
}

/// Applies the energy fix in the body frame.
///
/// `orientation` is the body-to-world rotation after the base update, `momentum_body` the body
/// frame angular momentum `R^T L` (kg m^2/s), `inverse_inertia` the inverse principal moments,
/// `target` the kinetic energy `KE_0` (J) the step should have kept. Returns the corrected
/// orientation and body-frame angular momentum (the world-frame `L` is unchanged) and what was done.
/// The orientation is not renormalized (it stays unit to a few ulp); the caller does that once.
pub fn fix_energy_body_frame(
    orientation: DQuat,
    momentum_body: DVec3,
    inverse_inertia: DVec3,
    target: f64,
    settings: &EnergyFixSettings,
) -> (DQuat, DVec3, EnergyFixOutcome) {
    let (q, l, [result]) = fix_energy_lanes(
        QuatLanes::gather([orientation]),
        Vec3Lanes::gather([momentum_body]),
        Vec3Lanes::gather([inverse_inertia]),
        Lanes([target]),
        settings,
    );
    match result {
        LaneFix::Done(outcome) => (q.lane(0), l.lane(0), outcome),
        LaneFix::NeedsFallback => fix_on_fallback_axis(orientation, momentum_body, inverse_inertia, target, settings),
    }
}

/// What the lane-parallel fix did for one lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LaneFix {
    /// Finished: the lane's outputs are final.
    Done(EnergyFixOutcome),
    /// The primary axis could not reach the target; the lane's outputs are its inputs, and
    /// [`fix_on_fallback_axis`] must finish it.
    NeedsFallback,
}

/// The common path of the fix for `N` bodies at once: the safeguards and the primary axis.
#[inline(always)]
pub(crate) fn fix_energy_lanes<const N: usize>(
    orientation: QuatLanes<N>,
    momentum_body: Vec3Lanes<N>,
    inverse_inertia: Vec3Lanes<N>,
    target: Lanes<N>,
    settings: &EnergyFixSettings,
) -> (QuatLanes<N>, Vec3Lanes<N>, [LaneFix; N]) {
    let l = momentum_body;
    let w = l.mul_elements(inverse_inertia);
    let energy = l.dot(w) * 0.5;
    let excess = energy - target;
    let negligible = !energy.gt(Lanes::splat(settings.negligible_energy.max(0.0)));
    let round_off = excess.abs().le(target.max(energy) * settings.round_off);

    let primary = l.cross(w);
    let slope_ok = primary
        .dot(primary)
        .gt(energy * energy * (settings.min_slope * settings.min_slope));
    // Lanes that skip or fall back still run the arithmetic and discard it (possibly NaN, which is
    // harmless there): branch-free lanes are what make the batch fast.
    let usable = slope_ok & !negligible & !round_off;
    // L x w is orthogonal to L up to round-off relative to |L x w|, which the slope test keeps
    // at least min_slope KE: no projection needed (the fallback axes, built from arbitrary
    // directions, are projected).
    let axis = primary.scale(Lanes::splat(1.0) / primary.dot(primary).sqrt());
    let (root, reachable) = solve_along(axis, l, w, inverse_inertia, energy, excess);
    let (q, rotated) = rotate_by_root(orientation, l, &root);

    let mut results = [LaneFix::NeedsFallback; N];
    let mut apply = Mask::splat(false);
    for (i, result) in results.iter_mut().enumerate() {
        *result = if negligible.get(i) {
            LaneFix::Done(EnergyFixOutcome::NegligibleEnergy)
        } else if round_off.get(i) {
            LaneFix::Done(EnergyFixOutcome::WithinRoundOff)
        } else if usable.get(i) && reachable.get(i) {
            apply.set(i, true);
            LaneFix::Done(EnergyFixOutcome::Rotated {
                axis: FixAxis::Primary,
                sin_angle: root.sin_angle.0[i],
            })
        } else {
            LaneFix::NeedsFallback
        };
    }
    let q = QuatLanes {
        v: Vec3Lanes::select(apply, q.v, orientation.v),
        w: Lanes::select(apply, q.w, orientation.w),
    };
    (q, Vec3Lanes::select(apply, rotated, l), results)
}

/// Finishes a body whose primary axis failed: rotate about `L x r_max` or `L x r_min`.
fn fix_on_fallback_axis(
    orientation: DQuat,
    momentum_body: DVec3,
    inverse_inertia: DVec3,
    target: f64,
    settings: &EnergyFixSettings,
) -> (DQuat, DVec3, EnergyFixOutcome) {
    let l = momentum_body;
    let w = l * inverse_inertia;
    let energy = 0.5 * l.dot(w);
    let excess = energy - target;
    let unchanged = (orientation, momentum_body, EnergyFixOutcome::Unreachable { excess });
    let (axis, principal) = if excess > 0.0 {
        (
            FixAxis::TowardLargestMoment,
            extreme_axis(inverse_inertia, Extreme::LargestMoment),
        )
    } else {
        (
            FixAxis::TowardSmallestMoment,
            extreme_axis(inverse_inertia, Extreme::SmallestMoment),
        )
    };
    let s = l.cross(principal);
    // L already along the extreme axis means the energy is already extreme: nothing to gain.
    if s.length() <= settings.min_slope * l.length() {
        return unchanged;
    }
    let lanes = |v: DVec3| Vec3Lanes::gather([v]);
    let s = perpendicular_unit(lanes(s), lanes(l));
    let (root, reachable) = solve_along(
        s,
        lanes(l),
        lanes(w),
        lanes(inverse_inertia),
        Lanes([energy]),
        Lanes([excess]),
    );
    if !reachable.get(0) {
        return unchanged;
    }
    let (q, rotated) = rotate_by_root(QuatLanes::gather([orientation]), lanes(l), &root);
    let outcome = EnergyFixOutcome::Rotated {
        axis,
        sin_angle: root.sin_angle.0[0],
    };
    (q.lane(0), rotated.lane(0), outcome)
}

/// Solved rotations: unit axes `s` (body frame), the sine of the angle `eps`, and the sine and
/// cosine of `eps / 2`.
struct Root<const N: usize> {
    axis: Vec3Lanes<N>,
    sin_angle: Lanes<N>,
    cos_half_angle: Lanes<N>,
    sin_half_angle: Lanes<N>,
}

/// Solves `KE(eps) = KE - excess` along the unit axes `s` (orthogonal to `l`), for the root of
/// smallest `|eps|`; the mask is false where the target is not reachable along `s` (`g < 0`).
///
/// With `psi = 2 eps`, `(X, Y) = r^2 (cos psi, sin psi)` comes from the closed form in the module
/// docs, unnormalized. Halving an angle is bisecting with the unit x axis: `(X + R, Y)` with
/// `R = |(X, Y)|` points along `eps` (or, without cancellation in the left half-plane,
/// `(|Y|, sgn Y (R - X))`), and bisecting once more gives the direction of `eps / 2`, which is
/// normalized once. Three square roots and one division, and no trigonometric call.
#[inline(always)]
fn solve_along<const N: usize>(
    s: Vec3Lanes<N>,
    l: Vec3Lanes<N>,
    w: Vec3Lanes<N>,
    inverse_inertia: Vec3Lanes<N>,
    energy: Lanes<N>,
    excess: Lanes<N>,
) -> (Root<N>, Mask<N>) {
    let zero = Lanes::splat(0.0);
    let s_cross_l = s.cross(l);
    let a = s_cross_l.dot(w);
    let b = s_cross_l.dot(s_cross_l.mul_elements(inverse_inertia)) * 0.5;
    let c = energy - b;
    let k = excess;
    let n = c - k * 2.0;
    let g = a * a + k * 4.0 * (c - k);
    let r2 = c * c + a * a;
    let reachable = g.ge(zero) & r2.gt(zero);
    let sqrt_g = g.sqrt();
    let sigma_sqrt_g = Lanes::select(a.lt(zero), -sqrt_g, sqrt_g);
    let x = n * c + a.abs() * sqrt_g;
    let direct = sigma_sqrt_g * c - n * a;
    let conjugate = sigma_sqrt_g * c + n * a;
    // direct * conjugate = 4 k (c - k) r^2: take whichever form does not cancel.
    let y = Lanes::select(
        conjugate.abs().gt(direct.abs()),
        k * 4.0 * (c - k) * r2 / conjugate,
        direct,
    );
    let radius = (x * x + y * y).sqrt();
    let right = x.ge(zero);
    let along_x = Lanes::select(right, x + radius, y.abs());
    let along_y = Lanes::select(right | y.ge(zero), Lanes::select(right, y, radius - x), x - radius);
    let length = (along_x * along_x + along_y * along_y).sqrt();
    let half_x = along_x + length;
    let inverse = Lanes::splat(1.0) / (half_x * half_x + along_y * along_y).sqrt();
    let (cos_half_angle, sin_half_angle) = (half_x * inverse, along_y * inverse);
    let root = Root {
        axis: s,
        sin_angle: cos_half_angle * sin_half_angle * 2.0,
        cos_half_angle,
        sin_half_angle,
    };
    (root, reachable)
}

/// Rotates bodies by their roots: `R' = exp(eps s_world*) R = R exp(eps s*)`,
/// `L_b' = exp(-eps s*) L_b`.
#[inline(always)]
fn rotate_by_root<const N: usize>(
    orientation: QuatLanes<N>,
    l: Vec3Lanes<N>,
    root: &Root<N>,
) -> (QuatLanes<N>, Vec3Lanes<N>) {
    let s = root.axis;
    let q = orientation.mul_parts(s.scale(root.sin_half_angle), root.cos_half_angle);
    // Rodrigues for angle -eps, written as L plus a small increment,
    //   L' = L - sin(eps) (s x L) + (1 - cos eps) (s (s . L) - L),   1 - cos eps = 2 sin^2(eps/2).
    // The form `L cos(eps) + ...` would scale all of L by the rounding error of cos(eps), the same
    // factor for every component and, for bodies in quasi-periodic motion, the same sign step after
    // step: measured as 1e-12 relative drift of |L| over 10,000 steps, against a few 1e-15 here.
    let versine = root.sin_half_angle * root.sin_half_angle * 2.0;
    let increment = s.cross(l).scale(-root.sin_angle) + (s.scale(s.dot(l)) - l).scale(versine);
    (q, l + increment)
}

/// `v` with its component along `l` removed, normalized. Both must be non-zero.
#[inline(always)]
fn perpendicular_unit<const N: usize>(v: Vec3Lanes<N>, l: Vec3Lanes<N>) -> Vec3Lanes<N> {
    let perpendicular = v - l.scale(l.dot(v) / l.dot(l));
    perpendicular.scale(Lanes::splat(1.0) / perpendicular.dot(perpendicular).sqrt())
}

enum Extreme {
    LargestMoment,
    SmallestMoment,
}

/// The body axis of the largest or smallest principal moment.
fn extreme_axis(inverse_inertia: DVec3, which: Extreme) -> DVec3 {
    let inv = inverse_inertia.to_array();
    let mut best = 0;
    for i in 1..3 {
        let better = match which {
            Extreme::LargestMoment => inv[i] < inv[best],
            Extreme::SmallestMoment => inv[i] > inv[best],
        };
        if better {
            best = i;
        }
    }
    let mut axis = DVec3::ZERO;
    axis[best] = 1.0;
    axis
}
