//! A recorded run: bodies as tracks of poses over frames, the input of every exporter.

use std::sync::Arc;

use glam::{DQuat, DVec3};

use super::error::ExportError;
use crate::collision::{Pose, TriMesh};

/// How far a recorded orientation's length may stray from 1 before it is an error rather than
/// round-off: integrators keep quaternions unit to about 1e-15, so anything near this is a bug
/// upstream, not drift.
const UNIT_QUATERNION_TOLERANCE: f64 = 1e-6;

/// Which normals a mesh is written with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Normals {
    /// One normal per triangle (vertices are repeated per triangle): sharp edges, right for boxes
    /// and fracture fragments.
    #[default]
    Flat,
    /// One normal per vertex, the area-weighted mean of its triangles' normals: smooth shading,
    /// right for spheres and scanned models.
    Smooth,
}

/// One body over the frames it exists in.
#[derive(Clone, Debug)]
pub struct Track {
    /// The body's name, shown by viewers (node name in glTF, `o` group in OBJ).
    pub name: String,
    /// Surface in the body frame (origin at the centre of mass), m. Shared, so a thousand
    /// identical bricks store and export one mesh.
    pub mesh: Arc<TriMesh>,
    /// Base colour as linear RGB, each component in [0, 1]; `None` leaves the viewer's default.
    pub color: Option<DVec3>,
    /// How the mesh is shaded.
    pub normals: Normals,
    /// The frame at which the body first exists (0 for bodies there from the start; later for
    /// bodies spawned mid-run, such as fracture fragments).
    pub first_frame: usize,
    /// The body's pose at frames `first_frame, first_frame + 1, ...`: body frame to world frame.
    /// The body exists from its first frame to its last and not outside them.
    pub poses: Vec<Pose>,
}

impl Track {
    /// A track for a body named `name` with surface `mesh`, present from frame 0, with no poses yet.
    pub fn new(name: impl Into<String>, mesh: Arc<TriMesh>) -> Self {
        Self {
            name: name.into(),
            mesh,
            color: None,
            normals: Normals::Flat,
            first_frame: 0,
            poses: Vec::new(),
        }
    }

    /// The same track with base colour `color` (linear RGB in [0, 1]).
    pub fn with_color(mut self, color: DVec3) -> Self {
        self.color = Some(color);
        self
    }

    /// The same track shaded with `normals`.
    pub fn with_normals(mut self, normals: Normals) -> Self {
        self.normals = normals;
        self
    }

    /// The same track starting at frame `first_frame`.
    pub fn starting_at(mut self, first_frame: usize) -> Self {
        self.first_frame = first_frame;
        self
    }

    /// The last frame the body exists in; `None` while it has no pose.
    pub fn last_frame(&self) -> Option<usize> {
        (!self.poses.is_empty()).then(|| self.first_frame + self.poses.len() - 1)
    }

    /// The body's pose at `frame`, or `None` when it does not exist then.
    pub fn pose_at(&self, frame: usize) -> Option<Pose> {
        frame
            .checked_sub(self.first_frame)
            .and_then(|i| self.poses.get(i))
            .copied()
    }
}

/// A recorded run: the frame rate and every body that existed in it.
#[derive(Clone, Debug)]
pub struct Recording {
    /// Frames per second, Hz: frame `k` is shown at time `k / frame_rate` s.
    pub frame_rate: f64,
    /// The bodies, in the order they are written.
    pub tracks: Vec<Track>,
}

impl Recording {
    /// An empty recording at `frame_rate` Hz.
    pub fn new(frame_rate: f64) -> Self {
        Self {
            frame_rate,
            tracks: Vec::new(),
        }
    }

    /// Number of frames: one past the last frame of any track (0 when no track has a pose).
    pub fn frame_count(&self) -> usize {
        self.tracks
            .iter()
            .filter_map(Track::last_frame)
            .map(|last| last + 1)
            .max()
            .unwrap_or(0)
    }

    /// Time of `frame`, s.
    pub fn time(&self, frame: usize) -> f64 {
        frame as f64 / self.frame_rate
    }

    /// Checks everything an exporter relies on, naming the first bad value: a positive finite
    /// frame rate; per track a non-empty mesh, at least one pose, a colour in [0, 1], finite
    /// positions and unit orientations.
    pub fn validate(&self) -> Result<(), ExportError> {
        if !(self.frame_rate.is_finite() && self.frame_rate > 0.0) {
            return Err(ExportError::invalid(
                "frame rate",
                self.frame_rate,
                "a positive finite number of frames per second",
            ));
        }
        for (index, track) in self.tracks.iter().enumerate() {
            let name = |what: &str| format!("track {index} ({:?}) {what}", track.name);
            if track.mesh.is_empty() {
                return Err(ExportError::invalid(
                    name("mesh"),
                    "no triangles",
                    "a mesh with triangles",
                ));
            }
            if track.poses.is_empty() {
                return Err(ExportError::invalid(name("poses"), "none", "at least one pose"));
            }
            if track.first_frame.checked_add(track.poses.len()).is_none() {
                return Err(ExportError::invalid(
                    name("first frame"),
                    track.first_frame,
                    "a frame index that leaves room for its poses",
                ));
            }
            if let Some(color) = track.color
                && !(color.cmpge(DVec3::ZERO).all() && color.cmple(DVec3::ONE).all())
            {
                return Err(ExportError::invalid(
                    name("colour"),
                    color,
                    "linear RGB components in [0, 1]",
                ));
            }
            for (i, pose) in track.poses.iter().enumerate() {
                if !pose.position.is_finite() {
                    return Err(ExportError::invalid(
                        name(&format!("pose {i} position")),
                        pose.position,
                        "a finite position in metres",
                    ));
                }
                if !is_unit(pose.orientation) {
                    return Err(ExportError::invalid(
                        name(&format!("pose {i} orientation")),
                        pose.orientation,
                        "a finite unit quaternion",
                    ));
                }
            }
        }
        Ok(())
    }
}

fn is_unit(q: DQuat) -> bool {
    q.is_finite() && (q.length() - 1.0).abs() <= UNIT_QUATERNION_TOLERANCE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track() -> Track {
        let mut track = Track::new("box", Arc::new(TriMesh::cuboid(DVec3::ONE))).starting_at(3);
        track.poses = vec![Pose::IDENTITY; 4];
        track
    }

    #[test]
    fn gltf_obj_recording_frames_and_poses() {
        let mut recording = Recording::new(30.0);
        recording.tracks.push(track());
        assert_eq!(recording.tracks[0].last_frame(), Some(6));
        assert_eq!(recording.frame_count(), 7);
        assert_eq!(recording.tracks[0].pose_at(2), None);
        assert_eq!(recording.tracks[0].pose_at(3), Some(Pose::IDENTITY));
        assert_eq!(recording.tracks[0].pose_at(7), None);
        assert!((recording.time(15) - 0.5).abs() < 1e-15);
        recording.validate().unwrap();
    }

    #[test]
    fn gltf_obj_recording_rejects_bad_values_by_name() {
        let mut recording = Recording::new(f64::NAN);
        let err = recording.validate().unwrap_err().to_string();
        assert!(err.starts_with("frame rate = NaN is invalid"), "{err}");
        recording.frame_rate = 30.0;
        let mut bad = track();
        bad.poses[2].orientation = DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0);
        recording.tracks = vec![track(), bad];
        let err = recording.validate().unwrap_err().to_string();
        assert!(err.starts_with("track 1 (\"box\") pose 2 orientation"), "{err}");
        recording.tracks[1] = track().with_color(DVec3::new(0.5, 1.5, 0.0));
        let err = recording.validate().unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
        recording.tracks[1] = track();
        recording.tracks[1].poses[0].position.y = f64::INFINITY;
        let err = recording.validate().unwrap_err().to_string();
        assert!(err.contains("pose 0 position"), "{err}");
        recording.tracks[1].poses.clear();
        assert!(recording.validate().unwrap_err().to_string().contains("poses"));
    }
}
