//! Softness: the ERP/CFM conversion, its ranges, its errors, and the implicit spring-damper it
//! encodes when the solver runs it on a single mass.

mod common;

use glam::DVec3;
use proptest::prelude::*;
use shatter_solver::{Jacobian, NO_BODY, Row, RowSoftness, Softness, SolverBody, SolverError, SolverSettings, solve};

/// Log-uniform positive values between `10^lo` and `10^hi`.
fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo..hi).prop_map(|e| 10f64.powf(e))
}

/// The valid inputs the documentation promises: dt in [1e-6, 1] s, stiffness [1e-6, 1e12],
/// damping 0 or [1e-6, 1e9], frequency [1e-3, 1e4] Hz, damping ratio [0, 10], effective mass
/// [1e-6, 1e6] kg, ERP (0, 1], CFM [0, 1e6].
fn valid_softness() -> impl Strategy<Value = Softness> {
    prop_oneof![
        ((1e-9..=1.0f64), prop_oneof![Just(0.0), log_uniform(-9.0, 6.0)])
            .prop_map(|(erp, cfm)| Softness::ErpCfm { erp, cfm }),
        (log_uniform(-6.0, 12.0), prop_oneof![Just(0.0), log_uniform(-6.0, 9.0)])
            .prop_map(|(stiffness, damping)| Softness::SpringDamper { stiffness, damping }),
        (log_uniform(-3.0, 4.0), prop_oneof![Just(0.0), 0.0..10.0f64])
            .prop_map(|(hertz, damping_ratio)| Softness::Frequency { hertz, damping_ratio }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// For every valid input: ERP in (0, 1], CFM finite and >= 0, and the spring-damper read back
    /// as `k = ERP / (h CFM)`, `c = (1 - ERP) / CFM` is the one that went in.
    #[test]
    fn softness_erp_in_unit_interval_and_cfm_nonnegative(
        softness in valid_softness(), dt in log_uniform(-6.0, 0.0), mass in log_uniform(-6.0, 6.0),
    ) {
        let RowSoftness { erp, cfm } = softness.erp_cfm(dt, mass).unwrap();
        prop_assert!(erp > 0.0 && erp <= 1.0, "erp {erp}");
        prop_assert!(cfm.is_finite() && cfm >= 0.0, "cfm {cfm}");
        let (stiffness, damping) = match softness {
            Softness::ErpCfm { erp: e, cfm: c } => {
                prop_assert_eq!((erp, cfm), (e, c));
                return Ok(());
            }
            Softness::SpringDamper { stiffness, damping } => (stiffness, damping),
            Softness::Frequency { hertz, damping_ratio } => {
                let omega = 2.0 * std::f64::consts::PI * hertz;
                (mass * omega * omega, 2.0 * mass * damping_ratio * omega)
            }
        };
        let row = RowSoftness { erp, cfm };
        let scale = dt * stiffness + damping;
        prop_assert!((row.stiffness(dt) - stiffness).abs() <= 1e-9 * stiffness,
            "k {} vs {stiffness}", row.stiffness(dt));
        prop_assert!((row.damping() - damping).abs() <= 1e-9 * scale, "c {} vs {damping}", row.damping());
    }

    /// Every invalid input is an error naming the offending parameter; no invalid input yields an ERP
    /// outside (0, 1] or a negative CFM.
    #[test]
    fn softness_invalid_input_is_an_error_naming_it(
        which in 0..10usize,
        bad in prop_oneof![
            Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(0.0),
            log_uniform(-6.0, 6.0).prop_map(|x| -x),
        ],
        above_one in log_uniform(-9.0, 3.0),
    ) {
        let (softness, dt, mass, name) = match which {
            0 => (Softness::ErpCfm { erp: bad, cfm: 0.1 }, 0.01, 1.0, "erp"),
            1 => (Softness::ErpCfm { erp: 1.0 + above_one, cfm: 0.1 }, 0.01, 1.0, "erp"),
            2 => (Softness::ErpCfm { erp: 0.2, cfm: if bad == 0.0 { -1.0 } else { bad } }, 0.01, 1.0, "cfm"),
            3 => (Softness::SpringDamper { stiffness: bad, damping: 1.0 }, 0.01, 1.0, "stiffness"),
            4 => (Softness::SpringDamper { stiffness: 1.0, damping: if bad == 0.0 { -1.0 } else { bad } }, 0.01, 1.0,
                  "damping"),
            5 => (Softness::Frequency { hertz: bad, damping_ratio: 1.0 }, 0.01, 1.0, "frequency"),
            6 => (Softness::Frequency { hertz: 1.0, damping_ratio: if bad == 0.0 { -1.0 } else { bad } }, 0.01, 1.0,
                  "damping ratio"),
            7 => (Softness::Frequency { hertz: 1.0, damping_ratio: 1.0 }, 0.01, bad, "effective mass"),
            8 => (Softness::rigid(0.2), bad, 1.0, "time step"),
            _ => (Softness::SpringDamper { stiffness: 1.0, damping: 1.0 }, bad, 1.0, "time step"),
        };
        let message = softness.erp_cfm(dt, mass).unwrap_err().to_string();
        prop_assert!(message.contains(name), "{message:?} does not name {name}");
    }
}

/// State of the single-mass spring: position relative to the anchor (m) and velocity (m/s).
struct Spring {
    body: [SolverBody; 1],
    x: f64,
}

impl Spring {
    fn new(mass: f64, x0: f64) -> Self {
        Self {
            body: [common::resting_box(mass, DVec3::splat(0.1))],
            x: x0,
        }
    }

    fn v(&self) -> f64 {
        self.body[0].linear_velocity.x
    }

    /// One step: solve the spring row at the current error, then `x += v h` (symplectic Euler).
    fn step(&mut self, softness: Softness, dt: f64) {
        let mass = 1.0 / self.body[0].inverse_mass;
        let mut row = Row::new(0, NO_BODY, Jacobian::linear(DVec3::X, DVec3::ZERO, DVec3::ZERO))
            .with_softness(softness.erp_cfm(dt, mass).unwrap());
        row.position_error = self.x;
        let settings = SolverSettings {
            iterations: 1,
            warm_start: false,
            ..SolverSettings::default()
        };
        solve(&mut self.body, &mut [row], dt, &settings).unwrap();
        self.x += self.v() * dt;
    }
}

/// Closed-form underdamped oscillator released from `x0` at rest.
fn damped_oscillator(x0: f64, omega: f64, zeta: f64, t: f64) -> f64 {
    let omega_d = omega * (1.0 - zeta * zeta).sqrt();
    (-zeta * omega * t).exp() * x0 * ((omega_d * t).cos() + zeta * omega / omega_d * (omega_d * t).sin())
}

/// Largest deviation from the closed form over `duration`, relative to `x0`.
fn oscillator_error(softness: Softness, mass: f64, omega: f64, zeta: f64, dt: f64, duration: f64) -> f64 {
    let x0 = 0.1;
    let mut spring = Spring::new(mass, x0);
    let steps = (duration / dt).round() as usize;
    let mut worst: f64 = 0.0;
    for n in 1..=steps {
        spring.step(softness, dt);
        let exact = damped_oscillator(x0, omega, zeta, n as f64 * dt);
        worst = worst.max((spring.x - exact).abs() / x0);
    }
    worst
}

/// The spring-damper the solver runs is backward Euler: at small dt it follows the damped
/// oscillator (frequency and decay) to O(w^2 h t) and the error halves with the step.
#[test]
fn softness_spring_damper_matches_closed_form_oscillator() {
    let (mass, hertz, zeta) = (2.0, 2.0, 0.1);
    let omega = 2.0 * std::f64::consts::PI * hertz;
    let softness = Softness::SpringDamper {
        stiffness: mass * omega * omega,
        damping: 2.0 * mass * zeta * omega,
    };
    let fine = oscillator_error(softness, mass, omega, zeta, 1e-4, 2.0);
    let coarse = oscillator_error(softness, mass, omega, zeta, 2e-4, 2.0);
    // Backward Euler's extra decay w^2 h / 2 over the envelope x0 t exp(-zeta w t) peaks near
    // 2.3e-3 x0 at h = 1e-4; a wrong ERP or CFM scaling is off by orders of magnitude.
    assert!(fine < 4e-3, "largest deviation {fine} of x0 at h = 1e-4");
    let order = coarse / fine;
    assert!(
        (1.8..2.2).contains(&order),
        "error ratio {order} for a halved step, expected 2 (first order)"
    );
}

/// The frequency form oscillates at the same frequency whatever the mass: trajectories of a light and
/// a heavy body agree to round-off and both follow the closed form.
#[test]
fn softness_frequency_form_is_mass_independent() {
    let (hertz, zeta, dt) = (2.0, 0.1, 1e-4);
    let softness = Softness::Frequency {
        hertz,
        damping_ratio: zeta,
    };
    let mut light = Spring::new(0.5, 0.1);
    let mut heavy = Spring::new(50.0, 0.1);
    for _ in 0..10_000 {
        light.step(softness, dt);
        heavy.step(softness, dt);
        assert!((light.x - heavy.x).abs() <= 1e-12, "{} vs {}", light.x, heavy.x);
    }
    let omega = 2.0 * std::f64::consts::PI * hertz;
    let error = oscillator_error(softness, 0.5, omega, zeta, dt, 2.0);
    assert!(error < 4e-3, "largest deviation {error} of x0");
}

/// At frame rate (dt = 1/30) a stiff undamped spring, far beyond the explicit stability limit
/// (w h = 33 and 21), never gains energy `1/2 m v^2 + 1/2 k x^2`, and loses most of it.
#[test]
fn softness_stiff_spring_is_stable_at_frame_rate() {
    let dt = 1.0 / 30.0;
    let mass = 1.0;
    for softness in [
        Softness::SpringDamper {
            stiffness: 1e6,
            damping: 0.0,
        },
        Softness::Frequency {
            hertz: 100.0,
            damping_ratio: 0.0,
        },
    ] {
        let stiffness = softness.erp_cfm(dt, mass).unwrap().stiffness(dt);
        let energy = |s: &Spring| 0.5 * mass * s.v() * s.v() + 0.5 * stiffness * s.x * s.x;
        let mut spring = Spring::new(mass, 0.1);
        let initial = energy(&spring);
        let mut previous = initial;
        for step in 0..300 {
            spring.step(softness, dt);
            let now = energy(&spring);
            assert!(
                now <= previous * (1.0 + 1e-12),
                "step {step}: energy {now} > {previous}"
            );
            previous = now;
        }
        assert!(previous < 1e-3 * initial, "energy {previous} of {initial} left");
    }
}

/// The stored energy `1/2 h^-2 lambda^2 C` equals the spring energy `1/2 k phi^2` at the impulse
/// `lambda = h k phi` the spring carries (Li 2018 section 3.4, errata), and is zero for a rigid row.
#[test]
fn softness_stored_energy_is_spring_energy() {
    let dt = 1.0 / 60.0;
    let (stiffness, phi) = (5e4, 0.003);
    let row = Softness::SpringDamper {
        stiffness,
        damping: 30.0,
    }
    .erp_cfm(dt, 1.0)
    .unwrap();
    let energy = row.stored_energy(dt * stiffness * phi, dt);
    let expected = 0.5 * stiffness * phi * phi;
    assert!((energy - expected).abs() <= 1e-12 * expected, "{energy} vs {expected}");
    assert_eq!(
        Softness::rigid(0.2).erp_cfm(dt, 1.0).unwrap().stored_energy(3.0, dt),
        0.0
    );
}

/// Errors are typed: a bad ERP is an `InvalidParameter` that carries the value.
#[test]
fn softness_error_carries_the_value() {
    let softness = Softness::ErpCfm { erp: 1.5, cfm: 0.0 };
    match softness.erp_cfm(0.01, 1.0) {
        Err(SolverError::InvalidParameter { name, value, .. }) => {
            assert_eq!(name, "erp");
            assert_eq!(value, "1.5");
        }
        other => panic!("expected an invalid ERP, got {other:?}"),
    }
}
