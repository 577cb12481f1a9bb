//! Energy clamping of row impulse increments (Su, Schroeder and Fedkiw 2009, section 3.2).
//!
//! A row applies an increment `delta` (N s) as the generalized impulse `J^T delta`. Scaled by `eps`,
//! it changes the kinetic energy of the bodies by
//!
//! ```text
//! dKE(eps) = eps P + eps^2 Q / 2,     P = delta (J v),     Q = delta^2 (J M^-1 J^T) >= 0,
//! ```
//!
//! because `sum_i J_i . V_i = J v` and `sum_i J_i^T M_i^-1 J_i = J M^-1 J^T` over the row's two
//! bodies. The non-trivial root is `eps* = -2 P / Q = -2 (J v) / (delta J M^-1 J^T)`, and the
//! decision is the paper's: keep the increment when `eps* >= 1`, scale it by `eps*` when
//! `0 < eps* < 1`, drop it when `eps* <= 0`. This is `shatter_integrators::clamp_pair_impulse`
//! (integrators/src/impulse.rs, which carries the per-body angular impulse of the errata) written
//! for a row, and the two agree exactly for contact rows (tested below).
//!
//! Kinematic partners: the row's `J v` includes the kinematic body's prescribed velocity, so `P` is
//! the dynamic body's energy slope measured in the frame moving with the kinematic body's point
//! velocity, which is Su's remedy that lets a rising platform lift a box. Static partners contribute
//! nothing, as the paper says.
//!
//! # Which state the energy is compared with
//!
//! Su clamps against the kinetic energy of a non-split state. Inside an iterative solve the
//! intermediate iterates are no states at all: clamping each increment against the iterate before
//! it (`budget = 0` below) is strictly monotone but traps impulses. When the normal impulses of a
//! sliding box redistribute during the sweeps, a friction row left above its new bound `mu lambda_n`
//! can only move back by handing the box some of the speed it took, which that rule drops: the box
//! ends with more than Coulomb friction (measured: 5 percent more on a box sliding at 3 m/s).
//!
//! So the solve compares with the energy at the start of the solve, per body pair: each pair of
//! bodies keeps the energy its clamped rows have removed so far, `B >= 0`, and an increment is
//! scaled by the largest `eps` in `[0, 1]` with `dKE(eps) <= B`:
//!
//! ```text
//! eps = 1                                  if P + Q / 2 <= B
//! eps = (-P + sqrt(P^2 + 2 Q B)) / Q       otherwise (the larger root of dKE(eps) = B)
//! ```
//!
//! With `B = 0` this is exactly Su's factor (`-2 P / Q`, or 0 when `P >= 0`), which is what every
//! pair starts with, so the warm start is clamped exactly as the paper clamps an impulse; the
//! energy the clamped warm start then removes is credited to the pairs whose rows applied it
//! (warm_start.rs), and the shock pass's block solve pools the budgets of the pairs around one
//! moving body (shock_block.rs). Because `dKE` of each increment is the exact change of the total
//! kinetic energy, and every budget stays `>= 0`, the kinetic energy after the solve never exceeds
//! the energy before it (static partners; with a kinematic partner the same holds in that
//! partner's frame).

use shatter_integrators::{ClampVerdict, ImpulseClamp};

/// The Su 2009 factor for a row increment: `relative_velocity` is the row's current `J v` (m/s or
/// rad/s), `inverse_effective_mass` its `J M^-1 J^T` (1/kg or 1/(kg m^2), without CFM) and
/// `increment` the proposed impulse change (N s or N m s). The increment may not raise the kinetic
/// energy at all. See the module docs.
pub fn clamp_row_increment(relative_velocity: f64, inverse_effective_mass: f64, increment: f64) -> ImpulseClamp {
    clamp_row_increment_within(relative_velocity, inverse_effective_mass, increment, 0.0)
}

/// The factor for a row increment that may raise the kinetic energy by at most `budget` (J, >= 0):
/// the largest `eps` in `[0, 1]` with `eps P + eps^2 Q / 2 <= budget`. Equal to
/// [`clamp_row_increment`] for `budget = 0`. See the module docs.
pub fn clamp_row_increment_within(
    relative_velocity: f64,
    inverse_effective_mass: f64,
    increment: f64,
    budget: f64,
) -> ImpulseClamp {
    let verdict = |scale, verdict| ImpulseClamp { scale, verdict };
    if increment == 0.0 || !(inverse_effective_mass > 0.0) {
        return verdict(1.0, ClampVerdict::NoEffect);
    }
    let budget = budget.max(0.0);
    let slope = increment * relative_velocity; // P, J
    let curvature = increment * increment * inverse_effective_mass; // Q, J
    if slope + 0.5 * curvature <= budget {
        return verdict(1.0, ClampVerdict::Kept);
    }
    let root = budget_root(slope, curvature, budget);
    if root <= 0.0 {
        verdict(0.0, ClampVerdict::Dropped)
    } else {
        verdict(root.min(1.0), ClampVerdict::Scaled)
    }
}

/// The larger root of `eps P + eps^2 Q / 2 = budget` for an increment's energy slope `slope` (P,
/// J), curvature `curvature` (Q > 0, J) and `budget` (>= 0, J), in the form without cancellation
/// for each sign of P. With `budget = 0` it is `-2 P / Q` for `P < 0` and 0 for `P >= 0` (Su's
/// cases). The increment is scaled by it where it is below 1 and dropped where it is not positive.
#[inline]
pub(crate) fn budget_root(slope: f64, curvature: f64, budget: f64) -> f64 {
    let discriminant = (slope * slope + 2.0 * curvature * budget).sqrt();
    if slope <= 0.0 {
        (discriminant - slope) / curvature
    } else {
        2.0 * budget / (slope + discriminant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::Jacobian;
    use glam::{DQuat, DVec3};
    use proptest::prelude::*;
    use shatter_integrators::{BodyKind, ClampBody, MassProperties, PairImpulse, RigidState, clamp_pair_impulse};

    fn vec3(range: f64) -> impl Strategy<Value = DVec3> {
        (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    fn unit() -> impl Strategy<Value = DVec3> {
        vec3(1.0)
            .prop_filter("non-degenerate", |v| v.length() > 0.1)
            .prop_map(DVec3::normalize)
    }

    /// `J v` and `J M^-1 J^T` of a contact row from integrator bodies.
    fn row_terms(
        jacobian: &Jacobian,
        a: (&RigidState, &MassProperties, BodyKind),
        b: (&RigidState, &MassProperties, BodyKind),
    ) -> (f64, f64) {
        let mut jv = 0.0;
        let mut k = 0.0;
        for ((state, mass, kind), linear, angular) in [
            (a, jacobian.linear_a, jacobian.angular_a),
            (b, jacobian.linear_b, jacobian.angular_b),
        ] {
            if kind != BodyKind::Static {
                jv += linear.dot(state.linear_velocity) + angular.dot(state.angular_velocity());
            }
            if kind == BodyKind::Dynamic {
                k += linear.length_squared() * mass.inverse_mass()
                    + angular.dot(mass.inverse_inertia_world(state.orientation) * angular);
            }
        }
        (jv, k)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The row form of the clamp gives the same scale and verdict as the integrators' pair clamp,
        /// for dynamic, static and kinematic partners.
        #[test]
        fn clamp_row_matches_integrators_pair_clamp(
            mass_a in 0.1..10.0f64, mass_b in 0.1..10.0f64,
            inertia_a in (1.0..2.0f64, 1.0..2.0f64, 1.0..2.0f64),
            inertia_b in (1.0..2.0f64, 1.0..2.0f64, 1.0..2.0f64),
            axis_a in unit(), axis_b in unit(), angle_a in 0.0..3.0f64, angle_b in 0.0..3.0f64,
            v_a in vec3(3.0), w_a in vec3(3.0), v_b in vec3(3.0), w_b in vec3(3.0),
            arm_a in vec3(1.0), arm_b in vec3(1.0), normal in unit(),
            increment in -5.0..5.0f64, kind_b in 0..3usize,
        ) {
            // Moments in [1, 2] always satisfy the triangle inequality.
            let moments = |(x, y, z): (f64, f64, f64)| DVec3::new(x, y, z);
            let mass_a = MassProperties::try_new(mass_a, moments(inertia_a)).unwrap();
            let mass_b = MassProperties::try_new(mass_b, moments(inertia_b)).unwrap();
            let kind_b = [BodyKind::Dynamic, BodyKind::Static, BodyKind::Kinematic][kind_b];
            let state_a = RigidState::moving(DVec3::ZERO, DQuat::from_axis_angle(axis_a, angle_a), v_a, w_a);
            let state_b = RigidState::moving(DVec3::ONE, DQuat::from_axis_angle(axis_b, angle_b), v_b, w_b);
            let jacobian = Jacobian::linear(normal, arm_a, arm_b);
            let (jv, k) = row_terms(
                &jacobian,
                (&state_a, &mass_a, BodyKind::Dynamic),
                (&state_b, &mass_b, kind_b),
            );
            let ours = clamp_row_increment(jv, k, increment);
            let theirs = clamp_pair_impulse(
                ClampBody { kind: BodyKind::Dynamic, state: &state_a, mass: &mass_a },
                ClampBody { kind: kind_b, state: &state_b, mass: &mass_b },
                &PairImpulse { linear: normal * increment, arm_a, arm_b, angular: DVec3::ZERO },
            )
            .unwrap();
            prop_assert_eq!(ours.verdict, theirs.verdict);
            prop_assert!((ours.scale - theirs.scale).abs() <= 1e-9 * theirs.scale.max(1.0),
                "row clamp {} vs pair clamp {}", ours.scale, theirs.scale);
            // The scaled increment never raises the energy: dKE(eps) <= 0 to round-off.
            let eps = ours.scale;
            let energy_change = eps * increment * jv + 0.5 * eps * eps * increment * increment * k;
            prop_assert!(energy_change <= 1e-12 * (jv.abs() * increment.abs() + increment * increment * k));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// With an allowance, the scaled increment raises the energy by at most the allowance, and by
        /// exactly the allowance whenever it was cut (the factor is the largest one allowed).
        #[test]
        fn clamp_with_budget_spends_at_most_the_budget(
            jv in -5.0..5.0f64, k in 0.01..10.0f64, increment in -5.0..5.0f64, budget in 0.0..3.0f64,
        ) {
            let clamp = clamp_row_increment_within(jv, k, increment, budget);
            let eps = clamp.scale;
            prop_assert!((0.0..=1.0).contains(&eps));
            let change = eps * increment * jv + 0.5 * eps * eps * increment * increment * k;
            let scale = budget + jv.abs() * increment.abs() + increment * increment * k;
            prop_assert!(change <= budget + 1e-12 * scale, "change {change} over budget {budget}");
            if eps < 1.0 {
                prop_assert!((change - budget).abs() <= 1e-9 * scale, "cut to {eps} but spent {change} of {budget}");
            }
            if budget == 0.0 {
                prop_assert_eq!(clamp, clamp_row_increment(jv, k, increment));
            }
        }
    }

    #[test]
    fn clamp_verdicts_follow_the_root() {
        // Approaching at 1 m/s on a 1 kg body: the plastic impulse 1 N s removes energy (root 2).
        assert_eq!(clamp_row_increment(-1.0, 1.0, 1.0).verdict, ClampVerdict::Kept);
        // Twice the elastic impulse would reverse to 3 m/s: scaled to the elastic 2 N s.
        let scaled = clamp_row_increment(-1.0, 1.0, 4.0);
        assert_eq!(scaled.verdict, ClampVerdict::Scaled);
        assert!((scaled.scale - 0.5).abs() < 1e-15);
        // Pushing a resting or separating body: dropped.
        assert_eq!(clamp_row_increment(0.0, 1.0, 1.0).verdict, ClampVerdict::Dropped);
        assert_eq!(clamp_row_increment(1.0, 1.0, 1.0).verdict, ClampVerdict::Dropped);
        // Nothing to move, or nothing applied.
        assert_eq!(clamp_row_increment(-1.0, 0.0, 1.0).verdict, ClampVerdict::NoEffect);
        assert_eq!(clamp_row_increment(-1.0, 1.0, 0.0).verdict, ClampVerdict::NoEffect);
        // A budget of 0.5 J lets a resting 1 kg body take up to 1 m/s (0.5 J), not the 2 m/s asked.
        let spent = clamp_row_increment_within(0.0, 1.0, 2.0, 0.5);
        assert_eq!(spent.verdict, ClampVerdict::Scaled);
        assert!((spent.scale - 0.5).abs() < 1e-15);
    }
}
