//! Why a recording could not be exported.

use core::fmt;
use std::path::Path;

/// Why a recording could not be exported: a value no viewer could show, or a file that could not
/// be written.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportError {
    /// A value in the recording is out of range.
    Invalid {
        /// What holds it, e.g. `track 3 ("box") pose 12 position`.
        what: String,
        /// The value as given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A file or directory could not be written.
    Io {
        /// The file or directory.
        path: String,
        /// What the operating system said.
        message: String,
    },
}

impl ExportError {
    /// An [`ExportError::Invalid`] for `what` with `value` written by `Debug`.
    pub fn invalid(what: impl Into<String>, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::Invalid {
            what: what.into(),
            value: format!("{value:?}"),
            expected,
        }
    }

    /// An [`ExportError::Io`] for `path`.
    pub fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        }
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { what, value, expected } => {
                write!(f, "{what} = {value} is invalid: expected {expected}")
            }
            Self::Io { path, message } => write!(f, "cannot write {path}: {message}"),
        }
    }
}

impl std::error::Error for ExportError {}
