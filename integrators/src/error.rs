//! Errors for bad input to the integrators.
//!
//! Every error names the offending value and says how to fix it. A function that returns one of
//! these leaves its inputs untouched.

use core::fmt;

/// Why a rigid-body state, a set of mass properties, a time step or an impulse was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum IntegratorError {
    /// A quantity holds NaN or an infinity.
    NotFinite {
        /// What the quantity is, with its unit, e.g. `"angular velocity (rad/s)"`.
        quantity: &'static str,
        /// The offending value as it was given.
        value: String,
    },
    /// A dynamic body's mass is zero, negative or not finite.
    InvalidMass {
        /// The mass that was given, kg.
        mass: f64,
    },
    /// Principal moments of inertia that no rigid body can have.
    InvalidInertia {
        /// The principal moments that were given, kg m^2.
        principal_inertia: [f64; 3],
        /// What is wrong with them.
        reason: &'static str,
    },
    /// An orientation quaternion whose norm is not 1.
    NonUnitOrientation {
        /// The norm of the quaternion that was given.
        norm: f64,
    },
    /// A time step that is zero, negative or not finite.
    InvalidTimeStep {
        /// The time step that was given, s.
        dt: f64,
    },
    /// A target energy that is negative or not finite.
    InvalidEnergy {
        /// The energy that was given, J.
        energy: f64,
    },
    /// A length (a half extent, a radius) that is zero, negative or not finite.
    InvalidExtent {
        /// What the length is.
        quantity: &'static str,
        /// The value that was given, m.
        value: f64,
    },
}

impl IntegratorError {
    /// Builds a [`IntegratorError::NotFinite`] for `quantity`, recording `value` as written by `Debug`.
    pub fn not_finite(quantity: &'static str, value: impl fmt::Debug) -> Self {
        Self::NotFinite {
            quantity,
            value: format!("{value:?}"),
        }
    }
}

impl fmt::Display for IntegratorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFinite { quantity, value } => {
                write!(
                    f,
                    "{quantity} is not finite: {value}; every component must be a finite number"
                )
            }
            Self::InvalidMass { mass } => write!(
                f,
                "mass {mass} kg is not a positive finite number; give a dynamic body a positive mass, \
                 or make it static or kinematic for infinite mass"
            ),
            Self::InvalidInertia {
                principal_inertia,
                reason,
            } => write!(f, "principal inertia {principal_inertia:?} kg m^2 is invalid: {reason}"),
            Self::NonUnitOrientation { norm } => write!(
                f,
                "orientation quaternion has norm {norm}, not 1; normalize it before use"
            ),
            Self::InvalidTimeStep { dt } => {
                write!(f, "time step {dt} s is not a positive finite number of seconds")
            }
            Self::InvalidEnergy { energy } => {
                write!(f, "energy {energy} J is not a non-negative finite number of joules")
            }
            Self::InvalidExtent { quantity, value } => {
                write!(f, "{quantity} {value} m is not a positive finite length")
            }
        }
    }
}

impl std::error::Error for IntegratorError {}

/// Returns an error naming `quantity` unless every component of `value` is finite.
pub(crate) fn check_finite3(quantity: &'static str, value: glam::DVec3) -> Result<(), IntegratorError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(IntegratorError::not_finite(quantity, value))
    }
}

/// Returns an error naming `quantity` unless `value` is finite.
pub(crate) fn check_finite(quantity: &'static str, value: f64) -> Result<(), IntegratorError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(IntegratorError::not_finite(quantity, value))
    }
}
