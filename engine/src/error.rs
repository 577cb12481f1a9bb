//! Errors of the engine: bad input to the world and stale handles.
//!
//! Every error names the offending value or handle and says what was expected. A call that
//! returns an error leaves the world as it was.

use core::fmt;

use shatter_collision::GeometryError;
use shatter_integrators::IntegratorError;

use crate::handle::{BodyId, JointId};

/// Why a call into the world was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// The handle names no live body: the body was removed (or never existed in this world).
    StaleBody {
        /// The handle given.
        id: BodyId,
    },
    /// The handle names no live joint: the joint was removed or broken.
    StaleJoint {
        /// The handle given.
        id: JointId,
    },
    /// A value outside its valid range: a NaN pose, a non-unit quaternion, a zero mass, ...
    InvalidValue {
        /// What the value is, with its unit.
        what: &'static str,
        /// The value as given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A time step that is zero, negative, not finite or absurdly long.
    InvalidTimeStep {
        /// The time step given, s.
        dt: f64,
    },
    /// Geometry (a collider, a mesh) was rejected while building a body.
    Geometry {
        /// What was being built.
        context: &'static str,
        /// Why.
        error: GeometryError,
    },
    /// Mass properties or a state were rejected by the integrators.
    Integrator {
        /// What was being checked.
        context: &'static str,
        /// Why.
        error: IntegratorError,
    },
    /// A body or joint description that cannot be simulated as given.
    InvalidDescription {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Snapshot bytes that do not fit this world.
    Snapshot {
        /// Why they do not fit.
        reason: String,
    },
    /// The constraint solver refused its input.
    Solver {
        /// What it said.
        message: String,
    },
}

impl EngineError {
    /// An [`EngineError::InvalidValue`] with `value` written by `Debug`.
    pub fn invalid(what: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidValue {
            what,
            value: format!("{value:?}"),
            expected,
        }
    }

    pub(crate) fn geometry(context: &'static str) -> impl FnOnce(GeometryError) -> Self {
        move |error| Self::Geometry { context, error }
    }

    pub(crate) fn integrator(context: &'static str) -> impl FnOnce(IntegratorError) -> Self {
        move |error| Self::Integrator { context, error }
    }

    pub(crate) fn description(reason: impl Into<String>) -> Self {
        Self::InvalidDescription { reason: reason.into() }
    }

    pub(crate) fn snapshot(reason: impl Into<String>) -> Self {
        Self::Snapshot { reason: reason.into() }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StaleBody { id } => write!(
                f,
                "{id} is not in the world: it was removed, or the handle comes from another world"
            ),
            Self::StaleJoint { id } => write!(
                f,
                "{id} is not in the world: it was removed or broken, or the handle comes from another world"
            ),
            Self::InvalidValue { what, value, expected } => {
                write!(f, "{what} = {value} is invalid: expected {expected}")
            }
            Self::InvalidTimeStep { dt } => write!(
                f,
                "time step dt = {dt} s is invalid: expected a finite number of seconds in (0, 1]"
            ),
            Self::Geometry { context, error } => write!(f, "{context}: {error}"),
            Self::Integrator { context, error } => write!(f, "{context}: {error}"),
            Self::InvalidDescription { reason } => f.write_str(reason),
            Self::Snapshot { reason } => write!(f, "snapshot does not fit this world: {reason}"),
            Self::Solver { message } => write!(f, "constraint solver: {message}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// Checks that every component of a vector is finite, naming `what` otherwise.
pub(crate) fn check_finite3(what: &'static str, value: glam::DVec3) -> Result<(), EngineError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(EngineError::invalid(what, value, "finite components"))
    }
}
