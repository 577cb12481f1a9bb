//! Why a scene file was rejected, and where in it.

use core::fmt;
use std::path::PathBuf;

use super::json_path::JsonPath;

/// Why a scene was rejected: the file, the place in it, and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneError {
    /// The scene file, when the scene came from one.
    pub file: Option<PathBuf>,
    /// Where: the JSON path of the offending value (`bodies[3].shape.sphere.radius`), or
    /// `line L column C` for text that is not JSON at all.
    pub location: String,
    /// What is wrong there and, where it helps, what would be right.
    pub message: String,
}

impl SceneError {
    /// An error at `path` with `message`.
    pub(crate) fn at(path: &JsonPath, message: impl Into<String>) -> Self {
        Self {
            file: None,
            location: path.to_string(),
            message: message.into(),
        }
    }

    /// `PATH: VALUE is invalid: expected EXPECTED`.
    pub(crate) fn invalid(path: &JsonPath, value: impl fmt::Display, expected: &str) -> Self {
        Self::at(path, format!("{value} is invalid: expected {expected}"))
    }

    /// The same error, said to be in `file`.
    pub(crate) fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for SceneError {}

/// Writes `[1, -2, NaN]` for error messages.
pub(crate) fn list(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(f64::to_string).collect();
    format!("[{}]", items.join(", "))
}
