//! Triangle-mesh files: OBJ, STL (ASCII and binary) and PLY (ASCII and binary) in, OBJ and
//! binary STL out.
//!
//! Every reader is a function over the file's bytes (`read_obj`, `read_stl`, `read_ply`) that
//! never panics, whatever the bytes: malformed input comes back as [`GeometryError::Parse`] with a
//! line number (text) or byte offset (binary) and a message naming the bad value, and no reader
//! allocates more than the input could hold, so a header announcing four billion triangles fails
//! cleanly. The path functions ([`read_mesh`], [`write_mesh`], [`TriMesh::load`],
//! [`TriMesh::save`]) are thin wrappers that pick the format from the file extension.
//!
//! What a reader returns: the file's polygons fan-triangulated, with vertices welded by exact
//! position (see [`weld::weld_exact`]: OBJ files repeat vertices at texture seams and STL stores
//! every triangle's corners separately, so without welding neither bounds a solid) and then
//! compacted (vertices no triangle uses are dropped, the rest keep their relative order). A file
//! with no triangle is an error: it is not a triangle mesh.

pub mod obj;
pub mod ply;
mod ply_values;
pub mod stl;
mod text;
pub mod weld;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod ply_tests;

use std::path::Path;

use glam::DVec3;

use crate::error::GeometryError;
use crate::trimesh::TriMesh;

pub use obj::{read_obj, write_obj};
pub use ply::read_ply;
pub use stl::{read_stl, write_stl};

/// A mesh file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    /// Wavefront OBJ (text).
    Obj,
    /// STL, ASCII or binary (read); binary (written).
    Stl,
    /// Stanford PLY, ASCII or binary of either byte order (read only).
    Ply,
}

impl MeshFormat {
    /// The format named by `path`'s extension (`.obj`, `.stl`, `.ply`, any letter case).
    pub fn from_path(path: &Path) -> Result<Self, GeometryError> {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match extension.to_ascii_lowercase().as_str() {
            "obj" => Ok(Self::Obj),
            "stl" => Ok(Self::Stl),
            "ply" => Ok(Self::Ply),
            _ => Err(GeometryError::invalid(
                "mesh file extension",
                path.display().to_string(),
                "a path ending in .obj, .stl or .ply",
            )),
        }
    }

    /// The name used in error messages: "OBJ", "STL", "PLY".
    pub fn name(self) -> &'static str {
        match self {
            Self::Obj => "OBJ",
            Self::Stl => "STL",
            Self::Ply => "PLY",
        }
    }
}

/// Reads a mesh from the bytes of a file in `format`.
pub fn read_mesh_bytes(bytes: &[u8], format: MeshFormat) -> Result<TriMesh, GeometryError> {
    match format {
        MeshFormat::Obj => read_obj(bytes),
        MeshFormat::Stl => read_stl(bytes),
        MeshFormat::Ply => read_ply(bytes),
    }
}

/// Reads the mesh file at `path`, in the format its extension names.
///
/// Fails with [`GeometryError::Io`] when the file cannot be read, and with
/// [`GeometryError::Parse`] (its location prefixed by the path) when its contents are malformed.
pub fn read_mesh(path: impl AsRef<Path>) -> Result<TriMesh, GeometryError> {
    let path = path.as_ref();
    let format = MeshFormat::from_path(path)?;
    let bytes = std::fs::read(path).map_err(|e| io_error(path, &e))?;
    read_mesh_bytes(&bytes, format).map_err(|error| match error {
        GeometryError::Parse {
            format,
            location,
            message,
        } => GeometryError::Parse {
            format,
            location: format!("{}, {location}", path.display()),
            message,
        },
        other => other,
    })
}

/// Writes `mesh` to `path` as OBJ or binary STL, as its extension says. Writing PLY is not
/// supported.
pub fn write_mesh(path: impl AsRef<Path>, mesh: &TriMesh) -> Result<(), GeometryError> {
    let path = path.as_ref();
    let bytes = match MeshFormat::from_path(path)? {
        MeshFormat::Obj => write_obj(mesh),
        MeshFormat::Stl => write_stl(mesh)?,
        MeshFormat::Ply => {
            return Err(GeometryError::invalid(
                "mesh file extension",
                path.display().to_string(),
                ".obj or .stl (PLY is read, not written)",
            ));
        }
    };
    std::fs::write(path, bytes).map_err(|e| io_error(path, &e))
}

impl TriMesh {
    /// Reads the mesh file at `path` (OBJ, STL or PLY by extension), welded and compacted; see
    /// [`read_mesh`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, GeometryError> {
        read_mesh(path)
    }

    /// Writes the mesh to `path` as OBJ (exact) or binary STL (`f32`), by extension; see
    /// [`write_mesh`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), GeometryError> {
        write_mesh(path, self)
    }
}

fn io_error(path: &Path, error: &std::io::Error) -> GeometryError {
    GeometryError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

/// The common end of every reader: polygons already fan-triangulated into `triangles` with
/// indices below `vertices.len()` (checked by the caller, which knows where each came from), and
/// finite vertices. Welds by exact position and compacts; a mesh without triangles is an error.
fn finish(format: MeshFormat, vertices: Vec<DVec3>, triangles: Vec<[u32; 3]>) -> Result<TriMesh, GeometryError> {
    if triangles.is_empty() {
        return Err(GeometryError::parse(
            format.name(),
            "end of file",
            format!("no triangles ({} vertices): not a triangle mesh", vertices.len()),
        ));
    }
    if u32::try_from(vertices.len()).is_err() {
        return Err(GeometryError::parse(
            format.name(),
            "end of file",
            format!("{} vertices: at most 2^32 - 1 are supported", vertices.len()),
        ));
    }
    let (vertices, triangles) = weld::weld_exact_parts(&vertices, &triangles);
    TriMesh::try_new(vertices, triangles)
}

/// Appends the fan triangulation `(p0, p[i], p[i + 1])` of a polygon. Exact for convex polygons,
/// which is what OBJ, PLY and STL writers emit; a concave polygon may get overlapping triangles.
fn triangulate_fan(polygon: &[u32], triangles: &mut Vec<[u32; 3]>) {
    if let Some((&first, rest)) = polygon.split_first() {
        triangles.extend(rest.windows(2).map(|pair| [first, pair[0], pair[1]]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_format_from_extension_and_missing_files() {
        assert_eq!(MeshFormat::from_path(Path::new("a/b.OBJ")).unwrap(), MeshFormat::Obj);
        assert_eq!(MeshFormat::from_path(Path::new("b.stl")).unwrap(), MeshFormat::Stl);
        assert_eq!(MeshFormat::from_path(Path::new("b.Ply")).unwrap(), MeshFormat::Ply);
        let err = MeshFormat::from_path(Path::new("mesh.off")).unwrap_err();
        assert!(err.to_string().contains("mesh.off"), "{err}");
        match read_mesh("/nonexistent/directory/mesh.obj").unwrap_err() {
            GeometryError::Io { path, message } => {
                assert_eq!(path, "/nonexistent/directory/mesh.obj");
                assert!(!message.is_empty());
            }
            other => panic!("expected an I/O error, got {other}"),
        }
    }

    #[test]
    fn io_fan_triangulation_and_empty_files() {
        let mut triangles = Vec::new();
        triangulate_fan(&[4, 5, 6, 7, 8], &mut triangles);
        assert_eq!(triangles, vec![[4, 5, 6], [4, 6, 7], [4, 7, 8]]);
        let err = finish(MeshFormat::Obj, vec![DVec3::ZERO; 3], vec![]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "OBJ end of file: no triangles (3 vertices): not a triangle mesh"
        );
    }

    #[test]
    fn io_save_and_load_through_files() {
        let directory = std::env::temp_dir().join(format!("shatter-io-{}", std::process::id()));
        std::fs::create_dir_all(&directory).unwrap();
        let mesh = TriMesh::icosphere(0.3, 1);
        let obj = directory.join("ball.obj");
        mesh.save(&obj).unwrap();
        assert_eq!(TriMesh::load(&obj).unwrap(), mesh);
        let stl = directory.join("ball.stl");
        mesh.save(&stl).unwrap();
        let back = TriMesh::load(&stl).unwrap();
        assert_eq!(back.triangles().len(), mesh.triangles().len());
        assert!(mesh.save(directory.join("ball.ply")).is_err());
        // A parse error through a path names the file.
        std::fs::write(directory.join("bad.obj"), "v 0 0 0\nf 1 2 3\n").unwrap();
        let err = TriMesh::load(directory.join("bad.obj")).unwrap_err().to_string();
        assert!(err.contains("bad.obj, line 2"), "{err}");
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
