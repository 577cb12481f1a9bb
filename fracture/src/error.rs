//! Errors of the fracture methods: bad settings or input, named by value, and what the engine or
//! the geometry code refused.

use core::fmt;

use shatter_collision::GeometryError;
use shatter_engine::EngineError;

/// Why a fracture method refused its input. The call that returns it changed nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum FractureError {
    /// A value outside its valid range.
    InvalidValue {
        /// What the value is, with its unit.
        what: &'static str,
        /// The value as given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// Input that cannot be used as given (an empty piece list, a joint the model does not know).
    InvalidInput {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// The world refused a body or joint.
    Engine(EngineError),
    /// The geometry code refused a mesh.
    Geometry(GeometryError),
}

impl FractureError {
    /// A [`FractureError::InvalidValue`] with `value` written by `Debug`.
    pub fn invalid(what: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidValue {
            what,
            value: format!("{value:?}"),
            expected,
        }
    }

    /// A [`FractureError::InvalidInput`].
    pub fn input(reason: impl Into<String>) -> Self {
        Self::InvalidInput { reason: reason.into() }
    }
}

impl fmt::Display for FractureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidValue { what, value, expected } => {
                write!(f, "invalid {what}: {value}; expected {expected}")
            }
            Self::InvalidInput { reason } => write!(f, "{reason}"),
            Self::Engine(error) => write!(f, "{error}"),
            Self::Geometry(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for FractureError {}

impl From<EngineError> for FractureError {
    fn from(error: EngineError) -> Self {
        Self::Engine(error)
    }
}

impl From<GeometryError> for FractureError {
    fn from(error: GeometryError) -> Self {
        Self::Geometry(error)
    }
}
