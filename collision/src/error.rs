//! Errors for bad geometry: every message names what is wrong and, where it helps, how to fix it.

use core::fmt;

/// What is wrong with a mesh that should bound a solid: the counts the topology check found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshDefects {
    /// Edges used by only one triangle (the mesh has holes).
    pub boundary_edges: usize,
    /// Edges used by more than two triangles.
    pub non_manifold_edges: usize,
    /// Edges whose two triangles traverse them in the same direction (inconsistent winding).
    pub inconsistently_oriented_edges: usize,
    /// Triangles with (numerically) zero area.
    pub degenerate_triangles: usize,
    /// Connected components (by shared edges).
    pub components: usize,
    /// Signed volume by the divergence theorem, in the mesh's units cubed; negative when the
    /// triangles wind clockwise seen from outside (the mesh is inside out).
    pub signed_volume: f64,
}

impl MeshDefects {
    /// Whether the mesh bounds a solid: closed, manifold, consistently oriented, no degenerate
    /// triangle, positive volume.
    pub fn is_solid(&self) -> bool {
        self.boundary_edges == 0
            && self.non_manifold_edges == 0
            && self.inconsistently_oriented_edges == 0
            && self.degenerate_triangles == 0
            && self.signed_volume > 0.0
    }
}

impl fmt::Display for MeshDefects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut problems = Vec::new();
        if self.boundary_edges > 0 {
            problems.push(format!("{} open (boundary) edges", self.boundary_edges));
        }
        if self.non_manifold_edges > 0 {
            problems.push(format!("{} non-manifold edges", self.non_manifold_edges));
        }
        if self.inconsistently_oriented_edges > 0 {
            problems.push(format!(
                "{} inconsistently oriented edges",
                self.inconsistently_oriented_edges
            ));
        }
        if self.degenerate_triangles > 0 {
            problems.push(format!("{} degenerate triangles", self.degenerate_triangles));
        }
        if !(self.signed_volume > 0.0) {
            problems.push(format!(
                "signed volume {} (inverted or empty: triangles must wind counter-clockwise seen from outside)",
                self.signed_volume
            ));
        }
        if problems.is_empty() {
            problems.push("no defects".to_string());
        }
        write!(f, "{} ({} components)", problems.join(", "), self.components)
    }
}

/// Why geometry was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum GeometryError {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        message: String,
    },
    /// A file is not valid in its format.
    Parse {
        /// The format: "OBJ", "STL", "PLY".
        format: &'static str,
        /// Where: "line 12", "byte 84", "header".
        location: String,
        /// What is wrong there.
        message: String,
    },
    /// A coordinate or value is NaN or infinite.
    NotFinite {
        /// What holds it: "vertex", "grid value", ...
        what: &'static str,
        /// Its index.
        index: usize,
        /// The offending value as given.
        value: String,
    },
    /// A triangle or tetrahedron refers to a vertex that does not exist.
    IndexOutOfRange {
        /// The element (triangle or tet) index.
        element: usize,
        /// The vertex index it used.
        index: i64,
        /// How many vertices there are.
        vertex_count: usize,
    },
    /// Nothing to work with.
    Empty {
        /// What is empty: "mesh", "grid", ...
        what: &'static str,
    },
    /// A mesh that must bound a solid does not.
    NotSolid(MeshDefects),
    /// A parameter outside its valid range.
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// Its value as given.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
}

impl GeometryError {
    /// A [`GeometryError::InvalidParameter`] for `name` with `value` written by `Debug`.
    pub fn invalid(name: &'static str, value: impl fmt::Debug, expected: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value: format!("{value:?}"),
            expected,
        }
    }

    /// A [`GeometryError::Parse`].
    pub fn parse(format: &'static str, location: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Parse {
            format,
            location: location.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, message } => write!(f, "cannot access {path}: {message}"),
            Self::Parse {
                format,
                location,
                message,
            } => write!(f, "{format} {location}: {message}"),
            Self::NotFinite { what, index, value } => {
                write!(f, "{what} {index} is not finite: {value}")
            }
            Self::IndexOutOfRange {
                element,
                index,
                vertex_count,
            } => write!(
                f,
                "element {element} uses vertex {index}, but there are only {vertex_count} vertices"
            ),
            Self::Empty { what } => write!(f, "the {what} is empty"),
            Self::NotSolid(defects) => write!(f, "the mesh does not bound a solid: {defects}"),
            Self::InvalidParameter { name, value, expected } => {
                write!(f, "{name} = {value} is invalid: expected {expected}")
            }
        }
    }
}

impl std::error::Error for GeometryError {}
