//! The elastic energy a joint row holds when it breaks (Li 2018 section 3.4, with the errata of
//! ../shared/papers/README.md).
//!
//! A row with error reduction `ERP` and constraint force mixing `CFM` (ODE's meaning, see
//! shatter_solver's softness.rs) solved with time step `h` is one backward-Euler step of a spring
//! of stiffness `K = ERP / (h CFM)` (N/m, or N m/rad for an angular row) and a damper; its impulse
//! `lambda` (N s) over the step is the spring's force `lambda / h` (damping aside: Li's
//! approximation `lambda ~ h K phi`). The spring then holds
//!
//! ```text
//! E = 1/2 K phi^2 = 1/2 h^-2 lambda^2 C,   C = 1 / K = h CFM / ERP,   so   E = lambda^2 CFM / (2 h ERP)
//! ```
//!
//! joules, independent of `h` for a given force. A rigid row (`CFM = 0`) is infinitely stiff and
//! holds none: deleting it is all a break can do.

use shatter_engine::JointRowImpulse;
use shatter_solver::RowSoftness;

/// The softness the row was solved with.
fn softness(row: &JointRowImpulse) -> RowSoftness {
    RowSoftness {
        erp: row.erp,
        cfm: row.cfm,
    }
}

/// Stiffness of a row, `K = ERP / (h CFM)`, N/m (N m/rad for angular rows); infinite for a rigid
/// row. `dt` is the step the row was solved with, s.
pub fn row_stiffness(row: &JointRowImpulse, dt: f64) -> f64 {
    softness(row).stiffness(dt)
}

/// Energy the row's spring held at the end of a step of `dt` seconds, J:
/// `lambda^2 CFM / (2 h ERP)` (see the [module docs](self)); zero for a rigid row.
pub fn row_energy(row: &JointRowImpulse, dt: f64) -> f64 {
    softness(row).stored_energy(row.lambda, dt)
}

/// Energy all of a joint's rows held, J: a broken joint loses every row at once, so each row's
/// spring lets go.
pub fn joint_energy(rows: &[JointRowImpulse], dt: f64) -> f64 {
    rows.iter().map(|row| row_energy(row, dt)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;
    use shatter_solver::Softness;

    fn row(lambda: f64, softness: Softness, dt: f64) -> JointRowImpulse {
        let soft = softness.erp_cfm(dt, 1.0).unwrap();
        JointRowImpulse {
            jacobian: [DVec3::X, DVec3::ZERO, -DVec3::X, DVec3::ZERO],
            lambda,
            erp: soft.erp,
            cfm: soft.cfm,
        }
    }

    #[test]
    fn energized_row_energy_is_the_springs_force_squared_over_twice_its_stiffness() {
        // A spring k carrying force F stores F^2 / (2 k) whatever damper sits beside it and
        // whatever the step: the ERP/CFM encoding must give that back exactly.
        for (k, c) in [(1.0e4, 0.0), (2.5e5, 300.0), (7.0e2, 5.0e3)] {
            for dt in [1.0 / 30.0, 1.0 / 60.0, 1.0 / 240.0] {
                let force = 123.0;
                let spring = Softness::SpringDamper {
                    stiffness: k,
                    damping: c,
                };
                let r = row(-force * dt, spring, dt);
                let expected = force * force / (2.0 * k);
                assert!((row_energy(&r, dt) - expected).abs() <= 1e-12 * expected);
                assert!((row_stiffness(&r, dt) - k).abs() <= 1e-12 * k);
            }
        }
    }

    #[test]
    fn energized_rigid_rows_hold_no_energy_and_joints_sum_their_rows() {
        let dt = 1.0 / 60.0;
        let rigid = row(5.0, Softness::rigid(0.2), dt);
        assert_eq!(row_energy(&rigid, dt), 0.0);
        let spring = Softness::SpringDamper {
            stiffness: 1.0e3,
            damping: 0.0,
        };
        let rows = [row(0.5, spring, dt), rigid, row(-0.25, spring, dt)];
        let expected = (0.5f64.powi(2) + 0.25f64.powi(2)) / (dt * dt) / (2.0 * 1.0e3);
        assert!((joint_energy(&rows, dt) - expected).abs() <= 1e-12 * expected);
    }
}
