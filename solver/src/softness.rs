//! Constraint softness: the one place where physical stiffness and damping become the ERP and CFM
//! of a row (in the spirit of Box2D's `b2MakeSoft` and Rapier's `SpringCoefficients`).
//!
//! # What ERP and CFM mean here
//!
//! We use the Open Dynamics Engine's definitions (also Bullet's). For a row with constraint error
//! `phi` (m or rad), time step `h`, impulse `lambda` (N s) and Jacobian `J`, the solve enforces
//!
//! ```text
//! J v_new + (CFM / h) lambda = -ERP phi / h          (see pgs.rs for the derivation)
//! ```
//!
//! On a single mass `m` with `J = 1` this is exactly one backward-Euler step of a spring-damper with
//! stiffness `k` (N/m) and damping `c` (N s/m), `m (v' - v) = h (-k x' - c v')`, `x' = x + h v'`,
//! when
//!
//! ```text
//! ERP = h k / (h k + c),      CFM = 1 / (h k + c)        (CFM in s/kg, i.e. m/(N s))
//! ```
//!
//! and conversely `k = ERP / (h CFM)`, `c = (1 - ERP) / CFM`: the spring of Li et al. 2018 eq. 3
//! (with the damping of the ODE manual; the paper's printed `B` is garbled, see the papers' errata).
//! For angular rows read N m/rad and N m s/rad. Backward Euler is unconditionally stable: the
//! spring's energy `1/2 m v^2 + 1/2 k x^2` cannot grow in a step, whatever `h k / m`.
//!
//! The frequency form is mass-independent: with the row's effective mass `m_eff = 1 / (J M^-1 J^T)`,
//! `k = m_eff w^2` and `c = 2 m_eff zeta w` for `w = 2 pi hertz`, so
//! `ERP = h w / (h w + 2 zeta)` and `CFM = 1 / (m_eff w (h w + 2 zeta))`.
//!
//! Rejected alternative: Box2D's "soft step" (bias rate, mass scale, impulse scale) encodes the same
//! implicit spring, but ERP and CFM are what the energized fracture of Li 2018 reads back
//! (`K_ii = ERP / (h CFM)`), so rows carry ERP and CFM.

use crate::error::SolverError;

/// How soft a constraint is, in whichever terms the caller thinks in. Converted to a row's ERP and
/// CFM by [`Softness::erp_cfm`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Softness {
    /// Raw ODE/Bullet parameters.
    ErpCfm {
        /// Error reduction parameter, dimensionless in (0, 1]: the fraction of the constraint error
        /// the row removes in one step when nothing else acts.
        erp: f64,
        /// Constraint force mixing, s/kg (m/(N s); for angular rows rad/(N m s)), >= 0; zero for a
        /// rigid row.
        cfm: f64,
    },
    /// A spring and a damper along the row.
    SpringDamper {
        /// Spring stiffness, N/m (N m/rad for angular rows), > 0.
        stiffness: f64,
        /// Damping coefficient, N s/m (N m s/rad for angular rows), >= 0.
        damping: f64,
    },
    /// A spring-damper scaled to the row's effective mass, so it oscillates at `hertz` whatever the
    /// bodies weigh.
    Frequency {
        /// Undamped natural frequency, Hz, > 0.
        hertz: f64,
        /// Damping ratio, dimensionless, >= 0 (1 is critical damping).
        damping_ratio: f64,
    },
}

impl Softness {
    /// A rigid row that removes the fraction `erp` of its error per step (Baumgarte) with no
    /// compliance: ERP = `erp`, CFM = 0. ODE's default is 0.2.
    pub const fn rigid(erp: f64) -> Self {
        Self::ErpCfm { erp, cfm: 0.0 }
    }

    /// The ERP and CFM of a row with this softness, for time step `dt` (s) and the row's effective
    /// mass `effective_mass = 1 / (J M^-1 J^T)` (kg for linear rows, kg m^2 for angular rows; read
    /// only by [`Softness::Frequency`], which requires it positive and finite).
    ///
    /// Errors name any non-finite or out-of-range input, and a combination so extreme that ERP would
    /// underflow to zero (a spring so weak against its damper that it does not act within `f64`).
    pub fn erp_cfm(self, dt: f64, effective_mass: f64) -> Result<RowSoftness, SolverError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(SolverError::InvalidTimeStep { dt });
        }
        let softness = match self {
            Self::ErpCfm { erp, cfm } => {
                check_erp(erp)?;
                if !(cfm.is_finite() && cfm >= 0.0) {
                    return Err(SolverError::invalid("cfm (s/kg)", cfm, "a finite number >= 0"));
                }
                RowSoftness { erp, cfm }
            }
            Self::SpringDamper { stiffness, damping } => {
                if !(stiffness.is_finite() && stiffness > 0.0) {
                    return Err(SolverError::invalid(
                        "stiffness (N/m)",
                        stiffness,
                        "a positive finite number (use Softness::ErpCfm for a pure damper or a rigid row)",
                    ));
                }
                if !(damping.is_finite() && damping >= 0.0) {
                    return Err(SolverError::invalid("damping (N s/m)", damping, "a finite number >= 0"));
                }
                spring_damper(dt, stiffness, damping)?
            }
            Self::Frequency { hertz, damping_ratio } => {
                if !(hertz.is_finite() && hertz > 0.0) {
                    return Err(SolverError::invalid(
                        "frequency (Hz)",
                        hertz,
                        "a positive finite number",
                    ));
                }
                if !(damping_ratio.is_finite() && damping_ratio >= 0.0) {
                    return Err(SolverError::invalid(
                        "damping ratio",
                        damping_ratio,
                        "a finite number >= 0",
                    ));
                }
                if !(effective_mass.is_finite() && effective_mass > 0.0) {
                    return Err(SolverError::invalid(
                        "effective mass (kg)",
                        effective_mass,
                        "a positive finite number (a row must touch a dynamic body to have a frequency)",
                    ));
                }
                let omega = 2.0 * core::f64::consts::PI * hertz;
                let stiffness = effective_mass * omega * omega;
                let damping = 2.0 * effective_mass * damping_ratio * omega;
                if !(stiffness.is_finite() && stiffness > 0.0 && damping.is_finite()) {
                    return Err(SolverError::invalid(
                        "frequency (Hz)",
                        hertz,
                        "a frequency whose stiffness m w^2 is a positive finite number for this effective mass",
                    ));
                }
                spring_damper(dt, stiffness, damping)?
            }
        };
        Ok(softness)
    }
}

/// ERP = h k / (h k + c), CFM = 1 / (h k + c), written so that no intermediate overflows to
/// infinity over infinity: ERP as `1 / (1 + c / (h k))`.
fn spring_damper(dt: f64, stiffness: f64, damping: f64) -> Result<RowSoftness, SolverError> {
    let hk = dt * stiffness;
    let erp = 1.0 / (1.0 + damping / hk);
    let cfm = 1.0 / (hk + damping);
    if !(erp > 0.0 && erp <= 1.0) {
        return Err(SolverError::invalid(
            "stiffness (N/m)",
            stiffness,
            "a stiffness not vanishingly small against damping / dt (ERP underflows to 0)",
        ));
    }
    // h k + c can overflow to infinity for absurd stiffness; the spring is then rigid, CFM = 0.
    Ok(RowSoftness { erp, cfm })
}

/// Returns an error naming `erp` unless it lies in (0, 1].
pub(crate) fn check_erp(erp: f64) -> Result<(), SolverError> {
    if erp > 0.0 && erp <= 1.0 {
        Ok(())
    } else {
        Err(SolverError::invalid(
            "erp",
            erp,
            "a number in (0, 1]: 0 would never correct the error, above 1 overshoots",
        ))
    }
}

/// The ERP and CFM of one row, as ODE and Bullet define them (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowSoftness {
    /// Error reduction parameter, in (0, 1].
    pub erp: f64,
    /// Constraint force mixing, s/kg (for angular rows rad/(N m s)), >= 0.
    pub cfm: f64,
}

impl RowSoftness {
    /// The spring stiffness this row encodes at time step `dt` (s): `K = ERP / (h CFM)`, N/m (N m/rad
    /// for angular rows); infinite for a rigid row (CFM = 0). Li 2018 eq. 3.
    pub fn stiffness(&self, dt: f64) -> f64 {
        self.erp / (dt * self.cfm)
    }

    /// The damping coefficient this row encodes: `c = (1 - ERP) / CFM`, N s/m (N m s/rad for angular
    /// rows); NaN for a rigid row with ERP = 1 and CFM = 0, where it is undefined.
    pub fn damping(&self) -> f64 {
        (1.0 - self.erp) / self.cfm
    }

    /// Potential energy stored in the row's spring when it carries the impulse `lambda` (N s) over a
    /// step `dt` (s), J: `E = 1/2 h^-2 lambda^2 C` with compliance `C = 1 / K = h CFM / ERP`
    /// (Li 2018 section 3.4 with the errata), i.e. `1/2 lambda^2 CFM / (h ERP)`. Zero for a rigid
    /// row: a rigid constraint stores nothing.
    pub fn stored_energy(&self, lambda: f64, dt: f64) -> f64 {
        0.5 * lambda * lambda * self.cfm / (dt * self.erp)
    }
}
