//! Exporters: a recorded run (every body's mesh and its pose at each frame) written for viewers.
//!
//! Two formats:
//! - [`gltf`]: one binary glTF 2.0 file (`.glb`) with a node per body and one animation, which
//!   Blender, three.js and the Khronos sample viewer play back as recorded;
//! - [`obj`]: one Wavefront OBJ file per frame with every body present at that frame moved into
//!   world coordinates, for tools that read static meshes only.
//!
//! The engine's `f64` geometry becomes `f32` only here, at the file boundary. A [`Recording`] is
//! plain data: whatever produces poses (the world's step loop, an analytic motion in a test) fills
//! it, and the exporters never see the world.

pub mod analytic;
mod error;
mod glb;
pub mod gltf;
#[cfg(test)]
mod gltf_tests;
pub mod obj;
mod recording;

use std::path::Path;

pub use error::ExportError;
pub use recording::{Normals, Recording, Track};

/// A file format a recording can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// One binary glTF 2.0 file with an animation.
    Glb,
    /// A directory of OBJ files, one per frame.
    Obj,
}

impl ExportFormat {
    /// The format's name on the command line: `glb` or `obj`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Glb => "glb",
            Self::Obj => "obj",
        }
    }
}

/// Writes `recording` to `path` in `format`: a `.glb` file for [`ExportFormat::Glb`], a directory
/// of per-frame OBJ files for [`ExportFormat::Obj`] (created if missing). Returns a one-line
/// summary of what was written.
pub fn write(recording: &Recording, format: ExportFormat, path: &Path) -> Result<String, ExportError> {
    match format {
        ExportFormat::Glb => {
            let bytes = gltf::to_glb(recording)?;
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| ExportError::io(parent, &e))?;
            }
            std::fs::write(path, &bytes).map_err(|e| ExportError::io(path, &e))?;
            Ok(format!(
                "wrote {} ({} bodies, {} frames, {} bytes)",
                path.display(),
                recording.tracks.len(),
                recording.frame_count(),
                bytes.len()
            ))
        }
        ExportFormat::Obj => {
            let files = obj::write_frames(recording, path)?;
            Ok(format!(
                "wrote {} OBJ files ({} bodies) to {}",
                files.len(),
                recording.tracks.len(),
                path.display()
            ))
        }
    }
}
