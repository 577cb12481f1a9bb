//! Contact row builders: the normal row measures the separating speed, the friction rows span the
//! contact plane and refer to their normal row, softness uses the normal's effective mass, and bad
//! contacts are refused by name.

mod common;

use common::{dynamic_body, unit, vec3};
use glam::{DQuat, DVec3};
use proptest::prelude::*;
use shatter_solver::{
    BiasMode, ContactPoint, NO_BODY, Row, Softness, SolverBody, contact_rows, inverse_effective_mass, push_contact_rows,
};

/// `J v` of a row over `bodies`.
fn row_velocity(bodies: &[SolverBody], row: &Row) -> f64 {
    let side = |index: u32, linear: DVec3, angular: DVec3| {
        bodies
            .get(index as usize)
            .map_or(0.0, |b| linear.dot(b.linear_velocity) + angular.dot(b.angular_velocity))
    };
    side(row.a, row.jacobian.linear_a, row.jacobian.angular_a)
        + side(row.b, row.jacobian.linear_b, row.jacobian.angular_b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The normal row's `J v` is the separating speed `n . (u_a - u_b)` of the two material points
    /// at the contact, the friction rows' are the tangential components, and the three directions
    /// are orthonormal.
    #[test]
    fn contact_rows_measure_relative_point_velocity(
        v_a in vec3(3.0), w_a in vec3(3.0), v_b in vec3(3.0), w_b in vec3(3.0),
        arm_a in vec3(1.0), arm_b in vec3(1.0), normal in unit(), depth in -0.1..0.1f64, mu in 0.0..2.0f64,
        aligned in any::<bool>(), direction in unit(),
    ) {
        let bodies = [
            dynamic_body(2.0, DVec3::new(1.0, 1.2, 1.5), DQuat::IDENTITY, v_a, w_a),
            SolverBody::kinematic(v_b, w_b),
        ];
        let mut contact = ContactPoint::new(0, 1, arm_a, arm_b, normal, depth, mu);
        if aligned {
            contact.friction_direction = Some(direction);
        }
        let rows = contact_rows(&bodies, &contact, 7, 0.01).unwrap();
        let relative = (v_a + w_a.cross(arm_a)) - (v_b + w_b.cross(arm_b));
        let directions: Vec<DVec3> = rows.iter().map(|r| r.jacobian.linear_a).collect();
        for (row, direction) in rows.iter().zip(&directions) {
            prop_assert!((row_velocity(&bodies, row) - direction.dot(relative)).abs() <= 1e-12 * (1.0 + relative.length()));
        }
        prop_assert!((directions[0] - normal).length() <= 1e-15);
        for (i, u) in directions.iter().enumerate() {
            for (j, w) in directions.iter().enumerate() {
                let expected = if i == j { 1.0 } else { 0.0 };
                prop_assert!((u.dot(*w) - expected).abs() <= 1e-12, "directions {} and {}", i, j);
            }
        }
        if aligned {
            let in_plane = direction - normal * normal.dot(direction);
            prop_assume!(in_plane.length() > 1e-6);
            prop_assert!((directions[1] - in_plane.normalize()).length() <= 1e-9);
        }
    }
}

/// The layout: `[normal, t1, t2]`, the normal bounded to `[0, inf)` in split mode with
/// `phi = -depth`, friction rows pointing at the normal's index with the contact's mu, all clamped.
#[test]
fn contact_rows_layout_and_push() {
    let bodies = [dynamic_body(1.0, DVec3::ONE, DQuat::IDENTITY, DVec3::ZERO, DVec3::ZERO)];
    let mut rows = vec![Row::new(0, NO_BODY, shatter_solver::Jacobian::angular(DVec3::X))];
    let contact = ContactPoint::new(0, NO_BODY, DVec3::new(0.1, -0.5, 0.0), DVec3::ZERO, DVec3::Y, 0.02, 0.7);
    let normal = push_contact_rows(&mut rows, &bodies, &contact, 1.0 / 60.0).unwrap();
    assert_eq!((normal, rows.len()), (1, 4));
    let n = &rows[1];
    assert_eq!((n.lower, n.upper, n.bias_mode), (0.0, f64::INFINITY, BiasMode::Split));
    assert_eq!(n.position_error, -0.02);
    assert_eq!((n.erp, n.cfm), (shatter_solver::DEFAULT_CONTACT_ERP, 0.0));
    for t in &rows[2..4] {
        let friction = t.friction.unwrap();
        assert_eq!((friction.normal_row, friction.coefficient), (1, 0.7));
        assert!(t.energy_clamp && t.position_error == 0.0);
    }
    assert!(n.energy_clamp);
}

/// A frequency-softened contact scales its CFM with the effective mass along the normal: twice the
/// mass, half the CFM, the same ERP, and `K = ERP / (h CFM) = m_eff w^2`.
#[test]
fn contact_frequency_softness_uses_normal_effective_mass() {
    let dt = 1.0 / 60.0;
    let softness = Softness::Frequency {
        hertz: 10.0,
        damping_ratio: 0.5,
    };
    let row_for = |mass: f64| {
        let bodies = [dynamic_body(
            mass,
            DVec3::splat(mass),
            DQuat::IDENTITY,
            DVec3::ZERO,
            DVec3::ZERO,
        )];
        let mut contact = ContactPoint::new(0, NO_BODY, DVec3::new(0.3, -0.5, 0.2), DVec3::ZERO, DVec3::Y, 0.0, 0.5);
        contact.softness = softness;
        let row = contact_rows(&bodies, &contact, 0, dt).unwrap()[0];
        (row, 1.0 / inverse_effective_mass(&bodies, &row))
    };
    let (light, light_mass) = row_for(1.0);
    let (heavy, heavy_mass) = row_for(2.0);
    assert!((heavy_mass - 2.0 * light_mass).abs() <= 1e-12);
    assert_eq!(light.erp, heavy.erp);
    assert!((heavy.cfm - 0.5 * light.cfm).abs() <= 1e-15 * light.cfm.max(1.0));
    let omega = 2.0 * std::f64::consts::PI * 10.0;
    let stiffness = light.softness().stiffness(dt);
    assert!((stiffness - light_mass * omega * omega).abs() <= 1e-9 * stiffness);
}

/// Bad contacts are refused with the field named.
#[test]
fn contact_rejects_bad_input() {
    let bodies = [dynamic_body(1.0, DVec3::ONE, DQuat::IDENTITY, DVec3::ZERO, DVec3::ZERO)];
    let good = ContactPoint::new(0, NO_BODY, DVec3::ZERO, DVec3::ZERO, DVec3::Y, 0.0, 0.5);
    assert!(contact_rows(&bodies, &good, 0, 0.01).is_ok());
    let cases: Vec<(ContactPoint, f64, &str)> = vec![
        (ContactPoint { a: 3, ..good }, 0.01, "contact body a"),
        (ContactPoint { b: 0, ..good }, 0.01, "contact bodies"),
        (
            ContactPoint {
                normal: DVec3::new(0.0, 2.0, 0.0),
                ..good
            },
            0.01,
            "contact normal",
        ),
        (
            ContactPoint {
                arm_a: DVec3::NAN,
                ..good
            },
            0.01,
            "contact arm a",
        ),
        (
            ContactPoint {
                depth: f64::INFINITY,
                ..good
            },
            0.01,
            "contact depth",
        ),
        (ContactPoint { friction: -0.5, ..good }, 0.01, "friction coefficient"),
        (
            ContactPoint {
                friction_direction: Some(DVec3::NAN),
                ..good
            },
            0.01,
            "friction direction",
        ),
        (
            ContactPoint {
                softness: Softness::rigid(0.0),
                ..good
            },
            0.01,
            "erp",
        ),
        (good, -1.0, "time step"),
    ];
    for (contact, dt, word) in cases {
        let message = contact_rows(&bodies, &contact, 0, dt).unwrap_err().to_string();
        assert!(message.contains(word), "{message:?} lacks {word:?}");
    }
}
