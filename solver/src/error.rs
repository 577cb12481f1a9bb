//! Errors for bad input to the solver: every message names the offending value and what it should
//! be. A function that returns one of these leaves its inputs (bodies, rows) untouched.

use core::fmt;

/// Why a solve, a softness conversion or a row builder was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum SolverError {
    /// A time step that is zero, negative or not finite.
    InvalidTimeStep {
        /// The time step that was given, s.
        dt: f64,
    },
    /// A per-body quantity is not finite or outside its range (a negative inverse mass, an
    /// inverse inertia that is not symmetric positive semi-definite).
    InvalidBody {
        /// Index of the body in the slice handed to the solver.
        body: usize,
        /// The quantity, with its unit, e.g. `"linear velocity (m/s)"`.
        quantity: &'static str,
        /// The offending value as it was given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A row field is not finite or outside its range (ERP outside (0, 1], a negative CFM,
    /// `lower > upper`, a negative friction coefficient, ...).
    InvalidRow {
        /// Index of the row in the slice handed to the solver (or built by a builder).
        row: usize,
        /// The field, with its unit, e.g. `"cfm (s/kg)"`.
        field: &'static str,
        /// The offending value as it was given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A row names a body (or, for friction, a normal row) that is not in the slice.
    IndexOutOfRange {
        /// Index of the row that holds the bad index.
        row: usize,
        /// Which index: `"body a"`, `"body b"`, `"friction normal row"`.
        field: &'static str,
        /// The index as given.
        index: u32,
        /// How many bodies (or rows) there are.
        count: usize,
    },
    /// A solver setting, a softness parameter or a builder argument outside its range.
    InvalidParameter {
        /// The parameter, with its unit.
        name: &'static str,
        /// Its value as given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The solve produced a non-finite velocity or impulse from finite input (values so large
    /// that the arithmetic overflowed). Nothing was written back.
    Diverged {
        /// What went non-finite: `"body velocity"` or `"row impulse"`.
        what: &'static str,
        /// Its index.
        index: usize,
    },
}

impl SolverError {
    /// A [`SolverError::InvalidParameter`] for `name` with `value` written by `Debug`.
    pub fn invalid(name: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value: format!("{value:?}"),
            expected,
        }
    }

    /// A [`SolverError::InvalidRow`] for `field` of row `row` with `value` written by `Debug`.
    pub fn row(row: usize, field: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidRow {
            row,
            field,
            value: format!("{value:?}"),
            expected,
        }
    }

    /// A [`SolverError::InvalidBody`] for `quantity` of body `body` with `value` written by `Debug`.
    pub fn body(body: usize, quantity: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidBody {
            body,
            quantity,
            value: format!("{value:?}"),
            expected,
        }
    }
}

impl fmt::Display for SolverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidTimeStep { dt } => {
                write!(f, "time step {dt} s is not a positive finite number of seconds")
            }
            Self::InvalidBody {
                body,
                quantity,
                value,
                expected,
            } => write!(f, "body {body}: {quantity} = {value} is invalid: expected {expected}"),
            Self::InvalidRow {
                row,
                field,
                value,
                expected,
            } => write!(f, "row {row}: {field} = {value} is invalid: expected {expected}"),
            Self::IndexOutOfRange {
                row,
                field,
                index,
                count,
            } => write!(
                f,
                "row {row}: {field} = {index} is out of range: there are only {count}"
            ),
            Self::InvalidParameter { name, value, expected } => {
                write!(f, "{name} = {value} is invalid: expected {expected}")
            }
            Self::Diverged { what, index } => write!(
                f,
                "the solve overflowed: {what} {index} became non-finite; nothing was written back \
                 (check for absurdly large velocities, impulses or inverse masses)"
            ),
        }
    }
}

impl std::error::Error for SolverError {}
