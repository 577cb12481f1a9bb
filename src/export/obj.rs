//! Wavefront OBJ, one file per frame: every body that exists at the frame, moved into world
//! coordinates, as its own `o` object.
//!
//! OBJ has no animation, so each frame is a static scene; tools that load image sequences of
//! meshes (Blender's stop-motion importers, MeshLab) play the directory back. Coordinates are
//! written in full `f64` precision (Rust's shortest round-trip form), so reading a frame back
//! gives the world positions exactly. Triangles keep the meshes' winding (counter-clockwise seen
//! from outside), which rigid motions preserve.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::error::ExportError;
use super::recording::Recording;

/// The OBJ text of frame `frame`: a comment line, then for every track that exists at the frame
/// an `o NAME` line, its vertices moved by the frame's pose, and its triangles (1-based indices
/// counted over the whole file). Names have line breaks replaced by spaces; an empty name becomes
/// `body_INDEX`.
pub fn frame_obj(recording: &Recording, frame: usize) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "# shatter frame {frame} of {}, t = {} s",
        recording.frame_count(),
        recording.time(frame)
    );
    let mut offset = 1usize;
    for (index, track) in recording.tracks.iter().enumerate() {
        let Some(pose) = track.pose_at(frame) else {
            continue;
        };
        let name: String = track
            .name
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let name = name.trim();
        if name.is_empty() {
            let _ = writeln!(out, "o body_{index}");
        } else {
            let _ = writeln!(out, "o {name}");
        }
        for v in track.mesh.vertices() {
            let p = pose.transform_point(*v);
            let _ = writeln!(out, "v {} {} {}", p.x, p.y, p.z);
        }
        for [a, b, c] in track.mesh.triangles() {
            let [a, b, c] = [*a, *b, *c].map(|i| i as usize + offset);
            let _ = writeln!(out, "f {a} {b} {c}");
        }
        offset += track.mesh.vertices().len();
    }
    out
}

/// The file name of frame `frame` in a recording of `frame_count` frames: `frame_00012.obj`, with
/// at least five digits and as many as the last frame needs, so names sort in frame order.
pub fn frame_file_name(frame: usize, frame_count: usize) -> String {
    let digits = frame_count.saturating_sub(1).to_string().len().max(5);
    format!("frame_{frame:0digits$}.obj")
}

/// Writes every frame of `recording` into `directory` (created if missing) as
/// [`frame_file_name`] files and returns their paths in frame order. Fails, naming the value, on
/// anything [`Recording::validate`] rejects, or naming the path when a file cannot be written.
pub fn write_frames(recording: &Recording, directory: &Path) -> Result<Vec<PathBuf>, ExportError> {
    recording.validate()?;
    std::fs::create_dir_all(directory).map_err(|e| ExportError::io(directory, &e))?;
    let frame_count = recording.frame_count();
    (0..frame_count)
        .map(|frame| {
            let path = directory.join(frame_file_name(frame, frame_count));
            std::fs::write(&path, frame_obj(recording, frame)).map_err(|e| ExportError::io(&path, &e))?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::io::read_obj;
    use crate::collision::{Aabb, Pose, TriMesh};
    use crate::export::analytic::sample_recording;
    use glam::DVec3;

    /// Bounds of every body present at `frame`, moved to world, straight from the recording.
    fn expected_bounds(recording: &Recording, frame: usize) -> (usize, Aabb) {
        let mut count = 0;
        let mut bounds = Aabb::EMPTY;
        for track in &recording.tracks {
            if let Some(pose) = track.pose_at(frame) {
                count += track.mesh.vertices().len();
                for v in track.mesh.vertices() {
                    bounds = bounds.including(pose.transform_point(*v));
                }
            }
        }
        (count, bounds)
    }

    #[test]
    fn obj_frames_round_trip_through_the_mesh_reader() {
        let recording = sample_recording(60, 30.0);
        for frame in [0, 14, 15, 44, 45, 59] {
            let text = frame_obj(&recording, frame);
            let mesh = read_obj(text.as_bytes()).unwrap();
            let (count, bounds) = expected_bounds(&recording, frame);
            // Bodies are apart, so welding merges nothing and every vertex comes back.
            assert_eq!(mesh.vertices().len(), count, "frame {frame}");
            let present = recording.tracks.iter().filter(|t| t.pose_at(frame).is_some());
            let triangles: usize = present.map(|t| t.mesh.triangles().len()).sum();
            assert_eq!(mesh.triangles().len(), triangles, "frame {frame}");
            let read = mesh.bounds().unwrap();
            // Exact: coordinates are written in shortest round-trip form.
            assert_eq!((read.min, read.max), (bounds.min, bounds.max), "frame {frame}");
            // Every body is a closed, outward-wound solid, so the frame's volume is their sum.
            let volume: f64 = recording
                .tracks
                .iter()
                .filter(|t| t.pose_at(frame).is_some())
                .map(|t| t.mesh.signed_volume())
                .sum();
            assert!((mesh.signed_volume() - volume).abs() < 1e-9 * volume, "frame {frame}");
        }
        let text = frame_obj(&recording, 20);
        let objects: Vec<&str> = text.lines().filter(|l| l.starts_with("o ")).collect();
        assert_eq!(
            objects,
            ["o ground", "o falling_box", "o spinning_plate", "o fragment", "o shard"]
        );
        assert_eq!(
            frame_obj(&recording, 50)
                .lines()
                .filter(|l| l.starts_with("o "))
                .count(),
            4
        );
    }

    #[test]
    fn obj_frames_written_to_a_directory_in_order() {
        let directory = std::env::temp_dir().join(format!("shatter-obj-frames-{}", std::process::id()));
        let mut recording = sample_recording(20, 30.0);
        recording.tracks[0].name = "bad\nname".into();
        let files = write_frames(&recording, &directory).unwrap();
        assert_eq!(files.len(), 20);
        assert_eq!(files[7].file_name().unwrap(), "frame_00007.obj");
        let last = TriMesh::load(&files[19]).unwrap();
        let (count, _) = expected_bounds(&recording, 19);
        assert_eq!(last.vertices().len(), count);
        assert!(std::fs::read_to_string(&files[0]).unwrap().contains("o bad name\n"));
        std::fs::remove_dir_all(&directory).unwrap();

        assert_eq!(frame_file_name(3, 250_000), "frame_000003.obj");
        let mut bad = Recording::new(30.0);
        let mut track = crate::export::Track::new("x", std::sync::Arc::new(TriMesh::cuboid(DVec3::ONE)));
        track.poses.push(Pose::from_position(DVec3::NAN));
        bad.tracks.push(track);
        let err = write_frames(&bad, &directory).unwrap_err().to_string();
        assert!(err.contains("track 0 (\"x\") pose 0 position"), "{err}");
    }
}
